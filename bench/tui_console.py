"""The console under load: start-up, keystroke-to-screen latency at 1,000 events/s, and memory over 100,000 events.

Headless (Textual's test driver, the real app, a real nats-server for its bus). Events are encoded and decoded as
on the wire (``bus.decode_event``), then taken in by the app exactly as its subscription does; the screen is
redrawn by the app's own batched timer. Anchors (issue 13): first screen <= 2 s; keystroke to screen <= 100 ms
while 1,000 events/s stream in; RSS flat over 100,000 events (printed every 10,000).

    .venv/bin/python bench/tui_console.py [--rate 1000] [--seconds 10] [--events 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

T0 = time.perf_counter()
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402
from textual import events  # noqa: E402
from textual.widgets import TabbedContent  # noqa: E402

from bus import Bus, EmbeddedNatsServer, Subjects  # noqa: E402
from bus.events import (  # noqa: E402
    MRAccepted,
    ProgressPayload,
    ProgressReported,
    ViolationFound,
    ViolationPayload,
    decode_event,
    encode_event,
)
from runners.cli.logs import configure_logging  # noqa: E402
from tests.event_samples import samples  # noqa: E402


def stream(n: int) -> list[bytes]:
    """``n`` encoded events: a mix like a busy daemon's (progress, results, violations), 200 submissions."""
    base = samples()
    kinds = [base["mrs.accepted"], base["sim.completed"], base["progress"], base["violations.found"]]
    corr = [str(uuid.uuid4()) for _ in range(200)]
    out = []
    for i in range(n):
        ev = kinds[i % len(kinds)]
        update: dict[str, object] = {"event_id": str(uuid.uuid4()), "correlation_id": corr[i % 200]}
        if isinstance(ev, ProgressReported):
            update["payload"] = ProgressPayload(stage="tl-augment", done=i % 100, total=100)
        elif isinstance(ev, ViolationFound):
            update["payload"] = ViolationPayload(kind="tl", item_id=f"img-{i}", description=f"violation {i}")
        elif isinstance(ev, MRAccepted):
            pass
        out.append(encode_event(ev.model_copy(update=update)))
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rate", type=int, default=1000, help="Events per second while keys are pressed.")
    ap.add_argument("--seconds", type=float, default=10.0, help="Seconds of streaming while keys are pressed.")
    ap.add_argument("--events", type=int, default=100_000, help="Events for the memory run.")
    args = ap.parse_args()
    configure_logging("warning", "console")
    from tui.app import DrivemtApp

    proc = psutil.Process()
    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedNatsServer(store_dir=Path(tmp) / "js")
        url = await server.start()
        try:
            bus = Bus(url=url, subjects=Subjects("bench"), name="bench-tui")
            await bus.connect()
            await bus.ensure_streams()
            app = DrivemtApp(bus, catch_up=0)
            started = time.perf_counter()
            async with app.run_test(size=(160, 48)) as pilot:
                await pilot.pause()
                first_screen = time.perf_counter() - started
                print(f"first screen            {first_screen:7.2f} s   (process start to screen "
                      f"{time.perf_counter() - T0:.2f} s)   anchor <= 2 s")  # fmt: skip

                # Keystrokes while events stream in at --rate.
                data = stream(int(args.rate * args.seconds) + args.rate)
                stop = asyncio.Event()

                async def feed() -> int:
                    sent, tick = 0, 0.05
                    per_tick = max(1, round(args.rate * tick))
                    next_at = time.perf_counter()
                    while not stop.is_set() and sent + per_tick <= len(data):
                        for raw in data[sent : sent + per_tick]:
                            app.show_event(decode_event(raw))
                        sent += per_tick
                        next_at += tick
                        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                    return sent

                feeder = asyncio.create_task(feed())
                latencies = []
                panes = {"f2": "conversation", "f3": "violations-pane", "f4": "agents-pane", "f6": "batches-pane"}
                keys = ["f3", "f2", "f4", "f6", "f2"]
                tabs = app.query_one("#panes", TabbedContent)
                t_end = time.perf_counter() + args.seconds
                i = 0
                while time.perf_counter() < t_end:
                    key = keys[i % len(keys)]
                    i += 1
                    t = time.perf_counter()
                    app.post_message(events.Key(key, None))  # as a terminal sends it; no waiting for idle
                    while tabs.active != panes[key]:
                        await asyncio.sleep(0.002)
                    latencies.append((time.perf_counter() - t) * 1000)
                    await asyncio.sleep(0.3)
                stop.set()
                sent = await feeder
                rate = sent / args.seconds
                p50, p95 = statistics.median(latencies), sorted(latencies)[int(0.95 * (len(latencies) - 1))]
                print(f"keystroke to screen     p50 {p50:5.0f} ms, p95 {p95:5.0f} ms, max {max(latencies):5.0f} ms "
                      f"({len(latencies)} keys, {rate:.0f} events/s streamed)   anchor <= 100 ms")  # fmt: skip

                # Memory over many events (bounded state and log).
                data = stream(min(args.events, 20_000))
                base = proc.memory_info().rss
                print(f"RSS at start            {base / 2**20:7.0f} MB")
                for n in range(1, args.events + 1):
                    event = decode_event(data[n % len(data)])  # a fresh id: a repeat would be dropped as seen
                    app.show_event(event.model_copy(update={"event_id": str(uuid.uuid4())}))
                    if n % 1000 == 0:
                        await pilot.pause()  # let the app draw, as it would between bursts
                    if n % 10_000 == 0:
                        rss = proc.memory_info().rss
                        print(f"  after {n:7d} events  {rss / 2**20:7.0f} MB  ({(rss - base) / base:+.1%})")
                print(f"kept: {len(app.state.events)} events, {len(app.state.violations)} violations, "
                      f"{len(app.state.threads)} threads, {len(app.state.batches)} batches")  # fmt: skip
            await bus.close()
        finally:
            await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
