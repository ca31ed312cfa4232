"""YOLO (ultralytics / darknet) text labels: one ``class cx cy w h`` line per box, normalised to [0, 1].

Layout, as ultralytics reads it::

    data.yaml                 names: {0: red, 1: yellow, 2: green, 3: off}; train/val/test: images/<split>
    images/<split>/x.png      (or images/x.png without splits; Roboflow's <split>/images/ also works)
    labels/<split>/x.txt      the image path with its last ``images`` folder replaced by ``labels``

An image without a label file has no lights. Class names come from ``data.yaml`` (a list or an id ->
name mapping; ``classes.txt`` / ``obj.names`` of darknet datasets otherwise) and are mapped onto drivemt's
states by name, so ``RedLeft`` or ``traffic_light_red`` work too; without any, drivemt's order (red,
yellow, green, off) is assumed. A sixth column, as ultralytics writes with ``save_conf``, is a score.

drivemt writes its four classes in that order. YOLO cannot carry: arrows (a left-arrow red light is
written as ``red``), occlusion, scores (ultralytics training refuses a sixth column), source labels.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml

from tools.tl.errors import DatasetFormatError, EmptyDatasetError, UnknownStateError, UnreadableImageError
from tools.tl.formats.files import (
    IMAGE_SUFFIXES,
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
from tools.tl.formats.states import DRIVEMT_CLASSES, StateArrow, label_text, state_from_label
from tools.tl.models import TLBox, TLDataset, TLImage

__all__ = ["SPLIT_KEYS", "label_path", "read", "sniff", "write"]

SPLIT_KEYS = ("train", "val", "test")
_YAML_NAMES = ("data.yaml", "dataset.yaml", "data.yml", "dataset.yml")
_CLASS_FILES = ("classes.txt", "obj.names", "classes.names")
_NAMES_KEY = re.compile(r"^names\s*:", re.MULTILINE)


def label_path(image: Path) -> Path:
    """The label file of an image: its last ``images`` folder replaced by ``labels``, suffix ``.txt``."""
    parts = list(image.parts)
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "images":
            parts[i] = "labels"
            break
    return Path(*parts).with_suffix(".txt")


def _data_yaml(path: Path) -> Path | None:
    if path.is_file():
        return path if path.suffix.lower() in (".yaml", ".yml") else None
    for name in _YAML_NAMES:
        if (path / name).is_file():
            return path / name
    for p in sorted([*path.glob("*.yaml"), *path.glob("*.yml")]):
        try:
            if p.stat().st_size > 1_000_000:
                continue
            text = p.read_text("utf-8")
            if not _NAMES_KEY.search(text):  # cheap: a Bosch label list has none, and is slow to parse
                continue
            if isinstance(d := yaml.safe_load(text), dict):
                if "names" in d and any(k in d for k in SPLIT_KEYS):
                    return p
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            continue
    return None


def _layout_dirs(root: Path) -> dict[str | None, list[Path]]:
    """Image folders by split when there is no data.yaml: images/<split>, <split>/images, or images/."""
    found: dict[str | None, list[Path]] = {}
    images = root / "images"
    if images.is_dir():
        subs = {s: images / s for s in SPLIT_KEYS if (images / s).is_dir()}
        if subs:
            found.update({k: [v] for k, v in subs.items()})
        else:
            found[None] = [images]
    for name, split in (("train", "train"), ("valid", "val"), ("val", "val"), ("test", "test")):
        if (root / name / "images").is_dir():
            found.setdefault(split, []).append(root / name / "images")
    return found


def sniff(path: Path) -> bool:
    """Whether ``path`` is a YOLO data.yaml or a folder laid out for YOLO (images/ beside labels/)."""
    yml = _data_yaml(path)
    if yml is not None:
        try:
            text = yml.read_text("utf-8")
            data = yaml.safe_load(text) if _NAMES_KEY.search(text) else None
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            return False
        return isinstance(data, dict) and "names" in data
    if path.is_file():
        return False
    dirs = _layout_dirs(path)
    return any(label_path(d / "x.png").parent.is_dir() for ds in dirs.values() for d in ds)


def _names(data: dict[str, Any] | None, root: Path, where: str) -> dict[int, str] | None:
    if data is not None and "names" in data:
        names = data["names"]
        if isinstance(names, list):
            return {i: label_text(n) for i, n in enumerate(names)}
        if isinstance(names, dict):
            try:
                return {int(k): label_text(v) for k, v in names.items()}
            except (TypeError, ValueError):
                pass
        raise DatasetFormatError(where, f"names is {names!r}: give a list or an id -> name mapping")
    for name in _CLASS_FILES:
        if (root / name).is_file():
            lines = [x.strip() for x in (root / name).read_text("utf-8").splitlines()]
            return dict(enumerate(x for x in lines if x))
    return None


def _base(data: dict[str, Any], yml: Path) -> Path:
    """The dataset root a data.yaml names (``path``), or its own folder where that is missing or moved."""
    given = data.get("path")
    if isinstance(given, str) and given:
        p = Path(given)
        p = p if p.is_absolute() else yml.parent / p
        if p.is_dir():
            return p
    return yml.parent


def _images_of(entry: Path) -> list[Path]:
    if entry.is_dir():
        return sorted(p for p in entry.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    if entry.is_file() and entry.suffix.lower() == ".txt":
        out = []
        for line in entry.read_text("utf-8").splitlines():
            line = line.strip()
            if line:
                p = Path(line)
                out.append(p if p.is_absolute() else (entry.parent / p))
        return out
    return []


class _Sources(NamedTuple):
    root: Path
    names: dict[int, str] | None
    names_from: str
    pairs: list[tuple[str | None, Path]]  # (split, image file)
    folders: list[Path]  # image folders scanned


def _sources(path: Path) -> _Sources:
    """Where a YOLO dataset's images are, by split, and its class names."""
    yml = _data_yaml(path)
    if yml is None:
        root = path if path.is_dir() else path.parent
        dirs = _layout_dirs(root) or {None: [root]}
        pairs = [(s, img) for s, ds in dirs.items() for d in ds for img in _images_of(d)]
        names_from = next((n for n in _CLASS_FILES if (root / n).is_file()), "")
        return _Sources(root, _names(None, root, str(root)), names_from, pairs, [d for ds in dirs.values() for d in ds])
    try:
        data = yaml.safe_load(yml.read_text("utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise DatasetFormatError(f"{yml}:{mark.line + 1 if mark else '?'}", f"not valid YAML: {exc.problem}") from None
    if not isinstance(data, dict):
        raise DatasetFormatError(f"{yml}:1", "a YOLO data.yaml is a mapping with names and train/val/test")
    root = _base(data, yml)
    pairs = []
    folders: list[Path] = []
    for key in SPLIT_KEYS:
        entries = data.get(key) or []
        for e in entries if isinstance(entries, list) else [entries]:
            entry = root / str(e)
            # A folder named for a split says which it is, whichever key lists it.
            split = (split_from_name(entry.name) if entry.is_dir() else None) or key
            pairs.extend((split, img) for img in _images_of(entry))
            if entry.is_dir():
                folders.append(entry)
    if not any(k in data for k in SPLIT_KEYS):
        dirs = _layout_dirs(root)
        pairs = [(s, img) for s, ds in dirs.items() for d in ds for img in _images_of(d)]
        folders = [d for ds in dirs.values() for d in ds]
    return _Sources(root, _names(data, root, str(yml)), yml.name, pairs, folders)


def _orphans(folders: list[Path], used: set[Path], skips: Skips) -> None:
    """Record label files whose image is gone (their lights would otherwise vanish unnoticed)."""
    seen: set[Path] = set()
    for folder in folders:
        labels = label_path(folder / "x.png").parent
        if labels == folder or labels in seen or not labels.is_dir():
            continue  # darknet keeps labels beside images, with class and list files: no way to tell
        seen.add(labels)
        for txt in sorted(labels.rglob("*.txt")):
            if txt.resolve() not in used:
                skips.add(txt.name, f"label file {txt} has no image")


def _parse_line(text: str, where: str) -> tuple[int, float, float, float, float, float | None]:
    """``class cx cy w h [score]``, or a segmentation polygon ``class x1 y1 x2 y2 ...`` taken by its box."""
    fields = text.split()
    polygon = len(fields) >= 7 and len(fields) % 2 == 1
    if len(fields) not in (5, 6) and not polygon:
        raise DatasetFormatError(
            where, f"{len(fields)} values; a YOLO line is 'class cx cy w h' (a score may follow) or a polygon"
        )
    try:
        cls_f = float(fields[0])
        nums = [float(x) for x in fields[1:]]
    except ValueError:
        raise DatasetFormatError(where, f"{text.strip()!r} holds a value that is not a number") from None
    if not cls_f.is_integer() or cls_f < 0 or not all(math.isfinite(v) for v in nums):
        raise DatasetFormatError(where, f"{text.strip()!r}: the class must be a whole number and values finite")
    if polygon:
        xs, ys = nums[0::2], nums[1::2]
        x1, x2, y1, y2 = min(xs), max(xs), min(ys), max(ys)
        return int(cls_f), (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1, None
    return int(cls_f), nums[0], nums[1], nums[2], nums[3], (nums[4] if len(nums) == 5 else None)


def _read_labels(lbl: Path) -> list[tuple[int, tuple[int, float, float, float, float, float | None]]]:
    """A label file's boxes by line number (blank lines skipped)."""
    lines = lbl.read_text("utf-8-sig").splitlines()
    return [(n, _parse_line(text, f"{lbl}:{n}")) for n, text in enumerate(lines, start=1) if text.strip()]


def read(path: Path, *, check_images: bool = True) -> TLDataset:
    """Read a YOLO dataset folder (or its data.yaml).

    Raises:
        DatasetFormatError: A malformed data.yaml or label line (naming the file and line).
        EmptyDatasetError: No images in the YOLO folders, or none left.
    """
    root, names, names_from, pairs, folders = _sources(path)
    if not pairs:
        raise EmptyDatasetError(str(path), "no images in data.yaml's train/val/test, images/ or <split>/images/")
    if names is None:
        names = dict(enumerate(DRIVEMT_CLASSES))
    mapped: dict[int, StateArrow | UnknownStateError] = {}
    for cid, cname in names.items():
        try:
            mapped[cid] = state_from_label(cname, where=f"class {cid} ({names_from or 'default names'})")
        except UnknownStateError as exc:
            mapped[cid] = exc
    splits: dict[Path, set[str | None]] = {}
    for split, img in pairs:
        splits.setdefault(img.resolve(), set()).add(split)
    used = {label_path(img) for img in splits}
    locator = ImageLocator(root)
    skips = Skips()
    images: list[TLImage] = []
    for img, split_set in splits.items():
        split = next(iter(split_set)) if len(split_set) == 1 else None
        lbl = label_path(img)
        lines = _read_labels(lbl) if lbl.is_file() else []  # malformed labels stop the read, image or not
        try:
            file, w, h = locate_image(locator, img.name, [img], check=check_images)
        except UnreadableImageError as exc:
            skips.add(img.name, exc)
            continue
        assert file is not None
        boxes: list[TLBox] = []
        for n, (cls, cx, cy, bw, bh, score) in lines:
            at = f"{lbl}:{n}"
            state = mapped.get(cls)
            if state is None:
                skips.add(f"{file.stem} ({at})", UnknownStateError(f"class {cls}", f"{at}: not in the names"))
                continue
            if isinstance(state, UnknownStateError):
                skips.add(f"{file.stem} ({at})", state)
                continue
            if bw <= 0 or bh <= 0:
                skips.add(f"{file.stem} ({at})", f"empty box: width {bw:g}, height {bh:g}")
                continue
            box = TLBox(
                x1=(cx - bw / 2) * w,
                y1=(cy - bh / 2) * h,
                x2=(cx + bw / 2) * w,
                y2=(cy + bh / 2) * h,
                state=state[0],
                arrow=state[1],
                source_label=names[cls],
                score=None if score is None else min(max(score, 0.0), 1.0),
            )
            if keep_box(box, file.stem, n - 1, w, h, skips):
                boxes.append(box)
        images.append(
            TLImage(image_id=file.stem, path=relative_to(file, root), width=w, height=h, boxes=boxes, split=split)
        )
    _orphans(folders, used, skips)
    name = path.parent.name if path.is_file() else path.name
    return finish_dataset(name=name, root=root, fmt="yolo", images=images, skips=skips, source=path)


def write(
    dataset: TLDataset, out: Path, *, images: Mapping[str, np.ndarray] | None = None, copy_images: bool = True
) -> Path:
    """Write ``dataset`` for ultralytics: ``out/data.yaml``, ``out/images/<split>/``, ``out/labels/<split>/``.

    Without splits images go to ``out/images/`` and data.yaml names that folder for both train and val
    (ultralytics wants both). In a dataset where only some images have a split, the others go to train.
    ``path`` in data.yaml is the absolute output folder, as ultralytics resolves a relative one against
    its own datasets folder.

    Returns:
        ``out``.
    """
    check_in_memory_ids(dataset, images)
    any_split = any(im.split for im in dataset.images)

    def folder_of(im: TLImage) -> str:
        return (im.split or "train") if any_split else ""

    names = output_names(dataset, folder_of)
    present: list[str] = []
    for im in dataset.images:
        folder = folder_of(im)
        if folder and folder not in present:
            present.append(folder)
        img_path = out / "images" / folder / names[im.image_id]
        lines = []
        for b in im.boxes:
            bx1, by1 = max(b.x1, 0.0), max(b.y1, 0.0)
            bx2, by2 = min(b.x2, float(im.width)), min(b.y2, float(im.height))
            cls = DRIVEMT_CLASSES.index(b.state)
            cx, cy = (bx1 + bx2) / 2 / im.width, (by1 + by2) / 2 / im.height
            bw, bh = (bx2 - bx1) / im.width, (by2 - by1) / im.height
            lines.append(f"{cls} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}\n")
        lbl = label_path(img_path)
        lbl.parent.mkdir(parents=True, exist_ok=True)
        lbl.write_text("".join(lines), encoding="utf-8")
        write_image_file(dataset, im, img_path, images=images, copy_images=copy_images)
    data: dict[str, Any] = {"path": os.fspath(out.resolve())}
    if any_split:
        for key in SPLIT_KEYS:
            if key in present:
                data[key] = f"images/{key}"
        data.setdefault("train", f"images/{present[0]}")
        data.setdefault("val", data["train"])
        extra = [s for s in present if s not in SPLIT_KEYS]
        if extra:  # splits YOLO has no key for are still trained on
            data["train"] = [data["train"], *(f"images/{s}" for s in extra)]
    else:
        (out / "images").mkdir(parents=True, exist_ok=True)
        data["train"] = "images"
        data["val"] = "images"
    data["nc"] = len(DRIVEMT_CLASSES)
    data["names"] = dict(enumerate(DRIVEMT_CLASSES))
    out.mkdir(parents=True, exist_ok=True)
    (out / "data.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out
