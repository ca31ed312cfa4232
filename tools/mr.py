"""Metamorphic relations (MRs): the model, their Gherkin form and its parser.

An MR reads::

    Given the ego-vehicle approaches to <road type>,
    When drivemt <adds|replaces> <manipulation>,
    Then ego-vehicle should <expected behaviour>

The parser also reads AutoMT's own "When AUTOMT ..." wording, so reference MRs and MRs edited by
hand in a ``.feature`` file come back in.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.common.text import normalise_phrase
from tools.errors import BadInputError
from tools.ontology import Verb, Vocabulary

__all__ = [
    "MRCandidate",
    "MRFields",
    "MRParseError",
    "StoredMR",
    "canonical_key",
    "format_gherkin",
    "parse_gherkin",
]

_GHERKIN = re.compile(
    r"^\s*(?:Scenario:[^\n]*\n\s*)?Given\s+the\s+ego[- ]vehicle\s+approaches\s+(?:to\s+)?(?P<road>.+?)\s*,?\s*\n?"
    r"\s*When\s+(?:drivemt|automt)\s+(?P<verb>adds|replaces|add|replace)\s+(?P<manip>.+?)\s*,?\s*\n?"
    r"\s*Then\s+(?:the\s+)?ego[- ]vehicle\s+should\s+(?P<beh>.+?)\s*\.?\s*$",
    re.IGNORECASE | re.DOTALL,
)


class MRParseError(BadInputError):
    """Text that is not an MR in Gherkin form."""

    def __init__(self, text: str) -> None:
        self.text = text
        excerpt = text if len(text) <= 120 else text[:117] + "..."
        super().__init__(
            "not an MR in Gherkin form (expected 'Given the ego-vehicle approaches to <road type>, "
            f"When drivemt <adds|replaces> <manipulation>, Then ego-vehicle should <behaviour>'): {excerpt!r}"
        )


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


def parse_gherkin(text: str) -> MRFields:
    """Read an MR from its Gherkin form (one line, or Given/When/Then on separate lines).

    Args:
        text: The MR text; "When drivemt" and "When AUTOMT" are both accepted, as is a leading
            ``Scenario:`` line.

    Raises:
        MRParseError: If the text does not have the Given/When/Then shape.
    """
    match = _GHERKIN.match(text.strip())
    if not match:
        raise MRParseError(text)
    verb = match.group("verb").lower()
    verb = "adds" if verb.startswith("add") else "replaces"
    return MRFields(
        road_type=match.group("road"),
        verb=verb,  # type: ignore[arg-type]
        manipulation=match.group("manip"),
        expected_behavior=match.group("beh"),
    )


def canonical_key(mr: MRFields, vocabulary: Vocabulary) -> str:
    """Identity of an MR: road type, verb, manipulation and behaviour as canonical ontology terms.

    Two MRs are the same MR when these four agree; embedding similarity is not identity (fog, rain
    and snow MRs are 0.85-0.91 similar yet different relations).
    """
    return "|".join(
        (
            vocabulary.canonical("road_type", mr.road_type),
            mr.verb,
            vocabulary.canonical("manipulation", mr.manipulation),
            normalise_phrase(mr.expected_behavior),
        )
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
