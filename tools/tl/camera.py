"""TIGAUG's camera transformations OE (overexposure), UE (underexposure) and MB (motion blur), with imgaug.

Exposure. A camera that is over- or underexposed by ``ev`` stops collects ``2**ev`` times the light. With
the usual display gamma of 2.2, an 8-bit value ``v`` then becomes ``v * 2**(ev / 2.2)`` (clipped at 255):
a plain per-pixel multiplication, which is what ``iaa.Multiply`` does (through a lookup table, so it is
cheap). Overexposure saturates bright areas, lit bulbs included, towards white; underexposure darkens
the scene and the housings while the lit bulbs stay the brightest things in it. We chose ``iaa.Multiply``
over ``iaa.MultiplyAndAddToBrightness`` because a sensor gain scales all three channels (colours wash out
at saturation, as in real overexposed frames) and because it costs ~1 ms instead of ~35 ms.
The EV ranges are ours (TIGAUG does not give them in a form we could recover): +1 to +2 EV and
-3 to -2 EV, i.e. factors 1.37-1.88 and 0.39-0.53.

Motion blur is imgaug's ``iaa.MotionBlur`` with TIGAUG's kernel size 15 and imgaug's default random
angle and direction, applied unchanged (it is ~40 ms on a 1280x720 image on one core: a 15x15
convolution over three channels).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, field_validator

from tools.tl.transform_base import TransformParams, check_range, make_rng, sub_seed, uniform

__all__ = ["ExposureParams", "MotionBlurParams", "OverexposureParams", "UnderexposureParams", "exposure", "motion_blur"]


class ExposureParams(TransformParams):
    """Exposure change in stops (EV); the image is multiplied by ``2 ** (ev / gamma)``."""

    ev: tuple[float, float]
    gamma: float = Field(default=2.2, gt=0.0, description="Display gamma linking stops to 8-bit values.")

    @field_validator("ev")
    @classmethod
    def _ev(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "ev", lo=-8.0, hi=8.0)
        return v


class OverexposureParams(ExposureParams):
    """OE: +1 to +2 stops."""

    ev: tuple[float, float] = Field(default=(1.0, 2.0), description="Stops of overexposure.")


class UnderexposureParams(ExposureParams):
    """UE: -3 to -2 stops."""

    ev: tuple[float, float] = Field(default=(-3.0, -2.0), description="Stops of underexposure (negative).")


class MotionBlurParams(TransformParams):
    """MB: imgaug ``MotionBlur``; TIGAUG's kernel size 15."""

    k: int = Field(default=15, ge=3, description="Kernel size in pixels (odd; imgaug adds one to even sizes).")
    angle: tuple[float, float] = Field(default=(0.0, 360.0), description="Blur direction in degrees (imgaug default).")
    direction: tuple[float, float] = Field(
        default=(-1.0, 1.0), description="Forward/backward weighting (imgaug default)."
    )

    @field_validator("direction")
    @classmethod
    def _direction(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "direction", lo=-1.0, hi=1.0)
        return v


def exposure(image: np.ndarray, *, seed: int, params: ExposureParams, code: str) -> tuple[np.ndarray, dict[str, Any]]:
    """OE/UE: ``iaa.Multiply(2 ** (ev / gamma))`` with ``ev`` drawn from the range."""
    import imgaug.augmenters as iaa

    rng = make_rng(seed, code)
    ev = uniform(rng, params.ev)
    factor = float(2.0 ** (ev / params.gamma))
    out = iaa.Multiply(factor, seed=sub_seed(rng))(image=image)
    return out, {"ev": round(ev, 4), "factor": round(factor, 4)}


def motion_blur(image: np.ndarray, *, seed: int, params: MotionBlurParams) -> tuple[np.ndarray, dict[str, Any]]:
    """MB: ``iaa.MotionBlur(k, angle, direction)`` seeded from ``seed``."""
    import imgaug.augmenters as iaa

    rng = make_rng(seed, "MB")
    aug = iaa.MotionBlur(k=params.k, angle=params.angle, direction=params.direction, seed=sub_seed(rng))
    return aug(image=image), {"k": params.k}
