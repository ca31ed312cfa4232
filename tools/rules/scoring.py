"""Scoring extracted MRs against reference MRs (``drivemt eval rules``).

The canonical form of a road type or manipulation is the longest ontology term (core plus the rule's
region, case-insensitive, plurals folded) contained in the phrase, else the normalised phrase: a fixed
rule (:meth:`tools.rules.ontology.Vocabulary.canonical`), not the extractor's similarity model, so the scorer
never grades itself. A field is right when it equals that field of some reference MR; the triple is
right when one reference MR matches road type, manipulation and behaviour together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from tools.rules.models import MRFields
from tools.rules.ontology import Ontology

__all__ = ["FIELDS", "RuleScore", "ScoreReport", "baseline_prediction", "score_rule", "score_rules"]

FIELDS = ("road_type", "manipulation", "expected_behavior")


class RuleScore(BaseModel):
    """Per-rule verdict."""

    id: str
    road_type: bool
    manipulation: bool
    expected_behavior: bool
    triple: bool
    predicted: dict[str, str | None]
    reference: list[dict[str, str]]


@dataclass
class ScoreReport:
    """Accuracy over a rule set."""

    rules: list[RuleScore] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Number of scored rules."""
        return len(self.rules)

    def fraction(self, name: str) -> float:
        """Share of rules right on one field (or ``triple``)."""
        if not self.rules:
            return 0.0
        return sum(bool(getattr(r, name)) for r in self.rules) / len(self.rules)

    def as_dict(self) -> dict[str, float | int]:
        """``{"n", "road_type", "manipulation", "expected_behavior", "triple"}``, fractions rounded to 4 places."""
        return {"n": self.n, **{k: round(self.fraction(k), 4) for k in (*FIELDS, "triple")}}


def score_rule(
    ontology: Ontology,
    *,
    rule_id: str,
    region: str,
    predicted: MRFields | None,
    references: Sequence[MRFields],
) -> RuleScore:
    """Score one rule's predicted MR against its reference MRs (a missing prediction is wrong everywhere)."""
    vocab = ontology.vocabulary(region)
    refs = [
        {f: vocab.canonical(f, getattr(r, f)) for f in FIELDS}  # type: ignore[arg-type]
        for r in references
    ]
    if predicted is None:
        pred: dict[str, str | None] = dict.fromkeys(FIELDS)
        return RuleScore(
            id=rule_id,
            road_type=False,
            manipulation=False,
            expected_behavior=False,
            triple=False,
            predicted=pred,
            reference=refs,
        )
    pred = {f: vocab.canonical(f, getattr(predicted, f)) for f in FIELDS}  # type: ignore[arg-type]
    hits = {f: any(ref[f] == pred[f] for ref in refs) for f in FIELDS}
    triple = any(all(ref[f] == pred[f] for f in FIELDS) for ref in refs)
    return RuleScore(id=rule_id, triple=triple, predicted=pred, reference=refs, **hits)


def score_rules(
    ontology: Ontology,
    items: Iterable[tuple[str, str, MRFields | None, Sequence[MRFields]]],
) -> ScoreReport:
    """Score ``(rule id, region, predicted, references)`` items."""
    report = ScoreReport()
    for rule_id, region, predicted, refs in items:
        report.rules.append(score_rule(ontology, rule_id=rule_id, region=region, predicted=predicted, references=refs))
    return report


def baseline_prediction() -> MRFields:
    """The constant answer every extractor should beat: any roads, adds pedestrian, slow down."""
    return MRFields(road_type="any roads", verb="adds", manipulation="a pedestrian", expected_behavior="slow down")
