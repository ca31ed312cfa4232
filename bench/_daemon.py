"""A ``drivemt daemon`` in its own process for the benches that measure through one, stopped with its server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from runners.clients.discovery import DaemonState, read_state  # noqa: E402


@dataclass
class SpawnedDaemon:
    """The daemon's process, its state file once it is up, and when it was spawned (``time.monotonic``)."""

    proc: subprocess.Popen[bytes]
    state: DaemonState
    spawned: float


@contextlib.asynccontextmanager
async def spawned_daemon(
    data: Path, log: Path, *, extra: Sequence[str] = (), poll_s: float = 0.02
) -> AsyncIterator[SpawnedDaemon]:
    """Start ``drivemt daemon --data-dir data`` (stderr into ``log``), wait until its state file names it, and on
    leaving stop it (SIGTERM, SIGKILL after 60 s) and the embedded nats-server it started."""
    cmd = [sys.executable, "-m", "runners.cli", "daemon", "--data-dir", str(data), "--log-level", "warning", *extra]
    spawned = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    try:
        while (state := read_state(data / "daemon.json")) is None or state.pid != proc.pid:
            if proc.poll() is not None:
                raise SystemExit(f"daemon exited: {(await asyncio.to_thread(log.read_text))[-2000:]}")
            await asyncio.sleep(poll_s)
        yield SpawnedDaemon(proc, state, spawned)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        st = read_state(data / "daemon.json")
        if st is not None and st.nats_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(st.nats_pid, signal.SIGTERM)
