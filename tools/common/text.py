"""Word-level text normalisation shared by the ontology, the offline reasoner and the scorer.

Matching is done on folded tokens (lower case, plurals folded) so that "railroad crossings" meets
"Railroad Crossing" and "ice" never matches inside "police".
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["ARTICLES", "contains_tokens", "fold_word", "normalise_phrase", "split_contraction", "tokens"]

ARTICLES = frozenset({"a", "an", "the"})

# Irregular plurals that traffic rules use; regular ones are folded by suffix rules below.
_IRREGULAR = {
    "children": "child",
    "people": "person",
    "persons": "person",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "geese": "goose",
    "mice": "mouse",
    "oxen": "ox",
    "cattle": "cattle",
    "sheep": "sheep",
    "deer": "deer",
    "livestock": "livestock",
}
# Words ending in s that are not plurals (or whose stem would be wrong).
_KEEP = frozenset(
    {
        "bus",
        "us",
        "its",
        "is",
        "was",
        "has",
        "does",
        "this",
        "thus",
        "plus",
        "always",
        "towards",
        "as",
        "pass",
        "less",
        "unless",
        "across",
        "gas",
        "news",
        "ways",
        "series",
        "status",
        "campus",
        "cross",
        "glass",
        "access",
        "lens",
        "chassis",
        "alias",
        "bonus",
        "minus",
        "various",
        "previous",
        "hazardous",
        "dangerous",
        "numerous",
        "obvious",
        "serious",
    }
)
_WORD = re.compile(r"[a-z0-9]+(?:['/.-][a-z0-9]+)*")


@lru_cache(maxsize=65536)
def fold_word(word: str) -> str:
    """Fold one lower-case word to its singular form.

    Args:
        word: A lower-case word.

    Returns:
        The word with a plural ending removed ("buses" -> "bus", "crossings" -> "crossing",
        "ies" -> "y"); words that only look plural are kept.
    """
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word in _KEEP or not word.endswith("s"):
        return word
    if word.endswith("'s"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes", "uses")):
        return word[:-2]
    if word.endswith(("ss", "us", "is", "ous")):
        return word
    return word[:-1]


# Negated contractions whose stem is not the word before "n't" ("can't" is "can not", "won't" is "will not").
_CONTRACTED_STEMS = {"ca": "can", "wo": "will", "sha": "shall"}


def split_contraction(word: str) -> tuple[str, ...]:
    """A lower-case word with a negated contraction as its two words ("don't" -> "do", "not"; "can't" -> "can",
    "not"; "won't" -> "will", "not"); any other word as itself."""
    if not word.endswith("n't") or len(word) < 5 or not word[:-3].isalpha():
        return (word,)
    stem = word[:-3]
    return (_CONTRACTED_STEMS.get(stem, stem), "not")


def tokens(text: str) -> tuple[str, ...]:
    """Split text into folded word tokens.

    Apostrophes, slashes, dots and hyphens inside a word are kept ("andrew's", "30", "km/h",
    "st.", "right-of-way"), so ontology terms keep their shape. Parentheses and other punctuation
    separate words.

    Args:
        text: Any text.

    Returns:
        Lower-case tokens with plurals folded.
    """
    lowered = text.lower().replace("\u2019", "'")
    return tuple(fold_word(w) for w in _WORD.findall(lowered))


def normalise_phrase(text: str) -> str:
    """The normalised form of a phrase: folded tokens without leading articles, joined by spaces."""
    toks = list(tokens(text))
    while toks and toks[0] in ARTICLES:
        toks.pop(0)
    return " ".join(toks)


def contains_tokens(haystack: tuple[str, ...], needle: tuple[str, ...]) -> int:
    """Position of ``needle`` as a contiguous token run inside ``haystack``, or -1."""
    n = len(needle)
    if n == 0 or n > len(haystack):
        return -1
    first = needle[0]
    for i in range(len(haystack) - n + 1):
        if haystack[i] == first and haystack[i : i + n] == needle:
            return i
    return -1
