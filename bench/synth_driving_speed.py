"""Speed of the synthetic driving world: frames drawn per second, per condition, at 640x320 on one core.

    python bench/synth_driving_speed.py [--cases 12] [--size 640x320]

Pins the process to one core (and OpenCV and numpy to one thread), draws ``--cases`` scenes of every road
kind under each condition (10 frames each, the driver's positions), and prints frames/s beside the targets
(>= 100 on a clear day, >= 25 in rain). Drawing only: writing PNGs is measured apart (``--write``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.mt.synth.dataset import render_case, synth_dataset
from tools.mt.synth.scene import ROAD_KINDS, sample_scene

TARGETS = {("clear", "day"): 100.0, ("rain", "day"): 25.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", type=int, default=16, help="Scenes per condition.")
    ap.add_argument("--size", default="640x320")
    ap.add_argument("--write", type=int, default=0, help="Also time a whole set of this many cases, PNGs written.")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import cv2

    cv2.setNumThreads(1)
    render_case(sample_scene(0), width=width, height=height)  # warm-up (imports, caches)
    print(f"synthetic driving frames at {width}x{height}, one core, {args.cases} scenes x 10 frames per condition")
    print(f"{'weather':8} {'time':6} {'frames/s':>9} {'ms/frame':>9}  target")
    for weather in ("clear", "rain", "fog", "snow"):
        for tod in ("day", "dusk", "night"):
            frames = 0
            drawing = 0.0
            for k in range(args.cases):
                spec = sample_scene(7000 + k, road=ROAD_KINDS[k % len(ROAD_KINDS)]).model_copy(  # type: ignore[arg-type]
                    update={"weather": weather, "weather_strength": 0.0 if weather == "clear" else 0.8, "time": tod}
                )
                t0 = time.perf_counter()
                rendered = render_case(spec, width=width, height=height)
                drawing += time.perf_counter() - t0
                frames += len(rendered.images)
            fps = frames / drawing
            target = TARGETS.get((weather, tod))
            mark = f">= {target:.0f} {'ok' if fps >= target else 'MISSED'}" if target else ""
            print(f"{weather:8} {tod:6} {fps:9.1f} {1000 / fps:9.2f}  {mark}")
    if args.write:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            m = synth_dataset(Path(tmp) / "set", cases=args.write, width=width, height=height)
            total = time.perf_counter() - t0
            size = sum(p.stat().st_size for p in (Path(tmp) / "set").rglob("*") if p.is_file())
        print(
            f"a default set of {args.write} cases: {total:.1f} s in all, drawing {m.frames_per_second:.0f} frames/s, "
            f"{size / 1e6:.0f} MB; lowest trigger share {min(m.shares.values()):.0%}"
        )


if __name__ == "__main__":
    main()
