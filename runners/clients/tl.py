"""Submitting a traffic-light dataset to a daemon and waiting for its augmented set and verdict."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bus import (
    Bus,
    ErrorDomain,
    ErrorReported,
    Event,
    ProgressReported,
    TLAugmented,
    TLDatasetSubmitted,
    TLVerdict,
)
from runners.clients.collector import Collector
from tools.common.artifacts import ArtifactStore, RunLayout

__all__ = ["TLOutcome", "import_detectors", "upload_dataset", "wait_for_tl"]


@dataclass
class TLOutcome:
    """What a submitted dataset came to."""

    submitted: TLDatasetSubmitted
    augmented: TLAugmented | None = None
    verdict: TLVerdict | None = None
    errors: list[ErrorReported] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """An error, or the augmented set (and the verdict when detectors were named)."""
        if self.errors:
            return True
        if self.augmented is None:
            return False
        return self.verdict is not None or not self.submitted.payload.detectors

    def lines(self, runs_dir: Path | None = None) -> list[str]:
        """A few lines for people (artefact refs shown under ``runs_dir`` when given)."""
        out = [f"[red]error[/]: {e.payload.reason}" for e in self.errors]
        if self.augmented is not None:
            out.append(self.augmented.summary)
        if self.verdict is not None:
            v = self.verdict.payload
            out.append(self.verdict.summary)
            for det in v.detectors:
                worst = sorted(v.map_augmented.get(det, {}).items(), key=lambda kv: kv[1])[:3]
                out.append(
                    f"  {det}: mAP {v.map_original.get(det, 0):.3f} on originals; lowest "
                    + ", ".join(f"{c} {m:.3f}" for c, m in worst)
                )
            if v.report:
                out.append(f"report: {runs_dir / v.report if runs_dir else v.report}")
        return out


async def wait_for_tl(
    bus: Bus,
    event: TLDatasetSubmitted,
    *,
    timeout: float,
    on_progress: Callable[[int, int], None] | None = None,
) -> TLOutcome:
    """Publish ``event`` and wait for its outcome (subscribing first, so nothing is missed)."""
    outcome = TLOutcome(submitted=event)
    s = bus.subjects

    def on_event(ev: Event) -> None:
        if isinstance(ev, TLAugmented):
            outcome.augmented = ev
        elif isinstance(ev, TLVerdict):
            outcome.verdict = ev
        elif isinstance(ev, ErrorReported):
            outcome.errors.append(ev)
        elif isinstance(ev, ProgressReported) and on_progress is not None:
            on_progress(ev.payload.done, ev.payload.total or ev.payload.done)

    subjects = [s.tl_augmented, s.tl_verdict, s.errors(ErrorDomain.TL), s.errors(ErrorDomain.JUDGE), s.progress]
    async with Collector(bus, event.correlation_id, subjects, on_event) as collector:
        await bus.publish(event)
        await collector.wait(lambda: outcome.complete, timeout=timeout)
    return outcome


def import_detectors(store: ArtifactStore, specs: Sequence[str]) -> list[str]:
    """Put the weights of ``KIND:PATH`` detectors into the artefact store once, by content, and name them there.

    A submission names detectors by artefact ref (``yolo:detectors/<digest>/best.pt``): the Judge loads what the
    store holds, on any machine, and never a path an event names on its own machine (a checkpoint is unpickled).
    A spec whose path is no local file (``yolo:yolov8n.yaml``, a model config the ultralytics wheel ships, or a
    mistake) is passed on as it is, for the Judge to build or to refuse with the reason.

    Returns:
        The specs to submit, in order.
    """
    out = []
    for spec in specs:
        kind, sep, rest = spec.partition(":")
        path = Path(rest.strip()).expanduser()
        if not sep or not rest.strip() or not path.is_file():
            out.append(spec)
            continue
        with path.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()[:16]
        ref = f"{RunLayout.DETECTORS}/{digest}/{path.name}"
        if not store.exists(ref):
            store.put(ref, path)
        out.append(f"{kind.strip().lower()}:{ref}")
    return out


def upload_dataset(store: ArtifactStore, dataset: Path, batch: str) -> str:
    """Put a traffic-light dataset into the artefact store for workers on other machines: its folder (for an
    annotation file, the folder holding it, since it names images beside it) under ``RunLayout.tl_input``.

    Returns:
        The ref of the dataset itself (the folder, or the annotation file), for ``TLDatasetPayload.dataset_ref``.
    """
    root = dataset if dataset.is_dir() else dataset.parent
    base = RunLayout.tl_input(batch)
    for f in sorted(root.rglob("*")):
        if f.is_file():
            store.put(f"{base}/{f.relative_to(root).as_posix()}", f)
    return base if dataset.is_dir() else f"{base}/{dataset.name}"
