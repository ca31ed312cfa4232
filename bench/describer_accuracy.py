"""Accuracy of the T-Agent's offline describer (offline:image-statistics) per field, metadata withheld.

    python bench/describer_accuracy.py [--cases 300] [--seed 22] [--size 320x160]

Draws a synthetic set the describer was not calibrated on (its statistics come from seed 21), withholds each
case's metadata, describes it from its pixels and prints per-field accuracy beside the constant-answer
baseline (always the most common class). Road type and objects are not read from pixels: without metadata
they are 'unknown' by design, and the bench says so.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.mt.describe import describe_offline
from tools.mt.models import DrivingCase
from tools.mt.synth.dataset import render_case
from tools.mt.synth.scene import sample_scene


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--size", default="320x160")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    right: Counter[str] = Counter()
    truth_counts: dict[str, Counter[str]] = {"time": Counter(), "weather": Counter()}
    confusion: dict[str, Counter[tuple[str, str]]] = {"time": Counter(), "weather": Counter()}
    for k in range(args.cases):
        spec = sample_scene(args.seed * 100003 + k)
        r = render_case(spec, width=w, height=h)
        case = DrivingCase(case_id=f"c{k}", source="synthetic", frames=[f"f{i}" for i in range(10)], ego=r.ego)
        d = describe_offline(case.without_metadata(), r.images)
        truth = {"time": spec.time, "weather": spec.weather if spec.weather_strength >= 0.25 else "clear"}
        for field in ("time", "weather"):
            got = getattr(d, field)
            right[field] += got == truth[field]
            truth_counts[field][truth[field]] += 1
            confusion[field][(truth[field], got)] += 1
        right["road_type_unknown"] += d.road_type == "unknown"
    n = args.cases
    print(f"offline:image-statistics on {n} synthetic cases (seed {args.seed}, {w}x{h}), metadata withheld")
    for field in ("time", "weather"):
        base = truth_counts[field].most_common(1)[0][1] / n
        print(f"  {field:8} accuracy {right[field] / n:6.1%}   constant-answer baseline {base:6.1%}")
        errs = [(t, g, c) for (t, g), c in confusion[field].most_common() if t != g][:4]
        if errs:
            print("           most confused: " + ", ".join(f"{t}->{g} x{c}" for t, g, c in errs))
    print(f"  road type: 'unknown' in {right['road_type_unknown'] / n:.0%} (not read from pixels: never invented)")
    print("  objects: [] without metadata (not read from pixels: never invented)")


if __name__ == "__main__":
    main()
