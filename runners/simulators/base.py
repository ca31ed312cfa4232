"""The protocol every crash-scenario simulator implements, and the data it takes and returns.

A :class:`RunSpec` names one run: a scenario, the actor that is the ego, the ego's policy and a seeded
variant. A simulator turns it into a :class:`RunRecord`. MetaDrive (``runners.simulators.metadrive``) and
BeamNG.tech (``runners.simulators.beamng``) implement :class:`Simulator`; the SimRunner agent only knows this
module. The data models live in :mod:`tools.crash.runs` (events carry them) and are re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Protocol, runtime_checkable

from tools.crash.models import EgoPolicy, Pose, RunRecord, RunSpec, Scenario, SimCollision, SimSettings
from tools.crash.runs import plan_runs

__all__ = [
    "EgoPolicy",
    "Pose",
    "RunRecord",
    "RunSpec",
    "SimCollision",
    "SimSettings",
    "Simulator",
    "plan_runs",
]


@runtime_checkable
class Simulator(Protocol):
    """A simulator that runs scenarios (MetaDrive, BeamNG.tech).

    Simulators are blocking and hold process-wide state (MetaDrive has one engine per process), so they
    are plain context managers used from one worker thread or process; a warm simulator runs many specs.
    """

    name: str

    def __enter__(self) -> Simulator: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def run(self, scenario: Scenario, spec: RunSpec, *, out_dir: Path | None = None) -> RunRecord:
        """Simulate one run (blocking; agents call it in a worker thread or process).

        Raises:
            tools.errors.BadInputError: For a scenario this simulator cannot build.
        """
        ...
