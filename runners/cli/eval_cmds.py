"""``drivemt eval rules``: accuracy of extracted MRs against reference MRs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from runners.cli._common import ConfigOpt, LogLevelOpt, console, err_console, fail, make_config, run_async

__all__ = ["register"]

eval_app = typer.Typer(help="Measure extraction quality against references.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(eval_app, name="eval")


def _jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, object) of each non-empty line of a JSONL file; an unreadable file or line fails cleanly."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise fail(f"{path}: cannot read: {exc.strerror or exc}") from exc
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise fail(f"{path}:{lineno}: not JSON: {exc.msg}") from exc
    return rows


def _load_references(path: Path) -> list[dict[str, Any]]:
    from pydantic import ValidationError

    from tools.rules.models import MRFields

    rows = []
    for lineno, obj in _jsonl(path):
        if not isinstance(obj, dict) or "text" not in obj or "reference_parsed" not in obj:
            raise fail(
                f"{path}:{lineno}: expected an object with 'text' and 'reference_parsed' (see shared/data/rules)"
            )
        refs = obj["reference_parsed"]
        if not isinstance(obj["text"], str) or not isinstance(refs, list) or not refs:
            raise fail(f"{path}:{lineno}: 'text' must be a string and 'reference_parsed' a non-empty list of MRs")
        for ref in refs:
            try:
                MRFields.model_validate(ref)
            except ValidationError as exc:
                raise fail(
                    f"{path}:{lineno}: a reference MR needs road_type, verb, manipulation and expected_behavior "
                    f"({exc.error_count()} problem(s), e.g. {exc.errors()[0]['msg']})"
                ) from exc
        rows.append({**obj, "id": str(obj.get("id") or f"{path.stem}-{lineno}")})  # (ids as `rules extract` gives)
    if not rows:
        raise fail(f"{path}: holds no rules")
    return rows


def _who_answered(rows: list[dict[str, Any]]) -> str:
    """Which parsers and validators produced the scored MRs, and how many rules got none (a miss each)."""
    parsers = Counter(str(r["parser"]) for r in rows if r.get("parser"))
    validators = Counter(str(r["validator"]) for r in rows if r.get("validator"))
    no_mr = [r for r in rows if not r.get("road_type")]
    rejected = sum(1 for r in no_mr if str(r.get("error", "")).startswith("rejected"))
    failed = len(no_mr) - rejected

    def named(c: Counter[str]) -> str:
        return ", ".join(f"{k} ({n})" for k, n in c.most_common()) or "none"

    return (
        f"answered by parser {named(parsers)}; validator {named(validators)}; "
        f"no MR: {rejected} rejected, {failed} without a result (each counts as a miss)"
    )


@eval_app.command("rules")
def eval_rules(
    file: Annotated[
        Path, typer.Argument(help="JSONL with text, region and reference_parsed per rule.", exists=True, dir_okay=False)
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object of fractions.")] = False,
    predictions: Annotated[
        Path | None, typer.Option(help="Score this `rules extract` output instead of extracting again.", exists=True)
    ] = None,
    region: Annotated[str, typer.Option(help="Region for rules that name none.")] = "germany",
    config: ConfigOpt = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Score extracted MRs per field and as a triple (road type, manipulation, behaviour).

    A field is right when its canonical form (the longest ontology term contained in it, else the
    normalised phrase) equals that field of some reference MR; the triple is right when one
    reference MR matches all three together.
    """
    cfg = make_config(config=config, log_level=log_level)
    from tools.rules.models import MRFields, TrafficRule
    from tools.rules.ontology import load_ontology
    from tools.rules.scoring import baseline_prediction, score_rules

    refs = _load_references(file)
    rules = [TrafficRule(id=r["id"], text=r["text"], region=r.get("region") or region) for r in refs]
    if predictions is not None:
        if predictions.is_dir():
            raise fail(f"{predictions}: a folder; --predictions takes the JSONL that `rules extract -o` writes")
        by_id = {}
        for lineno, row in _jsonl(predictions):
            if not isinstance(row, dict) or not row.get("id"):
                raise fail(f"{predictions}:{lineno}: expected an object with an 'id' (as `rules extract -o` writes)")
            if row.get("road_type") and not all(row.get(k) for k in ("verb", "manipulation", "expected_behavior")):
                raise fail(f"{predictions}:{lineno}: an MR needs road_type, verb, manipulation and expected_behavior")
            by_id[str(row["id"])] = row
        if not set(by_id) & {r.id for r in rules}:
            raise fail(f"{predictions}: no id matches a rule of {file.name}: were they extracted from this file?")
        rows = [by_id.get(r.id, {"id": r.id}) for r in rules]
    else:
        from runners.host.inprocess import run_rules_in_process

        async def main() -> Any:
            return await run_rules_in_process(cfg, rules, source=str(file))

        rows = run_async(main).rows()
    ontology = load_ontology(cfg.ontology_files)

    def predicted(row: dict[str, Any]) -> MRFields | None:
        if not row.get("road_type"):
            return None
        return MRFields(
            road_type=row["road_type"],
            verb=row["verb"],
            manipulation=row["manipulation"],
            expected_behavior=row["expected_behavior"],
        )

    items = [
        (r.id, r.region, predicted(row), [MRFields(**p) for p in ref["reference_parsed"]])
        for r, row, ref in zip(rules, rows, refs, strict=True)
    ]
    report = score_rules(ontology, items)
    base = score_rules(ontology, [(rid, reg, baseline_prediction(), rf) for rid, reg, _, rf in items])
    answered = _who_answered(rows)
    if json_out:
        print(json.dumps(report.as_dict()))
        err_console.print(
            f"constant baseline (any roads / a pedestrian / slow down): {json.dumps(base.as_dict())}", soft_wrap=True
        )
        err_console.print(answered, soft_wrap=True, highlight=False)
        return
    table = Table(title=f"{file.name}: {report.n} rules", title_justify="left")
    table.add_column("field")
    table.add_column("drivemt", justify="right")
    table.add_column("constant baseline", justify="right")
    for name in ("road_type", "manipulation", "expected_behavior", "triple"):
        table.add_row(name, f"{report.fraction(name):.1%}", f"{base.fraction(name):.1%}")
    console.print(table)
    console.print(answered, highlight=False)
    wrong = [r for r in report.rules if not r.triple]
    if wrong:
        console.print(f"\n{len(wrong)} rule(s) not matching a reference triple:")
        for r in wrong:
            console.print(f"  {r.id}: predicted {r.predicted}", highlight=False)
