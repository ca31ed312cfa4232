"""The HTML report of a traffic-light test: mAP per detector and transformation, violating images first.

Like TIGAUG's Fig. 3 it puts each detector's mAP@[.5:.95] against ground truth on the original images
beside its mAP on each transformation's augmented images; then every violating pair (lowest consistency
first) as a side-by-side picture: the original with its ground truth (dashed) and detections (solid),
the augmented image with τ(ground truth) and detections.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tools.common.report import report_env
from tools.tl.models import TRANSFORM_CODES
from tools.tl.results import TLTestResult
from tools.tl.transforms import transform_spec

__all__ = ["write_tl_report"]


def write_tl_report(
    result: TLTestResult,
    path: Path,
    *,
    augmentation: dict[str, Any] | None = None,
    title: str = "drivemt: traffic-light detectors under TIGAUG's transformations",
    max_ok_examples: int = 12,
) -> Path:
    """Write the report.

    Args:
        result: What :func:`tools.tl.judging.judge_detectors` found.
        path: The HTML file to write (pictures are linked relative to it).
        augmentation: Figures of the augmentation run (images, pairs, seconds, images per second, skipped).
        title: Page title.
        max_ok_examples: Non-violating pairs shown after the violations, for contrast.
    """
    env = report_env(path.parent)
    violations = result.violations()
    ok = sorted((p for p in result.pairs if not p.violation), key=lambda p: p.consistency)[:max_ok_examples]
    html = env.get_template("tl_report.html").render(
        title=title,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        r=result,
        names={code: transform_spec(code).name for code in TRANSFORM_CODES},
        violations=violations,
        ok_examples=ok,
        augmentation=augmentation or {},
        total_pairs=len(result.pairs),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
