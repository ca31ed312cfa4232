"""A :class:`~runners.simulators.beamng.plan.ScenePlan` as beamngpy objects, and as the files BeamNG.tech reads.

``beamngpy.Scenario.make(bng)`` renders two things and hands them to a running game, whose
``CreateScenario`` handler writes them into its user folder: the prefab (``Scenario._get_prefab()``:
one scene object per line, vehicles and decal roads, rendered from beamngpy's own template) and the
info dictionary (``Scenario._get_info_dict()``, written as a one-element JSON list). beamngpy has no
public call that writes them without a connection, so :func:`write_scenario_files` calls those two
renderers, which need no game, and writes what the handler would write, where beamngpy's info file
says the prefab lives (``levels/<level>/scenarios/<name>/<name>.prefab.json``). The prefab is BeamNG's
lenient JSON (trailing commas), exactly as beamngpy sends it.

Each actor's timed path is also written as a BeamNG path file (``{"path": [{x, y, z, t}, ...]}``),
the format ``vehicle.ai.import_script_ai_file`` reads, with a manifest of the whole plan beside them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runners.simulators.beamng.errors import BeamNGError
from runners.simulators.beamng.plan import ScenePlan

if TYPE_CHECKING:
    import beamngpy

__all__ = [
    "EGO_COLOR",
    "OTHER_COLOR",
    "ScenarioFiles",
    "ai_line",
    "ai_script",
    "build_beamng_scenario",
    "write_scenario_files",
]

EGO_COLOR = (0.85, 0.1, 0.1, 1.2)
OTHER_COLOR = (0.9, 0.9, 0.9, 1.2)

_README = """BeamNG.tech scenarios written by drivemt
=======================================

BeamNG.tech was not available to simulate these runs, so drivemt wrote the scenarios instead.
Each run is one BeamNG scenario (roads as decal roads, the vehicles at their spawn poses):

  levels/<level>/scenarios/<name>/<name>.json          scenario info (BeamNG reads a one-element list)
  levels/<level>/scenarios/<name>/<name>.prefab.json   roads and vehicles, one scene object per line
  drivemt/<name>/scripts/<vehicle>.json                 each vehicle's timed path (BeamNG path file)
  drivemt/<name>/plan.json                              the whole plan: routes, speeds, approximations

To open a scenario in the game, copy the levels/ folder into BeamNG.tech's user folder (merging with
what is there) and pick the scenario under the level's scenarios. To drive the vehicles as drivemt
would, load a path file with beamngpy:

  vehicle.ai.set_script(vehicle.ai.import_script_ai_file("drivemt/<name>/scripts/V1.json"))

or configure drivemt (beamng.home = the BeamNG.tech install folder, or beamng.host / beamng.port =
a running BeamNG.tech; BNG_HOME, BNG_HOST, BNG_PORT) and run the case again.
"""


@dataclass(frozen=True)
class ScenarioFiles:
    """The files written for one run."""

    root: Path
    """The folder whose ``levels/`` goes into BeamNG's user folder."""
    info: Path
    prefab: Path
    scripts: dict[str, Path]
    plan: Path
    readme: Path

    @property
    def files(self) -> list[Path]:
        """Every file, info and prefab first."""
        return [self.info, self.prefab, *self.scripts.values(), self.plan, self.readme]


def build_beamng_scenario(plan: ScenePlan) -> beamngpy.Scenario:
    """The beamngpy scenario of a plan: decal roads, vehicles at their spawn poses with damage sensors.

    Nothing is sent to a game: ``Scenario.make(bng)`` does that when one is connected.
    """
    from beamngpy import Road, Scenario, Vehicle
    from beamngpy.sensors import Damage

    scenario = Scenario(
        plan.level,
        plan.name,
        description=f"drivemt: case {plan.case_id}, run {plan.run_id}, {plan.road_type}",
        authors="drivemt",
    )
    for road in plan.roads:
        surface = road.kind != "marking"
        r = Road(
            road.material,
            rid=f"{plan.name}_{road.id}",
            interpolate=True,
            default_width=road.nodes[0][3],
            drivability=1 if surface else -1,
            one_way=road.one_way,
            over_objects=True,
        )
        r.add_nodes(*road.nodes)
        scenario.add_road(r)
    for actor in plan.actors:
        vehicle = Vehicle(actor.id, model=actor.model, license=actor.id, color=EGO_COLOR if actor.ego else OTHER_COLOR)
        vehicle.sensors.attach("damage", Damage())
        scenario.add_vehicle(vehicle, pos=actor.position, rot_quat=actor.rot_quat, safe_spawn=True)
    scenario.set_initial_focus(plan.ego_id)
    return scenario


def ai_script(plan: ScenePlan, actor_id: str) -> list[dict[str, float]]:
    """An actor's timed path for ``vehicle.ai.set_script``: ``x, y, z, t`` per node."""
    return [{"x": w.x, "y": w.y, "z": w.z, "t": w.t} for w in plan.actor(actor_id).script]


def ai_line(plan: ScenePlan, actor_id: str) -> list[dict[str, Any]]:
    """An actor's path for ``vehicle.ai.set_line``: ``pos`` and target ``speed`` per node.

    The ego follows a line, not a timed script: BeamNG's AI chooses its own throttle and brakes toward
    the planned speeds. Nodes where it only waits are dropped (a line has no time).
    """
    out: list[dict[str, Any]] = []
    for w in plan.actor(actor_id).script:
        if out and out[-1]["pos"][:2] == (w.x, w.y):
            continue
        out.append({"pos": (w.x, w.y, w.z), "speed": max(w.speed, 0.5)})
    return out


def write_scenario_files(plan: ScenePlan, root: Path) -> ScenarioFiles:
    """Write a run's scenario (info JSON and prefab), AI path files, plan and a README under ``root``.

    Args:
        plan: The run's plan.
        root: The folder to write into (``out_dir/<case id>/beamng``); other runs share it.

    Returns:
        The paths written.

    Raises:
        BeamNGError: When the installed beamngpy no longer renders scenarios without a game.
    """
    scenario = build_beamng_scenario(plan)
    try:
        prefab = scenario._get_prefab()
        info = scenario._get_info_dict()
    except AttributeError as exc:  # pragma: no cover - depends on the beamngpy release
        raise BeamNGError(
            f"this beamngpy cannot render scenario files without a game ({exc}); pin beamngpy 1.36"
        ) from exc
    scen_dir = root / "levels" / plan.level / "scenarios" / plan.name
    own_dir = root / "drivemt" / plan.name
    (own_dir / "scripts").mkdir(parents=True, exist_ok=True)
    scen_dir.mkdir(parents=True, exist_ok=True)
    info_path = scen_dir / f"{plan.name}.json"
    prefab_path = scen_dir / f"{plan.name}.prefab.json"
    declared = {str(p) for p in info.get("prefabs", [])}
    expected = f"levels/{plan.level}/scenarios/{plan.name}/{plan.name}.prefab.json"
    if declared and expected not in declared:  # pragma: no cover - depends on the beamngpy release
        raise BeamNGError(f"beamngpy's scenario info names its prefab {sorted(declared)}, not {expected}")
    info_path.write_text(json.dumps([info], indent=2) + "\n", encoding="utf-8")
    prefab_path.write_text(prefab, encoding="utf-8")
    scripts: dict[str, Path] = {}
    for actor in plan.actors:
        path = own_dir / "scripts" / f"{actor.id}.json"
        nodes = ",\n".join("  " + json.dumps(node) for node in ai_script(plan, actor.id))
        path.write_text('{"path": [\n' + nodes + "\n]}\n", encoding="utf-8")
        scripts[actor.id] = path
    plan_path = own_dir / "plan.json"
    plan_path.write_text(plan.model_dump_json(indent=1) + "\n", encoding="utf-8")
    readme = root / "README.txt"
    readme.write_text(_README, encoding="utf-8")
    return ScenarioFiles(root, info_path, prefab_path, scripts, plan_path, readme)
