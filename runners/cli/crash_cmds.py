"""``drivemt crash extract`` and ``drivemt eval crashes``: crash reports -> scenario DSL, and its accuracy."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Container
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.table import Table

from runners.cli._common import (
    ConfigOpt,
    DataDirOpt,
    LogLevelOpt,
    NatsUrlOpt,
    bus_artifacts,
    connect_bus,
    console,
    err_console,
    fail,
    make_config,
    progress_bar,
    run_async,
)
from runners.cli.eval_cmds import eval_app
from tools.errors import DrivemtError

__all__ = ["register"]

crash_app = typer.Typer(help="Crash reports -> simulated scenarios (SAFE).", no_args_is_help=True)

CasesArg = Annotated[
    Path,
    typer.Argument(help="A case folder (summary.txt, optional sketch.jpg) or a folder of case folders.", exists=True),
]


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(crash_app, name="crash")
    from runners.cli._common import submit_app

    submit_app.command("crash")(submit_crash)


def _extract_all(path: Path, config: Path | None = None) -> tuple[list[tuple[str, Any, str | None, str | None]], str]:
    """(case id, scenario or None, error, the extractor that produced the scenario) for every case under ``path``,
    and the configured extractor's name.

    The configured crash model (``llm.crash_extractor``, or the shorthand ``llm.model``) reads the reports when
    there is one, with the offline rules as its fallback, exactly as the CrashExtractor agent does; otherwise
    the offline rules (``offline:crash-rules``).
    """
    import asyncio

    from agents.crash.extractor import CrashExtractorAgent
    from runners.config import api_key_for
    from tools.common.llm import build_model_client, crash_extractor_model
    from tools.common.models import Provenance
    from tools.crash.extract import OFFLINE_CRASH_EXTRACTOR
    from tools.crash.files import find_cases, read_case
    from tools.crash.llm_extractor import LLMCrashExtractor
    from tools.crash.templates import packaged_templates

    cfg = make_config(config=config)
    try:
        folders = find_cases(path)
        model = crash_extractor_model(cfg.llm)
        llm = (
            LLMCrashExtractor(model_client=build_model_client(model, api_key=api_key_for(model)), label=model.label)
            if model is not None
            else None
        )
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    agent = CrashExtractorAgent(templates=None, provenance=Provenance(config_hash=cfg.hash, ontology_hash=""), llm=llm)
    templates = packaged_templates()
    out: list[tuple[str, Any, str | None, str | None]] = []

    async def run_all() -> None:
        with Progress(console=err_console, transient=True) as progress:
            task = progress.add_task("extracting", total=len(folders))
            for folder in folders:
                try:
                    scenario, name, _models = await agent.extract(read_case(folder), templates)
                    out.append((folder.name, scenario, None, name))
                except DrivemtError as exc:
                    out.append((folder.name, None, str(exc), None))
                progress.advance(task)

    asyncio.run(run_all())
    return out, llm.name if llm is not None else OFFLINE_CRASH_EXTRACTOR


def _extractor_counts(
    results: list[tuple[str, Any, str | None, str | None]], cases: Container[str] | None = None
) -> Counter[str]:
    """How many scenarios each extractor produced (of ``cases`` only, when given)."""
    return Counter(
        name
        for case_id, scenario, _, name in results
        if scenario is not None and name and (cases is None or case_id in cases)
    )


def _extracted_by(results: list[tuple[str, Any, str | None, str | None]], configured: str) -> str:
    """Who extracted the scenarios: the configured extractor's name, or how many each extractor did when the offline
    rules stood in for a model whose answer was unusable."""
    counts = _extractor_counts(results)
    if set(counts) <= {configured}:
        return configured
    return ", ".join(
        f"{n} by {name}" + ("" if name == configured else " (the model failed or its answer was unusable)")
        for name, n in counts.most_common()
    )


@crash_app.command("extract")
def crash_extract(
    input_: CasesArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file (or, with --format safe, a folder).")],
    format_: Annotated[
        str,
        typer.Option(
            "--format", help="jsonl: one object per case with its DSL; safe: DIR/<case id>.yaml in gold.yaml layout."
        ),
    ] = "jsonl",
    config: ConfigOpt = None,
) -> None:
    """Turn crash narratives into the scenario DSL: the configured crash model (--config, llm.crash_extractor) or the
    offline rules (offline:crash-rules).

    A case that cannot be read or holds no crash narrative gets an `error` string; the rest go on.
    """
    if format_ not in {"jsonl", "safe"}:
        raise fail(f"unknown --format {format_!r}: use jsonl or safe")
    results, extractor = _extract_all(input_, config)
    if format_ == "safe":
        import yaml

        out.mkdir(parents=True, exist_ok=True)
        written = set()
        for case_id, scenario, _, _ in results:
            if scenario is not None:
                (out / f"{case_id}.yaml").write_text(
                    yaml.safe_dump(scenario.to_safe(), sort_keys=False), encoding="utf-8"
                )
                written.add(f"{case_id}.yaml")
        if older := sorted(p.name for p in out.glob("*.yaml") if p.name not in written):
            err_console.print(
                f"[yellow]warning:[/] {len(older)} other .yaml file(s) in {out} are not from this run: "
                f"{', '.join(older[:5])}{' ...' if len(older) > 5 else ''}",
                highlight=False,
            )
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for case_id, scenario, error, name in results:
                row = {
                    "case_id": case_id,
                    "scenario": scenario.to_dict() if scenario else None,
                    "error": error,
                    "extractor": name,
                }
                fh.write(json.dumps(row) + "\n")
    errors = [(c, e) for c, _, e, _ in results if e]
    by = _extracted_by(results, extractor)
    by = f"by {by}" if by == extractor else f"({by})"
    console.print(f"{len(results) - len(errors)} of {len(results)} case(s) extracted {by} -> {out}")
    for case_id, error in errors:
        err_console.print(f"[red]{case_id}[/]: {error}", highlight=False)


@eval_app.command("crashes")
def eval_crashes(
    directory: CasesArg,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object of fractions.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Score extracted scenarios against each case's gold.yaml, as SAFE's RQ1 counts.

    Road network: road type and every lane and way count the gold gives; actors: the vehicles and their
    coarse types; env: time and weather (Clear counts as Sunny); overall: all three.
    """
    import yaml

    from tools.crash.extract import OFFLINE_CRASH_EXTRACTOR
    from tools.crash.scoring import CrashScoreReport, constant_answer, score_case, score_safe

    report = CrashScoreReport()
    results, extractor = _extract_all(directory, config)
    golds: dict[str, Any] = {}
    for case_id, _, error, _ in results:
        if error is not None:
            err_console.print(f"[yellow]{case_id}[/]: no scenario, scored as a miss: {error}", highlight=False)
    for case_id, scenario, _, _ in results:
        gold_path = (directory / case_id if directory.name != case_id else directory) / "gold.yaml"
        if not gold_path.is_file():
            err_console.print(f"[yellow]{case_id}[/]: no gold.yaml, not scored")
            continue
        try:
            gold = yaml.safe_load(gold_path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            err_console.print(
                f"[yellow]{case_id}[/]: gold.yaml is not readable YAML, not scored ({exc})".splitlines()[0]
            )
            continue
        if not isinstance(gold, dict) or not isinstance(gold.get("Road network", {}), dict):
            err_console.print(f"[yellow]{case_id}[/]: gold.yaml is not a SAFE annotation (a mapping), not scored")
            continue
        golds[case_id] = gold
        report.cases.append(score_case(scenario, gold, case_id=case_id))
    if not golds:
        raise fail(f"{directory}: no case has a readable gold.yaml: nothing to score (see shared/data/crashes)")
    rows = {"drivemt": report}
    if extractor == OFFLINE_CRASH_EXTRACTOR and len(golds) > 1:
        # The offline lexicon was written with development cases in view: leave-one-out extracts each case
        # without the phrases only its own summary holds; the constant answer ignores the report.
        from tools.crash.evaluation import leave_one_out

        reports = [r for r in _reports(directory) if r.case_id in golds]
        for name, strict in (("leave-one-out", False), ("leave-one-out, strict", True)):
            scenarios = leave_one_out(reports, strict=strict)
            rows[name] = CrashScoreReport(
                cases=[score_case(s, golds[r.case_id], case_id=r.case_id) for r, s in zip(reports, scenarios, strict=True)]
            )  # fmt: skip
        constant = constant_answer(list(golds.values()))
        rows["constant"] = CrashScoreReport(
            cases=[score_safe(constant, gold, case_id=cid) for cid, gold in golds.items()]
        )
    if json_out:
        # Who extracted the scored scenarios (the offline rules stand in for a model that failed): the figures are theirs.
        extracted_by = _extractor_counts(results, golds)
        print(
            json.dumps(
                {
                    **report.as_dict(),
                    "extracted_by": dict(extracted_by),
                    **{k: v.as_dict() for k, v in rows.items() if k != "drivemt"},
                }
            )
        )
        return
    table = Table(
        title=f"{directory.name}: {report.n} cases ({_extracted_by(results, extractor)})", title_justify="left"
    )
    table.add_column("part")
    headers = {"leave-one-out": "LOO", "leave-one-out, strict": "LOO strict"}
    for name in rows:
        table.add_column(headers.get(name, name), justify="right")
    table.add_column("SAFE (GPT-4o)", justify="right")
    for name, safe in (("road_network", "93.8%"), ("actors", "80.0%"), ("env", "100.0%"), ("overall", "80.0%")):
        table.add_row(name, *(f"{r.fraction(name):.1%}" for r in rows.values()), safe)
    console.print(table)
    if len(rows) > 1:
        console.print(
            "drivemt: in-sample where these are the development cases; LOO (leave-one-out): each case without the "
            "lexicon phrases only its own summary holds (forms of a label's own word, such as 'snowing' for Snowy, "
            "kept); LOO strict: those dropped too; constant: the most common gold answer, whatever the report"
        )
    for case in report.cases:
        if not case.overall:
            console.print(f"  {case.case_id}: " + "; ".join(case.differences), highlight=False)
    if "leave-one-out" in rows:
        for case in rows["leave-one-out"].cases:
            if not case.overall:
                console.print(f"  leave-one-out {case.case_id}: " + "; ".join(case.differences), highlight=False)


def _sim_options(policies: list[str], variants: int, duration: float, simulator: str, render: bool, seed: int) -> Any:
    from pydantic import ValidationError

    from tools.crash.models import SimOptions

    try:
        return SimOptions(
            simulator=simulator,  # type: ignore[arg-type]
            policies=policies,  # type: ignore[arg-type]
            variants=variants,
            duration_s=duration,
            render=render,
            seed=seed,
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
        raise fail(f"bad simulation options: {problems}") from exc


def _reports(path: Path) -> list[Any]:
    from tools.crash.files import find_cases, read_case

    try:
        return [read_case(folder) for folder in find_cases(path)]
    except DrivemtError as exc:
        raise fail(str(exc)) from exc


PolicyOpt = Annotated[
    list[str],
    typer.Option("--ego-policy", "-p", help="Ego policy: idm or ppo (repeat for both; each is run in turn)."),
]
VariantsOpt = Annotated[int, typer.Option("--variants", "-k", help="Seeded variants per ego and policy (SAFE's K).")]
DurationOpt = Annotated[float, typer.Option("--duration", help="Simulated seconds per run.")]
SimulatorOpt = Annotated[
    str, typer.Option("--simulator", help="metadrive (built in) or beamng (needs BeamNG.tech; else writes files).")
]
RenderOpt = Annotated[bool, typer.Option("--render/--no-render", help="Draw a PNG and a GIF of every run.")]


@crash_app.command("run")
def crash_run(
    input_: CasesArg,
    ego_policy: PolicyOpt = ["idm"],  # noqa: B006 - typer reads list defaults as given
    variants: VariantsOpt = 5,
    workers: Annotated[
        int,
        typer.Option("--workers", "-w", help="Simulator processes sharing the run queue (default: CPU cores).", min=0),
    ] = 0,
    duration: DurationOpt = 20.0,
    simulator: SimulatorOpt = "metadrive",
    render: RenderOpt = True,
    seed: Annotated[int, typer.Option(help="Seed of variant 0 (variant k uses seed + k).")] = 0,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the whole batch.", min=1.0)] = 3600.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the batch totals as one JSON object.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Extract, simulate and judge crash reports: every vehicle in turn as the ego, K seeded variants each.

    Runs on a private embedded bus with --workers simulator processes; records, top-down PNGs, GIFs and
    an HTML report go to <data dir>/runs/<batch>/. A crash is reproduced when, in some run, the ego's
    first collision with another vehicle is between vehicles the report says collided.
    """
    import os

    cfg = make_config(config=config, data_dir=data_dir, log_level=log_level)
    options = _sim_options(ego_policy, variants, duration, simulator, render, seed)
    reports = _reports(input_)
    n_workers = workers if workers > 0 else max(1, min(os.cpu_count() or 1, 8))

    async def main() -> Any:
        from runners.host.inprocess import run_crashes_in_process

        with progress_bar(f"{len(reports)} case(s), runs") as update:
            return await run_crashes_in_process(
                cfg,
                reports,
                simulate=options,
                workers=n_workers,
                timeout=timeout,
                on_progress=lambda done, total, _msg: update(done, total),
                source=str(input_),
            )

    batch = run_async(main)
    _finish_batch(cfg.runs_dir, batch, json_out=json_out, timeout=timeout)


def _finish_batch(runs_dir: Path, batch: Any, *, json_out: bool, timeout: float) -> dict[str, Any]:
    """Write the batch report, print the batch, and return its totals (fails when cases lack a verdict)."""
    from tools.common.artifacts import LocalArtifactStore
    from tools.crash.report import batch_totals, load_batch, write_batch_report

    store = LocalArtifactStore(runs_dir)
    cases = load_batch(store, batch.correlation_id)
    report = store.local_path(write_batch_report(store, batch.correlation_id, cases=cases)) if cases else None
    totals = batch_totals(cases)
    totals["seconds"] = round(batch.seconds, 2)
    totals["extraction_errors"] = len(batch.errors)
    if json_out:
        print(json.dumps({**totals, "report": str(report) if report else None, "batch": batch.correlation_id}))
    else:
        table = Table(title=f"batch {batch.correlation_id}", title_justify="left")
        for col in ("case", "road", "runs", "crash reproduced", "by", "violations", "note"):
            table.add_column(col, overflow="fold")
        for case_id in batch.case_ids:
            if case_id in batch.errors:
                table.add_row(case_id, "", "", "", "", "", f"[red]{batch.errors[case_id].payload.reason}[/]")
                continue
            v = batch.verdicts.get(case_id)
            sc = batch.scenarios.get(case_id)
            road = sc.payload.scenario.road_network.road_type if sc else ""
            if v is None:
                table.add_row(case_id, road, "", "", "", "", "[yellow]no verdict in time[/]")
                continue
            p = v.payload
            table.add_row(
                case_id,
                road,
                str(p.runs),
                "[green]yes[/]"
                if p.reproduced
                else "no"
                if sc is None or len(sc.payload.scenario.actors) > 1
                else "one vehicle",
                ", ".join(sorted({r.rsplit("-v", 1)[0] for r in p.reproduced_by}))[:40],
                str(p.violations),
                "; ".join(p.errors)[:80],
            )
        console.print(table)
        aside = [
            f"{k} {what}"
            for k, what in (
                (totals["simulated"] - totals["reproducible"], "with one vehicle"),
                (len(batch.case_ids) - totals["simulated"], "not simulated"),
            )
            if k
        ]
        console.print(
            f"{totals['reproduced']} of {totals['reproducible']} reported crashes reproduced"
            + (f" ({', '.join(aside)})" if aside else "")
            + f"; {totals['violations']} violations in "
            f"{totals['runs']} runs; {totals['seconds_per_run']:.2f} s per run "
            f"(+{totals['render_seconds_per_run']:.2f} s drawing); batch {batch.seconds:.0f} s"
        )
        if report:
            console.print(f"report: [bold]{report}[/]")
    if not batch.complete:
        missing = [c for c in batch.case_ids if c not in batch.verdicts and c not in batch.errors]
        raise fail(f"{len(missing)} case(s) without a verdict after {timeout:.0f} s: {', '.join(missing)}")
    return totals


def submit_crash(
    input_: CasesArg,
    ego_policy: PolicyOpt = ["idm"],  # noqa: B006 - typer reads list defaults as given
    variants: VariantsOpt = 5,
    duration: DurationOpt = 20.0,
    simulator: SimulatorOpt = "metadrive",
    render: RenderOpt = True,
    extract_only: Annotated[
        bool, typer.Option("--extract-only", help="Extract the scenario, do not simulate.")
    ] = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for every verdict and print the batch.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.", min=1.0)] = 3600.0,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
) -> None:
    """Publish crash reports into a running daemon; it extracts, simulates, judges and reports them."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url)
    options = None if extract_only else _sim_options(ego_policy, variants, duration, simulator, render, 0)
    reports = _reports(input_)

    async def main() -> Any:
        from runners.clients.crash import make_crash_submissions, submit_crashes, upload_sketches

        async with connect_bus(cfg, name="drivemt-submit") as bus:
            with bus_artifacts(cfg, bus) as objects:
                correlation, events = make_crash_submissions(reports, simulate=options, source=str(input_))
                if objects is not None:  # sketches where the report of workers elsewhere finds them
                    await asyncio.to_thread(upload_sketches, objects, correlation, reports)
                if not wait:
                    await bus.publish_many(events)
                    return correlation
                with progress_bar("runs") as update:
                    batch = await submit_crashes(
                        bus,
                        reports,
                        simulate=options,
                        timeout=timeout,
                        on_progress=lambda done, total, _msg: update(done, total),
                        source=str(input_),
                        submissions=(correlation, events),
                    )
                if objects is not None:  # run records and pictures, here
                    await asyncio.to_thread(objects.pull, correlation)
                return batch

    result = run_async(main)
    if not wait:
        console.print(f"submitted {len(reports)} crash report(s); batch [bold]{result}[/]")
        return
    _finish_batch(cfg.runs_dir, result, json_out=False, timeout=timeout)
