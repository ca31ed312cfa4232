"""Reading and writing image files as RGB ``uint8`` arrays (OpenCV loaded on first use)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tools.tl.errors import UnreadableImageError

__all__ = ["read_image", "write_image"]


def read_image(path: Path | str, *, image_id: str | None = None) -> np.ndarray:
    """Read an image file as RGB ``uint8``.

    Raises:
        UnreadableImageError: Missing file, not an image, or not 8-bit colour/grey.
    """
    import cv2

    p = Path(path)
    name = image_id or p.name
    if not p.is_file():
        raise UnreadableImageError(name, f"no such file: {p}")
    data = np.fromfile(str(p), dtype=np.uint8)
    img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if img is None:
        raise UnreadableImageError(name, f"not a readable image: {p}")
    return np.ascontiguousarray(img[:, :, ::-1])


def write_image(path: Path | str, image: np.ndarray) -> Path:
    """Write an RGB ``uint8`` image; the extension picks the codec (``.png``, ``.jpg``)."""
    import cv2

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    ok, buf = cv2.imencode(p.suffix or ".png", np.ascontiguousarray(image[:, :, ::-1]))
    if not ok:
        raise UnreadableImageError(p.name, f"could not encode as {p.suffix}")
    buf.tofile(str(p))
    return p
