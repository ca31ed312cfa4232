"""Simulators of crash scenarios: the :class:`~runners.simulators.base.Simulator` protocol, MetaDrive and
BeamNG.tech adapters, and the warm worker process that hosts one. Nothing heavy is imported here."""
