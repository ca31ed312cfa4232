"""Bad input to the offline commands: one clear line naming the problem and a non-zero exit, never a traceback and
never a report that looks like a result."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runners.cli import app
from tests.helpers import FIXTURES

runner = CliRunner()
RULE = {"id": "r1", "region": "germany", "text": "Slow down in fog."}
MR = {"road_type": "any roads", "verb": "replaces", "manipulation": "fog", "expected_behavior": "slow down"}


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def jsonl(path: Path, *rows: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("5", "expected an object"),
        (json.dumps({**RULE, "reference_parsed": "oops"}), "non-empty list"),
        (json.dumps({**RULE, "reference_parsed": [{"road_type": "x"}]}), "a reference MR needs"),
        ("{not json", "not JSON"),
    ],
)
def test_eval_rules_names_the_bad_line(tmp_path: Path, line: str, says: str) -> None:
    code, out = invoke("eval", "rules", str(jsonl(tmp_path / "refs.jsonl", line)))
    assert code == 1 and says in out and "refs.jsonl:1" in out and "Traceback" not in out


def test_eval_rules_refuses_unreadable_files_and_foreign_predictions(tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"text": "Stra\xdfe"}\n')
    code, out = invoke("eval", "rules", str(latin))
    assert code == 1 and "not UTF-8" in out
    refs = jsonl(tmp_path / "refs.jsonl", {**RULE, "reference_parsed": [MR]})
    code, out = invoke("eval", "rules", str(jsonl(tmp_path / "empty.jsonl", "")))
    assert code == 1 and "holds no rules" in out
    for rows, says in (
        ([{"road_type": "any roads"}], "expected an object with an 'id'"),
        ([{"id": "r1", "road_type": "any roads"}], "an MR needs"),
        ([{"id": "other", **MR}], "no id matches"),
    ):
        code, out = invoke("eval", "rules", str(refs), "--predictions", str(jsonl(tmp_path / "p.jsonl", *rows)))
        assert code == 1 and says in out, out
    code, out = invoke("eval", "rules", str(refs), "--predictions", str(tmp_path))
    assert code == 1 and "a folder" in out


@pytest.mark.parametrize("gold", ["Road type: [unclosed", "", "just a string\n", "- a\n- list\n"])
def test_eval_crashes_skips_a_bad_gold_and_fails_when_none_is_left(tmp_path: Path, gold: str) -> None:
    case = tmp_path / "cases" / "c1"
    case.mkdir(parents=True)
    (case / "summary.txt").write_text(
        "Vehicle one (V1), a 2010 Ford Focus, was traveling north on a two-lane, two-way road. Vehicle two (V2), a "
        "2012 Honda Civic, was traveling south. It was daylight. The front of V1 struck the front of V2."
    )
    (case / "gold.yaml").write_text(gold)
    code, out = invoke("eval", "crashes", str(tmp_path / "cases"))
    assert code == 1 and "not scored" in out and "nothing to score" in out, out


def test_eval_crashes_says_why_a_case_has_no_scenario(tmp_path: Path) -> None:
    """A case whose report cannot be read into a scenario is scored as a miss, and the reason is printed with it."""
    case = tmp_path / "cases" / "blank"
    case.mkdir(parents=True)
    (case / "summary.txt").write_text("   \n")
    (case / "gold.yaml").write_text((FIXTURES / "crashes" / "108909" / "gold.yaml").read_text())
    code, out = invoke("eval", "crashes", str(tmp_path / "cases"))
    assert code == 0, out
    line = next(x for x in out.splitlines() if x.startswith("blank: no scenario"))
    assert "empty" in line, out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["data", "synth-tl", "-o", "X", "--width", "0"], "--width"),
        (["data", "synth-tl", "-o", "X", "--n-train", "-3"], "--n-train"),
        (["tl", "augment", "DS", "-o", "X", "--fraction", "0"], "--fraction"),
        (["tl", "augment", "DS", "-o", "X", "--fraction", "5"], "--fraction"),
        (["crash", "run", "DIR", "-w", "-2"], "--workers"),
        (["rules", "extract", "IN", "-o", "X", "--timeout", "0"], "--timeout"),
        (["demo", "--variants", "0"], "--variants"),
    ],
)
def test_nonsense_option_values_are_refused(args: list[str], says: str) -> None:
    """Counts, sizes, shares and time limits out of their range are refused before any work, naming the option."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and says in result.output, result.output


def test_rules_of_an_unknown_region_or_an_empty_transform_list_are_refused(tmp_path: Path) -> None:
    rules = tmp_path / "rules.txt"
    rules.write_text("Slow down in fog.\n")
    code, out = invoke("rules", "extract", str(rules), "-o", str(tmp_path / "o.jsonl"), "--region", "mars")
    assert code == 1 and "unknown region(s) mars" in out and "germany" in out
    assert not (tmp_path / "o.jsonl").exists()
    code, out = invoke("rules", "extract", str(rules), "-o", str(tmp_path))
    assert code == 1 and "is a folder" in out
    code, out = invoke("tl", "augment", str(tmp_path), "-o", str(tmp_path / "aug"), "-t", " , ")
    assert code == 1 and "names no transformation" in out


def test_an_error_no_command_handled_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """The console entry point turns any error that reached it into one line and exit code 1 (here a folder where
    the scenarios' JSONL file goes); DRIVEMT_TRACEBACK=1 shows the traceback instead."""
    case = tmp_path / "cases" / "c1"
    case.mkdir(parents=True)
    (case / "summary.txt").write_text(
        "Vehicle one (V1), a 2010 Ford Focus, was traveling north on a two-lane, two-way road. Vehicle two (V2), a "
        "2012 Honda Civic, was traveling south. It was daylight. The front of V1 struck the front of V2."
    )
    args = [sys.executable, "-m", "runners.cli", "crash", "extract", str(tmp_path / "cases"), "-o", str(tmp_path)]
    res = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "Traceback" not in res.stderr and "error:" in res.stderr, res.stderr
    shown = subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=120,
        env={"DRIVEMT_TRACEBACK": "1"} | dict(__import__("os").environ),
    )
    assert shown.returncode != 0 and "Traceback" in shown.stderr


def test_eval_rules_takes_the_ids_rules_extract_gives_rules_without_one(tmp_path: Path) -> None:
    """A reference file without ids is scored against the predictions `rules extract` wrote for it: both name a
    rule by its file and line."""
    refs = jsonl(tmp_path / "refs.jsonl", {"region": "germany", "text": "Slow down in fog.", "reference_parsed": [MR]})
    preds = jsonl(tmp_path / "p.jsonl", {"id": "refs-1", **MR})
    code, out = invoke("eval", "rules", str(refs), "--predictions", str(preds))
    assert code == 0 and "100.0%" in out, out


def test_stop_never_signals_a_process_that_reused_a_stale_daemons_pid(tmp_path: Path) -> None:
    """A state file left by a daemon that did not stop cleanly, whose pid another process now has: `stop` says the
    file is stale and exits 1, and the other process lives on (it was killed with SIGTERM)."""
    from datetime import UTC, datetime

    from runners.clients.discovery import DaemonState, write_state

    other = subprocess.Popen(["sleep", "60"])
    try:
        data = tmp_path / "data"
        data.mkdir()
        write_state(
            data / "daemon.json",
            DaemonState(
                pid=other.pid,
                nats_url="nats://127.0.0.1:1",
                namespace="drivemt",
                started_at=datetime(2020, 1, 1, tzinfo=UTC),
                data_dir=str(data),
                qdrant=str(data / "qdrant"),
            ),
        )
        code, out = invoke("stop", "--data-dir", str(data), "--timeout", "2")
        assert code == 1 and "stale" in out, out
        assert other.poll() is None, "stop killed a process that is not the daemon"
    finally:
        other.kill()
        other.wait()


def test_reading_mrs_from_a_data_dir_with_no_store_is_an_error_not_an_empty_list(tmp_path: Path) -> None:
    """`mrs list` on a mistyped data dir: no daemon and no MR store there is an error naming the folder (it created
    an empty store and listed nothing, exit 0)."""
    code, out = invoke("mrs", "list", "--data-dir", str(tmp_path / "typo"))
    assert code == 1 and "no MR store" in out, out
    assert not (tmp_path / "typo" / "qdrant").exists()


async def test_the_served_console_speaks_the_namespace_of_the_data_dirs_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tui --serve` on a data dir whose daemon runs in namespace teamx starts each browser's console on that data dir,
    which finds the daemon (and so teamx) through the state file as the plain console does (its --nats-url skipped
    the state file's namespace, so the browsers showed no agents; and it kept bus.auth, whose TLS files refused the
    embedded server)."""
    import os

    import textual_serve.server

    from bus import EmbeddedNatsServer
    from runners.clients.discovery import DaemonState, write_state

    server = EmbeddedNatsServer(store_dir=tmp_path / "js")
    url = await server.start()
    try:
        data = tmp_path / "data"
        data.mkdir()
        write_state(
            data / "daemon.json",
            DaemonState(pid=os.getpid(), nats_url=url, namespace="teamx", data_dir=str(data), qdrant="q"),
        )
        commands: list[str] = []

        class Server:
            def __init__(self, command: str, **_kw: object) -> None:
                commands.append(command)

            def serve(self) -> None:
                pass

        monkeypatch.setattr(textual_serve.server, "Server", Server)
        monkeypatch.delenv("DRIVEMT_NAMESPACE", raising=False)
        code, out = await asyncio.to_thread(invoke, "tui", "--serve", "--data-dir", str(data))
        assert code == 0, out
        assert "--nats-url" not in commands[0] and f"--data-dir {data.resolve()}" in commands[0], commands[0]
    finally:
        await server.stop()


def test_a_live_daemon_is_told_from_a_reused_pid_by_its_start_ticks_whatever_the_clock_did() -> None:
    """The state records when the daemon's process started in ticks since boot: a wall clock stepped since (its
    recorded start time now looks an hour early or late) does not make a live daemon stale, and another process with
    the same pid but other ticks is not the daemon."""
    import os
    from datetime import UTC, datetime, timedelta

    from runners.clients.discovery import DaemonState, daemon_alive, process_start_ticks

    ticks = process_start_ticks(os.getpid())
    assert ticks is not None
    for shift in (timedelta(hours=-1), timedelta(hours=1)):
        state = DaemonState(
            pid=os.getpid(),
            nats_url="nats://127.0.0.1:1",
            namespace="drivemt",
            data_dir="d",
            qdrant="q",
            started_at=datetime.now(UTC) + shift,
            start_ticks=ticks,
        )
        assert daemon_alive(state)
        assert not daemon_alive(state.model_copy(update={"start_ticks": ticks + 1}))


async def test_stop_after_a_daemon_was_killed_stops_the_bus_it_left(tmp_path: Path) -> None:
    """A daemon killed with SIGKILL leaves its nats-server running (in a session of its own): `stop` on its data dir
    stops that server and removes the stale state file (it said 'stale' and left both, holding the port and the
    store until a daemon adopted them)."""
    from bus import EmbeddedNatsServer
    from runners.clients.discovery import DaemonState, pid_alive, read_state, write_state

    gone = subprocess.Popen(["true"])
    gone.wait()
    server = EmbeddedNatsServer(store_dir=tmp_path / "data" / "jetstream")
    url = await server.start()
    try:
        write_state(
            tmp_path / "data" / "daemon.json",
            DaemonState(pid=gone.pid, nats_url=url, nats_pid=server.pid, namespace="drivemt", data_dir="d", qdrant="q"),
        )
        code, out = await asyncio.to_thread(invoke, "stop", "--data-dir", str(tmp_path / "data"))
        assert code == 0 and "stopped the bus it left" in out, out
        assert server.pid is not None and not pid_alive(server.pid)
        assert read_state(tmp_path / "data" / "daemon.json") is None
    finally:
        await server.stop()
