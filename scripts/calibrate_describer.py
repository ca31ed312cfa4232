"""Measure the offline describer's class statistics on a synthetic driving set (run by a developer).

    .venv/bin/python scripts/calibrate_describer.py [--cases 400] [--seed 21]

Draws a synthetic set (seed 21 by default; the accuracy bench uses other seeds), computes the image
statistics of each case's key frames and writes each time and weather class's mean and spread to
tools/data/describer_statistics.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.mt.describe import FEATURES, image_features  # noqa: E402
from tools.mt.synth.dataset import render_case  # noqa: E402
from tools.mt.synth.scene import sample_scene  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=21)
    args = ap.parse_args()
    rows: dict[str, dict[str, list[np.ndarray]]] = {"time": {}, "weather": {}}
    for k in range(args.cases):
        spec = sample_scene(args.seed * 100003 + k)
        r = render_case(spec, width=320, height=160)
        x = np.mean([image_features(r.images[i]) for i in (0, 5, 9)], axis=0)
        rows["time"].setdefault(spec.time, []).append(x)
        weather = spec.weather if spec.weather_strength >= 0.25 else "clear"
        rows["weather"].setdefault(weather, []).append(x)
    out = {
        "features": list(FEATURES),
        "source": f"drivemt synthetic driving set, seed {args.seed}, {args.cases} cases at 320x160",
        "classes": {
            field: {
                cls: [np.mean(v, axis=0).round(4).tolist(), np.std(v, axis=0).round(4).tolist()]
                for cls, v in sorted(groups.items())
            }
            for field, groups in rows.items()
        },
    }
    path = ROOT / "tools" / "data" / "describer_statistics.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{path}: " + ", ".join(f"{f} {len(g)} classes" for f, g in rows.items()))


if __name__ == "__main__":
    main()
