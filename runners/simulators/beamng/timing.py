"""When each actor drives: speed profiles, and spawn points solved so the reported vehicles meet.

A crash report says which vehicles met, so runs are timed to make them meet: for each pair the report
names (first impact first), the point where their routes cross (or where one comes onto the other's
lane, or, for two vehicles in one lane, where the follower reaches the leader) is reached by both at
the same time. Each actor's spawn point is solved backwards along its route so that, starting at rest
and following its speed profile, it arrives on time. Seeded jitter moves the meeting time and each
actor's speed between variants, as SAFE sampled valid placements.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from runners.simulators.beamng.geometry import Point, first_crossing, heading_of, nearest_index
from runners.simulators.beamng.routes import Route

__all__ = [
    "ACCEL_MPS2",
    "DECEL_MPS2",
    "HEADWAY_S",
    "SECONDARY_GAP_S",
    "SPAWN_GAP_M",
    "STOP_LEAD_S",
    "Schedule",
    "profile",
    "schedule_routes",
]

ACCEL_MPS2 = 2.5
DECEL_MPS2 = 3.5
STOP_LEAD_S = 2.0
"""A vehicle that stops for good is there this long before the one that runs into it."""
HEADWAY_S = 1.5
"""Least time between two vehicles of one approach lane that are not meant to hit each other."""
SPAWN_GAP_M = 9.0
"""Least distance between the spawn points of two vehicles in one lane (a car length and a gap)."""
SECONDARY_GAP_S = 1.5
"""A later impact of a vehicle already in an earlier one comes this long after it reached that point."""


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
        """Partners in one lane: the one that gets to the lane's end later must start behind the other.

        The follower is pushed back (it meets the slower or stopped leader a little later) rather than
        the leader forward, which could crowd the leader's other lane-mates.
        """
        ra, rb = routes[a], routes[b]
        if ra.lane_key != rb.lane_key:
            return
        mark = rb.points[rb.entry_index]
        ta = _time_at(out[a], nearest_index(ra.points, mark))
        tb = _time_at(out[b], rb.entry_index)
        lead, follow = (a, b) if ta <= tb else (b, a)
        rl, rf = routes[lead], routes[follow]
        for _ in range(60):
            sl, sf = out[lead], out[follow]
            ahead = rf.cum[nearest_index(rf.points, rl.points[sl.start])] - rf.cum[sf.start]
            if ahead >= SPAWN_GAP_M or sf.start == 0:
                return
            place(follow, sf.target, sf.target_time + 0.3)

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
