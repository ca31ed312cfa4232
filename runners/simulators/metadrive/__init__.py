"""MetaDrive adapter: crash scenarios (the DSL of ``tools.crash.models``) simulated in MetaDrive, offline and headless.

Use :class:`MetaDriveSimulator` as a context manager; it implements ``runners.simulators.base.Simulator``::

    with MetaDriveSimulator(settings=SimSettings(variants=5)) as sim:
        for spec in plan_runs(scenario, sim.settings):
            record = sim.run(scenario, spec, out_dir=Path("runs"))

Conventions:

* The map is MetaDrive's frame: +x east, +y north, right-hand traffic, headings counter-clockwise from +x.
* A DSL direction says where an actor comes from and heads: ``W2E`` enters from the west leg (or the west
  end of a road) travelling east; ``S2N`` from the south travelling north. Straight roads, curves and
  merges whose actors mostly travel north-south, and T-intersections whose stem leaves east or west, are
  turned a quarter clockwise so the main road runs west-east (recorded as an approximation). On a merge,
  ``Main road`` is the eastbound main road and ``On-ramp`` the ramp joining it from the right.
* DSL lane 1 is the rightmost lane of the actor's direction; MetaDrive's lane index 0 is next to the
  centre line.
* ``reproduced`` and ``ego_collided`` are judged by :func:`tools.crash.verdict.run_outcome`, the one
  definition BeamNG runs, the Judge and the reports share.
* Variant 0 is the solved placement; variants >= 1 jitter arrival times and speeds with the spec's seed.

Importing this package does not import MetaDrive; the engine starts when the simulator is entered.
"""

from runners.simulators.metadrive.errors import (
    MetaDriveEngineError,
    TooManyLanesError,
    UnbuildableScenarioError,
    UnknownActorError,
    UnsupportedLayoutError,
)
from runners.simulators.metadrive.mapping import ActorPlan, MapPlan, ScenarioPlan, plan_scenario
from runners.simulators.metadrive.simulator import MetaDriveConfig, MetaDriveSimulator, RunTimings

__all__ = [
    "ActorPlan",
    "MapPlan",
    "MetaDriveConfig",
    "MetaDriveEngineError",
    "MetaDriveSimulator",
    "RunTimings",
    "ScenarioPlan",
    "TooManyLanesError",
    "UnbuildableScenarioError",
    "UnknownActorError",
    "UnsupportedLayoutError",
    "plan_scenario",
]
