"""AutoMT's "adds" edits done classically: road users and obstacles pasted into the frames, anchored in the world.

People, cyclists, animals and side- or front-facing vehicles are Noto Emoji sprites (``tools/data/sprites``);
a vehicle seen from behind is drawn (body, rear window, tail lights, plate, wheels), since no sprite shows one.
A sprite is scaled by perspective to its real height, matched to the light where it stands, given a soft
shadow on the road and alpha-blended; composites (a guide-dog user, a flagger, a collision) are several parts.
A user folder of RGBA PNGs adds sprites by file name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["Part", "draw_parts", "load_sprite", "sprite_names", "user_sprites"]

_USER: dict[str, Path] = {}


def user_sprites(folder: Path) -> list[str]:
    """Register every ``*.png`` of a folder as a sprite named by its file stem; return the names."""
    names = []
    for png in sorted(Path(folder).glob("*.png")):
        _USER[png.stem] = png
        names.append(png.stem)
    load_sprite.cache_clear()
    return names


def sprite_names() -> list[str]:
    """Every sprite drivemt can paste (packaged and registered)."""
    packaged = [p.name[:-4] for p in resources.files("tools.data.sprites").iterdir() if p.name.endswith(".png")]
    return sorted(set(packaged) | set(_USER))


@functools.cache
def load_sprite(name: str) -> np.ndarray:
    """An RGBA sprite as float32 in [0, 1].

    Raises:
        KeyError: For an unknown sprite.
    """
    from PIL import Image

    if name in _USER:
        path: object = _USER[name]
        im = Image.open(path).convert("RGBA")  # type: ignore[arg-type]
    else:
        ref = resources.files("tools.data.sprites").joinpath(f"{name}.png")
        if not ref.is_file():
            raise KeyError(f"no sprite named {name!r}")
        with ref.open("rb") as fh:
            im = Image.open(fh).convert("RGBA")
            im.load()
    return np.asarray(im, dtype=np.float32) / 255.0


@dataclass(frozen=True)
class Part:
    """One piece of an added object, relative to the object's box: a sprite, or a drawn vehicle rear."""

    what: str
    """A sprite name, or ``rear:<rgb hex>`` / ``rear-braking:<rgb hex>`` for a vehicle seen from behind."""
    x0: float = 0.0
    x1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0
    flip: bool = False
    overlay: str | None = None
    """Drawn on top: ``vest`` (hi-vis), ``police`` (a cap band), ``cane``, ``beacon``, ``stop-paddle``, ``load``."""


def _paste(img: np.ndarray, sprite: np.ndarray, box: tuple[int, int, int, int], light: float) -> None:
    import cv2

    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    if w < 1 or h < 1:
        return
    s = cv2.resize(sprite, (w, h), interpolation=cv2.INTER_AREA if w < sprite.shape[1] else cv2.INTER_LINEAR)
    ix1, iy1, ix2, iy2 = max(0, x1), max(0, y1), min(img.shape[1], x2), min(img.shape[0], y2)
    if ix2 <= ix1 or iy2 <= iy1:
        return
    s = s[iy1 - y1 : iy2 - y1, ix1 - x1 : ix2 - x1]
    a = s[..., 3:4]
    rgb = s[..., :3] * 255.0 * light
    region = img[iy1:iy2, ix1:ix2].astype(np.float32)
    img[iy1:iy2, ix1:ix2] = np.clip(region * (1 - a) + rgb * a, 0, 255).astype(np.uint8)


def _rear(
    img: np.ndarray, box: tuple[int, int, int, int], colour: tuple[int, int, int], braking: bool, light: float
) -> None:
    import cv2

    x1, y1, x2, y2 = box
    w, h = max(1, x2 - x1), max(1, y2 - y1)
    body = tuple(int(min(255, c * light)) for c in colour)
    roof = tuple(int(min(255, c * light * 0.8)) for c in colour)
    cv2.rectangle(img, (x1, y1 + round(h * 0.42)), (x2, y2 - max(1, h // 9)), body, -1)
    cabin = np.array(
        [(x1 + w * 0.12, y1 + h * 0.44), (x2 - w * 0.12, y1 + h * 0.44), (x2 - w * 0.2, y1), (x1 + w * 0.2, y1)],
        np.int32,
    )
    cv2.fillConvexPoly(img, cabin, roof)
    glass = np.array(
        [
            (x1 + w * 0.17, y1 + h * 0.4),
            (x2 - w * 0.17, y1 + h * 0.4),
            (x2 - w * 0.24, y1 + h * 0.07),
            (x1 + w * 0.24, y1 + h * 0.07),
        ],
        np.int32,
    )
    cv2.fillConvexPoly(img, glass, (int(35 * light), int(45 * light), int(58 * light)))
    lw, lh = max(1, w // 6), max(1, h // 10)
    lamp = (255, 40, 30) if braking else (int(170 * light), 20, 20)
    for lx in (x1 + 1, x2 - lw - 1):
        cv2.rectangle(img, (lx, y1 + round(h * 0.52)), (lx + lw, y1 + round(h * 0.52) + lh), lamp, -1)
    pw = max(1, w // 4)
    cv2.rectangle(
        img,
        ((x1 + x2) // 2 - pw // 2, y1 + round(h * 0.66)),
        ((x1 + x2) // 2 + pw // 2, y1 + round(h * 0.66) + lh),
        (225, 225, 220),
        -1,
    )
    for wx in (x1, x2 - max(1, w // 7)):
        cv2.rectangle(img, (wx, y2 - max(1, h // 8)), (wx + max(1, w // 7), y2), (20, 20, 22), -1)


def _overlay(img: np.ndarray, kind: str, box: tuple[int, int, int, int]) -> None:
    import cv2

    x1, y1, x2, y2 = box
    w, h = max(1, x2 - x1), max(1, y2 - y1)
    if kind == "vest":
        cv2.rectangle(img, (x1 + w // 4, y1 + round(h * 0.28)), (x2 - w // 4, y1 + round(h * 0.55)), (240, 230, 40), -1)
        cv2.line(
            img,
            (x1 + w // 4, y1 + round(h * 0.45)),
            (x2 - w // 4, y1 + round(h * 0.45)),
            (230, 230, 230),
            max(1, h // 40),
        )
    elif kind == "police":
        cv2.rectangle(img, (x1 + w // 4, y1 + round(h * 0.28)), (x2 - w // 4, y1 + round(h * 0.55)), (30, 45, 110), -1)
        cv2.rectangle(img, (x1 + w // 3, y1), (x2 - w // 3, y1 + max(1, h // 14)), (30, 45, 110), -1)
    elif kind == "cane":
        cv2.line(img, (x2 - w // 5, y1 + h // 2), (x2, y2), (110, 80, 50), max(1, w // 10))
    elif kind == "stop-paddle":
        r = max(2, w // 3)
        cv2.line(img, (x2, y1 + h // 3), (x2 + r, y1 + h // 5), (90, 90, 90), max(1, r // 4))
        cv2.circle(img, (x2 + r, y1 + h // 5 - r), r, (200, 25, 30), -1)
    elif kind == "beacon":
        cv2.circle(img, ((x1 + x2) // 2, y1 + max(1, h // 12)), max(2, w // 12), (255, 150, 20), -1)
    elif kind == "load":
        cv2.line(img, (x1 - w // 5, y1 + h // 3), (x2, y1 + h // 3), (150, 110, 60), max(2, h // 12))
        cv2.rectangle(
            img, (x1 - w // 5, y1 + h // 3 - h // 10), (x1 - w // 5 + max(2, w // 10), y1 + h // 3), (230, 40, 30), -1
        )


def draw_parts(
    img: np.ndarray, parts: tuple[Part, ...], box: tuple[float, float, float, float], *, light: float = 1.0
) -> None:
    """Draw an object made of ``parts`` into ``box`` (x1, y1, x2, y2), with a soft shadow on the road."""
    import cv2

    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    if w < 1 or h < 1:
        return
    shadow = img.copy()
    cv2.ellipse(
        shadow,
        (round((x1 + x2) / 2), round(y2)),
        (max(1, round(w * 0.55)), max(1, round(h * 0.06))),
        0,
        0,
        360,
        (15, 15, 18),
        -1,
    )
    img[:] = cv2.addWeighted(img, 0.6, shadow, 0.4, 0)
    for part in parts:
        pb = (
            round(x1 + w * part.x0),
            round(y1 + h * part.y0),
            round(x1 + w * part.x1),
            round(y1 + h * part.y1),
        )
        if part.what.startswith("rear"):
            colour = tuple(int(part.what.split(":")[1][k : k + 2], 16) for k in (0, 2, 4))
            _rear(img, pb, colour, part.what.startswith("rear-braking"), light)  # type: ignore[arg-type]
        else:
            sprite = load_sprite(part.what)
            if part.flip:
                sprite = sprite[:, ::-1]
            sh, sw = sprite.shape[:2]
            bw, bh = pb[2] - pb[0], pb[3] - pb[1]
            # Keep the sprite's aspect inside its part box, standing on the part box's bottom.
            scale = min(bw / sw, bh / sh) if bw > 0 and bh > 0 else 0
            tw, th = max(1, round(sw * scale)), max(1, round(sh * scale))
            cx = (pb[0] + pb[2]) // 2
            _paste(img, sprite, (cx - tw // 2, pb[3] - th, cx - tw // 2 + tw, pb[3]), light)
        if part.overlay:
            _overlay(img, part.overlay, pb)
