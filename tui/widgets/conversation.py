"""Conversation: one line per event, filtered, with a submission's chain beside it."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, RichLog, TabPane

from bus.events import Event
from tui.state import summary_of
from tui.widgets._common import console

__all__ = ["STYLES", "ConversationPane", "event_line"]

STYLES = {
    "error": "bold red",
    "deadletter": "red",
    "mrs.accepted": "green",
    "mrs.rejected": "yellow",
    "rules.submitted": "cyan",
    "crashes.submitted": "cyan",
    "tl.datasets.submitted": "cyan",
    "cases.submitted": "cyan",
    "crashes.verdict": "bold green",
    "tl.verdict": "bold green",
    "violations.found": "bold magenta",
    "followups.judged": "green",
    "followups.batch_judged": "bold green",
    "sim.requested": "dim",
    "progress": "dim",
}


def event_line(event: Event) -> Text:
    """An event as one conversation line: time, type, producer, summary and its submission's tag."""
    line = Text()
    line.append(event.time.astimezone().strftime("%H:%M:%S "), style="dim")
    line.append(f"{event.type:<16} ", style=STYLES.get(event.type, "") or "bold")
    line.append(f"{event.producer:<12} ", style="magenta")
    line.append(summary_of(event))
    line.append(f"  #{event.correlation_id[:6]}", style="dim cyan")
    return line


def matches(event: Event, filter_text: str) -> bool:
    """Whether an event passes the filter: ``#tag``, ``type:``, ``agent:`` and words (all must hold)."""
    words = shlex.split(filter_text) if filter_text.count('"') % 2 == 0 else filter_text.split()
    for word in words:
        key, _, value = word.partition(":")
        if word.startswith("#"):
            if not event.correlation_id.startswith(word[1:]):
                return False
        elif value and key == "type":
            if not event.type.startswith(value):
                return False
        elif value and key in ("agent", "producer"):
            if value.lower() not in event.producer.lower():
                return False
        elif word.lower() not in summary_of(event).lower() and word.lower() not in event.type:
            return False
    return True


class ConversationPane(TabPane):
    """Every event as a line (long text wraps), filters, pause, and one submission's chain beside it."""

    DEFAULT_CSS = """
    #log { border: round $primary; }
    #thread { width: 40%; border: round $secondary; display: none; }
    #thread.shown { display: block; }
    #filter { dock: top; }
    """
    MAX_LINES_PER_DRAW: ClassVar[int] = 100

    def __init__(self) -> None:
        super().__init__("Conversation", id="conversation")
        self.follow = True
        self.filter_text = ""
        self.thread_id: str | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter: words, type:mrs, agent:validator, #tag (a submission's chain)", id="filter")
        with Horizontal():
            yield RichLog(id="log", wrap=True, markup=False, min_width=1, max_lines=2000)
            yield RichLog(id="thread", wrap=True, markup=False, min_width=1, max_lines=400)

    def draw(self, pending: list[Event]) -> None:
        """Write the events that came in since the last refresh, in one write (one render for the batch)."""
        lines = [e for e in pending if matches(e, self.filter_text)]
        if len(lines) > self.MAX_LINES_PER_DRAW:  # a burst: show its latest lines (all stay in the state)
            skipped = len(lines) - self.MAX_LINES_PER_DRAW
            lines = lines[-self.MAX_LINES_PER_DRAW :]
            self.write_line("…", "console", f"{skipped} more event(s) in this burst (filter to see them)", "dim")
        if lines:
            self.query_one("#log", RichLog).write(Text("\n").join(event_line(e) for e in lines), scroll_end=self.follow)
        if self.thread_id is not None:
            chain = [e for e in pending if e.correlation_id == self.thread_id]
            if chain:
                self.query_one("#thread", RichLog).write(Text("\n").join(event_line(e) for e in chain))

    def write_line(self, kind: str, who: str, summary: str, style: str) -> None:
        """A line of the console's own (an invalid message, a burst cut short), stamped with its clock."""
        line = Text()
        line.append(console(self).clock().astimezone().strftime("%H:%M:%S "), style="dim")
        line.append(f"{kind:<16} ", style=style or "bold")
        line.append(f"{who:<12} ", style="magenta")
        line.append(summary)
        self.query_one("#log", RichLog).write(line, scroll_end=self.follow)

    @on(Input.Changed, "#filter")
    def refilter(self, message: Input.Changed) -> None:
        """Redraw the conversation with the filter; a ``#tag`` also opens that submission's chain beside it."""
        self.filter_text = message.value.strip()
        state = console(self).state
        self._rewrite(state.events)
        tag = next((w[1:] for w in self.filter_text.split() if w.startswith("#") and len(w) > 2), None)
        self.show_thread(state.find_thread(tag) if tag else None)

    def _rewrite(self, events: Iterable[Event]) -> None:
        log = self.query_one("#log", RichLog)
        log.clear()
        for event in events:
            if matches(event, self.filter_text):
                log.write(event_line(event), scroll_end=self.follow)

    def show_thread(self, correlation_id: str | None) -> None:
        """Show every event of one submission beside the conversation (None hides it)."""
        self.thread_id = correlation_id
        view = self.query_one("#thread", RichLog)
        view.clear()
        view.set_class(correlation_id is not None, "shown")
        if correlation_id is None:
            return
        view.write(Text(f"submission #{correlation_id[:8]}", style="bold"))
        for event in console(self).state.thread(correlation_id):
            view.write(event_line(event))

    def open_thread(self, correlation_id: str) -> None:
        """Filter the conversation to one submission (its chain shows beside it)."""
        self.query_one("#filter", Input).value = f"#{correlation_id[:8]}"

    def toggle_follow(self) -> None:
        """Pause (the log stops scrolling) or follow again."""
        self.follow = not self.follow
        if self.follow:
            self.query_one("#log", RichLog).scroll_end(animate=False)

    def clear(self) -> None:
        """Clear the view (the events stay in the state for threads and filters)."""
        self.query_one("#log", RichLog).clear()
