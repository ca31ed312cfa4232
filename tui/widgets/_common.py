"""Small helpers the panes share."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.widget import Widget

if TYPE_CHECKING:
    from tui.app import DrivemtApp

__all__ = ["console", "cut"]


def cut(text: str, n: int) -> str:
    """The text, or its first ``n - 1`` characters and an ellipsis."""
    return text if len(text) <= n else text[: n - 1] + "…"


def console(widget: Widget) -> DrivemtApp:
    """The console app a pane belongs to (its bus, state and settings)."""
    return cast("DrivemtApp", widget.app)
