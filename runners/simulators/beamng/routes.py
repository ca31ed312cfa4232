"""Where each actor drives: intents from the DSL and lane-level routes through the road network.

An actor's initial position gives the arm it comes in along and its direction of travel; its actions
give the arm it leaves along (a turn, straight on, a merge), whether it stops, changes lane or crosses
into the oncoming lanes. A route is that path, 1 m between points, in the lane the DSL names (lane 1 =
the rightmost of its direction), with a speed cap per point. When it runs is
:mod:`runners.simulators.beamng.timing`'s business.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Literal

from runners.simulators.beamng.geometry import (
    LEFT_OF,
    OPPOSITE,
    RIGHT_OF,
    STEP_M,
    Arm,
    Network,
    Point,
    RoadGeom,
    arc_lengths,
    cubic,
    heading_of,
    offset_polyline,
    point_at,
)
from runners.simulators.beamng.settings import BeamNGSettings
from tools.crash.models import Actor, Scenario

__all__ = ["Intent", "Route", "build_route", "choose_axes", "intents_for"]

MPH = 0.44704
LANE_CHANGE_M = (45.0, 10.0)
"""A lane change (or a move across the centre line) runs from 45 m to 10 m before the centre."""
MERGE_JOIN_M = 35.0
_TRAVEL = {"W2E": "E", "E2W": "W", "S2N": "N", "N2S": "S"}
Manoeuvre = Literal["forward", "left", "right", "merge"]


@dataclass
class Intent:
    """What one actor does, in road terms."""

    actor: Actor
    travel: str
    """Compass direction of travel on the way in."""
    entry: str
    """Arm it comes in along (a compass side, or ``ramp``)."""
    exit: str
    manoeuvre: Manoeuvre
    lane: int
    stop: bool
    stop_only: bool
    lane_change: bool
    wrong_way: bool
    cruise: float
    """Cruise speed in m/s (its speed limit, jittered per variant)."""


@dataclass
class Route:
    """An actor's path, 1 m apart, with a speed cap per point."""

    actor_id: str
    points: list[Point]
    caps: list[float]
    stop_index: int | None
    stop_only: bool
    exit_lane: int
    entry_index: int
    """Where the route leaves its approach lane (the stop line, or the centre of a road without a junction)."""
    lane_key: str
    """The approach lane (``<entry arm>:<lane>``): vehicles sharing one must keep a headway."""
    cum: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cum = arc_lengths(self.points)


def choose_axes(scenario: Scenario) -> tuple[str, str | None, str | None]:
    """The main road's direction, an intersection's crossing direction, and a T-intersection's stem side.

    A one-way road runs the way its first (not wrong-way) actor travels; a two-way road runs east or north.
    """
    rn = scenario.road_network
    travels = [(_TRAVEL[a.initial_position], a) for a in scenario.actors if a.initial_position in _TRAVEL]
    ew = [t for t, _ in travels if t in ("E", "W")]
    ns = [t for t, _ in travels if t in ("N", "S")]
    stem: str | None = rn.stem_direction
    if rn.road_type == "T-intersection":
        if stem is None:
            main_ew = len(ew) >= len(ns)
            side = ns if main_ew else ew
            stem = OPPOSITE[side[0]] if side else ("S" if main_ew else "E")
        main_ew = stem in ("N", "S")
    elif rn.road_type == "Merge":
        main_ew = True
    else:
        main_ew = travels[0][0] in ("E", "W") if travels else True
    group = ew if main_ew else ns
    main_ways = rn.main_ways if rn.road_type in {"T-intersection", "Merge"} else rn.ways
    axis = "E" if main_ew else "N"
    if main_ways == 1:
        honest = [t for t, a in travels if t in (("E", "W") if main_ew else ("N", "S")) and not _wrong(a)]
        axis = honest[0] if honest else (group[0] if group else axis)
    cross: str | None = None
    if rn.road_type == "Intersection":
        cross = LEFT_OF[axis] if LEFT_OF[axis] in ("N", "E") else RIGHT_OF[axis]
        if rn.ways == 1:
            other = [t for t, a in travels if t not in (axis, OPPOSITE[axis]) and not _wrong(a)]
            cross = other[0] if other else cross
    return axis, cross, stem


def _wrong(actor: Actor) -> bool:
    return "Enter wrong way" in actor.actions


def intents_for(
    scenario: Scenario, axis: str, stem: str | None, settings: BeamNGSettings, rng: random.Random
) -> tuple[list[Intent], list[str]]:
    """Each actor's entry and exit arm, manoeuvre, lane, stop and speed, and the notes on approximations."""
    rn = scenario.road_network
    notes: list[str] = []
    out: list[Intent] = []
    for actor in scenario.actors:
        pos, acts = actor.initial_position, actor.actions
        turn: Manoeuvre = "left" if "Turn left" in acts else "right" if "Turn right" in acts else "forward"
        if "Turn left" in acts and "Turn right" in acts:
            notes.append(f"{actor.id} turns left and right: only the left turn is driven")
        if pos in _TRAVEL:
            travel = _TRAVEL[pos]
            entry = OPPOSITE[travel]
        elif pos == "Main road":
            travel, entry = axis, OPPOSITE[axis]
        elif rn.road_type == "Merge":
            travel, entry = axis, "ramp"
        elif rn.road_type == "T-intersection" and stem is not None:
            travel, entry = OPPOSITE[stem], stem
        else:
            travel, entry = LEFT_OF[axis], RIGHT_OF[axis]
            if turn == "forward":
                turn = "right"
            notes.append(f"{actor.id} comes from an on-ramp, which a {rn.road_type} lacks: it joins from the side")
        if entry == "ramp":
            if turn != "forward":
                notes.append(f"{actor.id} on the on-ramp merges; its turn is not driven")
            manoeuvre: Manoeuvre = "merge"
            exit_ = axis
        else:
            manoeuvre = turn
            exit_ = {"forward": travel, "left": LEFT_OF[travel], "right": RIGHT_OF[travel]}[turn]
        stop = "Stop" in acts
        stop_only = stop and manoeuvre in ("forward", "merge") and acts[-1] == "Stop"
        limit = actor.speed_limit_mph or settings.default_speed_mph
        cruise = limit * MPH * (1 + rng.uniform(-settings.speed_jitter, settings.speed_jitter))
        out.append(
            Intent(
                actor=actor,
                travel=travel,
                entry=entry,
                exit=exit_,
                manoeuvre=manoeuvre,
                lane=actor.lane or 1,
                stop=stop,
                stop_only=stop_only,
                lane_change="Change lane" in acts,
                wrong_way=_wrong(actor),
                cruise=max(cruise, 2.0),
            )
        )
    return out, notes


def _smooth(x: float) -> float:
    x = min(1.0, max(0.0, x))
    return x * x * (3 - 2 * x)


def _right_of_travel(road: RoadGeom, forward: bool, lane: int, *, opposing: bool = False) -> float:
    return road.lane_offset(forward, lane, opposing=opposing) * (1 if forward else -1)


def _arm_s(arm: Arm, d: float) -> float:
    return arm.s_centre + d if arm.outward_forward else arm.s_centre - d


def _arm_points(arm: Arm, ds: list[float], offsets: list[float]) -> list[Point]:
    centre = [point_at(arm.road.centreline, arm.road.cum, _arm_s(arm, d)) for d in ds]
    return offset_polyline(centre, offsets)


def _span(a: float, b: float) -> list[float]:
    """Values from ``a`` to ``b`` (either way) about 1 m apart, both ends included."""
    n = max(1, math.ceil(abs(b - a) / STEP_M))
    return [a + (b - a) * i / n for i in range(n + 1)]


def build_route(
    net: Network,
    intent: Intent,
    partner: Intent | None,
    *,
    length_in: float,
    length_out: float,
    turn_speed: float,
    notes: list[str],
) -> Route:
    """An actor's lane-level path from far out on its entry arm to far out on its exit arm.

    Args:
        net: The road network.
        intent: The actor's intent (its lane is clamped to the lanes there are, with a note).
        partner: The actor it collides with first, if the report names one: a lane change heads for
            the partner's lane and a wrong-way driver for the lane of an oncoming partner.
        length_in: Metres of approach before the centre.
        length_out: Metres after it.
        turn_speed: Speed cap through a turn (m/s).
        notes: Where approximations are recorded.
    """
    aid = intent.actor.id
    arm_in, arm_out = net.arms[intent.entry], net.arms[intent.exit]
    road_in = arm_in.road
    fwd_in = not arm_in.outward_forward
    n_in = road_in.lanes(fwd_in)
    lane = min(max(1, intent.lane), n_in)
    if lane != intent.lane:
        notes.append(f"{aid}: lane {intent.lane} of {n_in} there is; it drives in lane {lane}")
        intent.lane = lane
    base = _right_of_travel(road_in, fwd_in, lane)
    target = base
    same_way = partner is not None and partner.entry == intent.entry and partner.travel == intent.travel
    if intent.lane_change:
        if same_way and partner is not None and partner.lane != lane and partner.lane <= n_in:
            target = _right_of_travel(road_in, fwd_in, partner.lane)
        elif n_in > 1:
            target = _right_of_travel(road_in, fwd_in, lane + 1 if lane < n_in else lane - 1)
        elif not road_in.one_way:
            target = _right_of_travel(road_in, fwd_in, road_in.lanes(not fwd_in), opposing=True)
            notes.append(f"{aid} changes lane on a one-lane side: it moves into the opposing lane")
        else:
            notes.append(f"{aid} changes lane on a one-lane one-way road: it keeps its lane")
    wrong_on_exit = intent.wrong_way and intent.manoeuvre in ("left", "right")
    if intent.wrong_way and not wrong_on_exit:
        if road_in.one_way:
            notes.append(f"{aid} enters the wrong way on a one-way road: it keeps its lane")
        else:
            oncoming = (
                partner is not None and partner.entry == intent.exit and partner.travel == OPPOSITE[intent.travel]
            )
            k = partner.lane if oncoming and partner is not None else road_in.lanes(not fwd_in)
            target = _right_of_travel(road_in, fwd_in, min(k, road_in.lanes(not fwd_in)), opposing=True)
    lc_far, lc_near = LANE_CHANGE_M
    through = arm_out.road is road_in and intent.exit == intent.travel
    stop_index: int | None = None
    if through:
        box = arm_in.boundary if net.junction else 0.0
        us = _span(-length_in, length_out)
        offsets = [base + (target - base) * _smooth((u + lc_far + box) / (lc_far - lc_near)) for u in us]
        sign = 1.0 if fwd_in else -1.0
        centre = [point_at(road_in.centreline, road_in.cum, arm_in.s_centre + sign * u) for u in us]
        points = offset_polyline(centre, offsets)
        caps = [intent.cruise] * len(points)
        entry_index = min(range(len(us)), key=lambda i: abs(us[i] + box))
        if intent.stop:
            stop_index = entry_index
        exit_lane = lane
    else:
        j_in = arm_in.boundary
        ds_in = _span(length_in, j_in)
        offs_in = [base + (target - base) * _smooth((lc_far + j_in - d) / (lc_far - lc_near)) for d in ds_in]
        pts_in = _arm_points(arm_in, ds_in, offs_in)
        road_out = arm_out.road
        fwd_out = arm_out.outward_forward
        n_out = road_out.lanes(fwd_out)
        if road_out.one_way and not fwd_out:
            notes.append(f"{aid} leaves along a one-way road against its direction")
        if intent.manoeuvre == "merge":
            exit_lane, j_out = 1, MERGE_JOIN_M
        else:
            exit_lane = {"left": n_out, "right": 1}.get(intent.manoeuvre, min(lane, n_out))
            j_out = arm_out.boundary
        if wrong_on_exit and not road_out.one_way:
            off_out = _right_of_travel(road_out, fwd_out, road_out.lanes(not fwd_out), opposing=True)
        else:
            off_out = _right_of_travel(road_out, fwd_out, exit_lane)
        ds_out = _span(j_out, max(length_out, j_out + 20))
        pts_out = _arm_points(arm_out, ds_out, [off_out] * len(ds_out))
        h_in, h_out = heading_of(pts_in, len(pts_in) - 1), heading_of(pts_out, 0)
        link = cubic(pts_in[-1], h_in, pts_out[0], h_out)
        turn = abs(math.remainder(h_out - h_in, 2 * math.pi))
        link_cap = min(intent.cruise, turn_speed) if turn > math.radians(20) else intent.cruise
        points = pts_in + link + pts_out
        caps = [intent.cruise] * len(pts_in) + [link_cap] * len(link) + [intent.cruise] * len(pts_out)
        if turn > math.radians(20):
            # Slow down for the turn before it begins, not only inside it.
            caps[len(pts_in) - 1] = link_cap
        entry_index = len(pts_in) - 1
        if intent.stop:
            stop_index = entry_index
    if intent.stop_only and stop_index is not None:
        points, caps = points[: stop_index + 1], caps[: stop_index + 1]
    return Route(aid, points, caps, stop_index, intent.stop_only, exit_lane, entry_index, f"{intent.entry}:{lane}")
