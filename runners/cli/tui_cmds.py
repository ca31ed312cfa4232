"""``drivemt tui``: the terminal UI on a running daemon's bus (``--serve``: the same console in a browser)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from runners.cli._common import ConfigOpt, DataDirOpt, NatsUrlOpt, fail, make_bus, make_config
from tools.errors import DrivemtError

__all__ = ["register", "serve_command"]


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("tui")(tui)


def serve_command(*, heartbeats: bool, data_dir: Path | None, config: Path | None, nats_url: str | None) -> str:
    """The shell command that textual-serve runs for each browser session: this console, on the same bus. A bus given
    as --nats-url is passed on; a daemon found through the data dir's state file is found by each console the same
    way, so it takes that daemon's namespace, and its embedded server without bus.auth (which is for an external
    server), and follows the daemon across a restart."""
    args = [sys.executable, "-m", "runners.cli", "tui"]
    if nats_url is not None:
        args += ["--nats-url", nats_url]
    if heartbeats:
        args.append("--heartbeats")
    if data_dir is not None:
        args += ["--data-dir", str(Path(data_dir).resolve())]
    if config is not None:
        args += ["--config", str(Path(config).resolve())]
    return shlex.join(args)


def tui(
    heartbeats: Annotated[bool, typer.Option(help="List heartbeats in the conversation view too.")] = False,
    serve: Annotated[
        bool,
        typer.Option(
            help="Serve the console to web browsers (textual-serve) instead of drawing it here: each browser "
            "session gets its own console on the same daemon, so a team can watch one daemon."
        ),
    ] = False,
    host: Annotated[str, typer.Option(help="With --serve: the address to listen on (0.0.0.0 for every one).")] = (
        "localhost"
    ),
    port: Annotated[int, typer.Option(help="With --serve: the port to listen on.")] = 8000,
    public_url: Annotated[
        str | None, typer.Option(help="With --serve: the URL browsers use, when a proxy sits in front.")
    ] = None,
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

    try:
        url = find_bus_url(cfg)
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    if serve:
        from textual_serve.server import Server

        from bus.connection import redact_url

        command = serve_command(heartbeats=heartbeats, data_dir=data_dir, config=config, nats_url=cfg.nats_url)
        typer.echo(f"serving the console on http://{host}:{port} (bus {redact_url(url)}); Ctrl+C stops", err=True)
        Server(command, host=host, port=port, title="drivemt console", public_url=public_url).serve()
        return
    from tui.app import DrivemtApp

    bus = make_bus(cfg, name="drivemt-tui", url=url)
    from tools.common.artifacts import LocalArtifactStore

    # /cases puts frames where the daemon of this data dir reads them; evidence refs point into the same folder.
    store = LocalArtifactStore(cfg.runs_dir)
    app = DrivemtApp(bus, show_heartbeats=heartbeats, case_store=store, artifacts_root=cfg.runs_dir)
    app.run()
    if app.return_code:  # (it said why as it left)
        raise typer.Exit(app.return_code)
