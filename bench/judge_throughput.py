"""The Judge's speed with six driving models on this machine's cores.

    python bench/judge_throughput.py --models ZOO [--cases 60] [--size 640x320]

Two figures: (1) the Judge's own work per case, every model on the source and the follow-up (10 frames each),
predictions not cached, in cases per minute; (2) the whole pipeline (description, follow-up, validity and the
Judge) through ``drivemt mt run --method null`` on ``--cases`` cases. Target: >= 20 cases per minute with six
models on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runners.ads.pool import ModelPool, import_models
from runners.cli.logs import configure_logging
from runners.config import load_config
from runners.host.experiment import run_experiment_in_process
from tools.common.artifacts import LocalArtifactStore
from tools.mt.loaders import import_cases, load_cases
from tools.mt.synth.dataset import synth_dataset

TARGET = 20.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", type=Path, required=True)
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--size", default="640x320")
    args = ap.parse_args()
    configure_logging("warning", "console")
    width, height = (int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        cases_dir = Path(tmp) / "cases"
        synth_dataset(cases_dir, cases=args.cases, seed=21, width=width, height=height)
        store = LocalArtifactStore(Path(tmp) / "store")
        refs = import_models(store, args.models)
        cases = import_cases(store, load_cases(cases_dir).cases, prefix="c")
        pool = ModelPool(store)
        for ref in refs:
            pool.predict(ref, cases[0], cache=False)  # load and warm up
        n = min(20, len(cases))
        t = time.perf_counter()
        for case in cases[:n]:
            for _ in range(2):  # the source and a follow-up of the same size
                for ref in refs:
                    pool.predict(ref, case, cache=False)
        per_case = (time.perf_counter() - t) / n
        judge_rate = 60.0 / per_case
        cfg = load_config(data_dir=Path(tmp) / "data")
        cfg = cfg.model_copy(update={"artifacts_dir": Path(tmp) / "runs"})
        t = time.perf_counter()
        run = asyncio.run(run_experiment_in_process(cfg, cases_dir, args.models, region="germany", methods=["null"]))
        whole = time.perf_counter() - t
    models = run.summary["models"]
    print(f"{len(refs)} models ({', '.join(models)}), {args.size} frames, {os.cpu_count()} cores")
    print(
        f"Judge only (6 models x source + follow-up, no cache): {per_case:.2f} s/case = {judge_rate:.1f} cases/min   "
        f"target >= {TARGET:.0f}   {'MET' if judge_rate >= TARGET else 'MISSED'}"
    )
    print(
        f"whole pipeline (null method, {args.cases} cases, incl. start-up and report): {whole:.0f} s = "
        f"{args.cases / (whole / 60):.1f} cases/min"
    )


if __name__ == "__main__":
    main()
