"""The synthetic driving world's scene description: a road, conditions and objects, sampled from a seed and editable.

A :class:`SceneSpec` is a case's whole ground truth: the renderer draws it, the scripted driver drives it, and
a follow-up is the same spec with one :class:`SceneEdit` (an object added at a place, the weather or the light
changed), re-rendered with the driver's own reaction. Distances are metres along the road from where the ego
is at the first frame (``s``); lateral positions are metres from the road's centre line, right positive.
"""

from __future__ import annotations

import random
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from tools.mt.models import TimeOfDay, Weather

__all__ = [
    "ROAD_KINDS",
    "ROAD_TYPE_OF",
    "AddObject",
    "ObjectKind",
    "RoadKind",
    "SceneEdit",
    "SceneObject",
    "SceneSpec",
    "SetTime",
    "SetWeather",
    "apply_edit",
    "sample_scene",
]

RoadKind = Literal[
    "straight", "curve", "intersection", "t_junction", "crosswalk", "school_zone", "bus_stop", "railroad_crossing"
]
ROAD_KINDS: tuple[str, ...] = (
    "straight",
    "curve",
    "intersection",
    "t_junction",
    "crosswalk",
    "school_zone",
    "bus_stop",
    "railroad_crossing",
)
ROAD_TYPE_OF: dict[str, str] = {
    "straight": "any roads",
    "curve": "any roads",
    "intersection": "intersection",
    "t_junction": "intersection",
    "crosswalk": "crosswalk",
    "school_zone": "school area",
    "bus_stop": "bus stopping",
    "railroad_crossing": "railroad crossing",
}
"""Each road kind's canonical ontology road type (tools.mt.roads)."""

ObjectKind = Literal[
    "car",
    "bus",
    "truck",
    "emergency",
    "pedestrian",
    "child",
    "cyclist",
    "traffic_light",
    "stop_sign",
    "yield_sign",
    "speed_sign",
    "school_sign",
    "bus_stop_sign",
    "crossbuck",
    "warning_sign",
    "no_entry_sign",
    "animal",
    "wheelchair",
    "obstacle",
]

LANE_W = 3.5
"""Lane width in metres."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SceneObject(_Model):
    """Something in the scene the driver may react to (road users, signs, lights)."""

    kind: ObjectKind
    s: float = Field(description="Metres along the road ahead of the ego's first position.")
    x: float = Field(description="Metres right of the road's centre line (negative: left).")
    speed: float = Field(default=0.0, description="Metres per second along the road (negative: oncoming).")
    lateral_speed: float = Field(default=0.0, description="Metres per second across the road (positive: to the right).")
    colour: tuple[int, int, int] = Field(default=(180, 30, 30), description="Body colour, RGB.")
    state: str | None = Field(default=None, description="A light's state (red, yellow, green); a sign's value.")
    scale: float = Field(default=1.0, gt=0.1, le=3.0, description="Size relative to the kind's usual size.")
    added: bool = Field(default=False, description="Added by an edit (a follow-up), not by the sampler.")

    def at(self, t: float) -> tuple[float, float]:
        """``(s, x)`` at ``t`` seconds."""
        return self.s + self.speed * t, self.x + self.lateral_speed * t


class SceneSpec(_Model):
    """A whole synthetic case: road, conditions, objects, the ego's start, the scenery's seed."""

    seed: int
    road: RoadKind
    curvature: float = Field(default=0.0, description="1/m of the road ahead; positive turns left.")
    lanes: int = Field(default=1, ge=1, le=2, description="Lanes per direction.")
    feature_s: float = Field(default=40.0, description="Where the road's feature (junction, crossing, stop) begins.")
    time: TimeOfDay = "day"
    weather: Weather = "clear"
    weather_strength: float = Field(default=0.0, ge=0.0, le=1.0)
    objects: list[SceneObject] = Field(default_factory=list)
    cruise_kmh: float = Field(default=50.0, gt=0, le=130, description="The driver's speed on an open road here.")

    @property
    def road_type(self) -> str:
        """The canonical ontology road type."""
        return ROAD_TYPE_OF[self.road]

    @property
    def ego_x(self) -> float:
        """The ego's lateral position: the centre of the right-most lane."""
        return LANE_W * (self.lanes - 0.5)

    @property
    def half_road(self) -> float:
        """Half the carriageway's width."""
        return LANE_W * self.lanes


class AddObject(_Model):
    """Add one object where it belongs."""

    op: Literal["add"] = "add"
    kind: ObjectKind
    place: Literal["ahead", "roadside", "crossing", "oncoming", "off_path"] = Field(
        default="ahead", description="In the ego's lane, at the roadside, crossing its path, oncoming, or far aside."
    )
    distance_m: float = Field(default=25.0, ge=4.0, le=150.0, description="Metres ahead of the ego's first position.")
    state: str | None = None


class SetWeather(_Model):
    """Change the weather (strength 0 leaves the scene as it was)."""

    op: Literal["weather"] = "weather"
    weather: Weather
    strength: float = Field(default=0.8, ge=0.0, le=1.0)


class SetTime(_Model):
    """Change the time of day (the lighting)."""

    op: Literal["time"] = "time"
    time: TimeOfDay


SceneEdit = AddObject | SetWeather | SetTime

_SIGN_KINDS = {
    "traffic_light",
    "stop_sign",
    "yield_sign",
    "speed_sign",
    "school_sign",
    "bus_stop_sign",
    "crossbuck",
    "warning_sign",
    "no_entry_sign",
}
_COLOURS = [(180, 30, 30), (30, 60, 160), (220, 220, 225), (30, 30, 35), (120, 120, 130), (40, 110, 60), (200, 160, 40)]


_STOP_LINE_ROADS = frozenset({"intersection", "t_junction", "crosswalk", "railroad_crossing"})


def apply_edit(spec: SceneSpec, edit: SceneEdit) -> SceneSpec:
    """The spec with one edit applied (the original is unchanged)."""
    if isinstance(edit, SetWeather):
        return spec.model_copy(update={"weather": edit.weather, "weather_strength": edit.strength})
    if isinstance(edit, SetTime):
        return spec.model_copy(update={"time": edit.time})
    rng = random.Random(f"{spec.seed}:{edit.kind}:{edit.place}:{edit.distance_m}")
    half = spec.half_road
    d = edit.distance_m
    if edit.kind in _SIGN_KINDS or edit.place == "roadside":
        x, speed, lateral = half + 1.6, 0.0, 0.0
        if edit.kind in {"traffic_light", "stop_sign"} and spec.road in _STOP_LINE_ROADS:
            d = max(d, spec.feature_s - 2.0)  # at the junction's stop line, not in front of it
    elif edit.place == "crossing":
        x, speed, lateral = -half - 1.0, 0.0, 1.3
    elif edit.place == "oncoming":
        x, speed, lateral = -LANE_W / 2, -8.0, 0.0
    elif edit.place == "off_path":
        x, speed, lateral = half + 6.0, 0.0, 0.0
    else:  # ahead, in the ego's lane
        x, speed, lateral = spec.ego_x, 0.0, 0.0
    state = edit.state
    if edit.kind == "traffic_light" and state is None:
        state = "red"
    if edit.kind == "speed_sign" and state is None:
        state = "30"
    obj = SceneObject(
        kind=edit.kind,
        s=d,
        x=x,
        speed=speed,
        lateral_speed=lateral,
        colour=rng.choice(_COLOURS),
        state=state,
        added=True,
    )
    return spec.model_copy(update={"objects": [*spec.objects, obj]})


def sample_scene(
    seed: int, *, road: RoadKind | None = None, focus: str | None = None, plain: bool = False
) -> SceneSpec:
    """A random scene, optionally made to show one rule's trigger (``focus``, one of ``FAULT_RULES``).

    A dataset gives every tenth case each rule as its focus, and the sampler adds the same triggers at random
    besides, so each rule's trigger appears in well over 15 % of a set's cases (the manifest reports the shares).
    A ``plain`` scene has none of those extras: a clear day or dusk, the road's own signals and signs, parked
    and oncoming cars, and nobody on the ego's path but what ``focus`` adds.
    """
    rng = random.Random(seed)
    kinds: list[RoadKind] = list(get_args(RoadKind))
    kind: RoadKind = road if road is not None else rng.choice(kinds)
    time: TimeOfDay = rng.choices(["day", "dusk", "night"], weights=[0.55, 0.2, 0.25])[0]  # type: ignore[assignment]
    weather: Weather = rng.choices(["clear", "rain", "fog", "snow"], weights=[0.4, 0.2, 0.2, 0.2])[0]  # type: ignore[assignment]
    if plain:
        time, weather = ("dusk" if time == "dusk" else "day"), "clear"
    strength = 0.0 if weather == "clear" else rng.uniform(0.45, 1.0)
    lanes = rng.choices([1, 2], weights=[0.7, 0.3])[0]
    curvature = rng.choice([-1, 1]) * rng.uniform(0.006, 0.018) if kind == "curve" else rng.uniform(-0.0008, 0.0008)
    feature_s = rng.uniform(16.0, 45.0)
    cruise = {"straight": 50.0, "curve": 45.0, "school_zone": 40.0, "railroad_crossing": 40.0}.get(kind, 45.0)
    spec = SceneSpec(
        seed=seed,
        road=kind,
        curvature=curvature,
        lanes=lanes,
        feature_s=feature_s,
        time=time,
        weather=weather,
        weather_strength=strength,
        cruise_kmh=cruise + rng.uniform(-3.0, 3.0),
    )
    half = spec.half_road
    objs: list[SceneObject] = []

    def colour() -> tuple[int, int, int]:
        return rng.choice(_COLOURS)

    signal_here = kind in ("intersection", "t_junction") or (kind in ("straight", "crosswalk") and rng.random() < 0.45)
    if signal_here:
        if rng.random() < (0.72 if kind != "t_junction" else 0.4):
            state = rng.choices(["red", "yellow", "green"], weights=[0.68, 0.12, 0.2])[0]
            objs.append(SceneObject(kind="traffic_light", s=feature_s - 1.0, x=half + 1.2, state=state))
        else:
            objs.append(SceneObject(kind="stop_sign", s=feature_s - 2.0, x=half + 1.4))
    elif kind == "railroad_crossing" and rng.random() < 0.6:
        objs.append(SceneObject(kind="stop_sign", s=feature_s - 3.5, x=half + 1.4))
    if kind in ("intersection", "t_junction") and rng.random() < 0.5:
        objs.append(
            SceneObject(kind="car", s=feature_s + 6.0, x=-14.0, lateral_speed=rng.uniform(4, 9), colour=colour())
        )
    if kind in ("straight", "crosswalk", "curve") and rng.random() < 0.17 and not plain:
        objs.append(SceneObject(kind="school_sign", s=rng.uniform(8.0, 25.0), x=half + 1.5))
    if kind == "crosswalk" or (kind in ("intersection", "school_zone") and rng.random() < 0.3):
        if rng.random() < 0.8 and not plain:
            who = rng.choice(["pedestrian", "pedestrian", "child", "wheelchair"]) if kind != "school_zone" else "child"
            start = rng.choice([-half - 1.5, half + 1.5])
            objs.append(
                SceneObject(
                    kind=who,  # type: ignore[arg-type]
                    s=feature_s + 1.5,
                    x=start * rng.uniform(0.2, 1.0),
                    lateral_speed=(1.3 if start < 0 else -1.3) * rng.uniform(0.7, 1.1),
                    colour=colour(),
                )
            )
    if kind == "school_zone":
        objs.append(SceneObject(kind="school_sign", s=rng.uniform(8.0, 20.0), x=half + 1.5))
        for _ in range(rng.randint(1, 3)):
            objs.append(
                SceneObject(kind="child", s=rng.uniform(10, 50), x=half + rng.uniform(1.0, 3.0), colour=colour())
            )
    if kind == "bus_stop":
        objs.append(SceneObject(kind="bus_stop_sign", s=feature_s, x=half + 1.3))
        if rng.random() < 0.5:
            objs.append(SceneObject(kind="bus", s=feature_s + 3.0, x=spec.ego_x, colour=(230, 190, 40)))
        for _ in range(rng.randint(0, 2)):
            objs.append(SceneObject(kind="pedestrian", s=feature_s + rng.uniform(-3, 3), x=half + 2.0, colour=colour()))
    if kind == "railroad_crossing":
        objs.append(SceneObject(kind="crossbuck", s=feature_s - 3.0, x=half + 1.4))
        objs.append(SceneObject(kind="crossbuck", s=feature_s - 3.0, x=-half - 1.4))
    # Road users anywhere (none in a plain scene)
    if rng.random() < 0.32 and not plain:
        gap = rng.uniform(12.0, 45.0)
        objs.append(
            SceneObject(
                kind=rng.choice(["car", "car", "car", "truck", "bus"]),
                s=gap,
                x=spec.ego_x,
                speed=rng.uniform(2.0, 9.0),
                colour=colour(),
            )
        )
    if rng.random() < 0.26 and kind not in ("crosswalk",) and not plain:
        objs.append(
            SceneObject(
                kind="pedestrian",
                s=rng.uniform(18.0, 45.0),
                x=rng.choice([-1, 1]) * (half + 1.0),
                lateral_speed=rng.choice([-1.2, 1.2]),
                colour=colour(),
            )
        )
    if rng.random() < 0.33 and not plain:
        near = rng.random() < 0.7
        objs.append(
            SceneObject(
                kind="cyclist",
                s=rng.uniform(12.0, 40.0),
                x=spec.ego_x + (0.9 if near else 2.6),
                speed=rng.uniform(3.0, 5.5),
                colour=colour(),
            )
        )
    if rng.random() < 0.5:
        objs.append(
            SceneObject(kind="car", s=rng.uniform(20, 90), x=-LANE_W / 2, speed=-rng.uniform(6, 12), colour=colour())
        )
    if rng.random() < 0.25:
        objs.append(SceneObject(kind="car", s=rng.uniform(8, 60), x=half + 2.2, colour=colour()))  # parked
    if kind in ("straight", "curve") and rng.random() < 0.25:
        objs.append(
            SceneObject(kind="speed_sign", s=rng.uniform(10, 40), x=half + 1.4, state=rng.choice(["30", "50", "70"]))
        )
    spec = spec.model_copy(update={"objects": objs})
    return _focus(spec, focus, rng) if focus else spec


def _focus(spec: SceneSpec, focus: str, rng: random.Random) -> SceneSpec:
    """Make ``spec`` show the trigger of rule ``focus``, near enough to see."""
    half = spec.half_road
    objs = list(spec.objects)
    near = rng.uniform(14.0, 28.0)
    if focus in ("fog", "rain", "snow"):
        return spec.model_copy(update={"weather": focus, "weather_strength": rng.uniform(0.55, 1.0)})
    if focus == "night":
        return spec.model_copy(update={"time": "night"})
    if focus == "red-light":
        objs = [o for o in objs if o.kind not in ("traffic_light", "stop_sign")]
        objs.append(SceneObject(kind="traffic_light", s=spec.feature_s - 1.0, x=half + 1.2, state="red"))
    elif focus == "stop-sign":
        objs = [o for o in objs if o.kind not in ("traffic_light", "stop_sign")]
        objs.append(SceneObject(kind="stop_sign", s=spec.feature_s - 2.0, x=half + 1.4))
    elif focus == "pedestrian":
        side = rng.choice([-1, 1])
        objs.append(
            SceneObject(
                kind=rng.choice(["pedestrian", "pedestrian", "child", "wheelchair"]),
                s=near,
                x=side * (half + 0.5),
                lateral_speed=-side * rng.uniform(1.0, 1.5),
                colour=rng.choice(_COLOURS),
            )
        )
    elif focus == "cyclist":
        objs.append(
            SceneObject(
                kind="cyclist", s=near, x=spec.ego_x + 0.6, speed=rng.uniform(3.0, 5.0), colour=rng.choice(_COLOURS)
            )
        )
    elif focus == "lead-vehicle":
        objs.append(
            SceneObject(kind="car", s=near, x=spec.ego_x, speed=rng.uniform(2.0, 7.0), colour=rng.choice(_COLOURS))
        )
    elif focus == "school-zone":
        objs.append(SceneObject(kind="school_sign", s=rng.uniform(8.0, 20.0), x=half + 1.5))
    else:
        raise ValueError(f"unknown focus {focus!r}")
    return spec.model_copy(update={"objects": objs})
