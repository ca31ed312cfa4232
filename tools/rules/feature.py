"""Gherkin ``.feature`` files of MRs, for people to review, edit and import back.

Each MR is one Scenario whose steps are the MR's Given/When/Then; tags keep its region and source
rules, a comment its id, score and execution count. Reading accepts hand-edited files: any Scenario
with the three steps is an MR.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tools.errors import BadInputError
from tools.rules.models import MRFields, StoredMR
from tools.rules.mr import parse_gherkin

__all__ = ["FeatureMR", "read_feature", "write_feature"]

_SCENARIO = re.compile(r"^\s*Scenario(?: Outline)?:\s*(?P<title>.*)$")
_STEP = re.compile(r"^\s*(Given|When|Then|And)\s+(?P<text>.+?)\s*$")
_TAG = re.compile(r"@(?P<key>[A-Za-z_]+):(?P<value>\S+)")
_FEATURE_REGION = re.compile(r"^\s*Feature:.*\(region (?P<region>[A-Za-z_-]+)\)")


@dataclass
class FeatureMR:
    """One MR read from a feature file."""

    fields: MRFields
    region: str
    sources: list[str] = field(default_factory=list)
    line: int = 0
    title: str = ""


def write_feature(path: Path, mrs: Iterable[StoredMR], *, region: str) -> int:
    """Write MRs of one region as a feature file; returns how many were written."""
    lines = [
        "# drivemt metamorphic relations. Review and edit the steps, then: drivemt mrs import <this file>",
        "# Terms must stay inside the ontology (drivemt checks them on import).",
        f"Feature: Metamorphic relations (region {region})",
        "",
    ]
    n = 0
    for mr in mrs:
        n += 1
        tags = [f"@region:{region}"] + [f"@source:{s}" for s in mr.source_rule_ids]
        lines += [
            f"  # mr_id: {mr.mr_id}  score: {mr.score:.2f}  executions: {mr.execution_count}",
            "  " + " ".join(tags),
            f"  Scenario: {mr.fields.manipulation} -> {mr.fields.expected_behavior} ({mr.fields.road_type})",
            f"    Given the ego-vehicle approaches to {mr.fields.road_type}",
            f"    When drivemt {mr.fields.verb} {mr.fields.manipulation}",
            f"    Then ego-vehicle should {mr.fields.expected_behavior}",
            "",
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return n


def read_feature(path: Path, *, default_region: str = "germany") -> list[FeatureMR]:
    """Read the MRs of a feature file.

    Raises:
        BadInputError: If the file is unreadable, or a Scenario's steps are not an MR (the error
            names the line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read feature file {path}: {exc}") from exc
    region = default_region
    out: list[FeatureMR] = []
    pending_tags: dict[str, list[str]] = {}
    current: dict[str, object] | None = None

    def finish() -> None:
        if current is None:
            return
        steps = current["steps"]
        assert isinstance(steps, list)
        try:
            fields = parse_gherkin("\n".join(steps))
        except BadInputError as exc:
            raise BadInputError(f"{path}:{current['line']}: {exc}") from exc
        tags = current["tags"]
        assert isinstance(tags, dict)
        out.append(
            FeatureMR(
                fields=fields,
                region=(tags.get("region") or [region])[0],
                sources=list(tags.get("source") or []),
                line=int(current["line"]),  # type: ignore[call-overload]
                title=str(current["title"]),
            )
        )

    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _FEATURE_REGION.match(line)
        if m:
            region = m.group("region").lower()
            continue
        if line.strip().startswith("@"):
            for t in _TAG.finditer(line):
                pending_tags.setdefault(t.group("key").lower(), []).append(t.group("value"))
            continue
        m = _SCENARIO.match(line)
        if m:
            finish()
            current = {"title": m.group("title"), "line": lineno, "steps": [], "tags": pending_tags}
            pending_tags = {}
            continue
        m = _STEP.match(line)
        if m and current is not None:
            steps = current["steps"]
            assert isinstance(steps, list)
            steps.append(f"{line.strip()}")
    finish()
    return out
