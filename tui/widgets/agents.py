"""Agents: every instance from its heartbeats, every work queue, and the dead letters with a retry action."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, TabPane

from tui.state import ConsoleState
from tui.widgets._common import console, cut

__all__ = ["AgentsPane"]

COLUMNS = {
    "#agents": ("agent", "status", "done", "failed", "busy", "/min", "seen", "last error"),
    "#queues": ("work queue", "pending", "in flight", "redelivered"),
    "#deadletters": ("dead letter", "consumer", "reason"),
}


class AgentsPane(TabPane):
    """Instances (status, handled, failed, in flight, per minute, last error), queues and dead letters."""

    DEFAULT_CSS = """
    #agents { height: 2fr; }
    #queues, #deadletters { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__("Agents", id="agents-pane")

    def compose(self) -> ComposeResult:
        yield DataTable(id="agents", cursor_type="row", zebra_stripes=True)
        with Horizontal():
            yield DataTable(id="queues", cursor_type="row", zebra_stripes=True)
            yield DataTable(id="deadletters", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        for selector, names in COLUMNS.items():
            table = self.query_one(selector, DataTable)
            for name in names:
                table.add_column(name, key=name)

    def draw(self, state: ConsoleState) -> None:
        """Update the instances whose heartbeats or events came in (rows in name order)."""
        table = self.query_one("#agents", DataTable)
        changed, state.changed_agents = state.changed_agents, set()
        added = False
        now = console(self).clock()
        for key in sorted(changed):
            a = state.agents[key]
            a.shown = a.shown_status(now)
            style = {"ready": "green", "silent": "bold red", "stopped": "dim"}.get(a.shown, "yellow")
            status = Text(a.shown, style=style)
            values = [status, a.handled, a.failed, a.in_flight, f"{a.per_minute():.0f}",
                      a.seen.astimezone().strftime("%H:%M:%S"), cut(a.last_error or "", 60)]  # fmt: skip
            if key in table.rows:
                for column, value in zip(table.ordered_columns[1:], values, strict=True):
                    table.update_cell(key, column.key, value)
            else:
                table.add_row(key, *values, key=key)
                added = True
        if added:  # instances in name order, whatever order their heartbeats came in
            table.sort("agent")

    def draw_ops(self, queues: list[dict[str, Any]], deadletters: list[tuple[int, Any]]) -> None:
        """The work queues and dead letters as last polled."""
        table = self.query_one("#queues", DataTable)
        table.clear()
        for q in sorted(queues, key=lambda q: q["name"]):
            table.add_row(q["name"], q["pending"], q["ack_pending"], q["redelivered"])
        dead = self.query_one("#deadletters", DataTable)
        dead.clear()
        for seq, event in deadletters:
            dead.add_row(str(seq), event.payload.consumer, cut(event.payload.reason, 80), key=str(seq))

    def selected_deadletter(self) -> int | None:
        """The sequence number of the selected dead letter (None when there is none)."""
        table = self.query_one("#deadletters", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return int(key) if key else None

    async def retry_selected(self) -> None:
        """Send the selected dead letter back to its subject (over the bus), then poll again."""
        from runners.clients.ops import retry_deadletters

        app = console(self)
        seq = self.selected_deadletter()
        if seq is None:
            self.notify("no dead letters", severity="warning")
            return
        try:
            done = await retry_deadletters(app.bus, [seq])
        except Exception as exc:
            self.notify(str(exc), title="Not retried", severity="error")
            return
        self.notify(f"retried {len(done)} dead letter(s)")
        app.poll_ops()
