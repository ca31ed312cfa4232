"""What every crash-scenario simulator takes and returns (plain data; the protocol is in runners.simulation).

A :class:`RunSpec` names one run: a scenario, the actor that is the ego, the ego's policy and a seeded
variant. A simulator turns it into a :class:`RunRecord`: trajectories, collisions (both vehicles,
speeds, time), whether the reported crash was reproduced, the approximations the simulator had to
make, and the pictures it drew. These models travel in events, so they live in tools (the bus may import
tools' data models, never runners).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.scenario import Scenario

__all__ = [
    "EgoPolicy",
    "Pose",
    "RunRecord",
    "RunSpec",
    "SimCollision",
    "SimSettings",
    "plan_runs",
]

EgoPolicy = Literal["idm", "ppo"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SimSettings(_Model):
    """How runs are simulated."""

    duration_s: float = Field(default=20.0, gt=0, le=600, description="Simulated seconds per run.")
    variants: int = Field(default=5, ge=1, le=100, description="Seeded variants per (ego, policy): SAFE's K.")
    policies: list[EgoPolicy] = Field(
        default_factory=lambda: list[EgoPolicy](["idm"]), description="Ego policies to try, each in turn."
    )
    render_png: bool = Field(default=True, description="Draw a top-down PNG of each run.")
    render_gif: bool = Field(default=True, description="Write an animated top-down GIF of each run.")
    gif_fps: int = Field(default=10, ge=1, le=60, description="Frames per second of the GIF.")
    stop_after_first_collision_s: float = Field(
        default=2.0, ge=0, description="Seconds simulated after the first collision before the run ends."
    )
    base_seed: int = Field(default=0, description="Seed of variant 0; variant k uses base_seed + k.")


class RunSpec(_Model):
    """One run of one scenario."""

    case_id: str
    ego_id: str = Field(description="The actor driven by the ego policy; the others follow the scenario.")
    policy: EgoPolicy = "idm"
    variant: int = Field(default=0, ge=0)
    seed: int = 0

    @property
    def run_id(self) -> str:
        """Unique within a case: ``<ego>-<policy>-v<variant>``."""
        return f"{self.ego_id}-{self.policy}-v{self.variant}"


class Pose(_Model):
    """Where an actor was at one time."""

    t: float
    x: float
    y: float
    heading: float = Field(description="Radians, counter-clockwise from +x.")
    speed_mps: float


class SimCollision(_Model):
    """Two actors (or an actor and the road side) touched."""

    t: float = Field(description="Simulated seconds since the start.")
    a: str = Field(description="Actor id, e.g. V1.")
    b: str = Field(description="Actor id, or 'object'/'sidewalk' for non-vehicles.")
    speed_a_mps: float
    speed_b_mps: float | None = None
    x: float | None = None
    y: float | None = None

    def involves(self, actor_id: str) -> bool:
        """Whether ``actor_id`` is one of the two."""
        return actor_id in (self.a, self.b)

    def pair(self) -> frozenset[str]:
        """The two parties, unordered."""
        return frozenset((self.a, self.b))


class RunRecord(_Model):
    """What one run did."""

    spec: RunSpec
    simulator: str = Field(description="e.g. 'metadrive 0.4.3'.")
    map_blocks: str | None = Field(default=None, description="The simulator's map, e.g. MetaDrive's block string.")
    approximations: list[str] = Field(
        default_factory=list, description="Where the simulated road or actors differ from the scenario."
    )
    collisions: list[SimCollision] = Field(default_factory=list, description="Every collision, in time order.")
    reported_pairs: list[tuple[str, str]] = Field(
        default_factory=list, description="The collisions the crash report names (the scenario's)."
    )
    reproduced: bool = Field(
        default=False, description="The first vehicle collision is between vehicles the report says collided."
    )
    ego_collided: bool = Field(default=False, description="A violation: the ego was in a collision.")
    trajectories: dict[str, list[Pose]] = Field(default_factory=dict)
    sim_seconds: float = 0.0
    wall_seconds: float = Field(default=0.0, description="Map build, reset and stepping; rendering excluded.")
    render_seconds: float = 0.0
    png: str | None = Field(default=None, description="Top-down picture of the run.")
    gif: str | None = Field(default=None, description="Animated top-down GIF of the run.")
    record_path: str | None = Field(default=None, description="The JSON file of this record.")
    error: str | None = Field(default=None, description="Why the run could not be done, if it could not.")

    @property
    def first_vehicle_collision(self) -> SimCollision | None:
        """The earliest collision between two vehicles."""
        for c in self.collisions:
            if c.a.startswith("V") and c.b.startswith("V"):
                return c
        return None


def plan_runs(scenario: Scenario, settings: SimSettings) -> list[RunSpec]:
    """Every run of a scenario: each actor in turn as the ego, under each policy, in K seeded variants."""
    return [
        RunSpec(case_id=scenario.case_id, ego_id=actor.id, policy=policy, variant=k, seed=settings.base_seed + k)
        for actor in scenario.actors
        for policy in settings.policies
        for k in range(settings.variants)
    ]
