"""Rules -> MRs through a real daemon (embedded bus in this test's namespace, real Qdrant, real MiniLM)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bus import MRAccepted, MRCandidatesProduced, MRRejected
from bus.events import ErrorReported
from bus.rpc import RpcBadRequestError, RpcMethod, call
from bus.services import MRS_COUNT, MRS_LIST, MRS_SEARCH, CountMRs, ListMRs, MRHits, SearchMRs
from memory import MiniLMEmbedder
from runners.clients.rules import submit_and_collect
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import Recorder, rule


@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    async with Daemon(config, embedder=embedder) as d:
        yield d


async def test_rules_become_stored_mrs(daemon: Daemon, sample_rules: list[dict]) -> None:
    """Every sample rule ends with one accepted MR, stored once per canonical key, with provenance."""
    assert daemon.bus is not None and daemon.pipeline is not None
    rules = [rule(r["text"], r["id"]) for r in sample_rules]
    rec = await Recorder().watch(daemon.bus, daemon.bus.subjects.mrs_candidates)
    summary = await submit_and_collect(daemon.bus, rules, timeout=60)
    assert summary.counts() == {"accepted": 12, "rejected": 0, "error": 0, "missing": 0}
    accepted = [r.event for r in summary.results.values()]
    assert all(isinstance(e, MRAccepted) for e in accepted)
    stored = {e.payload.mr.mr_id for e in accepted}  # type: ignore[attr-defined]
    assert await daemon.pipeline.store.count() == len(stored)
    fog = summary.results["de-01"].event
    assert isinstance(fog, MRAccepted)
    assert fog.payload.winner.candidate.mr.verb == "replaces"
    prov = fog.payload.provenance
    assert prov.ontology_hash == daemon.pipeline.ontology.hash and prov.config_hash == daemon.config.hash
    assert "offline:ontology-grounded" in prov.models and prov.drivemt_version
    # Every step is visible as an event with the submission's correlation id.
    cands = [e for e in rec.events if isinstance(e, MRCandidatesProduced)]
    assert len(cands) == 12 and {e.correlation_id for e in cands} == {summary.correlation_id}


async def test_duplicate_mrs_collect_their_rules(daemon: Daemon) -> None:
    """Two rules with one MR store it once, with both rule ids."""
    assert daemon.bus is not None and daemon.pipeline is not None
    rules = [
        rule("If visibility is reduced by fog, slow down.", "a"),
        rule("In dense fog the speed must be reduced.", "b"),
    ]
    summary = await submit_and_collect(daemon.bus, rules, timeout=60)
    events = [summary.results[k].event for k in ("a", "b")]
    assert all(isinstance(e, MRAccepted) for e in events)
    ids = {e.payload.mr.mr_id for e in events}  # type: ignore[attr-defined]
    assert len(ids) == 1
    (stored,) = await daemon.pipeline.store.list()
    assert sorted(stored.source_rule_ids) == ["a", "b"]


async def test_bad_rules_get_errors_and_the_rest_goes_on(daemon: Daemon) -> None:
    """Empty, 100 KB, unknown-region and unrelated rules get an error or a rejection; good ones still pass."""
    assert daemon.bus is not None
    rules = [
        rule("", "empty"),
        rule("stop at red lights. " * 6000, "huge"),
        rule("Stop at red lights.", "mars", region="mars"),
        rule("Our office is closed on Sundays.", "unrelated"),
        rule("Slow down near children at a school.", "good"),
    ]
    summary = await submit_and_collect(daemon.bus, rules, timeout=60)
    kinds = {k: v.kind for k, v in summary.results.items()}
    assert kinds == {"empty": "error", "huge": "error", "mars": "error", "unrelated": "rejected", "good": "accepted"}
    huge = summary.results["huge"].event
    assert isinstance(huge, ErrorReported) and "over the 10240-byte limit" in huge.payload.reason
    assert isinstance(summary.results["mars"].event, ErrorReported)
    assert "unknown region 'mars'" in summary.results["mars"].event.payload.reason
    rejected = summary.results["unrelated"].event
    assert isinstance(rejected, MRRejected) and rejected.payload.reasons


async def test_daemon_services_answer_over_the_bus(daemon: Daemon) -> None:
    """mrs.list, mrs.search and mrs.count answer from the daemon's store."""
    assert daemon.bus is not None
    await submit_and_collect(
        daemon.bus, [rule("Give way to pedestrians at a crosswalk.", "x", "california")], timeout=60
    )
    assert (await call(daemon.bus, MRS_COUNT, CountMRs())).count == 1
    listed = (await call(daemon.bus, MRS_LIST, ListMRs(limit=10))).mrs
    assert listed[0].source_rule_ids == ["x"]
    hits = (await call(daemon.bus, MRS_SEARCH, SearchMRs(query="person crossing the street", limit=1))).hits
    assert "pedestrian" in hits[0].mr.gherkin
    with pytest.raises(RpcBadRequestError, match="query"):
        await call(daemon.bus, RpcMethod("mrs.search", ListMRs, MRHits), ListMRs())  # a request of the wrong shape


async def test_second_daemon_on_same_data_dir_is_refused(config: DrivemtConfig, embedder: MiniLMEmbedder) -> None:
    """A data dir has one daemon; a second one is told where the first runs."""
    from runners.host.errors import DaemonRunningError

    local = config.model_copy(update={"nats_url": None})
    async with Daemon(local, embedder=embedder):
        with pytest.raises(DaemonRunningError, match="already runs"):
            async with Daemon(local, embedder=embedder):
                pass


async def test_two_daemons_started_at_the_same_moment_on_one_data_dir_make_one(
    config: DrivemtConfig, embedder: MiniLMEmbedder
) -> None:
    """Two daemons starting together on one data dir, before either has recorded itself: one runs, the other is
    refused at once (both ran, on one JetStream store, and the survivor was recorded nowhere)."""
    from runners.host.errors import DaemonRunningError

    local = config.model_copy(update={"nats_url": None})
    first, second = Daemon(local, embedder=embedder), Daemon(local, embedder=embedder)
    try:
        results = await asyncio.gather(first.start(), second.start(), return_exceptions=True)
        refused = [r for r in results if isinstance(r, BaseException)]
        assert len(refused) == 1 and isinstance(refused[0], DaemonRunningError), results
        assert "still starting" in str(refused[0])
        running = first if results[0] is None else second
        assert running.server is not None and (second if running is first else first).server is None
    finally:
        await first.stop()
        await second.stop()


def test_a_data_dir_on_a_file_system_without_locks_still_gets_its_daemon(
    config: DrivemtConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flock failing for want of lock support (ENOLCK on NFS without lockd, ENOSYS) is no 'daemon already runs': the
    daemon goes on with its state file alone (it refused to start, naming a daemon that did not exist)."""
    import errno
    import fcntl

    def no_locks(_fd: int, _op: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    daemon = Daemon(config.model_copy(update={"nats_url": None}))
    config.data_dir.mkdir(parents=True, exist_ok=True)
    daemon._take_data_dir()
    assert daemon._lock_fd is None


async def test_status_lists_every_agents_queue(daemon: Daemon) -> None:
    """`drivemt status` lists the work queue of every agent the daemon runs (all ten), with its depth."""
    from runners.clients.ops import collect_status

    assert daemon.bus is not None
    info = await collect_status(daemon.bus)
    queues = {c["name"] for c in info["consumers"]}
    assert (
        queues
        == {r.agent.name for r in daemon.runners}
        == {
            "m-agent",
            "validator",
            "crash-extractor",
            "sim-planner",
            "sim-runner",
            "judge",
            "tl-augmenter",
            "t-agent",
            "f-agent",
            "validity-checker",
        }
    )
    assert all(c["pending"] == 0 for c in info["consumers"])
