"""``drivemt demo``: the three pipelines on the embedded defaults, with one index page over their reports.

The parts run in this order, so that results show within a minute of the install:

1. **Rules -> MRs**: the bundled German and California sample rules become validated metamorphic relations.
2. **MRs -> follow-up cases** (AutoMT): synthetic driving cases (drawn once per data dir) are described, each
   gets a follow-up made by the least-used fitting MR, the follow-ups' validity is checked, and the Judge runs
   two light driving models (PilotNet and Epoch, trained on synthetic cases on first use and kept in the data
   dir) on each valid follow-up and its source.
3. **Crash reports -> scenarios**: four bundled CIREN crash narratives are extracted, simulated in MetaDrive
   with every vehicle in turn as the ego (K seeded variants), judged and reported.
4. **Traffic lights**: a synthetic labelled dataset is drawn, a YOLO detector is trained on it on the CPU
   (once; later demos reuse it from the data dir), its test split is augmented with TIGAUG's twelve
   transformations and the detector's relations are checked.

Everything goes through a daemon: a running one on the data dir (or ``--nats-url``), else an embedded one.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer

from runners.cli._common import (
    ConfigOpt,
    DataDirOpt,
    LogLevelOpt,
    NatsUrlOpt,
    QdrantUrlOpt,
    connect_bus,
    console,
    err_console,
    fail,
    make_config,
    progress_bar,
    run_async,
)

__all__ = ["register"]

PARTS = ("rules", "mt", "crashes", "tl")
MT_DEMO_CASES = 24
MT_DEMO_MODELS = ("pilotnet", "epoch")
MT_DEMO_TRAIN_CASES = 120
MT_DEMO_TRAIN_SECONDS = 90.0


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("demo")(demo)


def _sample_crashes() -> list[Any]:
    from tools.crash.files import CrashReport

    text = resources.files("tools.data").joinpath("sample_crashes.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [CrashReport(case_id=r["case_id"], summary=r["summary"]) for r in rows]


def _demo_detector(cfg: Any, train_seconds: float | None, images: int) -> tuple[Path, str]:
    """The synthetic dataset and the trained demo detector, made once per data dir and recipe."""
    from runners.detectors import demo_training_recipe, load_detector, train_detector
    from runners.detectors.evaluation import evaluate_detector
    from tools.common.models import config_hash
    from tools.tl.datasets import MANIFEST_NAME, load_dataset
    from tools.tl.synth import synth_tl

    recipe = demo_training_recipe()
    train_seconds = train_seconds or recipe.time_limit_s
    n_train = images or recipe.n_train
    key = config_hash({"recipe": recipe.model_dump(mode="json"), "seconds": train_seconds, "n_train": n_train})
    root = cfg.data_dir / "demo" / f"tl-{key}"
    data = root / "synth"
    if not (data / MANIFEST_NAME).is_file():
        err_console.print(f"drawing the synthetic traffic-light dataset ({n_train} training images) in {data}")
        with progress_bar("synthetic images") as update:
            synth_tl(
                data,
                n_train=n_train,
                n_val=recipe.n_val,
                n_test=recipe.n_test,
                width=recipe.width,
                height=recipe.height,
                seed=recipe.seed,
                settings=recipe.synth,
                progress=update,
            )
    weights = root / "detector" / "yolo.pt"  # where train_detector("yolo", ..., root / "detector") writes them
    if not weights.is_file():
        err_console.print(
            f"training the demo YOLO detector on the CPU for up to {train_seconds:.0f} s "
            "(first demo on this data dir only; later demos reuse it)"
        )
        ds = load_dataset(data)
        with progress_bar("training (%)") as update:
            train_detector(
                "yolo",
                ds,
                root / "detector",
                epochs=recipe.epochs,
                imgsz=recipe.imgsz,
                time_limit_s=train_seconds,
                seed=recipe.seed,
                yolo=recipe.yolo,
                progress=lambda _msg, frac: update(round(frac * 100), 100),
            )
        score = evaluate_detector(load_detector(f"yolo:{weights}"), ds, split="test").map
        (root / "detector" / "score.json").write_text(json.dumps({"map_5095_test": score}), encoding="utf-8")
    score_file = root / "detector" / "score.json"
    score = json.loads(score_file.read_text())["map_5095_test"] if score_file.is_file() else float("nan")
    console.print(f"demo detector: yolo:{weights} (mAP@[.5:.95] {score:.3f} on the synthetic test split)")
    return data, f"yolo:{weights}"


def _write_index(path: Path, links: list[tuple[str, str, str]]) -> Path:
    import html

    items = "\n".join(
        f'<li><a href="{html.escape(Path(p).resolve().as_uri())}">{html.escape(t)}</a> — {html.escape(d)}</li>'
        for t, p, d in links
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "<!doctype html><meta charset='utf-8'><title>drivemt demo</title>"
        "<body style='font:15px system-ui;margin:2rem auto;max-width:900px'>"
        f"<h1>drivemt demo</h1><ul>{items}</ul></body>",
        encoding="utf-8",
    )
    return path


def demo(
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    qdrant_url: QdrantUrlOpt = None,
    parts: Annotated[
        str, typer.Option(help="Comma-separated parts to run: rules, mt, crashes, tl.")
    ] = "rules,mt,crashes,tl",
    variants: Annotated[int, typer.Option(help="Seeded variants per ego in the crash part (SAFE's K).", min=1)] = 5,
    workers: Annotated[
        int, typer.Option(help="Simulator processes of an embedded daemon (default: CPU cores).", min=0)
    ] = 0,
    tl_train_seconds: Annotated[
        float | None,
        typer.Option(
            help="Training budget of the demo detector, seconds (first demo on a data dir only). The default 420 s "
            "keeps a first demo under 10 minutes here (measured: mAP@[.5:.95] 0.64 on the synthetic test split); "
            "the demo recipe's 720 s gives about 0.72."
        ),
    ] = 420.0,
    tl_train_images: Annotated[
        int, typer.Option(help="Synthetic training images (0: the demo recipe's number).", hidden=True)
    ] = 0,
    mt_train_seconds: Annotated[
        float,
        typer.Option(help="Training budget of the demo's driving models, seconds (first demo only).", hidden=True),
    ] = MT_DEMO_TRAIN_SECONDS,
    log_level: LogLevelOpt = None,
) -> None:
    """Run drivemt's three pipelines on the embedded defaults and write one page linking their reports.

    rules: bundled traffic rules -> validated metamorphic relations. mt: synthetic driving cases -> follow-up
    cases by those MRs, checked for validity (AutoMT). crashes: bundled crash reports -> MetaDrive
    scenarios, each vehicle in turn the ego, judged. tl: a synthetic traffic-light set, a detector trained on it
    on the CPU (cached in the data dir), its test images augmented with TIGAUG's 12 transformations and judged.
    If a daemon already runs on the data dir (or --nats-url is given) the work goes to it instead.
    """
    chosen = [p.strip() for p in parts.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in PARTS]
    if unknown or not chosen:
        raise fail(f"unknown part(s) {', '.join(unknown) or '(none)'}: use {', '.join(PARTS)}")
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url, qdrant_url=qdrant_url, log_level=log_level)
    agents = cfg.agents.model_copy(deep=True)
    agents.sim_runner.copies = workers if workers > 0 else max(1, min(os.cpu_count() or 1, 4))
    cfg = cfg.model_copy(update={"agents": agents})
    started = time.perf_counter()
    links: list[tuple[str, str, str]] = []
    failed: list[str] = []

    async def run_on(bus: Any) -> None:
        # Rules and crashes first: a newcomer sees their results within a minute. The traffic-light part
        # trains its detector on first use (minutes on a CPU), so it comes last; the AutoMT part's two driving
        # models train (first use only) while the rules run.
        models_task = (
            asyncio.ensure_future(asyncio.to_thread(_demo_models, cfg, mt_train_seconds)) if "mt" in chosen else None
        )
        if "rules" in chosen:
            summary = await _rules_part(bus)
            links.append(_finish_rules(cfg, summary))
            if summary.counts()["missing"]:
                failed.append("some rules got no result in time")
        if "mt" in chosen:
            mt_link, ok = await _mt_part(bus, cfg, models_task)
            links.append(mt_link)
            if not ok:
                failed.append("some driving cases got no follow-up result in time")
        if "crashes" in chosen:
            batch = await _crashes_part(bus, variants)
            link, ok = _finish_crashes(cfg, batch)
            if link:
                links.append(link)
            if not ok:
                failed.append("some crash cases got no verdict in time")
        if "tl" in chosen:
            tl_inputs = await asyncio.to_thread(_demo_detector, cfg, tl_train_seconds, tl_train_images)
            from tools.common.artifacts import LocalArtifactStore

            link, ok = _finish_tl(cfg, await _tl_part(bus, tl_inputs, LocalArtifactStore(cfg.runs_dir)))
            if link:
                links.append(link)
            if not ok:
                failed.append("the traffic-light part did not finish")

    async def main() -> None:
        from bus import NoDaemonError
        from bus.connection import redact_url
        from runners.clients.discovery import find_bus_url

        try:
            url = find_bus_url(cfg)
        except NoDaemonError:
            url = None
        if url is not None:
            err_console.print(f"using the running daemon at {redact_url(url)}")
            async with connect_bus(cfg, name="drivemt-demo", url=url) as bus:
                await run_on(bus)
            return
        from runners.host.daemon import Daemon

        err_console.print(f"starting the embedded daemon in {cfg.data_dir}")
        async with Daemon(cfg) as daemon:
            assert daemon.bus is not None
            await run_on(daemon.bus)

    run_async(main)
    index = _write_index(cfg.runs_dir / "demo.html", links)
    console.print(f"\n[bold]demo finished in {time.perf_counter() - started:.0f} s[/]; all reports: [bold]{index}[/]")
    if failed:
        raise fail("; ".join(failed))


async def _rules_part(bus: Any) -> Any:
    from runners.cli.rules_cmds import _sample_rules
    from runners.clients.rules import submit_and_collect

    with progress_bar("sample rules") as update:
        return await submit_and_collect(bus, _sample_rules(), timeout=600, on_progress=update, source="bundled samples")


def _demo_models(cfg: Any, seconds: float = MT_DEMO_TRAIN_SECONDS) -> Path:
    """The demo's two light driving models (PilotNet and Epoch), trained once per data dir on synthetic cases."""
    import shutil

    from runners.ads.train import train_zoo
    from tools.mt.synth.dataset import synth_dataset

    root = cfg.data_dir / "demo" / f"ads-{'-'.join(MT_DEMO_MODELS)}-{MT_DEMO_TRAIN_CASES}-{seconds:.0f}s"
    models = root / "models"
    if (models / "training.json").is_file():
        return models
    err_console.print(
        f"training the demo's driving models ({', '.join(MT_DEMO_MODELS)}) on {MT_DEMO_TRAIN_CASES} synthetic cases "
        f"for {seconds:.0f} s on the CPU (first demo on this data dir only; the whole zoo: "
        "drivemt ads train)"
    )
    data = root / "train"
    if not (data / "manifest.json").is_file():
        synth_dataset(data, cases=MT_DEMO_TRAIN_CASES, seed=1, width=320, height=160)
    partial = root / "models.partial"
    shutil.rmtree(partial, ignore_errors=True)
    train_zoo(data, partial, models=MT_DEMO_MODELS, time_limit_s=seconds, seed=0)
    partial.rename(models)
    return models


async def _mt_part(bus: Any, cfg: Any, models_task: Any) -> tuple[tuple[str, str, str], bool]:
    from runners.ads.pool import import_models
    from runners.cli.mt_cmds import print_experiment, print_figures
    from runners.clients.mt import case_submissions, report_outcome, submit_cases_and_collect
    from runners.host.experiment import experiment_summary, judged_cases
    from tools.common.artifacts import LocalArtifactStore
    from tools.mt.experiment import RoundResult, write_experiment_report
    from tools.mt.synth.dataset import synth_dataset

    started = time.perf_counter()
    cases_dir = cfg.data_dir / "demo" / f"mt-cases-{MT_DEMO_CASES}"
    if not (cases_dir / "manifest.json").is_file():
        with progress_bar("synthetic driving cases") as update:
            await asyncio.to_thread(synth_dataset, cases_dir, cases=MT_DEMO_CASES, seed=0, progress=update)
    store = LocalArtifactStore(cfg.runs_dir)
    models = await models_task
    batch, events, _ = case_submissions(
        store, cases_dir, region="germany", method="automt", producer="demo", models=import_models(store, models)
    )
    with progress_bar("follow-up cases, judged") as update:
        outcome = await submit_cases_and_collect(bus, events, timeout=900, on_progress=update)
    seconds = time.perf_counter() - started
    _, figures, _ = report_outcome(store, outcome, batch=batch, seconds=seconds)
    print_figures("automt", figures, None)
    rounds = [RoundResult("automt", 0, 0, batch, figures, judged_cases(outcome), seconds)]
    names = sorted({v.model for j in rounds[0].judged for v in j.verdicts})
    summary = experiment_summary(
        rounds, names, experiment_id=batch, source=str(cases_dir), region="germany", band=cfg.mt_judge.band,
        floor=cfg.mt_judge.floor, models_dir=models,  # (90 s of CPU training may not beat a constant)
    )  # fmt: skip
    summary["seconds"] = round(seconds, 1)
    weak = summary["weak_models"]
    ref = write_experiment_report(
        store, report_ref=f"{batch}/experiment.html", summary=summary, rounds=rounds, models=names
    )
    summary["report"] = str(store.local_path(ref))
    print_experiment(summary)
    console.print()
    rates = summary["methods"]["automt"]["violation_rate"]
    text = (
        f"{figures['valid']} valid follow-ups of {figures['cases']} cases ({figures['validation_rate']:.0%}), "
        f"{figures['distinct_manipulations']} distinct manipulations; violation rate "
        + ", ".join(f"{m} {r:.0%}" for m, r in rates.items())
        + (f" (models no better than a constant: {', '.join(weak)})" if weak else "")
    )
    return ("MRs → follow-up driving cases, judged (AutoMT)", summary["report"], text), outcome.complete()


async def _crashes_part(bus: Any, variants: int) -> Any:
    from runners.clients.crash import submit_crashes
    from tools.crash.models import SimOptions

    with progress_bar("crash runs") as update:
        return await submit_crashes(
            bus,
            _sample_crashes(),
            simulate=SimOptions(variants=variants),
            timeout=1800,
            on_progress=lambda done, total, _msg: update(done, total),
            source="bundled samples",
        )


async def _tl_part(bus: Any, tl_inputs: tuple[Path, str], store: Any) -> Any:
    from bus import TLDatasetSubmitted
    from bus.events import TLDatasetPayload
    from runners.clients.tl import import_detectors, wait_for_tl

    data, detector = tl_inputs
    detectors = import_detectors(store, [detector])  # the Judge loads detectors from the artefact store
    event = TLDatasetSubmitted(
        producer="demo",
        payload=TLDatasetPayload(
            dataset=str(data), split="test", detectors=detectors, fraction=0.5, seed=0, name="synthetic"
        ),
    )
    with progress_bar("traffic lights") as update:
        return await wait_for_tl(bus, event, timeout=1800, on_progress=update)


def _finish_rules(cfg: Any, summary: Any) -> tuple[str, str, str]:
    from runners.cli.rules_cmds import _plain, _print_summary, _report_rows, _write_jsonl
    from tools.common.report import write_rules_report

    rows = _report_rows(summary)
    run_dir = cfg.runs_dir / summary.correlation_id
    _write_jsonl(run_dir / "results.jsonl", [_plain(r) for r in rows])
    path = write_rules_report(
        run_dir / "report.html",
        rows=rows,
        correlation_id=summary.correlation_id,
        seconds=summary.seconds,
        provenance=summary.provenance.model_dump(mode="json") if summary.provenance else None,
    )
    _print_summary(summary, rows)
    console.print(f"rules report: [bold]{path}[/]\n")
    c = summary.counts()
    return ("Traffic rules → metamorphic relations", str(path), f"{c['accepted']} accepted of {len(rows)} rules")


def _finish_crashes(cfg: Any, batch: Any) -> tuple[tuple[str, str, str] | None, bool]:
    from runners.cli.crash_cmds import _finish_batch
    from tools.common.artifacts import RunLayout

    try:
        totals = _finish_batch(cfg.runs_dir, batch, json_out=False, timeout=1800)
    except typer.Exit:
        return None, False
    return (
        (
            "Crash reports → simulated scenarios",
            str(cfg.runs_dir / RunLayout.crash_report(batch.correlation_id)),
            f"{totals['reproduced']} of {totals['reproducible']} crashes reproduced, {totals['violations']} violations "
            f"in {totals['runs']} runs",
        ),
        True,
    )


def _finish_tl(cfg: Any, outcome: Any) -> tuple[tuple[str, str, str] | None, bool]:
    for line in outcome.lines(cfg.runs_dir):
        console.print(line, highlight=False)
    if outcome.verdict is None or not outcome.verdict.payload.report:
        return None, False
    v = outcome.verdict.payload
    total = sum(sum(x.values()) for x in v.violations.values())
    report = str(cfg.runs_dir / v.report)
    return ("Traffic-light detector under TIGAUG", report, f"{total} violations in {v.pairs} pairs"), True
