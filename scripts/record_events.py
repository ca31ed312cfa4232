"""Record the events of a real run of every pipeline, for the console's replay test.

    .venv/bin/python scripts/record_events.py [--out tests/fixtures/events/recorded.jsonl.gz] [--data-dir DIR]

Starts an embedded daemon on a fresh data dir, listens to every subject of its namespace, and runs
``drivemt demo`` against it (rules -> MRs; synthetic driving cases -> follow-ups judged by two driving models;
crash reports -> MetaDrive runs; traffic-light images -> TIGAUG judged by a detector), with short training
budgets so the recording takes minutes. Each line of the output is ``{"subject": ..., "event": {...}}``.
Heartbeats are thinned to one per instance every 20 s; the conversation's ``agents.message`` events are on. The
file is gzipped JSON lines. Re-record when events change: the replay test decodes every line with the current event types.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bus.envelope import decode_event  # noqa: E402
from bus.events import AgentHeartbeat  # noqa: E402
from runners.config import load_config  # noqa: E402
from runners.host.daemon import Daemon  # noqa: E402

DEFAULT_OUT = ROOT / "tests" / "fixtures" / "events" / "recorded.jsonl.gz"


async def record(data_dir: Path, demo_args: list[str]) -> tuple[int, list[str]]:
    cfg = load_config(data_dir=data_dir, conversation={"enabled": True})  # the agents' messages too
    lines: list[str] = []
    last_beat: dict[str, float] = {}
    async with Daemon(cfg) as daemon:
        bus = daemon.bus
        assert bus is not None

        async def on_msg(msg: object) -> None:
            subject: str = msg.subject  # type: ignore[attr-defined]
            if ".rpc." in subject or subject.startswith(("$", "_INBOX")):
                return
            event = decode_event(msg.data, subject=subject)  # type: ignore[attr-defined]
            if isinstance(event, AgentHeartbeat):
                key = f"{event.payload.agent}/{event.payload.instance}"
                now = time.monotonic()
                if now - last_beat.get(key, -1e9) < 20.0:
                    return
                last_beat[key] = now
            lines.append(json.dumps({"subject": subject, "event": event.model_dump(mode="json")}))

        sub = await bus.nc.subscribe(bus.subjects.everything, cb=on_msg)
        command = [sys.executable, "-m", "runners.cli", "demo", "--data-dir", str(data_dir), *demo_args]
        print("running:", " ".join(command), file=sys.stderr)
        rc = await asyncio.to_thread(subprocess.call, command)
        await asyncio.sleep(3.0)  # the last verdicts and heartbeats
        await sub.unsubscribe()
    return rc, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a fresh temporary folder")
    args = parser.parse_args()
    demo_args = ["--variants", "1", "--tl-train-seconds", "120", "--tl-train-images", "400", "--mt-train-seconds", "20"]
    if args.data_dir is not None:
        rc, lines = asyncio.run(record(args.data_dir, demo_args))
    else:
        with tempfile.TemporaryDirectory(prefix="drivemt-record-") as tmp:
            rc, lines = asyncio.run(record(Path(tmp), demo_args))
    out: Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} events -> {out} ({out.stat().st_size / 1e3:.0f} kB); demo exit code {rc}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
