"""The terminal UI: watch the agents work and inject traffic rules, crash reports and image sets.

A bus client like any other (``drivemt tui``). It subscribes to every subject of its namespace,
shows each event's one-line summary in a conversation view, keeps a table of agent instances from
their heartbeats, and publishes what is typed into its input line: a traffic rule as
``rules.submitted``; ``/crash [--no-sim] PATH`` (a case folder or a folder of them) as
``crashes.submitted``; ``/tl PATH [--detector KIND:PATH ...]`` as ``tl.datasets.submitted``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Footer, Header, Input, RichLog, Static

from bus.connection import Bus
from bus.errors import EventValidationError
from bus.events import AgentHeartbeat, ErrorReported, Event, decode_event
from runners.clients.rules import make_submissions
from tools.errors import DrivemtError
from tools.rules.models import TrafficRule, check_rule

__all__ = ["DrivemtApp"]

REGIONS = ("germany", "california")
_STYLES = {
    "error": "bold red",
    "deadletter": "red",
    "mrs.accepted": "green",
    "mrs.rejected": "yellow",
    "rules.submitted": "cyan",
    "crashes.submitted": "cyan",
    "tl.datasets.submitted": "cyan",
    "crashes.verdict": "bold green",
    "tl.verdict": "bold green",
    "violations.found": "bold magenta",
    "followups.judged": "green",
    "followups.batch_judged": "bold green",
    "sim.requested": "dim",
    "progress": "dim",
}
HELP = "Type a traffic rule, or /crash [--no-sim] CASE_DIR, or /tl DATASET [--detector KIND:PATH]; Enter submits"


class DrivemtApp(App[None]):
    """Conversation view of the bus, agent table, and a line to submit rules.

    Args:
        bus: A bus to watch (connected here on mount if it is not yet).
        show_heartbeats: Also list heartbeats in the conversation view (they always update the table).
    """

    TITLE = "drivemt"
    CSS = """
    #agents { width: 64; border: round $primary; }
    #log { border: round $primary; }
    #status { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "next_region", "Region"),
        Binding("ctrl+l", "clear_log", "Clear"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, bus: Bus, *, show_heartbeats: bool = False) -> None:
        super().__init__()
        self.bus = bus
        self.show_heartbeats = show_heartbeats
        self.region = REGIONS[0]
        self.counts: dict[str, int] = {}
        self._sub: Subscription | None = None
        self._owns_bus = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield DataTable(id="agents", cursor_type="row", zebra_stripes=True)
            with Vertical():
                yield RichLog(id="log", wrap=True, markup=False, max_lines=5000)
                yield Static(id="status")
        yield Input(placeholder=HELP, id="rule")
        yield Footer()

    async def on_mount(self) -> None:
        table = self.query_one("#agents", DataTable)
        for key, label in (
            ("agent", "agent"),
            ("status", "status"),
            ("handled", "done"),
            ("failed", "failed"),
            ("in_flight", "busy"),
            ("seen", "seen"),
        ):
            table.add_column(label, key=key)
        if self.bus.connected_url is None:
            await self.bus.connect()
            self._owns_bus = True
        self._sub = await self.bus.nc.subscribe(self.bus.subjects.everything, cb=self._on_msg)
        self.sub_title = f"{self.bus.connected_url}  namespace {self.bus.subjects.namespace}"
        self._update_status()
        self.query_one("#rule", Input).focus()

    async def on_unmount(self) -> None:
        if self._sub is not None:
            await self._sub.unsubscribe()
        if self._owns_bus:
            await self.bus.close()

    # -- incoming -------------------------------------------------------------------------------
    async def _on_msg(self, msg: Msg) -> None:
        if ".rpc." in msg.subject or msg.subject.startswith("$"):
            return
        try:
            event = decode_event(msg.data, subject=msg.subject)
        except EventValidationError as exc:
            self._write("invalid", msg.subject, str(exc), "bold red")
            return
        self.show_event(event)

    def show_event(self, event: Event) -> None:
        """Add an event to the views it belongs in."""
        self.counts[event.type] = self.counts.get(event.type, 0) + 1
        if isinstance(event, AgentHeartbeat):
            self._heartbeat(event)
            if not self.show_heartbeats:
                self._update_status()
                return
        summary = event.summary
        if isinstance(event, ErrorReported):
            summary = f"{event.payload.error_type}: {event.payload.reason}"
        self._write(event.type, event.producer, summary, _STYLES.get(event.type, ""))
        self._update_status()

    def _heartbeat(self, event: AgentHeartbeat) -> None:
        p = event.payload
        table = self.query_one("#agents", DataTable)
        key = f"{p.agent}/{p.instance}"
        seen = event.time.astimezone().strftime("%H:%M:%S")
        status = Text(p.status, style="green" if p.status == "ready" else "yellow")
        values = {"status": status, "handled": p.handled, "failed": p.failed, "in_flight": p.in_flight, "seen": seen}
        if key in table.rows:
            for column, value in values.items():
                table.update_cell(key, column, value)
        else:
            table.add_row(key, *values.values(), key=key)

    def _write(self, kind: str, who: str, summary: str, style: str) -> None:
        line = Text()
        line.append(datetime.now(UTC).astimezone().strftime("%H:%M:%S "), style="dim")
        line.append(f"{kind:<16} ", style=style or "bold")
        line.append(f"{who:<12} ", style="magenta")
        line.append(summary)
        self.query_one("#log", RichLog).write(line)

    def _update_status(self) -> None:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()) if k != "agent.heartbeat")
        self.query_one("#status", Static).update(f"region {self.region} · {shown or 'no events yet'}")

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
        raise ValueError(f"unknown command {command}: use /crash or /tl (anything else is a traffic rule)")

    def action_next_region(self) -> None:
        """Cycle the region of submitted rules."""
        self.region = REGIONS[(REGIONS.index(self.region) + 1) % len(REGIONS)]
        self._update_status()

    def action_clear_log(self) -> None:
        """Clear the conversation view."""
        self.query_one("#log", RichLog).clear()
