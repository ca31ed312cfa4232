"""The daemon's state file: where its embedded server listens, and which processes own what.

A daemon on an embedded server writes ``<data dir>/daemon.json``; commands in the same data dir read
it to find the bus, and a daemon restarted after a crash reads it to adopt (or stop) the server the
dead one left behind.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field, ValidationError, field_validator

from bus import BusError, NoDaemonError, port_open
from bus.connection import strip_credentials

__all__ = [
    "DaemonLocator",
    "DaemonState",
    "daemon_alive",
    "find_bus_url",
    "pid_alive",
    "read_state",
    "remove_state",
    "write_state",
]


class DaemonState(BaseModel):
    """What a running daemon records."""

    pid: int = Field(description="The daemon's process id.")
    nats_url: str = Field(
        description="The bus, without credentials: a command that reads it brings its own (bus.auth, --nats-url)."
    )
    nats_pid: int | None = Field(default=None, description="The embedded server's pid; None for an external server.")
    namespace: str
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    start_ticks: int | None = Field(
        default=None,
        description="When the daemon's process started, in clock ticks since boot (Linux): tells it from a process "
        "that reused its pid whatever the wall clock did since.",
    )
    data_dir: str
    qdrant: str = Field(description="Local store path or server URL.")

    @field_validator("nats_url", "qdrant")
    @classmethod
    def _no_credentials(cls, value: str) -> str:
        """Keep passwords and tokens out of the state file, which other processes and people read."""
        return strip_credentials(value)


def pid_alive(pid: int | None) -> bool:
    """Whether a process with this id exists (and is not a zombie)."""
    if not pid:
        return False
    try:
        import psutil

        proc = psutil.Process(pid)
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except Exception:  # psutil.NoSuchProcess, AccessDenied
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False


def process_start_ticks(pid: int) -> int | None:
    """When a process started, in clock ticks since boot (``/proc/<pid>/stat``'s 22nd field); ``None`` where there is
    no such file (not Linux, or no such process)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2 :].split()[19])  # (the name in parentheses may hold spaces)
    except (OSError, ValueError, IndexError):
        return None


def daemon_alive(state: DaemonState) -> bool:
    """Whether the recorded daemon still runs (a reused pid of a younger process does not count)."""
    if not pid_alive(state.pid):
        return False
    if state.start_ticks is not None:  # (exact, and blind to wall-clock steps such as an NTP correction)
        ticks = process_start_ticks(state.pid)
        if ticks is not None:
            return ticks == state.start_ticks
    try:
        import psutil

        started = psutil.Process(state.pid).create_time()
    except Exception:  # no psutil data: trust the pid
        return True
    return started <= state.started_at.timestamp() + 1.0


def daemon_namespace(state: DaemonState | None, namespace: str, *, given: bool) -> str:
    """The namespace to speak to the daemon a state file records: its own, unless ``namespace`` was ``given``
    explicitly (then the two must agree).

    Raises:
        BusError: When a namespace given explicitly is not the daemon's.
    """
    if state is None or state.namespace == namespace:
        return namespace
    if given:
        raise BusError(
            f"the daemon on {state.data_dir} uses namespace {state.namespace!r}, not {namespace!r}: drop the "
            "namespace setting, or pass --nats-url to reach another daemon's bus"
        )
    return state.namespace


def read_state(path: Path) -> DaemonState | None:
    """The recorded state, or ``None`` if there is none or it is unreadable."""
    try:
        return DaemonState.model_validate_json(path.read_text())
    except (OSError, ValidationError, ValueError):
        return None


def write_state(path: Path, state: DaemonState) -> None:
    """Record the state atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.model_dump(mode="json"), indent=2))
    tmp.replace(path)


def remove_state(path: Path, *, pid: int) -> None:
    """Remove the state file if it is still this daemon's."""
    state = read_state(path)
    if state is not None and state.pid == pid:
        path.unlink(missing_ok=True)


class DaemonLocator(Protocol):
    """Where to look for a daemon: what :func:`find_bus_url` reads of a configuration."""

    @property
    def nats_url(self) -> str | None:
        """An explicit bus, which wins."""
        ...

    @property
    def data_dir(self) -> Path:
        """The data dir whose daemon to find."""
        ...

    @property
    def state_file(self) -> Path:
        """The daemon's state file in that data dir."""
        ...


def find_bus_url(config: DaemonLocator) -> str:
    """The bus of the daemon this command should talk to.

    ``--nats-url`` wins; otherwise the state file of a live daemon on the same data dir.

    Raises:
        NoDaemonError: If neither gives a reachable server.
    """
    if config.nats_url:
        return config.nats_url
    state = read_state(config.state_file)
    if state is None or not daemon_alive(state):
        raise NoDaemonError(str(config.data_dir))
    if not any(_reachable(url) for url in state.nats_url.split(",")):  # one server, or any of a cluster
        raise NoDaemonError(str(config.data_dir))
    return state.nats_url


def _reachable(url: str) -> bool:
    host_port = url.strip().split("://", 1)[-1].rsplit("@", 1)[-1]
    host, _, port = host_port.rpartition(":")
    try:
        return port_open(host or "127.0.0.1", int(port or 4222))
    except ValueError:  # no port number
        return False
