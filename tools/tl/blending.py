"""Inpainting and Poisson blending on local crops: how TIGAUG removes a light and pastes one.

TIGAUG fills the place a light leaves with image inpainting and pastes a light with Poisson blending
(Pérez et al. 2003), both through OpenCV (``cv2.inpaint``, ``cv2.seamlessClone``). Both only need the
neighbourhood of the light, so each call works on a crop a little larger than the box and writes it
back: a 1280x720 image costs what a 100x150 crop costs.

Coordinates are integer pixels ``(x1, y1, x2, y2)`` with exclusive ends (numpy slicing).
"""

from __future__ import annotations

import numpy as np

__all__ = ["POISSON_MARGIN", "IntBox", "boxes_overlap", "cut_patch", "inpaint_boxes", "poisson_paste"]

POISSON_MARGIN = 5
"""Smallest margin around a light for Poisson pasting: a boundary ring, OpenCV's 3-pixel mask erosion, and one
pixel of the light's own surroundings, so the edge between housing and background keeps its contrast."""

IntBox = tuple[int, int, int, int]


def boxes_overlap(a: IntBox, b: IntBox, gap: int = 0) -> bool:
    """Whether two boxes overlap or come closer than ``gap`` pixels."""
    return not (a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1])


def cut_patch(image: np.ndarray, box: IntBox, margin: int) -> tuple[np.ndarray, np.ndarray]:
    """A copy of ``box`` grown by ``margin`` on every side, and where that copy lies inside the image.

    Pixels beyond the image edge are zero and marked invalid: :func:`poisson_paste` gives them the
    destination's values, so a light cut at the edge meets its new background with a clean edge.
    """
    h, w = image.shape[:2]
    x1, y1, x2, y2 = box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin
    cx1, cy1, cx2, cy2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    patch = np.zeros((y2 - y1, x2 - x1, 3), dtype=image.dtype)
    valid = np.zeros((y2 - y1, x2 - x1), dtype=bool)
    patch[cy1 - y1 : cy2 - y1, cx1 - x1 : cx2 - x1] = image[cy1:cy2, cx1:cx2]
    valid[cy1 - y1 : cy2 - y1, cx1 - x1 : cx2 - x1] = True
    return patch, valid


def inpaint_boxes(image: np.ndarray, boxes: list[IntBox], *, radius: int = 3, grow: int = 1) -> None:
    """Fill every box from its surroundings with ``cv2.inpaint`` (Telea), in place.

    Each box is inpainted on a crop around it; the mask of that crop holds every box to be removed that
    reaches into it, so neighbouring lights never leak into each other's fill.

    Args:
        image: RGB uint8, changed in place.
        boxes: Regions to remove.
        radius: Inpainting neighbourhood radius in pixels.
        grow: Pixels added around each box (removes the antialiased rim of the light too).
    """
    import cv2

    h, w = image.shape[:2]
    grown = [(max(0, x1 - grow), max(0, y1 - grow), min(w, x2 + grow), min(h, y2 + grow)) for x1, y1, x2, y2 in boxes]
    for x1, y1, x2, y2 in grown:
        pad = max(x2 - x1, y2 - y1) // 2 + radius + 4
        cx1, cy1, cx2, cy2 = max(0, x1 - pad), max(0, y1 - pad), min(w, x2 + pad), min(h, y2 + pad)
        mask = np.zeros((cy2 - cy1, cx2 - cx1), dtype=np.uint8)
        for bx1, by1, bx2, by2 in grown:
            if boxes_overlap((bx1, by1, bx2, by2), (cx1, cy1, cx2, cy2)):
                mask[max(by1, cy1) - cy1 : min(by2, cy2) - cy1, max(bx1, cx1) - cx1 : min(bx2, cx2) - cx1] = 255
        crop = np.ascontiguousarray(image[cy1:cy2, cx1:cx2])
        image[cy1:cy2, cx1:cx2] = cv2.inpaint(crop, mask, radius, cv2.INPAINT_TELEA)


def poisson_paste(
    image: np.ndarray,
    patch: np.ndarray,
    x0: int,
    y0: int,
    valid: np.ndarray | None = None,
    *,
    keep_inside: int | None = None,
) -> None:
    """Paste ``patch`` with its top-left pixel at ``(x0, y0)`` by Poisson blending (``cv2.seamlessClone``).

    The patch's outer ring is the boundary (it takes the destination's values). OpenCV erodes the clone
    mask by 3 pixels before it takes the patch's gradients, so only what lies more than
    :data:`POISSON_MARGIN` - 1 pixels inside the patch keeps the patch's look: callers cut the light with
    at least that margin. Parts of the patch beyond the image edge are blended against a mirrored border
    and dropped, so lights at the edge can be pasted too. Pixels of the patch marked invalid (cut from
    beyond the source image's edge) take the destination's values.

    With ``keep_inside=m`` the patch's pixels more than ``m`` pixels inside its edge (the light itself,
    when it was cut with margin ``m``) are put back as they were after blending: Poisson blending
    shifts the whole patch towards its new surroundings' levels, which over a high-contrast background
    (a horizon, a tree) darkens or lightens part of the housing; this keeps the light as it looked and
    lets the blend act on the margin around it.
    """
    import cv2

    ph, pw = patch.shape[:2]
    h, w = image.shape[:2]
    pad = 2
    x1, y1, x2, y2 = x0 - pad, y0 - pad, x0 + pw + pad, y0 + ph + pad
    cx1, cy1, cx2, cy2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if cx2 <= cx1 or cy2 <= cy1:
        raise ValueError(f"patch {pw}x{ph} at ({x0}, {y0}) lies outside the {w}x{h} image")
    dst = np.ascontiguousarray(image[cy1:cy2, cx1:cx2])
    clipped = (cx1, cy1, cx2, cy2) != (x1, y1, x2, y2)
    if clipped:
        dst = cv2.copyMakeBorder(dst, cy1 - y1, y2 - cy2, cx1 - x1, x2 - cx2, cv2.BORDER_REFLECT_101)
    region = dst[pad : pad + ph, pad : pad + pw]  # a view: where the patch goes
    patch = np.ascontiguousarray(patch)
    if valid is not None and not valid.all():
        patch = patch.copy()
        patch[~valid] = region[~valid]
    if clipped:
        # Beyond the edge the boundary takes the patch's own values, so nothing there pulls the light
        # towards another level; only the in-image boundary blends it with its new surroundings.
        inside = np.zeros(dst.shape[:2], dtype=bool)
        inside[cy1 - y1 : cy2 - y1, cx1 - x1 : cx2 - x1] = True
        outside = ~inside[pad : pad + ph, pad : pad + pw]
        region[outside] = patch[outside]
    mask = np.zeros((ph, pw), dtype=np.uint8)
    mask[1:-1, 1:-1] = 255
    # seamlessClone centres the mask's bounding rectangle (x 1..pw-2) on ``centre``, rounding down
    # as OpenCV does (``p - size / 2``).
    centre = (pad + 1 + (pw - 2) // 2, pad + 1 + (ph - 2) // 2)
    blended = cv2.seamlessClone(patch, dst, mask, centre, cv2.NORMAL_CLONE)
    if keep_inside is not None and 0 < 2 * keep_inside < min(ph, pw):
        k = keep_inside
        inner = blended[pad + k : pad + ph - k, pad + k : pad + pw - k]
        src = patch[k : ph - k, k : pw - k]
        if valid is None:
            inner[...] = src
        else:
            ok = valid[k : ph - k, k : pw - k]
            inner[ok] = src[ok]
    image[cy1:cy2, cx1:cx2] = blended[cy1 - y1 : cy1 - y1 + (cy2 - cy1), cx1 - x1 : cx1 - x1 + (cx2 - cx1)]
