"""The drivemt daemon: bus, memory and agents in one long-running process.

Start-up order keeps the daemon quick to accept events: the bus comes first (embedded server, or
adopted from a daemon that died, or an external ``--nats-url``), then the streams, then the agents;
the embedding model loads in the background meanwhile. SIGINT/SIGTERM stop consuming, let in-flight
work finish within a grace period and hand the rest back to the server for redelivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Collection, Mapping
from types import TracebackType
from typing import Any

import structlog
from nats.js.errors import ServiceUnavailableError

from agents.runtime import AgentRunner
from bus import Bus, EmbeddedNatsServer, Subjects, adoptable
from bus.connection import redact_url
from bus.errors import BusError
from bus.server import stop_pid
from memory.mr_store import StoreSettings
from runners.clients.discovery import DaemonState, daemon_alive, pid_alive, read_state, remove_state, write_state
from runners.clients.objects import ObjectArtifactStore
from runners.config import DrivemtConfig
from runners.host.composition import Composition
from runners.host.errors import DaemonRunningError
from runners.host.services import MRService, serve_mr_service
from tools.common.similarity import Embedder

__all__ = ["Daemon"]

log = structlog.get_logger(__name__)


class Daemon:
    """One daemon process.

    Args:
        config: The configuration.
        embedder: Share an already loaded embedder (tests, in-process runs).
        model_clients: Model clients by label instead of building them (tests use replay clients).
        store_settings: Override where the MR store lives.
        write_state_file: Record the bus in the data dir's state file (off for private in-process runs).
        only: Run only these agents (settings keys such as ``m_agent``); every enabled one if omitted.
        worker: A worker joins a bus that runs already (``nats_url``, or that of the data dir's daemon), writes no
            state file and starts no server; with ``memory: bus`` it needs no Qdrant of its own.
    """

    def __init__(
        self,
        config: DrivemtConfig,
        *,
        embedder: Embedder | None = None,
        model_clients: Mapping[str, Any] | None = None,
        store_settings: StoreSettings | None = None,
        write_state_file: bool = True,
        only: Collection[str] | None = None,
        worker: bool = False,
    ) -> None:
        self.config = config
        self._only = set(only) if only is not None else None
        self.worker = worker
        self.subjects = Subjects(config.namespace)
        self._embedder = embedder
        self._model_clients = model_clients
        self._store_settings = store_settings
        self._write_state = write_state_file and not worker
        self._state_written = False  # only the daemon that wrote the state file removes it
        self._start_called = False
        self.server: EmbeddedNatsServer | None = None
        self._adopted_pid: int | None = None
        self.bus: Bus | None = None
        self.pipeline: Composition | None = None
        self.runners: list[AgentRunner] = []
        self._services: list[Any] = []
        self._objects: ObjectArtifactStore | None = None
        self._stop = asyncio.Event()
        self.nats_url: str | None = None

    # -- start --------------------------------------------------------------------------------
    async def start(self) -> None:
        """Bring up bus, streams, memory and agents.

        Raises:
            DaemonRunningError: If another daemon already runs on this data dir.
            BusError: If the bus cannot be reached.
        """
        self._start_called = True
        cfg = self.config
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        self.nats_url = await self._bus_url()
        self.bus = Bus(
            url=self.nats_url,
            subjects=self.subjects,
            name=f"drivemt-{'worker' if self.worker else 'daemon'}-{os.getpid()}",
            settings=cfg.bus,
        )
        await self.bus.connect()
        await self._ensure_streams()
        if self._write_state:
            write_state(
                cfg.state_file,
                DaemonState(
                    pid=os.getpid(),
                    nats_url=self.nats_url,  # stored without credentials (DaemonState)
                    nats_pid=self.server.pid if self.server else self._adopted_pid,
                    namespace=cfg.namespace,
                    data_dir=str(cfg.data_dir),
                    qdrant=cfg.qdrant_url or str(cfg.qdrant_path),
                ),
            )
            self._state_written = True
        log.info("bus ready", url=redact_url(self.nats_url), namespace=cfg.namespace)
        self.pipeline = Composition(
            cfg, embedder=self._embedder, model_clients=self._model_clients, store_settings=self._store_settings
        )
        self.pipeline.start_loading_models()
        if cfg.artifacts == "bus":  # artefacts in the Object Store, the runs folder as this process's cache
            self._objects = ObjectArtifactStore(
                url=self.nats_url, subjects=self.subjects, cache_dir=cfg.runs_dir, settings=cfg.bus
            )
            await asyncio.to_thread(self._objects.start)
            self.pipeline.artifacts = self._objects
        await self.pipeline.start_memory(self.bus)
        if self.pipeline.own_store is not None:
            service = MRService(
                store=self.pipeline.own_store, ontology=self.pipeline.ontology, templates=self.pipeline.own_templates
            )
            self._services.append(await serve_mr_service(self.bus, service))
        for key, make_agent in self.pipeline.agents(self.bus):
            settings = getattr(cfg.agents, key)
            if not settings.enabled or (self._only is not None and key not in self._only):
                continue
            for _ in range(settings.copies):
                runner = AgentRunner(
                    make_agent(),
                    bus=self.bus,
                    concurrency=settings.concurrency,
                    consumer=settings.consumer,
                    heartbeat_interval_s=cfg.heartbeat_interval_s,
                )
                await runner.start()
                self.runners.append(runner)
        log.info(
            "worker ready" if self.worker else "daemon ready",
            agents=[r.agent.name for r in self.runners],
            data_dir=str(cfg.data_dir),
        )

    async def _ensure_streams(self) -> None:
        """Create the streams (retrying while a cluster that has just formed cannot place them yet)."""
        assert self.bus is not None
        await self._retrying(self.bus.ensure_streams, "streams not ready")

    @staticmethod
    async def _retrying(step: Callable[[], Awaitable[Any]], what: str, *, timeout_s: float = 60.0) -> None:
        """Run a set-up step, retrying while JetStream answers 503 (a cluster whose peers are still joining, or
        whose streams are moving to more replicas, cannot place streams and consumers yet)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            try:
                await step()
                return
            except ServiceUnavailableError as exc:
                if asyncio.get_running_loop().time() > deadline:
                    raise BusError(f"{what} after {timeout_s:.0f} s: {exc}") from exc
                log.warning(f"{what}; retrying", error=str(exc))
                await asyncio.sleep(1.0)

    async def _bus_url(self) -> str:
        cfg = self.config
        if cfg.nats_url:
            return cfg.nats_url
        state = read_state(cfg.state_file)
        if self.worker:
            if state is not None and daemon_alive(state):
                return state.nats_url
            raise BusError(f"a worker joins a running bus: pass --nats-url, or start a daemon on {cfg.data_dir} first")
        if state is not None and daemon_alive(state):
            raise DaemonRunningError(str(cfg.data_dir), state.pid, redact_url(state.nats_url))
        if state is not None and state.nats_pid is not None:
            if adoptable(state.nats_url, state.nats_pid):
                log.warning(
                    "adopting the bus of a daemon that did not stop cleanly",
                    url=redact_url(state.nats_url),
                    nats_pid=state.nats_pid,
                    dead_daemon_pid=state.pid,
                )
                self._adopted_pid = state.nats_pid
                return state.nats_url
            if pid_alive(state.nats_pid):
                log.warning("stopping an unresponsive server left by an earlier daemon", nats_pid=state.nats_pid)
                await asyncio.to_thread(stop_pid, state.nats_pid)
        self.server = EmbeddedNatsServer(store_dir=cfg.jetstream_dir, log_file=cfg.data_dir / "nats-server.log")
        return await self.server.start()

    # -- run / stop -----------------------------------------------------------------------------
    async def run(self) -> None:
        """Start, then run until SIGINT/SIGTERM, then stop cleanly.

        The handlers are in place from the first moment: a signal during the start (which loads models and may take
        seconds) cancels it and stops what had started, and a second signal while stopping exits at once."""
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)
        for sig in signals:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._on_signal, sig)
        try:
            try:
                if not self._start_called:  # (a caller may have started it already)
                    starting = asyncio.create_task(self.start(), name="daemon-start")
                    stopping = asyncio.create_task(self._stop.wait(), name="daemon-stop-wait")
                    await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
                    stopping.cancel()
                    if not starting.done():
                        log.info("stopping during the start: cancelling it")
                        starting.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await starting  # (raises what made the start fail)
                await self._stop.wait()
            finally:
                # (the handlers stay while stopping: a second signal then exits at once, as _on_signal says)
                await self.stop()
        finally:
            for sig in signals:
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)

    def _on_signal(self, sig: signal.Signals) -> None:
        # Act first, log after: a log line that fails (its reader gone) must not swallow the signal.
        if self._stop.is_set():
            with contextlib.suppress(Exception):
                log.warning("second signal: exiting now; unfinished work will be redelivered", signal=sig.name)
            os._exit(130)
        self._stop.set()
        log.info("stopping: finishing in-flight work", signal=sig.name, grace_s=self.config.shutdown_grace_s)

    async def stop(self) -> None:
        """Finish or hand back in-flight work, then close everything this daemon owns.

        Each step runs whatever the one before it met (a bus that is gone, a store that fails to close): the server
        this daemon owns is stopped and its state file removed in any case."""
        for service in self._services:
            with contextlib.suppress(Exception):  # the connection may already be gone
                await service.stop()
        self._services.clear()
        runners, self.runners = self.runners, []
        await asyncio.gather(*(r.stop(grace_s=self.config.shutdown_grace_s) for r in runners), return_exceptions=True)
        steps: list[tuple[str, Callable[[], Awaitable[object]]]] = []
        if self._objects is not None:
            objects, self._objects = self._objects, None
            steps.append(("artifact store", lambda: asyncio.to_thread(objects.close)))
        if self.pipeline is not None and self.pipeline.own_store is not None:
            pipeline = self.pipeline
            steps.append(("MR store", pipeline.own_store.stop))  # type: ignore[union-attr]
            steps.append(("pipeline", pipeline.close))
        if self.bus is not None:
            steps.append(("bus connection", self.bus.close))
        if self.server is not None:
            steps.append(("nats-server", self.server.stop))
        elif self._adopted_pid is not None:
            pid = self._adopted_pid
            steps.append(("adopted nats-server", lambda: asyncio.to_thread(stop_pid, pid)))
        for what, step in steps:
            try:
                await step()
            except Exception as exc:  # go on: what comes after must still be closed
                log.warning("could not close cleanly", part=what, error=f"{type(exc).__name__}: {exc}")
        if self._state_written:
            remove_state(self.config.state_file, pid=os.getpid())
            self._state_written = False
        log.info("daemon stopped")

    async def __aenter__(self) -> Daemon:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
