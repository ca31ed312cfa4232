"""Follow-up generation's figures and its HTML report: source and follow-up side by side, the MR, each check.

The figures follow AutoMT's: the **validation rate** is valid follow-ups over cases submitted (a case with no
applicable MR, or whose MR cannot be rendered, counts as not valid); each check's pass rate is over the
follow-ups made; **distinct manipulations** counts the distinct canonical ontology terms among valid
follow-ups.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from tools.common.artifacts import ArtifactStore
from tools.common.report import report_env
from tools.mt.models import FollowUp, Validity

__all__ = ["CHECKS", "GenerationResult", "summarise", "write_generation_report"]

CHECKS = ("scenario_alignment", "manipulation_verification", "logical_alignment")


@dataclass
class GenerationResult:
    """One case's outcome."""

    case_id: str
    status: str
    """``valid``, ``invalid``, ``no_applicable_mr``, ``unrenderable``, ``error`` or ``missing``."""
    followup: FollowUp | None = None
    validity: Validity | None = None
    reason: str = ""


def summarise(results: Sequence[GenerationResult], *, seconds: float) -> dict[str, Any]:
    """The figures of a run: cases, follow-ups, valid, validation rate, each check's pass rate, distinct terms.

    A check's pass rate counts the follow-ups it was measured on (``checks_measured``): one it skipped is in neither
    its numerator nor its denominator, and a check measured on none has no rate (``None``), never 0 or 100 %."""
    made = [r for r in results if r.validity is not None]
    valid = [r for r in made if r.validity is not None and r.validity.valid]
    checks: dict[str, float | None] = {}
    measured: dict[str, int] = {}
    for name in CHECKS:  # (a check that was skipped was not measured: it is left out of its own rate)
        ran = [c for r in made if r.validity for c in r.validity.checks if c.name == name and not c.skipped]
        checks[name] = sum(c.passed for c in ran) / len(ran) if ran else None
        measured[name] = len(ran)
    terms = {r.followup.mr.term for r in valid if r.followup is not None}
    return {
        "cases": len(results),
        "followups": len(made),
        "valid": len(valid),
        "validation_rate": round(len(valid) / len(results), 4) if results else 0.0,
        "checks": {k: round(v, 4) if v is not None else None for k, v in checks.items()},
        "checks_measured": measured,
        "distinct_manipulations": len(terms),
        "no_applicable_mr": sum(1 for r in results if r.status == "no_applicable_mr"),
        "unrenderable": sum(1 for r in results if r.status == "unrenderable"),
        "errors": sum(1 for r in results if r.status in ("error", "missing")),
        "seconds": round(seconds, 2),
        "seconds_per_followup": round(sum(r.followup.seconds for r in made if r.followup) / len(made), 3)
        if made
        else 0.0,
    }


def _gif(frames: Sequence[np.ndarray]) -> bytes:
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    buf = io.BytesIO()
    images[0].save(buf, format="GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return buf.getvalue()


def write_generation_report(
    store: ArtifactStore,
    results: Sequence[GenerationResult],
    *,
    report_ref: str,
    figures: dict[str, Any],
    title: str = "drivemt: AutoMT follow-up cases",
    max_cases: int = 300,
) -> str:
    """Write the report (and a GIF per source and follow-up) into ``store`` and return its ref.

    Valid follow-ups come first, then the invalid ones grouped by the failing check, then the cases that got
    none, each with its reason.
    """
    import posixpath

    from tools.mt.generate import read_frames

    base = posixpath.dirname(report_ref)
    media = f"{base}/media"
    rows = []
    for r in list(results)[:max_cases]:
        row: dict[str, Any] = {"case_id": r.case_id, "status": r.status, "reason": r.reason, "followup_id": None}
        row["mr"] = None
        if r.followup is not None:
            f = r.followup
            src = read_frames(store, f.source)
            fol = read_frames(store, f.case)
            refs = {}
            for name, frames in (("src", src), ("fol", fol)):
                refs[f"{name}_gif"] = store.put(f"{media}/{f.followup_id}-{name}.gif", _gif(frames))
            row.update(
                followup_id=f.followup_id,
                mr=f.mr,
                description=f.description,
                ego=f.source.ego,
                src_first=posixpath.relpath(f.source.frames[0], base),
                src_last=posixpath.relpath(f.source.frames[-1], base),
                fol_first=posixpath.relpath(f.case.frames[0], base),
                fol_last=posixpath.relpath(f.case.frames[-1], base),
                src_gif=posixpath.relpath(refs["src_gif"], base),
                fol_gif=posixpath.relpath(refs["fol_gif"], base),
                generator=f.edit.generator,
                checks=r.validity.checks if r.validity else [],
                failing=r.validity.failing() if r.validity else [],
            )
        rows.append(row)
    order = {"valid": 0, "invalid": 1, "no_applicable_mr": 2, "unrenderable": 3, "error": 4, "missing": 5}
    rows.sort(key=lambda r: (order.get(r["status"], 9), ",".join(r.get("failing", [])), r["case_id"]))
    groups = Counter(",".join(r.get("failing", [])) for r in rows if r["status"] == "invalid")
    html = (
        report_env()
        .get_template("mt_report.html")
        .render(
            title=title,
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            figures=figures,
            rows=rows,
            groups=sorted(groups.items(), key=lambda kv: -kv[1]),
        )
    )
    return store.put(report_ref, html)
