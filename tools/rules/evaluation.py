"""Leave-one-out evaluation of the offline rule reasoner (``bench/rules_accuracy.py`` and its test).

The packaged lexicon was written with the development rules in view, so its score on them is in-sample. For
each rule, :func:`leave_one_out` parses it with a lexicon from which every entry written from that rule alone
(its provenance) is removed, and with retrieval that may not see the rule or its repeats; the strict variant
also removes every phrase occurring in no other development rule. That is the figure to expect on unseen rules
of the kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from tools.common.similarity import Embedder
from tools.common.text import contains_tokens, tokens
from tools.rules.lexicon import Lexicon
from tools.rules.models import MRFields, TrafficRule
from tools.rules.offline_parser import OntologyGroundedParser
from tools.rules.ontology import Ontology
from tools.rules.retrieval import ReferenceRecord, ReferenceRetriever
from tools.rules.validation import OfflineValidator, choose_best

__all__ = ["REPEATS", "OfflineReasoner", "all_phrases", "filter_phrases", "leave_one_out", "repeats_of"]

# The development rules the lexicon was first written from (before it recorded provenance per entry).
LEXICON_ORIGIN_REGIONS = frozenset({"germany"})
# Rules of AutoMT's California set that repeat each other in the source (shared/data README).
REPEATS = {"ca-06": "ca-35", "ca-10": "ca-45", "ca-13": "ca-46", "ca-16": "ca-50"}


def repeats_of(rule_id: str) -> set[str]:
    """The rule and the rules that repeat it in the source (kept on one side of every split)."""
    out = {rule_id}
    for a, b in REPEATS.items():
        if rule_id in (a, b):
            out |= {a, b}
    return out


class OfflineReasoner:
    """The offline parser and validator over one lexicon, with retrieval when a retriever is given."""

    def __init__(
        self,
        ontology: Ontology,
        lexicon: Lexicon,
        embedder: Embedder | None,
        retriever: ReferenceRetriever | None = None,
        *,
        leave_out: bool = False,
        min_confidence: float = 0.0,
    ) -> None:
        self.parser = OntologyGroundedParser(ontology=ontology, lexicon=lexicon, embedder=embedder)
        self.validator = OfflineValidator(
            ontology=ontology, parser=self.parser, retriever=retriever, min_confidence=min_confidence,
            exclude=(lambda rule: repeats_of(rule.id)) if leave_out else None,
        )  # fmt: skip

    def predict(self, rule: TrafficRule) -> MRFields | None:
        """The MR the Validator would accept for the rule (None: every candidate rejected)."""
        verdict = choose_best(self.validator.validate_sync(rule, self.parser.parse(rule)))
        return verdict.candidate.mr if verdict else None


def _phrase_fields(lexicon: Lexicon, *kinds: str) -> list[tuple[str, Any]]:
    """(name, value) of the lexicon's fields declared as one of ``kinds`` (``Lexicon``'s field metadata)."""
    return [(f.name, getattr(lexicon, f.name)) for f in dataclasses.fields(lexicon)
            if f.metadata.get("leave_one_out") in kinds]  # fmt: skip


def filter_phrases(lexicon: Lexicon, keep: Callable[[str], bool]) -> Lexicon:
    """A copy of the lexicon without the phrases ``keep`` rejects (targets themselves stay).

    Which fields hold phrases, and in what shape, is declared once on :class:`Lexicon`.
    """
    changes: dict[str, Any] = {}
    for name, value in _phrase_fields(lexicon, "phrases"):
        changes[name] = [p for p in value if keep(p)]
    for name, value in _phrase_fields(lexicon, "phrase_lists"):
        changes[name] = {k: [p for p in v if keep(p)] for k, v in value.items()}
    for name, value in _phrase_fields(lexicon, "cues"):
        changes[name] = {k: [(p, w) for p, w in v if keep(p)] for k, v in value.items()}
    for name, value in _phrase_fields(lexicon, "keyed"):
        changes[name] = {k: v for k, v in value.items() if keep(f"{name}:{k}")}
    return dataclasses.replace(lexicon, **changes)


def all_phrases(lexicon: Lexicon) -> set[str]:
    """Every phrase of the lexicon that leave-one-out may drop (``keyed`` entries go by provenance alone)."""
    out: set[str] = set()
    for _, value in _phrase_fields(lexicon, "phrases"):
        out.update(value)
    for _, value in _phrase_fields(lexicon, "phrase_lists"):
        for v in value.values():
            out.update(v)
    for _, value in _phrase_fields(lexicon, "cues"):
        for v in value.values():
            out.update(p for p, _ in v)
    return out


def leave_one_out(
    rules: Sequence[TrafficRule],
    *,
    ontology: Ontology,
    lexicon: Lexicon,
    embedder: Embedder | None,
    retriever: ReferenceRetriever | None,
    min_confidence: float = 0.0,
    strict: bool = False,
) -> tuple[list[MRFields | None], int]:
    """Each rule's MR without the lexicon entries and retrieval records that come from it alone.

    An entry's provenance is the one recorded in the lexicon, else (it predates the provenance records) the
    development rules of :data:`LEXICON_ORIGIN_REGIONS` whose text contains it: the lexicon was first written
    from the German rules, and the California development rules were given to the project after it. An entry
    whose provenance is the rule under test (or its repeats) is dropped for that rule. ``strict`` drops, in
    addition, every phrase that occurs in no other development rule of any region, whatever its provenance.

    Returns the predictions and how many phrase occurrences were dropped in all.
    """
    texts = [tokens(r.text) for r in rules]
    phrases = {p: tokens(p) for p in all_phrases(lexicon)}
    occurs = {p: {i for i, t in enumerate(texts) if w and contains_tokens(t, w) >= 0} for p, w in phrases.items()}
    origin = {i for i, r in enumerate(rules) if r.region in LEXICON_ORIGIN_REGIONS}
    provenance: dict[str, set[str]] = {p: {rules[i].id for i in where & origin} for p, where in occurs.items()}
    provenance.update({p: set(ids) for p, ids in lexicon.provenance.items()})
    out: list[MRFields | None] = []
    removed = 0
    for rule in rules:
        own_ids = repeats_of(rule.id)
        drop = {p for p, ids in provenance.items() if ids and ids <= own_ids}
        if strict:
            own = {j for j, r in enumerate(rules) if r.id in own_ids}
            drop |= {p for p, where in occurs.items() if where and where <= own}
        removed += len(drop)
        reduced = filter_phrases(lexicon, lambda p, drop=drop: p not in drop)  # type: ignore[misc]
        reasoner = OfflineReasoner(
            ontology, reduced, embedder, retriever, leave_out=True, min_confidence=min_confidence
        )
        out.append(reasoner.predict(rule))
    return out, removed


def as_rules(records: Sequence[ReferenceRecord]) -> tuple[list[TrafficRule], list[list[MRFields]]]:
    """Rules and their reference MRs from retrieval records (the packaged development rules)."""
    return [TrafficRule(id=r.id, text=r.text, region=r.region) for r in records], [list(r.mrs) for r in records]
