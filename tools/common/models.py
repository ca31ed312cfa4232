"""Provenance carried by every result (which code, configuration, ontology and models made it), and the entries of
an agent's conversation (pure data)."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import metadata
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["ConversationEntry", "ConversationRole", "Provenance", "config_hash", "drivemt_version"]


@cache
def drivemt_version() -> str:
    """Installed version of the ``drivemt`` distribution (``0+unknown`` when run from a bare checkout)."""
    try:
        return metadata.version("drivemt")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def config_hash(config: Any) -> str:
    """First 16 hex digits of the SHA-256 of a configuration's canonical JSON (secrets excluded by the caller)."""
    if isinstance(config, BaseModel):
        config = config.model_dump(mode="json")
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class Provenance(BaseModel):
    """Where a result came from."""

    drivemt_version: str = Field(default_factory=drivemt_version)
    config_hash: str = Field(description="Hash of the effective configuration, secrets excluded.")
    ontology_hash: str = Field(description="Hash of the merged ontology the result's terms come from.")
    models: list[str] = Field(default_factory=list, description="Parsers, validator and embedder used.")
    seed: int | None = Field(default=None, description="Random seed, where any randomness was involved.")


ConversationRole = Literal["prompt", "answer", "tool_call", "tool_result", "decision"]
"""What a conversation entry is: a prompt to a model, its answer, a tool it called and what came back, or a
decision (an offline path's reasoning, a verdict)."""


class ConversationEntry(BaseModel):
    """One step of an agent's reasoning about one input, as an excerpt (never the whole prompt or answer)."""

    role: ConversationRole
    reasoner: str = Field(
        max_length=120,
        description="Who said it: a model's label ('openai:gpt-4o') or an offline path ('offline:ontology-grounded').",
    )
    text: str = Field(description="An excerpt of what was said or decided.")
