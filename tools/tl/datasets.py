"""Open a traffic-light dataset whatever it is: a LISA/Bosch/YOLO/COCO folder or file, or drivemt's own manifest.

drivemt's own layout is a ``dataset.json`` (a :class:`tools.tl.labels.TLDataset` dumped as JSON, image
paths relative to its folder), as ``drivemt data synth-tl`` writes it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from tools.tl.errors import DatasetFormatError, EmptyDatasetError
from tools.tl.labels import TLDataset

__all__ = ["MANIFEST_NAME", "load_dataset", "save_manifest"]

MANIFEST_NAME = "dataset.json"


def _manifest_path(path: Path) -> Path | None:
    if path.is_file() and path.suffix == ".json" and path.name == MANIFEST_NAME:
        return path
    if path.is_dir() and (path / MANIFEST_NAME).is_file():
        return path / MANIFEST_NAME
    return None


def load_dataset(path: Path, format: str | None = None, *, check_images: bool = True) -> TLDataset:
    """Read a dataset in any supported format (``format`` None detects it; ``drivemt`` is the manifest).

    Raises:
        DatasetFormatError: Unknown or undetectable format, or a malformed annotation file.
        EmptyDatasetError: No labelled images.
    """
    fmt = format.lower() if format else None
    manifest = _manifest_path(path) if fmt in (None, "drivemt") else None
    if manifest is not None:
        try:
            ds = TLDataset.model_validate_json(manifest.read_text(encoding="utf-8"))
        except (ValidationError, ValueError) as exc:
            raise DatasetFormatError(str(manifest), f"not a drivemt dataset manifest: {exc}") from exc
        root = Path(ds.root) if ds.root else manifest.parent
        if not root.is_absolute():
            root = manifest.parent / root
        ds = ds.model_copy(update={"root": str(root), "format": "drivemt"})
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
