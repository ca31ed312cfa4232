"""Runs the rule agents in-process on a private embedded bus (``rules extract``, ``eval rules``, ``demo``),
or submits to a running daemon; either way the rules travel as events through the same agents.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bus import Bus, MRAccepted, MRRejected
from bus.events import ErrorReported
from memory.mr_store import StoreSettings
from runners.client import RuleResult, RulesCollector, make_submissions, unique_ids
from runners.config import DrivemtConfig
from runners.daemon import Daemon
from tools.common.models import Provenance
from tools.common.similarity import Embedder
from tools.rules.models import TrafficRule

__all__ = ["RunSummary", "private_daemon", "result_row", "run_rules_in_process", "submit_and_collect"]

ProgressFn = Callable[[int, int], None]


@dataclass
class RunSummary:
    """Results of one batch of rules."""

    correlation_id: str
    rules: list[TrafficRule]
    results: dict[str, RuleResult]
    seconds: float
    provenance: Provenance | None

    def counts(self) -> dict[str, int]:
        """Rules per outcome (accepted, rejected, error, missing)."""
        out = {"accepted": 0, "rejected": 0, "error": 0, "missing": 0}
        for rule in self.rules:
            res = self.results.get(rule.id)
            out[res.kind if res else "missing"] += 1
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One output row per rule, in input order."""
        return [result_row(rule, self.results.get(rule.id)) for rule in self.rules]


def result_row(rule: TrafficRule, result: RuleResult | None) -> dict[str, Any]:
    """The JSONL object of one rule: MR fields, Gherkin, score, or null fields and an error."""
    row: dict[str, Any] = {
        "id": rule.id,
        "text": rule.text,
        "region": rule.region,
        "road_type": None,
        "verb": None,
        "manipulation": None,
        "expected_behavior": None,
        "gherkin": None,
        "score": None,
    }
    if result is None:
        row["error"] = "no result before the timeout"
        return row
    event = result.event
    if isinstance(event, MRAccepted):
        mr = event.payload.mr
        winner = event.payload.winner
        row.update(winner.candidate.mr.model_dump())
        row.update(
            gherkin=winner.candidate.gherkin,
            score=round(winner.score, 4),
            mr_id=mr.mr_id,
            stored_gherkin=mr.gherkin,
            duplicate=mr.duplicate,
            parser=winner.candidate.parser,
            validator=mr.validator,
            provenance=event.payload.provenance.model_dump(mode="json"),
        )
    elif isinstance(event, MRRejected):
        row["error"] = "rejected: " + "; ".join(event.payload.reasons)
        row["candidates"] = [
            {"gherkin": c.candidate.gherkin, "score": c.score, "parser": c.candidate.parser}
            for c in event.payload.candidates
        ]
        row["provenance"] = event.payload.provenance.model_dump(mode="json")
    elif isinstance(event, ErrorReported):
        row["error"] = f"{event.payload.error_type}: {event.payload.reason}"
    return row


async def submit_and_collect(
    bus: Bus,
    rules: Sequence[TrafficRule],
    *,
    timeout: float,
    on_progress: ProgressFn | None = None,
    source: str | None = None,
) -> RunSummary:
    """Submit rules to whatever daemon consumes this bus and wait for every result."""
    rules = unique_ids(rules)
    correlation, events = make_submissions(rules, source=source)
    collector = RulesCollector(bus, correlation, {r.id for r in rules})
    await collector.start()
    started = time.perf_counter()
    try:
        await bus.publish_many(events)
        await collector.wait(timeout=timeout, on_progress=on_progress)
    finally:
        await collector.stop()
    seconds = time.perf_counter() - started
    provenance = next(
        (
            r.event.payload.provenance
            for r in collector.results.values()
            if isinstance(r.event, MRAccepted | MRRejected)
        ),
        None,
    )
    return RunSummary(correlation, list(rules), dict(collector.results), seconds, provenance)


async def run_rules_in_process(
    config: DrivemtConfig,
    rules: Sequence[TrafficRule],
    *,
    timeout: float = 600.0,
    on_progress: ProgressFn | None = None,
    store_dir: Path | None = None,
    embedder: Embedder | None = None,
    model_clients: Mapping[str, Any] | None = None,
    source: str | None = None,
) -> RunSummary:
    """Run the rule agents on a private embedded bus and return every rule's result.

    Args:
        config: Configuration (its LLM and validation settings apply; bus and store are private).
        rules: The rules.
        timeout: Seconds to wait for all results.
        on_progress: Called with (done, total).
        store_dir: Keep the MR store here (a temporary folder otherwise).
        embedder: Share a loaded embedder.
        model_clients: Model clients by label (tests).
        source: Where the rules came from.
    """
    async with private_daemon(
        config, embedder=embedder, model_clients=model_clients, store_dir=store_dir, prefix="drivemt-run-"
    ) as daemon:
        assert daemon.bus is not None
        return await submit_and_collect(daemon.bus, rules, timeout=timeout, on_progress=on_progress, source=source)


@contextlib.asynccontextmanager
async def private_daemon(
    config: DrivemtConfig,
    *,
    embedder: Embedder | None = None,
    model_clients: Mapping[str, Any] | None = None,
    store_dir: Path | None = None,
    prefix: str = "drivemt-",
    **updates: Any,
) -> AsyncIterator[Daemon]:
    """A daemon of this command's own: embedded bus and store in a temporary folder, no state file.

    Args:
        config: Configuration (its agents, LLM and validation settings apply; bus and store are private).
        embedder: Share a loaded embedder.
        model_clients: Model clients by label (tests).
        store_dir: Keep the MR store here (the temporary folder otherwise).
        prefix: Name prefix of the temporary folder.
        **updates: Further configuration fields to replace (e.g. ``agents``, ``artifacts_dir``).
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        private = config.model_copy(update={"data_dir": Path(tmp), "nats_url": None, "qdrant_url": None, **updates})
        store = StoreSettings(path=store_dir or Path(tmp) / "qdrant")
        async with Daemon(
            private, embedder=embedder, model_clients=model_clients, store_settings=store, write_state_file=False
        ) as daemon:
            yield daemon
