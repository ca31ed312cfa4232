"""Submitting driving test cases: read a recording with any loader, put its frames into the store, publish them."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bus import (
    Bus,
    CasesSubmitted,
    ErrorDomain,
    ErrorReported,
    Event,
    FollowupGenerated,
    FollowupJudged,
    FollowupValidated,
    MTBatchJudged,
    Subjects,
)
from bus.events import CasesSubmittedPayload
from runners.clients.collector import Collector
from tools.common.artifacts import ArtifactStore, RunLayout
from tools.mt.loaders import LoadResult, import_cases, load_cases
from tools.mt.models import CASE_FRAMES, DrivingCase
from tools.mt.report import GenerationResult, summarise, write_generation_report

__all__ = [
    "CaseOutcome",
    "CaseResults",
    "case_events",
    "case_submissions",
    "report_outcome",
    "submit_cases_and_collect",
]


def case_submissions(
    store: ArtifactStore,
    path: Path,
    *,
    region: str | None,
    method: str = "automt",
    seed: int = 0,
    producer: str = "cli",
    per_event: int = 10,
    format: str | None = None,
    stride: int | None = None,
    **batch: Any,
) -> tuple[str, list[CasesSubmitted], LoadResult]:
    """Events for the cases under ``path`` (their frames put into ``store`` under the batch's folder).

    Args:
        store: The daemon's artefact store (events carry refs into it).
        path: A recording or a dataset: Udacity, A2D2, a plain folder, or a drivemt synthetic set.
        region: The ontology region whose MRs apply.
        producer: Who submits.
        per_event: Cases per event.
        format: The recording's format; detected when None.
        stride: Frames between consecutive cases of a long recording (the case length when None).
        **batch: Further fields of the submission (``models``, ``band``, ``fixed_mr``).

    Returns:
        The batch's correlation id, its events, and what the loader found (problems included).

    Raises:
        NoCasesError: If the path holds no recording.
    """
    result = load_cases(path, format=format, region=region, stride=stride or CASE_FRAMES)
    correlation = str(uuid.uuid4())
    cases = import_cases(store, result.cases, prefix=RunLayout.cases(correlation))
    events = case_events(
        correlation, cases, region=region, method=method, seed=seed, source=str(path), producer=producer,
        per_event=per_event, **batch,
    )  # fmt: skip
    return correlation, events, result


def case_events(
    correlation: str,
    cases: Sequence[DrivingCase],
    *,
    producer: str = "cli",
    per_event: int = 10,
    source: str | None = None,
    **batch: Any,
) -> list[CasesSubmitted]:
    """The events of one batch of cases already in the store (``batch``: region, method, seed, models, band,
    fixed_mr)."""
    return [
        CasesSubmitted(
            correlation_id=correlation,
            producer=producer,
            payload=CasesSubmittedPayload(
                cases=list(cases[i : i + per_event]), source=source, batch_size=len(cases), **batch
            ),
        )
        for i in range(0, len(cases), max(1, per_event))
    ]


@dataclass
class CaseOutcome:
    """What one submitted case came to: a validated follow-up, no follow-up (and why), or an error."""

    case_id: str
    validated: FollowupValidated | None = None
    generated: FollowupGenerated | None = None
    error: ErrorReported | None = None
    judged: FollowupJudged | None = None

    @property
    def done(self) -> bool:
        """The case has its final result: the Judge's verdict (every case ends with one, judged or not)."""
        return self.judged is not None

    @property
    def valid(self) -> bool:
        """A follow-up was made and passed all three checks."""
        return self.validated is not None and self.validated.payload.validity.valid

    def result(self) -> GenerationResult:
        """The case's outcome for the figures and the report."""
        if self.validated is not None:
            p = self.validated.payload
            if p.validity.error is not None:  # (not checked at all: no pass rate may count it)
                return GenerationResult(self.case_id, "error", p.followup, None, p.validity.error)
            return GenerationResult(self.case_id, "valid" if p.validity.valid else "invalid", p.followup, p.validity)
        if self.generated is not None:
            g = self.generated.payload
            return GenerationResult(self.case_id, g.status, g.followup, None, g.reason)
        if self.error is not None:
            return GenerationResult(self.case_id, "error", reason=self.error.payload.reason)
        return GenerationResult(self.case_id, "missing", reason="no result before the timeout")


class CaseResults:
    """Collects the outcome of every case of a submission (use with :class:`~runners.clients.collector.Collector`)."""

    def __init__(self, case_ids: Sequence[str]) -> None:
        self.outcomes = {c: CaseOutcome(c) for c in case_ids}
        self.batch: MTBatchJudged | None = None
        self.model_errors: list[ErrorReported] = []

    @staticmethod
    def subjects(s: Subjects) -> list[str]:
        """Follow-ups generated, validated and judged, the batch's totals, and the cases' and Judge's errors."""
        return [
            s.followups_generated,
            s.followups_validated,
            s.followups_judged,
            s.followups_batch_judged,
            s.errors(ErrorDomain.CASES),
            s.errors(ErrorDomain.JUDGE),
        ]

    def on_event(self, event: Event) -> None:
        """Keep each case's events."""
        if isinstance(event, FollowupJudged):
            if event.payload.case.case_id in self.outcomes:
                self.outcomes[event.payload.case.case_id].judged = event
        elif isinstance(event, MTBatchJudged):
            self.batch = event
        elif isinstance(event, ErrorReported) and event.payload.domain == ErrorDomain.JUDGE:
            self.model_errors.append(event)
        elif isinstance(event, FollowupValidated):
            case_id = event.payload.followup.source.case_id
            if case_id in self.outcomes:
                self.outcomes[case_id].validated = event
        elif isinstance(event, FollowupGenerated):
            case_id = event.payload.case.case_id
            if case_id in self.outcomes:
                self.outcomes[case_id].generated = event
        elif isinstance(event, ErrorReported) and event.payload.item_id in self.outcomes:
            self.outcomes[event.payload.item_id].error = event

    def complete(self) -> bool:
        """Every case has its final result."""
        return all(o.done for o in self.outcomes.values())

    def done(self) -> int:
        """Cases with their final result."""
        return sum(o.done for o in self.outcomes.values())

    def results(self) -> list[GenerationResult]:
        """Every case's outcome, in submission order."""
        return [o.result() for o in self.outcomes.values()]


async def submit_cases_and_collect(
    bus: Bus,
    events: Sequence[CasesSubmitted],
    *,
    timeout: float,
    on_progress: Callable[[int, int], None] | None = None,
) -> CaseResults:
    """Publish case submissions (one batch) and wait for every case's outcome."""
    case_ids = [c.case_id for e in events for c in e.payload.cases]
    results = CaseResults(case_ids)
    correlation = events[0].correlation_id
    async with Collector(bus, correlation, CaseResults.subjects(bus.subjects), results.on_event) as collector:
        await bus.publish_many(events)
        await collector.wait(
            results.complete,
            timeout=timeout,
            on_tick=(lambda: on_progress(results.done(), len(case_ids))) if on_progress else None,
        )
    return results


def report_outcome(
    store: ArtifactStore, outcome: CaseResults, *, batch: str, seconds: float, write: bool = True
) -> tuple[list[GenerationResult], dict[str, Any], str | None]:
    """The batch's results, its figures (AutoMT's) and the ref of its HTML report (``<batch>/followups.html``)."""
    results = outcome.results()
    figures = summarise(results, seconds=seconds)
    ref = None
    if write and results:
        ref = write_generation_report(store, results, report_ref=f"{batch}/followups.html", figures=figures)
    return results, figures, ref
