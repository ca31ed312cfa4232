"""Bosch Small Traffic Lights dataset (BSTLD): YAML label files, a list of images with their boxes.

Published layout (``bosch-ros-pkg/bstld``, ``label_files/``)::

    train.yaml, test.yaml, additional_train.yaml
    rgb/train/<drive>_bag/207386.png, rgb/test/24068.png

Each file is a list of ``{path, boxes: [{label, occluded, x_min, x_max, y_min, y_max}]}``; ``path`` is
relative to the YAML file (old test labels held absolute paths of Bosch's servers, so images are also
found by name under the dataset root). Coordinates are floating-point pixels; frames are 1280x720, the
size assumed only when images are not checked and a file cannot be read. As Bosch's own reader does,
boxes with ``x_min > x_max`` (a known slip in the labels) have their corners swapped.

drivemt writes ``width`` and ``height`` beside ``path`` (Bosch's readers ignore extra keys), so a written
dataset can be read without opening its images. Bosch cannot carry: arrows on yellow or unlit lights
(written without the arrow), scores.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tools.tl.errors import DatasetFormatError, UnknownStateError, UnreadableImageError
from tools.tl.formats.files import (
    ImageLocator,
    Skips,
    check_in_memory_ids,
    finish_dataset,
    keep_box,
    locate_image,
    output_names,
    relative_to,
    split_from_name,
    write_image_file,
)
from tools.tl.formats.states import bosch_label, label_text, state_from_label
from tools.tl.models import TLBox, TLDataset, TLImage

__all__ = ["FRAME_SIZE", "read", "sniff", "write"]

FRAME_SIZE = (1280, 720)
"""BSTLD's RGB frame size."""

_LINE = "__line__"
_SNIFF = re.compile(r"^\s*-?\s*boxes\s*:", re.MULTILINE)
_SNIFF_PATH = re.compile(r"^\s*-?\s*path\s*:", re.MULTILINE)

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_Base):
    """A safe YAML loader that notes each mapping's line, so errors can name it."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        mapping[_LINE] = node.start_mark.line + 1
        return dict(mapping)


def _looks_bosch(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    return bool(_SNIFF.search(head) and _SNIFF_PATH.search(head))


def _yaml_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    top = [p for p in sorted([*path.glob("*.yaml"), *path.glob("*.yml")]) if _looks_bosch(p)]
    if top:
        return top
    return [p for p in sorted([*path.rglob("*.yaml"), *path.rglob("*.yml")]) if _looks_bosch(p)]


def sniff(path: Path) -> bool:
    """Whether ``path`` is a Bosch label file or a folder holding one."""
    if path.is_file():
        return path.suffix.lower() in (".yaml", ".yml") and _looks_bosch(path)
    return bool(_yaml_files(path))


def _load(file: Path) -> list[dict[str, Any]]:
    try:
        with file.open(encoding="utf-8") as f:
            data = yaml.load(f, Loader=_LineLoader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise DatasetFormatError(f"{file}{line}", f"not valid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise DatasetFormatError(str(file), f"not valid YAML: {exc}") from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise DatasetFormatError(f"{file}:1", "a Bosch label file is a list of {path, boxes} entries")
    return data


def _coord(box: dict[str, Any], key: str, where: str) -> float:
    value = box.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DatasetFormatError(where, f"box {key} is {value!r}, not a number")
    return float(value)


def _size(entry: dict[str, Any], where: str) -> tuple[int, int] | None:
    w, h = entry.get("width"), entry.get("height")
    if w is None and h is None:
        return None
    if not (isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0):
        raise DatasetFormatError(where, f"width/height are {w!r}/{h!r}, not positive whole numbers")
    return w, h


def _boxes(entry: dict[str, Any], file: Path, image_id: str, skips: Skips) -> list[TLBox]:
    """An entry's boxes; malformed ones stop the read, unknown states and empty boxes are skipped."""
    boxes_in = entry.get("boxes") or []
    if not isinstance(boxes_in, list):
        raise DatasetFormatError(f"{file}:{entry.get(_LINE, '?')}", f"boxes is {boxes_in!r}, not a list")
    boxes: list[TLBox] = []
    for i, b in enumerate(boxes_in):
        at = f"{file}:{b.get(_LINE, '?') if isinstance(b, dict) else entry.get(_LINE, '?')}"
        if not isinstance(b, dict):
            raise DatasetFormatError(at, f"box {i} is {b!r}, not a mapping")
        x1, x2, y1, y2 = (_coord(b, k, at) for k in ("x_min", "x_max", "y_min", "y_max"))
        x1, x2 = min(x1, x2), max(x1, x2)  # Bosch's own reader swaps corners given the wrong way round
        y1, y2 = min(y1, y2), max(y1, y2)
        label = label_text(b.get("label"))
        try:
            state, arrow = state_from_label(label, where=at)
        except UnknownStateError as exc:
            skips.add(f"{image_id} box {i}", exc)
            continue
        if not (x2 > x1 and y2 > y1):
            skips.add(f"{image_id} box {i}", f"{at}: empty box ({x1:g}, {y1:g}, {x2:g}, {y2:g})")
            continue
        occluded = bool(b.get("occluded", False))
        boxes.append(TLBox(x1=x1, y1=y1, x2=x2, y2=y2, state=state, arrow=arrow, occluded=occluded, source_label=label))
    return boxes


def read(path: Path, *, check_images: bool = True) -> TLDataset:
    """Read a Bosch dataset folder (its YAML files) or one YAML file.

    Raises:
        DatasetFormatError: No Bosch YAML, or a malformed entry (naming the file and line).
        EmptyDatasetError: No image left.
    """
    files = _yaml_files(path)
    if not files:
        raise DatasetFormatError(str(path), "no Bosch label file (a YAML list of {path, boxes} entries)")
    root = path if path.is_dir() else path.parent
    locator = ImageLocator(root)
    skips = Skips()
    images: list[TLImage] = []
    for file in files:
        split = split_from_name(file.stem)
        for n, entry in enumerate(_load(file)):
            if not isinstance(entry, dict):
                raise DatasetFormatError(f"{file}", f"entry {n} is {entry!r}, not a mapping with path and boxes")
            where = f"{file}:{entry.get(_LINE, '?')}"
            name = entry.get("path")
            if not isinstance(name, str) or not name.strip():
                raise DatasetFormatError(where, "entry has no image path")
            image_id = Path(name).stem
            box_skips = Skips()
            boxes = _boxes(entry, file, image_id, box_skips)
            annotated = _size(entry, where)
            candidates = [file.parent / name, root / name]
            try:
                found, w, h = locate_image(
                    locator, name, candidates, check=check_images, annotated=annotated, default=FRAME_SIZE
                )
            except UnreadableImageError as exc:
                skips.add(f"{where} {name}", exc)
                continue
            skips.items.extend(box_skips.items)
            images.append(
                TLImage(
                    image_id=image_id,
                    path=relative_to(found, root) if found is not None else name,
                    width=w,
                    height=h,
                    boxes=[b for i, b in enumerate(boxes) if keep_box(b, image_id, i, w, h, skips)],
                    split=split,
                    attributes={"bosch_labels": file.name},
                )
            )
    name = path.stem if path.is_file() else path.name
    return finish_dataset(name=name, root=root, fmt="bosch", images=images, skips=skips, source=path)


def write(
    dataset: TLDataset, out: Path, *, images: Mapping[str, np.ndarray] | None = None, copy_images: bool = True
) -> Path:
    """Write ``dataset`` in Bosch's layout: ``out/<split>.yaml`` (``labels.yaml`` without splits), images in
    ``out/rgb/<split>/`` (``out/rgb/all/``).

    Returns:
        ``out``.
    """
    check_in_memory_ids(dataset, images)
    names = output_names(dataset)
    groups: dict[str | None, list[TLImage]] = defaultdict(list)
    for im in dataset.images:
        groups[im.split].append(im)
    out.mkdir(parents=True, exist_ok=True)
    for split, members in groups.items():
        folder = f"rgb/{split or 'all'}"
        entries = []
        for im in members:
            rel = f"{folder}/{names[im.image_id]}"
            boxes = [
                {
                    "label": bosch_label(b.state, b.arrow, b.source_label),
                    "occluded": b.occluded,
                    "x_max": b.x2,
                    "x_min": b.x1,
                    "y_max": b.y2,
                    "y_min": b.y1,
                }
                for b in im.boxes
            ]
            entries.append({"boxes": boxes, "height": im.height, "path": f"./{rel}", "width": im.width})
            write_image_file(dataset, im, out / rel, images=images, copy_images=copy_images)
        text = yaml.safe_dump(entries, default_flow_style=None, sort_keys=False, width=120)
        (out / f"{split or 'labels'}.yaml").write_text(text, encoding="utf-8")
    return out
