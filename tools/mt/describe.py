"""The T-Agent's offline describer (``offline:image-statistics``): time and weather from image statistics.

It is not a vision model. It reads a case's key frames as numbers (brightness of the sky and of the whole
frame, the sky's warmth, contrast near the horizon and in the road, saturation, small bright specks, whiteness
of the ground, streaks) and picks, per field, the class whose statistics are nearest (a Gaussian naive Bayes
over those numbers). The class statistics were measured on drivemt's synthetic driving set
(``scripts/calibrate_describer.py``; ``bench/describer_accuracy.py`` measures it on a set it has not seen).
Road type and objects come from the case's metadata when it has some, else they stay ``unknown``: the
describer never invents them.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from importlib import resources

import numpy as np

from tools.mt.models import CaseDescription, DrivingCase
from tools.mt.roads import canonical_road_type

__all__ = ["FEATURES", "OFFLINE_DESCRIBER", "describe_offline", "image_features"]

OFFLINE_DESCRIBER = "offline:image-statistics"
FEATURES = (
    "brightness",
    "sky",
    "warmth",
    "horizon_contrast",
    "road_contrast",
    "saturation",
    "specks",
    "ground_white",
    "streaks",
)


def image_features(frame: np.ndarray) -> np.ndarray:
    """The statistics of one RGB frame (see :data:`FEATURES`), scale-free in the frame's size."""
    import cv2

    img = frame if frame.shape[0] <= 200 else cv2.resize(frame, (320, round(320 * frame.shape[0] / frame.shape[1])))
    g = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(np.float32)
    h = g.shape[0]
    sky = img[: max(1, int(h * 0.25))].reshape(-1, 3).astype(np.float32)
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV)
    top_hat = g - cv2.morphologyEx(g, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    ground = img[int(h * 0.7) :].astype(np.float32)
    gx = np.abs(cv2.Sobel(g[: int(h * 0.6)], cv2.CV_32F, 1, 0)).mean()
    gy = np.abs(cv2.Sobel(g[: int(h * 0.6)], cv2.CV_32F, 0, 1)).mean()
    return np.array(
        [
            g.mean(),
            sky.mean(),
            float((sky[:, 0] - sky[:, 2]).mean()),
            g[int(h * 0.3) : int(h * 0.6)].std(),
            g[int(h * 0.55) :].std(),
            float(hsv[..., 1].mean()),
            float((top_hat > 40).mean() * 1000),
            float(ground.mean() - (ground.max(axis=2) - ground.min(axis=2)).mean()),
            float((gx + 1) / (gy + 1)),
        ],
        np.float64,
    )


@functools.cache
def _model() -> dict[str, dict[str, tuple[list[float], list[float]]]]:
    text = resources.files("tools.data").joinpath("describer_statistics.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, tuple[list[float], list[float]]]] = json.loads(text)["classes"]
    return data


def _classify(x: np.ndarray, field: str) -> tuple[str, float]:
    """The most likely class of ``field`` and its posterior probability."""
    scores = {}
    for cls, (mean, std) in _model()[field].items():
        m, s = np.array(mean), np.maximum(np.array(std), 1e-3)
        scores[cls] = float(-0.5 * (((x - m) / s) ** 2).sum() - np.log(s).sum())
    best = max(scores, key=lambda k: scores[k])
    z = max(scores.values())
    total = sum(math.exp(v - z) for v in scores.values())
    return best, 1.0 / total


def describe_offline(case: DrivingCase, frames: Sequence[np.ndarray]) -> CaseDescription:
    """AutoMT's representation of a case from its pixels (time, weather) and its metadata (road, objects)."""
    keys = [frames[0], frames[len(frames) // 2], frames[-1]] if frames else []
    x = np.mean([image_features(f) for f in keys], axis=0) if keys else np.zeros(len(FEATURES))
    time, p_time = _classify(x, "time") if keys else ("unknown", 0.0)
    weather, p_weather = _classify(x, "weather") if keys else ("unknown", 0.0)
    meta = case.metadata
    road = canonical_road_type(meta.road_type) if meta and meta.road_type else None
    return CaseDescription(
        time=time,  # type: ignore[arg-type]
        weather=weather,  # type: ignore[arg-type]
        road_type=road or "unknown",
        objects=list(meta.objects) if meta else [],
        speed_kmh=round(case.mean_speed_kmh, 3),
        steering_rad=round(case.mean_steering_rad, 5),
        describer=OFFLINE_DESCRIBER,
        evidence={
            "time": f"image statistics (p={p_time:.2f})",
            "weather": f"image statistics (p={p_weather:.2f})",
            "road_type": "metadata" if road else "unknown: no metadata (the describer does not guess)",
            "objects": "metadata" if meta and meta.objects else "unknown: no metadata",
        },
    )
