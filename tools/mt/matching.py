"""The F-Agent's choice of an MR for a described case: AutoMT's filters, and the manual, random and null methods.

AutoMT keeps the MRs whose road type fits the case (or "any roads") and whose behaviour fits the ego state,
then takes the least used (an execution count kept in memory). drivemt's filters, each with its reason:

* the MR's region is the case's;
* its road type is "any roads" or the case's canonical road type;
* no "slow down" or "keep current" for a stationary ego (< 1 km/h);
* turns only where the road allows them (intersections, roundabouts, alleys, ramps);
* a speed-limit MR only when the ego is faster than the limit; an MR that names no number gets a limit drawn
  below the ego's speed, and it is recorded;
* no "replaces" MR whose weather or light the description already shows (fog on a foggy case, night on a
  night case): its follow-up would not differ from the source (beyond AutoMT).

Among the MRs that pass, the store's owner picks the lowest execution count, ties by MiniLM cosine to the
case's representation, then by id, and counts the use in the same step (``mrs.claim``).
"""

from __future__ import annotations

import functools
import json
import random
import re
from dataclasses import dataclass
from importlib import resources

from tools.common.text import normalise_phrase
from tools.mt.models import CaseDescription, PlannedMR
from tools.mt.roads import ANY_ROADS, canonical_road_type, road_types_compatible
from tools.mt.terms import recipe_for_phrase
from tools.rules.models import MRFields, StoredMR, format_gherkin

__all__ = [
    "TURNING_ROADS",
    "ManualMR",
    "applicable",
    "manual_mrs",
    "plan_from_fields",
    "random_fields",
    "representation",
    "speed_limit_of",
]

TURNING_ROADS = frozenset({"intersection", "roundabout", "alleys", "on-ramp", "off-ramp"})
"""Canonical road types on which a turn is possible."""
_STATIONARY_KMH = 1.0


def speed_limit_of(manipulation: str) -> float | None:
    """The number a speed-limit manipulation names (km/h or mph -> km/h), or None when it is no limit sign."""
    text = manipulation.lower()
    if not re.search(r"speed limit|speed sign|km/h zone|zone sign|mph|km/h", text):
        return None
    m = re.search(r"(\d{1,3})\s*(km/h|kmh|kph|mph)?", text)
    if not m:
        return float("nan")  # a limit sign without a number
    value = float(m.group(1))
    return value * 1.609 if m.group(2) == "mph" else value


def applicable(mr: MRFields, region: str | None, mr_region: str | None, desc: CaseDescription) -> tuple[bool, str]:
    """Whether an MR fits a described case, and why not."""
    if region and mr_region and mr_region != region:
        return False, f"region {mr_region} is not the case's ({region})"
    if not road_types_compatible(mr.road_type, desc.road_type):
        return False, f"road type {mr.road_type!r} does not fit the case's {desc.road_type!r}"
    behaviour = normalise_phrase(mr.expected_behavior)
    if behaviour in ("slow down", "keep current") and desc.speed_kmh < _STATIONARY_KMH:
        return False, f"'{behaviour}' needs a moving ego ({desc.speed_kmh:.1f} km/h)"
    if behaviour in ("turn left", "turn right") and canonical_road_type(desc.road_type) not in TURNING_ROADS:
        return False, f"'{behaviour}' needs a road that allows turns (the case's is {desc.road_type})"
    limit = speed_limit_of(mr.manipulation)
    if limit is not None and limit == limit and desc.speed_kmh <= limit:
        return False, f"a {limit:.0f} km/h limit while the ego drives {desc.speed_kmh:.0f} km/h"
    already = _already_there(mr, desc)
    if already:
        return False, f"the case already shows {already}"
    return True, "fits"


def _already_there(mr: MRFields, desc: CaseDescription) -> str | None:
    """A "replaces" MR whose weather or light the described case already has (its follow-up would not differ)."""
    if mr.verb != "replaces":
        return None
    recipe = recipe_for_phrase(mr.manipulation)
    if recipe is None or recipe.synth is None:
        return None
    op, kind = recipe.synth[0], recipe.synth[1]
    if op == "weather" and desc.weather == kind:
        return kind
    if op == "time" and (desc.time == kind or (kind == "dusk" and desc.time == "night")):
        return "night" if desc.time == "night" else kind
    return None


def representation(desc: CaseDescription) -> str:
    """The case's representation as text, for similarity with MRs (AutoMT's JSON keys)."""
    return json.dumps(
        {
            "Time": desc.time,
            "Weather": desc.weather,
            "RoadType": desc.road_type,
            "Objects": desc.objects,
            "EgoVehicle": {"Speed": round(desc.speed_kmh, 1), "Steering": round(desc.steering_rad, 3)},
        }
    )


def plan_from_fields(
    method: str,
    fields: MRFields,
    *,
    term: str,
    desc: CaseDescription,
    rng: random.Random,
    mr_id: str | None = None,
    gherkin: str | None = None,
) -> PlannedMR:
    """A planned MR; a speed-limit MR without a number gets a limit drawn below the ego's speed."""
    limit = speed_limit_of(fields.manipulation)
    if limit is not None and limit != limit:  # no number named: draw one below the ego
        limit = float(max(10, int(desc.speed_kmh * rng.uniform(0.5, 0.8) // 10 * 10)))
    return PlannedMR(
        method=method,  # type: ignore[arg-type]
        gherkin=gherkin or format_gherkin(fields),
        road_type=fields.road_type,
        verb=fields.verb,
        manipulation=fields.manipulation,
        term=term,
        expected_behavior=normalise_phrase(fields.expected_behavior),
        mr_id=mr_id,
        limit_kmh=limit,
    )


@dataclass(frozen=True)
class ManualMR:
    """One of AutoMT's 9 manual MRs (its ``Baseline.py``), packaged in ``tools/data/manual_mrs.jsonl``."""

    id: str
    fields: MRFields
    gherkin: str


@functools.cache
def manual_mrs() -> tuple[ManualMR, ...]:
    """AutoMT's 9 manual MRs."""
    text = resources.files("tools.data").joinpath("manual_mrs.jsonl").read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            fields = MRFields(
                road_type=row["road_type"],
                verb=row["verb"],
                manipulation=row["manipulation"],
                expected_behavior=row["expected_behavior"],
            )
            out.append(ManualMR(row["id"], fields, row["mr"]))
    return tuple(out)


def random_fields(vocab: object, desc: CaseDescription, rng: random.Random) -> tuple[MRFields, str]:
    """The ``random`` method (an ablation): the case's road type, a manipulation and a behaviour drawn uniformly."""
    from tools.rules.ontology import BEHAVIORS

    terms = list(vocab.manipulations)  # type: ignore[attr-defined]
    term = rng.choice(terms)
    road = desc.road_type if desc.road_type != "unknown" else ANY_ROADS
    fields = MRFields(road_type=road, verb=term.verb, manipulation=term.text, expected_behavior=rng.choice(BEHAVIORS))
    return fields, term.normalised


def stored_term(mr: StoredMR) -> str:
    """The canonical manipulation term of a stored MR (from its canonical key)."""
    parts = mr.canonical_key.split("|")
    return parts[2] if len(parts) == 4 else normalise_phrase(mr.fields.manipulation)
