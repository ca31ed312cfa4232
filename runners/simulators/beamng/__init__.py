"""BeamNG.tech adapter: crash scenarios as BeamNG scenarios (decal roads, vehicles, AI scripts), run or written.

Nothing heavy loads with the package: beamngpy is imported inside the functions that build or run a
scenario. See :mod:`runners.simulators.beamng.simulator` for what happens with and without a BeamNG.tech install.
"""

from runners.simulators.beamng.errors import BeamNGConfigError, BeamNGError, BeamNGScenarioError, BeamNGUnavailableError
from runners.simulators.beamng.plan import ActorPlan, RoadPlan, ScenePlan, Waypoint, plan_scene
from runners.simulators.beamng.scenario import ScenarioFiles, build_beamng_scenario, write_scenario_files
from runners.simulators.beamng.settings import BeamNGSettings, beamng_settings_from_env
from runners.simulators.beamng.simulator import BeamNGSimulator

__all__ = [
    "ActorPlan",
    "BeamNGConfigError",
    "BeamNGError",
    "BeamNGScenarioError",
    "BeamNGSettings",
    "BeamNGSimulator",
    "BeamNGUnavailableError",
    "RoadPlan",
    "ScenarioFiles",
    "ScenePlan",
    "Waypoint",
    "beamng_settings_from_env",
    "build_beamng_scenario",
    "plan_scene",
    "write_scenario_files",
]
