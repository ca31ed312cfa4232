"""MR validation after AutoMT's Validator: three yes/no questions per candidate, lowest hallucination wins.

AutoMT asks a model, SelfCheckGPT-style, whether (1) all three MR elements are in the rule, (2) the
rule supports the MR and (3) the MR's parts are consistent, and keeps the candidate with the lowest
hallucination score. The offline validator here answers the same three questions with deterministic
checks; the LLM validator (``tools.rules.llm_validator``) asks a model. Either way ``score = 1 - hallucination``,
so higher is better.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

from tools.common.text import normalise_phrase
from tools.rules.models import CheckResult, MRCandidate, Question, TrafficRule, Verdict
from tools.rules.offline_parser import OntologyGroundedParser, RuleAnalysis, behaviour_cues, lifts_a_ban_on_stopping
from tools.rules.ontology import BEHAVIORS, Ontology
from tools.rules.retrieval import ReferenceRetriever

__all__ = [
    "ONTOLOGY_CHECKS",
    "QUESTIONS",
    "MRValidator",
    "OfflineValidator",
    "choose_best",
]

QUESTIONS: dict[Question, str] = {
    "elements_in_rule": "Are all three elements (road type, manipulation, expected behaviour) of the MR present in the traffic rule?",
    "rule_supported": "Is the traffic rule supported by the MR?",
    "parts_consistent": "Are the parts of the MR consistent with each other?",
}

ONTOLOGY_CHECKS = frozenset({"road type in ontology", "manipulation in ontology", "behaviour in ontology"})
"""Checks that hold for any validator: every element must come from the ontology."""

_TURNING_ROADS = frozenset({"intersection", "alley"})
_SIGNAL_WORDS = ("light", "arrow", "signal", "sign")


class MRValidator(Protocol):
    """Judges a rule's MR candidates."""

    @property
    def name(self) -> str:
        """Validator name recorded with verdicts."""
        ...

    async def validate(self, rule: TrafficRule, candidates: Sequence[MRCandidate]) -> list[Verdict]:
        """One verdict per candidate, in the candidates' order."""
        ...


def hallucination_of(checks: Sequence[CheckResult]) -> float:
    """Mean over the three questions of the share of that question's checks that failed."""
    per_question: dict[str, list[bool]] = {}
    for c in checks:
        per_question.setdefault(c.question, []).append(c.passed)
    if not per_question:
        return 1.0
    shares = [1.0 - sum(v) / len(v) for v in per_question.values()]
    return round(sum(shares) / len(shares), 4)


# Confidences closer than this are a tie: the retrieval support they average in moves by more between near neighbours.
CONFIDENCE_TIE = 0.01


def choose_best(verdicts: Sequence[Verdict], *, margin: float = CONFIDENCE_TIE) -> Verdict | None:
    """The accepted verdict with the lowest hallucination; among those, the first in the candidates' order (the
    parser's ranking of the rule's own words) unless another's confidence is higher by more than ``margin``."""
    accepted = [v for v in verdicts if v.accepted]
    if not accepted:
        return None

    def conf(v: Verdict) -> float:
        return v.confidence if v.confidence is not None else v.candidate.confidence

    least = min(v.hallucination for v in accepted)
    tied = [v for v in accepted if v.hallucination == least]
    top = max(tied, key=conf)
    return tied[0] if conf(top) - conf(tied[0]) <= margin else top


class OfflineValidator:
    """Deterministic answers to AutoMT's three questions (no model involved).

    Args:
        ontology: The MR ontology.
        parser: The offline parser whose rule analysis (terms, places, cues found in the text) the
            checks use; it is re-run here, so candidates from any parser, LLMs included, are checked
            against the rule's own words.
        min_score: Least score (``1 - hallucination``) for acceptance.
        strong_similarity: Similarity above which a manipulation found only by MiniLM counts as named
            by the rule; below it the candidate may pass, with a lower score.
        retriever: The development rules' reference MRs (retrieval), a source of each MR's confidence.
        min_confidence: Least confidence (mean of the parser's confidence, retrieval support and the checks'
            score) for acceptance; 0 turns the rejection off.
        exclude: Rule ids that may not vote in retrieval for a rule (leave-one-out evaluation: the rule itself
            and its repeats); nothing is excluded in production.
    """

    def __init__(
        self,
        *,
        ontology: Ontology,
        parser: OntologyGroundedParser,
        min_score: float = 0.6,
        strong_similarity: float = 0.6,
        retriever: ReferenceRetriever | None = None,
        min_confidence: float = 0.0,
        exclude: Callable[[TrafficRule], Collection[str]] | None = None,
    ) -> None:
        self.ontology = ontology
        self.parser = parser
        self.min_score = min_score
        self.strong_similarity = strong_similarity
        self.retriever = retriever
        self.min_confidence = min_confidence
        self.exclude = exclude

    @property
    def name(self) -> str:
        """Validator name recorded with verdicts."""
        return "offline:deterministic-checks"

    def prepare(self, rules: Sequence[TrafficRule]) -> None:
        """Embed a batch's rules in one call, so retrieval finds them in the embedder's cache (no-op without it)."""
        if self.retriever is not None and rules:
            self.retriever.embedder.encode([r.text for r in rules])

    async def validate(self, rule: TrafficRule, candidates: Sequence[MRCandidate]) -> list[Verdict]:
        """Judge every candidate of one rule."""
        return self.validate_sync(rule, candidates)

    def validate_sync(
        self, rule: TrafficRule, candidates: Sequence[MRCandidate], analysis: RuleAnalysis | None = None
    ) -> list[Verdict]:
        """Synchronous form of :meth:`validate`, for batch callers."""
        if analysis is None:
            analysis = self.parser.analyse(rule)
            if candidates and not analysis.manipulations and self.parser.embedder is not None:
                self.parser._semantic_fallback([analysis])
        neighbours = (
            self.retriever.neighbours(rule, exclude=self.exclude(rule) if self.exclude else ())
            if self.retriever is not None and candidates
            else []
        )
        verdicts = []
        for cand in candidates:
            checks = self.checks(analysis, cand)
            h = hallucination_of(checks)
            hard_fail = any(c.hard and not c.passed for c in checks)
            parts = {"lexicon": cand.confidence, "checks": round(1.0 - h, 4)}
            support = self.retriever.support_from(neighbours, rule.region, cand.mr) if self.retriever else None
            if support is not None:
                parts["retrieval"] = support
            confidence = round(sum(parts.values()) / len(parts), 4)
            if confidence < self.min_confidence:  # listed among the reasons; the score stays the checks' own
                detail = ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
                checks = [
                    *checks,
                    CheckResult(
                        question="rule_supported", check="confidence", passed=False,
                        detail=f"confidence {confidence:.2f} below {self.min_confidence:.2f} ({detail})",
                    ),
                ]  # fmt: skip
            verdicts.append(
                Verdict(
                    candidate=cand,
                    hallucination=h,
                    checks=checks,
                    validator=self.name,
                    accepted=(not hard_fail) and (1.0 - h) >= self.min_score and confidence >= self.min_confidence,
                    confidence=confidence,
                    confidence_parts=parts,
                )
            )
        return verdicts

    def checks(self, analysis: RuleAnalysis, cand: MRCandidate) -> list[CheckResult]:
        """Every check of one candidate."""
        model = self.parser.region_model(analysis.rule.region)
        vocab = model.vocabulary
        mr = cand.mr
        road = vocab.canonical("road_type", mr.road_type)
        manip = vocab.canonical("manipulation", mr.manipulation)
        behaviour = normalise_phrase(mr.expected_behavior)
        road_term = vocab.lookup("road_type", road)
        manip_term = vocab.lookup("manipulation", manip)
        out: list[CheckResult] = []

        def add(q: Question, check: str, passed: bool, detail: str, *, hard: bool = False) -> None:
            out.append(CheckResult(question=q, check=check, passed=passed, detail=detail, hard=hard))

        # Q1: are the three elements in the rule (and in the ontology)?
        add(
            "elements_in_rule",
            "road type in ontology",
            road_term is not None,
            f"{mr.road_type!r} -> {road!r}" + ("" if road_term else " is not an ontology road type"),
            hard=True,
        )
        add(
            "elements_in_rule",
            "manipulation in ontology",
            manip_term is not None,
            f"{mr.manipulation!r} -> {manip!r}" + ("" if manip_term else " contains no ontology term"),
            hard=True,
        )
        add(
            "elements_in_rule",
            "behaviour in ontology",
            behaviour in BEHAVIORS,
            f"{mr.expected_behavior!r}" + ("" if behaviour in BEHAVIORS else f" is not one of {', '.join(BEHAVIORS)}"),
            hard=True,
        )
        mentioned_roads = {m.term.normalised for m in analysis.road_types if not (m.absent or m.ruled_out)}
        # The places the parser counts as the rule's own for this manipulation: not one said to be absent, nor a
        # fallback after one, nor where a junction sign's stop is made.
        specific_roads = {m.term.normalised for m in self.parser.own_places(model, analysis, manip_term)}
        implied_road = model.implied_roads.get(manip)
        if road == model.any_roads.normalised:
            road_ok, road_detail = True, "'any roads' holds wherever the rule applies"
        elif road in mentioned_roads:
            road_ok, road_detail = True, "the rule names this place"
        elif implied_road == road and not specific_roads:
            road_ok, road_detail = True, f"implied by the manipulation {manip!r}"
        else:
            road_ok, road_detail = False, f"the rule does not name {road!r}"
        add("elements_in_rule", "road type grounded in rule", road_ok, road_detail)
        lexical = {m.term.normalised for m in analysis.manipulations}
        # What the wording implies grounds a term where the rule names none, or only ones it rules out (as the parser
        # ranks them).
        implied_manips = (
            {mt.pattern.target for mt in model.implied_matcher.find(analysis.tokens)}
            if all(m.ruled_out for m in analysis.manipulations)
            else set()
        )
        semantic = {normalise_phrase(label): sim for label, sim in analysis.semantic}
        specialised = any(model.specialised.get(generic) == manip for generic in lexical) and any(
            mt.pattern.target == manip for mt in model.implied_matcher.find(analysis.tokens)
        )
        said = self.parser.said_vehicle(model, analysis)
        if specialised or (said is not None and said.normalised == manip):
            lexical = lexical | {manip}  # counts as named: the rule names the road user, its wording says which
        if manip in lexical:
            m_ok, m_detail = True, "the rule mentions it"
        elif manip in implied_manips:
            m_ok, m_detail = True, "implied by what the rule asks (yield, distance ...)"
        elif semantic.get(manip, 0.0) >= self.parser.semantic_threshold:
            m_ok, m_detail = True, f"nearest ontology term to a clause (similarity {semantic[manip]:.2f})"
        else:
            m_ok, m_detail = False, f"the rule does not mention {manip!r}"
        add("elements_in_rule", "manipulation grounded in rule", m_ok, m_detail, hard=True)
        if m_ok and manip not in lexical and manip not in implied_manips:
            strong = semantic.get(manip, 0.0) >= self.strong_similarity
            add(
                "elements_in_rule",
                "manipulation named in rule",
                strong,
                "similar enough to count as named" if strong else "only loosely similar to the rule's words",
            )
            add(
                "rule_supported",
                "manipulation named in rule",
                strong,
                "similar enough to count as named" if strong else "the rule may not be about this element",
            )
        cues = behaviour_cues(analysis, road)
        # A carry-on term (a green light, the HOV lane) means keep current without a cue asking for it.
        carries_on = behaviour == "keep current" and manip in model.carry_on
        # "Do not stop on the ramp unless traffic is heavy": adding the exception lets the ego stop, so it slows down.
        excepted = behaviour == "slow down" and manip_term is not None and lifts_a_ban_on_stopping(analysis, manip_term)
        if behaviour in cues:
            b_ok, b_detail = True, "cue: " + ", ".join(analysis.behavior_evidence.get(behaviour, []))
        elif not cues and behaviour == "slow down":
            b_ok, b_detail = True, "no cue; a rule restricting the ego-vehicle implies slowing down"
        elif carries_on:
            b_ok, b_detail = True, f"{manip!r} means carry on in the ego's own way"
        elif excepted:
            b_ok, b_detail = True, f"{manip!r} is the exception that lets the ego-vehicle stop"
        else:
            b_ok, b_detail = False, f"nothing in the rule asks the ego-vehicle to {behaviour}"
        add("elements_in_rule", "behaviour grounded in rule", b_ok, b_detail)

        # Q2: does the rule support the MR?
        expected_verb = manip_term.verb if manip_term else None
        if expected_verb is None or mr.verb == expected_verb:
            v_ok, v_detail = True, f"{mr.verb!r} fits {manip_term.category if manip_term else 'the manipulation'}"
        elif mr.verb == "replaces" and manip_term is not None and any(w in manip for w in _SIGNAL_WORDS):
            v_ok, v_detail = True, "'replaces' changes the state of a signal or sign"
        else:
            v_ok, v_detail = (
                False,
                (
                    f"{mr.verb!r} does not fit {manip_term.category if manip_term else manip!r}: "
                    f"use {expected_verb!r} ('replaces' for weather, lighting and surface, 'adds' for objects)"
                ),
            )
        add("rule_supported", "verb fits manipulation", v_ok, v_detail)
        if cues:
            top = max(cues.values())
            s_ok = cues.get(behaviour, 0.0) >= top or carries_on or excepted
            if not s_ok:
                s_detail = f"the rule's cues favour {max(cues, key=lambda b: cues[b])!r}"
            elif excepted and cues.get(behaviour, 0.0) < top:
                s_detail = "the exception to the rule's ban on stopping"
            else:
                s_detail = "the rule's strongest cue agrees"
        else:
            s_ok, s_detail = (
                (True, f"without cues {manip!r} means carry on")
                if carries_on
                else (behaviour == "slow down", "without cues only 'slow down' is supported")
            )
        add("rule_supported", "behaviour supported by rule", s_ok, s_detail)

        # Q3: are the parts consistent?
        if behaviour in {"turn left", "turn right"}:
            t_ok = road in _TURNING_ROADS
            add(
                "parts_consistent",
                "turning possible on road type",
                t_ok,
                f"{behaviour!r} on {road!r}" + ("" if t_ok else ": turning needs an intersection or alley"),
            )
        else:
            add("parts_consistent", "turning possible on road type", True, "no turn asked")
        # A road user goes where the rule itself puts it ("never turn in front of a light rail vehicle": at a
        # junction); a sign or signal keeps its own place. A vehicle added with its own flashing lights ("a school
        # bus with flashing red lights") is a road user, wherever the lights alone would stand.
        owner = self.parser.light_owner(analysis, mr.manipulation)
        if owner is not None:
            manip_term, implied_road = owner, model.implied_roads.get(owner.normalised)
        named_here = road in specific_roads and manip_term is not None and manip_term.category == "object"
        fitting = {
            implied_road,
            model.any_roads.normalised,
            *model.other_roads.get(manip_term.normalised if manip_term else manip, ()),
        }
        if implied_road and road not in fitting and not named_here:
            add(
                "parts_consistent",
                "manipulation fits road type",
                False,
                f"{manip!r} belongs at {implied_road!r}, not {road!r}",
            )
        else:
            add("parts_consistent", "manipulation fits road type", True, "no conflict")
        return out
