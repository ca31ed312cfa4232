"""The connection to NATS: JetStream streams, event publishing, tallies and de-duplication marks.

Typed request/reply is in :mod:`bus.rpc`.

Inputs and results live in JetStream streams with limits retention (so observers can replay them);
each agent type reads its inputs through one durable pull consumer (copies share the work); every
event is published with ``Nats-Msg-Id`` = its event id, so a repeat inside the de-duplication window
is dropped by the server; a key-value bucket remembers handled event ids beyond that window.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import structlog
from nats.aio.client import Client as NATSClient
from nats.js import JetStreamContext, api
from nats.js.errors import BadRequestError, BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue
from pydantic import BaseModel, Field

from bus.errors import BusError
from bus.events import Event, encode_event
from bus.subjects import Subjects

__all__ = ["Bus", "BusSettings", "ConsumerSettings"]

log = structlog.get_logger(__name__)

_DAY = 24 * 3600.0


class BusSettings(BaseModel):
    """How streams are kept."""

    retention_s: float = Field(default=7 * _DAY, description="How long inputs and results stay in their streams.")
    deadletter_retention_s: float = Field(default=30 * _DAY, description="How long dead letters are kept.")
    duplicate_window_s: float = Field(
        default=2 * 3600.0, description="Window in which a repeated event id is dropped by the server."
    )
    processed_ttl_s: float = Field(default=7 * _DAY, description="How long handled event ids are remembered.")
    replicas: int = Field(default=1, description="Stream replicas (raise on a NATS cluster).")
    connect_timeout_s: float = Field(default=5.0, description="Seconds to wait for the first connection.")


class ConsumerSettings(BaseModel):
    """Delivery settings of one agent's durable consumer."""

    ack_wait_s: float = Field(default=60.0, description="Seconds before unacknowledged work is redelivered.")
    max_deliver: int = Field(default=5, description="Deliveries before an event goes to the dead-letter subject.")
    max_ack_pending: int = Field(default=2000, description="Events one consumer may have in flight across copies.")


class Bus:
    """A NATS connection that speaks drivemt events.

    Args:
        url: Server URL, or several for a cluster (comma-separated or a list).
        subjects: Subject names of this namespace.
        name: Connection name shown by the server (agent or command name).
        settings: Stream settings.
    """

    def __init__(
        self,
        *,
        url: str | Sequence[str],
        subjects: Subjects | None = None,
        name: str = "drivemt",
        settings: BusSettings | None = None,
    ) -> None:
        self.servers = [u.strip() for u in url.split(",")] if isinstance(url, str) else list(url)
        self.subjects = subjects or Subjects()
        self.name = name
        self.settings = settings or BusSettings()
        self._nc: NATSClient | None = None
        self._js: JetStreamContext | None = None
        self._kv: KeyValue | None = None
        self._tallies: KeyValue | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    async def connect(self) -> None:
        """Connect (and reconnect forever afterwards).

        Raises:
            BusError: If no server answers within the connect timeout.
        """

        async def on_error(exc: Exception) -> None:
            log.warning("nats error", error=str(exc))

        nc = NATSClient()
        # nats-py keeps retrying the first connection forever when reconnects are unlimited, so the
        # first connection gets a deadline of its own; once connected, reconnects never give up.
        try:
            await asyncio.wait_for(
                nc.connect(
                    servers=self.servers,
                    name=self.name,
                    connect_timeout=max(1, math.ceil(self.settings.connect_timeout_s)),
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=1,
                    error_cb=on_error,
                ),
                timeout=self.settings.connect_timeout_s,
            )
        except (Exception, asyncio.CancelledError) as exc:  # NoServersError, TimeoutError, OSError ...
            with contextlib.suppress(Exception):
                await nc.close()
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise
            reason = (
                "no server answered in time"
                if isinstance(exc, TimeoutError | asyncio.CancelledError)
                else str(exc) or type(exc).__name__
            )
            raise BusError(f"cannot connect to NATS at {', '.join(self.servers)}: {reason}") from exc
        self._nc = nc
        self._js = self._nc.jetstream(timeout=10.0)

    async def close(self) -> None:
        """Close the connection (``drain`` would hang while pull subscriptions are open)."""
        nc, self._nc = self._nc, None
        if nc is not None and not nc.is_closed:
            with contextlib.suppress(Exception):
                await nc.flush(timeout=2)
            await nc.close()

    async def __aenter__(self) -> Bus:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def nc(self) -> NATSClient:
        """The NATS client."""
        if self._nc is None:
            raise BusError("not connected")
        return self._nc

    @property
    def js(self) -> JetStreamContext:
        """The JetStream context."""
        if self._js is None:
            raise BusError("not connected")
        return self._js

    @property
    def connected_url(self) -> str | None:
        """URL of the server currently connected to."""
        if self._nc is None or self._nc.connected_url is None:
            return None
        return self._nc.connected_url.geturl()

    # -- streams ------------------------------------------------------------------------------
    async def ensure_streams(self) -> None:
        """Create or update the namespace's streams and the handled-ids bucket."""
        names = self.subjects.streams
        s = self.settings
        specs = [
            api.StreamConfig(
                name=names.inputs,
                description="drivemt submitted inputs",
                subjects=self.subjects.input_subjects,
                retention=api.RetentionPolicy.LIMITS,
                max_age=s.retention_s,
                duplicate_window=s.duplicate_window_s,
                storage=api.StorageType.FILE,
                num_replicas=s.replicas,
            ),
            api.StreamConfig(
                name=names.results,
                description="drivemt produced results, errors and progress",
                subjects=self.subjects.result_subjects,
                retention=api.RetentionPolicy.LIMITS,
                max_age=s.retention_s,
                duplicate_window=s.duplicate_window_s,
                storage=api.StorageType.FILE,
                num_replicas=s.replicas,
            ),
            api.StreamConfig(
                name=names.deadletter,
                description="drivemt events no agent could handle",
                subjects=[self.subjects.all_deadletters],
                retention=api.RetentionPolicy.LIMITS,
                max_age=s.deadletter_retention_s,
                duplicate_window=s.duplicate_window_s,
                storage=api.StorageType.FILE,
                num_replicas=s.replicas,
            ),
            api.StreamConfig(
                name=names.heartbeats,
                description="drivemt agent heartbeats, last one per agent instance",
                subjects=[self.subjects.all_heartbeats],
                retention=api.RetentionPolicy.LIMITS,
                max_msgs_per_subject=1,
                max_age=3600.0,
                storage=api.StorageType.FILE,
                num_replicas=s.replicas,
            ),
        ]
        for spec in specs:
            try:
                await self.js.add_stream(config=spec)
            except BadRequestError as exc:
                if exc.err_code != 10058:  # 10058: stream name already in use with another configuration
                    raise BusError(f"cannot create stream {spec.name}: {exc.description}") from exc
                await self.js.update_stream(config=spec)
        try:
            self._kv = await self.js.key_value(names.processed_bucket)
        except BucketNotFoundError:
            self._kv = await self.js.create_key_value(
                bucket=names.processed_bucket, history=1, ttl=s.processed_ttl_s, replicas=s.replicas
            )
        try:
            self._tallies = await self.js.key_value(names.tallies_bucket)
        except BucketNotFoundError:
            self._tallies = await self.js.create_key_value(
                bucket=names.tallies_bucket, history=1, ttl=s.retention_s, replicas=s.replicas
            )

    async def ensure_consumer(
        self, *, durable: str, subjects: Sequence[str], settings: ConsumerSettings, stream: str | None = None
    ) -> JetStreamContext.PullSubscription:
        """A pull subscription on a durable consumer shared by every copy of an agent.

        Args:
            durable: Consumer name; every copy of the agent uses the same one (one work queue).
            subjects: Subjects the agent consumes (all in one stream).
            settings: Ack wait, deliveries and in-flight bound.
            stream: Stream name (found from the first subject if omitted).
        """
        stream = stream or await self.js.find_stream_name_by_subject(subjects[0])
        config = api.ConsumerConfig(
            durable_name=durable,
            ack_policy=api.AckPolicy.EXPLICIT,
            deliver_policy=api.DeliverPolicy.ALL,
            ack_wait=settings.ack_wait_s,
            max_deliver=settings.max_deliver,
            max_ack_pending=settings.max_ack_pending,
            max_waiting=512,
            filter_subjects=list(subjects) if len(subjects) > 1 else None,
            filter_subject=subjects[0] if len(subjects) == 1 else None,
        )
        try:
            await self.js.add_consumer(stream, config=config)
        except BadRequestError as exc:
            log.warning("consumer exists with other settings; keeping it", consumer=durable, error=str(exc))
        return await self.js.pull_subscribe_bind(durable=durable, stream=stream)

    # -- events -------------------------------------------------------------------------------
    async def publish(self, event: Event) -> api.PubAck | None:
        """Publish an event and wait for the server's acknowledgement.

        Events on stream subjects go through JetStream with ``Nats-Msg-Id`` set to the event id, so
        a repeat is dropped; other subjects (none at present) use core NATS.
        """
        subject = event.subject(self.subjects)
        data = encode_event(event)
        return await self.js.publish(subject, data, headers={"Nats-Msg-Id": event.event_id})

    async def publish_many(self, events: Sequence[Event], *, concurrency: int = 256) -> list[api.PubAck | None]:
        """Publish several events concurrently (bounded), waiting for every acknowledgement."""
        sem = asyncio.Semaphore(concurrency)

        async def one(ev: Event) -> api.PubAck | None:
            async with sem:
                return await self.publish(ev)

        return list(await asyncio.gather(*(one(e) for e in events)))

    async def publish_raw(self, subject: str, data: bytes, *, headers: dict[str, str] | None = None) -> api.PubAck:
        """Publish bytes as they are (for ``dead-letters retry`` and tests of malformed input)."""
        return await self.js.publish(subject, data, headers=headers)

    # -- handled-id marks ---------------------------------------------------------------------
    @property
    def kv(self) -> KeyValue:
        """The handled-ids bucket."""
        if self._kv is None:
            raise BusError("streams not ensured: call ensure_streams() first")
        return self._kv

    @staticmethod
    def _mark_key(consumer: str, event_id: str) -> str:
        return f"{consumer}.{event_id}"

    async def was_handled(self, consumer: str, event_id: str) -> bool:
        """Whether ``consumer`` already finished the event (beyond the server's de-duplication window)."""
        try:
            await self.kv.get(self._mark_key(consumer, event_id))
            return True
        except KeyNotFoundError:
            return False

    async def mark_handled(self, consumer: str, event_id: str) -> None:
        """Remember that ``consumer`` finished the event."""
        await self.kv.put(self._mark_key(consumer, event_id), b"1")

    # -- tallies ------------------------------------------------------------------------------
    async def tally(self, group: str, part: str, value: dict[str, Any], *, attempts: int = 50) -> dict[str, Any]:
        """Add one part's result to a group (the runs of a case, the images of a dataset); return every part so far.

        The group is one key updated with optimistic concurrency, so copies of an agent on several
        machines never lose a part; adding a part twice (a redelivery) keeps the first value.

        Args:
            group: Key of the group (letters, digits, ``-_.=/``).
            part: The part's name within the group.
            value: JSON-able result of the part.
            attempts: Retries when another writer updated the group at the same time.

        Raises:
            BusError: If the group could not be updated.
        """
        if self._tallies is None:
            raise BusError("streams not ensured: call ensure_streams() first")
        for _ in range(attempts):
            try:
                entry = await self._tallies.get(group)
                parts: dict[str, Any] = json.loads(entry.value or b"{}")
                revision: int | None = entry.revision
            except KeyNotFoundError:
                parts, revision = {}, None
            if part in parts:
                return parts
            parts[part] = value
            data = json.dumps(parts, default=str).encode()
            try:
                if revision is None:
                    await self._tallies.create(group, data)
                else:
                    await self._tallies.update(group, data, last=revision)
                return parts
            except (KeyWrongLastSequenceError, BadRequestError):
                await asyncio.sleep(0.01)
        raise BusError(f"could not update tally {group} after {attempts} attempts")
