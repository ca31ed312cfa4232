"""LISA Traffic Light dataset: ``;``-separated CSV annotations, one row per light.

Published layout (Kaggle ``mbornoe/lisa-traffic-light-dataset``)::

    Annotations/Annotations/dayTrain/dayClip1/frameAnnotationsBOX.csv   (and ...BULB.csv: lit bulbs only)
    Annotations/Annotations/daySequence1/frameAnnotationsBOX.csv
    dayTrain/dayTrain/dayClip1/frames/dayClip1--00000.jpg
    daySequence1/daySequence1/frames/daySequence1--00000.jpg

Each CSV starts with the header ``Filename;Annotation tag;Upper left corner X;Upper left corner Y;Lower
right corner X;Lower right corner Y;Origin file;Origin frame number;Origin track;Origin track frame
number``. ``Filename`` (``dayTraining/dayClip1--00000.jpg``) does not match where the frames were
unpacked, so images are found by the mirrored ``frames/`` folder or by name under the dataset root.
Frames are 1280x960; that size is assumed only when images are not checked and a file cannot be read.

Reading takes the ``frameAnnotationsBOX.csv`` files (whole housings); only where there are none are the
``BULB`` files (lit bulbs) or other CSVs with the LISA header read, so no light is counted twice. Frames
in a clip's ``frames/`` folder that no row names are lights-free images, as in the published clips.

LISA cannot carry: lights that are off (drivemt writes its own tag ``off``), right arrows and red or
yellow straight arrows (written without the arrow), occlusion, scores, sub-pixel corners (rounded).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from tools.tl.errors import DatasetFormatError, UnknownStateError, UnreadableImageError
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
from tools.tl.formats.states import lisa_tag, state_from_label
from tools.tl.models import TLBox, TLDataset, TLImage

__all__ = ["FRAME_SIZE", "HEADER", "read", "sniff", "write"]

HEADER = (
    "Filename",
    "Annotation tag",
    "Upper left corner X",
    "Upper left corner Y",
    "Lower right corner X",
    "Lower right corner Y",
    "Origin file",
    "Origin frame number",
    "Origin track",
    "Origin track frame number",
)
FRAME_SIZE = (1280, 960)
"""Every LISA frame's size (Point Grey Bumblebee XB3, left camera)."""

_ANNOTATIONS = ("Annotations", "Annotations")


def _is_lisa_csv(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as f:
            first = f.readline()
    except OSError:
        return False
    return tuple(c.strip() for c in first.split(";")[:6]) == HEADER[:6]


def _csv_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    for name in ("frameAnnotationsBOX.csv", "frameAnnotationsBULB.csv"):
        found = sorted(path.rglob(name))
        if found:
            return found
    return [p for p in sorted(path.rglob("*.csv")) if _is_lisa_csv(p)]


def sniff(path: Path) -> bool:
    """Whether ``path`` is a LISA CSV or a folder holding one."""
    if path.is_file():
        return path.suffix.lower() == ".csv" and _is_lisa_csv(path)
    return any(_is_lisa_csv(p) for p in path.rglob("*.csv"))


def _root_of(path: Path) -> Path:
    """The dataset root: the folder above ``Annotations/`` for a CSV inside it, else the CSV's folder."""
    if path.is_dir():
        return path
    for parent in path.parents:
        if parent.name == "Annotations" and parent.parent.name != "Annotations":
            return parent.parent
    return path.parent


def _frames_folder(root: Path, csv_path: Path) -> Path | None:
    """Where the published layout keeps a CSV's frames: ``Annotations/Annotations/a/b`` -> ``a/a/b/frames``."""
    try:
        rel = csv_path.parent.relative_to(root / Path(*_ANNOTATIONS))
    except ValueError:
        try:
            rel = csv_path.parent.relative_to(root / "Annotations")
        except ValueError:
            return None
    if not rel.parts:
        return None
    return root / rel.parts[0] / Path(*rel.parts) / "frames"


def _number(text: str, where: str, column: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise DatasetFormatError(where, f"{column} is {text!r}, not a number") from None


def read(path: Path, *, check_images: bool = True) -> TLDataset:
    """Read a LISA dataset folder (or one of its CSV files).

    Raises:
        DatasetFormatError: No LISA CSV, or a malformed row (naming the file and line).
        EmptyDatasetError: No image left.
    """
    root = _root_of(path)
    files = _csv_files(path)
    if not files:
        raise DatasetFormatError(str(path), "no LISA annotation file (frameAnnotationsBOX.csv with LISA's header)")
    locator = ImageLocator(root)
    skips = Skips()
    # (csv, Filename) -> [(line, tag, corners)], in file order; every row is checked before any image is read
    rows: dict[tuple[Path, str], list[tuple[int, str, tuple[float, ...]]]] = defaultdict(list)
    for csv_path in files:
        with csv_path.open(encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, delimiter=";")
            header = next(reader, None)
            if header is None or tuple(c.strip() for c in header[:6]) != HEADER[:6]:
                raise DatasetFormatError(f"{csv_path}:1", f"not LISA's header; expected {';'.join(HEADER)}")
            for row in reader:
                line = reader.line_num
                if not any(c.strip() for c in row):
                    continue
                if len(row) < 6:
                    raise DatasetFormatError(
                        f"{csv_path}:{line}",
                        f"{len(row)} field(s); a LISA row has at least the first six of the header",
                    )
                at = f"{csv_path}:{line}"
                if not row[0].strip():
                    raise DatasetFormatError(at, "the Filename field is empty")
                corners = tuple(_number(row[2 + i].strip(), at, HEADER[2 + i]) for i in range(4))
                rows[(csv_path, row[0].strip())].append((line, row[1].strip(), corners))

    images: list[TLImage] = []
    seen: set[Path] = set()
    frame_dirs: dict[Path, Path] = {}  # frames folder -> the CSV that holds it
    for csv_path in files:
        folder = _frames_folder(root, csv_path)
        if folder is not None:
            frame_dirs.setdefault(folder, csv_path)
    for (csv_path, filename), lines in rows.items():
        where = f"{csv_path}:{lines[0][0]}"
        candidates = [csv_path.parent / filename, root / filename]
        folder = _frames_folder(root, csv_path)
        if folder is not None:
            candidates.append(folder / Path(filename).name)
        try:
            file, w, h = locate_image(locator, filename, candidates, check=check_images, default=FRAME_SIZE)
        except UnreadableImageError as exc:
            skips.add(f"{where} {filename}", exc)
            continue
        if file is not None:
            if file in seen:
                skips.add(f"{where} {filename}", f"{file} is listed again here; its first listing is kept")
                continue
            seen.add(file)
            frame_dirs.setdefault(file.parent, csv_path)
        image_id = Path(filename).stem
        boxes: list[TLBox] = []
        for index, (line, tag, (x1, y1, x2, y2)) in enumerate(lines):
            at = f"{csv_path}:{line}"
            try:
                state, arrow = state_from_label(tag, where=at)
            except UnknownStateError as exc:
                skips.add(f"{image_id} ({at})", exc)
                continue
            if not (x2 > x1 and y2 > y1):
                skips.add(f"{image_id} ({at})", f"empty or inverted box ({x1:g}, {y1:g}, {x2:g}, {y2:g})")
                continue
            box = TLBox(x1=x1, y1=y1, x2=x2, y2=y2, state=state, arrow=arrow, source_label=tag)
            if keep_box(box, image_id, index, w, h, skips):
                boxes.append(box)
        images.append(_image(root, csv_path, file, filename, image_id, w, h, boxes))
    listed = {Path(filename).name for _, filename in rows}
    for folder, csv_path in frame_dirs.items():
        if not folder.is_dir():
            continue
        for file in sorted(folder.iterdir()):
            if file.suffix.lower() not in IMAGE_SUFFIXES or file in seen or file.name in listed:
                continue
            seen.add(file)
            try:
                _, w, h = locate_image(locator, file.name, [file], check=check_images, default=FRAME_SIZE)
            except UnreadableImageError as exc:
                skips.add(file.name, exc)
                continue
            images.append(_image(root, csv_path, file, file.name, file.stem, w, h, []))
    return finish_dataset(
        name=path.stem if path.is_file() else path.name, root=root, fmt="lisa", images=images, skips=skips, source=path
    )


def _image(
    root: Path, csv_path: Path, file: Path | None, filename: str, image_id: str, w: int, h: int, boxes: list[TLBox]
) -> TLImage:
    group = relative_to(csv_path.parent, root)
    return TLImage(
        image_id=image_id,
        path=relative_to(file, root) if file is not None else filename,
        width=w,
        height=h,
        boxes=boxes,
        split=split_from_name(group.split("Annotations/")[-1]),
        attributes={"lisa_annotations": relative_to(csv_path, root)},
    )


def _corners(box: TLBox, width: int, height: int) -> tuple[int, int, int, int]:
    """Whole-pixel corners, as LISA writes them, kept inside the image and at least a pixel wide."""
    x1, y1 = min(max(round(box.x1), 0), width - 1), min(max(round(box.y1), 0), height - 1)
    x2, y2 = min(max(round(box.x2), x1 + 1), width), min(max(round(box.y2), y1 + 1), height)
    return x1, y1, x2, y2


def write(
    dataset: TLDataset, out: Path, *, images: Mapping[str, np.ndarray] | None = None, copy_images: bool = True
) -> Path:
    """Write ``dataset`` in LISA's layout under ``out``: one group per split (``all`` without one).

    ``out/Annotations/Annotations/<group>/frameAnnotationsBOX.csv`` lists the lights; frames go to
    ``out/<group>/<group>/frames/``, as LISA's sequences do. Images without lights are written to the
    frames folder and listed in no row.

    Returns:
        ``out``.
    """
    check_in_memory_ids(dataset, images)
    names = output_names(dataset)
    groups: dict[str, list[TLImage]] = defaultdict(list)
    for im in dataset.images:
        groups[im.split or "all"].append(im)
    for group, members in groups.items():
        frames = out / group / group / "frames"
        frames.mkdir(parents=True, exist_ok=True)
        ann = out / Path(*_ANNOTATIONS) / group / "frameAnnotationsBOX.csv"
        ann.parent.mkdir(parents=True, exist_ok=True)
        with ann.open("w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, delimiter=";", lineterminator="\n")
            writer.writerow(HEADER)
            for index, im in enumerate(members):
                filename = f"frames/{names[im.image_id]}"
                for box in im.boxes:
                    tag = lisa_tag(box.state, box.arrow, box.source_label)
                    writer.writerow(
                        [filename, tag, *_corners(box, im.width, im.height), filename, index, filename, index]
                    )
                write_image_file(dataset, im, frames / names[im.image_id], images=images, copy_images=copy_images)
    return out
