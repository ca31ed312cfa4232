"""Throughput and start-up of the daemon on the embedded defaults (offline), as a separate process.

Measures, on this machine:
* how soon a freshly started daemon accepts events (first acknowledged publish after spawn);
* how soon it returns its first MR (model load included);
* end-to-end throughput: N rules published at once, first publish to last result;
* MR search latency (p50/p95) through the daemon with the store holding M MRs.

Usage: python bench/daemon_throughput.py [--rules 1000] [--mrs 1000] [--rules-file PATH] [--figures OUT.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from itertools import product
from pathlib import Path

from _daemon import spawned_daemon  # bench/ is on the path when a bench runs
from _figures import Figure, add_figures_arg, write_figures

from bus import Bus, ErrorDomain, MRAccepted, MRRejected, RulesSubmitted, Subjects, decode_event
from bus.events import ErrorReported, RulesSubmittedPayload
from bus.rpc import call
from bus.services import MRS_COUNT, MRS_IMPORT, MRS_SEARCH, CountMRs, ImportedMR, ImportMRs, SearchMRs
from runners.clients.rules import make_submissions
from tools.rules.models import MRFields, TrafficRule
from tools.rules.ontology import load_ontology

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RULES = ROOT.parent / "shared" / "data" / "rules" / "germany.jsonl"
ACCEPTS_TARGET_S = 5.0
FIRST_MR_TARGET_S = 10.0
RULES_TARGET = 50.0  # rules/s end to end
SEARCH_P50_TARGET_MS = 30.0


def load_rules(path: Path, n: int) -> list[TrafficRule]:
    """n rules cycling over the file's texts (ids unique)."""
    if path.is_file():
        texts = [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]
    else:
        texts = [
            json.loads(line)["text"]
            for line in (ROOT / "tools" / "data" / "sample_rules_germany.jsonl").read_text().splitlines()
        ]
    return [TrafficRule(id=f"b{i:05d}", text=texts[i % len(texts)], region="germany") for i in range(n)]


def distinct_mrs(n: int) -> list[ImportedMR]:
    """n distinct MRs built from ontology terms (for the search benchmark)."""
    vocab = load_ontology().vocabulary("germany")
    out = []
    for road, manip, beh in product(vocab.road_types, vocab.manipulations, ("slow down", "keep current")):
        fields = MRFields(road_type=road.text, verb=manip.verb, manipulation=manip.text, expected_behavior=beh)
        out.append(ImportedMR(fields=fields, region="germany", source=f"bench-{len(out)}"))
        if len(out) == n:
            break
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--mrs", type=int, default=1000)
    ap.add_argument("--searches", type=int, default=200)
    ap.add_argument("--rules-file", type=Path, default=DEFAULT_RULES)
    add_figures_arg(ap)
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="drivemt-bench-"))
    async with spawned_daemon(data, data / "daemon.log", poll_s=0.01) as daemon:
        spawn, state = daemon.spawned, daemon.state
        async with Bus(url=state.nats_url, subjects=Subjects()) as bus:
            probe = RulesSubmitted(
                producer="bench",
                payload=RulesSubmittedPayload(rules=[TrafficRule(id="probe", text="Slow down in fog.")]),
            )
            first_mr = asyncio.get_running_loop().create_future()

            async def on_first(msg: object) -> None:
                ev = decode_event(msg.data, subject=msg.subject)  # type: ignore[attr-defined]
                if ev.correlation_id == probe.correlation_id and not first_mr.done():
                    first_mr.set_result(time.monotonic())

            sub = await bus.nc.subscribe(bus.subjects.mrs_accepted, cb=on_first)
            while True:
                try:
                    await bus.publish(probe)
                    break
                except Exception:
                    await asyncio.sleep(0.01)
            accepted_at = time.monotonic() - spawn
            first_mr_at = await asyncio.wait_for(first_mr, 120) - spawn
            await sub.unsubscribe()
            print(f"daemon accepts events after      {accepted_at:6.2f} s (target <= {ACCEPTS_TARGET_S:.0f} s)")
            print(
                f"first MR returned after          {first_mr_at:6.2f} s "
                f"(target <= {FIRST_MR_TARGET_S:.0f} s, model load included)"
            )

            rules = load_rules(args.rules_file, args.rules)
            correlation, events = make_submissions(rules)
            done: set[str] = set()
            finished = asyncio.get_running_loop().create_future()

            async def on_result(msg: object) -> None:
                ev = decode_event(msg.data, subject=msg.subject)  # type: ignore[attr-defined]
                if ev.correlation_id != correlation:
                    return
                if isinstance(ev, MRAccepted | MRRejected):
                    done.add(ev.payload.rule.id)
                elif isinstance(ev, ErrorReported) and ev.payload.item_id:
                    done.add(ev.payload.item_id)
                if len(done) == len(rules) and not finished.done():
                    finished.set_result(time.perf_counter())

            subs = [
                await bus.nc.subscribe(s, cb=on_result)
                for s in (bus.subjects.mrs_accepted, bus.subjects.mrs_rejected, bus.subjects.errors(ErrorDomain.RULES))
            ]
            t0 = time.perf_counter()
            await bus.publish_many(events)
            t_pub = time.perf_counter() - t0
            t_end = await asyncio.wait_for(finished, 600)
            seconds = t_end - t0
            rate = len(rules) / seconds
            print(
                f"{len(rules)} rules: published in {t_pub:.2f} s, all results after {seconds:.2f} s -> {rate:.1f} rules/s (target >= {RULES_TARGET:.0f})"
            )
            for s in subs:
                await s.unsubscribe()

            count = (await call(bus, MRS_COUNT, CountMRs())).count
            need = max(0, args.mrs - count)
            if need:
                await call(bus, MRS_IMPORT, ImportMRs(mrs=distinct_mrs(args.mrs)[: need + 200]), timeout=300)
            count = (await call(bus, MRS_COUNT, CountMRs())).count
            queries = [
                "pedestrian crossing the road",
                "fog on the motorway",
                "red light at an intersection",
                "children near a school",
                "bus at a stop",
            ]
            lat = []
            for i in range(args.searches):
                t = time.perf_counter()
                await call(bus, MRS_SEARCH, SearchMRs(query=f"{queries[i % len(queries)]} {i}", limit=5))
                lat.append((time.perf_counter() - t) * 1000)
            lat.sort()
            p50 = statistics.median(lat)
            print(
                f"MR search with {count} MRs stored: p50 {p50:.1f} ms, p95 {lat[int(0.95 * len(lat))]:.1f} ms over {len(lat)} queries (target p50 <= {SEARCH_P50_TARGET_MS:.0f} ms; through the daemon, request/reply included)"
            )
    write_figures(
        args.figures,
        [
            Figure(
                "daemon accepts events", accepted_at, "s", f"<= {ACCEPTS_TARGET_S:g}", accepted_at <= ACCEPTS_TARGET_S
            ),
            Figure(
                "first MR (model load included)",
                first_mr_at,
                "s",
                f"<= {FIRST_MR_TARGET_S:g}",
                first_mr_at <= FIRST_MR_TARGET_S,
            ),
            Figure(
                "rules end to end",
                rate,
                "rules/s",
                f">= {RULES_TARGET:g}",
                rate >= RULES_TARGET,
                size=f"{len(rules)} rules",
            ),
            Figure(
                "MR search p50 (request/reply)",
                p50,
                "ms",
                f"<= {SEARCH_P50_TARGET_MS:g}",
                p50 <= SEARCH_P50_TARGET_MS,
                size=f"{count} MRs, {len(lat)} queries",
            ),
        ],
    )


if __name__ == "__main__":
    asyncio.run(main())
