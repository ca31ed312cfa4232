"""TIGAUG's twelve transformations of labelled traffic-light images, behind one function.

``apply_transform(code, image, labels, seed=...)`` returns the transformed image, the transformed labels
and what was done; ``transform_detections(result, detections)`` maps detections made on the original
image onto the transformed one (TIGAUG's τ). The codes:

============  ==========================================================  =====================
family        codes                                                       relation (TIGAUG)
============  ==========================================================  =====================
weather       RN rain, SW snow, FG fog, LF lens flare                      Eq. 1: τ = identity
camera        OE overexposure, UE underexposure, MB motion blur            Eq. 1: τ = identity
light         CC change colour, MP move, AD add, RT rotate, SC scale       Eq. 2: τ changes boxes
============  ==========================================================  =====================

Every transformation is seeded: the same code, image, labels, seed and parameters give the same output,
byte for byte. Parameters default to TIGAUG's (see each params model) and can be given as a model or a
plain dict (validated; unknown keys are refused). Images are RGB ``uint8`` ``H x W x 3`` and keep their
size; boxes stay inside the image. Implementation modules: :mod:`tools.tl.weather`,
:mod:`tools.tl.flare`, :mod:`tools.tl.camera`, :mod:`tools.tl.light_ops`, :mod:`tools.tl.blending`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.tl.camera import MotionBlurParams, OverexposureParams, UnderexposureParams, exposure, motion_blur
from tools.tl.errors import TLDataError, UnknownTransformError
from tools.tl.flare import LensFlareParams, lens_flare
from tools.tl.light_ops import (
    AddParams,
    ChangeColourParams,
    MoveParams,
    RotateParams,
    ScaleParams,
    add_lights,
    change_colour,
    move_lights,
    rotate_lights,
    scale_image,
)
from tools.tl.models import TRANSFORM_CODES, TLBox, TLImage
from tools.tl.transform_base import BoxAffine, LightChange, LightOpOutcome, TransformParams
from tools.tl.weather import FogParams, RainParams, SnowParams, fog, rain, snow

__all__ = [
    "BoxAffine",
    "ImageMismatchError",
    "LightChange",
    "TransformParams",
    "TransformParamsError",
    "TransformResult",
    "TransformSpec",
    "apply_transform",
    "box_iou",
    "describe_transforms",
    "params_model",
    "transform_detections",
    "transform_spec",
]


Family = Literal["weather", "camera", "light"]
_Runner = Callable[[np.ndarray, TLImage, int, Any], tuple[np.ndarray, LightOpOutcome]]


class TransformParamsError(TLDataError):
    """Parameters that do not fit a transformation's params model."""

    def __init__(self, code: str, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"parameters for {code}: {reason}")


class ImageMismatchError(TLDataError):
    """An image array that is not RGB uint8 or not the size its labels give."""

    def __init__(self, image_id: str, reason: str) -> None:
        self.image_id = image_id
        self.reason = reason
        super().__init__(f"image {image_id}: {reason}")


@dataclass(frozen=True)
class TransformSpec:
    """One transformation: its code, family, TIGAUG relation, one-line summary and parameters."""

    code: str
    name: str
    family: Family
    summary: str
    params_model: type[TransformParams]
    run: _Runner

    @property
    def changes_labels(self) -> bool:
        """Whether τ changes labels (TIGAUG Eq. 2) rather than keeping them (Eq. 1)."""
        return self.family == "light"


def _pixels_only(fn: Callable[..., tuple[np.ndarray, dict[str, Any]]], **extra: Any) -> _Runner:
    """Wrap a weather/camera function: labels pass through unchanged (Eq. 1)."""

    def run(image: np.ndarray, labels: TLImage, seed: int, params: Any) -> tuple[np.ndarray, LightOpOutcome]:
        out, sampled = fn(image, seed=seed, params=params, **extra)
        return out, LightOpOutcome(labels=labels.model_copy(deep=True), sampled=sampled)

    return run


def _light(fn: Callable[..., tuple[np.ndarray, LightOpOutcome]]) -> _Runner:
    def run(image: np.ndarray, labels: TLImage, seed: int, params: Any) -> tuple[np.ndarray, LightOpOutcome]:
        return fn(image, labels, seed=seed, params=params)

    return run


_SPECS: dict[str, TransformSpec] = {
    s.code: s
    for s in (
        TransformSpec(
            "RN",
            "rain",
            "weather",
            "rain streaks (imgaug Rain layers, drop size 0.1-0.2, speed 0.2-0.3)",
            RainParams,
            _pixels_only(rain),
        ),
        TransformSpec(
            "SW",
            "snow",
            "weather",
            "falling snow (imgaug Snowflakes layers, large-image setting)",
            SnowParams,
            _pixels_only(snow),
        ),
        TransformSpec(
            "FG", "fog", "weather", "fog (imgaug Fog: a dense low-frequency cloud layer)", FogParams, _pixels_only(fog)
        ),
        TransformSpec(
            "LF",
            "lens flare",
            "weather",
            "lens flare: a sun and ghost discs/rings through the centre, added",
            LensFlareParams,
            _pixels_only(lens_flare),
        ),
        TransformSpec(
            "OE",
            "overexposure",
            "camera",
            "overexposure by +1 to +2 stops (imgaug Multiply)",
            OverexposureParams,
            _pixels_only(exposure, code="OE"),
        ),
        TransformSpec(
            "UE",
            "underexposure",
            "camera",
            "underexposure by -3 to -2 stops (imgaug Multiply)",
            UnderexposureParams,
            _pixels_only(exposure, code="UE"),
        ),
        TransformSpec(
            "MB",
            "motion blur",
            "camera",
            "motion blur (imgaug MotionBlur, kernel 15, random angle)",
            MotionBlurParams,
            _pixels_only(motion_blur),
        ),
        TransformSpec(
            "CC",
            "change colour",
            "light",
            "swap red and green lights (hue + housing flip); yellow/off stay",
            ChangeColourParams,
            _light(change_colour),
        ),
        TransformSpec(
            "MP",
            "move",
            "light",
            "move each light one box width left or right (inpaint + Poisson paste)",
            MoveParams,
            _light(move_lights),
        ),
        TransformSpec(
            "AD",
            "add",
            "light",
            "copy 1 to n/2 lights to free places (Poisson paste), same state",
            AddParams,
            _light(add_lights),
        ),
        TransformSpec(
            "RT",
            "rotate",
            "light",
            "turn each light 90 degrees in place; box keeps centre, swaps w/h",
            RotateParams,
            _light(rotate_lights),
        ),
        TransformSpec(
            "SC",
            "scale",
            "light",
            "zoom out: expand canvas, inpaint border, resize back; boxes shrink",
            ScaleParams,
            _light(scale_image),
        ),
    )
}
assert tuple(_SPECS) == TRANSFORM_CODES


class TransformResult(BaseModel):
    """A transformed image, its labels, and what the transformation did (enough to apply τ to detections)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    code: str
    seed: int
    image: np.ndarray = Field(description="RGB uint8, the same size as the input.")
    labels: TLImage = Field(description="The transformed labels.")
    original: TLImage = Field(description="The labels the transformation started from.")
    params: dict[str, Any] = Field(description="The parameters used (the params model, as JSON values).")
    sampled: dict[str, Any] = Field(default_factory=dict, description="Values drawn for this image (factor, moves...).")
    notes: list[str] = Field(default_factory=list, description="Lights skipped or left alone, and why.")
    changed: list[int] = Field(default_factory=list, description="Indices (original labels) of the lights transformed.")
    changes: list[LightChange] = Field(default_factory=list, description="One record per resulting changed box.")
    affine: BoxAffine | None = Field(default=None, description="SC: the map every box and detection follows.")


def transform_spec(code: str) -> TransformSpec:
    """The spec of one code (case-insensitive).

    Raises:
        UnknownTransformError: For a code that is not one of the twelve.
    """
    key = code.strip().upper() if isinstance(code, str) else str(code)
    spec = _SPECS.get(key)
    if spec is None:
        raise UnknownTransformError(str(code), list(TRANSFORM_CODES))
    return spec


def params_model(code: str) -> type[TransformParams]:
    """The pydantic params model of a code (defaults are TIGAUG's)."""
    return transform_spec(code).params_model


def check_params(code: str, params: BaseModel | Mapping[str, Any] | None) -> TransformParams:
    """A code's parameters, checked by its params model.

    Raises:
        TransformParamsError: If they do not fit it.
        UnknownTransformError: For a code that is not one of the twelve.
    """
    return _resolve_params(transform_spec(code), params)


def describe_transforms() -> dict[str, str]:
    """One line per code, for ``--help`` texts."""
    return {c: f"{s.name}: {s.summary}" for c, s in _SPECS.items()}


def _resolve_params(spec: TransformSpec, params: BaseModel | Mapping[str, Any] | None) -> TransformParams:
    model = spec.params_model
    try:
        if params is None:
            return model()
        if isinstance(params, model):
            return params
        if isinstance(params, BaseModel):
            return model.model_validate(params.model_dump())
        return model.model_validate(dict(params))
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors())
        raise TransformParamsError(spec.code, reasons) from exc
    except (TypeError, ValueError) as exc:
        raise TransformParamsError(spec.code, str(exc)) from exc


def _check_image(image: np.ndarray, labels: TLImage) -> None:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        got = f"{type(image).__name__} {getattr(image, 'dtype', '')} {getattr(image, 'shape', '')}"
        raise ImageMismatchError(labels.image_id, f"expected an RGB uint8 H x W x 3 array, got {got}")
    if image.shape[:2] != (labels.height, labels.width):
        raise ImageMismatchError(
            labels.image_id,
            f"the array is {image.shape[1]}x{image.shape[0]} but the labels say {labels.width}x{labels.height}",
        )


def apply_transform(
    code: str,
    image: np.ndarray,
    labels: TLImage,
    *,
    seed: int,
    params: BaseModel | Mapping[str, Any] | None = None,
) -> TransformResult:
    """Apply one of TIGAUG's transformations to a labelled image.

    Args:
        code: One of :data:`TRANSFORM_CODES` (case-insensitive).
        image: RGB uint8 ``H x W x 3``, the size the labels give. It is not modified.
        labels: The image's lights.
        seed: Same seed, same output.
        params: The code's params model, a dict for it, or None for TIGAUG's defaults.

    Returns:
        The transformed image and labels, the parameters used, notes on skipped lights, and the
        changes τ needs (:func:`transform_detections`).

    Raises:
        UnknownTransformError: Unknown code.
        TransformParamsError: Parameters that do not validate.
        ImageMismatchError: Not an RGB uint8 array of the labels' size.
        BoxOutsideImageError: A labelled box outside the image.
    """
    spec = transform_spec(code)
    resolved = _resolve_params(spec, params)
    _check_image(image, labels)
    labels.check_boxes()
    inside = labels.model_copy(
        update={"boxes": [b.clipped(labels.width, labels.height) or b for b in labels.boxes]}, deep=True
    )
    out, outcome = spec.run(np.ascontiguousarray(image), inside, int(seed), resolved)
    if out.shape != image.shape or out.dtype != np.uint8:  # a bug, not bad input
        raise AssertionError(f"{spec.code} returned {out.dtype} {out.shape} for {image.dtype} {image.shape}")
    final = [b.clipped(labels.width, labels.height) or b for b in outcome.labels.boxes]
    changed = (
        list(range(len(inside.boxes))) if outcome.affine is not None else sorted({c.source for c in outcome.changes})
    )
    return TransformResult(
        code=spec.code,
        seed=int(seed),
        image=out,
        labels=outcome.labels.model_copy(update={"boxes": final}),
        original=inside,
        params=resolved.model_dump(mode="json"),
        sampled=outcome.sampled,
        notes=outcome.notes,
        changed=changed,
        changes=outcome.changes,
        affine=outcome.affine,
    )


def box_iou(a: TLBox, b: TLBox) -> float:
    """Intersection over union of two boxes."""
    iw = min(a.x2, b.x2) - max(a.x1, b.x1)
    ih = min(a.y2, b.y2) - max(a.y1, b.y1)
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return float(inter / (a.area + b.area - inter))


_SWAP: dict[str, Literal["red", "green"]] = {"red": "green", "green": "red"}


def _rotate_about(box: TLBox, centre: tuple[float, float], turns: int) -> TLBox:
    """The box turned by quarter turns (+1 counter-clockwise as seen, y pointing down) about ``centre``."""
    rx, ry = box.cx - centre[0], box.cy - centre[1]
    w, h = box.width, box.height
    for _ in range(turns % 4):  # counter-clockwise steps; -1 is three of them
        rx, ry = ry, -rx
        w, h = h, w
    cx, cy = centre[0] + rx, centre[1] + ry
    return box.model_copy(update={"x1": cx - w / 2, "y1": cy - h / 2, "x2": cx + w / 2, "y2": cy + h / 2})


def _apply_change(det: TLBox, change: LightChange) -> TLBox:
    if change.kind == "recolour":
        update: dict[str, Any] = {}
        if det.state in _SWAP:
            update["state"] = _SWAP[det.state]
        if change.mirror == "horizontal" and det.arrow in ("left", "right"):
            update["arrow"] = "right" if det.arrow == "left" else "left"
        return det.model_copy(update=update)
    if change.kind in ("move", "copy"):
        return det.model_copy(
            update={
                "x1": det.x1 + change.dx,
                "x2": det.x2 + change.dx,
                "y1": det.y1 + change.dy,
                "y2": det.y2 + change.dy,
            }
        )
    assert change.centre is not None
    return _rotate_about(det, change.centre, change.quarter_turns)


def transform_detections(
    result: TransformResult, detections: list[TLBox], *, iou_threshold: float = 0.5
) -> list[TLBox]:
    """TIGAUG's τ applied to detections made on the original image (the expected detections on τ(i)).

    * RN SW FG LF OE UE MB (Eq. 1): unchanged.
    * SC: every detection follows the scale map (``x' = sx * x + tx``).
    * CC MP AD RT (Eq. 2): a detection is matched to the original light it overlaps most (IoU >=
      ``iou_threshold``) and gets that light's change: red and green swapped (CC), the offset (MP), the
      quarter turn about the light's centre (RT), and for AD the detection stays and a copy is added at
      each copy's offset. Unmatched detections, and those matched to a light that was not changed, stay.

    Results are cut to the image; boxes left with nothing inside it are dropped.
    """
    spec = transform_spec(result.code)
    w, h = result.labels.width, result.labels.height
    out: list[TLBox] = []
    if not spec.changes_labels:
        mapped = [d.model_copy() for d in detections]
    elif result.affine is not None:
        mapped = [result.affine.apply(d) for d in detections]
    else:
        by_source: dict[int, list[LightChange]] = {}
        for c in result.changes:
            by_source.setdefault(c.source, []).append(c)
        mapped = []
        for det in detections:
            ious = [box_iou(det, g) for g in result.original.boxes]
            best = int(np.argmax(ious)) if ious else -1
            if best < 0 or ious[best] < iou_threshold or best not in by_source:
                mapped.append(det.model_copy())
                continue
            changes = by_source[best]
            if all(c.kind == "copy" for c in changes):
                mapped.append(det.model_copy())
            mapped.extend(_apply_change(det, c) for c in changes)
    for d in mapped:
        clipped = d.clipped(w, h)
        if clipped is not None:
            out.append(clipped)
    return out
