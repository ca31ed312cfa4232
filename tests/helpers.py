"""Small helpers shared by tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from bus import Bus, Event, decode_event
from tools.rules.models import TrafficRule

FIXTURES = Path(__file__).parent / "fixtures"


def rule(text: str, rule_id: str = "r1", region: str = "germany") -> TrafficRule:
    """A rule for tests."""
    return TrafficRule(id=rule_id, text=text, region=region)


class Recorder:
    """Records every event published on some subjects (core subscription; subscribe before publishing)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.raw: list[tuple[str, bytes]] = []
        self._subs: list[object] = []

    async def watch(self, bus: Bus, *subjects: str) -> Recorder:
        for subject in subjects:
            self._subs.append(await bus.nc.subscribe(subject, cb=self._on))
        return self

    async def _on(self, msg: object) -> None:
        self.raw.append((msg.subject, msg.data))  # type: ignore[attr-defined]
        try:
            self.events.append(decode_event(msg.data, subject=msg.subject))  # type: ignore[attr-defined]
        except Exception:
            pass

    def of(self, type_: type[Event]) -> list[Event]:
        return [e for e in self.events if isinstance(e, type_)]

    async def wait_for(self, predicate: Callable[[list[Event]], bool], timeout: float = 20.0) -> list[Event]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate(self.events):
            if loop.time() > deadline:
                raise AssertionError(f"timed out; saw {[e.type for e in self.events]}")
            await asyncio.sleep(0.02)
        return self.events
