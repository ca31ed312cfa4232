"""``drivemt config show``: the effective configuration and where each value came from."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from runners.cli._common import ConfigOpt, DataDirOpt, NatsUrlOpt, QdrantUrlOpt, console, fail
from runners.config import ConfigError, explain_config, secrets_status

__all__ = ["register"]

config_app = typer.Typer(help="drivemt's configuration.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object: values, sources, secrets.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    qdrant_url: QdrantUrlOpt = None,
) -> None:
    """Print the effective configuration, each value with its source (default, file, environment, command line).

    Precedence, later winning: defaults < the YAML file (--config) < DRIVEMT_* environment variables (nested keys
    joined by __, e.g. DRIVEMT_LLM__PROVIDER) < command-line options. Secrets are masked; API keys are read from the
    environment only and shown as set or not set.
    """
    try:
        cfg, values = explain_config(config, data_dir=data_dir, nats_url=nats_url, qdrant_url=qdrant_url)
    except ConfigError as exc:
        raise fail(str(exc)) from exc
    secrets = secrets_status()
    if json_out:
        nested: dict[str, object] = {}
        for v in values:
            node = nested
            *parents, leaf = v.key.split(".")
            for part in parents:
                node = node.setdefault(part, {})  # type: ignore[assignment]
            node[leaf] = v.value
        print(
            json.dumps(
                {
                    "values": nested,
                    "sources": {v.key: v.source for v in values},
                    "secrets": {k: "set" if on else "not set" for k, on in secrets.items()},
                    "config_hash": cfg.hash,
                },
                default=str,
            )
        )
        return
    table = Table(title="effective configuration", title_justify="left")
    for col in ("setting", "value", "source"):
        table.add_column(col, overflow="fold")
    for v in values:
        style = "" if v.source == "default" else "bold"
        table.add_row(v.key, json.dumps(v.value, default=str), v.source, style=style)
    console.print(table)
    console.print(
        "secrets (environment only, never shown): "
        + ", ".join(f"{k} {'[green]set[/]' if on else 'not set'}" for k, on in secrets.items())
    )
