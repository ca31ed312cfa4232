"""HTML reports a person can look at (one self-contained file per batch)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2

__all__ = ["relative_link", "report_env", "write_rules_report"]


def relative_link(path: str | None, base: Path) -> str | None:
    """A link to ``path`` from a page in ``base``: relative when it lies below ``base`` (so a report folder can
    be moved or shared), else a ``file://`` URI."""
    if not path:
        return None
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return Path(path).resolve().as_uri()


def report_env(base: Path | None = None) -> jinja2.Environment:
    """The packaged report templates; with ``base`` (the report's folder), a ``rel`` filter for links."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tools.data", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
    )
    if base is not None:
        env.filters["rel"] = lambda p: relative_link(p, base)
    return env


def write_rules_report(
    path: Path,
    *,
    rows: list[dict[str, Any]],
    correlation_id: str,
    seconds: float,
    provenance: dict[str, Any] | None,
    title: str = "drivemt: traffic rules to metamorphic relations",
) -> Path:
    """Write the rules -> MRs report.

    Args:
        path: Output HTML file (folders are created).
        rows: One dict per rule, as ``runners.host.inprocess.result_row`` makes them, plus ``kind``,
            ``checks`` and ``candidates`` where known.
        correlation_id: The batch.
        seconds: Wall time of the batch.
        provenance: Provenance of the results.
        title: Page title.

    Returns:
        The path written.
    """
    counts = Counter(r.get("kind", "error") for r in rows)
    accepted = [r for r in rows if r.get("kind") == "accepted"]
    by_behavior = Counter(r["expected_behavior"] for r in accepted).most_common()
    by_road = Counter(r["road_type"] for r in accepted).most_common()
    html = (
        report_env()
        .get_template("rules_report.html")
        .render(
            title=title,
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            correlation_id=correlation_id,
            counts={
                "total": len(rows),
                "accepted": counts["accepted"],
                "rejected": counts["rejected"],
                "error": counts["error"],
                "missing": counts["missing"],
            },
            unique_mrs=len({r.get("mr_id") for r in accepted}),
            seconds=seconds,
            rate=len(rows) / seconds if seconds > 0 else 0.0,
            provenance=provenance,
            by_behavior=by_behavior,
            by_road=by_road,
            max_count=max([n for _, n in by_behavior + by_road] or [1]),
            rows=rows,
        )
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
