"""State mapping tables: every format's labels onto drivemt's (state, arrow), and back.

drivemt keeps four states (red, yellow, green, off) and an optional arrow (left, right, straight). Each
format names lights its own way:

========================  ===================  ==============================================
format                    label                drivemt (state, arrow)
========================  ===================  ==============================================
LISA (published tags)     go / goLeft /        green / green, left / green, straight
                          goForward
                          warning /            yellow / yellow, left
                          warningLeft
                          stop / stopLeft      red / red, left
Bosch (published labels)  Red, Yellow, Green   red / yellow / green
                          off (also Off)       off
                          <Colour>Left         <colour>, left
                          <Colour>Right        <colour>, right
                          <Colour>Straight     <colour>, straight
                          <Colour>StraightLeft <colour>, left   (the turn arrow wins)
                          <Colour>StraightRight <colour>, right
YOLO / COCO (drivemt)     red, yellow,         red / yellow / green / off (class ids 0-3 in
                          green, off           YOLO, category ids 1-4 in COCO)
========================  ===================  ==============================================

Labels outside the tables are read by :func:`state_from_label`'s word rules (``goRight``, ``stopForward``,
``traffic_light_red``, ``RedLeftArrow``, ``amber`` ...). A label with no colour word, or with two, is an
:class:`~tools.tl.errors.UnknownStateError`: the box is skipped, never guessed.

Writing picks the format's own label for (state, arrow). Where the format has none for the arrow, the
arrow is dropped and the colour kept (a yellow left arrow becomes Bosch ``Yellow``); where it has none
for the state, the nearest label in its style is written (LISA has no tag for an unlit light: drivemt
writes ``off``). The source label is reused when it still says the same thing, so Bosch's
``RedStraightLeft`` survives a round trip.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from tools.tl.errors import UnknownStateError
from tools.tl.models import TLState

__all__ = [
    "ARROWS",
    "BOSCH_LABELS",
    "DRIVEMT_CLASSES",
    "LISA_TAGS",
    "Arrow",
    "StateArrow",
    "bosch_label",
    "label_text",
    "lisa_tag",
    "state_from_label",
]

Arrow = Literal["left", "right", "straight"]
ARROWS: tuple[str, ...] = get_args(Arrow)
StateArrow = tuple[TLState, Arrow | None]

DRIVEMT_CLASSES: tuple[TLState, ...] = ("red", "yellow", "green", "off")
"""drivemt's class order: YOLO class ids 0-3, COCO category ids 1-4."""

LISA_TAGS: dict[str, StateArrow] = {
    "go": ("green", None),
    "goLeft": ("green", "left"),
    "goForward": ("green", "straight"),
    "warning": ("yellow", None),
    "warningLeft": ("yellow", "left"),
    "stop": ("red", None),
    "stopLeft": ("red", "left"),
}
"""The LISA Traffic Light dataset's published annotation tags."""

_LISA_OFF_TAG = "off"  # drivemt's own tag: LISA publishes none for an unlit light.
_LISA_COLOUR = {"green": "go", "yellow": "warning", "red": "stop"}

BOSCH_LABELS: dict[str, StateArrow] = {
    "Red": ("red", None),
    "Yellow": ("yellow", None),
    "Green": ("green", None),
    "off": ("off", None),
    "RedLeft": ("red", "left"),
    "RedRight": ("red", "right"),
    "RedStraight": ("red", "straight"),
    "RedStraightLeft": ("red", "left"),
    "GreenLeft": ("green", "left"),
    "GreenRight": ("green", "right"),
    "GreenStraight": ("green", "straight"),
    "GreenStraightLeft": ("green", "left"),
    "GreenStraightRight": ("green", "right"),
}
"""The Bosch Small Traffic Lights dataset's published labels (``off`` is lower case in its files)."""

_BOSCH_COLOUR = {"red": "Red", "yellow": "Yellow", "green": "Green"}
_BOSCH_ARROW = {"left": "Left", "right": "Right", "straight": "Straight"}

_COLOUR_WORDS: dict[str, TLState] = {
    "red": "red",
    "stop": "red",
    "yellow": "yellow",
    "amber": "yellow",
    "orange": "yellow",
    "warning": "yellow",
    "caution": "yellow",
    "green": "green",
    "go": "green",
    "off": "off",
    "unlit": "off",
    "dark": "off",
}
_ARROW_WORDS: dict[str, Arrow] = {
    "left": "left",
    "right": "right",
    "straight": "straight",
    "forward": "straight",
    "ahead": "straight",
    "up": "straight",
}
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_EXACT: dict[str, StateArrow] = {
    **{k.lower(): v for k, v in LISA_TAGS.items()},
    **{k.lower(): v for k, v in BOSCH_LABELS.items()},
    **{c: (c, None) for c in DRIVEMT_CLASSES},
}


def label_text(value: object) -> str:
    """A label read from YAML as text: YAML 1.1 reads an unquoted ``off`` as ``false``, so ``False`` is ``off``.

    Bosch quotes ``'off'`` for this reason; hand-written YOLO ``data.yaml`` files often do not.
    """
    if value is False:
        return "off"
    return "" if value is None else str(value)


def state_from_label(label: str, *, where: str) -> StateArrow:
    """Map any format's label onto drivemt's state and arrow.

    The published tables are tried first (case-insensitively), then word rules: the label is split at
    case changes and separators, and exactly one colour word must appear (red/stop, yellow/amber/warning,
    green/go, off/unlit/dark); arrow words (left, right, straight/forward/ahead/up) set the arrow, a turn
    arrow winning over straight as in Bosch's ``StraightLeft``.

    Args:
        label: The label as the file spells it.
        where: File and line (or element) for the error message.

    Returns:
        ``(state, arrow)``.

    Raises:
        UnknownStateError: No colour word, or two different ones.
    """
    text = label.strip()
    exact = _EXACT.get(text.lower())
    if exact is not None:
        return exact
    words = [w.lower() for w in _WORD.findall(text)]
    colours = {_COLOUR_WORDS[w] for w in words if w in _COLOUR_WORDS}
    if len(colours) != 1:
        raise UnknownStateError(label, where)
    (state,) = colours
    arrows = [_ARROW_WORDS[w] for w in words if w in _ARROW_WORDS]
    turns = [a for a in arrows if a != "straight"]
    arrow: Arrow | None = turns[0] if turns else (arrows[0] if arrows else None)
    return state, arrow


def lisa_tag(state: TLState, arrow: Arrow | None, source_label: str | None = None) -> str:
    """The LISA tag for a light; arrows LISA has no tag for are dropped, ``off`` is drivemt's own tag."""
    if source_label in LISA_TAGS and LISA_TAGS[source_label] == (state, arrow):
        return source_label
    if state == "off":
        return _LISA_OFF_TAG
    for tag, value in LISA_TAGS.items():
        if value == (state, arrow):
            return tag
    return _LISA_COLOUR[state]


def bosch_label(state: TLState, arrow: Arrow | None, source_label: str | None = None) -> str:
    """The Bosch label for a light; arrows outside Bosch's published labels are dropped.

    A Bosch source label whose arrow part still applies keeps that part under the new colour, so
    ``RedStraightLeft`` recoloured green becomes ``GreenStraightLeft``, not ``GreenLeft``.
    """
    if state == "off":
        return "off"
    colour = _BOSCH_COLOUR[state]
    if source_label in BOSCH_LABELS and BOSCH_LABELS[source_label][1] == arrow:
        suffix = source_label.removeprefix("Red").removeprefix("Yellow").removeprefix("Green")
        if colour + suffix in BOSCH_LABELS:
            return colour + suffix
    if arrow is not None and colour + _BOSCH_ARROW[arrow] in BOSCH_LABELS:
        return colour + _BOSCH_ARROW[arrow]
    return colour
