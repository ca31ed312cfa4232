"""Every event drivemt puts on the bus, as pydantic models, in one module.

Each event has an id, a correlation id (the submission it belongs to), a causation id (the event
that caused it), its producer, a UTC timestamp, a schema version, a one-line human summary (what the
terminal UI's conversation view shows) and a typed payload. The ``type`` field discriminates; the
registry refuses two models with one type. Events are validated at the edge (:func:`decode_event`);
inside the system the types are trusted.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from bus.errors import EventValidationError, UnknownEventTypeError
from bus.subjects import Subjects
from tools.mr import MRCandidate, StoredMR
from tools.provenance import Provenance
from tools.rules import TrafficRule
from tools.scenario import Scenario
from tools.simulation import EgoPolicy, RunRecord, RunSpec, SimSettings
from tools.validation import CheckResult

__all__ = [
    "TL_TRANSFORM_CODES",
    "AgentHeartbeat",
    "AnyEvent",
    "CrashSubmitted",
    "CrashVerdict",
    "DeadLettered",
    "ErrorReported",
    "Event",
    "EventRegistry",
    "MRAccepted",
    "MRCandidatesProduced",
    "MRRejected",
    "ProgressReported",
    "RulesSubmitted",
    "ScenarioExtracted",
    "ScoredCandidate",
    "SimCompleted",
    "SimOptions",
    "SimRequested",
    "TLAugmented",
    "TLDatasetSubmitted",
    "TLVerdict",
    "ViolationFound",
    "decode_event",
    "derived_id",
    "encode_event",
    "event_json_schemas",
    "registry",
]

SCHEMA_VERSION = 1
_ID_NAMESPACE = uuid.UUID("6f1c7f4e-3d1b-5a53-9a44-2f0c8e2b7d10")


def _now() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return str(uuid.uuid4())


def derived_id(parent_id: str, *parts: object) -> str:
    """A deterministic event id derived from the event that caused it.

    Handlers give their outputs derived ids, so a redelivered input produces the same ids again and
    JetStream's de-duplication (``Nats-Msg-Id``) drops the repeats.
    """
    return str(uuid.uuid5(_ID_NAMESPACE, ":".join([parent_id, *map(str, parts)])))


class Event(BaseModel):
    """Fields every event carries."""

    model_config = ConfigDict(extra="forbid")

    type: str
    event_id: str = Field(default_factory=_new_id, description="Unique id; also the JetStream Nats-Msg-Id.")
    correlation_id: str = Field(default="", description="The submission this event belongs to.")
    causation_id: str | None = Field(default=None, description="The event that caused this one.")
    producer: str = Field(description="Agent or command that produced the event, e.g. 'm-agent' or 'cli'.")
    time: datetime = Field(default_factory=_now, description="UTC time of production.")
    schema_version: int = Field(default=SCHEMA_VERSION, description="Version of this event's schema.")
    summary: str = Field(default="", max_length=500, description="One line for people (the UI's conversation view).")

    subject_name: ClassVar[str] = ""
    """Name of the :class:`bus.subjects.Subjects` property this event is published on."""

    def model_post_init(self, context: Any, /) -> None:
        if not self.correlation_id:
            self.correlation_id = self.event_id
        if not self.summary:
            self.summary = self.describe()

    def describe(self) -> str:
        """Default one-line summary."""
        return self.type

    def subject(self, subjects: Subjects) -> str:
        """The subject this event is published on."""
        return str(getattr(subjects, self.subject_name))

    def caused(self, **fields: Any) -> dict[str, Any]:
        """Correlation and causation fields for an event this one causes."""
        return {"correlation_id": self.correlation_id, "causation_id": self.event_id, **fields}


E = TypeVar("E", bound=type[Event])


class EventRegistry:
    """Event models by their ``type``; refuses duplicates."""

    def __init__(self) -> None:
        self._models: dict[str, type[Event]] = {}

    def register(self, model: E) -> E:
        """Class decorator adding an event model."""
        cls: type[Event] = model
        type_field = cls.model_fields["type"]
        type_ = type_field.default
        if not isinstance(type_, str) or not type_:
            raise TypeError(f"{model.__name__} needs a Literal type with a default")
        if type_ in self._models:
            raise ValueError(
                f"event type {type_!r} is registered twice ({self._models[type_].__name__}, {model.__name__})"
            )
        self._models[type_] = model
        return model

    def get(self, type_: str) -> type[Event] | None:
        """The model of a type, if registered."""
        return self._models.get(type_)

    @property
    def models(self) -> dict[str, type[Event]]:
        """Every registered model by type."""
        return dict(self._models)


registry = EventRegistry()


# -- rules -> MRs --------------------------------------------------------------------------------
class RulesSubmittedPayload(BaseModel):
    """One rule or a batch."""

    rules: list[TrafficRule] = Field(min_length=1, max_length=10_000)
    source: str | None = Field(default=None, description="Where the rules came from (file name, UI).")


@registry.register
class RulesSubmitted(Event):
    """Traffic rules to turn into MRs."""

    type: Literal["rules.submitted"] = "rules.submitted"
    payload: RulesSubmittedPayload
    subject_name: ClassVar[str] = "rules_submitted"

    def describe(self) -> str:
        rules = self.payload.rules
        first = rules[0].text.strip().replace("\n", " ")[:60]
        more = f" (+{len(rules) - 1} more)" if len(rules) > 1 else ""
        return f"{len(rules)} rule(s) submitted: {rules[0].id} {first!r}{more}"


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


@registry.register
class MRCandidatesProduced(Event):
    """MR candidates for one rule, from every configured parser."""

    type: Literal["mrs.candidates"] = "mrs.candidates"
    payload: MRCandidatesPayload
    subject_name: ClassVar[str] = "mrs_candidates"

    def describe(self) -> str:
        n = len(self.payload.candidates)
        parsers = sorted({c.parser for c in self.payload.candidates})
        return f"{n} MR candidate(s) for rule {self.payload.rule.id} from {', '.join(parsers) or 'no parser'}"


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


@registry.register
class MRAccepted(Event):
    """A rule's best MR passed validation and is stored in memory."""

    type: Literal["mrs.accepted"] = "mrs.accepted"
    payload: MRAcceptedPayload
    subject_name: ClassVar[str] = "mrs_accepted"

    def describe(self) -> str:
        dup = " (already known)" if self.payload.mr.duplicate else ""
        win = self.payload.winner
        return f"rule {self.payload.rule.id}: {win.candidate.gherkin} [score {win.score:.2f}]{dup}"


class MRRejectedPayload(BaseModel):
    """A rule without an acceptable MR."""

    rule: TrafficRule
    reasons: list[str]
    candidates: list[ScoredCandidate]
    provenance: Provenance


@registry.register
class MRRejected(Event):
    """No candidate of a rule passed validation."""

    type: Literal["mrs.rejected"] = "mrs.rejected"
    payload: MRRejectedPayload
    subject_name: ClassVar[str] = "mrs_rejected"

    def describe(self) -> str:
        reason = self.payload.reasons[0] if self.payload.reasons else "no candidate"
        return f"rule {self.payload.rule.id} rejected: {reason}"[:500]


# -- crashes -------------------------------------------------------------------------------------
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


@registry.register
class CrashSubmitted(Event):
    """A crash report to turn into a scenario."""

    type: Literal["crashes.submitted"] = "crashes.submitted"
    payload: CrashSubmittedPayload
    subject_name: ClassVar[str] = "crashes_submitted"

    def describe(self) -> str:
        first = " ".join(self.payload.summary.split())[:60]
        return f"crash report {self.payload.case_id} submitted: {first!r}"


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


@registry.register
class SimRequested(Event):
    """A scenario run (one ego, one policy, one seeded variant) waiting for a simulator."""

    type: Literal["sim.requested"] = "sim.requested"
    payload: SimRequestedPayload
    subject_name: ClassVar[str] = "sim_requested"

    def describe(self) -> str:
        p = self.payload
        return f"case {p.case_id}: run {p.index + 1}/{p.total} requested ({p.spec.run_id}, {p.simulator})"


class SimCompletedPayload(BaseModel):
    """What one run did."""

    case_id: str
    record: RunRecord
    index: int
    total: int
    simulator: str
    worker: str = Field(description="The agent instance that ran it.")
    case_dir: str = Field(description="Folder of the case's runs, verdict and scenario.")


@registry.register
class SimCompleted(Event):
    """A scenario run finished (collisions, reproduction, pictures)."""

    type: Literal["sim.completed"] = "sim.completed"
    payload: SimCompletedPayload
    subject_name: ClassVar[str] = "sim_completed"

    def describe(self) -> str:
        p = self.payload
        r = p.record
        first = r.first_vehicle_collision
        hit = f"first collision {first.a}-{first.b} at {first.t:.1f} s" if first else "no collision"
        repro = ", crash reproduced" if r.reproduced else ""
        return f"case {p.case_id} {r.spec.run_id} ({p.index + 1}/{p.total}): {hit}{repro} [{r.wall_seconds:.2f} s]"


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


class CrashVerdictPayload(BaseModel):
    """All runs of one crash case, judged."""

    case_id: str
    runs: int
    reproduced: bool
    reproduced_by: list[str] = Field(
        default_factory=list, description="Run ids whose first collision was the reported one."
    )
    reproduced_per_ego: dict[str, bool] = Field(default_factory=dict, description="'<ego>/<policy>' -> reproduced.")
    violations: int = Field(description="Runs in which the ego collided.")
    first_violation_runs: list[int] = Field(
        default_factory=list, description="1-based run numbers of the 1st, 2nd and 3rd violations (SAFE Table 6)."
    )
    seconds_per_run: float
    records: list[str] = Field(default_factory=list, description="Every run's JSON record.")
    errors: list[str] = Field(default_factory=list, description="Runs that could not be done, and why.")


@registry.register
class CrashVerdict(Event):
    """Every run of a crash case is in: was the crash reproduced, how many violations."""

    type: Literal["crashes.verdict"] = "crashes.verdict"
    payload: CrashVerdictPayload
    subject_name: ClassVar[str] = "crashes_verdict"

    def describe(self) -> str:
        p = self.payload
        repro = "reproduced" if p.reproduced else "not reproduced"
        return f"case {p.case_id}: crash {repro} ({len(p.reproduced_by)}/{p.runs} runs), {p.violations} violation(s)"


# -- traffic lights (TIGAUG) ----------------------------------------------------------------------
TL_TRANSFORM_CODES = ("RN", "SW", "FG", "LF", "OE", "UE", "MB", "CC", "MP", "AD", "RT", "SC")


class TLDatasetPayload(BaseModel):
    """A labelled traffic-light dataset to augment (and, with detectors, to test)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(min_length=1, description="Dataset folder or annotation file (LISA, Bosch, YOLO, COCO).")
    format: str | None = Field(default=None, description="lisa, bosch, yolo or coco; detected when null.")
    transforms: list[str] = Field(
        default_factory=lambda: list(TL_TRANSFORM_CODES), min_length=1, description="TIGAUG transformation codes."
    )
    fraction: float = Field(default=1.0, gt=0, le=1, description="Share of the images to augment (seeded sample).")
    split: str | None = Field(default=None, description="Only images of this split (e.g. test); all when null.")
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
        unknown = [c for c in codes if c not in TL_TRANSFORM_CODES]
        if unknown:
            raise ValueError(f"unknown transformation(s) {unknown}; use {', '.join(TL_TRANSFORM_CODES)}")
        return list(dict.fromkeys(codes))


@registry.register
class TLDatasetSubmitted(Event):
    """A traffic-light dataset to augment with TIGAUG's transformations."""

    type: Literal["tl.datasets.submitted"] = "tl.datasets.submitted"
    payload: TLDatasetPayload
    subject_name: ClassVar[str] = "tl_datasets_submitted"

    def describe(self) -> str:
        p = self.payload
        det = f", testing {len(p.detectors)} detector(s)" if p.detectors else ""
        return f"traffic-light dataset {p.dataset} submitted: {','.join(p.transforms)} on {p.fraction:.0%}{det}"[:500]


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


@registry.register
class TLAugmented(Event):
    """A traffic-light dataset was augmented."""

    type: Literal["tl.augmented"] = "tl.augmented"
    payload: TLAugmentedPayload
    subject_name: ClassVar[str] = "tl_augmented"

    def describe(self) -> str:
        p = self.payload
        skipped = f", {len(p.skipped)} skipped" if p.skipped else ""
        return (
            f"{p.pairs} augmented images from {p.images_in} in {p.seconds:.1f} s "
            f"({p.images_per_second:.1f}/s){skipped} -> {p.out_dir}"
        )[:500]


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


@registry.register
class TLVerdict(Event):
    """Detectors were run on original and augmented images and their relations checked."""

    type: Literal["tl.verdict"] = "tl.verdict"
    payload: TLVerdictPayload
    subject_name: ClassVar[str] = "tl_verdict"

    def describe(self) -> str:
        p = self.payload
        total = sum(sum(v.values()) for v in p.violations.values())
        return f"{p.dataset}: {total} violation(s) in {p.pairs} pair(s) x {len(p.detectors)} detector(s)"[:500]


# -- operations ----------------------------------------------------------------------------------
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


@registry.register
class ErrorReported(Event):
    """An agent could not handle (part of) an input."""

    type: Literal["error"] = "error"
    payload: ErrorPayload
    subject_name: ClassVar[str] = ""

    def subject(self, subjects: Subjects) -> str:
        return subjects.errors(self.payload.domain)

    def describe(self) -> str:
        item = f" {self.payload.item_id}" if self.payload.item_id else ""
        return f"{self.payload.agent} error{item}: {self.payload.reason}"[:500]


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


@registry.register
class DeadLettered(Event):
    """An event set aside after failing validation or exceeding its deliveries."""

    type: Literal["deadletter"] = "deadletter"
    payload: DeadLetterPayload
    subject_name: ClassVar[str] = ""

    def subject(self, subjects: Subjects) -> str:
        return subjects.deadletter(self.payload.consumer)

    def describe(self) -> str:
        return f"dead letter from {self.payload.consumer} ({self.payload.original_subject}): {self.payload.reason}"[
            :500
        ]


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


@registry.register
class AgentHeartbeat(Event):
    """An agent instance is alive."""

    type: Literal["agent.heartbeat"] = "agent.heartbeat"
    payload: HeartbeatPayload
    subject_name: ClassVar[str] = ""

    def subject(self, subjects: Subjects) -> str:
        return subjects.heartbeat(self.payload.agent, self.payload.instance)

    def describe(self) -> str:
        p = self.payload
        return f"{p.agent}/{p.instance} {p.status}: {p.handled} handled, {p.failed} failed, {p.in_flight} in flight"


class ProgressPayload(BaseModel):
    """How far a long piece of work is."""

    stage: str
    done: int
    total: int | None = None
    unit: str = "items"
    message: str = ""


@registry.register
class ProgressReported(Event):
    """Progress of long work (a rules batch, a dataset)."""

    type: Literal["progress"] = "progress"
    payload: ProgressPayload
    subject_name: ClassVar[str] = "progress"

    def describe(self) -> str:
        p = self.payload
        total = f"/{p.total}" if p.total is not None else ""
        return f"{p.stage}: {p.done}{total} {p.unit} {p.message}".strip()


AnyEvent = Annotated[
    Union[  # noqa: UP007 - a discriminated union needs the Union form for pydantic's Annotated
        RulesSubmitted,
        MRCandidatesProduced,
        MRAccepted,
        MRRejected,
        CrashSubmitted,
        ScenarioExtracted,
        SimRequested,
        SimCompleted,
        ViolationFound,
        CrashVerdict,
        TLDatasetSubmitted,
        TLAugmented,
        TLVerdict,
        ErrorReported,
        DeadLettered,
        AgentHeartbeat,
        ProgressReported,
    ],
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[Event] = TypeAdapter(AnyEvent)


def encode_event(event: Event) -> bytes:
    """Serialise an event to JSON bytes."""
    return event.model_dump_json().encode("utf-8")


def decode_event(data: bytes, *, subject: str = "?") -> Event:
    """Validate bytes from the bus into an event.

    Raises:
        EventValidationError: For bytes that are not UTF-8, not a JSON object, of an unknown
            type, or not matching the type's schema (the message names the fields).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EventValidationError(subject, f"not UTF-8 (invalid byte at position {exc.start})") from exc
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EventValidationError(
            subject, f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    if not isinstance(obj, dict):
        raise EventValidationError(subject, f"expected a JSON object, got {type(obj).__name__}")
    type_ = obj.get("type")
    if not isinstance(type_, str) or registry.get(type_) is None:
        raise UnknownEventTypeError(subject, str(type_))
    try:
        return _ADAPTER.validate_python(obj)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or '(event)'}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise EventValidationError(subject, f"does not match the {type_} schema: {problems}") from exc


def event_json_schemas() -> dict[str, Any]:
    """JSON Schema of every event type, for tools that inject events."""
    return {type_: model.model_json_schema() for type_, model in sorted(registry.models.items())}
