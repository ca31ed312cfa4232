"""The agent runtime on a real server: acks, errors, retries, dead letters, shared queues, heartbeats, stop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import ClassVar

import pytest
import structlog

from agents.runtime import Agent, AgentRunner, HandlerTimeoutError, Outcome
from bus import (
    AgentHeartbeat,
    Bus,
    ConsumerSettings,
    DeadLettered,
    ErrorDomain,
    ErrorReported,
    Event,
    ProgressReported,
    RulesSubmitted,
    derived_id,
    encode_event,
)
from bus.events import DeadLetterPayload, ProgressPayload, RulesSubmittedPayload
from memory import MiniLMEmbedder
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import Recorder
from tools.errors import BadInputError
from tools.rules.models import TrafficRule


def submission(text: str, rule_id: str = "r1") -> RulesSubmitted:
    return RulesSubmitted(producer="test", payload=RulesSubmittedPayload(rules=[TrafficRule(id=rule_id, text=text)]))


class EchoAgent(Agent):
    """Answers each rule with a progress event; 'bad' is bad input, 'flaky' fails twice, 'broken' always fails,
    'hang' hangs until ``release`` is set."""

    name: ClassVar[str] = "echo"
    consumes = (RulesSubmitted,)
    produces = (ProgressReported,)
    error_domain = ErrorDomain.RULES

    def __init__(self, delay: float = 0.0) -> None:
        self.calls: dict[str, int] = {}
        self.delay = delay
        self.release = asyncio.Event()
        self.running = 0
        self.max_running = 0

    async def handle(self, event: Event) -> Sequence[Event]:
        assert isinstance(event, RulesSubmitted)
        text = event.payload.rules[0].text
        self.calls[text] = self.calls.get(text, 0) + 1
        if text == "hang":  # hangs until released, and ignores the first cancellation
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                await self.release.wait()
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.running -= 1
        if text == "bad":
            raise BadInputError("this rule can never work")
        if text == "flaky" and self.calls[text] < 3:
            raise RuntimeError("temporary trouble")
        if text == "broken":
            raise RuntimeError("always broken")
        return [
            ProgressReported(
                **event.caused(event_id=derived_id(event.event_id, "echo")),
                producer=self.name,
                payload=ProgressPayload(stage="echo", done=1, message=text),
            )
        ]


_RUNNING: list[AgentRunner] = []


@pytest.fixture(autouse=True)
async def _stop_runners() -> AsyncIterator[None]:
    """Stop every runner a test started, even when the test fails."""
    yield
    while _RUNNING:
        runner = _RUNNING.pop()
        if runner._status != "stopping":
            await runner.stop(grace_s=0.1)


async def start(agent: Agent, bus: Bus, **kw: object) -> AgentRunner:
    runner = AgentRunner(agent, bus=bus, heartbeat_interval_s=0.2, **kw)  # type: ignore[arg-type]
    await runner.start()
    _RUNNING.append(runner)
    return runner


async def test_success_is_published_then_acked(bus: Bus) -> None:
    """A handled event's outputs are published and the input is acked and marked handled."""
    rec = await Recorder().watch(bus, bus.subjects.progress)
    runner = await start(EchoAgent(), bus)
    ev = submission("hello")
    await bus.publish(ev)
    await rec.wait_for(lambda evs: len(evs) == 1)
    assert rec.events[0].causation_id == ev.event_id and rec.events[0].correlation_id == ev.correlation_id
    await asyncio.sleep(0.2)
    info = await bus.js.consumer_info(bus.subjects.streams.inputs, "echo")
    assert info.num_ack_pending == 0 and info.num_pending == 0
    assert await bus.was_handled("echo", ev.event_id)
    await runner.stop()


async def test_bad_input_gives_an_error_event_and_no_retry(bus: Bus) -> None:
    """BadInputError becomes an error event on the agent's domain; the event is not redelivered."""
    rec = await Recorder().watch(bus, bus.subjects.errors(ErrorDomain.RULES))
    agent = EchoAgent()
    runner = await start(agent, bus)
    await bus.publish(submission("bad"))
    await rec.wait_for(lambda evs: len(evs) == 1)
    err = rec.events[0]
    assert isinstance(err, ErrorReported) and err.payload.error_type == "BadInputError"
    assert "can never work" in err.payload.reason
    await asyncio.sleep(0.5)
    assert agent.calls["bad"] == 1
    await runner.stop()


async def test_transient_failures_are_retried(bus: Bus) -> None:
    """An exception is retried with back-off until the handler succeeds."""
    rec = await Recorder().watch(bus, bus.subjects.progress)
    agent = EchoAgent()
    runner = await start(agent, bus, consumer=ConsumerSettings(max_deliver=5, ack_wait_s=5))
    await bus.publish(submission("flaky"))
    await rec.wait_for(lambda evs: len(evs) == 1, timeout=30)
    assert agent.calls["flaky"] == 3
    await runner.stop()


async def test_exceeding_deliveries_dead_letters(bus: Bus) -> None:
    """After max deliveries the event goes to the dead-letter subject with the reason."""
    rec = await Recorder().watch(bus, bus.subjects.all_deadletters, bus.subjects.errors(ErrorDomain.RULES))
    agent = EchoAgent()
    runner = await start(agent, bus, consumer=ConsumerSettings(max_deliver=2, ack_wait_s=5))
    ev = submission("broken")
    await bus.publish(ev)
    await rec.wait_for(lambda evs: any(isinstance(e, DeadLettered) for e in evs), timeout=30)
    dl = next(e for e in rec.events if isinstance(e, DeadLettered))
    assert dl.payload.consumer == "echo" and dl.payload.deliveries == 2
    assert "always broken" in dl.payload.reason and ev.event_id in dl.payload.data
    assert any(isinstance(e, ErrorReported) for e in rec.events)
    assert agent.calls["broken"] == 2
    await runner.stop()


async def test_invalid_bytes_are_dead_lettered_and_the_agent_goes_on(bus: Bus) -> None:
    """Malformed JSON, a wrong schema and non-UTF-8 bytes each give an error plus a dead letter; good events still flow."""
    rec = await Recorder().watch(
        bus, bus.subjects.all_deadletters, bus.subjects.errors(ErrorDomain.RULES), bus.subjects.progress
    )
    runner = await start(EchoAgent(), bus)
    subject = bus.subjects.rules_submitted
    await bus.publish_raw(subject, b"{oops")
    await bus.publish_raw(subject, b'{"type": "rules.submitted", "producer": "x", "payload": {"rules": "nope"}}')
    await bus.publish_raw(subject, b"\xff\xfe\xfa")
    await bus.publish(submission("after the junk"))
    await rec.wait_for(
        lambda evs: (
            len([e for e in evs if isinstance(e, DeadLettered)]) == 3
            and any(isinstance(e, ProgressReported) for e in evs)
        )
    )
    reasons = sorted(e.payload.reason for e in rec.events if isinstance(e, DeadLettered))
    assert any("malformed JSON" in r for r in reasons)
    assert any("payload.rules" in r for r in reasons)
    assert any("not UTF-8" in r for r in reasons)
    non_utf8 = next(e for e in rec.events if isinstance(e, DeadLettered) and "UTF-8" in e.payload.reason)
    assert non_utf8.payload.data_b64 is not None
    assert len([e for e in rec.events if isinstance(e, ErrorReported)]) == 3
    await runner.stop()


async def test_copies_share_one_work_queue(bus: Bus) -> None:
    """Two runners of one agent split the events between them, each handled once."""
    rec = await Recorder().watch(bus, bus.subjects.progress)
    a, b = EchoAgent(delay=0.02), EchoAgent(delay=0.02)
    ra, rb = await start(a, bus), await start(b, bus)
    await bus.publish_many([submission(f"rule {i}", f"r{i}") for i in range(40)])
    await rec.wait_for(lambda evs: len(evs) == 40, timeout=30)
    assert sum(a.calls.values()) + sum(b.calls.values()) == 40
    assert a.calls and b.calls, "one copy got all the work"
    await ra.stop()
    await rb.stop()


async def test_concurrency_is_bounded(bus: Bus) -> None:
    """No more handler calls run at once than the runner's concurrency."""
    rec = await Recorder().watch(bus, bus.subjects.progress)
    agent = EchoAgent(delay=0.05)
    runner = await start(agent, bus, concurrency=3)
    await bus.publish_many([submission(f"rule {i}", f"r{i}") for i in range(20)])
    await rec.wait_for(lambda evs: len(evs) == 20, timeout=30)
    assert 1 < agent.max_running <= 3
    await runner.stop()


async def test_heartbeats_report_counters(bus: Bus) -> None:
    """Heartbeats name the agent, what it consumes and produces, and its counters."""
    rec = await Recorder().watch(bus, bus.subjects.all_heartbeats)
    runner = await start(EchoAgent(), bus)
    await bus.publish(submission("hello"))
    await rec.wait_for(
        lambda evs: any(isinstance(e, AgentHeartbeat) and e.payload.handled == 1 for e in evs), timeout=10
    )
    hb = next(e for e in rec.events if isinstance(e, AgentHeartbeat))
    assert (
        hb.payload.agent == "echo"
        and hb.payload.consumes == ["rules.submitted"]
        and hb.payload.produces == ["progress"]
    )
    await runner.stop()


async def test_stop_hands_back_unfinished_work(bus: Bus) -> None:
    """Work still running after the grace period is handed back and done by the next runner."""
    rec = await Recorder().watch(bus, bus.subjects.progress)
    slow = EchoAgent(delay=5.0)
    runner = await start(slow, bus, consumer=ConsumerSettings(ack_wait_s=30))
    await bus.publish(submission("slow one"))
    while not slow.calls:
        await asyncio.sleep(0.02)
    await runner.stop(grace_s=0.2)
    assert rec.events == []
    fast = EchoAgent()
    runner2 = await start(fast, bus)
    await rec.wait_for(lambda evs: len(evs) == 1, timeout=20)
    assert fast.calls == {"slow one": 1}
    await runner2.stop()


async def test_logs_carry_the_correlation_id(bus: Bus) -> None:
    """Log lines of a bad input carry the agent, subject, event and correlation ids."""
    runner = await start(EchoAgent(), bus)
    ev = submission("bad")
    rec = await Recorder().watch(bus, bus.subjects.errors(ErrorDomain.RULES))
    with structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        await bus.publish(ev)
        await rec.wait_for(lambda evs: len(evs) == 1)
    line = next(entry for entry in logs if entry["event"] == "bad input")
    assert line["correlation_id"] == ev.correlation_id and line["event_id"] == ev.event_id and line["agent"] == "echo"
    await runner.stop()


async def test_work_handed_back_on_its_last_delivery_is_set_aside_not_lost(bus: Bus) -> None:
    """A stop hands unfinished work back, and the hand-back counts as a delivery: with max_deliver 2 and two stops
    during the work, the server would have dropped it silently. It comes back once more and is dead-lettered with
    the reason, where `drivemt dead-letters retry` can find it."""
    rec = await Recorder().watch(
        bus, bus.subjects.all_deadletters, bus.subjects.progress, bus.subjects.errors(ErrorDomain.RULES)
    )
    settings = ConsumerSettings(max_deliver=2, ack_wait_s=30)
    job = submission("long job")
    await bus.publish(job)
    for _ in range(2):  # two stops, each while the job runs
        slow = EchoAgent(delay=30.0)
        runner = await start(slow, bus, consumer=settings)
        while not slow.calls:
            await asyncio.sleep(0.02)
        await runner.stop(grace_s=0.1)
    fast = EchoAgent()
    await start(fast, bus, consumer=settings)
    await rec.wait_for(lambda evs: any(isinstance(e, DeadLettered) for e in evs), timeout=20)
    dl = next(e for e in rec.events if isinstance(e, DeadLettered))
    assert dl.payload.deliveries == 3 and "without finishing" in dl.payload.reason
    assert fast.calls == {} and not any(isinstance(e, ProgressReported) for e in rec.events)
    # a client waiting on the submission hears of it: an error on its correlation, naming the input
    await rec.wait_for(
        lambda evs: any(isinstance(e, ErrorReported) and e.correlation_id == job.correlation_id for e in evs),
        timeout=10,
    )
    err = next(e for e in rec.events if isinstance(e, ErrorReported) and e.correlation_id == job.correlation_id)
    assert err.payload.input_event_id == job.event_id


class BatchAgent(EchoAgent):
    """Handles a batch at once and fails the whole batch when one rule in it is 'poison'."""

    name: ClassVar[str] = "batcher"
    batch_size: ClassVar[int] = 8

    async def handle_batch(self, events: Sequence[Event]) -> list[Outcome]:
        texts = [e.payload.rules[0].text for e in events]  # type: ignore[attr-defined]
        if "poison" in texts:
            raise RuntimeError("the batch broke on one of its rules")
        return [Outcome(events=list(await self.handle(e))) for e in events]


async def test_one_bad_event_in_a_failed_batch_fails_alone(bus: Bus) -> None:
    """When a batch handler fails as a whole, each event is tried on its own: the good ones are answered, and
    only the bad one is retried and dead-lettered."""
    rec = await Recorder().watch(bus, bus.subjects.all_deadletters, bus.subjects.progress)
    for i, text in enumerate(["a", "b", "poison", "c", "d"]):
        await bus.publish(submission(text, rule_id=f"r{i}"))
    agent = BatchAgent()
    await start(agent, bus, consumer=ConsumerSettings(max_deliver=2, ack_wait_s=5))
    await rec.wait_for(
        lambda evs: (
            sum(isinstance(e, ProgressReported) for e in evs) == 4 and any(isinstance(e, DeadLettered) for e in evs)
        ),
        timeout=30,
    )
    answered = sorted(e.payload.message for e in rec.events if isinstance(e, ProgressReported))
    assert answered == ["a", "b", "c", "d"]
    dead = [e for e in rec.events if isinstance(e, DeadLettered)]
    assert len(dead) == 1 and "poison" in dead[0].payload.data


async def test_a_hung_handler_is_abandoned_and_the_agent_goes_on(bus: Bus) -> None:
    """A handler that passes handler_timeout_s (here one that even ignores its cancellation) is abandoned: its event
    gets an error event and a dead letter naming the limit, at once and without a retry, and the events behind it
    on an agent with one slot are answered."""
    rec = await Recorder().watch(bus, bus.subjects.all_deadletters, bus.subjects.progress, bus.subjects.all_errors)
    agent = EchoAgent()
    runner = await start(agent, bus, concurrency=1, handler_timeout_s=0.5, consumer=ConsumerSettings(max_deliver=3))
    try:
        for i, text in enumerate(["hang", "a", "b"]):
            await bus.publish(submission(text, rule_id=f"r{i}"))
        await rec.wait_for(
            lambda evs: (
                sum(isinstance(e, ProgressReported) for e in evs) == 2 and any(isinstance(e, DeadLettered) for e in evs)
            ),
            timeout=20,
        )
        (dead,) = [e for e in rec.events if isinstance(e, DeadLettered)]
        assert "hang" in dead.payload.data and "handler_timeout_s" in dead.payload.reason
        assert dead.payload.deliveries == 1 and agent.calls["hang"] == 1
        errors = [e for e in rec.events if isinstance(e, ErrorReported)]
        assert {e.payload.error_type for e in errors} == {HandlerTimeoutError.__name__}
        hung = next(e for e in rec.events if isinstance(e, DeadLettered)).payload.data
        assert any(e.correlation_id and e.correlation_id in hung for e in errors)  # (a client waiting on it hears)
        deadline = asyncio.get_running_loop().time() + 10  # (outputs are published before the counters move)
        while runner.counters.handled < 2 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        assert runner.counters.failed == 1 and runner.counters.handled == 2
    finally:
        agent.release.set()


async def test_a_hung_event_in_a_batch_holds_back_no_batch_mate(bus: Bus) -> None:
    """A batch that passes the deadline has each event tried on its own: the others are answered, the hung one alone
    is set aside."""
    rec = await Recorder().watch(bus, bus.subjects.all_deadletters, bus.subjects.progress)
    for i, text in enumerate(["a", "hang", "b", "c"]):
        await bus.publish(submission(text, rule_id=f"r{i}"))
    agent = BatchAgent()
    await start(agent, bus, handler_timeout_s=0.5)
    try:
        await rec.wait_for(
            lambda evs: (
                sum(isinstance(e, ProgressReported) for e in evs) == 3 and any(isinstance(e, DeadLettered) for e in evs)
            ),
            timeout=20,
        )
        answered = sorted(e.payload.message for e in rec.events if isinstance(e, ProgressReported))
        assert answered == ["a", "b", "c"]
        (dead,) = [e for e in rec.events if isinstance(e, DeadLettered)]
        assert "hang" in dead.payload.data
    finally:
        agent.release.set()


async def test_a_batch_whose_every_event_hangs_is_set_aside_within_two_deadlines(bus: Bus) -> None:
    """A dependency that hangs for every event: the batch passes its deadline, its events are then tried side by side,
    and all eight are dead-lettered after about two deadlines (one after another, it took nine)."""
    rec = await Recorder().watch(bus, bus.subjects.all_deadletters)
    for i in range(8):
        await bus.publish(submission("hang", rule_id=f"r{i}"))
    agent = BatchAgent()
    started = asyncio.get_running_loop().time()
    await start(agent, bus, handler_timeout_s=0.5)
    try:
        await rec.wait_for(lambda evs: len(evs) == 8, timeout=20)
        assert asyncio.get_running_loop().time() - started < 3.0  # (two deadlines plus start-up; nine were 4.5 s)
    finally:
        agent.release.set()


async def test_a_runner_whose_work_queue_was_deleted_binds_to_it_again(bus: Bus) -> None:
    """An operator (or a server that lost its store) deletes the agent's durable consumer: fetches fail, and after a
    few the runner creates the consumer again and goes on with the work."""
    rec = await Recorder().watch(bus, bus.subjects.progress)
    agent = EchoAgent()
    runner = await start(agent, bus)
    stream = await bus.js.find_stream_name_by_subject(runner.consumed_subjects()[0])
    await bus.js.delete_consumer(stream, runner.consumer_name)
    await asyncio.sleep(1.0)
    await bus.publish(submission("after the delete"))
    await rec.wait_for(lambda evs: len(evs) == 1, timeout=30)
    assert agent.calls == {"after the delete": 1}


async def test_a_work_queue_created_again_does_not_offer_work_set_aside_and_a_retry_still_runs_it(bus: Bus) -> None:
    """A re-created durable consumer starts from the beginning of the stream: an event already dead-lettered is not
    handled (nor dead-lettered) a second time, and `dead-letters retry` still sends it to the agent."""
    from runners.clients.ops import retry_deadletters

    rec = await Recorder().watch(bus, bus.subjects.all_deadletters)
    agent = EchoAgent()
    runner = await start(agent, bus, consumer=ConsumerSettings(max_deliver=1, ack_wait_s=5))
    await bus.publish(submission("broken"))
    await rec.wait_for(lambda evs: len(evs) == 1, timeout=20)
    stream = await bus.js.find_stream_name_by_subject(runner.consumed_subjects()[0])
    await bus.js.delete_consumer(stream, runner.consumer_name)
    await bus.publish(submission("after the delete"))
    deadline = asyncio.get_running_loop().time() + 30
    while agent.calls.get("after the delete") != 1:
        assert asyncio.get_running_loop().time() < deadline, agent.calls
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    assert agent.calls == {"broken": 1, "after the delete": 1} and len(rec.events) == 1
    assert len(await retry_deadletters(bus)) == 1
    await rec.wait_for(lambda evs: len(evs) == 2, timeout=20)
    assert agent.calls["broken"] == 2


class BrokenSetup(EchoAgent):
    """An agent whose setup fails (a model file that will not load)."""

    name: ClassVar[str] = "broken-setup"

    async def setup(self) -> None:
        raise RuntimeError("the model file is broken")


async def test_a_failed_start_leaves_no_heartbeat_running(bus: Bus) -> None:
    """A runner whose agent's setup raises stops its heartbeats too: nothing keeps announcing a starting agent."""
    rec = await Recorder().watch(bus, bus.subjects.all_heartbeats)
    runner = AgentRunner(BrokenSetup(), bus=bus, heartbeat_interval_s=0.1)
    with pytest.raises(RuntimeError, match="model file"):
        await runner.start()
    await asyncio.sleep(0.3)
    seen = len(rec.events)
    await asyncio.sleep(1.0)
    assert len(rec.events) == seen


async def test_work_finished_but_not_acked_is_skipped_not_set_aside(bus: Bus) -> None:
    """Work whose outputs were published and marked handled, but whose ack a stop or crash cut off, is skipped as
    handled when it comes back, even past max_deliver: it finished, so no dead letter."""
    rec = await Recorder().watch(bus, bus.subjects.all_deadletters, bus.subjects.progress)
    settings = ConsumerSettings(max_deliver=1, ack_wait_s=30)
    ev = submission("done but not acked")
    await bus.publish(ev)
    slow = EchoAgent(delay=30.0)
    runner = await start(slow, bus, consumer=settings)
    while not slow.calls:
        await asyncio.sleep(0.02)
    await runner.stop(grace_s=0.1)  # handed back: its one allowed delivery is spent
    await bus.mark_handled("echo", ev.event_id)  # as if the outputs went out just before the stop
    fast = EchoAgent()
    runner = await start(fast, bus, consumer=settings)
    stream = await bus.js.find_stream_name_by_subject(runner.consumed_subjects()[0])
    for _ in range(100):  # it came back and was acked as handled
        info = await bus.js.consumer_info(stream, runner.consumer_name)
        if info.num_pending == 0 and info.num_ack_pending == 0 and info.delivered.consumer_seq >= 2:
            break
        await asyncio.sleep(0.1)
    assert info.num_pending == 0 and info.num_ack_pending == 0 and info.delivered.consumer_seq >= 2
    assert fast.calls == {} and not any(isinstance(e, DeadLettered) for e in rec.events)


def test_max_deliver_is_one_or_more() -> None:
    """0 or -1 (NATS's "no limit") would set every event aside at once: the runner keeps the count itself."""
    with pytest.raises(ValueError, match="max_deliver"):
        ConsumerSettings(max_deliver=0)


async def test_dead_letters_past_the_first_thousand_can_be_listed_and_retried(bus: Bus) -> None:
    """1,050 dead letters: the newest are listed, one past the first thousand is retried by its sequence, and
    retrying all reaches every one (retry scanned only the oldest 1,000)."""
    from runners.clients.ops import count_deadletters, list_deadletters, retry_deadletters

    letters = [
        DeadLettered(
            producer="m-agent",
            payload=DeadLetterPayload(
                consumer="echo",
                original_subject=bus.subjects.rules_submitted,
                deliveries=1,
                reason=f"bad {i}",
                data=encode_event(submission(f"x{i}", rule_id=f"r{i}")).decode(),
            ),
        )
        for i in range(1050)
    ]
    await bus.publish_many(letters)
    assert await count_deadletters(bus) == 1050
    newest = await list_deadletters(bus, limit=10, newest=True)
    assert [e.payload.reason for _, e in newest] == [f"bad {i}" for i in range(1040, 1050)]
    seq_1040 = newest[0][0]
    assert await retry_deadletters(bus, [seq_1040, 999_999]) == [seq_1040]
    assert len(await retry_deadletters(bus, None)) == 1049
    assert await count_deadletters(bus) == 0


async def test_status_shows_an_agent_that_stopped_as_stopped_not_stopping(bus: Bus) -> None:
    """The last heartbeat of an agent that stopped says 'stopping'; three intervals later `status` says 'stopped' (it
    said 'stopping', never stale, for the hour heartbeats are kept)."""
    from datetime import UTC, datetime, timedelta

    from bus.events import HeartbeatPayload
    from runners.clients.ops import collect_status

    then = datetime.now(UTC) - timedelta(seconds=30)
    for status, instance in (("stopping", "gone"), ("ready", "dead")):
        await bus.publish(
            AgentHeartbeat(
                producer="echo",
                time=then,
                payload=HeartbeatPayload(
                    agent="echo",
                    instance=instance,
                    host="h",
                    pid=1,
                    started_at=then,
                    status=status,
                    interval_s=1.0,
                    consumes=[],
                    produces=[],
                    tools=[],
                ),
            )
        )
    agents = {a["instance"]: a for a in (await collect_status(bus))["agents"]}
    assert (agents["gone"]["status"], agents["gone"]["stale"]) == ("stopped", False)
    assert (agents["dead"]["status"], agents["dead"]["stale"]) == ("ready", True)


async def test_an_interrupted_daemon_hands_work_back_at_once(
    config: DrivemtConfig, embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C of an in-process command cancels its task: the daemon then stops its agents with no grace (work in
    flight is handed back for redelivery), instead of finishing it for shutdown_grace_s only to throw it away; a stop
    that was asked for keeps the grace."""
    graces: list[float] = []
    stop = AgentRunner.stop

    async def recorded(self: AgentRunner, *, grace_s: float = 10.0) -> None:
        graces.append(grace_s)
        await stop(self, grace_s=grace_s)

    monkeypatch.setattr(AgentRunner, "stop", recorded)
    started = asyncio.Event()

    async def command() -> None:
        async with Daemon(config, embedder=embedder, only=["m_agent"]):
            started.set()
            await asyncio.sleep(3600)

    task = asyncio.create_task(command())
    await asyncio.wait_for(started.wait(), timeout=60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert graces and set(graces) == {0.0}, graces
    graces.clear()
    async with Daemon(config, embedder=embedder, only=["m_agent"]):
        pass
    assert graces and set(graces) == {config.shutdown_grace_s}, graces
