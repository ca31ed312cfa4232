"""Operations on a running system through the bus: status, dead letters."""

from __future__ import annotations

import base64
import contextlib
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from nats.js.errors import NotFoundError

from bus import Bus, DeadLettered, decode_event
from bus.errors import BusError, EventValidationError
from bus.rpc import call
from bus.services import MRS_COUNT, CountMRs

__all__ = ["collect_status", "list_deadletters", "retry_deadletters"]


async def collect_status(bus: Bus) -> dict[str, Any]:
    """Agents (last heartbeat of each instance), every agent's work queue, stream sizes, dead letters, MR count."""
    await bus.check_own_streams()
    names = bus.subjects.streams
    agents: list[dict[str, Any]] = []
    try:
        info = await bus.js.stream_info(names.heartbeats, subjects_filter=bus.subjects.all_heartbeats)
        subjects = list((info.state.subjects or {}).keys())
    except NotFoundError:
        subjects = []
    now = datetime.now(UTC)
    for subject in sorted(subjects):
        with contextlib.suppress(NotFoundError, EventValidationError):
            raw = await bus.js.get_last_msg(names.heartbeats, subject)
            hb = decode_event(raw.data or b"", subject=subject)
            p = hb.payload  # type: ignore[attr-defined]
            age = (now - hb.time).total_seconds()
            agents.append(
                {
                    "agent": p.agent,
                    "instance": p.instance,
                    # (the last heartbeat of an agent that stopped says "stopping"; three intervals on, it is gone)
                    "status": "stopped" if p.status == "stopping" and age > 3 * p.interval_s else p.status,
                    "handled": p.handled,
                    "failed": p.failed,
                    "in_flight": p.in_flight,
                    "last_error": p.last_error,
                    "time": hb.time,
                    "stale": age > 3 * p.interval_s and p.status != "stopping",
                    "host": p.host,
                    "pid": p.pid,
                    "consumes": p.consumes,
                    "produces": p.produces,
                    "tools": p.tools,
                }
            )
    # Every agent type reads its inputs through one durable consumer named after it (its work queue), so the
    # queues are the streams' durable consumers: whatever agents exist, each one's queue is listed.
    consumers = []
    for stream in (names.inputs, names.results):
        with contextlib.suppress(NotFoundError):
            for ci in await bus.js.consumers_info(stream):
                if ci.config.durable_name:
                    consumers.append(
                        {
                            "name": ci.name,
                            "stream": stream,
                            "pending": ci.num_pending,
                            "ack_pending": ci.num_ack_pending,
                            "redelivered": ci.num_redelivered,
                        }
                    )
    streams = []
    deadletters = 0
    for stream in (names.inputs, names.results, names.deadletter):
        with contextlib.suppress(NotFoundError):
            si = await bus.js.stream_info(stream)
            streams.append({"name": stream, "messages": si.state.messages})
            if stream == names.deadletter:
                deadletters = si.state.messages
    mrs = None
    with contextlib.suppress(BusError):
        mrs = (await call(bus, MRS_COUNT, CountMRs(), timeout=2.0)).count
    return {
        "url": bus.connected_url,
        "namespace": bus.subjects.namespace,
        "agents": agents,
        "consumers": consumers,
        "streams": streams,
        "deadletters": deadletters,
        "mrs": mrs,
    }


async def count_deadletters(bus: Bus) -> int:
    """How many dead letters the stream holds."""
    await bus.check_own_streams()
    try:
        return int((await bus.js.stream_info(bus.subjects.streams.deadletter)).state.messages)
    except NotFoundError:
        return 0


async def list_deadletters(
    bus: Bus, *, limit: int | None = 1000, newest: bool = False, seqs: Iterable[int] | None = None
) -> list[tuple[int, DeadLettered]]:
    """Dead letters as ``(stream sequence, event)``, oldest first.

    Args:
        bus: Connected bus.
        limit: Most returned (``None``: all).
        newest: The newest ``limit`` rather than the oldest.
        seqs: Only these sequences (each fetched directly, however many letters there are).
    """
    await bus.check_own_streams()
    name = bus.subjects.streams.deadletter
    try:
        si = await bus.js.stream_info(name)
    except NotFoundError:
        return []
    if si.state.messages == 0:
        return []
    first, last = si.state.first_seq, si.state.last_seq
    order: Iterable[int] = (
        sorted(set(seqs)) if seqs is not None else (range(last, first - 1, -1) if newest else range(first, last + 1))
    )
    out: list[tuple[int, DeadLettered]] = []
    for seq in order:
        if limit is not None and len(out) >= limit:
            break
        if not first <= seq <= last:
            continue
        try:
            raw = await bus.js.get_msg(name, seq)
        except NotFoundError:
            continue
        with contextlib.suppress(EventValidationError):
            event = decode_event(raw.data or b"", subject=raw.subject or "")
            if isinstance(event, DeadLettered):
                out.append((seq, event))
    return sorted(out, key=lambda item: item[0])


async def retry_deadletters(bus: Bus, seqs: list[int] | None = None) -> list[int]:
    """Send dead letters back to their original subjects and remove them; returns the sequences retried.

    A dead letter whose message was too large to keep whole (``truncated``) is never sent back; it stays listed.

    Args:
        bus: Connected bus.
        seqs: Stream sequences to retry (all when ``None``); one that is not a dead letter is left out of the result.
    """
    await bus.check_own_streams()
    name = bus.subjects.streams.deadletter
    retried = []
    for seq, event in await list_deadletters(bus, limit=None, seqs=seqs):
        p = event.payload
        if p.truncated:  # only its start was kept: sending that back would be another poison
            continue
        data = base64.b64decode(p.data_b64) if p.data_b64 else p.data.encode("utf-8")
        try:  # an event set aside was marked handled by its agent: forget that, or the agent would skip it
            await bus.forget_handled(p.consumer, decode_event(data, subject=p.original_subject).event_id)
        except EventValidationError:
            pass  # (bytes that are no event were never marked)
        headers = {k: v for k, v in p.headers.items() if k != "Nats-Msg-Id"}
        headers["Nats-Msg-Id"] = f"retry-{seq}-{time.time_ns()}"
        await bus.publish_raw(p.original_subject, data, headers=headers)
        await bus.js.delete_msg(name, seq)
        retried.append(seq)
    return retried
