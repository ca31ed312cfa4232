"""The real nats-server: embedded start/stop, streams, de-duplication, handled marks, request/reply."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from bus import Bus, BusError, EmbeddedNatsServer, RulesSubmitted, adoptable, port_open
from bus.events import RulesSubmittedPayload
from bus.rpc import RpcBadRequestError, RpcError, RpcMethod, call, serve
from bus.subjects import Subjects
from tools.errors import BadInputError
from tools.rules.models import TrafficRule


async def test_embedded_server_starts_on_a_free_port_and_stops(tmp_path: Path) -> None:
    """The wheel's nats-server starts with JetStream on loopback and stops cleanly."""
    server = EmbeddedNatsServer(store_dir=tmp_path / "js")
    url = await server.start()
    host, port = url.split("://")[1].split(":")
    assert host == "127.0.0.1" and port_open(host, int(port))
    assert adoptable(url, server.pid)
    b = Bus(url=url)
    await b.connect()
    info = await b.js.account_info()
    assert info.limits is not None  # JetStream is enabled
    await b.close()
    await server.stop()
    assert not port_open(host, int(port))
    assert not adoptable(url, None)


async def test_embedded_server_on_a_path_with_any_characters_and_a_clear_error_when_it_cannot_start(
    tmp_path: Path,
) -> None:
    """A data dir with non-ASCII characters and spaces works (the store path was written as a JSON escape the server's
    configuration parser refuses); a server that cannot start says why, from what it printed."""
    from bus.errors import EmbeddedServerError

    server = EmbeddedNatsServer(store_dir=tmp_path / "dätä dir ü" / "js")
    await server.start()
    await server.stop()
    broken = EmbeddedNatsServer(store_dir=tmp_path / "b" / "js", extra_config="this is { not config")
    with pytest.raises(EmbeddedServerError, match="exited with code") as info:
        await broken.start()
    assert "nats-server log" in str(info.value) and "error" in str(info.value).lower()


async def test_a_start_cancelled_part_way_leaves_no_server_running(tmp_path: Path) -> None:
    """A daemon stopped while its watchdog starts the server again cancels that start: the child, in a session of its
    own, must not outlive it (it would hold the JetStream store that the next daemon opens too)."""
    from runners.clients.discovery import pid_alive

    server = EmbeddedNatsServer(store_dir=tmp_path / "js")
    task = asyncio.create_task(server.start())
    await asyncio.sleep(0)  # (the child is launched before the start's first wait)
    pid = server.pid
    assert pid is not None and pid_alive(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not pid_alive(pid) and server.pid is None


def test_a_command_s_private_server_ends_with_the_command_however_it_ends(tmp_path: Path) -> None:
    """A server started with die_with_parent (an in-process command's private one) is ended by the kernel when its
    process is killed with SIGKILL (it ran on, orphaned); the in-process commands' private daemon asks for it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil

    script = tmp_path / "start.py"
    script.write_text(
        "import asyncio, sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from bus import EmbeddedNatsServer\n"
        "async def main():\n"
        f"    s = EmbeddedNatsServer(store_dir=__import__('pathlib').Path({str(tmp_path / 'js')!r}), die_with_parent=True)\n"
        "    await s.start()\n"
        "    print('PID', s.pid, flush=True)\n"
        "    time.sleep(600)\n"
        "asyncio.run(main())\n"
    )
    command = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert command.stdout is not None
        line = ""
        while not line.startswith("PID "):  # (the log goes to stdout too)
            line = command.stdout.readline()
            assert line, "the command ended before its server started"
        server_pid = int(line.split()[1])
        assert psutil.pid_exists(server_pid)
        os.kill(command.pid, signal.SIGKILL)
        command.wait(10)
        deadline = time.monotonic() + 10
        while psutil.pid_exists(server_pid) and psutil.Process(server_pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the private server outlived its command"
            time.sleep(0.1)
    finally:
        command.kill()


async def test_the_in_process_commands_private_server_asks_to_die_with_them() -> None:
    """The private daemon of rules extract, crash run and the demo starts its server with die_with_parent; a daemon
    with a state file does not (its server is adopted after a crash)."""
    from runners.config import load_config
    from runners.host.inprocess import private_daemon
    from tests.test_security import StubEmbedder

    async with private_daemon(load_config(), embedder=StubEmbedder(), only=[]) as daemon:
        assert daemon.server is not None and daemon.server.die_with_parent


async def test_a_client_waiting_on_a_bus_that_is_gone_stops_waiting_with_the_reason(tmp_path: Path) -> None:
    """`submit --wait` whose daemon (and bus) stopped: after lost_after_s without a connection the wait ends with a
    BusError saying so, instead of waiting out the whole timeout (600 s by default)."""
    from runners.clients.collector import Collector

    server = EmbeddedNatsServer(store_dir=tmp_path / "js")
    url = await server.start()
    bus = Bus(url=url)
    await bus.connect()
    try:
        async with Collector(bus, "c1", [bus.subjects.progress], lambda _e: None) as collector:
            await server.stop()
            started = asyncio.get_running_loop().time()
            with pytest.raises(BusError, match="lost the bus"):
                await collector.wait(lambda: False, timeout=60, lost_after_s=1.0)
            assert asyncio.get_running_loop().time() - started < 30
    finally:
        # (the server back on its port lets the client finish reconnecting: a client closed while it reconnects to a
        # dead port left nats-py's reconnect task hanging in the loop's teardown)
        again = EmbeddedNatsServer(store_dir=tmp_path / "js", port=int(url.rsplit(":", 1)[1]))
        await again.start()
        await bus.close()
        await again.stop()
        await server.stop()


async def test_connect_to_nothing_is_a_clear_error() -> None:
    """A wrong URL fails within the timeout with the URL in the message."""
    from bus.connection import BusSettings

    b = Bus(url="nats://127.0.0.1:1", settings=BusSettings(connect_timeout_s=0.5))
    with pytest.raises(BusError, match="127.0.0.1:1"):
        await b.connect()


async def test_repeated_event_id_is_stored_once(bus: Bus) -> None:
    """Publishing the same event twice stores it once (Nats-Msg-Id = event id)."""
    ev = RulesSubmitted(producer="t", payload=RulesSubmittedPayload(rules=[TrafficRule(id="a", text="x")]))
    first = await bus.publish(ev)
    second = await bus.publish(ev)
    assert first is not None and second is not None
    assert not first.duplicate and second.duplicate
    info = await bus.js.stream_info(bus.subjects.streams.inputs)
    assert info.state.messages == 1


async def test_streams_are_idempotent_to_ensure(bus: Bus) -> None:
    """Ensuring streams again (a second daemon, a restart) keeps them and their messages."""
    ev = RulesSubmitted(producer="t", payload=RulesSubmittedPayload(rules=[TrafficRule(id="a", text="x")]))
    await bus.publish(ev)
    await bus.ensure_streams()
    info = await bus.js.stream_info(bus.subjects.streams.inputs)
    assert info.state.messages == 1


async def test_a_namespace_that_folds_onto_another_is_refused(bus: Bus, nats_url: str) -> None:
    """Stream names fold letter case and '-' into '_': a second deployment whose namespace differs from this one only
    so is refused with the reason, and this one's streams keep their subjects and messages."""
    ev = RulesSubmitted(producer="t", payload=RulesSubmittedPayload(rules=[TrafficRule(id="a", text="x")]))
    await bus.publish(ev)
    before = (await bus.js.stream_info(bus.subjects.streams.inputs)).config.subjects
    other = Bus(url=nats_url, subjects=Subjects(bus.subjects.namespace.upper()), name="pytest-other")
    await other.connect()
    try:
        with pytest.raises(BusError, match=f"belongs to namespace {bus.subjects.namespace!r}"):
            await other.ensure_streams()
        # Nor does an operator's command of the other namespace read or change these streams.
        from runners.clients.ops import collect_status, list_deadletters, retry_deadletters

        for command in (collect_status(other), list_deadletters(other), retry_deadletters(other)):
            with pytest.raises(BusError, match="belongs to namespace"):
                await command
    finally:
        await other.close()
    info = await bus.js.stream_info(bus.subjects.streams.inputs)
    assert info.config.subjects == before and info.state.messages == 1
    await bus.ensure_streams()  # its own streams are still its own
    # The other namespace's client, without streams of its own, is told so when it publishes.
    async with Bus(url=nats_url, subjects=Subjects(bus.subjects.namespace.upper()), name="pytest-client") as client:
        with pytest.raises(BusError, match="no stream on this server takes"):
            await client.publish(ev)


async def test_handled_marks(bus: Bus) -> None:
    """Handled event ids are remembered per consumer."""
    assert not await bus.was_handled("m-agent", "e1")
    await bus.mark_handled("m-agent", "e1")
    assert await bus.was_handled("m-agent", "e1")
    assert not await bus.was_handled("validator", "e1")


class EchoRequest(BaseModel):
    text: str = Field(min_length=1)
    fail: bool = False


class EchoReply(BaseModel):
    got: str


ECHO = RpcMethod("test.echo", EchoRequest, EchoReply)
NOBODY = RpcMethod("test.nobody", EchoRequest, EchoReply)


async def test_typed_request_reply_and_errors(bus: Bus) -> None:
    """A served method answers with its typed reply; a malformed request and bad input are 400s naming the
    problem, other exceptions 500s; nobody serving is an error too (no hang)."""

    async def echo(req: EchoRequest) -> EchoReply:
        if req.fail:
            raise ValueError("asked to fail")
        if req.text == "bad":
            raise BadInputError("that text is bad")
        return EchoReply(got=req.text)

    service = await serve(bus, name="test-echo", methods=[(ECHO, echo)])
    try:
        await bus.nc.flush()
        assert await call(bus, ECHO, EchoRequest(text="a"), timeout=5) == EchoReply(got="a")
        with pytest.raises(RpcError, match="asked to fail") as failed:
            await call(bus, ECHO, EchoRequest(text="a", fail=True), timeout=5)
        assert failed.value.code == "500"
        with pytest.raises(RpcBadRequestError, match="that text is bad"):
            await call(bus, ECHO, EchoRequest(text="bad"), timeout=5)
        reply = await bus.nc.request(bus.subjects.rpc("test.echo"), b'{"text": ""}', timeout=5)
        assert (
            reply.headers
            and reply.headers["Nats-Service-Error-Code"] == "400"
            and "text" in reply.headers["Nats-Service-Error"]
        )
        with pytest.raises(RpcError, match="no service"):
            await call(bus, NOBODY, EchoRequest(text="a"), timeout=0.5)
    finally:
        await service.stop()
    await asyncio.sleep(0)
