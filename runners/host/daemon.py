"""The drivemt daemon: bus, memory and agents in one long-running process.

Start-up order keeps the daemon quick to accept events: the bus comes first (embedded server, or
adopted from a daemon that died, or an external ``--nats-url``), then the streams, then the agents;
the embedding model loads in the background meanwhile. SIGINT/SIGTERM stop consuming, let in-flight
work finish within a grace period and hand the rest back to the server for redelivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Mapping
from types import TracebackType
from typing import Any

import structlog
from nats.js.errors import ServiceUnavailableError

from agents.runtime import AgentRunner
from bus import Bus, EmbeddedNatsServer, Subjects, adoptable
from bus.connection import redact_url
from bus.errors import BusError, EmbeddedServerError
from bus.server import host_port, port_open, stop_pid
from memory.mr_store import StoreSettings
from runners.clients.discovery import (
    DaemonState,
    daemon_alive,
    daemon_namespace,
    pid_alive,
    process_start_ticks,
    read_state,
    remove_state,
    write_state,
)
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
        self._watch_task: asyncio.Task[None] | None = None
        self._watch_interval_s = 1.0
        self._fatal: BaseException | None = None
        self.server_restarts = 0
        """How often this daemon started its bus server again after it died."""
        self._lock_fd: int | None = None

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
        if self._write_state:
            self._take_data_dir()
        self.nats_url = await self._bus_url()
        cfg = self.config  # (a worker takes the namespace of the daemon it joins)
        self.bus = Bus(
            url=self.nats_url,
            subjects=self.subjects,
            name=f"drivemt-{'worker' if self.worker else 'daemon'}-{os.getpid()}",
            settings=cfg.bus.for_embedded() if self._on_embedded_server() else cfg.bus,
        )
        await self.bus.connect()
        await self._ensure_streams()
        if self._write_state:
            self._record_state()
            self._state_written = True
        log.info("bus ready", url=redact_url(self.nats_url), namespace=cfg.namespace)
        self.pipeline = Composition(
            cfg, embedder=self._embedder, model_clients=self._model_clients, store_settings=self._store_settings
        )
        self.pipeline.start_loading_models()
        if cfg.artifacts == "bus":  # artefacts in the Object Store, the runs folder as this process's cache
            self._objects = ObjectArtifactStore(
                url=self.nats_url, subjects=self.subjects, cache_dir=cfg.runs_dir, settings=self.bus.settings
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
                    handler_timeout_s=settings.handler_timeout_s,
                )
                await runner.start()
                self.runners.append(runner)
        if self.server is not None or self._adopted_pid is not None:
            self._watch_task = asyncio.create_task(self._watch_server(), name="daemon-server-watch")
        log.info(
            "worker ready" if self.worker else "daemon ready",
            agents=[r.agent.name for r in self.runners],
            data_dir=str(cfg.data_dir),
        )

    def _take_data_dir(self) -> None:
        """Hold the data dir's lock for this daemon's life (the system drops it when the process ends, however it
        ends): two daemons started at the same moment would otherwise both find no state file, start two servers on
        one JetStream store, and the one left running would be recorded nowhere."""
        import fcntl

        path = self.config.data_dir / "daemon.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):  # (a file system with no locks)
                log.warning("the data dir cannot be locked; relying on its state file", error=str(exc))
                return
            state = read_state(self.config.state_file)
            if state is not None and daemon_alive(state):
                raise DaemonRunningError(str(self.config.data_dir), state.pid, redact_url(state.nats_url)) from None
            try:
                holder = int(path.read_text().strip() or 0)
            except (OSError, ValueError):
                holder = 0
            raise DaemonRunningError(str(self.config.data_dir), holder, "(still starting)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def _release_data_dir(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)  # (closing the descriptor drops the lock)
            self._lock_fd = None

    def _record_state(self) -> None:
        cfg = self.config
        assert self.nats_url is not None
        write_state(
            cfg.state_file,
            DaemonState(
                pid=os.getpid(),
                nats_url=self.nats_url,  # stored without credentials (DaemonState)
                nats_pid=self.server.pid if self.server else self._adopted_pid,
                namespace=cfg.namespace,
                data_dir=str(cfg.data_dir),
                qdrant=cfg.qdrant_url or str(cfg.qdrant_path),
                start_ticks=process_start_ticks(os.getpid()),
            ),
        )

    # -- the bus server this daemon looks after -------------------------------------------------
    def _server_alive(self) -> bool:
        if self.server is not None:
            return self.server.exit_code is None
        return self._adopted_pid is None or pid_alive(self._adopted_pid)

    async def _watch_server(self, *, most: int = 5, window_s: float = 300.0) -> None:
        """Start the bus server again, on the same port and JetStream store, when it dies (killed, out of memory):
        the connections reconnect to it and the work it stored comes back to the agents. A server that dies ``most``
        times within ``window_s`` is not started again: the daemon stops with that error instead of looping."""
        deaths: deque[float] = deque()
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            await asyncio.sleep(self._watch_interval_s)
            if self._stop.is_set() or self._server_alive():
                continue
            now = loop.time()
            deaths.append(now)
            while deaths and now - deaths[0] > window_s:
                deaths.popleft()
            code = self.server.exit_code if self.server is not None else None
            if len(deaths) >= most:
                self._fail(
                    EmbeddedServerError(
                        f"the nats-server died {len(deaths)} times within {window_s:.0f} s (last exit code {code}); "
                        f"not starting it again: see {self.config.data_dir / 'nats-server.log'}"
                    )
                )
                return
            log.error("the nats-server died; starting it again on the same port and store", exit_code=code)
            try:
                await self._restart_server()
            except Exception as exc:
                self._fail(exc)
                return

    async def _restart_server(self) -> None:
        assert self.nats_url is not None
        if self.server is not None:
            await self.server.stop()  # (reaps the dead child)
        server = self._embedded(host_port(self.nats_url)[1])  # (recorded before the start: a stop must see it)
        self._adopted_pid = None
        url = await server.start(on_launch=lambda _pid: self._record_state() if self._state_written else None)
        self.server_restarts += 1
        if url != self.nats_url:  # (the same port was asked for; a different answer would strand the connections)
            raise EmbeddedServerError(f"the nats-server came back on {url}, not on {self.nats_url}")
        log.warning("nats-server started again", url=redact_url(url), pid=server.pid, restarts=self.server_restarts)

    def _fail(self, exc: BaseException) -> None:
        """Stop the daemon because of ``exc``; :meth:`run` raises it once everything is closed."""
        log.error("stopping the daemon", error=f"{type(exc).__name__}: {exc}")
        self._fatal = exc
        self._stop.set()

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
                namespace = daemon_namespace(state, cfg.namespace, given="namespace" in cfg.model_fields_set)
                if namespace != cfg.namespace:  # (it joins the daemon's work, in the daemon's namespace)
                    self.config = cfg.model_copy(update={"namespace": namespace})
                    self.subjects = Subjects(namespace)
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
        return await self._start_server()

    async def _start_server(self) -> str:
        """Start the embedded server on the port this data dir's last one had, when it is free: a console or worker
        left open across a daemon's restart reconnects by itself. Any free port otherwise."""
        cfg = self.config
        remembered = cfg.data_dir / "nats.port"
        try:
            port = int(remembered.read_text().strip())
        except (OSError, ValueError):
            port = -1
        if port > 0 and port_open("127.0.0.1", port):
            port = -1  # (taken by something else now)
        try:
            url = await self._embedded(port).start()
        except EmbeddedServerError:
            if port == -1:
                raise
            url = await self._embedded(-1).start()  # (taken between the check and the start)
        with contextlib.suppress(OSError):
            remembered.write_text(f"{host_port(url)[1]}\n")
        return url

    def _on_embedded_server(self) -> bool:
        """Whether the bus is an embedded server: this daemon's own, one it adopted, or (a worker) its daemon's."""
        if self.config.nats_url:
            return False
        if self.server is not None or self._adopted_pid is not None:
            return True
        state = read_state(self.config.state_file) if self.worker else None
        return state is not None and state.nats_pid is not None

    def _embedded(self, port: int) -> EmbeddedNatsServer:
        cfg = self.config
        self.server = EmbeddedNatsServer(
            store_dir=cfg.jetstream_dir,
            log_file=cfg.data_dir / "nats-server.log",
            port=port,
            die_with_parent=not self._write_state,  # (a command's private server: nothing would ever adopt it)
        )
        return self.server

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
            if self._fatal is not None:
                raise self._fatal
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

    async def stop(self, *, grace_s: float | None = None) -> None:
        """Finish or hand back in-flight work, then close everything this daemon owns.

        Each step runs whatever the one before it met (a bus that is gone, a store that fails to close): the server
        this daemon owns is stopped and its state file removed in any case.

        Args:
            grace_s: How long in-flight work may take to finish before it is handed back (``shutdown_grace_s`` when
                not given).
        """
        if self._watch_task is not None:  # (first: it must not start again the server stopped below)
            self._watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch_task
            self._watch_task = None
        for service in self._services:
            with contextlib.suppress(Exception):  # the connection may already be gone
                await service.stop()
        self._services.clear()
        runners, self.runners = self.runners, []
        grace = self.config.shutdown_grace_s if grace_s is None else grace_s
        await asyncio.gather(*(r.stop(grace_s=grace) for r in runners), return_exceptions=True)
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
        self._release_data_dir()
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
        # Interrupted (Ctrl-C of an in-process command cancels its task): work in flight is handed back at once,
        # not finished for shutdown_grace_s only to be thrown away.
        interrupted = exc_type is not None and issubclass(exc_type, asyncio.CancelledError | KeyboardInterrupt)
        await self.stop(grace_s=0.0 if interrupted else None)
