"""Open a traffic-light dataset whatever it is: a LISA/Bosch/YOLO/COCO folder or file, or drivemt's own manifest.

drivemt's own layout is a ``dataset.json`` (a :class:`tools.tl.models.TLDataset` dumped as JSON, image
paths relative to its folder), as ``drivemt data synth-tl`` writes it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tools.tl.errors import DatasetFormatError, EmptyDatasetError
from tools.tl.models import TLDataset

__all__ = ["MANIFEST_NAME", "load_dataset", "load_manifest", "save_manifest"]

MANIFEST_NAME = "dataset.json"


def _manifest_path(path: Path) -> Path | None:
    if path.is_file() and path.name == MANIFEST_NAME:
        return path
    if path.is_dir() and (path / MANIFEST_NAME).is_file():
        return path / MANIFEST_NAME
    return None


def load_manifest(path: Path) -> TLDataset:
    """Read drivemt's own manifest, as :func:`tools.tl.synth.synth_tl` writes it (any ``TLDataset`` dumped as JSON).

    Args:
        path: The manifest file, or the folder that holds ``dataset.json``.

    Returns:
        The dataset, with a relative ``root`` resolved against the manifest's folder.

    Raises:
        DatasetFormatError: Missing file or JSON that is not a dataset.
    """
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST_NAME
    if not p.is_file():
        raise DatasetFormatError(str(p), "no such manifest")
    try:
        ds = TLDataset.model_validate(json.loads(p.read_text()))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DatasetFormatError(str(p), f"not a traffic-light dataset manifest: {exc}") from exc
    root = Path(ds.root) if ds.root else Path(".")
    if not root.is_absolute():
        root = (p.parent / root).resolve()
    return ds.model_copy(update={"root": str(root)})


def load_dataset(
    path: Path, format: str | None = None, *, check_images: bool = True, split: str | None = None
) -> TLDataset:
    """Read a dataset in any supported format (``format`` None detects it; ``drivemt`` is the manifest).

    Args:
        path: Dataset folder or annotation file.
        format: lisa, bosch, yolo, coco or drivemt; detected when None.
        check_images: Check each image file (formats' readers skip unreadable ones).
        split: Keep only the images of this split (train, val, test ...).

    Raises:
        DatasetFormatError: Unknown or undetectable format, a malformed annotation file, or a path that cannot be
            read (too long a name, no permission, a file gone while the folder was read).
        EmptyDatasetError: No labelled images (in the split, when one is named).
    """
    try:
        ds = _read(path, format, check_images=check_images)
    except OSError as exc:  # a name too long, a file that vanished while the folder was read, no permission
        raise DatasetFormatError(str(path)[:300], f"cannot be read: {exc}"[:500]) from exc
    if split is None:
        return ds
    images = [i for i in ds.images if i.split == split]
    if not images:
        raise EmptyDatasetError(str(path), f"no images in split {split!r}")
    return ds.model_copy(update={"images": images})


def _read(path: Path, format: str | None, *, check_images: bool) -> TLDataset:
    fmt = format.lower() if format else None
    manifest = _manifest_path(path) if fmt in (None, "drivemt") else None
    if manifest is not None:
        ds = load_manifest(manifest).model_copy(update={"format": "drivemt"})
        if not ds.images:
            raise EmptyDatasetError(str(manifest))
        return ds
    if fmt == "drivemt":
        raise DatasetFormatError(str(path), f"no {MANIFEST_NAME} here")
    from tools.tl.formats import read_dataset

    return read_dataset(path, fmt, check_images=check_images)


def save_manifest(dataset: TLDataset, folder: Path) -> Path:
    """Write ``folder/dataset.json`` (image paths should be relative to ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MANIFEST_NAME
    path.write_text(dataset.model_copy(update={"root": None}).model_dump_json(indent=1), encoding="utf-8")
    return path
