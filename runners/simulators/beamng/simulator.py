"""BeamNG.tech as a :class:`~runners.simulators.base.Simulator`.

Every run first plans the scenario and writes its files (``out_dir/<case id>/beamng/``), so a person
can always open what was (or would have been) simulated. Then:

- without a BeamNG.tech install (no ``home`` or ``host`` configured, nothing answering at host:port,
  or a home without the game's binary), :meth:`BeamNGSimulator.run` raises
  :class:`~runners.simulators.beamng.errors.BeamNGUnavailableError` carrying the files. It raises rather than
  returning a :class:`~runners.simulators.base.RunRecord` with ``error`` set because the run did not happen
  and can succeed elsewhere: the agent on top turns the exception into an error event (never a silent
  skip) and may retry on a worker that has the game;
- with one, it connects (or starts the game from ``home``), makes and loads the scenario, gives each
  non-ego actor its timed AI script and the ego BeamNG's AI along its route line, steps the physics at
  a fixed rate, polls damage and state, and fills a run record like the MetaDrive one.

The connected path needs the game, so only its refusals and its collision logic are tested here.
"""

from __future__ import annotations

import contextlib
import math
import socket
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from runners.simulators.beamng.collisions import CollisionMonitor, VehicleSample
from runners.simulators.beamng.errors import BeamNGError, BeamNGUnavailableError
from runners.simulators.beamng.plan import ScenePlan, plan_scene
from runners.simulators.beamng.scenario import (
    ScenarioFiles,
    ai_line,
    ai_script,
    build_beamng_scenario,
    write_scenario_files,
)
from runners.simulators.beamng.settings import BeamNGSettings
from tools.crash.models import Pose, RunRecord, RunSpec, Scenario, SimSettings, ego_first_vehicle_collision
from tools.crash.verdict import run_outcome

if TYPE_CHECKING:
    import beamngpy

__all__ = ["BeamNGSimulator", "probe"]

_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


def probe(host: str, port: int, timeout_s: float) -> str | None:
    """Whether something accepts connections at host:port: None if so, else why not."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except TimeoutError:
        return f"nothing answered at {host}:{port} within {timeout_s:g} s"
    except OSError as exc:
        return f"nothing answers at {host}:{port} ({exc.strerror or exc})"


class BeamNGSimulator:
    """Runs DSL scenarios in BeamNG.tech, or writes them for a person when there is no BeamNG.tech.

    Use as a context manager; a connection (or a game it started) is kept for the runs that follow.

    Args:
        settings: Run settings shared by every simulator (run length, time after a first collision).
        beamng: Where BeamNG.tech is and how scenarios are laid out.
    """

    name = "beamng"

    def __init__(self, *, settings: SimSettings | None = None, beamng: BeamNGSettings | None = None) -> None:
        self.settings = beamng or BeamNGSettings()
        self.sim = settings or SimSettings()
        self._bng: beamngpy.BeamNGpy | None = None
        self._tmp: Path | None = None

    def __enter__(self) -> BeamNGSimulator:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Disconnect; quit the game only if this simulator started it."""
        bng, self._bng = self._bng, None
        if bng is not None:
            bng.close()  # quit_on_close was set only for a game this simulator started

    # -- files ---------------------------------------------------------------------------------------
    def plan(self, scenario: Scenario, spec: RunSpec) -> ScenePlan:
        """The plan of one run (roads, vehicles, routes, timing)."""
        return plan_scene(scenario, spec, self.settings, duration_s=self.sim.duration_s)

    def export(self, scenario: Scenario, spec: RunSpec, *, out_dir: Path | None = None) -> ScenarioFiles:
        """Write one run's scenario files under ``<out_dir>/beamng/`` without simulating.

        Raises:
            BeamNGScenarioError: For a spec or scenario that cannot be built.
        """
        plan = self.plan(scenario, spec)
        return write_scenario_files(plan, self._root(out_dir, scenario.case_id))

    def _root(self, out_dir: Path | None, case_id: str) -> Path:
        if out_dir is None:
            if self._tmp is None:
                self._tmp = Path(tempfile.mkdtemp(prefix="drivemt-beamng-"))
            return self._tmp / case_id.replace("/", "_") / "beamng"
        return Path(out_dir) / "beamng"

    # -- running -------------------------------------------------------------------------------------
    def run(self, scenario: Scenario, spec: RunSpec, *, out_dir: Path | None = None) -> RunRecord:
        """Write the run's scenario files, then simulate it in BeamNG.tech.

        Args:
            scenario: The DSL scenario.
            spec: Which actor is the ego, its policy and the variant's seed.
            out_dir: The case's folder: the scenario files go to ``beamng/`` in it and the run's record to
                ``<run id>.json`` (a fresh temporary folder when not given).

        Raises:
            BeamNGScenarioError: For a spec or scenario that cannot be built (bad input).
            BeamNGUnavailableError: When BeamNG.tech is not configured, does not answer, or stops
                answering; it names the files written instead.
            BeamNGError: When the game refuses the scenario (a vehicle model it lacks, a Lua error).
        """
        plan = self.plan(scenario, spec)
        files = write_scenario_files(plan, self._root(out_dir, scenario.case_id))
        bng = self._connect(plan, files)
        from beamngpy.logging import BNGDisconnectedError, BNGError, BNGValueError

        try:
            record = self._simulate(bng, spec, plan, files)
            path = (Path(out_dir) if out_dir is not None else files.root.parent) / f"{spec.run_id}.json"
            record.record_path = str(path)
            path.write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
            return record
        except (BNGDisconnectedError, OSError) as exc:
            # The game died or hung: forget it, so the next run connects (or starts it) afresh.
            with contextlib.suppress(Exception):
                self.close()
            self._bng = None
            raise self._unavailable(f"BeamNG.tech stopped answering during the run ({exc})", plan, files) from exc
        except (BNGError, BNGValueError) as exc:
            raise BeamNGError(f"BeamNG.tech refused case {plan.case_id} run {plan.run_id}: {exc}") from exc

    def _unavailable(self, reason: str, plan: ScenePlan, files: ScenarioFiles) -> BeamNGUnavailableError:
        return BeamNGUnavailableError(
            reason, files=files.files, files_dir=files.root, case_id=plan.case_id, run_id=plan.run_id
        )

    def _connect(self, plan: ScenePlan, files: ScenarioFiles) -> beamngpy.BeamNGpy:
        """A connected BeamNGpy: the warm one, one connected to host:port, or one that started the game."""
        if self._bng is not None:
            return self._bng
        s = self.settings
        if not s.configured:
            raise self._unavailable("no BeamNG.tech install is configured (neither a home nor a host)", plan, files)
        host, port = s.effective_host, s.port
        refused = probe(host, port, s.connect_timeout_s)
        launch = refused is not None
        if launch:
            if s.home is None or not s.launch:
                raise self._unavailable(refused or "", plan, files)
            if host not in _LOCAL_HOSTS and host != socket.gethostname():
                raise self._unavailable(f"{refused}, and drivemt starts BeamNG.tech only on this machine", plan, files)
            binary = self._binary(s.home)
            if isinstance(binary, str):
                raise self._unavailable(f"{refused}, and {binary}", plan, files)
        from beamngpy import BeamNGpy

        bng = BeamNGpy(
            host,
            port,
            home=str(s.home) if s.home is not None else None,
            user=str(s.user) if s.user is not None else None,
            headless=s.headless,
            socket_timeout=s.socket_timeout_s,
            quit_on_close=launch,  # never quit a game someone else started
        )
        try:
            bng.open(launch=launch)
        except Exception as exc:  # beamngpy raises BNGError, BNGDisconnectedError, OSError, socket timeouts
            with contextlib.suppress(Exception):
                bng.close()  # quits the game only if this call started it
            raise self._unavailable(f"BeamNG.tech at {host}:{port} did not answer ({exc})", plan, files) from exc
        self._bng = bng
        return bng

    @staticmethod
    def _binary(home: Path) -> Path | str:
        """The game's binary in ``home``, or why there is none."""
        if not home.is_dir():
            return f"the BeamNG.tech home {home} is not a folder"
        from beamngpy.beamng import filesystem
        from beamngpy.logging import BNGError

        try:
            return filesystem.determine_binary(home)
        except BNGError as exc:
            return f"{home} holds no BeamNG.tech binary ({exc})"

    def _simulate(self, bng: beamngpy.BeamNGpy, spec: RunSpec, plan: ScenePlan, files: ScenarioFiles) -> RunRecord:
        """Make, load and run the scenario; poll damage and state at a fixed step."""
        import beamngpy as bp

        s, sim = self.settings, self.sim
        started = time.perf_counter()
        scenario = build_beamng_scenario(plan)
        bng.settings.set_deterministic(s.steps_per_second)
        scenario.make(bng)
        bng.scenario.load(scenario)
        if plan.time_of_day:
            bng.env.set_tod(plan.time_of_day)
        bng.scenario.start()
        bng.control.pause()
        vehicles = {a.id: scenario.vehicles[a.id] for a in plan.actors}
        for actor in plan.actors:
            v = vehicles[actor.id]
            if actor.ego:
                v.ai.set_line(ai_line(plan, actor.id), cling=True)
            else:
                v.ai.set_script(ai_script(plan, actor.id), cling=True)
        steps = max(1, round(s.poll_interval_s * s.steps_per_second))
        dt = steps / s.steps_per_second
        monitor = CollisionMonitor(damage_threshold=s.damage_threshold, contact_distance_m=s.contact_distance_m)
        trajectories: dict[str, list[Pose]] = {a.id: [] for a in plan.actors}
        t = 0.0
        end = plan.duration_s
        while t < end - 1e-9:
            bng.control.step(steps)
            t += dt
            samples = {vid: _sample(v) for vid, v in vehicles.items()}
            for vid, smp in samples.items():
                trajectories[vid].append(
                    Pose(t=round(t, 3), x=smp.x, y=smp.y, heading=smp.heading, speed_mps=smp.speed)
                )
            if (
                monitor.update(t, samples)
                and end == plan.duration_s
                and ego_first_vehicle_collision(monitor.collisions, plan.ego_id) is not None
            ):  # the ego's first collision with another vehicle decides the reproduction: the run ends a while after
                end = min(end, t + sim.stop_after_first_collision_s)
        wall = time.perf_counter() - started
        collisions = monitor.collisions
        outcome = run_outcome(collisions, plan.reported_pairs, plan.ego_id)
        record = RunRecord(
            spec=spec,
            simulator=f"BeamNG.tech (beamngpy {getattr(bp, '__version__', '?')})",
            map_blocks=f"{plan.level}: {plan.road_type}, {sum(r.kind != 'marking' for r in plan.roads)} road(s)",
            approximations=plan.approximations,
            collisions=collisions,
            reported_pairs=plan.reported_pairs,
            reproduced=outcome.reproduced,
            ego_collided=outcome.ego_collided,
            trajectories=trajectories,
            sim_seconds=round(t, 3),
            wall_seconds=round(wall, 3),
        )
        return record


def _sample(vehicle: Any) -> VehicleSample:
    """Poll a connected vehicle's state and damage sensors."""
    vehicle.sensors.poll()
    state = vehicle.state
    (x, y, _), (dx, dy, _), vel = state["pos"], state["dir"], state["vel"]
    damage = vehicle.sensors["damage"].get("damage") or 0.0
    return VehicleSample(
        x=float(x),
        y=float(y),
        heading=math.atan2(dy, dx),
        speed=math.hypot(vel[0], vel[1]),
        damage=float(damage),
    )
