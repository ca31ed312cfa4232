"""Scale-out under faults: a local three-node NATS cluster (everything at three replicas), three worker processes,
50 rules and 4 crash cases; a worker is killed with SIGKILL and a NATS node is stopped and restarted mid-run.

Every input ends with exactly one result, no MR is stored twice, and the crash verdicts equal those of a
single-process run. Everything runs on loopback and stops by itself; the test prints how long recovery took.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from bus import Bus, BusSettings, CrashVerdict, ErrorReported, Event, MRAccepted, MRRejected, SimCompleted, Subjects
from bus.envelope import decode_event
from memory import MiniLMEmbedder
from runners.clients.crash import make_crash_submissions
from runners.clients.memory import BusMRStore
from runners.clients.ops import collect_status
from runners.clients.rules import make_submissions
from runners.config import AgentsSettings, load_config
from runners.host.inprocess import run_crashes_in_process
from tests.cluster import LocalCluster
from tests.helpers import FIXTURES
from tools.crash.files import read_case
from tools.crash.models import CaseVerdict, SimOptions
from tools.rules.models import TrafficRule

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SIM = SimOptions(variants=1, duration_s=8.0, render=False)
CASES = [FIXTURES / "crashes" / c for c in ("108909", "119839", "128058")] + [
    FIXTURES / "cluster" / "crashes" / "102804"
]


def _verdict_key(v: CaseVerdict) -> tuple[Any, ...]:
    return v.runs, v.reproduced, sorted(v.reproduced_per_ego.items()), v.violations, len(v.errors), v.error is None


class StreamLog:
    """Every stored event of the results stream, read by sequence (so nothing published while a node was down or a
    client reconnecting is missed, as a core subscription could)."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.next_seq = 1
        self.events: list[Event] = []

    async def poll(self) -> None:
        name = self.bus.subjects.streams.results
        try:
            last = (await self.bus.js.stream_info(name)).state.last_seq
            while self.next_seq <= last:
                with contextlib.suppress(Exception):  # a gap (nothing at that sequence)
                    raw = await self.bus.js.get_msg(name, self.next_seq)
                    self.events.append(decode_event(raw.data or b"", subject=raw.subject or ""))
                self.next_seq += 1
        except Exception:  # the stream leader is moving (a node went down): read on at the next poll
            return


def _spawn(args: list[str], data_dir: Path, config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "runners.cli", *args, "--data-dir", str(data_dir), "--config", str(config)],
        stdout=subprocess.DEVNULL, stderr=log.open("ab"), cwd=ROOT, env=os.environ | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip


async def _in_flight(bus: Bus, pid: int) -> int:
    with contextlib.suppress(Exception):
        status = await collect_status(bus)
        return sum(a["in_flight"] for a in status["agents"] if a["pid"] == pid and a["status"] == "ready")
    return 0


async def _streams_current(bus: Bus) -> bool:
    """Every stream and bucket has a leader and two current followers."""
    names = bus.subjects.streams
    for stream in (names.inputs, names.results, f"KV_{names.processed_bucket}", f"KV_{names.tallies_bucket}"):
        try:
            si = await bus.js.stream_info(stream)
        except Exception:  # no leader yet
            return False
        replicas = (si.cluster.replicas or []) if si.cluster else []
        if si.cluster is None or si.cluster.leader is None or len(replicas) != 2:
            return False
        if not all(r.current and not r.offline for r in replicas):
            return False
    return True


async def test_a_three_node_cluster_survives_a_killed_worker_and_a_restarted_node(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    rules = [
        TrafficRule(**json.loads(line))
        for line in (FIXTURES / "cluster" / "rules.jsonl").read_text().splitlines()
        if line.strip()
    ]
    reports = [read_case(c) for c in CASES]
    assert len(rules) == 50 and len(reports) == 4

    # The reference: the same crash cases in one process.
    started = time.monotonic()
    ref = await run_crashes_in_process(
        load_config(data_dir=tmp_path / "ref"), reports, simulate=SIM, embedder=embedder, timeout=300
    )
    assert ref.complete and len(ref.verdicts) == 4, ref.errors
    reference = {c: _verdict_key(v.payload) for c, v in ref.verdicts.items()}
    print(f"\nsingle process: 4 crash cases in {time.monotonic() - started:.0f} s")

    namespace = f"t{uuid.uuid4().hex[:10]}"
    consumer = {"consumer": {"ack_wait_s": 10, "max_deliver": 10}}
    config = tmp_path / "drivemt.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "namespace": namespace,
                "bus": {"replicas": 3},
                "artifacts_dir": str(tmp_path / "runs"),  # one machine here; artefacts on the bus are tested apart
                "heartbeat_interval_s": 0.5,
                "shutdown_grace_s": 5,
                "log_level": "info",
                "agents": {key: consumer for key in AgentsSettings.model_fields},
            }
        )
    )
    cluster = LocalCluster(tmp_path / "cluster").start()
    procs: list[subprocess.Popen[bytes]] = []
    bus = Bus(url=cluster.urls, subjects=Subjects(namespace), name="pytest-cluster", settings=BusSettings(replicas=3))
    try:
        await cluster.wait_jetstream()
        await bus.connect()
        for _ in range(60):  # until every peer has joined and the R3 streams can be placed
            try:
                await bus.ensure_streams()
                break
            except Exception:
                await asyncio.sleep(1)
        else:
            raise AssertionError("the cluster never accepted R3 streams")
        url = ["--nats-url", cluster.url]
        # The memory's owner runs every agent too; the two workers reach its memory over the bus.
        procs.append(_spawn(["daemon", *url], tmp_path / "w1", config, tmp_path / "w1.log"))
        for i in (2, 3):
            procs.append(
                _spawn(["worker", "--agents", "all", *url], tmp_path / f"w{i}", config, tmp_path / f"w{i}.log")
            )
        crash_corr, crash_events = make_crash_submissions(reports, simulate=SIM, producer="test")
        rule_corr, rule_events = make_submissions(rules, producer="test")
        case_of = {e.event_id: e.payload.case_id for e in crash_events}
        rule_of = {e.event_id: e.payload.rules[0].id for e in rule_events}
        await bus.publish_many([*crash_events, *rule_events[:25]])
        submitted = time.monotonic()
        log = StreamLog(bus)

        def results() -> tuple[dict[str, list[Event]], dict[str, list[Event]]]:
            by_rule: dict[str, list[Event]] = defaultdict(list)
            by_case: dict[str, list[Event]] = defaultdict(list)
            for ev in log.events:
                if isinstance(ev, MRAccepted | MRRejected) and ev.correlation_id == rule_corr:
                    by_rule[ev.payload.rule.id].append(ev)
                elif isinstance(ev, CrashVerdict) and ev.correlation_id == crash_corr:
                    by_case[ev.payload.case_id].append(ev)
                elif isinstance(ev, ErrorReported):
                    src = ev.payload.input_event_id or ""
                    if src in rule_of:
                        by_rule[ev.payload.item_id or rule_of[src]].append(ev)
                    elif src in case_of:
                        by_case[case_of[src]].append(ev)
            return by_rule, by_case

        async def wait_until(cond: Any, timeout: float, what: str) -> float:
            t = time.monotonic()
            while not cond():
                assert time.monotonic() - t < timeout, f"timed out waiting for {what}"
                for p in procs:
                    assert p.poll() is None or (p is victim and killed), f"a worker exited: {p.args}"
                await asyncio.sleep(0.5)
                await log.poll()
            return time.monotonic() - t

        # Fault 1: SIGKILL a worker while it holds work (a simulation, most likely).
        victim, killed = procs[1], 0.0
        await wait_until(lambda: any(isinstance(e, SimCompleted) for e in log.events), 240, "the first simulation")
        held = 0
        deadline = time.monotonic() + 60
        while held == 0 and time.monotonic() < deadline:
            held = await _in_flight(bus, victim.pid)
            await asyncio.sleep(0.2)
        results_before = len(log.events)
        killed = time.monotonic()
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        await bus.publish_many(rule_events[25:])
        after_kill = await wait_until(lambda: len(log.events) > results_before, 60, "a result after the kill")

        # Fault 2: stop one NATS node and start it again.
        cluster.stop_node(2)
        stopped = time.monotonic()
        await asyncio.sleep(3)
        cluster.start_node(2)
        t = time.monotonic()
        while not await _streams_current(bus):
            assert time.monotonic() - t < 90, "the restarted node did not catch up"
            await asyncio.sleep(0.5)
            await log.poll()
        node_back = time.monotonic() - stopped

        def done() -> bool:
            by_rule, by_case = results()
            return len(by_rule) == 50 and len(by_case) == 4

        await wait_until(done, 360, "every rule and crash case")
        finished = time.monotonic()
        await asyncio.sleep(3)  # a late duplicate would land now
        await log.poll()
        by_rule, by_case = results()
        print(
            f"cluster run: {finished - submitted:.0f} s; worker killed holding {held} event(s): next result after "
            f"{after_kill:.1f} s, all done {finished - killed:.0f} s after the kill; node stopped 3 s, its streams "
            f"current again {node_back:.1f} s after the stop"
        )
        assert held > 0, "the killed worker held no work"
        assert {r: len(evs) for r, evs in by_rule.items() if len(evs) != 1} == {}
        assert {c: len(evs) for c, evs in by_case.items() if len(evs) != 1} == {}
        assert set(by_rule) == {r.id for r in rules} and set(by_case) == set(reference)
        # No MR stored twice: one point per canonical key, and each rule named once.
        stored = await BusMRStore(bus).list(limit=100_000)
        keys = [m.canonical_key for m in stored]
        assert len(keys) == len(set(keys))
        assert all(len(m.source_rule_ids) == len(set(m.source_rule_ids)) for m in stored)
        accepted = {e.payload.mr.mr_id for evs in by_rule.values() for e in evs if isinstance(e, MRAccepted)}
        assert accepted == {m.mr_id for m in stored}
        # The crash verdicts equal the single process's.
        got = {c: _verdict_key(evs[0].payload) for c, evs in by_case.items() if isinstance(evs[0], CrashVerdict)}
        assert got == reference
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        await bus.close()
        cluster.stop()
