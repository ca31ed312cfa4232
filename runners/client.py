"""Talking to a running daemon: finding its bus, submitting rules, collecting their results."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bus import (
    Bus,
    ErrorDomain,
    Event,
    MRAccepted,
    MRRejected,
    NoDaemonError,
    RulesSubmitted,
    Subjects,
    decode_event,
    port_open,
)
from bus.errors import EventValidationError
from bus.events import ErrorReported, RulesSubmittedPayload
from runners.config import DrivemtConfig
from runners.state import daemon_alive, read_state
from tools.rules.models import TrafficRule

__all__ = ["RuleResult", "RulesCollector", "find_bus_url", "make_submissions", "unique_ids"]


def find_bus_url(config: DrivemtConfig) -> str:
    """The bus of the daemon this command should talk to.

    ``--nats-url`` wins; otherwise the state file of a live daemon on the same data dir.

    Raises:
        NoDaemonError: If neither gives a reachable server.
    """
    if config.nats_url:
        return config.nats_url
    state = read_state(config.state_file)
    if state is None or not daemon_alive(state):
        raise NoDaemonError(str(config.data_dir))
    host_port = state.nats_url.split("://", 1)[-1]
    host, _, port = host_port.rpartition(":")
    if not port_open(host or "127.0.0.1", int(port)):
        raise NoDaemonError(str(config.data_dir))
    return state.nats_url


def unique_ids(rules: Sequence[TrafficRule]) -> list[TrafficRule]:
    """Rules with ids made unique within a submission (``id#2`` for a repeated id)."""
    seen: dict[str, int] = {}
    out = []
    for r in rules:
        n = seen.get(r.id, 0) + 1
        seen[r.id] = n
        out.append(r if n == 1 else r.model_copy(update={"id": f"{r.id}#{n}"}))
    return out


def make_submissions(
    rules: Sequence[TrafficRule], *, producer: str = "cli", per_event: int = 1, source: str | None = None
) -> tuple[str, list[RulesSubmitted]]:
    """Submission events for rules, sharing one correlation id.

    Args:
        rules: The rules (ids unique).
        producer: Who submits.
        per_event: Rules per event (1 gives the daemon the most parallelism).
        source: Where the rules came from.

    Returns:
        The correlation id and the events.
    """
    correlation = str(uuid.uuid4())
    events = [
        RulesSubmitted(
            correlation_id=correlation,
            producer=producer,
            payload=RulesSubmittedPayload(rules=list(rules[i : i + per_event]), source=source),
        )
        for i in range(0, len(rules), max(1, per_event))
    ]
    return correlation, events


@dataclass
class RuleResult:
    """The outcome of one rule: an accepted MR, a rejection, or an error."""

    rule_id: str
    event: Event

    @property
    def kind(self) -> str:
        """``accepted``, ``rejected`` or ``error``."""
        if isinstance(self.event, MRAccepted):
            return "accepted"
        if isinstance(self.event, MRRejected):
            return "rejected"
        return "error"


@dataclass
class RulesCollector:
    """Collects the results of submitted rules from the bus.

    Subscribe (:meth:`start`) before publishing, so no result is missed.
    """

    bus: Bus
    correlation_id: str
    rule_ids: set[str]
    results: dict[str, RuleResult] = field(default_factory=dict)
    _done: asyncio.Event = field(default_factory=asyncio.Event)
    _subs: list[object] = field(default_factory=list)

    async def start(self) -> None:
        """Subscribe to accepted, rejected and rule-error subjects."""
        s: Subjects = self.bus.subjects
        for subject in (s.mrs_accepted, s.mrs_rejected, s.errors(ErrorDomain.RULES), s.errors(ErrorDomain.MRS)):
            self._subs.append(await self.bus.nc.subscribe(subject, cb=self._on_msg))
        if not self.rule_ids:
            self._done.set()

    async def _on_msg(self, msg: object) -> None:
        try:
            event = decode_event(msg.data, subject=msg.subject)  # type: ignore[attr-defined]
        except EventValidationError:
            return
        if event.correlation_id != self.correlation_id:
            return
        if isinstance(event, MRAccepted | MRRejected):
            self._add(event.payload.rule.id, event)
        elif isinstance(event, ErrorReported):
            if event.payload.item_id is not None:
                self._add(event.payload.item_id, event)
            else:
                for rid in self.rule_ids - set(self.results):
                    self._add(rid, event)

    def _add(self, rule_id: str, event: Event) -> None:
        if rule_id in self.rule_ids and rule_id not in self.results:
            self.results[rule_id] = RuleResult(rule_id, event)
            if len(self.results) == len(self.rule_ids):
                self._done.set()

    async def wait(self, *, timeout: float, on_progress: Callable[[int, int], None] | None = None) -> bool:
        """Wait until every rule has a result or ``timeout`` seconds pass; True when complete."""
        deadline = time.monotonic() + timeout
        last = -1
        while not self._done.is_set() and time.monotonic() < deadline:
            if on_progress is not None and len(self.results) != last:
                last = len(self.results)
                on_progress(last, len(self.rule_ids))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._done.wait(), timeout=min(0.2, max(0.01, deadline - time.monotonic())))
        if on_progress is not None:
            on_progress(len(self.results), len(self.rule_ids))
        return self._done.is_set()

    async def stop(self) -> None:
        """Unsubscribe."""
        for sub in self._subs:
            with contextlib.suppress(Exception):  # the connection may already be closed
                await sub.unsubscribe()  # type: ignore[attr-defined]
        self._subs.clear()
