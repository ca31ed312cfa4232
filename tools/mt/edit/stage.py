"""Where an edit goes in a frame: an assumed front camera, ground points to pixels, and anchoring across frames.

A follow-up adds an object at a place in the world (metres ahead, metres right of the ego's lane centre),
and the object must stay there while the ego drives: at frame ``i`` it is ``d0 - travelled(i)`` metres
ahead, where ``travelled`` integrates the case's own speed data. Real recordings do not carry their camera's
calibration, so the stage assumes a level camera 1.4 m up with a 64-degree field of view and finds the
horizon from the image (the row where the sky's brightness gives way to the road's) unless told.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tools.mt.models import EgoSample

__all__ = ["Placement", "Stage", "estimate_horizon", "travelled"]

CAMERA_HEIGHT_M = 1.4


def estimate_horizon(frame: np.ndarray, *, default: float = 0.42) -> float:
    """The horizon's row as a fraction of the height: where row brightness drops most (sky above, road below).

    Falls back to ``default`` when the image shows no clear edge (night, fog).
    """
    grey = frame.mean(axis=2) if frame.ndim == 3 else frame.astype(np.float32)
    rows = grey.mean(axis=1)
    h = len(rows)
    lo, hi = int(h * 0.25), int(h * 0.65)
    if hi - lo < 4:
        return default
    smooth = np.convolve(rows, np.ones(5) / 5, mode="same")
    diff = smooth[lo:hi] - np.roll(smooth, -3)[lo:hi]
    i = int(np.argmax(diff))
    if diff[i] < 6.0:
        return default
    return (lo + i + 2) / h


@dataclass(frozen=True)
class Stage:
    """An assumed pinhole camera over a flat road."""

    width: int
    height: int
    horizon_frac: float = 0.42

    @property
    def f(self) -> float:
        """Focal length in pixels (a 64-degree horizontal field of view)."""
        return self.width * 0.8

    @property
    def horizon(self) -> float:
        """The horizon's row."""
        return self.height * self.horizon_frac

    def ground(self, lateral_m: float, ahead_m: float, up_m: float = 0.0) -> tuple[float, float]:
        """Pixel ``(col, row)`` of a point ``lateral_m`` right of the camera, ``ahead_m`` ahead, ``up_m`` up."""
        d = max(ahead_m, 0.05)
        return self.width / 2 + self.f * lateral_m / d, self.horizon + self.f * (CAMERA_HEIGHT_M - up_m) / d

    def px(self, metres: float, ahead_m: float) -> float:
        """Pixels spanned by ``metres`` at ``ahead_m``."""
        return self.f * metres / max(ahead_m, 0.05)

    def ahead_of_row(self, row: float) -> float:
        """The distance of the road at image row ``row`` (infinite at or above the horizon)."""
        return float("inf") if row <= self.horizon else self.f * CAMERA_HEIGHT_M / (row - self.horizon)


@dataclass(frozen=True)
class Placement:
    """An object's place in the world at the first frame."""

    ahead_m: float
    lateral_m: float
    width_m: float
    height_m: float
    speed_mps: float = 0.0
    """The object's own speed along the road (negative: oncoming)."""
    lateral_speed_mps: float = 0.0

    def at(self, travelled_m: float, t: float) -> tuple[float, float]:
        """``(ahead, lateral)`` once the ego has travelled ``travelled_m`` and ``t`` seconds have passed."""
        return self.ahead_m + self.speed_mps * t - travelled_m, self.lateral_m + self.lateral_speed_mps * t

    def box(self, stage: Stage, travelled_m: float, t: float) -> tuple[float, float, float, float] | None:
        """The object's box in pixels at that moment (None when behind the camera or outside the frame)."""
        d, x = self.at(travelled_m, t)
        if d < 1.0:
            return None
        x1, y2 = stage.ground(x - self.width_m / 2, d)
        x2, y1 = stage.ground(x + self.width_m / 2, d, self.height_m)
        if x2 < 0 or x1 > stage.width or y2 < 0 or y1 > stage.height:
            return None
        return x1, y1, x2, y2


def travelled(ego: Sequence[EgoSample], fps: float) -> list[float]:
    """Metres the ego has travelled at each frame, from its own speed data (trapezoidal)."""
    out = [0.0]
    for a, b in itertools.pairwise(ego):
        out.append(out[-1] + (a.speed_kmh + b.speed_kmh) / 2 / 3.6 / fps)
    return out
