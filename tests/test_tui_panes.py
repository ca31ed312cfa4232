"""The console's panes, driven by Textual's pilot with events fed in (no daemon), and its bounded state."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, RichLog, Static, TabbedContent

from bus import Bus, Subjects
from bus.events import (
    AgentHeartbeat,
    HeartbeatPayload,
    ProgressPayload,
    ProgressReported,
    RulesSubmitted,
    RulesSubmittedPayload,
    ViolationFound,
    ViolationPayload,
)
from tests.event_samples import samples
from tools.rules.models import TrafficRule
from tui import DrivemtApp
from tui.state import ConsoleState, ViolationRow


def violation(kind: str, correlation: str, **details: object) -> ViolationFound:
    metrics = {"crash": {"t": 3.2, "reproduced": 1.0}, "tl": {"consistency": 0.21}, "mr": {"change": 0.4, "band": 1.0}}
    return ViolationFound(
        correlation_id=correlation,
        producer="judge",
        payload=ViolationPayload(
            kind=kind,  # type: ignore[arg-type]
            item_id=f"{kind}-case",
            description=f"a {kind} violation " + "with a long description that must wrap, not be cut " * 3,
            evidence=[f"b/{kind}/evidence.png"],
            metrics=metrics[kind],
            details=dict(details),
        ),
    )


def heartbeat(handled: int, at: datetime) -> AgentHeartbeat:
    return AgentHeartbeat(
        producer="m-agent",
        time=at,
        payload=HeartbeatPayload(
            agent="m-agent", instance="i1", host="h", pid=1, started_at=at, status="ready", consumes=[], produces=[],
            tools=[], handled=handled, last_error="EmptyRuleError: the rule is empty" if handled else None,
        ),
    )  # fmt: skip


def test_state_rows_threads_counts_and_bounds() -> None:
    """Violations become rows per pipeline with their measure; events thread by submission; an event seen twice
    (catch-up and live) counts once; throughput comes from heartbeats; every collection stays bounded."""
    state = ConsoleState(max_events=50, max_threads=3, max_thread_events=5, max_violations=4)
    cid = str(uuid.uuid4())
    v = violation("tl", cid, detector="yolo", transform="RN")
    assert state.ingest(v) == {"conversation", "violations"} and state.ingest(v) == set()
    row = state.violations[0]
    assert (row.pipeline, row.subject, row.relation, row.measure) == ("traffic light", "yolo", "RN", "consistency 0.21")
    crash = ViolationRow.of(violation("crash", cid, run_id="V1-idm-v0"))
    assert crash.measure == "collision at 3.2 s, reproduced" and crash.subject == "V1"
    mr = ViolationRow.of(violation("mr", cid, model="epoch", mr="Given ... Then slow down"))
    assert mr.subject == "epoch" and mr.measure.startswith("change +0.40")
    for i in range(10):
        state.ingest(violation("crash", str(uuid.uuid4()), run_id=f"V{i}"))
    assert len(state.violations) == 4 and state.violation_counts == {"traffic light": 1, "crash": 10}
    assert len(state.threads) == 3 and all(len(t) <= 5 for t in state.threads.values())
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for k in range(7):
        state.ingest(heartbeat(k * 10, t0 + timedelta(seconds=10 * k)))
    (agent,) = state.agents.values()
    assert agent.per_minute() == pytest.approx(60.0) and agent.last_error
    for _ in range(100):
        state.ingest(RulesSubmitted(producer="t", payload=RulesSubmittedPayload(rules=[TrafficRule(id="r", text="x")])))
    assert len(state.events) == 50 and len(state.batches) <= 200


def test_a_batch_row_links_the_report_its_last_progress_names() -> None:
    """The Judge's last progress of a crash batch names the report it drew; the batch row links it."""
    state = ConsoleState()
    cid = str(uuid.uuid4())
    for done, report in ((1, None), (2, f"{cid}/crashes.html")):
        payload = ProgressPayload(stage="crash-batch", done=done, total=2, unit="cases", report=report)
        state.ingest(ProgressReported(correlation_id=cid, producer="judge", payload=payload))
        assert state.batches[cid].report == report


async def until(pilot: object, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await pilot.pause(0.05)  # type: ignore[attr-defined]


def text_of(log: RichLog) -> str:
    return " ".join(" ".join(strip.text for strip in log.lines).split())


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_panes_switch_by_key_and_show_what_came_in(
    nats_url: str, namespace: str, size: tuple[int, int], tmp_path: Path
) -> None:
    """F2-F6 and Alt+1-5 switch panes; the conversation wraps long lines (nothing cut) and threads by tag; the
    Violations pane counts per pipeline and shows the evidence; Agents and Batches fill from heartbeats and
    progress; Enter on a violation opens its submission's chain."""
    from PIL import Image

    (tmp_path / "b" / "crash").mkdir(parents=True)
    Image.new("RGB", (64, 32), (200, 30, 30)).save(tmp_path / "b" / "crash" / "evidence.png")
    bus = Bus(url=nats_url, subjects=Subjects(namespace), name="test-tui")
    app = DrivemtApp(bus, catch_up=0, artifacts_root=tmp_path)
    async with app.run_test(size=size) as pilot:
        cid = str(uuid.uuid4())
        rules = RulesSubmitted(
            correlation_id=cid, producer="cli",
            payload=RulesSubmittedPayload(rules=[TrafficRule(id="r1", text="Stop at red lights.")]),
        )  # fmt: skip
        app.show_event(rules)
        for kind in ("crash", "tl", "mr"):
            app.show_event(violation(kind, cid, detector="yolo", transform="RN", model="epoch", run_id="V1-idm-v0"))
        app.show_event(heartbeat(3, datetime.now(UTC)))
        app.show_event(
            ProgressReported(correlation_id=cid, producer="tl-augmenter",
                             payload=ProgressPayload(stage="tl-augment", done=3, total=12, unit="images"))
        )  # fmt: skip
        for event in samples().values():  # every registered type draws without error
            app.show_event(event)
        log = app.query_one("#log", RichLog)
        await until(pilot, lambda: "violations.found" in text_of(log))
        assert "that must wrap, not be cut" in text_of(log)  # wrapped, whole
        tabs = app.query_one("#panes", TabbedContent)
        await pilot.press("f3")
        assert tabs.active == "violations-pane"
        table = app.query_one("#violations", DataTable)
        await until(pilot, lambda: table.row_count >= 3)
        counts = str(app.query_one("#vcounts", Static).render())
        assert "crash" in counts and "traffic light" in counts and "driving model" in counts
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause(0.1)
        detail = str(app.query_one("#vdetail-text", Static).render())
        assert f"evidence: {tmp_path / 'b' / 'crash' / 'evidence.png'}" in detail  # found on this machine
        assert app.query_one("#vimage").query("AutoImage")  # drawn in the terminal (half-blocks here)
        await pilot.press("alt+3")
        assert tabs.active == "agents-pane"
        assert "m-agent/i1" in app.query_one("#agents", DataTable).rows
        await pilot.press("f6")
        assert tabs.active == "batches-pane" and app.query_one("#batches", DataTable).row_count >= 1
        await pilot.press("f4")
        table.focus()
        await pilot.press("f3")
        table.focus()
        await pilot.press("enter")
        assert tabs.active == "conversation"
        assert app.query_one("#filter", Input).value == f"#{cid[:8]}"
        thread = app.query_one("#thread", RichLog)
        await until(pilot, lambda: f"submission #{cid[:8]}" in text_of(thread))
        assert "rules.submitted" in text_of(thread) and "violations.found" in text_of(thread)
        await pilot.press("f8")
        assert not app.follow and "PAUSED" in str(app.query_one("#status", Static).render())


def test_folder_arguments_complete(tmp_path: Path) -> None:
    """The last word of /crash, /tl and /cases completes to a path; rules and options are left alone."""
    from tui.app import PathSuggester

    (tmp_path / "crash-cases").mkdir()
    (tmp_path / "crash-cases" / "119839").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    s = PathSuggester()
    assert s.complete(f"/crash {tmp_path}/cr") == f"/crash {tmp_path}/crash-cases/"
    assert s.complete(f"/crash --no-sim {tmp_path}/crash-cases/") == f"/crash --no-sim {tmp_path}/crash-cases/119839/"
    assert s.complete(f"/tl {tmp_path}/no") == f"/tl {tmp_path}/notes.txt"
    assert s.complete(f"Stop at {tmp_path}/cr") is None and s.complete("/crash --no") is None
    assert s.complete(f"/cases {tmp_path}/zzz") is None


async def test_cases_typed_in_the_console_are_submitted_with_their_frames(bus: Bus, tmp_path: Path) -> None:
    """`/cases RECORDING` puts the frames into the daemon's artefact store and publishes the cases; without a store,
    or for a folder without cases, the console says why and publishes nothing."""
    from tests.helpers import Recorder
    from tools.common.artifacts import LocalArtifactStore
    from tools.mt.synth.dataset import synth_dataset

    synth_dataset(tmp_path / "set", cases=2, seed=1, width=160, height=80)
    rec = await Recorder().watch(bus, bus.subjects.cases_submitted)
    store = LocalArtifactStore(tmp_path / "runs")
    app = DrivemtApp(bus, catch_up=0, case_store=store)
    async with app.run_test(size=(120, 30)) as pilot:
        line = app.query_one("#rule", Input)
        line.value = f"/cases {tmp_path / 'set'}"
        await pilot.press("enter")
        await until(pilot, lambda: len(rec.events) == 1)
        (event,) = rec.events
        frames = event.payload.cases[0].frames  # type: ignore[attr-defined]
        assert len(event.payload.cases) == 2 and all(store.exists(f) for f in frames)  # type: ignore[attr-defined]
        line.value = f"/cases {tmp_path / 'runs'}"
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert len(rec.events) == 1 and line.value.startswith("/cases")


async def test_after_a_reconnect_the_console_reads_what_it_missed_from_the_streams(bus: Bus) -> None:
    """Events stored while the console was away show after it reconnects, each once."""
    app = DrivemtApp(bus, catch_up=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause(0.2)
        app.catch_up = 50
        missed = RulesSubmitted(producer="cli", payload=RulesSubmittedPayload(rules=[TrafficRule(id="m", text="x")]))
        await app._sub.unsubscribe()  # type: ignore[union-attr]  # away: nothing arrives live
        await bus.publish(missed)
        app._last_connection = "reconnecting…"  # as the connection line saw it while the bus was away
        app._update_connection()
        await until(pilot, lambda: app.state.counts.get("rules.submitted") == 1)
        app._last_connection = "reconnecting…"
        app._update_connection()  # a second catch-up brings nothing twice
        await pilot.pause(0.5)
        assert app.state.counts.get("rules.submitted") == 1


def _heartbeat(status: str, at: datetime, interval_s: float = 1.0) -> object:
    from bus import AgentHeartbeat
    from bus.events import HeartbeatPayload

    return AgentHeartbeat(
        producer="m-agent",
        time=at,
        payload=HeartbeatPayload(
            agent="m-agent",
            instance="h-1",
            host="h",
            pid=1,
            started_at=at,
            status=status,
            interval_s=interval_s,
            consumes=["rules.submitted"],
            produces=["mrs.candidates"],
            tools=[],
        ),
    )


def test_an_agent_whose_heartbeats_stop_is_shown_silent_or_stopped() -> None:
    """Three missed heartbeats, counted on the console's clock from when the latest arrived, make a ready agent
    'silent' (its process died; it stayed 'ready'), and one whose last heartbeat said 'stopping' 'stopped'; the sweep
    marks them for drawing though no event came. A daemon clock 20 s behind changes nothing (heartbeats are live only:
    the console's catch-up reads the input and result streams, not the heartbeats)."""
    t0 = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
    clock = [t0]
    state = ConsoleState(clock=lambda: clock[0])
    skew = timedelta(seconds=-20)  # (the daemon's clock)
    state.ingest(_heartbeat("ready", t0 + skew))  # type: ignore[arg-type]
    (row,) = state.agents.values()
    row.shown = row.shown_status(t0)
    state.changed_agents.clear()
    clock[0] = t0 + timedelta(seconds=2)
    assert not state.sweep_silent(clock[0]) and row.shown_status(clock[0]) == "ready"
    clock[0] = t0 + timedelta(seconds=4)
    assert state.sweep_silent(clock[0]) and state.changed_agents == {row.key}
    assert row.shown_status(clock[0]) == "silent"
    state.ingest(_heartbeat("stopping", t0 + timedelta(seconds=5) + skew))  # type: ignore[arg-type]
    clock[0] = t0 + timedelta(seconds=6)
    assert row.shown_status(clock[0]) == "stopping"
    assert row.shown_status(t0 + timedelta(seconds=10)) == "stopped"
