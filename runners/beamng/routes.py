"""Where each actor drives and when: intents from the DSL, lane-level routes, speed profiles, meetings.

A crash report says which vehicles met, so routes are timed to make them meet: for each pair the report
names (first impact first), the point where their routes cross (or, for vehicles in one lane, where the
follower reaches the leader) is reached by both at the same time; each actor's spawn point is solved
backwards along its route so that, starting at rest and following its speed profile, it arrives on
time. Seeded jitter moves the meeting time and each actor's speed between variants, as SAFE sampled
valid placements.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Literal

from runners.beamng.geometry import (
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
    first_crossing,
    heading_of,
    nearest_index,
    offset_polyline,
    point_at,
)
from runners.beamng.settings import BeamNGSettings
from tools.scenario import Actor, Scenario

__all__ = [
    "ACCEL_MPS2",
    "DECEL_MPS2",
    "HEADWAY_S",
    "Intent",
    "Route",
    "Schedule",
    "build_route",
    "choose_axes",
    "intents_for",
    "profile",
    "schedule_routes",
]

ACCEL_MPS2 = 2.5
DECEL_MPS2 = 3.5
MPH = 0.44704
STOP_LEAD_S = 2.0
"""A vehicle that stops for good is there this long before the one that runs into it."""
HEADWAY_S = 1.5
"""Least time between two vehicles of one approach lane that are not meant to hit each other."""
SPAWN_GAP_M = 9.0
"""Least distance between the spawn points of two vehicles in one lane (a car length and a gap)."""
SECONDARY_GAP_S = 1.5
"""A later impact of a vehicle already in an earlier one comes this long after it reached that point."""
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


@dataclass
class Schedule:
    """When an actor starts (index into its route) and its times and speeds from there."""

    start: int
    delay: float
    """Seconds it waits at its spawn point before driving (when its route is too short to start moving)."""
    times: list[float]
    speeds: list[float]
    target: int
    target_time: float


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


def profile(route: Route, start: int, *, end: int | None = None, hold: float = 0.0) -> tuple[list[float], list[float]]:
    """Speeds and times from ``start`` (at rest) to ``end`` (default: the route's end).

    Speeds follow the caps, limited by :data:`ACCEL_MPS2` and :data:`DECEL_MPS2`; the vehicle comes to
    rest at its stop point and waits ``hold`` seconds there.

    Returns:
        Speeds (m/s) and times (s), one per route point from ``start`` to ``end``.
    """
    end = len(route.points) - 1 if end is None else end
    caps = route.caps[start : end + 1]
    v = [0.0] * len(caps)
    stop = route.stop_index - start if route.stop_index is not None and route.stop_index >= start else None
    ds = [route.cum[start + i + 1] - route.cum[start + i] for i in range(len(caps) - 1)]
    for i in range(len(caps) - 1):
        nxt = 0.0 if stop == i + 1 else caps[i + 1]
        v[i + 1] = min(nxt, math.sqrt(v[i] ** 2 + 2 * ACCEL_MPS2 * ds[i]))
    for i in range(len(caps) - 2, 0, -1):
        v[i] = min(v[i], math.sqrt(v[i + 1] ** 2 + 2 * DECEL_MPS2 * ds[i]))
    t = [0.0] * len(caps)
    for i in range(len(caps) - 1):
        both = v[i] + v[i + 1]
        t[i + 1] = t[i] + (2 * ds[i] / both if both > 1e-6 else ds[i] / 0.5)
        if stop == i + 1 and not route.stop_only:
            t[i + 1] += hold
    return v, t


def _solve(route: Route, target: int, target_time: float, hold: float) -> Schedule:
    """The latest start (at rest) that reaches ``target`` no earlier than ``target_time``."""
    target = max(1, target)

    def arrival(start: int) -> float:
        return profile(route, start, end=target, hold=hold)[1][-1]

    lo, hi = 0, target - 1
    delay = 0.0
    if arrival(lo) < target_time:
        start, delay = lo, target_time - arrival(lo)
    elif arrival(hi) > target_time:
        start = hi
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if arrival(mid) >= target_time:
                lo = mid
            else:
                hi = mid
        start = lo if abs(arrival(lo) - target_time) <= abs(arrival(hi) - target_time) else hi
    speeds, times = profile(route, start, hold=hold)
    return Schedule(start, delay, [t + delay for t in times], speeds, target, target_time)


def _converge(a: list[Point], b: list[Point], *, near: float = 1.0, far: float = 2.5) -> tuple[int, int] | None:
    """Where route ``a``, having been away from route ``b``, first comes onto it (a merge, a move into
    another lane): (index in ``a``, index in ``b``), or None."""
    step = 4
    sample = b[::step]
    was_far = False
    for i, (x, y) in enumerate(a):
        j = min(range(len(sample)), key=lambda k: (sample[k][0] - x) ** 2 + (sample[k][1] - y) ** 2)
        lo, hi = max(0, j * step - step), min(len(b), j * step + step + 1)
        jj = min(range(lo, hi), key=lambda k: (b[k][0] - x) ** 2 + (b[k][1] - y) ** 2)
        if jj < 2 or jj > len(b) - 3:
            continue  # beyond one end of ``b``: being away there says nothing about lanes
        d = math.hypot(b[jj][0] - x, b[jj][1] - y)
        if d > far:
            was_far = True
        elif d < near and was_far:
            return i, jj
    return None


def _index_at(cum: list[float], s: float) -> int:
    """Index of the route point nearest arc length ``s``."""
    return min(range(len(cum)), key=lambda i: abs(cum[i] - s))


def _solve_from(route: Route, start: int, target: int, target_time: float, hold: float) -> Schedule:
    """A schedule that starts at ``start`` and waits there as long as it must to reach ``target`` on time."""
    speeds, times = profile(route, start, hold=hold)
    delay = max(0.0, target_time - times[min(target - start, len(times) - 1)])
    return Schedule(start, delay, [t + delay for t in times], speeds, target, target_time)


def _time_at(sched: Schedule, index: int) -> float:
    i = min(max(index - sched.start, 0), len(sched.times) - 1)
    return sched.times[i]


def schedule_routes(
    routes: dict[str, Route],
    pairs: list[tuple[str, str]],
    *,
    meet_time: float,
    jitter: float,
    hold: float,
    rng: random.Random,
    notes: list[str],
) -> dict[str, Schedule]:
    """Spawn points and timing that make each reported pair meet (first impact first).

    Vehicles that share an approach lane and are not reported to hit each other pass its end at least
    :data:`HEADWAY_S` apart, the later one spawned behind the earlier one.

    Args:
        routes: Each actor's route.
        pairs: The collisions the report names, first impact first.
        meet_time: When the first pair meets (seconds after the start), before jitter.
        jitter: Seeded spread of that time, and (a tenth of it, a metre or so) of each actor's own arrival,
            which varies where on each other the vehicles hit without turning the crash into a near miss.
        hold: How long a vehicle that stops and goes on waits.
        rng: The variant's random generator.
        notes: Where approximations are recorded.
    """
    common = meet_time + rng.uniform(-jitter, jitter)
    out: dict[str, Schedule] = {}
    partners = {frozenset(p) for p in pairs}

    def own() -> float:
        return rng.uniform(-jitter / 10, jitter / 10)

    def centre_index(route: Route) -> int:
        if route.stop_only and route.stop_index is not None:
            return route.stop_index
        return nearest_index(route.points, (0.0, 0.0))

    def place(aid: str, index: int, when: float) -> None:
        """Solve an actor's start, then push it back behind lane-mates it is not meant to hit."""
        route = routes[aid]
        sched = _solve(route, index, when, hold)
        for _ in range(60):
            push = 0.0
            for other, osched in out.items():
                if routes[other].lane_key != route.lane_key or frozenset((aid, other)) in partners:
                    continue
                oroute = routes[other]
                mark = oroute.points[oroute.entry_index]
                mine = _time_at(sched, nearest_index(route.points, mark))
                theirs = _time_at(osched, oroute.entry_index)
                if abs(mine - theirs) < HEADWAY_S:
                    push = max(push, theirs + HEADWAY_S - mine)
                if math.dist(route.points[sched.start], oroute.points[osched.start]) < SPAWN_GAP_M:
                    push = max(push, 0.3)
            if push <= 0:
                break
            when += push
            sched = _solve(route, index, when, hold)
        out[aid] = sched

    def order(a: str, b: str) -> None:
        """Partners in one lane: the one that gets to the meeting first must start ahead of the other."""
        ra, rb = routes[a], routes[b]
        if ra.lane_key != rb.lane_key:
            return
        sa, sb = out[a], out[b]
        lead, follow = (a, b) if _time_at(sa, sa.target) <= _time_at(sb, sb.target) else (b, a)
        rl, sl, rf, sf = routes[lead], out[lead], routes[follow], out[follow]
        d_lead = rl.cum[sl.target] - rl.cum[sl.start]
        d_follow = rf.cum[sf.target] - rf.cum[sf.start]
        if d_lead + SPAWN_GAP_M <= d_follow:
            return
        want = rl.cum[sl.target] - max(d_follow - SPAWN_GAP_M, 1.0)
        start = min(max(0, _index_at(rl.cum, want)), sl.target - 1)
        out[lead] = _solve_from(rl, start, sl.target, sl.target_time, hold)

    for n, (a, b) in enumerate(pairs):
        if a in out and b in out:
            continue
        ra, rb = routes[a], routes[b]
        lead_a = lead_b = 0.0
        one_lane = ra.lane_key == rb.lane_key
        # Two vehicles from one approach lane meet one behind the other, never where their paths part.
        crossing = None if one_lane else first_crossing(ra.points, rb.points)
        met: tuple[int, int] | None = None
        if crossing is None and not one_lane:
            met = _converge(ra.points, rb.points)
            if met is None:
                back = _converge(rb.points, ra.points)
                met = None if back is None else (back[1], back[0])
        if crossing is not None:
            ia, ib, _ = crossing
        elif met is not None:
            ia, ib = met
        elif rb.stop_only or ra.stop_only:
            stopper, other = (b, a) if rb.stop_only else (a, b)
            rs, ro = routes[stopper], routes[other]
            idx_s = rs.stop_index if rs.stop_index is not None else len(rs.points) - 1
            idx_o = nearest_index(ro.points, rs.points[idx_s])
            ia, ib = (idx_o, idx_s) if stopper == b else (idx_s, idx_o)
            lead_a, lead_b = (0.0, STOP_LEAD_S) if stopper == b else (STOP_LEAD_S, 0.0)
        else:
            if one_lane:
                ib = rb.entry_index
                ia = nearest_index(ra.points, rb.points[ib])
            else:
                ia, ib = centre_index(ra), centre_index(rb)
            ha, hb = heading_of(ra.points, ia), heading_of(rb.points, ib)
            same_way = abs(math.remainder(ha - hb, 2 * math.pi)) < math.radians(30)
            if (same_way or one_lane) and b not in out:
                # One behind the other in a lane: the leader (the second named) goes at half speed.
                rb.caps = [c * 0.5 for c in rb.caps]
                notes.append(f"{b} drives ahead of {a} at half its speed, so {a} catches up at the meeting point")
        gap = SECONDARY_GAP_S if n else 0.0
        if a not in out and b not in out:
            place(a, ia, common + gap - lead_a + own())
            place(b, ib, _time_at(out[a], ia) + lead_a - lead_b + own())
        elif a in out:
            place(b, ib, _time_at(out[a], ia) + gap + lead_a - lead_b + own())
        else:
            place(a, ia, _time_at(out[b], ib) + gap + lead_b - lead_a + own())
        order(a, b)
    for aid, route in routes.items():
        if aid not in out:
            place(aid, centre_index(route), common - (STOP_LEAD_S if route.stop_only else 0.0) + own())
    for aid, sched in out.items():
        if sched.delay > 0.05:
            notes.append(f"{aid} waits {sched.delay:.1f} s at its start to arrive on time")
        late = _time_at(sched, sched.target) - sched.target_time
        if late > 0.5:
            notes.append(f"{aid} cannot arrive in time; it is {late:.1f} s late at the meeting point")
    return out
