"""Ontology proposals from a whole rules document (AutoMT Table I), made by a model.

A model reads a rules document and lists the road types, infrastructure, objects and environment
conditions it needs; terms already known are dropped. Proposals are kept apart (a file per proposal)
until a person accepts them, and only then extend the ontology.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tools.common.text import normalise_phrase
from tools.errors import LLMResponseError
from tools.rules.ontology import Ontology
from tools.rules.prompts import ONTOLOGY_PROPOSER_SYSTEM, ontology_proposer_task

__all__ = ["OntologyProposal", "propose_terms"]


class OntologyProposal(BaseModel):
    """New terms, by ontology list."""

    road_types: list[str] = Field(default_factory=list)
    traffic_infrastructure: list[str] = Field(default_factory=list)
    object: list[str] = Field(default_factory=list)
    environment: list[str] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """Whether nothing new was proposed."""
        return not (self.road_types or self.traffic_infrastructure or self.object or self.environment)

    def as_section(self) -> dict[str, Any]:
        """The proposal in the ontology file's section shape."""
        section: dict[str, Any] = {}
        if self.road_types:
            section["road_types"] = self.road_types
        adds = {
            k: v for k, v in (("traffic_infrastructure", self.traffic_infrastructure), ("object", self.object)) if v
        }
        manipulations: dict[str, Any] = {}
        if adds:
            manipulations["adds"] = adds
        if self.environment:
            manipulations["replaces"] = {"environment": self.environment}
        if manipulations:
            section["manipulations"] = manipulations
        return section


async def propose_terms(
    *, model_client: Any, label: str, ontology: Ontology, region: str, document: str
) -> OntologyProposal:
    """Ask a model for the terms a rules document needs that the region's vocabulary lacks.

    Raises:
        LLMResponseError: If the model's answer is not a structured proposal.
    """
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.messages import StructuredMessage

    vocab = ontology.vocabulary(region)
    agent = AssistantAgent(
        name="ontology_proposer",
        model_client=model_client,
        system_message=ONTOLOGY_PROPOSER_SYSTEM,
        output_content_type=OntologyProposal,
    )
    try:
        result = await agent.run(task=ontology_proposer_task(document, vocab))
    except Exception as exc:
        raise LLMResponseError(label, f"{type(exc).__name__}: {exc}") from exc
    final = result.messages[-1] if result.messages else None
    if not isinstance(final, StructuredMessage):
        raise LLMResponseError(label, "expected a structured ontology proposal")
    raw: OntologyProposal = final.content
    known = {t.normalised for t in vocab.terms}

    def new(terms: list[str]) -> list[str]:
        out: list[str] = []
        for t in terms:
            norm = normalise_phrase(t)
            if norm and norm not in known and norm not in {normalise_phrase(o) for o in out}:
                out.append(t.strip())
        return out

    return OntologyProposal(
        road_types=new(raw.road_types),
        traffic_infrastructure=new(raw.traffic_infrastructure),
        object=new(raw.object),
        environment=new(raw.environment),
    )
