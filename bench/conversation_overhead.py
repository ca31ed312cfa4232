"""What the conversation costs: rules/s through a daemon with ``conversation.enabled`` off and on.

With the switch on, the M-Agent and the Validator each publish one ``agents.message`` per rule (the offline
parser's matched terms, the Validator's scores and verdict), at most 2 KB each. This bench runs the same rules
through a freshly spawned daemon (offline defaults, its own data dir) with the switch off and on, alternating
``--rounds`` times, and prints rules/s end to end (first publish to last result) for each, the overhead, and the
messages' count and sizes.

Usage: python bench/conversation_overhead.py [--rules 1000] [--rounds 2] [--rules-file PATH] [--figures OUT.json]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from _daemon import spawned_daemon  # bench/ is on the path when a bench runs
from _figures import Figure, add_figures_arg, write_figures
from daemon_throughput import DEFAULT_RULES, load_rules

from bus import AgentMessage, Bus, ErrorDomain, MRAccepted, MRRejected, RulesSubmitted, Subjects, decode_event
from bus.events import MAX_MESSAGE_BYTES, ErrorReported, RulesSubmittedPayload
from runners.clients.rules import make_submissions
from tools.rules.models import TrafficRule

SWITCH = "DRIVEMT_CONVERSATION__ENABLED"
OVERHEAD_TARGET = 0.25  # the switch on may cost at most a quarter of the rules/s


async def one_run(rules: list[TrafficRule], *, conversation: bool) -> tuple[float, list[int]]:
    """rules/s through a new daemon with the switch set, and the encoded sizes of the agents.message events seen."""
    data = Path(tempfile.mkdtemp(prefix="drivemt-bench-conv-"))
    os.environ[SWITCH] = "true" if conversation else "false"
    try:
        async with spawned_daemon(data, data / "daemon.log", poll_s=0.01) as daemon:
            async with Bus(url=daemon.state.nats_url, subjects=Subjects()) as bus:
                sizes: list[int] = []

                async def on_message(msg: object) -> None:
                    data_ = msg.data  # type: ignore[attr-defined]
                    if isinstance(decode_event(data_, subject=msg.subject), AgentMessage):  # type: ignore[attr-defined]
                        sizes.append(len(data_))

                await warm_up(bus)
                correlation, events = make_submissions(rules, producer="bench")
                done: set[str] = set()
                finished = asyncio.get_running_loop().create_future()

                async def on_result(msg: object) -> None:
                    ev = decode_event(msg.data, subject=msg.subject)  # type: ignore[attr-defined]
                    if ev.correlation_id != correlation:
                        return
                    if isinstance(ev, MRAccepted | MRRejected):
                        done.add(ev.payload.rule.id)
                    elif isinstance(ev, ErrorReported) and ev.payload.item_id:
                        done.add(ev.payload.item_id)
                    if len(done) == len(rules) and not finished.done():
                        finished.set_result(time.perf_counter())

                s = bus.subjects
                subs = [
                    await bus.nc.subscribe(subject, cb=on_result)
                    for subject in (s.mrs_accepted, s.mrs_rejected, s.errors(ErrorDomain.RULES))
                ]
                subs.append(await bus.nc.subscribe(s.all_agent_messages, cb=on_message))
                t0 = time.perf_counter()
                await bus.publish_many(events)
                seconds = await asyncio.wait_for(finished, 900) - t0
                await asyncio.sleep(0.5)  # the last messages trail their results by a publish
                for sub in subs:
                    await sub.unsubscribe()
        return len(rules) / seconds, sizes
    finally:
        os.environ.pop(SWITCH, None)


async def warm_up(bus: Bus) -> None:
    """One rule through the daemon, so the model load is not measured."""
    probe = RulesSubmitted(
        producer="bench", payload=RulesSubmittedPayload(rules=[TrafficRule(id="probe", text="Slow down in fog.")])
    )
    got = asyncio.get_running_loop().create_future()

    async def on_first(msg: object) -> None:
        ev = decode_event(msg.data, subject=msg.subject)  # type: ignore[attr-defined]
        if ev.correlation_id == probe.correlation_id and not got.done():
            got.set_result(None)

    sub = await bus.nc.subscribe(bus.subjects.mrs_accepted, cb=on_first)
    while True:
        try:
            await bus.publish(probe)
            break
        except Exception:
            await asyncio.sleep(0.01)
    await asyncio.wait_for(got, 120)
    await sub.unsubscribe()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2, help="Off/on pairs, alternating (the median of each is shown).")
    ap.add_argument("--rules-file", type=Path, default=DEFAULT_RULES)
    add_figures_arg(ap)
    args = ap.parse_args()
    rules = load_rules(args.rules_file, args.rules)
    rates: dict[bool, list[float]] = {False: [], True: []}
    sizes: list[int] = []
    for round_ in range(args.rounds):
        for conversation in (False, True) if round_ % 2 == 0 else (True, False):
            rate, seen = await one_run(rules, conversation=conversation)
            rates[conversation].append(rate)
            if conversation:
                sizes = seen
            else:
                assert not seen, "the switch is off, yet agents.message events were published"
            print(f"round {round_ + 1}: conversation {'on ' if conversation else 'off'} {rate:7.1f} rules/s")
    off, on = statistics.median(rates[False]), statistics.median(rates[True])
    overhead = 1.0 - on / off
    print(f"{len(rules)} rules, median of {args.rounds}: conversation off {off:.1f} rules/s, on {on:.1f} rules/s")
    print(f"overhead {overhead:+.1%} (target <= {OVERHEAD_TARGET:.0%})")
    if sizes:
        print(
            f"agents.message events (last on-run): {len(sizes)} for {len(rules)} rules "
            f"({len(sizes) / len(rules):.1f} per rule), {statistics.mean(sizes):.0f} bytes mean, "
            f"{max(sizes)} max (bound {MAX_MESSAGE_BYTES})"
        )
    write_figures(
        args.figures,
        [
            Figure("rules end to end, conversation off", off, "rules/s", size=f"{len(rules)} rules"),
            Figure("rules end to end, conversation on", on, "rules/s", size=f"{len(rules)} rules"),
            Figure(
                "conversation overhead",
                overhead * 100,
                "%",
                f"<= {OVERHEAD_TARGET * 100:g}",
                overhead <= OVERHEAD_TARGET,
                size=f"{len(rules)} rules",
            ),
        ],
    )


if __name__ == "__main__":
    asyncio.run(main())
