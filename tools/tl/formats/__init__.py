"""Traffic-light dataset formats: LISA, Bosch Small Traffic Lights, YOLO txt and COCO JSON, read into and
written from one label model (:class:`~tools.tl.models.TLDataset`).

``read_dataset`` never stops at a bad item: an unreadable image, a box outside its image or a label with
no known state is left out and recorded in ``dataset.skipped`` with the reason, and the rest is read. Only
a dataset with no image left (:class:`~tools.tl.errors.EmptyDatasetError`) or an annotation file that does
not follow its format (:class:`~tools.tl.errors.DatasetFormatError`, naming the file and line) stops it.

What each format cannot carry (documented in each module): LISA has no unlit state (drivemt writes ``off``),
no right arrows, no occlusion, whole pixels only; Bosch has no yellow or unlit arrows; YOLO has no arrows,
occlusion or scores; COCO carries everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import numpy as np

from tools.tl.errors import DatasetFormatError
from tools.tl.formats import bosch, coco, lisa, yolo
from tools.tl.formats.states import (
    BOSCH_LABELS,
    DRIVEMT_CLASSES,
    LISA_TAGS,
    bosch_label,
    lisa_tag,
    state_from_label,
)
from tools.tl.models import TLDataset

__all__ = [
    "BOSCH_LABELS",
    "DRIVEMT_CLASSES",
    "FORMATS",
    "LISA_TAGS",
    "FormatModule",
    "bosch_label",
    "detect_format",
    "lisa_tag",
    "read_dataset",
    "state_from_label",
    "write_dataset",
]

FORMATS: tuple[str, ...] = ("lisa", "bosch", "yolo", "coco")


class FormatModule(Protocol):
    """What each format module offers."""

    def sniff(self, path: Path) -> bool:
        """Whether the path looks like this format."""
        ...

    def read(self, path: Path, *, check_images: bool = True) -> TLDataset:
        """Read a dataset in this format."""
        ...

    def write(
        self,
        dataset: TLDataset,
        out: Path,
        *,
        images: Mapping[str, np.ndarray] | None = None,
        copy_images: bool = True,
    ) -> Path:
        """Write a dataset in this format."""
        ...


_MODULES: dict[str, FormatModule] = {"lisa": lisa, "bosch": bosch, "yolo": yolo, "coco": coco}


def _module(fmt: str) -> FormatModule:
    key = fmt.strip().lower()
    if key not in _MODULES:
        raise DatasetFormatError(fmt, f"unknown dataset format; use one of {', '.join(FORMATS)}")
    return _MODULES[key]


def detect_format(path: Path | str) -> str:
    """Tell a dataset's format from its files.

    A LISA CSV (``Filename;Annotation tag;...``), a Bosch YAML list of ``{path, boxes}``, a YOLO
    ``data.yaml`` with ``names`` or ``images/`` beside ``labels/``, a COCO JSON with ``images``: exactly
    one of them must be there.

    Raises:
        DatasetFormatError: No path, no format found, or more than one (then pass ``format``).
    """
    p = Path(path)
    if not p.exists():
        raise DatasetFormatError(str(p), "no such file or folder")
    found = [f for f in FORMATS if _MODULES[f].sniff(p)]
    if not found:
        raise DatasetFormatError(
            str(p),
            "cannot tell the dataset format: no LISA CSV, Bosch YAML, YOLO data.yaml or images/+labels/, "
            f"or COCO JSON found; pass the format ({', '.join(FORMATS)})",
        )
    if len(found) > 1:
        raise DatasetFormatError(str(p), f"the folder looks like several formats ({', '.join(found)}); pass the format")
    return found[0]


def read_dataset(path: Path | str, format: str | None = None, *, check_images: bool = True) -> TLDataset:
    """Read a labelled traffic-light dataset into drivemt's label model.

    Args:
        path: The dataset folder, or one annotation file (a LISA CSV, a Bosch YAML, a YOLO data.yaml, a
            COCO JSON).
        format: ``lisa``, ``bosch``, ``yolo`` or ``coco``; detected from the files when ``None``.
        check_images: Open every image's header and check the file (cheap: pixels are not decoded);
            unreadable images are skipped. Without it, images are opened only where the annotation lacks
            their size.

    Returns:
        The dataset; ``skipped`` lists what was left out, and why.

    Raises:
        DatasetFormatError: Unknown or undetectable format, or a malformed annotation file.
        EmptyDatasetError: No image left.
    """
    p = Path(path)
    if not p.exists():
        raise DatasetFormatError(str(p), "no such file or folder")
    fmt = format if format is not None else detect_format(p)
    return _module(fmt).read(p, check_images=check_images)


def write_dataset(
    dataset: TLDataset,
    out: Path | str,
    format: str,
    *,
    images: Mapping[str, np.ndarray] | None = None,
    copy_images: bool = True,
) -> Path:
    """Write a dataset in a format: annotations, and the images beside them in the format's layout.

    Write into a new or empty folder: files already there stay and may make the folder look like another
    format. The format's own labels are written; what it cannot carry is dropped (see each module).

    Args:
        dataset: The dataset to write.
        out: The output folder (created).
        format: ``lisa``, ``bosch``, ``yolo`` or ``coco``.
        images: RGB ``uint8`` arrays by image id (augmented images): encoded, with the source file's
            suffix. The size must match the image's labels.
        copy_images: Copy the other images from the source dataset; without it only the annotations (and
            the in-memory images) are written.

    Returns:
        The folder to give :func:`read_dataset`.

    Raises:
        DatasetFormatError: Unknown format, or in-memory images that do not fit the dataset.
        UnreadableImageError: A source image to copy is missing.
    """
    module = _module(format)
    return module.write(dataset, Path(out), images=images, copy_images=copy_images)
