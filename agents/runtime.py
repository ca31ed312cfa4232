"""The agent runtime: consume -> handle -> publish -> ack, with bounded concurrency and heartbeats.

An agent declares the events it consumes and produces and the tools it uses; the runner does the
rest:

* one durable pull consumer per agent type, so copies of an agent (in this process, other processes
  or other machines) share one work queue;
* bytes that are not a valid event, or an event of a type the agent does not consume, become an
  error event plus a dead letter, and are never redelivered;
* :class:`tools.errors.BadInputError` from a handler becomes an error event; the input is acked;
* any other exception is retried (``nak`` with back-off) until the consumer's ``max_deliver``, then
  dead-lettered;
* outputs carry ids derived from the input, are published before the input is acked, and the input
  id is marked handled, so a redelivery after a crash produces nothing twice; an event that cannot be
  settled so (an output too large for the server, or failures until ``max_deliver``) is dead-lettered;
* on stop, in-flight work finishes within a grace period, and what does not is handed back (nak);
* every delivery counts, hand-backs and crashes too, so the server delivers without limit and the runner
  keeps the count: an event delivered more than ``max_deliver`` times without finishing (handed back on
  stops, or lost with a crashed process, on its last allowed delivery) is dead-lettered with that reason,
  never dropped silently by the server;
* when a batch handler fails as a whole, each event of the batch is tried on its own, so one bad event
  does not take the others down with it;
* a handler call that passes ``handler_timeout_s`` is abandoned (:class:`HandlerTimeoutError`): its event is
  set aside at once as a dead letter with that reason, since a call that hung once would hold a slot as long
  again on every retry, and the agent goes on with the next event.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import time
import uuid
from abc import ABC
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

import structlog
from nats.aio.msg import Msg
from nats.errors import MaxPayloadError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import ServiceUnavailableError

from bus import (
    AgentHeartbeat,
    Bus,
    ConsumerSettings,
    DeadLettered,
    ErrorDomain,
    ErrorReported,
    Event,
    EventValidationError,
    decode_event,
    encode_event,
)
from bus.events import DeadLetterPayload, ErrorPayload, HeartbeatPayload, derived_id
from tools.errors import BadInputError, DrivemtError

__all__ = ["Agent", "AgentRunner", "HandlerTimeoutError", "Outcome", "error_event", "handles"]

log = structlog.get_logger(__name__)

_JSON_ESCAPE_MAX = 6
"""Most bytes one character takes in JSON (a control character becomes ``\\u001b``)."""


@dataclass
class Outcome:
    """What handling one input produced: events to publish, or an exception."""

    events: list[Event] = field(default_factory=list)
    error: BaseException | None = None


def error_event(
    source: Event | None,
    *,
    agent: str,
    domain: ErrorDomain,
    exc: BaseException,
    item_id: str | None = None,
    input_subject: str | None = None,
    excerpt: str | None = None,
    index: object = 0,
    event_id: str | None = None,
) -> ErrorReported:
    """An error event about ``source`` (or about undecodable bytes when ``source`` is None).

    Its id is derived from the source (or given), so a redelivered input reports its error once.
    """
    base: dict[str, Any] = {"producer": agent}
    if source is not None:
        base |= source.caused(event_id=derived_id(source.event_id, agent, "error", index))
    if event_id is not None:
        base["event_id"] = event_id
        base.setdefault("correlation_id", event_id)
    return ErrorReported(
        **base,
        payload=ErrorPayload(
            domain=domain,
            agent=agent,
            error_type=type(exc).__name__,
            reason=str(exc)[:2000],
            input_subject=input_subject,
            input_event_id=source.event_id if source else None,
            item_id=item_id,
            excerpt=excerpt,
        ),
    )


H = TypeVar("H", bound=Callable[..., Awaitable[Sequence[Event]]])


def handles(event_type: type[Event]) -> Callable[[H], H]:
    """Mark an agent method as the handler of one consumed event type (after autogen-core's ``@message_handler``).

    An agent whose methods are marked routes each event to its type's handler, and its ``consumes`` is
    derived from the marks, so a new handler cannot be forgotten in a second list.
    """

    def mark(fn: H) -> H:
        fn.__drivemt_handles__ = event_type  # type: ignore[attr-defined]
        return fn

    return mark


class HandlerTimeoutError(DrivemtError):
    """A handler call that did not finish within the runner's ``handler_timeout_s``."""

    def __init__(self, agent: str, seconds: float) -> None:
        self.agent = agent
        self.seconds = seconds
        super().__init__(
            f"{agent} did not finish within {seconds:g} s (its handler_timeout_s) and was abandoned; "
            "raise the limit if such work can take longer, then retry it with `drivemt dead-letters retry`"
        )


class Agent(ABC):
    """Base of every agent: declarations plus a handler.

    Subclasses set the class attributes and either mark one method per consumed event type with
    :func:`handles` (the default :meth:`handle` routes to them), implement :meth:`handle` (one event at a
    time), or override :meth:`handle_batch` (to batch model calls or store writes).
    """

    _routes: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        routes: dict[str, str] = {}
        models: dict[str, type[Event]] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                model = getattr(value, "__drivemt_handles__", None)
                if model is not None:
                    type_ = model.model_fields["type"].default
                    routes[type_] = attr
                    models[type_] = model
        cls._routes = routes
        if routes and "consumes" not in vars(cls):
            cls.consumes = tuple(models.values())

    name: ClassVar[str]
    """Agent type name; also its durable consumer's name."""
    consumes: ClassVar[tuple[type[Event], ...]]
    produces: ClassVar[tuple[type[Event], ...]]
    tools: ClassVar[tuple[str, ...]] = ()
    """Names of the registry tools the agent uses (shown in heartbeats and ``drivemt status``)."""
    error_domain: ClassVar[ErrorDomain] = ErrorDomain.AGENTS
    """Domain of the agent's error subject (``<namespace>.<domain>.errors``)."""
    batch_size: ClassVar[int] = 1
    """Most inputs handed to :meth:`handle_batch` at once."""

    async def setup(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Prepare before the first event (load models, open stores). Runs once per runner."""

    async def teardown(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Release what :meth:`setup` took."""

    async def handle(self, event: Event) -> Sequence[Event]:
        """Handle one input and return the events it produces (by default: route to its type's handler).

        Raises:
            BadInputError: For input that can never succeed (reported, not retried).
        """
        route = self._routes.get(event.type)
        if route is None:
            raise BadInputError(f"{self.name} has no handler for {event.type!r} events")
        handler: Callable[[Event], Awaitable[Sequence[Event]]] = getattr(self, route)
        return await handler(event)

    async def handle_batch(self, events: Sequence[Event]) -> list[Outcome]:
        """Handle several inputs; the default handles each one on its own, concurrently."""

        async def one(ev: Event) -> Outcome:
            try:
                return Outcome(events=list(await self.handle(ev)))
            except Exception as exc:
                return Outcome(error=exc)

        return list(await asyncio.gather(*(one(e) for e in events)))

    @classmethod
    def consumed_types(cls) -> set[str]:
        """Event types this agent accepts."""
        return {m.model_fields["type"].default for m in cls.consumes}


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Fetch an abandoned call's outcome, so that its late error is no 'never retrieved' warning."""
    if not task.cancelled():
        task.exception()


@dataclass
class _Counters:
    handled: int = 0
    failed: int = 0
    in_flight: int = 0
    last_error: str | None = None


class AgentRunner:
    """Runs one agent instance against the bus.

    Args:
        agent: The agent.
        bus: A connected bus whose streams exist.
        concurrency: Handler calls (or batches) in flight at once.
        consumer: Delivery settings of the agent's durable consumer.
        heartbeat_interval_s: Seconds between heartbeats.
        instance: Instance name (host-pid-random by default).
        handler_timeout_s: Seconds one handler call (one batch) may run before it is abandoned and its events set
            aside (``None``: no limit).
    """

    def __init__(
        self,
        agent: Agent,
        *,
        bus: Bus,
        concurrency: int = 4,
        consumer: ConsumerSettings | None = None,
        heartbeat_interval_s: float = 5.0,
        instance: str | None = None,
        handler_timeout_s: float | None = None,
    ) -> None:
        self.agent = agent
        self.handler_timeout_s = handler_timeout_s
        self.bus = bus
        self.concurrency = max(1, concurrency)
        self.consumer = consumer or ConsumerSettings()
        self.heartbeat_interval_s = heartbeat_interval_s
        self.instance = instance or f"{socket.gethostname().split('.')[0]}-{os.getpid()}-{uuid.uuid4().hex[:4]}"
        self.instance = "".join(c if c.isalnum() or c in "-_" else "-" for c in self.instance)
        self.counters = _Counters()
        self._started_at = datetime.now(UTC)
        self._status = "starting"
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._hb_task: asyncio.Task[None] | None = None
        self._hb_stop = asyncio.Event()
        self._slots = asyncio.Semaphore(self.concurrency)
        self._ready = asyncio.Event()
        self._subjects = [m.model_fields["type"].default for m in agent.consumes]
        self._fetch_timeout_s = 1.0

    @property
    def consumer_name(self) -> str:
        """Durable consumer name (the agent type name)."""
        return self.agent.name

    def consumed_subjects(self) -> list[str]:
        """Subjects of the consumed event types."""
        subs = self.bus.subjects
        out = []
        for model in self.agent.consumes:
            name = model.subject_name
            if not name:
                raise TypeError(f"{model.__name__} has no fixed subject and cannot be consumed")
            out.append(str(getattr(subs, name)))
        return out

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Start heartbeats, run the agent's setup, then start consuming."""
        self._hb_task = asyncio.create_task(self._heartbeats(), name=f"{self.agent.name}-heartbeat")
        try:
            await self.agent.setup()
            deadline = asyncio.get_running_loop().time() + 60.0
            while True:
                try:
                    self._psub = await self.bus.ensure_consumer(
                        durable=self.consumer_name, subjects=self.consumed_subjects(), settings=self.consumer
                    )
                    break
                except ServiceUnavailableError as exc:  # a cluster still placing its streams' replicas: wait for it
                    if asyncio.get_running_loop().time() > deadline:
                        raise
                    log.warning("work queue not ready; retrying", agent=self.agent.name, error=str(exc))
                    await asyncio.sleep(1.0)
        except BaseException:  # a failed start leaves no heartbeat behind it
            self._hb_stop.set()
            self._hb_task.cancel()
            with contextlib.suppress(BaseException):
                await self._hb_task
            raise
        self._status = "ready"
        self._ready.set()
        await self._beat()
        self._loop_task = asyncio.create_task(self._consume(), name=f"{self.agent.name}-consume")
        log.info("agent started", agent=self.agent.name, instance=self.instance, concurrency=self.concurrency)

    async def wait_ready(self) -> None:
        """Wait until the agent consumes."""
        await self._ready.wait()

    async def stop(self, *, grace_s: float = 10.0) -> None:
        """Stop consuming; let in-flight work finish within ``grace_s``, hand back the rest."""
        self._status = "stopping"
        self._stopping.set()
        if self._loop_task is not None:
            # Let the outstanding pull request finish (at most the fetch timeout): cancelling it would
            # leave it open on the server, which could hand redelivered work to nobody.
            try:
                await asyncio.wait_for(asyncio.shield(self._loop_task), timeout=self._fetch_timeout_s + 2.0)
            except (TimeoutError, asyncio.CancelledError, Exception):
                self._loop_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._loop_task
        if self._tasks:
            _done, pending = await asyncio.wait(self._tasks, timeout=grace_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
                log.warning("handed back unfinished work", agent=self.agent.name, count=len(pending))
        # (briefly: a bus that is gone would hold the stop for its publish timeout)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._beat(), timeout=2.0)
        self._hb_stop.set()
        if self._hb_task is not None:
            self._hb_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError, Exception):
                await asyncio.wait_for(self._hb_task, timeout=self.bus.settings.connect_timeout_s + 5.0)
        with contextlib.suppress(Exception):
            await self._psub.unsubscribe()
        await self.agent.teardown()
        log.info("agent stopped", agent=self.agent.name, instance=self.instance)

    # -- heartbeats ---------------------------------------------------------------------------
    async def _beat(self) -> None:
        c = self.counters
        hb = AgentHeartbeat(
            producer=self.agent.name,
            payload=HeartbeatPayload(
                agent=self.agent.name,
                instance=self.instance,
                host=socket.gethostname(),
                pid=os.getpid(),
                started_at=self._started_at,
                status=self._status,  # type: ignore[arg-type]
                consumes=self._subjects,
                produces=[m.model_fields["type"].default for m in self.agent.produces],
                tools=list(self.agent.tools),
                handled=c.handled,
                failed=c.failed,
                in_flight=c.in_flight,
                last_error=c.last_error,
                interval_s=self.heartbeat_interval_s,
            ),
        )
        await self.bus.publish(hb)

    async def _heartbeats(self) -> None:
        # The loop ends on the stop flag as well as on cancellation: nats-py's request can swallow a
        # cancellation that arrives as its reply does (asyncio.wait_for on 3.11), and a heartbeat loop that
        # lost its cancellation would keep the runner from ever stopping.
        while not self._hb_stop.is_set():
            try:
                await self._beat()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("heartbeat failed", agent=self.agent.name, error=str(exc))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hb_stop.wait(), timeout=self.heartbeat_interval_s)

    # -- consuming ----------------------------------------------------------------------------
    async def _consume(self) -> None:
        batch = max(1, self.agent.batch_size)
        failures = 0
        while not self._stopping.is_set():
            await self._slots.acquire()
            if self._stopping.is_set():
                self._slots.release()
                break
            try:
                msgs = await self._psub.fetch(batch=batch, timeout=self._fetch_timeout_s)
            except (TimeoutError, NatsTimeoutError):
                self._slots.release()
                continue
            except asyncio.CancelledError:
                self._slots.release()
                raise
            except Exception as exc:
                self._slots.release()
                failures += 1
                log.warning("fetch failed; retrying", agent=self.agent.name, error=str(exc))
                await asyncio.sleep(0.5)
                if failures % 5 == 0:
                    await self._rebind()
                continue
            failures = 0
            if self._stopping.is_set():
                for msg in msgs:  # fetched while stopping: hand them straight back
                    with contextlib.suppress(Exception):
                        await msg.nak()
                self._slots.release()
                break
            task = asyncio.create_task(self._process(msgs))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _rebind(self) -> None:
        """Fetches keep failing: the durable consumer may be gone (deleted by an operator, or a server that lost its
        store). Create it again (it is the same work queue: a consumer that still exists is kept) and bind to it."""
        try:
            old, self._psub = (
                self._psub,
                await self.bus.ensure_consumer(
                    durable=self.consumer_name, subjects=self.consumed_subjects(), settings=self.consumer
                ),
            )
            with contextlib.suppress(Exception):
                await old.unsubscribe()
            log.warning("bound to the work queue again after repeated fetch failures", agent=self.agent.name)
        except Exception as exc:  # the bus itself is down: the next round tries again
            log.warning("could not bind to the work queue again", agent=self.agent.name, error=str(exc))

    async def _process(self, msgs: list[Msg]) -> None:
        self.counters.in_flight += len(msgs)
        keepalive = asyncio.create_task(self._keep_alive(msgs))
        try:
            await self._process_batch(msgs)
        except asyncio.CancelledError:
            for msg in msgs:
                with contextlib.suppress(Exception):
                    await msg.nak()
            raise
        except Exception as exc:  # never an unretrieved task exception: log, and hand the batch back
            log.error("batch failed; handing it back", agent=self.agent.name, error=f"{type(exc).__name__}: {exc}")
            for msg in msgs:
                with contextlib.suppress(Exception):
                    await msg.nak(delay=1.0)
        finally:
            keepalive.cancel()
            self.counters.in_flight -= len(msgs)
            self._slots.release()

    async def _keep_alive(self, msgs: list[Msg]) -> None:
        """Tell the server long work is still going, so it is not redelivered to another copy."""
        interval = max(1.0, self.consumer.ack_wait_s / 3)
        while True:
            await asyncio.sleep(interval)
            for msg in msgs:
                with contextlib.suppress(Exception):
                    await msg.in_progress()

    async def _process_batch(self, msgs: list[Msg]) -> None:
        """Decode, skip what was handled, handle the rest; whatever goes wrong with one message touches it alone."""
        valid: list[tuple[Msg, Event]] = []
        for msg in msgs:
            try:
                event = await self._decode(msg)
                if event is None:
                    continue
                if await self._was_handled(event.event_id):
                    log.info("skipping an event handled before", agent=self.agent.name, event_id=event.event_id)
                    await msg.ack_sync()
                    continue
                if await self._overdelivered(msg, event):  # (work finished but not acked is skipped just above)
                    continue
                valid.append((msg, event))
            except Exception as exc:  # a failure about this message only: set it aside, go on with the others
                await self._reject(msg, exc)
        if not valid:
            return
        started = time.perf_counter()
        outcomes = await self._outcomes([e for _, e in valid])
        settled = await asyncio.gather(
            *(self._settle(msg, ev, out) for (msg, ev), out in zip(valid, outcomes, strict=True)),
            return_exceptions=True,
        )
        for (msg, ev), result in zip(valid, settled, strict=True):
            if isinstance(result, BaseException):
                await self._unsettled(msg, ev, result)
        log.debug(
            "batch handled", agent=self.agent.name, size=len(valid), seconds=round(time.perf_counter() - started, 4)
        )

    async def _outcomes(self, events: list[Event]) -> list[Outcome]:
        """The agent's outcome for each event. A batch that fails as a whole has each event tried on its own, so that
        one bad event fails alone; a wrong number of outcomes fails every event of the batch."""
        try:
            outcomes = await self._within_deadline(self.agent.handle_batch(events))
        except Exception as exc:
            if len(events) == 1:
                return [Outcome(error=exc)]
            log.warning(
                "batch handler failed; handling its events one by one",
                agent=self.agent.name,
                size=len(events),
                error=f"{type(exc).__name__}: {exc}",
            )
            # (side by side: a batch that passed the deadline then takes at most one more, not one more per event)
            alone = await asyncio.gather(*(self._outcomes([ev]) for ev in events))
            return [outcome[0] for outcome in alone]
        if len(outcomes) != len(events):
            error = RuntimeError(
                f"{self.agent.name}.handle_batch returned {len(outcomes)} outcomes for {len(events)} events"
            )
            return [Outcome(error=error) for _ in events]
        return outcomes

    async def _within_deadline(self, call: Awaitable[list[Outcome]]) -> list[Outcome]:
        """Await a handler call, abandoning it after ``handler_timeout_s``: the call is cancelled but not waited for
        (work it left in a thread, or a handler that ignores the cancellation, cannot hold the agent)."""
        if self.handler_timeout_s is None:
            return await call
        task = asyncio.ensure_future(call)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.handler_timeout_s)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if done:
            return task.result()
        task.cancel()
        task.add_done_callback(_retrieve)
        log.error("handler passed its deadline; abandoning it", agent=self.agent.name, seconds=self.handler_timeout_s)
        raise HandlerTimeoutError(self.agent.name, self.handler_timeout_s)

    async def _overdelivered(self, msg: Msg, event: Event) -> bool:
        """A message delivered more than ``max_deliver`` times never finished: it was handed back on stops, or its
        process died, on its last allowed delivery (a failure then dead-letters it in :meth:`_settle`). Set it aside
        with that reason (an error event and a dead letter), rather than run it yet again."""
        meta = msg.metadata
        deliveries = (meta.num_delivered if meta else None) or 1
        if deliveries <= self.consumer.max_deliver:
            return False
        reason = (
            f"delivered {deliveries} times without finishing (handed back on stops, or its process died); "
            f"retry it with `drivemt dead-letters retry` once the cause is fixed"
        )
        log.error("setting aside work that never finished", agent=self.agent.name, deliveries=deliveries)
        await self._set_aside(msg, event, exc=RuntimeError(reason), reason=reason, last_error=reason)
        return True

    async def _set_aside(self, msg: Msg, event: Event, *, exc: BaseException, reason: str, last_error: str) -> None:
        """Set an event aside for good: an error event on its correlation (so a client waiting for it hears), then a
        dead letter with the reason; if the bus is down, hand it back to be set aside when it comes again."""
        self.counters.failed += 1
        self.counters.last_error = last_error
        try:
            await self.bus.publish(
                error_event(
                    event, agent=self.agent.name, domain=self.agent.error_domain, exc=exc, input_subject=msg.subject
                )
            )
            await self._dead_letter(msg, reason=reason, error=exc, event_id=event.event_id)
        except Exception as dl_exc:
            log.error("could not dead-letter a message", agent=self.agent.name, error=str(dl_exc))
            with contextlib.suppress(Exception):
                await msg.nak(delay=5.0)

    async def _unsettled(self, msg: Msg, event: Event, exc: BaseException) -> None:
        """Publishing the outputs, marking the input handled or acking it failed: the event comes back later, unless
        it never can be settled (an output over the server's size limit) or this was its last delivery; then it is
        set aside like a handler that kept failing (an error event naming it, and a dead letter), never silently
        dropped by the server."""
        meta = msg.metadata
        deliveries = (meta.num_delivered if meta else None) or 1
        error = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, MaxPayloadError) and deliveries < self.consumer.max_deliver:
            log.warning(
                "could not settle an event; it will be redelivered",
                agent=self.agent.name,
                event_id=event.event_id,
                error=error,
            )
            with contextlib.suppress(Exception):
                await msg.nak(delay=2.0)
            return
        log.error(
            "could not settle an event; setting it aside", agent=self.agent.name, event_id=event.event_id, error=error
        )
        await self._set_aside(
            msg,
            event,
            exc=exc,
            reason=f"could not be settled after {deliveries} deliveries: {error}",
            last_error=error[:500],
        )

    async def _was_handled(self, event_id: str) -> bool:
        """Whether the event was handled before; a failing lookup counts as not (outputs carry derived ids, so a
        repeat is dropped by the server's de-duplication anyway)."""
        try:
            return await self.bus.was_handled(self.consumer_name, event_id)
        except Exception as exc:
            log.warning("handled-id lookup failed", agent=self.agent.name, error=f"{type(exc).__name__}: {exc}")
            return False

    async def _decode(self, msg: Msg) -> Event | None:
        """Validate a message; bad bytes become an error event plus a dead letter (never redelivered)."""
        try:
            event = decode_event(msg.data, subject=msg.subject)
        except EventValidationError as exc:
            await self._reject(msg, exc, reason=exc.reason)
            return None
        if event.type not in self.agent.consumed_types():
            wrong = EventValidationError(msg.subject, f"{self.agent.name} does not consume {event.type!r} events")
            await self._reject(msg, wrong, reason=wrong.reason)
            return None
        return event

    async def _reject(self, msg: Msg, exc: BaseException, *, reason: str | None = None) -> None:
        """Set one message aside for good: an error event plus a dead letter with the reason (never raises)."""
        self.counters.failed += 1
        self.counters.last_error = str(exc)[:500]
        with structlog.contextvars.bound_contextvars(agent=self.agent.name, subject=msg.subject):
            log.warning("invalid event", reason=reason or f"{type(exc).__name__}: {exc}"[:500])
        excerpt = msg.data[:200].decode("utf-8", errors="replace")
        try:
            await self._dead_letter(msg, reason=str(exc), error=exc, excerpt=excerpt)
        except Exception as dl_exc:  # the bus is down: hand the message back; it is rejected again later
            log.error("could not dead-letter a message", agent=self.agent.name, error=str(dl_exc))
            with contextlib.suppress(Exception):
                await msg.nak(delay=5.0)

    async def _settle(self, msg: Msg, event: Event, outcome: Outcome) -> None:
        with structlog.contextvars.bound_contextvars(
            agent=self.agent.name, subject=msg.subject, event_id=event.event_id, correlation_id=event.correlation_id
        ):
            exc = outcome.error
            if exc is None:
                await self.bus.publish_many(outcome.events)
                await self.bus.mark_handled(self.consumer_name, event.event_id)
                await msg.ack_sync()
                self.counters.handled += 1
                log.debug("handled", outputs=len(outcome.events))
                return
            if isinstance(exc, HandlerTimeoutError):  # (a retry would hang as long again)
                await self._set_aside(msg, event, exc=exc, reason=str(exc), last_error=str(exc))
                return
            self.counters.failed += 1
            self.counters.last_error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, BadInputError):
                log.warning("bad input", error=str(exc))
                await self.bus.publish(
                    error_event(
                        event, agent=self.agent.name, domain=self.agent.error_domain, exc=exc, input_subject=msg.subject
                    )
                )
                await self.bus.mark_handled(self.consumer_name, event.event_id)
                await msg.ack_sync()
                return
            deliveries = msg.metadata.num_delivered or 1
            if deliveries >= self.consumer.max_deliver:
                log.error("giving up after repeated failures", deliveries=deliveries, error=str(exc))
                await self.bus.publish(
                    error_event(
                        event, agent=self.agent.name, domain=self.agent.error_domain, exc=exc, input_subject=msg.subject
                    )
                )
                await self._dead_letter(
                    msg,
                    reason=f"failed {deliveries} times: {type(exc).__name__}: {exc}",
                    error=exc,
                    event_id=event.event_id,
                )
                return
            delay = min(30.0, 0.5 * 2 ** (deliveries - 1))
            log.warning(
                "handler failed; will retry",
                deliveries=deliveries,
                retry_in_s=delay,
                error=f"{type(exc).__name__}: {exc}",
            )
            await msg.nak(delay=delay)

    def _fit(self, dl: DeadLettered, *, size: int) -> None:
        """Cut a dead letter's copy of the message when the whole would be over the server's payload limit (JSON
        escapes can make it several times the message's size), so that a huge poison is still set aside."""
        p = dl.payload
        limit = getattr(self.bus.nc, "max_payload", 0) or 1024 * 1024
        slack = 64 * 1024  # the envelope, the reason, what JetStream adds
        carried = len(p.data) + len(p.data_b64 or "") + sum(len(k) + len(v) for k, v in p.headers.items())
        if _JSON_ESCAPE_MAX * carried + slack <= limit or len(encode_event(dl)) <= limit:
            return
        p.size = size
        p.data = p.data[: max(0, (limit - slack) // (2 * _JSON_ESCAPE_MAX))]
        p.data_b64 = None
        p.truncated = True
        if len(encode_event(dl)) > limit:
            p.headers = {}

    async def _dead_letter(
        self,
        msg: Msg,
        *,
        reason: str,
        error: BaseException,
        excerpt: str | None = None,
        event_id: str | None = None,
    ) -> None:
        """Publish a dead letter (and an error event) for the message, then terminate it. An event set aside is also
        marked handled (``event_id``): a work queue created again from the start of its stream skips it, and only
        ``drivemt dead-letters retry``, which forgets the mark, sends it back to the agent."""
        try:
            text = msg.data.decode("utf-8")
            b64 = None
        except UnicodeDecodeError:
            text = msg.data.decode("utf-8", errors="replace")
            b64 = base64.b64encode(msg.data).decode()
        meta = msg.metadata
        seq = meta.sequence.stream if meta and meta.sequence else None
        dl = DeadLettered(
            event_id=derived_id(f"{msg.subject}:{seq}", "deadletter", self.consumer_name),
            producer=self.agent.name,
            payload=DeadLetterPayload(
                consumer=self.consumer_name,
                original_subject=msg.subject,
                stream_sequence=seq,
                deliveries=meta.num_delivered if meta else 1,
                reason=reason[:2000],
                data=text,
                data_b64=b64,
                headers={k: str(v) for k, v in (msg.headers or {}).items()},
            ),
        )
        self._fit(dl, size=len(msg.data))
        err = error_event(
            None,
            agent=self.agent.name,
            domain=self.agent.error_domain,
            exc=error,
            input_subject=msg.subject,
            excerpt=excerpt,
            event_id=derived_id(dl.event_id, "error"),
        )
        await self.bus.publish_many([err, dl])
        if event_id is not None:
            with contextlib.suppress(Exception):  # (without the mark, a re-created work queue offers it once more)
                await self.bus.mark_handled(self.consumer_name, event_id)
        await msg.term()
