"""Which "adds" and "replaces" terms of the ontology drivemt renders, shown: one picture per rendered term."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tools.common.artifacts import LocalArtifactStore
from tools.mt.models import CaseDescription, PlannedMR
from tools.mt.terms import RECIPES

__all__ = ["CoverageRow", "coverage", "coverage_sheet"]


@dataclass
class CoverageRow:
    """One term: its regions, whether it is rendered, how, and the reason or approximation."""

    term: str
    verb: str
    regions: list[str]
    rendered: bool
    how: str
    note: str


def coverage(ontology: object) -> list[CoverageRow]:
    """Every manipulation term of the ontology's core, Germany and California sections."""
    rows: dict[str, CoverageRow] = {}
    for region in ("core", "germany", "california"):
        vocab = ontology.vocabulary(region)  # type: ignore[attr-defined]
        for term in vocab.manipulations:
            key = term.normalised
            if key in rows:
                rows[key].regions.append(region)
                continue
            recipe = RECIPES.get(key)
            rows[key] = CoverageRow(
                term=key,
                verb=term.verb or "",
                regions=[region],
                rendered=bool(recipe and recipe.rendered),
                how=f"{recipe.family}:{recipe.kind} ({recipe.place})" if recipe and recipe.rendered else "",
                note=(recipe.note if recipe else "no rendering recipe"),
            )
    return sorted(rows.values(), key=lambda r: (r.verb, not r.rendered, r.term))


def coverage_sheet(
    rows: list[CoverageRow], tmp: LocalArtifactStore, *, width: int = 320, height: int = 160
) -> np.ndarray:
    """A contact sheet: each rendered term drawn into the same synthetic street, labelled."""
    import cv2

    from tools.mt.generate import generate_followup, read_frames
    from tools.mt.synth.dataset import render_case, write_case
    from tools.mt.synth.scene import SceneSpec

    spec = SceneSpec(seed=3, road="straight", time="day", weather="clear", cruise_kmh=40.0)
    base = write_case(tmp, "base", render_case(spec, width=width, height=height), prefix="coverage")
    base = base.model_copy(update={"source": "synthetic"})
    desc = CaseDescription(speed_kmh=40.0, steering_rad=0.0, describer="coverage", road_type="any roads")
    tiles = []
    for i, row in enumerate(r for r in rows if r.rendered):
        plan = PlannedMR(
            method="automt",
            gherkin=row.term,
            road_type="any roads",
            verb=row.verb,  # type: ignore[arg-type]
            manipulation=row.term,
            term=row.term,
            expected_behavior="slow down",
        )
        follow = generate_followup(tmp, base, desc, plan, followup_id=f"t{i:03d}", prefix="coverage", seed=i)
        frame = read_frames(tmp, follow.case)[5].copy()
        cv2.rectangle(frame, (0, height - 16), (width, height), (20, 20, 20), -1)
        cv2.putText(
            frame, row.term[:48], (3, height - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.36, (240, 240, 240), 1, cv2.LINE_AA
        )
        tiles.append(frame)
    cols = 8
    while len(tiles) % cols:
        tiles.append(np.zeros_like(tiles[0]))
    return np.vstack([np.hstack(tiles[k : k + cols]) for k in range(0, len(tiles), cols)])
