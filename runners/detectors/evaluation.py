"""Scoring a detector against a dataset's ground truth (mAP@[.5:.95], as TIGAUG Fig. 3)."""

from __future__ import annotations

from collections.abc import Callable

from tools.tl.detection import EVAL_CONF, Detector
from tools.tl.images import read_image
from tools.tl.metrics import MapReport, map_report
from tools.tl.models import TLBox, TLDataset, TLImage

__all__ = ["detect_images", "evaluate_detector"]

"""Confidence floor when measuring mAP: low, as COCO-style evaluation expects the whole ranked list."""


def detect_images(
    detector: Detector,
    dataset: TLDataset,
    images: list[TLImage],
    *,
    conf: float,
    batch: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> list[list[TLBox]]:
    """Run the detector over dataset images, a batch at a time (only one batch is decoded at once)."""
    out: list[list[TLBox]] = []
    for start in range(0, len(images), batch):
        chunk = images[start : start + batch]
        arrays = [read_image(dataset.image_path(i), image_id=i.image_id) for i in chunk]
        out.extend(detector.predict(arrays, conf=conf))
        if progress is not None:
            progress(len(out), len(images))
    return out


def evaluate_detector(
    detector: Detector, dataset: TLDataset, *, split: str | None = "test", conf: float = EVAL_CONF, batch: int = 8
) -> MapReport:
    """mAP@[.5:.95] of a detector on one split (all images when ``split`` is None).

    Raises:
        UnreadableImageError: An image that cannot be read.
    """
    images = [i for i in dataset.images if split is None or i.split == split]
    preds = detect_images(detector, dataset, images, conf=conf, batch=batch)
    return map_report(preds, [i.boxes for i in images])
