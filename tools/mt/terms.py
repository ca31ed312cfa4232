"""Every "adds" and "replaces" term of the ontology, and how drivemt renders it (or why it does not).

A recipe says what a term becomes in the frames: a road user or obstacle (sprites or a drawn vehicle), a sign
or signal, a road marking, or a weather, light or road-surface edit; where it goes by default (ahead in the
ego's lane, at the roadside, crossing its path, oncoming, overhead, on the road); and, where the synthetic world
can draw it, the scene edit that re-renders a synthetic case with the scripted driver's reaction. An MR's
manipulation phrase is read through the ontology (its canonical term), with its context words ("oncoming",
"on the roadside", "in front of") choosing the place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.common.text import normalise_phrase
from tools.mt.edit.infra import MARKING_KINDS, SIGN_KINDS, SIGNAL_KINDS, sign_size_m
from tools.mt.edit.objects import Part

__all__ = ["OBJECTS", "RECIPES", "Recipe", "place_from_phrase", "recipe_for_phrase"]

Family = str  # object, sign, marking, environment, none


@dataclass(frozen=True)
class Recipe:
    """How one ontology term is rendered."""

    term: str
    verb: str
    family: Family
    kind: str
    place: str = "ahead"
    synth: tuple[str, str, str | None] | None = None
    """The synthetic world's edit: ``("add", kind, state)``, ``("weather", kind, None)`` or ``("time", kind, None)``."""
    note: str = ""
    """An approximation made, or why the term is not rendered."""

    @property
    def rendered(self) -> bool:
        """Whether drivemt draws this term."""
        return self.family != "none"

    def size_m(self) -> tuple[float, float]:
        """Width and height of the drawn thing in metres."""
        if self.family == "object":
            return OBJECTS[self.kind][1]
        if self.family == "sign":
            return sign_size_m(self.kind)
        return (3.5, 0.0)


S = Part
OBJECTS: dict[str, tuple[tuple[Part, ...], tuple[float, float]]] = {
    "pedestrian": ((S("pedestrian"),), (0.7, 1.75)),
    "child": ((S("pedestrian"),), (0.5, 1.2)),
    "senior": ((S("person_standing", overlay="cane"),), (0.75, 1.65)),
    "blind_pedestrian": ((S("white_cane"),), (0.8, 1.75)),
    "limited_mobility": ((S("person_standing", overlay="cane"),), (0.75, 1.7)),
    "wheelchair": ((S("wheelchair_user"),), (0.9, 1.35)),
    "guide_dog_user": ((S("white_cane", 0.0, 0.6), S("guide_dog", 0.55, 1.0, 0.55, 1.0)), (1.6, 1.75)),
    "skateboarder": ((S("runner", 0.0, 1.0, 0.0, 0.9), S("skateboard", 0.0, 1.0, 0.86, 1.0)), (0.9, 1.8)),
    "roller_skater": ((S("runner", 0.0, 1.0, 0.0, 0.88), S("roller_skate", 0.25, 0.75, 0.84, 1.0)), (0.8, 1.8)),
    "scooter_rider": ((S("person_standing", 0.15, 0.85, 0.0, 0.85), S("scooter", 0.0, 1.0, 0.45, 1.0)), (0.9, 1.85)),
    "cyclist": ((S("cyclist"),), (1.7, 1.75)),
    "bicycle": ((S("bicycle"),), (1.7, 1.0)),
    "moped": ((S("person_standing", 0.25, 0.75, 0.0, 0.7), S("motor_scooter", 0.0, 1.0, 0.35, 1.0)), (1.6, 1.7)),
    "motorcyclist": ((S("person_standing", 0.3, 0.7, 0.0, 0.65), S("motorcycle", 0.0, 1.0, 0.35, 1.0)), (2.0, 1.7)),
    "car_ahead": ((S("rear:8c1c1c"),), (1.85, 1.45)),
    "car_stopped": ((S("rear-braking:2a4d8f"),), (1.85, 1.45)),
    "car_oncoming": ((S("car_front"),), (1.85, 1.5)),
    "car_turning": ((S("car_side"),), (4.5, 1.5)),
    "convoy": (
        (
            S("rear:5a5a62", 0.3, 0.7, 0.0, 0.55),
            S("rear:8c1c1c", 0.0, 0.48, 0.25, 1.0),
            S("rear:c8c8cc", 0.52, 1.0, 0.25, 1.0),
        ),
        (4.2, 1.6),
    ),
    "bus_ahead": ((S("rear-braking:f2c12e"),), (2.55, 3.2)),
    "bus_stopped": ((S("bus"),), (12.0, 3.2)),
    "bus_oncoming": ((S("bus_front"),), (2.55, 3.2)),
    "ambulance": ((S("ambulance"),), (5.5, 2.4)),
    "fire_engine": ((S("fire_engine"),), (7.0, 3.0)),
    "police_car": ((S("police_car_front", overlay="beacon"),), (1.9, 1.6)),
    "tow_truck": ((S("truck", overlay="beacon"),), (7.0, 3.0)),
    "work_vehicle": ((S("lorry", overlay="beacon"),), (8.0, 3.2)),
    "truck": ((S("truck"),), (8.0, 3.2)),
    "tractor": ((S("tractor"),), (3.5, 2.6)),
    "trailer": ((S("rear:d2d2d2"),), (2.5, 2.8)),
    "overhanging_load": ((S("truck", overlay="load"),), (8.0, 3.2)),
    "horse_drawn": ((S("horse", 0.0, 0.55), S("rear:6b4a2b", 0.5, 1.0, 0.35, 1.0)), (3.5, 2.0)),
    "tram": ((S("tram"),), (12.0, 3.4)),
    "collision": (
        (S("car_side", 0.0, 0.62, 0.35, 1.0), S("car_front", 0.45, 1.0, 0.3, 1.0), S("collision", 0.3, 0.75, 0.0, 0.6)),
        (5.5, 1.9),
    ),
    "deer": ((S("deer"),), (1.6, 1.5)),
    "dog": ((S("dog"),), (0.9, 0.7)),
    "livestock": ((S("cow"),), (2.3, 1.6)),
    "rock": ((S("rock"),), (0.9, 0.7)),
    "barrier": ((S("barrier"),), (2.2, 1.2)),
    "officer": ((S("person_standing", overlay="police"),), (0.75, 1.8)),
    "worker": ((S("person_standing", overlay="vest"),), (0.75, 1.8)),
    "flagger": ((S("person_standing", 0.0, 0.7, overlay="vest"), S("flag", 0.55, 1.0, 0.0, 0.55)), (1.1, 1.8)),
    "crossing_guard": (
        (S("person_standing", 0.0, 0.7, overlay="vest"), S("children_crossing", 0.6, 1.0, 0.05, 0.4)),
        (1.1, 1.8),
    ),
    "passenger": ((S("person_standing"),), (0.7, 1.75)),
    "adult_with_child": ((S("pedestrian", 0.0, 0.55), S("pedestrian", 0.55, 0.95, 0.35, 1.0)), (1.3, 1.75)),
}

_ADD_PERSON = ("add", "pedestrian", None)


def _o(term: str, kind: str, place: str, synth: tuple[str, str, str | None] | None = None, note: str = "") -> Recipe:
    return Recipe(term, "adds", "object", kind, place, synth, note)


def _s(
    term: str, kind: str, synth: tuple[str, str, str | None] | None = None, note: str = "", place: str = "roadside"
) -> Recipe:
    family = "sign"
    assert kind in SIGN_KINDS or kind in SIGNAL_KINDS, kind
    return Recipe(term, "adds", family, kind, place, synth, note)


def _m(term: str, kind: str, note: str = "") -> Recipe:
    assert kind in MARKING_KINDS, kind
    return Recipe(term, "adds", "marking", kind, "road", None, note)


def _e(term: str, kind: str, synth: tuple[str, str, str | None] | None = None, note: str = "") -> Recipe:
    return Recipe(term, "replaces", "environment", kind, "scene", synth, note)


_LIST: list[Recipe] = [
    # -- road users and obstacles ------------------------------------------------------------------------------
    _o("animal", "deer", "crossing", ("add", "animal", None)),
    _o("deer", "deer", "crossing", ("add", "animal", None)),
    _o("dog", "dog", "crossing", ("add", "animal", None)),
    _o("livestock", "livestock", "crossing", ("add", "animal", None)),
    _o("bicycle", "bicycle", "ahead", ("add", "cyclist", None), "a riderless bicycle on the road"),
    _o("bicycle with auxiliary motor", "moped", "ahead", ("add", "cyclist", None), "a moped rider"),
    _o("bicyclist", "cyclist", "ahead", ("add", "cyclist", None)),
    _o("person traveling on bicycle", "cyclist", "ahead", ("add", "cyclist", None)),
    _o("oncoming bicycle", "cyclist", "oncoming"),
    _o("oncoming bicyclist", "cyclist", "oncoming"),
    _o("motorcyclist", "motorcyclist", "ahead"),
    _o("electric micro-vehicle", "scooter_rider", "ahead", None, "an e-scooter rider"),
    _o("skater/scooter rider", "scooter_rider", "crossing"),
    _o("person using a skateboard", "skateboarder", "crossing"),
    _o("person using roller skate", "roller_skater", "crossing"),
    _o("pedestrian", "pedestrian", "crossing", _ADD_PERSON),
    _o("blind pedestrian", "blind_pedestrian", "crossing", _ADD_PERSON),
    _o("guide dog user", "guide_dog_user", "crossing", _ADD_PERSON),
    _o("child", "child", "crossing", ("add", "child", None)),
    _o("escorted school child", "adult_with_child", "crossing", ("add", "child", None)),
    _o("person with small child", "adult_with_child", "crossing", _ADD_PERSON),
    _o("senior elderly person", "senior", "crossing", _ADD_PERSON),
    _o("person with limited mobility", "limited_mobility", "crossing", _ADD_PERSON),
    _o("person with a disability using a wheelchair", "wheelchair", "crossing", ("add", "wheelchair", None)),
    _o(
        "person with a disability using a tricycle",
        "wheelchair",
        "crossing",
        ("add", "wheelchair", None),
        "drawn as a wheelchair user",
    ),
    _o(
        "person with a disability using a quadricycle",
        "wheelchair",
        "crossing",
        ("add", "wheelchair", None),
        "drawn as a wheelchair user",
    ),
    _o("passenger", "passenger", "roadside", _ADD_PERSON),
    _o("police officer directing traffic", "officer", "ahead", _ADD_PERSON),
    _o("traffic officer", "officer", "ahead", _ADD_PERSON),
    _o("crossing guard", "crossing_guard", "crossing", _ADD_PERSON),
    _o("school patrol", "crossing_guard", "crossing", _ADD_PERSON),
    _o("flagger in construction zone", "flagger", "ahead", _ADD_PERSON),
    _o("railway employee with flag", "flagger", "ahead", _ADD_PERSON),
    _o("construction worker", "worker", "ahead", _ADD_PERSON),
    _o("vehicle", "car_ahead", "ahead", ("add", "car", None)),
    _o("motor vehicle", "car_ahead", "ahead", ("add", "car", None)),
    _o("multi-track motor vehicle", "car_ahead", "ahead", ("add", "car", None)),
    _o("driver in front", "car_stopped", "ahead", ("add", "car", None)),
    _o("stopped vehicle", "car_stopped", "ahead", ("add", "car", None)),
    _o("oncoming vehicle", "car_oncoming", "oncoming", ("add", "car", "oncoming")),
    _o("turning vehicle", "car_turning", "crossing", ("add", "car", "crossing")),
    _o("heavy traffic", "convoy", "ahead", ("add", "car", None)),
    _o("vehicle convoy", "convoy", "ahead", ("add", "car", None)),
    _o(
        "traffic break",
        "police_car",
        "ahead",
        ("add", "emergency", None),
        "a police car with its beacon, slowing traffic",
    ),
    _o("public transport bus", "bus_ahead", "ahead", ("add", "bus", None)),
    _o("line bus", "bus_stopped", "roadside", ("add", "bus", None)),
    _o("school bus", "bus_ahead", "ahead", ("add", "bus", None)),
    _o("emergency vehicle", "ambulance", "crossing", ("add", "emergency", None)),
    _o("tow truck", "tow_truck", "roadside", ("add", "truck", None)),
    _o("road work vehicle", "work_vehicle", "roadside", ("add", "truck", None)),
    _o("tractor", "tractor", "ahead", ("add", "truck", None)),
    _o("trailer", "trailer", "ahead", ("add", "truck", None)),
    _o("overhanging load", "overhanging_load", "ahead", ("add", "truck", None)),
    _o("horse-drawn vehicle", "horse_drawn", "ahead"),
    _o("rail vehicle", "tram", "crossing"),
    _o("collision", "collision", "ahead", ("add", "obstacle", None)),
    _o("obstacle", "rock", "ahead", ("add", "obstacle", None)),
    _o("obstacle on the road", "rock", "ahead", ("add", "obstacle", None)),
    _o("road narrowing", "barrier", "ahead", ("add", "obstacle", None), "a barrier narrowing the lane"),
    Recipe("vehicle behind", "adds", "none", "", "behind", None, "behind the ego: a front camera cannot show it"),
    # -- signs and signals ---------------------------------------------------------------------------------------
    _s("red light", "red_light", ("add", "traffic_light", "red")),
    _s("yellow light", "yellow_light", ("add", "traffic_light", "yellow")),
    _s("green light", "green_light", ("add", "traffic_light", "green")),
    _s("red arrow", "red_arrow", ("add", "traffic_light", "red")),
    _s("green arrow", "green_arrow", ("add", "traffic_light", "green")),
    _s("flashing red light", "flashing_red_light", ("add", "traffic_light", "red")),
    _s("flashing yellow light", "flashing_yellow_light", ("add", "traffic_light", "yellow")),
    _s("traffic light signal system", "traffic_light", ("add", "traffic_light", "red")),
    _s("pedestrian signal indicator walk/don't walk", "pedestrian_signal"),
    _s("ramp meter signal", "ramp_meter", ("add", "traffic_light", "red")),
    _s("stop sign", "stop_sign", ("add", "stop_sign", None)),
    _s("yield sign", "yield_sign", ("add", "yield_sign", None)),
    _s("maximum speed limit sign", "speed_limit_sign", ("add", "speed_sign", "30")),
    _s("speed limit sign", "us_speed_limit_sign", ("add", "speed_sign", "30")),
    _s("start of 30 km/h zone sign", "zone_30_sign", ("add", "speed_sign", "30")),
    _s("no entry sign", "no_entry_sign", ("add", "no_entry_sign", None)),
    _s("do not enter sign", "do_not_enter_sign", ("add", "no_entry_sign", None)),
    _s("prohibition for vehicle of all kind sign", "all_vehicles_prohibited_sign", ("add", "no_entry_sign", None)),
    _s("prohibition for motor vehicle sign", "motor_vehicles_prohibited_sign", ("add", "no_entry_sign", None)),
    _s("no u-turn sign", "no_u_turn_sign"),
    _s("wrong way sign", "wrong_way_sign", ("add", "no_entry_sign", None)),
    _s("warning sign", "warning_sign", ("add", "warning_sign", None)),
    _s("work zone sign", "work_zone_sign", ("add", "warning_sign", None)),
    _s("5-sided sign", "school_sign", ("add", "school_sign", None), "a school-zone pentagon"),
    _s("red and white regulatory sign", "regulatory_sign"),
    _s("right-of-way regulation sign", "priority_road_sign"),
    _s("chevron sign", "chevron_sign", ("add", "warning_sign", None)),
    _s("distance marker", "distance_marker"),
    _s("bus stop sign", "bus_stop_sign", ("add", "bus_stop_sign", None)),
    _s("st andrew cross sign", "crossbuck", ("add", "crossbuck", None)),
    _s("railroad crossing sign crossbuck", "crossbuck", ("add", "crossbuck", None)),
    _s("overhead signage", "overhead_sign", place="overhead"),
    _s("reflective post", "reflective_post"),
    _s("guardrail", "guardrail"),
    _s("traffic island", "traffic_island", place="ahead"),
    # -- road markings -------------------------------------------------------------------------------------------
    _m("crosswalk marking", "crosswalk"),
    _m("pedestrian crossing marking", "crosswalk"),
    _m("limit line", "limit_line"),
    _m("bike lane", "bike_lane"),
    _m("center left turn lane", "center_left_turn_lane"),
    _m("high-occupancy vehicle hov lane", "hov_lane"),
    _m("lane marking solid broken directional arrow", "lane_arrows"),
    _m("shared lane marking sharrow", "sharrow"),
    _m("solid and broken yellow line as passing/no-passing indicator", "yellow_lines"),
    _m("reflective road marker", "road_markers"),
    _m("raised pavement marker", "road_markers"),
    # -- environment ---------------------------------------------------------------------------------------------
    _e("rain", "rain", ("weather", "rain", None)),
    _e("rain environment", "rain", ("weather", "rain", None)),
    _e("drizzle", "drizzle", ("weather", "rain", None)),
    _e("snow", "snow", ("weather", "snow", None)),
    _e("snow environment", "snow", ("weather", "snow", None)),
    _e("snowfall", "snow", ("weather", "snow", None)),
    _e("fog", "fog", ("weather", "fog", None)),
    _e("fog environment", "fog", ("weather", "fog", None)),
    _e("poor visibility general", "fog", ("weather", "fog", None)),
    _e("heavy smoke", "smoke", ("weather", "fog", None), "smoke: a dark, grey fog"),
    _e("heavy smoke environment", "smoke", ("weather", "fog", None), "smoke: a dark, grey fog"),
    _e("dust storm", "dust", ("weather", "fog", None), "dust: an ochre fog"),
    _e("night driving darkness", "night", ("time", "night", None)),
    _e("low lighting environment", "low_light", ("time", "dusk", None)),
    _e("low lighting implied", "low_light", ("time", "dusk", None)),
    _e("glare from sun", "glare"),
    _e("sun glare", "glare"),
    _e("high wind", "wind", None, "flying leaves and debris, shaking trees"),
    _e("high wind environment", "wind", None, "flying leaves and debris, shaking trees"),
    _e("strong wind", "wind", None, "flying leaves and debris, shaking trees"),
    _e("wet road", "wet"),
    _e("slippery road", "slippery"),
    _e("flooded road", "flooded"),
    _e("mud", "mud"),
    _e("mud environment", "mud"),
    _e("ice", "ice"),
    _e("ice road", "ice"),
    _e("black ice", "black_ice"),
    _e("pothole", "potholes"),
    _e("loose gravel", "gravel"),
]

RECIPES: dict[str, Recipe] = {normalise_phrase(r.term): r for r in _LIST}
"""Normalised ontology term -> recipe."""

# Words in a manipulation phrase that name a recipe when the phrase holds no ontology term ("time into night").
_KEYWORDS: list[tuple[str, str]] = [
    (r"\bnight|dark", "night driving darkness"),
    (r"\bdusk|twilight|low light", "low lighting environment"),
    (r"\bdrizzl", "drizzle"),
    (r"\brain", "rain"),
    (r"\bsnow", "snow"),
    (r"\bfog|mist|haz", "fog"),
    (r"\bsmoke", "heavy smoke"),
    (r"\bdust", "dust storm"),
    (r"\bglare|sunlight|sun\b", "sun glare"),
    (r"\bwind", "high wind"),
    (r"\bblack ice", "black ice"),
    (r"\bice|icy", "ice"),
    (r"\bflood", "flooded road"),
    (r"\bwet", "wet road"),
    (r"\bslipper", "slippery road"),
    (r"\bmud", "mud"),
    (r"\bpothole", "pothole"),
    (r"\bgravel", "loose gravel"),
    (r"\bred (?:traffic )?light", "red light"),
    (r"\byellow (?:traffic )?light|amber", "yellow light"),
    (r"\bgreen (?:traffic )?light", "green light"),
    (r"\bspeed limit", "maximum speed limit sign"),
    (r"\bstop sign", "stop sign"),
    (r"\byield|give way", "yield sign"),
    (r"\bcyclist|bicycl", "bicyclist"),
    (r"\bpedestrian|person|people|walker", "pedestrian"),
    (r"\bchild|kid", "child"),
    (r"\bbus\b", "public transport bus"),
    (r"\btruck|lorry", "tow truck"),
    (r"\bvehicle|car\b", "vehicle"),
    (r"\bdeer|animal|dog|cow|horse", "animal"),
    (r"\bobstacle|debris|rock", "obstacle"),
]


def recipe_for_phrase(phrase: str, canonical_term: str | None = None) -> Recipe | None:
    """The recipe of an MR's manipulation: by its canonical ontology term, else by the words it holds."""
    for key in (canonical_term, phrase):
        if key:
            recipe = RECIPES.get(normalise_phrase(key))
            if recipe is not None:
                return recipe
    text = phrase.lower()
    for pattern, term in _KEYWORDS:
        if re.search(pattern, text):
            return RECIPES[normalise_phrase(term)]
    return None


def place_from_phrase(phrase: str, default: str) -> str:
    """Where an added thing goes, from the MR's own words, else the recipe's default."""
    text = phrase.lower()
    if re.search(r"oncoming|opposite lane|other direction", text):
        return "oncoming"
    if re.search(r"cross(es|ing) the (road|street)|crossing\b|crosses", text) and default != "road":
        return "crossing"
    if re.search(r"roadside|sidewalk|side of the road|kerb|curb|at the stop", text):
        return "roadside"
    if re.search(r"in front|ahead|on the road|in the lane|same lane", text) and default not in ("road", "overhead"):
        return "ahead"
    return default
