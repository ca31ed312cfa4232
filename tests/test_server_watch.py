"""A daemon whose embedded nats-server dies starts it again, on the same port and store, and loses no work."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time

import pytest

from bus import MRAccepted, MRRejected, decode_event
from bus.errors import EmbeddedServerError
from bus.server import host_port
from memory import MiniLMEmbedder
from runners.clients.discovery import pid_alive, read_state
from runners.clients.rules import make_submissions, submit_and_collect
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import rule

pytestmark = pytest.mark.slow


async def _restarted(daemon: Daemon, *, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if daemon.server_restarts and daemon.server is not None and daemon.server.exit_code is None:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the nats-server was not started again")


async def _result_ids(daemon: Daemon, correlation: str) -> set[str]:
    """Ids of the rules with a result in the results stream (what the server stored, not what one subscriber saw)."""
    assert daemon.bus is not None
    stream = daemon.bus.subjects.streams.results
    info = await daemon.bus.js.stream_info(stream)
    ids: set[str] = set()
    if not info.state.messages:
        return ids
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        raw = await daemon.bus.js.get_msg(stream, seq)
        ev = decode_event(raw.data, subject=raw.subject)
        if isinstance(ev, MRAccepted | MRRejected) and ev.correlation_id == correlation:
            ids.add(ev.payload.rule.id)
    return ids


async def test_a_killed_server_comes_back_and_work_in_flight_is_finished(
    config: DrivemtConfig, embedder: MiniLMEmbedder, sample_rules: list[dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 of the embedded server with rules in flight: the daemon starts it again on the same URL, records the new
    pid in its state file (before the new server is ready: a daemon killed meanwhile leaves no server nothing names),
    every rule published before the kill gets its result, and new work is served."""
    from bus import EmbeddedNatsServer

    recorded_while_starting: list[tuple[int | None, int | None]] = []
    wait_started = EmbeddedNatsServer._wait_started

    async def watched(server: EmbeddedNatsServer, ports_file: object) -> str:
        state = read_state(local.state_file)
        recorded_while_starting.append((state.nats_pid if state else None, server.pid))
        return await wait_started(server, ports_file)  # type: ignore[arg-type]

    local = config.model_copy(update={"nats_url": None})
    async with Daemon(local, embedder=embedder) as daemon:
        daemon._watch_interval_s = 0.2
        assert daemon.server is not None and daemon.server.pid is not None and daemon.bus is not None
        old_pid, url = daemon.server.pid, daemon.nats_url
        monkeypatch.setattr(EmbeddedNatsServer, "_wait_started", watched)
        rules = [rule(str(sample_rules[i % 12]["text"]), f"w{i:03d}") for i in range(60)]
        correlation, events = make_submissions(rules)
        await daemon.bus.publish_many(events)  # (stored by JetStream once this returns)
        os.kill(old_pid, signal.SIGKILL)
        await _restarted(daemon)
        assert daemon.server.pid != old_pid
        assert daemon.nats_url == url and daemon.server_restarts == 1
        assert recorded_while_starting and recorded_while_starting[-1] == (daemon.server.pid,) * 2
        state = read_state(local.state_file)
        assert state is not None and state.nats_pid == daemon.server.pid and state.nats_url == url
        deadline = time.monotonic() + 120
        ids: set[str] = set()
        while time.monotonic() < deadline:
            with_result = await _result_ids(daemon, correlation)
            if with_result == {r.id for r in rules}:
                ids = with_result
                break
            await asyncio.sleep(0.5)
        assert len(ids) == 60, f"{60 - len(ids)} rules published before the kill got no result"
        summary = await submit_and_collect(daemon.bus, [rule(str(sample_rules[0]["text"]), "after")], timeout=60)
        assert summary.counts()["missing"] == 0 and summary.counts()["error"] == 0
    assert not pid_alive(daemon.server.pid if daemon.server else old_pid), "the new server was left running"


async def test_a_server_that_cannot_come_back_stops_the_daemon_with_the_reason(
    config: DrivemtConfig, embedder: MiniLMEmbedder
) -> None:
    """When the server dies and its port is taken, the daemon does not spin on a dead bus: run() ends with an
    EmbeddedServerError naming the cause, and the state file is gone."""
    local = config.model_copy(update={"nats_url": None})
    daemon = Daemon(local, embedder=embedder)
    daemon._watch_interval_s = 0.5
    task = asyncio.create_task(daemon.run())
    deadline = time.monotonic() + 60
    while daemon._watch_task is None:
        assert not task.done(), task.exception() if task.done() else None
        assert time.monotonic() < deadline, "daemon not ready"
        await asyncio.sleep(0.05)
    assert daemon.server is not None and daemon.server.pid is not None and daemon.nats_url is not None
    host, port = host_port(daemon.nats_url)
    os.kill(daemon.server.pid, signal.SIGKILL)
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (as the server's own listener does)
    try:
        bound_by = time.monotonic() + 5
        while True:
            try:
                squatter.bind((host, port))
                break
            except OSError:
                assert time.monotonic() < bound_by, "the port was not freed"
                await asyncio.sleep(0.01)
        squatter.listen()
        with pytest.raises(EmbeddedServerError, match="nats-server"):
            await asyncio.wait_for(task, timeout=60)
        assert read_state(local.state_file) is None
    finally:
        squatter.close()
        if not task.done():
            task.cancel()


async def test_a_daemon_started_again_on_a_data_dir_takes_its_last_port_so_open_clients_reconnect(
    config: DrivemtConfig, embedder: MiniLMEmbedder
) -> None:
    """A console or worker left open while its daemon is stopped and started again reconnects by itself: the new
    daemon's server takes the port of the data dir's last one when it is free (it took a new random port, and the
    client retried the old one forever); a port taken meanwhile gives a new one."""
    import socket

    from bus import Bus

    local = config.model_copy(update={"nats_url": None})
    async with Daemon(local, embedder=embedder) as first:
        url = first.nats_url
        assert url is not None
        client = Bus(url=url, subjects=first.subjects)
        await client.connect()
    try:
        async with Daemon(local, embedder=embedder) as second:
            assert second.nats_url == url
            deadline = time.monotonic() + 20
            while not client.nc.is_connected:
                assert time.monotonic() < deadline, "the open client did not reconnect"
                await asyncio.sleep(0.1)
            summary = await submit_and_collect(client, [rule("Reduce speed in fog.", "again")], timeout=60)
            assert summary.counts()["accepted"] == 1
    finally:
        await client.close()
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(host_port(url))
    squatter.listen()
    try:
        async with Daemon(local, embedder=embedder) as third:
            assert third.nats_url is not None and third.nats_url != url
    finally:
        squatter.close()
