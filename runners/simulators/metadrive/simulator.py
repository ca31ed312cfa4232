"""The MetaDrive simulator: a warm engine that runs one crash scenario spec after another.

:class:`MetaDriveSimulator` implements :class:`runners.simulators.base.Simulator`. Entering it starts
MetaDrive (assets download disabled, physics only, headless) and warms the engine on a small map; each
:meth:`MetaDriveSimulator.run` then plans the scenario (``mapping``), rebuilds the map only when its
layout changed, reads the routes back (``roads``), solves the spawns (``placement``), resets the
environment with the ego as MetaDrive's agent and the other actors scripted (``engine``), steps it,
judges the collisions (``monitor``) and draws the pictures (``render``). A run that MetaDrive fails in
mid-way comes back as a record with ``error`` set and the engine is rebuilt for the next run.
"""

from __future__ import annotations

import hashlib
import math
import time
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import numpy as np
import structlog
from pydantic import BaseModel, ConfigDict, Field

from runners.simulators.metadrive.errors import MetaDriveEngineError, UnbuildableScenarioError, UnknownActorError
from runners.simulators.metadrive.mapping import ActorPlan, MapPlan, ScenarioPlan, plan_scenario
from runners.simulators.metadrive.paths import Polyline, lane_shift, turn_off_road
from runners.simulators.metadrive.placement import Mover, Placement, Solution, solve_placement
from runners.simulators.metadrive.policies import DriverPlan, ScriptedDriver
from tools.crash.models import Pose, RunRecord, RunSpec, Scenario, SimSettings
from tools.crash.verdict import run_outcome
from tools.errors import BadInputError

__all__ = ["MetaDriveConfig", "MetaDriveSimulator", "RunTimings"]

log = structlog.get_logger(__name__)

_OPPOSITE = {"W": "E", "E": "W", "S": "N", "N": "S"}
_EXTEND_M = 40.0  # paths run on past their route's end, so nobody stops dead at the map's edge
_DIMS = {"s": (4.22, 1.71), "m": (4.6, 1.85), "l": (4.87, 2.05), "xl": (5.74, 2.3), "default": (4.52, 1.85)}


class MetaDriveConfig(BaseModel):
    """MetaDrive-specific knobs (run settings shared by all simulators are in ``SimSettings``)."""

    model_config = ConfigDict(extra="forbid")

    physics_dt: float = Field(default=0.02, gt=0, le=0.1, description="Bullet's physics step, seconds.")
    decision_repeat: int = Field(default=5, ge=1, le=20, description="Physics steps per control step (0.1 s).")
    trajectory_hz: float = Field(default=10.0, gt=0, le=50, description="How often trajectories are sampled.")
    end_when_done: bool = Field(
        default=True,
        description="End a run early once every actor has finished its route after the planned crash time "
        "(the run's 20 s are otherwise simulated in full).",
    )
    png_max_side: int = Field(default=800, ge=200, le=4000, description="Longest side of the PNG, pixels.")
    gif_max_side: int = Field(default=480, ge=120, le=2000, description="Longest side of the GIF, pixels.")


class RunTimings(BaseModel):
    """Where one run's seconds went (``wall`` = map + reset + step; render is separate)."""

    model_config = ConfigDict(extra="forbid")

    map: float = 0.0
    reset: float = 0.0
    step: float = 0.0
    render: float = 0.0
    map_rebuilt: bool = False

    @property
    def wall(self) -> float:
        """Map build, reset and stepping together."""
        return self.map + self.reset + self.step


class MetaDriveSimulator:
    """Runs crash scenarios in MetaDrive; a context manager that keeps one engine warm.

    Args:
        settings: Run settings (duration, rendering, stop after the first collision).
        config: MetaDrive-specific settings.
    """

    name = "metadrive"

    def __init__(self, *, settings: SimSettings | None = None, config: MetaDriveConfig | None = None) -> None:
        self.settings = settings or SimSettings()
        self.config = config or MetaDriveConfig()
        self._env: Any = None
        self._map_key: tuple[object, ...] | None = None
        self._geometry: Any = None
        self._background: Any = None
        self._plans: dict[str, ScenarioPlan] = {}
        self._retired: list[Any] = []
        self.last_timings = RunTimings()
        self.version = f"metadrive {_metadrive_version()}"

    # -- lifecycle -----------------------------------------------------------------------------------
    def __enter__(self) -> MetaDriveSimulator:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start MetaDrive's engine (offline, headless) and warm it on a two-lane straight road."""
        if self._env is not None:
            return
        from runners.simulators.metadrive.assets import disable_asset_download, quiet_metadrive

        disable_asset_download()
        quiet_metadrive()
        from runners.simulators.metadrive import engine, roads

        warm = MapPlan(layout="straight", lanes=2, lane_width=3.5)
        try:
            self._env = engine.make_env(
                roads.map_config(warm), physics_dt=self.config.physics_dt, decision_repeat=self.config.decision_repeat
            )
            self._env.reset(seed=0)
        except Exception as exc:
            self._env = None
            raise MetaDriveEngineError(f"could not start: {exc}") from exc
        self._map_key = warm.key()
        self._geometry = roads.RoadGeometry(self._env.engine.current_map, warm)
        self._background = None

    def close(self) -> None:
        """Close the environment and free the process-wide engine."""
        env, self._env = self._env, None
        self._map_key = self._geometry = self._background = None
        self._retired = []
        if env is not None:
            try:
                env.close()
            except Exception as exc:  # closing a broken engine must not mask the caller's error
                log.warning("metadrive.close_failed", error=str(exc))

    # -- planning ------------------------------------------------------------------------------------
    def plan(self, scenario: Scenario) -> ScenarioPlan:
        """The MetaDrive plan of a scenario (cached): layout, lanes, actor routes, approximations.

        Raises:
            UnbuildableScenarioError: A scenario MetaDrive cannot build.
        """
        key = hashlib.sha1(scenario.to_json().encode()).hexdigest()
        plan = self._plans.get(key)
        if plan is None:
            plan = plan_scenario(scenario)
            if len(self._plans) > 256:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    # -- one run -------------------------------------------------------------------------------------
    def run(self, scenario: Scenario, spec: RunSpec, *, out_dir: Path | None = None) -> RunRecord:
        """Simulate one run (blocking).

        Args:
            scenario: The DSL scenario.
            spec: Which actor is the ego, its policy and the variant's seed.
            out_dir: The case's folder: the run's record goes to ``<run id>.json`` in it, its pictures beside
                it; nothing is written when None.

        Raises:
            UnbuildableScenarioError: For a scenario MetaDrive cannot build (bad input, never retried).
            MetaDriveEngineError: If the engine cannot start.
        """
        plan = self.plan(scenario)
        if spec.ego_id not in plan.actors:
            raise UnknownActorError(scenario.case_id, spec.ego_id, list(plan.actors))
        self.start()
        timings = RunTimings()
        try:
            record, dims = self._simulate(scenario, plan, spec, timings)
        except BadInputError:
            raise
        except Exception as exc:
            reason = f"{type(exc).__name__}: {str(exc)[:400]}"
            log.error("metadrive.run_failed", case=scenario.case_id, run=spec.run_id, error=reason)
            self.close()  # a fresh engine for the next run
            record = RunRecord(
                spec=spec,
                simulator=self.version,
                map_blocks=_blocks(plan.map),
                approximations=list(plan.approximations),
                reported_pairs=list(scenario.collisions),
                error=f"{reason}\n{traceback.format_exc(limit=4)[-1500:]}",
            )
            dims = {}
        if out_dir is not None and record.error is None:
            self._write(record, dims, out_dir, timings)
        elif out_dir is not None:
            self._write_json(record, out_dir)
        self.last_timings = timings
        return record

    def _simulate(
        self, scenario: Scenario, plan: ScenarioPlan, spec: RunSpec, timings: RunTimings
    ) -> tuple[RunRecord, dict[str, tuple[float, float]]]:
        t0 = time.perf_counter()
        old_map = self._ensure_map(plan.map)
        if old_map is not None:
            self._retired.append(old_map)  # destroyed once a reset has detached it
        timings.map = time.perf_counter() - t0
        timings.map_rebuilt = old_map is not None
        geo = self._geometry
        notes = list(plan.approximations)
        try:
            routes = {aid: geo.actor_route(a) for aid, a in plan.actors.items()}
        except (KeyError, ValueError) as exc:
            raise UnbuildableScenarioError(scenario.case_id, f"no route through the built road: {exc}") from exc
        movers, drivers_paths = self._movers(plan, spec.ego_id, routes, list(scenario.collisions))
        rng = None if spec.variant == 0 else np.random.default_rng(spec.seed)
        solution = solve_placement(movers, list(scenario.collisions), reference=geo.reference, rng=rng)
        notes.extend(solution.notes)
        scene = self._scene(plan, spec, routes, drivers_paths, solution)
        env = self._env
        t1 = time.perf_counter()
        self._reset(scene, spec)
        timings.reset = time.perf_counter() - t1
        t2 = time.perf_counter()
        trajectories = self._drive(routes[spec.ego_id].path, solution.crash_time, list(plan.actors), spec.ego_id)
        timings.step = time.perf_counter() - t2
        manager = env.scene_manager
        collisions = manager.monitor.sorted()
        outcome = run_outcome(collisions, scenario.collisions, spec.ego_id)
        notes.extend(_ego_notes(plan.actor(spec.ego_id), spec.policy))
        dims = {aid: _DIMS.get(a.model, _DIMS["default"]) for aid, a in plan.actors.items()}
        record = RunRecord(
            spec=spec,
            simulator=self.version,
            map_blocks=_blocks(plan.map),
            approximations=_unique(notes),
            collisions=collisions,
            reported_pairs=list(scenario.collisions),
            reproduced=outcome.reproduced,
            ego_collided=outcome.ego_collided,
            trajectories=trajectories,
            sim_seconds=round(manager.time, 3),
            wall_seconds=round(timings.wall, 4),
        )
        return record, dims

    def _reset(self, scene: Any, spec: RunSpec) -> None:
        """Configure the ego (MetaDrive's agent) and the scene manager, then reset the environment."""
        from runners.simulators.metadrive import engine as eng

        env = self._env
        cfg = env.engine.global_config
        ego = scene.ego
        cfg["agent_policy"] = eng.CruiseIDMPolicy if spec.policy == "idm" else eng.PPOExpertPolicy
        cfg["agent_configs"][eng.DEFAULT_AGENT].update(
            {
                "spawn_lane_index": ego.spawn_lane_index,
                "spawn_longitude": ego.longitude,
                "spawn_lateral": 0.0,
                "spawn_velocity": [ego.speed * math.cos(ego.heading), ego.speed * math.sin(ego.heading)],
                "spawn_velocity_car_frame": False,
                "destination": ego.destination,
                "vehicle_model": ego.model,
            }
        )
        env.scene_manager.scene = scene
        env.reset(seed=0)
        while self._retired:  # maps replaced by this reset, detached by it
            self._retired.pop().destroy()
        policy = env.engine.get_policy(env.agent.id)
        if isinstance(policy, eng.CruiseIDMPolicy):
            policy.set_target_speed(ego.target_speed)

    def _drive(
        self, ego_route: Polyline, crash_time: float, actor_ids: list[str], ego_id: str
    ) -> dict[str, list[Pose]]:
        """Step until the duration, the stop after the ego's first collision with another vehicle (what decides the
        reproduction: scripted vehicles colliding first do not end the run), or (optionally) everyone is done."""
        env = self._env
        manager = env.scene_manager
        agent = env.agent
        record_every = max(1, round(1.0 / (self.config.trajectory_hz * manager.control_dt)))
        trajectories: dict[str, list[Pose]] = {aid: [] for aid in actor_ids}
        steps = math.ceil(self.settings.duration_s / manager.control_dt - 1e-9)
        self._sample(manager, trajectories)
        ego_index: int | None = None
        for k in range(1, steps + 1):
            env.step([0.0, 0.0])  # the ego's policy and the scripted drivers choose their own actions
            if k % record_every == 0 or k == steps:
                self._sample(manager, trajectories)
            t = manager.time
            first = next((c for c in manager.monitor.collisions if c.b.startswith("V") and ego_id in (c.a, c.b)), None)
            if first is not None and t >= first.t + self.settings.stop_after_first_collision_s:
                break
            crashed = any(c.b.startswith("V") for c in manager.monitor.collisions)
            if self.config.end_when_done and not crashed and t > crash_time + 3.0:
                x, y = agent.position
                ego_index = ego_route.project((float(x), float(y)), hint=ego_index, window=200)
                ego_done = float(ego_route.s[ego_index]) >= ego_route.length - 5.0
                others_done = all(
                    d.plan.depart_t == math.inf
                    or (d.index is not None and float(d.plan.path.s[d.index]) >= d.plan.path.length - _EXTEND_M - 5.0)
                    for d in manager.drivers.values()
                )
                if ego_done and others_done:
                    break
        last = max((poses[-1].t for poses in trajectories.values() if poses), default=0.0)
        if last < round(manager.time, 3):
            self._sample(manager, trajectories)
        return trajectories

    # -- map -----------------------------------------------------------------------------------------
    def _ensure_map(self, plan: MapPlan) -> Any:
        """Build the plan's map before the reset if it differs from the loaded one; return the map it replaces."""
        if self._map_key == plan.key() and self._geometry is not None:
            return None
        from metadrive.component.map.pg_map import PGMap

        from runners.simulators.metadrive import roads

        env = self._env
        manager = env.engine.map_manager
        cfg = env.engine.global_config
        cfg["map_config"].update(roads.map_config(plan))
        map_cfg = cfg["map_config"].copy()
        map_cfg.update({"seed": 0})
        old = manager.current_map
        new = manager.spawn_object(PGMap, map_config=map_cfg, random_seed=None)
        new.detach_from_world()  # the reset attaches it (and detaches the old one) in MetaDrive's order
        manager.maps[manager.start_seed] = new
        self._map_key = plan.key()
        self._geometry = roads.RoadGeometry(new, plan)
        self._background = None
        return old

    # -- actors --------------------------------------------------------------------------------------
    def _movers(
        self, plan: ScenarioPlan, ego_id: str, routes: dict[str, Any], pairs: list[tuple[str, str]]
    ) -> tuple[dict[str, Mover], dict[str, tuple[Polyline, float | None]]]:
        partners: dict[str, list[str]] = {}
        for a, b in pairs:
            partners.setdefault(a, []).append(b)
            partners.setdefault(b, []).append(a)
        movers: dict[str, Mover] = {}
        paths: dict[str, tuple[Polyline, float | None]] = {}
        for aid, actor in plan.actors.items():
            length, width = _DIMS.get(actor.model, _DIMS["default"])
            route = routes[aid]
            stop: Literal["stay", "then_go"] | None
            if aid == ego_id:
                path, wait = route.path.extended(_EXTEND_M), None
                stop = "stay" if actor.stop == "stay" else None
            else:
                path, wait = self._manoeuvre(plan, actor, route.path, routes, partners.get(aid, []))
                path = path.extended(_EXTEND_M)
                stop = actor.stop
            movers[aid] = Mover(
                id=aid, path=path, speed=actor.speed_mps, length=length, width=width, stop=stop, wait_s=wait
            )
            paths[aid] = (path, wait)
        return movers, paths

    def _manoeuvre(
        self, plan: ScenarioPlan, actor: ActorPlan, base: Polyline, routes: dict[str, Any], partners: list[str]
    ) -> tuple[Polyline, float | None]:
        """The scripted path: the route with the actor's lane change, wrong-way drift or driveway turn.

        A drift across the centre line heads for the lane of the oncoming vehicle the report says it hit
        (else the innermost opposing lane); a lane change for the lane of a same-direction vehicle it hit
        beside it (else the lane to its left, or right if there is none).
        """
        geo = self._geometry
        m = plan.map
        s_ref = float(base.s[base.project(geo.reference)])
        path = base
        wait: float | None = None
        junction = m.layout in {"intersection", "t_intersection"}
        others = [plan.actor(p) for p in partners]
        if actor.wrong_way:
            oncoming = [o for o in others if o.approach == _OPPOSITE.get(actor.approach)]
            target = routes[oncoming[0].id].path if oncoming else geo.opposing_route(actor).path
            start = max(5.0, s_ref - (75.0 if junction else 55.0))
            path = lane_shift(base, target, start, start + 30.0)
        elif actor.change_lane and m.lanes > 1:
            beside = [o for o in others if o.approach == actor.approach and abs(o.lane_index - actor.lane_index) == 1]
            if beside:
                target_index = beside[0].lane_index
            else:
                target_index = actor.lane_index - 1 if actor.lane_index > 0 else actor.lane_index + 1
            target = geo.actor_route(actor, lane_index=target_index).path
            start = max(5.0, s_ref - (70.0 if junction else 50.0))
            path = lane_shift(base, target, start, start + 25.0)
        elif actor.driveway is not None:
            across = 2 * m.lanes * m.lane_width + 6.0
            path = turn_off_road(base, s_ref, left=actor.driveway == "left", across_m=across)
            wait = max(1.0, s_ref - 1.0)
        if actor.stop == "then_go" and wait is None:
            wait = max(1.0, s_ref - (m.lanes * m.lane_width + 14.0 if junction else 15.0))
        return path, wait

    def _scene(
        self,
        plan: ScenarioPlan,
        spec: RunSpec,
        routes: dict[str, Any],
        paths: dict[str, tuple[Polyline, float | None]],
        solution: Solution,
    ) -> Any:
        from runners.simulators.metadrive import engine as eng

        ego_plan = plan.actor(spec.ego_id)
        ego_place = solution.placements[spec.ego_id]
        ego_route = routes[spec.ego_id]
        lane_index, longitude = ego_route.lane_at(ego_place.s0)
        ego_speed = 0.0 if ego_place.depart_t == math.inf else ego_place.speed
        ego = eng.EgoSpec(
            actor_id=spec.ego_id,
            model=ego_plan.model,
            spawn_lane_index=lane_index,
            longitude=longitude,
            heading=ego_route.path.heading(ego_place.s0),
            speed=ego_speed,
            destination=ego_route.destination,
            policy=spec.policy,
            target_speed=max(ego_plan.speed_mps, 1.0),
        )
        scripted = []
        for k, (aid, actor) in enumerate(plan.actors.items()):
            if aid == spec.ego_id:
                continue
            place: Placement = solution.placements[aid]
            path, wait = paths[aid]
            route = routes[aid]
            # spawn on the road (MetaDrive localises every vehicle on a lane): not on the run-on past the
            # route's end, nor beyond a driveway turn
            on_road = route.path.length - 2.0 if actor.driveway is None or wait is None else wait
            place.s0 = min(place.s0, max(1.0, on_road))
            lane, _lon = route.lane_at(min(place.s0, route.path.length - 1.0))
            moving_now = place.depart_t <= 0.0
            length, _w = _DIMS.get(actor.model, _DIMS["default"])
            driver = ScriptedDriver(
                DriverPlan(path=path, speed=place.speed, depart_t=place.depart_t),
                wheelbase=0.6 * length,
                max_steering_deg=40.0,
            )
            xy = path.position(place.s0)
            scripted.append(
                eng.ScriptedSpec(
                    actor_id=aid,
                    model=actor.model,
                    position=(float(xy[0]), float(xy[1])),
                    heading=path.heading(place.s0),
                    speed=place.speed if moving_now else 0.0,
                    driver=driver,
                    spawn_lane_index=lane,
                    destination=route.destination,
                    seed=(spec.seed * 7919 + 31 * k) % (2**31 - 1),
                )
            )
        return eng.Scene(ego=ego, scripted=scripted)

    @staticmethod
    def _sample(manager: Any, trajectories: dict[str, list[Pose]]) -> None:
        t = round(manager.time, 3)
        for aid, v in manager.vehicles.items():
            x, y = v.position
            trajectories.setdefault(aid, []).append(
                Pose(
                    t=t,
                    x=round(float(x), 3),
                    y=round(float(y), 3),
                    heading=round(float(v.heading_theta), 4),
                    speed_mps=round(float(v.speed), 3),
                )
            )

    # -- output --------------------------------------------------------------------------------------
    def _write_json(self, record: RunRecord, out_dir: Path) -> Path:
        folder = out_dir
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{record.spec.run_id}.json"
        record.record_path = str(path)
        path.write_text(record.model_dump_json(indent=1))
        return path

    def _write(
        self, record: RunRecord, dims: dict[str, tuple[float, float]], out_dir: Path, timings: RunTimings
    ) -> None:
        from runners.simulators.metadrive import render

        t0 = time.perf_counter()
        folder = out_dir
        spec = record.spec
        title = f"{spec.case_id} {spec.run_id}" + ("  reproduced" if record.reproduced else "")
        if self.settings.render_png or self.settings.render_gif:
            if self._background is None:
                self._background = render.draw_background(self._env.engine.current_map)
            bg = self._background
            if self.settings.render_png:
                png = render.render_png(
                    folder / f"{spec.run_id}.png",
                    bg,
                    record.trajectories,
                    dims,
                    record.collisions,
                    ego_id=spec.ego_id,
                    title=title,
                    max_side=self.config.png_max_side,
                )
                record.png = str(png)
            if self.settings.render_gif:
                gif = render.render_gif(
                    folder / f"{spec.run_id}.gif",
                    bg,
                    record.trajectories,
                    dims,
                    record.collisions,
                    ego_id=spec.ego_id,
                    title=title,
                    fps=self.settings.gif_fps,
                    max_side=self.config.gif_max_side,
                )
                record.gif = str(gif)
        timings.render = time.perf_counter() - t0
        record.render_seconds = round(timings.render, 4)
        self._write_json(record, out_dir)


def _metadrive_version() -> str:
    """The installed MetaDrive's version, without importing MetaDrive (seconds to import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("metadrive-simulator")
    except PackageNotFoundError:
        return "unknown"


def _blocks(plan: MapPlan) -> str:
    return f"I{plan.blocks} ({plan.lanes}+{plan.lanes} lanes, {plan.lane_width:g} m)"


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _ego_notes(actor: ActorPlan, policy: str) -> list[str]:
    """What the ego's policy does instead of the report's manoeuvres (a policy cannot be scripted)."""
    name = "IDM" if policy == "idm" else "the PPO expert"
    notes = []
    if actor.wrong_way:
        notes.append(
            f"the ego {actor.id} is driven by {name}, which keeps to its lane: its wrong-way drive is not imposed"
        )
    if actor.change_lane:
        notes.append(f"the ego {actor.id}'s lane change is left to {name}")
    if actor.driveway:
        notes.append(
            f"the ego {actor.id} is driven along the road by {name}: its {actor.driveway} turn off the road is not imposed"
        )
    if actor.stop == "then_go":
        notes.append(f"the ego {actor.id} does not stop first: {name} drives it from the start")
    if actor.stop == "stay":
        notes.append(f"the ego {actor.id} starts at rest; {name} drives it from there")
    return notes
