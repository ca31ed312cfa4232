"""Crash cases on disk: a folder per case with ``summary.txt`` (the narrative) and an optional sketch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.errors import BadInputError

__all__ = ["MAX_SUMMARY_BYTES", "CrashReport", "NotACrashReportError", "find_cases", "read_case"]

MAX_SUMMARY_BYTES = 64 * 1024


class NotACrashReportError(BadInputError):
    """A summary with no vehicles in it (empty, unrelated, or not a crash narrative)."""

    def __init__(self, case_id: str, reason: str) -> None:
        self.case_id = case_id
        self.reason = reason
        super().__init__(f"case {case_id}: {reason}")


@dataclass(frozen=True)
class CrashReport:
    """One crash case: its id, narrative and optional sketch path."""

    case_id: str
    summary: str
    sketch: str | None = None


def find_cases(path: Any) -> list[Any]:
    """Case folders under a path: the path itself when it holds ``summary.txt``, else its sub-folders that do.

    Raises:
        NotACrashReportError: If there is no case folder there.
    """
    root = Path(path)
    if (root / "summary.txt").is_file():
        return [root]
    cases = sorted(p for p in root.iterdir() if (p / "summary.txt").is_file()) if root.is_dir() else []
    if not cases:
        raise NotACrashReportError(root.name, f"no case folder (with summary.txt) in {root}")
    return cases


def read_case(folder: Any) -> CrashReport:
    """Read a case folder (``summary.txt``, optional ``sketch.jpg``).

    Raises:
        NotACrashReportError: If there is no readable summary.
    """
    path = Path(folder)
    summary = path / "summary.txt"
    try:
        text = summary.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NotACrashReportError(path.name, f"cannot read {summary}: {exc}") from exc
    sketch = next((str(p) for p in (path / "sketch.jpg", path / "sketch.png") if p.exists()), None)
    return CrashReport(case_id=path.name, summary=text, sketch=sketch)
