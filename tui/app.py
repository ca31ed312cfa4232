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

Each pane lives in :mod:`tui.widgets`; this module holds the app: the bus, the bounded state, the status lines
and the input line.

It starts with the last events of the streams (not an empty screen), follows the live bus, and shows the
connection state. The input line publishes a traffic rule as ``rules.submitted``; ``/crash [--no-sim] PATH``;
``/tl PATH [--detector KIND:PATH ...]``; ``/cases RECORDING`` (driving cases, their frames put into the daemon's
artefact store); Right arrow completes a path. Updates are batched (ten a second) and every list is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.suggester import Suggester
from textual.widgets import Footer, Header, Input, Static, TabbedContent

from bus.connection import Bus
from bus.errors import EventValidationError
from bus.events import Event, decode_event
from runners.clients.rules import make_submissions
from tools.errors import DrivemtError
from tools.rules.models import TrafficRule, check_rule
from tui.state import ConsoleState
from tui.widgets import AgentsPane, BatchesPane, ConversationPane, MemoryPane, ViolationsPane

__all__ = ["PANES", "DrivemtApp"]

REGIONS = ("germany", "california")
PANES = ("conversation", "violations", "agents", "memory", "batches")
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
    CSS = """
    TabbedContent { height: 1fr; }
    #status { height: 1; padding: 0 1; color: $text-muted; }
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
        self.state = ConsoleState(clock=self.clock)
        self._pending: list[Event] = []
        self._dirty: set[str] = set()
        self._sub: Subscription | None = None
        self._owns_bus = False
        self._last_connection = "connected"
        self._refused_streams = False  # (told once that the streams are another namespace's)
        self._conversation = ConversationPane()
        self._violations = ViolationsPane(artifacts_root)
        self._agents = AgentsPane()
        self._memory = MemoryPane()
        self._batches = BatchesPane()

    @property
    def counts(self) -> dict[str, int]:
        """Events seen per type."""
        return self.state.counts

    @property
    def follow(self) -> bool:
        """Whether the conversation scrolls with new events (F8 pauses it)."""
        return self._conversation.follow

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="conversation", id="panes"):
            yield self._conversation
            yield self._violations
            yield self._agents
            yield self._memory
            yield self._batches
        yield Static(id="status")
        yield Input(placeholder=HELP, id="rule", suggester=PathSuggester())
        yield Footer()

    async def on_mount(self) -> None:
        if self.bus.connected_url is None:
            try:
                await self.bus.connect()
            except Exception as exc:  # (no console without its bus: leave with the reason and exit code 1)
                self.exit(return_code=1, message=f"error: {exc}")
                return
            self._owns_bus = True
        self._sub = await self.bus.nc.subscribe(self.bus.subjects.everything, cb=self._on_msg)
        self._update_connection()
        self.set_interval(self.refresh_s, self._draw_pending)
        self.set_interval(5.0, self.poll_ops)
        self._catch_up()
        self.poll_ops()
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

    def open_thread(self, correlation_id: str) -> None:
        """Show one submission's chain in the conversation (Enter on a batch or a violation)."""
        self.action_pane("conversation")
        self._conversation.open_thread(correlation_id)

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
            self._conversation.write_line("invalid", msg.subject, str(exc), "bold red")
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
        if self.state.sweep_silent(self.clock()):  # (an agent whose heartbeats stopped changes without events)
            self._dirty.add("agents")
        pending, self._pending = self._pending, []
        self._conversation.draw(pending)
        dirty, self._dirty = self._dirty, set()
        if "violations" in dirty:
            self._violations.draw(self.state)
        if "agents" in dirty:
            self._agents.draw(self.state)
        if "batches" in dirty:
            self._batches.draw(self.state)
        if dirty or pending:
            self._update_status()
        self._update_connection()

    @work(exclusive=True, group="ops")
    async def poll_ops(self) -> None:
        """Work queues and dead letters, from the streams (every few seconds)."""
        from bus import BusError
        from runners.clients.ops import collect_status, list_deadletters

        try:
            status = await collect_status(self.bus)
            deadletters = await list_deadletters(self.bus, limit=200, newest=True)  # (new ones must show)
        except BusError as exc:  # (another namespace's streams: say why the panes stay empty, once)
            if "belongs to namespace" in str(exc) and not self._refused_streams:
                self._refused_streams = True
                self.notify(str(exc), title="work queues not shown", severity="error", timeout=30)
            return
        except Exception:  # the bus is down: the connection line says so
            return
        if not self.is_running or not self.screen.query("#queues"):  # closing, or another screen on top
            return
        self._agents.draw_ops(status["consumers"], deadletters)

    # -- actions of the panes -------------------------------------------------------------------
    def action_toggle_follow(self) -> None:
        """Pause the conversation (it stops scrolling) or follow it again."""
        self._conversation.toggle_follow()
        self._update_status()

    def action_open_evidence(self) -> None:
        """Open the selected violation's first evidence file (or say where it is)."""
        self._violations.open_evidence()

    @work(exclusive=True, group="retry")
    async def action_retry_deadletter(self) -> None:
        """Send the selected dead letter back to its subject."""
        await self._agents.retry_selected()

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
        try:
            await self.bus.publish_many(events)
        except Exception as exc:  # the bus is down or refused it: say so and keep the text to send again
            self.notify(f"{type(exc).__name__}: {exc}"[:300] or "the bus did not answer", title="Not submitted",
                        severity="error")  # fmt: skip
            return
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
            # The Judge loads detectors' weights from the daemon's artefact store only.
            if self.case_store is not None:
                from runners.clients.tl import import_detectors

                detectors = import_detectors(self.case_store, detectors)
            elif any(Path(d.partition(":")[2]).expanduser().is_file() for d in detectors):
                raise ValueError("this console has no artefact store for detector weights: start it with `drivemt tui`")
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
        self._conversation.clear()
