"""A warm simulator in a child process of its own.

MetaDrive keeps one engine per process and its physics can take a process down, so each simulator
worker runs in a spawned child that keeps the simulator warm between runs (the map is rebuilt only
when it changes). The parent talks to it over a pipe from a thread, so the agent's event loop never
blocks; a child that dies or hangs past the time limit is replaced, and the run is reported as failed
instead of being lost.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import threading
import time
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import structlog

from runners.simulators.base import Simulator
from tools.crash.models import RunRecord, RunSpec, Scenario, SimSettings
from tools.errors import BadInputError, DrivemtError

__all__ = ["SimWorker", "SimWorkerError", "SimulatorRefusedError", "make_simulator"]

log = structlog.get_logger(__name__)


class SimWorkerError(DrivemtError):
    """The child process failed, died or ran past its time limit."""

    def __init__(self, reason: str, *, error_type: str = "SimWorkerError") -> None:
        self.reason = reason
        self.error_type = error_type
        super().__init__(reason)


class SimulatorRefusedError(BadInputError):
    """The simulator refused the run for good (a scenario it cannot build, a simulator that is not installed).

    ``error_type`` keeps the simulator's own error class name (``UnbuildableScenarioError``,
    ``BeamNGUnavailableError`` ...); ``files`` lists what was written anyway (BeamNG scenario files).
    """

    def __init__(self, reason: str, *, error_type: str, files: list[str] | None = None) -> None:
        self.reason = reason
        self.error_type = error_type
        self.files = files or []
        super().__init__(reason)


def make_simulator(kind: str, settings: SimSettings, options: dict[str, Any] | None = None) -> Simulator:
    """Build a simulator (in the process that will use it).

    Args:
        kind: ``metadrive`` or ``beamng``.
        settings: Run settings.
        options: Simulator-specific options (BeamNG home, host and port).
    """
    if kind == "metadrive":
        from runners.simulators.metadrive import MetaDriveSimulator

        return MetaDriveSimulator(settings=settings)
    if kind == "beamng":
        from runners.simulators.beamng import BeamNGSettings, BeamNGSimulator

        return BeamNGSimulator(settings=settings, beamng=BeamNGSettings(**(options or {})))
    raise BadInputError(f"unknown simulator {kind!r}: use metadrive or beamng")


# -- child side ---------------------------------------------------------------------------------
_warm: dict[str, Simulator] = {}


def _simulator(kind: str, settings: SimSettings, options: dict[str, Any] | None) -> Simulator:
    key = f"{kind}:{settings.model_dump_json()}:{options}"
    sim = _warm.get(key)
    if sim is None:
        for old in list(_warm.values()):  # one warm simulator per child (MetaDrive: one engine per process)
            with contextlib.suppress(Exception):
                old.__exit__(None, None, None)
        _warm.clear()
        sim = make_simulator(kind, settings, options)
        sim.__enter__()
        _warm[key] = sim
    return sim


def _serve(conn: Connection) -> None:
    """Child main loop: one request at a time until ``None`` or the pipe closes."""
    # Ctrl-C in a terminal signals the whole process group: the parent alone decides how its runs end (closing the
    # worker), so the child neither dies mid-run with a traceback nor has the parent start a new one to retry.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    while True:
        try:
            req = conn.recv()
        except (EOFError, OSError):
            break
        if req is None:
            break
        try:
            settings = SimSettings.model_validate_json(req["settings"])
            sim = _simulator(req["kind"], settings, req.get("options"))
            record = sim.run(
                Scenario.model_validate_json(req["scenario"]),
                RunSpec.model_validate_json(req["spec"]),
                out_dir=Path(req["out_dir"]),
            )
            conn.send({"ok": True, "record": record.model_dump_json()})
        except Exception as exc:
            conn.send(
                {
                    "ok": False,
                    "error_type": type(exc).__name__,
                    "reason": str(exc) or type(exc).__name__,
                    "bad_input": isinstance(exc, BadInputError),
                    "known": isinstance(exc, DrivemtError),
                    "files": [str(f) for f in getattr(exc, "files", []) or []],
                    "traceback": traceback.format_exc(limit=8),
                }
            )
    for sim in _warm.values():
        with contextlib.suppress(Exception):
            sim.__exit__(None, None, None)


# -- parent side --------------------------------------------------------------------------------
class SimWorker:
    """One warm simulator child process.

    Args:
        name: For logs.
        options: Simulator-specific options passed to :func:`make_simulator`.
    """

    def __init__(self, *, name: str = "sim-worker", options: dict[str, Any] | None = None) -> None:
        self.name = name
        self.options = options
        self._proc: Any = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()
        self.runs = 0
        self.restarts = 0
        self._closed = False

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child,), name=self.name, daemon=True)
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent

    def _kill(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        if self._proc is not None and self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join(5)
        self._proc, self._conn = None, None

    def run(
        self,
        kind: str,
        scenario: Scenario,
        spec: RunSpec,
        settings: SimSettings,
        out_dir: Path,
        *,
        timeout_s: float | None = None,
    ) -> RunRecord:
        """Run one spec in the child (blocking: call it from a thread).

        Raises:
            SimulatorRefusedError: The simulator refused the run for good.
            SimWorkerError: The child failed unexpectedly, died, or passed ``timeout_s``.
        """
        limit = timeout_s if timeout_s is not None else 120.0 + 10.0 * settings.duration_s
        request = {
            "kind": kind,
            "scenario": scenario.model_dump_json(),
            "spec": spec.model_dump_json(),
            "settings": settings.model_dump_json(),
            "out_dir": str(out_dir),
            "options": self.options,
        }
        with self._lock:
            if self._closed:
                raise SimWorkerError(f"{self.name} is closed: run {spec.run_id} of case {spec.case_id} not started")
            if self._proc is None or not self._proc.is_alive():
                if self._proc is not None:
                    self.restarts += 1
                self._kill()
                self._start()
                if self._closed:  # (closed while the child started: close() could not see it)
                    self._kill()
                    raise SimWorkerError(f"{self.name} closed while run {spec.run_id} of case {spec.case_id} started")
            assert self._conn is not None
            started = time.monotonic()
            try:
                self._conn.send(request)
                if not self._conn.poll(limit):
                    self._kill()
                    raise SimWorkerError(
                        f"run {spec.run_id} of case {spec.case_id} passed {limit:.0f} s; worker replaced"
                    )
                reply = self._conn.recv()
            except (EOFError, OSError, BrokenPipeError) as exc:
                code = self._proc.exitcode if self._proc is not None else None
                self._kill()
                raise SimWorkerError(
                    f"simulator process died during run {spec.run_id} of case {spec.case_id} (exit code {code}): {exc}"
                ) from exc
            self.runs += 1
        if reply["ok"]:
            return RunRecord.model_validate_json(reply["record"])
        if reply["bad_input"] or reply["known"]:  # drivemt's own errors are deliberate refusals: retrying cannot help
            raise SimulatorRefusedError(reply["reason"], error_type=reply["error_type"], files=reply["files"])
        log.warning(
            "simulation failed",
            worker=self.name,
            error_type=reply["error_type"],
            seconds=round(time.monotonic() - started, 2),
            traceback=reply["traceback"],
        )
        raise SimWorkerError(reply["reason"], error_type=reply["error_type"])

    def close(self) -> None:
        """Stop the child (it closes its simulator first). A run still in progress in another thread (work its
        agent has handed back on a stop) is cut short: its child is terminated rather than waited for, and that run
        fails with :class:`SimWorkerError`. A closed worker starts no child again."""
        self._closed = True
        if not self._lock.acquire(timeout=2.0):
            proc = self._proc
            if proc is not None and proc.is_alive():
                proc.terminate()
                proc.join(5)
                if proc.is_alive():
                    proc.kill()
                    proc.join(5)
            return
        try:
            if self._conn is not None and self._proc is not None and self._proc.is_alive():
                with contextlib.suppress(Exception):
                    self._conn.send(None)
                self._proc.join(10)
            self._kill()
        finally:
            self._lock.release()
