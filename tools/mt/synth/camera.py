"""The synthetic front camera: a pinhole at the ego's eye height, looking along the road.

The road ahead of a constant-curvature road looks the same from every point of it, so, relative to the
camera, the road's geometry is fixed over a case and only what lies on it (markings, crossings, objects)
moves as the ego drives. Everything here is plain arithmetic; nothing draws.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CAMERA_HEIGHT_M", "Camera"]

CAMERA_HEIGHT_M = 1.4
"""Height of the camera above the road."""


@dataclass(frozen=True)
class Camera:
    """A pinhole camera of ``width`` x ``height`` pixels with a horizontal field of view of about 64 degrees."""

    width: int
    height: int

    @property
    def f(self) -> float:
        """Focal length in pixels."""
        return self.width * 0.8

    @property
    def cx(self) -> float:
        """The image centre's column."""
        return self.width / 2.0

    @property
    def horizon(self) -> float:
        """The horizon's row (the camera looks level; the road is flat)."""
        return self.height * 0.42

    def row_of(self, distance_m: float) -> float:
        """The image row where the road is ``distance_m`` ahead."""
        return self.horizon + self.f * CAMERA_HEIGHT_M / max(distance_m, 1e-3)

    def col_of(self, lateral_m: float, distance_m: float) -> float:
        """The image column of a point ``lateral_m`` right of the camera, ``distance_m`` ahead."""
        return self.cx + self.f * lateral_m / max(distance_m, 1e-3)

    def pixels(self, metres: float, distance_m: float) -> float:
        """How many pixels ``metres`` span at ``distance_m``."""
        return self.f * metres / max(distance_m, 1e-3)

    def in_view(self, lateral_m: float, distance_m: float, *, margin_m: float = 0.0) -> bool:
        """Whether a point (widened by ``margin_m``) lies inside the horizontal field of view."""
        if distance_m <= 0.5:
            return False
        half = self.cx * distance_m / self.f
        return -half - margin_m <= lateral_m <= half + margin_m
