"""Every event drivemt puts on the bus, as pydantic models, in one module.

Each event has an id, a correlation id (the submission it belongs to), a causation id (the event
that caused it), its producer, a UTC timestamp, a schema version, a one-line human summary (what the
terminal UI's conversation view shows) and a typed payload. The ``type`` field discriminates; the
registry refuses two models with one type. Events are validated at the edge (:func:`decode_event`);
inside the system the types are trusted. The payload models live in :mod:`bus.payloads` and are
re-exported here.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bus.errors import EventValidationError, UnknownEventTypeError
from bus.payloads import (
    CrashSubmittedPayload,
    CrashVerdictPayload,
    DeadLetterPayload,
    ErrorPayload,
    HeartbeatPayload,
    MRAcceptedPayload,
    MRCandidatesPayload,
    MRRejectedPayload,
    ParserFailure,
    ProgressPayload,
    RulesSubmittedPayload,
    ScenarioExtractedPayload,
    ScoredCandidate,
    SimCompletedPayload,
    SimOptions,
    SimRequestedPayload,
    TLAugmentedPayload,
    TLDatasetPayload,
    TLVerdictPayload,
    ViolationPayload,
)
from bus.subjects import Subjects

__all__ = [
    "AgentHeartbeat",
    "AnyEvent",
    "CrashSubmitted",
    "CrashSubmittedPayload",
    "CrashVerdict",
    "CrashVerdictPayload",
    "DeadLetterPayload",
    "DeadLettered",
    "ErrorPayload",
    "ErrorReported",
    "Event",
    "EventRegistry",
    "HeartbeatPayload",
    "MRAccepted",
    "MRAcceptedPayload",
    "MRCandidatesPayload",
    "MRCandidatesProduced",
    "MRRejected",
    "MRRejectedPayload",
    "ParserFailure",
    "ProgressPayload",
    "ProgressReported",
    "RulesSubmitted",
    "RulesSubmittedPayload",
    "ScenarioExtracted",
    "ScenarioExtractedPayload",
    "ScoredCandidate",
    "SimCompleted",
    "SimCompletedPayload",
    "SimOptions",
    "SimRequested",
    "SimRequestedPayload",
    "TLAugmented",
    "TLAugmentedPayload",
    "TLDatasetPayload",
    "TLDatasetSubmitted",
    "TLVerdict",
    "TLVerdictPayload",
    "ViolationFound",
    "ViolationPayload",
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
        first = r.first_vehicle_collision
        hit = f"first collision {first.a}-{first.b} at {first.t:.1f} s" if first else "no collision"
        repro = ", crash reproduced" if r.reproduced else ""
        return f"case {p.case_id} {r.spec.run_id} ({p.index + 1}/{p.total}): {hit}{repro} [{r.wall_seconds:.2f} s]"


@registry.register
class ViolationFound(Event):
    """A violation, with the pictures and numbers that prove it."""

    type: Literal["violations.found"] = "violations.found"
    payload: ViolationPayload
    subject_name: ClassVar[str] = "violations_found"

    def describe(self) -> str:
        return f"violation ({self.payload.kind}) {self.payload.item_id}: {self.payload.description}"[:500]


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
