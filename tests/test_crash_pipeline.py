"""Crash reports through a real daemon: CrashExtractor on the bus, templates in Qdrant kb_templates."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bus import CrashSubmitted, ErrorDomain, ErrorReported, ScenarioExtracted
from bus.events import CrashSubmittedPayload
from memory import MiniLMEmbedder
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import FIXTURES, Recorder
from tools.crash.templates import packaged_templates


@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    async with Daemon(config, embedder=embedder) as d:
        yield d


def report(case_id: str, summary: str) -> CrashSubmitted:
    """A crash report to extract only (simulation has tests of its own)."""
    return CrashSubmitted(
        producer="test", payload=CrashSubmittedPayload(case_id=case_id, summary=summary, simulate=None)
    )


async def test_reports_become_scenarios_and_bad_ones_errors(daemon: Daemon) -> None:
    """Each good report yields one scenario event; empty and unrelated ones yield error events; the agent goes on."""
    assert daemon.bus is not None and daemon.pipeline is not None
    subjects = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, subjects.scenarios_extracted, subjects.errors(ErrorDomain.CRASHES))
    good = ["108909", "119839", "128058"]
    events = [report(c, (FIXTURES / "crashes" / c / "summary.txt").read_text()) for c in good]
    events += [report("empty", " "), report("memo", "The annual report is due in March.")]
    await daemon.bus.publish_many(events)
    await rec.wait_for(lambda evs: len(evs) == 5, timeout=60)
    scenarios = {e.payload.case_id: e for e in rec.of(ScenarioExtracted)}  # type: ignore[attr-defined]
    assert set(scenarios) == set(good)
    t = scenarios["119839"].payload.scenario
    assert (
        t.road_network.road_type == "T-intersection" and scenarios["119839"].payload.extractor == "offline:crash-rules"
    )
    assert scenarios["119839"].correlation_id == events[1].correlation_id
    errors = {e.payload.item_id or e.payload.input_event_id: e for e in rec.of(ErrorReported)}  # type: ignore[attr-defined]
    assert len(errors) == 2
    assert all(e.payload.error_type == "NotACrashReportError" for e in errors.values())  # type: ignore[attr-defined]


async def test_templates_live_in_qdrant_and_user_templates_win(daemon: Daemon) -> None:
    """kb_templates holds the five packaged templates; a user's template replaces one and is used."""
    assert daemon.pipeline is not None and daemon.bus is not None
    store = daemon.pipeline.templates
    stored = await store.all()
    assert set(stored) == set(packaged_templates()) and len(stored) == 5
    (best, score), *_ = await store.search("a car merging from an entrance ramp onto the freeway")
    assert best.road_type == "Merge" and score > 0.3
    mine = packaged_templates()["Straight"].model_copy(deep=True)
    mine.road_network.lanes, mine.description = 4, "A four-lane road (site default)."
    assert await store.add([mine]) == 1
    assert (await store.all())["Straight"].road_network.lanes == 4
    assert await store.add(packaged_templates().values(), replace=False) == 0  # packaged never overwrite
    rec = await Recorder().watch(daemon.bus, daemon.bus.subjects.scenarios_extracted)
    text = "Vehicle one (V1), a 2001 Honda Civic was traveling east. Vehicle two (V2) was traveling east. V2 struck V1."
    await daemon.bus.publish(report("nolanes", text))
    (ev,) = await rec.wait_for(lambda evs: len(evs) == 1, timeout=30)
    assert isinstance(ev, ScenarioExtracted) and ev.payload.scenario.road_network.lanes == 4
    assert ev.payload.template == "Straight"  # the stored site template, not the packaged two-lane one
