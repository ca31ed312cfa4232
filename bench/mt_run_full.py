"""``drivemt mt run`` in full: synthetic cases, four methods, the six driving models, on this machine's cores.

    python bench/mt_run_full.py --models ZOO [--cases 100] [--region germany] [--rounds 1] [--size 640x320]

Draws ``--cases`` synthetic cases, reads the region's rules from ``../shared/data/rules``, and runs AutoMT's
experiment (rules -> MRs, descriptions, follow-ups, validity, the Judge with every model in ``--models``) for
``automt, manual, random, null``. Prints the whole time beside the target (<= 30 minutes for 100 cases, 4 methods,
1 round), each method's validation rate, distinct manipulations and violation rate per model, and on how many
models ``automt`` finds a higher violation rate than ``manual`` (target: >= 5 of 6), whichever way it goes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runners.cli.logs import configure_logging
from runners.config import load_config
from runners.host.experiment import run_experiment_in_process
from tools.mt.synth.dataset import synth_dataset
from tools.rules.files import read_rules_file

RULES_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "rules"
RULES = {"germany": RULES_DIR / "germany.jsonl", "california": RULES_DIR / "california-dev.jsonl"}
TARGET_S = 1800.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", type=Path, required=True, help="A zoo (drivemt ads train --out).")
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--region", default="germany", choices=sorted(RULES))
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--size", default="640x320")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="Also write the summary here.")
    args = ap.parse_args()
    configure_logging("warning", "console")
    width, height = (int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        cases = Path(tmp) / "cases"
        synth_dataset(cases, cases=args.cases, seed=args.seed + 100, width=width, height=height)
        rules = list(read_rules_file(RULES[args.region], region=args.region))
        cfg = load_config(data_dir=Path(tmp) / "data")
        cfg = cfg.model_copy(update={"artifacts_dir": Path(tmp) / "runs"})
        started = time.perf_counter()
        run = asyncio.run(
            run_experiment_in_process(
                cfg, cases, args.models, region=args.region, methods=["automt", "manual", "random", "null"],
                rounds=args.rounds, rules=rules, seed=args.seed,
                on_progress=lambda stage, d, t: print(f"\r{stage}: {d}/{t}   ", end="", file=sys.stderr, flush=True),
            )
        )  # fmt: skip
        seconds = time.perf_counter() - started
        print(file=sys.stderr)
    s = run.summary
    if args.json:
        args.json.write_text(json.dumps(s, indent=2))
    models = s["models"]
    print(
        f"{args.cases} cases ({args.size}), {args.region}, {args.rounds} round(s), band {s['band']}, models: {', '.join(models)}"
    )
    print(f"{'method':8s} {'valid':>6s} {'distinct':>8s} " + " ".join(f"{m:>9s}" for m in models))
    for method, f in s["methods"].items():
        print(
            f"{method:8s} {f['validation_rate']:6.1%} {f['distinct_manipulations']:8d} "
            + " ".join(f"{f['violation_rate'][m]:9.1%}" for m in models)
        )
    a, m = s["methods"]["automt"]["violation_rate"], s["methods"]["manual"]["violation_rate"]
    higher = sum(a[k] > m[k] for k in models)
    print(
        f"automt > manual on {higher} of {len(models)} models (target >= 5 of 6: {'MET' if higher >= 5 else 'MISSED'})"
    )
    ag = s["agreement"]
    if ag["verdicts"]:
        print(
            f"scene truth: MR matches the driver {ag['mr_matches_scene']:.1%}; verdict agreement {ag['agreement']:.1%}"
        )
    for e in s["model_errors"]:
        print(f"model error: {e}")
    print(
        f"whole run: {seconds:.0f} s   target <= {TARGET_S:.0f} s for 100 cases x 4 methods x 1 round   "
        f"{'MET' if seconds <= TARGET_S else 'MISSED'}   ({args.cases * 4 * args.rounds / (seconds / 60):.1f} cases/min)"
    )


if __name__ == "__main__":
    main()
