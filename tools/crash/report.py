"""The HTML report of a batch of crash cases: what was reported, what was built, what the runs found.

The planner leaves ``case.json`` (summary, sketch, scenario DSL) in each case folder, every run leaves
its JSON record, PNG and GIF there, and the Judge leaves ``verdict.json`` when the last run is in. This
module reads that folder tree, so the daemon (after every verdict) and ``drivemt crash run`` (at the
end) draw the same report. Totals follow SAFE's Tables 5 and 6: scenarios, runs, violations (runs in
which the ego collided), seconds per run and per scenario, runs needed for the 1st/2nd/3rd violation,
and reproduced crashes.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tools.common.report import relative_link, report_env
from tools.crash.models import CaseVerdict, RunRecord, RunSummary
from tools.crash.verdict import case_verdict

__all__ = ["CaseResult", "batch_totals", "load_batch", "write_batch_report"]


@dataclass
class CaseResult:
    """One case of a batch, as found on disk."""

    case_id: str
    folder: Path
    case: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] | None = None
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def scenario_yaml(self) -> str:
        """The scenario DSL as YAML."""
        scenario = self.case.get("scenario")
        return yaml.safe_dump(scenario, sort_keys=False) if scenario else ""

    @property
    def violations(self) -> list[RunRecord]:
        """Runs in which the ego collided."""
        return [r for r in self.runs if r.ego_collided]

    def judged(self) -> CaseVerdict:
        """The case's verdict from its runs, by the same rule as the Judge's (:func:`tools.crash.verdict.case_verdict`)."""
        return case_verdict(self.case_id, [RunSummary.of(r, i) for i, r in enumerate(self.runs)])

    @property
    def reproduced(self) -> bool:
        """Whether the case's runs reproduced the reported crash."""
        return self.judged().reproduced

    def runs_sorted(self) -> list[RunRecord]:
        """Reproducing runs first, then violations, then the rest, each in plan order."""
        return sorted(self.runs, key=lambda r: (not r.reproduced, not r.ego_collided, r.spec.ego_id, r.spec.variant))

    def per_ego(self) -> list[tuple[str, str, int, int, int]]:
        """(ego, policy, runs, reproduced, violations) per ego and policy."""
        rows: dict[tuple[str, str], list[int]] = {}
        for r in self.runs:
            c = rows.setdefault((r.spec.ego_id, r.spec.policy), [0, 0, 0])
            c[0] += 1
            c[1] += int(r.reproduced)
            c[2] += int(r.ego_collided)
        return [(e, p, *c) for (e, p), c in sorted(rows.items())]  # type: ignore[misc]


def load_batch(batch_dir: Path) -> list[CaseResult]:
    """Every case under ``<batch_dir>/crashes``, with its runs in plan order."""
    out = []
    root = batch_dir / "crashes"
    for folder in sorted(p for p in root.glob("*") if p.is_dir()):
        res = CaseResult(case_id=folder.name, folder=folder)
        if (folder / "case.json").is_file():
            res.case = json.loads((folder / "case.json").read_text(encoding="utf-8"))
        if (folder / "verdict.json").is_file():
            res.verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
        for rec in sorted(folder.glob("*.json")):
            if rec.name in {"case.json", "verdict.json"}:
                continue
            try:
                res.runs.append(RunRecord.model_validate_json(rec.read_text(encoding="utf-8")))
            except ValueError:
                continue
        res.runs.sort(key=lambda r: (r.spec.ego_id, r.spec.policy, r.spec.variant))
        out.append(res)
    return out


def batch_totals(cases: list[CaseResult]) -> dict[str, Any]:
    """SAFE Table 5/6 figures of a batch: scenarios, runs, violations, seconds, runs to the 1st-3rd violation."""
    runs = [r for c in cases for r in c.runs]
    seconds = [r.wall_seconds for r in runs if not r.error]
    render = [r.render_seconds for r in runs if not r.error]
    order = [r for c in cases for r in sorted(c.runs, key=lambda r: (r.spec.ego_id, r.spec.policy, r.spec.variant))]
    nth = [i + 1 for i, r in enumerate(order) if r.ego_collided][:3]
    return {
        "scenarios": len(cases),
        "runs": len(runs),
        "errors": sum(1 for r in runs if r.error),
        "violations": sum(1 for r in runs if r.ego_collided),
        "violating_scenarios": sum(1 for c in cases if c.violations),
        "reproduced": sum(1 for c in cases if c.reproduced),
        "seconds_per_run": sum(seconds) / len(seconds) if seconds else 0.0,
        "render_seconds_per_run": sum(render) / len(render) if render else 0.0,
        "seconds_per_scenario": sum(seconds) / len(cases) if cases else 0.0,
        "nth_violation": nth + [None] * (3 - len(nth)),
    }


def write_batch_report(
    batch_dir: Path,
    *,
    cases: list[CaseResult] | None = None,
    title: str = "drivemt: crash reports to simulated scenarios",
) -> Path:
    """Write ``<batch_dir>/crashes.html`` from the batch's folder tree (or its ``cases``, already loaded) and
    return its path."""
    cases = load_batch(batch_dir) if cases is None else cases
    for c in cases:  # keep sketches beside the report so the folder can be moved or shared
        sketch = c.case.get("sketch")
        if sketch and Path(sketch).is_file():
            dest = c.folder / ("sketch" + Path(sketch).suffix.lower())
            if not dest.exists():
                shutil.copyfile(sketch, dest)
            c.case["sketch_rel"] = relative_link(str(dest), batch_dir)
    html = (
        report_env(batch_dir)
        .get_template("crash_report.html")
        .render(
            title=title,
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            batch=batch_dir.name,
            totals=batch_totals(cases),
            cases=sorted(cases, key=lambda c: (not c.reproduced, not c.violations, c.case_id)),
        )
    )
    path = batch_dir / "crashes.html"
    path.write_text(html, encoding="utf-8")
    return path
