"""The offline crash extractor: rule-based reading of a crash narrative into the scenario DSL.

It follows SAFE's Algorithm 1 with deterministic means (no language model; results name it
``offline:crash-rules``):

1. **Meta message**: road type, the vehicles (V1, V2 …) and each one's travel direction.
2. **Self-validation** of the meta message, with one retry: vehicles on crossing axes on a road
   read as straight mean a junction was missed, so the road type is re-read as an intersection.
3. **Template** for that road type (``kb_templates``; the packaged ones by default): its defaults
   fill what the narrative leaves out.
4. **Extraction**: lanes and ways of each road described, each vehicle's body type (from the body
   words, else from a lexicon of common makes and models), lane, actions and speed, time and
   weather, and which vehicles struck which.
5. **Self-validation** of the scenario (the DSL's own checks plus positions the road type has), then
   the encoder returns a :class:`tools.crash.models.Scenario`.

All knowledge sits in ``tools/data/crash_lexicon.yaml``: general crash-narrative vocabulary, nothing
specific to one case.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

import yaml

from tools.crash.files import MAX_SUMMARY_BYTES, CrashReport, NotACrashReportError
from tools.crash.models import MAX_ACTORS, Actor, Env, RoadNetwork, Scenario, ScenarioError
from tools.crash.templates import ScenarioTemplate, packaged_templates

__all__ = [
    "OFFLINE_CRASH_EXTRACTOR",
    "OfflineCrashExtractor",
]

OFFLINE_CRASH_EXTRACTOR = "offline:crash-rules"


@cache
def _lexicon() -> dict[str, Any]:
    text = resources.files("tools.data").joinpath("crash_lexicon.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


# Light that only lamps give: streetlights (or luminaires, or a road's overhead lights, "the overhead freeway lights";
# not the overhead signals) said to be on, with words between ("the overhead streetlights along the arterial were
# illuminated"), or headlights as the only light ("the only illumination came from the headlights").
_LIT_BY_LAMPS = re.compile(
    r"\b(?:street\s?(?:lights?|lamps?)|luminaires?|"
    r"overhead\s+(?:(?:freeway|highway|roadway|road|street|interstate|expressway|parkway)\s+)?(?:lights|lamps))\b"
    r"[^.]{0,60}?\b(?:were|was)\s+(?:illuminated|on|lit|operating)\b"
    r"|\b(?:only|sole)\s+(?:illumination|light|lighting)\b[^.]{0,50}?\bheadlights?\b"
    r"|\blit\s+only\s+by\b[^.]{0,20}?\bheadlights?\b",
    re.IGNORECASE,
)
# What a narrative names only in the dark, used when it names no light condition and no clock: a road without lights
# ("there were no street lights", "the highway was unlighted"), headlamp beams seen ("snowflakes streaming through the
# beams of her headlamps"), or drivers with their own lamps on ("traveling with headlamps on") -- the last not in
# rain, snow or fog, when drivers use them by day too.
# (the places a narrative calls unlit, as the subject of "was not lighted" or after "unlighted")
_UNLIT_PLACES = "road|roadway|highway|street|intersection|area|junction|interchange|freeway|section|stretch|location"
_UNLIT_ROAD = re.compile(
    r"\bno\s+(?:street\s?(?:lights?|lamps?|lighting)|overhead\s+(?:lights|lighting))\b"
    rf"|\b(?:{_UNLIT_PLACES})\s+(?:is|was|were|are)\s+(?:not\s+lighted|not\s+lit|unlighted|unlit)\b"
    rf"|\b(?:unlighted|unlit)\s+(?:{_UNLIT_PLACES})\b",
    re.IGNORECASE,
)
_LAMP_BEAMS = re.compile(r"\bbeams\s+of\s+(?:his|her|their|the|its)\s+head(?:lights|lamps)\b", re.IGNORECASE)
_OWN_LAMPS = re.compile(
    r"\b(?:head(?:lights|lamps)|high[- ]beams)\s+(?:(?:were|was)\s+)?(?:on|lit)\b"
    r"(?!\s+(?:V\d|the|a|an|his|her|their|its|both|each)\b)",
    re.IGNORECASE,
)
# "did not have her headlights on", "without headlights on": no lamps lit.
_LAMPS_DENIED = re.compile(r"\b(?:not|never|without|no)\b[^.;]{0,24}$", re.IGNORECASE)


def _phrase_re(phrases: list[str]) -> re.Pattern[str]:
    ordered = sorted({str(p).lower() for p in phrases}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(p) for p in ordered) + r")(?![\w-])", re.IGNORECASE)


def _inflected_re(phrases: list[str]) -> re.Pattern[str]:
    """Like :func:`_phrase_re`, but a one-word phrase of four letters or more also matches its inflections
    ("snow" -> snowy, snowing, snowed, snowfall; "drizzle" -> drizzling; "cloud" -> clouds, cloudy)."""
    alternatives = []
    for p in sorted({str(p).lower() for p in phrases}, key=len, reverse=True):
        if re.fullmatch(r"[a-z]{4,}", p):
            stem = p[:-1] if p.endswith("e") else p
            alternatives.append(
                re.escape(stem) + r"(?:e|es|s|y|ing|ed|fall|ier|iest)?"
                if stem != p
                else re.escape(p) + r"(?:s|y|ing|ed|fall|ier|iest)?"
            )
        else:
            alternatives.append(re.escape(p))
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])", re.IGNORECASE)


_SENTENCE = re.compile(r"(?<=[a-z0-9)\]])\s*\.\s+(?=[A-Z(])|\n\s*\n")
_VEHICLE_ID = re.compile(r"\bV(\d{1,2})\b")
_INTRO = re.compile(
    r"\bVehicle\s+(?:#\s*|no\.\s*)?(?:one|two|three|four|five|six|\d+)\s*\(\s*V(\d{1,2})\b[^)]*\)", re.IGNORECASE
)
# "Vehicle 1", "Vehicle #2", "vehicle two", "Veh. 3", "Unit 1": the same vehicles as V1, V2 ... (an intro such as
# "Vehicle one (V1 - case vehicle)" names its V-number itself and is left to _INTRO).
_NUMBERED_VEHICLE = re.compile(
    r"\b(?:vehicle|veh\.|unit)\s*(?:#\s*|no\.\s*|number\s+)?"
    r"(?P<n>\d{1,2}|one|two|three|four|five|six|seven|eight|nine)\b(?![\w-])(?!\s*\(\s*V\d)",
    re.IGNORECASE,
)


# What follows a vehicle's number when an appositive describes it: "V2, a ...", "V1 (case vehicle), a ...".
_APPOSITIVE = re.compile(r"\s*(?:\([^)]*\))?\s*,\s*")
_STRIKE = re.compile(
    r"\b(struck|strike|strikes|striking|impacted|collided|collision with|hit|sideswiped|sideslapped|contacted|rear-ended)\b",
    re.IGNORECASE,
)
# A road that ends at another one ("a residential street that ends at the north-south road", "where the road
# terminated at a five-lane highway", "a road that forms the north leg of a T-intersection") meets it in a T, and
# is its branch. Ramps end in merges, not here.
# Nouns of a road that can end at another (a ramp ends in a merge instead).
_STREET_NOUNS = "road|roadway|street|avenue|route|drive|highway|boulevard|parkway|collector|connector"
# A road named by up to three words before its noun, with or without an article: "the four-lane arterial", "Main
# Street", "a county road". A direction in brackets may follow them, and one more word after it: "a three-lane,
# one-way (westbound) urban arterial". A road's overpass, bridge or tunnel ("ends at the highway overpass") is no road.
_A_ROAD = (
    rf"(?:(?:the|an?)\s+)?(?:[\w,-]+\s+){{0,3}}?(?:\([\w\s-]*\)\s+(?:[\w,-]+\s+)?)?"
    rf"(?:{_STREET_NOUNS}|arterial)\b(?!\s+(?:overpass|underpass|bridge|viaduct|tunnel)\b)"
)
# A street's name abbreviated with its full stop: "Birch Ct.", "Jefferson Rd.".
_STREET_ABBREVIATIONS = "rd|st|ave|blvd|ct|dr|ln|hwy|pkwy|pl|ter"
# A road that runs on before it ends: "runs south into the plaza and terminates at", "curves north and ends at", "runs
# north-south, terminates at".
_RUNS_ON_AND = (
    r"(?:\s+(?:runs|ran|continues|continued|heads|headed|goes|went|curves|curved|bends|bent|comes|came|approaches|"
    r"approached)\s+[\w-]+"
    r"(?:\s+[\w-]+){0,5}?(?:\s+and|,))?"
)
# An exit ramp that ends at a street ("the exit ramp terminates at a four-lane arterial", "the exit ramp from northbound
# Interstate 35 terminates at ...") is a T's branch too.
_ROAD_ENDS = re.compile(
    # "Route 9 ends at", "Birch Ct. terminates at", "the exit ramp from northbound Interstate 35 terminates at"
    rf"\b(?:(?:{_STREET_NOUNS})s?(?:\s+\d+[A-Z]?)?|(?:{_STREET_ABBREVIATIONS})\."
    r"|(?:exit|off)[\s-]ramp(?:\s+(?:from|of)\s+(?:the\s+|an?\s+)?[\w-]+(?:\s+[\w-]+){0,2}?)?)"
    # "Maple Lane, a two-lane residential street, ends at ...", "the ramp runs east and terminates at ..."
    rf",?(?:\s+(?:that|which))?{_RUNS_ON_AND}\s+"
    r"(?:(?:ends|ended|terminates|terminated|dead-ends|dead\s+ends|dead-ended|tees|teed)(?:\s+(?:at|into)\b|(?=[.,;]))"
    r"|(?:forms|formed)\s+the\s+(?:\w+\s+)?(?:leg|stem)\s+of\b)"
    # "Pine Street is a two-lane street. It ends at Main Street": the road of the sentence before
    rf"|(?:^|[.;]\s+)It\s+(?:ends|ended|terminates|terminated|dead-ends)\s+at\s+{_A_ROAD}"
    # A road that goes no farther than the one it meets: "a two-lane road that meets State Highway 12 and goes no
    # farther", "a gravel road that meets Route 9 from the south and does not continue north of it", "a residential
    # street that runs up from the south and stops at Harlan Road".
    rf"|\b(?:{_STREET_NOUNS})s?,?\s+(?:that|which)\s+[^.;]{{0,60}}?\b(?:(?:goes|went|runs|ran|continues|continued)\s+"
    r"no\s+(?:farther|further)|(?:does|did)\s+not\s+continue|and\s+(?:stops|stopped)\s+at)\b",
    re.IGNORECASE,
)
# A sentence about a vehicle's own road ("V1's road ended at the intersection", "V1's roadway, a residential street,
# ended at ...").
_OWN_ROAD = re.compile(rf"\s*(?:the\s+)?V(\d{{1,2}})['\u2019]s\s+(?:{_STREET_NOUNS})\b", re.IGNORECASE)
# The last linking word before a road's noun says whose road it is: "traveling on a two-lane road", "in the northbound
# lane of a four-lane highway", "along a rural road" put the vehicle on it; "at its intersection with a four-lane
# road" and "approaching a two-lane road" name another.
_LINK = re.compile(
    r"\b(?:on|along|onto|of|with|at|and|or|to|toward|towards|approaching|into|in|near|from|past|crossing|meets?|joins?)\b",
    re.IGNORECASE,
)
# A road whose own clause says it "formed a T-intersection with" another ("a one-way road that widened to two lanes and
# formed a T-intersection with a two-way state route"): where the lane counts do not tell, it is the T's stem.
_FORMS_A_T = re.compile(
    r"\b(?:that|which)\s+[^.;]{0,120}?\b(?:forms|formed)\s+(?:a|the)\s+(?:three-leg\s+|3-leg\s+)?"
    r"T[\s-]?(?:intersection|junction)\s+with\b",
    re.IGNORECASE,
)
_ON_THE_ROAD = re.compile(r"\b(?:on|along|(?:lanes?|shoulder|side)\s+of)$", re.IGNORECASE)
# "a gravel road approaching its end at a boulevard": the road before "its end" is the branch. So is the road of a
# clause that "... and ends at the avenue" ("Second Street, which carries two lanes, comes in from the west and ends at
# the avenue"), however long the clause.
_END_AT = re.compile(
    r"\bits\s+end\s+at\b"
    # "the access road meets the highway from the east and ends", "a street meets it from the south and ends there"
    r"|\b(?:meets|met|joins|joined)\s+(?:[\w.-]+\s+){0,4}?from\s+the\s+(?:north|south|east|west)\s+and\s+"
    r"(?:ends|ended|terminates|terminated)(?:\s+there)?(?=\s*[.,;])"
    rf"|\band\s+(?:ends|ended|terminates|terminated)\s+at\s+(?:{_A_ROAD}"
    # ... or at a road named by its number: "and ends at U.S. 131", "... at State Route 9", "... at I-94"
    r"|(?:U\.?S\.?|I|SR|CR|US\s+Route|State\s+Route|State\s+Highway|County\s+Road|Route|Highway|Interstate)"
    r"[\s-]*\d+\b)",
    re.IGNORECASE,
)
# A road that meets another from one side only ("meets the highway from the east only", "joins it from the south
# side only", "there is no west leg", "no street continues north", "no roadway on the south side opposite it"), or
# a four-leg junction with one leg closed ("the eastern leg was closed and barricaded"), makes a T.
_ONE_SIDED = re.compile(
    r"\b(?:from|on)\s+the\s+(?:north|south|east|west)\s+(?:side\s+)?only\b"
    r"|\bno\s+(?:north|south|east|west)\s+leg\b"
    # "Commerce Drive begins at the south side of Highway 12": a road that starts on one side of another
    r"|\b(?:begins|began|starts|started|originates|originated)\s+at\s+the\s+(?:north|south|east|west)(?:ern)?\s+"
    r"(?:side|edge)\s+of\b"
    # "Elm Street is a two-lane street; it does not continue west of Main Street"
    r"|\b(?:does|did)\s+not\s+continue\s+(?:(?:north|south|east|west)(?:ward)?|past|beyond|across)\b"
    # "no street continues", "no street or driveway opposite", "There is no street on the north side of the junction"
    r"|\bno\s+(?:street|road|roadway)(?:\s+or\s+(?:driveway|street|road))?\s+"
    r"(?:continues|opposite|on\s+the\s+(?:north|south|east|west)\s+side)\b"
    r"|\b(?:north|south|east|west)(?:ern)?\s+leg\s+(?:of\s+(?:this|the)\s+(?:junction|intersection)\s+)?"
    r"(?:(?:was|is|had\s+been|has\s+been)\s+(?:\w+ly\s+)?(?:closed|barricaded)\b|(?:did|does)\s+not\s+exist\b"
    # "the south leg is the main driveway into a plaza": a driveway is no leg of a junction
    r"|(?:was|is)\s+(?:(?:the|an?)\s+)?(?:[\w-]+\s+){0,2}?(?:driveway|parking[\s-]lot\s+entrance)\b)"
    # "a two-lane road that joins from the south", "a county road that enters from the west": a branch from one side
    # "a side street that meets the arterial from the west"
    r"|\b(?:that|which)\s+(?:joins|joined|enters|entered|meets|met)(?:\s+[\w,.-]+){0,4}?\s+from\s+the\s+"
    r"(?:north|south|east|west)\b",
    re.IGNORECASE,
)
# A ramp that carries traffic onto the road ("a two-lane ramp carrying traffic ... onto the northbound freeway", "a
# single-lane ramp that joins the right lane") ends in a merge; an exit ramp or off-ramp does not.
_ONTO_RAMP = re.compile(
    r"(?<!exit\s)(?<!off-)(?<!off\s)\bramp\b[^.;]{0,80}?\b(?:onto|joins|joined|joining|merges|merged|merging)\b",
    re.IGNORECASE,
)
_EXIT_RAMP = re.compile(r"\b(?:exit|off)[\s-]ramp\b", re.IGNORECASE)
# "The ramp runs east and terminates at a stop sign on a two-lane state route", after the narrative named an exit ramp:
# the bare "ramp" is that exit ramp, and it ends in a T.
_RAMP_ENDS = re.compile(
    rf"\bramp\b(?:,?\s+(?:that|which))?{_RUNS_ON_AND}\s+(?:ends|ended|terminates|terminated)\s+at\b",
    re.IGNORECASE,
)


# A vehicle "at the end of" an exit ramp waits at its terminal, and an exit ramp that "meets" a road ends there: both
# are a T's branch ("stopped at a stop sign at the end of a one-way exit ramp that meets the arterial").
_EXIT_RAMP_TERMINAL = re.compile(
    r"\bat\s+the\s+end\s+of\s+(?:the|an?)\s+(?:[\w,-]+\s+){0,5}?(?:exit|off)[\s-]ramp\b"
    r"|\b(?:exit|off)[\s-]ramp,?\s+(?:that|which)\s+meets\b",
    re.IGNORECASE,
)


def _ends_in_a_t(text: str) -> bool:
    """Whether a road in ``text`` ends at another or meets it from one side only (a T with no T word)."""
    return bool(
        _ROAD_ENDS.search(text)
        or _END_AT.search(text)
        or _ONE_SIDED.search(text)
        or (_EXIT_RAMP.search(text) and _RAMP_ENDS.search(text))
        or _EXIT_RAMP_TERMINAL.search(text)
    )


# "giving six lanes in all", "a total of five lanes": the road's whole count, over counts given per direction.
_LANES_IN_ALL = re.compile(
    r"\b(?:(?P<n>\w+)\s+lanes\s+(?:in\s+all|in\s+total|total)|a\s+total\s+of\s+(?P<m>\w+)\s+lanes)\b", re.IGNORECASE
)
_ELSEWHERE = re.compile(
    r"\s*,?\s*(?:located\s+)?(?:approximately\s+|approx\.\s+|about\s+|some\s+)?\d+\s*(?:m|meters|metres|feet|ft)\b"
    r"(?!\s+(?:wide|long|across|in\s+(?:width|length|diameter)))",  # a size of the junction itself is no distance
    re.I,
)
# A junction said to be away or absent: "well away from any intersection", "there is no intersection nearby".
_NOT_HERE = re.compile(
    r"\b(?:away\s+from|far\s+from|no|nowhere\s+near)\s+(?:any\s+|an?\s+|the\s+|nearby\s+)?(?:[\w-]+\s+)?$",
    re.IGNORECASE,
)
# A vehicle the impact moved somewhere: "V1 was pushed into the", "was shoved forward into that".
_PUSHED_INTO = re.compile(
    r"\b(?:was|were|got)\s+(?:pushed|shoved|propelled|knocked|forced|redirected|deflected)\s+(?:\w+\s+){0,2}?"
    r"(?:into|through|across|onto)\s+(?:the|that|this)\s+(?:[\w-]+\s+)?$",
    re.IGNORECASE,
)
# A place a numbered vehicle had already gone through ("V1 had just negotiated a curve to the right and was on a
# straight, level section", "V1 was traveling north and had passed through an intersection"): it is behind the vehicle,
# not where the crash is. Only a determiner and plain words stand between the verb and the place: "had completed a
# stop at the intersection", "had negotiated most of the curve" still put the crash there. (One that another road user
# had passed through, "a snowplow had passed through the merge area", is still the crash's place.) A vehicle named by
# its number alone ("Vehicle one had ...") is V1 here already (OfflineCrashExtractor._number_vehicles).
_BEHIND_IT = re.compile(
    r"\b(?:V\d+|vehicle\s+(?:one|two|three|four|\d+)\s*\(V\d+\))(?:\s+|[^.;]{0,80}?\band\s+)had\s+"
    r"(?:just\s+|already\s+)?(?:negotiated|completed|rounded|cleared|come\s+(?:out\s+of|through|around)|"
    r"(?:passed|gone|driven)\s+(?:straight\s+)?through|traversed)\s+"
    r"(?:(?!(?:of|at|in|on|to|into|onto|through|from|with|for|and|or|but|when|while|as)\b)[\w-]+\s+){0,3}$",
    re.IGNORECASE,
)
# A ramp a driver set out to reach ("in order to reach an entrance ramp", "trying to get to the on-ramp", "heading to
# the entrance ramp") is where the vehicle was going, not where the crash is.
_GOAL = re.compile(
    r"\b(?:(?:to|could)\s+(?:reach|get\s+to)|head(?:ing|ed)\s+(?:to|for|toward|towards)|on\s+(?:its|his|her|their)\s+"
    r"way\s+to)\s+(?:the\s+|an?\s+)?(?:[\w-]+\s+){0,2}$",
    re.IGNORECASE,
)
_NEXT = re.compile(r"\b(?:next|upcoming|following|nearest|closest)\s+(?:\w+\s+)?$", re.IGNORECASE)
# A distance and a side before a place: "about 90 m south of a signalized", "300 feet short of the", "250 m east of
# the crash site".
_DISTANCE_FROM = (
    r"\b\d+(?:\.\d+)?\s*(?:m|meters?|metres?|feet|ft|miles?|km)\s+(?:\([^)]{1,15}\)\s+)?"
    r"(?:(?:north|south|east|west)(?:east|west)?\s+(?:of|from)|short\s+of|ahead\s+of|in\s+advance\s+of|beyond|past|"
    r"before)\s+"
)
# A junction a distance away ("approximately 90 m south of a signalized intersection") is somewhere else.
_AWAY = re.compile(_DISTANCE_FROM + r"(?:the\s+|a\s+|an\s+)?(?:[\w'.-]+\s+){0,3}$", re.IGNORECASE)
# A sentence that opens a distance from the crash ("About 250 m east of the crash site the road narrows ...") tells
# of somewhere else.
_FROM_THE_CRASH = re.compile(
    _DISTANCE_FROM + r"the\s+(?:crash|collision|impact)(?:\s+(?:site|location|point|scene|area))?\b", re.IGNORECASE
)
# A crash or a vehicle placed a distance from somewhere ("The crash occurred on Interstate 80 ... approx. 400 m east of
# the point where the acceleration lane of the entrance ramp ends", "V1 was traveling north approx. 0.5 km north of
# its junction with S.R. 14") is not there: the place runs on to the end of its clause.
_PLACED = re.compile(r"\b(?:crash|collision|impact|V\d+)\b", re.IGNORECASE)
_EXTENT = re.compile(r"\b(?:for|over)\s+(?:\w+\s+)?$", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;]|" + _SENTENCE.pattern)  # a clause ends at a comma, a semicolon or its sentence's end
# A junction named again with a definite word ("the intersection", "that junction", "its intersection") after the
# crash was placed away from one is the same junction.
_DEFINITE = re.compile(r"\b(?:the|that|this|its)\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)


# A count said to hold at the junction: "at the junction Route 27 has three lanes", "At the intersection, the avenue
# widens to ...".
_AT_THE_JUNCTION = re.compile(r"\bat\s+(?:the|this|that)\s+(?:junction|intersection)\b", re.IGNORECASE)


# A road whose lane count changes along it: "widens to two lanes", "narrows to a single lane", "drops to one lane".
_CHANGES_TO = re.compile(
    r"\b(?:widens|widened|narrows|narrowed|expands|expanded|tapers|tapered|reduces|reduced|drops|dropped)\s+(?:down\s+)?"
    r"to\s+(?:a\s+)?(?:single\s+)?(?P<n>\w+)(?:[\s-]+lanes?\b|(?<=single)[\s-]+lane\b)",
    re.IGNORECASE,
)


# The crash placed on a part of the road by its count: "the crash occurred on this two-lane section".
_CRASH_ON_SECTION = re.compile(
    r"\b(?:crash|collision)\s+(?:occurred|happened|took\s+place)\s+(?:on|in|along)\s+(?:this|that|the)\s+"
    r"(?P<n>\w+)-lane\s+(?:section|segment|portion|stretch|part)\b",
    re.IGNORECASE,
)


_JUNCTIONS = ("T-intersection", "Intersection", "Merge")
# A vehicle entering the road it merges into: "attempting to enter the right lane of", "merging onto the", "joined".
_MERGES_INTO = re.compile(
    r"\b(?:merg(?:e|es|ed|ing)\s+(?:into|onto|with)|enter(?:s|ed|ing)?|join(?:s|ed|ing)?)\b", re.IGNORECASE
)


def _placed_away(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that name a place the crash is a distance away from: from a distance that places the crash or
    a vehicle (its sentence names one before it) to the end of the clause, or from a distance from the crash to the end
    of the sentence."""
    spans = []
    for m in re.finditer(_DISTANCE_FROM, text, re.IGNORECASE):
        start = _sentence_start(text, m.start())
        if _EXTENT.search(text, max(0, m.start() - 24), m.start()):
            continue  # "For roughly 400 m east of the crash site the road is straight": a stretch up to the crash
        if _FROM_THE_CRASH.match(text, m.start()):
            # "Approximately 120 m north of the crash site, S.R. 9 forms a four-leg intersection ...": the rest of the
            # sentence tells of that place. Where the sentence tells of a vehicle first, what comes before the distance
            # is the place ("V1 had passed through a four-leg intersection, controlled by stop signs, approximately 80 m
            # south of the crash location").
            end = _SENTENCE.search(text, m.end())
            if _PLACED.search(text, start, m.start()):
                # after a vehicle's move, the distance places what came before it, and the rest is the vehicle's
                # again ("... and was negotiating a curve to the left")
                spans.append((start, m.start()))
                continue
        elif _PLACED.search(text, start, m.start()):
            end = _CLAUSE_END.search(text, m.end())
        else:
            continue
        spans.append((m.start(), end.start() if end else len(text)))
    return spans


_COUNT = re.compile(r"\b(?:(?P<lanes>\w+)-lane|(?P<ways>one|two|1|2)-way)\b", re.IGNORECASE)
_ROAD_NOUN = re.compile(
    rf"\b(?:entrance ramp|on-ramp|exit ramp|ramp|{_STREET_NOUNS}|freeway|interstate|expressway|turnpike|arterial|"
    r"thoroughfare)s?\b",
    re.IGNORECASE,
)


def _road_noun_before(text: str, start: int, end: int) -> re.Match[str] | None:
    """The last road noun in ``text[start:end]`` (``start`` clamped at 0), or None."""
    nouns = list(_ROAD_NOUN.finditer(text, max(0, start), end))
    return nouns[-1] if nouns else None


# A lane width between the count and the noun: "two 3.6 m travel lanes", "three 12-foot lanes", with the other unit
# after it in brackets: "two 3.6 m (12 ft) travel lanes".
_WIDTH = (
    r"(?:\d+(?:\.\d+)?[\s-]?(?:m|metres?|meters?|ft|foot|feet)(?:\s*\(\d+(?:\.\d+)?\s*(?:m|ft|feet)\))?"
    r"(?:[\s-]+wide)?\s+)?"
)
# "in each direction", "for each direction", "each way", with a turn lane that each direction adds to its through lanes
# before it ("two through lanes and a separate left-turn lane for each direction").
_PER_DIRECTION = (
    r"(?P<turn>,?\s+(?:and|plus)\s+(?:a|an|one)\s+(?:(?:separate|dedicated|exclusive)\s+)?(?:left|right)?[\s-]*"
    r"turn(?:ing)?\s+lane)?\s+(?:(?:in|for)\s+each\s+direction|each\s+way|in\s+both\s+directions|per\s+direction)\b"
)
# "three lanes in each direction", "two travel lanes each way": half the road's lanes.
_EACH_WAY = re.compile(rf"\b(?P<n>\w+)\s+{_WIDTH}(?:through\s+|travel\s+)?lanes?{_PER_DIRECTION}", re.IGNORECASE)
# "two northbound lanes and two southbound lanes": the road's lanes, one count per direction, the first perhaps
# explained in brackets ("two eastbound lanes (a through lane and a climbing lane) and one westbound lane").
_BRACKETED = r"(?:\s*\([^()]{1,80}\))?"
_BOUND_PAIR = re.compile(
    rf"\b(?P<a>\w+)\s+(?:north|south|east|west)bound\s+(?:travel\s+)?lanes?{_BRACKETED},?\s+and\s+(?P<b>\w+)\s+"
    r"(?:north|south|east|west)bound\s+(?:travel\s+)?lanes?\b",
    re.IGNORECASE,
)
# ... and the same with the direction after the lanes: "one lane northbound and one lane southbound".
_BOUND_PAIR_AFTER = re.compile(
    r"\b(?P<a>\w+)\s+(?:travel\s+|through\s+)?lanes?\s+(?:north|south|east|west)bound,?\s+and\s+(?P<b>\w+)\s+"
    r"(?:travel\s+|through\s+)?lanes?\s+(?:north|south|east|west)bound\b",
    re.IGNORECASE,
)
# A weather word right after a negation ("it was not snowing", "no rain") names no weather, nor does one after a
# word that puts it in the past ("wet from an earlier rain", "the previous night's snow"): the road shows it, the
# sky at the crash need not. Nor is snow on the road ("covered with packed snow") snow falling.
_NEGATED = re.compile(
    r"\b(?:not|no|without|earlier|previous|prior|recent|overnight|preceding|packed|compacted|plowed|covered\s+with)"
    r"\s+(?:[\w']+\s+)?$",
    re.IGNORECASE,
)
# Weather said to be over before the crash: "Rain had ended about an hour earlier", "a thunderstorm had passed
# through", "thunderstorms had crossed the area", "snow had fallen the previous day", "Snow that had fallen the day
# before".
_ENDED = re.compile(
    r"\s+(?:(?:that|which)\s+)?(?:had\s+)?(?:ended|stopped|ceased|cleared|passed|crossed|lifted|let\s+up|tapered\s+off|"
    r"moved\s+(?:out|on|off|through))\b"
    r"|\s+(?:(?:that|which)\s+)?had\s+fallen\b",
    re.IGNORECASE,
)
# "it had rained earlier in the evening": weather said to be earlier was over before the crash.
_EARLIER = re.compile(r"\s+(?:earlier|previously|before\s+the\s+(?:crash|collision))\b", re.IGNORECASE)
# Snow said to lie by the road, left by an earlier storm, is not snow falling: "wet from melting snow", "piles of
# snow", "snow was piled along the shoulders", "snow banks lined the road" -- unless the same words say it fell
# ("wet, melting snow was falling").
_SNOW_LYING_BEFORE = re.compile(
    r"\b(?:melting|melted|piled|piled-up|heaped|(?:piles|banks|mounds|heaps)\s+of)\s+(?:[\w']+\s+)?$", re.IGNORECASE
)
_SNOW_LYING_AFTER = re.compile(
    r"\s+(?:(?:that|which)\s+)?(?:(?:was|were|had\s+been|lay)\s+)?(?:piled|heaped|banked|plowed|lying)\b"
    r"|\s+(?:banks?|piles?|mounds?)\b",
    re.IGNORECASE,
)
# Snow on the road itself: "snow covered", "snow packed", "the pickup slid on the snow". (The weather pattern never
# reads the hyphenated "snow-covered" as snow at all.)
_SNOW_COVERING = re.compile(r"\s+(?:covered|packed)\b", re.IGNORECASE)
# (the snow itself falling, said later in its clause: "covered the road and continued to fall", ", which was still
# falling", "as it kept falling"; not another's fall, "the driver fell asleep", "the temperature was falling")
_FALLS_LATER = re.compile(
    r"[^.;]*?\b(?:and|which|that|as\s+it)\s+(?:was\s+|is\s+)?(?:still\s+)?"
    r"(?:falling|continued\s+(?:to\s+fall|falling)|kept\s+(?:on\s+)?falling|coming\s+down)\b",
    re.IGNORECASE,
)
_ON_THE_SNOW = re.compile(r"\b(?:on\s+the|covered\s+in)\s+(?:[\w']+\s+)?$", re.IGNORECASE)
_FALLING = re.compile(r"\s+(?:(?:was|were)\s+(?:still\s+)?)?(?:falling|fell|coming\s+down)\b", re.IGNORECASE)
# Weather that came after the crash, in the same clause: "snow began falling about fifteen minutes after the crash".
_AFTERWARDS = re.compile(r"^[^.;]*?\b(?:after|following)\s+the\s+(?:crash|collision|impact)\b", re.IGNORECASE)
# A light cue after "since" or after another event's verb says when something began or ended ("snow had been falling
# since before dawn", "the snow had stopped before dawn"), not the light at the crash.
_BEGAN_OR_ENDED = re.compile(
    r"\b(?:since|(?:stopped|ended|ceased|began|started|fallen|fell|cleared|lifted)\s+(?:\w+\s+)?)\s*(?:the\s+)?$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
# A clock time: "at 2130 hours", "at 2315 hrs", "at 03:20 local time", "at 14:45" (a 24-hour clock: a leading zero
# or an hour past noon), "at approximately 9:30 p.m.", "around 7 AM". "At 9:30" alone could be either.
_CLOCK = re.compile(
    r"\b(?:(?P<hhmm>[01]\d|2[0-3]):?(?P<mm>[0-5]\d)\s*(?:hours|hrs|local\s+time)\b"
    r"|(?P<hh24>0\d|1[3-9]|2[0-3]):(?P<mm24>[0-5]\d)(?!\s*[ap]\.?\s?m\b)"
    r"|(?P<h>1[0-2]|0?[1-9])(?::(?P<m>[0-5]\d))?\s*(?P<ampm>[ap])\.?\s?m\b\.?)",
    re.IGNORECASE,
)
# Sentences of a crash's aftermath: where the vehicles came to rest, towing, injuries, air bags.
_AFTERMATH = re.compile(
    r"\b(?:rest|rotated|rotating|pushed|redirected|rolled|overturned|slid|spun|towed|transported|treated|injur\w*|"
    r"air\s*bags?|deployed|driven\s+from|hospital|seat\s*belt|died|killed|fatal\w*|ambulance|struck|impact\w*|"
    r"collided|hit)\b",
    re.IGNORECASE,
)
# A sentence about the vehicles or people ("The driver of V1 said she was on her way to the intersection ...", "V1
# then fled ... near the junction") tells their story, not the scene's road.
_ABOUT_PEOPLE = re.compile(
    r"\bV\d+\b|\b(?:driver|drivers|he|she|they|his|her|their|witness\w*|occupant|passenger|police|fled)\b",
    re.IGNORECASE,
)
# A sentence that says when the crash happened: "The crash occurred shortly after 2200 hours".
_CRASH_OCCURRED = re.compile(r"\b(?:crash|collision)\s+(?:occurred|happened|took\s+place)\b", re.IGNORECASE)
# Hours read as day or night when the narrative gives a clock time and no light condition; the hours around
# sunrise and sunset, which the season decides, are read against the month when the narrative names one, and are
# otherwise left open.
_DAY_HOURS = range(7, 17)
_NIGHT_HOURS = (*range(20, 24), *range(0, 6))
# Approximate sunrise and sunset by month, in local clock time (daylight saving time from March to October), for
# the middle latitudes of the United States (about 40 degrees north), in minutes after midnight: almanac values
# rounded to a quarter hour, not fitted to any narrative.
_SUN_BY_MONTH = {
    1: (7 * 60 + 15, 17 * 60),
    2: (7 * 60, 17 * 60 + 30),
    3: (7 * 60, 19 * 60),
    4: (6 * 60 + 30, 19 * 60 + 30),
    5: (5 * 60 + 45, 20 * 60 + 15),
    6: (5 * 60 + 30, 20 * 60 + 30),
    7: (5 * 60 + 45, 20 * 60 + 30),
    8: (6 * 60 + 15, 20 * 60),
    9: (6 * 60 + 45, 19 * 60 + 15),
    10: (7 * 60 + 15, 18 * 60 + 30),
    11: (6 * 60 + 45, 16 * 60 + 45),
    12: (7 * 60 + 15, 16 * 60 + 45),
}
_MONTHS = "january february march april may june july august september october november december".split()
# "May" only with a day after it ("May 3"): alone it is more often the verb.
_MONTH = re.compile(
    r"\b(?P<month>" + "|".join(_MONTHS[:4] + _MONTHS[5:]) + r")\b|\b(?P<may>may)\s+\d{1,2}\b"
    r"|\b(?P<season>winter|summer)\b",
    re.IGNORECASE,
)
_LANE_POS = re.compile(
    r"\b(right|left|inside|outside|middle|center|centre|curb|median)[\s-]+(?:\w+bound\s+)?(?:travel\s+)?(?:turn\s+|left-turn\s+)?lane",
    re.IGNORECASE,
)
_ON_A_LANE = re.compile(r"\s+(?:travel\s+|traffic\s+)?lane\b", re.IGNORECASE)
_TURN_LANE_AFTER = re.compile(r"[\s-]+(?:left[\s-]+)?turn(?:ing)?[\s-]+lane", re.IGNORECASE)
_WITH_CENTRE = re.compile(
    r",?\s+(?:with|and|plus)\s+an?\s+(?:continuous\s+|painted\s+)?cent(?:er|re)\s+(?:two-way\s+)?(?:left[\s-]+)?"
    r"turn(?:ing)?\s+lane",
    re.IGNORECASE,
)
# Lanes counted in words, not as "N-lane": "with three travel lanes", "three eastbound lanes", "a single travel lane"
# (not "... in each direction" or a pair of directions, which count per direction).
_LANES_COUNTED = re.compile(
    rf"\b(?P<n>\w+)\s+(?P<bound>(?:north|south|east|west)bound\s+)?{_WIDTH}(?:(?:marked|striped|paved)\s+)?"
    r"(?:through\s+|travel\s+|traffic\s+)?(?P<noun>lanes?)\b"
    rf"(?!{_PER_DIRECTION}|{_BRACKETED},?\s+and\s+\w+\s+(?:north|south|east|west)bound)",
    re.IGNORECASE,
)
# A sentence that describes a road it names with a modifier: "The access road is a two-way road ...", "Elm Street was a
# two-lane street".
_DESCRIBED_AS = re.compile(
    r"\s*(?:the\s+)?(?P<subject>(?P<first>[\w'-]+)\s+(?:[\w'-]+\s+){0,2}?"
    rf"(?:{_STREET_NOUNS}|freeway|interstate|expressway|arterial))\s+(?:is|was)\s+an?\s+",
    re.IGNORECASE,
)
_NOT_A_NAME = {"the", "this", "that", "a", "an", "its", "it"}
# A road's proper name just before its noun: "Jefferson Street", "Old Mill Road", "5th Avenue".
_ROAD_NAME = re.compile(r"\b(?:(?:[A-Z][\w'.-]*|\d+(?:st|nd|rd|th))\s+)+$")
# A sentence that opens with the bare definite road noun refers back to the road before it ("... a one-way downtown
# street. The street has three northbound travel lanes").
_THE_SAME_ROAD = re.compile(r"(?:^|[.;]\s+)(?:the|this)\s+$", re.IGNORECASE)
# A two-way left-turn lane is a centre lane, however the narrative places it.
_CENTRE_TURN = re.compile(
    r"\bcent(?:er|re)[\s-]+(?:two-way[\s-]+)?(?:left[\s-]+)?turn(?:\s+lane)?\b|\btwo-way[\s-]+left[\s-]+turn[\s-]+lane\b"
    # "a single through lane in each direction with the left-turn lane between them"
    r"|\b(?:left[\s-]+)?turn(?:ing)?[\s-]+lane\s+between\s+(?:them|the\s+(?:two\s+)?directions)\b",
    re.IGNORECASE,
)


# One item of a cross-section listed lane by lane: "two southbound through lanes", "a northbound left-turn lane", "a
# single westbound (downhill) lane", "a westbound curb lane", "a painted two-way center left-turn lane", "a westbound
# left-turn bay", "three through lanes", "two lanes in each direction" (twice its count).
_SECTION_ITEM = re.compile(
    r"\b(?P<n>an?|one|single|two|three|four|five|six|\d)\s+(?:single\s+)?(?P<bound>(?:north|south|east|west)bound\s+)?"
    # ("a dedicated northbound left-turn lane": the direction may follow the kind)
    r"(?:\([\w\s-]{1,20}\)\s+)?(?:(?:painted|continuous|dedicated|exclusive|separate|marked)\s+)?"
    r"(?:(?:north|south|east|west)bound\s+)?(?:two-way\s+)?"
    r"(?:(?:curb|inside|outside|center|centre|middle)\s+)?(?:two-way\s+)?"
    r"(?:(?:through|travel)\s+lanes?|(?:(?:left|right)[\s-]+turn|turn)\s+(?:lanes?|bays?)|lanes?)\b"
    r"(?P<each>\s+(?:(?:in|for)\s+each\s+direction|each\s+way|in\s+both\s+directions))?(?!\s+wide)",
    re.IGNORECASE,
)
_BOUND = re.compile(r"\b(north|south|east|west)bound\b", re.IGNORECASE)
_THE_TURN_LANE = re.compile(
    r"\bthe\s+(?:(?:north|south|east|west)bound\s+)?(?:left|right)[\s-]+turn\s+(?:lane|bay)\b", re.IGNORECASE
)
_TURN_WORD = re.compile(r"\bturn\b", re.IGNORECASE)
_BAY = re.compile(r"\bbays?\b", re.IGNORECASE)
# What may stand between two items of one cross-section: a short stretch of one sentence (list words, a median, "a 1.2 m
# painted median"), with no vehicle and no other road in it.
_SECTION_GAP = re.compile(r"(?:[^.;]|\.(?=\d)){0,70}")
_SECTION_BREAK = re.compile(
    # (a lane "that becomes a dedicated left-turn lane" is the same lane again)
    rf"\b(?:V\d|vehicle|{_STREET_NOUNS}|freeway|interstate|ramp|intersecting|crossing|cross|side|becomes|became)\b"
    # "has three lanes: a westbound lane, a two-way left-turn lane and an eastbound lane": the count before a colon is
    # the total of the list after it, not one of its items; so is the count before a list in brackets ("has three lanes
    # (one eastbound lane, a westbound left-turn lane and one westbound lane)"); and a clause that moves elsewhere
    # starts another cross-section ("... and one westbound through lane), and east of the intersection the two
    # eastbound through lanes drop back to one"; not "two northbound lanes east of the median, a southbound ...")
    r"|:|\(|(?:,\s*|\b(?:and|but|while)\s+)(?:just\s+)?(?:north|south|east|west)\s+of\b",
    re.IGNORECASE,
)
# A lane list that one direction's word governs from just before it: "Each of its approaches has a left-turn lane and
# two through lanes", "On each approach there are ...", "Each direction of the avenue consists of ...".
_EACH_LEADS = re.compile(
    r"\beach\s+(?:of\s+(?:its|the)\s+(?:two\s+)?)?(?:approach(?:es)?|directions?)(?:\s+of\s+(?:the\s+)?[\w\s-]{1,30}?)?,?"
    r"\s+(?:has|have|had|consists\s+of|consisted\s+of|carries|carried|includes|included|provides|provided|"
    r"there\s+(?:is|are|was|were))\s+$",
    re.IGNORECASE,
)
# "with no median or center turn lane", "without a center turn lane": a centre lane said not to be there.
_DENIED = re.compile(r"\b(?:no|without|nor|not)\b[^,;.]{0,30}$", re.IGNORECASE)


def _centre_turn_in(text: str) -> bool:
    """Whether ``text`` names a centre turn lane that it does not deny."""
    return any(not _DENIED.search(text, max(0, m.start() - 40), m.start()) for m in _CENTRE_TURN.finditer(text))


def _vehicles_road(text: str, number: int, roads: list[_Road]) -> _Road | None:
    """The road a vehicle travels on, as the sentence of its first mention puts it there ("V1 was traveling south on
    a two-lane road", "in the northbound lane of a two-lane road"); none where that sentence does not."""
    first = next((v for v in _VEHICLE_ID.finditer(text) if int(v.group(1)) == number), None)
    if first is None:
        return None
    start, after = _sentence_start(text, first.start()), _SENTENCE.search(text, first.end())
    end = after.start() if after else len(text)
    for r in roads:
        if start <= r.at < end:
            links = list(_LINK.finditer(text, start, r.at))
            if links and _ON_THE_ROAD.search(text, max(start, links[-1].start() - 12), links[-1].end()):
                return r
    return None


def _sentence_start(text: str, pos: int) -> int:
    """Where the sentence holding ``pos`` begins: after the last sentence break before it, as the narrative is split
    into sentences (no break inside "U.S. 30" or "a 1.2 m median")."""
    # (one character past ``pos``: a break just before it looks ahead at its capital)
    breaks = [m.end() for m in _SENTENCE.finditer(text, 0, pos + 1) if m.end() <= pos]
    return breaks[-1] if breaks else 0


def _raise_lanes(found: dict[int, dict[str, Any]], key: int, noun: re.Match[str] | None, total: int) -> None:
    """A cross-section's sum is its road's lanes, where that is more than the count so far (two-way unless said)."""
    road = _road_entry(found, key, noun)
    if (road["lanes"] or 0) < total:
        road["lanes"] = total
        road["ways"] = road["ways"] or 2


def _road_entry(found: dict[int, dict[str, Any]], key: int, noun: re.Match[str] | None) -> dict[str, Any]:
    """The lane table's entry for the road at ``key``, made empty on first sight: a ramp where its noun says so."""
    return found.setdefault(key, {"lanes": None, "ways": None, "ramp": bool(noun and "ramp" in noun.group(0))})


class _Road(NamedTuple):
    """A road the narrative describes: its lane and way counts, whether it is a ramp, where its noun is."""

    lanes: int | None
    ways: int | None
    ramp: bool
    at: int


# Road users the scenario DSL cannot hold (a place named after them, "bicycle lane", is no road user).
_NON_MOTORIST = re.compile(
    r"(?<!\bno )(?<!\bmotor )(?<!\bmotor-)"
    r"\b(?:pedestrians?|pedal ?cyclists?|bicyclists?|cyclists?|bicycles?|bikes?|joggers?|persons? walking|"
    r"people walking|wheelchairs?)\b"
    r"(?![\s/-]+(?:or\s+\w+\s+)?(?:(?:pedestrian|bicycle|bike)[\s/-]+)?(?:lanes?|paths?|signals?|"
    r"crossings?(?:\s*(?:[.,;:]|$)|\s+(?:at|signs?|signals?|lights?)\b)|"
    r"crosswalks?|signs?|routes?|racks?|refuge|islands?|bridges?|walkways?|traffic|overpass|underpass|facilit|"
    r"mounted|carrier))",
    re.IGNORECASE,
)

# Said not to be there: "no pedestrians", "no pedestrians or cyclists" ("no warning before the pedestrian" is there).
_NONE_THERE = re.compile(r"\bno\s+(?:[\w-]+\s+(?:or|and|nor)\s+)?$", re.IGNORECASE)


def _non_motorist(text: str) -> re.Match[str] | None:
    """The first road user the DSL cannot hold that the report says was there."""
    return next(
        (m for m in _NON_MOTORIST.finditer(text) if not _NONE_THERE.search(text[max(0, m.start() - 40) : m.start()])),
        None,
    )


@dataclass
class _Meta:
    road_type: str
    vehicles: list[str]
    directions: dict[str, str | None]
    pre_impact: str = ""  # the narrative up to the impact's aftermath, read once for the road and the clock
    notes: list[str] = field(default_factory=list)


class OfflineCrashExtractor:
    """Crash narrative → scenario DSL by general crash-narrative rules. Not an LLM.

    Args:
        templates: Template per road type (the ``kb_templates`` collection, or the packaged ones).
        lexicon: The crash lexicon as a mapping (the packaged ``crash_lexicon.yaml`` by default; leave-one-out
            evaluation passes a reduced copy).
    """

    name = OFFLINE_CRASH_EXTRACTOR

    def __init__(
        self,
        *,
        templates: Callable[[str], ScenarioTemplate] | None = None,
        lexicon: Mapping[str, Any] | None = None,
    ) -> None:
        lex = lexicon if lexicon is not None else _lexicon()
        self._templates = templates or packaged_templates().__getitem__
        self._body = [(bt, _phrase_re(ph)) for bt, ph in lex["body_type_phrases"].items()]
        self._models = [(bt, _phrase_re(ph)) for bt, ph in lex["models"].items()]
        self._heavy = _phrase_re(lex["heavy_truck_makes"])
        self._bus = _phrase_re(lex["bus_makes"])
        self._moto = _phrase_re(lex["motorcycle_makes"])
        self._road_cues = [(rt, _phrase_re(ph)) for rt, ph in lex["road_type_cues"].items()]
        self._numbers: dict[str, int] = {k: int(v) for k, v in lex["number_words"].items()}
        self._dirs = [(d, _phrase_re(ph)) for d, ph in lex["directions"].items()]
        self._ramp = _phrase_re(lex["ramp_words"])
        nouns = "|".join(re.escape(n) for n in lex.get("place_nouns") or ["\x00never\x00"])
        self._place = re.compile(rf"\)?[\s-]+(?:{nouns})s?\b", re.IGNORECASE)  # "the right (west) curb" too
        # The sun in view says both that it is day and that the sky is clear: one list serves both labels.
        sun = list(lex.get("sun_in_view") or [])
        time_cues = {t: [*ph, *sun] if t == "Daytime" else ph for t, ph in lex["time_cues"].items()}
        weather_cues = {w: [*ph, *sun] if w == "Clear" else ph for w, ph in lex["weather_cues"].items()}
        self._time = [(t, _phrase_re(ph)) for t, ph in time_cues.items()]
        self._time.append(("Nighttime", _LIT_BY_LAMPS))
        self._clock_words = {w.lower() for w in lex.get("time_clock_words", [])}
        # (Clear is a word, not a stem: "cleared" and "clearing" are what vehicles do, "V1 cleared the crest".)
        self._weather = [(w, _phrase_re(ph) if w == "Clear" else _inflected_re(ph)) for w, ph in weather_cues.items()]
        # Clear-sky phrases other than the bare word, which is a verb in most narratives ("cleared the intersection").
        self._clear_sky = _phrase_re([p for p in weather_cues.get("Clear", []) if p != "clear"] or ["\x00"])
        self._actions = [(a, _phrase_re(ph)) for a, ph in lex["action_cues"].items()]
        self._post = _phrase_re(lex["post_impact_words"])
        self._speeds: dict[str, float] = {k: float(v) for k, v in lex["default_speeds_mph"].items()}
        self._speed_re = _phrase_re([k for k in self._speeds if k != "default"])

    # -- public ----------------------------------------------------------------------------------
    def extract(self, report: CrashReport) -> Scenario:
        """The scenario of one crash report.

        Raises:
            NotACrashReportError: If the summary is empty, too long, or names no vehicle.
            ScenarioError: If the result fails the DSL's checks (a defect of the rules; reported).
        """
        summary = self._number_vehicles(report.summary)
        text = " ".join(summary.split())
        if not text:
            raise NotACrashReportError(report.case_id, "the crash summary is empty")
        if len(report.summary.encode("utf-8")) > MAX_SUMMARY_BYTES:
            raise NotACrashReportError(report.case_id, f"the summary is over {MAX_SUMMARY_BYTES // 1024} KB")
        sentences = [s.strip() for s in _SENTENCE.split(summary) if s and s.strip()]
        meta = self._meta(report.case_id, text, sentences)
        meta = self._validate_meta(meta)
        template = self._templates(meta.road_type)
        scenario = self._fill(report.case_id, text, sentences, meta, template)
        return self._validate(scenario)

    # -- 1. meta message -----------------------------------------------------------------------
    def _meta(self, case_id: str, text: str, sentences: list[str]) -> _Meta:
        ids = sorted({int(m) for m in _VEHICLE_ID.findall(text)})
        if not ids:
            raise NotACrashReportError(
                case_id,
                "no vehicles found (expected V1, V2 … as crash narratives number them); is this a crash summary?",
            )
        if len(ids) > MAX_ACTORS:
            raise NotACrashReportError(
                case_id,
                f"it names {len(ids)} vehicles (V{ids[0]} to V{ids[-1]}); a scenario holds at most {MAX_ACTORS}",
            )
        vehicles = [f"V{i}" for i in ids]
        pre_impact = self._pre_impact_text(text)
        road_type = self._road_type(pre_impact)
        if road_type == "Straight":
            # A road described only after the aftermath ("... came to rest on the north shoulder. The junction is a
            # three-leg intersection: County Road 12 runs east-west ...") is still the crash's road; the sentences of
            # the aftermath itself (rest positions, towing, injuries) are not read for it.
            described = [
                s
                for s in _SENTENCE.split(text[len(pre_impact) :])
                if s.strip() and not _AFTERMATH.search(s) and not _ABOUT_PEOPLE.search(s)
            ]
            later = self._road_type(". ".join(described)) if described else "Straight"
            if later != "Straight":
                road_type = later
        directions = {v: self._direction(v, sentences) for v in vehicles}
        return _Meta(road_type, vehicles, directions, pre_impact)

    def _road_type(self, pre: str) -> str:
        away = _placed_away(pre)
        cues = [(road_type, list(pattern.finditer(pre))) for road_type, pattern in self._road_cues]

        def placed_away(m: re.Match[str]) -> bool:
            return any(a <= m.start() < b for a, b in away)

        # the narrative without the places the crash is away from ("approximately 150 m east of a T-intersection where
        # a side street ends at the arterial"), for the cues read from whole clauses
        here_only = pre
        for a, b in away:
            here_only = here_only[:a] + " " * (b - a) + here_only[b:]
        # where the first junction the crash is away from is named ("150 m east of a T-intersection"): a junction
        # named again after it with a definite word ("that intersection") is that one
        first_away = min(
            (m.start() for road_type, matches in cues if road_type in _JUNCTIONS for m in matches if placed_away(m)),
            default=len(pre),
        )
        for road_type, matches in cues:
            # A junction named as somewhere else ("a left turn at the next intersection", "backed up from a
            # signalized intersection approximately 100 m to the east") is not the crash's place.
            here = [m for m in matches if not _ELSEWHERE.match(pre, m.end())]
            here = [m for m in here if not _NEXT.search(pre, max(0, m.start() - 24), m.start())]
            # A ramp set out for is elsewhere; a junction reached is often the crash's ("accelerated to reach the
            # intersection").
            if road_type == "Merge":
                here = [m for m in here if not _GOAL.search(pre, max(0, m.start() - 40), m.start())]
            here = [m for m in here if not _NOT_HERE.search(pre, max(0, m.start() - 32), m.start())]
            here = [m for m in here if not _AWAY.search(pre, max(0, m.start() - 60), m.start())]
            here = [m for m in here if not _BEHIND_IT.search(pre, max(0, m.start() - 180), m.start())]
            # "... waiting for a red signal at an intersection approximately 60 m ahead ... V1 was pushed into the
            # intersection": where the impact pushed a vehicle is no place of the crash.
            here = [m for m in here if not _PUSHED_INTO.search(pre, max(0, m.start() - 60), m.start())]
            if away:
                here = [
                    m
                    for m in here
                    if not placed_away(m)
                    and (m.start() < first_away or not _DEFINITE.search(pre, max(0, m.start() - 30), m.start()))
                ]
            if here or (road_type == "T-intersection" and _ends_in_a_t(here_only)):
                return road_type
            if road_type == "Merge" and _ONTO_RAMP.search(here_only):
                return road_type
        return "Straight"

    def _pre_impact_text(self, text: str) -> str:
        """The narrative up to the sentence after the first impact (where rest positions begin)."""
        m = self._post.search(text)
        return text[: m.start()] if m else text

    def _direction(self, vehicle: str, sentences: list[str]) -> str | None:
        for s in self._sentences_about(vehicle, sentences, intro_first=True):
            part = self._own_part(vehicle, s)
            # The earliest compass word in the vehicle's part of the sentence wins.
            # ... except where it names a place ("exiting a lot on the north side of the road").
            hits = [
                (m.start(), d)
                for d, p in self._dirs
                for m in [next((m for m in p.finditer(part) if not self._place.match(part, m.end())), None)]
                if m
            ]
            if hits:
                return min(hits)[1]
        return None

    # -- 2. meta self-check ----------------------------------------------------------------------
    @staticmethod
    def _validate_meta(meta: _Meta) -> _Meta:
        axes = {("EW" if d in {"W2E", "E2W"} else "NS") for d in meta.directions.values() if d}
        if meta.road_type in {"Straight", "Curve"} and len(axes) == 2:
            meta.notes.append("vehicles travel on crossing roads, so the road is read as an intersection")
            meta.road_type = "Intersection"
        return meta

    # -- 4. extraction ---------------------------------------------------------------------------
    def _fill(self, case_id: str, text: str, sentences: list[str], meta: _Meta, template: ScenarioTemplate) -> Scenario:
        notes = list(meta.notes)
        network = self._road_network(text, meta.road_type, template, notes)
        lanes_each = network.lanes_per_direction()
        actors = []
        for v in meta.vehicles:
            actors.append(self._actor(v, text, sentences, meta, network, lanes_each, template))
        env = self._env(sentences, meta.pre_impact, notes)
        collisions = self._collisions(sentences, set(meta.vehicles))
        if not collisions and len(meta.vehicles) >= 2:
            collisions = [(meta.vehicles[0], meta.vehicles[1])]
            notes.append("no impact sentence names two vehicles; V1 and V2 are assumed to have collided")
        if m := _non_motorist(text):
            notes.append(
                f"the report names a road user who is not a vehicle ({m.group(0).lower()}); the scenario DSL holds "
                "vehicles only, so it is left out"
            )
        if len(meta.vehicles) < 2:
            notes.append("one vehicle: the simulator has no crash between vehicles to reproduce")
        return Scenario(
            case_id=case_id,
            road_network=network,
            actors=actors,
            env=env,
            collisions=collisions,
            notes=notes,
        )

    def _number_vehicles(self, summary: str) -> str:
        """The summary with every vehicle named by its number ("Vehicle 1", "vehicle two", "Unit #3") written as crash
        narratives number them (V1, V2 ...), so that narratives in either style are read alike."""

        def v(m: re.Match[str]) -> str:
            n = self._count(m.group("n"))
            return f"V{n}" if n is not None else m.group(0)

        return _NUMBERED_VEHICLE.sub(v, summary)

    def _count(self, word: str) -> int | None:
        w = word.lower()
        if w.isdigit():
            return int(w)
        return self._numbers.get(w)

    def _road_network(self, text: str, road_type: str, template: ScenarioTemplate, notes: list[str]) -> RoadNetwork:
        defaults = template.road_network
        roads = self._roads(text)
        main = [r for r in roads if not r.ramp]
        ramps = [r for r in roads if r.ramp]
        centre = _centre_turn_in(text)
        none = _Road(None, None, False, 0)
        first = main[0] if main else none
        ramp = ramps[0] if ramps else _Road(None, None, True, 0)  # a merge's branch, or a T's exit ramp
        if ramps:
            # "a single-lane ramp that widens to two lanes ... before it ends at a stop sign", "The ramp begins as two
            # lanes ... and narrows to a single lane approx. 150 m before it joins the freeway": a ramp ends where the
            # crash is, with the lanes it has there.
            end = _SENTENCE.search(text, ramp.at)
            change = _CHANGES_TO.search(text, ramp.at, end.start() if end else len(text))
            lanes_then = self._count(change.group("n")) if change else None
            if lanes_then:
                ramp = ramp._replace(lanes=lanes_then)
        net: dict[str, Any] = {
            "road_type": road_type,
            "lane_width_m": defaults.lane_width_m,
            "length_m": defaults.length_m,
            "centre_turn_lane": centre,
        }
        if road_type == "T-intersection":
            branch = main[1] if len(main) > 1 else none
            ending = self._ending_road(text, main) if len(main) > 1 else None
            if ending is not None:
                # The road that ends at the other is the branch, whichever the narrative described first.
                branch, first = ending, next(r for r in main if r is not ending)
            elif branch.lanes and first.lanes and branch.lanes > first.lanes:
                # Where nothing says which road ends, the wider one goes through: in every T of the development
                # cases and the read probe sets (62), the main road has at least as many lanes as the branch.
                branch, first = first, branch
            # ... and where the lanes do not tell, the road whose own clause says it formed the T is its stem.
            elif len(main) > 1 and (stem := self._forms_a_t(text, main)) is not None:
                branch, first = stem, next(r for r in main if r is not stem)
            at_junction = [
                r
                for r in main
                if r is not first
                and r is not branch
                and _AT_THE_JUNCTION.search(text, _sentence_start(text, r.at), r.at)
            ]
            if at_junction and (at_junction[0].lanes or 0) > (first.lanes or 0):
                # "... so at the junction Route 27 has three lanes": the count at the junction is the main road's there.
                first = at_junction[0]._replace(ways=at_junction[0].ways or first.ways)
            net["main_lanes"] = first.lanes or defaults.main_lanes
            net["main_ways"] = first.ways or defaults.main_ways
            if branch is none and _EXIT_RAMP.search(text):
                # "the exit ramp, which terminates at a rural two-lane county road": the ramp is the branch, one
                # way, and one lane unless counted.
                branch = _Road(ramp.lanes or 1, ramp.ways or 1, True, ramp.at)
                notes.append("the exit ramp is the T's branch (one-way)")
            net["branch_lanes"] = branch.lanes or defaults.branch_lanes
            net["branch_ways"] = branch.ways or defaults.branch_ways
        elif road_type == "Merge":
            into = self._merged_into(text, main)
            if into is not None:
                # "a one-lane entrance ramp that begins at a two-lane, one-way frontage road ... to enter the right
                # lane of a 4-lane, divided interstate": the main road is the one merged into, not the one left.
                first = into
            net["main_lanes"] = first.lanes or defaults.main_lanes
            net["main_ways"] = first.ways or defaults.main_ways
            lanes = ramp.lanes or defaults.branch_lanes or 1
            if ramp.lanes is None and re.search(r"\bacceleration lane\b", text, re.IGNORECASE):
                lanes += 1
                notes.append("the on-ramp's acceleration lane counts as a second branch lane")
            net["branch_lanes"] = lanes
            net["branch_ways"] = ramp.ways or 1
        else:
            # A ramp that is the only road described ("a one-lane, one-way exit ramp") is the road of the scene.
            only = first if main or not ramps else ramps[0]
            section = _CRASH_ON_SECTION.search(text) if road_type in {"Straight", "Curve"} else None
            lanes_there = self._count(section.group("n")) if section else None
            if lanes_there and only.lanes != lanes_there:
                # "... it transitions to a two-lane highway, and the crash occurred on this two-lane section": the
                # road described with the crash's count is the crash's road.
                same = [r for r in main if r.lanes == lanes_there]
                only = same[0] if same else only._replace(lanes=lanes_there)
            net["lanes"] = only.lanes or defaults.lanes
            net["ways"] = only.ways or defaults.ways
            if road_type == "Intersection" and len(main) > 1:
                # SAFE's road-network question for an intersection: "How many lanes [ways] are there at most for
                # roads bordering the intersection?" A two-lane road crossing a four-lane highway is four lanes.
                net["lanes"] = max(r.lanes or 0 for r in main) or net["lanes"]
                net["ways"] = max(r.ways or 0 for r in main) or net["ways"]
            if road_type == "Intersection":
                # "On the approaches to the intersection the road widens to six lanes (a left-turn lane and two
                # through lanes in each direction)": the count a road widens to is one it has at the junction.
                widened = [
                    self._count(m.group("n")) or 0
                    for m in _CHANGES_TO.finditer(text)
                    if m.group(0).lower().startswith(("widen", "expand"))
                ]
                net["lanes"] = max([net["lanes"] or 0, *widened]) or net["lanes"]
        if not main and (road_type in {"T-intersection", "Merge"} or not ramps):
            notes.append("the narrative gives no lane count; the template's default is used")
        return RoadNetwork(**net)

    @staticmethod
    def _merged_into(text: str, roads: list[_Road]) -> _Road | None:
        """The road a merging vehicle enters, of several described: the first whose noun follows a verb of entering
        ("attempting to enter the right lane of a 4-lane, divided interstate", "merging onto the freeway") in its
        sentence, with no other road noun between."""
        for r in roads:
            window = text[max(_sentence_start(text, r.at), r.at - 80) : r.at]
            verbs = list(_MERGES_INTO.finditer(window))
            if verbs and not _ROAD_NOUN.search(window, verbs[-1].end()):
                return r
        return None

    @staticmethod
    def _forms_a_t(text: str, roads: list[_Road]) -> _Road | None:
        """The road whose own clause says it formed a T with another (the road just before its "that" or "which", in
        the same sentence), for roads of the same lane count or uncounted."""
        m = _FORMS_A_T.search(text)
        if m is None:
            return None
        before = [r for r in roads if _sentence_start(text, m.start()) <= r.at <= m.start()]
        if not before:
            return None
        stem = before[-1]
        other = [r for r in roads if r is not stem]
        if stem.lanes and other and other[0].lanes and stem.lanes != other[0].lanes:
            return None
        return stem

    def _ending_road(self, text: str, roads: list[_Road]) -> _Road | None:
        """The described road that ends at another one: the road a vehicle is put on where the ending is that
        vehicle's ("V1's road ended at ..."), else the nearest before the first "... ends at" (in its sentence)."""
        m = _ROAD_ENDS.search(text) or _END_AT.search(text)
        if not m or _EXIT_RAMP.search(m.group(0)):  # an exit ramp that ends is the branch the caller adds
            return None
        # "V1's road ended at the intersection": the road V1 was put on where the narrative introduced it, not the
        # road named just before these words (in V1's sentence, perhaps the road it meets).
        sentence_start = _sentence_start(text, m.start())
        owner = _OWN_ROAD.match(text, sentence_start)
        if owner is not None and owner.start(1) <= m.start():
            own = _vehicles_road(text, int(owner.group(1)), roads)
            if own is not None:
                return own
        # "The two-way street ended at the one-way street": the road its count or ways name, where one road has them
        subject = _COUNT.search(text, max(sentence_start, m.start() - 30), m.start())
        if subject is not None:
            ways, lanes = subject.group("ways"), subject.group("lanes")

            def fits(r: _Road) -> bool:
                if ways:
                    return r.ways == (1 if ways.lower() in ("one", "1") else 2)
                return r.lanes is not None and r.lanes == self._count(lanes)

            named = [r for r in roads if fits(r)]
            others = [r for r in roads if not fits(r) and (r.ways if ways else r.lanes) is not None]
            if named and others:
                # the road where it was first described with that count (later mentions repeat it)
                return named[0]
        before = [r for r in roads if m.start() - 200 <= r.at <= m.start()]
        return before[-1] if before else None

    def _roads(self, text: str) -> list[_Road]:
        """Lanes, ways, whether a ramp, and where the noun is, of each road the narrative describes, in order of
        mention.

        Five passes fill one table keyed by where each road noun is, each pass keeping what an earlier one found:
        hyphenated counts before a road noun, counts per direction, a total "in all", lanes counted in words, and
        cross-sections listed lane by lane; a road described again in a sentence of its own then moves to where it was
        first named.
        """
        found: dict[int, dict[str, Any]] = {}
        self._hyphenated_counts(text, found)
        self._counts_per_direction(text, found)
        self._lanes_in_all(text, found)
        self._lanes_counted(text, found)
        self._cross_sections(text, found)
        self._described_again(text, found)
        return [
            _Road(r["lanes"], r["ways"], r["ramp"], at) for at, r in sorted(found.items()) if r["lanes"] or r["ways"]
        ]

    @staticmethod
    def _described_again(text: str, found: dict[int, dict[str, Any]]) -> None:
        """A road named earlier and described in a sentence of its own ("... where the access road of an industrial
        park meets the highway ... The access road is a two-way road that has three lanes") is the road at its first
        mention, where the narrative placed it, not a new road at the description."""
        for key in sorted(found):
            start = _sentence_start(text, key)
            m = _DESCRIBED_AS.match(text, start)
            if m is None or not m.end() <= key <= m.end() + 60 or m.group("first").lower() in _NOT_A_NAME:
                continue
            if _ROAD_NOUN.search(text, m.end(), key):
                continue  # "The service road is a two-lane road that joins the highway": only the first road is it
            subject = m.group("subject")
            earlier = re.search(rf"\b{re.escape(subject)}\b", text[:start], re.IGNORECASE)
            nouns = list(_ROAD_NOUN.finditer(text, earlier.start(), earlier.end())) if earlier else []
            if not nouns or nouns[-1].start() == key:
                continue
            entry = found.pop(key)
            first = found.setdefault(nouns[-1].start(), entry)
            for k, v in entry.items():
                if first.get(k) is None:
                    first[k] = v

    def _hyphenated_counts(self, text: str, found: dict[int, dict[str, Any]]) -> None:
        """Counts belong to the road noun that follows them ("a two-lane, two-way rural road", "a one-way
        entrance ramp"), so one sentence can describe a ramp and the freeway it joins."""
        for m in _COUNT.finditer(text):
            if m.group("ways") and _TURN_LANE_AFTER.match(text, m.end()):
                continue  # "a center two-way left turn lane" names a lane, not a two-way road
            # "The exit ramp (from the interstate) is a single one-way lane that ends at ... Hollins Road": a count on a
            # lane describes the road the sentence is about, its first, not the next road named.
            sentence_start = _sentence_start(text, m.start())
            # (the road noun after a count is looked for in the count's own sentence: in "Ridge Street is also one-way
            # and carries four eastbound lanes. Both streets have ..." the count is Ridge Street's, named before it)
            stop = _SENTENCE.search(text, m.end(), m.end() + 80)
            sentence_end = stop.start() if stop else m.end() + 80
            noun = (
                _ROAD_NOUN.search(text, sentence_start, m.start())
                if _ON_A_LANE.match(text, m.end())
                else _ROAD_NOUN.search(text, m.end(), sentence_end)
            )
            if noun is None:
                # "The street at this location carries one-way southbound traffic": the count is the road's before it.
                noun = _road_noun_before(text, max(sentence_start, m.start() - 80), m.start())
            key = noun.start() if noun else m.start()
            road = _road_entry(found, key, noun)
            if m.group("lanes"):
                road["lanes"] = road["lanes"] or self._count(m.group("lanes"))
            else:
                road["ways"] = road["ways"] or self._count(m.group("ways"))
            between = text[m.end() : noun.start() if noun else m.end()]
            if road["ways"] is None and re.search(r"\bdivided\b", between, re.IGNORECASE):
                road["ways"] = 2
            if m.group("lanes") and noun and not road.get("centre") and _WITH_CENTRE.match(text, noun.end()):
                # "a two-lane road with a center two-way left turn lane": the turn lane is a third lane. An odd count
                # ("a five-lane arterial with a center turn lane") already holds it.
                road["centre"] = True
                if (road["lanes"] or 0) % 2 == 0:
                    road["lanes"] = (road["lanes"] or 0) + 1

    def _counts_per_direction(self, text: str, found: dict[int, dict[str, Any]]) -> None:
        """Counts per direction belong to the road noun just before them ("a divided roadway with three lanes in
        each direction"); a road whose lanes were already counted keeps its count."""
        for m in (*_EACH_WAY.finditer(text), *_BOUND_PAIR.finditer(text), *_BOUND_PAIR_AFTER.finditer(text)):
            if m.re is _EACH_WAY:
                # each direction's through lanes, and the turn lane it adds ("... and a left-turn lane for each
                # direction")
                each = self._count(m.group("n"))
                total = None if each is None else 2 * (each + bool(m.group("turn")))
            else:
                a, b = self._count(m.group("a")), self._count(m.group("b"))
                total = None if a is None or b is None else a + b
            if total is None:
                continue
            if _centre_turn_in(text[m.end() : m.end() + 60].split(".")[0]):
                total += 1  # "two through lanes in each direction and a continuous two-way center left-turn lane"
            before = _road_noun_before(text, m.start() - 80, m.start())
            key = before.start() if before else m.start()
            road = _road_entry(found, key, None)  # counts per direction make no ramp
            road["lanes"] = road["lanes"] or total
            road["ways"] = road["ways"] or 2

    def _lanes_in_all(self, text: str, found: dict[int, dict[str, Any]]) -> None:
        """A total "in all" wins over counts per direction: "each direction has a left-turn lane and two through lanes,
        giving six lanes in all"."""
        for m in _LANES_IN_ALL.finditer(text):
            n = self._count(m.group("n") or m.group("m"))
            before = _road_noun_before(text, m.start() - 200, m.start())
            if n is None or n > 12 or before is None:
                continue
            road = _road_entry(found, before.start(), before)
            road["lanes"] = n

    def _cross_sections(self, text: str, found: dict[int, dict[str, Any]]) -> None:
        """A cross-section listed lane by lane across both directions ("two southbound through lanes, a southbound
        left-turn lane, a raised median, a northbound left-turn lane and two northbound through lanes") is the sum of
        its items, where that is more than the road's count so far: the road noun before the list."""
        items = list(_SECTION_ITEM.finditer(text))
        runs: list[list[re.Match[str]]] = []
        for m in items:
            prev = runs[-1][-1] if runs else None
            gap = text[prev.end() : m.start()] if prev else ""
            if prev is not None and _SECTION_GAP.fullmatch(gap) and not _SECTION_BREAK.search(gap):
                runs[-1].append(m)
            else:
                runs.append([m])
        for run in runs:
            # a list said of each approach or direction is one direction's lanes, whatever it holds
            lead_each = bool(_EACH_LEADS.search(text, _sentence_start(text, run[0].start()), run[0].start()))
            # "two westbound through lanes, the eastbound left-turn bay, and two eastbound through lanes": a turn lane
            # named with "the" between two counted items is one more
            the_turns = sum(len(_THE_TURN_LANE.findall(text, a.end(), b.start())) for a, b in itertools.pairwise(run))
            if not lead_each and (len(run) < 2 or not (the_turns or any(_TURN_WORD.search(m.group(0)) for m in run))):
                continue  # one item, or no turn lane: the other passes count those
            # the directions the list names, its roadway's too ("the eastbound roadway has a left-turn lane, three
            # through lanes and a right-turn lane, and ... from three westbound through lanes")
            bounds = set(_BOUND.findall(text, max(0, run[0].start() - 40), run[-1].end()))
            each = [m for m in run if m.group("each")]
            if each and not lead_each:
                # "two lanes in each direction ... widens to add a single left-turn lane": only turn lanes add to a
                # count per direction ("two lanes wide with one lane each way" states one count twice); a turn bay the
                # road "flares to add" is no lane of its cross-section
                if any(m not in each and (not _TURN_WORD.search(m.group(0)) or _BAY.search(m.group(0))) for m in run):
                    continue
            elif not lead_each and len({b.lower() for b in bounds}) < 2:
                continue  # one direction's lanes
            counts = self._item_counts(run)
            if any(c is None for c in counts):
                continue
            total = the_turns + sum(
                (c or 0) * (2 if lead_each or m.group("each") else 1) for c, m in zip(counts, run, strict=True)
            )
            if total > 12:
                continue
            # the road noun just before the list, else one earlier in its sentence ("It is a two-lane road that widens
            # ... so that at the signal it has ..."), else the list itself stands for its road ("Broadway runs
            # north-south. At the intersection its cross-section is ...")
            before = _road_noun_before(text, run[0].start() - 80, run[0].start()) or _road_noun_before(
                text, max(_sentence_start(text, run[0].start()), run[0].start() - 200), run[0].start()
            )
            _raise_lanes(found, before.start() if before else run[0].start(), before, total)
        self._halves(text, found, runs)

    def _halves(self, text: str, found: dict[int, dict[str, Any]], runs: list[list[re.Match[str]]]) -> None:
        """One direction's lane list after the other's in one sentence ("On the northbound approach it has a
        left-turn lane, two through lanes and a right-turn lane; on the southbound side it has a left-turn lane and
        two through lanes") is the road's cross-section: their sum, where one of them holds a turn lane."""

        def direction(run: list[re.Match[str]]) -> str | None:
            start = max(_sentence_start(text, run[0].start()), text.rfind(";", 0, run[0].start()) + 1)
            named = {b.lower() for b in _BOUND.findall(text, start, run[-1].end())}
            return named.pop() if len(named) == 1 else None

        for first, second in itertools.pairwise(runs):
            gap = text[first[-1].end() : second[0].start()]
            if len(gap) > 80 or "." in gap or re.search(r"\b(?:V\d|vehicle)\b", gap, re.IGNORECASE):
                continue
            a, b = direction(first), direction(second)
            if a is None or b is None or {a, b} not in ({"north", "south"}, {"east", "west"}):
                continue
            if not any(_TURN_WORD.search(m.group(0)) for m in (*first, *second)):
                continue
            counts = self._item_counts([*first, *second])
            if any(c is None for c in counts) or any(m.group("each") for m in (*first, *second)):
                continue
            total = sum(c or 0 for c in counts)
            if total > 12:
                continue
            before = _road_noun_before(text, first[0].start() - 80, first[0].start())
            _raise_lanes(found, before.start() if before else first[0].start(), before, total)

    def _item_counts(self, run: list[re.Match[str]]) -> list[int | None]:
        """The lane count of each item of a cross-section listing ("a", "an" and "single" are one)."""
        return [self._count("one" if m.group("n").lower() in ("a", "an", "single") else m.group("n")) for m in run]

    @staticmethod
    def _named_before(text: str, noun: re.Match[str], found: dict[int, dict[str, Any]]) -> int | None:
        """The key of the road described where the road named just before ``noun`` ("Jefferson Street") was first
        named, if it was named earlier and described there (at its noun or an appositive within 80 characters)."""
        name = _ROAD_NAME.search(text, max(0, noun.start() - 40), noun.start())
        if name is None or name.group(0).split()[0].lower() in {"the", "this", "that", "a", "an"}:
            return None  # "The street ..." at a sentence's start is no name (``_THE_SAME_ROAD`` reads it)
        first = text.find(name.group(0) + noun.group(0))
        if not 0 <= first < name.start():
            return None
        described = [k for k in found if first <= k <= first + len(name.group(0)) + len(noun.group(0)) + 80]
        return min(described) if described else None

    def _lanes_counted(self, text: str, found: dict[int, dict[str, Any]]) -> None:
        """Lanes counted in words ("a one-way street with three travel lanes", "the left of three eastbound lanes of a
        divided highway") belong to the road noun before them, else the one just after; lanes given for one
        direction of a road that is not one-way are half its lanes."""
        for m in _LANES_COUNTED.finditer(text):
            n = self._count(m.group("n"))
            if n is None or n > 8 or (m.group("noun").lower() == "lane") != (n == 1):
                continue  # "a single travel lane" counts one; "two lane" is a hyphenless "two-lane", counted before
            noun = _road_noun_before(text, m.start() - 80, m.start()) or _ROAD_NOUN.search(text, m.end(), m.end() + 40)
            key = noun.start() if noun else m.start()
            if noun is None:
                # "a five-lane urban road running east-west: two eastbound lanes, a continuous center left-turn lane and
                # two westbound lanes": with no road noun near, the lanes are those of the road described earlier in
                # their sentence, not a road of their own.
                sentence_start = _sentence_start(text, m.start())
                key = max((k for k in found if sentence_start <= k < m.start()), default=key)
            # "The street has three northbound travel lanes": "the street" is the road the last sentence described.
            earlier = [k for k in found if k < key and key - k < 300]
            # "Jefferson Street, a one-way northbound street ... Jefferson Street has three travel lanes": a road named
            # again is the road described at its first naming.
            named = self._named_before(text, noun, found) if noun and key not in found else None
            if named is not None:
                key = named
            # ("The on-ramp is a single lane", after the freeway: a ramp is no road of another kind.)
            if (
                noun
                and key not in found
                and earlier
                and _THE_SAME_ROAD.search(text, max(0, key - 12), key)
                and ("ramp" in noun.group(0).lower()) == bool(found[max(earlier)]["ramp"])
            ):
                key = max(earlier)
            road = _road_entry(found, key, noun)
            if road["lanes"] is None:
                one_way = road["ways"] == 1
                lanes = n if (one_way or not m.group("bound")) else 2 * n
                if m.group("bound") and not one_way:
                    road["ways"] = road["ways"] or 2
                if not one_way and not road.get("centre") and _WITH_CENTRE.match(text, m.end()):
                    # "four travel lanes and a center two-way left-turn lane": the turn lane is one more lane (an odd
                    # count already holds it, as in the hyphenated count).
                    road["centre"] = True
                    if lanes % 2 == 0:
                        lanes += 1
                road["lanes"] = lanes

    def _actor(
        self,
        vehicle: str,
        text: str,
        sentences: list[str],
        meta: _Meta,
        network: RoadNetwork,
        lanes_each: int,
        template: ScenarioTemplate,
    ) -> Actor:
        about = self._sentences_about(vehicle, sentences, intro_first=True)
        intro = about[0] if about else ""
        description = self._description(vehicle, intro)
        body = self._body_type(description or intro)
        direction = meta.directions.get(vehicle)
        if network.road_type == "Merge":
            position = "On-ramp" if self._ramp.search(self._own_part(vehicle, intro)) else "Main road"
        else:
            position = direction or template.default_positions.get(vehicle, "W2E")
        actions: list[str] = []
        for s in about:
            part = self._pre_impact(self._own_part(vehicle, s))
            found = sorted(((m.start(), a) for a, p in self._actions for m in [p.search(part)] if m))
            for _, action in found:
                if action not in actions:
                    actions.append(action)
        lane = self._lane(intro, lanes_each)
        speed = self._speed(intro or text)
        return Actor(
            id=vehicle,
            body_type=body,  # type: ignore[arg-type]
            description=description,
            initial_position=position,  # type: ignore[arg-type]
            lane=lane,
            actions=actions or ["Move forward"],  # type: ignore[arg-type]
            speed_limit_mph=speed,
        )

    def _sentences_about(self, vehicle: str, sentences: list[str], *, intro_first: bool = False) -> list[str]:
        """Sentences whose first vehicle mentioned is this one (its introduction first)."""
        out = []
        intro = None
        for s in sentences:
            ids = _VEHICLE_ID.findall(s)
            if not ids:
                continue
            m = next((i for i in _INTRO.finditer(s) if f"V{i.group(1)}" == vehicle), None)
            if m and intro is None:
                intro = s
                continue
            if f"V{ids[0]}" == vehicle:
                out.append(s)
        if intro is None:
            # "V2, a 2014 Chevrolet Impala, was ..., and V3, a 2016 Mack tractor, was ...": a vehicle introduced by
            # an appositive in a sentence that begins with another one.
            appositive = re.compile(rf"\b{vehicle}\b{_APPOSITIVE.pattern}an?\s")
            intro = next((s for s in sentences if appositive.search(s)), None)
            if intro in out:
                out.remove(intro)
        if intro is not None and intro_first:
            out.insert(0, intro)
        return out

    @staticmethod
    def _own_part(vehicle: str, sentence: str) -> str:
        """The part of a sentence about this vehicle: from its mention to the next vehicle's."""
        ids = list(_VEHICLE_ID.finditer(sentence))
        start = next((m.start() for m in ids if f"V{m.group(1)}" == vehicle), 0)
        nxt = next((m.start() for m in ids if m.start() > start and f"V{m.group(1)}" != vehicle), len(sentence))
        # "... and was slightly behind V3": a later vehicle named as a reference still ends the part.
        return sentence[start:nxt]

    def _pre_impact(self, part: str) -> str:
        m = _STRIKE.search(part)
        return part[: m.start()] if m else part

    @staticmethod
    def _description(vehicle: str, intro: str) -> str | None:
        """The words that describe the vehicle in its introduction, so that another vehicle named in the same
        sentence ("was slowing behind a garbage truck") does not lend it its body."""
        m = next((i for i in _INTRO.finditer(intro) if f"V{i.group(1)}" == vehicle), None)
        if m:
            rest = intro[m.end() :]
        else:
            mention = next((i for i in _VEHICLE_ID.finditer(intro) if f"V{i.group(1)}" == vehicle), None)
            if mention is None:
                return None
            before = intro[: mention.start()].rstrip()
            after = _APPOSITIVE.match(intro, mention.end())
            if after:  # "V2, a 2010 Honda Accord sedan, was ...", "V1 (case vehicle), a 2012 Ford Fusion, was ..."
                rest = intro[after.end() :]
            elif before.endswith("("):  # "The case vehicle, a 2018 Nissan Rogue (V1), was ..."
                return before[:-1][-120:].strip(" ,") or None
            else:
                return None
        # "V1, a 2010 Dodge Grand Caravan minivan, and V2, a tractor pulling a trailer, were both ...": the next
        # vehicle's description is its own.
        nxt = _VEHICLE_ID.search(rest)
        rest = rest[: nxt.start()] if nxt else rest
        stop = re.search(r"\s(?:was|is|had|were|that)\s", rest)
        desc = rest[: stop.start()] if stop else rest[:120]
        return desc.strip(" ,") or None

    def _body_type(self, description: str) -> str:
        low = description.lower()
        # (a body word inside a make's name is no body: the "van" of "Van Hool", a coach maker)
        makes = [m.span() for p in (self._heavy, self._bus, self._moto) for m in p.finditer(low)]
        hits = [
            (m.end() - m.start(), bt)
            for bt, p in self._body
            for m in p.finditer(low)
            if not any(a <= m.start() and m.end() <= b for a, b in makes)
        ]
        # A body named outright ("a Freightliner M2 box truck") beats what the make suggests; the bare word "truck"
        # says less than a make that builds only tractors.
        if hits and max(hits)[1] != "Truck":
            return max(hits)[1]
        if self._heavy.search(low):
            return "Semi Truck"
        if self._bus.search(low):
            return "Bus"
        if self._moto.search(low):
            return "Motorcycle"
        if hits:
            return max(hits)[1]
        year = _YEAR.search(low)
        model_text = low[year.end() :] if year else low
        hits = [(m.end() - m.start(), bt) for bt, p in self._models for m in p.finditer(model_text)]
        if hits:
            return max(hits)[1]
        return "Car"

    @staticmethod
    def _lane(intro: str, lanes_each: int) -> int | None:
        m = _LANE_POS.search(intro)
        if not m:
            return 1 if lanes_each == 1 else None
        word = m.group(1).lower()
        if word in {"right", "outside", "curb"}:
            return 1
        if word in {"left", "inside", "median", "center", "centre"}:
            return lanes_each
        return min(2, lanes_each)

    def _speed(self, text: str) -> float:
        m = re.search(r"(\d{2,3})\s*(?:mph|mi/h)", text)
        if m:
            return float(m.group(1))
        m = re.search(r"(\d{2,3})\s*km/h", text)
        if m:
            return round(float(m.group(1)) / 1.609, 1)
        hit = self._speed_re.search(text)
        return self._speeds[hit.group(0).lower()] if hit else self._speeds["default"]

    def _env(self, sentences: list[str], pre: str, notes: list[str]) -> Env:
        env_sentences = [s for s in sentences if any(p.search(s) for _, p in self._time)] or []
        # Sentences that speak of the weather, or name weather other than "clear" (a verb in most narratives).
        env_sentences += [
            s
            for s in sentences
            if re.search(r"\b(weather|sky|skies)\b", s, re.IGNORECASE)
            or any(p.search(s) for w, p in self._weather if w != "Clear")
            or self._clear_sky.search(s)
        ]
        # (Sentences come without their full stops: joined with one again, a negation or an "after the crash" in one
        # sentence does not reach into the next, "there is no lighting. Snow showers were passing".)
        env_text = ". ".join(dict.fromkeys(env_sentences))
        time = "Not mentioned"
        # Only before the impact's aftermath does the clock tell the crash's time: a later "0915 hours" or "the
        # following morning" is the ambulance's or the hospital's.
        # The light condition ("dark", "daylight") says more than the clock ("early morning hours under dark
        # conditions" is a night); otherwise the first cue wins.
        hits = []
        for t, p in self._time:
            light = next(
                (
                    m
                    for m in p.finditer(env_text)
                    if m.group(0).lower() not in self._clock_words
                    and not _BEGAN_OR_ENDED.search(env_text, max(0, m.start() - 24), m.start())
                ),
                None,
            )
            clock = (
                None if light else next((m for m in p.finditer(pre) if m.group(0).lower() in self._clock_words), None)
            )
            if light or clock:
                hits.append((light is None, (light or clock).start(), t))  # type: ignore[union-attr]
        # A clock time ("at 9:50 p.m.", "0545 hours" in January) says more than a clock word ("earlier in the
        # afternoon", "a January morning"); a light condition says more than either.
        best = min(hits) if hits else None
        if best is None or best[0]:
            # (A sentence after the aftermath that says when the crash occurred, "The crash occurred shortly after 2200
            # hours", tells its time too.)
            stated = [s for s in sentences if _CRASH_OCCURRED.search(s) and _CLOCK.search(s)]
            clock_text = pre if _CLOCK.search(pre) or not stated else stated[0]
            time = self._clock_time(clock_text, notes, month_text=" ".join(sentences)) or (best[2] if best else time)
        else:
            time = best[2]
        weather = "Not mentioned"
        # Snow said to cover the road ("snow covered", "slid on the snow") and nothing said of the sky: the annotators
        # write the snow; with the sky told ("the sky was clear ... V1 slid on the snow"), they write the sky.
        snow_on_road = False
        for w, p in self._weather:
            found = False
            for m in p.finditer(env_text):
                if (
                    _NEGATED.search(env_text, max(0, m.start() - 16), m.start())
                    or _EARLIER.match(env_text, m.end())
                    or _ENDED.match(env_text, m.end())
                    or _AFTERWARDS.match(env_text[m.end() : m.end() + 160])
                ):
                    continue
                if w == "Snowy" and not _FALLING.match(env_text, m.end()):
                    # (the noun itself, not "on the snowy morning"; nor snow said to fall later in its clause, "Heavy
                    # snow covered the road and continued to fall")
                    on_road = (
                        m.group(0).lower() == "snow"
                        and bool(
                            _SNOW_COVERING.match(env_text, m.end())
                            or _ON_THE_SNOW.search(env_text, max(0, m.start() - 16), m.start())
                        )
                        and not _FALLS_LATER.match(env_text, m.end())
                    )
                    if on_road or (
                        _SNOW_LYING_BEFORE.search(env_text, max(0, m.start() - 24), m.start())
                        or _SNOW_LYING_AFTER.match(env_text, m.end())
                    ):
                        snow_on_road = snow_on_road or on_road
                        continue
                found = True
                break
            if found:
                weather = w
                break
        # Snow on the road gives way only to a sky the narrative tells (overcast, cloudy, "the sky was clear"): any
        # other cue (wipers, wind, a bare "clear") leaves the snow the weather.
        if snow_on_road and not (
            weather in {"Overcast", "Cloudy"} or (weather == "Clear" and self._clear_sky.search(env_text))
        ):
            weather = "Snowy"
        if time == "Not mentioned" and self._dark_by_lamps(pre, weather):
            notes.append("no light condition or clock named; the road's or the drivers' lamps say it was dark")
            time = "Nighttime"
        if weather == "Clear" and time == "Nighttime":
            notes.append("a clear night: no weather to render, so the weather is left unset")
            weather = "Not mentioned"
        return Env(time=time, weather=weather)  # type: ignore[arg-type]

    @staticmethod
    def _dark_by_lamps(text: str, weather: str) -> bool:
        """A road without lights, headlamp beams seen, or (not in rain, snow or fog) drivers' own lamps on."""
        if _UNLIT_ROAD.search(text) or _LAMP_BEAMS.search(text):
            return True
        return weather not in {"Rainy", "Snowy", "Foggy"} and any(
            not _LAMPS_DENIED.search(text, max(0, m.start() - 30), m.start()) for m in _OWN_LAMPS.finditer(text)
        )

    @staticmethod
    def _clock_time(text: str, notes: list[str], month_text: str | None = None) -> str | None:
        """Day or night from a clock time ("at 2130 hours", "at 9:30 p.m."), for a narrative that names no light
        condition; None for the hours around sunrise and sunset."""
        m = _CLOCK.search(text)
        if not m:
            return None
        if m.group("hhmm"):
            hour, minute = int(m.group("hhmm")), int(m.group("mm"))
        elif m.group("hh24"):
            hour, minute = int(m.group("hh24")), int(m.group("mm24"))
        else:
            hour = int(m.group("h")) % 12 + (12 if m.group("ampm").lower() == "p" else 0)
            minute = int(m.group("m") or 0)
        time = "Daytime" if hour in _DAY_HOURS else "Nighttime" if hour in _NIGHT_HOURS else None
        month = _month(text) or (_month(month_text) if month_text else None)
        if time is None and month is not None:
            sunrise, sunset = _SUN_BY_MONTH[month]
            time = "Daytime" if sunrise <= 60 * hour + minute < sunset else "Nighttime"
            notes.append(
                f"no light condition named; {m.group(0).strip()} in {_MONTHS[month - 1].title()} is read as "
                f"{time.lower()} (sunrise about {sunrise // 60}:{sunrise % 60:02d}, sunset about "
                f"{sunset // 60}:{sunset % 60:02d})"
            )
        elif time:
            notes.append(f"no light condition named; {m.group(0).strip()} is read as {time.lower()}")
        return time

    @staticmethod
    def _collisions(sentences: list[str], vehicles: set[str]) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        seen: set[frozenset[str]] = set()
        for s in sentences:
            if not _STRIKE.search(s):
                continue
            ids = [f"V{m}" for m in _VEHICLE_ID.findall(s)]
            ordered = list(dict.fromkeys(i for i in ids if i in vehicles))
            if len(ordered) < 2:
                continue
            pair = (ordered[0], ordered[1])
            if frozenset(pair) not in seen:
                seen.add(frozenset(pair))
                pairs.append(pair)
        return pairs

    # -- 5. self-check ---------------------------------------------------------------------------
    @staticmethod
    def _validate(scenario: Scenario) -> Scenario:
        rt = scenario.road_network.road_type
        for a in scenario.actors:
            if rt == "Merge" and a.initial_position not in {"Main road", "On-ramp"}:
                raise ScenarioError(f"{scenario.case_id}: {a.id} at {a.initial_position} on a merge")
            if rt != "Merge" and a.initial_position in {"Main road", "On-ramp"}:
                raise ScenarioError(f"{scenario.case_id}: {a.id} at {a.initial_position} on a {rt} road")
        return Scenario.model_validate(scenario.model_dump())


def _month(text: str) -> int | None:
    """The month a narrative names ("on December 12", "a December evening", "May 3"), or the middle month of a named
    season ("a winter evening": January, "summer": July)."""
    m = _MONTH.search(text)
    if m is None:
        return None
    if m.group("season"):
        return 1 if m.group("season").lower() == "winter" else 7
    if m.group("may"):
        return 5
    return _MONTHS.index(m.group("month").lower()) + 1
