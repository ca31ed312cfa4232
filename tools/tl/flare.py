"""TIGAUG's lens flare (LF), our own implementation.

TIGAUG used albumentations' ``RandomSunFlare``. albumentations cannot be installed beside
``opencv-python`` here (it pulls ``opencv-python-headless``), so this module draws the same kind of
flare itself; it is not a port of albumentations' code.

Model (a common description of lens flare from a bright source inside the frame):

* a **sun**: a bright, slightly warm core with a Gaussian profile and a wide, faint halo around it,
  placed in the upper part of the frame (where the sky is);
* **ghosts**: images of the aperture reflected between lens elements. They lie on the straight line from
  the source through the image centre (the optical axis), on both sides of the centre, as discs or rings
  (halos) of various sizes, faint and tinted;
* everything is **added** to the image (light adds up; the result saturates at 255).

The flare layer is smooth, so it is drawn at ``layer_scale`` of the image size and upsampled before it
is added; this keeps LF at a few milliseconds per 1280x720 image.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, field_validator

from tools.tl.transform_base import TransformParams, check_range, make_rng, uniform

__all__ = ["LensFlareParams", "lens_flare"]


class LensFlareParams(TransformParams):
    """LF: where the source is and how strong the sun and its ghosts are."""

    source_x: tuple[float, float] = Field(default=(0.1, 0.9), description="Source x, as a fraction of the width.")
    source_y: tuple[float, float] = Field(default=(0.05, 0.4), description="Source y, as a fraction of the height.")
    sun_radius: tuple[float, float] = Field(default=(0.025, 0.05), description="Core radius, fraction of the diagonal.")
    sun_intensity: tuple[float, float] = Field(default=(0.7, 1.0), description="Core brightness (1 = +255).")
    halo_intensity: tuple[float, float] = Field(default=(0.25, 0.45), description="Wide halo brightness.")
    ghosts: tuple[int, int] = Field(default=(4, 8), description="Number of ghost discs/rings on the flare line.")
    ghost_radius: tuple[float, float] = Field(
        default=(0.01, 0.05), description="Ghost radius, fraction of the diagonal."
    )
    ghost_opacity: tuple[float, float] = Field(default=(0.06, 0.22), description="Ghost brightness.")
    ring_fraction: float = Field(default=0.3, ge=0.0, le=1.0, description="Share of ghosts drawn as rings (halos).")
    layer_scale: float = Field(default=0.25, gt=0.0, le=1.0, description="Canvas size of the flare layer.")

    @field_validator("source_x", "source_y", "sun_radius", "ghost_radius")
    @classmethod
    def _unit(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "range", lo=0.0, hi=1.0)
        return v

    @field_validator("sun_intensity", "halo_intensity", "ghost_opacity")
    @classmethod
    def _strength(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "intensity", lo=0.0, hi=4.0)
        return v

    @field_validator("ghosts")
    @classmethod
    def _ghosts(cls, v: tuple[int, int]) -> tuple[int, int]:
        check_range(v, "ghosts", lo=0, hi=50)
        return v


# Tints of ghosts (RGB, 0..1): lens coatings reflect warm, green and blue-violet hues.
_TINTS = np.array(
    [[1.0, 0.85, 0.6], [0.7, 1.0, 0.7], [0.6, 0.75, 1.0], [0.9, 0.6, 1.0], [1.0, 1.0, 0.9]], dtype=np.float32
)
_SUN_TINT = np.array([1.0, 0.95, 0.85], dtype=np.float32)


def lens_flare(image: np.ndarray, *, seed: int, params: LensFlareParams) -> tuple[np.ndarray, dict[str, Any]]:
    """LF: add a sun and a line of ghosts through the image centre (see the module docstring)."""
    import cv2

    rng = make_rng(seed, "LF")
    h, w = image.shape[:2]
    s = params.layer_scale
    sh, sw = max(8, round(h * s)), max(8, round(w * s))
    diag = float(np.hypot(sw, sh))
    sx, sy = uniform(rng, params.source_x) * sw, uniform(rng, params.source_y) * sh
    core_r = max(1.0, uniform(rng, params.sun_radius) * diag)
    core_i = uniform(rng, params.sun_intensity)
    halo_i = uniform(rng, params.halo_intensity)

    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    d2 = (xx - sx) ** 2 + (yy - sy) ** 2
    sun = core_i * np.exp(-d2 / (2 * core_r**2)) + halo_i * np.exp(-np.sqrt(d2) / (4 * core_r))
    layer = sun[..., None] * _SUN_TINT

    n = int(rng.integers(params.ghosts[0], params.ghosts[1] + 1))
    cx, cy = sw / 2.0, sh / 2.0
    scale_px = 16  # cv2 draws with 4 fractional bits: sub-pixel positions on the small canvas
    for _ in range(n):
        t = float(rng.uniform(0.3, 2.2))  # 1.0 is the centre; > 1 lies across it from the source
        gx, gy = sx + t * (cx - sx), sy + t * (cy - sy)
        r = max(1.0, uniform(rng, params.ghost_radius) * diag)
        opacity = uniform(rng, params.ghost_opacity)
        tint = _TINTS[int(rng.integers(len(_TINTS)))]
        ring = bool(rng.random() < params.ring_fraction)
        mask = np.zeros((sh, sw), dtype=np.float32)
        cv2.circle(
            mask,
            (round(gx * scale_px), round(gy * scale_px)),
            round(r * scale_px),
            1.0,
            thickness=max(1, round(r * 0.25)) if ring else -1,
            lineType=cv2.LINE_AA,
            shift=4,
        )
        layer += (opacity * mask)[..., None] * tint
    layer = cv2.GaussianBlur(layer, (0, 0), 1.0)
    big = cv2.resize(layer, (w, h), interpolation=cv2.INTER_LINEAR)
    add = np.clip(big * 255.0, 0, 255).astype(np.uint8)
    out = cv2.add(image, add)
    return out, {
        "source": (round(sx / s, 1), round(sy / s, 1)),
        "ghosts": n,
        "sun_radius_px": round(core_r / s, 1),
    }
