"""Submitting crash reports and collecting their verdicts, to a running daemon or a private in-process one.

A batch is one correlation id. Each case ends with a verdict (every run judged) or an error (its report
could not be read); progress counts completed runs against the runs planned so far.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bus import (
    Bus,
    CrashSubmitted,
    CrashVerdict,
    ErrorDomain,
    ErrorReported,
    Event,
    ScenarioExtracted,
    SimCompleted,
    Subjects,
)
from bus.events import CrashSubmittedPayload
from runners.clients.collector import Collector
from tools.common.artifacts import ArtifactStore, RunLayout
from tools.crash.files import CrashReport, find_cases, read_case
from tools.crash.models import SimOptions
from tools.crash.runs import plan_runs

__all__ = [
    "CrashBatch",
    "CrashResults",
    "crash_submissions_from_path",
    "make_crash_submissions",
    "submit_crashes",
    "upload_sketches",
]

ProgressFn = Callable[[int, int, str], None]


def make_crash_submissions(
    reports: Sequence[CrashReport], *, simulate: SimOptions | None, producer: str = "cli", source: str | None = None
) -> tuple[str, list[CrashSubmitted]]:
    """One submission per report, sharing a new correlation id (the batch)."""
    correlation = str(uuid.uuid4())
    return correlation, [
        CrashSubmitted(
            correlation_id=correlation,
            producer=producer,
            payload=CrashSubmittedPayload(
                case_id=r.case_id,
                summary=r.summary,
                sketch=r.sketch,
                source=source,
                simulate=simulate,
                batch_size=len(reports),
            ),
        )
        for r in reports
    ]


def crash_submissions_from_path(
    path: Path | str, *, simulate: SimOptions | None, producer: str = "cli", source: str | None = None
) -> tuple[str, list[CrashSubmitted]]:
    """Submissions for a case folder or a folder of case folders (each with ``summary.txt``).

    Raises:
        NotACrashReportError: If the path holds no readable case.
    """
    reports = [read_case(folder) for folder in find_cases(Path(path).expanduser())]
    return make_crash_submissions(reports, simulate=simulate, producer=producer, source=source or str(path))


@dataclass
class CrashBatch:
    """What a batch of crash reports came to."""

    correlation_id: str
    case_ids: list[str]
    scenarios: dict[str, ScenarioExtracted] = field(default_factory=dict)
    verdicts: dict[str, CrashVerdict] = field(default_factory=dict)
    errors: dict[str, ErrorReported] = field(default_factory=dict)
    run_errors: list[ErrorReported] = field(default_factory=list)
    runs_done: int = 0
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        """Every case has a verdict or an error (or, extracting only, a scenario)."""
        return all(c in self.verdicts or c in self.errors or self._extract_only(c) for c in self.case_ids)

    def _extract_only(self, case_id: str) -> bool:
        sc = self.scenarios.get(case_id)
        return sc is not None and sc.payload.simulate is None

    @property
    def runs_planned(self) -> int:
        """Runs of the cases extracted so far."""
        return sum(
            len(plan_runs(sc.payload.scenario, sc.payload.simulate.settings()))
            for sc in self.scenarios.values()
            if sc.payload.simulate is not None
        )


class CrashResults:
    """Fills a :class:`CrashBatch` from the events a :class:`~runners.clients.collector.Collector` brings in.

    Args:
        batch: The batch to fill.
        submissions: The submitted events (errors name their input event, not the case).
    """

    def __init__(self, batch: CrashBatch, submissions: Sequence[CrashSubmitted]) -> None:
        self.batch = batch
        self._case_of_event = {e.event_id: e.payload.case_id for e in submissions}

    @staticmethod
    def subjects(s: Subjects) -> list[str]:
        """Scenarios, completed runs, verdicts and crash, simulation and judge errors."""
        return [
            s.scenarios_extracted,
            s.sim_completed,
            s.crashes_verdict,
            s.errors(ErrorDomain.CRASHES),
            s.errors(ErrorDomain.SIM),
            s.errors(ErrorDomain.JUDGE),
        ]

    def on_event(self, event: Event) -> None:
        """Count a run, keep a scenario, a verdict or an error."""
        b = self.batch
        if isinstance(event, ScenarioExtracted):
            b.scenarios.setdefault(event.payload.case_id, event)
        elif isinstance(event, SimCompleted):
            b.runs_done += 1
        elif isinstance(event, CrashVerdict):
            b.verdicts.setdefault(event.payload.case_id, event)
        elif isinstance(event, ErrorReported):
            case = self._case_of_event.get(event.payload.input_event_id or "")
            if case is not None:
                b.errors.setdefault(case, event)
            else:
                b.run_errors.append(event)

    def progress(self, on_progress: ProgressFn) -> None:
        """Report runs done against runs planned, and cases judged."""
        b = self.batch
        done_cases = len(set(b.verdicts) | set(b.errors))
        on_progress(b.runs_done, max(b.runs_planned, b.runs_done), f"{done_cases}/{len(b.case_ids)} cases judged")


async def submit_crashes(
    bus: Bus,
    reports: Sequence[CrashReport],
    *,
    simulate: SimOptions | None,
    timeout: float,
    on_progress: ProgressFn | None = None,
    source: str | None = None,
    submissions: tuple[str, list[CrashSubmitted]] | None = None,
) -> CrashBatch:
    """Submit reports to whatever daemon consumes this bus and wait for every verdict or error (``submissions``:
    the events of :func:`make_crash_submissions`, when the caller needed the batch id first)."""
    correlation, events = submissions or make_crash_submissions(reports, simulate=simulate, source=source)
    batch = CrashBatch(correlation_id=correlation, case_ids=[r.case_id for r in reports])
    results = CrashResults(batch, events)
    started = time.perf_counter()
    async with Collector(bus, correlation, CrashResults.subjects(bus.subjects), results.on_event) as collector:
        await bus.publish_many(events)
        await collector.wait(
            lambda: batch.complete,
            timeout=timeout,
            on_tick=(lambda: results.progress(on_progress)) if on_progress else None,
        )
    batch.seconds = time.perf_counter() - started
    return batch


def upload_sketches(store: ArtifactStore, batch: str, reports: Sequence[CrashReport]) -> list[str]:
    """Put each report's scene sketch where the batch report looks for it (artefacts on the bus); return the refs."""
    refs = []
    for r in reports:
        if r.sketch and Path(r.sketch).is_file():
            ref = f"{RunLayout.crash_case(batch, r.case_id)}/sketch{Path(r.sketch).suffix.lower()}"
            refs.append(store.put(ref, Path(r.sketch)))
    return refs
