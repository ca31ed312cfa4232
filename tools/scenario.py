"""The crash scenario DSL (after SAFE, Listing 1): road network, actors, environment.

A scenario is what the CrashExtractor makes of a crash report and what the simulators build. It
round-trips through YAML and JSON; a validation error names the field (``actors.1.initial_position:
Input should be 'W2E', ...``). :meth:`Scenario.to_safe` writes SAFE's gold layout (the keys of
``gold.yaml``), so outside scorers can read our output.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tools.errors import BadInputError

__all__ = [
    "ACTIONS",
    "BODY_TYPES",
    "DIRECTIONS",
    "ROAD_TYPES",
    "Actor",
    "Env",
    "RoadNetwork",
    "Scenario",
    "ScenarioError",
    "coarse_class",
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
    actors: list[Actor] = Field(min_length=1, max_length=12)
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
            # The gold files say Sunny for a clear day; their weather vocabulary has no Clear.
            "Env": {"Time": self.env.time, "Weather": "Sunny" if self.env.weather == "Clear" else self.env.weather},
        }
