"""Event models: validation at the edge, the registry, derived ids and schemas."""

from __future__ import annotations

import json

import pytest
from pydantic import Field, TypeAdapter
from typer.testing import CliRunner

from bus import (
    AnyEvent,
    ErrorDomain,
    EventValidationError,
    RulesSubmitted,
    Subjects,
    UnknownEventTypeError,
    decode_event,
    derived_id,
    encode_event,
    event_json_schemas,
    registry,
)
from bus.errors import InvalidSubjectError
from bus.events import Event, EventRegistry, RulesSubmittedPayload
from runners.cli import app
from tests.event_samples import samples
from tools.rules.models import TrafficRule


def make_submission() -> RulesSubmitted:
    return RulesSubmitted(
        producer="test", payload=RulesSubmittedPayload(rules=[TrafficRule(id="r1", text="Stop at red lights.")])
    )


def test_round_trip_keeps_every_field() -> None:
    """An event decodes to an equal event with its summary, ids and UTC time."""
    ev = make_submission()
    back = decode_event(encode_event(ev), subject="x")
    assert back == ev
    assert ev.correlation_id == ev.event_id and ev.causation_id is None
    assert ev.time.tzinfo is not None and ev.schema_version == 1
    assert "1 rule(s) submitted: r1" in ev.summary


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "malformed JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b"\xff\xfe\x00bad", "not UTF-8"),
        (json.dumps({"type": "rules.submitted", "producer": "x", "payload": {"rules": []}}).encode(), "payload.rules"),
        (
            json.dumps({"type": "rules.submitted", "producer": "x", "payload": {"rules": [{"id": "a"}]}}).encode(),
            "text",
        ),
    ],
)
def test_bad_bytes_are_refused_with_a_reason(data: bytes, message: str) -> None:
    """Malformed, non-UTF-8 or schema-breaking bytes raise a validation error naming the problem."""
    with pytest.raises(EventValidationError, match=message):
        decode_event(data, subject="drivemt.rules.submitted")


def test_unknown_type_is_its_own_error() -> None:
    """An unregistered type is reported as such."""
    with pytest.raises(UnknownEventTypeError, match="unknown event type 'nope'"):
        decode_event(b'{"type": "nope"}', subject="s")


def test_registry_refuses_duplicates() -> None:
    """Registering two models with one type fails loudly."""
    from typing import Literal

    reg = EventRegistry()

    class A(Event):
        type: Literal["dup"] = "dup"

    class B(Event):
        type: Literal["dup"] = Field(default="dup")

    reg.register(A)
    with pytest.raises(ValueError, match="registered twice"):
        reg.register(B)


def test_derived_ids_are_deterministic() -> None:
    """Outputs of a redelivered input get the same ids (so JetStream drops the repeats)."""
    assert derived_id("abc", "candidates", 0) == derived_id("abc", "candidates", 0)
    assert derived_id("abc", "candidates", 0) != derived_id("abc", "candidates", 1)


def test_caused_events_carry_correlation_and_causation() -> None:
    """A caused event keeps the submission's correlation id and names its cause."""
    ev = make_submission()
    fields = ev.caused(event_id="x")
    assert fields == {"correlation_id": ev.correlation_id, "causation_id": ev.event_id, "event_id": "x"}


def test_every_registered_event_has_a_sample() -> None:
    """The samples below cover every registered type (a new type without one fails here)."""
    assert set(samples()) == set(registry.models)


@pytest.mark.parametrize("type_", sorted(registry.models))
def test_every_registered_event_round_trips(type_: str) -> None:
    """Each registered event decodes back to an equal event, through the registry and through AnyEvent."""
    event = samples()[type_]
    data = encode_event(event)
    assert decode_event(data, subject="x") == event
    assert TypeAdapter(AnyEvent).validate_json(data) == event


def test_drivemt_events_schema_lists_every_registered_event() -> None:
    """`drivemt events schema` prints a JSON Schema and a subject for every registered type."""
    result = CliRunner().invoke(app, ["events", "schema"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc["events"]) == set(registry.models) == set(doc["subjects"])
    for type_, schema in doc["events"].items():
        assert schema["properties"]["type"]["const"] == type_
    assert event_json_schemas() == doc["events"]


def test_subjects_are_checked() -> None:
    """Subject tokens with dots or wildcards are refused; names are namespaced."""
    s = Subjects("team-a")
    assert s.rules_submitted == "team-a.rules.submitted"
    assert s.errors(ErrorDomain.RULES) == "team-a.errors.rules"
    assert s.streams.inputs == "TEAM_A_INPUTS"
    with pytest.raises(InvalidSubjectError):
        Subjects("bad.ns")
    with pytest.raises(InvalidSubjectError):
        s.heartbeat("m-agent", "host.1")
