"""TL-Augmenter: a submitted traffic-light dataset comes back augmented by TIGAUG's transformations.

The dataset is read in whatever format it is in (LISA, Bosch, YOLO, COCO, or drivemt's own manifest),
a seeded share of its images gets every requested transformation, and the augmented set is written
beside a manifest of (original, augmented) pairs, in drivemt's layout and in the input's format.
Progress is streamed as ``progress`` events while it works. A dataset that cannot be read at all is an
error event; single bad images are skipped and listed in the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import ClassVar

from agents.progress import ThreadProgress
from agents.runtime import Agent
from bus import Bus, ErrorDomain, ErrorReported, Event, ProgressReported, TLAugmented, TLDatasetSubmitted, derived_id
from bus.events import TLAugmentedPayload
from tools.common.artifacts import ArtifactStore, RunLayout
from tools.errors import BadInputError

__all__ = ["TLAugmenterAgent"]


class TLAugmenterAgent(Agent):
    """Augments traffic-light datasets.

    Args:
        bus: For progress events.
        store: Where the augmented set goes (``RunLayout.tl_augmented`` of the batch).
        progress_interval_s: Least seconds between progress events.
    """

    name: ClassVar[str] = "tl-augmenter"
    consumes = (TLDatasetSubmitted,)
    produces = (TLAugmented, ProgressReported, ErrorReported)
    error_domain = ErrorDomain.TL

    def __init__(self, *, bus: Bus, store: ArtifactStore, progress_interval_s: float = 1.0) -> None:
        self.bus = bus
        self.store = store
        self.progress_interval_s = progress_interval_s

    def _source(self, dataset: str, ref: str | None) -> Path:
        """The local dataset: the submitted path, or what the client uploaded (a file's whole folder comes along,
        since annotation files name images beside them)."""
        if ref is None:
            path = Path(dataset)
            if not path.is_absolute():  # it would resolve against the daemon's working folder
                raise BadInputError(f"dataset {dataset[:200]!r}: give an absolute path (the CLI sends one)")
            return path
        if self.store.exists(ref):  # an annotation file
            parent = str(PurePosixPath(ref).parent)
            if parent not in ("", "."):
                self.store.pull(parent)
            return self.store.local_path(ref)
        return self.store.pull(ref)

    async def handle(self, event: Event) -> Sequence[Event]:
        """Augment one dataset (a dataset that cannot be read raises a bad-input error)."""
        assert isinstance(event, TLDatasetSubmitted)
        from tools.tl.augment import augment_dataset
        from tools.tl.datasets import load_dataset
        from tools.tl.formats import FORMATS

        p = event.payload
        source = await asyncio.to_thread(self._source, p.dataset, p.dataset_ref)
        dataset = await asyncio.to_thread(load_dataset, source, p.format, split=p.split)
        out_ref = RunLayout.tl_augmented(event.correlation_id)
        out = self.store.local_path(out_ref)
        name = Path(p.dataset).name
        report = ThreadProgress(
            bus=self.bus,
            source=event,
            producer=self.name,
            stage="tl-augment",
            unit="images",
            interval_s=self.progress_interval_s,
        )
        export = dataset.format if dataset.format in FORMATS else None
        manifest = await asyncio.to_thread(
            augment_dataset,
            dataset,
            out=out,
            transforms=p.transforms,
            seed=p.seed,
            fraction=p.fraction,
            params=p.params or None,
            export_format=export,
            progress=lambda done, total: report(done, total, name),
        )
        await report.flush()
        await asyncio.to_thread(self.store.push, out_ref)  # for a Judge on another machine (nothing to do locally)
        return [
            TLAugmented(
                **event.caused(event_id=derived_id(event.event_id, "augmented")),
                producer=self.name,
                payload=TLAugmentedPayload(
                    request=p,
                    format=dataset.format,
                    out_ref=out_ref,
                    manifest_ref=f"{out_ref}/manifest.json",
                    images_in=manifest.images_in,
                    pairs=len(manifest.pairs),
                    per_transform=manifest.per_transform(),
                    skipped=[s.model_dump() for s in manifest.skipped],
                    seconds=manifest.seconds,
                    images_per_second=(len(manifest.pairs) / manifest.transform_seconds)
                    if manifest.transform_seconds
                    else 0.0,
                ),
            )
        ]
