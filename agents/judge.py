"""Judge: one agent that decides what the pipelines found, with one handler per consumed event type.

* ``sim.completed`` (crash runs): a run whose ego collided is a violation, published with its pictures and
  record; each case's runs are tallied in a key-value group on the bus (so copies of the Judge on several
  machines agree), and the last run in yields the case's verdict (:func:`tools.crash.verdict.case_verdict`).
* ``crashes.verdict`` (the Judge's own, and the CrashExtractor's for reports it could not read): each case
  is tallied into its batch, running totals go out as progress, and when the batch's last case is in the
  batch report is drawn, once.
* ``tl.augmented`` (traffic lights): every named detector is run on originals and augmented images and
  TIGAUG's relations are checked (:mod:`tools.tl.judging`).
* ``followups.validated`` (AutoMT): every driving model of the submission runs on the source and the
  follow-up (source predictions are cached in the store and shared), and each model's verdict on the MR's
  expected behaviour is drawn by :func:`tools.mt.judging.judge_models`; an invalid follow-up is not judged.
  ``followups.generated`` without a follow-up ends its case unjudged. Every case ends with a
  ``followups.judged`` verdict, is tallied into its batch, and the batch's last case brings its totals.

The judging rules live in each domain's ``tools`` package; this agent only routes, tallies and publishes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar

import structlog

from agents.progress import ThreadProgress
from agents.runtime import Agent, error_event, handles
from bus import (
    Bus,
    CrashVerdict,
    ErrorDomain,
    ErrorReported,
    Event,
    FollowupGenerated,
    FollowupJudged,
    FollowupValidated,
    MTBatchJudged,
    ProgressReported,
    SimCompleted,
    TLAugmented,
    TLVerdict,
    ViolationFound,
    derived_id,
)
from bus.events import (
    FollowupJudgedPayload,
    MTBatchJudgedPayload,
    ProgressPayload,
    TLVerdictPayload,
    ViolationPayload,
)
from runners.ads.models import DrivingModelError
from runners.ads.pool import ModelPool
from runners.ads.spec import find_specs
from tools.common.artifacts import ArtifactStore, BadArtifactRefError, RunLayout, check_ref
from tools.crash.models import CaseVerdict, RunSummary
from tools.crash.report import write_batch_report
from tools.crash.verdict import case_verdict
from tools.errors import BadInputError
from tools.mt.judging import judge_models
from tools.mt.models import DrivingCase, FollowUp, ModelPrediction
from tools.mt.settings import MTJudgeSettings

if TYPE_CHECKING:
    from tools.tl.augment import AugmentationManifest

__all__ = ["JudgeAgent"]

log = structlog.get_logger(__name__)


class JudgeAgent(Agent):
    """Judges runs, cases and detectors.

    Args:
        bus: The bus (for the tallies of each case's runs and each batch's cases).
        store: Where verdicts, reports and evidence go.
        write_reports: Write ``verdict.json`` and the batch reports into the store.
        max_violation_events: Most violation events per traffic-light dataset.
        mt: The driving models judged when a submission names none, and the band.
    """

    name: ClassVar[str] = "judge"
    produces = (ViolationFound, CrashVerdict, TLVerdict, ProgressReported, FollowupJudged, MTBatchJudged, ErrorReported)
    error_domain = ErrorDomain.JUDGE

    def __init__(
        self,
        *,
        bus: Bus,
        store: ArtifactStore,
        write_reports: bool = True,
        max_violation_events: int = 1000,
        mt: MTJudgeSettings | None = None,
    ) -> None:
        self.bus = bus
        self.store = store
        self.write_reports = write_reports
        self.max_violation_events = max_violation_events
        self.mt = mt or MTJudgeSettings()
        self._detectors: dict[str, Any] = {}
        self._pool = ModelPool(store)
        self._default_models = [str(p.resolve()) for m in self.mt.models for p in find_specs(m)]

    # -- crashes: one run ------------------------------------------------------------------------
    @handles(SimCompleted)
    async def on_sim_completed(self, event: SimCompleted) -> list[Event]:
        """Judge one completed run; when it is the case's last, judge the case."""
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
            verdict = case_verdict(
                p.case_id,
                [RunSummary.model_validate(v) for v in parts.values()],
                case_ref=p.case_ref,
                batch_size=p.batch_size,
            )
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
                await asyncio.to_thread(self._write_verdict, verdict)
        return out

    def _batch_progress(
        self, event: Event, tag: str, stage: str, done: int, total: int | None, message: str, report: str | None = None
    ) -> ProgressReported:
        """A batch's progress after one more case (its id derived from the input's, so a redelivery repeats it);
        ``report`` links the batch's report once it is drawn."""
        return ProgressReported(
            **event.caused(event_id=derived_id(event.event_id, tag)),
            producer=self.name,
            payload=ProgressPayload(stage=stage, done=done, total=total, unit="cases", message=message, report=report),
        )

    def _write_verdict(self, verdict: CaseVerdict) -> None:
        if verdict.case_ref:
            self.store.put(RunLayout.verdict_file(verdict.case_ref), verdict.model_dump_json(indent=2))

    # -- crashes: one batch ----------------------------------------------------------------------
    @handles(CrashVerdict)
    async def on_crash_verdict(self, event: CrashVerdict) -> list[Event]:
        """Tally a judged case into its batch; draw the batch report once its last case is in."""
        v = event.payload
        batch = event.correlation_id
        if v.error and self.write_reports:  # a case that never reached a simulator still shows in the report
            case_ref = v.case_ref or RunLayout.crash_case(batch, v.case_id)
            await asyncio.to_thread(self.store.put, RunLayout.verdict_file(case_ref), v.model_dump_json(indent=2))
        summary = {"reproduced": v.reproduced, "violations": v.violations, "runs": v.runs, "error": v.error}
        cases = await self.bus.tally(f"crashbatch.{batch}", v.case_id, summary)
        total = v.batch_size
        reproduced = sum(1 for c in cases.values() if c["reproduced"])
        violations = sum(int(c["violations"]) for c in cases.values())
        report: str | None = None
        if self.write_reports and (total is None or len(cases) >= total):
            # Unknown batch size (a raw injection): redraw per verdict; otherwise exactly once, at the end.
            try:
                report = await asyncio.to_thread(write_batch_report, self.store, batch)
            except Exception as exc:  # a report that cannot be drawn must not lose the verdicts
                log.warning("crash report failed", batch=batch, error=str(exc))
        message = f"{reproduced} reproduced, {violations} violation(s) so far"
        return [self._batch_progress(event, "batch-progress", "crash-batch", len(cases), total, message, report)]

    # -- traffic lights --------------------------------------------------------------------------
    def _detector(self, spec: str) -> Any:
        from runners.detectors import load_detector

        if spec not in self._detectors:
            self._detectors[spec] = load_detector(self._detector_file(spec), name=spec)
        return self._detectors[spec]

    @staticmethod
    def _model_ref(spec: str) -> bool:
        """Whether a submitted driving-model spec is an artefact ref under ``models/`` (as ``import_models`` puts
        them), not a path of this machine."""
        try:
            return check_ref(spec).startswith("models/")
        except BadArtifactRefError:
            return False

    def _detector_file(self, spec: str) -> str:
        """The ``KIND:PATH`` to load for a submitted ``KIND:REF``: the weights the store holds under the ref, or a
        model config the ultralytics wheel ships (``yolo:yolov8n.yaml``, built untrained).

        Raises:
            DetectorSpecError: For a path of this machine (an event may not make the Judge unpickle a file of its
                choosing; ``drivemt submit tl`` and the console's ``/tl`` upload the weights and name their ref)
                and for a ref the store does not hold.
        """
        from runners.detectors.errors import DetectorSpecError

        kind, sep, rest = spec.partition(":")
        rest = rest.strip()
        if not sep or not rest:
            return spec  # malformed: load_detector says how
        if "/" not in rest and "\\" not in rest and rest.endswith((".yaml", ".yml")):
            return spec  # a packaged model config, or no such config: load_detector says which
        try:
            ref = check_ref(rest)
        except BadArtifactRefError:
            ref = None
        if ref is None or not ref.startswith(f"{RunLayout.DETECTORS}/"):
            raise DetectorSpecError(
                spec[:300],
                f"a submission names detectors by artefact ref ({RunLayout.DETECTORS}/...): `drivemt submit tl "
                "--detector KIND:PATH` uploads the weights; the Judge loads no path an event names",
            )
        if not self.store.exists(ref):
            raise DetectorSpecError(spec[:300], "the artefact store holds no such detector")
        self.store.pull(str(PurePosixPath(ref).parent))
        return f"{kind}:{self.store.local_path(ref)}"

    def _local_manifest(self, out_ref: str, manifest_ref: str, dataset_ref: str | None) -> AugmentationManifest:
        """The augmentation's manifest with its images on this machine.

        The augmenter may have run elsewhere: its augmented set (and the uploaded originals) are fetched, and paths
        under the augmenter's store folder are re-rooted to this store's folder (same refs, another root).
        """
        from tools.tl.augment import load_augmentation, reroot_manifest

        self.store.pull(out_ref)
        if dataset_ref is not None:
            self.store.pull(
                dataset_ref if not self.store.exists(dataset_ref) else str(PurePosixPath(dataset_ref).parent)
            )
        local = self.store.local_path(manifest_ref)
        manifest = load_augmentation(local)
        here = Path(str(local)[: -len(manifest_ref)]) if str(local).endswith(manifest_ref) else None
        return reroot_manifest(manifest, out_ref=out_ref, root=here) if here is not None else manifest

    @handles(TLAugmented)
    async def on_tl_augmented(self, event: TLAugmented) -> list[Event]:
        """Run the submission's detectors on an augmented dataset and check TIGAUG's relations."""
        from tools.tl.judging import judge_detectors
        from tools.tl.metrics import DEFAULT_VIOLATION_THRESHOLD
        from tools.tl.report import write_tl_report

        p = event.payload
        req = p.request
        if not req.detectors:
            return []
        detectors = [await asyncio.to_thread(self._detector, spec) for spec in req.detectors]
        manifest = await asyncio.to_thread(self._local_manifest, p.out_ref, p.manifest_ref, req.dataset_ref)
        threshold = req.threshold if req.threshold is not None else DEFAULT_VIOLATION_THRESHOLD
        tl_ref = str(PurePosixPath(p.manifest_ref).parent.parent)
        out_dir = self.store.local_path(tl_ref)
        progress = ThreadProgress(
            bus=self.bus, source=event, producer=self.name, stage="tl-judge", unit="images", interval_s=0.0
        )
        result = await asyncio.to_thread(
            judge_detectors, manifest, detectors, out_dir=out_dir, threshold=threshold, progress=progress
        )
        await progress.flush()
        report_ref = f"{tl_ref}/report.html"
        if self.write_reports:
            self.store.put(f"{tl_ref}/results.json", result.model_dump_json(indent=1))
            augmentation = {
                "images_per_second": p.images_per_second,
                "pairs": p.pairs,
                "seconds": p.seconds,
                "skipped": p.skipped,
            }
            await asyncio.to_thread(
                write_tl_report, result, self.store.local_path(report_ref), augmentation=augmentation
            )
        await asyncio.to_thread(self.store.push, tl_ref)  # evidence, results and report, for a store on the bus

        def ref(path: str | None) -> str | None:
            """The ref of a file the judging wrote under the test's folder (None for files outside it)."""
            if not path:
                return None
            try:
                return f"{tl_ref}/{Path(path).resolve().relative_to(out_dir.resolve()).as_posix()}"
            except ValueError:
                return None

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
                        evidence=[x for x in (ref(v.evidence), ref(v.augmented_path)) if x],
                        metrics={"consistency": v.consistency, "rank": float(i)},
                        details={
                            "detector": v.detector,
                            "transform": v.code,
                            "augmented_id": v.augmented_id,
                            "original": v.original_path,
                        },
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
                    report=report_ref if self.write_reports else None,
                    seconds=result.seconds,
                ),
            )
        )
        return out

    # -- AutoMT: follow-ups ----------------------------------------------------------------------
    @handles(FollowupGenerated)
    async def on_followup_generated(self, event: FollowupGenerated) -> list[Event]:
        """A case that got no follow-up ends here, unjudged (one with a follow-up goes to the validity check)."""
        p = event.payload
        if p.followup is not None:
            return []
        reason = f"no follow-up ({p.status.replace('_', ' ')}): {p.reason}"
        return await self._mt_end(event, p.case, None, status="not judged", reason=reason, valid=False)

    @handles(FollowupValidated)
    async def on_followup_validated(self, event: FollowupValidated) -> list[Event]:
        """Run the driving models on a valid follow-up and its source, and judge each against the MR."""
        p = event.payload
        follow = p.followup
        source = follow.source
        if not p.validity.valid:
            reason = "invalid follow-up (" + ", ".join(c.replace("_", " ") for c in p.validity.failing()) + ")"
            if p.validity.error is not None:
                reason = f"the follow-up could not be checked: {p.validity.error}"
            return await self._mt_end(event, source, follow, status="not judged", reason=reason, valid=False)
        specs = p.models or self._default_models
        if not specs:
            return await self._mt_end(
                event, source, follow, status="not judged", reason="no driving models given", valid=True
            )
        out: list[Event] = []
        src: dict[str, ModelPrediction] = {}
        fol: dict[str, ModelPrediction] = {}
        errors: list[str] = []
        for spec in specs:
            try:
                if p.models and not self._model_ref(spec):
                    raise DrivingModelError(
                        Path(spec).stem[:80],
                        "a submission names driving models by artefact ref (models/...): `drivemt submit cases "
                        "--models DIR` uploads them; the Judge loads no path an event names",
                    )
                s_pred = await asyncio.to_thread(self._pool.predict, spec, source)
                f_pred = await asyncio.to_thread(self._pool.predict, spec, follow.case, cache=False)
            except (DrivingModelError, BadInputError) as exc:
                errors.append(str(exc))
                out.append(self._mt_error(event, follow, exc))
                continue
            except Exception as exc:  # one model's own failure costs that model alone, not the others' verdicts
                failed = DrivingModelError(
                    Path(spec).stem[:80], f"failed on case {source.case_id}: {type(exc).__name__}: {exc}"[:400]
                )
                errors.append(str(failed))
                out.append(self._mt_error(event, follow, failed))
                continue
            src[s_pred.model], fol[f_pred.model] = s_pred, f_pred
        policy = p.band or self.mt.band
        verdicts = judge_models(follow.mr.expected_behavior, src, fol, policy=policy, floor=self.mt.floor)
        for v in verdicts:
            if not v.violation:
                continue
            keys = [source.frames[0], source.frames[-1], follow.case.frames[0], follow.case.frames[-1]]
            out.append(
                ViolationFound(
                    **event.caused(event_id=derived_id(event.event_id, "mt-violation", v.model)),
                    producer=self.name,
                    payload=ViolationPayload(
                        kind="mr",
                        item_id=follow.followup_id,
                        description=f"{v.model} breaks '{v.behaviour}' after {follow.mr.manipulation}: {v.reason}",
                        evidence=keys,
                        metrics={
                            k: float(x)
                            for k, x in (
                                ("band", v.band_value),
                                ("source", v.source),
                                ("followup", v.followup),
                                ("change", v.change),
                            )
                            if x is not None
                        },
                        details={
                            "model": v.model,
                            "mr": follow.mr.gherkin,
                            "behaviour": v.behaviour,
                            "band": v.band,
                            "method": follow.mr.method,
                            "source_case": source.case_id,
                            "source_prediction": src[v.model].model_dump(),
                            "followup_prediction": fol[v.model].model_dump(),
                        },
                    ),
                )
            )
        status = "judged" if verdicts else "not judged"
        reason = "" if verdicts else "no driving model could judge it"
        out += await self._mt_end(
            event,
            source,
            follow,
            status=status,
            reason=reason,
            valid=True,
            verdicts=verdicts,
            policy=policy,
            src=list(src.values()),
            fol=list(fol.values()),
            errors=errors,
        )
        return out

    def _mt_error(self, event: FollowupValidated, follow: FollowUp, exc: Exception) -> ErrorReported:
        """An error event naming the model that could not judge (the other models' verdicts still come out)."""
        model = str(getattr(exc, "model", type(exc).__name__))
        return error_event(
            event, agent=self.name, domain=ErrorDomain.JUDGE, exc=exc, item_id=follow.followup_id, index=model
        )

    async def _mt_end(
        self,
        event: FollowupGenerated | FollowupValidated,
        case: DrivingCase,
        follow: FollowUp | None,
        *,
        status: str,
        reason: str,
        valid: bool,
        verdicts: list[Any] | None = None,
        policy: str | None = None,
        src: list[ModelPrediction] | None = None,
        fol: list[ModelPrediction] | None = None,
        errors: list[str] | None = None,
    ) -> list[Event]:
        """The case's verdict event, its tally into the batch, and the batch's totals when it is the last."""
        p = event.payload
        payload = FollowupJudgedPayload(
            **p.batch_fields(),
            case=case,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            followup=follow,
            valid=valid,
            verdicts=verdicts or [],
            band_policy=policy or p.band or self.mt.band,  # type: ignore[arg-type]
            source_predictions=src or [],
            followup_predictions=fol or [],
            model_errors=errors or [],
        )
        out: list[Event] = [
            FollowupJudged(
                **event.caused(event_id=derived_id(event.event_id, "judged")), producer=self.name, payload=payload
            )
        ]
        batch = event.correlation_id
        summary = {
            "followup": follow is not None,
            "valid": valid,
            "judged": [v.model for v in payload.verdicts if v.verdict in ("ok", "violation")],
            "violations": payload.violations,
            "term": follow.mr.term if (follow is not None and valid) else None,
        }
        cases = await self.bus.tally(f"mtbatch.{batch}", case.case_id, summary)
        total = p.batch_size
        valid_n = sum(1 for c in cases.values() if c["valid"])
        violations: dict[str, int] = {}
        for c in cases.values():
            for m in c["judged"]:
                violations.setdefault(m, 0)
            for m in c["violations"]:
                violations[m] = violations.get(m, 0) + 1
        out.append(
            self._batch_progress(
                event,
                "mt-batch-progress",
                "mt-batch",
                len(cases),
                total,
                f"{valid_n} valid follow-ups, {sum(violations.values())} violation(s) so far",
            )
        )
        if total is not None and len(cases) >= total:
            out.append(
                MTBatchJudged(
                    **event.caused(event_id=derived_id(batch, "mt-batch-judged")),
                    producer=self.name,
                    payload=MTBatchJudgedPayload(
                        **p.batch_fields(),
                        cases=len(cases),
                        followups=sum(1 for c in cases.values() if c["followup"]),
                        valid=valid_n,
                        violations=violations,
                        violation_rate={m: n / len(cases) for m, n in violations.items()},
                        distinct_manipulations=len({c["term"] for c in cases.values() if c["term"]}),
                    ),
                )
            )
        return out
