"""The terminal UI: the console people watch while the daemon works, and where they inject work.

A bus client like any other (``drivemt tui``). Five panes, each on a key the footer shows (F2-F6, or Alt+1-5, or a
click on its tab):

* **Conversation**: one line per event (time, producer, type, summary; long text wraps), threaded by submission:
  each line ends with the submission's tag (``#1a2b3c``); type the tag in the filter to see the whole chain.
  Filters by ``type:``, ``agent:`` and free text; ``F8`` pauses and follows again.
* **Violations**: every violation of every pipeline, counts per pipeline, and the evidence of the selected one.
* **Agents**: every instance from its heartbeats (throughput over the last minute, last error), every work queue,
  and the dead letters (``Ctrl+T`` retries the selected one).
* **Memory**: MRs found by text and filters, through the daemon's request/reply service.
* **Batches**: submissions with live progress, totals and report links.

It starts with the last events of the streams (not an empty screen), follows the live bus, and shows the
connection state. The input line publishes a traffic rule as ``rules.submitted``; ``/crash [--no-sim] PATH``;
``/tl PATH [--detector KIND:PATH ...]``; ``/cases RECORDING`` (driving cases, their frames put into the daemon's
artefact store); Right arrow completes a path. Updates are batched (ten a second) and every list is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import subprocess
from collections import deque
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.suggester import Suggester
from textual.widgets import DataTable, Footer, Header, Input, RichLog, Static, TabbedContent, TabPane

from bus.connection import Bus
from bus.errors import EventValidationError
from bus.events import Event, decode_event
from runners.clients.rules import make_submissions
from tools.errors import DrivemtError
from tools.rules.models import TrafficRule, check_rule
from tui.state import ConsoleState, ViolationRow, summary_of

__all__ = ["PANES", "DrivemtApp"]

REGIONS = ("germany", "california")
PANES = ("conversation", "violations", "agents", "memory", "batches")
_STYLES = {
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
HELP = (
    "Type a traffic rule, or /crash [--no-sim] CASE_DIR, /tl DATASET [--detector KIND:PATH], /cases RECORDING; "
    "Right arrow completes a path, Enter submits"
)


class PathSuggester(Suggester):
    """Completes the folder or file argument of ``/crash``, ``/tl`` and ``/cases`` (Right arrow accepts)."""

    COMMANDS = ("/crash", "/tl", "/cases")

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        """The value with its last word completed (the folder is listed off the event loop)."""
        return await asyncio.to_thread(self.complete, value)

    def complete(self, value: str) -> str | None:
        """The value with its last word completed to the first path that starts with it."""
        if not value.startswith(self.COMMANDS) or (value.endswith(" ") and value.strip() in self.COMMANDS):
            return None
        head, _, word = value.rpartition(" ")
        if not head or word.startswith("-"):
            return None
        typed = Path(word).expanduser()
        folder, stem = (typed, "") if word.endswith("/") else (typed.parent, typed.name)
        try:
            names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir() if p.name.startswith(stem))
        except OSError:
            return None
        names = [n for n in names if not n.startswith(".") or stem.startswith(".")]
        if not names:
            return None
        return f"{head} {word[: len(word) - len(stem)]}{names[0]}"


def _bar(done: int, total: int | None, width: int = 16) -> str:
    if not total:
        return f"{done}"
    filled = round(width * min(done, total) / total)
    return f"{'█' * filled}{'░' * (width - filled)} {done}/{total}"


class DrivemtApp(App[None]):
    """The console: five panes on one bus, and a line to submit work.

    Args:
        bus: A bus to watch (connected here on mount if it is not yet).
        show_heartbeats: Also list heartbeats in the conversation (they always update the Agents pane).
        catch_up: Events to read back from each stream at start (0: start empty).
        refresh_s: Seconds between screen updates (events in between are drawn together).
        show_url: Show the server's URL in the title bar (snapshot tests turn it off: the port changes).
        clock: The time of the console's own lines (snapshot tests freeze it); events show their own time.
        case_store: The daemon's artefact store, where ``/cases`` puts the frames of driving cases (the command
            is refused without one).
        artifacts_root: The local folder that evidence refs point into (the runs folder), to draw pictures.
    """

    TITLE = "drivemt"
    MAX_LINES_PER_DRAW = 100
    CSS = """
    TabbedContent { height: 1fr; }
    #log { border: round $primary; }
    #thread { width: 40%; border: round $secondary; display: none; }
    #thread.shown { display: block; }
    #filter { dock: top; }
    #vcounts, #status, #conn { height: 1; padding: 0 1; color: $text-muted; }
    #violations { height: 1fr; }
    #vdetail { height: 45%; border: round $secondary; padding: 0 1; }
    #vdetail-text { width: 1fr; }
    #vimage { width: 2fr; height: 100%; }
    #agents { height: 2fr; }
    #queues, #deadletters { height: 1fr; }
    #mrs { height: 1fr; }
    #mrdetail { height: auto; max-height: 40%; border: round $secondary; padding: 0 1; }
    #batches { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(f"f{i + 2}", f"pane('{name}')", name.capitalize()) for i, name in enumerate(PANES)),
        *(Binding(f"alt+{i + 1}", f"pane('{name}')", name.capitalize(), show=False) for i, name in enumerate(PANES)),
        Binding("ctrl+r", "next_region", "Region"),
        Binding("f8", "toggle_follow", "Pause"),
        Binding("ctrl+l", "clear_log", "Clear"),
        Binding("ctrl+t", "retry_deadletter", "Retry", show=False),
        Binding("o", "open_evidence", "Open", show=False),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(
        self,
        bus: Bus,
        *,
        show_heartbeats: bool = False,
        catch_up: int = 200,
        refresh_s: float = 0.1,
        show_url: bool = True,
        case_store: Any = None,
        artifacts_root: Path | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__()
        self.clock = clock or (lambda: datetime.now(UTC))
        self.artifacts_root = artifacts_root
        self.show_url = show_url
        self.case_store = case_store
        self.bus = bus
        self.show_heartbeats = show_heartbeats
        self.catch_up = catch_up
        self.refresh_s = refresh_s
        self.region = REGIONS[0]
        self.state = ConsoleState()
        self.follow = True
        self.filter_text = ""
        self.thread_id: str | None = None
        self._pending: list[Event] = []
        self._dirty: set[str] = set()
        self._sub: Subscription | None = None
        self._owns_bus = False
        self._violation_keys: deque[str] = deque()
        self._queues: list[dict[str, Any]] = []
        self._deadletters: list[tuple[int, Any]] = []
        self._mrs: dict[str, Any] = {}
        self._last_connection = "connected"

    @property
    def counts(self) -> dict[str, int]:
        """Events seen per type."""
        return self.state.counts

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="conversation", id="panes"):
            with TabPane("Conversation", id="conversation"):
                yield Input(
                    placeholder="filter: words, type:mrs, agent:validator, #tag (a submission's chain)", id="filter"
                )
                with Horizontal():
                    yield RichLog(id="log", wrap=True, markup=False, min_width=1, max_lines=2000)
                    yield RichLog(id="thread", wrap=True, markup=False, min_width=1, max_lines=400)
            with TabPane("Violations", id="violations-pane"):
                yield Static(id="vcounts")
                yield DataTable(id="violations", cursor_type="row", zebra_stripes=True)
                with Horizontal(id="vdetail"):
                    yield VerticalScroll(Static(id="vdetail-text"))
                    yield Vertical(id="vimage")
            with TabPane("Agents", id="agents-pane"):
                yield DataTable(id="agents", cursor_type="row", zebra_stripes=True)
                with Horizontal():
                    yield DataTable(id="queues", cursor_type="row", zebra_stripes=True)
                    yield DataTable(id="deadletters", cursor_type="row", zebra_stripes=True)
            with TabPane("Memory", id="memory-pane"):
                yield Input(
                    placeholder="search MRs: words, region:germany road:intersection behaviour:'slow down'",
                    id="mrquery",
                )
                yield DataTable(id="mrs", cursor_type="row", zebra_stripes=True)
                yield VerticalScroll(Static(id="mrdetail-text"), id="mrdetail")
            with TabPane("Batches", id="batches-pane"):
                yield DataTable(id="batches", cursor_type="row", zebra_stripes=True)
        yield Static(id="status")
        yield Input(placeholder=HELP, id="rule", suggester=PathSuggester())
        yield Footer()

    async def on_mount(self) -> None:
        columns = {
            "#violations": ("time", "pipeline", "case", "relation or MR", "model or ego", "measure"),
            "#agents": ("agent", "status", "done", "failed", "busy", "/min", "seen", "last error"),
            "#queues": ("work queue", "pending", "in flight", "redelivered"),
            "#deadletters": ("dead letter", "consumer", "reason"),
            "#mrs": ("score", "uses", "road type", "behaviour", "MR"),
            "#batches": ("batch", "kind", "stage", "progress", "errors", "totals"),
        }
        for selector, names in columns.items():
            table = self.query_one(selector, DataTable)
            for name in names:
                table.add_column(name, key=name)
        if self.bus.connected_url is None:
            await self.bus.connect()
            self._owns_bus = True
        self._sub = await self.bus.nc.subscribe(self.bus.subjects.everything, cb=self._on_msg)
        self._update_connection()
        self.set_interval(self.refresh_s, self._draw_pending)
        self.set_interval(5.0, self._poll_ops)
        self._catch_up()
        self._poll_ops()
        self._update_status()
        self.query_one("#rule", Input).focus()

    async def on_unmount(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        if self._owns_bus:
            await self.bus.close()

    def action_pane(self, name: str) -> None:
        """Show a pane, and focus its first control (a focused widget left in the old pane would pull it back)."""
        pane_id = name if name == "conversation" else f"{name}-pane"
        focused = self.focused
        in_pane = focused is not None and focused.id != "rule"
        if in_pane:
            self.set_focus(None)
        self.query_one("#panes", TabbedContent).active = pane_id
        if in_pane:
            target = next((w for w in self.query_one(f"#{pane_id}").query("*") if w.focusable), None)
            self.set_focus(target or self.query_one("#rule"))

    # -- incoming -------------------------------------------------------------------------------
    @work(exclusive=True, group="catch-up")
    async def _catch_up(self) -> None:
        """Read the last events of the input and result streams, oldest first, so the console starts full."""
        if self.catch_up <= 0:
            return
        names = self.bus.subjects.streams
        events: list[Event] = []
        for stream in (names.inputs, names.results):
            with contextlib.suppress(Exception):
                info = await self.bus.js.stream_info(stream)
                first = max(info.state.first_seq, info.state.last_seq - self.catch_up + 1)
                for seq in range(first, info.state.last_seq + 1):
                    with contextlib.suppress(Exception):
                        raw = await self.bus.js.get_msg(stream, seq)
                        events.append(decode_event(raw.data or b"", subject=raw.subject or ""))
        for event in sorted(events, key=lambda e: e.time):
            self._take(event)

    async def _on_msg(self, msg: Msg) -> None:
        if ".rpc." in msg.subject or msg.subject.startswith(("$", "_INBOX")):
            return
        try:
            event = decode_event(msg.data, subject=msg.subject)
        except EventValidationError as exc:
            self._write_line("invalid", msg.subject, str(exc), "bold red", "")
            return
        self.show_event(event)

    def show_event(self, event: Event) -> None:
        """Take an event into the state; the screen follows at the next refresh."""
        self._take(event)

    def _take(self, event: Event) -> None:
        changed = self.state.ingest(event)
        if "conversation" in changed or (self.show_heartbeats and changed == {"agents"}):
            self._pending.append(event)
        self._dirty |= changed

    def _draw_pending(self) -> None:
        """Draw what came in since the last refresh (one batch, however many events)."""
        try:
            self._draw()
        except NoMatches:  # the app is closing: its widgets are gone before its timers stop
            return

    def _draw(self) -> None:
        pending, self._pending = self._pending, []
        lines = [e for e in pending if self._matches(e)]
        if len(lines) > self.MAX_LINES_PER_DRAW:  # a burst: show its latest lines (all stay in the state)
            skipped = len(lines) - self.MAX_LINES_PER_DRAW
            lines = lines[-self.MAX_LINES_PER_DRAW :]
            self._write_line("…", "console", f"{skipped} more event(s) in this burst (filter to see them)", "dim", "")
        if lines:  # one write for the batch: one render instead of one per line
            self.query_one("#log", RichLog).write(Text("\n").join(self._line(e) for e in lines), scroll_end=self.follow)
        if self.thread_id is not None:
            chain = [e for e in pending if e.correlation_id == self.thread_id]
            if chain:
                self.query_one("#thread", RichLog).write(Text("\n").join(self._line(e) for e in chain))
        dirty, self._dirty = self._dirty, set()
        if "violations" in dirty:
            self._draw_violations()
        if "agents" in dirty:
            self._draw_agents()
        if "batches" in dirty:
            self._draw_batches()
        if dirty or pending:
            self._update_status()
        self._update_connection()

    # -- conversation ---------------------------------------------------------------------------
    def _line(self, event: Event) -> Text:
        line = Text()
        line.append(event.time.astimezone().strftime("%H:%M:%S "), style="dim")
        line.append(f"{event.type:<16} ", style=_STYLES.get(event.type, "") or "bold")
        line.append(f"{event.producer:<12} ", style="magenta")
        line.append(summary_of(event))
        line.append(f"  #{event.correlation_id[:6]}", style="dim cyan")
        return line

    def _write_event(self, event: Event) -> None:
        self.query_one("#log", RichLog).write(self._line(event), scroll_end=self.follow)

    def _write_line(self, kind: str, who: str, summary: str, style: str, tag: str) -> None:
        line = Text()
        line.append(self.clock().astimezone().strftime("%H:%M:%S "), style="dim")
        line.append(f"{kind:<16} ", style=style or "bold")
        line.append(f"{who:<12} ", style="magenta")
        line.append(summary)
        self.query_one("#log", RichLog).write(line, scroll_end=self.follow)

    def _matches(self, event: Event) -> bool:
        for word in shlex.split(self.filter_text) if self.filter_text.count('"') % 2 == 0 else self.filter_text.split():
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

    @on(Input.Changed, "#filter")
    def refilter(self, message: Input.Changed) -> None:
        """Redraw the conversation with the filter; a ``#tag`` also opens that submission's chain beside it."""
        self.filter_text = message.value.strip()
        log = self.query_one("#log", RichLog)
        log.clear()
        for event in self.state.events:
            if self._matches(event):
                log.write(self._line(event), scroll_end=self.follow)
        tag = next((w[1:] for w in self.filter_text.split() if w.startswith("#") and len(w) > 2), None)
        self.show_thread(self.state.find_thread(tag) if tag else None)

    def show_thread(self, correlation_id: str | None) -> None:
        """Show every event of one submission beside the conversation (None hides it)."""
        self.thread_id = correlation_id
        view = self.query_one("#thread", RichLog)
        view.clear()
        view.set_class(correlation_id is not None, "shown")
        if correlation_id is None:
            return
        view.write(Text(f"submission #{correlation_id[:8]}", style="bold"))
        for event in self.state.thread(correlation_id):
            view.write(self._line(event))

    def action_toggle_follow(self) -> None:
        """Pause the conversation (it stops scrolling) or follow it again."""
        self.follow = not self.follow
        if self.follow:
            self.query_one("#log", RichLog).scroll_end(animate=False)
        self._update_status()

    # -- violations -----------------------------------------------------------------------------
    def _draw_violations(self) -> None:
        """Add the violations that came in; drop the rows the state no longer keeps."""
        table = self.query_one("#violations", DataTable)
        new, self.state.new_violations = self.state.new_violations, []
        for row in new:
            table.add_row(
                row.time.astimezone().strftime("%H:%M:%S"), row.pipeline, row.case, _cut(row.relation, 48),
                row.subject, row.measure, key=row.event_id,
            )  # fmt: skip
            self._violation_keys.append(row.event_id)
        limit = self.state.violations.maxlen or len(self._violation_keys)
        while len(self._violation_keys) > limit:
            with contextlib.suppress(Exception):
                table.remove_row(self._violation_keys.popleft())
        counts = self.state.violation_counts
        text = " · ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no violations yet"
        self.query_one("#vcounts", Static).update(f"violations: {text}")

    @on(DataTable.RowHighlighted, "#violations")
    def violation_detail(self, message: DataTable.RowHighlighted) -> None:
        """The evidence and numbers of the selected violation, its first picture drawn in the terminal."""
        key = message.row_key.value if message.row_key else None
        row = next((r for r in self.state.violations if r.event_id == key), None)
        if row is None:
            return
        batch = self.state.batches.get(row.correlation_id)
        self.query_one("#vdetail-text", Static).update(
            _violation_text(row, self.evidence_path, batch.report if batch else None)
        )
        self._show_picture(row)

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

    def action_open_evidence(self) -> None:
        """Open the selected violation's first evidence file with the desktop's viewer (or say where it is)."""
        table = self.query_one("#violations", DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        row = next((r for r in self.state.violations if r.event_id == key), None)
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

    # -- agents ---------------------------------------------------------------------------------
    def _draw_agents(self) -> None:
        table = self.query_one("#agents", DataTable)
        changed, self.state.changed_agents = self.state.changed_agents, set()
        added = False
        for key in sorted(changed):
            a = self.state.agents[key]
            status = Text(a.status, style="green" if a.status == "ready" else "yellow")
            values = [status, a.handled, a.failed, a.in_flight, f"{a.per_minute():.0f}",
                      a.seen.astimezone().strftime("%H:%M:%S"), _cut(a.last_error or "", 60)]  # fmt: skip
            if key in table.rows:
                for column, value in zip(table.ordered_columns[1:], values, strict=True):
                    table.update_cell(key, column.key, value)
            else:
                table.add_row(key, *values, key=key)
                added = True
        if added:  # instances in name order, whatever order their heartbeats came in
            table.sort("agent")

    @work(exclusive=True, group="ops")
    async def _poll_ops(self) -> None:
        """Work queues and dead letters, from the streams (every few seconds)."""
        from runners.clients.ops import collect_status, list_deadletters

        try:
            status = await collect_status(self.bus)
            self._deadletters = await list_deadletters(self.bus, limit=200)
        except Exception:  # the bus is down: the connection line says so
            return
        self._queues = status["consumers"]
        if not self.is_running or not self.screen.query("#queues"):  # closing, or another screen on top
            return
        queues = self.query_one("#queues", DataTable)
        queues.clear()
        for q in sorted(self._queues, key=lambda q: q["name"]):
            queues.add_row(q["name"], q["pending"], q["ack_pending"], q["redelivered"])
        dead = self.query_one("#deadletters", DataTable)
        dead.clear()
        for seq, event in self._deadletters:
            dead.add_row(str(seq), event.payload.consumer, _cut(event.payload.reason, 80), key=str(seq))

    @work(exclusive=True, group="retry")
    async def action_retry_deadletter(self) -> None:
        """Send the selected dead letter back to its subject."""
        from runners.clients.ops import retry_deadletters

        table = self.query_one("#deadletters", DataTable)
        if not table.row_count:
            self.notify("no dead letters", severity="warning")
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        try:
            done = await retry_deadletters(self.bus, [int(key)] if key else None)
        except Exception as exc:
            self.notify(str(exc), title="Not retried", severity="error")
            return
        self.notify(f"retried {len(done)} dead letter(s)")
        self._poll_ops()

    # -- memory ---------------------------------------------------------------------------------
    @on(Input.Submitted, "#mrquery")
    async def search_mrs(self, message: Input.Submitted) -> None:
        """Search MRs by text with ``region:``, ``road:`` and ``behaviour:`` filters (request and reply)."""
        from bus.rpc import call
        from bus.services import MRS_SEARCH, MRFilters, SearchMRs

        words, filters = [], {}
        for word in shlex.split(message.value) if message.value.count("'") % 2 == 0 else message.value.split():
            key, _, value = word.partition(":")
            if value and key in ("region", "road", "behaviour", "behavior"):
                filters[
                    {"road": "road_type", "behaviour": "expected_behavior", "behavior": "expected_behavior"}.get(
                        key, key
                    )
                ] = value
            else:
                words.append(word)
        try:
            reply = await call(
                self.bus,
                MRS_SEARCH,
                SearchMRs(query=" ".join(words) or "any", limit=50, filters=MRFilters(**filters)),
                timeout=10,
            )
        except Exception as exc:
            self.notify(str(exc), title="Search failed", severity="error")
            return
        table = self.query_one("#mrs", DataTable)
        table.clear()
        self._mrs = {h.mr.mr_id: h for h in reply.hits}
        for h in reply.hits:
            m = h.mr
            table.add_row(f"{m.score:.2f}", m.execution_count, m.fields.road_type, m.fields.expected_behavior,
                          _cut(m.gherkin, 90), key=m.mr_id)  # fmt: skip
        self.query_one("#mrdetail-text", Static).update(f"{len(reply.hits)} MR(s)")

    @on(DataTable.RowHighlighted, "#mrs")
    def mr_detail(self, message: DataTable.RowHighlighted) -> None:
        """The selected MR: Gherkin, source rules, score and uses."""
        hit = self._mrs.get(str(message.row_key.value)) if message.row_key else None
        if hit is None:
            return
        m = hit.mr
        rules = ", ".join(m.source_rule_ids)
        self.query_one("#mrdetail-text", Static).update(
            f"{m.gherkin}\n\nsource rules: {rules}\nscore {m.score:.2f} · executed {m.execution_count} time(s) · "
            f"region {m.region} · similarity {hit.similarity:.2f} · id {m.mr_id}"
        )

    # -- batches --------------------------------------------------------------------------------
    def _draw_batches(self) -> None:
        table = self.query_one("#batches", DataTable)
        changed, self.state.changed_batches = self.state.changed_batches, set()
        for cid in changed:
            b = self.state.batches.get(cid)
            if b is None:  # no longer kept
                if cid in table.rows:
                    table.remove_row(cid)
                continue
            values = [b.kind, b.stage or "submitted", _bar(b.done, b.total), b.errors,
                      _cut(b.totals + (f"  report {b.report}" if b.report else ""), 80)]  # fmt: skip
            if cid in table.rows:
                for column, value in zip(table.ordered_columns[1:], values, strict=True):
                    table.update_cell(cid, column.key, value)
            else:
                table.add_row(cid[:8], *values, key=cid)

    @on(DataTable.RowSelected, "#batches")
    @on(DataTable.RowSelected, "#violations")
    def open_thread(self, message: DataTable.RowSelected) -> None:
        """Enter on a batch or a violation: its submission's chain in the conversation."""
        key = message.row_key.value
        cid = (
            key
            if message.data_table.id == "batches"
            else next((r.correlation_id for r in self.state.violations if r.event_id == key), None)
        )
        if cid:
            self.action_pane("conversation")
            self.query_one("#filter", Input).value = f"#{cid[:8]}"

    # -- status ---------------------------------------------------------------------------------
    def _update_status(self) -> None:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()) if k != "agent.heartbeat")
        paused = "" if self.follow else "PAUSED · "
        self.query_one("#status", Static).update(f"{paused}region {self.region} · {shown or 'no events yet'}")

    def _update_connection(self) -> None:
        try:
            state = "connected" if self.bus.nc.is_connected else "reconnecting…"
        except Exception:  # closed
            state = "disconnected"
        if state == "connected" and self._last_connection == "reconnecting…":
            self._catch_up()  # what was published while the bus was away, from the streams (seen events are skipped)
        self._last_connection = state
        url = f" {self.bus.connected_url or ''}" if self.show_url else ""
        self.sub_title = f"{state}{url}  namespace {self.bus.subjects.namespace}"

    # -- outgoing -------------------------------------------------------------------------------
    @on(Input.Submitted, "#rule")
    async def submit_rule(self, message: Input.Submitted) -> None:
        """Publish what was typed: a traffic rule, or a ``/crash`` or ``/tl`` command."""
        text = message.value.strip()
        if not text:
            return
        events: Sequence[Event]
        try:
            if text.startswith("/"):
                events = self._command(text)
            else:
                rule = check_rule(
                    TrafficRule(id=f"tui-{datetime.now(UTC):%Y%m%dT%H%M%S%f}", text=text, region=self.region)
                )
                _, events = make_submissions([rule], producer="tui", source="terminal UI")
        except (DrivemtError, ValueError) as exc:
            self.notify(str(exc), title="Not submitted", severity="error")
            return
        await self.bus.publish_many(events)
        message.input.clear()

    def _command(self, text: str) -> list[Event]:
        """Events for ``/crash [--no-sim] PATH`` or ``/tl PATH [--detector SPEC ...]``.

        Raises:
            ValueError: An unknown command or a malformed one (the message says the form).
            DrivemtError: A path that holds no crash case or dataset.
        """
        from bus.events import TLDatasetPayload, TLDatasetSubmitted
        from runners.clients.crash import crash_submissions_from_path
        from tools.crash.models import SimOptions

        words = shlex.split(text)
        command, args = words[0], words[1:]
        if command == "/crash":
            simulate = "--no-sim" not in args
            paths = [a for a in args if a != "--no-sim"]
            if len(paths) != 1:
                raise ValueError("use /crash [--no-sim] CASE_DIR (a case folder or a folder of case folders)")
            _, crashes = crash_submissions_from_path(
                paths[0], simulate=SimOptions() if simulate else None, producer="tui", source=paths[0]
            )
            return list(crashes)
        if command == "/tl":
            detectors: list[str] = []
            paths = []
            it = iter(args)
            for a in it:
                if a in ("--detector", "-d"):
                    detectors.append(next(it, ""))
                else:
                    paths.append(a)
            if len(paths) != 1 or "" in detectors:
                raise ValueError("use /tl DATASET [--detector KIND:PATH ...]")
            dataset = Path(paths[0]).expanduser().resolve()
            if not dataset.exists():
                raise ValueError(f"no such dataset: {dataset}")
            payload = TLDatasetPayload(dataset=str(dataset), detectors=detectors)
            return [TLDatasetSubmitted(producer="tui", payload=payload)]
        if command == "/cases":
            if len(args) != 1:
                raise ValueError(
                    "use /cases RECORDING (Udacity, A2D2, a frames folder with ego.csv, or a synthetic set)"
                )
            if self.case_store is None:
                raise ValueError("this console has no artefact store for case frames: start it with `drivemt tui`")
            from runners.clients.mt import case_submissions

            _, cases, result = case_submissions(
                self.case_store, Path(args[0]).expanduser(), region=self.region, producer="tui"
            )
            if not cases:
                raise ValueError(f"no usable case in {args[0]}: " + "; ".join(str(p) for p in result.problems[:3]))
            return list(cases)
        raise ValueError(f"unknown command {command}: use /crash, /tl or /cases (anything else is a traffic rule)")

    def action_next_region(self) -> None:
        """Cycle the region of submitted rules."""
        self.region = REGIONS[(REGIONS.index(self.region) + 1) % len(REGIONS)]
        self._update_status()

    def action_clear_log(self) -> None:
        """Clear the conversation view (the events stay in memory for threads and filters)."""
        self.query_one("#log", RichLog).clear()


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _violation_text(row: ViolationRow, local: Any = None, report: str | None = None) -> Text:
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
