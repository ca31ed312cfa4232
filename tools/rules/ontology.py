"""The MR ontology: road types, manipulations and expected behaviours, per region.

The packaged file (``tools/data/ontology.yaml``) holds AutoMT's vocabulary. Its ``m_agent_prompt``
section is the core vocabulary every region uses; ``germany`` and ``california`` add region terms.
Users extend it with their own YAML file of the same shape (``drivemt --ontology FILE`` or the
``ontology_file`` config key); user terms are merged into the section they name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from tools.common.text import contains_tokens, normalise_phrase, tokens
from tools.errors import OntologyError, UnknownRegionError
from tools.rules.models import Verb

__all__ = [
    "BEHAVIORS",
    "CORE_SECTION",
    "Category",
    "Field",
    "Ontology",
    "Term",
    "Verb",
    "Vocabulary",
    "load_ontology",
]

CORE_SECTION = "m_agent_prompt"
"""Name of the region-independent section in the ontology file."""

Field = Literal["road_type", "manipulation", "expected_behavior"]
Category = Literal["road_type", "traffic_infrastructure", "object", "environment", "behavior"]

BEHAVIORS: tuple[str, ...] = ("slow down", "turn left", "turn right", "keep current")
"""The four expected behaviours of AutoMT's MRs."""

_CATEGORY_VERB: dict[str, Verb] = {
    "traffic_infrastructure": "adds",
    "object": "adds",
    "environment": "replaces",
}


@dataclass(frozen=True)
class Term:
    """One ontology term.

    Attributes:
        text: The term as the ontology spells it.
        category: Which list it comes from.
        section: The ontology section (``m_agent_prompt``, ``germany``, ``california`` or a user one).
    """

    text: str
    category: Category
    section: str

    @property
    def field(self) -> Field:
        """The MR field this term fills."""
        if self.category == "road_type":
            return "road_type"
        if self.category == "behavior":
            return "expected_behavior"
        return "manipulation"

    @property
    def verb(self) -> Verb | None:
        """The verb AutoMT uses with this manipulation (``None`` for road types and behaviours)."""
        return _CATEGORY_VERB.get(self.category)

    @property
    def is_core(self) -> bool:
        """Whether the term is in the region-independent core vocabulary."""
        return self.section == CORE_SECTION

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """Folded tokens of the term."""
        return tokens(self.text)

    @cached_property
    def normalised(self) -> str:
        """Normalised spelling, used as the canonical key."""
        return normalise_phrase(self.text)


@dataclass(frozen=True)
class Vocabulary:
    """The terms one region may use: the core section plus that region's section.

    Attributes:
        region: Region name, or ``core`` for the core vocabulary alone.
        terms: Every term, core terms first, duplicates (by normalised form) removed.
    """

    region: str
    terms: tuple[Term, ...]

    def of(self, *categories: Category) -> tuple[Term, ...]:
        """Terms of the given categories."""
        return tuple(t for t in self.terms if t.category in categories)

    @cached_property
    def road_types(self) -> tuple[Term, ...]:
        """Road-type terms."""
        return self.of("road_type")

    @cached_property
    def manipulations(self) -> tuple[Term, ...]:
        """Manipulation terms (infrastructure, objects, environment)."""
        return self.of("traffic_infrastructure", "object", "environment")

    @cached_property
    def behaviors(self) -> tuple[Term, ...]:
        """Expected-behaviour terms."""
        return self.of("behavior")

    def terms_for(self, field_: Field) -> tuple[Term, ...]:
        """Terms that fill one MR field."""
        if field_ == "road_type":
            return self.road_types
        if field_ == "manipulation":
            return self.manipulations
        return self.behaviors

    @cached_property
    def _by_normalised(self) -> dict[tuple[Field, str], Term]:
        return {(t.field, t.normalised): t for t in self.terms}

    def lookup(self, field_: Field, phrase: str) -> Term | None:
        """The term whose normalised form equals the phrase's, if any."""
        return self._by_normalised.get((field_, normalise_phrase(phrase)))

    def canonical(self, field_: Field, phrase: str) -> str:
        """Canonical form of an MR field value, as the scorer and deduplication use it.

        The canonical form of a road type or manipulation is the longest ontology term of this
        vocabulary (case-insensitive, plurals folded) contained in the phrase as whole words; if
        none is contained, it is the normalised phrase. Behaviours are normalised phrases. This is
        a fixed rule, independent of any extractor, so a scorer built on it never grades itself.

        Args:
            field_: The MR field the phrase fills.
            phrase: The phrase, e.g. ``"the weather into fog environment"``.

        Returns:
            The normalised spelling of the chosen term, or of the phrase.
        """
        if field_ == "expected_behavior":
            return normalise_phrase(phrase)
        toks = tokens(phrase)
        best: Term | None = None
        for term in self.terms_for(field_):
            if best is not None and len(term.normalised) <= len(best.normalised):
                continue
            if contains_tokens(toks, term.tokens) >= 0:
                best = term
        return best.normalised if best is not None else normalise_phrase(phrase)


@dataclass
class Ontology:
    """All sections of the ontology, with a content hash for provenance.

    Attributes:
        sections: Section name -> {category -> list of term texts}.
        sources: Where the sections were read from.
    """

    sections: dict[str, dict[Category, list[str]]]
    sources: list[str] = field(default_factory=list)

    @property
    def regions(self) -> list[str]:
        """Region names (every section but the core one), plus ``core``."""
        return [*sorted(s for s in self.sections if s != CORE_SECTION), "core"]

    @cached_property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON of every section (first 16 hex digits)."""
        blob = json.dumps(self.sections, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def vocabulary(self, region: str) -> Vocabulary:
        """The vocabulary of a region: core terms plus the region's own.

        Args:
            region: A region name (``germany``, ``california`` ...) or ``core``.

        Raises:
            UnknownRegionError: If the ontology has no such section.
        """
        key = region.strip().lower()
        if key not in self._vocabularies:
            if key != "core" and key not in self.sections:
                raise UnknownRegionError(region, self.regions)
            names = [CORE_SECTION] if key == "core" else [CORE_SECTION, key]
            seen: set[tuple[str, str]] = set()
            terms: list[Term] = []
            for name in names:
                for category, texts in self.sections.get(name, {}).items():
                    for text in texts:
                        term = Term(text=text, category=category, section=name)
                        dedup = (term.field, term.normalised)
                        if dedup in seen or not term.normalised:
                            continue
                        seen.add(dedup)
                        terms.append(term)
            self._vocabularies[key] = Vocabulary(region=key, terms=tuple(terms))
        return self._vocabularies[key]

    @cached_property
    def _vocabularies(self) -> dict[str, Vocabulary]:
        return {}

    def extended(self, other: Ontology) -> Ontology:
        """A new ontology with ``other``'s terms merged into the sections they name."""
        merged: dict[str, dict[Category, list[str]]] = {
            s: {c: list(v) for c, v in cats.items()} for s, cats in self.sections.items()
        }
        for section, cats in other.sections.items():
            target = merged.setdefault(section, {})
            for category, texts in cats.items():
                existing = target.setdefault(category, [])
                known = {normalise_phrase(t) for t in existing}
                existing.extend(t for t in texts if normalise_phrase(t) not in known)
        return Ontology(sections=merged, sources=[*self.sources, *other.sources])


def _parse_section(name: str, raw: Any, source: str) -> dict[Category, list[str]]:
    if not isinstance(raw, Mapping):
        raise OntologyError(source, f"section {name!r} must be a mapping")
    out: dict[Category, list[str]] = {}

    def strings(value: Any, where: str) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise OntologyError(source, f"{name}.{where} must be a list of strings")
        return [v.strip() for v in value if v.strip()]

    out["road_type"] = strings(raw.get("road_types"), "road_types")
    manipulations = raw.get("manipulations") or {}
    if not isinstance(manipulations, Mapping):
        raise OntologyError(source, f"{name}.manipulations must be a mapping")
    adds = manipulations.get("adds") or {}
    replaces = manipulations.get("replaces") or {}
    if not isinstance(adds, Mapping) or not isinstance(replaces, Mapping):
        raise OntologyError(source, f"{name}.manipulations.adds/replaces must be mappings")
    out["traffic_infrastructure"] = strings(adds.get("traffic_infrastructure"), "adds.traffic_infrastructure")
    out["object"] = strings(adds.get("object"), "adds.object")
    out["environment"] = strings(replaces.get("environment"), "replaces.environment")
    out["behavior"] = strings(raw.get("expected_behaviors"), "expected_behaviors")
    unknown = set(raw) - {"road_types", "manipulations", "expected_behaviors"}
    if unknown:
        raise OntologyError(source, f"section {name!r} has unknown keys: {', '.join(sorted(unknown))}")
    return {c: v for c, v in out.items() if v}


def _parse(data: Any, source: str) -> Ontology:
    if not isinstance(data, Mapping) or not data:
        raise OntologyError(source, "expected a mapping of sections (m_agent_prompt, germany, ...)")
    sections: dict[str, dict[Category, list[str]]] = {}
    for name, raw in data.items():
        key = "m_agent_prompt" if str(name).lower() in {"core", CORE_SECTION} else str(name).lower()
        sections[key] = _parse_section(key, raw, source)
    return Ontology(sections=sections, sources=[source])


def load_ontology(extra: Iterable[Path | str] = ()) -> Ontology:
    """Load the packaged ontology, extended by user files.

    Args:
        extra: Paths of user ontology files (same YAML shape as the packaged one; a ``core``
            section extends the core vocabulary).

    Returns:
        The merged ontology.

    Raises:
        OntologyError: If a file is missing or malformed.
    """
    packaged = resources.files("tools.data").joinpath("ontology.yaml")
    onto = _parse(yaml.safe_load(packaged.read_text(encoding="utf-8")), "packaged ontology.yaml")
    for path in extra:
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise OntologyError(str(p), str(exc)) from exc
        onto = onto.extended(_parse(data, str(p)))
    return onto
