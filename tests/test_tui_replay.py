"""A recorded event stream from a real run of every pipeline, replayed into the console.

``tests/fixtures/events/recorded.jsonl.gz`` was taken by ``scripts/record_events.py`` from ``drivemt demo`` on an
embedded daemon (rules -> MRs, driving cases -> follow-ups judged by driving models, crash reports -> MetaDrive,
traffic-light images -> TIGAUG). Every line must still decode with today's event types: when events change,
re-record it.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, RichLog, Static

from bus import Bus, Subjects
from bus.envelope import Event, decode_event
from bus.events import AgentHeartbeat, AgentMessage, ViolationFound
from tests.test_tui_panes import text_of, until
from tui import DrivemtApp

RECORDED = Path(__file__).parent / "fixtures" / "events" / "recorded.jsonl.gz"
PIPELINES = {"crash": "crash", "tl": "traffic light", "mr": "driving model"}


def recorded() -> list[Event]:
    with gzip.open(RECORDED, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [decode_event(json.dumps(row["event"]).encode(), subject=row["subject"]) for row in rows]


def test_the_recording_covers_every_pipeline() -> None:
    """The fixture is what the replay test claims: violations from all three pipelines, the driving-model one
    included, the agents' conversation, and heartbeats of several agents."""
    events = recorded()
    types = Counter(e.type for e in events)
    kinds = Counter(e.payload.kind for e in events if isinstance(e, ViolationFound))
    assert set(kinds) == {"crash", "tl", "mr"}, kinds
    for needed in ("rules.submitted", "mrs.accepted", "cases.described", "followups.judged", "sim.completed",
                   "crashes.verdict", "tl.verdict", "progress", "agents.message"):  # fmt: skip
        assert types[needed] > 0, f"no {needed} in the recording"
    assert len({e.payload.agent for e in events if isinstance(e, AgentHeartbeat)}) >= 6


@pytest.mark.slow
async def test_replayed_stream_counts_threads_and_lists_agents(nats_url: str, namespace: str) -> None:
    """Replayed in order, the console counts each pipeline's violations as the recording holds them, threads a
    submission's whole chain under its tag, and lists every agent instance that sent a heartbeat."""
    events = recorded()
    want_counts = Counter(PIPELINES[e.payload.kind] for e in events if isinstance(e, ViolationFound))
    instances = {f"{e.payload.agent}/{e.payload.instance}" for e in events if isinstance(e, AgentHeartbeat)}
    bus = Bus(url=nats_url, subjects=Subjects(namespace), name="test-replay")
    app = DrivemtApp(bus, catch_up=0, show_url=False)
    chains: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        if not isinstance(e, AgentHeartbeat):
            chains[e.correlation_id].append(e)
    kinds = {c: {e.type for e in chain[-app.state.max_thread_events :]} for c, chain in chains.items()}
    longest = max(kinds, key=lambda c: len(kinds[c]))  # a thread keeps its latest events: the bound
    async with app.run_test(size=(160, 48)) as pilot:
        for event in events:
            app.show_event(event)
        vcounts = app.query_one("#vcounts", Static)
        await until(pilot, lambda: all(f"{p} {n}" in str(vcounts.render()) for p, n in want_counts.items()))
        assert app.query_one("#violations", DataTable).row_count == sum(want_counts.values())
        agents = app.query_one("#agents", DataTable)
        await until(pilot, lambda: agents.row_count == len(instances))
        assert set(agents.rows) == instances
        said = [e for e in events if isinstance(e, AgentMessage)]
        log = app.query_one("#log", RichLog)
        app.query_one("#filter", Input).value = "type:agents.message"
        await until(pilot, lambda: said[-1].producer in text_of(log))
        app.query_one("#filter", Input).value = f"#{longest[:8]}"
        thread = app.query_one("#thread", RichLog)
        await until(pilot, lambda: f"submission #{longest[:8]}" in text_of(thread))
        shown = text_of(thread)
        assert all(kind in shown for kind in kinds[longest]), (kinds[longest], shown[:500])
        assert len(kinds[longest]) >= 5  # a real chain: submission, intermediate results, verdicts
