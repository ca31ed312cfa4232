"""Violations: every violation of every pipeline, counts per pipeline, and the evidence of the selected one."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections import deque
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static, TabPane

from tui.state import ConsoleState, ViolationRow
from tui.widgets._common import console, cut

__all__ = ["ViolationsPane", "violation_text"]

COLUMNS = ("time", "pipeline", "case", "relation or MR", "model or ego", "measure")


def violation_text(
    row: ViolationRow, local: Callable[[str], Path | None] | None = None, report: str | None = None
) -> Text:
    """The detail of a violation: what broke, its numbers, its evidence (local paths where present), its report."""
    text = Text()
    text.append(f"{row.pipeline} · {row.case}\n", style="bold")
    text.append(row.description + "\n")
    if row.relation:
        text.append(f"relation: {row.relation}\n")
    if row.subject:
        text.append(f"model or ego: {row.subject}\n")
    for k, v in row.metrics.items():
        text.append(f"  {k} = {v:.3f}\n", style="cyan")
    for ref in row.evidence:
        path = local(ref) if local else None
        text.append(f"evidence: {path or ref}\n", style="magenta" if path else "dim magenta")
    if report:
        text.append(f"report: {report}\n", style="green")
    text.append(f"submission #{row.correlation_id[:8]} (Enter: its chain; o: open the evidence)", style="dim")
    return text


class ViolationsPane(TabPane):
    """A live table of violations, their counts, and the selected one's evidence (its first picture drawn)."""

    DEFAULT_CSS = """
    #vcounts { height: 1; padding: 0 1; color: $text-muted; }
    #violations { height: 1fr; }
    #vdetail { height: 45%; border: round $secondary; padding: 0 1; }
    #vdetail-text { width: 1fr; }
    #vimage { width: 2fr; height: 100%; }
    """

    def __init__(self, artifacts_root: Path | None = None) -> None:
        super().__init__("Violations", id="violations-pane")
        self.artifacts_root = artifacts_root
        self._keys: deque[str] = deque()

    def compose(self) -> ComposeResult:
        yield Static(id="vcounts")
        yield DataTable(id="violations", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="vdetail"):
            yield VerticalScroll(Static(id="vdetail-text"))
            yield Vertical(id="vimage")

    def on_mount(self) -> None:
        table = self.query_one("#violations", DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)

    def draw(self, state: ConsoleState) -> None:
        """Add the violations that came in; drop the rows the state no longer keeps."""
        table = self.query_one("#violations", DataTable)
        new, state.new_violations = state.new_violations, []
        for row in new:
            table.add_row(
                row.time.astimezone().strftime("%H:%M:%S"), row.pipeline, row.case, cut(row.relation, 48),
                row.subject, row.measure, key=row.event_id,
            )  # fmt: skip
            self._keys.append(row.event_id)
        limit = state.violations.maxlen or len(self._keys)
        while len(self._keys) > limit:
            with contextlib.suppress(Exception):
                table.remove_row(self._keys.popleft())
        counts = state.violation_counts
        text = " · ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no violations yet"
        self.query_one("#vcounts", Static).update(f"violations: {text}")

    def _row(self, key: str | None) -> ViolationRow | None:
        return next((r for r in console(self).state.violations if r.event_id == key), None)

    @on(DataTable.RowHighlighted, "#violations")
    def show_detail(self, message: DataTable.RowHighlighted) -> None:
        """The evidence and numbers of the selected violation, its first picture drawn in the terminal."""
        row = self._row(message.row_key.value if message.row_key else None)
        if row is None:
            return
        batch = console(self).state.batches.get(row.correlation_id)
        self.query_one("#vdetail-text", Static).update(
            violation_text(row, self.evidence_path, batch.report if batch else None)
        )
        self._show_picture(row)

    @on(DataTable.RowSelected, "#violations")
    def open_chain(self, message: DataTable.RowSelected) -> None:
        """Enter on a violation: its submission's chain in the conversation."""
        row = self._row(message.row_key.value)
        if row is not None:
            console(self).open_thread(row.correlation_id)

    def evidence_path(self, ref: str) -> Path | None:
        """The local file of an evidence ref (under the artefacts folder), if it is on this machine."""
        path = Path(ref) if Path(ref).is_absolute() else (self.artifacts_root / ref if self.artifacts_root else None)
        return path if path is not None and path.is_file() else None

    def _show_picture(self, row: ViolationRow) -> None:
        holder = self.query_one("#vimage", Vertical)
        holder.remove_children()
        picture = next(
            (
                p
                for ref in row.evidence
                if ref.lower().endswith((".png", ".jpg", ".jpeg")) and (p := self.evidence_path(ref))
            ),
            None,
        )
        if picture is None:
            holder.mount(Static(Text("no picture on this machine", style="dim")))
            return
        from textual_image.widget import Image  # Kitty or Sixel where the terminal has them, half-blocks otherwise

        holder.mount(Image(str(picture)))

    def open_evidence(self) -> None:
        """Open the selected violation's first evidence file with the desktop's viewer (or say where it is)."""
        table = self.query_one("#violations", DataTable)
        if not table.row_count:
            return
        row = self._row(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        path = next((p for ref in (row.evidence if row else []) if (p := self.evidence_path(ref))), None)
        if path is None:
            self.notify("its evidence is not on this machine", severity="warning")
            return
        opener = shutil.which("xdg-open") or shutil.which("open")
        if opener is None:
            self.notify(str(path), title="Evidence")
            return
        subprocess.Popen([opener, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.notify(f"opened {path.name}")
