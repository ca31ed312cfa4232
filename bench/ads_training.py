"""Training AutoMT's six driving models on 300 synthetic cases on this machine's cores.

    python bench/ads_training.py [--cases 300] [--time-limit 1080] [--size 160x80] [--data DIR] [--out DIR]

Draws ``--cases`` synthetic cases (320x160; or reads ``--data``), trains the six (ResNet18 and VGG11 standing in
for ResNet101 and VGG16) within ``--time-limit`` seconds in all, and prints each model's parameters, time and
held-out whole-case MAE beside the constant-mean baseline. Targets: <= 20 minutes in all, every model beating
the baseline on speed and steering.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runners.ads.architectures import DEFAULT_ZOO
from runners.ads.train import load_case_frames, train_zoo
from tools.mt.synth.dataset import synth_dataset

TARGET_S = 1200.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--time-limit", type=float, default=1080.0, help="Training seconds in all (reading comes on top).")
    ap.add_argument("--size", default="160x80", help="Model input WIDTHxHEIGHT.")
    ap.add_argument("--data", type=Path, default=None, help="Cases to train on (drawn if unset).")
    ap.add_argument("--out", type=Path, default=None, help="Keep the models here.")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data is None:
            t = time.perf_counter()
            data = Path(tmp) / "data"
            synth_dataset(data, cases=args.cases, seed=args.seed, width=320, height=160)
            print(f"drew {args.cases} synthetic cases in {time.perf_counter() - t:.0f} s")
        started = time.perf_counter()
        frames = load_case_frames(data, height=height, width=width)
        report = train_zoo(
            frames,
            args.out or Path(tmp) / "models",
            models=DEFAULT_ZOO,
            time_limit_s=args.time_limit,
            height=height,
            width=width,
            seed=args.seed,
            progress=lambda name, frac: print(f"\r{name:10s} {frac:5.1%}", end="", file=sys.stderr, flush=True),
        )
        total = time.perf_counter() - started
    print(file=sys.stderr)
    print(
        f"{report.train_cases} training cases, {report.held_out_cases} held-out whole cases, input {width}x{height}; "
        f"baseline (constant mean) MAE: speed {report.baseline_speed_mae_kmh:.2f} km/h, "
        f"steering {report.baseline_steering_mae_rad:.4f} rad"
    )
    print(
        f"{'model':10s} {'for':10s} {'params':>11s} {'s':>6s} {'epochs':>7s} {'speed MAE':>10s} {'steer MAE':>10s} beats"
    )
    for m in report.models:
        print(
            f"{m.name:10s} {m.stands_in_for or '':10s} {m.parameters:>11,d} {m.seconds:6.0f} {m.epochs:7.1f} "
            f"{m.speed_mae_kmh:10.2f} {m.steering_mae_rad:10.4f} {'yes' if m.beats_baseline else 'NO'}"
        )
    beaten = sum(m.beats_baseline for m in report.models)
    print(
        f"total (reading + training): {total:.0f} s   target <= {TARGET_S:.0f} s   "
        f"{'MET' if total <= TARGET_S else 'MISSED'}; {beaten}/{len(report.models)} beat the baseline on both "
        f"(target 6/6: {'MET' if beaten == len(report.models) == 6 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
