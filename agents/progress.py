"""Progress events from work that runs in a worker thread (augmenting a dataset, running detectors).

The work calls a plain ``(done, total, message)`` callback from its thread; the reporter turns calls into
``progress`` events on the agent's event loop, at most one per interval (the last one always), and never
lets a failed publish disturb the work: progress is best effort, the result is what counts.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

import structlog

from bus import Bus, Event, ProgressReported
from bus.events import ProgressPayload

__all__ = ["ThreadProgress"]

log = structlog.get_logger(__name__)


class ThreadProgress:
    """Publishes progress of one input's work; create it on the event loop, call it from any thread.

    Args:
        bus: Where the events go.
        source: The input the work is for (correlation and causation come from it).
        producer: The agent's name.
        stage: What is being done, e.g. ``tl-augment``.
        unit: What is counted.
        interval_s: Least seconds between events (the final ``done == total`` one always goes).
    """

    def __init__(
        self, *, bus: Bus, source: Event, producer: str, stage: str, unit: str = "items", interval_s: float = 1.0
    ) -> None:
        self.bus = bus
        self.source = source
        self.producer = producer
        self.stage = stage
        self.unit = unit
        self.interval_s = interval_s
        self._loop = asyncio.get_running_loop()
        self._last = 0.0
        self._pending: list[concurrent.futures.Future[None]] = []

    def __call__(self, done: int, total: int, message: str = "") -> None:
        now = time.monotonic()
        if done < total and now - self._last < self.interval_s:
            return
        self._last = now
        event = ProgressReported(
            **self.source.caused(),
            producer=self.producer,
            payload=ProgressPayload(stage=self.stage, done=done, total=total, unit=self.unit, message=message),
        )
        self._pending.append(asyncio.run_coroutine_threadsafe(self._publish(event), self._loop))

    async def _publish(self, event: Event) -> None:
        try:
            await self.bus.publish(event)
        except Exception as exc:
            log.debug("progress not published", stage=self.stage, error=str(exc))

    async def flush(self) -> None:
        """Wait until every progress event asked for so far is out (call on the event loop)."""
        pending, self._pending = self._pending, []
        for fut in pending:
            await asyncio.wrap_future(fut)
