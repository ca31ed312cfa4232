"""The figures a bench hands on to ``bench/all.py``: written as JSON with ``--figures PATH``, beside its own output.

Each figure carries its anchor (the target the bench states, and the paper's figure where it names one), so the
table of ``bench/all.py`` shows the same anchors as the benches themselves.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Figure:
    """One measured figure and what it is held against."""

    name: str
    value: float
    unit: str
    target: str = ""  # e.g. ">= 50"; empty where the bench states none
    met: bool | None = None  # None where there is no target
    anchor: str = ""  # the paper's or another reference figure, in words
    size: str = ""  # what was measured (cases, rules, images ...)


def add_figures_arg(ap: argparse.ArgumentParser) -> None:
    """The ``--figures PATH`` option."""
    ap.add_argument(
        "--figures", type=Path, default=None, help="Also write the figures as JSON to this file (for bench/all.py)."
    )


def write_figures(path: Path | None, figures: list[Figure]) -> None:
    """Write the figures where ``--figures`` said (nothing without it)."""
    if path is not None:
        path.write_text(json.dumps([asdict(f) for f in figures], indent=1))


def read_figures(path: Path) -> list[Figure]:
    """The figures a bench wrote."""
    return [Figure(**row) for row in json.loads(path.read_text())]
