"""The terminal UI against a real daemon: agents from heartbeats, the conversation, typed rules and commands."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from textual.widgets import DataTable, Input, RichLog

from bus import Bus, CrashSubmitted, RulesSubmitted, Subjects, TLDatasetSubmitted
from memory import MiniLMEmbedder
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import FIXTURES, Recorder
from tui import DrivemtApp


@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    async with Daemon(config, embedder=embedder) as d:
        yield d


def log_text(app: DrivemtApp) -> str:
    """The conversation view's text, with wrapped lines joined again."""
    return " ".join(" ".join(strip.text for strip in app.query_one("#log", RichLog).lines).split())


async def until(pilot: object, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await pilot.pause(0.1)  # type: ignore[attr-defined]


async def test_tui_shows_agents_and_submits_typed_rules(daemon: Daemon, nats_url: str, namespace: str) -> None:
    """Heartbeats fill the agent table; a typed rule is published and its MR shows in the conversation."""
    assert daemon.bus is not None
    rec = await Recorder().watch(daemon.bus, daemon.bus.subjects.rules_submitted)
    app = DrivemtApp(Bus(url=nats_url, subjects=Subjects(namespace), name="test-tui"))
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.query_one("#agents", DataTable)
        await until(pilot, lambda: {"m-agent", "validator"} <= {str(k.value).split("/")[0] for k in table.rows})

        await pilot.click("#rule")
        app.query_one("#rule", Input).value = "In dense fog the speed must be reduced."
        await pilot.press("enter")
        await until(pilot, lambda: "mrs.accepted" in log_text(app))
        (submitted,) = rec.of(RulesSubmitted)
        assert submitted.producer == "tui" and submitted.payload.rules[0].region == "germany"
        assert "fog" in log_text(app) and app.query_one("#rule", Input).value == ""

        # Switching region applies to the next rule; an empty rule is refused in the UI, not published.
        await pilot.press("ctrl+r")
        assert app.region == "california"
        app.query_one("#rule", Input).value = "   "
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert len(rec.of(RulesSubmitted)) == 1

        # Bytes that are no event show up as invalid here, and the M-Agent answers with an error event.
        await daemon.bus.publish_raw(daemon.bus.subjects.rules_submitted, b"{not json")
        await until(pilot, lambda: "invalid" in log_text(app) and app.counts.get("error", 0) >= 1)
        # Events are drawn at the next refresh (a tenth of a second), so wait for the line, not just the count.
        await until(pilot, lambda: "error m-agent EventValidationError: invalid event" in log_text(app))
        await until(pilot, lambda: "deadletter m-agent" in log_text(app))


async def test_tui_submits_crash_reports_and_datasets(daemon: Daemon, nats_url: str, namespace: str) -> None:
    """``/crash --no-sim DIR`` publishes one report per case and its scenario shows; ``/tl`` publishes a dataset;
    a malformed command is refused in the UI and nothing is published."""
    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, s.crashes_submitted, s.tl_datasets_submitted)
    app = DrivemtApp(Bus(url=nats_url, subjects=Subjects(namespace), name="test-tui"))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.click("#rule")
        app.query_one("#rule", Input).value = f"/crash --no-sim {FIXTURES / 'crashes'}"
        await pilot.press("enter")
        await until(pilot, lambda: log_text(app).count("scenarios.extracted") >= 3)
        crashes = rec.of(CrashSubmitted)
        assert len(crashes) == 3 and all(c.producer == "tui" and c.payload.simulate is None for c in crashes)  # type: ignore[attr-defined]

        app.query_one("#rule", Input).value = f"/tl {FIXTURES / 'tl' / 'coco'} --detector yolo:yolov8n.yaml"
        await pilot.press("enter")
        await until(pilot, lambda: len(rec.of(TLDatasetSubmitted)) == 1)
        (tl,) = rec.of(TLDatasetSubmitted)
        assert tl.payload.detectors == ["yolo:yolov8n.yaml"]  # type: ignore[attr-defined]

        app.query_one("#rule", Input).value = "/tl"
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert len(rec.of(TLDatasetSubmitted)) == 1 and app.query_one("#rule", Input).value == "/tl"


async def test_tui_catches_up_searches_memory_and_retries_dead_letters(
    daemon: Daemon, nats_url: str, namespace: str
) -> None:
    """Started after work was done, the console shows it from the streams; the Memory pane finds MRs over
    request/reply; the Agents pane lists every work queue and the dead letters, and Ctrl+T sends one back."""
    from runners.clients.ops import list_deadletters
    from runners.clients.rules import submit_and_collect
    from tests.helpers import rule

    assert daemon.bus is not None
    done = await submit_and_collect(daemon.bus, [rule("In dense fog the speed must be reduced.", "fog")], timeout=60)
    assert done.counts()["accepted"] == 1
    await daemon.bus.publish_raw(daemon.bus.subjects.rules_submitted, b"{not json")
    deadline = asyncio.get_running_loop().time() + 30
    while not await list_deadletters(daemon.bus):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.2)
    (first, _), *_ = await list_deadletters(daemon.bus)

    app = DrivemtApp(Bus(url=nats_url, subjects=Subjects(namespace), name="test-tui"))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: "mrs.accepted" in log_text(app))  # from the streams, before anything new

        await pilot.press("f5")
        query = app.query_one("#mrquery", Input)
        query.focus()
        query.value = "fog region:germany"
        await pilot.press("enter")
        mrs = app.query_one("#mrs", DataTable)
        await until(pilot, lambda: mrs.row_count >= 1)
        mrs.focus()
        mrs.move_cursor(row=0)
        await pilot.pause(0.1)
        detail = str(app.query_one("#mrdetail-text").render())
        assert "fog" in detail and "source rules: fog" in detail

        await pilot.press("f4")
        queues, dead = app.query_one("#queues", DataTable), app.query_one("#deadletters", DataTable)
        await until(pilot, lambda: queues.row_count >= 5 and dead.row_count >= 1)
        assert str(first) in dead.rows
        dead.focus()
        dead.move_cursor(row=0)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: str(first) not in dead.rows, timeout=30)


async def test_tui_without_its_bus_leaves_with_the_reason_and_a_bus_gone_later_costs_only_the_submission(
    tmp_path: object,
) -> None:
    """No bus at start: the console exits with code 1 and the reason (it crashed with a traceback, exit code 0). Its
    bus gone later: a typed rule is refused with a notice, the text stays to send again, and the console runs on (it
    crashed on the publish)."""
    from pathlib import Path

    from bus import EmbeddedNatsServer
    from bus.connection import BusSettings

    nowhere = DrivemtApp(Bus(url="nats://127.0.0.1:1", settings=BusSettings(connect_timeout_s=0.5)))
    async with nowhere.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: nowhere.return_code is not None, timeout=15)
    assert nowhere.return_code == 1

    server = EmbeddedNatsServer(store_dir=Path(str(tmp_path)) / "js")
    url = await server.start()
    app = DrivemtApp(Bus(url=url))
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.pause(0.5)
            await server.stop()
            await pilot.click("#rule")
            app.query_one("#rule", Input).value = "In dense fog the speed must be reduced."
            await pilot.press("enter")
            await until(pilot, lambda: any(n.title == "Not submitted" for n in app._notifications), timeout=30)
            assert app.is_running and app.query_one("#rule", Input).value.startswith("In dense fog")
    finally:
        await server.stop()


async def test_the_console_says_why_its_queues_stay_empty_on_another_namespace_s_streams(
    bus: Bus, nats_url: str
) -> None:
    """A console whose namespace folds onto a running deployment's (stream names ignore letter case) is refused those
    streams, and says so once instead of showing empty panes without a word."""
    app = DrivemtApp(Bus(url=nats_url, subjects=Subjects(bus.subjects.namespace.upper()), name="test-tui-other"))
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app._refused_streams)
        await pilot.pause(0.3)
        said = [n.message for n in app._notifications]
        assert sum("belongs to namespace" in m for m in said) == 1, said
