"""The offline rule reasoner on the development rules it was written with, measured honestly.

The packaged development rules (``tools/data/reference_mrs.jsonl``: 38 German, 33 California) are parsed
in-sample and leave-one-out (each rule without the lexicon entries and retrieval records that come from it
alone). The thresholds sit a few rules under today's figures, so a change that loses general vocabulary or
breaks retrieval fails here; the in-sample figure alone would hide it.
"""

from __future__ import annotations

import pytest

from memory.embeddings import MiniLMEmbedder
from tools.rules.evaluation import OfflineReasoner, as_rules, leave_one_out, repeats_of
from tools.rules.lexicon import load_lexicon
from tools.rules.models import TrafficRule
from tools.rules.ontology import Ontology
from tools.rules.retrieval import ReferenceRetriever, load_reference_records
from tools.rules.scoring import score_rules

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def retriever(ontology: Ontology, embedder: MiniLMEmbedder) -> ReferenceRetriever:
    return ReferenceRetriever(ontology=ontology, embedder=embedder)


def test_leave_one_out_accuracy_per_region(
    ontology: Ontology, embedder: MiniLMEmbedder, retriever: ReferenceRetriever
) -> None:
    """Leave-one-out triple accuracy stays near today's (California 75.8 %, Germany 84.2 %), above the constant
    answer by far, and below in-sample (the lexicon's own rules help it: the gap is reported, not hidden)."""
    rules, refs = as_rules(load_reference_records())
    lexicon = load_lexicon()
    loo, removed = leave_one_out(rules, ontology=ontology, lexicon=lexicon, embedder=embedder, retriever=retriever)
    assert removed > 0
    shipped = OfflineReasoner(ontology, lexicon, embedder, retriever)
    for region, least_loo, least_in in (("california", 0.66, 0.72), ("germany", 0.78, 0.92)):
        idx = [i for i, r in enumerate(rules) if r.region == region]
        score = score_rules(ontology, [(rules[i].id, region, loo[i], refs[i]) for i in idx])
        inside = score_rules(ontology, [(rules[i].id, region, shipped.predict(rules[i]), refs[i]) for i in idx])
        assert score.fraction("triple") >= least_loo, (region, score.as_dict())
        assert inside.fraction("triple") >= least_in, (region, inside.as_dict())
        assert inside.fraction("triple") >= score.fraction("triple")


def test_retrieval_leaves_out_the_rule_and_its_repeats(
    ontology: Ontology, embedder: MiniLMEmbedder, retriever: ReferenceRetriever
) -> None:
    """A development rule finds itself in-sample; left out, it does not vote, and neither does its repeat."""
    assert repeats_of("ca-35") == {"ca-35", "ca-06"} and repeats_of("de-01") == {"de-01"}
    for record in load_reference_records()[::10]:
        rule = TrafficRule(id=record.id, text=record.text, region=record.region)
        assert retriever.neighbours(rule)[0].record.id == record.id
        left_out = retriever.neighbours(rule, exclude=repeats_of(rule.id))
        assert record.id not in {n.record.id for n in left_out}
        inside = retriever.support(rule, record.mrs[0])
        outside = retriever.support(rule, record.mrs[0], exclude=repeats_of(rule.id))
        assert inside is not None and (outside is None or outside <= inside + 1e-9)


def test_retrieval_votes_with_the_rules_own_region(retriever: ReferenceRetriever) -> None:
    """A California rule's neighbours are California rules: German references word an oncoming rail vehicle as "an
    oncoming vehicle" (de-07), and they do not vote on a California light-rail rule, however near its text."""
    rule = TrafficRule(
        id="q",
        text="Anyone turning must let oncoming vehicles pass, including rail vehicles running alongside the road.",
        region="california",
    )
    found = retriever.neighbours(rule)
    assert found and {n.record.region for n in found} == {"california"}
    german = retriever.neighbours(TrafficRule(id="q", text=rule.text, region="germany"))
    assert german and {n.record.region for n in german} == {"germany"}


def test_low_confidence_rejects_with_a_reason(
    ontology: Ontology, embedder: MiniLMEmbedder, retriever: ReferenceRetriever
) -> None:
    """Each verdict carries its confidence and the parts it comes from; under the threshold it is rejected and
    says why (stricter rejection leaves fewer MRs)."""
    rule = TrafficRule(id="t-1", text="Slow down when children are near a school.", region="germany")
    lax = OfflineReasoner(ontology, load_lexicon(), embedder, retriever, min_confidence=0.0)
    verdicts = lax.validator.validate_sync(rule, lax.parser.parse(rule))
    assert verdicts and all(
        v.confidence is not None and set(v.confidence_parts) == {"lexicon", "checks", "retrieval"} for v in verdicts
    )
    assert any(v.accepted for v in verdicts)
    strict = OfflineReasoner(ontology, load_lexicon(), embedder, retriever, min_confidence=0.99)
    rejected = strict.validator.validate_sync(rule, strict.parser.parse(rule))
    assert not any(v.accepted for v in rejected)
    assert any("confidence" in reason and "below 0.99" in reason for v in rejected for reason in v.reasons)


def test_packaged_vectors_are_the_embedders_own_and_another_model_computes_its_own(
    embedder: MiniLMEmbedder,
) -> None:
    """The packaged vectors are MiniLM's vectors of today's records (if the records change without
    ``scripts/reference_vectors.py``, the digest no longer matches and this fails); another model's name, or other
    texts, get none."""
    import numpy as np

    from tools.rules.retrieval import packaged_vectors

    texts = [r.text for r in load_reference_records()]
    packaged = packaged_vectors(embedder.name, texts)
    assert packaged is not None, "run scripts/reference_vectors.py"
    assert np.allclose(packaged, embedder.encode(texts), atol=1e-4)
    assert packaged_vectors("another-model", texts) is None
    assert packaged_vectors(embedder.name, texts[:-1]) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Do not go around a car stopped for a pedestrian in a crosswalk.", "a stopped vehicle"),
        ("Never drive past a car that is stopped for pedestrians at the crosswalk.", "a stopped vehicle"),
        # guard: whom the ego itself stops for stays the subject
        ("Stop for a pedestrian at a crosswalk and wait until the person has crossed.", "a pedestrian"),
    ],
)
def test_with_retrieval_whom_a_stopped_vehicle_stopped_for_stays_behind_it(
    ontology: Ontology, embedder: MiniLMEmbedder, retriever: ReferenceRetriever, text: str, expected: str
) -> None:
    """The development rules near a crosswalk rule are mostly about pedestrians, so retrieval favours the pedestrian;
    the pedestrian a stopped car stopped for is only why it stopped, and the stopped vehicle stays the MR."""
    mr = OfflineReasoner(ontology, load_lexicon(), embedder, retriever).predict(
        TrafficRule(id="own-1", text=text, region="california")
    )
    assert mr is not None and mr.manipulation == expected, mr
