"""Polylines in the map's plane: the paths actors follow and the placement solver reasons about.

A :class:`Polyline` is a dense polyline with cumulative arc length. Lanes of the MetaDrive road network are
sampled into paths (``runners.simulators.metadrive.roads``); manoeuvres that no lane describes (a lane change, a
drift across the centre line, a turn into a driveway) are built here from plain geometry, so the
scripted drivers and the placement solver share one description of where each actor goes.

Coordinates are MetaDrive's: metres, +x east, +y north, headings in radians counter-clockwise from +x.
Nothing here imports MetaDrive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Polyline", "closest_approach", "lane_shift", "smoothstep", "turn_off_road"]

FloatArray = NDArray[np.float64]

_STEP_M = 0.5  # resampling interval: fine enough for contact reasoning, cheap to search


def smoothstep(x: FloatArray) -> FloatArray:
    """0 before 0, 1 after 1, a smooth S between: the lateral profile of a lane change."""
    x = np.clip(x, 0.0, 1.0)
    return np.asarray(x * x * (3.0 - 2.0 * x), dtype=np.float64)


@dataclass(frozen=True)
class Polyline:
    """A polyline resampled at a fixed interval, with arc length and headings."""

    points: FloatArray  # (n, 2)
    s: FloatArray  # (n,) cumulative arc length, s[0] == 0

    @classmethod
    def from_points(cls, points: Sequence[Sequence[float]] | FloatArray, *, step: float = _STEP_M) -> Polyline:
        """Resample raw points (duplicates dropped) at ``step`` metres.

        Raises:
            ValueError: Fewer than two distinct points.
        """
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        keep = np.ones(len(pts), dtype=bool)
        keep[1:] = np.linalg.norm(np.diff(pts, axis=0), axis=1) > 1e-6
        pts = pts[keep]
        if len(pts) < 2:
            raise ValueError("a path needs two distinct points")
        seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        n = max(2, math.ceil(cum[-1] / step) + 1)
        s = np.linspace(0.0, cum[-1], n)
        xs = np.interp(s, cum, pts[:, 0])
        ys = np.interp(s, cum, pts[:, 1])
        return cls(points=np.stack([xs, ys], axis=1), s=s)

    @property
    def length(self) -> float:
        """Arc length in metres."""
        return float(self.s[-1])

    def position(self, s: float) -> FloatArray:
        """The point at arc length ``s`` (clamped to the path; beyond the end the last heading extends it)."""
        if s > self.length:
            h = self.heading(self.length)
            return np.asarray(self.points[-1] + (s - self.length) * np.array([math.cos(h), math.sin(h)]))
        s = max(0.0, s)
        return np.array([np.interp(s, self.s, self.points[:, 0]), np.interp(s, self.s, self.points[:, 1])])

    def heading(self, s: float) -> float:
        """Tangent direction at ``s`` (radians, counter-clockwise from +x)."""
        i = int(np.clip(np.searchsorted(self.s, s), 1, len(self.s) - 1))
        d = self.points[i] - self.points[i - 1]
        return math.atan2(float(d[1]), float(d[0]))

    def headings(self) -> FloatArray:
        """Tangent direction at every point."""
        d = np.gradient(self.points, axis=0)
        return np.arctan2(d[:, 1], d[:, 0])

    def project(self, xy: Sequence[float] | FloatArray, *, hint: int | None = None, window: int = 80) -> int:
        """Index of the path point nearest to ``xy``; with ``hint``, searched only near it (cheap per step)."""
        p = np.asarray(xy, dtype=np.float64)
        if hint is None:
            lo, hi = 0, len(self.s)
        else:
            lo, hi = max(0, hint - 10), min(len(self.s), hint + window)
        d = np.sum((self.points[lo:hi] - p) ** 2, axis=1)
        return lo + int(np.argmin(d))

    def lateral_offset(self, xy: Sequence[float] | FloatArray, index: int) -> float:
        """Signed distance of ``xy`` from the path at ``index`` (positive to the left)."""
        h = self.heading(float(self.s[index]))
        d = np.asarray(xy, dtype=np.float64) - self.points[index]
        return float(-math.sin(h) * d[0] + math.cos(h) * d[1])

    def sub(self, s0: float, s1: float | None = None) -> Polyline:
        """The part between arc lengths ``s0`` and ``s1``."""
        s1 = self.length if s1 is None else s1
        mask = (self.s > s0) & (self.s < s1)
        pts = np.vstack([self.position(s0), self.points[mask], self.position(s1)])
        return Polyline.from_points(pts)

    def extended(self, metres: float) -> Polyline:
        """The path continued straight on past its end (vehicles keep going after their route)."""
        if metres <= 0:
            return self
        end = self.position(self.length + metres)
        return Polyline.from_points(np.vstack([self.points, end]))


def lane_shift(base: Polyline, target: Polyline, s_start: float, s_end: float) -> Polyline:
    """Leave ``base`` for ``target`` between arc lengths ``s_start`` and ``s_end`` of ``base``.

    The target is followed from the point nearest to where the shift ends, so it may run the other way
    round (a drift into the opposing lane follows that lane backwards).
    """
    s_start = float(np.clip(s_start, 0.0, base.length))
    s_end = float(np.clip(s_end, s_start + 1.0, base.length))
    i0 = int(np.searchsorted(base.s, s_start))
    i1 = int(np.searchsorted(base.s, s_end))
    before = base.points[:i0]
    mid_s = base.s[i0:i1]
    mid = base.points[i0:i1]
    # nearest target points along the blend, then a smooth lateral weight
    tgt = np.array([target.points[target.project(p)] for p in mid]) if len(mid) else np.empty((0, 2))
    w = smoothstep((mid_s - s_start) / max(1e-6, s_end - s_start))[:, None]
    blend = (1 - w) * mid + w * tgt
    j = target.project(base.position(s_end))
    # follow the target in the direction the base was heading
    h_base = base.heading(s_end)
    h_tgt = target.heading(float(target.s[j]))
    forward = math.cos(h_base - h_tgt) >= 0
    rest = target.points[j:] if forward else target.points[: j + 1][::-1]
    return Polyline.from_points(np.vstack([before, blend, rest]))


def turn_off_road(base: Polyline, s_turn: float, *, left: bool, across_m: float, radius: float = 6.0) -> Polyline:
    """Leave the road by turning left/right at ``s_turn`` (into a driveway), ending ``across_m`` to the side.

    Used for a turn on a road without a junction: the narrative's gas-station or driveway turn.
    """
    start = base.position(s_turn)
    h = base.heading(s_turn)
    sign = 1.0 if left else -1.0
    n_left = np.array([-math.sin(h), math.cos(h)])
    centre = start + sign * radius * n_left
    angles = np.linspace(0.0, math.pi / 2, 20)
    arc = np.array(
        [
            centre + radius * (-sign * n_left * math.cos(a) + np.array([math.cos(h), math.sin(h)]) * math.sin(a))
            for a in angles
        ]
    )
    exit_dir = sign * n_left
    tail = arc[-1] + np.outer(np.linspace(0.5, max(1.0, across_m), 12), exit_dir)
    i0 = int(np.searchsorted(base.s, s_turn))
    return Polyline.from_points(np.vstack([base.points[:i0], arc, tail]))


def closest_approach(a: Polyline, b: Polyline) -> tuple[int, int, float]:
    """Indices of the nearest pair of points of two paths and their distance."""
    d = np.sum((a.points[:, None, :] - b.points[None, :, :]) ** 2, axis=2)
    i, j = np.unravel_index(int(np.argmin(d)), d.shape)
    return int(i), int(j), float(math.sqrt(d[i, j]))
