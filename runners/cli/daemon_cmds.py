"""``drivemt daemon``, ``drivemt stop`` and ``drivemt status``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Annotated, Any

import structlog
import typer
from rich.table import Table

from runners.cli._common import (
    ConfigOpt,
    DataDirOpt,
    LogLevelOpt,
    NatsUrlOpt,
    QdrantUrlOpt,
    connect_bus,
    console,
    fail,
    make_config,
    run_async,
)

log = structlog.get_logger(__name__)

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.command("daemon")(daemon)
    app.command("worker")(worker)
    app.command("stop")(stop)
    app.command("status")(status)


def daemon(
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    qdrant_url: QdrantUrlOpt = None,
    sim_workers: Annotated[
        int | None,
        typer.Option(
            "--sim-workers",
            help="Simulator processes (warm MetaDrive engines) in this daemon; 0 runs none here. "
            "Default: the config's agents.sim_runner.copies (1).",
        ),
    ] = None,
    agents: Annotated[
        str | None,
        typer.Option(
            help="Run only these agents here (comma-separated, as for `drivemt worker`; 'none' for bus and memory "
            "only, with workers elsewhere). Default: every agent the config enables."
        ),
    ] = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Run the daemon: bus, memory and agents, until SIGINT/SIGTERM.

    Without --nats-url it starts an embedded nats-server (JetStream) and records its URL in the data
    dir, where `drivemt submit`, `status` and the other commands find it. More daemons pointed at the
    same --nats-url (and --qdrant-url) share every agent's work queue, simulations included.
    """
    cfg = make_config(
        config=config,
        data_dir=data_dir,
        nats_url=nats_url,
        qdrant_url=qdrant_url,
        log_level=log_level,
        default_level="info",
        default_format="json",
    )
    if sim_workers is not None:
        if sim_workers < 0:
            raise fail("--sim-workers must be 0 or more")
        cfg.agents.sim_runner.copies = sim_workers
    only = None if agents is None else [] if agents.strip().lower() == "none" else agent_keys(agents)
    from runners.host.daemon import Daemon

    async def main() -> None:
        await serve(Daemon(cfg, only=only))

    run_async(main)


async def serve(daemon: Any) -> None:
    """Run a daemon or worker (:meth:`runners.host.daemon.Daemon.run`: start, serve until SIGINT/SIGTERM, stop, also
    when the start fails), then exit without waiting long for work left in threads."""
    executor = own_executor()
    await daemon.run()
    await leave_threads(executor, 2.0)  # (in-flight work had its grace in the stop)


def own_executor() -> ThreadPoolExecutor:
    """Give the running loop a default thread pool this process holds on to (see :func:`leave_threads`)."""
    executor = ThreadPoolExecutor(thread_name_prefix="drivemt-worker")
    asyncio.get_running_loop().set_default_executor(executor)
    return executor


async def leave_threads(executor: ThreadPoolExecutor, grace_s: float) -> None:
    """Let work still running in the pool's threads end within ``grace_s``, else exit without waiting for it.

    A stop hands unfinished work back to the bus, but a handler running in a thread (a simulation, a parse) cannot
    be cancelled: the interpreter would wait for it at exit, keeping a stopped daemon alive past `drivemt stop`'s
    timeout. Everything the daemon owns is closed by now, so leaving the thread behind loses nothing.
    """
    done = threading.Event()

    def shut() -> None:
        executor.shutdown(wait=True)
        done.set()

    threading.Thread(target=shut, name="drivemt-pool-shutdown", daemon=True).start()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(0.1, grace_s)
    while not done.is_set():
        if loop.time() > deadline:
            log.warning("work handed back still runs in threads; exiting without waiting for it")
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(0)
        await asyncio.sleep(0.05)


def agent_keys(spec: str) -> list[str]:
    """Agent settings keys from a comma-separated list (``m-agent,sim-runner`` or ``all``).

    Raises:
        typer.BadParameter: Naming an unknown agent and the known ones.
    """
    from runners.config import AgentsSettings

    known = list(AgentsSettings.model_fields)
    names = [n.strip().lower().replace("-", "_") for n in spec.split(",") if n.strip()]
    if names == ["all"]:
        return known
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise typer.BadParameter(
            f"unknown agent(s) {', '.join(unknown) or '(none given)'}; known: "
            + ", ".join(k.replace("_", "-") for k in known)
            + ", or all"
        )
    return list(dict.fromkeys(names))


def worker(
    agents: Annotated[
        str,
        typer.Option(
            help="Agents to run here, comma-separated: m-agent, validator, crash-extractor, sim-planner, sim-runner, "
            "judge, tl-augmenter, t-agent, f-agent, validity-checker, or all.",
        ),
    ],
    nats_url: NatsUrlOpt = None,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    qdrant_url: QdrantUrlOpt = None,
    memory: Annotated[
        str,
        typer.Option(
            help="bus: use the MR memory served by the daemon that owns it (no Qdrant here); own: open Qdrant "
            "here (with --qdrant-url, a server every process shares).",
        ),
    ] = "bus",
    copies: Annotated[
        int | None, typer.Option(help="Copies of each agent in this process (default: the config's copies).")
    ] = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Run some agents in this process, on a bus that is already running, until SIGINT/SIGTERM.

    Work spreads over workers on this machine and others: every copy of an agent type shares that type's
    durable work queue, and work a killed worker had not acknowledged is redelivered to another. Without
    --nats-url the worker joins the daemon of its data dir. It starts no server and writes no state file.
    """
    keys = agent_keys(agents)
    if memory not in ("bus", "own"):
        raise fail("--memory is bus or own")
    if copies is not None and copies < 1:
        raise fail("--copies must be 1 or more")
    cfg = make_config(
        config=config,
        data_dir=data_dir,
        nats_url=nats_url,
        qdrant_url=qdrant_url,
        log_level=log_level,
        default_level="info",
        default_format="json",
        memory=memory,
    )
    for key in keys:
        settings = getattr(cfg.agents, key)
        settings.enabled = True
        if copies is not None:
            settings.copies = copies
    from runners.host.daemon import Daemon

    async def main() -> None:
        await serve(Daemon(cfg, only=keys, worker=True))

    run_async(main)


def stop(
    data_dir: DataDirOpt = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for a clean stop.")] = 60.0,
) -> None:
    """Stop the daemon of a data dir (SIGTERM: it finishes or hands back in-flight work)."""
    cfg = make_config(data_dir=data_dir)
    from runners.clients.discovery import daemon_alive, pid_alive, read_state

    state = read_state(cfg.state_file)
    if state is None:
        raise fail(f"no running daemon recorded in {cfg.data_dir}")
    if not daemon_alive(state):  # (its pid may belong to another process by now: never signal that one)
        from bus.server import adoptable, stop_pid
        from runners.clients.discovery import remove_state

        if state.nats_pid is not None and adoptable(state.nats_url, state.nats_pid):  # (checks it is a nats-server)
            stop_pid(state.nats_pid)  # the dead daemon's bus, in a session of its own, outlived it
            remove_state(cfg.state_file, pid=state.pid)
            console.print(
                f"no daemon ran on {cfg.data_dir} (it did not stop cleanly); stopped the bus it left, "
                f"nats-server {state.nats_pid}"
            )
            return
        raise fail(
            f"no running daemon in {cfg.data_dir}: its state file names process {state.pid}, which is not the daemon "
            "that wrote it (stale, left by a daemon that did not stop cleanly)"
        )
    os.kill(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(state.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if pid_alive(state.pid):
        raise fail(f"daemon {state.pid} did not stop within {timeout:.0f} s")
    console.print(f"daemon {state.pid} stopped")


def status(
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show agents (from their heartbeats), queues, pending work and dead letters."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url)

    async def main() -> dict[str, Any]:
        from runners.clients.ops import collect_status

        async with connect_bus(cfg, name="drivemt-status") as bus:
            return await collect_status(bus)

    info = run_async(main)
    if json_out:
        import json

        console.print_json(json.dumps(info, default=str))
        return
    _print_status(info)


def _age(ts: str | datetime | None) -> str:
    if ts is None:
        return "-"
    when = ts if isinstance(ts, datetime) else datetime.fromisoformat(str(ts))
    return f"{(datetime.now(UTC) - when).total_seconds():.0f} s ago"


def _print_status(info: dict[str, Any]) -> None:
    console.print(f"bus [bold]{info['url']}[/]  namespace [bold]{info['namespace']}[/]")
    agents = Table(title="agents", title_justify="left")
    for col in ("agent", "instance", "status", "handled", "failed", "in flight", "last heartbeat", "last error"):
        agents.add_column(col)
    for a in info["agents"]:
        stale = a.get("stale")
        agents.add_row(
            a["agent"],
            a["instance"],
            ("[red]silent[/]" if stale else a["status"]),
            str(a["handled"]),
            str(a["failed"]),
            str(a["in_flight"]),
            _age(a["time"]),
            (a.get("last_error") or "")[:60],
        )
    console.print(agents)
    queues = Table(title="work queues", title_justify="left")
    for col in ("consumer", "waiting", "in flight (unacked)", "redelivered"):
        queues.add_column(col)
    for q in info["consumers"]:
        queues.add_row(q["name"], str(q["pending"]), str(q["ack_pending"]), str(q["redelivered"]))
    console.print(queues)
    streams = Table(title="streams", title_justify="left")
    streams.add_column("stream")
    streams.add_column("messages")
    for s in info["streams"]:
        streams.add_row(s["name"], str(s["messages"]))
    console.print(streams)
    console.print(
        f"dead letters: [bold]{info['deadletters']}[/]"
        + ("  (see `drivemt dead-letters list`)" if info["deadletters"] else "")
    )
    if info.get("mrs") is not None:
        console.print(f"MRs stored: [bold]{info['mrs']}[/]")
