"""Submitting crash reports and collecting their verdicts, to a running daemon or a private in-process one.

A batch is one correlation id. Each case ends with a verdict (every run judged) or an error (its report
could not be read); progress counts completed runs against the runs planned so far.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    decode_event,
)
from bus.errors import EventValidationError
from bus.events import CrashSubmittedPayload
from tools.crash.files import CrashReport, find_cases, read_case
from tools.crash.models import SimOptions
from tools.crash.runs import plan_runs

__all__ = [
    "CrashBatch",
    "CrashCollector",
    "crash_submissions_from_path",
    "make_crash_submissions",
    "submit_crashes",
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


class CrashCollector:
    """Collects a batch's results from the bus; subscribe (:meth:`start`) before publishing.

    Args:
        bus: A connected bus.
        batch: The batch to fill.
        submissions: The submitted events (errors name their input event, not the case).
    """

    def __init__(self, bus: Bus, batch: CrashBatch, submissions: Sequence[CrashSubmitted]) -> None:
        self.bus = bus
        self.batch = batch
        self._case_of_event = {e.event_id: e.payload.case_id for e in submissions}
        self._subs: list[object] = []
        self._changed = asyncio.Event()

    async def start(self) -> None:
        """Subscribe to scenarios, completed runs, verdicts and crash/sim errors."""
        s = self.bus.subjects
        for subject in (
            s.scenarios_extracted,
            s.sim_completed,
            s.crashes_verdict,
            s.errors(ErrorDomain.CRASHES),
            s.errors(ErrorDomain.SIM),
            s.errors(ErrorDomain.JUDGE),
        ):
            self._subs.append(await self.bus.nc.subscribe(subject, cb=self._on_msg))

    async def _on_msg(self, msg: object) -> None:
        try:
            event: Event = decode_event(msg.data, subject=msg.subject)  # type: ignore[attr-defined]
        except EventValidationError:
            return
        b = self.batch
        if event.correlation_id != b.correlation_id:
            return
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
        self._changed.set()

    async def wait(self, *, timeout: float, on_progress: ProgressFn | None = None) -> bool:
        """Wait until the batch is complete or ``timeout`` passes; True when complete."""
        deadline = time.monotonic() + timeout
        while not self.batch.complete and time.monotonic() < deadline:
            if on_progress is not None:
                self._progress(on_progress)
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=min(0.5, max(0.01, deadline - time.monotonic())))
        if on_progress is not None:
            self._progress(on_progress)
        return self.batch.complete

    def _progress(self, on_progress: ProgressFn) -> None:
        b = self.batch
        done_cases = len(b.verdicts) + len(b.errors)
        on_progress(b.runs_done, max(b.runs_planned, b.runs_done), f"{done_cases}/{len(b.case_ids)} cases judged")

    async def stop(self) -> None:
        """Unsubscribe."""
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()  # type: ignore[attr-defined]
        self._subs.clear()


async def submit_crashes(
    bus: Bus,
    reports: Sequence[CrashReport],
    *,
    simulate: SimOptions | None,
    timeout: float,
    on_progress: ProgressFn | None = None,
    source: str | None = None,
) -> CrashBatch:
    """Submit reports to whatever daemon consumes this bus and wait for every verdict or error."""
    correlation, events = make_crash_submissions(reports, simulate=simulate, source=source)
    batch = CrashBatch(correlation_id=correlation, case_ids=[r.case_id for r in reports])
    collector = CrashCollector(bus, batch, events)
    await collector.start()
    started = time.perf_counter()
    try:
        await bus.publish_many(events)
        await collector.wait(timeout=timeout, on_progress=on_progress)
    finally:
        await collector.stop()
    batch.seconds = time.perf_counter() - started
    return batch
