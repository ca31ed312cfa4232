"""Batches: submissions with live progress bars, their totals and report links."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, TabPane

from tui.state import ConsoleState
from tui.widgets._common import console, cut

__all__ = ["BatchesPane", "bar"]

COLUMNS = ("batch", "kind", "stage", "progress", "errors", "totals")


def bar(done: int, total: int | None, width: int = 16) -> str:
    """A text progress bar with its count (the count alone when the total is unknown)."""
    if not total:
        return f"{done}"
    filled = round(width * min(done, total) / total)
    return f"{'█' * filled}{'░' * (width - filled)} {done}/{total}"


class BatchesPane(TabPane):
    """Running and finished batches, fed by ``progress`` events and the batches' results."""

    DEFAULT_CSS = """
    #batches { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__("Batches", id="batches-pane")

    def compose(self) -> ComposeResult:
        yield DataTable(id="batches", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one("#batches", DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)

    def draw(self, state: ConsoleState) -> None:
        """Update the batches that changed; drop those the state no longer keeps."""
        table = self.query_one("#batches", DataTable)
        changed, state.changed_batches = state.changed_batches, set()
        for cid in changed:
            b = state.batches.get(cid)
            if b is None:  # no longer kept
                if cid in table.rows:
                    table.remove_row(cid)
                continue
            values = [b.kind, b.stage or "submitted", bar(b.done, b.total), b.errors,
                      cut(b.totals + (f"  report {b.report}" if b.report else ""), 80)]  # fmt: skip
            if cid in table.rows:
                for column, value in zip(table.ordered_columns[1:], values, strict=True):
                    table.update_cell(cid, column.key, value)
            else:
                table.add_row(cid[:8], *values, key=cid)

    @on(DataTable.RowSelected, "#batches")
    def open_chain(self, message: DataTable.RowSelected) -> None:
        """Enter on a batch: its submission's chain in the conversation."""
        if message.row_key.value:
            console(self).open_thread(message.row_key.value)
