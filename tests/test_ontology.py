"""Ontology, text folding, MR Gherkin form, canonical keys and the scorer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.common.text import fold_word, normalise_phrase, tokens
from tools.errors import OntologyError, UnknownRegionError
from tools.rules.feature import read_feature, write_feature
from tools.rules.models import MRFields, StoredMR, format_gherkin
from tools.rules.mr import MRParseError, canonical_key, parse_gherkin
from tools.rules.ontology import Ontology, load_ontology
from tools.rules.scoring import baseline_prediction, score_rules


def test_plurals_fold_but_lookalikes_stay() -> None:
    """Plural folding turns buses into bus and crossings into crossing, but keeps bus, cross and its."""
    assert [fold_word(w) for w in ("buses", "crossings", "children", "people", "cities")] == [
        "bus",
        "crossing",
        "child",
        "person",
        "city",
    ]
    assert [fold_word(w) for w in ("bus", "cross", "its", "pass")] == ["bus", "cross", "its", "pass"]
    assert tokens("St. Andrew's Cross") == ("st", "andrew", "cross")
    assert normalise_phrase("The Railroad Crossings") == "railroad crossing"


def test_vocabulary_merges_core_and_region(ontology: Ontology) -> None:
    """A region's vocabulary is the core terms plus its own, core first, without duplicates."""
    de = ontology.vocabulary("germany")
    texts = [t.text for t in de.manipulations]
    assert texts.index("fog environment") < texts.index("Fog")
    assert de.lookup("road_type", "Railroad Crossings") is not None
    assert ontology.vocabulary("core").lookup("manipulation", "Fog") is None
    assert {t.text for t in de.behaviors} == {"slow down", "turn left", "turn right", "keep current"}


def test_unknown_region_is_a_clear_error(ontology: Ontology) -> None:
    """An unknown region names the known ones."""
    with pytest.raises(UnknownRegionError, match="known regions: california, germany, core"):
        ontology.vocabulary("mars")


def test_canonical_form_is_longest_contained_term(ontology: Ontology) -> None:
    """The canonical form is the longest ontology term inside the phrase, else the normalised phrase."""
    de = ontology.vocabulary("germany")
    assert de.canonical("manipulation", "the weather into fog environment") == "fog environment"
    assert de.canonical("manipulation", "a St. Andrew's cross sign at the crossing") == "st andrew cross sign"
    assert de.canonical("manipulation", "a vehicle ahead") == "vehicle ahead"
    assert de.canonical("road_type", "any roads") == "any road"
    # Whole words only: "ice" is a term (ice road is not contained), and police must not match it.
    assert de.canonical("manipulation", "a police officer") != "ice road"


def test_user_ontology_extends_sections(tmp_path: Path) -> None:
    """A user file adds terms to the sections it names and changes the ontology hash."""
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        "core:\n  manipulations:\n    adds:\n      object: [e-scooter rider]\ngermany:\n  road_types: [Autobahn]\n"
    )
    base = load_ontology()
    onto = load_ontology([extra])
    assert onto.hash != base.hash
    assert onto.vocabulary("california").lookup("manipulation", "e-scooter rider") is not None
    assert onto.vocabulary("germany").lookup("road_type", "autobahn") is not None
    assert onto.vocabulary("california").lookup("road_type", "autobahn") is None


def test_malformed_user_ontology_names_the_problem(tmp_path: Path) -> None:
    """A malformed ontology file is refused with the file and the key in the message."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("germany:\n  road_types: not-a-list\n")
    with pytest.raises(OntologyError, match=r"bad.yaml.*road_types"):
        load_ontology([bad])


def test_gherkin_round_trip_and_both_actor_words() -> None:
    """MRs parse in drivemt's and AutoMT's wording and on separate lines."""
    mr = parse_gherkin(
        "Given the ego-vehicle approaches to intersection, When AUTOMT adds a red light, Then ego-vehicle should slow down."
    )
    assert mr == MRFields(
        road_type="intersection", verb="adds", manipulation="a red light", expected_behavior="slow down"
    )
    assert parse_gherkin(format_gherkin(mr)) == mr
    multi = "Scenario: x\n  Given the ego-vehicle approaches to any roads\n  When drivemt replaces the weather into fog\n  Then ego-vehicle should slow down"
    assert parse_gherkin(multi).verb == "replaces"
    with pytest.raises(MRParseError, match="not an MR"):
        parse_gherkin("Slow down when it rains.")


def test_duplicates_are_same_canonical_terms_not_similar_text(ontology: Ontology) -> None:
    """Different wordings of one MR share a key; fog and rain MRs do not."""
    de = ontology.vocabulary("germany")
    a = MRFields(
        road_type="any roads",
        verb="replaces",
        manipulation="the weather into fog environment",
        expected_behavior="slow down",
    )
    b = MRFields(
        road_type="Any roads",
        verb="replaces",
        manipulation="fog environment reducing visibility",
        expected_behavior="slow down",
    )
    c = MRFields(
        road_type="any roads",
        verb="replaces",
        manipulation="the weather into rain environment",
        expected_behavior="slow down",
    )
    assert canonical_key(a, de) == canonical_key(b, de)
    assert canonical_key(a, de) != canonical_key(c, de)


def test_feature_file_round_trip(tmp_path: Path) -> None:
    """Exported feature files read back into the same MRs, regions and sources."""
    from datetime import UTC, datetime

    fields = MRFields(road_type="crosswalk", verb="adds", manipulation="a pedestrian", expected_behavior="slow down")
    stored = StoredMR(
        mr_id="x",
        gherkin=format_gherkin(fields),
        fields=fields,
        canonical_key="k",
        region="california",
        score=0.9,
        source_rule_ids=["ca-1", "ca-2"],
        created_at=datetime.now(UTC),
    )
    path = tmp_path / "out.feature"
    assert write_feature(path, [stored], region="california") == 1
    back = read_feature(path)
    assert len(back) == 1
    assert back[0].fields == fields and back[0].region == "california" and back[0].sources == ["ca-1", "ca-2"]


def test_constant_baseline_matches_documented_figures(ontology: Ontology, sample_rules: list[dict]) -> None:
    """The scorer gives the constant answer exactly what the references allow, rule by rule."""
    items = [
        (r["id"], r["region"], baseline_prediction(), [MRFields(**p) for p in r["reference_parsed"]])
        for r in sample_rules
    ]
    report = score_rules(ontology, items)
    expected_road = sum(any(p["road_type"] == "any roads" for p in r["reference_parsed"]) for r in sample_rules)
    assert report.fraction("road_type") == pytest.approx(expected_road / len(sample_rules))
    assert report.fraction("triple") <= report.fraction("road_type")
    missing = score_rules(ontology, [(i[0], i[1], None, i[3]) for i in items])
    assert missing.as_dict()["triple"] == 0.0
