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

from pydantic import BaseModel, Field, ValidationError

__all__ = ["DaemonState", "daemon_alive", "pid_alive", "read_state", "remove_state", "write_state"]


class DaemonState(BaseModel):
    """What a running daemon records."""

    pid: int = Field(description="The daemon's process id.")
    nats_url: str
    nats_pid: int | None = Field(default=None, description="The embedded server's pid; None for an external server.")
    namespace: str
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    data_dir: str
    qdrant: str = Field(description="Local store path or server URL.")


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


def daemon_alive(state: DaemonState) -> bool:
    """Whether the recorded daemon still runs (a reused pid of a younger process does not count)."""
    if not pid_alive(state.pid):
        return False
    try:
        import psutil

        started = psutil.Process(state.pid).create_time()
    except Exception:  # no psutil data: trust the pid
        return True
    return started <= state.started_at.timestamp() + 1.0


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
