"""Leave-one-out and constant-answer figures for the offline crash extractor (``drivemt eval crashes``).

The crash lexicon (``tools/data/crash_lexicon.yaml``) was written with the 15 development cases in view, so
scoring the extractor on them is in-sample. :func:`leave_one_out` extracts each case with a lexicon from which
every phrase that occurs in that case's summary and in no other development summary is removed (a phrase
only that case could have taught), which is what to expect on unseen reports of the kind.

A phrase that is a form of its own category's label ("snowing" for ``Snowy``, "cloudy" for ``Cloudy``,
"daylight" for ``Daytime``, "curve" for ``Curve``) was not taught by any case: SAFE's label set names it. Such
phrases stay in the leave-one-out lexicon; ``strict`` drops them too (every phrase only that case holds).
:func:`~tools.crash.scoring.constant_answer` is the baseline that ignores the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tools.crash.extract import OfflineCrashExtractor, _inflected_re, _lexicon
from tools.crash.files import CrashReport
from tools.crash.models import Scenario
from tools.errors import DrivemtError

__all__ = ["label_forms", "leave_one_out", "lexicon_phrases", "without_phrases"]

# Sections of the lexicon that map a label of SAFE's scheme onto the phrases that cue it.
_LABELLED_SECTIONS = ("time_cues", "weather_cues", "road_type_cues")


def lexicon_phrases(lexicon: Mapping[str, Any]) -> set[str]:
    """Every phrase of the lexicon (strings in its lists, at any depth)."""
    out: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                if isinstance(item, str):
                    out.add(item.lower())
                else:
                    walk(item)

    walk(lexicon)
    return out


def without_phrases(lexicon: Mapping[str, Any], drop: set[str]) -> dict[str, Any]:
    """A copy of the lexicon without the phrases in ``drop`` (a list left empty keeps one impossible phrase,
    so its pattern still compiles and matches nothing)."""

    def walk(node: Any) -> Any:
        if isinstance(node, Mapping):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            kept = [walk(i) for i in node if not (isinstance(i, str) and i.lower() in drop)]
            return kept if kept or not node else ["\x00never\x00"]
        return node

    return walk(lexicon)


def _label_stem(label: str) -> str:
    """The word a label is made from: ``Snowy`` -> snow, ``Foggy`` -> fog, ``Daytime`` -> day, ``T-intersection``
    -> intersection."""
    word = label.lower().rsplit("-", 1)[-1]
    if word.endswith("time") and len(word) > 4:
        return word[:-4]
    if word.endswith("y") and len(word) > 3:
        word = word[:-1]
        if len(word) > 3 and word[-1] == word[-2]:  # fogg(y), sunn(y)
            word = word[:-1]
    return word


def label_forms(lexicon: Mapping[str, Any]) -> set[str]:
    """Phrases of the labelled sections that are their own label ("t-intersection") or one word made from it
    ("snowing", "rainy", "clouds", "daylight"), as opposed to wording a case may have taught ("sleet", "dark")."""
    out: set[str] = set()
    for section in _LABELLED_SECTIONS:
        for label, phrases in (lexicon.get(section) or {}).items():
            stem = _label_stem(str(label))
            out |= {
                p.lower()
                for p in phrases
                if p.lower() == str(label).lower() or (" " not in p and p.lower().startswith(stem))
            }
    return out


def _occurs(phrase: str, text: str) -> bool:
    """Whether the phrase matches in the text as the extractor matches it (inflections of one word included)."""
    return _inflected_re([phrase]).search(text) is not None


def leave_one_out(
    reports: Sequence[CrashReport],
    *,
    lexicon: Mapping[str, Any] | None = None,
    templates: Callable[[str], Any] | None = None,
    strict: bool = False,
) -> list[Scenario | None]:
    """Each report's scenario, extracted without the phrases only its own summary contains (None: it failed).

    Forms of a phrase's own label are kept unless ``strict``.
    """
    lex = lexicon if lexicon is not None else _lexicon()
    texts = [" ".join(r.summary.split()) for r in reports]
    keep = set() if strict else label_forms(lex)
    where = {p: {i for i, t in enumerate(texts) if _occurs(p, t)} for p in lexicon_phrases(lex) - keep}
    out: list[Scenario | None] = []
    for i, report in enumerate(reports):
        drop = {p for p, cases in where.items() if cases == {i}}
        extractor = OfflineCrashExtractor(templates=templates, lexicon=without_phrases(lex, drop))
        try:
            out.append(extractor.extract(report))
        except DrivemtError:
            out.append(None)
    return out
