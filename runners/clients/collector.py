"""Collecting a submission's results from the bus: the one pattern the rules, crash and traffic-light clients share.

A :class:`Collector` subscribes to some subjects *before* the submission is published (so nothing is
missed), keeps the events of one correlation id, hands each to the client's ``on_event`` and wakes the
waiter, which returns once the client says the submission is complete or the timeout passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from types import TracebackType

from bus import Bus, Event, EventValidationError, decode_event
from bus.errors import BusError

__all__ = ["Collector"]


class Collector:
    """Collects the events of one submission.

    Args:
        bus: A connected bus.
        correlation_id: The submission.
        subjects: Subjects to watch.
        on_event: Called with each event of the submission, in arrival order.
    """

    def __init__(
        self, bus: Bus, correlation_id: str, subjects: Iterable[str], on_event: Callable[[Event], None]
    ) -> None:
        self.bus = bus
        self.correlation_id = correlation_id
        self.subjects = list(dict.fromkeys(subjects))
        self.on_event = on_event
        self._subs: list[object] = []
        self._changed = asyncio.Event()

    async def start(self) -> None:
        """Subscribe (call before publishing the submission)."""
        for subject in self.subjects:
            self._subs.append(await self.bus.nc.subscribe(subject, cb=self._on_msg))

    async def stop(self) -> None:
        """Unsubscribe."""
        for sub in self._subs:
            with contextlib.suppress(Exception):  # the connection may already be closed
                await sub.unsubscribe()  # type: ignore[attr-defined]
        self._subs.clear()

    async def __aenter__(self) -> Collector:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def _on_msg(self, msg: object) -> None:
        try:
            event = decode_event(msg.data, subject=msg.subject)  # type: ignore[attr-defined]
        except EventValidationError:
            return
        if event.correlation_id != self.correlation_id:
            return
        self.on_event(event)
        self._changed.set()

    async def wait(
        self,
        complete: Callable[[], bool],
        *,
        timeout: float,
        on_tick: Callable[[], None] | None = None,
        lost_after_s: float = 20.0,
    ) -> bool:
        """Wait until ``complete()`` or ``timeout`` seconds; ``on_tick`` runs after every change (and at the end).

        Returns:
            Whether the submission completed.

        Raises:
            BusError: When the bus has been unreachable for ``lost_after_s`` (its daemon stopped): waiting on would
                only wait out the timeout.
        """
        deadline = time.monotonic() + timeout
        lost_since: float | None = None
        while not complete() and time.monotonic() < deadline:
            if self.bus.nc.is_connected:
                lost_since = None
            else:
                now = time.monotonic()
                lost_since = lost_since if lost_since is not None else now
                if now - lost_since > lost_after_s:
                    raise BusError(
                        f"lost the bus for {lost_after_s:.0f} s (has its daemon stopped?); what the submission "
                        "produces later is kept in the daemon's streams (see `drivemt status`)"
                    )
            if on_tick is not None:
                on_tick()
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=min(0.5, max(0.01, deadline - time.monotonic())))
        if on_tick is not None:
            on_tick()
        return complete()
