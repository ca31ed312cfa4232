"""The services a daemon offers over typed request/reply (their contracts are in :mod:`bus.services`).

Qdrant local mode allows one process per store, so commands such as ``drivemt mrs list`` ask the daemon
that holds the store; with no daemon running they call the same :class:`MRService` on their own store. Workers
started with ``memory: bus`` use :class:`runners.clients.memory.BusMRStore`, which calls these methods.
"""

from __future__ import annotations

from nats.micro.service import Service

from bus import Bus
from bus.rpc import serve
from bus.services import (
    MRS_ADD,
    MRS_CLAIM,
    MRS_COUNT,
    MRS_IMPORT,
    MRS_INCREMENT,
    MRS_LIST,
    MRS_SEARCH,
    TEMPLATES_ALL,
    AddMRs,
    ClaimedMR,
    ClaimMR,
    CountMRs,
    ExecutionCount,
    ImportMRs,
    IncrementMR,
    ListMRs,
    ListTemplates,
    MRCount,
    MRHit,
    MRHits,
    MRList,
    SearchMRs,
    TemplateList,
)
from memory.errors import MemoryStoreError
from memory.mr_store import QdrantMRStore
from memory.templates import TemplateStore
from tools.common.text import normalise_phrase
from tools.errors import BadInputError, UnknownTermError
from tools.rules.models import MRFields
from tools.rules.mr import new_mr
from tools.rules.ontology import BEHAVIORS, Ontology

__all__ = ["MRService", "serve_mr_service"]


class MRService:
    """The MR memory's methods, served by the one process that owns the store.

    Args:
        store: The MR store.
        ontology: The ontology imported MRs are checked against.
        templates: The scenario templates sharing the store's client (``templates.all``).
    """

    def __init__(self, *, store: QdrantMRStore, ontology: Ontology, templates: TemplateStore | None = None) -> None:
        self.store = store
        self.ontology = ontology
        self.templates = templates

    async def add(self, req: AddMRs) -> MRList:
        """Store accepted MRs, merging duplicates (each record says whether it was one)."""
        return MRList(mrs=await self.store.add(req.mrs))

    async def increment(self, req: IncrementMR) -> ExecutionCount:
        """Count more uses of an MR.

        Raises:
            BadInputError: No MR has that id.
        """
        try:
            return ExecutionCount(execution_count=await self.store.increment_execution(req.mr_id, req.by))
        except (MemoryStoreError, ValueError) as exc:  # unknown id, or not an id at all
            raise BadInputError(f"cannot count a use of MR {req.mr_id!r}: {exc}") from exc

    async def all_templates(self, req: ListTemplates) -> TemplateList:
        """Every stored scenario template (none when this process keeps none)."""
        stored = await self.templates.all() if self.templates is not None else {}
        return TemplateList(templates=[t.model_dump(mode="json") for t in stored.values()])

    async def list_mrs(self, req: ListMRs) -> MRList:
        """Stored MRs in creation order."""
        records = await self.store.list(limit=req.limit, offset=req.offset, **req.filters.as_kwargs())
        return MRList(mrs=records)

    async def search(self, req: SearchMRs) -> MRHits:
        """MRs most similar to the query."""
        hits = await self.store.search(req.query.strip(), limit=req.limit, **req.filters.as_kwargs())
        return MRHits(hits=[MRHit(similarity=h.similarity, mr=h.record) for h in hits])

    async def claim(self, req: ClaimMR) -> ClaimedMR:
        """The least-used of the given MRs, its execution count incremented."""
        return ClaimedMR(mr=await self.store.claim(req.mr_ids, query=req.query))

    async def count(self, req: CountMRs) -> MRCount:
        """Number of stored MRs."""
        return MRCount(count=await self.store.count())

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

    async def import_mrs(self, req: ImportMRs) -> MRList:
        """Store MRs after checking their terms."""
        items = []
        for raw in req.mrs:
            self.check_terms(raw.fields, raw.region)
            vocab = self.ontology.vocabulary(raw.region)
            items.append(
                new_mr(
                    raw.fields,
                    vocab,
                    region=raw.region,
                    score=raw.score,
                    rule_id=raw.source,
                    validator="import",
                    parser="import",
                )
            )
        return MRList(mrs=await self.store.add(items))


async def serve_mr_service(bus: Bus, service: MRService) -> Service:
    """Serve the MR methods on the bus (``drivemt-mrs``)."""
    return await serve(
        bus,
        name="drivemt-mrs",
        description="drivemt's MR memory",
        methods=[
            (MRS_LIST, service.list_mrs),
            (MRS_SEARCH, service.search),
            (MRS_COUNT, service.count),
            (MRS_IMPORT, service.import_mrs),
            (MRS_CLAIM, service.claim),
            (MRS_ADD, service.add),
            (MRS_INCREMENT, service.increment),
            (TEMPLATES_ALL, service.all_templates),
        ],
    )
