"""A generated, labelled traffic-light dataset: dashcam-like street scenes drawn from scratch.

Why generate: the TIGAUG pipeline needs a detector worth testing and images to augment, on a machine
with no downloads and no GPU. Real sets (LISA, Bosch) are large and licensed; this one is drawn in a
few milliseconds per image, is deterministic by seed, and is easy enough that a small detector trained
from scratch on two CPU cores for minutes reaches a useful mAP (see
:func:`runners.detectors.training.demo_training_recipe`).

What a scene holds (drawn at twice the output size, then reduced with area averaging, so every edge is
anti-aliased and box corners fall on half pixels):

* a sky gradient (day, overcast, dusk or night palette) above a random horizon;
* buildings with window grids and trees (ellipses on trunks) along the horizon;
* a road in perspective from a vanishing point, with dashed lane markings, verges, and a few cars
  with red tail lights (red blobs that are *not* traffic lights, low in the image);
* traffic lights, in the upper half only: vertical housings (red on top) and horizontal ones (red on
  the left), three bulbs each, one lit with a glow for red/yellow/green, none for ``off``; mounted on
  a pole from the ground or hanging in pairs/triples from a mast arm;
* global brightness and contrast, sensor noise and sometimes a slight blur.

The label is the housing's rectangle, the state the lit bulb's colour. Sizes are a fraction of the
image width (:attr:`SynthSettings.size_range`), so a scene drawn at another resolution keeps its
proportions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.tl.datasets import MANIFEST_NAME, load_manifest
from tools.tl.errors import EmptyDatasetError
from tools.tl.images import write_image
from tools.tl.models import TL_STATES, TLBox, TLDataset, TLImage, TLState

__all__ = [
    "BULB_COLOURS",
    "MANIFEST_NAME",
    "SynthSettings",
    "bulb_centres",
    "load_manifest",
    "render_scene",
    "synth_tl",
]

"""The manifest's file name inside the dataset folder."""

BULB_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (255, 45, 35),
    "yellow": (255, 185, 20),
    "green": (40, 235, 150),
}
"""Lit bulb colours (RGB); green leans to teal as real LED signal heads do."""

_BULB_ORDER: tuple[str, ...] = ("red", "yellow", "green")
_SS = 2  # supersampling factor: draw at 2x, reduce with area averaging

_SKIES: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "day": ((70, 130, 205), (185, 210, 235)),
    "overcast": ((150, 155, 165), (205, 208, 212)),
    "dusk": ((60, 60, 120), (235, 150, 90)),
    "night": ((22, 26, 48), (60, 62, 85)),
}


class SynthSettings(BaseModel):
    """What the generator draws; the defaults make the demo set."""

    model_config = ConfigDict(extra="forbid")

    image_format: Literal["jpg", "png"] = Field(
        default="jpg", description="JPEG keeps a thousand images small; PNG is lossless (tests check pixels)."
    )
    jpg_quality: int = Field(default=92, ge=50, le=100, description="JPEG quality when image_format is jpg.")
    lights_range: tuple[int, int] = Field(
        default=(1, 4), description="Lights per scene, inclusive (pairs and triples hang from mast arms)."
    )
    empty_fraction: float = Field(
        default=0.04, ge=0, le=1, description="Scenes with no light at all, so a detector learns to stay quiet."
    )
    size_range: tuple[float, float] = Field(
        default=(0.014, 0.045),
        description="Housing short side as a fraction of the image width, drawn log-uniformly (small lights "
        "are more common, as on a dashcam).",
    )
    horizontal_fraction: float = Field(default=0.3, ge=0, le=1, description="Share of horizontal housings.")
    state_weights: dict[str, float] = Field(
        default={"red": 0.3, "yellow": 0.2, "green": 0.3, "off": 0.2},
        description="Relative frequency of each state; yellow and off stay common enough to be learnt.",
    )
    sky_weights: dict[str, float] = Field(
        default={"day": 0.45, "overcast": 0.25, "dusk": 0.2, "night": 0.1},
        description="Relative frequency of the sky palettes.",
    )
    cars: bool = Field(default=True, description="Draw cars with red tail lights (red distractors, low in the image).")
    noise_sigma: tuple[float, float] = Field(default=(1.0, 6.0), description="Sensor noise standard deviation range.")
    brightness_range: tuple[float, float] = Field(default=(0.7, 1.25), description="Global brightness gain range.")

    @field_validator("state_weights")
    @classmethod
    def _states(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = set(v) - set(TL_STATES)
        if unknown or not v or sum(v.values()) <= 0 or min(v.values()) < 0:
            raise ValueError(f"state weights need states out of {TL_STATES} with positive total, got {v}")
        return v

    @field_validator("sky_weights")
    @classmethod
    def _skies(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = set(v) - set(_SKIES)
        if unknown or not v or sum(v.values()) <= 0 or min(v.values()) < 0:
            raise ValueError(f"sky weights need skies out of {sorted(_SKIES)} with positive total, got {v}")
        return v

    @field_validator("size_range")
    @classmethod
    def _sizes(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not 0 < v[0] <= v[1] <= 0.3:  # a housing is three times as long: it must fit the image
            raise ValueError(f"expected 0 < low <= high <= 0.3 (fractions of the width), got {v}")
        return v

    @field_validator("noise_sigma", "brightness_range")
    @classmethod
    def _range(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not 0 <= v[0] <= v[1]:
            raise ValueError(f"expected 0 <= low <= high, got {v}")
        return v

    @field_validator("lights_range")
    @classmethod
    def _lights(cls, v: tuple[int, int]) -> tuple[int, int]:
        if not 0 <= v[0] <= v[1]:
            raise ValueError(f"expected 0 <= fewest <= most lights, got {v}")
        return v


def _choice(rng: np.random.Generator, weights: dict[str, float]) -> str:
    keys = list(weights)
    p = np.array([weights[k] for k in keys], dtype=float)
    return keys[int(rng.choice(len(keys), p=p / p.sum()))]


def _jitter(rng: np.random.Generator, colour: tuple[int, int, int], amount: int) -> tuple[int, int, int]:
    c = np.clip(np.array(colour) + rng.integers(-amount, amount + 1, size=3), 0, 255)
    return (int(c[0]), int(c[1]), int(c[2]))


def bulb_centres(box: TLBox) -> dict[str, tuple[float, float]]:
    """Where the generator puts each bulb of a housing: red at the top (vertical) or left (horizontal).

    Args:
        box: A housing drawn by this generator.

    Returns:
        ``{"red": (x, y), "yellow": ..., "green": ...}`` in the box's pixel grid.
    """
    out = {}
    for k, name in enumerate(_BULB_ORDER):
        f = (2 * k + 1) / 6
        if box.orientation == "vertical":
            out[name] = (box.cx, box.y1 + f * box.height)
        else:
            out[name] = (box.x1 + f * box.width, box.cy)
    return out


def _draw_background(rng: np.random.Generator, img: np.ndarray, sky: str, settings: SynthSettings) -> tuple[int, int]:
    """Sky, buildings, trees, road and cars; returns the horizon row and vanishing-point column."""
    import cv2

    h, w = img.shape[:2]
    horizon = int(h * rng.uniform(0.45, 0.62))
    top, bottom = (np.array(c, dtype=float) for c in _SKIES[sky])
    t = np.linspace(0, 1, horizon)[:, None]
    img[:horizon] = (top * (1 - t) + bottom * t)[:, None, :].astype(np.uint8)
    night = sky == "night"
    # Buildings along the horizon, with window grids.
    x = int(rng.integers(-w // 10, w // 20))
    while x < w:
        bw = int(rng.uniform(0.06, 0.2) * w)
        bh = int(rng.uniform(0.05, 0.4) * h)
        if rng.random() < 0.75:
            base = _jitter(rng, (120, 110, 100) if not night else (45, 45, 55), 35)
            cv2.rectangle(img, (x, horizon - bh), (x + bw, horizon), base, -1)
            step_x, step_y = max(6, bw // int(rng.integers(3, 7))), max(6, int(rng.uniform(0.025, 0.05) * h))
            win = (
                _jitter(rng, (70, 80, 95), 15)
                if not night
                else _jitter(rng, (230, 200, 120), 20)  # lit windows at night: yellowish distractors
            )
            for wy in range(horizon - bh + step_y // 2, horizon - step_y, step_y):
                for wx in range(x + step_x // 3, x + bw - step_x // 2, step_x):
                    if not night or rng.random() < 0.35:
                        cv2.rectangle(img, (wx, wy), (wx + step_x // 2, wy + step_y // 2), win, -1)
        x += bw + int(rng.integers(0, w // 12))
    # Trees.
    for _ in range(int(rng.integers(0, 6))):
        cx, r = int(rng.uniform(0, w)), int(rng.uniform(0.03, 0.1) * w)
        trunk_h = int(r * rng.uniform(0.8, 1.6))
        cv2.rectangle(img, (cx - r // 8, horizon - trunk_h), (cx + r // 8, horizon + r // 4), (70, 50, 35), -1)
        green = _jitter(rng, (55, 110, 50) if not night else (20, 35, 25), 25)
        cv2.ellipse(img, (cx, horizon - trunk_h), (r, int(r * 1.2)), 0, 0, 360, green, -1, cv2.LINE_AA)
    # Ground, road, lane markings.
    verge = _jitter(rng, (95, 110, 70) if not night else (30, 35, 30), 20)
    img[horizon:] = verge
    vx = int(w * rng.uniform(0.35, 0.65))
    half = w * rng.uniform(0.9, 1.4)
    road = _jitter(rng, (95, 95, 98) if not night else (40, 40, 45), 15)
    pts = np.array([[vx - 2, horizon], [vx + 2, horizon], [int(vx + half), h], [int(vx - half), h]], np.int32)
    cv2.fillPoly(img, [pts], road, cv2.LINE_AA)
    lanes = int(rng.integers(2, 5))
    marking = (235, 235, 230) if rng.random() < 0.8 else (230, 190, 40)
    for k in range(lanes + 1):
        bx = vx - half + 2 * half * k / lanes
        for s in np.arange(0.05, 1.0, 0.12):
            t0, t1 = s**1.6, min(1.0, (s + 0.06) ** 1.6)
            p0 = (int(vx + (bx - vx) * t0), int(horizon + (h - horizon) * t0))
            p1 = (int(vx + (bx - vx) * t1), int(horizon + (h - horizon) * t1))
            cv2.line(img, p0, p1, marking, max(1, int(6 * t1 * w / 1280)), cv2.LINE_AA)
    # Cars on the road with red tail lights: red blobs below the horizon that are not traffic lights.
    if settings.cars:
        for _ in range(int(rng.integers(0, 3))):
            t_ = rng.uniform(0.15, 0.7)
            cy = int(horizon + (h - horizon) * t_)
            cw = int(w * 0.25 * t_ + 6)
            cx = int(vx + rng.uniform(-0.6, 0.6) * half * t_)
            body = _jitter(rng, (60, 60, 70), 50)
            cv2.rectangle(img, (cx - cw // 2, cy - int(cw * 0.7)), (cx + cw // 2, cy), body, -1)
            tl = max(2, cw // 8)
            tail = (255, 30, 25) if night or rng.random() < 0.5 else (170, 20, 20)
            for sx in (cx - cw // 2 + tl, cx + cw // 2 - tl):
                cv2.circle(img, (sx, cy - int(cw * 0.35)), tl // 2 + 1, tail, -1, cv2.LINE_AA)
    return horizon, vx


def _draw_light(
    rng: np.random.Generator, img: np.ndarray, lamps: _Lamps, rect: tuple[int, int, int, int], state: str
) -> None:
    """One housing with three bulbs at supersampled coordinates; the lit bulb goes to the lamp layers."""
    import cv2

    x1, y1, x2, y2 = rect
    housing = _jitter(rng, (28, 30, 30), 14) if rng.random() < 0.85 else _jitter(rng, (35, 55, 40), 10)
    radius = max(2, int(min(x2 - x1, y2 - y1) * 0.5))
    corner = max(1, radius // 3)
    cv2.rectangle(img, (x1 + corner, y1), (x2 - 1 - corner, y2 - 1), housing, -1)
    cv2.rectangle(img, (x1, y1 + corner), (x2 - 1, y2 - 1 - corner), housing, -1)
    box = TLBox(x1=x1, y1=y1, x2=x2, y2=y2, state="off")
    r = max(1.0, min(x2 - x1, y2 - y1) * rng.uniform(0.32, 0.38))
    for name, (cx, cy) in bulb_centres(box).items():
        centre = (round(cx - 0.5), round(cy - 0.5))
        colour = np.array(BULB_COLOURS[name], dtype=float)
        if name == state:
            lit = np.clip(colour * rng.uniform(0.88, 1.0), 0, 255)
            core = np.clip(lit + 0.45 * (255 - lit), 0, 255)  # hot centre, towards white
            cv2.circle(lamps.colour, centre, int(r), tuple(int(v) for v in lit), -1, cv2.LINE_AA)
            cv2.circle(lamps.colour, centre, max(1, int(r * 0.55)), tuple(int(v) for v in core), -1, cv2.LINE_AA)
            cv2.circle(lamps.mask, centre, int(r), 255, -1, cv2.LINE_AA)
            cv2.circle(lamps.glow, centre, int(r * 1.6), tuple(float(v) * rng.uniform(0.25, 0.45) for v in lit), -1)
        else:
            dim = np.array(housing, dtype=float) * 0.6 + colour * rng.uniform(0.1, 0.2)
            cv2.circle(img, centre, int(r), tuple(int(v) for v in dim), -1, cv2.LINE_AA)


class _Lamps:
    """Lit bulbs are light sources: drawn apart from the scene so the camera's gain does not dim them."""

    def __init__(self, h: int, w: int) -> None:
        self.colour = np.zeros((h, w, 3), np.uint8)
        self.mask = np.zeros((h, w), np.uint8)
        self.glow: np.ndarray = np.zeros((h, w, 3), np.float32)


def _place(
    rng: np.random.Generator, w: int, h: int, short: float, horizontal: bool, taken: list[tuple[float, ...]]
) -> tuple[float, float, float, float] | None:
    """A free rectangle (1x pixels) in the upper half, or None after a few tries."""
    long = short * rng.uniform(2.6, 3.0)
    bw, bh = (long, short) if horizontal else (short, long)
    for _ in range(30):
        x1 = rng.uniform(2, w - bw - 2)
        cy = rng.uniform(0.06 * h + bh / 2, 0.5 * h)
        y1 = max(2.0, cy - bh / 2)
        cand = (x1, y1, x1 + bw, y1 + bh)
        m = short * 0.6
        if all(cand[2] + m < o[0] or o[2] + m < cand[0] or cand[3] + m < o[1] or o[3] + m < cand[1] for o in taken):
            return cand
    return None


def render_scene(
    rng: np.random.Generator, width: int, height: int, settings: SynthSettings | None = None
) -> tuple[np.ndarray, list[TLBox]]:
    """Draw one street scene with traffic lights.

    Args:
        rng: The scene's random generator (one per image keeps images independent of the set's size).
        width: Output width in pixels.
        height: Output height in pixels.
        settings: What to draw; the defaults when None.

    Returns:
        The RGB ``uint8`` image (``height x width x 3``) and its ground-truth boxes.
    """
    import cv2

    s = settings or SynthSettings()
    W, H = width * _SS, height * _SS
    img = np.zeros((H, W, 3), np.uint8)
    sky = _choice(rng, s.sky_weights)
    horizon, _ = _draw_background(rng, img, sky, s)
    lamps = _Lamps(H, W)
    boxes: list[TLBox] = []
    taken: list[tuple[float, ...]] = []
    mounts: list[tuple[int, int, int, int]] = []
    lights: list[tuple[tuple[int, int, int, int], str]] = []
    n = 0 if rng.random() < s.empty_fraction else int(rng.integers(s.lights_range[0], s.lights_range[1] + 1))
    lo, hi = np.log(s.size_range[0] * width), np.log(s.size_range[1] * width)
    placed = 0
    while placed < n:
        short = float(np.exp(rng.uniform(lo, hi)))
        horizontal = bool(rng.random() < s.horizontal_fraction)
        group = min(n - placed, int(rng.integers(1, 4))) if rng.random() < 0.45 else 1
        first = _place(rng, width, height, short, horizontal, taken)
        if first is None:
            break
        rects = [first]
        if group > 1:  # a mast arm: the same housing repeated to the side at the same height
            gap = (first[2] - first[0]) + short * rng.uniform(1.5, 4.0)
            for k in range(1, group):
                r = (first[0] + k * gap, first[1], first[2] + k * gap, first[3])
                m = short * 0.6
                free = all(r[2] + m < o[0] or o[2] + m < r[0] or r[3] + m < o[1] or o[3] + m < r[1] for o in taken)
                if r[2] < width - 2 and free:
                    rects.append(r)
            arm_y = int((first[1] - short * 0.4) * _SS)
            arm_x2 = int(rects[-1][2] * _SS + short * _SS)
            thick = max(2, int(short * 0.25 * _SS))
            mounts.append((int(first[0] * _SS - short * _SS), arm_y - thick, arm_x2, arm_y))
            for r in rects:  # hangers
                mx = int((r[0] + r[2]) / 2 * _SS)
                mounts.append((mx - thick // 3, arm_y, mx + thick // 3, int(r[1] * _SS)))
        else:  # a pole from the ground (or the arm's end outside the top)
            mx = int((first[0] + first[2]) / 2 * _SS)
            thick = max(2, int(short * 0.3 * _SS))
            foot = int(max(horizon, first[3] * _SS) + rng.uniform(0.05, 0.3) * H)
            mounts.append((mx - thick // 2, int(first[3] * _SS), mx + thick // 2, foot))
        state = _choice(rng, s.state_weights)
        for r in rects:
            if placed >= n:
                break
            if rng.random() < 0.15:  # lights on one arm usually agree, not always
                state = _choice(rng, s.state_weights)
            px = tuple(round(v * _SS) for v in r)
            lights.append(((px[0], px[1], px[2], px[3]), state))
            boxes.append(TLBox(x1=px[0] / _SS, y1=px[1] / _SS, x2=px[2] / _SS, y2=px[3] / _SS, state=_as_state(state)))
            taken.append(r)
            placed += 1
    # Poles and arms first, so that no mount covers a light drawn earlier.
    for mount in mounts:
        cv2.rectangle(img, (mount[0], mount[1]), (mount[2], mount[3]), (58, 58, 60), -1)
    for rect, state in lights:
        _draw_light(rng, img, lamps, rect, state)
    # Reduce to the output size; the scene gets the camera's gain and contrast, lit bulbs and their glow
    # stay bright (as a lit LED saturates whatever the exposure), then sensor noise over everything.
    k = max(3, (int(0.012 * W) // 2) * 2 + 1)
    glow = cv2.resize(cv2.GaussianBlur(lamps.glow, (k, k), 0), (width, height), interpolation=cv2.INTER_AREA)
    scene = cv2.resize(img, (width, height), interpolation=cv2.INTER_AREA).astype(np.float32)
    lamp = cv2.resize(lamps.colour, (width, height), interpolation=cv2.INTER_AREA).astype(np.float32)
    mask = cv2.resize(lamps.mask, (width, height), interpolation=cv2.INTER_AREA).astype(np.float32)[..., None] / 255
    gain = rng.uniform(*s.brightness_range)
    contrast = rng.uniform(0.85, 1.15)
    scene = ((scene - 128.0) * contrast + 128.0) * gain
    out: np.ndarray = scene * (1 - mask) + lamp + glow  # lamp is zero outside its mask: area-averaged, premultiplied
    out = out + rng.normal(0, rng.uniform(*s.noise_sigma), out.shape).astype(np.float32)
    if rng.random() < 0.2:
        out = cv2.GaussianBlur(out, (3, 3), 0.6)
    return np.clip(out, 0, 255).astype(np.uint8), boxes


def _as_state(name: str) -> TLState:
    if name not in TL_STATES:
        raise ValueError(f"state {name!r} is not one of {TL_STATES}")
    return name  # type: ignore[return-value]


def synth_tl(
    out: Path,
    *,
    n_train: int,
    n_val: int,
    n_test: int,
    width: int = 640,
    height: int = 360,
    seed: int = 0,
    settings: SynthSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TLDataset:
    """Generate a labelled traffic-light dataset and its manifest.

    Each image has its own random generator, seeded by ``(seed, split, index)``, so the same seed gives
    the same images whatever the other splits' sizes.

    Args:
        out: Folder to write ``images/<split>/<id>.<ext>`` and ``dataset.json`` into (created).
        n_train: Images in the train split.
        n_val: Images in the val split.
        n_test: Images in the test split.
        width: Image width in pixels (640 x 360 is a 16:9 dashcam frame at half of 720p).
        height: Image height in pixels.
        seed: Seeds every image.
        settings: What to draw; :class:`SynthSettings` defaults when None.
        progress: Called with ``(done, total)`` after each image.

    Returns:
        The dataset, with ``root`` set to ``out`` and image paths relative to it.

    Raises:
        EmptyDatasetError: When no image is asked for.
    """
    s = settings or SynthSettings()
    total = n_train + n_val + n_test
    if total <= 0:
        raise EmptyDatasetError(str(out), "asked for no images (n_train + n_val + n_test = 0)")
    out = Path(out)
    images: list[TLImage] = []
    done = 0
    for split_no, (split, n) in enumerate((("train", n_train), ("val", n_val), ("test", n_test))):
        for i in range(n):
            rng = np.random.default_rng([seed, split_no, i])
            img, boxes = render_scene(rng, width, height, s)
            image_id = f"{split}_{i:05d}"
            rel = Path("images") / split / f"{image_id}.{s.image_format}"
            _write(out / rel, img, s)
            images.append(
                TLImage(image_id=image_id, path=rel.as_posix(), width=width, height=height, boxes=boxes, split=split)
            )
            done += 1
            if progress is not None:
                progress(done, total)
    ds = TLDataset(name=f"synth-tl-{seed}", root=".", format="drivemt", images=images)
    (out / MANIFEST_NAME).write_text(ds.model_dump_json(indent=1, exclude_none=True))
    return ds.model_copy(update={"root": str(out.resolve())})


def _write(path: Path, img: np.ndarray, s: SynthSettings) -> None:
    if s.image_format == "png":
        write_image(path, img)
        return
    import cv2

    path.parent.mkdir(parents=True, exist_ok=True)
    ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(img[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, s.jpg_quality])
    if not ok:  # pragma: no cover - OpenCV encodes any uint8 image
        raise RuntimeError(f"could not encode {path}")
    buf.tofile(str(path))
