"""Options and helpers shared by every command."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from runners.cli.logs import configure_logging
from runners.config import ConfigError, DrivemtConfig, load_config
from tools.errors import DrivemtError

if TYPE_CHECKING:
    from bus import Bus
    from runners.clients.discovery import DaemonState
    from tools.common.artifacts import ArtifactStore

__all__ = [
    "ConfigOpt",
    "DataDirOpt",
    "LogLevelOpt",
    "NatsUrlOpt",
    "QdrantUrlOpt",
    "bus_artifacts",
    "console",
    "err_console",
    "fail",
    "make_config",
    "progress_bar",
    "run_async",
    "stage_bars",
]

T = TypeVar("T")

console = Console()
err_console = Console(stderr=True)

DataDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="Data folder (JetStream, Qdrant, daemon state, runs). Default: a per-user folder.",
        envvar="DRIVEMT_DATA_DIR",
        show_envvar=False,
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="YAML configuration file.", exists=True, dir_okay=False, readable=True),
]
NatsUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--nats-url",
        help="Use this NATS server or cluster instead of the embedded one.",
        envvar="DRIVEMT_NATS_URL",
        show_envvar=False,
    ),
]
QdrantUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--qdrant-url",
        help="Use this Qdrant server instead of local mode.",
        envvar="DRIVEMT_QDRANT_URL",
        show_envvar=False,
    ),
]
LogLevelOpt = Annotated[
    str | None,
    typer.Option("--log-level", help="debug, info, warning or error.", case_sensitive=False),
]


submit_app = typer.Typer(help="Publish inputs into a running daemon.", no_args_is_help=True)
"""``drivemt submit ...``: each domain adds its command."""
data_app = typer.Typer(help="Data: synthetic datasets and looking at cases.", no_args_is_help=True)
"""``drivemt data ...``: each domain adds its command."""


def fail(message: str, *, code: int = 1) -> typer.Exit:
    """Print an error for people and return the exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def make_config(
    *,
    config: Path | None = None,
    data_dir: Path | None = None,
    nats_url: str | None = None,
    qdrant_url: str | None = None,
    log_level: str | None = None,
    default_level: str = "warning",
    default_format: str = "console",
    **extra: Any,
) -> DrivemtConfig:
    """Load the configuration with command-line overrides, and configure logging once.

    Commands log warnings for people by default; the daemon logs JSON at info. A level or format set
    in the config file or environment wins over these defaults, ``--log-level`` over everything.
    """
    try:
        cfg = load_config(
            config, data_dir=data_dir, nats_url=nats_url, qdrant_url=qdrant_url, log_level=log_level, **extra
        )
    except ConfigError as exc:
        raise fail(str(exc)) from exc
    level = cfg.log_level if "log_level" in cfg.model_fields_set else default_level
    fmt = cfg.log_format if "log_format" in cfg.model_fields_set else default_format
    configure_logging(level, fmt)  # type: ignore[arg-type]
    return cfg


def check_regions(cfg: DrivemtConfig, regions: Iterable[str]) -> None:
    """Fail cleanly, before any work starts, when a region is not one the configured ontology has (rather than one
    error per rule later)."""
    from tools.errors import OntologyError
    from tools.rules.ontology import load_ontology

    try:
        known = load_ontology(cfg.ontology_files).regions  # (what the in-process commands' private daemon loads)
    except OntologyError as exc:
        raise fail(str(exc)) from exc
    unknown = sorted({r for r in regions if r.strip().lower() not in known})
    if unknown:
        raise fail(f"unknown region(s) {', '.join(unknown)}; the ontology has: {', '.join(known)}")


def make_bus(cfg: DrivemtConfig, *, name: str, url: str | None = None) -> Bus:
    """The bus of the daemon a command talks to (the one place the CLI builds a connection).

    Args:
        cfg: The configuration (``--nats-url``, data dir, namespace, stream settings).
        name: Connection name shown by the server, e.g. ``drivemt-submit``.
        url: A bus already found; otherwise ``--nats-url`` or the data dir's running daemon.

    Raises:
        NoDaemonError: If no daemon can be found.
    """
    from bus import Bus, Subjects
    from runners.clients.discovery import find_bus_url, read_state

    url = url or find_bus_url(cfg)
    state = None if cfg.nats_url else read_state(cfg.state_file)
    # (the state file gave the URL: its daemon's namespace)
    namespace = cfg.namespace if cfg.nats_url else daemon_namespace(cfg, state)
    embedded = state is not None and state.nats_pid is not None  # (no credentials or TLS for the embedded server)
    return Bus(
        url=url, subjects=Subjects(namespace), name=name, settings=cfg.bus.for_embedded() if embedded else cfg.bus
    )


def daemon_namespace(cfg: DrivemtConfig, state: DaemonState | None = None) -> str:
    """The namespace of the data dir's daemon, which a command found through its state file speaks: the one the
    daemon recorded unless one was given (then they must agree). ``state``: the state file, when already read.

    Raises:
        typer.Exit: When the given namespace is not the daemon's.
    """
    from runners.clients.discovery import daemon_namespace as recorded
    from runners.clients.discovery import read_state

    try:
        return recorded(state or read_state(cfg.state_file), cfg.namespace, given="namespace" in cfg.model_fields_set)
    except DrivemtError as exc:
        raise fail(str(exc)) from exc


@asynccontextmanager
async def connect_bus(cfg: DrivemtConfig, *, name: str, url: str | None = None) -> AsyncIterator[Bus]:
    """Connected :func:`make_bus`, closed on exit."""
    async with make_bus(cfg, name=name, url=url) as bus:
        yield bus


def run_async(fn: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine for a command; drivemt errors become a clean message and exit code 1."""
    try:
        return asyncio.run(fn())  # type: ignore[arg-type]
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):  # (stderr's reader may be gone)
            err_console.print("interrupted")
        sys.exit(130)


def _bars() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
        disable=not err_console.is_terminal,
    )


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr; yields the (done, total) callback."""
    with _bars() as progress:
        task = progress.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update


@contextmanager
def stage_bars() -> Iterator[Callable[[str, int, int], None]]:
    """One progress bar per stage on stderr, each added when its stage first reports; yields the
    (stage, done, total) callback."""
    with _bars() as progress:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total)
            progress.update(tasks[stage], completed=done, total=total)

        yield update


@contextmanager
def bus_artifacts(cfg: DrivemtConfig, bus: Bus) -> Iterator[ArtifactStore | None]:
    """The namespace's Object Store when artefacts travel on the bus (``artifacts: bus``; the runs folder is the
    local cache), else None: inputs are uploaded there and a finished batch is fetched from there."""
    if cfg.artifacts != "bus":
        yield None
        return
    from runners.clients.objects import ObjectArtifactStore

    with ObjectArtifactStore(
        url=",".join(bus.servers), subjects=bus.subjects, cache_dir=cfg.runs_dir, settings=bus.settings
    ) as store:
        yield store
