"""Registered tools of the rules -> MRs pipeline (used directly offline, and by LLM agents).

Every tool takes a :class:`RuleToolContext` first; its other parameters are plain JSON values so a
model can call it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tools.common.registry import tool
from tools.rules.models import TrafficRule
from tools.rules.offline_parser import OntologyGroundedParser
from tools.rules.ontology import Ontology
from tools.rules.validation import OfflineValidator

__all__ = ["RULE_TOOLS", "RuleToolContext", "find_rule_terms", "ground_phrase", "ontology_terms"]

FieldName = Literal["road_type", "manipulation", "expected_behavior"]


@dataclass
class RuleToolContext:
    """What the rule tools may use."""

    ontology: Ontology
    parser: OntologyGroundedParser
    validator: OfflineValidator


@tool
def ontology_terms(ctx: RuleToolContext, field: FieldName, region: str) -> list[str]:
    """List the ontology terms allowed for one MR field (road_type, manipulation or expected_behavior) in a region.

    Args:
        ctx: Tool context.
        field: The MR field.
        region: Ontology region, e.g. germany or california.
    """
    vocab = ctx.ontology.vocabulary(region)
    return [t.text for t in vocab.terms_for(field)]


@tool
def ground_phrase(ctx: RuleToolContext, phrase: str, field: FieldName, region: str) -> list[str]:
    """Map a free phrase onto the closest ontology terms of one MR field, best first.

    Uses the longest ontology term contained in the phrase, then the traffic lexicon, then MiniLM
    nearest-label similarity when an embedder is configured.

    Args:
        ctx: Tool context.
        phrase: Words from a rule, e.g. "a tram at the stop".
        field: The MR field the phrase should fill.
        region: Ontology region.
    """
    vocab = ctx.ontology.vocabulary(region)
    canon = vocab.canonical(field, phrase)
    out: list[str] = []
    term = vocab.lookup(field, canon)
    if term is not None:
        out.append(term.text)
    analysis = ctx.parser.analyse(TrafficRule(id="phrase", text=phrase, region=region))
    mentions = (
        analysis.manipulations if field == "manipulation" else analysis.road_types if field == "road_type" else []
    )
    for m in sorted(mentions, key=lambda m: -m.score):
        if m.term.text not in out:
            out.append(m.term.text)
    if field == "manipulation" and ctx.parser.embedder is not None:
        for label, sim in ctx.parser._label_index(region.lower()).nearest([phrase], k=3)[0]:
            if sim >= ctx.parser.semantic_threshold and label not in out:
                out.append(label)
    return out[:5]


@tool
def find_rule_terms(ctx: RuleToolContext, rule_text: str, region: str) -> dict[str, Any]:
    """Find the ontology terms, places and behaviour cues a traffic rule mentions, with the words that name them.

    Args:
        ctx: Tool context.
        rule_text: The traffic rule.
        region: Ontology region.
    """
    analysis = ctx.parser.analyse(TrafficRule(id="rule", text=rule_text, region=region))
    return {
        "manipulations": [
            {"term": m.term.text, "verb": m.term.verb, "words": m.surface}
            for m in sorted(analysis.manipulations, key=lambda m: -m.score)
        ],
        "road_types": [{"term": m.term.text, "words": m.surface} for m in analysis.road_types],
        "behaviour_cues": analysis.behavior_evidence,
    }


RULE_TOOLS = ("ontology_terms", "ground_phrase", "find_rule_terms")
"""The tools the M-Agent's LLM parser hands its model (registered in :data:`tools.common.registry.registry`)."""
