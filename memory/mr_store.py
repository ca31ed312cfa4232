"""Accepted MRs in Qdrant (collection ``mrs``), deduplicated by canonical key.

Qdrant runs in local mode under the data directory by default (one process per store: only the
daemon, or the one in-process run of a CLI command, opens it) or as a server (``--qdrant-url``).
Each MR is one point whose id is derived from its canonical key (road type, verb, manipulation and
behaviour as canonical ontology terms), so storing a duplicate is an idempotent update that adds the
rule to ``source_rule_ids``. Local-mode writes are slow one point at a time, so writes are batched.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import structlog
from pydantic import BaseModel, Field

from bus.connection import redact_url
from memory.errors import MemoryStoreError, StoreLockedError
from tools.common.similarity import Embedder
from tools.rules.models import MRFields, NewMR, StoredMR, format_gherkin

__all__ = ["MRStore", "QdrantMRStore", "SearchHit", "StoreSettings", "point_id"]

log = structlog.get_logger(__name__)

COLLECTION = "mrs"
_POINT_NAMESPACE = uuid.UUID("0d5f3b0e-8f43-5c4e-b0d6-6f1a3c2e9b71")
_KEYWORD_FIELDS = (
    "road_type",
    "verb",
    "manipulation_term",
    "expected_behavior",
    "region",
    "canonical_key",
    "source_rule_ids",
)
T = TypeVar("T")


class StoreSettings(BaseModel):
    """Where the MR store lives."""

    path: Path | None = Field(
        default=None, description="Local-mode folder (the data dir's 'qdrant' folder by default)."
    )
    url: str | None = Field(default=None, description="Qdrant server URL; overrides the local folder.")
    api_key: str | None = Field(default=None, description="Qdrant server API key (from the environment).", repr=False)
    collection: str = Field(default=COLLECTION, description="Collection name (tests use their own).")


@dataclass
class SearchHit:
    """A search result."""

    record: StoredMR
    similarity: float


class MRStore(Protocol):
    """Where accepted MRs live."""

    async def add(self, items: Sequence[NewMR]) -> list[StoredMR]:
        """Store MRs (merging duplicates); returns one record per item, in order."""
        ...

    async def search(self, query: str, *, limit: int = 10, **filters: str) -> list[SearchHit]:
        """MRs most similar to a query, optionally filtered by payload fields."""
        ...

    async def list(self, *, limit: int = 100, offset: int = 0, **filters: str) -> list[StoredMR]:
        """MRs in creation order."""
        ...

    async def count(self) -> int:
        """Number of stored MRs."""
        ...

    async def claim(self, mr_ids: Sequence[str], *, query: str | None = None) -> StoredMR | None:
        """Pick the least-used of some MRs and count one more use of it, atomically."""
        ...


def point_id(canonical_key: str) -> str:
    """Point id of an MR: a UUID derived from its canonical key."""
    return str(uuid.uuid5(_POINT_NAMESPACE, canonical_key))


class QdrantMRStore:
    """The ``mrs`` collection in Qdrant.

    Args:
        settings: Local folder or server URL.
        embedder: Embeds MR texts and queries.
    """

    def __init__(self, *, settings: StoreSettings, embedder: Embedder) -> None:
        self.settings = settings
        self.embedder = embedder
        self._client: Any = None
        # One thread owns the client: local mode is not thread-safe, and this keeps the loop free.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qdrant")

    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, lambda: fn(*args, **kwargs))

    async def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` on the thread that owns the client (for other collections, e.g.
        ``kb_templates``: local mode allows one client per folder, so every collection shares it)."""
        return await self._run(fn, *args, **kwargs)

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Open the store and create the collection if needed.

        Raises:
            StoreLockedError: If another process holds the local store.
        """
        await self._run(self._open)

    def _open(self) -> None:
        from qdrant_client import QdrantClient, models

        s = self.settings
        if s.url:
            client = QdrantClient(url=s.url, api_key=s.api_key, timeout=30)
        else:
            if s.path is None:
                raise MemoryStoreError("no Qdrant path or URL configured")
            s.path.mkdir(parents=True, exist_ok=True)
            try:
                client = QdrantClient(path=str(s.path))
            except RuntimeError as exc:
                if "already accessed" in str(exc):
                    raise StoreLockedError(str(s.path)) from exc
                raise
        self._client = client
        if not client.collection_exists(s.collection):
            client.create_collection(
                s.collection,
                vectors_config=models.VectorParams(size=self.embedder.dimension, distance=models.Distance.COSINE),
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # local mode warns that indexes have no effect there
                for name in _KEYWORD_FIELDS:
                    client.create_payload_index(s.collection, name, models.PayloadSchemaType.KEYWORD)
                client.create_payload_index(s.collection, "execution_count", models.PayloadSchemaType.INTEGER)
                client.create_payload_index(s.collection, "score", models.PayloadSchemaType.FLOAT)
                client.create_payload_index(s.collection, "created_at", models.PayloadSchemaType.DATETIME)
        log.info("MR store open", where=redact_url(s.url) if s.url else str(s.path), collection=s.collection)

    async def stop(self) -> None:
        """Close the store (releases the local-mode lock)."""
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(Exception):
                await self._run(client.close)
        self._pool.shutdown(wait=True)

    async def __aenter__(self) -> QdrantMRStore:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def client(self) -> Any:
        """The Qdrant client."""
        if self._client is None:
            raise MemoryStoreError("MR store is not open")
        return self._client

    # -- writes -------------------------------------------------------------------------------
    async def add(self, items: Sequence[NewMR]) -> list[StoredMR]:
        """Store accepted MRs in one batch, merging duplicates by canonical key.

        A duplicate keeps its first wording and adds the new rule to ``source_rule_ids``; its score
        becomes the best seen. Embeddings are computed only for MRs not stored before.
        """
        if not items:
            return []
        return list(await self._run(self._add_sync, list(items)))

    def _add_sync(self, items: list[NewMR]) -> list[StoredMR]:
        from qdrant_client import models

        coll = self.settings.collection
        ids = list(dict.fromkeys(point_id(i.canonical_key) for i in items))
        existing = {str(p.id): p for p in self.client.retrieve(coll, ids=ids, with_payload=True, with_vectors=True)}
        now = datetime.now(UTC)
        payloads: dict[str, dict[str, Any]] = {}
        vectors: dict[str, Any] = {}
        for pid, point in existing.items():
            payloads[pid] = dict(point.payload or {})
            vectors[pid] = point.vector
        duplicate_flags: list[tuple[str, bool]] = []
        to_embed: list[str] = []
        for item in items:
            pid = point_id(item.canonical_key)
            payload = payloads.get(pid)
            duplicate = payload is not None
            if payload is None:
                payload = {
                    "gherkin": format_gherkin(item.fields),
                    "road_type": item.road_type_term,
                    "verb": item.fields.verb,
                    "manipulation": item.fields.manipulation,
                    "manipulation_term": item.manipulation_term,
                    "expected_behavior": item.fields.expected_behavior,
                    "fields": item.fields.model_dump(),
                    "canonical_key": item.canonical_key,
                    "region": item.region,
                    "score": item.score,
                    "source_rule_ids": [],
                    "execution_count": 0,
                    "created_at": now.isoformat(),
                    "validator": item.validator,
                    "parser": item.parser,
                }
                payloads[pid] = payload
                to_embed.append(pid)
            if item.rule_id not in payload["source_rule_ids"]:
                payload["source_rule_ids"] = [*payload["source_rule_ids"], item.rule_id]
            payload["score"] = max(float(payload.get("score", 0.0)), item.score)
            duplicate_flags.append((pid, duplicate))
        if to_embed:
            vecs = self.embedder.encode([payloads[pid]["gherkin"] for pid in to_embed])
            for pid, vec in zip(to_embed, vecs, strict=True):
                vectors[pid] = vec.tolist()
        points = [models.PointStruct(id=pid, vector=vectors[pid], payload=payloads[pid]) for pid in payloads]
        self.client.upsert(coll, points=points, wait=True)
        return [self._record(pid, payloads[pid], duplicate=dup) for pid, dup in duplicate_flags]

    async def claim(self, mr_ids: Sequence[str], *, query: str | None = None) -> StoredMR | None:
        """Pick the least-used MR among ``mr_ids`` and count one more use of it, in one step.

        The store runs its operations one at a time (one worker thread), so with any number of callers no
        use is lost and two simultaneous claims see each other's counts. Ties go to the MR whose text is most
        similar to ``query`` (MiniLM cosine), then to the smallest id.

        Returns:
            The claimed MR with its new count, or None when none of the ids is stored.
        """
        if not mr_ids:
            return None
        vector = (await asyncio.to_thread(self.embedder.encode, [query]))[0] if query else None

        def run() -> StoredMR | None:
            points = self.client.retrieve(
                self.settings.collection,
                ids=list(dict.fromkeys(mr_ids)),
                with_payload=True,
                with_vectors=vector is not None,
            )
            if not points:
                return None

            def key(p: Any) -> tuple[int, float, str]:
                sim = 0.0
                if vector is not None and p.vector is not None:
                    v = p.vector if isinstance(p.vector, list) else next(iter(p.vector.values()))
                    sim = float(sum(a * b for a, b in zip(vector.tolist(), v, strict=False)))
                return int(p.payload.get("execution_count", 0)), -sim, str(p.id)

            best = min(points, key=key)
            count = int(best.payload.get("execution_count", 0)) + 1
            self.client.set_payload(self.settings.collection, payload={"execution_count": count}, points=[best.id])
            payload = dict(best.payload) | {"execution_count": count}
            return self._record(str(best.id), payload)

        result: StoredMR | None = await self._run(run)
        return result

    async def increment_execution(self, mr_id: str, by: int = 1) -> int:
        """Count one more use of an MR (an F-Agent built a follow-up case with it)."""

        def inc() -> int:
            points = self.client.retrieve(self.settings.collection, ids=[mr_id], with_payload=True)
            if not points:
                raise MemoryStoreError(f"no MR with id {mr_id}")
            count = int(points[0].payload.get("execution_count", 0)) + by
            self.client.set_payload(self.settings.collection, payload={"execution_count": count}, points=[mr_id])
            return count

        return int(await self._run(inc))

    # -- reads --------------------------------------------------------------------------------
    @staticmethod
    def _record(pid: str, payload: dict[str, Any], *, duplicate: bool = False) -> StoredMR:
        return StoredMR(
            mr_id=pid,
            gherkin=payload["gherkin"],
            fields=MRFields(**payload["fields"]),
            canonical_key=payload["canonical_key"],
            region=payload.get("region", ""),
            score=float(payload.get("score", 0.0)),
            source_rule_ids=list(payload.get("source_rule_ids", [])),
            execution_count=int(payload.get("execution_count", 0)),
            created_at=datetime.fromisoformat(payload["created_at"]),
            duplicate=duplicate,
            validator=payload.get("validator", ""),
            parser=payload.get("parser", ""),
        )

    @staticmethod
    def _filter(filters: dict[str, str]) -> Any:
        from qdrant_client import models

        conds: list[Any] = [
            models.FieldCondition(key=k, match=models.MatchValue(value=v)) for k, v in filters.items() if v is not None
        ]
        return models.Filter(must=conds) if conds else None

    async def search(self, query: str, *, limit: int = 10, **filters: str) -> list[SearchHit]:
        """MRs most similar to ``query`` (cosine on MiniLM vectors), optionally filtered (``road_type=...``)."""
        vector = (await asyncio.to_thread(self.embedder.encode, [query]))[0]

        def run() -> list[SearchHit]:
            res = self.client.query_points(
                self.settings.collection,
                query=vector.tolist(),
                limit=limit,
                query_filter=self._filter(filters),
                with_payload=True,
            )
            return [SearchHit(self._record(str(p.id), p.payload), float(p.score)) for p in res.points]

        return list(await self._run(run))

    async def list(self, *, limit: int = 100, offset: int = 0, **filters: str) -> list[StoredMR]:
        """Stored MRs, oldest first."""

        def run() -> list[StoredMR]:
            out: list[StoredMR] = []
            next_page = None
            while True:
                points, next_page = self.client.scroll(
                    self.settings.collection,
                    scroll_filter=self._filter(filters),
                    limit=512,
                    offset=next_page,
                    with_payload=True,
                )
                out.extend(self._record(str(p.id), p.payload) for p in points)
                if next_page is None:
                    break
            out.sort(key=lambda r: (r.created_at, r.mr_id))
            return out[offset : offset + limit]

        return list(await self._run(run))

    async def get(self, mr_id: str) -> StoredMR | None:
        """One MR by id."""
        points = await self._run(self.client.retrieve, self.settings.collection, ids=[mr_id], with_payload=True)
        return self._record(str(points[0].id), points[0].payload) if points else None

    async def count(self) -> int:
        """Number of stored MRs."""
        res = await self._run(self.client.count, self.settings.collection, exact=True)
        return int(res.count)
