"""TIGAUG's weather transformations RN (rain), SW (snow) and FG (fog), on imgaug's own layer generators.

TIGAUG builds these on imgaug (``iaa.Rain``, ``iaa.Snowflakes``, ``iaa.Fog``). Plain imgaug draws every
layer at full resolution, which costs ~0.2 s for rain on a 1280x720 image here (a motion blur with a
kernel a quarter of the image wide), and TIGAUG's relations need thousands of images. So we run imgaug's
**own** layer code (``RainLayer``, ``SnowflakesLayer``, ``CloudLayer.generate_maps``: the same sampling
of density, size, angle, speed and the same noise, gating and motion blur) on a smaller canvas
(``layer_scale``, 0.5 for rain and snow, 0.25 for fog), upsample the resulting layer with bilinear
interpolation and blend it with the full-resolution image using imgaug's blending formulas. Nothing of
the image itself is resampled.

What changes against plain imgaug, and why it is acceptable:

* Fog maps are low-frequency noise (frequency exponents -4..-1.5); at 0.25 they are visually the same.
* Snowflake size is a fraction of the canvas in imgaug; we convert ``flake_size`` so the noise grid
  (and so the flake size in pixels) is the same as at full resolution whenever that is possible
  (``1 - (1 - f) / layer_scale`` for ``f > 1 - layer_scale``, true for the large-image setting).
* Rain drops (``drop_size`` 0.1-0.2 means a noise grid finer than the half-size canvas) come out about
  twice as wide; streak length and angle, which are fractions of the canvas, are unchanged.

``layer_scale=1.0`` runs the layers at full resolution (same look as imgaug, imgaug's speed).
imgaug's ``SomeOf`` wrapper picks 1 to 3 layers; we draw the count from the same range with our seed.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from tools.tl.transform_base import TransformParams, check_range, make_rng, sub_seed

__all__ = ["FogParams", "RainParams", "SnowParams", "fog", "rain", "snow"]


class _LayeredParams(TransformParams):
    """Rain and snow: imgaug draws 1 to 3 particle layers, here on a reduced canvas."""

    layers: tuple[int, int] = Field(default=(1, 3), description="Number of particle layers (imgaug: 1 to 3).")
    layer_scale: float = Field(default=0.5, gt=0.0, le=1.0, description="Canvas size of the layers, as a fraction.")

    @field_validator("layers")
    @classmethod
    def _layers(cls, v: tuple[int, int]) -> tuple[int, int]:
        check_range(v, "layers", lo=1, hi=10)
        return v


class RainParams(_LayeredParams):
    """RN: imgaug ``RainLayer`` settings; TIGAUG's drop size and speed."""

    drop_size: tuple[float, float] = Field(
        default=(0.10, 0.20), description="TIGAUG: 0.1-0.2 (imgaug's large-image value)."
    )
    speed: tuple[float, float] = Field(default=(0.20, 0.30), description="TIGAUG: 0.2-0.3; streak length / image size.")
    density: tuple[float, float] = Field(default=(0.03, 0.14), description="imgaug's Rain default.")
    density_uniformity: tuple[float, float] = Field(default=(0.8, 1.0), description="imgaug's Rain default.")
    drop_size_uniformity: tuple[float, float] = Field(default=(0.2, 0.5), description="imgaug's Rain default.")
    angle: tuple[float, float] = Field(default=(-15.0, 15.0), description="Streak angle in degrees (imgaug default).")

    @field_validator("drop_size", "speed", "density", "density_uniformity", "drop_size_uniformity")
    @classmethod
    def _unit(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "range", lo=0.0, hi=1.0)
        return v


class SnowParams(_LayeredParams):
    """SW: imgaug ``Snowflakes`` with its documented large-image (960x1280) settings.

    TIGAUG names snow at severity 2; imgcorruptlike's snow cannot run here (it breaks on numpy 2), so this
    is imgaug's ``Snowflakes`` at a moderate density: flakes of a few pixels, slow fall, 1 to 3 layers.
    """

    density: tuple[float, float] = Field(default=(0.01, 0.05), description="Flakes per noise pixel.")
    density_uniformity: tuple[float, float] = Field(default=(0.3, 0.9), description="imgaug default.")
    flake_size: tuple[float, float] = Field(default=(0.7, 0.95), description="imgaug's value for ~960x1280 images.")
    flake_size_uniformity: tuple[float, float] = Field(default=(0.4, 0.8), description="imgaug default.")
    angle: tuple[float, float] = Field(default=(-30.0, 30.0), description="Fall angle in degrees (imgaug default).")
    speed: tuple[float, float] = Field(default=(0.001, 0.03), description="imgaug's value for ~960x1280 images.")

    @field_validator("density", "density_uniformity", "flake_size", "flake_size_uniformity", "speed")
    @classmethod
    def _unit(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "range", lo=0.0, hi=1.0)
        return v


class FogParams(TransformParams):
    """FG: imgaug ``iaa.Fog`` (a ``CloudLayer`` with imgaug's fog settings; TIGAUG's fog)."""

    layer_scale: float = Field(default=0.25, gt=0.0, le=1.0, description="Canvas size of the fog maps, as a fraction.")


def _small_size(h: int, w: int, scale: float) -> tuple[int, int]:
    return max(8, round(h * scale)), max(8, round(w * scale))


def _size_for_scale(bounds: tuple[float, float], scale: float) -> tuple[float, float]:
    """imgaug's flake/drop size is a canvas fraction; keep its noise grid size in pixels where possible."""

    def one(f: float) -> float:
        return float(min(max(1.0 - (1.0 - f) / scale, 1e-4), 0.999))

    return one(bounds[0]), one(bounds[1])


@cache
def _rain_layer(params: RainParams) -> Any:
    """An imgaug ``RainLayer`` whose blend step hands back the drop layer instead of drawing it."""
    from imgaug.augmenters.weather import RainLayer

    class _RainMask(RainLayer):
        @classmethod
        def _blend(cls, image: np.ndarray, speed_sample: float, noise_small_blur_rgb: np.ndarray) -> np.ndarray:
            return noise_small_blur_rgb

    return _RainMask(
        density=params.density,
        density_uniformity=params.density_uniformity,
        drop_size=_size_for_scale(params.drop_size, params.layer_scale),
        drop_size_uniformity=params.drop_size_uniformity,
        angle=params.angle,
        speed=params.speed,
        blur_sigma_fraction=(0.001, 0.001),
    )


@cache
def _snow_layer(params: SnowParams) -> Any:
    """An imgaug ``SnowflakesLayer`` whose blend step hands back the flake layer and the speed."""
    from imgaug.augmenters.weather import SnowflakesLayer

    class _SnowMask(SnowflakesLayer):
        @classmethod
        def _blend(cls, image: np.ndarray, speed_sample: float, noise_small_blur_rgb: np.ndarray) -> Any:
            return noise_small_blur_rgb[..., 0], float(speed_sample)

    return _SnowMask(
        density=params.density,
        density_uniformity=params.density_uniformity,
        flake_size=_size_for_scale(params.flake_size, params.layer_scale),
        flake_size_uniformity=params.flake_size_uniformity,
        angle=params.angle,
        speed=params.speed,
        blur_sigma_fraction=(0.0001, 0.001),
    )


@cache
def _fog_layer() -> Any:
    import imgaug.augmenters as iaa

    return iaa.Fog()


def _upsample(layer: np.ndarray, h: int, w: int) -> np.ndarray:
    import cv2

    if layer.shape[:2] == (h, w):
        return layer
    return cv2.resize(layer, (w, h), interpolation=cv2.INTER_LINEAR)


def _blend_over(image: np.ndarray, alpha: np.ndarray, premult: np.ndarray) -> np.ndarray:
    """``image * (1 - alpha) + premult`` with a one-channel alpha and colour (imgaug's alpha blend, composited)."""
    a = alpha[..., None]
    out = image.astype(np.float32)
    out *= 1.0 - a
    out += premult[..., None]
    np.clip(out, 0, 255, out=out)
    return out.astype(np.uint8)


def rain(image: np.ndarray, *, seed: int, params: RainParams) -> tuple[np.ndarray, dict[str, Any]]:
    """RN: 1-3 imgaug rain layers, drawn at ``layer_scale`` and blended at full size.

    Each layer blends as imgaug's ``RainLayer._blend``: ``(1 - a) * image + a * c`` with
    ``a = clip(1.3 * noise / 255)`` and the drop grey ``c = 110 + 130 mod sum(noise[:1000])``. Layers are
    composited at the small size (premultiplied) and blended with the image once.
    """
    import imgaug.random as iarandom

    rng = make_rng(seed, "RN")
    h, w = image.shape[:2]
    sh, sw = _small_size(h, w, params.layer_scale)
    n = int(rng.integers(params.layers[0], params.layers[1] + 1))
    layer = _rain_layer(params)
    canvas = np.zeros((sh, sw, 1), dtype=np.uint8)
    alpha = np.zeros((sh, sw), dtype=np.float32)
    premult = np.zeros((sh, sw), dtype=np.float32)
    greys = []
    for _ in range(n):
        noise = np.asarray(layer.draw_on_image(canvas, iarandom.RNG(sub_seed(rng))))[..., 0]
        total = int(np.sum(noise.flat[0:1000], dtype=np.int64))
        grey = 110 + (240 - 110) % (total if total > 0 else 1)
        a = np.clip(1.3 * noise.astype(np.float32) / 255.0, 0.0, 1.0)
        alpha = a + alpha * (1.0 - a)
        premult = a * grey + premult * (1.0 - a)
        greys.append(int(grey))
    out = _blend_over(image, _upsample(alpha, h, w), _upsample(premult, h, w))
    return out, {"layers": n, "drop_grey": greys}


def snow(image: np.ndarray, *, seed: int, params: SnowParams) -> tuple[np.ndarray, dict[str, Any]]:
    """SW: 1-3 imgaug snowflake layers, drawn at ``layer_scale`` and blended at full size.

    Each layer blends as imgaug's ``SnowflakesLayer._blend``: add ``(0.1 + 20 v) * n`` (a faint glow),
    then take the maximum with ``(1 + 20 v) * n`` (the flakes), ``v`` being the sampled speed.
    """
    import cv2
    import imgaug.random as iarandom

    rng = make_rng(seed, "SW")
    h, w = image.shape[:2]
    sh, sw = _small_size(h, w, params.layer_scale)
    n = int(rng.integers(params.layers[0], params.layers[1] + 1))
    layer = _snow_layer(params)
    canvas = np.zeros((sh, sw, 1), dtype=np.uint8)
    out = image
    speeds = []
    for _ in range(n):
        noise, speed = layer.draw_on_image(canvas, iarandom.RNG(sub_seed(rng)))
        glow = np.clip((0.1 + 20 * speed) * noise, 0, 255).astype(np.uint8)
        flakes = np.clip((1.0 + 20 * speed) * noise, 0, 255).astype(np.uint8)
        glow3 = cv2.cvtColor(_upsample(glow, h, w), cv2.COLOR_GRAY2RGB)
        flakes3 = cv2.cvtColor(_upsample(flakes, h, w), cv2.COLOR_GRAY2RGB)
        out = cv2.max(cv2.add(out, glow3), flakes3)
        speeds.append(round(speed, 5))
    return np.ascontiguousarray(out), {"layers": n, "speed": speeds}


def fog(image: np.ndarray, *, seed: int, params: FogParams) -> tuple[np.ndarray, dict[str, Any]]:
    """FG: imgaug ``iaa.Fog``'s alpha and intensity maps, drawn at ``layer_scale`` and blended at full size.

    The blend is ``CloudLayer.draw_on_image``'s ``(1 - alpha) * image + alpha * intensity``.
    """
    import imgaug.random as iarandom

    rng = make_rng(seed, "FG")
    h, w = image.shape[:2]
    sh, sw = _small_size(h, w, params.layer_scale)
    canvas = np.zeros((sh, sw, 3), dtype=np.uint8)
    alpha, intensity = _fog_layer().generate_maps(canvas, iarandom.RNG(sub_seed(rng)))
    alpha = alpha.astype(np.float32)
    premult = alpha * np.clip(intensity, 0, 255).astype(np.float32)
    out = _blend_over(image, _upsample(alpha, h, w), _upsample(premult, h, w))
    return out, {"mean_alpha": round(float(alpha.mean()), 4)}
