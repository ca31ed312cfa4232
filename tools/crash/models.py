"""The crash domain's data: the scenario DSL (after SAFE, Listing 1) and what a simulation run takes and returns.

A scenario is what the CrashExtractor makes of a crash report and what the simulators build. It
round-trips through YAML and JSON; a validation error names the field (``actors.1.initial_position:
Input should be 'W2E', ...``). :meth:`Scenario.to_safe` writes SAFE's gold layout (the keys of
``gold.yaml``), so outside scorers can read our output.

A :class:`RunSpec` names one run: a scenario, the actor that is the ego, the ego's policy and a seeded
variant. A simulator turns it into a :class:`RunRecord`: trajectories, collisions (both vehicles,
speeds, time), whether the reported crash was reproduced, the approximations the simulator had to make,
and the pictures it drew. Events carry these models, so this module imports nothing of drivemt but
:mod:`tools.errors`.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tools.errors import BadInputError

__all__ = [
    "ACTIONS",
    "BODY_TYPES",
    "DIRECTIONS",
    "ROAD_TYPES",
    "SAFE_WEATHER",
    "Actor",
    "CaseVerdict",
    "EgoPolicy",
    "Env",
    "Pose",
    "RoadNetwork",
    "RunRecord",
    "RunSpec",
    "RunSummary",
    "Scenario",
    "ScenarioError",
    "SimCollision",
    "SimOptions",
    "SimSettings",
    "coarse_class",
    "ego_first_vehicle_collision",
    "first_vehicle_collision",
    "is_vehicle",
]

RoadType = Literal["Straight", "Curve", "Intersection", "T-intersection", "Merge"]
Direction = Literal["W2E", "E2W", "S2N", "N2S", "Main road", "On-ramp"]
Action = Literal["Move forward", "Turn left", "Turn right", "Change lane", "Stop", "Enter wrong way"]
BodyType = Literal[
    "Sedan",
    "Coupe",
    "Hatchback",
    "Station wagon",
    "Convertible",
    "SUV",
    "Minivan",
    "Van",
    "Pickup",
    "Car",
    "Truck",
    "Straight truck",
    "Semi Truck",
    "Bus",
    "Motorcycle",
]
VehicleClass = Literal["Car", "Truck"]
Time = Literal["Daytime", "Nighttime", "Not mentioned"]
Weather = Literal["Sunny", "Cloudy", "Overcast", "Rainy", "Snowy", "Foggy", "Windy", "Clear", "Not mentioned"]
Compass = Literal["N", "S", "E", "W"]

ROAD_TYPES: tuple[str, ...] = get_args(RoadType)
DIRECTIONS: tuple[str, ...] = get_args(Direction)
ACTIONS: tuple[str, ...] = get_args(Action)
BODY_TYPES: tuple[str, ...] = get_args(BodyType)

# SAFE's coarse classes: sedans, SUVs, vans and pickups are cars; tractor-trailers, semis, straight
# trucks and buses are trucks. A motorcycle is neither; it is simulated as the smallest car.
_TRUCKS = frozenset({"Truck", "Straight truck", "Semi Truck", "Bus"})


def coarse_class(body_type: str) -> VehicleClass:
    """SAFE's coarse class of a body type."""
    return "Truck" if body_type in _TRUCKS else "Car"


MAX_ACTORS = 12
"""Most vehicles one scenario holds (CIREN narratives number far fewer)."""


class ScenarioError(BadInputError):
    """A scenario that does not match the DSL; the message names the fields."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RoadNetwork(_Model):
    """Road geometry. Straight, curve and intersection roads use ``lanes``/``ways``; T-intersections and
    merges use the main and branch counts (``ways`` then describes the main road)."""

    road_type: RoadType
    lanes: int | None = Field(default=None, ge=1, le=12, description="Total lanes (all directions).")
    ways: Literal[1, 2] | None = Field(default=None, description="1 = one-way, 2 = two-way.")
    main_lanes: int | None = Field(default=None, ge=1, le=12)
    main_ways: Literal[1, 2] | None = None
    branch_lanes: int | None = Field(default=None, ge=1, le=12)
    branch_ways: Literal[1, 2] | None = None
    stem_direction: Compass | None = Field(
        default=None, description="T-intersection: the side the stem (branch) road leaves the main road to."
    )
    length_m: float | None = Field(default=None, gt=0, description="How much road is modelled.")
    lane_width_m: float | None = Field(default=None, gt=0, le=10)
    centre_turn_lane: bool = Field(default=False, description="A shared turn lane between the directions.")

    @model_validator(mode="after")
    def _counts_fit(self) -> RoadNetwork:
        if self.road_type in {"T-intersection", "Merge"}:
            if self.main_lanes is None and self.lanes is not None:
                self.main_lanes, self.main_ways = self.lanes, self.main_ways or self.ways
        elif self.lanes is None and self.main_lanes is not None:
            self.lanes, self.ways = self.main_lanes, self.ways or self.main_ways
        return self

    def lanes_per_direction(self) -> int:
        """Lanes each way on the (main) road, the most a simulator block can build (at least 1)."""
        lanes = self.main_lanes if self.road_type in {"T-intersection", "Merge"} else self.lanes
        ways = (self.main_ways if self.road_type in {"T-intersection", "Merge"} else self.ways) or 2
        lanes = lanes or 2
        if self.centre_turn_lane and ways == 2 and lanes > 2:
            lanes -= 1
        return max(1, lanes // ways)


class Actor(_Model):
    """One vehicle of the crash."""

    id: str = Field(pattern=r"^V[1-9][0-9]?$", description="V1, V2 ... as numbered in the report.")
    body_type: BodyType = "Car"
    vehicle_class: VehicleClass | None = Field(default=None, description="Coarse class; derived from the body type.")
    description: str | None = Field(
        default=None, description="As the report names it, e.g. '2004 Jeep Grand Cherokee'."
    )
    initial_position: Direction = "W2E"
    lane: int | None = Field(default=None, ge=1, le=12, description="1 = the rightmost lane of its direction.")
    actions: list[Action] = Field(default_factory=lambda: list[Action](["Move forward"]))
    speed_limit_mph: float | None = Field(default=None, gt=0, le=100)

    @model_validator(mode="after")
    def _class(self) -> Actor:
        if self.vehicle_class is None:
            self.vehicle_class = coarse_class(self.body_type)
        if not self.actions:
            self.actions = ["Move forward"]
        return self


class Env(_Model):
    """Time of day and weather."""

    time: Time = "Not mentioned"
    weather: Weather = "Not mentioned"


class Scenario(_Model):
    """A crash scenario."""

    case_id: str = Field(min_length=1, max_length=64)
    road_network: RoadNetwork
    actors: list[Actor] = Field(min_length=1, max_length=MAX_ACTORS)
    env: Env = Field(default_factory=Env)
    collisions: list[tuple[str, str]] = Field(
        default_factory=list, description="Pairs of actor ids the report says collided, first impact first."
    )
    notes: list[str] = Field(default_factory=list, description="Assumptions and approximations made on the way.")

    @model_validator(mode="after")
    def _ids(self) -> Scenario:
        ids = [a.id for a in self.actors]
        if len(set(ids)) != len(ids):
            raise ValueError(f"actor ids repeat: {ids}")
        for a, b in self.collisions:
            for x in (a, b):
                if x not in ids:
                    raise ValueError(f"collision names {x}, which is not an actor ({', '.join(ids)})")
        return self

    def actor(self, actor_id: str) -> Actor:
        """The actor with this id."""
        for a in self.actors:
            if a.id == actor_id:
                return a
        raise KeyError(actor_id)

    # -- serialisation -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON types), without unset optional fields."""
        return self.model_dump(mode="json", exclude_none=True)

    def to_yaml(self) -> str:
        """YAML text of the scenario."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    def to_json(self) -> str:
        """JSON text of the scenario."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_data(cls, data: Any, *, source: str = "scenario") -> Scenario:
        """Validate plain data into a scenario.

        Raises:
            ScenarioError: Naming each field that does not fit (up to five).
        """
        if not isinstance(data, dict):
            raise ScenarioError(f"{source}: expected a mapping, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(scenario)'}: {err['msg']}" for err in exc.errors()[:5]
            )
            raise ScenarioError(f"{source}: {problems}") from exc

    @classmethod
    def from_yaml(cls, text: str, *, source: str = "scenario") -> Scenario:
        """Parse YAML (or JSON, which is YAML) text into a scenario."""
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{source}: not YAML: {exc}") from exc
        return cls.from_data(data, source=source)

    def to_safe(self) -> dict[str, Any]:
        """SAFE's gold layout (``Scenario``, ``Road type``, ``Road network``, ``Actors``, ``Env``)."""
        rn = self.road_network
        width = rn.lane_width_m or 4
        length = rn.length_m or 50
        net: dict[str, Any]
        if rn.road_type == "T-intersection":
            net = {
                "Length_main": length,
                "Length_branch": max(10, length / 4),
                "No_lanes_main_road": rn.main_lanes or 2,
                "No_lanes_branch_road": rn.branch_lanes or 2,
                "No_ways_main_road": rn.main_ways or 2,
                "No_ways_branch_road": rn.branch_ways or 2,
                "Width": width,
            }
        elif rn.road_type == "Merge":
            net = {
                "Length_main": length,
                "No_lanes_main_road": rn.main_lanes or 2,
                "No_lanes_branch_road": rn.branch_lanes or 1,
                "No_ways_main_road": rn.main_ways or 2,
                "Width": width,
            }
        else:
            net = {"Length": length, "No_lanes": rn.lanes or 2, "No_ways": rn.ways or 2, "Width": width}
        return {
            "Scenario": self.case_id,
            "Road type": rn.road_type,
            "Road network": net,
            "Actors": {f"{a.id}_type": a.vehicle_class for a in self.actors},
            "Env": {"Time": self.env.time, "Weather": SAFE_WEATHER.get(self.env.weather, self.env.weather)},
        }


# SAFE's gold layout knows Sunny, Cloudy, Rainy, Snowy and Not mentioned; the DSL's finer weather is written as the
# nearest of those: a clear day is Sunny, an overcast or foggy sky Cloudy (grey, no sun; SAFE has no fog), and
# wind, which is no state of the sky, Not mentioned.
SAFE_WEATHER: dict[str, str] = {"Clear": "Sunny", "Overcast": "Cloudy", "Foggy": "Cloudy", "Windy": "Not mentioned"}


# -- simulation runs ----------------------------------------------------------------------------
EgoPolicy = Literal["idm", "ppo"]


class _RunModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("policies", check_fields=False)
    @classmethod
    def _once_each(cls, policies: list[EgoPolicy]) -> list[EgoPolicy]:
        """A policy named twice is run once (its runs would share ids, and the case would wait for the repeats)."""
        return list(dict.fromkeys(policies))


class SimSettings(_RunModel):
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
        default=2.0,
        ge=0,
        description="Seconds simulated after the ego's first collision with another vehicle before the run ends.",
    )
    base_seed: int = Field(default=0, description="Seed of variant 0; variant k uses base_seed + k.")


class SimOptions(_RunModel):
    """How a crash report's scenario is simulated (carried from the submission to the planner)."""

    simulator: Literal["metadrive", "beamng"] = Field(default="metadrive", description="Which simulator runs it.")
    policies: list[EgoPolicy] = Field(
        default_factory=lambda: list[EgoPolicy](["idm"]), min_length=1, description="Ego policies, each in turn."
    )
    variants: int = Field(default=5, ge=1, le=100, description="Seeded variants per ego and policy (SAFE's K).")
    duration_s: float = Field(default=20.0, gt=0, le=600, description="Simulated seconds per run.")
    render: bool = Field(default=True, description="Draw a PNG and a GIF of every run.")
    seed: int = Field(default=0, description="Seed of variant 0.")

    def settings(self) -> SimSettings:
        """The simulator settings these options stand for."""
        return SimSettings(
            duration_s=self.duration_s,
            variants=self.variants,
            policies=list(self.policies),
            render_png=self.render,
            render_gif=self.render,
            base_seed=self.seed,
        )


class RunSpec(_RunModel):
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


class Pose(_RunModel):
    """Where an actor was at one time."""

    t: float
    x: float
    y: float
    heading: float = Field(description="Radians, counter-clockwise from +x.")
    speed_mps: float


def is_vehicle(actor_id: str) -> bool:
    """Whether an actor id names a vehicle (``V1``...), not an object or the road side."""
    return actor_id.startswith("V")


def first_vehicle_collision(collisions: list[SimCollision]) -> SimCollision | None:
    """The earliest collision between two vehicles (ties keep the given order)."""
    return next(
        (c for c in sorted(collisions, key=lambda c: c.t) if is_vehicle(c.a) and is_vehicle(c.b)),
        None,
    )


def ego_first_vehicle_collision(collisions: list[SimCollision], ego_id: str) -> SimCollision | None:
    """The ego's earliest collision with another vehicle: what decides whether a run reproduced the crash."""
    return first_vehicle_collision([c for c in collisions if c.involves(ego_id)])


class SimCollision(_RunModel):
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


class RunRecord(_RunModel):
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
        default=False,
        description="The ego's first collision with another vehicle is between vehicles the report says collided.",
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
        return first_vehicle_collision(self.collisions)

    @property
    def ego_first_vehicle_collision(self) -> SimCollision | None:
        """The ego's earliest collision with another vehicle (see :func:`ego_first_vehicle_collision`)."""
        return ego_first_vehicle_collision(self.collisions, self.spec.ego_id)


class RunSummary(_RunModel):
    """What the Judge keeps of one run while a case's runs come in (a case's tally holds one per run)."""

    index: int = Field(ge=0, description="The run's place in the case's plan.")
    run_id: str
    ego: str
    policy: str
    reproduced: bool
    ego_collided: bool
    wall_seconds: float = 0.0
    record: str | None = Field(default=None, description="The run's JSON record (an artefact ref).")
    error: str | None = None

    @classmethod
    def of(cls, record: RunRecord, index: int) -> RunSummary:
        """The summary of a run record."""
        return cls(
            index=index,
            run_id=record.spec.run_id,
            ego=record.spec.ego_id,
            policy=record.spec.policy,
            reproduced=record.reproduced,
            ego_collided=record.ego_collided,
            wall_seconds=record.wall_seconds,
            record=record.record_path,
            error=record.error,
        )


class CaseVerdict(_RunModel):
    """All runs of one crash case, judged."""

    case_id: str
    runs: int = Field(ge=0, description="Runs judged.")
    reproduced: bool
    reproduced_by: list[str] = Field(
        default_factory=list, description="Run ids whose ego's first collision with a vehicle was a reported one."
    )
    reproduced_per_ego: dict[str, bool] = Field(default_factory=dict, description="'<ego>/<policy>' -> reproduced.")
    violations: int = Field(ge=0, description="Runs in which the ego collided.")
    first_violation_runs: list[int] = Field(
        default_factory=list, description="1-based run numbers of the 1st, 2nd and 3rd violations (SAFE Table 6)."
    )
    seconds_per_run: float
    records: list[str] = Field(default_factory=list, description="Every run's JSON record (artefact refs).")
    errors: list[str] = Field(default_factory=list, description="Runs that could not be done, and why.")
    error: str | None = Field(default=None, description="Why the case could not be simulated at all (its report).")
    case_ref: str | None = Field(default=None, description="Artefact ref of the case's folder.")
    batch_size: int | None = Field(default=None, ge=1, description="Cases in the case's batch, when known.")
