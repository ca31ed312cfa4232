"""Calibrating the per-model band's floor on ``null`` follow-ups (a distant parked car off the road).

    python bench/judge_calibration.py --models ZOO [--cases 100] [--size 640x320]

A null follow-up should change no model's behaviour, so every change a model shows there is noise. For each
model this prints the 95th, 99th percentile and the largest |change| of the median speed (km/h) and steering
(rad) between source and null follow-up, beside its own spread over the source's frames (the per-model band
before the floor), and the false-alarm rate of the per-model band at the current floor. The floor should sit
at or above the 99th percentile of the changes that the models' own spread does not already cover.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runners.cli.logs import configure_logging
from runners.config import load_config
from runners.host.experiment import run_experiment_in_process
from tools.mt.judging import judge_models
from tools.mt.models import BandFloor
from tools.mt.synth.dataset import synth_dataset


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", type=Path, required=True)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--size", default="640x320")
    ap.add_argument("--seed", type=int, default=31)
    args = ap.parse_args()
    configure_logging("warning", "console")
    width, height = (int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        cases = Path(tmp) / "cases"
        synth_dataset(cases, cases=args.cases, seed=args.seed, width=width, height=height)
        cfg = load_config(data_dir=Path(tmp) / "data")
        cfg = cfg.model_copy(update={"artifacts_dir": Path(tmp) / "runs"})
        run = asyncio.run(
            run_experiment_in_process(cfg, cases, args.models, region="germany", methods=["null"], band="strict")
        )
    floor = BandFloor()
    rows: dict[str, dict[str, list[float]]] = {}
    alarms: dict[str, list[bool]] = {}
    for rr in run.rounds:
        for j in rr.judged:
            if j.status != "judged":
                continue
            src = {p.model: p for p in j.source_predictions}
            fol = {p.model: p for p in j.followup_predictions}
            for m, s in src.items():
                f = fol[m]
                r = rows.setdefault(m, {"speed": [], "steer": [], "spread_speed": [], "spread_steer": []})
                if s.speed_kmh and f.speed_kmh:
                    r["speed"].append(abs(statistics.median(f.speed_kmh) - statistics.median(s.speed_kmh)))
                    r["spread_speed"].append(statistics.pstdev(s.speed_kmh))
                if s.steering_rad and f.steering_rad:
                    r["steer"].append(abs(statistics.median(f.steering_rad) - statistics.median(s.steering_rad)))
                    r["spread_steer"].append(statistics.pstdev(s.steering_rad))
                v = judge_models("keep current", {m: s}, {m: f}, policy="per-model", floor=floor)[0]
                alarms.setdefault(m, []).append(v.violation)
    print(
        f"null follow-ups of {args.cases} cases ({args.size}); current floor: speed {floor.speed_kmh} km/h, "
        f"steering {floor.steering_rad} rad"
    )
    print(
        f"{'model':10s} {'n':>4s} | speed |change| p95 p99 max (km/h) | own spread med | steering p95 p99 max (rad) "
        f"| own spread med | false alarms at the floor"
    )
    for m, r in rows.items():
        sp, st = np.asarray(r["speed"]), np.asarray(r["steer"])
        rate = sum(alarms[m]) / len(alarms[m])
        print(
            f"{m:10s} {len(sp):4d} | {np.percentile(sp, 95):5.2f} {np.percentile(sp, 99):5.2f} {sp.max():5.2f} "
            f"| {np.median(r['spread_speed']):5.2f} | {np.percentile(st, 95):.4f} {np.percentile(st, 99):.4f} "
            f"{st.max():.4f} | {np.median(r['spread_steer']):.4f} | {rate:.1%} (target <= 5 %)"
        )


if __name__ == "__main__":
    main()
