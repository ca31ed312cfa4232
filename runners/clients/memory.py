"""The MR memory over the bus: for processes that hold no Qdrant store of their own.

Qdrant local mode lets one process open a store. A worker started with ``memory: bus`` (``drivemt worker``
does so by default) reaches the memory through the owner's ``drivemt-mrs`` service instead: the same
:class:`~memory.mr_store.MRStore` methods, each one request and reply. The owner runs store operations one at
a time, so counting a use (``claim``, ``increment_execution``) is atomic across every process.
"""

from __future__ import annotations

from collections.abc import Sequence

from bus import Bus
from bus.rpc import call
from bus.services import (
    MRS_ADD,
    MRS_CLAIM,
    MRS_COUNT,
    MRS_INCREMENT,
    MRS_LIST,
    MRS_SEARCH,
    TEMPLATES_ALL,
    AddMRs,
    ClaimMR,
    CountMRs,
    IncrementMR,
    ListMRs,
    ListTemplates,
    MRFilters,
    SearchMRs,
)
from memory.mr_store import SearchHit
from tools.crash.templates import ScenarioTemplate
from tools.rules.models import NewMR, StoredMR

__all__ = ["BusMRStore", "BusTemplates"]


class BusMRStore:
    """An :class:`~memory.mr_store.MRStore` whose every method is a call to the store's owner.

    Args:
        bus: A connected bus.
        timeout_s: Seconds to wait for each reply (storing embeds new MRs, which takes a while on a cold start).
    """

    name = "bus"

    def __init__(self, bus: Bus, *, timeout_s: float = 120.0) -> None:
        self.bus = bus
        self.timeout_s = timeout_s

    async def start(self) -> None:
        """Nothing to open: the owner holds the store."""

    async def stop(self) -> None:
        """Nothing to close."""

    async def add(self, items: Sequence[NewMR]) -> list[StoredMR]:
        """Store MRs in the owner's store (merging duplicates); one record per item, in order."""
        if not items:
            return []
        reply = await call(self.bus, MRS_ADD, AddMRs(mrs=list(items)), timeout=self.timeout_s)
        return reply.mrs

    async def search(self, query: str, *, limit: int = 10, **filters: str) -> list[SearchHit]:
        """MRs most similar to ``query``, optionally filtered."""
        req = SearchMRs(query=query, limit=limit, filters=MRFilters(**filters))
        reply = await call(self.bus, MRS_SEARCH, req, timeout=self.timeout_s)
        return [SearchHit(record=h.mr, similarity=h.similarity) for h in reply.hits]

    async def list(self, *, limit: int = 100, offset: int = 0, **filters: str) -> list[StoredMR]:
        """MRs in creation order."""
        req = ListMRs(limit=limit, offset=offset, filters=MRFilters(**filters))
        return (await call(self.bus, MRS_LIST, req, timeout=self.timeout_s)).mrs

    async def count(self) -> int:
        """Number of stored MRs."""
        return (await call(self.bus, MRS_COUNT, CountMRs(), timeout=self.timeout_s)).count

    async def claim(self, mr_ids: Sequence[str], *, query: str | None = None) -> StoredMR | None:
        """Pick the least-used of some MRs and count one more use of it, atomically in the owner."""
        if not mr_ids:
            return None
        req = ClaimMR(mr_ids=list(mr_ids), query=query)
        return (await call(self.bus, MRS_CLAIM, req, timeout=self.timeout_s)).mr

    async def increment_execution(self, mr_id: str, by: int = 1) -> int:
        """Count more uses of an MR; returns its new count."""
        reply = await call(self.bus, MRS_INCREMENT, IncrementMR(mr_id=mr_id, by=by), timeout=self.timeout_s)
        return reply.execution_count


class BusTemplates:
    """The scenario templates (``kb_templates``) of the store's owner, read over the bus."""

    def __init__(self, bus: Bus, *, timeout_s: float = 60.0) -> None:
        self.bus = bus
        self.timeout_s = timeout_s

    async def all(self) -> dict[str, ScenarioTemplate]:
        """Every stored template by road type."""
        reply = await call(self.bus, TEMPLATES_ALL, ListTemplates(), timeout=self.timeout_s)
        templates = [ScenarioTemplate.model_validate(t) for t in reply.templates]
        return {t.road_type: t for t in templates}
