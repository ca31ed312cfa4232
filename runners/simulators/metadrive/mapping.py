"""From the scenario DSL to what MetaDrive can build: a block layout and each actor's lane, route and manoeuvre.

MetaDrive's procedural blocks (S straight, C curve, X intersection, T T-intersection, r on-ramp …) have
the same number of lanes in both directions and no centre turn lane, and are always two-way. The nearest
layout is chosen and every difference is written down as an *approximation* the run records.

Direction convention (documented in the package docstring too). The map is MetaDrive's frame: +x east,
+y north, right-hand traffic. A DSL direction names where an actor comes from and goes: ``W2E`` comes
from the west leg (or the west end of the road) travelling east, ``S2N`` from the south travelling north,
and so on. The scenario may be turned by quarter turns so that its main road runs west-east on the map
(MetaDrive's first block points east): a straight road, curve or merge whose actors mostly travel
north-south, or a T-intersection whose stem leaves to the east or west, is turned; the turn is recorded.
On a straight road or curve, the road's start is its west end; on a merge, ``Main road`` is the eastbound
main road and ``On-ramp`` the ramp joining it from the right. A DSL lane is counted from the right edge of
the actor's direction (lane 1 = rightmost); MetaDrive counts from the centre line (index 0 = innermost).

Nothing here imports MetaDrive; the geometry comes later (``runners.simulators.metadrive.roads``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from runners.simulators.metadrive.errors import TooManyLanesError, UnsupportedLayoutError
from tools.crash.models import Actor, Scenario

__all__ = [
    "MAX_LANES_PER_DIRECTION",
    "ActorPlan",
    "Layout",
    "MapPlan",
    "ScenarioPlan",
    "Side",
    "plan_scenario",
]

Side = Literal["W", "E", "S", "N"]
Layout = Literal["straight", "curve", "intersection", "t_intersection", "merge"]
Approach = Literal["W", "E", "S", "N", "ramp"]
Turn = Literal["straight", "left", "right"]

MAX_LANES_PER_DIRECTION = 5  # MetaDrive's block generator accepts 1..5 lanes per direction
REFUSE_LANES_PER_DIRECTION = 8  # up to this many are built as 5 (noted); more is not a road MetaDrive can stand in for
MPH = 0.44704
DEFAULT_SPEED_MPH = 40.0
TURN_SPEED_MPS = 7.0  # a vehicle turning at a junction takes the corner at about 25 km/h
DRIVEWAY_SPEED_MPS = 5.0

_LAYOUT: dict[str, Layout] = {
    "Straight": "straight",
    "Curve": "curve",
    "Intersection": "intersection",
    "T-intersection": "t_intersection",
    "Merge": "merge",
}
_BLOCKS: dict[Layout, str] = {
    "straight": "S",
    "curve": "SCS",
    "intersection": "SX",
    "t_intersection": "ST",
    "merge": "SrS",
}
_FROM: dict[str, Side] = {"W2E": "W", "E2W": "E", "S2N": "S", "N2S": "N"}
_OPPOSITE: dict[Side, Side] = {"W": "E", "E": "W", "S": "N", "N": "S"}
_CW: dict[Side, Side] = {"N": "E", "E": "S", "S": "W", "W": "N"}  # a quarter turn clockwise
# travelling towards a side, what lies to the left / right
_LEFT_OF: dict[Side, Side] = {"E": "N", "N": "W", "W": "S", "S": "E"}
_RIGHT_OF: dict[Side, Side] = {"E": "S", "S": "W", "W": "N", "N": "E"}
_MODEL: dict[str, str] = {
    "Motorcycle": "s",
    "Coupe": "s",
    "Hatchback": "s",
    "Convertible": "s",
    "Sedan": "m",
    "Station wagon": "m",
    "Car": "m",
    "SUV": "l",
    "Minivan": "l",
    "Van": "l",
    "Pickup": "l",
    "Truck": "xl",
    "Straight truck": "xl",
    "Semi Truck": "xl",
    "Bus": "xl",
}


def travel(approach: Side) -> Side:
    """The side an actor coming from ``approach`` heads towards when it goes straight on."""
    return _OPPOSITE[approach]


def turn_exit(approach: Side, turn: Turn) -> Side:
    """The leg a turn from ``approach`` leaves by (right-hand traffic)."""
    heading = travel(approach)
    if turn == "left":
        return _LEFT_OF[heading]
    if turn == "right":
        return _RIGHT_OF[heading]
    return heading


@dataclass(frozen=True)
class MapPlan:
    """The MetaDrive road: layout, lanes per direction, lane width, and how the compass was turned."""

    layout: Layout
    lanes: int
    lane_width: float
    quarter_turns: int = 0
    stem: Side | None = None  # T-intersection: the side the stem leaves the (west-east) main road to

    @property
    def blocks(self) -> str:
        """MetaDrive's block string after the first block, e.g. ``SX``."""
        return _BLOCKS[self.layout]

    @property
    def legs(self) -> tuple[Side, ...]:
        """The sides the road reaches (for a straight road or curve: its two ends, called W and E)."""
        if self.layout == "intersection":
            return ("W", "E", "S", "N")
        if self.layout == "t_intersection":
            return ("W", "E", self.stem or "S")
        return ("W", "E")

    def key(self) -> tuple[object, ...]:
        """Equal keys build the same map (the simulator rebuilds only when this changes)."""
        return (self.layout, self.lanes, round(self.lane_width, 2), self.stem)


@dataclass(frozen=True)
class ActorPlan:
    """How one actor enters the map, which way it leaves, and what it does on the way."""

    id: str
    model: str  # MetaDrive vehicle model: s, m, l, xl
    speed_mps: float
    approach: Approach
    lane_index: int  # MetaDrive's index in its direction: 0 = next to the centre line
    exit: Side  # the leg (or road end) its route ends at
    turn: Turn = "straight"
    wrong_way: bool = False  # crosses the centre line and drives in the opposing lane
    change_lane: bool = False
    driveway: Literal["left", "right"] | None = None  # turns off a road that has no junction
    stop: Literal["stay", "then_go"] | None = None  # stays stopped, or stops and then goes


@dataclass
class ScenarioPlan:
    """The map and every actor's plan, with the approximations made on the way."""

    case_id: str
    map: MapPlan
    actors: dict[str, ActorPlan]
    approximations: list[str] = field(default_factory=list)

    def actor(self, actor_id: str) -> ActorPlan:
        """The plan of one actor."""
        return self.actors[actor_id]


def plan_scenario(scenario: Scenario) -> ScenarioPlan:
    """Choose the MetaDrive layout and each actor's lane, route and manoeuvre.

    Raises:
        TooManyLanesError: More lanes per direction than MetaDrive builds.
        UnsupportedLayoutError: A road type without a MetaDrive layout.
    """
    rn = scenario.road_network
    notes: list[str] = []
    layout = _LAYOUT.get(rn.road_type)
    if layout is None:
        raise UnsupportedLayoutError(scenario.case_id, rn.road_type)
    lanes = _lanes(scenario, notes)
    width = float(rn.lane_width_m or 3.5)
    if not 2.5 <= width <= 5.0:
        notes.append(f"lane width {width:g} m built as {min(5.0, max(2.5, width)):g} m")
        width = min(5.0, max(2.5, width))
    turns, stem = _orientation(scenario, layout, notes)
    map_plan = MapPlan(layout=layout, lanes=lanes, lane_width=width, quarter_turns=turns, stem=stem)
    partners = _partners(scenario)
    actors = {a.id: _actor_plan(a, map_plan, scenario, partners, notes) for a in scenario.actors}
    return ScenarioPlan(case_id=scenario.case_id, map=map_plan, actors=actors, approximations=notes)


# -- road --------------------------------------------------------------------------------------------
def _lanes(scenario: Scenario, notes: list[str]) -> int:
    rn = scenario.road_network
    junction = rn.road_type in {"T-intersection", "Merge"}
    total = (rn.main_lanes if junction else rn.lanes) or 2
    ways = (rn.main_ways if junction else rn.ways) or 2
    per_dir = rn.lanes_per_direction()
    if per_dir > REFUSE_LANES_PER_DIRECTION:
        raise TooManyLanesError(scenario.case_id, per_dir, MAX_LANES_PER_DIRECTION)
    if per_dir > MAX_LANES_PER_DIRECTION:
        notes.append(
            f"{per_dir} lanes per direction built as {MAX_LANES_PER_DIRECTION}, the most MetaDrive's blocks hold"
        )
        per_dir = MAX_LANES_PER_DIRECTION
    if ways == 1:
        notes.append(
            f"one-way road ({total} lanes) built two-way with {per_dir} lanes each way "
            "(MetaDrive's blocks are two-way); the opposing lanes stay empty"
        )
    elif per_dir * 2 != total:
        why = "no centre turn lane and " if rn.centre_turn_lane else ""
        notes.append(
            f"{total} lanes built as {per_dir}+{per_dir} (MetaDrive's blocks have {why}equal lanes per direction)"
        )
    if rn.road_type == "T-intersection" and rn.branch_lanes is not None:
        branch_ways = rn.branch_ways or 2
        branch_per_dir = max(1, rn.branch_lanes // branch_ways)
        if branch_per_dir != per_dir or branch_ways == 1:
            notes.append(
                f"the stem road has {per_dir} lanes each way like the main road "
                f"(report: {rn.branch_lanes} lanes, {branch_ways}-way)"
            )
    if rn.road_type == "Merge" and (rn.branch_lanes or 1) != 1:
        notes.append(f"the on-ramp is built with one lane (report: {rn.branch_lanes})")
    return per_dir


def _orientation(scenario: Scenario, layout: Layout, notes: list[str]) -> tuple[int, Side | None]:
    """Quarter turns that put the main road west-east, and the T's stem side after turning."""
    sides = [_FROM[a.initial_position] for a in scenario.actors if a.initial_position in _FROM]
    if layout == "intersection":
        return 0, None
    if layout == "t_intersection":
        stem = scenario.road_network.stem_direction or _infer_stem(sides)
        turns = 1 if stem in {"E", "W"} else 0
        built_stem = _CW[stem] if turns else stem
        if turns:
            notes.append(f"compass turned a quarter clockwise so the main road runs west-east (stem {stem} -> S/N)")
        if scenario.road_network.stem_direction is None:
            notes.append(f"the stem's side is not given; taken as {stem} from the actors' directions")
        return turns, built_stem
    north_south = sum(s in {"N", "S"} for s in sides)
    east_west = len(sides) - north_south
    if north_south > east_west or (north_south == east_west and sides and sides[0] in {"N", "S"}):
        notes.append("compass turned a quarter clockwise: the scenario's north-south road runs west-east on the map")
        return 1, None
    return 0, None


def _infer_stem(sides: list[Side]) -> Side:
    present = set(sides)
    for axis, other in ((("W", "E"), ("S", "N")), (("S", "N"), ("W", "E"))):
        if set(axis) <= present:
            lone = [s for s in other if s in present]
            if len(lone) == 1:
                return lone[0]
    for s in ("S", "N", "W", "E"):
        if s in present and _OPPOSITE[s] not in present and s in {"S", "N"}:
            return s
    return "S"


# -- actors ------------------------------------------------------------------------------------------
def _partners(scenario: Scenario) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {a.id: [] for a in scenario.actors}
    for a, b in scenario.collisions:
        out[a].append(b)
        out[b].append(a)
    return out


def _turned(side: Side, turns: int) -> Side:
    for _ in range(turns):
        side = _CW[side]
    return side


def _actor_plan(
    actor: Actor, plan: MapPlan, scenario: Scenario, partners: dict[str, list[str]], notes: list[str]
) -> ActorPlan:
    acts = list(actor.actions)
    speed = (actor.speed_limit_mph or DEFAULT_SPEED_MPH) * MPH
    model = _MODEL.get(actor.body_type, "m")
    if model == "xl" and actor.body_type != "Truck":
        notes.append(f"{actor.id}'s {actor.body_type.lower()} is MetaDrive's largest vehicle (5.7 m box truck)")
    elif actor.body_type == "Motorcycle":
        notes.append(f"{actor.id}'s motorcycle is MetaDrive's smallest car")
    approach = _approach(actor, plan, notes)
    turn: Turn = "left" if "Turn left" in acts else "right" if "Turn right" in acts else "straight"
    stop: Literal["stay", "then_go"] | None = None
    if "Stop" in acts:
        moving = [a for a in acts if a != "Stop"]
        stop = "then_go" if moving and acts.index("Stop") < max(acts.index(m) for m in moving) else "stay"
    driveway: Literal["left", "right"] | None = None
    exit_side: Side
    if plan.layout in {"straight", "curve", "merge"} or approach == "ramp":
        exit_side = "E" if approach in {"W", "ramp"} else "W"
        if turn != "straight":
            if plan.layout == "merge":
                notes.append(f"{actor.id}'s {turn} turn has no road on a merge; it drives on")
            else:
                driveway = turn
                notes.append(f"{actor.id} turns {turn} off a road without a junction (into a driveway)")
            turn = "straight"
    else:
        legs = plan.legs
        assert approach != "ramp"
        exit_side = turn_exit(approach, turn)
        if exit_side not in legs:
            fallback: Turn = "left" if turn == "straight" else "straight"
            if turn_exit(approach, fallback) not in legs:
                fallback = "right" if turn_exit(approach, "right") in legs else "left"
            notes.append(
                f"{actor.id} cannot go {turn} from the {approach} leg of the T-intersection; it turns {fallback}"
                if fallback != "straight"
                else f"{actor.id} cannot turn {turn} from the {approach} leg of the T-intersection; it goes straight"
            )
            turn = fallback
            exit_side = turn_exit(approach, turn)
    if turn != "straight" or driveway is not None:
        speed = min(speed, TURN_SPEED_MPS if driveway is None else DRIVEWAY_SPEED_MPS)
    lane_index = _lane_index(actor, plan, approach, turn, notes)
    wrong_way = "Enter wrong way" in acts
    change_lane = "Change lane" in acts
    if change_lane and plan.lanes == 1 and not wrong_way:
        notes.append(f"{actor.id}'s lane change has no other lane in its direction; it keeps its lane")
        change_lane = False
    return ActorPlan(
        id=actor.id,
        model=model,
        speed_mps=round(speed, 3),
        approach=approach,
        lane_index=lane_index,
        exit=exit_side,
        turn=turn,
        wrong_way=wrong_way,
        change_lane=change_lane,
        driveway=driveway,
        stop=stop,
    )


def _approach(actor: Actor, plan: MapPlan, notes: list[str]) -> Approach:
    pos = actor.initial_position
    if pos == "On-ramp":
        if plan.layout == "merge":
            return "ramp"
        notes.append(f"{actor.id} starts on an on-ramp, but the road has none; it enters from the west")
        return "W"
    if pos == "Main road":
        return "W"
    side = _turned(_FROM[pos], plan.quarter_turns)
    if side not in plan.legs:
        notes.append(f"{actor.id} comes from the {side}, where the road has no leg; it enters from the west")
        return "W"
    if plan.layout == "merge" and side in {"S", "N"}:
        return "W"
    return side


def _lane_index(actor: Actor, plan: MapPlan, approach: Approach, turn: Turn, notes: list[str]) -> int:
    n = plan.lanes
    if approach == "ramp":
        return 0
    if actor.lane is None:
        return 0 if turn == "left" else n - 1
    if actor.lane > n:
        notes.append(f"{actor.id}'s lane {actor.lane} is not built ({n} per direction); it drives in the innermost")
        return 0
    return n - actor.lane
