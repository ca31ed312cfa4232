"""The suite's short figures in one run, in one table, each beside its anchor.

    python bench/all.py [--quick] [--only rules,crash,tl,mt] [--logs DIR]

Runs, one after the other, each in its own process (each bench pins its own cores and sets its own thread
limits), with ``--figures`` so it hands its figures back as JSON:

* ``rules``: ``daemon_throughput.py``: start-up, first MR, rules/s end to end, MR search p50 through the daemon;
* ``crash``: ``crash_reproduction.py``: MetaDrive seconds per run and the batch's wall time (IDM ego);
* ``tl``: ``tl_augment_speed.py``: TIGAUG's twelve transformations, images/s at 1280x720 on one core;
* ``mt``: ``mt_daemon_throughput.py``: AutoMT follow-up cases per minute through a daemon on 2 cores.

``--quick`` makes every size small (a few minutes in all); without it each bench runs at its own defaults. The
anchors are the targets each bench states (and the paper's figure where it names one); the benches' own output
goes to ``--logs`` (a temporary folder unless given), and only the table is printed. The exit status is 1 when a
bench failed or a figure missed its target.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _figures import Figure, read_figures  # bench/ is on the path when a bench runs

BENCH = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Bench:
    """One bench of the suite and its arguments, full and quick."""

    key: str
    script: str
    full: tuple[str, ...]
    quick: tuple[str, ...]


SUITE = (
    Bench("rules", "daemon_throughput.py", (), ("--rules", "200", "--mrs", "200", "--searches", "50")),
    Bench("crash", "crash_reproduction.py", (), ("--cases", "4", "--variants", "1")),
    Bench("tl", "tl_augment_speed.py", (), ("--images", "3", "--rounds", "1")),
    Bench("mt", "mt_daemon_throughput.py", (), ("--cases", "20", "--warmup", "2")),
)


@dataclass
class Outcome:
    """What one bench gave: its figures, or why not."""

    bench: Bench
    figures: list[Figure]
    seconds: float
    error: str = ""


def run_bench(bench: Bench, quick: bool, logs: Path) -> Outcome:
    """Run one bench in its own process; its stdout and stderr go to files under ``logs``."""
    out = logs / f"{bench.key}.figures.json"
    out.unlink(missing_ok=True)
    args = [sys.executable, str(BENCH / bench.script), *(bench.quick if quick else bench.full), "--figures", str(out)]
    t = time.perf_counter()
    with (logs / f"{bench.key}.out").open("wb") as stdout, (logs / f"{bench.key}.err").open("wb") as stderr:
        rc = subprocess.call(args, stdout=stdout, stderr=stderr, cwd=BENCH.parent)
    seconds = time.perf_counter() - t
    if rc != 0 or not out.is_file():
        tail = (logs / f"{bench.key}.err").read_text(errors="replace").strip().splitlines()[-1:]
        return Outcome(bench, [], seconds, f"exit status {rc}: {tail[0][:160] if tail else 'no output'}")
    return Outcome(bench, read_figures(out), seconds)


def fmt(value: float) -> str:
    """A figure with as many digits as it deserves."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def table(outcomes: list[Outcome]) -> list[str]:
    """One line per figure: bench, figure, value, anchor, verdict, what was measured."""
    rows = [("bench", "figure", "value", "unit", "anchor (target)", "goal", "measured on")]
    for o in outcomes:
        took = f"{o.bench.script}, {o.seconds:.0f} s"
        if o.error:
            rows.append((o.bench.key, "FAILED", "-", "", o.error, "", took))
            continue
        for f in o.figures:
            anchor = f.target or "no target stated"
            if f.anchor:
                anchor += f"; {f.anchor}"
            verdict = "" if f.met is None else ("met" if f.met else "MISSED")
            rows.append((o.bench.key, f.name, fmt(f.value), f.unit, anchor, verdict, f"{f.size}; {took}".strip("; ")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        cells = [c.rjust(widths[i]) if i == 2 else c.ljust(widths[i]) for i, c in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="Small sizes (a few minutes in all).")
    ap.add_argument("--only", default=None, help=f"Comma-separated: {','.join(b.key for b in SUITE)} (default all).")
    ap.add_argument("--logs", type=Path, default=None, help="Keep each bench's output here (default: a temp dir).")
    args = ap.parse_args()
    keys = [k.strip() for k in args.only.split(",")] if args.only else [b.key for b in SUITE]
    unknown = set(keys) - {b.key for b in SUITE}
    if unknown:
        raise SystemExit(f"--only: unknown {sorted(unknown)}; choose from {[b.key for b in SUITE]}")
    logs = args.logs or Path(tempfile.mkdtemp(prefix="drivemt-bench-all-"))
    logs.mkdir(parents=True, exist_ok=True)
    outcomes = []
    for bench in SUITE:
        if bench.key in keys:
            print(f"running {bench.script}{' --quick sizes' if args.quick else ''} ...", flush=True)
            outcomes.append(run_bench(bench, args.quick, logs))
    print()
    print("\n".join(table(outcomes)))
    print(f"\neach bench's own output: {logs}")
    failed = any(o.error for o in outcomes) or any(f.met is False for o in outcomes for f in o.figures)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
