"""Pictures of a run: a top-down PNG (whole trajectories, collisions marked) and an animated GIF.

The road is drawn once per map by MetaDrive's own top-down map painter (``draw_top_down_map_native``,
pygame, off-screen, no assets); the actors are drawn from the run's recorded trajectories with OpenCV.
Drawing after the run from the record keeps rendering out of the simulation time (RunRecord's
``render_seconds`` against ``wall_seconds``) and makes the pictures exactly what the JSON says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tools.crash.models import Pose, SimCollision

__all__ = ["MapBackground", "draw_background", "render_gif", "render_png"]

_PPM = 4.0  # background pixels per metre
_FILM = (2400, 2400)
_COLOURS = [(220, 60, 60), (40, 110, 220), (230, 150, 30), (150, 60, 190), (20, 160, 160), (120, 120, 120)]
_EGO = (30, 170, 60)
_MARGIN_M = 18.0

Image = NDArray[np.uint8]


@dataclass(frozen=True)
class MapBackground:
    """The road drawn top-down, and how world metres map to its pixels (north up)."""

    image: Image  # (h, w, 3) RGB
    origin: tuple[float, float]
    scaling: float  # pixels per metre

    def to_pix(self, x: float, y: float) -> tuple[float, float]:
        """Pixel coordinates (column, row) of a world point."""
        h = self.image.shape[0]
        return (x - self.origin[0]) * self.scaling, h - (y - self.origin[1]) * self.scaling


def draw_background(metadrive_map: Any) -> MapBackground:
    """Draw a built MetaDrive map with MetaDrive's own painter (off-screen pygame)."""
    from metadrive.engine.top_down_renderer import draw_top_down_map_native
    from metadrive.obs.top_down_obs_impl import WorldSurface

    surface = draw_top_down_map_native(
        metadrive_map, semantic_map=False, return_surface=True, film_size=_FILM, scaling=_PPM
    )
    image = np.ascontiguousarray(WorldSurface.to_cv2_image(surface)).astype(np.uint8)
    return MapBackground(
        image=image, origin=(float(surface.origin[0]), float(surface.origin[1])), scaling=float(surface.scaling)
    )


def _colour(actor_id: str, ego_id: str, order: Sequence[str]) -> tuple[int, int, int]:
    if actor_id == ego_id:
        return _EGO
    return _COLOURS[order.index(actor_id) % len(_COLOURS)]


def _crop_box(bg: MapBackground, trajectories: Mapping[str, Sequence[Pose]]) -> tuple[int, int, int, int]:
    xs = [p.x for poses in trajectories.values() for p in poses]
    ys = [p.y for poses in trajectories.values() for p in poses]
    if not xs:
        h, w = bg.image.shape[:2]
        return 0, 0, w, h
    c0, r1 = bg.to_pix(min(xs) - _MARGIN_M, min(ys) - _MARGIN_M)
    c1, r0 = bg.to_pix(max(xs) + _MARGIN_M, max(ys) + _MARGIN_M)
    h, w = bg.image.shape[:2]
    # at least 60 m each way, so short runs still show the road
    width, height = max(c1 - c0, 60.0 * bg.scaling), max(r1 - r0, 60.0 * bg.scaling)
    cc, rc = (c0 + c1) / 2, (r0 + r1) / 2
    left, top = int(max(0, cc - width / 2)), int(max(0, rc - height / 2))
    right, bottom = int(min(w, cc + width / 2)), int(min(h, rc + height / 2))
    return left, top, right, bottom


def _box(bg: MapBackground, pose: Pose, dims: tuple[float, float], crop: tuple[int, int]) -> NDArray[np.int32]:
    length, width = dims
    c, s = math.cos(pose.heading), math.sin(pose.heading)
    corners = []
    for dl, dw in (
        (length / 2, width / 2),
        (length / 2, -width / 2),
        (-length / 2, -width / 2),
        (-length / 2, width / 2),
    ):
        x = pose.x + dl * c - dw * s
        y = pose.y + dl * s + dw * c
        col, row = bg.to_pix(x, y)
        corners.append((col - crop[0], row - crop[1]))
    return np.array(corners, dtype=np.int32)


def _pose_at(poses: Sequence[Pose], t: float) -> Pose | None:
    if not poses:
        return None
    best = min(poses, key=lambda p: abs(p.t - t))
    return best


class _Painter:
    def __init__(
        self,
        bg: MapBackground,
        trajectories: Mapping[str, Sequence[Pose]],
        dims: Mapping[str, tuple[float, float]],
        ego_id: str,
        max_side: int,
    ) -> None:
        import cv2

        self.cv2 = cv2
        self.bg = bg
        self.traj = trajectories
        self.dims = dims
        self.ego = ego_id
        self.order = sorted(trajectories)
        left, top, right, bottom = _crop_box(bg, trajectories)
        self.crop = (left, top)
        self.base = bg.image[top:bottom, left:right].copy()
        self.scale = min(1.0, max_side / max(1, max(self.base.shape[:2])))

    def pix(self, x: float, y: float) -> tuple[int, int]:
        col, row = self.bg.to_pix(x, y)
        return round(col - self.crop[0]), round(row - self.crop[1])

    def paths(self, img: Image, until: float | None = None, thickness: int = 2) -> None:
        for aid in self.order:
            pts = [self.pix(p.x, p.y) for p in self.traj[aid] if until is None or p.t <= until]
            if len(pts) > 1:
                self.cv2.polylines(
                    img, [np.array(pts, dtype=np.int32)], False, _colour(aid, self.ego, self.order), thickness
                )

    def cars(self, img: Image, t: float | None) -> None:
        for aid in self.order:
            poses = self.traj[aid]
            pose = poses[-1] if t is None and poses else _pose_at(poses, t if t is not None else 0.0)
            if pose is None:
                continue
            box = _box(self.bg, pose, self.dims.get(aid, (4.5, 1.9)), self.crop)
            colour = _colour(aid, self.ego, self.order)
            self.cv2.fillPoly(img, [box], colour)
            self.cv2.polylines(img, [box], True, (0, 0, 0), 1)
            label = f"{aid} (ego)" if aid == self.ego else aid
            col, row = self.pix(pose.x, pose.y)
            self.cv2.putText(
                img, label, (col + 8, row - 8), self.cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, self.cv2.LINE_AA
            )

    def collisions(self, img: Image, collisions: Sequence[SimCollision], until: float | None = None) -> None:
        for c in collisions:
            if c.x is None or c.y is None or (until is not None and c.t > until):
                continue
            col, row = self.pix(c.x, c.y)
            red = (200, 0, 0)
            self.cv2.drawMarker(img, (col, row), red, self.cv2.MARKER_TILTED_CROSS, 16, 3)

    def text(self, img: Image, lines: Sequence[str]) -> None:
        for k, line in enumerate(lines):
            y = 18 + 18 * k
            self.cv2.putText(
                img, line, (8, y), self.cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 3, self.cv2.LINE_AA
            )
            self.cv2.putText(img, line, (8, y), self.cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, self.cv2.LINE_AA)

    def finish(self, img: Image) -> Image:
        if self.scale >= 1.0:
            return img
        h, w = img.shape[:2]
        small = self.cv2.resize(img, (int(w * self.scale), int(h * self.scale)), interpolation=self.cv2.INTER_AREA)
        return np.asarray(small, dtype=np.uint8)


def _summary(collisions: Sequence[SimCollision]) -> list[str]:
    lines = []
    for c in collisions[:4]:
        speed = f"{c.speed_a_mps:.0f}" + (f"/{c.speed_b_mps:.0f}" if c.speed_b_mps is not None else "")
        lines.append(f"{c.t:.1f}s {c.a} x {c.b} ({speed} m/s)")
    return lines or ["no collision"]


def render_png(
    path: Path,
    bg: MapBackground,
    trajectories: Mapping[str, Sequence[Pose]],
    dims: Mapping[str, tuple[float, float]],
    collisions: Sequence[SimCollision],
    *,
    ego_id: str,
    title: str,
    max_side: int = 800,
) -> Path:
    """Whole trajectories, the cars where they ended, collisions marked with a red cross."""
    import cv2

    p = _Painter(bg, trajectories, dims, ego_id, max_side)
    img = p.base.copy()
    p.paths(img)
    p.cars(img, None)
    p.collisions(img, collisions)
    p.text(img, [title, *_summary(collisions)])
    out = p.finish(img)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), cv2.cvtColor(out, cv2.COLOR_RGB2BGR))
    return path


def render_gif(
    path: Path,
    bg: MapBackground,
    trajectories: Mapping[str, Sequence[Pose]],
    dims: Mapping[str, tuple[float, float]],
    collisions: Sequence[SimCollision],
    *,
    ego_id: str,
    title: str,
    fps: int,
    max_side: int = 480,
) -> Path:
    """One frame every 1/fps simulated seconds: trails so far, the cars, collisions once they happened."""
    from PIL import Image as PILImage

    p = _Painter(bg, trajectories, dims, ego_id, max_side)
    end = max((poses[-1].t for poses in trajectories.values() if poses), default=0.0)
    frames = []
    for t in np.arange(0.0, end + 1e-6, 1.0 / fps):
        img = p.base.copy()
        p.paths(img, until=float(t), thickness=1)
        p.cars(img, float(t))
        p.collisions(img, collisions, until=float(t))
        p.text(img, [f"{title}  t={t:.1f}s"])
        frames.append(p.finish(img))
    if not frames:
        frames.append(p.finish(p.base.copy()))
    path.parent.mkdir(parents=True, exist_ok=True)
    # one palette for the whole animation (from the first and last frames), then a cheap nearest-colour
    # mapping per frame: ten times faster than quantising every frame on its own
    palette = PILImage.fromarray(np.concatenate([frames[0], frames[-1]], axis=0)).quantize(
        colors=64, method=PILImage.Quantize.MEDIANCUT, dither=PILImage.Dither.NONE
    )
    indexed = [PILImage.fromarray(f).quantize(palette=palette, dither=PILImage.Dither.NONE) for f in frames]
    indexed[0].save(path, save_all=True, append_images=indexed[1:], duration=round(1000 / fps), loop=0, optimize=False)
    return path
