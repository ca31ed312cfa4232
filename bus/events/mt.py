"""Events of the AutoMT domain: driving test cases submitted (the T-Agent, F-Agent and Judge consume them)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

from bus.envelope import Event, registry
from tools.mt.models import (
    BandPolicy,
    CaseDescription,
    DrivingCase,
    FollowUp,
    Method,
    ModelPrediction,
    ModelVerdict,
    Validity,
)
from tools.rules.models import MRFields

__all__ = [
    "CasesDescribed",
    "CasesDescribedPayload",
    "CasesSubmitted",
    "CasesSubmittedPayload",
    "FollowupGenerated",
    "FollowupGeneratedPayload",
    "FollowupJudged",
    "FollowupJudgedPayload",
    "FollowupValidated",
    "FollowupValidatedPayload",
    "MTBatchJudged",
    "MTBatchJudgedPayload",
]


class _Batch(BaseModel):
    """What travels with every case of a submission."""

    region: str | None = Field(default=None, description="Ontology region whose MRs apply (per case if unset).")
    method: Method = Field(
        default="automt", description="How follow-ups' MRs are chosen: automt, manual, random, null."
    )
    seed: int = Field(default=0, ge=0, description="Seed of the generation (manual and random draws, placements).")
    batch_size: int | None = Field(default=None, ge=1, description="Cases in the whole submission.")
    models: list[str] = Field(
        default_factory=list,
        description="Driving models the Judge runs: refs of their adapter specs in the artefact store "
        "(the daemon's configured models when empty).",
    )
    band: BandPolicy | None = Field(default=None, description="The Judge's band (the daemon's default if unset).")
    fixed_mr: MRFields | None = Field(default=None, description="The one MR of the 'fixed' method.")

    def batch_fields(self) -> dict[str, Any]:
        """The submission's fields, to pass on to the next event of each case."""
        return {name: getattr(self, name) for name in _Batch.model_fields}


class CasesSubmittedPayload(_Batch):
    """One driving test case or a batch, from any loader; frames are artefact refs."""

    cases: list[DrivingCase] = Field(min_length=1, max_length=1000)
    source: str | None = Field(default=None, description="Where the cases came from (a folder, a dataset).")

    @model_validator(mode="after")
    def _unique(self) -> CasesSubmittedPayload:
        # Every case's events are named after its id: a second case of one id would be taken for a repeat and
        # dropped, and its batch would never be complete.
        ids = [c.case_id for c in self.cases]
        if len(set(ids)) != len(ids):
            twice = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"case ids repeat in one submission: {', '.join(twice)[:300]}")
        return self


class CasesDescribedPayload(_Batch):
    """One case and AutoMT's representation of it (or, for a case whose frames cannot be read, why not)."""

    case: DrivingCase
    description: CaseDescription | None = None
    problem: str = Field(default="", description="Why the case could not be described (its frames unreadable).")


class FollowupGeneratedPayload(_Batch):
    """A follow-up of one case, or why it has none (no applicable MR; an MR that cannot be rendered; frames
    that cannot be read)."""

    case: DrivingCase
    description: CaseDescription | None = None
    status: Literal["generated", "no_applicable_mr", "unrenderable", "unreadable", "error"]
    followup: FollowUp | None = None
    reason: str = ""
    candidates: int = Field(default=0, description="MRs that passed the filters (automt).")


class FollowupValidatedPayload(_Batch):
    """A follow-up with its three checks."""

    followup: FollowUp
    validity: Validity


class FollowupJudgedPayload(_Batch):
    """A case's end: each driving model's verdict on its follow-up, or why it was not judged."""

    case: DrivingCase
    status: Literal["judged", "not judged"]
    reason: str = Field(default="", description="Why it was not judged (no follow-up, invalid, no models).")
    followup: FollowUp | None = None
    valid: bool = False
    verdicts: list[ModelVerdict] = Field(default_factory=list)
    band_policy: BandPolicy = "automt-paper"
    source_predictions: list[ModelPrediction] = Field(default_factory=list)
    followup_predictions: list[ModelPrediction] = Field(default_factory=list)
    model_errors: list[str] = Field(default_factory=list, description="Models that could not judge it, and why.")

    @property
    def violations(self) -> list[str]:
        """The models that broke the MR."""
        return [v.model for v in self.verdicts if v.violation]


class MTBatchJudgedPayload(_Batch):
    """A submission's totals, once every case has its verdict."""

    cases: int
    followups: int
    valid: int
    violations: dict[str, int] = Field(description="Violations per model (on valid follow-ups).")
    violation_rate: dict[str, float] = Field(description="Violations per model / cases submitted (AutoMT's rate).")
    distinct_manipulations: int


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
        if d is None:
            return f"case {self.payload.case.case_id}: not described ({self.payload.problem})"[:500]
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


@registry.register
class FollowupJudged(Event):
    """The driving models' verdicts on a follow-up (every case ends with one, judged or not)."""

    type: Literal["followups.judged"] = "followups.judged"
    payload: FollowupJudgedPayload
    subject_name: ClassVar[str] = "followups_judged"

    def describe(self) -> str:
        p = self.payload
        if p.status != "judged":
            return f"case {p.case.case_id}: not judged ({p.reason})"[:500]
        broken = p.violations
        what = f"violated by {', '.join(broken)}" if broken else "no violation"
        return f"case {p.case.case_id}: {len(p.verdicts)} model(s) judged, {what}"[:500]


@registry.register
class MTBatchJudged(Event):
    """A submission of driving cases, judged: AutoMT's totals."""

    type: Literal["followups.batch_judged"] = "followups.batch_judged"
    payload: MTBatchJudgedPayload
    subject_name: ClassVar[str] = "followups_batch_judged"

    def describe(self) -> str:
        p = self.payload
        rates = ", ".join(f"{m} {r:.0%}" for m, r in sorted(p.violation_rate.items()))
        return f"batch judged: {p.valid} valid follow-ups of {p.cases} cases; violation rates {rates or 'n/a'}"[:500]
