"""SimRunner: takes single runs from the shared work queue and simulates them in a warm child process.

Every copy of the agent owns one :class:`runners.simulators.worker.SimWorker` (one MetaDrive engine), so
``copies: N`` means N simulations in parallel on this machine, and more daemons pointed at the same
NATS add more. A run the simulator refuses for good (a road it cannot build, BeamNG.tech not
installed) becomes an error event *and* a completed run carrying the error, so the case's verdict
still completes; a worker that dies or hangs is replaced and the run tried once more before it is
reported the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import structlog

from agents.runtime import Agent, error_event
from bus import ErrorDomain, ErrorReported, Event, SimCompleted, SimRequested, derived_id
from bus.events import SimCompletedPayload
from runners.simulators.worker import SimulatorRefusedError, SimWorker, SimWorkerError
from tools.common.artifacts import ArtifactStore, RunLayout
from tools.crash.models import RunRecord

__all__ = ["SimRunnerAgent"]

log = structlog.get_logger(__name__)


class SimRunnerAgent(Agent):
    """Simulates one run at a time.

    Args:
        store: Where the runs' records and pictures go (the simulator writes into ``store.local_path``).
        instance: Name of this copy (for records and logs).
        options: Simulator-specific options (BeamNG home, host, port).
        attempts: Tries per run when the worker process fails unexpectedly.
    """

    name: ClassVar[str] = "sim-runner"
    consumes = (SimRequested,)
    produces = (SimCompleted, ErrorReported)
    error_domain = ErrorDomain.SIM

    def __init__(
        self,
        *,
        store: ArtifactStore,
        instance: str = "sim",
        options: dict[str, Any] | None = None,
        attempts: int = 2,
    ) -> None:
        self.store = store
        self.instance = instance
        self.options = options
        self.attempts = max(1, attempts)
        self.worker = SimWorker(name=f"drivemt-{instance}", options=options)

    async def teardown(self) -> None:
        """Stop the simulator process."""
        await asyncio.to_thread(self.worker.close)

    async def handle(self, event: Event) -> Sequence[Event]:
        """Run one spec; report refusals and repeated failures as an error plus a failed record."""
        assert isinstance(event, SimRequested)
        p = event.payload
        failure: Exception | None = None
        folder = self.store.local_path(p.case_ref)
        folder.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, self.attempts + 1):
            try:
                record = await asyncio.to_thread(self.worker.run, p.simulator, p.scenario, p.spec, p.settings, folder)
                record = await asyncio.to_thread(self._store_record, p.case_ref, record)
                return [self._completed(event, record)]
            except SimulatorRefusedError as exc:
                failure = exc
                break
            except SimWorkerError as exc:
                failure = exc
                log.warning(
                    "simulation attempt failed", case_id=p.case_id, run=p.spec.run_id, attempt=attempt, error=str(exc)
                )
        assert failure is not None
        error_type = getattr(failure, "error_type", type(failure).__name__)
        record = RunRecord(
            spec=p.spec,
            simulator=p.simulator,
            reported_pairs=list(p.scenario.collisions),
            error=f"{error_type}: {failure}",
        )
        record = await asyncio.to_thread(self._store_record, p.case_ref, record)
        err = error_event(
            event,
            agent=self.name,
            domain=self.error_domain,
            exc=failure,
            item_id=f"{p.case_id}/{p.spec.run_id}",
            input_subject=None,
        )
        err.payload.error_type = error_type
        if isinstance(failure, SimulatorRefusedError) and failure.files:
            err.payload.excerpt = "files written: " + ", ".join(failure.files)[:400]
        return [err, self._completed(event, record)]

    def _store_record(self, case_ref: str, record: RunRecord) -> RunRecord:
        """Put the run's pictures and record into the store under the layout's names; the record then names refs.

        Every run, failed ones included, leaves its record where the batch report looks.
        """
        run_id = record.spec.run_id
        update: dict[str, Any] = {}
        for field, suffix in (("png", ".png"), ("gif", ".gif")):
            local = getattr(record, field)
            update[field] = self.store.put(RunLayout.run_file(case_ref, run_id, suffix), Path(local)) if local else None
        update["record_path"] = RunLayout.run_file(case_ref, run_id, ".json")
        stored = record.model_copy(update=update)
        self.store.put(stored.record_path or "", stored.model_dump_json(indent=1))
        return stored

    def _completed(self, event: SimRequested, record: RunRecord) -> SimCompleted:
        p = event.payload
        return SimCompleted(
            **event.caused(event_id=derived_id(event.event_id, "completed")),
            producer=self.name,
            payload=SimCompletedPayload(
                case_id=p.case_id,
                record=record,
                index=p.index,
                total=p.total,
                simulator=record.simulator or p.simulator,
                worker=self.instance,
                case_ref=p.case_ref,
                batch_size=p.batch_size,
            ),
        )
