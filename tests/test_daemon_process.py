"""The daemon as a separate process: CLI round trips, and recovery from kill -9 with work in flight."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus import Bus, MRAccepted, MRRejected, Subjects, decode_event
from bus.events import ErrorReported
from runners.clients.discovery import pid_alive, read_state
from runners.clients.rules import make_submissions
from tests.helpers import FIXTURES
from tools.rules.models import TrafficRule

pytestmark = pytest.mark.slow


def cli(*args: str, data_dir: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run the drivemt CLI in a new process."""
    return subprocess.run(
        [sys.executable, "-m", "runners.cli", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_daemon(data_dir: Path, config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "runners.cli", "daemon", "--data-dir", str(data_dir), "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )


def wait_ready(data_dir: Path, proc: subprocess.Popen[bytes], timeout: float = 60) -> dict:
    """Wait until the daemon's agents heartbeat as ready; returns `drivemt status --json`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "daemon exited early"
        state = read_state(data_dir / "daemon.json")
        if state is not None and state.pid == proc.pid:
            res = cli("status", "--json", data_dir=data_dir, timeout=30)
            if res.returncode == 0:
                info = json.loads(res.stdout)
                ready = {a["agent"] for a in info["agents"] if a["status"] == "ready" and a["pid"] == proc.pid}
                if {"m-agent", "validator"} <= ready:
                    return info
        time.sleep(0.3)
    raise AssertionError("daemon not ready in time")


@contextlib.contextmanager
def reaped(proc: subprocess.Popen[bytes]) -> Iterator[list[int]]:
    """Whatever a test leaves running at its end is killed: the daemon process, and the nats-server pids the test
    adds to the yielded list."""
    servers: list[int] = []
    try:
        yield servers
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in servers:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def daemon_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "drivemt.yaml"
    cfg.write_text(
        "heartbeat_interval_s: 0.5\nshutdown_grace_s: 5\nlog_level: info\n"
        "agents:\n"
        "  m_agent:\n    consumer: {ack_wait_s: 3, max_deliver: 5}\n"
        "  validator:\n    consumer: {ack_wait_s: 3, max_deliver: 5}\n"
    )
    return cfg


def test_cli_against_a_running_daemon(tmp_path: Path, daemon_config: Path) -> None:
    """submit --wait prints MRs, status shows the agents, dead letters can be listed and retried, stop stops."""
    data = tmp_path / "data"
    proc = start_daemon(data, daemon_config, tmp_path / "daemon.log")
    try:
        started = time.monotonic()
        wait_ready(data, proc)
        assert time.monotonic() - started < 60
        rules = tmp_path / "rules.jsonl"
        rules.write_text(
            json.dumps({"id": "fog-1", "text": "If visibility is reduced by fog, the speed must be reduced."})
            + "\n"
            + json.dumps({"id": "empty-1", "text": " "})
            + "\n"
        )
        res = cli("submit", "rules", str(rules), "--wait", "--timeout", "60", data_dir=data)
        assert res.returncode == 0, res.stderr
        assert "fog-1 Given the ego-vehicle approaches to any roads, When drivemt replaces" in res.stdout
        assert "empty-1" in res.stdout and "empty" in res.stdout
        state = read_state(data / "daemon.json")
        assert state is not None

        async def inject_junk() -> None:
            async with Bus(url=state.nats_url, subjects=Subjects()) as bus:
                await bus.publish_raw(bus.subjects.rules_submitted, b"{definitely not json")

        asyncio.run(inject_junk())
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            listed = cli("dead-letters", "list", "--json", data_dir=data)
            if listed.stdout.strip():
                break
            time.sleep(0.3)
        letter = json.loads(listed.stdout.splitlines()[0])
        assert letter["payload"]["consumer"] == "m-agent" and "malformed JSON" in letter["payload"]["reason"]
        status = json.loads(cli("status", "--json", data_dir=data).stdout)
        assert status["deadletters"] == 1 and status["mrs"] == 1
        retry = cli("dead-letters", "retry", str(letter["seq"]), data_dir=data)
        assert retry.returncode == 0 and "retried 1" in retry.stdout
        search = cli("mrs", "search", "fog", "--json", data_dir=data)
        assert "fog environment" in json.loads(search.stdout.splitlines()[0])["mr"]["gherkin"]
        stop = cli("stop", data_dir=data)
        assert stop.returncode == 0, stop.stderr
        proc.wait(timeout=30)
        assert proc.returncode == 0
        assert not (data / "daemon.json").exists()
        assert not pid_alive(state.nats_pid)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_kill_9_with_work_in_flight_loses_nothing_and_repeats_nothing(tmp_path: Path, daemon_config: Path) -> None:
    """200 rules, kill -9 mid-way, restart: each rule gets exactly one result and no MR is stored twice."""
    data = tmp_path / "data"
    log = tmp_path / "daemon.log"
    base = [json.loads(line) for line in (FIXTURES / "rules_de_sample.jsonl").read_text().splitlines()]
    rules = [TrafficRule(id=f"k{i:03d}", text=base[i % len(base)]["text"], region="germany") for i in range(200)]
    first = start_daemon(data, daemon_config, log)
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_ready(data, first)
        state = read_state(data / "daemon.json")
        assert state is not None and state.nats_pid is not None

        async def run() -> tuple[list, dict]:
            nonlocal second
            async with Bus(url=state.nats_url, subjects=Subjects()) as bus:
                seen: list = []

                async def on_msg(msg: object) -> None:
                    seen.append(decode_event(msg.data, subject=msg.subject))  # type: ignore[attr-defined]

                for subject in (bus.subjects.mrs_accepted, bus.subjects.mrs_rejected):
                    await bus.nc.subscribe(subject, cb=on_msg)
                correlation, events = make_submissions(rules)
                await bus.publish_many(events)
                while len(seen) < 20:
                    await asyncio.sleep(0.01)
                os.kill(first.pid, signal.SIGKILL)
                first.wait(timeout=10)
                killed_at = len(seen)
                assert killed_at < 200, "everything finished before the kill; nothing was in flight"
                assert pid_alive(state.nats_pid), "the embedded server died with the daemon"
                second = start_daemon(data, daemon_config, log)
                deadline = time.monotonic() + 180
                while len({e.payload.rule.id for e in seen}) < 200 and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                await asyncio.sleep(4)  # room for any late duplicate to show up
                # Count the results the stream holds, not only what this subscriber saw.
                stream = bus.subjects.streams.results
                info = await bus.js.stream_info(stream)
                stored = []
                for seq in range(info.state.first_seq, info.state.last_seq + 1):
                    raw = await bus.js.get_msg(stream, seq)
                    ev = decode_event(raw.data, subject=raw.subject)
                    if isinstance(ev, MRAccepted | MRRejected | ErrorReported) and ev.correlation_id == correlation:
                        stored.append(ev)
                from bus.rpc import call
                from bus.services import MRS_LIST, ListMRs

                mrs = [m.model_dump() for m in (await call(bus, MRS_LIST, ListMRs(limit=100000), timeout=30)).mrs]
                return stored, {"killed_at": killed_at, "mrs": mrs}

        stored, extra = asyncio.run(run())
        per_rule = Counter(e.payload.rule.id for e in stored if isinstance(e, MRAccepted | MRRejected))
        assert len(per_rule) == 200, f"{200 - len(per_rule)} rules without a result"
        assert set(per_rule.values()) == {1}, [k for k, v in per_rule.items() if v > 1]
        assert not [e for e in stored if isinstance(e, ErrorReported)]
        mrs = extra["mrs"]
        keys = [m["canonical_key"] for m in mrs]
        assert len(keys) == len(set(keys))
        accepted = {e.payload.rule.id for e in stored if isinstance(e, MRAccepted)}
        sources = [s for m in mrs for s in m["source_rule_ids"]]
        assert sorted(sources) == sorted(accepted), "a rule is missing from, or repeated in, the stored MRs' sources"
        new_state = read_state(data / "daemon.json")
        assert second is not None and new_state is not None and new_state.pid == second.pid
        assert new_state.nats_pid == state.nats_pid and new_state.nats_url == state.nats_url  # adopted, not replaced
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
        assert second.returncode == 0
        assert not pid_alive(state.nats_pid), "the adopted server was left running"
        assert "adopting the bus" in log.read_text()
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
        st = read_state(data / "daemon.json")
        if st is not None and st.nats_pid and pid_alive(st.nats_pid):
            os.kill(st.nats_pid, signal.SIGKILL)


def test_a_daemon_whose_log_reader_is_gone_still_stops_on_sigterm(tmp_path: Path, daemon_config: Path) -> None:
    """A daemon left behind by a parent that died (a test run or a terminal killed) logs into a pipe nobody reads:
    every log line meets a broken pipe. SIGTERM must still stop it cleanly, not be lost in the handler's own log
    line."""
    data = tmp_path / "data"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "runners.cli", "daemon", "--data-dir", str(data), "--config", str(daemon_config)],
        stdout=subprocess.DEVNULL,
        stderr=write_end,
    )
    os.close(write_end)
    done = threading.Event()

    def drain() -> None:  # read the log until the reader "dies", so the pipe never fills meanwhile
        while not done.is_set():
            if select.select([read_end], [], [], 0.1)[0] and not os.read(read_end, 65536):
                return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        wait_ready(data, proc)
        done.set()
        reader.join(timeout=5)
        os.close(read_end)  # the reader is gone: from now on the daemon's log lines meet a broken pipe
        time.sleep(1.0)  # heartbeats log meanwhile
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert proc.returncode == 0
        assert read_state(data / "daemon.json") is None  # it stopped cleanly: its state file is gone
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_second_signal_while_stopping_exits_at_once(tmp_path: Path, daemon_config: Path) -> None:
    """The first SIGTERM starts a clean stop; a second one while it runs exits at once with 130 (the work left is
    redelivered), instead of the default action killing the process mid-stop. (A second signal that comes only after
    the stop finished, while the interpreter exits, may still meet the default action: the stop was clean.)"""
    data = tmp_path / "data"
    log = tmp_path / "daemon.log"
    proc = start_daemon(data, daemon_config, log)
    with reaped(proc) as servers:
        wait_ready(data, proc)
        state = read_state(data / "daemon.json")
        servers += [state.nats_pid] if state is not None and state.nats_pid is not None else []
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while "stopping: finishing in-flight work" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)  # a clean stop takes about a second here: this lands while it runs
        proc.wait(timeout=60)
        text = log.read_text()
        if proc.returncode == 130:
            assert "second signal: exiting now" in text
        else:
            # The second signal came after the clean stop (the interpreter was exiting): nothing was cut short.
            assert proc.returncode in (0, -signal.SIGTERM) and "daemon stopped" in text, proc.returncode


def test_sigterm_during_the_start_stops_cleanly(tmp_path: Path, daemon_config: Path) -> None:
    """A daemon signalled while it is still starting (loading models, seconds after its bus is up) cancels the start
    and stops what had started: its nats-server is stopped and its state file removed, not left behind."""
    data = tmp_path / "data"
    log = tmp_path / "daemon.log"
    proc = start_daemon(data, daemon_config, log)
    with reaped(proc) as servers:
        deadline = time.monotonic() + 60
        while "bus ready" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.02)
        state = read_state(data / "daemon.json")
        assert state is not None and state.nats_pid is not None
        servers.append(state.nats_pid)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert proc.returncode == 0, log.read_text()[-2000:]
        assert read_state(data / "daemon.json") is None
        assert not pid_alive(state.nats_pid), "the daemon's nats-server was left running"


def test_a_daemon_whose_bus_died_still_stops_cleanly(tmp_path: Path, daemon_config: Path) -> None:
    """A daemon on a --nats-url whose server died stops on SIGTERM within its grace, with exit code 0, and removes
    its state file: closing a connection that is gone is no error, and the steps after it still run."""
    from bus import EmbeddedNatsServer

    server = EmbeddedNatsServer(store_dir=tmp_path / "nats")
    url = asyncio.run(server.start())
    data = tmp_path / "data"
    log = tmp_path / "daemon.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            *"-m runners.cli daemon --nats-url".split(),
            url,
            "--data-dir",
            str(data),
            "--config",
            str(daemon_config),
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )
    try:
        wait_ready(data, proc)
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)
        time.sleep(1.0)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        text = log.read_text()
        assert proc.returncode == 0, text[-2000:]
        assert "daemon stopped" in text
        assert read_state(data / "daemon.json") is None
        assert time.monotonic() - started < 30
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        asyncio.run(server.stop())


def test_a_stopped_daemon_does_not_wait_for_work_left_in_threads(tmp_path: Path) -> None:
    """Work running in a thread (a simulation, a parse) cannot be cancelled; once the daemon has stopped and handed
    it back, the process exits after the grace period instead of waiting for the thread to end."""
    script = tmp_path / "leave.py"
    script.write_text(
        "import asyncio, time\n"
        "from runners.cli.daemon_cmds import leave_threads, own_executor\n"
        "async def main():\n"
        "    pool = own_executor()\n"
        "    busy = asyncio.ensure_future(asyncio.to_thread(time.sleep, 60))\n"
        "    await asyncio.sleep(0.1)\n"
        "    await leave_threads(pool, 0.5)\n"
        "    busy.cancel()\n"
        "asyncio.run(main())\n"
    )
    started = time.monotonic()
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=50)
    assert res.returncode == 0, res.stderr
    assert time.monotonic() - started < 30
    assert "exiting without waiting" in res.stdout + res.stderr


def test_commands_on_a_data_dir_speak_its_daemons_namespace(tmp_path: Path, daemon_config: Path) -> None:
    """A daemon started in namespace teamx: `status` on its data dir, with no namespace given, shows its agents
    (it showed namespace drivemt, with no agents and no queues, and exit 0); a different namespace given is an error
    that names both."""
    data = tmp_path / "data"
    env = {**os.environ, "DRIVEMT_NAMESPACE": "teamx"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "runners.cli", "daemon", "--data-dir", str(data), "--config", str(daemon_config)],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "daemon.log").open("ab"),
        env=env,
    )
    with reaped(proc):
        info = wait_ready(data, proc)  # (status with no namespace given: it would time out on the wrong one)
        assert info["namespace"] == "teamx"
        other = subprocess.run(
            [sys.executable, "-m", "runners.cli", "status", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "DRIVEMT_NAMESPACE": "other"},
        )
        assert other.returncode == 1 and "'teamx', not 'other'" in other.stdout + other.stderr
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
