"""Metamorphic relations (MRs): their Gherkin parser, their identity, and how a new one is built for memory.

An MR reads::

    Given the ego-vehicle approaches to <road type>,
    When drivemt <adds|replaces> <manipulation>,
    Then ego-vehicle should <expected behaviour>

The parser also reads AutoMT's own "When AUTOMT ..." wording, so reference MRs and MRs edited by
hand in a ``.feature`` file come back in.
"""

from __future__ import annotations

import re

from tools.common.text import normalise_phrase
from tools.errors import BadInputError
from tools.rules.models import MRFields, NewMR
from tools.rules.ontology import Vocabulary

__all__ = ["MRParseError", "canonical_key", "new_mr", "parse_gherkin"]

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


def new_mr(
    fields: MRFields,
    vocabulary: Vocabulary,
    *,
    region: str,
    score: float,
    rule_id: str,
    validator: str = "",
    parser: str = "",
) -> NewMR:
    """An MR ready to store: its fields with their canonical key and terms (the one place a :class:`NewMR` is built).

    Args:
        fields: The MR's four fields.
        vocabulary: The region's vocabulary, which gives the canonical terms.
        region: The ontology region of the rule that produced it.
        score: Its validation score.
        rule_id: The rule that produced it (``import`` for imported MRs).
        validator: Who accepted it.
        parser: Who proposed it.
    """
    return NewMR(
        fields=fields,
        canonical_key=canonical_key(fields, vocabulary),
        manipulation_term=vocabulary.canonical("manipulation", fields.manipulation),
        road_type_term=vocabulary.canonical("road_type", fields.road_type),
        region=region,
        score=score,
        rule_id=rule_id,
        validator=validator,
        parser=parser,
    )
