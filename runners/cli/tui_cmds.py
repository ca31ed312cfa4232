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
    """Watch the daemon's agents work (events, agents, errors) and type traffic rules to submit.

    Ctrl+R switches the region of typed rules, Ctrl+L clears the view, Ctrl+Q quits.
    """
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url, log_level="error")
    from runners.clients.discovery import find_bus_url
    from tui.app import DrivemtApp

    try:
        url = find_bus_url(cfg)
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    bus = make_bus(cfg, name="drivemt-tui", url=url)
    DrivemtApp(bus, show_heartbeats=heartbeats).run()
