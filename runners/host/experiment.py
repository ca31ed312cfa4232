"""AutoMT's experiment in-process (``drivemt mt run``): every method, over seeded rounds, through the same agents
a daemon runs (M-Agent and Validator for the rules' MRs, T-Agent, F-Agent, validity checker, Judge).

The cases go into the store once and every round submits the same refs, so each model's predictions on a source
are computed once and shared by every method and round (the Judge caches them by the frames' refs).
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.ads.pool import import_models
from runners.ads.train import below_baseline, weak_models_warning
from runners.clients.mt import CaseResults, case_events, report_outcome, submit_cases_and_collect
from runners.clients.rules import RunSummary, submit_and_collect
from runners.config import DrivemtConfig
from runners.host.inprocess import private_daemon
from tools.common.artifacts import LocalArtifactStore, RunLayout
from tools.common.similarity import Embedder
from tools.errors import BadInputError
from tools.mt.experiment import (
    JudgedCase,
    RoundResult,
    method_figures,
    paired_tests,
    round_figures,
    scene_agreement,
    write_experiment_report,
)
from tools.mt.loaders import import_cases, load_cases
from tools.mt.models import BandFloor, BandPolicy
from tools.mt.report import CHECKS
from tools.rules.models import MRFields, TrafficRule

__all__ = [
    "ORACLE_TRIGGERS",
    "Experiment",
    "experiment_summary",
    "judged_cases",
    "oracle_mr",
    "prove_oracle",
    "run_experiment_in_process",
]

ProgressFn = Callable[[str, int, int], None]


@dataclass
class Experiment:
    """What ``drivemt mt run`` came to."""

    summary: dict[str, Any]
    rounds: list[RoundResult]
    report: Path | None
    problems: list[str] = field(default_factory=list)
    rules: RunSummary | None = None


def judged_cases(outcome: CaseResults) -> list[JudgedCase]:
    """Each submitted case's verdicts, from what a submission collected (``missing`` where none came)."""
    out = []
    for case_id, o in outcome.outcomes.items():
        if o.judged is None:
            out.append(JudgedCase(case_id, "missing", None, [], None, [], [], reason="no verdict before the timeout"))
            continue
        p = o.judged.payload
        out.append(
            JudgedCase(
                case_id=case_id,
                status=p.status,
                followup=p.followup,
                verdicts=p.verdicts,
                band_policy=p.band_policy,
                source_predictions=p.source_predictions,
                followup_predictions=p.followup_predictions,
                model_errors=p.model_errors,
                reason=p.reason,
                valid=p.valid,
            )
        )
    return out


def experiment_summary(
    results: list[RoundResult],
    model_names: list[str],
    *,
    experiment_id: str,
    source: str,
    region: str,
    band: str,
    floor: BandFloor,
    fixed_mr: MRFields | None = None,
    models_dir: Path | None = None,
) -> dict[str, Any]:
    """The figures of an experiment's rounds (each round's figures are filled in on the way). With the models' folder,
    the models its training report finds no better than a constant are named (``weak_models``, ``warnings``)."""
    weak = [m for m in below_baseline(models_dir) if m in model_names] if models_dir is not None else []
    for rr in results:
        rr.figures = round_figures(rr, model_names)
    methods = list(dict.fromkeys(rr.method for rr in results))
    reference = "automt" if "automt" in methods else ("fixed" if "fixed" in methods else methods[0])
    return {
        "experiment": experiment_id,
        "source": source,
        "region": region,
        "cases": results[0].figures["cases"] if results else 0,
        "rounds": len({rr.round for rr in results}),
        "seeds": sorted({rr.seed for rr in results}),
        "band": band,
        "models": model_names,
        "mr": fixed_mr.gherkin if fixed_mr else None,
        "check_names": list(CHECKS),
        "methods": method_figures(results, model_names),
        "reference": reference,
        "tests": paired_tests(results, model_names, reference=reference),
        "agreement": scene_agreement(results, floor=floor),
        "model_errors": sorted({e for rr in results for e in rr.figures["model_errors"]}),
        # (the band asked for may fall back: automt-paper's cross-model band needs three models)
        "bands_used": sorted({v.band for rr in results for j in rr.judged for v in j.verdicts if v.band != "-"}),
        "weak_models": weak,
        "warnings": [weak_models_warning(weak)] if weak else [],
    }


async def run_experiment_in_process(
    config: DrivemtConfig,
    cases_path: Path,
    models_dir: Path,
    *,
    region: str,
    methods: Sequence[str],
    rounds: int = 1,
    rules: Sequence[TrafficRule] = (),
    fixed_mr: MRFields | None = None,
    band: BandPolicy | None = None,
    seed: int = 0,
    timeout: float = 3600.0,
    on_progress: ProgressFn | None = None,
    embedder: Embedder | None = None,
    model_clients: Mapping[str, Any] | None = None,
) -> Experiment:
    """Generation, validity and judging for each method over ``rounds`` seeds; artefacts under the runs folder.

    Args:
        config: Configuration (its ``runs_dir`` receives cases, follow-ups, predictions and the reports).
        cases_path: A recording or dataset (Udacity, A2D2, a folder, a drivemt synthetic set).
        models_dir: Adapter specs (and their model files) of the driving models to judge.
        region: The ontology region of the rules and the cases.
        methods: automt, manual, random, null, fixed (``fixed`` needs ``fixed_mr``).
        rounds: Seeds per method (``seed``, ``seed + 1``, ...).
        rules: Traffic rules whose MRs the ``automt`` method draws from.
        fixed_mr: The one MR of the ``fixed`` method.
        band: The Judge's band (the configuration's when None).
        timeout: Seconds to wait for each round.
        on_progress: Called with (stage, done, total).

    Raises:
        BadInputError: If the cases or the models cannot be used.
    """
    started = time.perf_counter()
    store = LocalArtifactStore(config.runs_dir)
    model_refs = import_models(store, models_dir)
    loaded = load_cases(cases_path, region=region)
    if not loaded.cases:
        raise BadInputError(
            f"no usable driving case in {cases_path}: " + "; ".join(str(p) for p in loaded.problems[:5])
        )
    experiment_id = f"experiment-{uuid.uuid4().hex[:8]}"
    cases = import_cases(store, loaded.cases, prefix=RunLayout.cases(experiment_id))
    results: list[RoundResult] = []
    model_names: list[str] = []
    summary_rules = None
    async with private_daemon(
        config, embedder=embedder, model_clients=model_clients, prefix="drivemt-mt-", artifacts_dir=config.runs_dir
    ) as daemon:
        assert daemon.bus is not None
        if rules and "automt" in methods:
            summary_rules = await submit_and_collect(
                daemon.bus,
                rules,
                timeout=timeout,
                source="mt run",
                on_progress=(lambda d, t: on_progress("rules -> MRs", d, t)) if on_progress else None,
            )
        for method in methods:
            for r in range(rounds):
                round_seed = seed + r
                correlation = f"{experiment_id}-{method}-{r}"
                events = case_events(
                    correlation, cases, region=region, method=method, seed=round_seed, source=str(cases_path),
                    producer="mt run", models=model_refs, band=band,
                    fixed_mr=fixed_mr if method == "fixed" else None,
                )  # fmt: skip
                t0 = time.perf_counter()
                stage = f"{method}, round {r + 1}/{rounds}"
                tick = functools.partial(on_progress, stage) if on_progress is not None else None
                outcome = await submit_cases_and_collect(daemon.bus, events, timeout=timeout, on_progress=tick)
                seconds = time.perf_counter() - t0
                # In a thread: drawing the round's GIFs must not stall the private daemon's agents on this loop.
                _, generation, _ = await asyncio.to_thread(
                    report_outcome, store, outcome, batch=correlation, seconds=seconds
                )
                rr = RoundResult(method, r, round_seed, correlation, generation, judged_cases(outcome), seconds)
                for j in rr.judged:
                    for v in j.verdicts:
                        if v.model not in model_names:
                            model_names.append(v.model)
                results.append(rr)
    summary = experiment_summary(
        results, model_names, experiment_id=experiment_id, source=str(cases_path), region=region,
        band=band or config.mt_judge.band, floor=config.mt_judge.floor, fixed_mr=fixed_mr, models_dir=models_dir,
    )  # fmt: skip
    summary["seconds"] = round(time.perf_counter() - started, 2)
    ref = write_experiment_report(
        store, report_ref=f"{experiment_id}/experiment.html", summary=summary, rounds=results, models=model_names
    )
    summary["report"] = str(store.local_path(ref))
    return Experiment(summary, results, store.local_path(ref), [str(p) for p in loaded.problems], summary_rules)


# -- proving the oracle on synthetic data ----------------------------------------------------------------------
ORACLE_TRIGGERS = {
    "red-light": "adds a red traffic light",
    "stop-sign": "adds a stop sign",
    "pedestrian": "adds a pedestrian crossing the road",
    "lead-vehicle": "adds a stopped vehicle ahead",
    "cyclist": "adds a cyclist crossing the road",
    "fog": "replaces clear weather with heavy fog",
    "rain": "replaces clear weather with heavy rain",
    "snow": "replaces clear weather with snow",
    "night": "replaces day with night",
}
"""Rules whose trigger a follow-up can add (or whose condition it can set), and the MR's wording for it."""


def oracle_mr(rule: str) -> MRFields:
    """The fixed MR that adds a rule's trigger (or sets its condition) on any road and expects the ego to slow
    down."""
    from tools.rules.mr import parse_gherkin

    if rule not in ORACLE_TRIGGERS:
        raise BadInputError(f"no oracle MR for the rule {rule!r}; use {', '.join(ORACLE_TRIGGERS)}")
    return parse_gherkin(
        f"Given the ego-vehicle approaches a road When drivemt {ORACLE_TRIGGERS[rule]} "
        "Then the ego-vehicle should slow down"
    )


async def prove_oracle(
    config: DrivemtConfig,
    rule: str,
    root: Path,
    *,
    train_cases: int = 120,
    test_cases: int = 60,
    epochs: float | None = 5.0,
    seconds: float = 600.0,
    model: str = "epoch",
    seed: int = 3,
    height: int = 80,
    width: int = 160,
    focus_share: float = 0.5,
    roads: Sequence[str] | None = ("straight",),
    embedder: Embedder | None = None,
) -> Experiment:
    """Train a model on data where the scripted driver obeys ``rule`` (``clean-<model>``) and one where it ignores
    it (``faulty-<model>``), both rich in the rule's situations, then judge both on fresh cases with the fixed MR
    that adds the rule's trigger, and with ``null`` (false alarms).

    A sound oracle flags the faulty model far more often than the clean one, and neither on ``null``. The proof is
    partly circular: scenes, sprites and the driver's reaction come from one drawing code. By default every scene
    is a plain straight road (``roads``), a controlled experiment: what else sets the speed (the road kind) is
    held fixed, so five passes over the data (about a minute on a CPU) are enough for the rule's effect to show.
    Training is bounded by passes (``epochs``), not by time, so a slower machine trains the same models;
    ``seconds`` caps each model's training all the same (``epochs=None``: train for ``seconds`` only).
    """

    from runners.ads.train import train_zoo
    from tools.mt.synth.dataset import synth_dataset

    mr = oracle_mr(rule)
    models = root / "models"

    def train() -> None:
        for tag, ignore in (("clean", []), ("faulty", [rule])):
            data = root / f"train-{tag}"
            synth_dataset(
                data, cases=train_cases, seed=seed, width=320, height=160, ignore=ignore, focus=[rule],
                focus_share=focus_share, roads=roads,
            )  # fmt: skip
            train_zoo(
                data, models, models=(model,), time_limit_s=seconds, epochs=epochs, prefix=f"{tag}-", seed=seed,
                height=height, width=width,
            )  # fmt: skip
        # Plain scenes without the rule's trigger: the follow-up is what adds it.
        synth_dataset(
            root / "test", cases=test_cases, seed=seed + 1000, width=320, height=160, focus=[rule], focus_share=0.0,
            roads=roads,
        )  # fmt: skip

    await asyncio.to_thread(train)
    cfg = config.model_copy(update={"artifacts_dir": root / "runs"})
    return await run_experiment_in_process(
        cfg, root / "test", models, region="germany", methods=["fixed", "null"], fixed_mr=mr, seed=seed,
        embedder=embedder,
    )  # fmt: skip
