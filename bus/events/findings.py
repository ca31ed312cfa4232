"""Findings of every pipeline: a violation, with the pictures and numbers that prove it."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from bus.envelope import Event, registry

__all__ = ["ViolationFound", "ViolationPayload"]


class ViolationPayload(BaseModel):
    """A finding: behaviour that breaks a rule, a relation, or reproduces a crash."""

    kind: Literal["crash", "tl", "mr"] = Field(description="Which pipeline found it.")
    item_id: str = Field(description="Case id, image id or test-case id.")
    description: str
    evidence: list[str] = Field(default_factory=list, description="Pictures and records that prove it (paths).")
    metrics: dict[str, float] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


@registry.register
class ViolationFound(Event):
    """A violation, with the pictures and numbers that prove it."""

    type: Literal["violations.found"] = "violations.found"
    payload: ViolationPayload
    subject_name: ClassVar[str] = "violations_found"

    def describe(self) -> str:
        return f"violation ({self.payload.kind}) {self.payload.item_id}: {self.payload.description}"[:500]
