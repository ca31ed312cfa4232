"""``drivemt tui``: the terminal UI on a running daemon's bus."""

from __future__ import annotations

from typing import Annotated

import typer

from runners.cli._common import ConfigOpt, DataDirOpt, NatsUrlOpt, fail, make_bus, make_config
from tools.errors import DrivemtError

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("tui")(tui)


def tui(
    heartbeats: Annotated[bool, typer.Option(help="List heartbeats in the conversation view too.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
) -> None:
    """The console: watch the daemon's agents work and inject rules, crash reports, datasets and driving cases.

    F2 Conversation (threads by submission tag, filters, F8 pauses), F3 Violations (evidence drawn in the
    terminal, o opens it), F4 Agents (work queues, dead letters: Ctrl+T retries), F5 Memory (MR search), F6 Batches;
    Alt+1..5 or a click do the same. Ctrl+R switches the region of typed rules, Ctrl+Q quits.
    """
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url, log_level="error")
    from runners.clients.discovery import find_bus_url
    from tui.app import DrivemtApp

    try:
        url = find_bus_url(cfg)
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    bus = make_bus(cfg, name="drivemt-tui", url=url)
    from tools.common.artifacts import LocalArtifactStore

    # /cases puts frames where the daemon of this data dir reads them; evidence refs point into the same folder.
    store = LocalArtifactStore(cfg.runs_dir)
    DrivemtApp(bus, show_heartbeats=heartbeats, case_store=store, artifacts_root=cfg.runs_dir).run()
