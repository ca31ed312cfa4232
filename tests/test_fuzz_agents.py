"""Fuzzing every agent's input through one real daemon (issue 12 §1).

Hypothesis draws rounds (``DRIVEMT_FUZZ_ROUNDS``, 20 by default, about half a second each). Each round publishes,
on every subject an agent of the daemon consumes:

* a message the decoder must refuse: NaN and infinite numbers, unknown top-level fields holding deep nesting, wrong
  types, random values, random bytes, a valid event of a type none of the subject's consumers takes;
* a schema-valid event with hostile values: refs and paths outside the data dir (absolute, ``..``, NUL bytes,
  backslashes, names too long for a file system), 1 MB strings and unicode oddities, negative, zero and huge numbers,
  ids no key can hold, unknown regions, unloadable detectors and driving models, a case id twice in one batch;
  some ride on a real driving case and a real traffic-light dataset in the store, so the pipelines run for real;
* valid inputs right behind the hostile ones (a rule, MR candidates), likely in the same fetched batch.

Then, for each message and each consumer of its subject: what the decoder refuses is that consumer's dead letter;
what an agent cannot work with ends as an error event naming the input (``input_event_id``) or a dead letter;
everything is settled at its first delivery (no handler failure waiting for a retry, no dead letter after retries,
downstream included); the valid inputs get their results; every agent sends a fresh "ready" heartbeat and no task
exception escapes.

Crash events never reach MetaDrive: reports to simulate are ones the extractor refuses, scenarios to simulate and
runs to do carry a case ref the store refuses, so the refusal comes before any simulation.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from bus import (
    CrashSubmitted,
    DeadLettered,
    ErrorReported,
    Event,
    EventValidationError,
    MRAccepted,
    MRRejected,
    ScenarioExtracted,
    SimRequested,
    TLDatasetSubmitted,
    decode_event,
    registry,
)
from memory import MiniLMEmbedder
from runners.clients.ops import collect_status
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.event_samples import samples
from tests.helpers import Recorder, rule
from tools.common.artifacts import BadArtifactRefError, LocalArtifactStore, RunLayout, check_ref
from tools.crash.files import MAX_SUMMARY_BYTES
from tools.mt.models import DrivingCase
from tools.mt.synth.dataset import render_case, write_case
from tools.mt.synth.scene import SceneSpec

SAMPLES = samples()
RETRY_LOGS = {
    "handler failed; will retry",
    "giving up after repeated failures",
    "could not settle an event; it will be redelivered",
    "batch failed; handing it back",
    "could not dead-letter a message",
}
"""What the runtime logs when an input is not settled at its first delivery. (An input whose outputs are over the
server's size limit is set aside at once, an error event and a dead letter: that is an answer.)"""
TAG = re.compile(r'"producer": ?"fuzz-([0-9a-f]{32})"')
ROUND_TIMEOUT_S = 60.0

LONG_NAME = "n" * 300
"""A path component over every file system's name limit (255 bytes)."""
REFUSED_REFS = ["", "/etc/passwd", "/etc", "../../etc/passwd", "a/../../b", "..", "x\x00y", "a\\b", "C:\\Windows"]
"""Artefact refs the store refuses: absolute, empty, climbing out, NUL bytes, backslashes."""
OUTSIDE_PATHS = [
    "/etc/passwd",
    "/etc",
    "/proc/self/environ",
    "/dev/zero",
    "../../../../etc/shadow",
    "~root/.ssh/id_rsa",
    "x\x00y",
    "/" + LONG_NAME,
    LONG_NAME,
    "a/" + LONG_NAME + "/b",
]
"""Paths outside the data dir (or no path at all)."""
ODD_TEXT = [
    "\u202eevil.exe\u202c",  # right-to-left override
    "\ufeff\u200b\u200d",  # BOM, zero-width characters
    "e\u0301" * 100,  # combining accents
    "🚗" * 300,
    "\x00\x01\x1b[31m",  # NUL, control characters, an ANSI escape
    "Ⅻ ﬁ ß İ",  # case-mapping oddities
    "\U0010ffff",
    "\ud800",  # a lone surrogate: valid JSON (\ud800), not valid text
    "a" * 1_000_000,
    "ü" * 500_000,  # 1 MB of two-byte UTF-8
]
BAD_IDS = ["x y", "a.b.", ".", "*", ">", "a" * 300, "../../etc", "\r\nX-Injected: 1", "é", ""]
"""Event, correlation and causation ids no key or subject token can hold."""
BAD_DETECTORS = [
    "nope:/etc/passwd",
    "yolo:",
    "yolo:../../x.pt",
    "ssdlite:/nonexistent.pt",
    "frcnn:/etc/passwd",
    "yolo:" + LONG_NAME,
    "yolo:\x00",
    "frcnn:~nobody-at-all/x.pt",
]
BAD_MODEL_SPECS = [
    "/etc/passwd",
    "/etc",
    "/proc/self/environ",
    "../../etc/passwd",
    LONG_NAME,
    "/" + LONG_NAME,
    "x\x00y",
]
HOSTILE_MRS = [
    {"road_type": "../../etc/passwd", "verb": "adds", "manipulation": "🚗" * 50, "expected_behavior": "slow down"},
    {"road_type": "any roads", "verb": "replaces", "manipulation": "x" * 100_000, "expected_behavior": "x\x00y"},
    {"road_type": "any roads", "verb": "adds", "manipulation": "fog", "expected_behavior": "/etc/passwd"},
]
UNKNOWN_REGIONS = ["atlantis", "../../etc/passwd", "/etc/passwd", "", "x\x00y", LONG_NAME, "🚗"]

EDGE_VALUES: list[Any] = [-1, 0, -(2**63), 2**64, 10**100, -1e308, 1e308, 5e-324, "", [], {}, None, True, "NaN"]
deep = st.integers(50, 900).map(lambda n: json.loads("[" * n + "]" * n))
json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
json_values = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
hostile_values = st.sampled_from([*EDGE_VALUES, *OUTSIDE_PATHS, *ODD_TEXT]) | json_values


# -- JSON helpers --------------------------------------------------------------------------------------------------
def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON object (lists: their first three items)."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            out += _paths(v, (*prefix, i))
    return out


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(obj, path[:-1])[path[-1]] = value


def _float_paths(obj: Any) -> list[tuple[Any, ...]]:
    return [p for p in _paths(obj) if isinstance(_get(obj, p), float)]


BAD_NUMBER = "@@BAD-NUMBER@@"


def _dumps(obj: Any, bad_number: str | None = None) -> bytes:
    text = json.dumps(obj)
    if bad_number is not None:
        text = text.replace(json.dumps(BAD_NUMBER), bad_number)
    return text.encode()


def _decoded(data: bytes) -> Event | None:
    try:
        return decode_event(data, subject="local")
    except EventValidationError:
        return None


def _refused_ref(ref: str) -> bool:
    try:
        check_ref(ref)
    except BadArtifactRefError:
        return True
    return False


# -- what one round publishes --------------------------------------------------------------------------------------
@dataclass
class Item:
    """One message of a round."""

    what: str
    subject: str
    data: bytes
    tag: str
    """The message's producer is ``fuzz-<tag>`` (its dead letter carries the bytes)."""
    event_id: str | None
    """The event id, when the message decodes."""
    expect: str
    """'dead' (the decoder refuses it), 'refuse' (an agent must report it), 'answer' (handled either way) or
    'valid' (a valid input sent among the hostile ones)."""

    def __repr__(self) -> str:
        return f"<{self.what} on {self.subject.split('.', 1)[1]}: {self.data[:160]!r}>"


@dataclass
class Fixtures:
    """What the rounds need from the daemon: subjects, who consumes what, and real inputs in its store."""

    subjects: dict[str, str]
    """Event type -> its subject."""
    consumed: dict[str, set[str]]
    """Subject -> the event types its consumers take."""
    case: DrivingCase
    """A case whose frames are in the store."""
    tl_ref: str
    """A small traffic-light dataset in the store."""


class Round:
    """Builds the messages of one round from hypothesis draws."""

    def __init__(self, draw: st.DataObject, fx: Fixtures) -> None:
        self.draw = draw
        self.fx = fx
        self.items: list[Item] = []

    def base(self, type_: str) -> dict[str, Any]:
        """A valid event of a type with fresh ids, made safe: no crash sample reaches a simulator."""
        obj = json.loads(SAMPLES[type_].model_dump_json())
        obj["event_id"] = str(uuid.uuid4())
        obj["correlation_id"] = str(uuid.uuid4())
        obj["causation_id"] = None
        p = obj["payload"]
        if type_ in ("crashes.submitted", "scenarios.extracted"):
            p["simulate"] = None
        if type_ == "sim.requested":
            p["case_ref"] = self.pick(REFUSED_REFS, "sim.requested case_ref")
        if type_ in ("cases.submitted", "cases.described") and self.draw.draw(st.booleans(), label="real case"):
            real = json.loads(self.fx.case.model_dump_json())
            if type_ == "cases.submitted":
                p["cases"] = [real]
                p["method"] = "null"
            else:
                p["case"] = real
        if type_ in ("followups.generated", "followups.validated") and self.draw.draw(st.booleans(), label="real"):
            real = json.loads(self.fx.case.model_dump_json())
            p["followup"]["source"] = real
            p["followup"]["case"] = {**real, "case_id": "fuzz-real-followup"}
        if type_ == "tl.datasets.submitted" and self.draw.draw(st.booleans(), label="real dataset"):
            p["dataset_ref"] = self.fx.tl_ref
            p["transforms"] = self.draw.draw(
                st.lists(st.sampled_from(["RN", "CC", "SC", "TR"]), min_size=1, max_size=2)
            )
        return obj

    def add(
        self,
        type_: str,
        obj: dict[str, Any],
        what: str,
        expect: str,
        *,
        bad_number: str | None = None,
        subject: str | None = None,
        raw: Callable[[bytes], bytes] | None = None,
    ) -> None:
        """Add a message: ``obj`` as JSON (with ``bad_number`` for the placeholder, bytes changed by ``raw``)."""
        tag = uuid.uuid4().hex
        obj["producer"] = f"fuzz-{tag}"
        data = _dumps(obj, bad_number)
        if raw is not None:
            data = raw(data)
        event = _decoded(data)
        if event is None:
            expect = "dead"
        elif not _safe(event):
            return
        event_id = event.event_id if event is not None else None
        self.items.append(Item(what, subject or self.fx.subjects[type_], data, tag, event_id, expect))

    # -- messages the decoder refuses ---------------------------------------------------------------------------------
    def refused(self, type_: str) -> None:
        kinds = ["nan", "unknown top-level field", "random value", "wrong type", "foreign type", "random bytes"]
        kind = self.pick(kinds, f"{type_} refused")
        obj = self.base(type_)
        floats = _float_paths(obj)
        if kind == "nan" and floats:
            path = self.pick(floats, "float")
            literal = self.pick(["NaN", "Infinity", "-Infinity", "1e999", "-1e999"], "literal")
            _set(obj, path, BAD_NUMBER)
            self.add(type_, obj, f"{literal} at {'.'.join(map(str, path))}", "dead", bad_number=literal)
            return
        if kind in ("random value", "wrong type"):
            path = self.pick([p for p in _paths(obj) if p[0] == "payload"], "path")
            old = _get(obj, path)
            if kind == "wrong type":
                value: Any = {"a": [1]} if not isinstance(old, dict) else ["not", "an", "object"]
            else:
                value = self.draw.draw(hostile_values, label="value")
            _set(obj, path, value)
            if _decoded(_dumps(obj)) is None:
                self.add(type_, obj, f"{kind} at {'.'.join(map(str, path))}", "dead")
                return
            obj = self.base(type_)
        subject = self.fx.subjects[type_]
        if kind == "foreign type":  # a valid event of a type no consumer of the subject takes
            foreign = sorted(t for t in self.fx.subjects if t not in self.fx.consumed[subject])
            other = self.pick(foreign, "foreign type")
            self.add(other, self.base(other), f"a {other} event", "dead", subject=subject)
            return
        if kind == "random bytes":
            noise = self.draw.draw(st.binary(max_size=200), label="bytes")
            cut = self.draw.draw(st.integers(1, 60), label="cut")  # at least the opening brace
            self.add(type_, obj, "random bytes", "dead", raw=lambda data: noise + data[cut:] + noise)  # never JSON
            return
        name = "unknown_" + self.draw.draw(st.text(max_size=12), label="unknown field")
        obj[name] = self.draw.draw(deep | json_values, label="unknown value")
        self.add(type_, obj, "unknown top-level field", "dead")

    # -- schema-valid events with hostile values -------------------------------------------------------------------------
    def hostile(self, type_: str) -> None:
        recipes = [*RECIPES.get(type_, []), _random_value, _hostile_ids, _envelope]
        recipe = self.draw.draw(st.sampled_from(recipes), label=f"{type_} recipe")
        obj = self.base(type_)
        what, expect = recipe(self, obj)
        self.add(type_, obj, what, expect)

    def pick(self, values: list[Any], label: str) -> Any:
        return self.draw.draw(st.sampled_from(values), label=label)


def _safe(event: Event) -> bool:
    """Whether an event is safe to send: it cannot start a simulation or a scan of the whole file system."""
    if isinstance(event, CrashSubmitted) and event.payload.simulate is not None:
        summary = event.payload.summary
        return not summary.strip() or len(summary.encode("utf-8", "surrogatepass")) > MAX_SUMMARY_BYTES
    if isinstance(event, ScenarioExtracted) and event.payload.simulate is not None:
        try:
            RunLayout.crash_case(event.correlation_id, event.payload.case_id)
        except BadArtifactRefError:
            return True
        return False
    if isinstance(event, SimRequested):
        return _refused_ref(event.payload.case_ref)
    if isinstance(event, TLDatasetSubmitted):
        p = event.payload
        if p.dataset_ref is not None:  # the small dataset of the test, or a ref the store refuses
            return p.dataset_ref.startswith("fuzz/") or _refused_ref(p.dataset_ref)
        try:
            path = Path(p.dataset)
            return not path.is_dir() or path.resolve() == Path("/etc")
        except (OSError, ValueError):
            return True
    return True


Recipe = Callable[[Round, dict[str, Any]], tuple[str, str]]


def _random_value(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    paths = [p for p in _paths(obj) if p[0] == "payload"]
    path = r.draw.draw(st.sampled_from(paths), label="path")
    _set(obj, path, r.draw.draw(hostile_values, label="value"))
    return f"random value at {'.'.join(map(str, path))}", "answer"


def _hostile_ids(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    field = r.pick(["event_id", "correlation_id", "causation_id"], "id field")
    obj[field] = r.pick(BAD_IDS, "bad id")
    empty_correlation = field == "correlation_id" and not obj[field]  # means: the event's own id
    return f"hostile {field}", "answer" if empty_correlation else "refuse"


def _envelope(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    field = r.pick(["time", "schema_version", "summary"], "envelope field")
    values: dict[str, list[Any]] = {
        "time": ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999+14:00", "1970-01-01T00:00:00-23:59", "now"],
        "schema_version": [-1, 0, 2**64, 999],
        "summary": ["", "x" * 501, *ODD_TEXT[:6]],
    }
    obj[field] = r.pick(values[field], field)
    return f"hostile {field}", "answer"


def _rule_text(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    text = r.pick(["", "   ", "x" * 1_000_000, *ODD_TEXT, *OUTSIDE_PATHS], "rule text")
    obj["payload"]["rules"][0]["text"] = text
    empty_or_huge = not text.strip() or len(text.encode("utf-8", "surrogatepass")) > 10 * 1024
    return "rule text", "refuse" if empty_or_huge else "answer"


def _rule_region(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    obj["payload"]["rules"][0]["region"] = r.pick(UNKNOWN_REGIONS, "region")
    return "unknown region", "refuse"


def _many_rules(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    n = r.draw.draw(st.integers(2, 300), label="rules")
    obj["payload"]["rules"] = [
        {"id": f"r{i}", "text": r.pick(["", *ODD_TEXT[:7], *OUTSIDE_PATHS], "text"), "region": "germany"}
        for i in range(n)
    ]
    return f"{n} odd rules", "answer"


def _candidates_region(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    obj["payload"]["rule"]["region"] = r.pick(UNKNOWN_REGIONS, "region")
    return "candidates of a rule of an unknown region", "refuse"


def _candidates_terms(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    mr = obj["payload"]["candidates"][0]["mr"]
    key = r.pick(["road_type", "manipulation", "expected_behavior"], "term")
    mr[key] = r.pick([*OUTSIDE_PATHS, *ODD_TEXT], "value")
    return f"candidate with a hostile {key}", "answer"


def _crash_summary(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["summary"] = r.pick(["", " \n\t", "x" * (MAX_SUMMARY_BYTES + 1), *ODD_TEXT, *OUTSIDE_PATHS], "summary")
    p["sketch"] = r.pick([None, *OUTSIDE_PATHS], "sketch")
    unusable = not p["summary"].strip() or len(p["summary"].encode("utf-8", "surrogatepass")) > MAX_SUMMARY_BYTES
    if unusable and r.draw.draw(st.booleans(), label="simulate"):
        p["simulate"] = {"variants": 1, "duration_s": 0.5, "render": False}
        p["batch_size"] = 1
    return "crash report", "refuse" if unusable else "answer"


def _scenario_case(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    if r.draw.draw(st.booleans(), label="hostile case id"):
        p["case_id"] = r.pick(["..", "../..", "a/../../b", "x\x00y", "a\\b"], "case id")
    else:
        obj["correlation_id"] = r.pick(["..", "/etc", "../../x", "x\x00y"], "batch")
    p["simulate"] = {"variants": 1, "duration_s": 0.5, "render": False}
    return "scenario to simulate into a folder outside the store", "refuse"


def _scenario_text(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["summary"] = r.pick(ODD_TEXT, "summary")
    p["sketch"] = r.pick(OUTSIDE_PATHS, "sketch")
    p["extractor"] = r.pick(ODD_TEXT, "extractor")
    return "scenario with odd texts, extraction only", "answer"


def _sim_requested(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    return "run into a folder outside the store", "refuse"


def _sim_completed_ref(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["case_ref"] = r.pick(REFUSED_REFS[1:], "case ref")  # an empty one means 'no folder'
    p["total"] = 1
    p["index"] = 0
    return "the last run of a case outside the store", "refuse"


def _sim_completed_counts(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["index"] = r.pick([-1, -(2**31), 2**62], "index")
    p["total"] = r.pick([0, -1, -(2**31)], "total")
    return "negative run counts", "refuse"


def _crash_case_id(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    obj["payload"]["case_id"] = r.pick(["a..b", "a.", ".a", ".", "a b", "x*y", "x>", "c" * 65, "é"], "case id")
    return "a case id no folder or key can hold", "refuse"


def _sim_completed_numbers(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    record = obj["payload"]["record"]
    collision = record["collisions"][0]
    collision["t"] = r.pick([-1e308, 1e308, -1.0, 5e-324], "t")
    collision["speed_a_mps"] = r.pick([-1e308, 1e308, -1.0], "speed")
    record["wall_seconds"] = r.pick([1e308, -1e308, -1.0], "wall")
    return "speeds and times at the edges", "answer"


def _verdict_ref(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["error"] = "NotACrashReportError: fuzz"
    p["case_ref"] = r.pick(REFUSED_REFS[1:], "case ref")
    return "failed case outside the store", "refuse"


def _verdict_counts(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p[r.pick(["runs", "violations"], "count")] = r.pick([-1, -(2**63)], "negative")
    return "negative case counts", "refuse"


def _tl_dataset(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["dataset"] = r.pick([x for x in OUTSIDE_PATHS if x], "dataset")
    p["dataset_ref"] = None  # read from the path
    p["format"] = r.pick([None, "lisa", "coco", "bosch", "yolo", "drivemt", "../../x", "🚗"], "format")
    p["split"] = r.pick([None, "test", *ODD_TEXT[:3]], "split")
    return "dataset outside the data dir", "refuse"


def _tl_dataset_ref(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    obj["payload"]["dataset_ref"] = r.pick([x for x in REFUSED_REFS if x], "dataset ref")
    return "dataset ref outside the store", "refuse"


def _tl_params(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["dataset_ref"] = r.fx.tl_ref
    code = r.pick(["RN", "CC", "SC", "TR", "RT", "FL"], "code")
    p["transforms"] = [code]
    p["params"] = {code: r.draw.draw(st.dictionaries(st.sampled_from(["factor", "angle", "x"]), hostile_values))}
    p["seed"] = r.pick([0, -1, -(2**63), 2**64, 10**100], "seed")
    p["fraction"] = r.pick([5e-324, 0.5, 1.0], "fraction")
    p["split"] = r.pick([None, "test", "nope", *ODD_TEXT[:3]], "split")
    p["format"] = r.pick([None, "drivemt", "coco", "🚗"], "format")
    p["detectors"] = []
    return "small dataset with hostile parameters", "answer"


def _tl_detectors(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    obj["payload"]["request"]["detectors"] = [r.pick(BAD_DETECTORS, "detector")]
    return "unloadable detector", "refuse"


def _tl_refs(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["request"]["detectors"] = []
    p["out_ref"] = r.pick(REFUSED_REFS, "out ref")
    p["manifest_ref"] = r.pick(REFUSED_REFS, "manifest ref")
    return "augmented set outside the store, no detector", "answer"


def _case_frames(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    key = "cases" if "cases" in obj["payload"] else "case"
    case = obj["payload"]["cases"][0] if key == "cases" else obj["payload"]["case"]
    case["frames"] = [r.pick([*REFUSED_REFS, LONG_NAME, "a/" + LONG_NAME], "frame") for _ in case["ego"]]
    if key == "case":
        obj["payload"]["method"] = "null"
    return "frames outside the store", "refuse" if key == "cases" else "answer"


def _duplicate_cases(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["cases"] = [p["cases"][0]] * r.draw.draw(st.integers(2, 5), label="copies")
    p["batch_size"] = len(p["cases"])
    return "one case id twice in a batch", "refuse"


def _many_cases(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    n = r.draw.draw(st.integers(2, 50), label="cases")
    p["cases"] = [
        {**p["cases"][0], "case_id": f"c{i}", "region": r.pick([None, *UNKNOWN_REGIONS], "region")} for i in range(n)
    ]
    p["batch_size"] = r.pick([n, 1, 10**9], "batch size")
    return f"{n} cases", "answer"


def _case_batch(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["seed"] = r.pick([-1, -(2**63), 2**64, 10**100], "seed")
    p["method"] = r.pick(["automt", "manual", "random", "null", "fixed"], "method")
    p["region"] = r.pick([None, "germany", *UNKNOWN_REGIONS], "region")
    if p["method"] == "fixed":
        p["fixed_mr"] = r.pick([None, *HOSTILE_MRS], "fixed MR")
    p["models"] = [r.pick(BAD_MODEL_SPECS, "model")]
    return "odd seed, region and models", "answer"


def _described_region(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    p = obj["payload"]
    p["method"] = "random"
    p["region"] = r.pick([x for x in UNKNOWN_REGIONS if x], "region")
    return "random MR of an unknown region", "refuse"


def _followup_frames(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    follow = obj["payload"]["followup"]
    which = r.pick(["source", "case"], "which")
    follow[which]["frames"] = [r.pick([*REFUSED_REFS, LONG_NAME], "frame") for _ in follow[which]["ego"]]
    return f"follow-up whose {which} frames are outside the store", "refuse"


def _validated_models(r: Round, obj: dict[str, Any]) -> tuple[str, str]:
    obj["payload"]["models"] = [r.pick(BAD_MODEL_SPECS, "model") for _ in range(r.draw.draw(st.integers(1, 3)))]
    return "driving models outside the store", "refuse"


RECIPES: dict[str, list[Recipe]] = {
    "rules.submitted": [_rule_text, _rule_region, _many_rules],
    "mrs.candidates": [_candidates_region, _candidates_terms],
    "crashes.submitted": [_crash_summary, _crash_case_id],
    "scenarios.extracted": [_scenario_case, _scenario_text],
    "sim.requested": [_sim_requested, _crash_case_id],
    "sim.completed": [_sim_completed_ref, _sim_completed_counts, _sim_completed_numbers, _crash_case_id],
    "crashes.verdict": [_verdict_ref, _verdict_counts],
    "tl.datasets.submitted": [_tl_dataset, _tl_dataset_ref, _tl_params],
    "tl.augmented": [_tl_detectors, _tl_refs],
    "cases.submitted": [_case_frames, _case_batch, _duplicate_cases, _many_cases],
    "cases.described": [_described_region, _case_frames, _case_batch],
    "followups.generated": [_followup_frames],
    "followups.validated": [_validated_models],
}


# -- the daemon ----------------------------------------------------------------------------------------------------
@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    async with Daemon(config, embedder=embedder) as d:
        yield d


@pytest.fixture
def stored(config: DrivemtConfig) -> tuple[DrivingCase, str]:
    """A small synthetic driving case and a small traffic-light dataset, in the daemon's store."""
    from tools.tl.synth import synth_tl

    store = LocalArtifactStore(config.runs_dir)
    spec = SceneSpec(seed=3, road="straight", time="day", weather="clear", cruise_kmh=40.0)
    case = write_case(store, "fuzz-real", render_case(spec, width=96, height=48), prefix="fuzz", region="germany")
    synth_tl(store.pull("fuzz/tl"), n_train=0, n_val=0, n_test=2, width=96, height=54, seed=1)
    return case, "fuzz/tl"


class Watch:
    """Everything the round's checks read: errors, dead letters and results, by input."""

    def __init__(self, daemon: Daemon) -> None:
        assert daemon.bus is not None
        self.daemon = daemon
        self.bus = daemon.bus
        self.rec = Recorder()
        self.consumers: dict[str, set[str]] = {}
        self._dead: dict[str, list[DeadLettered]] = {}
        self._seen = 0
        for r in daemon.runners:
            for subject in r.consumed_subjects():
                self.consumers.setdefault(subject, set()).add(r.agent.name)

    async def start(self) -> Watch:
        await self.rec.watch(self.bus, f"{self.bus.subjects.namespace}.>")
        return self

    async def stop(self) -> None:
        for sub in self.rec._subs:
            await sub.unsubscribe()  # type: ignore[attr-defined]

    def dead(self, item: Item) -> list[DeadLettered]:
        """The item's dead letters (found by the tag in the producer of the bytes they carry)."""
        for e in self.rec.events[self._seen :]:
            if isinstance(e, DeadLettered):
                for tag in set(TAG.findall(e.payload.data)):
                    self._dead.setdefault(tag, []).append(e)
        self._seen = len(self.rec.events)
        return self._dead.get(item.tag, [])

    def errors(self, item: Item) -> list[ErrorReported]:
        if item.event_id is None:
            return []
        return [
            e for e in self.rec.events if isinstance(e, ErrorReported) and e.payload.input_event_id == item.event_id
        ]

    async def handled(self, consumer: str, item: Item) -> bool:
        if item.event_id is None:
            return False
        try:
            return await self.bus.was_handled(consumer, item.event_id)
        except Exception:  # an id no key can hold
            return False

    async def settled(self, item: Item) -> bool:
        """Whether every consumer of the item's subject is done with it: a dead letter, or marked handled (what
        ended as an error event is marked handled too)."""
        dead = {e.payload.consumer for e in self.dead(item)}
        for consumer in self.consumers[item.subject] - dead:
            if not await self.handled(consumer, item):
                return False
        return True

    async def queues_empty(self) -> bool:
        names = self.bus.subjects.streams
        for stream in (names.inputs, names.results):
            for ci in await self.bus.js.consumers_info(stream):
                if ci.num_pending or ci.num_ack_pending or ci.num_redelivered:
                    return False
        return True


async def _wait(predicate: Callable[[], Any], timeout: float, what: Callable[[], str]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what()}")
        await asyncio.sleep(0.1)


FUZZ = settings(
    max_examples=int(os.environ.get("DRIVEMT_FUZZ_ROUNDS", "20")),  # more for a longer hunt
    deadline=None,
    phases=[Phase.generate],  # no shrinking: a failing round prints its messages, and each round costs seconds
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.slow
@FUZZ
@given(draw=st.data())
async def test_every_agent_refuses_hostile_input_and_goes_on(
    daemon: Daemon, stored: tuple[DrivingCase, str], draw: st.DataObject
) -> None:
    """One round: for every consumed subject a message the decoder refuses and a hostile one, with valid inputs."""
    loop = asyncio.get_running_loop()
    unretrieved: list[object] = []
    loop.set_exception_handler(lambda _loop, ctx: unretrieved.append(ctx))
    watch = await Watch(daemon).start()
    try:
        with capture_logs() as logs:
            await _round(daemon, Round(draw, _fixtures(daemon, stored)), watch, logs)
    finally:
        loop.set_exception_handler(None)
        await watch.stop()
    assert not unretrieved, unretrieved


def _fixtures(daemon: Daemon, stored: tuple[DrivingCase, str]) -> Fixtures:
    assert daemon.bus is not None
    models = {t: registry.get(t) for t in SAMPLES}
    subjects = {t: str(getattr(daemon.bus.subjects, m.subject_name)) for t, m in models.items() if m and m.subject_name}
    consumed: dict[str, set[str]] = {}
    for runner in daemon.runners:
        for subject in runner.consumed_subjects():
            consumed.setdefault(subject, set()).update(runner.agent.consumed_types())
    return Fixtures(subjects, consumed, *stored)


async def _round(daemon: Daemon, r: Round, watch: Watch, logs: list[MutableMapping[str, Any]]) -> None:
    assert daemon.bus is not None
    bus = daemon.bus
    types = sorted(t for t, s in r.fx.subjects.items() if s in r.fx.consumed)
    assert len(types) >= 13, types
    good_rule = rule("Slow down in dense fog.", f"good-{uuid.uuid4().hex[:8]}")
    for type_ in types:
        r.hostile(type_)
        if type_ == "rules.submitted":  # valid inputs right behind a hostile one: likely in its batch
            good = r.base(type_)
            good["payload"]["rules"] = [json.loads(good_rule.model_dump_json())]
            r.add(type_, good, "valid", "valid")
        if type_ == "mrs.candidates":
            for _ in range(3):
                r.add(type_, r.base(type_), "valid", "valid")
        r.refused(type_)
    for item in r.items:
        await bus.publish_raw(item.subject, item.data, headers={"Nats-Msg-Id": item.tag})

    waiting: list[Item] = []

    async def all_settled() -> bool:
        waiting[:] = [i for i in r.items if not await watch.settled(i)]
        return not waiting

    await _wait(all_settled, ROUND_TIMEOUT_S, lambda: f"every message to be settled; not yet: {waiting}")
    await _wait(watch.queues_empty, ROUND_TIMEOUT_S, lambda: "every work queue to empty (what the inputs caused)")

    problems: list[str] = []
    for item in r.items:
        dead = watch.dead(item)
        if item.expect == "dead" and {d.payload.consumer for d in dead} != watch.consumers[item.subject]:
            problems.append(f"{item!r} ({item.what}) is not a dead letter of {watch.consumers[item.subject]}")
        if item.expect == "refuse" and not (dead or watch.errors(item)):
            problems.append(f"{item!r} ({item.what}) ended without an error event or a dead letter")
        if item.expect == "valid" and (dead or watch.errors(item)):
            problems.append(f"{item!r}, a valid input, was refused")
    for e in watch.rec.of(DeadLettered):  # the inputs' and whatever they caused downstream
        if e.payload.deliveries > 1:  # type: ignore[attr-defined]
            problems.append(f"dead letter after retries at {e.payload.consumer}: {e.payload.reason[:300]}")  # type: ignore[attr-defined]
    for entry in logs:  # a hostile input is refused at once: no handler failure waiting for a retry
        if entry["event"] in RETRY_LOGS:
            problems.append(f"{entry.get('agent')} retries: {entry['event']}: {str(entry.get('error'))[:300]}")
    assert not problems, "\n".join(problems)

    # The valid rule and candidates sent among the hostile ones get their results.
    accepted = watch.rec.of(MRAccepted)
    assert any(e.payload.rule.id == good_rule.id for e in accepted), f"the valid rule {good_rule.id} got no MR"  # type: ignore[attr-defined]
    for item in r.items:
        if item.expect == "valid" and item.subject.endswith(".mrs.candidates"):
            results = [e for e in watch.rec.events if e.causation_id == item.event_id]
            assert len([e for e in results if isinstance(e, MRAccepted | MRRejected)]) == 1, (item, results)

    # Every agent is alive: a fresh 'ready' heartbeat from each, its consumer loop running.
    since = datetime.now(UTC)
    names = {runner.agent.name for runner in daemon.runners}

    async def fresh_heartbeats() -> bool:
        agents = (await collect_status(bus))["agents"]
        return {a["agent"] for a in agents if a["status"] == "ready" and a["time"] >= since} >= names

    await _wait(fresh_heartbeats, 10, lambda: "a fresh 'ready' heartbeat from every agent")
    for runner in daemon.runners:
        assert runner._status == "ready", runner.agent.name
        assert runner._loop_task is not None and not runner._loop_task.done(), runner.agent.name


async def test_a_hostile_event_fails_alone_in_a_batch(daemon: Daemon) -> None:
    """Agents that handle a fetched batch at once (M-Agent, Validator) fail the hostile input alone: its batch-mates
    get their results."""
    by_name = {r.agent.name: r.agent for r in daemon.runners}

    def event(type_: str, **payload: Any) -> Event:
        obj = json.loads(SAMPLES[type_].model_dump_json())
        obj["event_id"] = obj["correlation_id"] = str(uuid.uuid4())
        for path, value in payload.items():
            _set(obj["payload"], tuple(int(k) if k.isdigit() else k for k in path.split("__")), value)
        return decode_event(json.dumps(obj).encode())

    for agent, type_, hostile in (
        ("validator", "mrs.candidates", {"rule__region": "atlantis"}),
        ("m-agent", "rules.submitted", {"rules__0__region": "atlantis"}),
        ("m-agent", "rules.submitted", {"rules__0__text": ""}),
    ):
        batch = [event(type_), event(type_, **hostile), event(type_)]
        outcomes = await by_name[agent].handle_batch(batch)
        assert [o.error is None for o in outcomes[::2]] == [True, True], (agent, hostile, outcomes)
        assert all(o.events and not isinstance(o.events[0], ErrorReported) for o in outcomes[::2]), (agent, outcomes)
        bad = outcomes[1]  # its error, or (the M-Agent's per-rule checks) an error event among its outputs
        assert bad.error is not None or any(isinstance(e, ErrorReported) for e in bad.events), (agent, hostile)


async def test_a_poison_too_large_to_carry_whole_is_still_dead_lettered(daemon: Daemon) -> None:
    """A refused message whose dead letter could not carry it whole (its JSON escapes double its size past the
    server's limit) still ends as a dead letter, with as much of it as fits and the reason."""
    assert daemon.bus is not None
    bus = daemon.bus
    watch = await Watch(daemon).start()
    tag = uuid.uuid4().hex
    obj = json.loads(SAMPLES["rules.submitted"].model_dump_json())
    obj["producer"] = f"fuzz-{tag}"
    obj["payload"]["rules"][0]["text"] = '"' * 3_000_000  # 6 MB as JSON, 12 MB inside a dead letter
    obj["payload"]["rules"][0]["x"] = BAD_NUMBER
    data = _dumps(obj, "NaN")
    item = Item("huge poison", bus.subjects.rules_submitted, data, tag, None, "dead")
    await bus.publish_raw(item.subject, item.data)

    async def dead_lettered() -> bool:
        return bool(watch.dead(item))

    try:
        await _wait(dead_lettered, 30, lambda: "the dead letter of a 6 MB poison")
    finally:
        await watch.stop()
    (dead,) = watch.dead(item)
    assert dead.payload.deliveries == 1 and "NaN" in dead.payload.reason
    assert dead.payload.truncated and dead.payload.size == len(data) and len(dead.payload.data) < len(data)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("event_id", "a.b."),  # a key-value key cannot end with a dot: the handled mark could never be written
        ("event_id", "x y"),
        ("event_id", "\r\nX-Injected: 1"),  # would travel as the Nats-Msg-Id header
        ("correlation_id", "../../etc"),  # a batch's folder in the store
        ("correlation_id", "*"),
        ("causation_id", "a" * 300),
        ("payload.rules.0.text", "\ud800"),  # valid JSON, but no agent could encode an event carrying it
    ],
)
def test_the_decoder_refuses_what_no_agent_could_carry_on(field: str, value: str) -> None:
    obj = json.loads(SAMPLES["rules.submitted"].model_dump_json())
    path = tuple(int(k) if k.isdigit() else k for k in field.split("."))
    _set(obj, path, value)
    assert _decoded(json.dumps(obj).encode()) is None


def test_the_store_refuses_a_name_too_long_for_any_file_system() -> None:
    """A part over 255 bytes (no file system holds that name) is bad input at once, not an OSError retried."""
    with pytest.raises(BadArtifactRefError):
        check_ref("a/" + LONG_NAME + "/b")
