"""Seconds per MetaDrive run in a warm worker: map build, reset, stepping, total; rendering apart.

    python bench/sim_speed.py [../shared/data/crashes/dev] [--runs 15] [--policy idm|ppo] [--no-render]

One process, one warm simulator (the engine starts once, before timing). Each run is one case of the dev
set (extracted offline), ego V1, variant 0, with 20 simulated seconds in full: early ending and the stop
after the first collision are switched off, so every run steps 20 s. Consecutive cases have different
maps, so most runs rebuild the map (the figure the issue's target is about: map build + reset + 20 s).
Rendering (top-down PNG and GIF, drawn from the record afterwards) is timed separately.

Prints mean / p50 / max of each phase over the runs, and the engine start-up. Timings on a shared 2-core
machine are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.crash.extract import OfflineCrashExtractor  # noqa: E402
from tools.crash.files import find_cases, read_case  # noqa: E402
from tools.crash.models import RunSpec, SimSettings  # noqa: E402

DEFAULT_DIR = ROOT.parent / "shared" / "data" / "crashes" / "dev"


def _row(name: str, vals: list[float]) -> str:
    return f"{name:<28} mean {statistics.mean(vals):6.3f}  p50 {statistics.median(vals):6.3f}  max {max(vals):6.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--policy", choices=["idm", "ppo"], default="idm")
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--no-render", action="store_true")
    args = ap.parse_args()

    from runners.simulators.metadrive import MetaDriveConfig, MetaDriveSimulator

    extractor = OfflineCrashExtractor()
    scenarios = [extractor.extract(read_case(f)) for f in find_cases(args.data)]
    settings = SimSettings(
        duration_s=args.duration,
        variants=1,
        render_png=not args.no_render,
        render_gif=not args.no_render,
        stop_after_first_collision_s=600.0,
    )
    config = MetaDriveConfig(end_when_done=False)
    out = Path(tempfile.mkdtemp(prefix="sim-speed-"))
    t0 = time.perf_counter()
    sim = MetaDriveSimulator(settings=settings, config=config)
    sim.start()
    startup = time.perf_counter() - t0
    rows: dict[str, list[float]] = {"map": [], "reset": [], "step": [], "total": [], "render": [], "sim": []}
    rebuilt = 0
    try:
        for k in range(args.runs):
            scenario = scenarios[k % len(scenarios)]
            spec = RunSpec(case_id=scenario.case_id, ego_id=scenario.actors[0].id, policy=args.policy)
            record = sim.run(scenario, spec, out_dir=None if args.no_render else out / scenario.case_id)
            if record.error:
                print(f"{scenario.case_id}: {record.error.splitlines()[0]}")
                continue
            t = sim.last_timings
            rebuilt += t.map_rebuilt
            rows["map"].append(t.map)
            rows["reset"].append(t.reset)
            rows["step"].append(t.step)
            rows["total"].append(t.wall)
            rows["render"].append(t.render)
            rows["sim"].append(record.sim_seconds)
    finally:
        sim.close()
    n = len(rows["total"])
    print(
        f"{n} runs, policy {args.policy}, {statistics.mean(rows['sim']):.1f} simulated s each; map rebuilt in {rebuilt}"
    )
    print(f"engine start-up (once per worker): {startup:.2f} s")
    print(_row("map build", rows["map"]))
    print(_row("reset", rows["reset"]))
    print(_row("stepping", rows["step"]))
    print(_row("total (map+reset+step)", rows["total"]))
    if not args.no_render:
        print(_row("render PNG+GIF (apart)", rows["render"]))
        print(f"pictures under {out}")


if __name__ == "__main__":
    main()
