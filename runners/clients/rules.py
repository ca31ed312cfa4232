"""Talking to a running daemon: finding its bus, submitting rules, collecting their results."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bus import (
    Bus,
    ErrorDomain,
    Event,
    MRAccepted,
    MRRejected,
    RulesSubmitted,
    Subjects,
)
from bus.events import ErrorReported, RulesSubmittedPayload
from runners.clients.collector import Collector
from tools.common.models import Provenance
from tools.rules.models import TrafficRule

__all__ = [
    "RuleResult",
    "RulesResults",
    "RunSummary",
    "make_submissions",
    "result_row",
    "submit_and_collect",
    "unique_ids",
]

ProgressFn = Callable[[int, int], None]


def unique_ids(rules: Sequence[TrafficRule]) -> list[TrafficRule]:
    """Rules with ids made unique within a submission (``id#2`` for a repeated id)."""
    seen: dict[str, int] = {}
    out = []
    for r in rules:
        n = seen.get(r.id, 0) + 1
        seen[r.id] = n
        out.append(r if n == 1 else r.model_copy(update={"id": f"{r.id}#{n}"}))
    return out


def make_submissions(
    rules: Sequence[TrafficRule], *, producer: str = "cli", per_event: int = 1, source: str | None = None
) -> tuple[str, list[RulesSubmitted]]:
    """Submission events for rules, sharing one correlation id.

    Args:
        rules: The rules (ids unique).
        producer: Who submits.
        per_event: Rules per event (1 gives the daemon the most parallelism).
        source: Where the rules came from.

    Returns:
        The correlation id and the events.
    """
    correlation = str(uuid.uuid4())
    events = [
        RulesSubmitted(
            correlation_id=correlation,
            producer=producer,
            payload=RulesSubmittedPayload(rules=list(rules[i : i + per_event]), source=source),
        )
        for i in range(0, len(rules), max(1, per_event))
    ]
    return correlation, events


@dataclass
class RuleResult:
    """The outcome of one rule: an accepted MR, a rejection, or an error."""

    rule_id: str
    event: Event

    @property
    def kind(self) -> str:
        """``accepted``, ``rejected`` or ``error`` (a rejection only because a model failed to answer is an error)."""
        if isinstance(self.event, MRAccepted):
            return "accepted"
        if isinstance(self.event, MRRejected) and not self.event.payload.model_failed():
            return "rejected"
        return "error"


class RulesResults:
    """The results of submitted rules, as a :class:`~runners.clients.collector.Collector` brings them in."""

    def __init__(self, rule_ids: set[str]) -> None:
        self.rule_ids = rule_ids
        self.results: dict[str, RuleResult] = {}

    @staticmethod
    def subjects(s: Subjects) -> list[str]:
        """Where rules' results come: accepted, rejected and the rule and MR errors."""
        return [s.mrs_accepted, s.mrs_rejected, s.errors(ErrorDomain.RULES), s.errors(ErrorDomain.MRS)]

    def on_event(self, event: Event) -> None:
        """Keep the first result of each rule."""
        if isinstance(event, MRAccepted | MRRejected):
            self._add(event.payload.rule.id, event)
        elif isinstance(event, ErrorReported):
            if event.payload.item_id is not None:
                self._add(event.payload.item_id, event)
            else:
                for rid in self.rule_ids - set(self.results):
                    self._add(rid, event)

    def _add(self, rule_id: str, event: Event) -> None:
        if rule_id in self.rule_ids and rule_id not in self.results:
            self.results[rule_id] = RuleResult(rule_id, event)

    def complete(self) -> bool:
        """Every rule has a result."""
        return len(self.results) == len(self.rule_ids)


@dataclass
class RunSummary:
    """Results of one batch of rules."""

    correlation_id: str
    rules: list[TrafficRule]
    results: dict[str, RuleResult]
    seconds: float
    provenance: Provenance | None

    def counts(self) -> dict[str, int]:
        """Rules per outcome (accepted, rejected, error, missing)."""
        out = {"accepted": 0, "rejected": 0, "error": 0, "missing": 0}
        for rule in self.rules:
            res = self.results.get(rule.id)
            out[res.kind if res else "missing"] += 1
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One output row per rule, in input order."""
        return [result_row(rule, self.results.get(rule.id)) for rule in self.rules]

    def parser_failures(self) -> dict[str, tuple[int, str]]:
        """Each parser that failed to answer (a model's error or unusable answer): on how many rules, and its first
        error; the rules' MRs then came from the other parsers."""
        out: dict[str, tuple[int, str]] = {}
        for res in self.results.values():
            if isinstance(res.event, MRAccepted | MRRejected):
                failed = {f.parser: f.error for f in reversed(res.event.payload.parser_failures) if f.failed}
                for parser, error in failed.items():  # (once per rule: two parsers may share a label)
                    n, first = out.get(parser, (0, error))
                    out[parser] = (n + 1, first)
        return out

    def failure_lines(self) -> list[str]:
        """One warning line per parser that failed to answer (see :meth:`parser_failures`)."""
        return [
            f"parser {parser} failed on {n} of {len(self.rules)} rule(s), e.g. {first[:300]}"
            for parser, (n, first) in sorted(self.parser_failures().items())
        ]


def result_row(rule: TrafficRule, result: RuleResult | None) -> dict[str, Any]:
    """The JSONL object of one rule: MR fields, Gherkin, score, or null fields and an error."""
    row: dict[str, Any] = {
        "id": rule.id,
        "text": rule.text,
        "region": rule.region,
        "road_type": None,
        "verb": None,
        "manipulation": None,
        "expected_behavior": None,
        "gherkin": None,
        "score": None,
    }
    if result is None:
        row["error"] = "no result before the timeout"
        return row
    event = result.event
    if isinstance(event, MRAccepted):
        mr = event.payload.mr
        winner = event.payload.winner
        row.update(winner.candidate.mr.model_dump())
        row.update(
            gherkin=winner.candidate.gherkin,
            score=round(winner.score, 4),
            mr_id=mr.mr_id,
            stored_gherkin=mr.gherkin,
            duplicate=mr.duplicate,
            parser=winner.candidate.parser,
            validator=mr.validator,
            provenance=event.payload.provenance.model_dump(mode="json"),
        )
    elif isinstance(event, MRRejected):
        row["error"] = ("error: " if event.payload.model_failed() else "rejected: ") + "; ".join(event.payload.reasons)
        row["candidates"] = [
            {"gherkin": c.candidate.gherkin, "score": c.score, "parser": c.candidate.parser}
            for c in event.payload.candidates
        ]
        row["provenance"] = event.payload.provenance.model_dump(mode="json")
    elif isinstance(event, ErrorReported):
        row["error"] = f"{event.payload.error_type}: {event.payload.reason}"
    if isinstance(event, MRAccepted | MRRejected) and (
        failed := [f for f in event.payload.parser_failures if f.failed]
    ):
        row["parser_failures"] = [{"parser": f.parser, "error": f.error} for f in failed]
    return row


async def submit_and_collect(
    bus: Bus,
    rules: Sequence[TrafficRule],
    *,
    timeout: float,
    on_progress: ProgressFn | None = None,
    source: str | None = None,
) -> RunSummary:
    """Submit rules to whatever daemon consumes this bus and wait for every result."""
    rules = unique_ids(rules)
    correlation, events = make_submissions(rules, source=source)
    results = RulesResults({r.id for r in rules})
    started = time.perf_counter()
    async with Collector(bus, correlation, RulesResults.subjects(bus.subjects), results.on_event) as collector:
        await bus.publish_many(events)
        await collector.wait(
            results.complete,
            timeout=timeout,
            on_tick=(lambda: on_progress(len(results.results), len(rules))) if on_progress else None,
        )
    seconds = time.perf_counter() - started
    provenance = next(
        (r.event.payload.provenance for r in results.results.values() if isinstance(r.event, MRAccepted | MRRejected)),
        None,
    )
    return RunSummary(correlation, list(rules), dict(results.results), seconds, provenance)
