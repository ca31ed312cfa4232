"""TIGAUG's traffic-light transformations CC, MP, AD, RT and SC, each acting on the lights, not the image.

TIGAUG (Guo et al., "Automatically Testing Traffic Light Detection in ADS"; TigAug, arXiv 2507.05932)
changes the lights themselves and transforms their labels with them. The box formulas used here, with
a light ``(x1, y1, x2, y2)`` of width ``w``, height ``h`` and centre ``(cx, cy)`` in a ``W x H`` image:

* **CC** (change colour): the box stays; the state maps red -> green, green -> red. Lit pixels change
  hue inside the box and the housing is flipped (vertical housings top to bottom, horizontal ones left
  to right) so the red bulb stays on top or on the left: a lit red top bulb becomes a lit green bottom
  bulb. Yellow and off lights have no counterpart and are left alone (a note says so).
* **MP** (move): ``x' = x + d`` with ``d = +-round(w)``, one box width to the left or right (``y``
  unchanged). The old place is inpainted, the light is pasted by Poisson blending.
* **AD** (add): ``k`` of the ``n`` lights, ``1 <= k <= max(1, n // 2)``, are copied to free places
  ``(x + dx, y + dy)`` by Poisson blending; each copy is a new box with the source's state.
* **RT** (rotate): each light turns 90 degrees about its own centre; its box keeps the centre and swaps
  width and height: ``(cx - h/2, cy - w/2, cx + h/2, cy + w/2)``. The old place is inpainted first.
  By default vertical housings turn counter-clockwise and horizontal ones clockwise, so the red bulb
  ends on the left or on top (TIGAUG turns them by 90 degrees; the sense is our choice).
* **SC** (scale): the canvas is expanded by ``1 / s`` around the image, the new border is filled by
  inpainting, and the whole is resized back to ``W x H``. Boxes shrink towards the centre:
  ``x' = s * x + (1 - s) * W / 2``, ``y' = s * y + (1 - s) * H / 2`` (exactly, ``x' = sx * x + ox`` with
  the integer sizes actually used, recorded as a :class:`~tools.tl.transform_base.BoxAffine`).

Pasting (MP, AD, RT). The light is cut with a margin of at least
:data:`~tools.tl.blending.POISSON_MARGIN` pixels (``margin`` x its short side) and pasted with
``cv2.seamlessClone``. Poisson blending shifts the whole patch towards the levels of its new
surroundings, which over a horizon or a tree darkens part of a housing; by default
(``keep_light_pixels``) the light's own pixels inside its box are then put back, so the blend acts on the
margin and the light looks as it did (``keep_light_pixels=False`` gives plain seamlessClone). Integer
offsets keep the pixels exact; for RT with an odd ``w - h`` the turned pixels sit half a pixel up-left
of the exact box, whose corners they start at ``floor``. Copies go to the free place (no overlap, a
margin's gap) whose surroundings look most like the source's, among candidates near the source.

We could not retrieve the paper's equations verbatim here; the formulas above are the geometry of
each operation as TIGAUG describes it, and the label follows the pixels (tests check both). Lights
smaller than ``min_size``, overlapping another light, or whose moved/turned box would leave the image or
cover another light are skipped with a note; lights at the image edge are handled (the missing margin
takes the destination's pixels).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from tools.tl.blending import POISSON_MARGIN, IntBox, boxes_overlap, cut_patch, inpaint_boxes, poisson_paste
from tools.tl.models import TLBox, TLImage
from tools.tl.transform_base import (
    BoxAffine,
    LightChange,
    LightOpOutcome,
    TransformParams,
    check_range,
    make_rng,
    uniform,
)

__all__ = [
    "AddParams",
    "ChangeColourParams",
    "LightOpParams",
    "MoveParams",
    "RotateParams",
    "ScaleParams",
    "add_lights",
    "change_colour",
    "int_box",
    "move_lights",
    "rotate_lights",
    "rotated_box",
    "scale_image",
]

_NONE_NOTE = "no traffic lights in the image; nothing was transformed"


class LightOpParams(TransformParams):
    """Which lights a light operation touches."""

    max_lights: int | None = Field(default=None, ge=1, description="At most this many lights (None: every one).")
    min_size: int = Field(default=4, ge=1, description="Lights with a shorter side (pixels) are skipped.")
    margin: float = Field(default=0.25, ge=0.0, le=2.0, description="Poisson patch margin, fraction of the short side.")
    keep_light_pixels: bool = Field(
        default=True,
        description="Blend only the margin and keep the light's own pixels (False: plain seamlessClone of the patch).",
    )


class ChangeColourParams(LightOpParams):
    """CC: which pixels count as lit red or green (OpenCV hue, 0-179) and where their hue goes."""

    min_size: int = Field(default=2, ge=1, description="Lights with a shorter side (pixels) are skipped.")
    red_hue_max: int = Field(default=12, ge=0, le=179, description="Red is hue <= this ...")
    red_hue_min: int = Field(default=160, ge=0, le=179, description="... or hue >= this.")
    green_hue: tuple[int, int] = Field(default=(38, 100), description="Green (incl. the bluish green of LEDs).")
    min_saturation: int = Field(default=60, ge=0, le=255, description="Pixels less saturated are left as they are.")
    min_value: int = Field(default=60, ge=0, le=255, description="Pixels darker than this are left as they are.")
    red_target: int = Field(default=0, ge=0, le=179, description="Mean hue given to recoloured green pixels.")
    green_target: int = Field(default=80, ge=0, le=179, description="Mean hue given to recoloured red pixels.")
    flip: bool = Field(default=True, description="Flip the housing so the red bulb stays on top / on the left.")

    @field_validator("green_hue")
    @classmethod
    def _green(cls, v: tuple[int, int]) -> tuple[int, int]:
        check_range(v, "green_hue", lo=0, hi=179)
        return v


class MoveParams(LightOpParams):
    """MP: the direction of the one-box-width move."""

    direction: Literal["random", "left", "right"] = Field(
        default="random", description="random tries a random side first, then the other."
    )


class AddParams(LightOpParams):
    """AD: where copies may go."""

    offset: tuple[float, float] = Field(default=(1.5, 6.0), description="|dx| in box widths, near the source first.")
    jitter: float = Field(default=1.0, ge=0.0, description="|dy| up to this many box heights.")
    tries: int = Field(default=40, ge=1, description="Draws near the source, then as many anywhere.")
    candidates: int = Field(default=8, ge=1, description="Free places compared; the best-matching background wins.")

    @field_validator("offset")
    @classmethod
    def _offset(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "offset", lo=1.0, hi=100.0)
        return v


class RotateParams(LightOpParams):
    """RT: the sense of the quarter turn."""

    direction: Literal["keep_red_first", "ccw", "cw"] = Field(
        default="keep_red_first",
        description="keep_red_first: vertical turn counter-clockwise (red top -> left), horizontal clockwise.",
    )


def int_box(box: TLBox, width: int, height: int) -> IntBox:
    """The box rounded outward to whole pixels and cut to the image."""
    x1, y1, x2, y2 = box.int_xyxy()
    return max(0, x1), max(0, y1), min(width, x2), min(height, y2)


def _short_side(b: IntBox) -> int:
    return min(b[2] - b[0], b[3] - b[1])


def _choose(rng: np.random.Generator, eligible: list[int], limit: int | None) -> list[int]:
    if limit is None or limit >= len(eligible):
        return list(eligible)
    return sorted(int(i) for i in rng.choice(eligible, size=limit, replace=False))


def _eligible(labels: TLImage, params: LightOpParams, notes: list[str]) -> tuple[list[int], list[IntBox]]:
    """Indices of lights big enough to transform, and every light's pixel box."""
    boxes = [int_box(b, labels.width, labels.height) for b in labels.boxes]
    ok = []
    for i, b in enumerate(boxes):
        if _short_side(b) < params.min_size:
            notes.append(f"light {i}: skipped, smaller than {params.min_size} px")
        else:
            ok.append(i)
    return ok, boxes


def _margin(b: IntBox, params: LightOpParams) -> int:
    return max(POISSON_MARGIN, round(params.margin * _short_side(b)))


def _keep(params: LightOpParams, margin: int) -> int | None:
    return margin if params.keep_light_pixels else None


def _inside(b: IntBox, width: int, height: int) -> bool:
    return b[0] >= 0 and b[1] >= 0 and b[2] <= width and b[3] <= height


def _shifted(b: IntBox, dx: int, dy: int) -> IntBox:
    return b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy


def _touches_other(i: int, b: IntBox, others: list[IntBox], gap: int) -> int | None:
    """The first other light that ``b`` overlaps or comes within ``gap`` pixels of."""
    for j, o in enumerate(others):
        if j != i and boxes_overlap(b, o, gap):
            return j
    return None


def _no_lights(labels: TLImage) -> LightOpOutcome:
    return LightOpOutcome(labels=labels.model_copy(deep=True), notes=[_NONE_NOTE])


# ---------------------------------------------------------------- CC


def _swap_hues(crop: np.ndarray, params: ChangeColourParams) -> tuple[np.ndarray, int]:
    """Red lit pixels take the green hue and green ones the red hue (each class keeps its hue spread)."""
    import cv2

    hsv = cv2.cvtColor(crop, cv2.COLOR_RGB2HSV)
    hue = hsv[..., 0].astype(np.int32)
    lit = (hsv[..., 1] >= params.min_saturation) & (hsv[..., 2] >= params.min_value)
    red = lit & ((hue <= params.red_hue_max) | (hue >= params.red_hue_min))
    green = lit & (hue >= params.green_hue[0]) & (hue <= params.green_hue[1])
    new = hue.copy()
    if red.any():
        signed = np.where(hue > 90, hue - 180, hue)  # red straddles 0: work in -90..90
        new[red] = params.green_target + signed[red] - round(float(signed[red].mean()))
    if green.any():
        new[green] = params.red_target + hue[green] - round(float(hue[green].mean()))
    hsv[..., 0] = np.mod(new, 180).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB), int(red.sum() + green.sum())


def change_colour(
    image: np.ndarray, labels: TLImage, *, seed: int, params: ChangeColourParams
) -> tuple[np.ndarray, LightOpOutcome]:
    """CC: swap red and green lights (hue and housing flip); yellow and off lights stay, with a note."""
    if not labels.boxes:
        return image.copy(), _no_lights(labels)
    rng = make_rng(seed, "CC")
    notes: list[str] = []
    ok, boxes = _eligible(labels, params, notes)
    candidates = []
    for i in ok:
        b = labels.boxes[i]
        if b.state not in ("red", "green"):
            notes.append(f"light {i}: {b.state} light left alone (CC swaps red and green only)")
        elif params.flip and b.orientation == "vertical" and b.arrow == "straight":
            notes.append(f"light {i}: skipped, flipping a straight-arrow light upside down would point it backwards")
        else:
            candidates.append(i)
    if not candidates:
        notes.append("no red or green light to recolour; nothing was transformed")
    out = image.copy()
    new_boxes = list(labels.boxes)
    changes: list[LightChange] = []
    for i in _choose(rng, candidates, params.max_lights):
        b = labels.boxes[i]
        x1, y1, x2, y2 = boxes[i]
        crop, n_lit = _swap_hues(np.ascontiguousarray(out[y1:y2, x1:x2]), params)
        if n_lit == 0:
            notes.append(f"light {i}: no lit red or green pixels found; only the label and housing changed")
        mirror: Literal["vertical", "horizontal"] | None = None
        arrow = b.arrow
        if params.flip:
            mirror = b.orientation
            crop = crop[::-1] if mirror == "vertical" else crop[:, ::-1]
            if mirror == "horizontal" and arrow in ("left", "right"):
                arrow = "right" if arrow == "left" else "left"
        out[y1:y2, x1:x2] = crop
        new_boxes[i] = b.model_copy(update={"state": "green" if b.state == "red" else "red", "arrow": arrow})
        changes.append(LightChange(source=i, target=i, kind="recolour", mirror=mirror))
    new_labels = labels.model_copy(update={"boxes": new_boxes}, deep=True)
    return out, LightOpOutcome(labels=new_labels, changes=changes, notes=notes)


# ---------------------------------------------------------------- MP


def move_lights(
    image: np.ndarray, labels: TLImage, *, seed: int, params: MoveParams
) -> tuple[np.ndarray, LightOpOutcome]:
    """MP: move each light one box width left or right; inpaint where it was, Poisson-paste it."""
    if not labels.boxes:
        return image.copy(), _no_lights(labels)
    rng = make_rng(seed, "MP")
    notes: list[str] = []
    ok, boxes = _eligible(labels, params, notes)
    width, height = labels.width, labels.height
    final = list(boxes)
    plans: list[tuple[int, int, int]] = []  # (light, dx, margin)
    for i in _choose(rng, ok, params.max_lights):
        src = boxes[i]
        m = _margin(src, params)
        blocker = _touches_other(i, src, boxes, 0)
        if blocker is not None:
            notes.append(f"light {i}: not moved, it overlaps light {blocker}")
            continue
        d = max(1, round(labels.boxes[i].width))
        if params.direction == "left":
            signs = [-1]
        elif params.direction == "right":
            signs = [1]
        else:
            signs = [1, -1] if rng.random() < 0.5 else [-1, 1]
        for sign in signs:
            dst = _shifted(src, sign * d, 0)
            if not _inside(dst, width, height) or _touches_other(i, dst, final, m) is not None:
                continue
            final[i] = dst
            plans.append((i, sign * d, m))
            break
        else:
            notes.append(f"light {i}: not moved, no room one box width to the {' or '.join(_side(s) for s in signs)}")
    out = image.copy()
    patches = [cut_patch(image, boxes[i], mm) for i, _, mm in plans]
    inpaint_boxes(out, [boxes[i] for i, _, _ in plans])
    new_boxes = list(labels.boxes)
    changes = []
    for (i, d, mm), (patch, valid) in zip(plans, patches, strict=True):
        poisson_paste(out, patch, boxes[i][0] + d - mm, boxes[i][1] - mm, valid, keep_inside=_keep(params, mm))
        b = labels.boxes[i]
        new_boxes[i] = b.model_copy(update={"x1": b.x1 + d, "x2": b.x2 + d})
        changes.append(LightChange(source=i, target=i, kind="move", dx=float(d)))
    new_labels = labels.model_copy(update={"boxes": new_boxes}, deep=True)
    return out, LightOpOutcome(
        labels=new_labels, changes=changes, notes=notes, sampled={"moves": [[i, d] for i, d, _ in plans]}
    )


def _side(sign: int) -> str:
    return "right" if sign > 0 else "left"


# ---------------------------------------------------------------- AD


def _ring_mean(image: np.ndarray, box: IntBox, m: int) -> np.ndarray:
    """Mean colour of the band of width ``m`` around ``box`` (the part inside the image)."""
    h, w = image.shape[:2]
    x1, y1, x2, y2 = max(0, box[0] - m), max(0, box[1] - m), min(w, box[2] + m), min(h, box[3] + m)
    outer = image[y1:y2, x1:x2].reshape(-1, 3).astype(np.float64)
    inner = image[box[1] : box[3], box[0] : box[2]].reshape(-1, 3).astype(np.float64)
    n = len(outer) - len(inner)
    return (outer.sum(axis=0) - inner.sum(axis=0)) / max(1, n)


def _free_place(
    rng: np.random.Generator,
    image: np.ndarray,
    src: IntBox,
    taken: list[IntBox],
    m: int,
    params: AddParams,
) -> IntBox | None:
    """A free place for a copy of ``src``.

    Candidates are drawn near the source first (same scale and height in the scene), then anywhere;
    of the first ``params.candidates`` free ones, the one whose surroundings look most like the source's
    wins, so Poisson blending has little colour to shift (a light pasted half over the road would come
    out half dark).
    """
    height, width = image.shape[:2]
    w, h = src[2] - src[0], src[3] - src[1]
    found: list[IntBox] = []
    for attempt in range(2 * params.tries):
        if attempt < params.tries:
            dx = round(float(rng.choice([-1, 1])) * uniform(rng, params.offset) * w)
            dy = round(uniform(rng, (-params.jitter, params.jitter)) * h)
        elif found:
            break
        else:
            dx = int(rng.integers(0, max(1, width - w + 1))) - src[0]
            dy = int(rng.integers(0, max(1, height - h + 1))) - src[1]
        cand = _shifted(src, dx, dy)
        if not _inside(cand, width, height) or any(boxes_overlap(cand, t, m) for t in taken):
            continue
        found.append(cand)
        if len(found) >= params.candidates:
            break
    if not found:
        return None
    ring = _ring_mean(image, src, m)
    return min(found, key=lambda c: float(np.abs(_ring_mean(image, c, m) - ring).sum()))


def add_lights(
    image: np.ndarray, labels: TLImage, *, seed: int, params: AddParams
) -> tuple[np.ndarray, LightOpOutcome]:
    """AD: copy 1 to n/2 of the n lights to free places by Poisson blending; copies keep the state."""
    if not labels.boxes:
        return image.copy(), _no_lights(labels)
    rng = make_rng(seed, "AD")
    notes: list[str] = []
    ok, boxes = _eligible(labels, params, notes)
    width, height = labels.width, labels.height
    n = len(labels.boxes)
    k = int(rng.integers(1, max(1, n // 2) + 1))
    if params.max_lights is not None:
        k = min(k, params.max_lights)
    sources = sorted(int(i) for i in rng.choice(ok, size=min(k, len(ok)), replace=False)) if ok else []
    if not sources:
        notes.append("no light large enough to copy; nothing was added")
    out = image.copy()
    taken = list(boxes)
    new_boxes = list(labels.boxes)
    changes = []
    for i in sources:
        src = boxes[i]
        m = _margin(src, params)
        dst = _free_place(rng, out, src, taken, m, params)
        if dst is None:
            notes.append(f"light {i}: not copied, no free place found")
            continue
        dx, dy = dst[0] - src[0], dst[1] - src[1]
        patch, valid = cut_patch(image, src, m)
        poisson_paste(out, patch, dst[0] - m, dst[1] - m, valid, keep_inside=_keep(params, m))
        taken.append(dst)
        b = labels.boxes[i]
        copy = b.model_copy(update={"x1": b.x1 + dx, "x2": b.x2 + dx, "y1": b.y1 + dy, "y2": b.y2 + dy})
        new_boxes.append(copy.clipped(width, height) or copy)
        changes.append(LightChange(source=i, target=len(new_boxes) - 1, kind="copy", dx=float(dx), dy=float(dy)))
    new_labels = labels.model_copy(update={"boxes": new_boxes}, deep=True)
    return out, LightOpOutcome(labels=new_labels, changes=changes, notes=notes, sampled={"copies_wanted": k})


# ---------------------------------------------------------------- RT


def rotated_box(box: TLBox) -> TLBox:
    """TIGAUG's rotated label: same centre, width and height swapped."""
    cx, cy, w, h = box.cx, box.cy, box.width, box.height
    return box.model_copy(update={"x1": cx - h / 2, "y1": cy - w / 2, "x2": cx + h / 2, "y2": cy + w / 2})


def rotate_lights(
    image: np.ndarray, labels: TLImage, *, seed: int, params: RotateParams
) -> tuple[np.ndarray, LightOpOutcome]:
    """RT: turn each light 90 degrees in its place; inpaint its old area, Poisson-paste the turned light."""
    if not labels.boxes:
        return image.copy(), _no_lights(labels)
    rng = make_rng(seed, "RT")
    notes: list[str] = []
    ok, boxes = _eligible(labels, params, notes)
    width, height = labels.width, labels.height
    final = list(boxes)
    plans: list[tuple[int, IntBox, int, int]] = []  # (light, new pixel box, margin, quarter turns)
    for i in _choose(rng, ok, params.max_lights):
        src = boxes[i]
        w, h = src[2] - src[0], src[3] - src[1]
        box = labels.boxes[i]
        if params.direction == "ccw":
            turns = 1
        elif params.direction == "cw":
            turns = -1
        else:
            turns = 1 if box.orientation == "vertical" else -1
        nx1, ny1 = src[0] + (w - h) // 2, src[1] + (h - w) // 2
        dst = (nx1, ny1, nx1 + h, ny1 + w)
        m = _margin(src, params)
        if not _inside(dst, width, height) or not rotated_box(box).inside(width, height, tol=0.0):
            notes.append(f"light {i}: not rotated, the turned light would leave the image")
            continue
        blocker = _touches_other(i, dst, final, m)
        if blocker is None:
            blocker = _touches_other(i, src, boxes, 0)
        if blocker is not None:
            notes.append(f"light {i}: not rotated, the turned light would cover light {blocker}")
            continue
        final[i] = dst
        plans.append((i, dst, m, turns))
    out = image.copy()
    patches = [cut_patch(image, boxes[i], mm) for i, _, mm, _ in plans]
    inpaint_boxes(out, [boxes[i] for i, _, _, _ in plans])
    new_boxes = list(labels.boxes)
    changes = []
    for (i, dst, mm, turns), (patch, valid) in zip(plans, patches, strict=True):
        turned, turned_valid = np.ascontiguousarray(np.rot90(patch, turns)), np.rot90(valid, turns)
        poisson_paste(out, turned, dst[0] - mm, dst[1] - mm, turned_valid, keep_inside=_keep(params, mm))
        b = labels.boxes[i]
        new_boxes[i] = rotated_box(b)
        changes.append(LightChange(source=i, target=i, kind="rotate", quarter_turns=turns, centre=(b.cx, b.cy)))
    new_labels = labels.model_copy(update={"boxes": new_boxes}, deep=True)
    return out, LightOpOutcome(labels=new_labels, changes=changes, notes=notes)


# ---------------------------------------------------------------- SC


class ScaleParams(TransformParams):
    """SC: the scale factor ``s`` (the canvas grows by ``1 / s``) and how the new border is filled."""

    factor: tuple[float, float] = Field(default=(0.7, 0.9), description="Scale factor s; boxes shrink by it.")
    fill_scale: float = Field(
        default=0.125, gt=0.0, le=1.0, description="The border is inpainted on a canvas this much smaller."
    )
    inpaint_radius: int = Field(default=3, ge=1, description="cv2.inpaint neighbourhood on the small canvas.")

    @field_validator("factor")
    @classmethod
    def _factor(cls, v: tuple[float, float]) -> tuple[float, float]:
        check_range(v, "factor", lo=0.05, hi=1.0)
        return v


def scale_image(
    image: np.ndarray, labels: TLImage, *, seed: int, params: ScaleParams
) -> tuple[np.ndarray, LightOpOutcome]:
    """SC: expand the canvas by ``1 / s``, inpaint the border, resize back; boxes follow exactly.

    Equivalent to expanding and resizing, done in the cheaper order: the image is resized to
    ``round(s * W) x round(s * H)`` (area interpolation) and put in the middle of a ``W x H`` canvas whose
    border is inpainted at ``fill_scale`` of the size (a border fill is smooth) and upsampled.
    """
    import cv2

    rng = make_rng(seed, "SC")
    height, width = image.shape[:2]
    s = uniform(rng, params.factor)
    nw, nh = max(1, round(width * s)), max(1, round(height * s))
    ox, oy = (width - nw) // 2, (height - nh) // 2
    affine = BoxAffine(sx=nw / width, sy=nh / height, tx=float(ox), ty=float(oy))
    inner = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
    if nw < width or nh < height:
        sw, sh = max(8, round(width * params.fill_scale)), max(8, round(height * params.fill_scale))
        fx, fy = sw / width, sh / height
        ix1, iy1 = int(np.ceil(ox * fx)), int(np.ceil(oy * fy))
        ix2, iy2 = max(ix1 + 1, int(np.floor((ox + nw) * fx))), max(iy1 + 1, int(np.floor((oy + nh) * fy)))
        small = np.zeros((sh, sw, 3), dtype=np.uint8)
        small[iy1:iy2, ix1:ix2] = cv2.resize(inner, (ix2 - ix1, iy2 - iy1), interpolation=cv2.INTER_AREA)
        mask = np.full((sh, sw), 255, dtype=np.uint8)
        mask[iy1:iy2, ix1:ix2] = 0
        filled = cv2.inpaint(small, mask, params.inpaint_radius, cv2.INPAINT_TELEA)
        out = cv2.resize(filled, (width, height), interpolation=cv2.INTER_LINEAR)
    else:
        out = np.empty_like(image)
    out[oy : oy + nh, ox : ox + nw] = inner
    new_boxes = []
    for b in labels.boxes:
        nb = affine.apply(b)
        new_boxes.append(nb.clipped(width, height) or nb)
    notes = [] if labels.boxes else ["no traffic lights in the image; only the image was scaled"]
    new_labels = labels.model_copy(update={"boxes": new_boxes}, deep=True)
    return out, LightOpOutcome(
        labels=new_labels,
        notes=notes,
        affine=affine,
        sampled={"factor": round(s, 5), "size": (nw, nh), "offset": (ox, oy)},
    )
