"""A poisoned message touches that message alone: in the runtime's batches, in every agent's consumer, in observers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import ClassVar

import pytest

from agents.runtime import Agent, AgentRunner
from bus import (
    Bus,
    DeadLettered,
    ErrorDomain,
    ErrorReported,
    Event,
    EventValidationError,
    MRAccepted,
    MRRejected,
    ProgressReported,
    RulesSubmitted,
    decode_event,
    derived_id,
)
from bus.events import ProgressPayload
from memory import MiniLMEmbedder
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import Recorder, rule
from tools.rules.models import TrafficRule

POISON = b'{"type": "rules.submitted", "payload": ' + b"[" * 5000 + b"]" * 5000 + b"}"
"""What a raw JetStream client sent in a run: 5,000 nested JSON arrays."""


def test_decode_event_turns_any_poison_into_one_validation_error() -> None:
    """Deep nesting, non-UTF-8 bytes, huge strings and wrong types all end as EventValidationError (the one
    decoder the agents, the terminal UI, ops and the tests use)."""
    poisons = [
        POISON,
        b"[" * 100_000,
        b"\xff\xfe\x00",
        b'{"type": "' + b"x" * 1_000_000 + b'"}',
        b'{"type": "rules.submitted", "producer": 5, "payload": {"rules": "no"}}',
        b"null",
        b"",
    ]
    for data in poisons:
        with pytest.raises(EventValidationError):
            decode_event(data, subject="t")


class BatchEcho(Agent):
    """Answers each rule with a progress event; takes up to 32 inputs per batch (one fetch)."""

    name: ClassVar[str] = "batch-echo"
    consumes = (RulesSubmitted,)
    produces = (ProgressReported,)
    error_domain = ErrorDomain.RULES
    batch_size = 32

    async def handle(self, event: Event) -> Sequence[Event]:
        assert isinstance(event, RulesSubmitted)
        return [
            ProgressReported(
                **event.caused(event_id=derived_id(event.event_id, "echo")),
                producer=self.name,
                payload=ProgressPayload(stage="echo", done=1, message=event.payload.rules[0].id),
            )
        ]


async def test_a_poison_in_a_fetched_batch_holds_back_no_batch_mate(bus: Bus) -> None:
    """Ten valid rules and a poison published before the runner starts arrive in one fetch: the ten are answered
    at once, the poison becomes an error event plus a dead letter with the reason, nothing stays unacked."""
    loop = asyncio.get_running_loop()
    unretrieved: list[object] = []
    loop.set_exception_handler(lambda _loop, ctx: unretrieved.append(ctx))
    rec = await Recorder().watch(bus, bus.subjects.progress, bus.subjects.all_errors, bus.subjects.all_deadletters)
    for i in range(5):
        await bus.publish(RulesSubmitted(producer="t", payload={"rules": [TrafficRule(id=f"r{i}", text="x")]}))  # type: ignore[arg-type]
    await bus.publish_raw(bus.subjects.rules_submitted, POISON)
    for i in range(5, 10):
        await bus.publish(RulesSubmitted(producer="t", payload={"rules": [TrafficRule(id=f"r{i}", text="x")]}))  # type: ignore[arg-type]
    runner = AgentRunner(BatchEcho(), bus=bus, heartbeat_interval_s=0.5)
    await runner.start()
    try:
        await rec.wait_for(
            lambda evs: (
                len([e for e in evs if isinstance(e, ProgressReported)]) == 10
                and any(isinstance(e, DeadLettered) for e in evs)
            ),
            timeout=10,
        )
        (dead,) = rec.of(DeadLettered)
        assert dead.payload.consumer == "batch-echo" and "nested too deeply" in dead.payload.reason  # type: ignore[attr-defined]
        assert any(isinstance(e, ErrorReported) and "nested" in e.payload.reason for e in rec.events)  # type: ignore[attr-defined]
        await asyncio.sleep(0.3)
        info = await bus.js.consumer_info(bus.subjects.streams.inputs, "batch-echo")
        assert info.num_ack_pending == 0 and info.num_pending == 0 and info.num_redelivered == 0
        assert not unretrieved
    finally:
        await runner.stop(grace_s=1.0)
        loop.set_exception_handler(None)


@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    async with Daemon(config, embedder=embedder) as d:
        yield d


@pytest.mark.slow
async def test_every_consumer_sets_a_poison_aside_and_goes_on(daemon: Daemon) -> None:
    """A poison on every subject every agent consumes ends as that consumer's dead letter and error event, each
    agent stays alive, and valid rules sent with the poisons are answered."""
    assert daemon.bus is not None and daemon.pipeline is not None
    bus = daemon.bus
    rec = await Recorder().watch(
        bus, bus.subjects.all_deadletters, bus.subjects.all_errors, bus.subjects.mrs_accepted, bus.subjects.mrs_rejected
    )
    targets = {(r.agent.name, subject) for r in daemon.runners for subject in r.consumed_subjects()}
    assert {name for name, _ in targets} == {
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
    for _, subject in sorted(targets):
        await bus.publish_raw(subject, POISON)
    rules = [rule("Slow down in dense fog.", f"ok{i}") for i in range(3)]
    for r in rules:
        await bus.publish(RulesSubmitted(producer="t", payload={"rules": [r]}))  # type: ignore[arg-type]
    subjects = {subject for _, subject in targets}

    def done(evs: list[Event]) -> bool:
        dead = {e.payload.original_subject for e in evs if isinstance(e, DeadLettered)}  # type: ignore[attr-defined]
        answered = {e.payload.rule.id for e in evs if isinstance(e, MRAccepted | MRRejected)}  # type: ignore[attr-defined]
        return dead >= subjects and answered >= {r.id for r in rules}

    await rec.wait_for(done, timeout=60)
    dead = rec.of(DeadLettered)
    by_consumer = {e.payload.consumer for e in dead}  # type: ignore[attr-defined]
    assert by_consumer == {name for name, _ in targets}
    assert all("nested too deeply" in e.payload.reason for e in dead)  # type: ignore[attr-defined]
    assert len([e for e in rec.of(ErrorReported) if "nested" in e.payload.reason]) >= len(targets)  # type: ignore[attr-defined]
    assert all(r._status == "ready" for r in daemon.runners)
    assert all(e.payload.data.encode() == POISON for e in dead)  # type: ignore[attr-defined]  # kept for a retry
