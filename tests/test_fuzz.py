"""Fuzzing the one event decoder: whatever bytes arrive, the only exception is ``EventValidationError``.

Random bytes, JSON of any shape, deep nesting, huge strings, wrong types, unknown fields, and every registered
event type with one field replaced by a hostile value (NaN, negative counts, paths outside the data dir).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bus import Event, decode_event
from bus.errors import EventValidationError
from tests.event_samples import samples

SAMPLES = samples()
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=30,
)
hostile = st.sampled_from(
    [
        float("nan"),
        float("inf"),
        -1,
        -(2**63),
        2**64,
        "../../../etc/passwd",
        "/etc/shadow",
        "C:\\Windows\\system32",
        "\x00",
        "x" * 100_000,
        [],
        {},
        None,
        True,
        "🚗" * 1000,
    ]
)


def _decodes_or_refuses(data: bytes) -> Event | None:
    """The decoder's contract: an event, or EventValidationError; nothing else escapes."""
    try:
        event = decode_event(data, subject="fuzz")
    except EventValidationError as exc:
        assert exc.subject == "fuzz" and exc.reason
        return None
    # What decodes must also encode again (no NaN or object that breaks the next hop).
    assert decode_event(event.model_dump_json().encode(), subject="again").type == event.type
    return event


@FUZZ
@given(st.binary(max_size=2048))
def test_random_bytes_are_refused_cleanly(data: bytes) -> None:
    _decodes_or_refuses(data)


@FUZZ
@given(json_values)
def test_any_json_is_an_event_or_a_clear_refusal(value: Any) -> None:
    _decodes_or_refuses(json.dumps(value, allow_nan=True).encode())


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_nesting_is_refused(depth: int) -> None:
    for data in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        assert _decodes_or_refuses(data.encode()) is None


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            out += _paths(v, (*prefix, i))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


@FUZZ
@given(st.sampled_from(sorted(SAMPLES)), st.data())
def test_every_event_type_with_a_hostile_field_decodes_or_is_refused(name: str, data: st.DataObject) -> None:
    """Each registered event with one field (at any depth) replaced by a hostile or random value, or an unknown
    field added."""
    obj = json.loads(SAMPLES[name].model_dump_json())
    paths = _paths(obj)
    path = data.draw(st.sampled_from(paths), label="field")
    if path[0] == "type":
        return
    value = data.draw(hostile | json_values, label="value")
    if data.draw(st.booleans(), label="add unknown field"):
        obj["unknown_field_" + data.draw(st.text(max_size=8), label="name")] = value
    else:
        _set(obj, path, value)
    event = _decodes_or_refuses(json.dumps(obj, allow_nan=True).encode())
    if event is not None:
        # An accepted event carries no NaN or infinity anywhere (JSON cannot carry them to the next hop).
        floats = [v for v in _floats(event.model_dump()) if isinstance(v, float)]
        assert all(math.isfinite(v) for v in floats), name


def _floats(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _floats(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _floats(v)]
    return [obj]


def test_a_huge_message_is_refused_without_blowing_up() -> None:
    sample = json.loads(next(iter(SAMPLES.values())).model_dump_json())
    sample["producer"] = "p" * 20_000_000
    _decodes_or_refuses(json.dumps(sample).encode())


def _float_paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _float_paths(v, (*prefix, k))]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj[:2]) for p in _float_paths(v, (*prefix, i))]
    return [prefix] if isinstance(obj, float) else []


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_no_event_accepts_nan_or_infinity_in_any_number(bad: str) -> None:
    """Every number field of every registered event type (NaN speeds, infinite scores ...) is refused."""
    tried = 0
    for name, event in SAMPLES.items():
        for path in _float_paths(json.loads(event.model_dump_json())):
            obj = json.loads(event.model_dump_json())
            _set(obj, path, "@@BAD@@")
            data = json.dumps(obj).replace('"@@BAD@@"', bad).encode()
            with pytest.raises(EventValidationError):
                decode_event(data, subject=name)
            tried += 1
    assert tried > 50
