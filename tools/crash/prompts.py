"""Prompts of the LLM crash extractor, after SAFE's Algorithm 1 (meta message, self-validation, template, DSL).

The wording is ours; the structure follows SAFE: the model first states a *meta message* (road type,
vehicles, each one's driving direction) from the summary and the sketch, which is checked and asked again
once when it does not fit; the template of that road type (SAFE's knowledge base, drivemt's
``kb_templates``) then grounds the second prompt, which asks for the scenario DSL field by field with every
allowed value named, and the answer is checked and asked again once more. Both prompts ask the model to
reason step by step (SAFE's Chain-of-Thought) into a ``reasoning`` field before the answer fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from tools.crash.models import ACTIONS, BODY_TYPES, ROAD_TYPES, Time, Weather
from tools.crash.templates import ScenarioTemplate

__all__ = [
    "CRASH_EXTRACTOR_SYSTEM",
    "dsl_retry",
    "dsl_task",
    "meta_retry",
    "meta_task",
]

CRASH_EXTRACTOR_SYSTEM = """You are an expert in crash reconstruction for testing autonomous driving systems. You read \
NHTSA crash reports (CIREN/NASS): a narrative summary and, when one is given, a scene sketch in which the vehicles are \
drawn as small labelled rectangles (V1, V2 ...) with arrows for their paths. You turn one report into a scenario in a \
small domain-specific language (DSL) that a driving simulator builds. Work in the steps you are asked for, use only the \
values the DSL allows, spelled exactly as listed, and take every fact from the report: where it is silent, use the \
defaults you are given instead of inventing details."""

_ROAD_TYPE_HELP = """\
   - Straight: a road segment without a junction; the vehicles travel along one road, in the same or opposite \
directions (a driveway or parking-lot exit beside the road still counts as Straight).
   - Curve: a bend in the road; a vehicle runs wide or crosses the centre line in the curve.
   - Intersection: two roads crossing, four legs.
   - T-intersection: a road ending at a through road, three legs.
   - Merge: an entrance ramp (on-ramp) joining a freeway or highway."""


def _sketch_line(has_sketch: bool) -> str:
    if has_sketch:
        return (
            "The scene sketch is attached. Use it for the road layout and the vehicles' paths; the vehicles drawn in "
            "it are the V1, V2 ... of the summary (leave them out when you judge the shape of the road)."
        )
    return "There is no sketch: work from the summary alone."


def meta_task(case_id: str, summary: str, *, has_sketch: bool) -> str:
    """Step 1 of SAFE's Algorithm 1: the meta message (road type, number of vehicles, driving directions)."""
    return f"""Crash report {case_id}. {_sketch_line(has_sketch)}

Summary:
\"\"\"{summary}\"\"\"

Step 1 - the meta message. Think step by step, then answer with the structured fields:
1. road_type, one of {", ".join(ROAD_TYPES)}:
{_ROAD_TYPE_HELP}
2. vehicles: every vehicle the summary numbers (V1, V2 ...), none left out and none added; vehicle_count is how many.
3. For each vehicle its driving direction before the crash: W2E (travelling east), E2W (travelling west), S2N \
(travelling north), N2S (travelling south); on a Merge road "Main road" or "On-ramp"; "Not mentioned" when neither \
the summary nor the sketch tells.
Check: vehicles on crossing roads (one east-west, one north-south) meet at a junction, not on a Straight road.
Put your short reasoning (the road features and the direction words you relied on) in `reasoning`."""


def meta_retry(problems: Sequence[str]) -> str:
    """Self-validation of the meta message failed: ask once more, with the problems stated."""
    listed = "\n".join(f"- {p}" for p in problems)
    return f"""Your meta message has these problems:
{listed}

Read the summary (and the sketch) again and answer the meta message once more with the problems fixed. If you are \
sure a point was right, keep it and say why in `reasoning`."""


def _defaults(template: ScenarioTemplate) -> str:
    net = template.road_network
    if net.road_type in {"T-intersection", "Merge"}:
        counts = (
            f"main road {net.main_lanes} lanes, {net.main_ways}-way; branch road {net.branch_lanes} lanes, "
            f"{net.branch_ways}-way"
        )
    else:
        counts = f"{net.lanes} lanes, {net.ways}-way"
    positions = ", ".join(f"{v}: {p}" for v, p in template.default_positions.items())
    return f"{counts}; initial positions {positions}"


def dsl_task(
    road_type: str,
    vehicles: Sequence[tuple[str, str]],
    template: ScenarioTemplate,
) -> str:
    """Steps 3-5 of SAFE's Algorithm 1: the prompt generated from the confirmed meta message and the road type's template.

    Args:
        road_type: The confirmed road type.
        vehicles: ``(id, direction)`` of each vehicle, as the meta message gave them.
        template: The template of that road type (``kb_templates``, or the packaged one).
    """
    meta = "\n".join(f"  - {v}: {d}" for v, d in vehicles)
    compass = "W2E (from the west, travelling east), E2W, S2N, N2S"
    positions = '"Main road" or "On-ramp"' if road_type == "Merge" else compass
    return f"""Step 2 - the scenario DSL. The meta message is confirmed:
- road type: {road_type}
- vehicles ({len(vehicles)}) and their driving directions:
{meta}

Template for a {road_type} road (from the template knowledge base):
- what crashes on it look like: {template.description}
- defaults where the report is silent: {_defaults(template)}
- what to fill in: {template.guidance or "the road network, the actors and the environment"}

Allowed values (use exactly these spellings):
- road_network.road_type: {road_type} (as confirmed)
- actors[].body_type: {", ".join(BODY_TYPES)}
- actors[].initial_position on this road: {positions}
- actors[].actions: {", ".join(ACTIONS)}
- env.time: {", ".join(get_args(Time))}
- env.weather: {", ".join(get_args(Weather))}

Work step by step, putting your reasoning in `reasoning`:
1. Road network. For Straight, Curve and Intersection roads give `lanes` (total, all directions, counting a centre \
turn lane) and `ways` (1 = one-way, 2 = two-way) of the road V1 travels on (at an Intersection, the most lanes and \
the most ways of the roads that meet there); for T-intersection and Merge roads give \
`main_lanes`/`main_ways` and `branch_lanes`/`branch_ways` (the stem road, or the on-ramp) and, for a T-intersection, \
`stem_direction` (N, S, E or W: the side of the main road the stem leaves to). `centre_turn_lane` is true when the \
report names a centre (left) turn lane. Leave a count null when neither the summary nor the sketch gives it: the \
template's default is used.
2. Actors: exactly the vehicles of the meta message, with the same ids. `body_type` from the body the report names, \
else from the make and model (a Jeep Grand Cherokee is an SUV, a Ford F-150 a Pickup, a Honda Odyssey a Minivan, a \
tractor-trailer a Semi Truck); `description` is the year, make and model as the report names them; \
`initial_position` is the vehicle's direction from the meta message (on a Merge road, Main road or On-ramp; where the meta message says Not mentioned, the template's default position); `lane` \
counts from 1 = the rightmost lane of its direction (null when unknown); `actions` are what it did before the impact, \
in order ("Move forward" when it simply drove on); `speed_limit_mph` is the posted limit when the report gives one, \
else null.
3. Environment: `time` (Daytime for daylight, Nighttime for dark; Not mentioned when the report does not say) and \
`weather` (Clear when the report says clear; Not mentioned when it does not say).
4. Collisions: the pairs of vehicles that struck each other, first impact first (`first`, `second`).
5. Check the answer against the summary (and the sketch): every vehicle present, the directions as confirmed, values \
spelled as listed. Note anything you had to assume in `assumptions` (short phrases)."""


def dsl_retry(problems: Sequence[str]) -> str:
    """Self-validation of the scenario failed: ask once more, with the errors stated."""
    listed = "\n".join(f"- {p}" for p in problems)
    return f"""Your scenario does not fit the DSL or the confirmed meta message:
{listed}

Answer the whole scenario once more with these problems fixed, keeping what was right."""
