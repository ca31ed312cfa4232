"""Processes and adapters: configuration, the host (daemon, composition, in-process runs), clients, simulators,
detectors and the CLI.

Modules are imported by name (``runners.host.daemon`` ...); nothing loads with the package itself.
"""
