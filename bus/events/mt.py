"""Events of the AutoMT domain: driving test cases submitted (the T-Agent, F-Agent and Judge consume them)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from bus.envelope import Event, registry
from tools.mt.models import CaseDescription, DrivingCase, FollowUp, Method, Validity

__all__ = [
    "CasesDescribed",
    "CasesDescribedPayload",
    "CasesSubmitted",
    "CasesSubmittedPayload",
    "FollowupGenerated",
    "FollowupGeneratedPayload",
    "FollowupValidated",
    "FollowupValidatedPayload",
]


class _Batch(BaseModel):
    """What travels with every case of a submission."""

    region: str | None = Field(default=None, description="Ontology region whose MRs apply (per case if unset).")
    method: Method = Field(
        default="automt", description="How follow-ups' MRs are chosen: automt, manual, random, null."
    )
    seed: int = Field(default=0, description="Seed of the generation (manual and random draws, placements).")
    batch_size: int | None = Field(default=None, ge=1, description="Cases in the whole submission.")


class CasesSubmittedPayload(_Batch):
    """One driving test case or a batch, from any loader; frames are artefact refs."""

    cases: list[DrivingCase] = Field(min_length=1, max_length=1000)
    source: str | None = Field(default=None, description="Where the cases came from (a folder, a dataset).")


class CasesDescribedPayload(_Batch):
    """One case and AutoMT's representation of it."""

    case: DrivingCase
    description: CaseDescription


class FollowupGeneratedPayload(_Batch):
    """A follow-up of one case, or why it has none (no applicable MR; an MR that cannot be rendered)."""

    case: DrivingCase
    description: CaseDescription
    status: Literal["generated", "no_applicable_mr", "unrenderable"]
    followup: FollowUp | None = None
    reason: str = ""
    candidates: int = Field(default=0, description="MRs that passed the filters (automt).")


class FollowupValidatedPayload(_Batch):
    """A follow-up with its three checks."""

    followup: FollowUp
    validity: Validity


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


@registry.register
class CasesDescribed(Event):
    """A driving case was described (time, weather, road type, objects; ego from the data)."""

    type: Literal["cases.described"] = "cases.described"
    payload: CasesDescribedPayload
    subject_name: ClassVar[str] = "cases_described"

    def describe(self) -> str:
        d = self.payload.description
        return (
            f"case {self.payload.case.case_id}: {d.time}, {d.weather}, {d.road_type}, "
            f"{len(d.objects)} object(s), {d.speed_kmh:.0f} km/h [{d.describer}]"
        )[:500]


@registry.register
class FollowupGenerated(Event):
    """A follow-up case was made from a source case by one MR (or the case got none, and why)."""

    type: Literal["followups.generated"] = "followups.generated"
    payload: FollowupGeneratedPayload
    subject_name: ClassVar[str] = "followups_generated"

    def describe(self) -> str:
        p = self.payload
        if p.followup is None:
            return f"case {p.case.case_id}: no follow-up ({p.status.replace('_', ' ')}): {p.reason}"[:500]
        mr = p.followup.mr
        return f"case {p.case.case_id} -> {p.followup.followup_id} [{mr.method}]: {mr.gherkin}"[:500]


@registry.register
class FollowupValidated(Event):
    """A follow-up's three validity checks (scenario, manipulation, logic)."""

    type: Literal["followups.validated"] = "followups.validated"
    payload: FollowupValidatedPayload
    subject_name: ClassVar[str] = "followups_validated"

    def describe(self) -> str:
        v = self.payload.validity
        verdict = "valid" if v.valid else "invalid (" + ", ".join(v.failing()) + ")"
        return f"follow-up {self.payload.followup.followup_id}: {verdict}"[:500]
