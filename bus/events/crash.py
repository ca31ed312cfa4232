"""Events of the crash domain: reports submitted, scenarios extracted, runs requested and completed, verdicts."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from bus.envelope import Event, registry
from tools.common.models import Provenance
from tools.crash.models import CaseVerdict, RunRecord, RunSpec, Scenario, SimOptions, SimSettings

__all__ = [
    "CrashSubmitted",
    "CrashSubmittedPayload",
    "CrashVerdict",
    "ScenarioExtracted",
    "ScenarioExtractedPayload",
    "SimCompleted",
    "SimCompletedPayload",
    "SimRequested",
    "SimRequestedPayload",
]


CASE_ID_PATTERN = r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$"
"""A crash case id: letters, digits, ``_``, ``-`` and single inner dots. It names the case's folder and, in the Judge's
tallies, a key-value key, which can neither hold a space nor start, end or repeat a dot."""


class CrashSubmittedPayload(BaseModel):
    """One crash report."""

    case_id: str = Field(min_length=1, max_length=64, pattern=CASE_ID_PATTERN)
    summary: str = Field(description="The crash narrative (NHTSA CIREN/NASS style).")
    sketch: str | None = Field(default=None, description="Path or URL of the scene sketch, if any.")
    source: str | None = Field(default=None, description="Where the report came from.")
    simulate: SimOptions | None = Field(
        default_factory=lambda: SimOptions(),
        description="How to simulate the extracted scenario; null to extract only.",
    )
    batch_size: int | None = Field(
        default=None, ge=1, description="Cases in this submission's batch; the Judge reports the batch when all are in."
    )


class ScenarioExtractedPayload(BaseModel):
    """The scenario of one crash report."""

    case_id: str = Field(min_length=1, max_length=64, pattern=CASE_ID_PATTERN)
    scenario: Scenario
    extractor: str = Field(description="Who extracted it, e.g. 'offline:crash-rules'.")
    template: str = Field(description="Road type of the template used.")
    provenance: Provenance
    summary: str = Field(default="", description="The crash narrative, for reports.")
    sketch: str | None = Field(default=None, description="The sketch, for reports.")
    simulate: SimOptions | None = Field(default=None, description="How to simulate it; null to extract only.")
    batch_size: int | None = Field(
        default=None, ge=1, description="Cases in this submission's batch; the Judge reports the batch when all are in."
    )


class SimRequestedPayload(BaseModel):
    """One simulation run to do (a worker takes it from the shared work queue)."""

    case_id: str = Field(min_length=1, max_length=64, pattern=CASE_ID_PATTERN)
    scenario: Scenario
    spec: RunSpec
    settings: SimSettings
    simulator: Literal["metadrive", "beamng"] = "metadrive"
    index: int = Field(ge=0, description="This run's place in the case's runs.")
    total: int = Field(ge=1, description="How many runs the case has.")
    case_ref: str = Field(description="Artefact ref of the case's folder; the run's files go under it.")
    batch_size: int | None = Field(
        default=None, ge=1, description="Cases in this submission's batch; the Judge reports the batch when all are in."
    )


class SimCompletedPayload(BaseModel):
    """What one run did."""

    case_id: str = Field(min_length=1, max_length=64, pattern=CASE_ID_PATTERN)
    record: RunRecord
    index: int = Field(ge=0, description="This run's place in the case's runs.")
    total: int = Field(ge=1, description="How many runs the case has.")
    simulator: str
    worker: str = Field(description="The agent instance that ran it.")
    case_ref: str = Field(description="Artefact ref of the case's folder: its runs, verdict and scenario.")
    batch_size: int | None = Field(
        default=None, ge=1, description="Cases in this submission's batch; the Judge reports the batch when all are in."
    )


@registry.register
class CrashSubmitted(Event):
    """A crash report to turn into a scenario."""

    type: Literal["crashes.submitted"] = "crashes.submitted"
    payload: CrashSubmittedPayload
    subject_name: ClassVar[str] = "crashes_submitted"

    def describe(self) -> str:
        first = " ".join(self.payload.summary.split())[:60]
        return f"crash report {self.payload.case_id} submitted: {first!r}"


@registry.register
class ScenarioExtracted(Event):
    """A crash report became a scenario DSL."""

    type: Literal["scenarios.extracted"] = "scenarios.extracted"
    payload: ScenarioExtractedPayload
    subject_name: ClassVar[str] = "scenarios_extracted"

    def describe(self) -> str:
        s = self.payload.scenario
        actors = ", ".join(f"{a.id} {a.body_type} {a.initial_position}" for a in s.actors)
        hits = ", ".join(f"{a}-{b}" for a, b in s.collisions) or "none named"
        return f"case {s.case_id}: {s.road_network.road_type}; {actors}; collisions {hits}"[:500]


@registry.register
class SimRequested(Event):
    """A scenario run (one ego, one policy, one seeded variant) waiting for a simulator."""

    type: Literal["sim.requested"] = "sim.requested"
    payload: SimRequestedPayload
    subject_name: ClassVar[str] = "sim_requested"

    def describe(self) -> str:
        p = self.payload
        return f"case {p.case_id}: run {p.index + 1}/{p.total} requested ({p.spec.run_id}, {p.simulator})"


@registry.register
class SimCompleted(Event):
    """A scenario run finished (collisions, reproduction, pictures)."""

    type: Literal["sim.completed"] = "sim.completed"
    payload: SimCompletedPayload
    subject_name: ClassVar[str] = "sim_completed"

    def describe(self) -> str:
        p = self.payload
        r = p.record
        first = r.ego_first_vehicle_collision
        hit = (
            f"the ego's first collision {first.a}-{first.b} at {first.t:.1f} s" if first else "the ego in no collision"
        )
        repro = ", crash reproduced" if r.reproduced else ""
        return f"case {p.case_id} {r.spec.run_id} ({p.index + 1}/{p.total}): {hit}{repro} [{r.wall_seconds:.2f} s]"


@registry.register
class CrashVerdict(Event):
    """Every run of a crash case is in: was the crash reproduced, how many violations."""

    type: Literal["crashes.verdict"] = "crashes.verdict"
    payload: CaseVerdict
    subject_name: ClassVar[str] = "crashes_verdict"

    def describe(self) -> str:
        p = self.payload
        repro = "reproduced" if p.reproduced else "not reproduced"
        return f"case {p.case_id}: crash {repro} ({len(p.reproduced_by)}/{p.runs} runs), {p.violations} violation(s)"
