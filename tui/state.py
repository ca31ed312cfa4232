"""What the console knows, kept apart from how it is drawn: bounded, and fed one event at a time.

:class:`ConsoleState` turns events into the rows of each pane (the conversation and its threads, violations,
agent instances, batches). It holds no widget, so it is tested on its own and replayed from recorded streams,
and every collection in it is bounded, so a daemon that runs for weeks does not grow the console.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bus.events import (
    AgentHeartbeat,
    CrashVerdict,
    ErrorReported,
    Event,
    MTBatchJudged,
    ProgressReported,
    TLVerdict,
    ViolationFound,
)

__all__ = ["AgentRow", "BatchRow", "ConsoleState", "ViolationRow", "summary_of"]

PIPELINES = {"crash": "crash", "tl": "traffic light", "mr": "driving model"}


def summary_of(event: Event) -> str:
    """The one-line text of an event (errors say their type and reason)."""
    if isinstance(event, ErrorReported):
        return f"{event.payload.error_type}: {event.payload.reason}"
    return event.summary


@dataclass
class ViolationRow:
    """One violation, as the Violations pane lists it."""

    event_id: str
    time: datetime
    pipeline: str
    case: str
    relation: str
    subject: str
    measure: str
    description: str
    evidence: list[str]
    metrics: dict[str, float]
    details: dict[str, Any]
    correlation_id: str

    @classmethod
    def of(cls, event: ViolationFound) -> ViolationRow:
        """The row of a violation event, by pipeline."""
        p = event.payload
        d, m = p.details, p.metrics
        if p.kind == "crash":
            relation, subject = "reproduce the reported crash", str(d.get("run_id", "")).split("-")[0] or "ego"
            measure = f"collision at {m['t']:.1f} s" if m.get("t", -1) >= 0 else "collision"
            if m.get("reproduced"):
                measure += ", reproduced"
        elif p.kind == "tl":
            relation, subject = str(d.get("transform", "")), str(d.get("detector", ""))
            measure = f"consistency {m.get('consistency', 0.0):.2f}"
        else:
            relation, subject = str(d.get("mr", d.get("behaviour", ""))), str(d.get("model", ""))
            change = m.get("change")
            measure = f"change {change:+.2f} (band {m.get('band', 0.0):.2f})" if change is not None else ""
        return cls(
            event_id=event.event_id,
            time=event.time,
            pipeline=PIPELINES.get(p.kind, p.kind),
            case=p.item_id,
            relation=relation,
            subject=subject,
            measure=measure,
            description=p.description,
            evidence=list(p.evidence),
            metrics=dict(m),
            details=dict(d),
            correlation_id=event.correlation_id,
        )


@dataclass
class AgentRow:
    """One agent instance, from its heartbeats."""

    key: str
    agent: str
    instance: str
    status: str
    handled: int
    failed: int
    in_flight: int
    last_error: str | None
    seen: datetime
    host: str = ""
    pid: int = 0
    history: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=120))
    interval_s: float = 5.0
    received: datetime | None = None
    """When the console received its latest heartbeat, by the console's own clock (the daemon's may differ)."""
    shown: str = ""
    """The status as last drawn (see :meth:`shown_status`)."""

    def shown_status(self, now: datetime) -> str:
        """Its status, or ``silent`` when three heartbeats are missing (its process is gone or stuck), or ``stopped``
        when the last one said it was stopping; counted on the console's clock from when the latest arrived."""
        if (now - (self.received or now)).total_seconds() <= 3 * self.interval_s:
            return self.status
        return "stopped" if self.status == "stopping" else "silent"

    def per_minute(self) -> float:
        """Events handled over the last minute of heartbeats (per minute)."""
        if len(self.history) < 2:
            return 0.0
        now, last = self.history[-1]
        old = next(((t, h) for t, h in self.history if now - t <= 60.0), self.history[0])
        span = now - old[0]
        return (last - old[1]) * 60.0 / span if span > 0 else 0.0


@dataclass
class BatchRow:
    """One submission (a correlation id) and how far it is."""

    correlation_id: str
    started: datetime
    kind: str = ""
    stage: str = ""
    done: int = 0
    total: int | None = None
    unit: str = "items"
    message: str = ""
    finished: bool = False
    totals: str = ""
    report: str | None = None
    events: int = 0
    errors: int = 0


class ConsoleState:
    """Everything the panes show, bounded.

    Args:
        max_events: Events kept for the conversation (the oldest go first).
        max_threads: Submissions whose chain is kept (the least recent go first).
        max_thread_events: Events kept per submission.
        max_violations: Violations kept (counts keep counting).
        max_batches: Batches kept.
        clock: The console's clock (the wall clock by default).
    """

    def __init__(
        self,
        *,
        max_events: int = 5000,
        max_threads: int = 200,
        max_thread_events: int = 100,
        max_violations: int = 2000,
        max_batches: int = 200,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self.events: deque[Event] = deque(maxlen=max_events)
        self.threads: OrderedDict[str, deque[Event]] = OrderedDict()
        self.max_threads = max_threads
        self.max_thread_events = max_thread_events
        self.violations: deque[ViolationRow] = deque(maxlen=max_violations)
        self.violation_counts: dict[str, int] = {}
        self.agents: dict[str, AgentRow] = {}
        self.batches: OrderedDict[str, BatchRow] = OrderedDict()
        self.max_batches = max_batches
        self.counts: dict[str, int] = {}
        self.seen_ids: OrderedDict[str, None] = OrderedDict()  # catch-up and live may bring an event twice
        # What changed since the panes last drew (they drain these, so a redraw costs what is new, not all).
        self.new_violations: list[ViolationRow] = []
        self.changed_batches: set[str] = set()
        self.changed_agents: set[str] = set()

    def ingest(self, event: Event) -> set[str]:
        """Add an event; returns the panes that changed (``conversation``, ``violations``, ``agents``,
        ``batches``). An event seen before (catch-up overlapping the live feed) changes nothing."""
        if event.event_id in self.seen_ids:
            return set()
        self.seen_ids[event.event_id] = None
        if len(self.seen_ids) > 20_000:
            self.seen_ids.popitem(last=False)
        self.counts[event.type] = self.counts.get(event.type, 0) + 1
        if isinstance(event, AgentHeartbeat):
            self._heartbeat(event)
            return {"agents"}
        changed = {"conversation"}
        self.events.append(event)
        thread = self.threads.get(event.correlation_id)
        if thread is None:
            thread = self.threads[event.correlation_id] = deque(maxlen=self.max_thread_events)
            if len(self.threads) > self.max_threads:
                self.threads.popitem(last=False)
        else:
            self.threads.move_to_end(event.correlation_id)
        thread.append(event)
        if isinstance(event, ViolationFound):
            row = ViolationRow.of(event)
            self.violations.append(row)
            self.new_violations.append(row)
            if self.violations.maxlen is not None:
                del self.new_violations[: -self.violations.maxlen]
            self.violation_counts[row.pipeline] = self.violation_counts.get(row.pipeline, 0) + 1
            changed.add("violations")
        if self._batch(event):
            changed.add("batches")
        return changed

    def thread(self, correlation_id: str) -> list[Event]:
        """Every kept event of one submission, in arrival order."""
        return list(self.threads.get(correlation_id, ()))

    def find_thread(self, prefix: str) -> str | None:
        """The correlation id that starts with ``prefix`` (the most recent one)."""
        for cid in reversed(self.threads):
            if cid.startswith(prefix):
                return cid
        return None

    def sweep_silent(self, now: datetime) -> bool:
        """Mark for drawing the instances whose shown status changed with time alone (heartbeats that stopped
        coming); whether any did."""
        changed = False
        for key, row in self.agents.items():
            if row.shown_status(now) != row.shown:
                self.changed_agents.add(key)
                changed = True
        return changed

    def _heartbeat(self, event: AgentHeartbeat) -> None:
        p = event.payload
        key = f"{p.agent}/{p.instance}"
        row = self.agents.get(key)
        if row is None:
            row = self.agents[key] = AgentRow(
                key, p.agent, p.instance, p.status, p.handled, p.failed, p.in_flight, p.last_error, event.time
            )
        row.status, row.handled, row.failed, row.in_flight = p.status, p.handled, p.failed, p.in_flight
        row.last_error, row.seen, row.host, row.pid = p.last_error, event.time, p.host, p.pid
        row.interval_s, row.received = p.interval_s, self.now()
        row.history.append((event.time.timestamp(), p.handled))
        self.changed_agents.add(key)

    def _batch(self, event: Event) -> bool:
        cid = event.correlation_id
        row = self.batches.get(cid)
        submitted = event.type.endswith(".submitted")
        if row is None:
            if not (submitted or isinstance(event, ProgressReported)):
                return False
            row = self.batches[cid] = BatchRow(cid, event.time, kind=event.type.split(".")[0])
            if len(self.batches) > self.max_batches:
                gone, _ = self.batches.popitem(last=False)
                self.changed_batches.add(gone)
        row.events += 1
        self.changed_batches.add(cid)
        if isinstance(event, ErrorReported):
            row.errors += 1
        if isinstance(event, ProgressReported):
            p = event.payload
            row.stage, row.done, row.total, row.unit, row.message = p.stage, p.done, p.total, p.unit, p.message
            row.report = p.report or row.report
            row.finished = row.finished or (p.total is not None and p.done >= p.total and "judge" in p.stage)
        elif isinstance(event, CrashVerdict | TLVerdict | MTBatchJudged):
            row.totals = event.summary
            report = getattr(event.payload, "report", None)
            if report:
                row.report = str(report)
            if isinstance(event, TLVerdict | MTBatchJudged):
                row.finished = True
        return True

    def now(self) -> datetime:
        """The console's clock (tests freeze it)."""
        return self._clock()
