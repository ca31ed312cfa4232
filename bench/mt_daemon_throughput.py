"""AutoMT through a real daemon: cases per minute for description + follow-up generation + validity, on 2 cores.

    python bench/mt_daemon_throughput.py [--cases 120] [--cores 2] [--method automt] [--size 640x320]
                                         [--rules-file ../shared/data/rules/germany.jsonl] [--warmup 6]
                                         [--figures OUT.json]

Pins this process to ``--cores`` cores before anything starts; the daemon (``python -m runners.cli daemon``, a
separate process as in production) and its nats-server (the daemon's child) inherit the same cores, as does
this client. Then:

1. draws ``--cases`` (+ ``--warmup``) synthetic cases (before the clock: drawing is the dataset's, not the
   daemon's work);
2. starts the daemon (default configuration: one T-Agent, F-Agent and validity checker, 2 in flight each) and
   loads the MRs of the rules file through it (rules -> MRs by the offline M-Agent, timed apart);
3. submits ``--warmup`` cases and waits (first-use costs: imports, caches; timed apart);
4. imports the cases' frames into the daemon's store (``runners.clients.mt.case_submissions``, timed apart:
   the client's work), publishes them all at once (``submit_cases_and_collect``) and waits until every case has
   its validated follow-up (or no follow-up, or an error): cases per minute from first publish to last result.

Also shows the CPU seconds the daemon and nats-server used during step 4 (user + system), to tell a daemon
that is CPU-bound from one that waits.

Target: >= 60 cases/min on 2 cores (description + generation + validity).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _daemon import spawned_daemon  # bench/ is on the path when a bench runs
from _figures import Figure, add_figures_arg, write_figures

from bus import Bus, Subjects
from runners.clients.mt import case_submissions, submit_cases_and_collect
from runners.clients.rules import submit_and_collect
from tools.common.artifacts import LocalArtifactStore
from tools.mt.models import METHODS
from tools.mt.synth.dataset import synth_dataset
from tools.rules.files import read_rules_file

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RULES = ROOT.parent / "shared" / "data" / "rules" / "germany.jsonl"
TARGET = 60.0


def cpu_seconds(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


async def run(args: argparse.Namespace, tmp: Path) -> None:
    data = tmp / "data"
    t = time.perf_counter()
    synth_dataset(tmp / "warm", cases=max(1, args.warmup), seed=args.seed + 1000, width=args.w, height=args.h)
    synth_dataset(tmp / "set", cases=args.cases, seed=args.seed, width=args.w, height=args.h)
    print(f"{args.cases} + {args.warmup} synthetic cases ({args.w}x{args.h}) drawn in {time.perf_counter() - t:.1f} s")
    log = tmp / "daemon.log"
    async with spawned_daemon(data, log, extra=["--config", str(args.config)] if args.config else ()) as daemon:
        proc, state, spawn = daemon.proc, daemon.state, daemon.spawned
        print(f"daemon up after {time.monotonic() - spawn:.1f} s (pid {proc.pid}, nats-server pid {state.nats_pid})")
        pids = [proc.pid] + ([state.nats_pid] if state.nats_pid else [])
        store = LocalArtifactStore(data / "runs")
        async with Bus(url=state.nats_url, subjects=Subjects(state.namespace), name="mt-bench") as bus:
            if args.method == "automt":
                rules = list(read_rules_file(args.rules_file, region=args.region))
                t = time.perf_counter()
                summary = await submit_and_collect(bus, rules, timeout=600, source="bench")
                print(
                    f"{len(rules)} rules -> MRs in {time.perf_counter() - t:.1f} s "
                    f"(model load included): {summary.counts()}"
                )
            if args.warmup:
                _, events, _ = case_submissions(
                    store, tmp / "warm", region=args.region, method=args.method, seed=args.seed
                )
                t = time.perf_counter()
                await submit_cases_and_collect(bus, events, timeout=600)
                print(f"warm-up: {args.warmup} cases in {time.perf_counter() - t:.1f} s (not counted)")
            t = time.perf_counter()
            _, events, _ = case_submissions(
                store, tmp / "set", region=args.region, method=args.method, seed=args.seed, per_event=args.per_event
            )
            imported = time.perf_counter() - t
            cpu0, own0 = cpu_seconds(pids), cpu_seconds([os.getpid()])
            t0 = time.perf_counter()
            results = await submit_cases_and_collect(bus, events, timeout=args.timeout)
            seconds = time.perf_counter() - t0
            cpu, own = cpu_seconds(pids) - cpu0, cpu_seconds([os.getpid()]) - own0

    outcomes = results.outcomes.values()
    status: Counter[str] = Counter()
    for o in outcomes:
        if o.validated is not None:
            status["valid" if o.valid else "invalid"] += 1
        elif o.error is not None:
            status["error"] += 1
        elif o.generated is not None:
            status[o.generated.payload.status] += 1
        else:
            status["missing"] += 1
    done = results.done()
    last_results = [o.validated.time for o in outcomes if o.validated is not None]
    gen_seconds = [
        o.generated.payload.followup.seconds
        for o in outcomes
        if o.generated is not None and o.generated.payload.followup is not None
    ]
    rate = 60.0 * done / seconds
    print(f"client import of {args.cases} cases' frames into the store: {imported:.1f} s (not counted)")
    print(
        f"{done}/{args.cases} cases done in {seconds:.1f} s -> {rate:.1f} cases/min "
        f"(target >= {TARGET:.0f} on 2 cores, {'ok' if rate >= TARGET else 'MISSED'}); "
        f"method {args.method}, {args.cores} core(s), outcomes {dict(status)}"
    )
    if gen_seconds:
        print(
            f"  follow-up generation (the generator's own time): {sum(gen_seconds) / len(gen_seconds):.2f} s per "
            f"follow-up, {sum(gen_seconds):.1f} s in all"
        )
    print(
        f"  daemon + nats-server CPU during the run: {cpu:.1f} s of {seconds * args.cores:.1f} core-seconds "
        f"available ({cpu / (seconds * args.cores):.0%}); {cpu / max(1, done):.2f} CPU-s per case; this client {own:.1f} s"
    )
    if last_results:
        print(f"  results arrived over {(max(last_results) - min(last_results)).total_seconds():.1f} s")
    if not results.complete():
        print(f"  {args.cases - done} case(s) had no result within {args.timeout:.0f} s")
    write_figures(
        args.figures,
        [
            Figure(
                "follow-up cases (describe + generate + validity)",
                rate,
                "cases/min",
                f">= {TARGET:g} on 2 cores",
                rate >= TARGET,
                size=f"{done}/{args.cases} cases, {args.method}, {args.cores} core(s)",
            )
        ],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=120)
    ap.add_argument("--warmup", type=int, default=6, help="Cases submitted first and not counted (0: none).")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--method", default="automt", choices=METHODS)
    ap.add_argument("--region", default="germany")
    ap.add_argument("--rules-file", type=Path, default=DEFAULT_RULES)
    ap.add_argument("--size", default="640x320")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--per-event", type=int, default=10, help="Cases per submission event.")
    ap.add_argument("--timeout", type=float, default=1200.0)
    ap.add_argument("--config", type=Path, default=None, help="A drivemt YAML config for the daemon.")
    add_figures_arg(ap)
    args = ap.parse_args()
    args.w, args.h = (int(v) for v in args.size.split("x"))
    if hasattr(os, "sched_setaffinity"):
        avail = sorted(os.sched_getaffinity(0))
        if len(avail) < args.cores:
            print(f"note: only {len(avail)} core(s) available, not {args.cores}")
        os.sched_setaffinity(0, set(avail[: args.cores]))
        print(f"pinned to cores {sorted(os.sched_getaffinity(0))} (daemon and nats-server inherit them)")
    with tempfile.TemporaryDirectory(prefix="drivemt-mt-daemon-bench-") as tmp:
        asyncio.run(run(args, Path(tmp)))


if __name__ == "__main__":
    main()
