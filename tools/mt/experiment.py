"""AutoMT's experiment (``drivemt mt run``): figures per method and round, the paired t-test, agreement with the
synthetic scene's truth, and the HTML report.

* **Validation rate** = valid follow-ups / cases; **violation rate** of a model = its violations on valid
  follow-ups / cases (AutoMT's definition, so a method that makes fewer valid follow-ups is not rewarded for it);
  **distinct manipulations** = distinct canonical terms among valid follow-ups.
* Across rounds (seeds) the figures are averaged; a paired t-test (``scipy.stats.ttest_rel``) compares each
  method's per-round violation rates with the reference method's, model by model ("n/a" with fewer than two
  rounds, or when the differences do not vary).
* **Agreement with the scene's truth.** A follow-up of a synthetic case is re-rendered as a scene, and the
  scripted driver's own reaction to it is recorded (slow down or keep current). Judging each model again with
  that reaction as the expected behaviour, the share of verdicts that stay the same says how often the MR's
  verdict agrees with what the scene demands. This proof is partly circular: the scene, its sprites and the
  driver's reaction come from one drawing code, so agreement here does not show agreement on camera images.
"""

from __future__ import annotations

import io
import math
import posixpath
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tools.mt.judging import judge_models
from tools.mt.models import BandFloor, BandPolicy, ModelPrediction

if TYPE_CHECKING:
    from tools.common.artifacts import ArtifactStore
    from tools.mt.models import FollowUp, ModelVerdict

__all__ = [
    "JudgedCase",
    "RoundResult",
    "method_figures",
    "paired_tests",
    "round_figures",
    "scene_agreement",
    "write_experiment_report",
]


@dataclass
class JudgedCase:
    """One case's verdicts (the Judge's ``followups.judged`` payload, reduced to what the figures need)."""

    case_id: str
    status: str
    followup: FollowUp | None
    verdicts: list[ModelVerdict]
    band_policy: BandPolicy | None
    """The band the verdicts used (None for a case that got no verdict)."""
    source_predictions: list[ModelPrediction]
    followup_predictions: list[ModelPrediction]
    model_errors: list[str] = field(default_factory=list)
    reason: str = ""
    valid: bool = False
    """Whether its follow-up passed the validity checks (judged by the models or not)."""

    @property
    def violations(self) -> list[str]:
        """The models that broke the MR."""
        return [v.model for v in self.verdicts if v.violation]


@dataclass
class RoundResult:
    """One method's round (one seed) over every case."""

    method: str
    round: int
    seed: int
    batch: str
    generation: dict[str, Any]
    """The round's generation figures (:func:`tools.mt.report.summarise`)."""
    judged: list[JudgedCase]
    seconds: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)
    """The generation figures with each model's violations (:func:`round_figures`, once every model is known)."""


def round_figures(r: RoundResult, models: Sequence[str]) -> dict[str, Any]:
    """A round's generation figures, plus violations and violation rate per model."""
    figures = dict(r.generation)
    cases = figures["cases"]
    counts = Counter(m for j in r.judged if j.status == "judged" for m in j.violations)
    figures["judged"] = sum(1 for j in r.judged if j.status == "judged")
    figures["violations"] = {m: counts.get(m, 0) for m in models}
    figures["violation_rate"] = {m: round(counts.get(m, 0) / cases, 4) if cases else 0.0 for m in models}
    figures["model_errors"] = sorted({e for j in r.judged for e in j.model_errors})
    return figures


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    """The mean of the measured values (rounds where a check was measured on none have no value)."""
    measured = [v for v in values if v is not None]
    return round(sum(measured) / len(measured), 4) if measured else None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def method_figures(rounds: Sequence[RoundResult], models: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each method's figures averaged over its rounds (``--json``'s ``methods``)."""
    by_method: dict[str, list[RoundResult]] = defaultdict(list)
    for r in rounds:
        by_method[r.method].append(r)
    out: dict[str, dict[str, Any]] = {}
    for method, rs in by_method.items():
        figs = [r.figures for r in rs]
        checks = {name: _mean_or_none([f["checks"][name] for f in figs]) for name in figs[0]["checks"]}
        terms = {j.followup.mr.term for r in rs for j in r.judged if j.valid and j.followup is not None}
        out[method] = {
            "cases": figs[0]["cases"],
            "rounds": len(rs),
            "validation_rate": round(_mean([f["validation_rate"] for f in figs]), 4),
            "checks": checks,
            "violation_rate": {m: round(_mean([f["violation_rate"][m] for f in figs]), 4) for m in models},
            "violations": {m: sum(f["violations"][m] for f in figs) for m in models},
            "distinct_manipulations": len(terms),
            "distinct_manipulations_per_round": [f["distinct_manipulations"] for f in figs],
            "per_round": [
                {"seed": r.seed, "validation_rate": f["validation_rate"], "violation_rate": f["violation_rate"]}
                for r, f in zip(rs, figs, strict=True)
            ],
            "seconds": round(sum(f["seconds"] for f in figs), 2),
        }
    return out


def paired_tests(rounds: Sequence[RoundResult], models: Sequence[str], *, reference: str) -> list[dict[str, Any]]:
    """The reference method against each other one, model by model: a paired t-test over the rounds' violation
    rates (rounds pair by their seed). ``p`` is None ("n/a") with fewer than two rounds or no variance."""
    from scipy.stats import ttest_rel

    by_key = {(r.method, r.seed): r.figures for r in rounds}
    methods = list(dict.fromkeys(r.method for r in rounds))
    tests = []
    for other in methods:
        if other == reference:
            continue
        seeds = sorted({s for (m, s) in by_key if m == reference} & {s for (m, s) in by_key if m == other})
        for model in models:
            a = [by_key[(reference, s)]["violation_rate"][model] for s in seeds]
            b = [by_key[(other, s)]["violation_rate"][model] for s in seeds]
            t = p = None
            note = ""
            if len(seeds) < 2:
                note = "n/a: fewer than 2 rounds"
            elif len({x - y for x, y in zip(a, b, strict=True)}) < 2:
                note = "n/a: the differences do not vary"
            else:
                res = ttest_rel(a, b)
                t, p = float(res.statistic), float(res.pvalue)
                if math.isnan(p):
                    t = p = None
                    note = "n/a"
            tests.append(
                {
                    "a": reference,
                    "b": other,
                    "model": model,
                    "rounds": len(seeds),
                    "mean_a": round(_mean(a), 4),
                    "mean_b": round(_mean(b), 4),
                    "t": None if t is None else round(t, 3),
                    "p": None if p is None else round(p, 4),
                    "note": note,
                }
            )
    return tests


def scene_agreement(rounds: Sequence[RoundResult], *, floor: BandFloor | None = None) -> dict[str, Any]:
    """How often the Judge's verdict stays the same when the expected behaviour is the scripted driver's own
    reaction to the re-rendered scene instead of the MR's (speed MRs on synthetic re-renders only)."""
    pairs = agree = mr_matches = followups = 0
    by_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rounds:
        for j in r.judged:
            f = j.followup
            if j.status != "judged" or f is None or f.edit.expected_from_scene is None:
                continue
            behaviour = f.mr.expected_behavior.lower()
            if behaviour not in ("slow down", "keep current"):
                continue
            followups += 1
            truth = f.edit.expected_from_scene
            mr_matches += truth == behaviour
            src = {p.model: p for p in j.source_predictions}
            fol = {p.model: p for p in j.followup_predictions}
            again = {
                v.model: v for v in judge_models(truth, src, fol, policy=j.band_policy or "automt-paper", floor=floor)
            }
            for v in j.verdicts:
                if v.model not in again or v.verdict not in ("ok", "violation"):
                    continue
                same = again[v.model].verdict == v.verdict
                pairs += 1
                agree += same
                by_model[v.model][0] += same
                by_model[v.model][1] += 1
    return {
        "followups": followups,
        "mr_matches_scene": round(mr_matches / followups, 4) if followups else None,
        "verdicts": pairs,
        "agreement": round(agree / pairs, 4) if pairs else None,
        "by_model": {m: round(a / n, 4) for m, (a, n) in sorted(by_model.items())},
    }


# -- the report ---------------------------------------------------------------------------------------------
def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _rates_plot(methods: dict[str, dict[str, Any]], models: Sequence[str]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(models) + 2), 3.2))
    width = 0.8 / max(1, len(methods))
    x = np.arange(len(models))
    for k, (method, figs) in enumerate(methods.items()):
        ax.bar(x + k * width, [100 * figs["violation_rate"][m] for m in models], width, label=method)
    ax.set_xticks(x + width * (len(methods) - 1) / 2, list(models))
    ax.set_ylabel("violation rate, % of cases")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _case_plot(j: JudgedCase) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 2.6))
    fol = {p.model: p for p in j.followup_predictions}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, src in enumerate(j.source_predictions):
        c = colours[k % len(colours)]
        f = fol.get(src.model)
        mark = " (violation)" if src.model in j.violations else ""
        if src.speed_kmh:
            a1.plot(src.speed_kmh, color=c, label=src.model + mark)
            if f and f.speed_kmh:
                a1.plot(f.speed_kmh, color=c, linestyle="--")
        if src.steering_rad:
            a2.plot(src.steering_rad, color=c)
            if f and f.steering_rad:
                a2.plot(f.steering_rad, color=c, linestyle="--")
    a1.set_title("predicted speed, km/h (solid: source, dashed: follow-up)", fontsize=8)
    a2.set_title("predicted steering, rad (left +)", fontsize=8)
    for a in (a1, a2):
        a.set_xlabel("frame", fontsize=8)
        a.tick_params(labelsize=7)
        a.grid(alpha=0.3)
    a1.legend(fontsize=6, loc="best")
    return _png(fig)


def write_experiment_report(
    store: ArtifactStore,
    *,
    report_ref: str,
    summary: dict[str, Any],
    rounds: Sequence[RoundResult],
    models: Sequence[str],
    max_cases: int = 60,
) -> str:
    """Write the experiment's HTML report (with its plots) into ``store`` and return its ref.

    The method x model table and plot come first, then the paired t-tests and the agreement with the scene's
    truth, then the violating cases (most violating models first): source and follow-up side by side, with
    each model's predicted speed and steering over the frames.
    """
    from tools.common.report import report_env
    from tools.mt.report import _gif

    base = posixpath.dirname(report_ref)
    media = f"{base}/media"
    plot = store.put(f"{media}/violation-rates.png", _rates_plot(summary["methods"], models))
    violating = [(r, j) for r in rounds for j in r.judged if j.status == "judged" and j.violations]
    violating.sort(key=lambda rj: (-len(rj[1].violations), rj[0].method, rj[1].case_id))
    rows = []
    from tools.mt.generate import read_frames

    for r, j in violating[:max_cases]:
        f = j.followup
        assert f is not None
        tag = f"{r.method}-{r.round}-{f.followup_id}"
        src_gif = store.put(f"{media}/{tag}-src.gif", _gif(read_frames(store, f.source)))
        fol_gif = store.put(f"{media}/{tag}-fol.gif", _gif(read_frames(store, f.case)))
        chart = store.put(f"{media}/{tag}-predictions.png", _case_plot(j))
        rows.append(
            {
                "method": r.method,
                "round": r.round,
                "case_id": j.case_id,
                "followup": f,
                "violations": j.violations,
                "verdicts": j.verdicts,
                "band_policy": j.band_policy,
                "src_first": posixpath.relpath(f.source.frames[0], base),
                "fol_first": posixpath.relpath(f.case.frames[0], base),
                "src_gif": posixpath.relpath(src_gif, base),
                "fol_gif": posixpath.relpath(fol_gif, base),
                "chart": posixpath.relpath(chart, base),
            }
        )
    html = (
        report_env()
        .get_template("mt_experiment.html")
        .render(
            title="drivemt: AutoMT experiment",
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            summary=summary,
            models=list(models),
            plot=posixpath.relpath(plot, base),
            rows=rows,
            more=max(0, len(violating) - max_cases),
            batches=[(r.method, r.round, r.seed, posixpath.relpath(f"{r.batch}/followups.html", base)) for r in rounds],
        )
    )
    return store.put(report_ref, html)
