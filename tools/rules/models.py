"""The rules domain's data: traffic rules, MRs (fields, candidates, stored and new), validation checks.

Pure pydantic models and the few helpers their properties need; events carry them, so this module imports
nothing of drivemt but :mod:`tools.errors` (``import bus`` stays light).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.errors import EmptyRuleError, RuleTooLongError

__all__ = [
    "MAX_RULE_BYTES",
    "CheckResult",
    "MRCandidate",
    "MRFields",
    "NewMR",
    "Question",
    "StoredMR",
    "TrafficRule",
    "Verb",
    "Verdict",
    "check_rule",
    "format_gherkin",
]

MAX_RULE_BYTES = 10 * 1024
"""Largest rule accepted, in UTF-8 bytes: one rule, not a whole rules document."""


class TrafficRule(BaseModel):
    """One traffic rule to turn into an MR."""

    id: str = Field(min_length=1, max_length=200, description="Caller's rule id, e.g. 'de-01'.")
    text: str = Field(description="The rule in English, free text.")
    region: str = Field(default="germany", description="Ontology region whose terms the MR may use.")


def check_rule(rule: TrafficRule, *, max_bytes: int = MAX_RULE_BYTES) -> TrafficRule:
    """Reject rules that can never yield an MR: empty, or larger than one rule can be.

    Raises:
        EmptyRuleError: If the text is blank.
        RuleTooLongError: If the text is over ``max_bytes`` UTF-8 bytes.
    """
    if not rule.text.strip():
        raise EmptyRuleError(rule.id)
    size = len(rule.text.encode("utf-8"))
    if size > max_bytes:
        raise RuleTooLongError(size, max_bytes, rule.id)
    return rule


Verb = Literal["adds", "replaces"]
"""How an MR changes the scene: it adds an object, or replaces a condition that is always present."""

Question = Literal["elements_in_rule", "rule_supported", "parts_consistent"]


class MRFields(BaseModel):
    """The four fields of an MR, as free phrases (the manipulation may carry context words)."""

    model_config = ConfigDict(frozen=True)

    road_type: str = Field(min_length=1, description="Where the ego-vehicle is, e.g. 'intersection'.")
    verb: Verb = Field(description="'adds' for optional objects, 'replaces' for conditions always present.")
    manipulation: str = Field(min_length=1, description="What the follow-up case adds or replaces.")
    expected_behavior: str = Field(min_length=1, description="What the ego-vehicle should do then.")

    @field_validator("road_type", "manipulation", "expected_behavior")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = " ".join(value.split()).strip(" ,.;")
        if not value:
            raise ValueError("must not be empty")
        return value

    @property
    def gherkin(self) -> str:
        """The MR in drivemt's Gherkin wording."""
        return format_gherkin(self)


def format_gherkin(mr: MRFields, *, actor: Literal["drivemt", "AUTOMT"] = "drivemt") -> str:
    """Write an MR as one Gherkin sentence.

    Args:
        mr: The MR fields.
        actor: Who manipulates the scene; ``AUTOMT`` reproduces AutoMT's own wording.
    """
    return (
        f"Given the ego-vehicle approaches to {mr.road_type}, "
        f"When {actor} {mr.verb} {mr.manipulation}, "
        f"Then ego-vehicle should {mr.expected_behavior}"
    )


class MRCandidate(BaseModel):
    """One parser's proposal of an MR for a rule.

    Attributes:
        mr: The proposed MR.
        parser: Which parser proposed it (``offline:ontology-grounded``, ``openai:gpt-4o`` ...).
        confidence: The parser's own ranking score in [0, 1]; the validator decides, this only breaks ties.
        evidence: Per field, the words of the rule that support the value (what a reviewer checks).
    """

    mr: MRFields
    parser: str
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    evidence: dict[str, str] = Field(default_factory=dict)

    @property
    def gherkin(self) -> str:
        """The candidate MR in Gherkin form."""
        return format_gherkin(self.mr)


class StoredMR(BaseModel):
    """An accepted MR as memory holds it.

    Attributes:
        mr_id: Point id, derived from the canonical key.
        gherkin: The MR text (first wording seen).
        fields: Its four fields.
        canonical_key: Road type, verb, manipulation and behaviour as canonical terms.
        region: Ontology region of the rule that first produced it.
        score: Best validation score seen (``1 - hallucination``).
        source_rule_ids: Every rule that produced this MR.
        execution_count: How often a follow-up test case was built from it.
        created_at: When it was first stored.
        duplicate: In a result: the MR was already stored and this rule was added to its sources.
        validator: Validator that accepted it first.
        parser: Parser that proposed it first.
    """

    mr_id: str
    gherkin: str
    fields: MRFields
    canonical_key: str
    region: str
    score: float
    source_rule_ids: list[str]
    execution_count: int = 0
    created_at: datetime
    duplicate: bool = False
    validator: str = ""
    parser: str = ""


class NewMR(BaseModel):
    """An accepted MR to store."""

    fields: MRFields
    canonical_key: str
    manipulation_term: str = Field(description="Canonical manipulation term, for filtering.")
    road_type_term: str = Field(description="Canonical road type, for filtering.")
    region: str
    score: float
    rule_id: str
    validator: str = ""
    parser: str = ""


class CheckResult(BaseModel):
    """One check behind one of the three questions."""

    question: Question
    check: str
    passed: bool
    detail: str
    hard: bool = Field(default=False, description="A failed hard check rejects the candidate whatever its score.")


class Verdict(BaseModel):
    """The validator's judgement of one candidate."""

    candidate: MRCandidate
    hallucination: float = Field(ge=0.0, le=1.0)
    checks: list[CheckResult] = Field(default_factory=list)
    validator: str
    accepted: bool
    confidence: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Agreement of the lexicon (the parser's confidence), retrieval (the reference MRs of the most "
        "similar development rules) and the validator's checks (1 - hallucination): their mean.",
    )
    confidence_parts: dict[str, float] = Field(default_factory=dict)

    @property
    def score(self) -> float:
        """``1 - hallucination``: higher is better."""
        return round(1.0 - self.hallucination, 4)

    @property
    def reasons(self) -> list[str]:
        """Why checks failed, for a rejection."""
        return [f"{c.check}: {c.detail}" for c in self.checks if not c.passed]
