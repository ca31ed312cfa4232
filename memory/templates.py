"""The ``kb_templates`` collection: scenario templates per road type (SAFE's template knowledge base).

It shares the MR store's Qdrant client (local mode allows one client per folder). The packaged
templates are written once; a user's template for a road type replaces the packaged one and is never
overwritten by it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, Protocol

import structlog

from memory.mr_store import QdrantMRStore
from tools.crash.templates import ScenarioTemplate, packaged_templates

__all__ = ["TEMPLATES_COLLECTION", "TemplateSource", "TemplateStore"]

TEMPLATES_COLLECTION = "kb_templates"
_NS = uuid.UUID("6f1d7a52-2b0c-4a8e-9c55-1a7b3e0d9f21")
log = structlog.get_logger("drivemt.memory.templates")


def _point_id(road_type: str) -> str:
    return str(uuid.uuid5(_NS, road_type.lower()))


class TemplateSource(Protocol):
    """Where stored templates are read from (this store, or the owner's over the bus)."""

    async def all(self) -> dict[str, ScenarioTemplate]:
        """Every stored template by road type."""
        ...


class TemplateStore:
    """Scenario templates in Qdrant, one point per road type, embedded by their description.

    Args:
        store: The open MR store whose client (and thread) this collection shares.
        collection: Collection name (tests use their own).
    """

    def __init__(self, *, store: QdrantMRStore, collection: str = TEMPLATES_COLLECTION) -> None:
        self.store = store
        self.collection = collection

    async def start(self) -> None:
        """Create the collection and write the packaged templates of road types not stored yet."""
        await self.store.call(self._ensure_sync)
        await self.add(packaged_templates().values(), replace=False)

    def _ensure_sync(self) -> None:
        from qdrant_client import models

        client = self.store.client
        if not client.collection_exists(self.collection):
            client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(size=self.store.embedder.dimension, distance=models.Distance.COSINE),
            )

    async def add(self, templates: Iterable[ScenarioTemplate], *, replace: bool = True) -> int:
        """Store templates in one batch; with ``replace=False`` existing road types are kept. Returns how many were written."""
        items = list(templates)
        if not items:
            return 0
        return int(await self.store.call(self._add_sync, items, replace))

    def _add_sync(self, items: list[ScenarioTemplate], replace: bool) -> int:
        from qdrant_client import models

        client = self.store.client
        if not replace:
            have = {p.id for p in client.retrieve(self.collection, [_point_id(t.road_type) for t in items])}
            items = [t for t in items if _point_id(t.road_type) not in have]
        if not items:
            return 0
        vectors = self.store.embedder.encode([f"{t.road_type}: {t.description}" for t in items])
        client.upsert(
            self.collection,
            points=[
                models.PointStruct(id=_point_id(t.road_type), vector=v.tolist(), payload=t.model_dump(mode="json"))
                for t, v in zip(items, vectors, strict=True)
            ],
        )
        log.info("templates stored", road_types=[t.road_type for t in items])
        return len(items)

    async def all(self) -> dict[str, ScenarioTemplate]:
        """Every stored template by road type."""
        points: Any = await self.store.call(
            lambda: self.store.client.scroll(self.collection, limit=1000, with_payload=True)[0]
        )
        return {p.payload["road_type"]: ScenarioTemplate.model_validate(p.payload) for p in points}

    async def search(self, text: str, *, k: int = 3) -> list[tuple[ScenarioTemplate, float]]:
        """Templates nearest in meaning to a text (e.g. a crash summary's road description)."""
        vector = self.store.embedder.encode([text])[0].tolist()
        hits: Any = await self.store.call(
            lambda: self.store.client.query_points(self.collection, query=vector, limit=k, with_payload=True).points
        )
        return [(ScenarioTemplate.model_validate(h.payload), float(h.score)) for h in hits]
