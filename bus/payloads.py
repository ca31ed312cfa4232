"""Payloads of drivemt's events: the typed data each event carries (the events themselves are in bus.events).

Kept apart from the event classes so each module stays small; ``bus.events`` re-exports every name here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.common.models import Provenance
from tools.crash.models import CaseVerdict as CrashVerdictPayload
from tools.crash.models import EgoPolicy, RunRecord, RunSpec, Scenario, SimSettings
from tools.rules.models import CheckResult, MRCandidate, StoredMR, TrafficRule
from tools.tl.models import TRANSFORM_CODES

__all__ = [
    "CrashSubmittedPayload",
    "CrashVerdictPayload",
    "DeadLetterPayload",
    "ErrorPayload",
    "HeartbeatPayload",
    "MRAcceptedPayload",
    "MRCandidatesPayload",
    "MRRejectedPayload",
    "ParserFailure",
    "ProgressPayload",
    "RulesSubmittedPayload",
    "ScenarioExtractedPayload",
    "ScoredCandidate",
    "SimCompletedPayload",
    "SimOptions",
    "SimRequestedPayload",
    "TLAugmentedPayload",
    "TLDatasetPayload",
    "TLVerdictPayload",
    "ViolationPayload",
]


class RulesSubmittedPayload(BaseModel):
    """One rule or a batch."""

    rules: list[TrafficRule] = Field(min_length=1, max_length=10_000)
    source: str | None = Field(default=None, description="Where the rules came from (file name, UI).")


class ParserFailure(BaseModel):
    """A parser that produced nothing for a rule, and why."""

    parser: str
    error: str


class MRCandidatesPayload(BaseModel):
    """All parsers' candidates for one rule."""

    rule: TrafficRule
    candidates: list[MRCandidate]
    failures: list[ParserFailure] = Field(default_factory=list)
    provenance: Provenance


class ScoredCandidate(BaseModel):
    """A candidate with the validator's verdict."""

    candidate: MRCandidate
    score: float
    accepted: bool
    reasons: list[str] = Field(default_factory=list)


class MRAcceptedPayload(BaseModel):
    """The validated MR of one rule."""

    rule: TrafficRule
    winner: ScoredCandidate = Field(description="This rule's best candidate, in its own wording, with its score.")
    mr: StoredMR = Field(description="The MR as stored (first wording seen; sources include this rule).")
    checks: list[CheckResult]
    candidates: list[ScoredCandidate]
    provenance: Provenance


class MRRejectedPayload(BaseModel):
    """A rule without an acceptable MR."""

    rule: TrafficRule
    reasons: list[str]
    candidates: list[ScoredCandidate]
    provenance: Provenance


class SimOptions(BaseModel):
    """How a crash report's scenario is simulated (carried from the submission to the planner)."""

    model_config = ConfigDict(extra="forbid")

    simulator: Literal["metadrive", "beamng"] = Field(default="metadrive", description="Which simulator runs it.")
    policies: list[EgoPolicy] = Field(
        default_factory=lambda: list[EgoPolicy](["idm"]), min_length=1, description="Ego policies, each in turn."
    )
    variants: int = Field(default=5, ge=1, le=100, description="Seeded variants per ego and policy (SAFE's K).")
    duration_s: float = Field(default=20.0, gt=0, le=600, description="Simulated seconds per run.")
    render: bool = Field(default=True, description="Draw a PNG and a GIF of every run.")
    seed: int = Field(default=0, description="Seed of variant 0.")

    def settings(self) -> SimSettings:
        """The simulator settings these options stand for."""
        return SimSettings(
            duration_s=self.duration_s,
            variants=self.variants,
            policies=list(self.policies),
            render_png=self.render,
            render_gif=self.render,
            base_seed=self.seed,
        )


class CrashSubmittedPayload(BaseModel):
    """One crash report."""

    case_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    summary: str = Field(description="The crash narrative (NHTSA CIREN/NASS style).")
    sketch: str | None = Field(default=None, description="Path or URL of the scene sketch, if any.")
    source: str | None = Field(default=None, description="Where the report came from.")
    simulate: SimOptions | None = Field(
        default_factory=lambda: SimOptions(),
        description="How to simulate the extracted scenario; null to extract only.",
    )


class ScenarioExtractedPayload(BaseModel):
    """The scenario of one crash report."""

    case_id: str
    scenario: Scenario
    extractor: str = Field(description="Who extracted it, e.g. 'offline:crash-rules'.")
    template: str = Field(description="Road type of the template used.")
    provenance: Provenance
    summary: str = Field(default="", description="The crash narrative, for reports.")
    sketch: str | None = Field(default=None, description="The sketch, for reports.")
    simulate: SimOptions | None = Field(default=None, description="How to simulate it; null to extract only.")


class SimRequestedPayload(BaseModel):
    """One simulation run to do (a worker takes it from the shared work queue)."""

    case_id: str
    scenario: Scenario
    spec: RunSpec
    settings: SimSettings
    simulator: Literal["metadrive", "beamng"] = "metadrive"
    index: int = Field(ge=0, description="This run's place in the case's runs.")
    total: int = Field(ge=1, description="How many runs the case has.")
    out_dir: str = Field(description="Folder of the batch's cases; the run writes to <out_dir>/<case_id>/<run_id>.*")


class SimCompletedPayload(BaseModel):
    """What one run did."""

    case_id: str
    record: RunRecord
    index: int
    total: int
    simulator: str
    worker: str = Field(description="The agent instance that ran it.")
    case_dir: str = Field(description="Folder of the case's runs, verdict and scenario.")


class ViolationPayload(BaseModel):
    """A finding: behaviour that breaks a rule, a relation, or reproduces a crash."""

    kind: Literal["crash", "tl", "mr"] = Field(description="Which pipeline found it.")
    item_id: str = Field(description="Case id, image id or test-case id.")
    description: str
    evidence: list[str] = Field(default_factory=list, description="Pictures and records that prove it (paths).")
    metrics: dict[str, float] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


class TLDatasetPayload(BaseModel):
    """A labelled traffic-light dataset to augment (and, with detectors, to test)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(min_length=1, description="Dataset folder or annotation file (LISA, Bosch, YOLO, COCO).")
    format: str | None = Field(default=None, description="lisa, bosch, yolo or coco; detected when null.")
    transforms: list[str] = Field(
        default_factory=lambda: list(TRANSFORM_CODES), min_length=1, description="TIGAUG transformation codes."
    )
    fraction: float = Field(default=1.0, gt=0, le=1, description="Share of the images to augment (seeded sample).")
    split: str | None = Field(default=None, description="Only images of this split (e.g. test); all when null.")
    params: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Parameters per transformation code (defaults are TIGAUG's), e.g. {SC: {factor: [0.6, 0.8]}}.",
    )
    seed: int = 0
    out_dir: str | None = Field(default=None, description="Where the augmented dataset goes; the run folder if null.")
    detectors: list[str] = Field(
        default_factory=list, description="Detectors to test on it, as KIND:PATH (yolo:, frcnn:, ssdlite:)."
    )
    threshold: float | None = Field(default=None, ge=0, le=1, description="Consistency below which an image violates.")
    name: str | None = Field(default=None, description="A name for reports.")

    @field_validator("transforms")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        codes = [v.strip().upper() for v in value]
        unknown = [c for c in codes if c not in TRANSFORM_CODES]
        if unknown:
            raise ValueError(f"unknown transformation(s) {unknown}; use {', '.join(TRANSFORM_CODES)}")
        return list(dict.fromkeys(codes))


class TLAugmentedPayload(BaseModel):
    """An augmented dataset, with the pairs the Judge compares."""

    request: TLDatasetPayload
    format: str = Field(description="The format the input was read in.")
    out_dir: str = Field(description="Root of the augmented dataset.")
    manifest: str = Field(description="JSON file listing every (original, augmented) pair with its transform.")
    images_in: int
    pairs: int = Field(description="Augmented images written.")
    per_transform: dict[str, int] = Field(default_factory=dict)
    skipped: list[dict[str, str]] = Field(default_factory=list, description="Items left out, with the reason.")
    seconds: float
    images_per_second: float


class TLVerdictPayload(BaseModel):
    """Detectors tested on an augmented dataset."""

    dataset: str
    detectors: list[str]
    threshold: float
    images: int = Field(description="Original images compared.")
    pairs: int = Field(description="(original, augmented) pairs compared per detector.")
    violations: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="detector -> transform -> images violating the relation."
    )
    map_original: dict[str, float] = Field(default_factory=dict, description="detector -> mAP@[.5:.95] on originals.")
    map_augmented: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="detector -> transform -> mAP@[.5:.95] against ground truth."
    )
    report: str | None = None
    seconds: float = 0.0


class ErrorPayload(BaseModel):
    """Bad input or a failure, reported where people and tools can see it."""

    domain: str = Field(description="Error subject domain: rules, mrs, bus ...")
    agent: str
    error_type: str = Field(description="Exception class name, e.g. EmptyRuleError.")
    reason: str
    input_subject: str | None = None
    input_event_id: str | None = None
    item_id: str | None = Field(default=None, description="The rule, case or image the error is about.")
    excerpt: str | None = Field(default=None, description="Start of the offending input, for people.")


class DeadLetterPayload(BaseModel):
    """An event no agent could handle."""

    consumer: str
    original_subject: str
    stream_sequence: int | None = None
    deliveries: int
    reason: str
    data: str = Field(description="The original bytes, UTF-8 decoded with replacement characters.")
    data_b64: str | None = Field(default=None, description="The original bytes in base64 when they are not UTF-8.")
    headers: dict[str, str] = Field(default_factory=dict)


class HeartbeatPayload(BaseModel):
    """Liveness and counters of one agent instance."""

    agent: str
    instance: str
    host: str
    pid: int
    started_at: datetime
    status: Literal["starting", "ready", "stopping"]
    consumes: list[str]
    produces: list[str]
    tools: list[str]
    handled: int = 0
    failed: int = 0
    in_flight: int = 0
    last_error: str | None = None
    interval_s: float = 5.0


class ProgressPayload(BaseModel):
    """How far a long piece of work is."""

    stage: str
    done: int
    total: int | None = None
    unit: str = "items"
    message: str = ""
