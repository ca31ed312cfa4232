"""The offline rule parser: ontology-grounded extraction, not a language model.

It follows the order of AutoMT's prompt (behaviour, then road type, then the manipulation and its
verb) with deterministic means:

* the lexicon (``tools/data/lexicon.yaml``) and the ontology terms are found in the rule's words;
* the manipulation is the term mentioned where the rule states its trigger ("if", "when", "at" ...),
  preferring specific terms and early mentions, and avoiding lists of examples and exceptions;
* the road type is the place the rule names, else the place its manipulation implies, else
  "any roads";
* the behaviour comes from weighted cue phrases ("walking speed" -> slow down, "must not be
  overtaken" -> keep current);
* where no term is mentioned at all, the rule's clauses are compared with every manipulation term by
  MiniLM similarity (nearest label), if an embedder is given.

Results name this parser ``offline:ontology-grounded`` so nobody mistakes them for an LLM's.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from tools.common.similarity import Embedder, LabelIndex
from tools.common.text import normalise_phrase, tokens
from tools.rules.lexicon import (
    Lexicon,
    Match,
    Pattern,
    PhraseMatcher,
    Speller,
    Token,
    english_words,
    load_lexicon,
    tokenize_rule,
)
from tools.rules.models import MRCandidate, MRFields, TrafficRule
from tools.rules.ontology import Field, Ontology, Term, Vocabulary

__all__ = ["OFFLINE_PARSER_NAME", "OntologyGroundedParser", "RuleAnalysis", "behaviour_cues"]

OFFLINE_PARSER_NAME = "offline:ontology-grounded"

_ANY_ROADS = "any roads"
_MOTOR_VEHICLE = "motor vehicle"
# The vehicles whose kind their own clause can say: a motor vehicle, the one in front ("the car ahead has stopped"), or
# the plain vehicle a region's list calls them (see plain_vehicles in the lexicon).
_SAID_VEHICLES = frozenset({_MOTOR_VEHICLE, "multi-track motor vehicle", "driver in front", "vehicle"})
# Vehicles whose turn, when their own clause tells of it, makes them a turning vehicle, the plain "vehicles" too ("Large
# vehicles swing wide when turning right"). (A bus that stops is at its stop.)
_TURNING_KINDS = _SAID_VEHICLES | {"public transport bus"}
_LIGHTING = re.compile(r"light|dark|glare|night|dusk|dawn")
_SURFACE = re.compile(r"road|ice|mud|gravel|pothole|slippery|flood")


@dataclass
class Mention:
    """A term found in the rule."""

    term: Term
    start: int
    end: int
    gap: int
    via: str
    surface: str
    score: float = 0.0
    ruled_out: bool = False  # named after "other than", "without" and the like
    aside: bool = False  # named in an aside ("such as", "especially"): an example or a circumstance, not the subject
    absent: bool = False  # said not to be there ("if there is no limit line"): ruled out too


@dataclass
class RuleAnalysis:
    """What the parser found in one rule; also what the offline validator checks against."""

    rule: TrafficRule
    tokens: list[Token]
    manipulations: list[Mention]
    road_types: list[Mention]
    behavior_scores: dict[str, float]
    behavior_evidence: dict[str, list[str]]
    semantic: list[tuple[str, float]] = field(default_factory=list)
    # Each vehicle said to flash coloured lights of its own (normalised term -> the rule's colour word, "amber").
    own_lights: dict[str, str] = field(default_factory=dict)


def _term_sets(vocabulary: Vocabulary, table: dict[str, list[str]], kind: Field) -> dict[str, set[str]]:
    """A lexicon table of manipulation terms to lists of terms of ``kind``, in the region's normalised spelling; a
    term the region does not have is left out (a key, with its list, or one name of a list)."""
    out: dict[str, set[str]] = {}
    for key, names in table.items():
        term = vocabulary.lookup("manipulation", key)
        if term is not None:
            out[term.normalised] = {t.normalised for name in names if (t := vocabulary.lookup(kind, name)) is not None}
    return out


class _RegionModel:
    """Patterns compiled for one region's vocabulary."""

    def __init__(self, vocabulary: Vocabulary, lexicon: Lexicon, own: frozenset[str] | set[str] = frozenset()) -> None:
        self.vocabulary = vocabulary
        self.lexicon = lexicon
        # Core terms first; lexicon aliases next (they map region spellings such as "Fog" onto the
        # core term "fog environment"); region terms fill in what is left.
        manip_patterns: dict[tuple[str, ...], Pattern] = {}
        for term in vocabulary.manipulations:
            if term.is_core:
                manip_patterns.setdefault(term.tokens, Pattern(term.tokens, term.normalised, "term"))
        for target, aliases in lexicon.manipulation_aliases.items():
            resolved = vocabulary.lookup("manipulation", target)
            if resolved is None:
                continue
            for alias in aliases:
                words = tokens(alias)
                if words and words not in manip_patterns:
                    manip_patterns[words] = Pattern(words, resolved.normalised, "alias")
        # A region weather or lighting term whose words all lie in a core one ("Rain" in "rain environment") is
        # that core term: AutoMT's MR prompt offers the core list, so its MRs use the core spelling. (Objects
        # are left alone: "Vehicle" lies in "stopped vehicle" without meaning it.)
        self.core_of: dict[str, str] = {}
        core_manips = [t for t in vocabulary.manipulations if t.is_core]
        for term in vocabulary.manipulations:
            if term.is_core or not term.tokens or term.category != "environment":
                continue
            wider = [c for c in core_manips if c.category == term.category and set(term.tokens) <= set(c.tokens)]
            if wider:
                self.core_of[term.normalised] = min(wider, key=lambda c: len(c.tokens)).normalised
        # A region term that holds a core term's words and more, and ends in the same head ("Flashing Red Light" over
        # "red light"), is that core term made specific: it ranks with the core terms, not after them. (A
        # "pedestrian signal" is a signal, no kind of pedestrian.)
        self.refines_core = {
            term.normalised
            for term in vocabulary.manipulations
            if not term.is_core
            and any(set(c.tokens) < set(term.tokens) and c.tokens[-1] == term.tokens[-1] for c in core_manips)
        }
        for core_name, names in lexicon.regional_names.items():
            core_term = vocabulary.lookup("manipulation", core_name)
            for name in names:
                named = vocabulary.lookup("manipulation", name)
                if core_term is not None and core_term.is_core and named is not None and not named.is_core:
                    self.refines_core.add(named.normalised)
        for term in vocabulary.manipulations:
            core = self.core_of.get(term.normalised)  # a mapped region term counts as an alias of the core one
            pattern = Pattern(term.tokens, core, "alias") if core else Pattern(term.tokens, term.normalised, "term")
            manip_patterns.setdefault(term.tokens, pattern)
        # A vehicle that the region's own list names only by its rider (California lists the bicyclist and no
        # bicycle) is its rider there: the region's handbook speaks of bicycles on the road as ridden.
        for vehicle, rider in lexicon.riders.items():
            vehicle_key, rider_key = normalise_phrase(vehicle), normalise_phrase(rider)
            if rider_key in own and vehicle_key not in own and vocabulary.lookup("manipulation", rider) is not None:
                for words, pattern in list(manip_patterns.items()):
                    if pattern.target == vehicle_key:
                        manip_patterns[words] = dataclasses.replace(pattern, target=rider_key)
        # Likewise a region whose own list names the plain vehicle and not these kinds of it (California's Vehicle,
        # and no Motor vehicle or Driver in front) speaks of cars, trucks and the car ahead as vehicles. (The kinds'
        # own names, "motor vehicles", stay theirs.)
        for plain, kinds in lexicon.plain_vehicles.items():
            plain_key = normalise_phrase(plain)
            if plain_key not in own or vocabulary.lookup("manipulation", plain) is None:
                continue
            for kind_key in {normalise_phrase(k) for k in kinds} - set(own):
                for words, pattern in list(manip_patterns.items()):
                    if pattern.target == kind_key and pattern.kind == "alias":
                        # (the kind it stood for stays known: "the car ahead" implies no oncoming vehicle)
                        manip_patterns[words] = dataclasses.replace(pattern, target=plain_key, kind=_PLAIN + kind_key)
        self.manipulation_matcher = PhraseMatcher(manip_patterns.values())
        # The region's term for an officer who directs traffic (what "traffic officer" names there), for a bare
        # "officer" who directs (see OntologyGroundedParser._directing_officer).
        officer = manip_patterns.get(("traffic", "officer"))
        self.officer = vocabulary.lookup("manipulation", officer.target) if officer is not None else None

        # Region road types map onto the core one the lexicon names for them (an ontology-level table).
        for core, region_terms in lexicon.region_road_types.items():
            resolved = vocabulary.lookup("road_type", core)
            for name in region_terms:
                region_term = vocabulary.lookup("road_type", name)
                if resolved is not None and region_term is not None and not region_term.is_core:
                    self.core_of[region_term.normalised] = resolved.normalised
        road_patterns: dict[tuple[str, ...], Pattern] = {}
        for term in vocabulary.road_types:
            road_patterns[term.tokens] = Pattern(
                term.tokens, self.core_of.get(term.normalised, term.normalised), "term"
            )
        for target, aliases in lexicon.road_type_aliases.items():
            resolved = vocabulary.lookup("road_type", target)
            if resolved is None:
                continue
            for alias in aliases:
                words = tokens(alias)
                existing = road_patterns.get(words)
                # Core terms keep their own spelling; aliases re-map region terms onto core ones.
                if existing is None or not self._is_core_road(existing.target):
                    road_patterns[words] = Pattern(words, resolved.normalised, "alias")
        self.road_matcher = PhraseMatcher(road_patterns.values(), compounds=True)

        # The ego's own words are written out whole: "drive in a high-occupancy vehicle lane" is no "drive a vehicle".
        self.ego_matcher = PhraseMatcher((Pattern(tokens(p), "ego", "ego") for p in lexicon.ego_phrases), max_gap=0)
        self.generic_roads = {tokens(w) for w in lexicon.generic_road_words}
        self.not_term_matcher = PhraseMatcher(
            (Pattern(tokens(p), "none", "none") for p in lexicon.not_terms), max_gap=0
        )
        self.not_cue_matcher = PhraseMatcher((Pattern(tokens(p), "none", "none") for p in lexicon.not_cues), max_gap=0)
        self.exception_cues = {tokens(p) for p in lexicon.exception_cues}
        self.cue_matcher = PhraseMatcher(
            (
                Pattern(tokens(phrase), behavior, "cue", weight)
                for behavior, cues in lexicon.behavior_cues.items()
                for phrase, weight in cues
            ),
            max_gap=1,
        )
        # Misspelt words of a rule ("pedestrains") are mended into the words the matchers look for.
        self.speller = Speller(
            (
                w
                for matcher in (self.manipulation_matcher, self.road_matcher, self.cue_matcher)
                for w in matcher.words()
            ),
            english_words(),
        )
        # Targets are the terms' normalised names, as the validator compares them ("Vehicle" is "vehicle").
        # (What a bare word implies only when nothing stronger does, "lanes" the vehicle in them, is kind "implied
        # last": it ranks after every other implied term.)
        self.implied_matcher = PhraseMatcher(
            Pattern(tokens(p), implied.normalised, kind)
            for table, kind in ((lexicon.implied_manipulations, "implied"), (lexicon.implied_last, "implied last"))
            for target, phrases in table.items()
            if (implied := vocabulary.lookup("manipulation", target)) is not None
            for p in phrases
        )
        # A generic road user ("vehicle") in a rule whose wording implies a specific one (right-of-way: the
        # oncoming vehicle) is that specific one.
        self.specialised: dict[str, str] = {}
        for target, generics in lexicon.specialised_generics.items():
            t = vocabulary.lookup("manipulation", target)
            for generic in generics:
                g = vocabulary.lookup("manipulation", generic)
                if t is not None and g is not None:
                    self.specialised[g.normalised] = t.normalised
        # A class of sign and the signs it stands for itself (see _shown_sign).
        self.sign_classes = _term_sets(vocabulary, lexicon.sign_classes, "manipulation")
        self.other_roads = _term_sets(vocabulary, lexicon.other_fitting_roads, "road_type")
        self.implied_roads: dict[str, str] = {}
        for manip, road in lexicon.implied_road_types.items():
            m = vocabulary.lookup("manipulation", manip)
            r = vocabulary.lookup("road_type", road)
            if m is not None and r is not None:
                self.implied_roads[m.normalised] = r.normalised
        # One-word triggers by word; longer ones ("in case") as phrases. A trigger word that opens a set phrase
        # ("at least", "at all times") is no trigger.
        self.trigger_words = {tokens(w)[0] for w in lexicon.trigger_words if len(tokens(w)) == 1}
        self.trigger_phrases = [tokens(w) for w in lexicon.trigger_words if len(tokens(w)) > 1]
        self.non_triggers = [tokens(w) for w in lexicon.non_trigger_phrases if tokens(w)]
        self.signalling = {t for w in lexicon.signalling_verbs for t in tokens(w)[:1]}
        self.animals = {t.normalised for name in lexicon.animal_terms if (t := vocabulary.lookup("manipulation", name))}
        self.carry_on = {
            t.normalised for name in lexicon.carry_on_terms if (t := vocabulary.lookup("manipulation", name))
        }
        self.secondary = [tokens(w) for w in lexicon.secondary_words if tokens(w)]
        self.exclusions = [tokens(w) for w in lexicon.exclusion_words if tokens(w)]
        self.defining = [tokens(w) for w in lexicon.defining_openers if tokens(w)]
        self.colour_words = {w: colour for colour, words in lexicon.signal_colours.items() for w in words}
        self.light_colours = {*self.colour_words, "flashing", "blinking"}  # words that make a light a coloured one
        self.signal_context = [tokens(w) for w in lexicon.signal_context]
        self.non_signal = {fold for n in lexicon.non_signal_nouns for fold in tokens(n)}

    def _is_core_road(self, normalised: str) -> bool:
        term = self.vocabulary.lookup("road_type", normalised)
        return term is not None and term.is_core

    def term(self, field_: str, normalised: str) -> Term:
        found = self.vocabulary.lookup(field_, normalised)  # type: ignore[arg-type]
        assert found is not None, normalised
        return found

    @cached_property
    def any_roads(self) -> Term:
        found = self.vocabulary.lookup("road_type", _ANY_ROADS)
        if found is None:  # a user ontology without the generic road type
            return Term(_ANY_ROADS, "road_type", "m_agent_prompt")
        return found


class OntologyGroundedParser:
    """Offline rule parser: lexicon + ontology terms + MiniLM nearest label. Not an LLM.

    Args:
        ontology: The MR ontology.
        lexicon: Traffic vocabulary (the packaged one by default).
        embedder: Optional text embedder for the nearest-label fallback.
        top_k: Candidates per rule (distinct manipulations).
        semantic_threshold: Least cosine similarity for a nearest-label manipulation.
    """

    kind = "offline"

    def __init__(
        self,
        *,
        ontology: Ontology,
        lexicon: Lexicon | None = None,
        embedder: Embedder | None = None,
        top_k: int = 3,
        semantic_threshold: float = 0.45,
    ) -> None:
        self.ontology = ontology
        self.lexicon = lexicon or load_lexicon()
        self.embedder = embedder
        self.top_k = top_k
        self.semantic_threshold = semantic_threshold
        self._regions: dict[str, _RegionModel] = {}
        self._label_indexes: dict[str, LabelIndex] = {}

    @property
    def name(self) -> str:
        """Parser name recorded with every candidate."""
        return OFFLINE_PARSER_NAME

    def region_model(self, region: str) -> _RegionModel:
        """Compiled patterns of a region (cached)."""
        key = region.lower()
        if key not in self._regions:
            own = {normalise_phrase(t) for texts in self.ontology.sections.get(key, {}).values() for t in texts}
            self._regions[key] = _RegionModel(self.ontology.vocabulary(key), self.lexicon, own)
        return self._regions[key]

    # -- analysis -------------------------------------------------------------------------------
    def analyse(self, rule: TrafficRule) -> RuleAnalysis:
        """Find every term, place and behaviour cue in one rule (no embeddings)."""
        model = self.region_model(rule.region)
        toks = model.speller.fix(tokenize_rule(rule.text))
        # Words that name no term where they stand ("blind spot", "turn signal") hide from every matcher; the
        # ego's own words ("your vehicle") hide from the manipulations.
        plain = frozenset(i for m in model.not_term_matcher.find(toks) for i in range(m.start, m.end))
        plain |= _dark_signals(toks)
        masked = plain | frozenset(i for m in model.ego_matcher.find(toks) for i in range(m.start, m.end))
        manip = [
            self._mention(model, "manipulation", m, toks) for m in model.manipulation_matcher.find(toks, masked=masked)
        ]
        # What "your" owns is the ego's ("turn on your emergency flashers", "check your mirrors"), not a manipulation.
        manip = [m for m in manip if not (m.start > 0 and toks[m.start - 1].word == "your")]
        # "a car behind a motorcycle" is behind that road user, not behind the ego.
        manip = [m for m in manip if not _behind_another(m, toks)]
        manip += self._colour_mentions(model, toks, masked)
        manip += self._elided_mentions(model, toks, manip)
        manip += self._directing_officer(model, toks, manip)
        manip = [self._blinking(model, m, toks) for m in manip]
        manip = [self._view_blocker(model, m, toks) for m in manip]
        roads = [self._mention(model, "road_type", m, toks) for m in model.road_matcher.find(toks, masked=plain)]
        roads = [m for m in roads if not (_general_manoeuvre(m, toks) or _forbidden_u_turn(m, toks))]
        manip = _drop_nested(manip, roads)
        manip = _drop_broken_compounds(manip, roads)
        manip = _drop_less_specific(manip)
        manip = _drop_spanning(manip)
        roads = _drop_broken_compounds(roads, manip)
        roads = _drop_nested(roads, manip)
        manip, roads = _drop_modifiers(manip, roads, toks), _drop_modifiers(roads, manip, toks)
        manip = self._resolve_heads(manip, toks)
        manip = _drop_sign_names(manip, toks, rule.text)
        # "a vehicle's emergency flashers": the owner only qualifies what follows it.
        starts = {m.start for m in manip}
        manip = [m for m in manip if not (toks[m.end - 1].raw.lower().endswith("'s") and m.end in starts)]
        for mention in manip:
            mention.score = self._score(model, mention, toks)
        for mention in roads:
            mention.score = self._score(model, mention, toks)
        _list_order(manip, toks, rule.text)
        # A vehicle's own flashing lights ("a tow truck with amber lights flashing") describe it: they are no rival.
        # Nor are road users listed as whom the rule speaks to ("Trucks, buses and cars must all obey a YIELD sign"),
        # or the motor vehicles a lane is for ("HOV lanes are reserved for buses and carpools").
        addressees = _addressees(manip, toks, rule.text) + _lane_users(manip, toks)
        own_lights: dict[str, str] = {}
        for mention in manip:
            owner = _own_light_of(mention, manip, toks)
            if owner is not None:
                colours = [t.raw.lower() for t in toks[mention.start : mention.end] if t.word in model.colour_words]
                if colours:
                    own_lights.setdefault(owner.term.normalised, colours[0])
            if mention in addressees or owner is not None:
                mention.aside = True
        for mention in manip:
            if (
                _fronted_circumstance(mention, manip, toks)
                or _kind_after_example(mention, manip, toks)
                or _changed_from(mention, manip, toks)
                or _marks_a_lane(mention, manip, toks)
                or _hiding_place(mention, manip, toks)
                or _whom_it_stopped_for(mention, manip, toks)
            ):
                mention.aside = True
        behaviors, evidence = self._behaviours(model, toks, rule.text)
        no_entry = _no_entry_sign(manip, toks)
        if no_entry is not None:
            behaviors["keep current"] = behaviors.get("keep current", 0.0) + 1.0
            evidence.setdefault("keep current", []).append(no_entry.surface)
        _stop_behind_a_stopped_vehicle(behaviors, evidence, manip, toks)
        return RuleAnalysis(rule, toks, manip, roads, behaviors, evidence, own_lights=own_lights)

    @staticmethod
    def _resolve_heads(mentions: list[Mention], toks: list[Token]) -> list[Mention]:
        """A bare head noun after a term that ends in it refers back to that term: "the bus" after "school
        buses" is the school bus, "the vehicle" after "an emergency vehicle" the emergency vehicle."""
        out: list[Mention] = []
        for m in mentions:
            if m.end - m.start != 1:
                out.append(m)
                continue
            word = toks[m.start].word
            earlier = [
                o
                for o in mentions
                if o.end <= m.start
                and len(o.term.tokens) > 1
                and o.term.tokens[-1] == word
                and o.term.normalised != m.term.normalised
            ]
            # A heading's bare plural ("Large Trucks") is the kind of it the body names ("a turning truck").
            later = [
                o
                for o in mentions
                if toks[m.start].sentence == 0
                and o.start >= m.end
                and o.gap == 0
                and o.end - o.start > 1
                and toks[o.end - 1].word == word
                and o.term.normalised != m.term.normalised
            ]
            o = earlier[-1] if earlier else later[0] if later else None
            if o is not None:
                m = Mention(o.term, m.start, m.end, m.gap, o.via, m.surface, m.score, m.ruled_out, m.aside)
            out.append(m)
        return out

    def _mention(self, model: _RegionModel, field_: str, m: Match, toks: list[Token]) -> Mention:
        surface = _span(toks[m.start : m.end])
        return Mention(model.term(field_, m.pattern.target), m.start, m.end, m.gap, m.pattern.kind, surface)

    def _elided_mentions(self, model: _RegionModel, toks: list[Token], found: list[Mention]) -> list[Mention]:
        """Terms whose head noun is shared with the next one ("emergency and road work vehicles" names emergency
        vehicles too): the word before "and"/"or" joined to the head of the mention after it."""
        out: list[Mention] = []
        for m in found:
            if m.start < 2 or m.end - m.start < 2 or toks[m.start - 1].word not in {"and", "or"}:
                continue
            mod, head = toks[m.start - 2], toks[m.end - 1]
            if mod.clause != head.clause:
                continue
            pair = [mod, dataclasses.replace(head, start=mod.end + 1, end=mod.end + 1 + len(head.raw))]
            for match in model.manipulation_matcher.find(pair):
                if match.start == 0 and match.end == 2:
                    term = model.term("manipulation", match.pattern.target)
                    surface = f"{mod.raw} ... {head.raw}"
                    out.append(Mention(term, m.start - 2, m.start - 1, 0, "elided", surface))
        return out

    @staticmethod
    def _directing_officer(model: _RegionModel, toks: list[Token], found: list[Mention]) -> list[Mention]:
        """A bare "officer" who directs traffic ("If an officer waves you through a red light, go"), in a rule that
        names no officer term: the region's traffic officer (the first such "officer" only)."""
        if model.officer is None or any("officer" in m.term.tokens for m in found):
            return []
        directing = _directing_sentences(toks)
        for i, t in enumerate(toks):
            if t.word == "officer" and t.sentence in directing and not any(m.start <= i < m.end for m in found):
                return [Mention(model.officer, i, i + 1, 0, "alias", t.raw)]
        return []

    @staticmethod
    def _blinking(model: _RegionModel, m: Mention, toks: list[Token]) -> Mention:
        """A signal colour said to blink or flash, a few words either side in its clause ("the signal only blinks
        amber", "red lights that flash"), or after the light's own verb and its adverbs ("the red lights are no longer
        flashing"), is the region's flashing light of that colour, where it has one."""
        if not m.term.normalised.endswith(" light") or m.term.normalised.startswith("flashing"):
            return m
        clause = toks[m.start].clause
        near = {t.word for t in toks[max(0, m.start - 3) : m.end + 3] if t.clause == clause}
        after = toks[m.end : m.end + 4]
        if len(after) == 4 and {t.word for t in after[:3]} <= _BE_AND_ADVERBS and len({t.clause for t in after}) == 1:
            near.add(after[3].word)
        flashing = model.vocabulary.lookup("manipulation", f"flashing {m.term.normalised}")
        if flashing is None or not near & _BLINK_WORDS:
            return m
        return dataclasses.replace(m, term=flashing)

    @staticmethod
    def _view_blocker(model: _RegionModel, m: Mention, toks: list[Token]) -> Mention:
        """Parked cars listed with buildings, trees or hedges ("trees, bushes, buildings or parked cars can block the
        view") are one more thing in the driver's line of sight: the region's obstacle, where it has one."""
        # (a stopped vehicle named by a word for parking, or any vehicle said to be parked: "parked trucks")
        parked = m.term.normalised == "stopped vehicle" and any(
            t.word.startswith("park") for t in toks[m.start : m.end]
        )
        if not (parked or (m.start > 0 and toks[m.start - 1].word == "parked")):
            return m
        obstacle = model.vocabulary.lookup("manipulation", "obstacle")
        sentence = toks[m.start].sentence
        near = {t.word for t in toks[max(0, m.start - 8) : m.end + 6] if t.sentence == sentence}
        sight = {t.word for t in toks if t.sentence == sentence} & _SIGHT_WORDS
        if obstacle is None or not near & _VIEW_BLOCKERS or not sight:
            return m
        return dataclasses.replace(m, term=obstacle)

    def _colour_mentions(self, model: _RegionModel, toks: list[Token], masked: frozenset[int]) -> list[Mention]:
        words = [t.word for t in toks]
        if not _has_any(words, model.signal_context):
            return []
        out: list[Mention] = []
        for i, tok in enumerate(toks):
            colour = model.colour_words.get(tok.word)
            if colour is None or i in masked:
                continue
            # the noun the colour describes, a few words on in its phrase ("red, a STOP sign", "yellow and black
            # signs"; not "on red unless a sign forbids it"), before any signal noun
            described = ""
            for w in words[i + 1 : i + 4]:
                if w in model.trigger_words or w in _CLAUSE_WORDS:
                    break
                if w in model.non_signal or w in _SIGNAL_NOUNS or w == "arrow":
                    described = w
                    break
            if described in model.non_signal:
                continue
            near = words[max(0, i - 3) : i + 3]
            kind = "arrow" if "arrow" in near else "light"
            term = model.vocabulary.lookup("manipulation", f"{colour} {kind}") or model.vocabulary.lookup(
                "manipulation", f"{colour} light"
            )
            if term is not None:
                out.append(Mention(term, i, i + 1, 0, "colour", tok.raw))
        return out

    def _score(self, model: _RegionModel, m: Mention, toks: list[Token]) -> float:
        words = [t.word for t in toks]
        sentence = toks[m.start].sentence
        score = 0.15 * len(m.term.tokens) - 0.3 * sentence - 0.01 * min(m.start, 80) - 0.25 * m.gap
        if m.via in {"term", "elided"}:  # the ontology term itself, or it with its head noun shared
            score += 0.2
        if m.term.category == "environment":
            score += 0.8
            if _after_the_weather(m, toks):
                score -= 1.5
                m.aside = True
        lo = m.start
        while lo > 0 and toks[lo - 1].sentence == sentence and m.start - lo < 10:
            lo -= 1
        before = words[lo : m.start]
        set_phrase = {
            lo + i for p in model.non_triggers for i in range(len(before)) if tuple(before[i : i + len(p)]) == p
        }
        # After a signalling verb ("A STOP sign means make a full stop at the limit line") the words are what the
        # driver must do: a place word there is no trigger of the rule.
        consequence = any(w in model.signalling for w in before)
        # "stop at the limit line", "wait behind the crosswalk": where to stop is part of what to do, not a trigger.
        stop_place = {lo + i for i in range(1, len(before)) if before[i - 1] in _STOP_VERBS}
        if not consequence and (
            any(
                w in model.trigger_words and lo + i not in set_phrase and lo + i not in stop_place
                for i, w in enumerate(before)
            )
            or _has_any(before, model.trigger_phrases)
        ):
            score += 1.0
        # "This includes roller skates, a skateboard": a sentence that opens by listing what the previous one's
        # subject covers names the rule's subject by example, not an aside.
        at_sentence_start = lo == 0 or toks[lo - 1].sentence != sentence
        defining = at_sentence_start and any(tuple(before[: len(d)]) == d for d in model.defining)
        # An aside or exclusion in a sentence's opening phrase ends with it: in "At a T intersection without STOP or
        # YIELD signs, vehicles on the through road have the right-of-way" the vehicles are no exception. (Elsewhere
        # a comma goes on with a list: "such as seniors, people with disabilities".)
        opening = toks[lo].clause if toks[lo].clause != toks[m.start].clause and at_sentence_start else None
        own = [t.word for t in toks[lo : m.start] if t.clause != opening]
        # "a sign shaped like a triangle" describes the sign: that "like" gives no example.
        own = [w for i, w in enumerate(own) if not (w == "like" and i > 0 and own[i - 1] in {"shaped", "shape"})]
        # What a person holds ("a crossing guard holding a STOP sign", "a flagger holding a SLOW paddle") is theirs.
        held = bool(set(own[-4:]) & _HOLDING)
        if held or (_has_any(own, model.secondary) and not defining):
            score -= 1.5
            m.aside = True
        # "... dart into the road without looking, mostly near schools": "without" and a gerund that ends its clause
        # tell how one acts and rule nothing out.
        window = [
            t.word
            for i, t in enumerate(toks[max(lo, m.start - 6) : m.end], start=max(lo, m.start - 6))
            if t.clause != opening and not (_without_doing(toks, i) and not m.start <= i + 1 < m.end)
        ]
        # "with or without a crosswalk" rules nothing out.
        window = " ".join(window).replace("with or without", "with or").split()
        m.absent = _absent(m, toks)
        # "Do not drive to the left of them except to turn left into a driveway or at an intersection": an exception
        # runs to the end of its clause.
        excepted = "except" in [t.word for t in toks[lo : m.start] if t.clause == toks[m.start].clause]
        if m.absent or excepted or _has_any(window, model.exclusions):
            score -= 3.0  # "other than a vehicle or bicycle", "without stop signs": named only to be ruled out
            m.ruled_out = True
        if sentence == 0 and toks[m.start].clause == toks[0].clause:
            score += 0.5
        # "A limit line is a wide white line ... where to stop for a STOP sign", "Motorcyclists are harder to see in
        # rain": the term a sentence opens with as the subject of its "is" or "are" is what the sentence is about.
        if (
            set(before) <= {"a", "an", "the"}
            and not set(tokens(m.surface)) <= _GENERIC_VEHICLE_WORDS  # "The car is not allowed to ..."
            and m.end < len(toks)
            and toks[m.end].word in {"is", "are"}
            and not m.ruled_out
        ):
            score += 1.0
        return score

    def _behaviours(
        self, model: _RegionModel, toks: list[Token], text: str
    ) -> tuple[dict[str, float], dict[str, list[str]]]:
        scores: dict[str, float] = {}
        evidence: dict[str, list[str]] = {}
        # Words that tell of others, not the ego ("lanes of slow or stopped traffic"), are no cue; a longer cue takes
        # the words of the shorter ones inside it.
        taken: set[int] = {i for m in model.not_cue_matcher.find(toks) for i in range(m.start, m.end)}
        kept = []
        for m in sorted(model.cue_matcher.find(toks), key=lambda m: -(m.end - m.start)):
            span = set(range(m.start, m.end))
            if not span & taken:
                taken |= span
                kept.append(m)
        # A stop said not to be needed after the rule has asked to slow or stop ("You must stop for a school bus ...,
        # but you do not have to stop if it is across a divided highway") is the rule's exception: no cue. (A heading
        # line, "Stopping for School Buses", and a STOP sign ask nothing.)
        first_line = text.split("\n", 1)[0]
        heading = (
            len(first_line)
            if "\n" in text and _HEADING_LINE.fullmatch(first_line) and len(first_line.split()) <= 6
            else -1
        )
        slowing = [
            m.start
            for m in kept
            if m.pattern.target == "slow down"
            and toks[m.start].start > heading
            and not (m.end < len(toks) and toks[m.end].word in {"sign", "arm"})
        ]
        for m in kept:
            if m.pattern.words in model.exception_cues and (
                any(_exception_after(toks, i, m.start) for i in slowing) or _no_statement(toks, m.start, m.end)
            ):
                continue
            b = m.pattern.target
            scores[b] = scores.get(b, 0.0) + m.pattern.weight * (0.5 if _after_then(toks, m.start) else 1.0)
            evidence.setdefault(b, []).append(_span(toks[m.start : m.end]))
        return scores, evidence

    # -- decisions ------------------------------------------------------------------------------
    def _ranked_manipulations(self, model: _RegionModel, analysis: RuleAnalysis) -> list[Mention]:
        best: dict[str, Mention] = {}
        counts: dict[str, int] = {}
        for m in analysis.manipulations:
            key = m.term.normalised
            counts[key] = counts.get(key, 0) + (not m.ruled_out)  # a mention ruled out adds no weight
            if key not in best or m.score > best[key].score:
                best[key] = m
        for key, m in best.items():
            m.score += 0.3 * max(0, counts[key] - 1)
        ranked = sorted(best.values(), key=lambda m: -m.score)
        # A generic vehicle whose own clause names its kind ("a vehicle is tailgating you", "a vehicle stopped
        # ahead") is that kind; only a clause that names none leaves it to what the rule implies ("let pass").
        if ranked and _generic_name(ranked[0]) in model.specialised:
            top = ranked[0]
            clause = analysis.tokens[top.start].clause
            kinds = [
                m
                for m in analysis.manipulations
                if m.term != top.term
                and "vehicle" in m.term.tokens
                and analysis.tokens[m.start].clause == clause
                and not m.ruled_out
            ]
            if kinds:
                kind = min(kinds, key=lambda m: abs(m.start - top.start))
                ranked[0] = dataclasses.replace(top, term=kind.term, via="specialised")
                ranked = [ranked[0], *(m for m in ranked[1:] if m.term != kind.term)]
        said = self.said_vehicle(model, analysis)
        if (
            ranked
            and said is not None
            and ranked[0].term.normalised in _said_of(said)
            # the oncoming one is the top mention itself ("behind the car ahead ... trucks coming toward you" keeps
            # the car ahead)
            and (
                _ONCOMING_KINDS.get(ranked[0].term.normalised) != said.normalised
                or _said_to_come_toward(ranked[0], analysis.tokens)
            )
        ):
            ranked[0] = dataclasses.replace(ranked[0], term=said, via="specialised")
            ranked = [ranked[0], *(m for m in ranked[1:] if m.term != said)]
        if ranked and _generic_name(ranked[0]) in model.specialised:
            target = model.specialised[_generic_name(ranked[0])]
            for match in model.implied_matcher.find(analysis.tokens):
                if match.pattern.target == target:
                    top = ranked[0]
                    term = model.term("manipulation", target)
                    ranked[0] = dataclasses.replace(top, term=term, via="specialised")
                    break
        # Core terms first: AutoMT's MR prompt offers the core list, and its MRs use a core term for 78 of the 86
        # California and 99 of the 105 German development MRs; a region term ("Animals", "Guide dog user") is
        # the answer only where the rule names no core one. What an aside names ("especially at dawn and dusk")
        # comes after the rule's own subject, core or not, and what the rule rules out comes last. (A stable sort:
        # by score within each group.)
        # A region's weather or lighting ("Sun Glare", "Flooded Roads") gives way only to a core weather or lighting
        # term: an MR replaces the environment or adds a thing, so a core road user is no rival for it.
        env_core = any(
            m.term.is_core and m.term.category == "environment" and not (m.ruled_out or m.aside) for m in ranked
        )
        # ... and a region road user or thing gives way only to a core one named as more than a bare vehicle word: a
        # core weather or road surface is no rival for it, nor are "cars" ("behind a motorcycle ... Motorcycles stop
        # faster than cars, and on wet pavement the rider needs more room").
        thing_core = any(
            m.term.is_core
            and m.term.category != "environment"
            and not (m.ruled_out or m.aside)
            and not set(tokens(m.surface)) <= _GENERIC_VEHICLE_WORDS
            for m in ranked
        )

        # A core term reached only through a bare, generic vehicle word ("hit another vehicle", "behind another
        # car") or a bare signal colour ("while your signal is red") is no subject of its own: a region term that
        # outscores it keeps its place.
        own_core = [
            m
            for m in ranked
            if (m.term.is_core or m.term.normalised in model.refines_core) and not (m.ruled_out or m.aside)
        ]
        # (a term counts as named by its colour alone only where every mention of it is a bare colour)
        named = {m.term.normalised for m in analysis.manipulations if m.via != "colour" and not m.ruled_out}
        generic_core = (
            max(m.score for m in own_core)
            if own_core
            and all(
                set(tokens(m.surface)) <= _GENERIC_VEHICLE_WORDS
                or (m.via == "colour" and m.term.normalised not in named)
                for m in own_core
            )
            else None
        )

        # A region sign or signal that the rule opens with ("Ramp Meters ...", "Ramp meters are signals on freeway
        # on-ramps") is its subject: no core term names it, and the core signs, lights, lines and motor traffic around
        # it (the limit line to stop at, the red it shows, the oncoming vehicles in a turn lane) are its details. A
        # vulnerable road user the rule names (the bicyclists of a bike lane, the pedestrians of a pedestrian signal)
        # still comes first.
        lead = next((m for m in analysis.manipulations if m.start == 0 and not (m.ruled_out or m.aside)), None)
        road_user = any(
            m.term.is_core
            and m.term.category == "object"
            and _VULNERABLE_WORDS & set(m.term.tokens)
            and not (m.ruled_out or m.aside)
            for m in analysis.manipulations
        )
        # (Where a core term names the same words, "Orange diamond signs" holding the core "diamond signs", the core
        # term is the name.)
        named_by_core = lead is not None and any(
            m.term.is_core and m.start < lead.end and lead.start < m.end for m in analysis.manipulations
        )
        # A region road user or event that heads the rule ("Traffic Breaks An officer weaves a patrol car across
        # the lanes ...") is its subject too, and the core vehicle that carries it out is a detail; but where the
        # opening sentence names a sign ("Deer Crossing Sign yellow diamond sign with a leaping deer"), the road
        # user is what the sign shows, and the sign leads.
        sign_heading = any(
            m.term.category == "traffic_infrastructure"
            and "sign" in m.term.tokens
            and not (m.ruled_out or m.aside)
            and analysis.tokens[m.start].sentence == analysis.tokens[0].sentence
            for m in analysis.manipulations
        )
        subject = (
            lead.term.normalised
            if lead is not None
            and (
                (lead.term.category == "traffic_infrastructure" and not road_user)
                or (lead.term.category == "object" and not sign_heading)
            )
            and not named_by_core
            else None
        )

        # A region signal whose colour the rule tells ("when the ramp meter is red", "a red ramp meter signal") is the
        # signal the rule is about: the core limit line to stop at, or the red light it shows, is its detail.
        told = {
            m.term.normalised
            for m in analysis.manipulations
            if not m.term.is_core and _colour_told(m, analysis.tokens, model.colour_words, analysis.rule.text)
        }

        def demoted(m: Mention) -> bool:
            if m.term.is_core or m.term.normalised in model.refines_core or m.term.normalised in {subject, *told}:
                return False
            if generic_core is not None and m.score > generic_core:
                return False
            return env_core if m.term.category == "environment" else thing_core

        ranked.sort(key=lambda m: (m.ruled_out, m.aside, demoted(m)))
        # ... and a region event or road user that heads the rule leads the core vehicle that carries it out ("Traffic
        # Breaks An officer may switch on the patrol car's rear lights and zigzag ..."); a sign or marking that heads
        # it leads the weather or light it is seen in ("Raised Pavement Markers ... help you see lane edges at night or
        # in the rain").
        heading = (
            next((m for m in ranked if m.term == lead.term), None)
            if lead is not None
            and (subject is not None or lead.term.category in ("traffic_infrastructure", "environment"))
            and _title(lead, analysis.tokens)
            else None
        )
        if heading is not None and not (heading.ruled_out or heading.aside) and ranked[0].term.is_core:
            if (
                heading.term.category == "object"
                and not heading.term.is_core
                and _MOTOR_WORDS & set(ranked[0].term.tokens)
            ) or (
                ranked[0].term.category == "environment"
                and (
                    heading.term.category == "traffic_infrastructure"
                    or (heading.term.category == "environment" and not _opens_with_other(heading, analysis))
                )
            ):
                ranked = _first(heading, ranked)
            # A sign or signal heading leads the line the body has the driver stop at ("Four-Way Stops / Stop
            # completely at the limit line"), unless the heading names that line too ("Stop Signs and Limit Lines").
            elif (
                heading.term.category == "traffic_infrastructure"
                and _SIGN_OR_LIGHT_WORDS & set(heading.term.tokens)
                and "line" not in heading.term.tokens
                and "line" in ranked[0].term.tokens
                and ranked[0].term.category == "traffic_infrastructure"
                and _stop_point(ranked[0], analysis.tokens, _STOP_AT)
                and not any(
                    m.term == ranked[0].term and (_title(m, analysis.tokens) or _joined_to(m, lead, analysis.tokens))
                    for m in analysis.manipulations
                )
            ):
                ranked = _first(heading, ranked)
        # A hazard named as the legend of a sign ("a LANE ENDS sign", "Lane Ends merge sign") is what the sign shows:
        # the sign is what the rule is about.
        named_sign = _sign_named_by(ranked[0], analysis) if ranked else None
        if named_sign is not None:
            ranked = _first(named_sign, ranked)
        shown = _shown_sign(model, analysis, ranked[0]) if ranked else None
        if shown is not None:
            ranked = _first(shown, ranked)
        # A bus or streetcar stopping "to let people on or off" is named for its riders: they are whom the ego waits
        # for, so the MR adds the passengers. (A school bus stays the subject: its lights and stop arm rule.)
        riders = next((m for m in ranked if m.term.normalised == "passenger" and not (m.ruled_out or m.aside)), None)
        if riders is not None and ranked[0].term.normalised in _TRANSIT:  # (riders is one of ranked)
            ranked = _first(riders, ranked)
        # A sentence that opens by listing what the group named just before it covers ("Slow down for vehicles stopped
        # along the road. This covers: A tow truck parked on the shoulder ...", "These include: Stationary Caltrans
        # trucks ..."): the handbook's bullet names the rule's own case, so the first road user or thing it lists
        # leads the group.
        listed = _listed_case(model, analysis, ranked)
        if listed is not None:
            ranked = _first(listed, ranked)
        # A list item named by its label ("Adjust your speed for different conditions:\nIce: Slow to a crawl."): the
        # label is the case the rule is about, over the conditions the lines before it name.
        labelled = _labelled_case(analysis, ranked)
        if labelled is not None:
            ranked = _first(labelled, ranked)
        # An animal named with a time of day ("Watch for deer near the road at dawn and dusk"): US handbooks warn that
        # deer and livestock move about at dawn, dusk and night, so the time says when to watch for the animal, which
        # is the rule's subject. (Where the light is named as such, "deer are hard to see in the dark", it keeps its
        # lead.)
        if ranked and ranked[0].term.category == "environment":
            times = _said(analysis, ranked[0].term)
            animal = next(
                (m for m in ranked if m.term.normalised in model.animals and not (m.ruled_out or m.aside)), None
            )
            if animal is not None and times:
                sentences = {analysis.tokens[a.start].sentence for a in analysis.manipulations if a.term == animal.term}
                if all(
                    _TIMES_OF_DAY & set(tokens(m.surface)) and analysis.tokens[m.start].sentence in sentences
                    for m in times
                ):
                    ranked = _first(animal, ranked)
        # Weather named in a sentence with a power failure ("During a storm or power failure a traffic signal may go
        # dark") is what put the signals out, not the road's condition: every such weather term goes after the rest
        # of the rule (the all-way stop it asks for).
        if ranked and ranked[0].term.category == "environment":
            weather_said = {m.term: _said(analysis, m.term) for m in ranked if m.term.category == "environment"}
            cause = {
                term
                for term, mentions in weather_said.items()
                if mentions and all(_beside_a_power_failure(w, analysis.tokens) for w in mentions)
            }
            if cause and any(m.term not in cause for m in ranked):
                ranked = [*(m for m in ranked if m.term not in cause), *(m for m in ranked if m.term in cause)]
        # A list of road hazards said to endanger a rider ("Potholes, loose gravel, wet pavement and railroad tracks are
        # more dangerous for motorcyclists than for drivers"): the hazards are the rider's, and the rider, whom the ego
        # must give room, is the rule's subject.
        if ranked and ranked[0].term.category == "environment":
            endangered = [
                m
                for m in analysis.manipulations
                if m.term.normalised in _RIDERS and not (m.ruled_out or m.aside) and _endangered(m, analysis.tokens)
            ]
            rider = next((m for m in ranked if endangered and m.term == endangered[0].term), None)
            # (the list in the rider's sentence or the next: "Road hazards for motorcyclists. A pothole, a patch of
            # gravel, a slick painted line ...")
            near = {
                s
                for m in endangered
                for s in (analysis.tokens[m.start].sentence, analysis.tokens[m.start].sentence + 1)
            }
            if rider is not None and len(_surfaces_in(analysis, near)) >= 3:
                ranked = _first(rider, ranked)
        # An officer directing traffic overrides the lights and signs ("If a traffic officer waves you through a red
        # light, go"): where every mention of the leading light or sign lies in a sentence in which an officer
        # directs (the word "officer" with a directing word near it), the officer term is the rule's subject. ("Once
        # the officer leaves, a red light again means stop" keeps the light; a road user named before the officer,
        # "a crossing guard or police officer may direct you to stop", keeps its place.)
        officer = next((m for m in ranked if "officer" in m.term.tokens and not (m.ruled_out or m.aside)), None)
        if (
            officer is not None
            and ranked[0].term.category == "traffic_infrastructure"
            and _SIGN_OR_LIGHT_WORDS & set(ranked[0].term.tokens)
            and not any(
                m.term.category == "object" and not (m.ruled_out or m.aside) for m in ranked[: ranked.index(officer)]
            )
        ):
            directing = _directing_sentences(analysis.tokens)
            overridden = _said(analysis, ranked[0].term)
            if overridden and all(analysis.tokens[m.start].sentence in directing for m in overridden):
                ranked = _first(officer, ranked)
        if ranked and not all(m.ruled_out for m in ranked):
            return ranked
        # Nothing named, or only what the rule rules out ("At a T intersection without STOP or YIELD signs, drivers on
        # the through road have the right-of-way"): what the wording implies comes first, the ruled-out terms after.
        implied: list[Mention] = []
        matches = model.implied_matcher.find(analysis.tokens)
        for match in sorted(matches, key=lambda mt: mt.pattern.kind == "implied last"):  # (stable: text order)
            term = model.term("manipulation", match.pattern.target)
            if all(i.term != term for i in implied):
                surface = _span(analysis.tokens[match.start : match.end])
                implied.append(Mention(term, match.start, match.end, 0, "implied", surface, 0.0))
        return [*implied, *(m for m in ranked if all(i.term != m.term for i in implied))]

    @staticmethod
    def said_vehicle(model: _RegionModel, analysis: RuleAnalysis) -> Term | None:
        """The kind a motor vehicle is where its own clause says what it does: a turning vehicle ("When a truck ahead
        of you is turning right", "trucks swing wide to make turns") or a stopped vehicle ("if the car in the next
        lane has stopped"), or an oncoming one ("cars going the other way", "bicyclists who are coming from the opposite
        direction"), else None."""
        for m in analysis.manipulations:
            if m.term.normalised not in _TURNING_KINDS or m.ruled_out:
                continue
            turns = _said_to_turn(m, analysis.tokens)
            if turns and m.term.normalised == "vehicle":
                # "Vehicles in the left lane may turn left": what they may do, not what they are doing
                after = _own_words_after(m, analysis.tokens, 6)
                at = next((i for i, w in enumerate(after) if w in {"turn", "turning", "swing"}), len(after))
                turns = not _MODALS & set(after[:at])
            kind = "turning vehicle" if turns else None
            if m.term.normalised in _SAID_VEHICLES:
                kind = kind or ("stopped vehicle" if _said_to_have_stopped(m, analysis.tokens) else None)
            if kind is not None:
                return model.vocabulary.lookup("manipulation", kind)
        for m in analysis.manipulations:
            kind = _ONCOMING_KINDS.get(m.term.normalised)
            if kind is not None and not m.ruled_out and _said_to_come_toward(m, analysis.tokens):
                return model.vocabulary.lookup("manipulation", kind)
        return None

    @staticmethod
    def places(model: _RegionModel, analysis: RuleAnalysis) -> list[Mention]:
        """The specific places the rule names as its own (not "any roads").

        A place said not to be there ("even if they are not in a crosswalk", "if there is no crosswalk") is no place
        of the rule, nor is one named only as a fallback after something absent ("If there is no limit line, stop
        before the crosswalk"): the rule's place is then what its sign or signal implies. Nor is a place in an
        exception ("unless you are in an intersection") or one implied by a sign or signal that is only compared to
        ("as you would a traffic signal"), nor a stop that no bus leaves ("When leaving a stop, check for
        pedestrians").
        """
        absent = [m for m in analysis.road_types + analysis.manipulations if m.absent]
        return [
            m
            for m in analysis.road_types
            if m.term.normalised != model.any_roads.normalised
            and not m.ruled_out
            and (
                not any(_said_absent(m, a, analysis.tokens) for a in absent)
                or any(_lacks(m, a, analysis.tokens) for a in absent)
            )
            and not _fallback_place(m, analysis.tokens)
            and not _compared_to(m, analysis.tokens)
            and not _excepted(m, analysis.tokens)
            and not _left_by_no_bus(m, analysis)
        ]

    def own_places(self, model: _RegionModel, analysis: RuleAnalysis, manipulation: Term | None) -> list[Mention]:
        """The places of :meth:`places` that are the place of an MR about ``manipulation``."""
        # Weather, light and road surface hold wherever one drives: the signals, signs and crosswalks such a rule
        # mentions ("sun glare can hide traffic signals", "brake sooner for traffic lights") are what is harder to
        # see or stop for, not its place (the development references put every such MR on any roads).
        # Only the place the rule is set in, named in a heading line of its own ("Alleys / Alleys are narrow and often
        # dark") or in an opening phrase of place ("At a railroad crossing without gates, ... in fog"), is the place of
        # such a rule: the condition is told of that place. (A place named as the subject, "Crosswalks are hard to see
        # in fog", is one more thing the condition hides.)
        if manipulation is not None and manipulation.category == "environment":
            return [m for m in self.places(model, analysis) if _sets_the_rule(m, analysis.tokens)]
        specific = self.places(model, analysis)
        # A place listed among road hazards ("Potholes, loose gravel, wet pavement and railroad tracks are more
        # dangerous for motorcyclists") is one more hazard on the road, not where the rule holds (a place that sets
        # the rule, "At railroad crossings, the tracks may be wet, icy or covered with gravel", keeps its place).
        specific = [m for m in specific if not (_among_hazards(m, analysis) and not _sets_the_rule(m, analysis.tokens))]
        # A coloured light implies a junction when the light is what the rule is about (a signal); when the rule
        # is about something else, the lights are its own ("an ambulance using a siren and red lights", "school
        # buses flash yellow lights").
        if manipulation is not None and not _LIGHT_WORDS & set(manipulation.tokens):
            specific = [m for m in specific if not _is_vehicle_light(m.surface, model.light_colours)]
        # "cross the road" makes a crosswalk of a pedestrian's crossing; an animal crossing the road is on any road.
        # Nor is a vehicle's place where others cross ("Children may be crossing the road in front of the bus").
        if manipulation is not None and (
            manipulation.normalised in model.animals or _MOTOR_WORDS & set(manipulation.tokens)
        ):
            specific = [m for m in specific if not _names_crossing(m)]
        # Nor does a warning sign that warns of others crossing ("warns that deer may be crossing the road ahead",
        # "bicyclists may be riding along or crossing the road"), whether the MR adds the sign or those it warns of:
        # only people on foot cross at a crosswalk.
        warned = manipulation is not None and "warning" in manipulation.tokens
        specific = [m for m in specific if not (_names_crossing(m) and _crossed_by_others(m, analysis, warned))]
        # The tracks of a streetcar, tram or light rail vehicle the rule names run in the street ("look for one before
        # you cross the tracks"): they are no railroad crossing. (Tracks called a railroad's are: "Before you cross
        # light rail or railroad tracks, look both ways".)
        if any(_runs_in_the_street(m) for m in analysis.manipulations if m.term.normalised == "rail vehicle"):
            specific = [
                m
                for m in specific
                if tokens(m.surface)[-1:] != ("track",) or _RAILROAD_WORDS & set(tokens(m.surface)[-2:-1])
            ]
        # A turning lane's turns are what the lane is for ("a center lane reserved for left turns and U-turns"): they
        # name no junction. Nor do the turns a rule about that lane or yellow lane lines allows ("cross double
        # yellow lines only to make a U-turn", "drivers use this lane to begin a left turn"): the lane runs along any
        # road. (A bike lane's right turns are made at the junction: they keep their place.)
        if (manipulation is not None and {"lane", "turn"} <= set(manipulation.tokens)) or _names_a_lane(analysis):
            specific = [m for m in specific if not _TURN_WORDS & set(tokens(m.surface))]
        # A signal on a road without junctions ("Ramp meters are signal lights on freeway on-ramps. Stop at the red
        # light") stands at no intersection, nor does a turn named in the same clause as that road ("Never make a
        # U-turn on the freeway"; "At the bottom of the freeway exit ramp, yield ... before you turn left" keeps it).
        no_junction = [
            m
            for m in analysis.road_types
            if m.term.normalised == model.any_roads.normalised
            and not (m.ruled_out or m.aside)
            and _NO_JUNCTION_ROADS & set(tokens(m.surface))
        ]
        if no_junction:
            clauses = {analysis.tokens[m.start].clause for m in no_junction}
            specific = [
                m
                for m in specific
                if not _LIGHT_WORDS & set(tokens(m.surface))
                and not (_TURN_WORDS & set(tokens(m.surface)) and analysis.tokens[m.start].clause in clauses)
            ]
        # Where the ego may already be, said after the rule's subject ("... drive to the right edge of the road and
        # stop. If you are in an intersection, drive through it first"), is a sub-case of the rule, not its place.
        if manipulation is not None and specific:
            own = _said(analysis, manipulation)
            first = min((analysis.tokens[m.start].sentence for m in own), default=None)
            if first is not None and all(
                analysis.tokens[p.start].sentence > first and _ego_already_there(p, analysis.tokens) for p in specific
            ):
                specific = []
        # A crossing that only a verb implies ("while children are crossing the street") gives way to the school
        # area the rule names ("within 500 feet of a school"): the children cross there.
        verbal = [m for m in specific if _names_crossing(m)]
        schools = [m for m in specific if m.term.normalised == "school area" and m not in verbal]
        named_crossing = any(m.term.normalised == "crosswalk" and not _names_crossing(m) for m in specific)
        if verbal and schools and not named_crossing:
            specific = schools
        # Where a junction's sign or signal has the driver stop ("Stop at the limit line, or before you enter the
        # crosswalk") says where the stop is made, not where the rule holds: the place is the junction it implies.
        if manipulation is not None and model.implied_roads.get(manipulation.normalised) == "intersection":
            specific = [
                m for m in specific if not (m.term.normalised == "crosswalk" and _stop_point(m, analysis.tokens))
            ]
        # A person on foot crosses at a crosswalk, marked or not ("Every intersection has a crosswalk ... yield to a
        # pedestrian crossing there"): where the rule names one, it is their place over the junction around it. (A
        # roundabout stays the place of the rule it names: its crossings are part of it.)
        roundabout = [m for m in specific if _ROUNDABOUT & set(tokens(m.surface))]
        if roundabout:
            return [m for m in specific if m.term.normalised != "crosswalk"]
        if manipulation is not None and _ON_FOOT & set(manipulation.tokens):
            crossings = [m for m in specific if m.term.normalised == "crosswalk"]
            specific = crossings or specific
        # A sign the rule places by its own words ("where a NO U-TURN sign is posted") stands where it is posted: the
        # places of the other items of a list ("..., at or on a railroad crossing, or on a divided highway") are not
        # its place.
        if manipulation is not None and "sign" in manipulation.tokens and specific:
            posted = [
                m
                for m in analysis.manipulations
                if m.term == manipulation and not m.ruled_out and _said_posted(m, analysis.tokens)
            ]
            if posted:
                # (A place in the opening phrase of the sign's own sentence, "At an intersection, do not make a
                # U-turn where ...", is still its place.)
                clauses = {analysis.tokens[m.start].clause for m in posted}
                sentences = {analysis.tokens[m.start].sentence for m in posted}
                specific = [
                    p
                    for p in specific
                    if analysis.tokens[p.start].clause in clauses
                    or (analysis.tokens[p.start].sentence in sentences and _fronted(p, analysis.tokens))
                ]
        return specific

    def _road_type(self, model: _RegionModel, analysis: RuleAnalysis, manipulation: Term | None) -> tuple[Term, str]:
        specific = self.own_places(model, analysis, manipulation)
        # A rule about the colours of the curb ("White curb: stop only to let passengers on or off", "a bus may stop
        # in a red zone") is about stopping along any road: its passengers and buses make no bus stop.
        curbs = bool(_COLOURED_CURB.search(analysis.rule.text))
        if curbs:
            specific = [m for m in specific if m.term.normalised != "bus stopping"]
        # The lights, stop line and barriers of a rule about a railroad crossing (its St. Andrew's cross, its train)
        # are the crossing's: they imply no junction.
        rail = self._railroad_cue(model, analysis)
        if rail is not None and specific:
            junction_cues = [m for m in specific if _signal_place(m)]
            if len(junction_cues) == len(specific):
                return rail
            specific = [m for m in specific if m not in junction_cues]
        # Likewise the lights and stop line of a rule about a ramp meter are the meter's, on the on-ramp.
        if any(m.term.normalised == "ramp meter signal" and not m.ruled_out for m in analysis.manipulations):
            specific = [m for m in specific if not _signal_place(m)]
        if specific:
            best = max(specific, key=lambda m: m.score)
            return best.term, best.surface
        # A person on foot at the curb or the corner, where no place is named, is there to cross ("steps back from the
        # curb", "waiting at the corner"): the place is the crossing, marked or not.
        if (
            manipulation is not None
            and _ON_FOOT & set(manipulation.tokens)
            and _CURB_WORDS & {t.word for t in analysis.tokens}
        ):
            return model.term("road_type", "crosswalk"), "a person on foot at the curb or corner"
        # A place of the rule's own that is a kind of road ("on motorways", "in tunnels") is where the rule applies,
        # whatever a stop sign or a red light would imply; the bare words for a road ("the road") name no place.
        named = [
            m
            for m in analysis.road_types
            if m.term.normalised == model.any_roads.normalised
            and m.gap == 0  # "any other road": a gapped match is the bare words again
            and tokens(m.surface) not in model.generic_roads
        ]
        if named:
            return model.any_roads, named[0].surface
        # A streetcar or light rail vehicle runs in the street: it implies no railroad crossing.
        street_rail = manipulation is not None and any(
            m.term == manipulation and _runs_in_the_street(m) for m in analysis.manipulations
        )
        if (
            manipulation is not None
            and manipulation.normalised in model.implied_roads
            and not street_rail
            and not (curbs and model.implied_roads[manipulation.normalised] == "bus stopping")
            # (an officer stands at a junction only where directing traffic past its signals or signs)
            and ("officer" not in manipulation.tokens or _officer_overrides_signals(analysis.tokens))
        ):
            road = model.term("road_type", model.implied_roads[manipulation.normalised])
            return road, f"implied by {manipulation.text}"
        return model.any_roads, "no specific place named"

    @staticmethod
    def _railroad_cue(model: _RegionModel, analysis: RuleAnalysis) -> tuple[Term, str] | None:
        """The railroad crossing a rule's own St. Andrew's cross, crossbuck, railway employee or train implies (a
        streetcar or light rail vehicle runs in the street and implies none)."""
        for m in analysis.manipulations:
            road = model.implied_roads.get(m.term.normalised)
            if m.ruled_out or m.aside or road is None or "crossing" not in road:
                continue
            if _runs_in_the_street(m):
                continue
            return model.term("road_type", road), f"at the railroad crossing of '{m.surface}'"
        return None

    @staticmethod
    def _behaviour(
        model: _RegionModel, analysis: RuleAnalysis, road: Term, manipulation: Term | None
    ) -> tuple[str, str]:
        scores = behaviour_cues(analysis, road.normalised)
        if manipulation is not None and manipulation.normalised in model.carry_on:
            scores["keep current"] = scores.get("keep current", 0.0) + 1.0
        if manipulation is not None and lifts_a_ban_on_stopping(analysis, manipulation):
            return "slow down", f"the exception to '{', '.join(analysis.behavior_evidence['keep current'])}'"
        if not scores:
            return "slow down", "default: a rule restricts the ego-vehicle"
        best = max(scores, key=lambda b: (scores[b], b == "slow down"))
        return best, ", ".join(analysis.behavior_evidence.get(best, [])) or "implied"

    @staticmethod
    def _manipulation_phrase(term: Term) -> str:
        text = term.text.lower()
        if term.verb == "replaces":
            aspect = (
                "lighting"
                if _LIGHTING.search(text.lower())
                else "road surface"
                if _SURFACE.search(text.lower())
                else "weather"
            )
            return f"the {aspect} with {text}"
        # No article before a plural or a mass noun ("flaggers (in construction zones)", "heavy traffic").
        # The head is the last word outside brackets: "flaggers (in construction zones)", "high-occupancy vehicle
        # (hov) lanes".
        head = re.sub(r"\([^)]*\)", " ", text).strip() or text
        if (
            text.split()[0] in {"a", "an", "the"}
            or (head.endswith("s") and not head.endswith(("bus", "ss")))
            or head.split()[-1] in _MASS_NOUNS
        ):
            return text
        article = "an" if text[0].lower() in "aeiou" else "a"
        return f"{article} {text}"

    def _with_own_lights(self, analysis: RuleAnalysis, term: Term) -> str | None:
        """A vehicle said to flash coloured lights, written with them as the rule says them ("a school bus with
        flashing red lights", "a tow truck with flashing amber lights"), as the development references write it.
        The lights are the vehicle's as :func:`_own_light_of` tells (found once, in :meth:`analyse`)."""
        colour = analysis.own_lights.get(term.normalised)
        if not colour:
            return None
        # An emergency vehicle's lights say it is on a call, not a signal colour to obey: the development references
        # write them without one ("an emergency vehicle with flashing lights", ca-55).
        if term.normalised == "emergency vehicle":
            return f"{self._manipulation_phrase(term)} with flashing lights"
        return f"{self._manipulation_phrase(term)} with flashing {colour} lights"

    def light_owner(self, analysis: RuleAnalysis, phrase: str) -> Term | None:
        """The vehicle that ``phrase`` adds with its own lights (see :meth:`_with_own_lights`), if it is such a phrase."""
        for m in analysis.manipulations:
            if self._with_own_lights(analysis, m.term) == phrase:
                return m.term
        return None

    def candidates(self, analysis: RuleAnalysis) -> list[MRCandidate]:
        """Ranked MR candidates of an analysed rule (empty when nothing in it is grounded)."""
        model = self.region_model(analysis.rule.region)
        ranked = self._ranked_manipulations(model, analysis)
        semantic_terms = [
            (model.vocabulary.lookup("manipulation", model.core_of.get(normalise_phrase(label), label)), sim)
            for label, sim in analysis.semantic
            if sim >= self.semantic_threshold
        ]
        out: list[MRCandidate] = []
        entries: list[tuple[Term, str, float]] = [
            (m.term, m.surface if m.via != "implied" else f"implied by '{m.surface}'", m.score) for m in ranked
        ]
        set_aside = {m.term.normalised for m in ranked if m.aside or m.ruled_out}
        if all(m.via == "implied" for m in ranked):
            # Nothing named outright: what the wording implies (scored 0: "yield" an oncoming vehicle, "a traffic
            # signal" its red light) comes before MiniLM's nearest labels (similarity - 1 < 0), which follow.
            named = {term.normalised for term, _, _ in entries}
            nearest = [
                (t, f"nearest ontology term (similarity {sim:.2f})", sim - 1.0)
                for t, sim in semantic_terms
                if t is not None and t.normalised not in named
            ]
            # A nearest term whose own place is not one the rule names comes after the other nearest terms ("within
            # 100 feet of a railroad crossing": the crossbuck, not the crossing guard of a school); the implied terms
            # stay ahead of them all (no implied term is among the nearest ones).
            places = {m.term.normalised for m in self.places(model, analysis)}
            elsewhere = {
                t.normalised
                for t, _, _ in nearest
                if places and (own := model.implied_roads.get(t.normalised)) is not None and own not in places
            }
            entries += nearest
            entries.sort(key=lambda e: (e[0].normalised in elsewhere, -e[2]))
        top_score = entries[0][2] if entries else 0.0
        for rank, (term, surface, score) in enumerate(entries[: self.top_k]):
            road, road_ev = self._road_type(model, analysis, term)
            behaviour, beh_ev = self._behaviour(model, analysis, road, term)
            verb = term.verb or "adds"
            confidence = max(0.05, min(0.95, 0.8 - 0.15 * rank - 0.1 * max(0.0, top_score - score)))
            if rank and term.normalised in set_aside:
                confidence = max(0.05, confidence - 0.15)
            out.append(
                MRCandidate(
                    mr=MRFields(
                        road_type=road.text.lower(),
                        verb=verb,
                        manipulation=self._with_own_lights(analysis, term) or self._manipulation_phrase(term),
                        expected_behavior=behaviour,
                    ),
                    parser=self.name,
                    confidence=round(confidence, 3),
                    evidence={"road_type": road_ev, "manipulation": surface, "expected_behavior": beh_ev},
                )
            )
        return out

    # -- batch API ------------------------------------------------------------------------------
    def parse_many(self, rules: Sequence[TrafficRule]) -> list[list[MRCandidate]]:
        """Candidates for each rule; rules without any term get the nearest-label fallback in one batch."""
        analyses = [self.analyse(rule) for rule in rules]
        if self.embedder is not None:
            self._semantic_fallback([a for a in analyses if not a.manipulations])
        return [self.candidates(a) for a in analyses]

    def parse(self, rule: TrafficRule) -> list[MRCandidate]:
        """Candidates for one rule."""
        return self.parse_many([rule])[0]

    def _semantic_fallback(self, analyses: list[RuleAnalysis]) -> None:
        """Nearest ontology label of each short content-word window, for rules naming no term.

        Whole clauses dilute the one phrase that matters ("kids" -> "child" is 0.72 alone and 0.29
        in "kids chasing a ball"), so windows of one to three content words are embedded instead,
        all rules of a batch in one call. Each label keeps its best similarity.
        """
        if not analyses or self.embedder is None:
            return
        queries: list[str] = []
        owners: list[int] = []
        for n, a in enumerate(analyses):
            for window in _content_windows(a.tokens):
                queries.append(window)
                owners.append(n)
        if not queries:
            return
        by_region: dict[str, list[int]] = {}
        for qi, owner in enumerate(owners):
            by_region.setdefault(analyses[owner].rule.region.lower(), []).append(qi)
        vectors = self.embedder.encode(queries)
        best: list[dict[str, float]] = [{} for _ in analyses]
        for region, qis in by_region.items():
            results = self._label_index(region).nearest_vectors(vectors[qis], k=1)
            for qi, res in zip(qis, results, strict=True):
                for label, sim in res:
                    seen = best[owners[qi]]
                    seen[label] = max(sim, seen.get(label, -1.0))
        for a, labels in zip(analyses, best, strict=True):
            a.semantic = sorted(labels.items(), key=lambda x: -x[1])[: self.top_k]

    def _label_index(self, region: str) -> LabelIndex:
        if region not in self._label_indexes:
            assert self.embedder is not None
            terms = self.region_model(region).vocabulary.manipulations
            self._label_indexes[region] = LabelIndex(self.embedder, [t.text for t in terms])
        return self._label_indexes[region]


def behaviour_cues(analysis: RuleAnalysis, road: str) -> dict[str, float]:
    """The rule's behaviour cue scores that can hold on ``road`` (a normalised road type): a turn is made at a
    junction, so "drive to the right edge of the road" is no turn on any road (the development references turn only
    at intersections)."""
    scores = dict(analysis.behavior_scores)
    if road not in {"intersection", "alley"}:
        scores.pop("turn left", None)
        scores.pop("turn right", None)
    return scores


_MASS_NOUNS = frozenset({"traffic", "livestock", "debris", "gravel", "ice", "smoke", "fog", "rain", "snow", "mud"})


_TELLS_COLOUR = frozenset({"is", "are", "show", "shows", "showing", "display", "displays", "turn", "turns"})


def _colour_told(m: Mention, toks: list[Token], colours: dict[str, str], text: str) -> bool:
    """A signal mention with its colour told: "a red ramp meter signal", "the ramp meter is red", "shows red"."""
    # (Not a traffic light or a pedestrian signal: their colours are the core red, yellow and green lights.)
    words = set(m.term.tokens)
    if (
        m.term.category != "traffic_infrastructure"
        or not {"signal", "meter"} & words
        or {"traffic", "pedestrian"} & words
    ):
        return False
    clause = toks[m.start].clause
    before = (
        m.start > 0
        and toks[m.start - 1].word in colours
        and not text[toks[m.start - 1].end : toks[m.start].start].strip()  # "red (ramp meters ...)" is another's red
    )
    # "the ramp meter (light) shows red", "is showing a red light", "turns green"
    after = [t.word for t in toks[m.end : m.end + 5] if t.clause == clause]
    if after[:1] and after[0] in {"light", "signal"}:
        after = after[1:]
    if after[:2] in (["is", "showing"], ["are", "showing"]):
        after = after[1:]
    if not after or after[0] not in _TELLS_COLOUR:
        return before
    rest = after[1:]
    if rest[:1] and rest[0] in {"a", "the"}:
        rest = rest[1:]
    return before or bool(rest[:1] and rest[0] in colours)


def _find(words: Sequence[str], needle: tuple[str, ...]) -> int:
    n = len(needle)
    for i in range(len(words) - n + 1):
        if tuple(words[i : i + n]) == needle:
            return i
    return -1


def _among_hazards(place: Mention, analysis: RuleAnalysis) -> bool:
    """Whether ``place`` is an item of a list of three road surfaces or more: named in their sentence after one of
    them ("Potholes, loose gravel, wet pavement, painted lines and railroad tracks"), not before them as what they
    cover ("the tracks may be wet, icy or covered with gravel")."""
    sentence = analysis.tokens[place.start].sentence
    surfaces = _surfaces_in(analysis, {sentence})
    return len(surfaces) >= 3 and any(
        m.term in surfaces
        and analysis.tokens[m.start].sentence == sentence
        and place.start - 12 <= m.end <= place.start
        for m in analysis.manipulations
    )


def _endangered(rider: Mention, toks: list[Token]) -> bool:
    """Whether the rider is named as the one a hazard endangers ("more dangerous for motorcyclists", "harder for a
    motorcyclist", "for someone on a motorcycle"), not as one more road user ("as well as for bicyclists")."""
    lo = max(0, rider.start - 4)
    before = [t.word for t in toks[lo : rider.start] if t.clause == toks[rider.start].clause]
    return bool({"for", "to"} & set(before)) and not _has_any(before, _ALSO_PHRASES)


def _surfaces_in(analysis: RuleAnalysis, sentences: set[int]) -> set[Term]:
    """The road-surface terms ("wet road", "Potholes", "Loose Gravel") the rule names in ``sentences``."""
    return {
        m.term
        for m in analysis.manipulations
        if m.term.category == "environment"
        and _SURFACE.search(m.term.text.lower())
        and not m.ruled_out
        and analysis.tokens[m.start].sentence in sentences
    }


def _after_the_weather(m: Mention, toks: list[Token]) -> bool:
    """ "Potholes often open up after winter storms": weather up to two words after an "after" in its own clause is
    when the rule's thing came about, an aside. Not the light ("after dark", "after dusk, in rain"), nor weather that
    is only beginning ("right after rain begins, oil makes the road slick")."""
    if _LIGHTING.search(m.term.text.lower()) or _SURFACE.search(m.term.text.lower()):
        return False
    clause = toks[m.start].clause
    for i in range(m.start - 1, max(-1, m.start - 4), -1):
        if toks[i].clause != clause or toks[i].sentence != toks[m.start].sentence:
            return False
        if toks[i].word == "after":
            between = {t.word for t in toks[i + 1 : m.end]}
            beginning = m.end < len(toks) and toks[m.end].word in _BEGINNING
            return not (between & _NIGHT_WORDS) and not beginning
    return False


def _has_any(words: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> bool:
    """Whether any of ``phrases`` occurs in ``words``."""
    return any(_find(words, phrase) >= 0 for phrase in phrases)


_CONJUNCTIONS = frozenset({"or", "and", "nor"})
_GENERIC_VEHICLE_WORDS = frozenset({"a", "an", "the", "another", "other", "any", "car", "cars", "vehicle", "vehicles"})
_MOTOR_WORDS = frozenset({"vehicle", "bus", "truck", "tractor", "trailer", "convoy", "car"})
_HAVING = frozenset({"has", "have", "with", "shows", "show"})
_ARTICLES = frozenset({"a", "an", "the"})
# Words of a night or twilight cue, which may open with "after" ("after dark", "after sunset").
_NIGHT_WORDS = frozenset({"dark", "darkness", "sunset", "sundown", "nightfall", "dusk", "night", "twilight"})
_BEGINNING = frozenset({"begin", "begins", "began", "start", "starts", "started", "starting", "beginning"})
_BLINK_WORDS = frozenset({"blink", "blinks", "blinking", "blinked", "flash", "flashes", "flashing", "flashed"})
# The light's own verb and the adverbs that may stand before its "flashing" ("are no longer flashing", "is still not").
_BE_AND_ADVERBS = frozenset(
    {"is", "are", "was", "were", "be", "been", "has", "have", "had", "not", "no", "longer", "still", "now", "again"}
)
# (Words are folded: "holds" reads "hold".)
_HOLDING = frozenset(
    {"hold", "holding", "holds", "held", "carry", "carrying", "carries", "waving", "wave", "waves"}
    | {"raise", "raises", "raising", "lift", "lifts", "lifting"}  # "the guard raises a STOP sign"
)


_COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "go", "goes", "went", "gone", "become", "becomes"})
_SIGNAL_NOUNS = frozenset({"signal", "signals", "light", "lights"})
# Words that end the phrase a colour word opens ("turn on red unless a sign forbids it").
_CLAUSE_WORDS = frozenset({"unless", "except", "but", "until", "then"})


def _dark_signals(toks: list[Token]) -> frozenset[int]:
    """ "dark" said of a signal ("the signal lights at an intersection are dark", "if the traffic lights go dark"):
    the signal is out of order, which is no low light. The signal noun is the subject of the clause's copula."""
    out: set[int] = set()
    for i, t in enumerate(toks):
        if t.word != "dark" or i == 0:
            continue
        # "may go completely dark": one adverb may stand between.
        verb = i - 2 if i > 1 and toks[i - 1].word.endswith("ly") else i - 1
        if toks[verb].word not in _COPULAS:
            continue
        subject = [u.word for u in toks[max(0, i - 9) : i - 1] if u.clause == t.clause]
        if _SIGNAL_NOUNS & set(subject):
            out.add(i)
    return frozenset(out)


def lifts_a_ban_on_stopping(analysis: RuleAnalysis, term: Term) -> bool:
    """Whether the rule's only keep-current cues forbid stopping or slowing ("Do not stop on the on-ramp") and it names
    ``term`` as the exception ("... unless traffic is very heavy"): an MR that adds the exception lets the ego
    stop, so it slows down."""
    keep = analysis.behavior_evidence.get("keep current", [])
    if not keep or not all({"stop", "stopping", "slow"} & set(tokens(cue)) for cue in keep):
        return False
    return any(
        _EXCEPTION_WORDS & set(_clause_words_before(m, analysis.tokens, 8))
        for m in analysis.manipulations
        if m.term == term
    )


_CONDITIONS = frozenset({"if", "when", "once", "whenever", "unless", "after", "before", "while"})


def _after_then(toks: list[Token], i: int) -> bool:
    """Whether ``toks[i]`` follows a "then" up to 12 words before it in its sentence: a later step ("keep going
    through, then pull to the right and stop"). A "then" that opens the main clause after a condition ("If the signal
    flashes red, then stop") marks no later step."""
    sentence = toks[i].sentence
    for j in range(max(0, i - 12), i):
        if toks[j].word != "then" or toks[j].sentence != sentence:
            continue
        if j == 0 or toks[j - 1].sentence != sentence:
            continue
        before = toks[j - 1].clause if toks[j].clause != toks[j - 1].clause else toks[j].clause
        if toks[_clause_start(toks, before)].word not in _CONDITIONS:
            return True
    return False


def _sentence_start(toks: list[Token], i: int) -> int:
    """Index of the first token of the sentence that token ``i`` is in."""
    return next(j for j in range(i, -1, -1) if j == 0 or toks[j - 1].sentence != toks[i].sentence)


def _sentence_end(toks: list[Token], i: int) -> int:
    """Index just past the last token of the sentence that token ``i`` is in."""
    return next(j for j in range(i, len(toks) + 1) if j == len(toks) or toks[j].sentence != toks[i].sentence)


def _clause_start(toks: list[Token], clause: int) -> int:
    """Index of the first token of ``clause``."""
    return next(i for i, t in enumerate(toks) if t.clause == clause)


def _clause_words_before(m: Mention, toks: list[Token], n: int) -> list[str]:
    """Up to ``n`` words before a mention, within its clause."""
    clause = toks[m.start].clause
    return [t.word for t in toks[max(0, m.start - n) : m.start] if t.clause == clause]


def _names_crossing(m: Mention) -> bool:
    """A place named by crossing ("cross the road", "crossing the street") rather than by a noun (a railroad or
    level crossing is a noun)."""
    words = set(tokens(m.surface))
    return bool({"cross", "crossing"} & words) and not _RAIL_CROSSING_WORDS & words


def _crossed_by_others(place: Mention, analysis: RuleAnalysis, warned: bool) -> bool:
    """A warning sign warns of those said to cross (the rule's own, ``warned``, or one named before the crossing in
    its sentence), and they include road users and no one on foot: "deer may be crossing the road", "bicyclists may be
    crossing"; not "pedestrians and bicyclists may be crossing", "tells drivers that people may be crossing", "children
    on bikes" or "bicyclists may be crossing the road, as well as pedestrians". Those crossing are named between the
    last such sign (or the sentence's start) and the crossing; people on foot may also be named after it."""
    toks = analysis.tokens
    start, end = _sentence_start(toks, place.start), _sentence_end(toks, place.start)
    signs = [m.end for m in analysis.manipulations if "warning" in m.term.tokens and start <= m.end <= place.start]
    if not (signs or warned):
        return False
    start = max([start, *signs])
    words = {t.word for t in toks[start : place.start]} | {t.word for t in toks[place.end : end]}
    named = [
        m for m in analysis.manipulations if start <= m.start and m.end <= end and not m.start <= place.start < m.end
    ]
    if _ON_FOOT_WORDS & words or any(_ON_FOOT_WORDS & set(m.term.tokens) for m in named):
        return False
    return any(m.end <= place.start for m in named)


def _left_by_no_bus(place: Mention, analysis: RuleAnalysis) -> bool:
    """A stop left ("leaving a stop", "pulling away from the stop") that no bus, streetcar or school bus leaves: the
    ego's own stop, or a truck's. The bus is named before it in its sentence with only a few linking words between ("a
    bus is leaving a stop", "a bus when it is pulling away from the stop", "the bus in front of you is leaving"); "you"
    only as in "ahead of you" ("the bus when you are leaving the stop" is the ego's stop)."""
    if tokens(place.surface)[:1] not in (("leaving",), ("pulling",)):
        return False
    toks = analysis.tokens

    def linking(i: int) -> bool:
        return toks[i].word in _BUS_LINKS or (toks[i].word == "you" and toks[i - 1].word == "of")

    return not any(
        m.term.normalised in _STOPPING_VEHICLES
        and m.end <= place.start <= m.end + 6
        and toks[m.start].sentence == toks[place.start].sentence
        and all(linking(i) for i in range(m.end, place.start))
        for m in analysis.manipulations
    )


_STOPPING_VEHICLES = frozenset({"public transport bus", "line bus", "school bus", "rail vehicle"})
_BUS_LINKS = frozenset(
    {"is", "are", "it", "they", "when", "as", "that", "which", "just", "now", "ahead", "in", "front", "of"}
    | {"driver", "may", "might", "will", "can", "be", "about", "to"}  # "a bus driver leaving", "a bus may be leaving"
)


_RAIL_CROSSING_WORDS = frozenset({"railroad", "railway", "rail", "level", "train"})


def _said_to_turn(m: Mention, toks: list[Token]) -> bool:
    """The mention's own clause goes on to say it turns ("a truck ahead of you is turning right", "trucks swing
    wide")."""
    after = _own_words_after(m, toks, 6)
    return bool({"turning", "turn"} & set(after)) or _find(after, ("swing", "wide")) >= 0


def _own_words_after(m: Mention, toks: list[Token], n: int) -> list[str]:
    """Up to ``n`` words after the mention in its clause, up to a subordinate clause ("yield to oncoming cars when you
    turn left": the turn is the driver's, not the cars'; "a truck in front of you is turning" is the truck's)."""
    clause = toks[m.start].clause
    out: list[str] = []
    for t in toks[m.end : m.end + n]:
        if t.clause != clause or t.word in _SUBORDINATORS:
            break
        out.append(t.word)
    return out


_SUBORDINATORS = frozenset({"when", "whenever", "if", "while", "before", "after", "until", "unless", "because"})


def _said_to_have_stopped(m: Mention, toks: list[Token]) -> bool:
    """The mention's own clause goes on to say it has stopped ("the car in the next lane has stopped", "a vehicle
    stopped ahead", "a car that stops for a pedestrian", "a car that is waiting at a crosswalk"). What it must do
    ("cars must stop behind the line") is the bare "stop", the ego's own rule, and no sign of a stopped vehicle; nor
    is what it may be ("may be stopping")."""
    after = _own_words_after(m, toks, 8)
    # as written: the words fold plurals, so "stops" reads "stop"
    raw = [t.raw.lower() for t in toks[m.end : m.end + len(after)]]
    stop = next(
        (i for i, w in enumerate(raw) if w in {"stopped", "stops", "stopping", "waiting", "waits", "halted"}), None
    )
    if stop is None:
        # "a vehicle that has come to a stop", "came to a halt": said of the vehicle, not what it must, fails to or does
        # not do ("needs to come to a stop", "does not come to a stop"), nor the ego's own stop ("so that you come
        # ..."): a bare "come" only after "has", "have" or "had"
        stop = next(
            (
                i
                for i, w in enumerate(raw)
                if (
                    w in {"comes", "came"}
                    or (w == "come" and i > 0 and raw[i - 1] in _HAS)
                    or (
                        w == "come"
                        and i > 1
                        and raw[i - 2] in _HAS
                        and raw[i - 1] in {"just", "already", "now", "fully"}
                    )
                )
                and [x for x in raw[i + 1 : i + 7] if x not in {"full", "complete", "and"}][:3]
                in (["to", "a", "stop"], ["to", "a", "halt"], ["to", "a", "standstill"])
            ),
            None,
        )
    # "if the driver ahead stops suddenly", "stops short": a sudden stop is braking, not a vehicle standing still
    return stop is not None and not _SUDDENLY & set(raw[stop + 1 : stop + 2]) and not _MODALS & set(after[:stop])


# The oncoming kind of a road user whose own words say it comes toward the ego ("trucks going the other way",
# "bicyclists who are coming from the opposite direction").
_ONCOMING_KINDS = {
    **dict.fromkeys(_SAID_VEHICLES, "oncoming vehicle"),
    "bicyclist": "oncoming bicyclist",
    "bicycle": "oncoming bicyclist",
}
_COMING = frozenset({"coming", "come", "going", "traveling", "travelling", "driving", "riding", "heading", "headed"})


def _said_to_come_toward(m: Mention, toks: list[Token]) -> bool:
    """The mention's own words say it comes toward the ego, right after it or in a relative clause on it ("cars coming
    toward you", "bicyclists who are coming from the opposite direction", "trucks going the other way"); not where it
    is going to ("turning the other way"), nor what another road user or the ego does later in the clause ("the
    bicyclist and cars coming toward you", "the bicyclist as you are going the other way")."""
    after = _own_words_after(m, toks, 8)
    if after[:1] and after[0] in _RELATIVE:
        after = after[1:]
    if after[:1] and after[0] in _BE:  # "bicyclists who are coming", "a vehicle is traveling the other way"
        after = after[1:]
    if not after[:1] or after[0] not in _COMING:
        return False
    rest = after[1:5]
    if rest[:2] in (["toward", "you"], ["towards", "you"], ["at", "you"]):
        return True
    if rest[:1] in (["from"], ["in"]):
        rest = rest[1:]
    return rest[:3] in (
        ["the", "other", "way"],
        ["the", "opposite", "way"],
        ["the", "other", "direction"],
        ["the", "opposite", "direction"],
    )


_RELATIVE = frozenset({"who", "that", "which"})
_BE = frozenset({"is", "are", "was", "were"})


def _said_of(said: Term) -> frozenset[str]:
    """The terms a kind told by its own clause (:meth:`OntologyGroundedParser.said_vehicle`) makes specific."""
    if said.normalised == "turning vehicle":
        return _TURNING_KINDS
    if said.normalised == "oncoming bicyclist":
        return frozenset(k for k, v in _ONCOMING_KINDS.items() if v == "oncoming bicyclist")
    return _SAID_VEHICLES


_SUDDENLY = frozenset({"short", "suddenly", "quickly", "abruptly", "hard", "fast"})
_HAS = frozenset({"has", "have", "had"})
_MODALS = frozenset({"must", "should", "shall", "may", "might", "can", "will", "would"})


def _compared_to(m: Mention, toks: list[Token]) -> bool:
    """A place that a sign or signal implies, where the sign or signal is only what something is compared to ("obey
    the flagger as you would a traffic signal", "treat it like a STOP sign"): nothing stands there."""
    if not {"sign", "signal", "light"} & set(tokens(m.surface)):
        return False
    before = _clause_words_before(m, toks, 5)
    return _has_any(before, _COMPARISON_CUES)


_COMPARISON_CUES = (("as", "you", "would"), ("like",), ("same", "as"), ("just", "as"))


def _absent(m: Mention, toks: list[Token]) -> bool:
    """A thing said not to be there: "if there is no limit line", "no STOP or YIELD signs", "even if they are not in a
    crosswalk" (within the mention's clause)."""
    clause = toks[m.start].clause
    first = _clause_start(toks, clause)
    if toks[first].word == "without" and (first == 0 or toks[first - 1].sentence != toks[first].sentence):
        return True  # "Without a limit line, stop before the crosswalk": a fronted condition of absence
    before = _clause_words_before(m, toks, 4)
    if before[-1:] == ["no"]:
        return True
    if before[-1:] and before[-1] in _CONJUNCTIONS and "no" in before[:-2]:
        return True  # "no STOP or YIELD signs": the second of a coordination after "no"
    last = [w for w in before if w not in _ARTICLES][-1:]
    if last == ["neither"] or (
        last == ["nor"] and any(t.word == "neither" for t in toks[: m.start] if t.clause == clause)
    ):
        return True  # "where there is neither a limit line nor a crosswalk"
    if "no" in before and _HAVING & set(before[before.index("no") + 1 :]):
        return True  # "if no corner has a STOP sign"
    if _negated_list_item(m, toks):
        return True
    return before[-3:-1] in (["not", "in"], ["not", "at"]) and before[-1] in {"a", "an", "the"}


_NEGATIONS = frozenset({"no", "without", "neither"})


def _negated_list_item(m: Mention, toks: list[Token]) -> bool:
    """Whether the mention is a later item of a comma list that "no", "without" or "neither" opens: "with no STOP
    sign, YIELD sign, or signal". Each item is its own clause (commas part clauses) and holds only the item: the
    list's first item ends its clause at most three words after the negation ("no space to return" is no item), and
    its last item, after "and" or "or", ends its clause within four words. A list that goes on into the sentence's
    verb ("On roads without shoulders, bicyclists, pedestrians, and farm vehicles share the lane") is no list of
    things ruled out, nor is an item whose clause goes on ("and pedestrians have the right-of-way")."""
    clause = toks[m.start].clause
    sentence = toks[m.start].sentence
    start = _clause_start(toks, clause)
    lead = [t.word for t in toks[start : m.start]]
    if lead[:1] and lead[0] in _CONJUNCTIONS:
        lead = lead[1:]
    if any(w not in _ARTICLES for w in lead):
        return False
    if m.end < len(toks) and toks[m.end].clause == clause:
        return False  # the clause goes on: a sentence of its own, no list item
    if start == 0 or toks[start - 1].sentence != sentence:
        return False
    # On to the list's last item: short clauses of their own, the last one opened by "and" or "or".
    size = Counter(t.clause for t in toks)
    item = clause
    while toks[_clause_start(toks, item)].word not in _CONJUNCTIONS:
        nxt = next((t for t in toks[m.end :] if t.clause > item), None)
        if nxt is None or nxt.sentence != sentence:
            return False
        item = nxt.clause
        if size[item] > 4:
            return False
    if size[item] > 4:
        return False
    # Back over the list's earlier items (short clauses of their own) to the clause that opens it.
    prev = toks[start - 1].clause
    while True:
        first = _clause_start(toks, prev)
        words = [t.word for t in toks[first:start]]
        negated = [i for i, w in enumerate(words) if w in _NEGATIONS]
        if negated:
            return len(words) - negated[-1] <= 4 and "to" not in words[negated[-1] :]
        if len(words) > 4 or first == 0 or toks[first - 1].sentence != sentence:
            return False
        start, prev = first, toks[first - 1].clause


_TURN_WORDS = frozenset({"turn", "turns", "turning", "u-turn", "u-turns"})
_ON_FOOT = frozenset({"pedestrian", "person", "guide", "senior"})
# Words and term words for people on foot (a crossing guard walks out with the children).
_ON_FOOT_WORDS = _ON_FOOT | {"people", "child", "kid", "walker", "schoolchild", "hiker", "jogger", "guard"}


def _without_doing(toks: list[Token], i: int) -> bool:
    """Whether ``toks[i]`` is a "without" followed by a gerund that ends its clause ("without looking,"). (The caller
    keeps "without" where that word is the mention itself: "without lighting," rules the lighting out.)"""
    return (
        toks[i].word == "without"
        and i + 1 < len(toks)
        and toks[i + 1].clause == toks[i].clause
        and toks[i + 1].word.endswith("ing")
        and (i + 2 == len(toks) or toks[i + 2].clause != toks[i].clause)
    )


_POSTED = frozenset({"posted", "displayed", "shown", "present"})


def _said_posted(m: Mention, toks: list[Token]) -> bool:
    """Whether a sign's mention is followed, in its clause, by "is posted" ("are displayed", "has been posted")."""
    clause = toks[m.start].clause
    after: list[str] = []
    for t in toks[m.end : m.end + 3]:
        if t.clause != clause:
            break
        after.append(t.raw.lower())
    if after[:2] in (["has", "been"], ["have", "been"]):
        rest = after[2:]
    elif after[:1] in (["is"], ["are"], ["was"], ["were"]):
        rest = after[1:]
    else:
        return False
    return bool(rest) and rest[0] in _POSTED


_CURB_WORDS = frozenset({"curb", "curbs", "kerb", "kerbs", "corner", "corners"})
_ROUNDABOUT = frozenset({"roundabout", "roundabouts", "rotary", "circle"})


def _kind_after_example(m: Mention, mentions: list[Mention], toks: list[Token]) -> bool:
    """The general kind after an example of it ("a deer or other animal", "buses and other large vehicles"): the
    example is the thing an MR adds; the kind only says what else the rule covers."""
    if m.term.category != "object":
        return False
    for o in mentions:
        if o.term == m.term or o.term.category != "object" or o.end > m.start or m.start - o.end > 3:
            continue
        between = [t.word for t in toks[o.end : m.start]]
        if "other" in between and set(between) <= {"or", "and", "other", "any", "an", "a"}:
            return True
    # The mention may itself start with "other" ("or other animals" matched as one phrase).
    if toks[m.start].word == "other" and m.start >= 2 and toks[m.start - 1].word in {"or", "and"}:
        return any(o.end == m.start - 1 and o.term != m.term and o.term.category == "object" for o in mentions)
    return False


_PASSING = frozenset({"pass", "passing", "overtake", "overtaking"})


def _stop_behind_a_stopped_vehicle(
    behaviors: dict[str, float], evidence: dict[str, list[str]], mentions: list[Mention], toks: list[Token]
) -> None:
    """ "Never pass a vehicle that is stopped at a crosswalk": the ego stops behind it (someone may be crossing in
    front of it), so the passing ban's cue weight moves from keep current to slow down."""
    passed = _passed_stopped_vehicle(mentions, toks)
    if passed is None or behaviors.get("keep current", 0.0) <= 0:
        return
    moved = min(2.0, behaviors["keep current"])
    behaviors["keep current"] -= moved
    if behaviors["keep current"] <= 0:
        del behaviors["keep current"]
    behaviors["slow down"] = behaviors.get("slow down", 0.0) + moved
    evidence.setdefault("slow down", []).append(f"not to pass a {passed.surface}")


def _passed_stopped_vehicle(mentions: list[Mention], toks: list[Token]) -> Mention | None:
    """A stopped vehicle that the rule says not to pass ("Never pass a vehicle that is stopped at a crosswalk", "do not
    overtake a car that has stopped"): the passing verb is negated in its clause and the vehicle is its object, or the
    object is "it" and the vehicle was said to stop earlier in the sentence ("If a car is stopped at a crosswalk, do
    not pass it")."""
    for i, t in enumerate(toks):
        if t.word not in _PASSING:
            continue
        if not {"not", "never"} & {x.word for x in toks[max(0, i - 2) : i] if x.clause == t.clause}:
            continue
        for m in mentions:
            if m.term.normalised == "stopped vehicle" and i < m.start <= i + 3 and toks[m.start].sentence == t.sentence:
                return m
        if i + 1 < len(toks) and toks[i + 1].word == "it":
            for m in mentions:
                earlier = m.end <= i and toks[m.start].sentence == t.sentence
                stopped = m.term.normalised == "stopped vehicle" or (
                    m.term.normalised in _SAID_VEHICLES and _said_to_have_stopped(m, toks)
                )
                if earlier and stopped:
                    return m
    return None


_LACKING_GLUE = frozenset({"with", "no", "without", "that", "which", "has", "have", "any", "a", "an", "the"})


def _said_absent(place: Mention, absent: Mention, toks: list[Token]) -> bool:
    """The place is the thing said to be absent ("if there is no crosswalk ... the crosswalk"), or a fallback named
    after an absence in its sentence ("If there is no limit line, stop before the crosswalk"). A place named before
    the absence ("a streetcar stopped to let passengers on, and there is no safety zone") stays."""
    if tokens(place.surface) == tokens(absent.surface):
        return True
    return toks[place.start].sentence == toks[absent.start].sentence and place.start > absent.start


def _lacks(place: Mention, absent: Mention, toks: list[Token]) -> bool:
    """A place said to lack something ("At intersections with no traffic signals or signs", "a crossing without
    gates"): the place is there, only what it lacks is not. (Within one sentence: "stop before the crosswalk. With no
    crosswalk, ..." says the next sentence's case, and "stop before the crosswalk; with no crosswalk, ..." the next
    clause's.)"""
    if toks[place.start].clause != toks[absent.start].clause:
        return False
    between = [t.word for t in toks[place.end : absent.start]]
    return 0 < len(between) <= 3 and set(between) <= _LACKING_GLUE and bool({"no", "without"} & set(between))


def _verb_stops(m: Mention, toks: list[Token]) -> bool:
    """ "the school bus stops to let children off", "the school bus is stopped": the bus's verb, not the head of a
    compound (a noun "stops" is not followed by "to" or "for")."""
    last = toks[m.end - 1]
    nxt = toks[m.end].word if m.end < len(toks) and toks[m.end].clause == last.clause else ""
    # "the school bus is stopped", "a bus has stopped": a phrase with a verb in it is a clause, no compound either.
    if {t.raw.lower() for t in toks[m.start : m.end]} & _CLAUSE_VERBS:
        return True
    # "a school bus stops and ...": after "a", a plural "stops" cannot end the noun phrase.
    singular = any(t.word in {"a", "an"} for t in toks[max(0, m.start - 2) : m.start])
    return last.raw.lower() == "stops" and (nxt in {"to", "for", "when", "suddenly"} or singular)


_CLAUSE_VERBS = frozenset({"is", "are", "was", "were", "has", "have", "had"})


_STOP_VERBS = frozenset({"stop", "stopping", "stopped", "wait", "waiting", "halt"})
# Where a line is that the driver stops at ("stop at the limit line", "behind the stop line").
_STOP_AT = frozenset({"at", "before", "behind"})
_BARE_TURN = frozenset({"turn", "turning"})
# Manoeuvres made anywhere, not at a junction: "when you are turning or backing up" names no intersection.
_ANYWHERE_MANOEUVRES = frozenset(
    "back backing reverse reversing park parking merge merging brake braking swerve swerving steer steering change "
    "changing fall falling wobble wobbling".split()  # (a rider who may "turn or fall" does so anywhere)
)
# "turn sharply", "turning suddenly": a swerve of the wheel, not a turn at a junction.
_SHARPLY = frozenset({"sharply", "suddenly", "abruptly", "quickly", "hard"})


_COLOURED_CURB = re.compile(r"\b(?:red|white|yellow|green|blue|colou?red|painted)\s+(?:curbs?|zones?)\b", re.IGNORECASE)


def _names_a_lane(analysis: RuleAnalysis) -> bool:
    """The rule is about a centre turn lane or yellow lane lines: it names one as more than an aside."""
    return any(
        m.term.category == "traffic_infrastructure"
        and ({"center", "lane"} <= set(m.term.tokens) or {"yellow", "line"} <= set(m.term.tokens))
        and not (m.ruled_out or m.aside)
        for m in analysis.manipulations
    )


def _general_manoeuvre(m: Mention, toks: list[Token]) -> bool:
    """A turn into a property ("turn left into a driveway", "turn left into or out of a driveway"), a bare
    "turn"/"turning" coordinated with a manoeuvre made anywhere ("turning or backing up", "parking or turning"), or a
    turn offered as the other choice to passing ("use the left lane to pass or turn left") is driving in general,
    not a place."""
    clause = toks[m.start].clause
    turn = any(t.word in {"turn", "turning", "turns"} for t in toks[m.start : m.end])
    after = [t.word for t in toks[m.end : m.end + 8] if t.clause == clause]
    if turn and any(w in _OFF_ROAD_PLACES for w in after):
        return True
    if toks[m.start].word not in _BARE_TURN:
        return False
    # "pass or turn left", "to pass or to turn left", "turning or passing": passing and the turn joined by "or", one
    # right beside the other (not "let them pass and then turn", where others pass and the ego turns after)
    before = [t.word for t in toks[max(0, m.start - 3) : m.start] if t.clause == clause]
    if before[-1:] == ["to"]:
        before = before[:-1]
    if before[-2:-1] in (["pass"], ["passing"]) and before[-1:] == ["or"]:
        return True
    rest = after[1:] if after[:1] in (["left"], ["right"]) else after
    if rest[:1] == ["or"] and rest[1:2] in (["pass"], ["passing"]):
        return True
    if m.end - m.start != 1:
        return False
    if after[:1] and after[0] in _SHARPLY:
        return True
    near = [t.word for t in toks[max(0, m.start - 3) : m.end + 3] if t.clause == clause]
    return any(w in {"or", "and"} for w in near) and any(w in _ANYWHERE_MANOEUVRES for w in near)


# The words that may stand before a place its sentence opens on ("An intersection is blind when ...").
_OPENING_DETERMINERS = _ARTICLES | {"every", "each", "any"}


_PLACE_PREPOSITIONS = frozenset({"at", "in", "on", "near"})


def _sets_the_rule(m: Mention, toks: list[Token]) -> bool:
    """Whether the mention is the place the rule is set in: in the opening clause of the rule when that clause opens
    with a preposition of place ("At a railroad crossing ...", "At an unmarked rail crossing ..."), or by its own name
    as the rule's whole first line, a heading ("Alleys / Alleys are ..."; a heading a lexicon alias fills, "Railroad
    Tracks", names what the text tells of, not always a place)."""
    if toks[0].word in _PLACE_PREPOSITIONS and toks[m.start].clause == toks[0].clause:
        return True
    return m.via == "term" and _whole_first_line(m, toks)


def _whole_first_line(m: Mention, toks: list[Token]) -> bool:
    """Whether the mention is all of the text's first sentence or line (a heading on a line of its own)."""
    return m.start == 0 and (m.end == len(toks) or toks[m.end].sentence != toks[0].sentence)


def _fallback_place(m: Mention, toks: list[Token]) -> bool:
    """ "or before the crosswalk if there is no line", "... if no line is painted", "... where there is none": a place
    used only when something else is missing. ("even if no lines are painted" concedes: the place is there anyway.
    Nor is a place its sentence opens on a fallback: "An intersection is blind when no STOP sign ..." defines it.)"""
    sentence = toks[m.start].sentence
    if all(t.word in _OPENING_DETERMINERS for t in toks[: m.start] if t.sentence == sentence):
        return False
    after = [t.word for t in toks[m.end : m.end + 6] if t.sentence == sentence]
    return any(
        w in {"if", "when", "where"}
        and not (i and after[i - 1] == "even")
        and {"no", "none"} & set(after[i + 1 : i + 4])
        for i, w in enumerate(after)
    )


def _stop_point(m: Mention, toks: list[Token], preps: frozenset[str] = frozenset({"before", "behind"})) -> bool:
    """Whether the place is named as where to stop: "stop before the crosswalk", "stop at the limit line, or before
    entering the crosswalk" (a stop word earlier in the sentence, one of ``preps``, by default "before" or "behind",
    just ahead of the place). Any stop word counts, a STOP sign's and a waiting pedestrian's too: the caller asks only
    for a junction's sign or signal, whose place is the junction either way."""
    sentence = toks[m.start].sentence
    listed = [t.word for t in toks[max(0, m.start - 7) : m.start] if t.sentence == sentence]
    # (four words ahead of the place, or seven where it is the last of such places: "before the limit line or
    # crosswalk")
    near = listed if "or" in listed[-2:] else listed[-4:]
    if not preps & set(near):
        return False
    return any(t.word in _STOP_VERBS for t in toks[: m.start] if t.sentence == sentence)


def _ego_already_there(m: Mention, toks: list[Token]) -> bool:
    """ "If you are (already) in an intersection", "do not stop inside an intersection": a clause that says where
    the ego is, or where it is not to stop on its way."""
    before = _clause_words_before(m, toks, 6)
    return _has_any(before, _EGO_THERE)


_EGO_THERE = (
    ("if", "you", "are"),
    ("if", "you", "re"),
    ("not", "stop", "in"),
    ("not", "stop", "inside"),
    ("never", "stop", "in"),
    ("never", "stop", "inside"),
)


def _excepted(m: Mention, toks: list[Token]) -> bool:
    """A place in an exception for where the ego may be ("stop, unless you are in an intersection"): the rule holds
    everywhere else."""
    before = _clause_words_before(m, toks, 6)
    return _has_any(before, _EXCEPTION_CUES)


_EXCEPTION_CUES = (("unless", "you", "are"), ("unless", "you", "re"))


def _forbidden_u_turn(m: Mention, toks: list[Token]) -> bool:
    """A U-turn the rule forbids ("Do not make a U-turn", "never make a U-turn") is a manoeuvre the ego keeps from
    wherever it drives, not a junction the rule is about."""
    if not any(t.word in {"u-turn", "u-turns"} for t in toks[m.start : m.end]):
        return False
    return bool({"not", "never", "no"} & set(_clause_words_before(m, toks, 4)))


_OFF_ROAD_PLACES = frozenset({"driveway", "driveways", "parking", "garage", "property"})


_ADVERB_ENDS = frozenset({"left", "right", "ahead", "around", "back"})
_LIGHT_WORDS = frozenset({"light", "arrow", "signal", "lamp"})
_SIGN_OR_LIGHT_WORDS = _LIGHT_WORDS | {"sign"}
# What a prohibitory sign's slash is drawn through, and the picture it crosses ("a red line through a U-turn arrow").
_SLASH_PREPOSITIONS = frozenset({"through", "across", "over"})
_PICTURE_NOUNS = frozenset({"arrow", "symbol"})
# Words of a place cue that a signal, line or barrier implies ("the stop line", "red light signals").
_SIGNAL_PLACE_WORDS = frozenset({"line", "barrier", "gate"}) | _LIGHT_WORDS


def _signal_place(m: Mention) -> bool:
    """A place named by a light, a stop line or a barrier: a junction, unless a railroad crossing or a ramp meter the
    rule is about owns them."""
    return bool(_SIGNAL_PLACE_WORDS & set(tokens(m.surface)))


# Words that make flashing lights a traffic signal's ("a flashing red traffic signal"), not a vehicle's own.
_TRAFFIC_SIGNAL_WORDS = frozenset({"signal", "traffic"})
_STREET_RAIL = frozenset({"streetcar", "tram", "trolley"})
# Public transport that stops for riders (bus stopping).
_TRANSIT = frozenset({"rail vehicle", "public transport bus", "line bus"})
# What makes tracks a railroad's ("railroad tracks"), not a streetcar's in the street.
_RAILROAD_WORDS = frozenset({"railroad", "railway", "train"})


# What an officer does in directing traffic, as the tokenizer folds the words ("an officer waves you through", "the
# officer directs you"). "signal" counts only as "signal you" or "hand signal": a bare one is the traffic signal.
_DIRECTING = frozenset(
    {"direct", "directing", "directed", "direction", "instruct", "instructing", "instructed", "instruction"}
    | {"wave", "waving", "waved", "tell", "telling", "told", "gesture", "gesturing", "gestured"}
    | {"motion", "motioning", "motioned", "signaling", "signalling", "signaled", "signalled"}
)
_EXCEPTION_WORDS = frozenset({"unless", "except"})
_TIMES_OF_DAY = frozenset({"dawn", "dusk", "night", "nighttime", "night-time", "twilight", "sunrise", "sunset"})
# The signals and signs an officer who directs traffic overrides, named in the rule (a "hand signal" is none).
_SIGNAL_WORDS = frozenset({"light", "signal", "sign"})
_SIGNAL_DETERMINERS = frozenset({"the", "a", "traffic", "red", "yellow", "green", "amber"})


def _directing_sentences(toks: list[Token]) -> frozenset[int]:
    """The sentences in which an officer directs traffic: the word "officer" with a directing word at most four words
    either side, in its sentence ("hand signal" and "signal you" count, a bare "signal" does not). An officer named as
    the exception ("Do not drive on the shoulder unless signs allow it or an officer directs you to") directs nothing
    that the rule is about."""
    found: set[int] = set()
    for i, t in enumerate(toks):
        if t.word != "officer":
            continue
        if _EXCEPTION_WORDS & {x.word for x in toks[max(0, i - 12) : i] if x.sentence == t.sentence}:
            continue
        for j in range(max(0, i - 4), min(len(toks), i + 5)):
            if toks[j].sentence != t.sentence:
                continue
            after = toks[j + 1].word if j + 1 < len(toks) and toks[j + 1].sentence == t.sentence else ""
            word = toks[j].word
            if word in _DIRECTING or (word == "signal" and after == "you") or (word == "hand" and after == "signal"):
                found.add(t.sentence)
                break
    return frozenset(found)


def _officer_overrides_signals(toks: list[Token]) -> bool:
    """Whether an officer directs traffic in the rule and the rule names a signal, light or sign (not a hand signal,
    nor "signal you"): the officer overrides them at a junction."""
    if not _directing_sentences(toks):
        return False
    return any(t.word in _SIGNAL_WORDS and (t.word != "signal" or _signal_noun(toks, i)) for i, t in enumerate(toks))


# Vehicle terms that name a group, not a case of it ("vehicles stopped along the road").
_GROUP_TERMS = frozenset({"vehicle", "stopped vehicle", "motor vehicle"})
# The words a short list opener starts with ("This applies to:"), and the words that make it list.
_LIST_SUBJECTS = frozenset({"this", "these", "it", "they"})
_LIST_VERBS = frozenset({"include", "including", "cover", "apply", "following"})


def _listed_case(model: _RegionModel, analysis: RuleAnalysis, ranked: list[Mention]) -> Mention | None:
    """The first road user or thing listed by a sentence that follows one naming the lead (the lead's own sentence,
    or the next one that names its term), where that sentence opens with a defining opener ("This includes roller
    skates", "These include: Stationary Caltrans trucks") or with a short opener that lists ("This covers:", "This
    applies to:", "These are the following:") up to a colon; what follows the colon is the list, or, where nothing
    does, the next sentence that names anything. A group term ("Parked emergency vehicles" holds a stopped vehicle)
    gives way to the case it holds; a list of group terms alone names no case. None where no such list follows."""
    if not ranked:
        return None
    toks, text = analysis.tokens, analysis.rule.text
    by_sentence: dict[int, list[int]] = {}
    for i, t in enumerate(toks):
        by_sentence.setdefault(t.sentence, []).append(i)
    naming = {toks[m.start].sentence for m in analysis.manipulations if m.term == ranked[0].term}
    named = {toks[m.start].sentence for m in analysis.manipulations}
    sentences = sorted(by_sentence)
    for before, s in itertools.pairwise(sentences):
        if before not in naming:
            continue
        positions = by_sentence[s]
        words = tuple(toks[i].word for i in positions)
        # the words up to a colon that ends the sentence's opening (at most six words in)
        head = next((k + 1 for k, i in enumerate(positions[:6]) if text[toks[i].end :].lstrip(" \t")[:1] == ":"), 0)
        opener = next((d for d in model.defining if words[: len(d)] == d), None)
        lists = opener is not None or (words[0] in _LIST_SUBJECTS and bool(_LIST_VERBS & set(words[:head])))
        if head and lists:
            rest = positions[head:]
            if rest:
                listing, start = {s}, rest[0]
            else:
                listing, start = set([n for n in sentences if n > s and n in named][:1]), 0
        elif opener is not None:
            listing, start = {s}, positions[0] + len(opener)
        else:
            continue
        items = sorted(
            (
                m
                for m in analysis.manipulations
                if m.start >= start and toks[m.start].sentence in listing and not (m.ruled_out or m.aside)
            ),
            key=lambda m: (m.start, m.start - m.end),
        )
        cases = [m for m in items if m.term.normalised not in _GROUP_TERMS]
        if not cases:
            return None
        return _ranked_entry(ranked, cases[0].term)
    return None


def _labelled_case(analysis: RuleAnalysis, ranked: list[Mention]) -> Mention | None:
    """The case a labelled list item names: its label opens a line (after any bullet mark, number or letter), is at
    most four words and ends with a colon ("... for different conditions:\nPacked snow: Reduce your speed by half.",
    "- Heavy fog: ..."), and the line before (blank lines aside) ends with a colon. In a run of labelled items the
    first is that one, and its first term wins; None where there is none."""
    text, toks = analysis.rule.text, analysis.tokens
    after_intro = False
    offset = 0
    for line in text.splitlines(keepends=True):
        label = _LABEL.match(line)
        inside = [
            m
            for m in analysis.manipulations
            if label is not None
            and not (m.ruled_out or m.aside)
            and offset + label.start("label") <= toks[m.start].start
            and toks[m.end - 1].end <= offset + label.end("label")
        ]
        if inside and after_intro:
            return _ranked_entry(ranked, min(inside, key=lambda m: m.start).term)
        if line.strip():  # a blank line keeps the list open
            after_intro = line.rstrip().endswith(":")
        offset += len(line)
    return None


def _ranked_entry(ranked: list[Mention], term: Term) -> Mention | None:
    """The ranking's mention of ``term`` (it holds one per term), unless that is ruled out or an aside."""
    return next((m for m in ranked if m.term == term and not (m.ruled_out or m.aside)), None)


# A list item's label: after any bullet mark, number or letter ("1.", "a)", "(b)"), at most four words (a slash joins
# two) before a colon.
_LABEL = re.compile(
    r"[^\w\n]*(?:(?:\d+|[A-Za-z])[.)]\s+)?(?P<label>[A-Za-z][\w'’-]*(?:[ /][A-Za-z][\w'’-]*){0,3})[ \t]*:"
)


# Words before a stop said not to be needed that make it no statement: a purpose ("so that you do not have to stop")
# or a belief the rule warns against ("Do not assume you will not have to stop").
_NO_STATEMENT_BEFORE = frozenset({"so", "assume", "expect", "think"})
# A heading line: a few words with no bullet mark and no closing stop ("Stopping for School Buses").
_HEADING_LINE = re.compile(r"[A-Z][\w'’,&/() -]*[\w)]\s*")


def _exception_after(toks: list[Token], cue: int, start: int) -> bool:
    """Whether a stop said not to be needed at ``start`` follows the slow or stop cue at ``cue`` as its exception: the
    cue is in an earlier sentence, or earlier in the same sentence with a "but" between them ("you must stop, but you
    do not have to stop if ...")."""
    if toks[cue].sentence < toks[start].sentence:
        return True
    return cue < start and toks[cue].sentence == toks[start].sentence and "but" in {t.word for t in toks[cue:start]}


def _no_statement(toks: list[Token], start: int, end: int) -> bool:
    """Whether the words at ``start:end`` state no rule of their own: a purpose or a belief (a word of
    ``_NO_STATEMENT_BEFORE`` earlier in their sentence; "so long as" is none) or a concession that a "but" takes back
    ("You are not required to stop, but ease off")."""
    sentence = toks[start].sentence
    earlier = [t.word for t in toks[:start] if t.sentence == sentence]
    before = {w for k, w in enumerate(earlier) if not (w == "so" and earlier[k + 1 : k + 2] == ["long"])}
    after = [t.word for t in toks[end:] if t.sentence == sentence]
    return bool(before & _NO_STATEMENT_BEFORE) or "but" in after


def _beside_a_power_failure(m: Mention, toks: list[Token]) -> bool:
    """Whether the mention's sentence names a power failure ("a storm or power failure", "a power-outage", "a
    blackout", "a storm knocks out the power", "the power goes out")."""
    words = [t.word for t in toks if t.sentence == toks[m.start].sentence]
    if {"blackout", "power-failure", "power-outage", "power-cut"} & set(words):
        return True
    for i, w in enumerate(words):
        if w != "power":
            continue
        if i + 1 < len(words) and words[i + 1] in {"failure", "outage", "cut"}:
            return True
        if "out" in words[max(0, i - 3) : i + 4]:  # "knocks out the power", "the power goes out"
            return True
    return False


def _signal_noun(toks: list[Token], i: int) -> bool:
    """Whether the "signal" at ``i`` is a traffic signal: "the signal", "traffic signal", "signal light", "a red
    signal", not a hand signal, the driver's own ("your signal") or the verb ("signal and pull over")."""
    before = toks[i - 1].word if i > 0 else ""
    after = toks[i + 1].word if i + 1 < len(toks) else ""
    return after == "light" or before in _SIGNAL_DETERMINERS


def _behind_another(m: Mention, toks: list[Token]) -> bool:
    """A "vehicle behind" named as behind another road user or thing ("a car behind a motorcycle"), in one clause."""
    return (
        m.term.normalised == "vehicle behind"
        and toks[m.end - 1].word == "behind"
        and m.end < len(toks)
        and toks[m.end].clause == toks[m.end - 1].clause
        and toks[m.end].word in {"a", "an", "the", "another", "that", "this"}
    )


def _runs_in_the_street(m: Mention) -> bool:
    """A rail vehicle named as a streetcar, tram, trolley or light rail vehicle: it runs in the street, not over a
    railroad crossing."""
    return bool(_STREET_RAIL & set(tokens(m.surface))) or "light rail" in m.surface.lower()


_NO_JUNCTION_ROADS = frozenset({"freeway", "freeways", "on-ramp", "on-ramps", "ramp", "ramps", "motorway", "motorways"})


_LIST_GLUE = re.compile(r"^(?:[\s,]|\band\b|\bor\b|\bother\b|\ball\b|\bevery\b|\ban?\b|\bthe\b)*$", re.IGNORECASE)
_LINKING = re.compile(r",|\band\b|\bor\b", re.IGNORECASE)
_LIST_OPENS = re.compile(r"(?:^|[.;:!?]|\bbut|,)\s*$", re.IGNORECASE)
_MODAL_AFTER = re.compile(
    r"^\s*(?:all\s+|also\s+)?(?:must|may|shall|should|can|cannot|need\s+to|have\s+to|are\s+required)(?:n?['\u2019]t)?\b"
    r"(?!\s+(?:not\s+|never\s+)?be\b)",
    re.IGNORECASE,
)


def _addressees(mentions: list[Mention], toks: list[Token], text: str) -> list[Mention]:
    """Road users listed, two or more, as the subject of a modal verb ("Trucks, buses, motorcycles, and passenger
    cars must all obey", "motorcycles, cars and other motor vehicles must not pass"): the rule speaks to them, the
    ego among them. ("... must not be overtaken" makes them what the ego must not pass: they stay.)"""
    ordered = sorted((m for m in mentions if m.term.category == "object"), key=lambda m: m.start)
    out: list[Mention] = []
    run: list[Mention] = []
    for m in [*ordered, None]:
        if m is not None and run and _LIST_GLUE.match(text[toks[run[-1].end - 1].end : toks[m.start].start]):
            run.append(m)
            continue
        # (one road user named twice, a heading glued to the text's first words, "Motorcycles A motorcycle can stop
        # ...", is no list; nor is a heading on a line of its own and the one road user under it, "Motorized Scooters /
        # Scooter riders may ...": a line break alone is no list's glue, though it may stand before one, "Trucks /
        # Buses, motorcycles and cars must ...")
        body = run
        for j in range(1, len(run)):
            gap = text[toks[run[j - 1].end - 1].end : toks[run[j].start].start]
            if "\n" in gap and not _LINKING.search(gap):
                body = run[j:]
        if len({r.term.normalised for r in body}) >= 2:
            opens = _LIST_OPENS.search(text[: toks[run[0].start].start])
            if opens and _MODAL_AFTER.match(text[toks[run[-1].end - 1].end :]):
                out += run
        run = [m] if m is not None else []
    return out


# "reserved for", "meant for", "open to": who a lane is for.
_FOR_USERS = tuple(
    tuple(p.split())
    for p in (
        "reserved for",
        "meant for",
        "intended for",
        "only for",
        "designated for",
        "set aside for",
        "is for",
        "are for",
        "for use by",
        "open to",
        "limited to",
        "restricted to",
    )
)
# Road users a driver watches out for, whatever lane they have: no lane's mere users.
_VULNERABLE_WORDS = frozenset({"pedestrian", "bicyclist", "bicycle", "child", "person", "micro-vehicle", "passenger"})
# Riders whom road surfaces endanger ("more dangerous for motorcyclists"), and the words that make one more road user
# of a rider ("as well as for bicyclists", "not just motorcycles").
_RIDERS = frozenset({"motorcyclist", "bicyclist"})
_ALSO_PHRASES = [("as", "well", "as"), ("not", "just"), ("not", "only"), ("also",), ("even",)]


# Things that stand between a driver and what they need to see (the tokenizer reads plurals as singulars), and the
# words that say they do.
_VIEW_BLOCKERS = frozenset({"building", "tree", "hedge", "bush", "shrub", "wall", "fence"})
_SIGHT_WORDS = frozenset(
    {"block", "blocking", "hide", "hiding", "view", "see", "seeing", "sight", "obscure", "obstruct"}
)


_AMONG = frozenset({"between", "near", "behind", "around", "among", "past"})


_PLAIN = "plain vehicle for "
# ("stopped for long near children": the children are no reason it stopped)
_PREPOSITIONS = frozenset({"at", "in", "on", "near", "by", "behind", "from", "to", "with", "of", "around", "beside"})


def _generic_name(m: Mention) -> str:
    """The term a mention's wording names for specialising a generic road user: for a kind a region calls a plain
    vehicle (see plain_vehicles in the lexicon), that kind ("the car ahead" is the one in front, whatever the list
    calls it)."""
    return m.via.removeprefix(_PLAIN) if m.via.startswith(_PLAIN) else m.term.normalised


def _whom_it_stopped_for(m: Mention, mentions: list[Mention], toks: list[Token]) -> bool:
    """Whom a stopped vehicle the rule names stopped for ("Never pass a car that has stopped for a pedestrian", "a
    vehicle that has stopped at a crosswalk for pedestrians"): why it stopped, while the stopped vehicle is what the
    ego meets."""
    clause = toks[m.start].clause
    # "for a pedestrian", "for people on foot": "for" up to three words before the mention, in its clause.
    prep = next(
        (i for i in range(m.start - 1, max(0, m.start - 4), -1) if toks[i].word == "for" and toks[i].clause == clause),
        -1,
    )
    if prep < 0 or _PREPOSITIONS & {t.word for t in toks[prep + 1 : m.start]}:
        return False
    return any(
        o.term.normalised == "stopped vehicle"
        and not o.ruled_out
        and o.end <= prep
        and prep - o.end <= 4
        and all(t.clause == clause for t in toks[o.start : m.start])
        for o in mentions
    )


def _list_order(mentions: list[Mention], toks: list[Token], text: str) -> None:
    """Road users listed together ("yield to oncoming traffic and pedestrians") rank in the order the list names them,
    whether each is named by its ontology term or by a handbook phrase for it."""
    users = sorted((m for m in mentions if m.term.category == "object"), key=lambda m: m.start)
    _aside_lists(users, toks, text)
    for a, b in itertools.pairwise(users):
        between = {t.word for t in toks[a.end : b.start]}
        if (
            b.start > a.end
            and between <= _LIST_WORDS
            and ("for" not in between or bool(between & {"and", "or"}))  # "for X and for Y", not "X for Y to ..."
            and not (a.aside or a.ruled_out)
            and toks[a.start].clause == toks[b.start].clause
            and not set(tokens(a.surface)) <= _GENERIC_VEHICLE_WORDS  # "cars and bicyclists": cars are any traffic
            and b.score > a.score
        ):
            b.score = a.score - 0.01


_LIST_WORDS = frozenset({"and", "or", "to", "for", "the", "any", "other"})


def _aside_lists(users: list[Mention], toks: list[Token], text: str) -> None:
    """A list given as examples ("such as", "include") is examples to its last item ("include a person who uses a
    wheelchair, tricycle, or quadricycle"), though that stands too far from the "include" to be marked by it.

    A list is a run of road users in one sentence with nothing but commas, "and" or "or" between them; its "and" or
    "or" closes it, and a comma after that ends it. An example phrase that opens the sentence ("Just like bicyclists,
    motorcyclists and pedestrians are hard to see") ends at its comma, as in ``_score``."""

    def examples(m: Mention) -> bool:
        clause = [t.word for t in toks[: m.start] if t.clause == toks[m.start].clause]
        return _has_any(clause, _EXAMPLE_PHRASES)

    def opens_sentence(m: Mention) -> bool:
        first = _sentence_start(toks, m.start)
        words = [t.word for t in toks[first : first + 3]]
        return toks[first].clause == toks[m.start].clause and any(
            tuple(words[i : i + len(p)]) == p for p in _EXAMPLE_PHRASES for i in range(2)
        )

    def spread(run: list[Mention]) -> None:
        lead = run[0]
        if len(run) < 2 or not lead.aside or lead.ruled_out or not examples(lead) or opens_sentence(lead):
            return
        for later in run[1:]:
            if not (later.aside or later.ruled_out):
                later.aside = True
                later.score = min(later.score, lead.score - 0.01)

    run: list[Mention] = []
    closed = False
    for m in users:
        if run and m.start >= run[-1].end and toks[run[-1].start].sentence == toks[m.start].sentence:
            gap = text[toks[run[-1].end - 1].end : toks[m.start].start]
            joined = bool(re.search(r"\b(?:and|or)\b", gap))
            # only commas and "and"/"or" between; after the closing "and"/"or", a bare comma ends the list
            if _LIST_GAP.fullmatch(gap) and (joined or not closed):
                run.append(m)
                closed = closed or joined
                continue
        if closed:
            spread(run)
        run, closed = [m], False
    if closed:
        spread(run)


# What may stand between two items of a list: commas, "and", "or" (no semicolon, colon or full stop).
_LIST_GAP = re.compile(r"(?:\s|,|\band\b|\bor\b)*")
# Words that give examples of what comes before them.
_EXAMPLE_PHRASES = [
    ("such", "as"),
    ("include",),
    ("including",),
    ("like",),
    ("e.g",),  # (the tokenizer drops the final full stop)
    ("for", "example"),
    ("especially",),
    ("particularly",),
]


def _hiding_place(m: Mention, mentions: list[Mention], toks: list[Token]) -> bool:
    """Parked cars named as where a vulnerable road user comes from or is ("children may run out from between parked
    cars", "watch for children near playgrounds and parked cars"): the place they hide, not the rule's subject."""
    if m.term.normalised != "stopped vehicle" or "parked" not in {t.word for t in toks[m.start : m.end]}:
        return False
    before = {t.word for t in toks[max(0, m.start - 4) : m.start] if t.clause == toks[m.start].clause}
    return bool(before & _AMONG) and any(
        o is not m and o.term.is_core and _VULNERABLE_WORDS & set(o.term.tokens) and not o.ruled_out for o in mentions
    )


def _lane_users(mentions: list[Mention], toks: list[Token]) -> list[Mention]:
    """The motor vehicles a lane is said to be for ("HOV lanes are reserved for buses, motorcycles and carpools", "a
    center left turn lane is only for vehicles turning left"): they say who may use the lane, which is the rule's
    subject. Bicyclists of a bike lane and other vulnerable road users stay: the ego must watch for them."""
    out: list[Mention] = []
    for lane in mentions:
        if lane.term.category != "traffic_infrastructure" or "lane" not in lane.term.tokens:
            continue
        sentence = toks[lane.start].sentence
        after = [i for i in range(lane.end, len(toks)) if toks[i].sentence == sentence]
        words = [toks[i].word for i in after]
        ends = [k + len(p) for p in _FOR_USERS if (k := _find(words, p)) >= 0 and k + len(p) < len(words)]
        if not ends:
            continue
        start = after[min(ends)]
        out += [
            m
            for m in mentions
            if m.term.category == "object"
            and m.start >= start
            and toks[m.start].sentence == sentence
            and not _VULNERABLE_WORDS & set(m.term.tokens)
        ]
    return out


def _drop_sign_names(mentions: list[Mention], toks: list[Token], text: str) -> list[Mention]:
    """What a bracket after a sign's number holds is that sign's name ("Sign 260 (Prohibition for Motor Vehicles)"),
    not another term."""
    spans = []
    for m in mentions:
        words = [t.word for t in toks[m.start : m.end]]
        if len(words) == 2 and words[0] == "sign" and words[1][:1].isdigit():
            after = toks[m.end - 1].end
            bracket = re.match(r"\s*\([^)]*\)", text[after:])
            if bracket:
                spans.append((after, after + bracket.end()))
    return [m for m in mentions if not any(a <= toks[m.start].start < b for a, b in spans)]


_FRONTING = frozenset({"at", "on", "in", "during", "after", "before", "when", "while", "whenever"})


def _fronted(m: Mention, toks: list[Token]) -> bool:
    """A mention in the opening phrase of its sentence ("At dusk and after dark, ...", "On wet pavement, ..."): the
    sentence opens with a preposition or a time word, and a main clause follows the phrase."""
    sentence = toks[m.start].sentence
    words = [t for t in toks if t.sentence == sentence]
    return (
        words[0].word in _FRONTING
        and toks[m.start].clause == words[0].clause
        and any(t.clause != words[0].clause for t in words)
    )


def _fronted_circumstance(m: Mention, mentions: list[Mention], toks: list[Token]) -> bool:
    """Weather or light fronted before the main clause ("At dusk and after dark, scan the road for deer", "On wet
    pavement, motorcycles need more room") says when the rule applies, when that sentence then names a road user (not
    the ego's "the vehicle can be stopped"): the road user is the rule's subject. So does weather or light that
    follows the road user opening its clause (:func:`_when_the_subject_acts`)."""
    if m.term.category != "environment":
        return False
    if _when_the_subject_acts(m, mentions, toks):
        return True
    if not all(_fronted(o, toks) for o in mentions if o.term == m.term):
        return False
    return any(
        _named_road_user(o)
        and toks[o.start].clause > toks[m.start].clause
        and toks[o.start].sentence == toks[m.start].sentence
        for o in mentions
    )


def _when_the_subject_acts(m: Mention, mentions: list[Mention], toks: list[Token]) -> bool:
    """Weather or light later in a clause that a road user opens ("Deer move around most at dawn and dusk") says when
    that subject acts: the road user is the rule's subject."""
    clause = toks[m.start].clause
    first = _clause_start(toks, clause)
    return any(
        _named_road_user(o) and toks[o.start].clause == clause and first <= o.start <= first + 1 and o.end <= m.start
        for o in mentions
    )


def _changed_from(m: Mention, mentions: list[Mention], toks: list[Token]) -> bool:
    """A signal that changes "from green to steady yellow" shows the second: the first is only what it was."""
    if m.start == 0 or toks[m.start - 1].word != "from" or m.end >= len(toks) or toks[m.end].word != "to":
        return False
    return any(o.start > m.end and o.start - m.end <= 3 for o in mentions)


_MARKED_BY = frozenset({"by", "with"})


def _marks_a_lane(m: Mention, mentions: list[Mention], toks: list[Token]) -> bool:
    """Lines that border a lane the rule names before them ("A center left turn lane, bordered by yellow lines on both
    sides", "a bike lane marked by a solid white line") describe that lane: the lane is the rule's subject."""
    if "line" not in m.term.tokens:
        return False
    sentence = toks[m.start].sentence
    near = [t.word for t in toks[max(0, m.start - 4) : m.start] if t.sentence == sentence]
    return bool(_MARKED_BY & set(near)) and any(
        "lane" in o.term.tokens and o.end <= m.start and toks[o.start].sentence == sentence for o in mentions
    )


def _named_road_user(o: Mention) -> bool:
    """A road user the rule names for itself: not ruled out or aside, and not a bare "vehicle" or "car" (often the
    ego's own, "the vehicle can be stopped")."""
    return (
        o.term.category == "object" and not (o.ruled_out or o.aside) and not {"vehicle", "car"} & set(tokens(o.surface))
    )


def _no_entry_sign(mentions: list[Mention], toks: list[Token]) -> Mention | None:
    """A sign that forbids entry ("a DO NOT ENTER sign", "DO NOT ENTER means ...", or described: "a red sign with a
    white bar"): it asks the ego to keep to its way. (The bare verb, "do not enter the intersection until ...", is no
    sign.)"""
    return next(
        (
            m
            for m in mentions
            if "sign" in m.term.tokens
            and (
                ({"enter", "entry"} & set(tokens(m.surface)) and ("sign" in tokens(m.surface) or m.surface.isupper()))
                or {"white", "bar"} <= set(tokens(m.surface))
            )
            and not m.ruled_out
        ),
        None,
    )


def _said(analysis: RuleAnalysis, term: Term) -> list[Mention]:
    """The rule's mentions of ``term``, less those it rules out."""
    return [m for m in analysis.manipulations if m.term == term and not m.ruled_out]


def _span(toks: Sequence[Token]) -> str:
    """The words as written, spaced as tokens are, a contraction's two tokens kept as one word ("Don't walk")."""
    out = ""
    for i, t in enumerate(toks):
        out += t.raw if i == 0 or t.start == toks[i - 1].end else " " + t.raw
    return out


def _first(lead: Mention, ranked: list[Mention]) -> list[Mention]:
    """``ranked`` with ``lead`` put first (and no other mention of its term: the ranking holds one per term)."""
    return [lead, *(m for m in ranked if m.term != lead.term)]


def _title(m: Mention, toks: list[Token]) -> bool:
    """Whether the mention is a heading glued to the text: its words capitalised and the next word too ("Traffic
    Breaks An officer ...") or the next word on a new sentence; the whole first sentence or line of the text,
    capitalised as a sentence ("Raised pavement markers / Small reflectors ..."); or it stands in the glued run of
    heading and picture text a scraped page opens with ("Warning Signs deer crossing sign Yellow signs ...", "raised
    pavement markers Raised Pavement Markers and Reflectors Small ...")."""
    words = toks[m.start : m.end]
    if m.end <= _glued_opening(toks):
        return True
    # A heading in sentence case on a line of its own ("Raised pavement markers / Small raised reflectors ...").
    if words[0].raw[:1].isupper() and _whole_first_line(m, toks):
        return True
    if not all(t.raw[:1].isupper() for t in words):
        return False
    return m.end == len(toks) or toks[m.end].raw[:1].isupper() or toks[m.end].sentence != toks[m.start].sentence


def _joined_to(m: Mention, other: Mention | None, toks: list[Token]) -> bool:
    """Whether the mention follows the other straight after "and" or "or" ("Stop Signs and Limit Lines")."""
    return other is not None and m.start == other.end + 1 and toks[other.end].word in {"and", "or"}


def _opens_with_other(heading: Mention, analysis: RuleAnalysis) -> bool:
    """Whether the text after a heading opens on another condition ("Slippery Roads Rain, snow, or mud can make the
    roads slippery", "... In rain ...", "... When it rains ..."): the body then tells of that condition, and the
    heading only sums it up."""
    toks = analysis.tokens
    return any(
        m.start >= heading.end
        and all(t.word in _CONDITION_OPENERS for t in toks[heading.end : m.start])
        and m.term != heading.term
        and m.term.category == heading.term.category
        for m in analysis.manipulations
    )


_CONDITION_OPENERS = frozenset({"in", "when", "if", "it", "during", "on"})


def _glued_opening(toks: list[Token], reach: int = 12) -> int:
    """Where the glued opening of a scraped page ends: the last word, among the first sentence's first ``reach``,
    that is capitalised right after a lower-case word of the same clause (a heading or picture text run into the next
    line: "... deer crossing sign Yellow signs ..."); 0 where none is. A word in capitals ("a STOP sign") is none."""
    end = 0
    for i in range(1, min(reach, len(toks))):
        here, before = toks[i], toks[i - 1]
        if here.sentence != toks[0].sentence:
            break
        capital = here.raw[:1].isupper() and (len(here.raw) == 1 or (here.raw[1:].isalpha() and here.raw[1:].islower()))
        if capital and before.raw[:1].islower() and before.clause == here.clause and before.word not in _NAME_BEFORE:
            end = i
    return end


# Words after which a capital starts a name, not the text after a heading ("signs in California", "on Interstate 5").
_NAME_BEFORE = frozenset(
    {"the", "a", "an", "on", "in", "near", "at", "of", "to", "for", "from", "by", "into", "onto", "along", "across"}
)


def _sign_named_by(top: Mention, analysis: RuleAnalysis) -> Mention | None:
    """A sign whose name holds the words of a mention of ``top``'s term ("a LANE ENDS sign" after a heading "Lane
    Ends"), or that follows such a mention at once ("Lane Ends merge sign"): the sign it names. None where ``top`` is a
    sign itself or no sign's name holds it."""
    if top.term.tokens[-1:] == ("sign",) or (_MOTOR_WORDS | _VULNERABLE_WORDS) & set(top.term.tokens):
        return None  # (a road user on a sign, "a slow-moving vehicle's orange triangle sign", is the road user's)
    inner = _said(analysis, top.term)
    toks = analysis.tokens
    return next(
        (
            s
            for s in analysis.manipulations
            if s.term != top.term
            and s.term.tokens[-1:] == ("sign",)
            and not (s.ruled_out or s.aside)
            and any(
                s.start <= m.start <= m.end <= s.end
                or (s.start == m.end and toks[s.start].clause == toks[m.end - 1].clause)
                or set(tokens(m.surface)) < set(tokens(s.surface))
                for m in inner
            )
        ),
        None,
    )


def _shown_sign(model: _RegionModel, analysis: RuleAnalysis, top: Mention) -> Mention | None:
    """The sign a class of sign shows, named just after it ("Red and White Regulatory Sign WRONG WAY", "a regulatory
    sign, NO U TURN"), after what the picture's slash crosses ("Red Circle with a Red Line Through a U-Turn Arrow NO
    U-TURN", see :func:`_slash_crosses`) or up to six words before it ("No U-Turn Sign red circle and slash ...",
    "NO U-TURN sign black U-turn arrow in a red circle with a slash"), in its sentence: it, not the class, is what the
    rule is about. None where ``top`` is no class of sign, where the sign beside it is one the class stands for
    itself, or where the two are listed together ("Sign 250 and Sign 251", "a road closed sign and a stop sign")."""
    kept = model.sign_classes.get(top.term.normalised)
    if kept is None:
        return None
    return next(
        (
            m
            for m in analysis.manipulations
            if m.term != top.term
            and m.term.normalised not in kept
            and m.term.category == "traffic_infrastructure"
            and m.term.tokens[-1] == "sign"
            and (
                top.end <= m.start <= top.end + 2
                or _slash_crosses(analysis.tokens, top.end, m.start)
                or m.end <= top.start <= m.end + 6
            )
            and analysis.tokens[m.start].sentence == analysis.tokens[top.start].sentence
            and not {"and", "or"} & {t.word for t in analysis.tokens[min(top.end, m.end) : max(top.start, m.start)]}
            and not (m.ruled_out or m.aside)
        ),
        None,
    )


def _slash_crosses(toks: list[Token], start: int, end: int) -> bool:
    """Whether ``toks[start:end]`` says what a prohibitory picture's slash is drawn through ("Through a U-Turn
    Arrow"): at most six words, in the picture's clause, opening with through, across or over and ending with arrow or
    symbol. Words that open otherwise ("as on a NO U-TURN sign", "unlike a STOP sign") name no sign the picture shows.
    """
    words = [t.word for t in toks[start:end]]
    return (
        0 < len(words) <= 6
        and words[0] in _SLASH_PREPOSITIONS
        and words[-1] in _PICTURE_NOUNS
        and len({t.clause for t in toks[start - 1 : end]}) == 1
    )


def _own_light_of(light: Mention, mentions: list[Mention], toks: list[Token]) -> Mention | None:
    """The vehicle whose flashing lights ``light`` is: a vehicle named before it in its sentence, or just after it
    ("the flashing red lights on a school bus"), when the light names no traffic signal ("a school bus is flashing its
    red lights", "a tow truck with amber lights flashing")."""
    if (
        not light.term.tokens
        or light.term.tokens[0] != "flashing"
        or set(tokens(light.surface)) & _TRAFFIC_SIGNAL_WORDS
    ):
        return None
    vehicles = [
        m for m in mentions if m.term.category == "object" and _MOTOR_WORDS & set(m.term.tokens) and not m.ruled_out
    ]
    owners = [m for m in vehicles if m.start < light.start and toks[m.start].sentence == toks[light.start].sentence]
    if owners:
        return owners[-1]
    # "red flashing [lights] on a school bus": a light word the match stopped short of belongs to it.
    end = light.end
    if end < len(toks) and toks[end].word in {"light", "lamp"}:
        end += 1
    if not (end < len(toks) and toks[end].word in {"on", "of"}):
        return None
    return next((m for m in vehicles if end < m.start <= end + 3), None)


def _is_vehicle_light(surface: str, colours: set[str]) -> bool:
    """A place cue that is only a coloured or flashing light ("red lights", "yellow flashing lights"; ``colours``:
    the lexicon's signal colour words and "flashing"), with no word of a traffic signal in it."""
    words = set(tokens(surface))
    return bool(words & colours) and bool(words & {"light", "lamp"}) and not words & {"traffic", "signal"}


def _drop_nested(mentions: list[Mention], others: list[Mention]) -> list[Mention]:
    """Remove mentions lying inside a longer contiguous mention (of the same list or of ``others``).

    A match with skipped words in it ("right-of-way [to pedestrians] at") does not own the words it
    skipped, so a term among them is kept.
    """
    pool = [o for o in mentions + others if o.gap == 0]

    def inside(m: Mention) -> bool:
        return any(
            o is not m and o.start <= m.start and m.end <= o.end and (o.end - o.start) > (m.end - m.start) for o in pool
        )

    return [m for m in mentions if not inside(m)]


def _drop_modifiers(mentions: list[Mention], heads: list[Mention], toks: list[Token]) -> list[Mention]:
    """A mention that another overlaps and runs past on the right is a modifier of that one (English compounds
    end in their head): "light rail" in "light rail tracks" names the tracks, not a rail vehicle. A modifier is
    singular, so in "school buses stop" the buses are no modifier of a bus stop."""
    # "turning left" ends in an adverb, not a head noun: in "a vehicle turning left" the vehicle is no modifier.
    # Nor does "the school bus stops to ...", where "stops" is the bus's verb: the bus stopping is the place, and
    # the school bus stays the manipulation.
    pool = [h for h in heads if h.gap == 0 and toks[h.end - 1].word not in _ADVERB_ENDS and not _verb_stops(h, toks)]

    def modifier(m: Mention) -> bool:
        singular = all(t.raw.lower() == t.word for t in toks[m.start : m.end])
        return m.gap == 0 and singular and any(h.start > m.start and h.start < m.end < h.end for h in pool)

    return [m for m in mentions if not modifier(m)]


def _drop_less_specific(mentions: list[Mention]) -> list[Mention]:
    """Where two mentions overlap in the text and one term holds all the other's words and more ("flashing red
    light" over "red light" in "a flashing red traffic signal light"), the more specific one stands alone."""

    def shadowed(m: Mention) -> bool:
        words = set(m.term.tokens)
        return any(
            o.start < m.end
            and m.start < o.end
            and o.term.normalised != m.term.normalised
            and words < set(o.term.tokens)
            and not (o.gap > 0 and m.gap == 0)
            for o in mentions
        )

    return [m for m in mentions if not shadowed(m)]


def _drop_spanning(mentions: list[Mention]) -> list[Mention]:
    """A match with a gap that spans another term's mention is a coordination, not one phrase: "heavy fog or
    smoke" names fog and smoke, and is not a third mention of heavy smoke. A sign is named by its legend, not by its
    colours: in "a red and white YIELD sign" the yield sign inside the gapped "red and white ... sign" is the sign.
    (A light is named by its colour: "red traffic light" stays a red light.)"""

    def spans(m: Mention) -> bool:
        return m.gap > 0 and any(
            m.start < o.start
            and (
                o.end < m.end
                or (o.end == m.end and o.gap == 0 and o.term.tokens[-1:] == m.term.tokens[-1:] == ("sign",))
            )
            and o.term.normalised != m.term.normalised
            for o in mentions
        )

    return [m for m in mentions if not spans(m)]


def _drop_broken_compounds(mentions: list[Mention], others: list[Mention]) -> list[Mention]:
    """A gapped match whose first word opens another term's phrase that ends inside the gap is not one phrase:
    "traffic signal ahead" is a signal ahead, not "traffic ahead". (A phrase inserted before the head, "red traffic
    light", keeps the outer match: there the inner phrase ends with it.) Nor is one whose last word opens another
    term's phrase that runs on past it: "closest to the cross street" is no "to cross"."""

    def broken(m: Mention) -> bool:
        return m.gap > 0 and any(
            (
                (o.start == m.start and m.start + 1 < o.end < m.end)
                or (o.start == m.end - 1 and o.end > m.end and o.gap == 0)
            )
            and o.term.normalised != m.term.normalised
            for o in mentions + others
        )

    return [m for m in mentions if not broken(m)]


# Function words and the words every rule uses; they carry no traffic element.
_FILLER = frozenset(
    """a an the and or but if when while where whenever at on in into onto of to for from by with
    without near between behind before after over under out up down off about against during than
    then that this these those there here it its they them their he she you your we our one any all
    each every other another such same some no not nor only also just very more most must shall
    should may might can could would will be is are was were been being have has had do does did
    watch careful attention always never drive driver driving vehicle motorist road user ego
    ensure keep make allowed permitted required prohibited""".split()
)


def _content_windows(toks: list[Token], *, max_len: int = 3, limit: int = 48) -> list[str]:
    """Runs of one to ``max_len`` consecutive content words inside one clause, as written."""
    runs: list[list[Token]] = []
    current: list[Token] = []
    for t in toks:
        if t.word in _FILLER or len(t.word) < 3 or (current and current[-1].clause != t.clause):
            if current:
                runs.append(current)
            current = [] if t.word in _FILLER or len(t.word) < 3 else [t]
            continue
        current.append(t)
    if current:
        runs.append(current)
    out: dict[str, None] = {}
    for run in runs:
        for size in range(1, max_len + 1):
            for i in range(len(run) - size + 1):
                out.setdefault(_span(run[i : i + size]), None)
    return list(out)[:limit]


def normalised(text: str) -> str:
    """Normalised form of a phrase (re-exported for callers that only import this module)."""
    return normalise_phrase(text)
