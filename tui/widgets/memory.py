"""Memory: MRs found by text and filters through the daemon's request/reply service."""

from __future__ import annotations

import shlex
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Input, Static, TabPane

from tui.widgets._common import console, cut

__all__ = ["MemoryPane", "parse_query"]

COLUMNS = ("score", "uses", "road type", "behaviour", "MR")
_FILTER_KEYS = {
    "region": "region",
    "road": "road_type",
    "behaviour": "expected_behavior",
    "behavior": "expected_behavior",
}


def parse_query(text: str) -> tuple[str, dict[str, str]]:
    """Search words and ``region:``/``road:``/``behaviour:`` filters (quotes group words: ``behaviour:'slow down'``)."""
    words, filters = [], {}
    for word in shlex.split(text) if text.count("'") % 2 == 0 else text.split():
        key, _, value = word.partition(":")
        if value and key in _FILTER_KEYS:
            filters[_FILTER_KEYS[key]] = value
        else:
            words.append(word)
    return " ".join(words), filters


class MemoryPane(TabPane):
    """Search the MR store; each MR with its Gherkin text, source rules, score and execution count."""

    DEFAULT_CSS = """
    #mrs { height: 1fr; }
    #mrdetail { height: auto; max-height: 40%; border: round $secondary; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__("Memory", id="memory-pane")
        self._hits: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="search MRs: words, region:germany road:intersection behaviour:'slow down'", id="mrquery"
        )
        yield DataTable(id="mrs", cursor_type="row", zebra_stripes=True)
        yield VerticalScroll(Static(id="mrdetail-text"), id="mrdetail")

    def on_mount(self) -> None:
        table = self.query_one("#mrs", DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)

    @on(Input.Submitted, "#mrquery")
    async def search(self, message: Input.Submitted) -> None:
        """Search MRs by text with ``region:``, ``road:`` and ``behaviour:`` filters (request and reply)."""
        from bus.rpc import call
        from bus.services import MRS_SEARCH, MRFilters, SearchMRs

        query, filters = parse_query(message.value)
        try:
            reply = await call(
                console(self).bus,
                MRS_SEARCH,
                SearchMRs(query=query or "any", limit=50, filters=MRFilters(**filters)),
                timeout=10,
            )
        except Exception as exc:
            self.notify(str(exc), title="Search failed", severity="error")
            return
        table = self.query_one("#mrs", DataTable)
        table.clear()
        self._hits = {h.mr.mr_id: h for h in reply.hits}
        for h in reply.hits:
            m = h.mr
            table.add_row(f"{m.score:.2f}", m.execution_count, m.fields.road_type, m.fields.expected_behavior,
                          cut(m.gherkin, 90), key=m.mr_id)  # fmt: skip
        self.query_one("#mrdetail-text", Static).update(f"{len(reply.hits)} MR(s)")

    @on(DataTable.RowHighlighted, "#mrs")
    def show_detail(self, message: DataTable.RowHighlighted) -> None:
        """The selected MR: Gherkin, source rules, score and uses."""
        hit = self._hits.get(str(message.row_key.value)) if message.row_key else None
        if hit is None:
            return
        m = hit.mr
        rules = ", ".join(m.source_rule_ids)
        self.query_one("#mrdetail-text", Static).update(
            f"{m.gherkin}\n\nsource rules: {rules}\nscore {m.score:.2f} · executed {m.execution_count} time(s) · "
            f"region {m.region} · similarity {hit.similarity:.2f} · id {m.mr_id}"
        )
