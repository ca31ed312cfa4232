"""Shared pieces of the twelve TIGAUG transformations: parameter models, seeds, and what a light op records.

Every transformation module (:mod:`tools.tl.weather`, :mod:`tools.tl.camera`, :mod:`tools.tl.flare`,
:mod:`tools.tl.light_ops`) builds on these, and :mod:`tools.tl.transforms` turns them into the public
:class:`~tools.tl.transforms.TransformResult`. A light operation records one :class:`LightChange` per
light it changed, and a whole-image geometric change (SC) records a :class:`BoxAffine`; together they are
TIGAUG's τ (Eq. 2), so detections made on the original image can be mapped onto the transformed one.
"""

from __future__ import annotations

import zlib
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.tl.models import TLBox, TLImage

__all__ = [
    "BoxAffine",
    "LightChange",
    "LightOpOutcome",
    "TransformParams",
    "check_range",
    "make_rng",
    "sub_seed",
    "uniform",
]


class TransformParams(BaseModel):
    """Base of every transformation's parameters: strict (unknown keys are refused) and immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def check_range(value: tuple[float, float], name: str, *, lo: float | None = None, hi: float | None = None) -> None:
    """Refuse a ``(low, high)`` range that is reversed or leaves ``[lo, hi]``.

    Raises:
        ValueError: Turned into a pydantic validation error by the caller's validator.
    """
    a, b = value
    if a > b:
        raise ValueError(f"{name}: low {a} is above high {b}")
    if lo is not None and a < lo:
        raise ValueError(f"{name}: {a} is below {lo}")
    if hi is not None and b > hi:
        raise ValueError(f"{name}: {b} is above {hi}")


def make_rng(seed: int, code: str) -> np.random.Generator:
    """The generator of one transformation for one seed.

    The code is mixed in so that RN and SW with the same seed draw different numbers, while the same
    (code, seed) always draws the same ones.
    """
    return np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, zlib.crc32(code.encode())]))


def sub_seed(rng: np.random.Generator) -> int:
    """A seed for a library (imgaug) drawn from our generator, so its randomness follows ours."""
    return int(rng.integers(0, 2**31 - 1))


def uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    """One value from ``[low, high]`` (exactly ``low`` when the range is a single value)."""
    a, b = bounds
    return float(a) if a == b else float(rng.uniform(a, b))


class BoxAffine(BaseModel):
    """A whole-image axis-aligned map of coordinates: ``x' = sx * x + tx``, ``y' = sy * y + ty`` (SC)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sx: float
    sy: float
    tx: float
    ty: float

    def apply(self, box: TLBox) -> TLBox:
        """The box under this map (corners map to corners because sx, sy > 0)."""
        return box.model_copy(
            update={
                "x1": self.sx * box.x1 + self.tx,
                "y1": self.sy * box.y1 + self.ty,
                "x2": self.sx * box.x2 + self.tx,
                "y2": self.sy * box.y2 + self.ty,
            }
        )


class LightChange(BaseModel):
    """What one transformation did to one original light (one record per resulting box).

    ``source`` indexes the original labels' boxes, ``target`` the transformed labels' boxes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: int = Field(ge=0, description="Index of the original light.")
    target: int = Field(ge=0, description="Index of the resulting box in the transformed labels.")
    kind: Literal["recolour", "move", "copy", "rotate"]
    dx: float = Field(default=0.0, description="Offset in x (move, copy).")
    dy: float = Field(default=0.0, description="Offset in y (move, copy).")
    quarter_turns: int = Field(
        default=0, description="Rotation about the light's centre in quarter turns, +1 counter-clockwise as seen."
    )
    centre: tuple[float, float] | None = Field(default=None, description="Rotation centre (the light's box centre).")
    mirror: Literal["vertical", "horizontal"] | None = Field(
        default=None, description="CC: how the housing was flipped (vertical housings top to bottom)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> LightChange:
        if self.kind == "rotate" and (self.quarter_turns % 4 == 0 or self.centre is None):
            raise ValueError("a rotation needs a centre and a non-zero number of quarter turns")
        return self


class LightOpOutcome(BaseModel):
    """What a light operation returns to the registry (the image travels separately)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    labels: TLImage
    changes: list[LightChange] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    sampled: dict[str, object] = Field(default_factory=dict, description="Values drawn for this image.")
    affine: BoxAffine | None = None
