"""Road geometry for BeamNG.tech scenarios: polylines, lanes and the five DSL road types.

The world frame is BeamNG's: x east, y north, z up, metres; the junction (or the conflict point of a
road without one) is at the origin. A road is a dense centreline polyline with a lane layout relative
to its own direction ("forward" lanes run along the polyline, "backward" lanes against it, right-hand
traffic). An :class:`Arm` is one way out of the centre (a compass side, or the on-ramp of a merge);
routes run in along one arm and out along another. A side an actor needs that the road type lacks (a
left turn on a straight road, a vehicle leaving a parking lot) becomes a short driveway: on BeamNG's
flat levels the ground beyond a decal road is drivable, so a driveway is a real way out.

Everything here is plain arithmetic, so it is tested without the game.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Literal

from tools.crash.models import RoadNetwork

__all__ = [
    "COMPASS",
    "LEFT_OF",
    "OPPOSITE",
    "RIGHT_OF",
    "Arm",
    "Network",
    "Point",
    "RoadGeom",
    "RoadKind",
    "arc_lengths",
    "build_network",
    "compass_heading",
    "cubic",
    "first_crossing",
    "heading_of",
    "nearest_index",
    "offset_polyline",
    "point_at",
    "provided_arms",
]

Point = tuple[float, float]
Compass = Literal["N", "S", "E", "W"]
RoadKind = Literal["main", "cross", "stem", "ramp", "driveway"]

COMPASS: dict[str, Point] = {"E": (1.0, 0.0), "N": (0.0, 1.0), "W": (-1.0, 0.0), "S": (0.0, -1.0)}
LEFT_OF: dict[str, str] = {"E": "N", "N": "W", "W": "S", "S": "E"}
RIGHT_OF: dict[str, str] = {v: k for k, v in LEFT_OF.items()}
OPPOSITE: dict[str, str] = {"E": "W", "W": "E", "N": "S", "S": "N"}
_ANGLE = {"E": 0.0, "N": math.pi / 2, "W": math.pi, "S": -math.pi / 2}

STEP_M = 1.0
"""Spacing of centreline and route points."""
CURVE_RADIUS_M = 120.0
CURVE_ANGLE = math.radians(60)
RAMP_ANGLE = math.radians(10)
RAMP_PARALLEL_M = 60.0
"""Length of the on-ramp's acceleration lane beside the main road before it tapers in."""
DRIVEWAY_DRAWN_M = 30.0


def compass_heading(compass: str) -> float:
    """Heading (radians, counter-clockwise from +x) of a compass direction."""
    return _ANGLE[compass]


def _rotate(p: Point, angle: float) -> Point:
    c, s = math.cos(angle), math.sin(angle)
    return (p[0] * c - p[1] * s, p[0] * s + p[1] * c)


def _rotate_compass(compass: str, quarter_turns: int) -> str:
    for _ in range(quarter_turns % 4):
        compass = LEFT_OF[compass]
    return compass


# -- polylines ---------------------------------------------------------------------------------------
def arc_lengths(points: list[Point]) -> list[float]:
    """Cumulative length at each point."""
    out = [0.0]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        out.append(out[-1] + math.hypot(x1 - x0, y1 - y0))
    return out


def heading_of(points: list[Point], i: int) -> float:
    """Direction of travel at point ``i`` (radians)."""
    j0, j1 = (i, i + 1) if i + 1 < len(points) else (i - 1, i)
    (x0, y0), (x1, y1) = points[j0], points[j1]
    return math.atan2(y1 - y0, x1 - x0)


def point_at(points: list[Point], cum: list[float], s: float) -> Point:
    """The point at arc length ``s`` (clamped to the ends)."""
    if s <= 0:
        return points[0]
    if s >= cum[-1]:
        return points[-1]
    lo, hi = 0, len(cum) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if cum[mid] <= s:
            lo = mid
        else:
            hi = mid
    f = (s - cum[lo]) / max(cum[hi] - cum[lo], 1e-9)
    (x0, y0), (x1, y1) = points[lo], points[hi]
    return (x0 + f * (x1 - x0), y0 + f * (y1 - y0))


def offset_polyline(points: list[Point], offsets: list[float]) -> list[Point]:
    """Shift each point to the right of the direction of travel by its offset (negative: left)."""
    out: list[Point] = []
    for i, (x, y) in enumerate(points):
        h = heading_of(points, i)
        out.append((x + offsets[i] * math.sin(h), y - offsets[i] * math.cos(h)))
    return out


def cubic(p0: Point, h0: float, p1: Point, h1: float) -> list[Point]:
    """A smooth connector (cubic Bezier) from ``p0`` heading ``h0`` to ``p1`` heading ``h1``, about 1 m apart.

    The control points lie along the two headings at a third of the chord (at most 0.55 of it for a
    right angle), which is close to a circular arc for a turn and a straight line when the two are
    aligned. The end points are not repeated.
    """
    chord = math.hypot(p1[0] - p0[0], p1[1] - p0[1])
    if chord < 1e-6:
        return []
    turn = abs(math.remainder(h1 - h0, 2 * math.pi))
    k = chord * (1 / 3 + 0.22 * min(turn, math.pi / 2) / (math.pi / 2))
    c0 = (p0[0] + k * math.cos(h0), p0[1] + k * math.sin(h0))
    c1 = (p1[0] - k * math.cos(h1), p1[1] - k * math.sin(h1))
    n = max(2, math.ceil(chord * (1 + turn / 2) / STEP_M))
    out: list[Point] = []
    for i in range(1, n):
        t = i / n
        a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t**3
        out.append(
            (
                a * p0[0] + b * c0[0] + c * c1[0] + d * p1[0],
                a * p0[1] + b * c0[1] + c * c1[1] + d * p1[1],
            )
        )
    return out


def nearest_index(points: list[Point], q: Point) -> int:
    """Index of the point nearest ``q``."""
    return min(range(len(points)), key=lambda i: (points[i][0] - q[0]) ** 2 + (points[i][1] - q[1]) ** 2)


def _chunks(points: list[Point], size: int = 16) -> list[tuple[int, int, float, float, float, float]]:
    out = []
    for i0 in range(0, len(points) - 1, size):
        part = points[i0 : min(i0 + size, len(points) - 1) + 1]
        xs, ys = [p[0] for p in part], [p[1] for p in part]
        out.append((i0, i0 + len(part) - 1, min(xs), max(xs), min(ys), max(ys)))
    return out


def first_crossing(
    a: list[Point], b: list[Point], *, min_angle: float = math.radians(4)
) -> tuple[int, int, Point] | None:
    """Where two routes cross, earliest along both: (index in ``a``, index in ``b``, point), or None.

    Segments closer to parallel than ``min_angle`` do not count: two vehicles in one lane, one behind
    the other, do not "cross", they meet where the follower reaches the leader.
    """
    best: tuple[float, int, int, Point] | None = None
    sin_min = math.sin(min_angle)
    # Routes have hundreds of 1 m segments: compare boxes of 16 segments before segments.
    for a0, a1, ax0, ax1, ay0, ay1 in _chunks(a):
        for b0, b1, bx0, bx1, by0, by1 in _chunks(b):
            if ax1 < bx0 or bx1 < ax0 or ay1 < by0 or by1 < ay0:
                continue
            for i in range(a0, a1):
                (x1, y1), (x2, y2) = a[i], a[i + 1]
                dx1, dy1 = x2 - x1, y2 - y1
                n1 = math.hypot(dx1, dy1)
                for j in range(b0, b1):
                    (x3, y3), (x4, y4) = b[j], b[j + 1]
                    dx2, dy2 = x4 - x3, y4 - y3
                    den = dx1 * dy2 - dy1 * dx2
                    n2 = math.hypot(dx2, dy2)
                    if n1 < 1e-9 or n2 < 1e-9 or abs(den) < sin_min * n1 * n2:
                        continue
                    t = ((x3 - x1) * dy2 - (y3 - y1) * dx2) / den
                    u = ((x3 - x1) * dy1 - (y3 - y1) * dx1) / den
                    if 0 <= t <= 1 and 0 <= u <= 1:
                        key = i + t + j + u
                        if best is None or key < best[0]:
                            best = (key, i, j, (x1 + t * dx1, y1 + t * dy1))
    return None if best is None else (best[1], best[2], best[3])


# -- roads -------------------------------------------------------------------------------------------
@dataclass
class RoadGeom:
    """One road: a dense centreline and a lane layout relative to its direction."""

    id: str
    kind: RoadKind
    centreline: list[Point]
    lanes_forward: int
    lanes_backward: int
    lane_width: float
    median: float = 0.0
    drawn: tuple[float, float] | None = None
    """Arc-length range drawn as a decal road (None: all of it); routes may go on beyond it."""
    taper_m: float = 0.0
    """Metres over which the drawn end narrows to nothing (an on-ramp's taper)."""
    cum: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cum = arc_lengths(self.centreline)

    @property
    def one_way(self) -> bool:
        return self.lanes_backward == 0

    @property
    def width(self) -> float:
        """Lanes times lane width, plus the median (a centre turn lane)."""
        return (self.lanes_forward + self.lanes_backward) * self.lane_width + self.median

    @property
    def length(self) -> float:
        return self.cum[-1]

    def lanes(self, forward: bool) -> int:
        """Lanes in a direction of travel (a one-way road's lanes serve both, the wrong way too)."""
        if self.one_way:
            return self.lanes_forward
        return self.lanes_forward if forward else self.lanes_backward

    def lane_offset(self, forward: bool, lane: int, *, opposing: bool = False) -> float:
        """Offset (right of the road's forward direction) of a lane's centre.

        Args:
            forward: Travel along the centreline (else against it).
            lane: 1 = the rightmost lane of the direction of travel.
            opposing: On a two-way road, the ``lane``-th lane of the other direction, driven the wrong
                way (counted from that direction's right edge).
        """
        w = self.lane_width
        if self.one_way:
            right = (self.lanes_forward / 2 - lane + 0.5) * w
            return right if forward else -right
        if opposing:
            forward = not forward
        n = self.lanes_forward if forward else self.lanes_backward
        right = self.median / 2 + (n - lane + 0.5) * w
        return right if forward else -right

    def decal_nodes(self, spacing: float = 10.0) -> list[tuple[float, float, float, float]]:
        """BeamNG decal road nodes ``(x, y, z, width)`` along the drawn range."""
        s0, s1 = self.drawn or (0.0, self.length)
        count = max(1, math.ceil((s1 - s0) / spacing))
        nodes = []
        for i in range(count + 1):
            s = s0 + (s1 - s0) * i / count
            x, y = point_at(self.centreline, self.cum, s)
            width = self.width
            if self.taper_m > 0 and s > s1 - self.taper_m:
                width = max(0.5, self.width * (s1 - s) / self.taper_m)
            nodes.append((round(x, 3), round(y, 3), 0.0, round(width, 3)))
        return nodes


@dataclass
class Arm:
    """One way out of the centre: a compass side of the junction, or a merge's on-ramp."""

    name: str
    road: RoadGeom
    s_centre: float
    """Arc length on the road where it meets the centre (the ramp: where it joins the main road)."""
    outward_forward: bool
    """Travel out of the centre runs along the road's centreline."""
    boundary: float
    """Distance from the centre where this arm's own lanes start (outside the crossing road)."""


@dataclass
class Network:
    """The roads of one scenario and the arms routes run along."""

    road_type: str
    roads: list[RoadGeom]
    arms: dict[str, Arm]
    junction: bool
    """Roads cross at the centre (intersection, T-intersection): through traffic keeps a box clear."""
    notes: list[str] = field(default_factory=list)


def _layout(lanes: int | None, ways: int | None, centre_turn_lane: bool, w: float) -> tuple[int, int, float]:
    total, ways = lanes or 2, ways or 2
    if ways == 1:
        return total, 0, 0.0
    per = total
    if centre_turn_lane and total > 2:
        per -= 1
    per = max(1, per // 2)
    return per, per, max(0, total - 2 * per) * w


def provided_arms(rn: RoadNetwork, axis: str) -> set[str]:
    """The compass arms (and ``ramp``) a road type builds when its main road runs along ``axis``."""
    arms = {axis, OPPOSITE[axis]}
    if rn.road_type == "Intersection":
        arms |= {LEFT_OF[axis], RIGHT_OF[axis]}
    elif rn.road_type == "T-intersection":
        stem = rn.stem_direction
        arms.add(stem if stem is not None and stem not in arms else RIGHT_OF[axis])
    elif rn.road_type == "Merge":
        arms.add("ramp")
    return arms


def _straight(length: float) -> list[Point]:
    n = max(2, math.ceil(2 * length / STEP_M))
    return [(-length + 2 * length * i / n, 0.0) for i in range(n + 1)]


def _curve(length: float) -> list[Point]:
    """A road that bends left by 60 degrees on a 120 m radius, heading east at the origin (mid-bend)."""
    half_arc = CURVE_RADIUS_M * CURVE_ANGLE / 2

    def walk(direction: int) -> list[Point]:
        pts, x, y, h, s = [], 0.0, 0.0, 0.0, 0.0
        while s < length:
            k = 1 / CURVE_RADIUS_M if s < half_arc else 0.0
            h += direction * k * STEP_M
            x += direction * STEP_M * math.cos(h)
            y += direction * STEP_M * math.sin(h)
            s += STEP_M
            pts.append((x, y))
        return pts

    return [*reversed(walk(-1)), (0.0, 0.0), *walk(1)]


def build_network(
    rn: RoadNetwork,
    *,
    lane_width: float,
    arm_length: float,
    axis: str,
    cross_axis: str | None = None,
    driveways: set[str] | None = None,
) -> Network:
    """Lay out the roads of a DSL road network around the origin.

    Args:
        rn: The DSL road network.
        lane_width: Metres per lane.
        arm_length: Metres of road from the centre out along each arm (routes need room to start and end).
        axis: Compass direction the main road's centreline runs in (the travel direction of a one-way road).
        cross_axis: Direction of the crossing road of an intersection (default: left of ``axis``).
        driveways: Compass sides to add as driveways (sides the road type lacks that actors need).

    Returns:
        The roads and arms, rotated so the main road runs along ``axis``.
    """
    w = lane_width
    turns = {"E": 0, "N": 1, "W": 2, "S": 3}[axis]
    # Build with the main road running east, then rotate everything by ``turns`` quarter turns.
    to_canonical = {c: _rotate_compass(c, -turns) for c in COMPASS}
    main_lanes = rn.main_lanes if rn.road_type in {"T-intersection", "Merge"} else rn.lanes
    main_ways = rn.main_ways if rn.road_type in {"T-intersection", "Merge"} else rn.ways
    fwd, bwd, median = _layout(main_lanes, main_ways, rn.centre_turn_lane, w)
    notes: list[str] = []
    if main_lanes and (fwd + bwd) < main_lanes and median == 0:
        notes.append(f"{main_lanes} lanes, {main_ways or 2}-way: {fwd} + {bwd} lanes modelled")
    centre = _curve(arm_length) if rn.road_type == "Curve" else _straight(arm_length)
    main = RoadGeom("main", "main", centre, fwd, bwd, w, median)
    s_c = main.cum[nearest_index(centre, (0.0, 0.0))]
    roads = [main]
    arms = {
        "E": Arm("E", main, s_c, True, 0.0),
        "W": Arm("W", main, s_c, False, 0.0),
    }
    junction = rn.road_type in {"Intersection", "T-intersection"}

    def side_road(rid: str, kind: RoadKind, compass: str, f: int, b: int, med: float, drawn: float | None) -> Arm:
        ux, uy = COMPASS[compass]
        n = max(2, math.ceil(arm_length / STEP_M))
        pts = [(ux * arm_length * i / n, uy * arm_length * i / n) for i in range(n + 1)]
        road = RoadGeom(rid, kind, pts, f, b, w, med, drawn=None if drawn is None else (0.0, drawn))
        roads.append(road)
        arm = Arm(compass, road, 0.0, True, main.width / 2 + 1.0)
        arms[compass] = arm
        return arm

    if rn.road_type == "Intersection":
        cross = to_canonical[cross_axis or LEFT_OF[axis]]
        cf, cb, cm = _layout(rn.lanes, rn.ways, rn.centre_turn_lane, w)
        cu = COMPASS[cross]
        cross_pts = [(cu[0] * s, cu[1] * s) for s in (-arm_length + i * STEP_M for i in range(int(2 * arm_length) + 1))]
        road = RoadGeom("cross", "cross", cross_pts, cf, cb, w, cm)
        roads.append(road)
        sc = road.cum[nearest_index(cross_pts, (0.0, 0.0))]
        arms[cross] = Arm(cross, road, sc, True, main.width / 2 + 1.0)
        arms[OPPOSITE[cross]] = Arm(OPPOSITE[cross], road, sc, False, main.width / 2 + 1.0)
        for c in ("E", "W"):
            arms[c].boundary = road.width / 2 + 1.0
    elif rn.road_type == "T-intersection":
        stem = to_canonical[rn.stem_direction or RIGHT_OF[axis]]
        if stem in ("E", "W"):
            notes.append(f"the stem cannot leave along the main road; it leaves to the {RIGHT_OF[axis]} instead")
            stem = "S"
        sf, sb, sm = _layout(rn.branch_lanes, rn.branch_ways, False, w)
        arm = side_road("stem", "stem", stem, sf, sb, sm, None)
        for c in ("E", "W"):
            arms[c].boundary = arm.road.width / 2 + 1.0
    elif rn.road_type == "Merge":
        ramp_lanes = rn.branch_lanes or 1
        ramp_w = ramp_lanes * w
        y_join = -main.width / 2 - ramp_w / 2
        x_taper_end = 40.0
        start_x = -RAMP_PARALLEL_M - arm_length * math.cos(RAMP_ANGLE)
        start_y = y_join - arm_length * math.sin(RAMP_ANGLE)
        pts: list[Point] = []
        n = max(2, math.ceil(arm_length / STEP_M))
        for i in range(n):
            f = i / n
            pts.append((start_x + f * (-RAMP_PARALLEL_M - start_x), start_y + f * (y_join - start_y)))
        x = -RAMP_PARALLEL_M
        while x <= x_taper_end:
            pts.append((x, y_join))
            x += STEP_M
        ramp = RoadGeom("ramp", "ramp", pts, ramp_lanes, 0, w, taper_m=x_taper_end)
        roads.append(ramp)
        arms["ramp"] = Arm("ramp", ramp, ramp.cum[nearest_index(pts, (0.0, y_join))], False, 0.0)
    for compass in sorted(driveways or set()):
        c = to_canonical[compass]
        if c in arms:
            continue
        side_road(f"driveway_{compass}", "driveway", c, 1, 1, 0.0, main.width / 2 + DRIVEWAY_DRAWN_M)
        notes.append(f"a driveway leaves the road to the {compass} (the road type has no road there)")
        for m in ("E", "W"):
            arms[m].boundary = max(arms[m].boundary, w + 1.0)
    if turns:
        angle = turns * math.pi / 2
        for road in roads:
            road.centreline = [_rotate(p, angle) for p in road.centreline]
        arms = {(_rotate_compass(k, turns) if k in COMPASS else k): a for k, a in arms.items()}
        for k, a in arms.items():
            a.name = k
    return Network(rn.road_type, roads, arms, junction, notes)
