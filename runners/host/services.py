"""The MR service a daemon offers on ``<namespace>.rpc.mrs.*``.

Qdrant local mode allows one process per store, so commands such as ``drivemt mrs list`` ask the
daemon that holds the store; with no daemon running they use the same service on their own store.
"""

from __future__ import annotations

from typing import Any

from bus import Bus
from memory.mr_store import MRStore
from tools.common.text import normalise_phrase
from tools.errors import BadInputError, UnknownTermError
from tools.rules.models import MRFields
from tools.rules.mr import new_mr
from tools.rules.ontology import BEHAVIORS, Ontology

__all__ = ["MRService", "register_services"]


class MRService:
    """Methods over the MR store, taking and returning JSON values.

    Args:
        store: The MR store.
        ontology: The ontology imported MRs are checked against.
    """

    def __init__(self, *, store: MRStore, ontology: Ontology) -> None:
        self.store = store
        self.ontology = ontology

    async def list_mrs(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Stored MRs (``limit``, ``offset``, ``filters``)."""
        filters = {k: v for k, v in (params.get("filters") or {}).items() if v}
        records = await self.store.list(
            limit=int(params.get("limit", 100)), offset=int(params.get("offset", 0)), **filters
        )
        return [r.model_dump(mode="json") for r in records]

    async def search(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """MRs most similar to ``query``."""
        query = str(params.get("query") or "").strip()
        if not query:
            raise BadInputError("search needs a query")
        filters = {k: v for k, v in (params.get("filters") or {}).items() if v}
        hits = await self.store.search(query, limit=int(params.get("limit", 10)), **filters)
        return [{"similarity": h.similarity, "mr": h.record.model_dump(mode="json")} for h in hits]

    async def count(self, params: dict[str, Any]) -> int:
        """Number of stored MRs."""
        return await self.store.count()

    def check_terms(self, fields: MRFields, region: str) -> None:
        """Refuse MRs whose elements are outside the ontology.

        Raises:
            UnknownTermError: Naming the field and the closest terms.
        """
        vocab = self.ontology.vocabulary(region)
        road = vocab.canonical("road_type", fields.road_type)
        if vocab.lookup("road_type", road) is None:
            raise UnknownTermError("road type", fields.road_type, [t.text for t in vocab.road_types][:5])
        manip = vocab.canonical("manipulation", fields.manipulation)
        if vocab.lookup("manipulation", manip) is None:
            raise UnknownTermError("manipulation", fields.manipulation)
        if normalise_phrase(fields.expected_behavior) not in BEHAVIORS:
            raise UnknownTermError("expected behaviour", fields.expected_behavior, list(BEHAVIORS))

    async def import_mrs(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Store MRs given as ``{"mrs": [{"fields", "region", "source", "score"}]}`` after checking their terms."""
        items = []
        for raw in params.get("mrs") or []:
            fields = MRFields(**raw["fields"])
            region = str(raw.get("region") or "germany")
            self.check_terms(fields, region)
            vocab = self.ontology.vocabulary(region)
            items.append(
                new_mr(
                    fields,
                    vocab,
                    region=region,
                    score=float(raw.get("score", 1.0)),
                    rule_id=str(raw.get("source") or "import"),
                    validator="import",
                    parser="import",
                )
            )
        records = await self.store.add(items)
        return [r.model_dump(mode="json") for r in records]

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """Dispatch ``mrs.<name>`` to a method."""
        handler = {
            "mrs.list": self.list_mrs,
            "mrs.search": self.search,
            "mrs.count": self.count,
            "mrs.import": self.import_mrs,
        }.get(method)
        if handler is None:
            raise BadInputError(f"unknown method {method}")
        return await handler(params)


async def register_services(bus: Bus, service: MRService) -> None:
    """Serve the MR methods on the bus."""
    for method in ("mrs.list", "mrs.search", "mrs.count", "mrs.import"):

        async def handler(params: dict[str, Any], _m: str = method) -> Any:
            return await service.call(_m, params)

        await bus.serve(method, handler)
