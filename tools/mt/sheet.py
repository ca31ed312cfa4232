"""A contact sheet of a driving case: its frames in a grid, each with the ego's speed and steering, its ground
truth boxes where the case has them, and the case's metadata on top."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tools.mt.models import CaseMetadata, EgoSample, FrameTruth

__all__ = ["contact_sheet"]

_KIND_RGB = {
    "traffic_light": (255, 60, 60),
    "stop_sign": (255, 60, 60),
    "pedestrian": (255, 200, 0),
    "child": (255, 200, 0),
    "wheelchair": (255, 200, 0),
    "cyclist": (0, 220, 255),
}


def contact_sheet(
    frames: Sequence[np.ndarray],
    ego: Sequence[EgoSample],
    *,
    truths: Sequence[FrameTruth] | None = None,
    metadata: CaseMetadata | None = None,
    title: str = "",
    columns: int = 5,
    tile_width: int = 320,
) -> np.ndarray:
    """An RGB image: a title band, then the frames in ``columns`` columns, each captioned with its ego data."""
    import cv2

    if not frames:
        raise ValueError("a contact sheet needs at least one frame")
    h0, w0 = frames[0].shape[:2]
    tw = tile_width
    th = max(8, round(h0 * tw / w0))
    caption = 18
    rows = math.ceil(len(frames) / columns)
    head = 44
    sheet = np.full((head + rows * (th + caption), columns * tw, 3), 24, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.putText(sheet, title[:110], (8, 18), font, 0.5, (240, 240, 240), 1, cv2.LINE_AA)
    if metadata is not None:
        meta = (
            f"time {metadata.time or 'unknown'} | weather {metadata.weather or 'unknown'} | road "
            f"{metadata.road_type or 'unknown'} | objects {', '.join(metadata.objects) or 'none stated'}"
        )
        cv2.putText(sheet, meta[:140], (8, 36), font, 0.42, (200, 200, 200), 1, cv2.LINE_AA)
    for i, frame in enumerate(frames):
        r, c = divmod(i, columns)
        x0, y0 = c * tw, head + r * (th + caption)
        tile = cv2.resize(frame, (tw, th), interpolation=cv2.INTER_AREA)
        tile = np.ascontiguousarray(tile)
        if truths is not None and i < len(truths):
            sx, sy = tw / w0, th / h0
            for box in truths[i].objects:
                colour = _KIND_RGB.get(box.kind, (255, 0, 255))
                p1 = (round(box.x1 * sx), round(box.y1 * sy))
                p2 = (round(box.x2 * sx), round(box.y2 * sy))
                cv2.rectangle(tile, p1, p2, colour, 1)
                label = box.kind + (f":{box.state}" if box.state else "")
                cv2.putText(tile, label, (p1[0], max(9, p1[1] - 2)), font, 0.3, colour, 1, cv2.LINE_AA)
        sheet[y0 : y0 + th, x0 : x0 + tw] = tile
        e = ego[i] if i < len(ego) else None
        text = f"#{i}  {e.speed_kmh:5.1f} km/h  steer {e.steering_rad:+.3f} rad" if e else f"#{i}"
        cv2.putText(sheet, text, (x0 + 4, y0 + th + 13), font, 0.42, (230, 230, 230), 1, cv2.LINE_AA)
    return sheet
