"""The HTML report of a batch of crash cases: what was reported, what was built, what the runs found.

The planner leaves ``case.json`` (summary, sketch, scenario DSL) in each case folder of the artefact
store (:class:`tools.common.artifacts.RunLayout`), every run leaves its JSON record, PNG and GIF there
(failed runs their record with the error), and the Judge leaves ``verdict.json`` when the last run is
in. This module reads that tree, so the daemon (once a batch's last case is judged) and ``drivemt crash
run`` draw the same report, and its case verdicts come from :func:`tools.crash.verdict.case_verdict`. Totals follow SAFE's Tables 5 and 6: scenarios, runs, violations (runs in
which the ego collided), seconds per run and per scenario, runs needed for the 1st/2nd/3rd violation,
and reproduced crashes.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from tools.common.artifacts import ArtifactStore, RunLayout
from tools.common.report import report_env
from tools.crash.models import CaseVerdict, RunRecord, RunSummary
from tools.crash.verdict import case_verdict

__all__ = ["CaseResult", "batch_totals", "load_batch", "write_batch_report"]


@dataclass
class CaseResult:
    """One case of a batch, as found in the artefact store."""

    case_id: str
    folder: str
    """Artefact ref of the case's folder."""
    case: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] | None = None
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def scenario_yaml(self) -> str:
        """The scenario DSL as YAML."""
        scenario = self.case.get("scenario")
        return yaml.safe_dump(scenario, sort_keys=False) if scenario else ""

    @property
    def reproducible(self) -> bool:
        """Whether the scenario has a crash to reproduce: two vehicles or more (a report whose other road users the
        DSL cannot hold, a pedestrian or a bicycle, leaves one vehicle: nothing to reproduce)."""
        return len((self.case.get("scenario") or {}).get("actors") or []) >= 2

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
        return sorted(self.runs, key=lambda r: (not r.reproduced, not r.ego_collided))  # (stable: the runs are in it)

    def per_ego(self) -> list[tuple[str, str, int, int, int]]:
        """(ego, policy, runs, reproduced, violations) per ego and policy."""
        rows: dict[tuple[str, str], list[int]] = {}
        for r in self.runs:
            c = rows.setdefault((r.spec.ego_id, r.spec.policy), [0, 0, 0])
            c[0] += 1
            c[1] += int(r.reproduced)
            c[2] += int(r.ego_collided)
        return [(e, p, *c) for (e, p), c in sorted(rows.items())]  # type: ignore[misc]


def _plan_order(case: dict[str, Any]) -> Any:
    """Sort key of a case's runs in plan order, as the Judge numbers them (:func:`tools.crash.runs.plan_runs`): the
    scenario's actors in turn, each policy as given, then the variants; names sort what the case does not say."""
    actors = [a.get("id") for a in (case.get("scenario") or {}).get("actors") or []]
    policies = list(((case.get("simulate") or {}).get("policies")) or [])

    def key(r: RunRecord) -> tuple[int, str, int, str, int]:
        e, p = r.spec.ego_id, r.spec.policy
        return (
            actors.index(e) if e in actors else len(actors),
            e,
            policies.index(p) if p in policies else len(policies),
            p,
            r.spec.variant,
        )

    return key


def load_batch(store: ArtifactStore, batch_id: str) -> list[CaseResult]:
    """Every case of a batch in the store, with its runs in plan order."""
    by_case: dict[str, list[str]] = {}
    root = RunLayout.crashes(batch_id)
    for ref in store.list(root):
        rel = PurePosixPath(ref).relative_to(root)
        if len(rel.parts) == 2:  # <case>/<file>; a simulator's own sub-folders are not the case's
            by_case.setdefault(rel.parts[0], []).append(ref)
    out = []
    for case_id, refs in sorted(by_case.items()):
        case_ref = RunLayout.crash_case(batch_id, case_id)
        res = CaseResult(case_id=case_id, folder=case_ref)
        for ref in refs:
            name = PurePosixPath(ref).name
            if name == RunLayout.CASE_FILE:
                res.case = json.loads(store.get(ref))
            elif name == RunLayout.VERDICT_FILE:
                res.verdict = json.loads(store.get(ref))
            elif RunLayout.is_run_record(name):
                try:
                    res.runs.append(RunRecord.model_validate_json(store.get(ref)))
                except ValueError:
                    continue
        res.runs.sort(key=_plan_order(res.case))
        out.append(res)
    return out


def _violation_runs(case: CaseResult) -> list[int]:
    """The runs (1-based, in plan order) of a case's 1st-3rd violations: its verdict's, as the Judge counted them in
    plan order (actors, then policies as given, then variants); without a verdict yet, its runs as loaded."""
    if case.verdict is not None and isinstance(case.verdict.get("first_violation_runs"), list):
        return [int(n) for n in case.verdict["first_violation_runs"]][:3]
    return [i + 1 for i, r in enumerate(case.runs) if r.ego_collided][:3]


def batch_totals(cases: list[CaseResult]) -> dict[str, Any]:
    """SAFE Table 5/6 figures of a batch: scenarios, runs, violations, seconds, runs to the 1st-3rd violation.

    ``reproduced`` counts among the ``reproducible`` scenarios (simulated: a run done, and two vehicles or more);
    seconds per scenario is over the ``simulated`` ones; the runs needed for the 1st/2nd/3rd violation are each
    case's own (its runs in plan order, as its verdict counts them), averaged over the cases that had that many
    violations (None: none had).
    """
    runs = [r for c in cases for r in c.runs]
    seconds = [r.wall_seconds for r in runs if not r.error]
    render = [r.render_seconds for r in runs if not r.error]
    simulated = [c for c in cases if any(not r.error for r in c.runs)]
    per_case = [_violation_runs(c) for c in cases]
    nth: list[float | None] = []
    for k in range(3):
        reached = [runs_to[k] for runs_to in per_case if len(runs_to) > k]
        nth.append(sum(reached) / len(reached) if reached else None)
    return {
        "scenarios": len(cases),
        "simulated": len(simulated),
        "reproducible": sum(1 for c in simulated if c.reproducible),
        "runs": len(runs),
        "errors": sum(1 for r in runs if r.error),
        "violations": sum(1 for r in runs if r.ego_collided),
        "violating_scenarios": sum(1 for c in cases if c.violations),
        "reproduced": sum(1 for c in cases if c.reproduced),
        "seconds_per_run": sum(seconds) / len(seconds) if seconds else 0.0,
        "render_seconds_per_run": sum(render) / len(render) if render else 0.0,
        "seconds_per_scenario": sum(seconds) / len(simulated) if simulated else 0.0,
        "nth_violation": nth,
    }


def _unreadable_picture(path: Path) -> str | None:
    """Why a picture file cannot be shown (None when it decodes)."""
    from PIL import Image

    try:
        with Image.open(path) as img:
            img.load()
    except Exception as exc:  # any undecodable file: PIL raises several kinds
        return f"{type(exc).__name__}: {exc}"[:200]
    return None


def write_batch_report(
    store: ArtifactStore,
    batch_id: str,
    *,
    cases: list[CaseResult] | None = None,
    title: str = "drivemt: crash reports to simulated scenarios",
) -> str:
    """Draw the batch's report (``RunLayout.crash_report``) from what the store holds (or from ``cases``, already
    loaded) and return its ref."""
    cases = load_batch(store, batch_id) if cases is None else cases
    base = RunLayout.batch(batch_id)
    for c in cases:  # keep sketches beside the report so the folder can be moved or shared
        sketch = c.case.get("sketch")
        if sketch and Path(sketch).is_file() and (why := _unreadable_picture(Path(sketch))):
            c.case["sketch_note"] = f"the sketch {Path(sketch).name} could not be read ({why}); not shown"
        elif sketch:
            ref = f"{c.folder}/sketch{Path(sketch).suffix.lower()}"
            if not store.exists(ref) and Path(sketch).is_file():  # a client on another machine uploads it there
                store.put(ref, Path(sketch))
            if store.exists(ref):
                c.case["sketch_rel"] = posixpath.relpath(ref, base)
    env = report_env()
    env.filters["rel_ref"] = lambda ref: posixpath.relpath(ref, base) if ref else None
    html = env.get_template("crash_report.html").render(
        title=title,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        batch=batch_id,
        totals=batch_totals(cases),
        cases=sorted(cases, key=lambda c: (not c.reproduced, not c.violations, c.case_id)),
    )
    return store.put(RunLayout.crash_report(batch_id), html)
