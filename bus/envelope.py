"""The envelope every event shares: the base model, the registry of event types, and the one safe decoder.

Each event has an id, a correlation id (the submission it belongs to), a causation id (the event that
caused it), its producer, a UTC timestamp, a schema version, a one-line human summary (what the terminal
UI's conversation view shows) and a typed payload. The ``type`` field discriminates; the registry
refuses two models with one type. Events are validated at the edge (:func:`decode_event`, the one
decoder the agents, the terminal UI, ``ops`` and tests use); inside the system the types are trusted.
"""

from __future__ import annotations

import json
import math
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bus.errors import EventValidationError, UnknownEventTypeError
from bus.subjects import Subjects

__all__ = [
    "SCHEMA_VERSION",
    "Event",
    "EventRegistry",
    "decode_event",
    "derived_id",
    "encode_event",
    "event_json_schemas",
    "registry",
]

SCHEMA_VERSION = 1
ID_PATTERN = r"^[A-Za-z0-9_-]{1,128}$"
"""What an event, correlation or causation id may hold: ids become key-value keys (handled marks, tallies), artefact
folders (a batch's correlation id) and ``Nats-Msg-Id`` headers, so no dot, slash, space, wildcard or line break."""
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
    event_id: str = Field(
        default_factory=_new_id, pattern=ID_PATTERN, description="Unique id; also the JetStream Nats-Msg-Id."
    )
    correlation_id: str = Field(
        default="",
        pattern=r"^$|" + ID_PATTERN,
        description="The submission this event belongs to (the event's own id when empty).",
    )
    causation_id: str | None = Field(default=None, pattern=ID_PATTERN, description="The event that caused this one.")
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

    def union(self) -> Any:
        """The discriminated union of every registered event type (what ``AnyEvent`` is), for pydantic.

        Derived from the registry, so a newly registered event is part of it without a second list.
        """
        models = tuple(self._models.values())
        if not models:
            raise RuntimeError("no event type is registered")
        return Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007 - built at run time


registry = EventRegistry()


def encode_event(event: Event) -> bytes:
    """Serialise an event to JSON bytes."""
    return event.model_dump_json().encode("utf-8")


def decode_event(data: bytes, *, subject: str = "?") -> Event:
    """Validate bytes from the bus into an event: the one safe decoder.

    Whatever the bytes are (random, deeply nested, huge, of the wrong types), the only exception that
    leaves this function is :class:`EventValidationError`, so a caller handles one bad message and
    goes on with the others. What it returns can be encoded again: NaN, infinities and lone UTF-16
    surrogates (``"\\ud800"``, valid JSON but no text) are refused.

    Raises:
        EventValidationError: For bytes that are not UTF-8, not a JSON object, of an unknown
            type, or not matching the type's schema (the message names the fields).
    """
    try:
        return _decode(data, subject)
    except EventValidationError:
        raise
    except RecursionError as exc:
        raise EventValidationError(subject, "nested too deeply to be an event") from exc
    except Exception as exc:  # anything else a hostile input can provoke in json or pydantic
        raise EventValidationError(subject, f"undecodable ({type(exc).__name__}: {str(exc)[:200]})") from exc


def _decode(data: bytes, subject: str) -> Event:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EventValidationError(subject, f"not UTF-8 (invalid byte at position {exc.start})") from exc

    def constant(name: str) -> float:
        raise EventValidationError(subject, f"{name} is not a number JSON allows (NaN and infinities are refused)")

    def finite(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise EventValidationError(subject, f"the number {literal[:40]} is out of range")
        return value

    try:
        obj = json.loads(text, parse_constant=constant, parse_float=finite)
    except json.JSONDecodeError as exc:
        raise EventValidationError(
            subject, f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    if not isinstance(obj, dict):
        raise EventValidationError(subject, f"expected a JSON object, got {type(obj).__name__}")
    if "\\u" in text and _has_lone_surrogate(obj):
        raise EventValidationError(
            subject, "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is no text"
        )
    type_ = obj.get("type")
    model = registry.get(type_) if isinstance(type_, str) else None
    if model is None:
        raise UnknownEventTypeError(subject, str(type_)[:100])
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(event)'}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise EventValidationError(subject, f"does not match the {type_} schema: {problems}") from exc


def _has_lone_surrogate(obj: Any) -> bool:
    """Whether any string (key or value) of parsed JSON holds a lone surrogate, which no UTF-8 encoder accepts."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def event_json_schemas() -> dict[str, Any]:
    """JSON Schema of every event type, for tools that inject events."""
    return {type_: model.model_json_schema() for type_, model in sorted(registry.models.items())}
