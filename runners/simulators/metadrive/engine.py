"""The MetaDrive side of a run: the environment, the scene manager, and the ego's policies.

This module imports MetaDrive at the top; ``runners.simulators.metadrive.simulator`` imports it lazily, after the
asset download is disabled. MetaDrive allows one engine per process, so one :class:`CrashEnv` is made
per worker and reused for every run.

The :class:`SceneManager` follows MetaDrive's manager lifecycle (``reset`` spawns the scripted actors,
``before_step`` lets them act, ``step`` runs at every physics step and checks contacts between every
pair of actors, ``after_step`` updates their state and road-edge flags). The ego is MetaDrive's agent,
driven by :class:`CruiseIDMPolicy` (MetaDrive's IDM with the actor's speed as its target) or
:class:`PPOExpertPolicy` (the PPO expert whose weights ship in the wheel, ``metadrive.examples``),
both with MetaDrive navigation along the actor's route.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from metadrive.component.vehicle.vehicle_type import vehicle_type
from metadrive.constants import DEFAULT_AGENT
from metadrive.envs.metadrive_env import MetaDriveEnv
from metadrive.manager.base_manager import BaseManager
from metadrive.policy.base_policy import BasePolicy
from metadrive.policy.idm_policy import IDMPolicy
from metadrive.utils.pg.utils import ray_localization

from runners.simulators.metadrive.monitor import CollisionMonitor, Contact
from runners.simulators.metadrive.policies import ScriptedDriver

__all__ = ["CrashEnv", "CruiseIDMPolicy", "EgoSpec", "PPOExpertPolicy", "SceneManager", "ScriptedSpec", "make_env"]

SCENE_MANAGER = "drivemt_scene"
MAX_SPEED_KMH = 160.0  # MetaDrive caps vehicles at 80 km/h by default; crash reports have freeway speeds


@dataclass
class ScriptedSpec:
    """One scripted actor to spawn."""

    actor_id: str
    model: str
    position: tuple[float, float]
    heading: float
    speed: float  # spawn speed, m/s
    driver: ScriptedDriver
    spawn_lane_index: tuple[str, str, int]
    destination: str
    seed: int


@dataclass
class EgoSpec:
    """The ego: MetaDrive's agent."""

    actor_id: str
    model: str
    spawn_lane_index: tuple[str, str, int]
    longitude: float
    heading: float
    speed: float
    destination: str
    policy: str  # idm | ppo
    target_speed: float  # m/s, IDM's cruise speed


@dataclass
class Scene:
    """What the scene manager sets up at the next reset."""

    ego: EgoSpec
    scripted: list[ScriptedSpec] = field(default_factory=list)


class CruiseIDMPolicy(IDMPolicy):
    """MetaDrive's IDM, cruising at the actor's speed instead of IDM's default 30 km/h."""

    def set_target_speed(self, mps: float) -> None:
        """Cruise at ``mps`` (IDM keeps its own car-following and lane-change logic)."""
        self.NORMAL_SPEED = mps * 3.6
        self.target_speed = self.NORMAL_SPEED

    def reset(self) -> None:
        """Keep the cruise speed across MetaDrive's policy reset."""
        speed = self.NORMAL_SPEED
        super().reset()
        self.NORMAL_SPEED = self.target_speed = speed


class PPOExpertPolicy(BasePolicy):
    """The PPO expert shipped in the MetaDrive wheel (``metadrive.examples.expert``), deterministic.

    Its weights are ``metadrive/examples/ppo_expert/expert_weights.npz``, loaded from the installed package
    (no download). The mean action is used, so a seeded run repeats exactly.
    """

    def act(self, agent_id: Any = None) -> Any:
        """The expert's mean action for the controlled vehicle."""
        _one_torch_thread()
        from metadrive.examples import expert

        action = expert(self.control_object, deterministic=True)
        self.action_info["action"] = action
        return action


def _one_torch_thread() -> None:
    """The expert runs through torch when it is installed: one thread per simulator worker, no oversubscription."""
    try:
        import torch
    except ImportError:  # MetaDrive falls back to its numpy expert
        return
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


class SceneManager(BaseManager):
    """Spawns and drives the scripted actors, and watches every pair of actors for contact."""

    PRIORITY = 20  # after the agent manager, so the ego exists when contacts are checked

    def __init__(self) -> None:
        super().__init__()
        self.scene: Scene | None = None
        self.vehicles: dict[str, Any] = {}  # actor id -> vehicle (ego included after reset)
        self.drivers: dict[str, ScriptedDriver] = {}
        self.monitor = CollisionMonitor()
        self.physics_dt = 0.02
        self.substeps = 0
        self.control_dt = 0.1

    @property
    def time(self) -> float:
        """Simulated seconds since the reset."""
        return self.substeps * self.physics_dt

    def before_reset(self) -> None:
        """Drop last run's scripted actors."""
        super().before_reset()
        self.vehicles = {}
        self.drivers = {}

    def reset(self) -> None:
        """Spawn the scripted actors of the scene, at their speeds."""
        cfg = self.engine.global_config
        self.physics_dt = float(cfg["physics_world_step_size"])
        self.control_dt = self.physics_dt * int(cfg["decision_repeat"])
        self.substeps = 0
        self.monitor = CollisionMonitor()
        if self.scene is None:
            return
        for spec in self.scene.scripted:
            vx, vy = spec.speed * math.cos(spec.heading), spec.speed * math.sin(spec.heading)
            config: dict[str, Any] = {
                "spawn_position_heading": (list(spec.position), spec.heading),
                "spawn_velocity": [vx, vy],
                "spawn_lane_index": spec.spawn_lane_index,
                "destination": spec.destination,
                "show_navi_mark": False,
                "show_dest_mark": False,
                "use_special_color": False,
            }
            heading = (math.cos(spec.heading), math.sin(spec.heading))
            if not ray_localization(heading, spec.position, self.engine, use_heading_filter=False):
                # MetaDrive's navigation needs a lane under the spawn point (a junction's interior has none):
                # this actor drives on its path without one
                config["navigation_module"] = None
            v = self.spawn_object(vehicle_type[spec.model], vehicle_config=config, random_seed=spec.seed)
            v.config["max_speed_km_h"] = MAX_SPEED_KMH
            self.vehicles[spec.actor_id] = v
            self.drivers[spec.actor_id] = spec.driver

    def after_reset(self) -> None:
        """Add the ego to the watched actors."""
        if self.scene is None:
            return
        agent = self.engine.agents.get(DEFAULT_AGENT)
        if agent is not None:
            agent.config["max_speed_km_h"] = MAX_SPEED_KMH
            self.vehicles = {self.scene.ego.actor_id: agent, **self.vehicles}

    def before_step(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Each scripted actor acts on its plan."""
        t = self.time
        for actor_id, driver in self.drivers.items():
            v = self.vehicles[actor_id]
            driver.crashed = driver.crashed or self.monitor.actor_crashed(actor_id)
            x, y = v.position
            action = driver.act(t, float(x), float(y), float(v.heading_theta), float(v.speed), self.control_dt)
            v.before_step(list(action))
        return {}

    def step(self, *args: Any, **kwargs: Any) -> None:
        """Every physics step: contacts between every pair of actors."""
        world = self.engine.physics_world.dynamic_world
        by_node = {v.chassis.node().this: aid for aid, v in self.vehicles.items()}
        contacts: list[Contact] = []
        seen: set[frozenset[str]] = set()
        # one contactTest per chassis, as MetaDrive's own state check does (contactTestPair crashes Bullet
        # on recycled vehicles), keeping the contacts whose other body is another actor
        for a, v in self.vehicles.items():
            node = v.chassis.node()
            for contact in world.contactTest(node, True).getContacts():
                n0, n1 = contact.getNode0(), contact.getNode1()
                other = n1 if n0.this == node.this else n0
                b = by_node.get(other.this)
                if b is None or b == a or frozenset((a, b)) in seen:
                    continue
                seen.add(frozenset((a, b)))
                point = contact.getManifoldPoint().getPositionWorldOnA()
                contacts.append((a, b, (float(point[0]), float(point[1]))))
        speeds = {a: float(v.speed) for a, v in self.vehicles.items()}
        self.monitor.observe(self.time, contacts, speeds)
        self.substeps += 1

    def after_step(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Update the scripted actors' state; note road-edge and object contacts of every actor."""
        for actor_id in self.drivers:
            self.vehicles[actor_id].after_step()
        for actor_id, v in self.vehicles.items():
            x, y = v.position
            if v.crash_sidewalk:
                self.monitor.observe_road(self.time, actor_id, "sidewalk", float(v.speed), (float(x), float(y)))
            if v.crash_object or v.crash_building:
                self.monitor.observe_road(self.time, actor_id, "object", float(v.speed), (float(x), float(y)))
        return {}


class CrashEnv(MetaDriveEnv):
    """MetaDrive's single-agent environment with the scene manager registered."""

    def setup_engine(self) -> None:
        """Register the scene manager beside MetaDrive's own."""
        super().setup_engine()
        self.engine.register_manager(SCENE_MANAGER, SceneManager())

    @property
    def scene_manager(self) -> SceneManager:
        """The registered scene manager."""
        manager: SceneManager = self.engine.managers[SCENE_MANAGER]
        return manager


def make_env(map_config: dict[str, Any], *, physics_dt: float, decision_repeat: int) -> CrashEnv:
    """A headless, physics-only environment with no traffic, whose episodes never end on their own."""
    from runners.simulators.metadrive.roads import CrashBlocks

    config = {
        "use_render": False,
        "traffic_density": 0.0,
        "accident_prob": 0.0,
        "num_scenarios": 1,
        "start_seed": 0,
        "log_level": 50,
        "block_dist_config": CrashBlocks,
        "map_config": map_config,
        "store_map": True,
        "random_spawn_lane_index": False,
        "force_destroy": True,
        "agent_policy": CruiseIDMPolicy,
        "crash_vehicle_done": False,
        "crash_object_done": False,
        "out_of_road_done": False,
        "horizon": None,
        "physics_world_step_size": physics_dt,
        "decision_repeat": decision_repeat,
        "show_sidewalk": True,
        "vehicle_config": {"show_navi_mark": False, "show_dest_mark": False, "show_navigation_arrow": False},
    }
    return CrashEnv(config)
