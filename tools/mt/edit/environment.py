"""AutoMT's "replaces" edits done classically: weather, light and road surface, over all frames of a case.

Each edit takes the case's frames and a strength, draws what does not move once (rain streak layers, the road
mask, fog by row distance) and applies it to every frame with one seed per case; what lies on the road
(potholes, puddles, gravel) is anchored in the world and comes closer as the ego drives, from the case's own
speed data. Fog uses depth by image row, rain and snow imgaug's layers where they fit (the traffic-light
tools' weather code), sun glare the traffic-light tools' lens flare.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tools.mt.edit.stage import Stage

__all__ = ["ENVIRONMENT_KINDS", "apply_environment"]

ENVIRONMENT_KINDS = (
    "rain",
    "drizzle",
    "snow",
    "fog",
    "smoke",
    "dust",
    "night",
    "low_light",
    "glare",
    "wind",
    "wet",
    "flooded",
    "mud",
    "ice",
    "black_ice",
    "slippery",
    "potholes",
    "gravel",
)


def _road_mask(stage: Stage, h: int, w: int, half_m: float = 5.5, far_m: float = 90.0) -> np.ndarray:
    import cv2

    near = 1.5
    poly = np.array(
        [
            stage.ground(-half_m, near),
            stage.ground(half_m, near),
            stage.ground(half_m, far_m),
            stage.ground(-half_m, far_m),
        ],
        np.int32,
    )
    mask = np.zeros((h, w), np.float32)
    cv2.fillConvexPoly(mask, poly, 1.0, cv2.LINE_AA)
    return mask


def _depth_alpha(stage: Stage, h: int, w: int, k: float) -> np.ndarray:
    """Fog opacity per pixel from each row's road distance (rows at or above the horizon count as far)."""
    rows = np.arange(h, dtype=np.float32)
    d = np.where(rows > stage.horizon + 0.5, stage.f * 1.4 / np.maximum(rows - stage.horizon, 0.5), 400.0)
    a = 1.0 - np.exp(-k * d)
    return np.repeat(a[:, None], w, axis=1).astype(np.float32)


def _blend(img: np.ndarray, colour: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    a = alpha[..., None] if alpha.ndim == 2 else alpha
    return np.clip(img.astype(np.float32) * (1 - a) + colour * a, 0, 255).astype(np.uint8)


def _streaks(
    h: int, w: int, rng: np.random.Generator, density: float, length: tuple[int, int], angle: float
) -> np.ndarray:
    import cv2

    layer = np.zeros((h, w), np.float32)
    n = int(w * h / 700 * density)
    xs, ys = rng.integers(0, w, n), rng.integers(0, h, n)
    lens = rng.integers(length[0], length[1], n)
    dx = math.sin(math.radians(angle))
    for x, y, ln in zip(xs, ys, lens, strict=True):
        cv2.line(layer, (int(x), int(y)), (int(x + dx * ln), int(y + ln)), float(rng.uniform(0.5, 1.0)), 1, cv2.LINE_AA)
    return layer


def apply_environment(
    frames: Sequence[np.ndarray],
    kind: str,
    *,
    strength: float,
    seed: int,
    stage: Stage,
    travelled_m: Sequence[float] | None = None,
) -> list[np.ndarray]:
    """The frames with one weather, light or road-surface edit applied.

    Args:
        frames: RGB ``uint8`` frames of one case.
        kind: One of :data:`ENVIRONMENT_KINDS`.
        strength: 0 (no change) to 1.
        seed: One seed for the whole case.
        stage: The assumed camera (horizon) of the frames.
        travelled_m: Metres the ego has travelled at each frame (anchors road-surface edits).

    Raises:
        ValueError: For an unknown kind.
    """
    import cv2

    if kind not in ENVIRONMENT_KINDS:
        raise ValueError(f"unknown environment edit {kind!r}; use one of {', '.join(ENVIRONMENT_KINDS)}")
    if strength <= 0 or not frames:
        return [f.copy() for f in frames]
    s = min(1.0, strength)
    h, w = frames[0].shape[:2]
    rng = np.random.default_rng(seed)
    moved = list(travelled_m) if travelled_m is not None else [0.0] * len(frames)
    out: list[np.ndarray] = []
    if kind in ("rain", "drizzle"):
        density = (1.2 if kind == "rain" else 0.45) * (0.4 + s)
        layers = [
            _streaks(h, w, rng, density, (max(4, h // 30), max(6, h // 10)), float(rng.uniform(-12, 12)))
            for _ in range(3)
        ]
        road = _road_mask(stage, h, w)
        for i, f in enumerate(frames):
            g = f.astype(np.float32) * (1.0 - 0.22 * s)
            grey = g.mean(axis=2, keepdims=True)
            g = g * (1 - 0.35 * s) + grey * 0.35 * s
            g[..., :] -= (road * 14 * s)[..., None]  # the road darkens as it gets wet
            a = layers[i % 3] * (0.55 * s)
            out.append(_blend(np.clip(g, 0, 255).astype(np.uint8), np.array((205, 210, 220), np.float32), a))
        return out
    if kind == "snow":
        hard = np.zeros((h, w), np.float32)
        hard[int(stage.horizon) + 1 :] = 1.0
        ground = cv2.GaussianBlur(hard, (0, 0), 3)
        n = int(w * h / 350 * (0.3 + s))
        fx, fy = rng.random(n) * w, rng.random(n) * h
        radius = rng.integers(1, max(2, h // 120) + 1, n)
        fall = rng.uniform(0.04, 0.12, n) * h
        for i, f in enumerate(frames):
            g = _blend(f, np.array((235, 237, 242), np.float32), ground * 0.55 * s)
            g = (g.astype(np.float32) * (1 - 0.15 * s) + 0.15 * s * 200).astype(np.uint8)
            ys = ((fy + fall * i) % h).astype(np.int32)
            xs = ((fx + np.sin(fy + i) * 2) % w).astype(np.int32)
            for x, y, r in zip(xs, ys, radius, strict=True):
                cv2.circle(g, (int(x), int(y)), int(r), (246, 246, 250), -1)
            out.append(g)
        return out
    if kind in ("fog", "smoke", "dust"):
        colour = {"fog": (205, 207, 210), "smoke": (120, 118, 115), "dust": (196, 160, 110)}[kind]
        vis = 120.0 - 100.0 * s
        alpha: np.ndarray = _depth_alpha(stage, h, w, 2.3 / max(vis, 10.0)) * (0.55 + 0.45 * s)
        noise = cv2.resize(
            rng.random((max(2, h // 24), max(2, w // 24))).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC
        )
        alpha = np.clip(alpha * (0.85 + 0.3 * noise), 0, 0.97)
        return [_blend(f, np.array(colour, np.float32), alpha) for f in frames]
    if kind in ("night", "low_light"):
        k, gamma = (0.28, 1.5) if kind == "night" else (0.55, 1.2)
        k = 1 - (1 - k) * s
        rows = np.arange(h, dtype=np.float32)[:, None]
        cols = np.arange(w, dtype=np.float32)[None, :]
        pool = np.exp(-(((rows - h * 0.9) / (h * 0.25)) ** 2)) * np.exp(-(((cols - w / 2) / (w * 0.22)) ** 2))
        pool = (pool * (rows > stage.horizon)).astype(np.float32) * 0.5 * s
        for f in frames:
            g = (f.astype(np.float32) / 255.0) ** gamma * 255.0 * k
            g *= np.array((0.85, 0.92, 1.12) if kind == "night" else (1.05, 0.95, 0.85), np.float32)
            bright = (f.max(axis=2, keepdims=True) > 235).astype(np.float32)  # lamps stay lit
            g = g * (1 - bright) + f.astype(np.float32) * bright
            g += pool[..., None] * np.array((170, 160, 130), np.float32)
            out.append(np.clip(g, 0, 255).astype(np.uint8))
        return out
    if kind == "glare":
        from tools.tl.flare import LensFlareParams, lens_flare

        flare = LensFlareParams(sun_intensity=(0.6 + 0.4 * s, 0.6 + 0.4 * s), source_y=(0.05, 0.25))
        return [lens_flare(f, seed=seed, params=flare)[0] for f in frames]
    if kind == "wind":
        n = int(40 + 160 * s)
        pos = np.stack([rng.random(n) * w, rng.random(n) * h * 0.9], axis=1)
        vel = np.stack([rng.uniform(8, 20, n) * w / 160, rng.uniform(-1, 3, n) * h / 160], axis=1)
        colours = [(110, 140, 50), (150, 110, 50), (90, 120, 40), (170, 140, 80)]
        for i, f in enumerate(frames):
            g = f.copy()
            top = int(stage.horizon)
            k = max(3, (w // 90) | 1)
            g[:top] = cv2.blur(g[:top], (k, 1))  # trees and wires shake
            p = pos + vel * i
            for j, (x, y) in enumerate(p):
                x, y = int(x) % w, int(y) % h
                cv2.ellipse(
                    g,
                    (x, y),
                    (max(1, w // 200 + 1), max(1, w // 400)),
                    (j * 37 + i * 20) % 180,
                    0,
                    360,
                    colours[j % 4],
                    -1,
                )
            haze = np.zeros((h, w), np.float32)
            haze[int(stage.horizon) :] = 0.12 * s
            out.append(_blend(g, np.array((190, 170, 130), np.float32), haze))
        return out
    # Road-surface edits, on the road ahead.
    road = _road_mask(stage, h, w)
    soft = cv2.GaussianBlur(road, (0, 0), 2)
    if kind in ("wet", "slippery", "flooded", "ice", "black_ice"):
        sheen_colours = {
            "wet": (40, 42, 46),
            "slippery": (45, 45, 50),
            "flooded": (70, 90, 105),
            "ice": (205, 220, 235),
            "black_ice": (30, 34, 42),
        }
        alpha_road = {"wet": 0.35, "slippery": 0.4, "flooded": 0.7, "ice": 0.55, "black_ice": 0.5}[kind] * s
        hue = np.zeros((h, w, 3), np.float32)
        if kind == "slippery":  # an oil sheen: rainbow patches
            field = cv2.resize(
                rng.random((max(2, h // 16), max(2, w // 16))).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC
            )
            hsv = np.stack(
                [(field * 179).astype(np.uint8), np.full((h, w), 120, np.uint8), np.full((h, w), 160, np.uint8)], axis=2
            )
            hue = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB).astype(np.float32)
        for i, f in enumerate(frames):
            top = max(1, int(stage.horizon))
            mirror = cv2.flip(f[:top], 0)
            mirror = cv2.resize(mirror, (w, h - top), interpolation=cv2.INTER_LINEAR)
            mirror = cv2.GaussianBlur(mirror, (0, 0), 2 if kind != "black_ice" else 1)
            reflect = np.zeros_like(f, dtype=np.float32)
            reflect[top:] = mirror
            if kind == "flooded":
                rows = np.arange(h - top, dtype=np.float32)[:, None]
                ripple = np.sin(rows * 0.9 + moved[i] * 3 + np.arange(w)[None, :] * 0.05) * 6
                reflect[top:] += ripple[..., None]
            base = np.array(sheen_colours[kind], np.float32)
            sheen = base * 0.5 + reflect * 0.5
            if kind == "slippery":
                sheen = sheen * 0.6 + hue * 0.4
            if kind == "ice":
                sheen = sheen * 0.4 + base * 0.6
            edited = _blend(f, sheen, soft * alpha_road)
            if kind in ("ice", "black_ice"):
                for k in range(12):
                    d = 4 + ((k * 7.3 + moved[i] * 0 + k * 3.1) % 40) - (moved[i] % 7)
                    if d < 2:
                        continue
                    x0, y0 = stage.ground(-2 + (k % 5), d)
                    x1, y1 = stage.ground(-1.2 + (k % 5), d + 2)
                    cv2.line(edited, (int(x0), int(y0)), (int(x1), int(y1)), (240, 245, 255), 1, cv2.LINE_AA)
            out.append(edited)
        return out
    # Things on the road: potholes, mud patches, gravel, anchored in the world.
    count = {"potholes": 5, "mud": 10, "gravel": 220}[kind]
    items = [
        (rng.uniform(4.0, 40.0), rng.uniform(-1.6, 1.6), rng.uniform(0.3, 1.0))
        for _ in range(max(2, int(count * (0.4 + s))))
    ]
    for i, f in enumerate(frames):
        g = f.copy()
        for d0, x, size in sorted(items, key=lambda it: -it[0]):
            d = d0 - moved[i]
            if d < 2.0:
                continue
            cx, cy = stage.ground(x, d)
            rx = max(1, round(stage.px(size * (1.2 if kind != "gravel" else 0.09), d)))
            ry = max(1, round(rx * min(0.6, 1.4 / d * 6)))
            centre = (round(cx), round(cy))
            if kind == "potholes":
                cv2.ellipse(g, centre, (rx + 1, ry + 1), 0, 0, 360, (120, 118, 112), -1, cv2.LINE_AA)
                cv2.ellipse(g, centre, (rx, ry), 0, 0, 360, (22, 22, 24), -1, cv2.LINE_AA)
            elif kind == "mud":
                cv2.ellipse(g, centre, (rx, ry), 0, 0, 360, (92, 66, 40), -1, cv2.LINE_AA)
            else:
                cv2.circle(g, centre, max(1, rx), (150, 140, 120) if (d0 * 10) % 2 > 1 else (90, 85, 80), -1)
        out.append(_blend(f, g.astype(np.float32), soft * min(1.0, 0.6 + 0.4 * s)))
    return out
