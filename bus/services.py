"""The contracts of the services a daemon offers over request/reply (served by ``runners.host.services``).

Qdrant local mode allows one process per store, so the process that owns the MR store serves it here, and
every other process (the CLI, the terminal UI, workers) calls these methods instead of opening the store:
search, list and count; ``mrs.add`` (upsert, merging duplicates); ``mrs.claim`` and ``mrs.increment`` (the
execution count, atomic because the owner runs store operations one at a time); ``templates.all``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from bus.rpc import RpcMethod
from tools.rules.models import MRFields, NewMR, StoredMR

__all__ = [
    "MRS_ADD",
    "MRS_CLAIM",
    "MRS_COUNT",
    "MRS_IMPORT",
    "MRS_INCREMENT",
    "MRS_LIST",
    "MRS_SEARCH",
    "TEMPLATES_ALL",
    "AddMRs",
    "ClaimMR",
    "ClaimedMR",
    "CountMRs",
    "ExecutionCount",
    "ImportMRs",
    "ImportedMR",
    "IncrementMR",
    "ListMRs",
    "ListTemplates",
    "MRCount",
    "MRFilters",
    "MRHit",
    "MRHits",
    "MRList",
    "SearchMRs",
    "TemplateList",
]


class MRFilters(BaseModel):
    """Filters on stored MRs (canonical terms; unset means any)."""

    road_type: str | None = Field(default=None, description="Canonical road type, e.g. 'intersection'.")
    expected_behavior: str | None = Field(default=None, description="One of the four behaviours.")
    region: str | None = Field(default=None, description="Region of the rule that first produced the MR.")

    def as_kwargs(self) -> dict[str, str]:
        """The set filters, as the store takes them."""
        return {k: v for k, v in self.model_dump().items() if v}


class ListMRs(BaseModel):
    """Stored MRs in creation order."""

    limit: int = Field(default=100, ge=1, le=10_000_000)
    offset: int = Field(default=0, ge=0)
    filters: MRFilters = Field(default_factory=MRFilters)


class MRList(BaseModel):
    """MRs as stored."""

    mrs: list[StoredMR]


class SearchMRs(BaseModel):
    """MRs most similar to a text."""

    query: str = Field(min_length=1, max_length=10_000)
    limit: int = Field(default=10, ge=1, le=1000)
    filters: MRFilters = Field(default_factory=MRFilters)


class MRHit(BaseModel):
    """One search result."""

    similarity: float
    mr: StoredMR


class MRHits(BaseModel):
    """Search results, best first."""

    hits: list[MRHit]


class CountMRs(BaseModel):
    """How many MRs are stored."""


class MRCount(BaseModel):
    """The number of stored MRs."""

    count: int = Field(ge=0)


class ImportedMR(BaseModel):
    """An MR given by a person or a file, checked against the ontology before it is stored."""

    fields: MRFields
    region: str = "germany"
    source: str = Field(default="import", description="Where it came from (a rule id or a file).")
    score: float = Field(default=1.0, ge=0.0, le=1.0)


class ImportMRs(BaseModel):
    """MRs to store."""

    mrs: list[ImportedMR] = Field(max_length=100_000)


class ClaimMR(BaseModel):
    """Pick the least-used of some MRs and count one more use of it (atomically, in the store's owner)."""

    mr_ids: list[str] = Field(min_length=1, max_length=100_000)
    query: str | None = Field(default=None, max_length=10_000, description="Text whose similarity breaks ties.")


class ClaimedMR(BaseModel):
    """The claimed MR (None when none of the ids is stored)."""

    mr: StoredMR | None


class AddMRs(BaseModel):
    """Accepted MRs to store (a validator in a worker without a store of its own); duplicates merge."""

    mrs: list[NewMR] = Field(max_length=100_000)


class IncrementMR(BaseModel):
    """Count more uses of one MR."""

    mr_id: str = Field(min_length=1, max_length=200)
    by: int = Field(default=1, ge=1, le=1_000_000)


class ExecutionCount(BaseModel):
    """An MR's execution count after the increment."""

    execution_count: int = Field(ge=0)


class ListTemplates(BaseModel):
    """Every stored scenario template."""


class TemplateList(BaseModel):
    """Scenario templates (``kb_templates``), as stored (the caller validates them as ``ScenarioTemplate``; the bus
    keeps to the domains' models)."""

    templates: list[dict[str, Any]]


MRS_ADD = RpcMethod("mrs.add", AddMRs, MRList, "Store accepted MRs, merging duplicates by canonical key.")
MRS_INCREMENT = RpcMethod(
    "mrs.increment", IncrementMR, ExecutionCount, "Count more uses of an MR (atomic in the store's owner)."
)
TEMPLATES_ALL = RpcMethod("templates.all", ListTemplates, TemplateList, "Every stored scenario template.")
MRS_CLAIM = RpcMethod("mrs.claim", ClaimMR, ClaimedMR, "Claim the least-used of some MRs (execution count + 1).")
MRS_LIST = RpcMethod("mrs.list", ListMRs, MRList, "Stored MRs in creation order, filtered.")
MRS_SEARCH = RpcMethod("mrs.search", SearchMRs, MRHits, "MRs most similar to a text (MiniLM cosine).")
MRS_COUNT = RpcMethod("mrs.count", CountMRs, MRCount, "The number of stored MRs.")
MRS_IMPORT = RpcMethod("mrs.import", ImportMRs, MRList, "Store MRs after checking their terms.")
