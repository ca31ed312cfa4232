"""COCO object-detection JSON: ``images``, ``annotations`` (``bbox`` = [x, y, width, height]), ``categories``.

Layout drivemt writes (and reads, with the variants below)::

    annotations/instances_<split>.json      (instances_default.json without splits, as CVAT names it)
    images/<split>/x.png                    file_name is the image's name, as in COCO 2017

Categories are mapped onto drivemt's states by name (``red``, ``traffic_light_red``, ``RedLeft`` ...);
an annotation's ``attributes`` (CVAT's place for them) may hold ``arrow``, ``occluded`` and
``source_label``, and ``score`` (COCO's result format) is kept. ``file_name`` is looked for beside the
JSON, under the root, under ``images/<split>/``, ``images/``, ``<split>/``, and by name under the root.
Crowd regions (``iscrowd: 1``) are not single lights and are skipped.

drivemt writes categories 1-4 = red, yellow, green, off (0 stays free for a background class, as
torchvision expects). COCO carries everything drivemt's label model has.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

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
from tools.tl.formats.states import ARROWS, DRIVEMT_CLASSES, StateArrow, state_from_label
from tools.tl.models import TLBox, TLDataset, TLImage

__all__ = ["CATEGORY_IDS", "read", "sniff", "write"]

CATEGORY_IDS: dict[str, int] = {s: i + 1 for i, s in enumerate(DRIVEMT_CLASSES)}
"""drivemt's COCO category ids."""


def _looks_coco(path: Path) -> bool:
    """A JSON file with an ``images`` key near its start (COCO files begin with info, licenses, images)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            head = f.read(2_000_000)
            if '"images"' not in head and len(head) == 2_000_000:
                head += f.read()
    except OSError:
        return False
    return head.lstrip().startswith("{") and '"images"' in head


def _json_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    for folder in (path, path / "annotations"):
        found = [p for p in sorted(folder.glob("*.json")) if _looks_coco(p)]
        if found:
            return found
    return [p for p in sorted(path.rglob("*.json")) if _looks_coco(p)]


def sniff(path: Path) -> bool:
    """Whether ``path`` is a COCO JSON file or a folder holding one."""
    if path.is_file():
        return path.suffix.lower() == ".json" and _looks_coco(path)
    return bool(_json_files(path))


def _root_of(path: Path) -> Path:
    if path.is_dir():
        return path
    return path.parent.parent if path.parent.name == "annotations" else path.parent


def _load(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{file}:{exc.lineno}", f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise DatasetFormatError(str(file), "a COCO file is an object with an 'images' list")
    for key in ("annotations", "categories"):
        if not isinstance(data.get(key, []), list):
            raise DatasetFormatError(str(file), f"'{key}' is not a list")
    return data


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def read(path: Path, *, check_images: bool = True) -> TLDataset:
    """Read a COCO dataset folder (its JSON files) or one JSON file.

    Raises:
        DatasetFormatError: No COCO JSON, or a malformed one (naming the file and the line or element).
        EmptyDatasetError: No image left.
    """
    files = _json_files(path)
    if not files:
        raise DatasetFormatError(str(path), "no COCO file (a JSON object with images, annotations, categories)")
    root = _root_of(path)
    locator = ImageLocator(root)
    skips = Skips()
    images: list[TLImage] = []
    for file in files:
        images.extend(_read_file(file, root, locator, skips, check_images))
    name = path.stem if path.is_file() else path.name
    return finish_dataset(name=name, root=root, fmt="coco", images=images, skips=skips, source=path)


def _read_file(file: Path, root: Path, locator: ImageLocator, skips: Skips, check: bool) -> list[TLImage]:
    data = _load(file)
    split = split_from_name(file.stem)
    categories: dict[Any, str] = {}
    for i, c in enumerate(data.get("categories", [])):
        if not isinstance(c, dict) or "id" not in c or not isinstance(c.get("name"), str):
            raise DatasetFormatError(f"{file}", f"categories[{i}] needs an id and a name: {c!r}")
        categories[c["id"]] = c["name"]
    mapped: dict[Any, StateArrow | UnknownStateError] = {}
    for cid, cname in categories.items():
        try:
            mapped[cid] = state_from_label(cname, where=f"{file}: category {cid}")
        except UnknownStateError as exc:
            mapped[cid] = exc

    entries: dict[Any, dict[str, Any]] = {}
    for i, im in enumerate(data["images"]):
        where = f"{file}: images[{i}]"
        if not isinstance(im, dict) or "id" not in im or not isinstance(im.get("file_name"), str):
            raise DatasetFormatError(where, f"an image needs an id and a file_name: {im!r}")
        if im["id"] in entries:
            raise DatasetFormatError(where, f"image id {im['id']!r} appears twice")
        w, h = im.get("width"), im.get("height")
        if (w is not None or h is not None) and not (isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0):
            raise DatasetFormatError(where, f"width/height are {w!r}/{h!r}, not positive whole numbers")
        entries[im["id"]] = im

    by_image: dict[Any, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for i, ann in enumerate(data.get("annotations", [])):
        where = f"{file}: annotations[{i}]"
        if not isinstance(ann, dict):
            raise DatasetFormatError(where, f"not an object: {ann!r}")
        bbox = ann.get("bbox")
        if not (isinstance(bbox, list) and len(bbox) == 4 and all(_num(v) for v in bbox)):
            raise DatasetFormatError(where, f"bbox is {bbox!r}, not [x, y, width, height]")
        if ann.get("image_id") not in entries:
            skips.add(f"annotation {ann.get('id', i)}", f"{where}: no image with id {ann.get('image_id')!r}")
            continue
        by_image[ann["image_id"]].append((i, ann))

    out: list[TLImage] = []
    for i, (image_key, im) in enumerate(entries.items()):
        name = im["file_name"]
        annotated = (im["width"], im["height"]) if "width" in im and "height" in im else None
        bases = [root / "images" / split, root / "images", root / split] if split else [root / "images"]
        candidates = [file.parent / name, root / name, *(b / name for b in bases)]
        try:
            found, w, h = locate_image(locator, name, candidates, check=check, annotated=annotated)
        except UnreadableImageError as exc:
            skips.add(f"{file}: images[{i}] {name}", exc)
            continue
        image_id = Path(name).stem
        boxes: list[TLBox] = []
        for k, (n, ann) in enumerate(by_image.get(image_key, [])):
            where = f"{file}: annotations[{n}]"
            box = _box(ann, mapped, categories, where, skips, image_id)
            if box is not None and keep_box(box, image_id, k, w, h, skips):
                boxes.append(box)
        attributes = {"coco_id": image_key, "coco_file": relative_to(file, root)}
        out.append(
            TLImage(
                image_id=image_id,
                path=relative_to(found, root) if found is not None else name,
                width=w,
                height=h,
                boxes=boxes,
                split=split,
                attributes=attributes,
            )
        )
    return out


def _box(
    ann: dict[str, Any],
    mapped: dict[Any, StateArrow | UnknownStateError],
    categories: dict[Any, str],
    where: str,
    skips: Skips,
    image_id: str,
) -> TLBox | None:
    item = f"{image_id} annotation {ann.get('id', '?')}"
    if ann.get("iscrowd"):
        skips.add(item, f"{where}: a crowd region (iscrowd), not one light")
        return None
    cid = ann.get("category_id")
    state = mapped.get(cid)
    if state is None:
        skips.add(item, UnknownStateError(f"category {cid!r}", f"{where}: no such category"))
        return None
    if isinstance(state, UnknownStateError):
        skips.add(item, state)
        return None
    x, y, bw, bh = (float(v) for v in ann["bbox"])
    if bw <= 0 or bh <= 0:
        skips.add(item, f"{where}: empty box [{x:g}, {y:g}, {bw:g}, {bh:g}]")
        return None
    raw = ann.get("attributes")
    attrs: dict[str, Any] = raw if isinstance(raw, dict) else {}
    arrow = attrs["arrow"] if attrs.get("arrow") in ARROWS else state[1]
    score = ann.get("score")
    source = attrs.get("source_label")
    return TLBox(
        x1=x,
        y1=y,
        x2=x + bw,
        y2=y + bh,
        state=state[0],
        arrow=arrow,
        occluded=bool(attrs.get("occluded", False)),
        source_label=source if isinstance(source, str) else categories[cid],
        score=min(max(float(score), 0.0), 1.0) if score is not None and _num(score) else None,
    )


def write(
    dataset: TLDataset, out: Path, *, images: Mapping[str, np.ndarray] | None = None, copy_images: bool = True
) -> Path:
    """Write ``dataset`` as COCO: ``out/annotations/instances_<split>.json`` and ``out/images/<split>/``.

    Returns:
        ``out``.
    """
    check_in_memory_ids(dataset, images)
    names = output_names(dataset)
    groups: dict[str | None, list[TLImage]] = defaultdict(list)
    for im in dataset.images:
        groups[im.split].append(im)
    categories = [{"id": cid, "name": s, "supercategory": "traffic_light"} for s, cid in CATEGORY_IDS.items()]
    (out / "annotations").mkdir(parents=True, exist_ok=True)
    for split, members in groups.items():
        folder = out / "images" / split if split else out / "images"
        folder.mkdir(parents=True, exist_ok=True)
        coco_images: list[dict[str, Any]] = []
        anns: list[dict[str, Any]] = []
        for image_id, im in enumerate(members, start=1):
            coco_images.append(
                {"id": image_id, "file_name": names[im.image_id], "width": im.width, "height": im.height}
            )
            for b in im.boxes:
                attrs: dict[str, Any] = {"occluded": b.occluded}
                if b.arrow is not None:
                    attrs["arrow"] = b.arrow
                if b.source_label is not None:
                    attrs["source_label"] = b.source_label
                ann: dict[str, Any] = {
                    "id": len(anns) + 1,
                    "image_id": image_id,
                    "category_id": CATEGORY_IDS[b.state],
                    "bbox": [b.x1, b.y1, b.width, b.height],
                    "area": b.area,
                    "iscrowd": 0,
                    "attributes": attrs,
                }
                if b.score is not None:
                    ann["score"] = b.score
                anns.append(ann)
            write_image_file(dataset, im, folder / names[im.image_id], images=images, copy_images=copy_images)
        doc = {
            "info": {"description": f"{dataset.name}, written by drivemt", "version": "1.0"},
            "licenses": [],
            "images": coco_images,
            "annotations": anns,
            "categories": categories,
        }
        path = out / "annotations" / f"instances_{split or 'default'}.json"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return out
