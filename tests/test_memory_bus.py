"""The MR memory served over the bus: a worker process with no Qdrant of its own stores MRs in the owner's
store, and execution counts stay exact when several processes count uses at once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bus import MRAccepted
from bus.rpc import RpcBadRequestError
from memory import MiniLMEmbedder
from runners.clients.memory import BusMRStore, BusTemplates
from runners.clients.rules import submit_and_collect
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import rule
from tools.rules.models import MRFields
from tools.rules.mr import new_mr

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
async def owner(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    """A daemon that owns the store and runs no agents: the work happens in other processes."""
    async with Daemon(config, embedder=embedder, only=[]) as d:
        yield d


def _env(config: DrivemtConfig) -> dict[str, str]:
    return os.environ | {"DRIVEMT_NAMESPACE": config.namespace, "PYTHONPATH": str(ROOT)}


async def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), 30)
        except TimeoutError:
            proc.kill()
            proc.wait()


async def test_a_worker_without_qdrant_stores_mrs_in_the_owners_store(
    owner: Daemon, config: DrivemtConfig, tmp_path: Path, sample_rules: list[dict]
) -> None:
    """The M-Agent and Validator run in a worker process (memory over the bus); every rule ends with one result
    and the MRs land in the owner's store, while the worker's data dir has no Qdrant folder."""
    assert owner.bus is not None and owner.pipeline is not None
    assert not owner.runners  # no agents in the owner
    worker_dir = tmp_path / "worker"
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-m", "runners.cli", "worker", "--agents", "m-agent,validator", "--nats-url",
         str(config.nats_url), "--data-dir", str(worker_dir)],
        env=_env(config), stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT,
    )  # fmt: skip
    try:
        rules = [rule(r["text"], r["id"]) for r in sample_rules]
        summary = await submit_and_collect(owner.bus, rules, timeout=180)
        assert summary.counts() == {"accepted": 12, "rejected": 0, "error": 0, "missing": 0}, (
            tmp_path / "worker.log"
        ).read_text()[-3000:]
        stored = {e.payload.mr.mr_id for r in summary.results.values() if isinstance(e := r.event, MRAccepted)}
        assert await owner.pipeline.store.count() == len(stored)
        assert not (worker_dir / "qdrant").exists()
        # The same methods from this process, through the bus.
        remote = BusMRStore(owner.bus)
        assert await remote.count() == len(stored)
        hits = await remote.search("fog reduces visibility", limit=3)
        assert hits and hits[0].similarity > 0.3
        assert set(await BusTemplates(owner.bus).all()) >= {"Intersection", "Merge"}
        with pytest.raises(RpcBadRequestError, match="cannot count a use"):
            await remote.increment_execution("no-such-mr")
    finally:
        await _stop(worker)
        log.close()
    assert worker.returncode == 0, (tmp_path / "worker.log").read_text()[-3000:]


CLAIMER = textwrap.dedent(
    """
    import asyncio, sys
    from bus import Bus, Subjects
    from runners.clients.memory import BusMRStore

    async def main(url, namespace, n, ids):
        async with Bus(url=url, subjects=Subjects(namespace), name="claimer") as bus:
            store = BusMRStore(bus)
            got = await asyncio.gather(*(store.claim(ids) for _ in range(n)))
            print(sum(1 for g in got if g is not None))

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")))
    """
)


async def test_execution_counts_are_exact_when_three_processes_claim_at_once(
    owner: Daemon, config: DrivemtConfig
) -> None:
    """Three processes claim the least-used of four MRs 20 times each, concurrently: the counts add up to 60
    and stay level (each claim sees the others'), so no use is lost or counted twice."""
    assert owner.bus is not None and owner.pipeline is not None
    vocab = owner.pipeline.ontology.vocabulary("germany")
    weathers = ("fog", "rain", "snow", "night")
    items = [
        new_mr(
            MRFields(
                road_type="any roads",
                verb="replaces",
                manipulation=f"the weather into {w} environment",
                expected_behavior="slow down",
            ),
            vocab,
            region="germany",
            score=0.9,
            rule_id=f"r-{w}",
        )
        for w in weathers
    ]
    records = await BusMRStore(owner.bus).add(items)  # stored by the owner, as a worker's validator does
    assert [r.duplicate for r in records] == [False] * 4
    ids = sorted({r.mr_id for r in records})
    assert len(ids) == 4
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CLAIMER,
            str(config.nats_url),
            config.namespace,
            "20",
            ",".join(ids),
            env=_env(config),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(3)
    ]
    outs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), 120)
    assert all(p.returncode == 0 for p in procs), [o[1].decode()[-2000:] for o in outs]
    assert sum(int(o[0]) for o in outs) == 60
    counts = [m.execution_count for m in await owner.pipeline.store.list() if m.mr_id in ids]
    assert sum(counts) == 60 and max(counts) - min(counts) <= 1, counts


def test_a_daemon_on_a_cluster_is_found_through_any_of_its_urls(tmp_path: Path, nats_url: str) -> None:
    """A state file naming a cluster (the first node down) still leads a command to the bus; all nodes down, none."""
    from runners.clients.discovery import DaemonState, NoDaemonError, find_bus_url, write_state
    from runners.config import load_config
    from tests.cluster import free_ports

    (dead,) = free_ports(1)
    cfg = load_config(data_dir=tmp_path)
    cluster = f"nats://127.0.0.1:{dead},{nats_url}"
    state = DaemonState(pid=os.getpid(), nats_url=cluster, namespace="drivemt", data_dir=str(tmp_path), qdrant="q")
    write_state(cfg.state_file, state)
    assert find_bus_url(cfg) == cluster
    write_state(cfg.state_file, state.model_copy(update={"nats_url": f"nats://127.0.0.1:{dead}"}))
    with pytest.raises(NoDaemonError):
        find_bus_url(cfg)
