"""``drivemt crash extract`` and ``drivemt eval crashes``: crash reports -> scenario DSL, and its accuracy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.table import Table

from runners.cli._common import console, err_console, fail
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


def _extract_all(path: Path) -> list[tuple[str, Any, str | None]]:
    """(case id, scenario or None, error) for every case under ``path``, with a progress bar."""
    from tools.crash_extract import OfflineCrashExtractor, find_cases, read_case

    try:
        folders = find_cases(path)
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    extractor = OfflineCrashExtractor()
    out: list[tuple[str, Any, str | None]] = []
    with Progress(console=err_console, transient=True) as progress:
        task = progress.add_task("extracting", total=len(folders))
        for folder in folders:
            try:
                out.append((folder.name, extractor.extract(read_case(folder)), None))
            except DrivemtError as exc:
                out.append((folder.name, None, str(exc)))
            progress.advance(task)
    return out


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
) -> None:
    """Turn crash narratives into the scenario DSL with the offline extractor (offline:crash-rules).

    A case that cannot be read or holds no crash narrative gets an `error` string; the rest go on.
    """
    if format_ not in {"jsonl", "safe"}:
        raise fail(f"unknown --format {format_!r}: use jsonl or safe")
    results = _extract_all(input_)
    if format_ == "safe":
        import yaml

        out.mkdir(parents=True, exist_ok=True)
        for case_id, scenario, _ in results:
            if scenario is not None:
                (out / f"{case_id}.yaml").write_text(
                    yaml.safe_dump(scenario.to_safe(), sort_keys=False), encoding="utf-8"
                )
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for case_id, scenario, error in results:
                row = {"case_id": case_id, "scenario": scenario.to_dict() if scenario else None, "error": error}
                fh.write(json.dumps(row) + "\n")
    errors = [(c, e) for c, _, e in results if e]
    console.print(f"{len(results) - len(errors)} of {len(results)} case(s) extracted -> {out}")
    for case_id, error in errors:
        err_console.print(f"[red]{case_id}[/]: {error}", highlight=False)


@eval_app.command("crashes")
def eval_crashes(
    directory: CasesArg,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object of fractions.")] = False,
) -> None:
    """Score extracted scenarios against each case's gold.yaml, as SAFE's RQ1 counts.

    Road network: road type and every lane and way count the gold gives; actors: the vehicles and their
    coarse types; env: time and weather (Clear counts as Sunny); overall: all three.
    """
    import yaml

    from tools.crash_scoring import CrashScoreReport, score_case

    report = CrashScoreReport()
    for case_id, scenario, _ in _extract_all(directory):
        gold_path = (directory / case_id if directory.name != case_id else directory) / "gold.yaml"
        if not gold_path.is_file():
            err_console.print(f"[yellow]{case_id}[/]: no gold.yaml, not scored")
            continue
        report.cases.append(
            score_case(scenario, yaml.safe_load(gold_path.read_text(encoding="utf-8")), case_id=case_id)
        )
    if json_out:
        print(json.dumps(report.as_dict()))
        return
    table = Table(title=f"{directory.name}: {report.n} cases (offline:crash-rules)", title_justify="left")
    table.add_column("part")
    table.add_column("drivemt", justify="right")
    table.add_column("SAFE (GPT-4o)", justify="right")
    for name, safe in (("road_network", "93.8%"), ("actors", "80.0%"), ("env", "100.0%"), ("overall", "80.0%")):
        table.add_row(name, f"{report.fraction(name):.1%}", safe)
    console.print(table)
    for case in report.cases:
        if not case.overall:
            console.print(f"  {case.case_id}: " + "; ".join(case.differences), highlight=False)
