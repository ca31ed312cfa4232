"""Events of the AutoMT domain: driving test cases submitted (the T-Agent, F-Agent and Judge consume them)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from bus.envelope import Event, registry
from tools.mt.models import DrivingCase

__all__ = ["CasesSubmitted", "CasesSubmittedPayload"]


class CasesSubmittedPayload(BaseModel):
    """One driving test case or a batch, from any loader; frames are artefact refs."""

    cases: list[DrivingCase] = Field(min_length=1, max_length=1000)
    region: str | None = Field(default=None, description="Ontology region whose MRs apply (per case if unset).")
    source: str | None = Field(default=None, description="Where the cases came from (a folder, a dataset).")
    batch_size: int | None = Field(default=None, ge=1, description="Cases in the whole submission.")


@registry.register
class CasesSubmitted(Event):
    """Driving test cases to describe, follow up and judge."""

    type: Literal["cases.submitted"] = "cases.submitted"
    payload: CasesSubmittedPayload
    subject_name: ClassVar[str] = "cases_submitted"

    def describe(self) -> str:
        cases = self.payload.cases
        first = cases[0]
        more = f" (+{len(cases) - 1} more)" if len(cases) > 1 else ""
        return (
            f"{len(cases)} driving case(s) submitted: {first.case_id}, {len(first.frames)} frames, "
            f"{first.mean_speed_kmh:.0f} km/h{more}"
        )[:500]
