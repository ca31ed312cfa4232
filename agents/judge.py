"""Judge: decides what the runs of a crash case (and, later, detector tests) found.

For every completed run whose ego was in a collision it publishes a violation with the run's pictures
and record. It tallies each case's runs in a key-value group on the bus (so copies of the Judge on
several machines agree), and when the last run is in it publishes the case's verdict: was the reported
crash reproduced (by which ego and policy), how many violations, which runs found the first three,
and it writes the verdict and the batch's HTML report next to the runs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import structlog

from agents.progress import ThreadProgress
from agents.runtime import Agent
from bus import (
    Bus,
    CrashVerdict,
    ErrorDomain,
    Event,
    ProgressReported,
    SimCompleted,
    TLAugmented,
    TLVerdict,
    ViolationFound,
    derived_id,
)
from bus.events import TLVerdictPayload, ViolationPayload
from tools.crash.models import CaseVerdict, RunSummary
from tools.crash.report import write_batch_report
from tools.crash.verdict import case_verdict

__all__ = ["JudgeAgent"]

log = structlog.get_logger(__name__)


class JudgeAgent(Agent):
    """Judges runs.

    Args:
        bus: The bus (for the tallies of each case's runs).
        write_reports: Write ``verdict.json`` and the batch report next to the runs.
    """

    name: ClassVar[str] = "judge"
    consumes = (SimCompleted, TLAugmented)
    produces = (ViolationFound, CrashVerdict, TLVerdict, ProgressReported)
    tools = ("crash_verdict", "write_crash_report", "load_detector", "judge_detectors", "write_tl_report")
    error_domain = ErrorDomain.JUDGE

    def __init__(self, *, bus: Bus, write_reports: bool = True, max_violation_events: int = 1000) -> None:
        self.bus = bus
        self.write_reports = write_reports
        self.max_violation_events = max_violation_events
        self._detectors: dict[str, Any] = {}

    async def handle(self, event: Event) -> Sequence[Event]:
        """Judge one completed run (and, when it is the case's last, the case), or an augmented dataset."""
        if isinstance(event, TLAugmented):
            return await self._tl_augmented(event)
        assert isinstance(event, SimCompleted)
        return await self._sim_completed(event)

    # -- traffic lights ---------------------------------------------------------------------------
    def _detector(self, spec: str) -> Any:
        from runners.detectors import load_detector

        if spec not in self._detectors:
            self._detectors[spec] = load_detector(spec)
        return self._detectors[spec]

    async def _tl_augmented(self, event: TLAugmented) -> list[Event]:
        from tools.tl.augment import load_augmentation
        from tools.tl.judging import judge_detectors
        from tools.tl.metrics import DEFAULT_VIOLATION_THRESHOLD
        from tools.tl.report import write_tl_report

        p = event.payload
        req = p.request
        if not req.detectors:
            return []
        detectors = [await asyncio.to_thread(self._detector, spec) for spec in req.detectors]
        manifest = await asyncio.to_thread(load_augmentation, Path(p.manifest))
        threshold = req.threshold if req.threshold is not None else DEFAULT_VIOLATION_THRESHOLD
        out_dir = Path(p.out_dir).parent
        progress = ThreadProgress(
            bus=self.bus, source=event, producer=self.name, stage="tl-judge", unit="images", interval_s=0.0
        )
        result = await asyncio.to_thread(
            judge_detectors, manifest, detectors, out_dir=out_dir, threshold=threshold, progress=progress
        )
        await progress.flush()
        report = out_dir / "report.html"
        if self.write_reports:
            (out_dir / "results.json").write_text(result.model_dump_json(indent=1), encoding="utf-8")
            augmentation = {
                "images_per_second": p.images_per_second,
                "pairs": p.pairs,
                "seconds": p.seconds,
                "skipped": p.skipped,
            }
            await asyncio.to_thread(write_tl_report, result, report, augmentation=augmentation)
        out: list[Event] = []
        for i, v in enumerate(result.violations()[: self.max_violation_events]):
            out.append(
                ViolationFound(
                    **event.caused(event_id=derived_id(event.event_id, "tl-violation", v.detector, v.augmented_id)),
                    producer=self.name,
                    payload=ViolationPayload(
                        kind="tl",
                        item_id=v.original_id,
                        description=(
                            f"{v.detector} reads the lights differently after {v.code}: consistency "
                            f"{v.consistency:.2f} < {threshold} ({len(v.expected)} expected, "
                            f"{len(v.detections_augmented)} detected)"
                        ),
                        evidence=[x for x in (v.evidence, v.original_path, v.augmented_path) if x],
                        metrics={"consistency": v.consistency, "rank": float(i)},
                        details={"detector": v.detector, "transform": v.code, "augmented_id": v.augmented_id},
                    ),
                )
            )
        out.append(
            TLVerdict(
                **event.caused(event_id=derived_id(event.event_id, "tl-verdict")),
                producer=self.name,
                payload=TLVerdictPayload(
                    dataset=req.dataset,
                    detectors=[s.detector for s in result.summaries],
                    threshold=threshold,
                    images=result.images,
                    pairs=len(manifest.pairs),
                    violations={s.detector: s.violations for s in result.summaries},
                    map_original={s.detector: s.map_original for s in result.summaries},
                    map_augmented={s.detector: s.map_augmented for s in result.summaries},
                    report=str(report) if self.write_reports else None,
                    seconds=result.seconds,
                ),
            )
        )
        return out

    # -- crashes -------------------------------------------------------------------------------------
    async def _sim_completed(self, event: SimCompleted) -> list[Event]:
        p = event.payload
        r = p.record
        out: list[Event] = []
        if r.ego_collided:
            first = next((c for c in r.collisions if c.involves(r.spec.ego_id)), None)
            other = (first.b if first and first.a == r.spec.ego_id else first.a) if first else "?"
            out.append(
                ViolationFound(
                    **event.caused(event_id=derived_id(event.event_id, "violation")),
                    producer=self.name,
                    payload=ViolationPayload(
                        kind="crash",
                        item_id=f"{p.case_id}/{r.spec.run_id}",
                        description=(
                            f"ego {r.spec.ego_id} ({r.spec.policy}) collided with {other}"
                            + (f" at {first.t:.1f} s, {first.speed_a_mps * 3.6:.0f} km/h" if first else "")
                            + ("; the reported crash is reproduced" if r.reproduced else "")
                        ),
                        evidence=[x for x in (r.png, r.gif, r.record_path) if x],
                        metrics={"t": first.t if first else -1.0, "reproduced": float(r.reproduced)},
                        details={"case_id": p.case_id, "run_id": r.spec.run_id, "seed": r.spec.seed},
                    ),
                )
            )
        group = f"crash.{event.correlation_id}.{p.case_id}"
        parts = await self.bus.tally(group, r.spec.run_id, RunSummary.of(r, p.index).model_dump(mode="json"))
        if len(parts) >= p.total:
            verdict = case_verdict(p.case_id, [RunSummary.model_validate(v) for v in parts.values()])
            out.append(
                CrashVerdict(
                    correlation_id=event.correlation_id,
                    causation_id=event.event_id,
                    event_id=derived_id(group, "verdict"),
                    producer=self.name,
                    payload=verdict,
                )
            )
            if self.write_reports:
                await asyncio.to_thread(self._write, Path(p.case_dir), verdict)
        return out

    @staticmethod
    def _write(case_dir: Path, verdict: CaseVerdict) -> None:
        case_dir.mkdir(parents=True, exist_ok=True)
        (case_dir / "verdict.json").write_text(json.dumps(verdict.model_dump(mode="json"), indent=2), encoding="utf-8")
        try:
            write_batch_report(case_dir.parent.parent)
        except Exception as exc:  # a report that cannot be drawn must not lose the verdict
            log.warning("crash report failed", batch=str(case_dir.parent.parent), error=str(exc))
