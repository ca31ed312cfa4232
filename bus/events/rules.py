"""Events of the rules domain: rules submitted, MR candidates, accepted and rejected MRs."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

from bus.envelope import Event, registry
from tools.common.models import Provenance
from tools.rules.models import CheckResult, MRCandidate, StoredMR, TrafficRule

__all__ = [
    "MRAccepted",
    "MRAcceptedPayload",
    "MRCandidatesPayload",
    "MRCandidatesProduced",
    "MRRejected",
    "MRRejectedPayload",
    "ParserFailure",
    "RulesSubmitted",
    "RulesSubmittedPayload",
    "ScoredCandidate",
]


class RulesSubmittedPayload(BaseModel):
    """One rule or a batch."""

    rules: list[TrafficRule] = Field(min_length=1, max_length=10_000)
    source: str | None = Field(default=None, description="Where the rules came from (file name, UI).")


class ParserFailure(BaseModel):
    """A parser that produced nothing for a rule, and why."""

    parser: str
    error: str
    failed: bool = Field(
        default=True,
        description="The parser could not answer (a model's error or unusable answer); false when it read the rule "
        "and found nothing to propose. Unset (an event of an older version): false for an offline parser.",
    )

    @model_validator(mode="before")
    @classmethod
    def _older_events(cls, data: Any) -> Any:
        if isinstance(data, dict) and "failed" not in data and str(data.get("parser", "")).startswith("offline:"):
            return {**data, "failed": False}  # an offline parser finds nothing; it does not fail
        return data


class MRCandidatesPayload(BaseModel):
    """All parsers' candidates for one rule."""

    rule: TrafficRule
    candidates: list[MRCandidate]
    failures: list[ParserFailure] = Field(default_factory=list)
    provenance: Provenance


class ScoredCandidate(BaseModel):
    """A candidate with the validator's verdict."""

    candidate: MRCandidate
    score: float
    accepted: bool
    reasons: list[str] = Field(default_factory=list)
    confidence: float | None = Field(
        default=None, description="Agreement of lexicon, retrieval and checks (offline validator); None otherwise."
    )


class MRAcceptedPayload(BaseModel):
    """The validated MR of one rule."""

    rule: TrafficRule
    winner: ScoredCandidate = Field(description="This rule's best candidate, in its own wording, with its score.")
    mr: StoredMR = Field(description="The MR as stored (first wording seen; sources include this rule).")
    checks: list[CheckResult]
    candidates: list[ScoredCandidate]
    provenance: Provenance
    parser_failures: list[ParserFailure] = Field(
        default_factory=list, description="Parsers that proposed nothing for this rule (a model that failed), and why."
    )


class MRRejectedPayload(BaseModel):
    """A rule without an acceptable MR."""

    rule: TrafficRule
    reasons: list[str]
    candidates: list[ScoredCandidate]
    provenance: Provenance
    parser_failures: list[ParserFailure] = Field(
        default_factory=list, description="Parsers that proposed nothing for this rule (a model that failed), and why."
    )

    def model_failed(self) -> bool:
        """Whether no candidate was judged because a parser failed to answer (an error, not the rule's verdict)."""
        return not self.candidates and any(f.failed for f in self.parser_failures)


@registry.register
class RulesSubmitted(Event):
    """Traffic rules to turn into MRs."""

    type: Literal["rules.submitted"] = "rules.submitted"
    payload: RulesSubmittedPayload
    subject_name: ClassVar[str] = "rules_submitted"

    def describe(self) -> str:
        rules = self.payload.rules
        first = rules[0].text.strip().replace("\n", " ")[:60]
        more = f" (+{len(rules) - 1} more)" if len(rules) > 1 else ""
        return f"{len(rules)} rule(s) submitted: {rules[0].id} {first!r}{more}"


@registry.register
class MRCandidatesProduced(Event):
    """MR candidates for one rule, from every configured parser."""

    type: Literal["mrs.candidates"] = "mrs.candidates"
    payload: MRCandidatesPayload
    subject_name: ClassVar[str] = "mrs_candidates"

    def describe(self) -> str:
        n = len(self.payload.candidates)
        parsers = sorted({c.parser for c in self.payload.candidates})
        return f"{n} MR candidate(s) for rule {self.payload.rule.id} from {', '.join(parsers) or 'no parser'}"


@registry.register
class MRAccepted(Event):
    """A rule's best MR passed validation and is stored in memory."""

    type: Literal["mrs.accepted"] = "mrs.accepted"
    payload: MRAcceptedPayload
    subject_name: ClassVar[str] = "mrs_accepted"

    def describe(self) -> str:
        dup = " (already known)" if self.payload.mr.duplicate else ""
        win = self.payload.winner
        return f"rule {self.payload.rule.id}: {win.candidate.gherkin} [score {win.score:.2f}]{dup}"


@registry.register
class MRRejected(Event):
    """No candidate of a rule passed validation."""

    type: Literal["mrs.rejected"] = "mrs.rejected"
    payload: MRRejectedPayload
    subject_name: ClassVar[str] = "mrs_rejected"

    def describe(self) -> str:
        reason = self.payload.reasons[0] if self.payload.reasons else "no candidate"
        return f"rule {self.payload.rule.id} rejected: {reason}"[:500]
