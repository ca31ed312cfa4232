"""The plan of one BeamNG.tech run: roads, vehicles, spawn poses and AI scripts, as plain data.

:func:`plan_scene` turns a DSL scenario and a run spec into a :class:`ScenePlan`; the beamngpy objects
(:mod:`runners.simulators.beamng.scenario`), the files written for a person, and the run itself all come from it,
so what a person opens in the game is what drivemt would have run.
"""

from __future__ import annotations

import math
import random
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from runners.simulators.beamng.errors import BeamNGScenarioError
from runners.simulators.beamng.geometry import (
    COMPASS,
    Network,
    RoadGeom,
    build_network,
    heading_of,
    offset_polyline,
    point_at,
    provided_arms,
)
from runners.simulators.beamng.routes import Route, build_route, choose_axes, intents_for
from runners.simulators.beamng.settings import BeamNGSettings
from runners.simulators.beamng.timing import Schedule, schedule_routes
from tools.crash.models import RunSpec, Scenario

__all__ = [
    "VEHICLE_MODELS",
    "ActorPlan",
    "RoadPlan",
    "ScenePlan",
    "Waypoint",
    "heading_to_quat",
    "plan_scene",
    "scenario_name",
    "vehicle_model",
]

VEHICLE_MODELS: dict[str, str] = {
    "Sedan": "etk800",
    "Coupe": "etkc",
    "Hatchback": "covet",
    "Station wagon": "etk800",
    "Convertible": "etkc",
    "SUV": "roamer",
    "Minivan": "van",
    "Van": "van",
    "Pickup": "pickup",
    "Car": "etk800",
    "Truck": "md_series",
    "Straight truck": "md_series",
    "Semi Truck": "us_semi",
    "Bus": "citybus",
    "Motorcycle": "autobello",
}
"""BeamNG.tech vehicle model per DSL body type (``settings.models`` overrides any of them).

BeamNG ships no motorcycle: one is simulated as the smallest car, as the DSL's coarse classes allow.
"""

_TIME_OF_DAY = {"Daytime": "12:00:00", "Nighttime": "23:00:00"}
_LINE_WIDTH = 0.15


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Waypoint(_Model):
    """One node of an actor's AI script: where it should be, when, and how fast it goes there."""

    x: float
    y: float
    z: float = 0.0
    t: float
    speed: float


class RoadPlan(_Model):
    """One BeamNG decal road: a drivable surface or a painted line."""

    id: str
    kind: Literal["main", "cross", "stem", "ramp", "driveway", "marking"]
    material: str
    nodes: list[tuple[float, float, float, float]] = Field(description="x, y, z, width per node.")
    lanes_forward: int = 0
    lanes_backward: int = 0
    lane_width_m: float = 0.0
    median_m: float = 0.0
    one_way: bool = False


class ActorPlan(_Model):
    """One vehicle: model, spawn pose, route and timing."""

    id: str
    body_type: str
    model: str
    ego: bool
    position: tuple[float, float, float]
    heading: float = Field(description="Radians, counter-clockwise from +x (east).")
    rot_quat: tuple[float, float, float, float] = Field(description="BeamNG rotation (x, y, z, w).")
    entry: str
    exit: str
    manoeuvre: str
    lane: int
    exit_lane: int
    cruise_mps: float
    start_delay_s: float = 0.0
    meet_point: tuple[float, float]
    meet_time_s: float
    script: list[Waypoint] = Field(description="Timed path from the spawn point to the end of the route.")


class ScenePlan(_Model):
    """Everything one BeamNG.tech run needs."""

    case_id: str
    run_id: str
    name: str = Field(description="The BeamNG scenario name (files and scene objects).")
    level: str
    ego_id: str
    policy: str
    seed: int
    duration_s: float
    road_type: str
    roads: list[RoadPlan]
    actors: list[ActorPlan]
    reported_pairs: list[tuple[str, str]]
    time_of_day: str | None = None
    weather: str = "Not mentioned"
    approximations: list[str] = Field(default_factory=list)

    def actor(self, actor_id: str) -> ActorPlan:
        """The plan of one actor."""
        for a in self.actors:
            if a.id == actor_id:
                return a
        raise KeyError(actor_id)


def scenario_name(case_id: str, run_id: str) -> str:
    """A BeamNG object name for a run: letters, digits, ``_`` and ``-`` only, never starting with a digit."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", f"{case_id}_{run_id}")
    return f"drivemt_{safe}"


def vehicle_model(body_type: str, settings: BeamNGSettings) -> str:
    """The BeamNG model of a body type (a configured override first)."""
    return settings.models.get(body_type) or VEHICLE_MODELS.get(body_type, "etk800")


def heading_to_quat(heading: float) -> tuple[float, float, float, float]:
    """BeamNG rotation of a vehicle travelling along ``heading``.

    An unrotated BeamNG vehicle faces -y (its frame's forward axis), so the yaw about +z is the
    heading plus a quarter turn.
    """
    yaw = heading + math.pi / 2
    return (0.0, 0.0, round(math.sin(yaw / 2), 9), round(math.cos(yaw / 2), 9))


def _markings(net: Network, settings: BeamNGSettings) -> list[RoadPlan]:
    out: list[RoadPlan] = []
    for road in net.roads:
        if road.kind not in ("main", "cross", "stem"):
            continue
        if road.kind == "stem":
            ranges = [(net.roads[0].width / 2, road.length)]
        elif net.junction:
            s_c = next(a.s_centre for a in net.arms.values() if a.road is road)
            box = next(a.boundary for a in net.arms.values() if a.road is road)
            ranges = [(0.0, s_c - box), (s_c + box, road.length)]
        else:
            ranges = [(0.0, road.length)]
        lines: list[tuple[float, str]] = [(road.width / 2 - 0.2, "line_white"), (-road.width / 2 + 0.2, "line_white")]
        w = road.lane_width
        if road.one_way:
            lines += [(road.width / 2 - k * w, "line_white") for k in range(1, road.lanes_forward)]
        else:
            half = road.median / 2
            lines += [(half, "line_yellow")] + ([(-half, "line_yellow")] if half > 0 else [])
            lines += [(half + k * w, "line_white") for k in range(1, road.lanes_forward)]
            lines += [(-half - k * w, "line_white") for k in range(1, road.lanes_backward)]
        for r, (s0, s1) in enumerate(ranges):
            if s1 - s0 < 2:
                continue
            n = max(1, math.ceil((s1 - s0) / 5))
            centre = [point_at(road.centreline, road.cum, s0 + (s1 - s0) * i / n) for i in range(n + 1)]
            for k, (offset, material) in enumerate(lines):
                pts = offset_polyline(centre, [offset] * len(centre))
                out.append(
                    RoadPlan(
                        id=f"{road.id}_line{r}_{k}",
                        kind="marking",
                        material=material,
                        nodes=[(round(x, 3), round(y, 3), 0.0, _LINE_WIDTH) for x, y in pts],
                    )
                )
    return out


def _road_plan(road: RoadGeom, settings: BeamNGSettings) -> RoadPlan:
    return RoadPlan(
        id=road.id,
        kind=road.kind,
        material=settings.road_material,
        nodes=road.decal_nodes(),
        lanes_forward=road.lanes_forward,
        lanes_backward=road.lanes_backward,
        lane_width_m=road.lane_width,
        median_m=road.median,
        one_way=road.one_way,
    )


def _script(route: Route, sched: Schedule, duration: float, hold: float) -> list[Waypoint]:
    """Waypoints every 2 m from the spawn point, with the waits where the actor stands still."""
    pts: list[Waypoint] = []
    last = len(sched.times) - 1
    for k, t in enumerate(sched.times):
        i = sched.start + k
        if not (k == 0 or k == last or k % 2 == 0 or i == route.stop_index):
            continue
        x, y = route.points[i]
        if k == 0 and sched.delay > 0:
            pts.append(Waypoint(x=round(x, 3), y=round(y, 3), t=0.0, speed=0.0))
        arrive = t
        if i == route.stop_index and not route.stop_only:
            arrive = t - hold  # times after a stop include the wait; the vehicle arrives before it
            pts.append(Waypoint(x=round(x, 3), y=round(y, 3), t=round(arrive, 3), speed=0.0))
        pts.append(Waypoint(x=round(x, 3), y=round(y, 3), t=round(t, 3), speed=round(sched.speeds[k], 3)))
    if route.stop_only and pts and pts[-1].t < duration:
        end = pts[-1]
        pts.append(Waypoint(x=end.x, y=end.y, t=round(duration, 3), speed=0.0))
    return pts


def plan_scene(scenario: Scenario, spec: RunSpec, settings: BeamNGSettings, *, duration_s: float) -> ScenePlan:
    """Plan one run: roads for the road type, each actor's lane, route, spawn pose and timing.

    Args:
        scenario: The DSL scenario.
        spec: The run (its ego, policy and seed).
        settings: Lane width, speeds, meeting time and jitter, level and materials.
        duration_s: Simulated seconds of the run (routes are long enough to last it).

    Raises:
        BeamNGScenarioError: For a spec that does not fit the scenario, or a policy BeamNG cannot drive.
    """
    if spec.case_id != scenario.case_id:
        raise BeamNGScenarioError(scenario.case_id, f"the run is for case {spec.case_id!r}")
    ids = [a.id for a in scenario.actors]
    if spec.ego_id not in ids:
        raise BeamNGScenarioError(scenario.case_id, f"ego {spec.ego_id} is not an actor ({', '.join(ids)})")
    if spec.policy != "idm":
        raise BeamNGScenarioError(
            scenario.case_id,
            f"ego policy {spec.policy!r} exists only in MetaDrive; BeamNG.tech runs drive the ego with "
            "BeamNG's own AI along its route (use policy 'idm')",
        )
    rng = random.Random(f"{scenario.case_id}:{spec.seed}")
    rn = scenario.road_network
    axis, cross, stem = choose_axes(scenario)
    if stem is not None and rn.road_type == "T-intersection":
        rn = rn.model_copy(update={"stem_direction": stem})
    intents, notes = intents_for(scenario, axis, stem, settings, rng)
    lane_width = rn.lane_width_m or settings.lane_width_m
    vmax = max(i.cruise for i in intents)
    length_in = vmax * (settings.meet_time_s + settings.meet_jitter_s + settings.stop_wait_s + 6) + 60
    length_out = vmax * max(duration_s - settings.meet_time_s + settings.meet_jitter_s + 2, 4) + 60
    arm_length = max(length_in, length_out, (rn.length_m or 0) / 2) + 20
    needed = {i.entry for i in intents} | {i.exit for i in intents}
    driveways = {c for c in needed - provided_arms(rn, axis) if c in COMPASS}
    net = build_network(
        rn, lane_width=lane_width, arm_length=arm_length, axis=axis, cross_axis=cross, driveways=driveways
    )
    notes = net.notes + notes
    by_id = {i.actor.id: i for i in intents}
    partner: dict[str, str] = {}
    for a, b in scenario.collisions:
        partner.setdefault(a, b)
        partner.setdefault(b, a)
    routes = {
        i.actor.id: build_route(
            net,
            i,
            by_id.get(partner.get(i.actor.id, "")),
            length_in=length_in,
            length_out=length_out,
            turn_speed=settings.turn_speed_mps,
            notes=notes,
        )
        for i in intents
    }
    scheds = schedule_routes(
        routes,
        list(scenario.collisions),
        meet_time=settings.meet_time_s,
        jitter=settings.meet_jitter_s,
        hold=settings.stop_wait_s,
        rng=rng,
        notes=notes,
    )
    for actor in scenario.actors:
        if actor.body_type == "Motorcycle":
            notes.append(f"{actor.id} is a motorcycle; BeamNG has none, so it is the smallest car")
    if scenario.env.weather not in ("Not mentioned", "Sunny", "Clear"):
        notes.append(f"weather {scenario.env.weather} is not simulated on {settings.level}")
    notes.append(f"the ego {spec.ego_id} is driven by BeamNG's AI along its route at its planned speeds")
    actors: list[ActorPlan] = []
    for intent in intents:
        aid = intent.actor.id
        route, sched = routes[aid], scheds[aid]
        x, y = route.points[sched.start]
        heading = heading_of(route.points, sched.start)
        meet = route.points[min(sched.target, len(route.points) - 1)]
        actors.append(
            ActorPlan(
                id=aid,
                body_type=intent.actor.body_type,
                model=vehicle_model(intent.actor.body_type, settings),
                ego=aid == spec.ego_id,
                position=(round(x, 3), round(y, 3), 0.0),
                heading=round(heading, 6),
                rot_quat=heading_to_quat(heading),
                entry=intent.entry,
                exit=intent.exit,
                manoeuvre=intent.manoeuvre,
                lane=intent.lane,
                exit_lane=route.exit_lane,
                cruise_mps=round(intent.cruise, 3),
                start_delay_s=round(sched.delay, 3),
                meet_point=(round(meet[0], 3), round(meet[1], 3)),
                meet_time_s=round(sched.target_time, 3),
                script=_script(route, sched, duration_s, settings.stop_wait_s),
            )
        )
    roads = [_road_plan(r, settings) for r in net.roads]
    if settings.lane_markings:
        # Lines first: BeamNG draws decal roads of lower render priority (earlier here) on top.
        roads = _markings(net, settings) + roads
    return ScenePlan(
        case_id=scenario.case_id,
        run_id=spec.run_id,
        name=scenario_name(scenario.case_id, spec.run_id),
        level=settings.level,
        ego_id=spec.ego_id,
        policy=spec.policy,
        seed=spec.seed,
        duration_s=duration_s,
        road_type=scenario.road_network.road_type,
        roads=roads,
        actors=actors,
        reported_pairs=list(scenario.collisions),
        time_of_day=_TIME_OF_DAY.get(scenario.env.time),
        weather=scenario.env.weather,
        approximations=list(dict.fromkeys(notes)),
    )
