"""The drivemt command line, in-process (typer's runner), on the embedded defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runners.cli import app
from tests.helpers import FIXTURES

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    """Run a command; returns its exit code and its standard output (errors and logs go to stderr)."""
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


@pytest.mark.slow
def test_rules_extract_writes_one_object_per_rule(tmp_path: Path) -> None:
    """A .txt file gives one JSONL object per rule; an oversized rule gets null fields and an error."""
    src = tmp_path / "rules.txt"
    src.write_text("Slow down in fog.\n" + "Stop at the red light. " * 600 + "\nYield to pedestrians at a crosswalk.\n")
    out = tmp_path / "out.jsonl"
    code, output = invoke("rules", "extract", str(src), "--region", "california", "--out", str(out))
    assert code == 0, output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["rules-1", "rules-2", "rules-3"]
    fog, huge, walk = rows
    assert (
        fog["verb"] == "replaces"
        and "fog" in fog["manipulation"]
        and fog["gherkin"].startswith("Given the ego-vehicle")
    )
    assert 0.0 < fog["score"] <= 1.0 and fog["provenance"]["ontology_hash"]
    assert huge["road_type"] is None and huge["gherkin"] is None and "10240-byte limit" in huge["error"]
    assert walk["road_type"] == "crosswalk" and "pedestrian" in walk["manipulation"]
    assert set(fog) >= {"id", "text", "road_type", "verb", "manipulation", "expected_behavior", "gherkin", "score"}


@pytest.mark.slow
def test_eval_rules_prints_fractions(tmp_path: Path) -> None:
    """eval rules --json prints n and the four fractions; --predictions scores an earlier extraction."""
    result = runner.invoke(app, ["eval", "rules", str(FIXTURES / "rules_de_sample.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout.strip().splitlines()[0])
    assert scores["n"] == 12 and set(scores) == {"n", "road_type", "manipulation", "expected_behavior", "triple"}
    assert scores["triple"] >= 0.75 and scores["road_type"] >= 0.85
    # The offline path is named for what it is, with the count of MRs it gave.
    assert "answered by parser offline:ontology-grounded (12); validator offline:deterministic-checks (12)" in " ".join(
        result.stderr.split()
    )
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        json.dumps(
            {
                "id": "de-01",
                "road_type": "any roads",
                "verb": "replaces",
                "manipulation": "fog environment",
                "expected_behavior": "slow down",
            }
        )
        + "\n"
    )
    result = runner.invoke(
        app, ["eval", "rules", str(FIXTURES / "rules_de_sample.jsonl"), "--json", "--predictions", str(preds)]
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout.strip().splitlines()[0])["triple"] == pytest.approx(1 / 12, abs=1e-4)
    assert "no MR: 0 rejected, 11 without a result" in " ".join(result.stderr.split())


def test_events_schema_covers_every_event() -> None:
    """events schema prints the subjects and a JSON schema per event type."""
    code, output = invoke("events", "schema")
    assert code == 0
    doc = json.loads(output)
    assert doc["subjects"]["rules.submitted"] == "drivemt.rules.submitted"
    assert "rules.submitted" in doc["events"] and "mrs.accepted" in doc["events"]


def test_submit_without_a_daemon_says_how_to_start_one(tmp_path: Path) -> None:
    """Submitting with no daemon running names the data dir and the command to start one."""
    code, output = invoke("submit", "rules", "--text", "Stop at red lights.", "--data-dir", str(tmp_path))
    assert code == 1 and "no running drivemt daemon" in output and "drivemt daemon" in output


def test_bad_config_is_reported(tmp_path: Path) -> None:
    """An unknown config key fails with the key's name."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm:\n  provider: openai\n")
    code, output = invoke("status", "--config", str(cfg), "--data-dir", str(tmp_path))
    assert code == 1 and "needs llm.model" in output


def test_ontology_propose_needs_an_llm(tmp_path: Path) -> None:
    """The offline reasoner does not invent ontology terms; the command says so."""
    doc = tmp_path / "rules.txt"
    doc.write_text("Slow down in hail.")
    code, output = invoke("ontology", "propose", str(doc), "--data-dir", str(tmp_path))
    assert code == 1 and "needs an LLM" in output


@pytest.mark.slow
def test_mrs_import_list_search_export_without_a_daemon(tmp_path: Path) -> None:
    """With no daemon, mrs commands use the data dir's own store: import, list, search and export round-trip."""
    feature = tmp_path / "mine.feature"
    feature.write_text(
        "Feature: Metamorphic relations (region california)\n\n"
        "  @source:ca-77\n"
        "  Scenario: pedestrian\n"
        "    Given the ego-vehicle approaches to crosswalk\n"
        "    When drivemt adds a pedestrian\n"
        "    Then ego-vehicle should slow down\n\n"
        "  Scenario: fog\n"
        "    Given the ego-vehicle approaches to any roads\n"
        "    When drivemt replaces the weather into fog environment\n"
        "    Then ego-vehicle should slow down\n"
    )
    data = str(tmp_path / "data")
    code, output = invoke("mrs", "import", str(feature), "--data-dir", data)
    assert code == 0 and "2 new" in output, output
    code, output = invoke("mrs", "list", "--json", "--data-dir", data)
    rows = [json.loads(line) for line in output.splitlines()]
    assert {r["fields"]["manipulation"] for r in rows} == {"a pedestrian", "the weather into fog environment"}
    assert any(r["source_rule_ids"] == ["ca-77"] for r in rows)
    code, output = invoke(
        "mrs", "search", "someone on the zebra crossing", "--limit", "1", "--json", "--data-dir", data
    )
    assert "pedestrian" in json.loads(output.splitlines()[0])["mr"]["gherkin"]
    out_dir = tmp_path / "export"
    code, output = invoke("mrs", "export", "--format", "feature", "--out", str(out_dir), "--data-dir", data)
    assert code == 0 and (out_dir / "mrs-california.feature").is_file()
    code, output = invoke("mrs", "import", str(out_dir / "mrs-california.feature"), "--data-dir", data)
    assert "0 new, 2 already known" in output


def test_import_refuses_terms_outside_the_ontology(tmp_path: Path) -> None:
    """A hand-edited MR with an unknown road type is refused with the field named."""
    feature = tmp_path / "bad.feature"
    feature.write_text(
        "Feature: x (region germany)\n  Scenario: bad\n    Given the ego-vehicle approaches to the moon\n"
        "    When drivemt adds a pedestrian\n    Then ego-vehicle should slow down\n"
    )
    code, output = invoke("mrs", "import", str(feature), "--data-dir", str(tmp_path / "d"))
    assert code == 1 and "unknown road type 'the moon'" in output
