"""Road types of driving cases as canonical ontology terms, and the table that maps each region's words onto them.

The ontology's core section names the road types an MR may be about ("any roads", "intersection",
"crosswalk", "bus stopping", "railroad crossing", "school area", ...); Germany and California name the same
places their own way ("Level crossing", "Railroad Crossings", "School Zones", "All roads"). A case's road type
and an MR's road type are compared as canonical terms: an MR for "any roads" fits every case, otherwise the
terms must be equal. A straight or curved road with nothing special is "any roads".
"""

from __future__ import annotations

from tools.common.text import normalise_phrase

__all__ = [
    "ANY_ROADS",
    "CANONICAL_ROAD_TYPES",
    "ROAD_TYPE_SYNONYMS",
    "canonical_road_type",
    "road_types_compatible",
]

ANY_ROADS = "any roads"

CANONICAL_ROAD_TYPES: tuple[str, ...] = (
    ANY_ROADS,
    "intersection",
    "crosswalk",
    "bus stopping",
    "railroad crossing",
    "school area",
    "alleys",
    "field path",
    "port area",
    "industrial area",
    "residential area",
    "pedestrian zone",
    "motorway",
    "tunnel",
    "work zone",
    "roundabout",
    "on-ramp",
    "off-ramp",
    "forest path",
    "footpath",
    "bicycle path",
    "hard shoulder",
)
"""Canonical road types: the ontology core's ten, then the regions' own places that have no core term."""

ROAD_TYPE_SYNONYMS: dict[str, str] = {
    # Germany (StVO, as in the ontology's germany section)
    "all roads": ANY_ROADS,
    "level crossing": "railroad crossing",
    "railway crossing": "railroad crossing",
    "motorway": "motorway",
    "autobahn": "motorway",
    "bus stop": "bus stopping",
    "bus stops": "bus stopping",
    # California (DMV handbook, as in the ontology's california section)
    "intersections": "intersection",
    "crosswalks": "crosswalk",
    "unmarked crosswalk": "crosswalk",
    "marked crosswalk": "crosswalk",
    "pedestrian crossing": "crosswalk",
    "zebra crossing": "crosswalk",
    "school zones": "school area",
    "school zone": "school area",
    "railroad crossings": "railroad crossing",
    "freeways": "motorway",
    "freeway": "motorway",
    "highway": "motorway",
    "roundabouts": "roundabout",
    "alley": "alleys",
    "on-ramps": "on-ramp",
    "off-ramps": "off-ramp",
    "work zones": "work zone",
    # Shapes of road a dataset or the synthetic world names
    "straight": ANY_ROADS,
    "straight road": ANY_ROADS,
    "curve": ANY_ROADS,
    "curved road": ANY_ROADS,
    "road": ANY_ROADS,
    "roads": ANY_ROADS,
    "t-junction": "intersection",
    "t junction": "intersection",
    "junction": "intersection",
    "crossroads": "intersection",
}
"""Each region's (and each dataset's) words for a road type -> the canonical term."""

_BY_NORMALISED: dict[str, str] = {normalise_phrase(t): t for t in CANONICAL_ROAD_TYPES} | {
    normalise_phrase(k): v for k, v in ROAD_TYPE_SYNONYMS.items()
}


def canonical_road_type(phrase: str | None) -> str | None:
    """The canonical road type of a phrase ("Level crossing" -> "railroad crossing"), or None when unknown.

    Args:
        phrase: A road type as an ontology region, a dataset or a model names it.
    """
    if not phrase or not phrase.strip():
        return None
    key = normalise_phrase(phrase)
    if key in _BY_NORMALISED:
        return _BY_NORMALISED[key]
    for drop in ("the ", "approaching ", "near "):  # "approaching a crosswalk" and the like
        if key.startswith(drop) and key[len(drop) :] in _BY_NORMALISED:
            return _BY_NORMALISED[key[len(drop) :]]
    return None


def road_types_compatible(mr_road_type: str | None, case_road_type: str | None) -> bool:
    """Whether an MR about ``mr_road_type`` fits a case on ``case_road_type``.

    An MR for "any roads" fits every case; otherwise both must be the same canonical term. A case whose road
    type is unknown fits only "any roads" MRs.
    """
    mr = canonical_road_type(mr_road_type)
    if mr == ANY_ROADS:
        return True
    case = canonical_road_type(case_road_type)
    return mr is not None and case is not None and mr == case
