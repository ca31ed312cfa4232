"""The spawn solver: where each actor starts and how fast, so that the reported crash can happen.

A crash report says the vehicles met. For each reported pair (first impact first) the solver finds where
their paths meet — a crossing, a head-on overlap after a drift across the centre line, a merge, a lane
shared with a stopped or slower vehicle, or, if the paths never touch, their closest approach — and
chooses spawn points along the paths so that both reach that conflict point at the same time ``T``
(about four seconds in, less when a path is short). Later pairs are timed against actors already placed;
actors in no pair arrive at the staged point a little after the crash. Seeded variants (SAFE sampled
valid placements) jitter each actor's arrival time and speed around the solution; variant 0 is the
solution itself. Spawns that would overlap are pushed apart.

Pure geometry and arithmetic: nothing here imports MetaDrive.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from runners.simulators.metadrive.paths import Polyline, closest_approach

__all__ = ["ACCEL_MPS2", "Conflict", "Mover", "Placement", "Solution", "find_conflict", "solve_placement"]

ACCEL_MPS2 = 2.0  # pulling away from a stop
T_PREFERRED_S = 4.0  # the crash about four seconds in: enough run-up for the ego's policy to act
T_MIN_S = 1.2
TIME_JITTER_S = 0.45
SPEED_JITTER = 0.08
LEAD_SPEED_FACTOR = 0.5  # a same-lane leader drives at half speed so the striker closes in

Kind = Literal["crossing", "head_on", "merge", "same_lane", "none"]


@dataclass(frozen=True)
class Mover:
    """One actor as the solver sees it."""

    id: str
    path: Polyline
    speed: float  # cruise speed, m/s
    length: float
    width: float
    stop: Literal["stay", "then_go"] | None = None
    wait_s: float | None = None  # where a stop-then-go actor waits, as arc length on its path

    @property
    def min_s(self) -> float:
        """The earliest arc length it may spawn at (its rear on the road)."""
        return self.length / 2 + 1.0


@dataclass(frozen=True)
class Conflict:
    """Where two paths meet: arc lengths on each, and how."""

    a: str
    b: str
    s_a: float
    s_b: float
    kind: Kind
    distance: float  # 0-ish when the paths touch; the gap at closest approach otherwise


@dataclass
class Placement:
    """Where an actor spawns, how fast it drives, and when it moves off."""

    s0: float
    speed: float
    depart_t: float = 0.0  # a stop-then-go actor waits until then; math.inf for one that stays stopped


@dataclass
class Solution:
    """Every actor's placement, the conflicts used, the planned crash time and notes."""

    placements: dict[str, Placement]
    conflicts: list[Conflict] = field(default_factory=list)
    crash_time: float = 0.0
    notes: list[str] = field(default_factory=list)


def _angle(h1: float, h2: float) -> float:
    return abs((h1 - h2 + math.pi) % (2 * math.pi) - math.pi)


def find_conflict(a: Mover, b: Mover, reference: np.ndarray | None = None) -> Conflict:
    """Where the paths of ``a`` and ``b`` first come within touching distance, and the kind of meeting."""
    pa, pb = a.path, b.path
    step_a = max(1, int(len(pa.s) // 700))
    step_b = max(1, int(len(pb.s) // 700))
    pts_a, pts_b = pa.points[::step_a], pb.points[::step_b]
    d = np.sqrt(np.sum((pts_a[:, None, :] - pts_b[None, :, :]) ** 2, axis=2))
    touch = (a.width + b.width) / 2 + 0.3
    close = d < touch
    if not close.any():
        i, j, dist = closest_approach(pa, pb)
        if reference is not None:
            # parallel paths are closest all along: take the nearly-closest pair nearest the staged point
            near = np.argwhere(d <= d.min() + 0.5)
            k = int(np.argmin(np.linalg.norm(pts_a[near[:, 0]] - reference, axis=1)))
            i, j = int(near[k, 0]) * step_a, int(near[k, 1]) * step_b
        return Conflict(a.id, b.id, float(pa.s[i]), float(pb.s[j]), "none", dist)
    ha, hb = pa.headings()[::step_a], pb.headings()[::step_b]
    rows = np.where(close.any(axis=1))[0]
    # runs of consecutive rows: separate meetings along a's path
    runs = np.split(rows, np.where(np.diff(rows) > 3)[0] + 1)
    candidates: list[tuple[int, Conflict]] = []
    for run in runs:
        sub = d[run]
        r_idx, j_idx = np.unravel_index(int(np.argmin(sub)), sub.shape)
        i, j = int(run[r_idx]), int(j_idx)
        ang = _angle(float(ha[i]), float(hb[j]))
        if ang > math.radians(150):
            # head-on: they meet just inside the overlap, at its end nearer the staged point (where one of
            # them drifted over), not where a path merely begins
            ends = [int(run[0]), int(run[-1])]
            if reference is not None:
                ends.sort(key=lambda k: float(np.linalg.norm(pts_a[k] - reference)))
            inward = 1 if ends[0] <= ends[1] else -1
            i_meet = ends[0] + inward * min(abs(ends[1] - ends[0]), int(12.0 / (0.5 * step_a)))
            j_meet = int(np.argmin(d[i_meet]))
            candidates.append(
                (0, Conflict(a.id, b.id, float(pa.s[i_meet * step_a]), float(pb.s[j_meet * step_b]), "head_on", 0.0))
            )
        elif ang > math.radians(25):
            candidates.append(
                (0, Conflict(a.id, b.id, float(pa.s[i * step_a]), float(pb.s[j * step_b]), "crossing", 0.0))
            )
        else:
            i0 = int(run[0])
            j0 = int(np.argmin(d[i0]))
            shared_start = i0 * step_a * 0.5 < 3.0 or pb.s[j0 * step_b] < 3.0
            if shared_start:
                candidates.append(
                    (1, Conflict(a.id, b.id, float(pa.s[i0 * step_a]), float(pb.s[j0 * step_b]), "same_lane", 0.0))
                )
            else:
                candidates.append(
                    (0, Conflict(a.id, b.id, float(pa.s[i0 * step_a]), float(pb.s[j0 * step_b]), "merge", 0.0))
                )
    candidates.sort(key=lambda c: c[0])  # stable: a's order among equals
    return candidates[0][1]


def _time_to_cover(distance: float, speed: float) -> float:
    """Seconds to cover ``distance`` from rest, accelerating at ACCEL_MPS2 up to ``speed``."""
    if distance <= 0:
        return 0.0
    t_acc = speed / ACCEL_MPS2
    d_acc = 0.5 * ACCEL_MPS2 * t_acc**2
    if distance <= d_acc:
        return math.sqrt(2 * distance / ACCEL_MPS2)
    return t_acc + (distance - d_acc) / speed


class _Solver:
    def __init__(self, movers: dict[str, Mover], rng: np.random.Generator | None, reference: np.ndarray) -> None:
        self.movers = movers
        self.reference = reference
        self.rng = rng
        self.placed: dict[str, Placement] = {}
        self.arrival: dict[str, float] = {}  # planned time each placed actor reaches its conflict
        self.notes: list[str] = []
        self.conflicts: list[Conflict] = []
        self.jitter_t: dict[str, float] = {}
        self.jitter_v: dict[str, float] = {}
        for mid in movers:
            if rng is None:
                self.jitter_t[mid], self.jitter_v[mid] = 0.0, 1.0
            else:
                self.jitter_t[mid] = float(rng.uniform(-TIME_JITTER_S, TIME_JITTER_S))
                self.jitter_v[mid] = float(rng.uniform(1 - SPEED_JITTER, 1 + SPEED_JITTER))

    def speed(self, m: Mover) -> float:
        return max(0.5, m.speed * self.jitter_v[m.id])

    # how early (latest T) a mover can reach arc c from its earliest spawn
    def latest_time(self, m: Mover, c: float) -> float:
        if m.stop == "stay":
            return math.inf
        if m.stop == "then_go":
            return math.inf  # it waits as long as needed
        return max(0.0, (c - m.min_s) / self.speed(m))

    def place_at(self, m: Mover, c: float, t: float) -> None:
        """Place ``m`` so that it reaches arc ``c`` at time ``t``."""
        t_m = max(0.0, t + self.jitter_t[m.id])
        v = self.speed(m)
        if m.stop == "stay":
            self.placed[m.id] = Placement(s0=max(m.min_s, c), speed=0.0, depart_t=math.inf)
        elif m.stop == "then_go":
            wait = m.wait_s if m.wait_s is not None and m.wait_s < c else max(m.min_s, c - 10.0)
            wait = max(m.min_s, wait)
            depart = max(0.0, t_m - _time_to_cover(c - wait, v))
            self.placed[m.id] = Placement(s0=wait, speed=v, depart_t=depart)
        else:
            s0 = c - v * t_m
            if s0 < m.min_s:
                s0 = m.min_s
            self.placed[m.id] = Placement(s0=s0, speed=v)
        self.arrival[m.id] = t

    def time_at(self, m: Mover, c: float) -> float:
        """When a placed mover reaches arc ``c``."""
        p = self.placed[m.id]
        if p.depart_t == math.inf:
            return self.arrival.get(m.id, T_PREFERRED_S)
        if m.stop == "then_go":
            return p.depart_t + _time_to_cover(c - p.s0, p.speed)
        return (c - p.s0) / max(0.5, p.speed)

    def first_pair(self, a: Mover, b: Mover) -> float:
        c = find_conflict(a, b, self.reference)
        self.conflicts.append(c)
        if c.kind == "none":
            self.notes.append(
                f"the paths of {a.id} and {b.id} never meet; timed at their closest approach ({c.distance:.1f} m)"
            )
        if c.kind == "same_lane":
            return self.same_lane(a, b, c)
        s_a, s_b = c.s_a, c.s_b
        if a.stop == "stay" and b.stop == "stay":
            self.place_at(a, s_a, T_PREFERRED_S)
            self.place_at(b, s_b, T_PREFERRED_S)
            self.notes.append(f"{a.id} and {b.id} both stay stopped; they cannot collide")
            return T_PREFERRED_S
        t = min(T_PREFERRED_S, self.latest_time(a, s_a), self.latest_time(b, s_b))
        t = max(t, min(T_MIN_S, self.latest_time(a, s_a), self.latest_time(b, s_b)))
        self.place_at(a, s_a, t)
        self.place_at(b, s_b, t)
        return t

    def same_lane(self, a: Mover, b: Mover, c: Conflict) -> float:
        """One lane, one direction: the pair's first (the striker) runs into the second from behind."""
        striker, leader = a, b
        if striker.stop == "stay" and leader.stop != "stay":
            striker, leader = leader, striker
        v_s = self.speed(striker)
        s_start = striker.min_s
        if leader.stop == "stay":
            staged = float(striker.path.s[striker.path.project(self.reference)])
            t = min(T_PREFERRED_S, max(T_MIN_S, (staged - s_start) / v_s))
            meet = s_start + v_s * t
            j = leader.path.project(striker.path.position(meet))
            gap = (striker.length + leader.length) / 2
            self.placed[leader.id] = Placement(s0=float(leader.path.s[j]) + gap, speed=0.0, depart_t=math.inf)
            self.arrival[leader.id] = t
            self.place_at(striker, meet, t)
            return t
        v_l = self.speed(leader) * LEAD_SPEED_FACTOR
        self.notes.append(f"{leader.id} drives at half speed ahead of {striker.id} in the same lane")
        t = T_PREFERRED_S
        gap = (v_s - v_l) * t
        start_s = max(s_start, c.s_a)
        self.placed[striker.id] = Placement(s0=start_s, speed=v_s)
        j = leader.path.project(striker.path.position(start_s + gap))
        self.placed[leader.id] = Placement(s0=float(leader.path.s[j]), speed=v_l)
        self.arrival[striker.id] = self.arrival[leader.id] = t
        return t

    def next_pair(self, a: Mover, b: Mover, crash_t: float, order: int) -> None:
        done_a, done_b = a.id in self.placed, b.id in self.placed
        if done_a and done_b:
            return
        if not done_a and not done_b:
            self.first_pair(a, b)
            return
        fixed, free = (a, b) if done_a else (b, a)
        c = find_conflict(fixed, free, self.reference)
        self.conflicts.append(c)
        s_fixed, s_free = (c.s_a, c.s_b) if c.a == fixed.id else (c.s_b, c.s_a)
        t = max(crash_t + 0.4 * order, self.time_at(fixed, s_fixed))
        if c.kind == "same_lane" and free.stop != "stay":
            t = crash_t + 1.0 * order
        self.place_at(free, s_free, t)


def solve_placement(
    movers: dict[str, Mover],
    pairs: list[tuple[str, str]],
    *,
    reference: np.ndarray,
    rng: np.random.Generator | None = None,
) -> Solution:
    """Spawn points and speeds for every actor.

    Args:
        movers: Every actor, by id.
        pairs: The reported collisions, first impact first (the scenario's ``collisions``; when it lists
            none, consecutive actors are paired).
        reference: Where the crash is staged (junction centre, middle of the road, the merge).
        rng: Variant jitter; ``None`` places exactly at the solution (variant 0).
    """
    solver = _Solver(movers, rng, reference)
    usable = [(a, b) for a, b in pairs if a in movers and b in movers and a != b]
    if not usable:
        ids = list(movers)
        usable = list(itertools.pairwise(ids))
    crash_t = T_PREFERRED_S
    for k, (a, b) in enumerate(usable):
        if k == 0:
            crash_t = solver.first_pair(movers[a], movers[b])
        else:
            solver.next_pair(movers[a], movers[b], crash_t, k)
    for m in movers.values():
        if m.id in solver.placed:
            continue
        j = m.path.project(reference)
        solver.place_at(m, float(m.path.s[j]), crash_t + 2.0)
    _keep_following(movers, solver.placed, usable, reference)
    _separate(movers, solver.placed)
    return Solution(placements=solver.placed, conflicts=solver.conflicts, crash_time=crash_t, notes=solver.notes)


def _keep_following(
    movers: dict[str, Mover], placed: dict[str, Placement], pairs: list[tuple[str, str]], reference: np.ndarray
) -> None:
    """Vehicles one behind the other in a lane keep the leader's speed, unless the report says they collided.

    Scripted drivers do not brake, so a faster follower would run into its leader: a crash the report
    does not describe.
    """
    reported = {frozenset(p) for p in pairs}
    ids = list(placed)
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            if frozenset((a, b)) in reported:
                continue
            ma, mb = movers[a], movers[b]
            pa, pb = placed[a], placed[b]
            if pa.depart_t != 0.0 or pb.depart_t != 0.0:
                continue
            c = find_conflict(ma, mb, reference)
            if c.kind != "same_lane":
                continue
            # who is ahead: b's spawn seen along a's path
            j = ma.path.project(mb.path.position(pb.s0))
            leader, follower = (pb, pa) if float(ma.path.s[j]) > pa.s0 else (pa, pb)
            follower.speed = min(follower.speed, leader.speed)


def _separate(movers: dict[str, Mover], placed: dict[str, Placement]) -> None:
    """Push apart spawns that overlap (later actors move back along their paths, or forward if they cannot)."""
    ids = list(placed)
    for _ in range(3):
        moved = False
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                ma, mb = movers[a], movers[b]
                pa, pb = placed[a], placed[b]
                need = (ma.length + mb.length) / 2 + 2.0
                gap = float(np.linalg.norm(ma.path.position(pa.s0) - mb.path.position(pb.s0)))
                if gap >= need:
                    continue
                shift = need - gap + 0.5
                if pb.s0 - shift >= mb.min_s:
                    pb.s0 -= shift
                else:
                    pb.s0 += shift
                moved = True
        if not moved:
            return
