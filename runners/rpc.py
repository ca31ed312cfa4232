"""Request/reply services a daemon offers on ``<namespace>.rpc.*``.

Qdrant local mode allows one process per store, so commands such as ``drivemt mrs list`` ask the
daemon that holds the store instead of opening it themselves.
"""

from __future__ import annotations

from typing import Any

from bus import Bus
from memory.mr_store import NewMR
from tools.errors import BadInputError
from tools.mr import MRFields, canonical_key

__all__ = ["register_services"]


async def register_services(bus: Bus, pipeline: Any) -> None:
    """Serve the MR store of ``pipeline`` (a :class:`runners.pipeline.RulePipeline`) on the bus."""
    store = pipeline.store

    async def mrs_list(params: dict[str, Any]) -> Any:
        filters = {k: v for k, v in (params.get("filters") or {}).items() if v}
        records = await store.list(limit=int(params.get("limit", 100)), offset=int(params.get("offset", 0)), **filters)
        return [r.model_dump(mode="json") for r in records]

    async def mrs_search(params: dict[str, Any]) -> Any:
        query = str(params.get("query") or "").strip()
        if not query:
            raise BadInputError("search needs a query")
        filters = {k: v for k, v in (params.get("filters") or {}).items() if v}
        hits = await store.search(query, limit=int(params.get("limit", 10)), **filters)
        return [{"similarity": h.similarity, "mr": h.record.model_dump(mode="json")} for h in hits]

    async def mrs_count(params: dict[str, Any]) -> Any:
        return await store.count()

    async def mrs_import(params: dict[str, Any]) -> Any:
        items = []
        for raw in params.get("mrs") or []:
            fields = MRFields(**raw["fields"])
            region = str(raw.get("region") or "germany")
            vocab = pipeline.ontology.vocabulary(region)
            items.append(
                NewMR(
                    fields=fields,
                    canonical_key=canonical_key(fields, vocab),
                    manipulation_term=vocab.canonical("manipulation", fields.manipulation),
                    road_type_term=vocab.canonical("road_type", fields.road_type),
                    region=region,
                    score=float(raw.get("score", 1.0)),
                    rule_id=str(raw.get("source") or "import"),
                    validator="import",
                    parser="import",
                )
            )
        records = await store.add(items)
        return [r.model_dump(mode="json") for r in records]

    await bus.serve("mrs.list", mrs_list)
    await bus.serve("mrs.search", mrs_search)
    await bus.serve("mrs.count", mrs_count)
    await bus.serve("mrs.import", mrs_import)
