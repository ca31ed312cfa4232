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
import importlib.util
import json
import math
import re
import ssl
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import structlog
from nats.aio.client import Client as NATSClient
from nats.errors import Error as NatsError
from nats.js import JetStreamContext, api
from nats.js.errors import (
    BadRequestError,
    BucketNotFoundError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
    NoStreamResponseError,
    NotFoundError,
)
from nats.js.kv import KeyValue
from pydantic import BaseModel, Field, SecretStr

from bus.errors import BusError
from bus.events import Event, encode_event
from bus.subjects import Subjects

__all__ = ["Bus", "BusSettings", "ConsumerSettings", "NatsAuth", "redact_url", "strip_credentials"]

log = structlog.get_logger(__name__)

_DAY = 24 * 3600.0


_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/\s,]*)@")
"""The credentials part of every URL in a text (greedy up to the last ``@``, so a raw ``@`` in a password is caught)."""


def redact_url(text: str) -> str:
    """The text with the password or token of every URL in it masked, safe for logs, state and reports.

    ``nats://alice:s3cret@host:4222`` becomes ``nats://alice:***@host:4222``; a token
    (``nats://t0ken@host``) becomes ``nats://***@host``. Comma-separated cluster URLs and error messages
    quoting a URL are masked alike; text without credentials comes back unchanged.
    """

    def mask(m: re.Match[str]) -> str:
        user, sep, _ = m["userinfo"].partition(":")
        return f"{m['scheme']}{user}:***@" if sep else f"{m['scheme']}***@"

    return _USERINFO.sub(mask, text)


def strip_credentials(text: str) -> str:
    """The text with the credentials of every URL in it removed (``nats://alice:s3cret@host`` -> ``nats://host``).

    For URLs that other processes connect to (the daemon's state file): they bring their own credentials
    (:class:`NatsAuth`) instead of finding someone else's on disk.
    """
    return _USERINFO.sub(lambda m: m["scheme"], text)


class NatsAuth(BaseModel):
    """Credentials and TLS for an external NATS server, passed to nats-py as NATS's own mechanisms.

    User/password or a token may also sit in the URL (``nats://user:pass@host``, ``nats://token@host``);
    nats-py takes them from there. Prefer environment variables for secrets
    (``DRIVEMT_BUS__AUTH__PASSWORD``, ``DRIVEMT_BUS__AUTH__TOKEN`` or ``NATS_TOKEN``) over a config file.
    """

    user: str | None = Field(default=None, description="User name (with password).")
    password: SecretStr | None = Field(default=None, repr=False, description="Password of user.")
    token: SecretStr | None = Field(default=None, repr=False, description="Authentication token.")
    creds_file: Path | None = Field(
        default=None, description="A .creds file (user JWT and nkey seed), as nsc writes it; needs the nkeys package."
    )
    nkey_seed_file: Path | None = Field(
        default=None, description="A file holding an nkey seed (SU...); needs the nkeys package."
    )
    tls_ca_file: Path | None = Field(
        default=None, description="CA certificates to verify the server with (system CAs when unset)."
    )
    tls_cert_file: Path | None = Field(default=None, description="Client certificate, for servers that verify clients.")
    tls_key_file: Path | None = Field(default=None, description="Private key of the client certificate.")
    tls_hostname: str | None = Field(
        default=None, description="Name to check the server certificate against (default: the URL's host)."
    )

    @property
    def uses_nkeys(self) -> bool:
        """Whether a .creds file or an nkey seed is configured (nats-py signs with the nkeys package)."""
        return self.creds_file is not None or self.nkey_seed_file is not None

    def ssl_context(self) -> ssl.SSLContext | None:
        """A TLS context from the CA and client certificate files, or ``None`` when none is set.

        Raises:
            BusError: If a file cannot be read or is not a certificate or key.
        """
        if self.tls_ca_file is None and self.tls_cert_file is None and self.tls_key_file is None:
            return None
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise BusError("NATS TLS: set both tls_cert_file and tls_key_file for a client certificate")
        try:
            ctx = ssl.create_default_context(
                ssl.Purpose.SERVER_AUTH, cafile=str(self.tls_ca_file) if self.tls_ca_file else None
            )
            if self.tls_cert_file is not None and self.tls_key_file is not None:
                ctx.load_cert_chain(str(self.tls_cert_file), str(self.tls_key_file))
        except (OSError, ssl.SSLError) as exc:
            raise BusError(f"NATS TLS: cannot load certificates: {exc}") from exc
        return ctx

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments of nats-py's ``Client.connect`` for these credentials.

        Raises:
            BusError: If a credentials file is missing, or nkeys signing is asked for without the nkeys package.
        """
        opts: dict[str, Any] = {}
        if self.user is not None:
            opts["user"] = self.user
        if self.password is not None:
            opts["password"] = self.password.get_secret_value()
        if self.token is not None:
            opts["token"] = self.token.get_secret_value()
        for label, path in (("creds_file", self.creds_file), ("nkey_seed_file", self.nkey_seed_file)):
            if path is not None and not Path(path).is_file():
                raise BusError(f"NATS {label} {path} not found")
        if self.uses_nkeys and importlib.util.find_spec("nkeys") is None:
            raise BusError("NATS nkey or .creds authentication needs the 'nkeys' package: pip install 'nats-py[nkeys]'")
        if self.creds_file is not None:
            opts["user_credentials"] = str(self.creds_file)
        elif self.nkey_seed_file is not None:
            opts["nkeys_seed"] = str(self.nkey_seed_file)
        ctx = self.ssl_context()
        if ctx is not None:
            opts["tls"] = ctx
        if self.tls_hostname is not None:
            opts["tls_hostname"] = self.tls_hostname
        return opts


def _tls_required(nc: NATSClient) -> bool:
    """Whether the server the client is connected to requires TLS (nats-py then upgraded the connection)."""
    info = getattr(nc, "_server_info", None) or {}  # (nats-py keeps the server's INFO private)
    return bool(info.get("tls_required"))


_NO_TLS = "the server does not require TLS, so nothing is sent to it (it would go in plain text)"


def _no_tls_reason() -> str:
    """Why a server that does not require TLS is refused when TLS was asked for, and what to do."""
    return (
        f"TLS was asked for (a tls:// URL or bus.auth TLS files) but {_NO_TLS}; make the server require TLS "
        "(it may only offer it, with allow_non_tls), or use nats:// without TLS files"
    )


def _refuse_plain_text(nc: NATSClient) -> None:
    """Make the client refuse, before its CONNECT (credentials) or anything queued is written, a server that does not
    require TLS: nats-py upgrades to TLS only when the server asks, at the first connection and at every reconnect
    (another cluster member, a server set up again without TLS). Such a server then counts as a failed connection
    attempt, and the client goes on trying the others."""
    build = getattr(nc, "_connect_command", None)
    if build is None:  # (nats-py's internals moved: say so rather than risk plain text)
        raise BusError("this nats-py version cannot be kept from talking in plain text to a server without TLS")

    def guarded() -> bytes:
        if not _tls_required(nc):
            raise NatsError(_NO_TLS)
        return build()

    nc._connect_command = guarded  # type: ignore[method-assign]


def _refused(exc: BaseException) -> str | None:
    """Why a first connection cannot succeed by retrying (credentials or TLS refused), else ``None``."""
    if _NO_TLS in str(exc):
        return _no_tls_reason()
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed: {exc}; check tls:// in the URL and bus.auth.tls_ca_file / tls_cert_file"
    text = str(exc).lower()
    if "authorization violation" in text or "authentication" in text:
        return (
            f"the server refused the credentials ({exc}); give user/password or a token in the URL, "
            "or set bus.auth (password, token, creds_file, nkey_seed_file)"
        )
    return None


class BusSettings(BaseModel):
    """How streams are kept, and how to reach an external server."""

    retention_s: float = Field(default=7 * _DAY, description="How long inputs and results stay in their streams.")
    deadletter_retention_s: float = Field(default=30 * _DAY, description="How long dead letters are kept.")
    duplicate_window_s: float = Field(
        default=2 * 3600.0, description="Window in which a repeated event id is dropped by the server."
    )
    processed_ttl_s: float = Field(default=7 * _DAY, description="How long handled event ids are remembered.")
    replicas: int = Field(default=1, description="Stream replicas (raise on a NATS cluster).")
    connect_timeout_s: float = Field(default=5.0, description="Seconds to wait for the first connection.")
    auth: NatsAuth = Field(
        default_factory=NatsAuth, description="Credentials and TLS for an external server (--nats-url)."
    )

    def for_embedded(self) -> BusSettings:
        """These settings for the embedded server on the loopback, which takes no credentials and no TLS: ``auth`` is
        for an external server (TLS files asked of the embedded one would refuse every connection)."""
        return self.model_copy(update={"auth": NatsAuth()})


class ConsumerSettings(BaseModel):
    """Delivery settings of one agent's durable consumer."""

    ack_wait_s: float = Field(default=60.0, description="Seconds before unacknowledged work is redelivered.")
    max_deliver: int = Field(
        default=5, ge=1, description="Deliveries before an event goes to the dead-letter subject (1 or more)."
    )
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
        given = [u.strip() for u in url.split(",")] if isinstance(url, str) else list(url)
        # (nats-py reads the scheme in lower case only: "NATS://" waited out the timeout)
        self.servers = [f"{u.split('://', 1)[0].lower()}://{u.split('://', 1)[1]}" if "://" in u else u for u in given]
        self.subjects = subjects or Subjects()
        self.name = name
        self.settings = settings or BusSettings()
        self._nc: NATSClient | None = None
        self._js: JetStreamContext | None = None
        self._kv: KeyValue | None = None
        self._tallies: KeyValue | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    async def connect(self) -> None:
        """Connect (and reconnect forever afterwards), with the credentials and TLS of ``settings.auth``.

        Raises:
            BusError: If no server answers within the connect timeout, or one refuses the credentials or TLS
                (at once, instead of retrying until the timeout). The message never shows a password or token.
        """
        auth_options = self.settings.auth.connect_options()
        schemes = {urlsplit(u).scheme.lower() if "://" in u else "nats" for u in self.servers}
        if unknown := schemes - {"nats", "tls", "ws", "wss"}:
            raise BusError(
                f"cannot connect to NATS at {redact_url(', '.join(self.servers))}: unsupported scheme "
                f"{', '.join(sorted(unknown))}: use nats://, tls://, ws:// or wss://"
            )
        if "tls" in schemes and "nats" in schemes:
            raise BusError(
                f"cannot connect to NATS at {redact_url(', '.join(self.servers))}: the list mixes tls:// and nats://, "
                "so some servers would be reached without TLS; give every server the same scheme"
            )
        if "ws" in schemes and "tls" in auth_options:
            raise BusError(
                "NATS TLS over websockets needs wss:// URLs (ws:// with bus.auth TLS files is not encrypted)"
            )
        wants_tls = "tls" in schemes or ("tls" in auth_options and "nats" in schemes)
        refused: list[str] = []
        first: asyncio.Task[None] | None = None

        async def on_error(exc: Exception) -> None:
            if first is not None and not first.done():
                reason = _refused(exc)
                if reason is not None and not refused:
                    refused.append(reason)
                    first.cancel()  # retrying cannot help: the server said no
                return
            log.warning("nats error", error=redact_url(str(exc)))

        nc = NATSClient()
        if wants_tls:
            _refuse_plain_text(nc)
        # nats-py keeps retrying the first connection forever when reconnects are unlimited, so the
        # first connection gets a deadline of its own; once connected, reconnects never give up.
        first = asyncio.ensure_future(
            nc.connect(
                servers=self.servers,
                name=self.name,
                connect_timeout=max(1, math.ceil(self.settings.connect_timeout_s)),
                allow_reconnect=True,
                max_reconnect_attempts=-1,
                reconnect_time_wait=1,
                error_cb=on_error,
                **auth_options,
            )
        )
        try:
            await asyncio.wait_for(first, timeout=self.settings.connect_timeout_s)
        except (Exception, asyncio.CancelledError) as exc:  # NoServersError, TimeoutError, OSError ...
            first.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await first
            with contextlib.suppress(Exception):
                await nc.close()
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise
            if refused:
                reason = refused[0]
            elif isinstance(exc, TimeoutError | asyncio.CancelledError):
                reason = "no server answered in time"
            else:
                reason = _refused(exc) or str(exc) or type(exc).__name__
            where = redact_url(", ".join(self.servers))
            raise BusError(f"cannot connect to NATS at {where}: {redact_url(reason)}") from exc
        if wants_tls and not _tls_required(nc):  # (_refuse_plain_text stops this first; kept should nats-py change)
            with contextlib.suppress(Exception):
                await nc.close()
            raise BusError(f"cannot connect to NATS at {redact_url(', '.join(self.servers))}: {_no_tls_reason()}")
        self._nc = nc
        self._js = self._nc.jetstream(timeout=10.0)

    async def close(self) -> None:
        """Close the connection (``drain`` would hang while pull subscriptions are open)."""
        nc, self._nc = self._nc, None
        if nc is not None and not nc.is_closed:
            with contextlib.suppress(Exception):
                await nc.flush(timeout=2)
            try:  # (bounded: a client closed while it reconnects to a server that is gone can take long)
                await asyncio.wait_for(nc.close(), timeout=5.0)
            except (Exception, TimeoutError) as exc:  # the server is gone: there is nothing left to close
                log.debug("closing the connection failed", error=f"{type(exc).__name__}: {exc}")

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
        """URL of the server currently connected to, its password or token masked (for people to read)."""
        if self._nc is None or self._nc.connected_url is None:
            return None
        return redact_url(self._nc.connected_url.geturl())

    # -- streams ------------------------------------------------------------------------------
    async def _check_own_stream(self, name: str) -> None:
        """Refuse to update a stream that holds another namespace's subjects (stream names fold letter case and '-'
        into '_', so "drivemt" and "Drivemt" name the same streams): updating it would take the other deployment's
        streams, buckets and queued work over."""
        info = await self.js.stream_info(name)
        own = f"{self.subjects.namespace}."
        theirs = [s for s in info.config.subjects or [] if not s.startswith(own)]
        if theirs:
            other = theirs[0].split(".", 1)[0]
            raise BusError(
                f"stream {name} belongs to namespace {other!r} on this server; namespace {self.subjects.namespace!r} "
                "would share its streams (their names ignore letter case and '-' against '_'): choose another namespace"
            )

    async def check_own_streams(self) -> None:
        """Refuse, with the reason, to read or change this namespace's streams when they hold another namespace's
        subjects (see :meth:`_check_own_stream`); streams not made yet are skipped.

        Raises:
            BusError: If a stream belongs to another namespace.
        """
        names = self.subjects.streams
        for name in (names.inputs, names.results, names.deadletter, names.heartbeats):
            try:
                await self._check_own_stream(name)
            except NotFoundError:
                continue

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
                await self._check_own_stream(spec.name or "")
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
            # The server delivers without limit: work handed back on a stop (or lost with a crashed process) also counts
            # as a delivery, and the server would drop it silently after its last one. The runner keeps the count and
            # sets aside, with a dead letter, what passes ``settings.max_deliver`` (agents/runtime.py).
            max_deliver=-1,
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
        try:
            return await self.js.publish(subject, data, headers={"Nats-Msg-Id": event.event_id})
        except NoStreamResponseError as exc:
            raise BusError(
                f"no stream on this server takes {subject}: no deployment of namespace {self.subjects.namespace!r} "
                "has made its streams here (start its daemon, or give the namespace of the one running)"
            ) from exc

    async def publish_many(self, events: Sequence[Event], *, concurrency: int = 256) -> list[api.PubAck | None]:
        """Publish several events concurrently (bounded), waiting for every acknowledgement."""
        sem = asyncio.Semaphore(concurrency)

        async def one(ev: Event) -> api.PubAck | None:
            async with sem:
                return await self.publish(ev)

        return list(await asyncio.gather(*(one(e) for e in events)))

    async def publish_raw(self, subject: str, data: bytes, *, headers: dict[str, str] | None = None) -> api.PubAck:
        """Publish bytes as they are (for ``dead-letters retry`` and tests of malformed input)."""
        try:
            return await self.js.publish(subject, data, headers=headers)
        except NoStreamResponseError as exc:
            raise BusError(f"no stream on this server takes {subject}") from exc

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

    async def forget_handled(self, consumer: str, event_id: str) -> None:
        """Forget that ``consumer`` finished (or set aside) the event, so that it is handled when it comes again."""
        with contextlib.suppress(KeyNotFoundError):
            await self.kv.delete(self._mark_key(consumer, event_id))

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
