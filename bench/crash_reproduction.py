"""Crash reproduction in MetaDrive on the dev crash reports: extract, simulate every ego x policy x K variants.

    python bench/crash_reproduction.py [../shared/data/crashes/dev] [--variants 5] [--policies idm,ppo]
                                       [--workers 2] [--png] [--gif] [--out DIR] [--cases N]
                                       [--figures OUT.json]

Each case is extracted by the offline extractor (``OfflineCrashExtractor``), then every actor in turn is
the ego under each policy, in K seeded variants (SAFE's protocol). A case counts as reproduced when at
least one run's first collision of the ego with another vehicle is a pair the report names, the ego driven by its
policy. Cases are spread over N worker processes, each with one warm MetaDrive engine (a case's runs stay
in one worker, so its map is built once).

Prints, per case: road type, runs, reproduced runs, which (ego, policy) reproduced, violations (runs in
which the ego collided); then the reproduction rate (overall and per policy), seconds per run
(simulation: map build + reset + stepping; rendering separately) and the batch wall time. Timings on a
shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _figures import Figure, add_figures_arg, write_figures  # noqa: E402  # bench/ is on the path when a bench runs

from tools.crash.extract import OfflineCrashExtractor  # noqa: E402
from tools.crash.files import find_cases, read_case  # noqa: E402
from tools.crash.models import Scenario, SimSettings  # noqa: E402
from tools.crash.runs import plan_runs  # noqa: E402

DEFAULT_DIR = ROOT.parent / "shared" / "data" / "crashes" / "dev"

_SIM: Any = None


def _init_worker(settings_json: str) -> None:
    """One warm simulator per worker process."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    global _SIM
    from runners.simulators.metadrive import MetaDriveSimulator

    _SIM = MetaDriveSimulator(settings=SimSettings.model_validate_json(settings_json))
    _SIM.start()


def _run_case(scenario_json: str, settings_json: str, out_dir: str | None) -> dict[str, Any]:
    """Every run of one case in this worker; small summaries back to the parent."""
    scenario = Scenario.model_validate_json(scenario_json)
    settings = SimSettings.model_validate_json(settings_json)
    runs = []
    error = None
    for spec in plan_runs(scenario, settings):
        try:
            record = _SIM.run(scenario, spec, out_dir=Path(out_dir) / scenario.case_id if out_dir else None)
        except Exception as exc:  # a case the simulator refuses: report it, keep going
            error = f"{type(exc).__name__}: {exc}"
            break
        first = record.ego_first_vehicle_collision
        timings = _SIM.last_timings
        runs.append(
            {
                "run_id": spec.run_id,
                "ego": spec.ego_id,
                "policy": spec.policy,
                "reproduced": record.reproduced,
                "ego_collided": record.ego_collided,
                "first": None if first is None else f"{first.a}-{first.b}@{first.t:.1f}s",
                "sim_s": record.sim_seconds,
                "wall_s": record.wall_seconds,
                "map_s": timings.map,
                "reset_s": timings.reset,
                "step_s": timings.step,
                "render_s": record.render_seconds,
                "error": record.error.splitlines()[0] if record.error else None,
            }
        )
    return {
        "case": scenario.case_id,
        "road": scenario.road_network.road_type,
        "vehicles": len(scenario.actors),
        "runs": runs,
        "error": error,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--variants", type=int, default=5)
    ap.add_argument("--policies", default="idm", help="comma-separated: idm,ppo")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--png", action="store_true", help="draw a PNG per run (render time is reported apart)")
    ap.add_argument("--gif", action="store_true", help="write a GIF per run")
    ap.add_argument("--out", type=Path, default=None, help="where records and pictures go (default: none)")
    ap.add_argument("--json", action="store_true", help="print the per-run summaries as JSON lines too")
    ap.add_argument("--cases", type=int, default=None, help="only the first N cases (by folder name; default all)")
    add_figures_arg(ap)
    args = ap.parse_args()

    settings = SimSettings(
        variants=args.variants,
        policies=[p.strip() for p in args.policies.split(",") if p.strip()],  # type: ignore[misc]
        render_png=args.png,
        render_gif=args.gif,
    )
    out_dir = args.out
    if (args.png or args.gif) and out_dir is None:
        import tempfile

        out_dir = Path(tempfile.mkdtemp(prefix="crash-repro-"))
    extractor = OfflineCrashExtractor()
    scenarios = []
    t_extract = time.perf_counter()
    for folder in find_cases(args.data)[: args.cases]:
        scenarios.append(extractor.extract(read_case(folder)))
    t_extract = time.perf_counter() - t_extract

    t0 = time.perf_counter()
    results: list[dict[str, Any]] = []
    ctx = get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=args.workers, mp_context=ctx, initializer=_init_worker, initargs=(settings.model_dump_json(),)
    ) as pool:
        t_ready = time.perf_counter()
        # largest cases first, so the two workers finish together
        order = sorted(scenarios, key=lambda s: -len(s.actors))
        futures = [
            pool.submit(_run_case, s.model_dump_json(), settings.model_dump_json(), str(out_dir) if out_dir else None)
            for s in order
        ]
        for fut in futures:
            results.append(fut.result())
    wall = time.perf_counter() - t0
    del t_ready

    results.sort(key=lambda r: r["case"])
    print(f"{len(scenarios)} cases extracted in {t_extract:.1f} s; K={args.variants}, policies={settings.policies}")
    print(f"{'case':<8} {'road':<15} {'runs':>4} {'repro':>5} {'viol':>4}  reproduced by")
    reproduced_cases = 0
    per_policy: dict[str, int] = dict.fromkeys(settings.policies, 0)
    all_runs: list[dict[str, Any]] = []
    for r in results:
        runs = r["runs"]
        all_runs.extend(runs)
        rep = [x for x in runs if x["reproduced"]]
        by = sorted({f"{x['ego']}/{x['policy']}" for x in rep})
        for pol in settings.policies:
            if any(x["policy"] == pol for x in rep):
                per_policy[pol] += 1
        reproduced_cases += bool(rep)
        viol = sum(x["ego_collided"] for x in runs)
        note = f"  ERROR {r['error']}" if r["error"] else ""
        print(f"{r['case']:<8} {r['road']:<15} {len(runs):>4} {len(rep):>5} {viol:>4}  {', '.join(by) or '-'}{note}")
        if args.json:
            for x in runs:
                print(json.dumps({"case": r["case"], **x}))
    # The rate's denominator: the cases with a crash to reproduce (two vehicles or more, a run done), as crash run's.
    n = sum(1 for r in results if r["vehicles"] >= 2 and any(not x["error"] for x in r["runs"]))
    aside = len(results) - n
    print()
    print(
        f"reproduced: {reproduced_cases}/{n} cases = {reproduced_cases / max(1, n):.0%}"
        + (f" ({aside} case(s) with one vehicle or no run done, not counted)" if aside else "")
    )
    for pol, k in per_policy.items():
        print(f"  with {pol}: {k}/{n} = {k / max(1, n):.0%}")
    runs_ok = [x for x in all_runs if not x["error"]]
    if runs_ok:

        def stats(key: str) -> str:
            vals = [x[key] for x in runs_ok]
            return f"mean {statistics.mean(vals):.3f} p50 {statistics.median(vals):.3f} max {max(vals):.3f}"

        print(
            f"runs: {len(all_runs)} ({len(all_runs) - len(runs_ok)} failed); violations {sum(x['ego_collided'] for x in runs_ok)}"
        )
        print(f"seconds per run (map+reset+step): {stats('wall_s')}")
        print(f"  map {stats('map_s')}; reset {stats('reset_s')}; step {stats('step_s')}")
        print(f"  simulated seconds per run: {stats('sim_s')}")
        print(f"render seconds per run: {stats('render_s')}")
    print(f"batch wall time: {wall:.1f} s with {args.workers} workers (including their engine start)")
    size = f"{n} cases, {len(all_runs)} runs, K={args.variants}, {','.join(settings.policies)}, {args.workers} workers"
    figures = [Figure("crash batch wall time (engine start included)", wall, "s", size=size)]
    if runs_ok:
        figures.insert(
            0,
            Figure(
                "crash seconds per run (map+reset+step, mean)",
                statistics.mean(x["wall_s"] for x in runs_ok),
                "s",
                size=size + ("" if args.png or args.gif else ", no rendering"),
            ),
        )
    write_figures(args.figures, figures)
    if out_dir:
        print(f"records and pictures under {out_dir}")


if __name__ == "__main__":
    main()
