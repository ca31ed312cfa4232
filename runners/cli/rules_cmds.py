"""``drivemt submit rules`` and ``drivemt rules extract`` (and the helpers ``drivemt demo`` shares)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from runners.cli._common import (
    ConfigOpt,
    DataDirOpt,
    LogLevelOpt,
    NatsUrlOpt,
    check_regions,
    connect_bus,
    console,
    err_console,
    fail,
    make_config,
    progress_bar,
    run_async,
    submit_app,
)

__all__ = ["register"]

RegionOpt = Annotated[str, typer.Option("--region", "-r", help="Ontology region: germany, california, or core.")]

rules_app = typer.Typer(help="Traffic rules -> metamorphic relations.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(rules_app, name="rules")


def _read_rules(path: Path | None, text: str | None, region: str) -> list[Any]:
    from tools.errors import BadInputError
    from tools.rules.files import read_rules_file
    from tools.rules.models import TrafficRule

    if (path is None) == (text is None):
        raise fail("give a rules FILE or --text, not both")
    if text is not None:
        return [TrafficRule(id="rule-1", text=text, region=region)]
    assert path is not None
    try:
        rules = list(read_rules_file(path, region=region))
    except BadInputError as exc:
        raise fail(str(exc)) from exc
    if not rules:
        raise fail(f"{path} holds no rules")
    return rules


@submit_app.command("rules")
def submit_rules(
    file: Annotated[
        Path | None,
        typer.Argument(
            help=".txt (one rule per line) or .jsonl (objects with text, optional id).", exists=True, dir_okay=False
        ),
    ] = None,
    text: Annotated[str | None, typer.Option("--text", "-t", help="One rule's text.")] = None,
    region: RegionOpt = "germany",
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the results and print the MRs or errors.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.", min=1.0)] = 600.0,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
) -> None:
    """Publish traffic rules into a running daemon (found by --nats-url or the data dir's daemon state)."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url)
    rules = _read_rules(file, text, region)  # (the daemon checks the regions: its ontology may hold more)

    async def main() -> Any:
        from runners.clients.rules import make_submissions, submit_and_collect, unique_ids

        async with connect_bus(cfg, name="drivemt-submit") as bus:
            if not wait:
                correlation, events = make_submissions(unique_ids(rules), source=str(file or "--text"))
                await bus.publish_many(events)
                return correlation
            with progress_bar("rules") as update:
                return await submit_and_collect(
                    bus, rules, timeout=timeout, on_progress=update, source=str(file or "--text")
                )

    result = run_async(main)
    if not wait:
        console.print(f"submitted {len(rules)} rule(s); batch [bold]{result}[/]")
        return
    _print_results(result.rows())
    for line in result.failure_lines():
        err_console.print(f"[yellow]warning:[/] {line}", highlight=False)
    counts = result.counts()
    if counts["missing"]:
        raise fail(f"{counts['missing']} rule(s) without a result after {timeout:.0f} s")


def _print_results(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        if row.get("gherkin"):
            console.print(
                f"[green]{row['id']}[/] {row['gherkin']}  [dim](score {row['score']:.2f})[/]", highlight=False
            )
        else:
            console.print(f"[red]{row['id']}[/] {row.get('error')}", highlight=False)


@rules_app.command("extract")
def rules_extract(
    input: Annotated[
        Path,
        typer.Argument(
            help=".txt (one rule per line) or .jsonl (objects with text, optional id).", exists=True, dir_okay=False
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output JSONL, one object per rule.")],
    region: RegionOpt = "germany",
    config: ConfigOpt = None,
    store_dir: Annotated[
        Path | None, typer.Option(help="Keep the MR store in this folder (temporary otherwise).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for all results.", min=1.0)] = 1800.0,
    log_level: LogLevelOpt = None,
) -> None:
    """Extract MRs from rules with the same agents on a private embedded bus; no daemon needed."""
    cfg = make_config(config=config, log_level=log_level)
    rules = _read_rules(input, None, region)
    check_regions(cfg, {r.region for r in rules})
    if out.is_dir():
        raise fail(f"--out {out} is a folder; give the JSONL file to write")

    async def main() -> Any:
        from runners.host.inprocess import run_rules_in_process

        with progress_bar("rules") as update:
            return await run_rules_in_process(
                cfg, rules, timeout=timeout, on_progress=update, store_dir=store_dir, source=str(input)
            )

    summary = run_async(main)
    _write_jsonl(out, summary.rows())
    counts = summary.counts()
    err_console.print(
        f"{len(rules)} rules: {counts['accepted']} accepted, {counts['rejected']} rejected, "
        f"{counts['error'] + counts['missing']} errors in {summary.seconds:.1f} s -> {out}"
    )
    for line in summary.failure_lines():
        err_console.print(f"[yellow]warning:[/] {line}", highlight=False)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _sample_rules() -> list[Any]:
    from tools.rules.files import read_rules_file

    rules: list[Any] = []
    base = resources.files("tools.data")
    for name, region in (("sample_rules_germany.jsonl", "germany"), ("sample_rules_california.jsonl", "california")):
        with resources.as_file(base.joinpath(name)) as path:
            rules.extend(read_rules_file(Path(path), region=region))
    return rules


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in {"checks"}}


def _report_rows(summary: Any) -> list[dict[str, Any]]:
    from bus import MRAccepted, MRRejected

    rows = []
    for rule, row in zip(summary.rules, summary.rows(), strict=True):
        res = summary.results.get(rule.id)
        row["kind"] = res.kind if res else "missing"
        if res is not None and isinstance(res.event, MRAccepted):
            row["checks"] = [c.model_dump() for c in res.event.payload.checks]
            row["candidates"] = [
                {"gherkin": c.candidate.gherkin, "score": c.score, "parser": c.candidate.parser, "reasons": c.reasons}
                for c in res.event.payload.candidates
            ]
        elif res is not None and isinstance(res.event, MRRejected):
            row["candidates"] = [
                {"gherkin": c.candidate.gherkin, "score": c.score, "parser": c.candidate.parser, "reasons": c.reasons}
                for c in res.event.payload.candidates
            ]
        rows.append(row)
    return rows


def _print_summary(summary: Any, rows: list[dict[str, Any]]) -> None:
    table = Table(title="sample rules -> metamorphic relations", title_justify="left", show_lines=False)
    table.add_column("rule")
    table.add_column("outcome")
    table.add_column("metamorphic relation / reason", overflow="fold")
    table.add_column("score", justify="right")
    colours = {"accepted": "green", "rejected": "yellow", "error": "red", "missing": "red"}
    for row in rows:
        kind = row["kind"]
        table.add_row(
            row["id"],
            f"[{colours[kind]}]{kind}[/]",
            row.get("gherkin") or row.get("error") or "",
            f"{row['score']:.2f}" if row.get("score") is not None else "",
        )
    console.print(table)
    c = summary.counts()
    rate = len(rows) / summary.seconds if summary.seconds else 0.0
    console.print(
        f"{len(rows)} rules: [green]{c['accepted']} accepted[/], [yellow]{c['rejected']} rejected[/], "
        f"[red]{c['error'] + c['missing']} errors[/] in {summary.seconds:.1f} s ({rate:.1f} rules/s)"
    )
    for line in summary.failure_lines():
        console.print(f"[yellow]warning:[/] {line}", highlight=False)
    if summary.provenance is not None:
        console.print(f"[dim]models: {', '.join(summary.provenance.models)}[/]")
