"""``drivemt dead-letters list|retry`` and ``drivemt events schema``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from runners.cli._common import ConfigOpt, DataDirOpt, NatsUrlOpt, connect_bus, console, fail, make_config, run_async
from runners.config import DrivemtConfig

__all__ = ["register"]

dl_app = typer.Typer(help="Events no agent could handle.", no_args_is_help=True)
events_app = typer.Typer(help="Event formats.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(dl_app, name="dead-letters")
    app.add_typer(events_app, name="events")


async def _with_bus(cfg: DrivemtConfig, fn: Any) -> Any:

    async with connect_bus(cfg, name="drivemt-ops") as bus:
        return await fn(bus)


@dl_app.command("list")
def dead_letters_list(
    limit: Annotated[int, typer.Option(help="Most shown.", min=1)] = 100,
    newest: Annotated[bool, typer.Option("--newest", help="Show the newest rather than the oldest.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
) -> None:
    """List dead letters: which consumer gave up, on what, and why."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url)
    from runners.clients.ops import count_deadletters, list_deadletters

    async def both(bus: Any) -> tuple[list[Any], int]:
        return await list_deadletters(bus, limit=limit, newest=newest), await count_deadletters(bus)

    items, total = run_async(lambda: _with_bus(cfg, both))
    if json_out:
        for seq, ev in items:
            print(json.dumps({"seq": seq, **ev.model_dump(mode="json")}, ensure_ascii=False))
        return
    shown = f"{len(items)} of {total}" if len(items) < total else str(total)
    which = "newest" if newest else "oldest"
    title = f"{shown} dead letter(s)" + (f" (the {which}; --limit shows more)" if len(items) < total else "")
    table = Table(title=title, title_justify="left")
    for col in ("seq", "time", "consumer", "subject", "deliveries", "reason", "data"):
        table.add_column(col, overflow="fold")
    for seq, ev in items:
        p = ev.payload
        table.add_row(
            str(seq),
            ev.time.strftime("%Y-%m-%d %H:%M:%S"),
            p.consumer,
            p.original_subject,
            str(p.deliveries),
            p.reason[:120],
            p.data[:60],
        )
    console.print(table)


@dl_app.command("retry")
def dead_letters_retry(
    seqs: Annotated[list[int] | None, typer.Argument(help="Sequences to retry (see `list`).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Retry every dead letter.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
) -> None:
    """Send dead letters back to their subjects (after fixing what made them fail)."""
    if not seqs and not all_:
        raise fail("name sequences to retry, or --all")
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url)
    from runners.clients.ops import retry_deadletters

    done = run_async(lambda: _with_bus(cfg, lambda bus: retry_deadletters(bus, None if all_ else list(seqs or []))))
    console.print(f"retried {len(done)} dead letter(s)" + (f": {', '.join(map(str, done))}" if done else ""))
    missing = sorted(set(seqs or []) - set(done)) if not all_ else []
    if missing:
        raise fail(
            f"not retried: {', '.join(map(str, missing))} (no such dead letter, or one kept only in part: see "
            "`drivemt dead-letters list`)"
        )


@events_app.command("schema")
def events_schema(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to this file instead of stdout.")] = None,
) -> None:
    """JSON Schema of every event, for tools that inject events."""
    from bus import event_json_schemas, registry
    from bus.subjects import Subjects

    s = Subjects()
    subjects = {t: str(getattr(s, m.subject_name)) for t, m in sorted(registry.models.items()) if m.subject_name}
    subjects |= {
        "error": s.all_errors,
        "deadletter": s.all_deadletters,
        "agent.heartbeat": s.all_heartbeats,
        "agents.message": s.all_agent_messages,
    }
    doc = {
        "subjects": subjects,
        "events": event_json_schemas(),
    }
    text = json.dumps(doc, indent=2)
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
        console.print(f"schemas of {len(doc['events'])} event types -> {out}")
    else:
        print(text)
