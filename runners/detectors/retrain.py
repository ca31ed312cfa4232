"""Retraining a traffic-light detector with augmented images (TIGAUG RQ2).

The dataset's train split is augmented and a seeded share of the augmented images joins the original
training images; a detector is trained on that, and both it and the baseline (the given detector, or one
trained the same way on the original images alone) are scored with mAP@[.5:.95] on the original test split
and on each transformation's augmented test split. The question TIGAUG asks: does training on augmented
data make a detector better on augmented (harder) images without making it worse on ordinary ones?
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from runners.detectors import load_detector, train_detector
from runners.detectors.evaluation import evaluate_detector
from runners.detectors.yolo import YoloTrainSettings
from tools.tl.augment import augment_dataset
from tools.tl.errors import EmptyDatasetError
from tools.tl.models import TRANSFORM_CODES, TLDataset, TLImage

__all__ = ["RetrainResult", "retrain_with_augmentation", "split_dataset"]

ProgressFn = Callable[[str], None]


class RetrainResult(BaseModel):
    """Baseline and retrained detector on original and augmented test images."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    fraction: float = Field(description="Share of the augmented training images added.")
    transforms: list[str]
    train_images: int = Field(description="Original training images.")
    augmented_train_images: int = Field(description="Augmented images added to training.")
    test_images: int
    baseline: str = Field(description="The baseline detector's spec.")
    retrained: str = Field(description="The retrained detector's spec.")
    map_original: dict[str, float] = Field(description="'baseline'/'retrained' -> mAP on the original test split.")
    map_augmented: dict[str, dict[str, float]] = Field(
        description="'baseline'/'retrained' -> transformation -> mAP on its augmented test images."
    )
    seconds: dict[str, float] = Field(default_factory=dict)


def split_dataset(dataset: TLDataset, *, seed: int = 0, test_share: float = 0.2) -> tuple[list[TLImage], list[TLImage]]:
    """(train, test) images: the dataset's own splits, else a seeded split of ``test_share`` for testing."""
    train = [i for i in dataset.images if i.split in ("train", None)]
    test = [i for i in dataset.images if i.split == "test"]
    if test and train:
        return train, test
    images = list(dataset.images)
    order = np.random.default_rng(seed).permutation(len(images))
    n_test = max(1, round(test_share * len(images)))
    test_idx = set(order[:n_test].tolist())
    return [im for i, im in enumerate(images) if i not in test_idx], [
        im for i, im in enumerate(images) if i in test_idx
    ]


def _absolute(dataset: TLDataset, images: Sequence[TLImage], split: str) -> list[TLImage]:
    return [i.model_copy(update={"path": str(dataset.image_path(i).resolve()), "split": split}) for i in images]


def retrain_with_augmentation(
    dataset: TLDataset,
    *,
    out: Path,
    kind: str = "yolo",
    baseline: str | None = None,
    transforms: Sequence[str] = TRANSFORM_CODES,
    fraction: float = 0.1,
    epochs: int = 30,
    imgsz: int = 320,
    time_limit_s: float | None = 600.0,
    yolo: YoloTrainSettings | None = None,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> RetrainResult:
    """Train with augmented data and compare with the baseline on original and augmented test images.

    Args:
        dataset: A labelled dataset with train and test splits (or split here, 80/20, seeded).
        out: Output folder (augmented sets, trained weights, results).
        kind: Detector kind to train: yolo, frcnn or ssdlite.
        baseline: The detector to compare with (``KIND:PATH``); trained on the original images alone with
            the same settings when None.
        transforms: TIGAUG codes to augment with.
        fraction: Share of the augmented training images added to the original ones (TIGAUG used 10-50 %).
        epochs: Epoch cap per training.
        imgsz: Training size.
        time_limit_s: Budget per training run.
        yolo: ultralytics settings.
        seed: Seeds sampling and training.
        progress: Called with a line of text at each stage.
    """
    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    train, test = split_dataset(dataset, seed=seed)
    if not train or not test:
        raise EmptyDatasetError(dataset.name, "needs both training and test images")
    val = [i for i in dataset.images if i.split == "val"]
    base_images = _absolute(dataset, train, "train") + _absolute(dataset, val, "val")
    test_ds = TLDataset(name=f"{dataset.name}-test", format="drivemt", images=_absolute(dataset, test, "test"))
    train_ds = TLDataset(name=f"{dataset.name}-train", format="drivemt", images=_absolute(dataset, train, "train"))

    say(f"augmenting {len(test)} test images with {len(transforms)} transformation(s)")
    t0 = time.perf_counter()
    aug_test = augment_dataset(test_ds, out=out / "augmented_test", transforms=transforms, seed=seed)
    say(f"augmenting {fraction:.0%} of {len(train)} training images")
    aug_train = augment_dataset(
        train_ds, out=out / "augmented_train", transforms=transforms, seed=seed + 1, fraction=min(1.0, fraction)
    )
    seconds["augment"] = time.perf_counter() - t0
    # TIGAUG adds a share of all augmented training images; augmenting that share of the images with every
    # transformation gives the same count (fraction x images x transformations) without making the rest.
    added = [p.augmented.model_copy(update={"split": "train"}) for p in aug_train.pairs]
    mixed = TLDataset(name=f"{dataset.name}-retrain", format="drivemt", images=base_images + added)

    def fit(ds: TLDataset, name: str) -> str:
        say(f"training {kind} ({name}) on {sum(1 for i in ds.images if i.split == 'train')} images")
        t = time.perf_counter()
        weights = train_detector(
            kind, ds, out / name, epochs=epochs, imgsz=imgsz, time_limit_s=time_limit_s, seed=seed, yolo=yolo
        )
        seconds[f"train_{name}"] = time.perf_counter() - t
        return f"{kind}:{weights}"

    baseline_spec = baseline or fit(TLDataset(name="baseline", format="drivemt", images=base_images), "baseline")
    retrained_spec = fit(mixed, "retrained")

    map_original: dict[str, float] = {}
    map_augmented: dict[str, dict[str, float]] = {}
    t0 = time.perf_counter()
    for label, spec in (("baseline", baseline_spec), ("retrained", retrained_spec)):
        say(f"scoring the {label} detector")
        det = load_detector(spec)
        map_original[label] = evaluate_detector(det, test_ds, split=None).map
        map_augmented[label] = {}
        aug_ds = aug_test.augmented_dataset()
        for code in aug_test.transforms:
            ims = [i for i in aug_ds.images if i.image_id.endswith(f"__{code}")]
            if ims:
                sub = aug_ds.model_copy(update={"images": ims})
                map_augmented[label][code] = evaluate_detector(det, sub, split=None).map
    seconds["evaluate"] = time.perf_counter() - t0
    seconds["total"] = time.perf_counter() - started
    result = RetrainResult(
        kind=kind,
        fraction=fraction,
        transforms=list(aug_test.transforms),
        train_images=len(train),
        augmented_train_images=len(added),
        test_images=len(test),
        baseline=baseline_spec,
        retrained=retrained_spec,
        map_original=map_original,
        map_augmented=map_augmented,
        seconds=seconds,
    )
    (out / "retrain.json").write_text(result.model_dump_json(indent=1), encoding="utf-8")
    return result
