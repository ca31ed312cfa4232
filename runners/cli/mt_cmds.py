"""AutoMT's driving cases: ``drivemt data synth-driving``, ``drivemt data show`` and ``drivemt submit cases``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from runners.cli._common import (
    ConfigOpt,
    DataDirOpt,
    LogLevelOpt,
    NatsUrlOpt,
    bus_artifacts,
    check_regions,
    connect_bus,
    console,
    data_app,
    err_console,
    fail,
    make_config,
    progress_bar,
    run_async,
    stage_bars,
    submit_app,
)
from tools.errors import DrivemtError

__all__ = ["register"]

mt_app = typer.Typer(help="AutoMT: follow-up test cases from MRs, and their validity.", no_args_is_help=True)
MethodOpt = Annotated[str, typer.Option("--method", "-m", help="How MRs are chosen: automt, manual, random or null.")]


def register(app: typer.Typer) -> None:
    """Add the commands to the app (``data`` and ``submit`` are shared groups)."""
    data_app.command("synth-driving")(synth_driving)
    data_app.command("show")(show_case)
    submit_app.command("cases")(submit_cases)
    app.add_typer(mt_app, name="mt")
    mt_app.command("generate")(mt_generate)
    mt_app.command("coverage")(mt_coverage)
    mt_app.command("run")(mt_run)


def _method(method: str) -> str:
    from tools.mt.models import METHODS

    if method not in METHODS:
        raise fail(f"unknown method {method!r}: use {', '.join(METHODS)}")
    return method


def _band(band: str | None) -> None:
    from typing import get_args

    from tools.mt.models import BandPolicy

    if band is not None and band not in get_args(BandPolicy):
        raise fail(f"unknown band {band!r}: use {', '.join(get_args(BandPolicy))}")


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise fail(f"--size must be WIDTHxHEIGHT, e.g. 640x320, not {text!r}") from None
    return w, h


def synth_driving(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (manifest.json, cases/<id>/...).")],
    cases: Annotated[int, typer.Option("--cases", "-n", help="How many 10-frame cases.")] = 300,
    seed: Annotated[int, typer.Option(help="Seed of the whole set.")] = 0,
    size: Annotated[str, typer.Option(help="Frame size WIDTHxHEIGHT.")] = "640x320",
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore",
            help="A rule the driver ignores (a faulty driver): red-light, stop-sign, pedestrian, cyclist, "
            "lead-vehicle, school-zone, fog, rain, snow, night. Repeat for several.",
        ),
    ] = None,
    focus: Annotated[
        list[str] | None,
        typer.Option(
            "--focus",
            help="A rule whose situations a --focus-share of the cases show (the rest are plain random scenes): "
            "data rich in one rule, to train a model that obeys or ignores it. Repeat for several.",
        ),
    ] = None,
    focus_share: Annotated[float, typer.Option(help="Share of the cases that show a --focus rule.")] = 0.5,
    json_out: Annotated[bool, typer.Option("--json", help="Print the manifest's summary as JSON.")] = False,
) -> None:
    """Draw a synthetic front-camera driving dataset with ground truth, on the CPU, with nothing downloaded.

    Eight road types (straight, curve, intersection, T-junction, crosswalk, school zone, bus stop, railroad
    crossing), day, dusk and night, rain, fog and snow; a scripted driver that obeys the traffic rules from what
    the frames show sets each frame's speed (km/h) and steering (rad, left positive). The manifest says what each
    case contains and each rule's share of cases.
    """
    from tools.mt.synth.dataset import synth_dataset

    width, height = _size(size)
    try:
        with progress_bar("synthetic cases") as update:
            manifest = synth_dataset(
                out,
                cases=cases,
                seed=seed,
                width=width,
                height=height,
                ignore=ignore or [],
                focus=focus or [],
                focus_share=focus_share,
                progress=update,
            )
    except ValueError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        print(
            json.dumps(
                {
                    "out": str(out),
                    "cases": len(manifest.cases),
                    "shares": manifest.shares,
                    "seconds": manifest.seconds,
                    "frames_per_second": manifest.frames_per_second,
                    "ignore": manifest.ignore,
                }
            )
        )
        return
    table = Table(title=f"{len(manifest.cases)} cases -> {out}", title_justify="left")
    table.add_column("rule")
    table.add_column("cases with its trigger", justify="right")
    for rule, share in manifest.shares.items():
        table.add_row(rule + (" [red](ignored)[/]" if rule in manifest.ignore else ""), f"{share:.0%}")
    console.print(table)
    console.print(
        f"drawn at {manifest.frames_per_second:.0f} frames/s (writing excluded); {manifest.seconds:.1f} s in all"
    )


def show_case(
    case: Annotated[Path, typer.Argument(help="A case folder (with case.json), or a recording folder.")],
    index: Annotated[int, typer.Option(help="Which case of a recording (0-based).")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="The PNG to write (<case>.png here if unset).")
    ] = None,
) -> None:
    """Write a contact sheet PNG of a case: its frames with the ego's speed and steering, and its ground truth."""
    from tools.mt.loaders import load_cases
    from tools.mt.models import DrivingCase
    from tools.mt.sheet import contact_sheet
    from tools.mt.synth.dataset import SynthTruth
    from tools.tl.images import read_image, write_image

    try:
        if (case / "case.json").is_file():
            stored = DrivingCase.model_validate_json((case / "case.json").read_text(encoding="utf-8"))
            # frames are stored relative to the dataset (two levels up); a case folder copied elsewhere keeps them
            # beside its case.json
            root = case.resolve().parent.parent
            frames = [
                read_image(root / ref if (root / ref).is_file() else case / Path(ref).name) for ref in stored.frames
            ]
            ego, metadata, case_id = stored.ego, stored.metadata, stored.case_id
            truth_file = case / "truth.json"
            truths = SynthTruth.model_validate_json(truth_file.read_text()).frames if truth_file.is_file() else None
        else:
            result = load_cases(case)
            for problem in result.problems:
                err_console.print(f"[yellow]skipped[/] {problem}")
            if not 0 <= index < len(result.cases):
                raise fail(f"{case} holds {len(result.cases)} case(s); --index {index} is out of range")
            raw = result.cases[index]
            frames = [read_image(p) for p in raw.frame_paths]
            ego, metadata, case_id, truths = raw.ego, raw.metadata, raw.case_id, None
            extra = raw.extra_files.get("truth.json")
            if extra is not None:
                truths = SynthTruth.model_validate_json(extra.read_text()).frames
    except (DrivemtError, ValueError, OSError) as exc:
        raise fail(str(exc)) from exc
    sheet = contact_sheet(frames, ego, truths=truths, metadata=metadata, title=f"{case_id}  ({len(frames)} frames)")
    path = out or Path(f"{case_id}.png")
    write_image(path, sheet)
    console.print(f"contact sheet: [bold]{path}[/]")


def submit_cases(
    cases: Annotated[Path, typer.Argument(help="A recording or dataset: Udacity, A2D2, frames/+ego.csv, synthetic.")],
    region: Annotated[str, typer.Option("--region", "-r", help="Ontology region whose MRs apply.")] = "germany",
    method: MethodOpt = "automt",
    seed: Annotated[int, typer.Option(help="Seed of the draws and placements.")] = 0,
    stride: Annotated[int | None, typer.Option(help="Frames between cases of a long recording.")] = None,
    models: Annotated[
        Path | None,
        typer.Option(
            "--models",
            help="Driving models (a folder of adapter specs) the Judge runs on each follow-up "
            "(the daemon's mt_judge.models if unset).",
        ),
    ] = None,
    band: Annotated[
        str | None, typer.Option(help="The Judge's band: automt-paper, per-model or strict (the daemon's if unset).")
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for every case's verdict.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.", min=1.0)] = 1800.0,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
) -> None:
    """Publish driving test cases into a running daemon (their frames and the models go into its artefact store);
    it describes them, makes a follow-up of each by one MR (--method), checks its validity, and the Judge runs the
    driving models on each valid follow-up and its source."""
    from runners.ads.pool import import_models
    from runners.clients.mt import CaseResults, case_submissions, report_outcome, submit_cases_and_collect
    from tools.common.artifacts import LocalArtifactStore

    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url)
    _method(method)
    _band(band)

    started = time.perf_counter()

    async def main() -> tuple[str, int, list[str], CaseResults | None, dict[str, Any] | None, Path | None]:
        async with connect_bus(cfg, name="drivemt-submit") as bus:
            with bus_artifacts(cfg, bus) as objects:
                # Frames and models go where the daemon's agents read them: its runs folder, or the Object Store.
                store = objects or LocalArtifactStore(cfg.runs_dir)
                try:
                    model_refs = import_models(store, models) if models is not None else []
                except DrivemtError as exc:
                    raise fail(str(exc)) from exc
                correlation, events, result = case_submissions(
                    store, cases, region=region, method=method, seed=seed, stride=stride, models=model_refs, band=band
                )
                if not events:
                    raise fail(f"no usable case in {cases}: " + "; ".join(str(p) for p in result.problems[:5]))
                n = sum(len(e.payload.cases) for e in events)
                problems = [str(p) for p in result.problems]
                if not wait:
                    await bus.publish_many(events)
                    return correlation, n, problems, None, None, None
                with progress_bar("cases") as update:
                    outcome = await submit_cases_and_collect(bus, events, timeout=timeout, on_progress=update)
                _, figures, ref = report_outcome(
                    store, outcome, batch=correlation, seconds=time.perf_counter() - started
                )
                report = store.local_path(ref) if ref else None
                return correlation, n, problems, outcome, figures, report

    correlation, n, problems, outcome, figures, report = run_async(main)
    for problem in problems:
        err_console.print(f"[yellow]skipped[/] {problem}")
    console.print(f"submitted {n} driving case(s); batch [bold]{correlation}[/]")
    if outcome is not None and figures is not None:
        print_figures(method, figures, report)
        print_verdicts(outcome)
        if not outcome.complete():
            raise fail(f"{n - outcome.done()} case(s) without a result after {timeout:.0f} s")


def print_figures(method: str, figures: dict[str, Any], report: Path | None) -> None:
    """AutoMT's figures of a batch, one line each, and where its report is."""
    console.print(
        f"{method}: {figures['valid']} valid follow-ups of {figures['cases']} cases = "
        f"[bold]{figures['validation_rate']:.1%}[/] validation rate; {figures['distinct_manipulations']} distinct "
        f"manipulations; {figures['seconds']:.0f} s"
    )
    for name, rate in figures["checks"].items():
        measured = figures.get("checks_measured", {}).get(name, figures["followups"])
        shown = f"{rate:.1%} of {measured} follow-ups" if rate is not None else "none measured"
        if rate is not None and measured < figures["followups"]:
            shown += f" (skipped on {figures['followups'] - measured})"
        console.print(f"  {name.replace('_', ' ')}: {shown}")
    if report is not None:
        console.print(f"report: [bold]{report}[/]")


def print_verdicts(outcome: Any) -> None:
    """The Judge's totals of a submission: violations per model, and models that could not judge."""
    batch = outcome.batch
    if batch is not None:
        p = batch.payload
        rates = ", ".join(f"{m} {p.violations[m]} ({p.violation_rate[m]:.1%})" for m in sorted(p.violations))
        console.print(f"Judge: {p.valid} valid follow-ups judged; violations per model: {rates or 'no models'}")
    else:
        judged = sum(1 for o in outcome.outcomes.values() if o.judged and o.judged.payload.status == "judged")
        console.print(f"Judge: {judged} follow-up(s) judged")
    for e in outcome.model_errors:
        err_console.print(f"[yellow]model error[/] {e.payload.reason}")


def mt_generate(
    cases: Annotated[Path, typer.Argument(help="A recording or dataset: Udacity, A2D2, frames/+ego.csv, synthetic.")],
    rules: Annotated[
        Path | None, typer.Option("--rules", help="Traffic rules (.txt or .jsonl) whose MRs automt uses.")
    ] = None,
    region: Annotated[str, typer.Option("--region", "-r", help="Ontology region of the rules and cases.")] = "germany",
    method: MethodOpt = "automt",
    out: Annotated[Path, typer.Option("--out", "-o", help="Where the cases, follow-ups and report go.")] = Path(
        "mt-out"
    ),
    seed: Annotated[int, typer.Option(help="Seed of the draws and placements.")] = 0,
    generator: Annotated[
        str | None,
        typer.Option(
            "--generator",
            help="classical (CPU edits, synthetic scenes re-rendered) or diffusers (the model folders of "
            "generation.diffusers in the configuration, on a GPU); the configuration's choice if omitted.",
        ),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for every case.", min=1.0)] = 3600.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the figures as one JSON object.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Rules -> MRs -> descriptions -> follow-ups -> validity, in-process on a private bus.

    Prints the validation rate (valid follow-ups / cases), each check's pass rate, the distinct manipulations
    among valid follow-ups and the time; writes an HTML report with each source and follow-up side by side.
    """
    from runners.host.inprocess import run_generation_in_process
    from tools.rules.files import read_rules_file

    _method(method)
    if method == "automt" and rules is None:
        raise fail("the automt method draws from the MRs of --rules RULES.jsonl")
    cfg = make_config(config=config, data_dir=data_dir, log_level=log_level)
    cfg = cfg.model_copy(update={"artifacts_dir": out})
    if generator is not None:
        if generator not in ("classical", "diffusers"):
            raise fail(f"unknown generator {generator!r}: use classical or diffusers")
        generation = cfg.generation.model_copy(update={"generator": generator})
        cfg = cfg.model_copy(update={"generation": generation})
    try:
        rule_list = list(read_rules_file(rules, region=region)) if rules else []
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    if rules is not None and not rule_list:
        raise fail(f"{rules} holds no rules")
    check_regions(cfg, {region, *(r.region for r in rule_list)})

    async def main() -> Any:
        with progress_bar(f"{method} follow-ups") as update:
            return await run_generation_in_process(
                cfg,
                cases,
                region=region,
                method=method,
                rules=rule_list,
                seed=seed,
                timeout=timeout,
                on_progress=update,
            )

    run = run_async(main)
    figures = dict(run.figures)
    figures["method"] = method
    figures["generator"] = cfg.generation.generator
    figures["report"] = str(run.report) if run.report else None
    figures["batch"] = run.batch
    for problem in run.problems:
        err_console.print(f"[yellow]skipped[/] {problem}")
    if json_out:
        print(json.dumps(figures))
        return
    print_figures(method, figures, run.report)


def mt_coverage(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the contact sheet (coverage.png).")] = Path(
        "mt-coverage"
    ),
    json_out: Annotated[bool, typer.Option("--json", help="Print every term as JSON.")] = False,
) -> None:
    """List every "adds" and "replaces" term of the ontology (core, Germany, California) as rendered or not, with
    the reason, and write a contact sheet with one picture per rendered term."""
    import tempfile

    from tools.common.artifacts import LocalArtifactStore
    from tools.mt.coverage import coverage, coverage_sheet
    from tools.rules.ontology import load_ontology
    from tools.tl.images import write_image

    rows = coverage(load_ontology())
    rendered = sum(r.rendered for r in rows)
    with tempfile.TemporaryDirectory() as tmp:
        sheet = coverage_sheet(rows, LocalArtifactStore(tmp))
    path = write_image(out / "coverage.png", sheet)
    if json_out:
        print(
            json.dumps(
                {"rendered": rendered, "terms": len(rows), "sheet": str(path), "rows": [r.__dict__ for r in rows]}
            )
        )
        return
    table = Table(title=f"{rendered} of {len(rows)} terms rendered ({rendered / len(rows):.0%})", title_justify="left")
    for col in ("verb", "term", "regions", "rendered", "how / why"):
        table.add_column(col, overflow="fold")
    for r in rows:
        how = (r.how + (f" ({r.note})" if r.note else "")) if r.rendered else r.note
        table.add_row(r.verb, r.term, ",".join(r.regions), "[green]yes[/]" if r.rendered else "[red]no[/]", how)
    console.print(table)
    console.print(f"contact sheet: [bold]{path}[/]")


def mt_run(
    cases: Annotated[Path, typer.Argument(help="A recording or dataset: Udacity, A2D2, frames/+ego.csv, synthetic.")],
    models: Annotated[
        Path, typer.Option("--models", help="Driving models: a folder of adapter specs (drivemt ads train --out).")
    ],
    rules: Annotated[
        Path | None, typer.Option("--rules", help="Traffic rules (.txt or .jsonl) whose MRs automt uses.")
    ] = None,
    mr: Annotated[
        str | None,
        typer.Option(
            "--mr",
            help='One MR in Gherkin ("Given the ego-vehicle approaches ... When drivemt adds ... '
            'Then the ego-vehicle should slow down") applied to every case where it fits.',
        ),
    ] = None,
    region: Annotated[str, typer.Option("--region", "-r", help="Ontology region of the rules and cases.")] = "germany",
    method: Annotated[
        str | None,
        typer.Option(
            "--method",
            "-m",
            help="Comma-separated methods: automt, manual, random, null "
            "(all four with --rules; 'fixed' with --mr, to which null may be added).",
        ),
    ] = None,
    rounds: Annotated[int, typer.Option(help="Seeded rounds per method (the t-test needs two or more).")] = 1,
    band: Annotated[
        str | None, typer.Option(help="The Judge's band: automt-paper, per-model or strict (configuration's if unset).")
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Where cases, follow-ups, predictions and reports go.")
    ] = Path("mt-run"),
    seed: Annotated[int, typer.Option(help="Seed of the first round (round k uses seed + k).")] = 0,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for each round.", min=1.0)] = 3600.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the figures as one JSON object.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    log_level: LogLevelOpt = None,
) -> None:
    """AutoMT's experiment: generation, validity and the driving-model Judge for each method over seeded rounds.

    Prints each method's validation rate and check rates, each model's violation rate (violations on valid
    follow-ups / cases), the distinct manipulations, and a paired t-test between methods across rounds; writes
    an HTML report with the violating cases first.
    """
    from runners.host.experiment import run_experiment_in_process
    from tools.mt.models import METHODS
    from tools.rules.files import read_rules_file
    from tools.rules.mr import parse_gherkin

    if (rules is None) == (mr is None):
        raise fail('give either --rules RULES.jsonl (with --region) or --mr "GHERKIN TEXT"')
    if rounds < 1:
        raise fail("--rounds must be at least 1")
    _band(band)
    default = "fixed" if mr else ",".join(METHODS)
    methods = [m.strip() for m in (method or default).split(",") if m.strip()]
    allowed = (*METHODS, "fixed")
    for m in methods:
        if m not in allowed:
            raise fail(f"unknown method {m!r}: use {', '.join(allowed)}")
    if mr is not None:
        methods = ["fixed" if m == "automt" else m for m in methods]
    elif "fixed" in methods:
        raise fail("the fixed method needs --mr")
    methods = list(dict.fromkeys(methods))
    fixed = None
    try:
        if mr is not None:
            fixed = parse_gherkin(mr)
        rule_list = list(read_rules_file(rules, region=region)) if rules else []
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    if not models.exists():
        raise fail(f"--models {models} does not exist (train some with: drivemt ads train DATA --out {models})")
    cfg = make_config(config=config, data_dir=data_dir, log_level=log_level)
    cfg = cfg.model_copy(update={"artifacts_dir": out})

    async def main() -> Any:
        with stage_bars() as update:
            return await run_experiment_in_process(
                cfg, cases, models, region=region, methods=methods, rounds=rounds, rules=rule_list,
                fixed_mr=fixed, band=band, seed=seed, timeout=timeout, on_progress=update,  # type: ignore[arg-type]
            )  # fmt: skip

    run = run_async(main)
    for problem in run.problems:
        err_console.print(f"[yellow]skipped[/] {problem}")
    summary = run.summary
    if json_out:
        print(json.dumps(summary))
    else:
        print_experiment(summary)
    if summary["model_errors"] and not summary["models"]:
        raise fail(f"no driving model in {models} could judge a follow-up: " + "; ".join(summary["model_errors"][:3]))


def band_shown(summary: dict[str, Any]) -> str:
    """The band asked for, and the one the verdicts used when it differs (a fallback)."""
    used = [b for b in summary.get("bands_used", []) if b != summary["band"]]
    return summary["band"] + (f" (used: {', '.join(summary['bands_used'])})" if used else "")


def print_experiment(summary: dict[str, Any]) -> None:
    """The experiment's tables: methods x models, checks, t-tests, scene agreement, and the report's path."""
    models = summary["models"]
    table = Table(
        title=f"{summary['cases']} cases, {summary['rounds']} round(s), band {band_shown(summary)}: "
        "violation rate = violations on valid follow-ups / cases",
        title_justify="left",
    )
    table.add_column("method")
    table.add_column("valid", justify="right")
    table.add_column("distinct", justify="right")
    for m in models:
        table.add_column(m, justify="right")
    for method, f in summary["methods"].items():
        table.add_row(
            method, f"{f['validation_rate']:.1%}", str(f["distinct_manipulations"]),
            *(f"{f['violation_rate'][m]:.1%}" for m in models),
        )  # fmt: skip
    console.print(table)
    for method, f in summary["methods"].items():
        checks = ", ".join(
            f"{k.replace('_', ' ')} {v:.1%}" if v is not None else f"{k.replace('_', ' ')} none measured"
            for k, v in f["checks"].items()
        )
        console.print(f"  {method} checks: {checks}")
    if summary["tests"]:
        console.print(f"paired t-tests ({summary['reference']} vs each method, per model, across rounds):")
        for t in summary["tests"]:
            p = f"t={t['t']:.2f}, p={t['p']:.4f}" if t["p"] is not None else t["note"]
            console.print(
                f"  {t['a']} vs {t['b']}, {t['model']}: {t['mean_a']:.1%} vs {t['mean_b']:.1%} ({p})", highlight=False
            )
    a = summary["agreement"]
    if a["verdicts"]:
        console.print(
            f"scene truth: on {a['followups']} re-rendered follow-ups the scripted driver matched the MR in "
            f"{a['mr_matches_scene']:.1%}; {a['agreement']:.1%} of {a['verdicts']} verdicts agree with it "
            "(partly circular: scene, sprites and driver share one drawing code)"
        )
    for e in summary["model_errors"]:
        err_console.print(f"[yellow]model error[/] {e}")
    for w in summary.get("warnings", []):
        err_console.print(f"[bold yellow]warning:[/] {w}")
    console.print(f"{summary['seconds']:.0f} s; report: [bold]{summary['report']}[/]")
