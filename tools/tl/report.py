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

import jinja2

from tools.tl.results import TLTestResult

__all__ = ["write_tl_report"]

_NAMES = {
    "RN": "rain",
    "SW": "snow",
    "FG": "fog",
    "LF": "lens flare",
    "OE": "overexposure",
    "UE": "underexposure",
    "MB": "motion blur",
    "CC": "change colour",
    "MP": "move",
    "AD": "add",
    "RT": "rotate",
    "SC": "scale",
}


def _rel(path: str | None, base: Path) -> str | None:
    if not path:
        return None
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return Path(path).resolve().as_uri()


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
        result: What :func:`runners.tl_testing.judge_detectors` found.
        path: The HTML file to write (pictures are linked relative to it).
        augmentation: Figures of the augmentation run (images, pairs, seconds, images per second, skipped).
        title: Page title.
        max_ok_examples: Non-violating pairs shown after the violations, for contrast.
    """
    base = path.parent
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tools.data", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
    )
    env.filters["rel"] = lambda p: _rel(p, base)
    violations = result.violations()
    ok = sorted((p for p in result.pairs if not p.violation), key=lambda p: p.consistency)[:max_ok_examples]
    html = env.get_template("tl_report.html").render(
        title=title,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        r=result,
        names=_NAMES,
        violations=violations,
        ok_examples=ok,
        augmentation=augmentation or {},
        total_pairs=len(result.pairs),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
