"""F-Agent MR matching per case with 1,000 MRs stored: milliseconds per case, mean and p95.

    python bench/mt_matching_speed.py [--mrs 1000] [--cases 100] [--seed 0] [--region germany] [--no-daemon]

Stores ``--mrs`` distinct MRs (``tools.rules.mr.new_mr`` over random road types, manipulations and behaviours of
the region's ontology vocabulary) in a local-mode Qdrant store with the real MiniLM embedder, draws ``--cases``
synthetic cases (small frames: only their descriptions matter here) and describes them offline (image
statistics), then times the F-Agent's matching of each case two ways:

1. **store**: what the F-Agent does, called directly on a :class:`memory.mr_store.QdrantMRStore`: the region's MR
   list (``mrs.list``; the F-Agent reuses it for 2 s, so it is shown apart), AutoMT's filters
   (:func:`tools.mt.matching.applicable`) over every MR, then the claim (``mrs.claim``: embed the case's
   representation, retrieve the fitting MRs with their vectors, pick the least used with cosine tie-break,
   count the use). The embedding is timed apart (its cache is cleared first so each case is embedded once).
2. **daemon**: :meth:`agents.mt.f_agent.FAgent.plan` itself, on a private daemon (embedded NATS, the MR service
   serving the store): ``mrs.list`` and ``mrs.claim`` as request/reply over the bus, with the agent's 2 s list
   cache as in production.

Target: <= 100 ms per case. AutoMT's anchor: 15 s per case (an LLM reads the MRs).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.mt.f_agent import FAgent
from bus.events.mt import CasesDescribed, CasesDescribedPayload
from memory import MiniLMEmbedder
from memory.mr_store import QdrantMRStore, StoreSettings
from runners.cli.logs import configure_logging
from runners.config import load_config
from runners.host.inprocess import private_daemon
from tools.common.artifacts import LocalArtifactStore
from tools.mt.describe import describe_offline
from tools.mt.generate import read_frames
from tools.mt.matching import applicable, representation
from tools.mt.models import CaseDescription, DrivingCase
from tools.mt.synth.dataset import synth_dataset
from tools.rules.models import MRFields, NewMR
from tools.rules.mr import new_mr
from tools.rules.ontology import BEHAVIORS, load_ontology

TARGET_MS = 100.0
ANCHOR_MS = 15_000.0


def distinct_mrs(n: int, region: str, seed: int) -> list[NewMR]:
    """n MRs with distinct canonical keys, drawn from the region's vocabulary."""
    vocab = load_ontology().vocabulary(region)
    rng = random.Random(seed)
    roads, manips = list(vocab.road_types), [m for m in vocab.manipulations if m.verb is not None]
    out: dict[str, NewMR] = {}
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 100 * n:
            raise SystemExit(f"only {len(out)} distinct MRs in the {region} vocabulary")
        road, manip = rng.choice(roads), rng.choice(manips)
        fields = MRFields(
            road_type=road.text,
            verb=manip.verb,  # type: ignore[arg-type]
            manipulation=manip.text,
            expected_behavior=rng.choice(BEHAVIORS),
        )
        mr = new_mr(fields, vocab, region=region, score=1.0, rule_id=f"bench-{len(out)}")
        out.setdefault(mr.canonical_key, mr)
    return list(out.values())


def described_cases(folder: Path, n: int, seed: int) -> list[tuple[DrivingCase, CaseDescription]]:
    synth_dataset(folder, cases=n, seed=seed, width=320, height=160)
    store = LocalArtifactStore(folder)
    out = []
    for k in range(n):
        case = DrivingCase.model_validate_json(store.get(f"cases/syn-{seed}-{k:05d}/case.json"))
        out.append((case, describe_offline(case, read_frames(store, case))))
    return out


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(0.95 * len(s)))]


def line(label: str, values: list[float], target: float | None = None) -> str:
    mark = ""
    if target is not None:
        mark = f"  (target <= {target:.0f} ms {'ok' if statistics.fmean(values) <= target else 'MISSED'}; AutoMT {ANCHOR_MS / 1000:.0f} s)"
    return f"  {label:34} mean {statistics.fmean(values):7.1f} ms  p95 {p95(values):7.1f} ms{mark}"


async def bench_store(
    tmp: Path, embedder: MiniLMEmbedder, mrs: list[NewMR], cases: list[tuple[DrivingCase, CaseDescription]], region: str
) -> None:
    async with QdrantMRStore(settings=StoreSettings(path=tmp / "qdrant"), embedder=embedder) as store:
        t = time.perf_counter()
        await store.add(mrs)
        stored = await store.count()
        print(f"stored {stored} MRs in {time.perf_counter() - t:.1f} s (embedding included); local-mode Qdrant")
        embedder._cache.clear()  # each case's representation is new, as in production
        lists, filters, embeds, claims, fitting = [], [], [], [], []
        for _, desc in cases:
            t0 = time.perf_counter()
            region_mrs = await store.list(limit=10_000_000, region=region)
            t1 = time.perf_counter()
            ok = [m for m in region_mrs if applicable(m.fields, region, m.region, desc)[0]]
            t2 = time.perf_counter()
            query = representation(desc)
            await asyncio.to_thread(embedder.encode, [query])  # timed apart; the claim then finds it cached
            t3 = time.perf_counter()
            claimed = await store.claim([m.mr_id for m in ok], query=query) if ok else None
            t4 = time.perf_counter()
            assert claimed is not None or not ok
            lists.append(1000 * (t1 - t0))
            filters.append(1000 * (t2 - t1))
            embeds.append(1000 * (t3 - t2))
            claims.append(1000 * (t4 - t3))
            fitting.append(len(ok))
        per_case = [f + e + c for f, e, c in zip(filters, embeds, claims, strict=True)]
        with_list = [p + x for p, x in zip(per_case, lists, strict=True)]
        print(
            f"store path, {len(cases)} cases, {stored} MRs; MRs passing the filters per case: mean "
            f"{statistics.fmean(fitting):.0f}, min {min(fitting)}, max {max(fitting)}"
        )
        print(line("list the region's MRs (mrs.list)", lists))
        print(line("filters (applicable) over all MRs", filters))
        print(line("embed the case (MiniLM)", embeds))
        print(line("claim in the store (no embedding)", claims))
        print(line("filters + claim per case", per_case, TARGET_MS))
        print(line("list + filters + claim (no cache)", with_list, TARGET_MS))


async def bench_daemon(
    tmp: Path, embedder: MiniLMEmbedder, mrs: list[NewMR], cases: list[tuple[DrivingCase, CaseDescription]], region: str
) -> None:
    config = load_config(data_dir=tmp / "data", log_level="warning")
    async with private_daemon(config, embedder=embedder, prefix="drivemt-match-bench-") as daemon:
        assert daemon.bus is not None and daemon.pipeline is not None
        await daemon.pipeline.store.add(mrs)
        stored = await daemon.pipeline.store.count()
        agent = FAgent(bus=daemon.bus, store=LocalArtifactStore(tmp / "runs"), ontology=daemon.pipeline.ontology)
        embedder._cache.clear()
        times, cands = [], []
        for case, desc in cases:
            event = CasesDescribed(
                producer="bench",
                payload=CasesDescribedPayload(case=case, description=desc, region=region, method="automt", seed=0),
            )
            t0 = time.perf_counter()
            planned, _, n = await agent.plan(event)
            times.append(1000 * (time.perf_counter() - t0))
            cands.append(n)
            assert planned is not None or n == 0
        print(
            f"daemon path (FAgent.plan, mrs.list + mrs.claim over the bus, 2 s list cache), {len(cases)} cases, "
            f"{stored} MRs; fitting per case mean {statistics.fmean(cands):.0f}"
        )
        print(line("F-Agent plan per case", times, TARGET_MS))
        print(line("  of which the first (list uncached)", times[:1]))
        print(line("  the rest", times[1:] or times, TARGET_MS))


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mrs", type=int, default=1000)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--region", default="germany")
    ap.add_argument("--no-daemon", action="store_true", help="Only the direct store path.")
    args = ap.parse_args()
    configure_logging("warning", "console")
    embedder = MiniLMEmbedder()
    t = time.perf_counter()
    embedder.ensure_loaded()
    print(f"MiniLM loaded in {time.perf_counter() - t:.1f} s")
    mrs = distinct_mrs(args.mrs, args.region, args.seed)
    with tempfile.TemporaryDirectory(prefix="drivemt-match-bench-") as tmp_s:
        tmp = Path(tmp_s)
        t = time.perf_counter()
        cases = described_cases(tmp / "set", args.cases, args.seed)
        print(f"{len(cases)} synthetic cases drawn and described offline in {time.perf_counter() - t:.1f} s")
        await bench_store(tmp, embedder, mrs, cases, args.region)
        if not args.no_daemon:
            await bench_daemon(tmp, embedder, mrs, cases, args.region)


if __name__ == "__main__":
    asyncio.run(main())
