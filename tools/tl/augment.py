"""Augment a labelled traffic-light dataset with TIGAUG's transformations, image by image.

Each sampled image is decoded once and given every requested transformation; each augmented image is
written as soon as it is made (memory stays flat however large the dataset), and a manifest records
every (original, augmented) pair with what the transformation did, so the Judge can apply τ to
detections (TIGAUG Eq. 2) without the pixels. An image that cannot be read, or a transformation that
fails on one image, is recorded as skipped with the reason and the rest goes on.

Layout of the output folder::

    <out>/images/<code>/<image id>.<ext>   augmented images
    <out>/manifest.json                    AugmentationManifest (pairs, skipped, timing)
    <out>/dataset/                          the augmented set in the input's format (when exported)
"""

from __future__ import annotations

import shutil
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import structlog
from pydantic import BaseModel, ConfigDict, Field

from tools.tl.errors import EmptyDatasetError, TLDataError
from tools.tl.images import read_image, write_image
from tools.tl.models import TRANSFORM_CODES, SkippedItem, TLDataset, TLImage
from tools.tl.transform_base import BoxAffine, LightChange
from tools.tl.transforms import TransformResult, apply_transform, check_params, transform_spec

__all__ = [
    "AugmentationManifest",
    "AugmentedPair",
    "augment_dataset",
    "file_stem",
    "load_augmentation",
    "reroot_manifest",
    "sample_images",
    "transform_codes",
    "transform_seed",
]

log = structlog.get_logger(__name__)

ProgressFn = Callable[[int, int], None]


class AugmentedPair(BaseModel):
    """One original image and one of its augmentations, with what the transformation did."""

    model_config = ConfigDict(extra="forbid")

    original_id: str
    augmented_id: str
    code: str
    seed: int
    original_path: str
    augmented_path: str
    original: TLImage = Field(description="Ground truth of the original image.")
    augmented: TLImage = Field(description="Transformed ground truth.")
    params: dict[str, Any] = Field(default_factory=dict)
    sampled: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    changed: list[int] = Field(default_factory=list)
    changes: list[LightChange] = Field(default_factory=list)
    affine: BoxAffine | None = None

    def as_result(self) -> TransformResult:
        """The transformation result without pixels (for :func:`tools.tl.transforms.transform_detections`)."""
        return TransformResult(
            code=self.code,
            seed=self.seed,
            image=np.zeros((1, 1, 3), np.uint8),
            labels=self.augmented,
            original=self.original,
            params=self.params,
            sampled=self.sampled,
            notes=self.notes,
            changed=self.changed,
            changes=self.changes,
            affine=self.affine,
        )


class AugmentationManifest(BaseModel):
    """Everything an augmentation run made."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="The input dataset.")
    format: str
    out_dir: str
    transforms: list[str]
    seed: int
    fraction: float
    images_in: int = Field(description="Images in the input dataset.")
    images_sampled: int
    pairs: list[AugmentedPair] = Field(default_factory=list)
    skipped: list[SkippedItem] = Field(default_factory=list)
    seconds: float = 0.0
    transform_seconds: float = Field(default=0.0, description="Time in the transformations alone (no decode/encode).")
    export: str | None = Field(default=None, description="The augmented set written in the input's format.")

    def per_transform(self) -> dict[str, int]:
        """Augmented images per transformation."""
        out = dict.fromkeys(self.transforms, 0)
        for p in self.pairs:
            out[p.code] = out.get(p.code, 0) + 1
        return out

    def augmented_dataset(self) -> TLDataset:
        """The augmented images as a dataset (absolute paths)."""
        return TLDataset(
            name=f"{Path(self.source).name}-augmented",
            root=None,
            format="drivemt",
            images=[p.augmented.model_copy(update={"path": p.augmented_path}) for p in self.pairs],
        )


def transform_seed(seed: int, image_id: str, code: str) -> int:
    """A stable seed per (run seed, image, transformation), the same on every machine."""
    return (seed * 1_000_003 + zlib.crc32(f"{image_id}/{code}".encode())) % (2**31 - 1)


def sample_images(images: Sequence[TLImage], fraction: float, seed: int) -> list[TLImage]:
    """A seeded sample of ``fraction`` of the images (at least one), in the dataset's order."""
    n = len(images)
    if fraction >= 1.0 or n == 0:
        return list(images)
    k = max(1, round(fraction * n))
    chosen = set(np.random.default_rng(seed).choice(n, size=k, replace=False).tolist())
    return [img for i, img in enumerate(images) if i in chosen]


def transform_codes(transforms: Sequence[str]) -> list[str]:
    """Codes checked, upper-cased and de-duplicated (all twelve when none).

    Raises:
        UnknownTransformError: A code that is not one of the twelve.
    """
    codes = [transform_spec(c).code for c in transforms]  # raises UnknownTransformError
    return list(dict.fromkeys(codes)) or list(TRANSFORM_CODES)


def augment_dataset(
    dataset: TLDataset,
    *,
    out: Path,
    transforms: Sequence[str] = TRANSFORM_CODES,
    seed: int = 0,
    fraction: float = 1.0,
    params: dict[str, dict[str, Any]] | None = None,
    export_format: str | None = None,
    progress: ProgressFn | None = None,
) -> AugmentationManifest:
    """Apply the transformations to a seeded sample of the dataset and write everything under ``out``.

    Args:
        dataset: The labelled dataset (its ``skipped`` items are carried into the manifest).
        out: Output folder (created).
        transforms: TIGAUG codes; all twelve by default.
        seed: Seed of the sample and of every transformation.
        fraction: Share of the images to augment.
        params: Parameters per code (validated by each transformation's params model).
        export_format: Also write the augmented set in this format (lisa, bosch, yolo, coco) under
            ``out/dataset``; ``None`` writes only drivemt's own layout and manifest.
        progress: Called with (pairs done, pairs planned).

    Raises:
        EmptyDatasetError: No images to augment, or none could be augmented (the manifest is written first).
        UnknownTransformError: A code that is not one of the twelve.
        TransformParamsError: Parameters that do not fit their transformation.
    """
    codes = transform_codes(transforms)
    if not dataset.images:
        raise EmptyDatasetError(dataset.name)
    for code, values in (params or {}).items():  # (wrong parameters are one error, not a skip per image)
        check_params(code, values)
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    for own in ("images", "dataset"):  # (an earlier run's images in the same folder would mix with this one's)
        shutil.rmtree(out / own, ignore_errors=True)
    sample = sample_images(dataset.images, fraction, seed)
    manifest = AugmentationManifest(
        source=dataset.root or dataset.name,
        format=dataset.format,
        out_dir=str(out),
        transforms=codes,
        seed=seed,
        fraction=fraction,
        images_in=len(dataset.images),
        images_sampled=len(sample),
        skipped=list(dataset.skipped),
    )
    total = len(sample) * len(codes)
    done = 0
    transform_seconds = 0.0
    for image in sample:
        try:
            src_path = dataset.image_path(image)
            pixels = read_image(src_path, image_id=image.image_id)
            if pixels.shape[:2] != (image.height, image.width):
                raise TLDataError(
                    f"image {image.image_id}: file is {pixels.shape[1]}x{pixels.shape[0]}, "
                    f"labels say {image.width}x{image.height}"
                )
            image.check_boxes()
        except TLDataError as exc:
            manifest.skipped.append(SkippedItem(item=image.image_id, reason=str(exc)))
            done += len(codes)
            if progress is not None:
                progress(done, total)
            continue
        suffix = src_path.suffix.lower() if src_path.suffix.lower() in {".png", ".jpg", ".jpeg"} else ".png"
        for code in codes:
            s = transform_seed(seed, image.image_id, code)
            try:
                t0 = time.perf_counter()
                result = apply_transform(code, pixels, image, seed=s, params=(params or {}).get(code))
                transform_seconds += time.perf_counter() - t0
                aug_id = f"{image.image_id}__{code}"
                aug_path = write_image(out / "images" / code / f"{file_stem(image.image_id)}{suffix}", result.image)
                manifest.pairs.append(
                    AugmentedPair(
                        original_id=image.image_id,
                        augmented_id=aug_id,
                        code=code,
                        seed=s,
                        original_path=str(src_path.resolve()),
                        augmented_path=str(aug_path.resolve()),
                        original=image,
                        augmented=result.labels.model_copy(
                            update={"image_id": aug_id, "path": str(aug_path.resolve()), "split": image.split}
                        ),
                        params=result.params,
                        sampled=result.sampled,
                        notes=result.notes,
                        changed=result.changed,
                        changes=result.changes,
                        affine=result.affine,
                    )
                )
            except TLDataError as exc:
                manifest.skipped.append(SkippedItem(item=f"{image.image_id}/{code}", reason=str(exc)))
            except Exception as exc:  # one image's failure must not end the dataset
                log.warning("transformation failed", image=image.image_id, code=code, error=repr(exc))
                manifest.skipped.append(
                    SkippedItem(item=f"{image.image_id}/{code}", reason=f"{type(exc).__name__}: {exc}")
                )
            done += 1
            if progress is not None:
                progress(done, total)
    manifest.transform_seconds = transform_seconds
    if export_format is not None and manifest.pairs:
        from tools.tl.formats import write_dataset

        manifest.export = str(write_dataset(manifest.augmented_dataset(), out / "dataset", export_format))
    manifest.seconds = time.perf_counter() - started
    (out / "manifest.json").write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    if not manifest.pairs:  # (a set with nothing augmented must not be tested as if it were a clean result)
        reasons = "; ".join(s.reason for s in manifest.skipped[len(dataset.skipped) :][:3])  # (this run's own)
        raise EmptyDatasetError(
            dataset.name,
            f"none of its {len(sample)} sampled images could be augmented ({reasons or 'no reason given'})",
        )
    return manifest


def file_stem(name: str) -> str:
    """A file or folder name for an image id or detector spec (names with other characters get a hash, so two
    names never share a file)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return safe if safe == name else f"{safe}-{zlib.crc32(name.encode()):08x}"


def reroot_manifest(manifest: AugmentationManifest, *, out_ref: str, root: Path) -> AugmentationManifest:
    """The manifest with paths under another artefact folder: the augmenter wrote into ``<its root>/<out_ref>``; a
    reader on another machine holds the same refs under ``root``. Paths outside the augmenter's root stay as they
    are."""
    out_dir = manifest.out_dir.rstrip("/")
    if not out_dir.endswith(out_ref):
        return manifest
    old = out_dir[: -len(out_ref)]
    if not old or Path(old) == root:
        return manifest

    def move(path: str) -> str:
        return str(root / path[len(old) :]) if path.startswith(old) else path

    pairs = [
        p.model_copy(update={"original_path": move(p.original_path), "augmented_path": move(p.augmented_path)})
        for p in manifest.pairs
    ]
    return manifest.model_copy(
        update={"pairs": pairs, "out_dir": move(manifest.out_dir), "source": move(manifest.source)}
    )


def load_augmentation(path: Path) -> AugmentationManifest:
    """Read a manifest written by :func:`augment_dataset` (its folder or the file).

    Raises:
        TLDataError: If there is no manifest there, or it is not one.
    """
    p = path / "manifest.json" if path.is_dir() else path
    try:
        return AugmentationManifest.model_validate_json(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TLDataError(f"no augmentation manifest at {p}") from exc
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TLDataError(f"{p} is not a readable augmentation manifest: {str(exc).splitlines()[0][:300]}") from exc
