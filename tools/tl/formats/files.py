"""Image files of a dataset on disk: finding them, sizing them, checking them, writing them out.

Shared by the four format modules, so that every format resolves paths, skips bad items and names its
output files the same way.
"""

from __future__ import annotations

import importlib
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from tools.tl.errors import BoxOutsideImageError, DatasetFormatError, EmptyDatasetError, UnreadableImageError
from tools.tl.images import write_image
from tools.tl.models import SkippedItem, TLBox, TLDataset, TLImage

__all__ = [
    "IMAGE_SUFFIXES",
    "ImageLocator",
    "Skips",
    "check_image",
    "check_in_memory_ids",
    "finish_dataset",
    "image_size",
    "keep_box",
    "locate_image",
    "output_names",
    "relative_to",
    "split_from_name",
    "unique_ids",
    "write_image_file",
]

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".pgm", ".ppm"})
"""Files taken for images when a folder is scanned."""


class Skips:
    """The items a reader leaves out, with their reasons (they end up in ``TLDataset.skipped``)."""

    def __init__(self) -> None:
        self.items: list[SkippedItem] = []

    def add(self, item: str, reason: str | Exception) -> None:
        """Record one left-out item."""
        self.items.append(SkippedItem(item=item, reason=str(reason)))


_MAGIC: tuple[tuple[bytes, int, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "PngImagePlugin", "PngImageFile"),
    (b"\xff\xd8\xff", 0, "JpegImagePlugin", "JpegImageFile"),
    (b"BM", 0, "BmpImagePlugin", "BmpImageFile"),
    (b"II*\x00", 0, "TiffImagePlugin", "TiffImageFile"),
    (b"MM\x00*", 0, "TiffImagePlugin", "TiffImageFile"),
    (b"WEBP", 8, "WebPImagePlugin", "WebPImageFile"),
    (b"P5", 0, "PpmImagePlugin", "PpmImageFile"),
    (b"P6", 0, "PpmImagePlugin", "PpmImageFile"),
)


def _pil_file(path: Path) -> Any | None:
    """The file opened by the PIL plugin its magic bytes name (header only), or ``None`` for other files.

    The plugin is called directly rather than through ``PIL.Image.open``: ultralytics replaces that
    function once imported, and on a file it cannot identify tries to install a HEIF plugin with pip.
    """
    with path.open("rb") as f:
        head = f.read(16)
    for magic, offset, module, cls in _MAGIC:
        if head[offset : offset + len(magic)] == magic:
            plugin = importlib.import_module(f"PIL.{module}")
            return getattr(plugin, cls)(str(path))
    return None


def image_size(path: Path) -> tuple[int, int]:
    """Width and height from the image header (PIL reads the header only), or from a full decode.

    Raises:
        UnreadableImageError: Missing file or not an image.
    """
    if not path.is_file():
        raise UnreadableImageError(path.name, f"no such file: {path}")
    try:
        im = _pil_file(path)
    except Exception:  # a header PIL cannot parse: let OpenCV decide
        im = None
    if im is None:
        return _decoded_size(path)
    with im:
        return int(im.size[0]), int(im.size[1])


def check_image(path: Path) -> tuple[int, int]:
    """Check that an image file can be read, cheaply, and return its size.

    PIL opens the header and verifies the file's structure (chunk checksums for PNG) without decoding the
    pixels; a file PIL does not parse is decoded by OpenCV instead.

    Raises:
        UnreadableImageError: Missing, truncated or not an image.
    """
    if not path.is_file():
        raise UnreadableImageError(path.name, f"no such file: {path}")
    try:
        im = _pil_file(path)
    except Exception:  # a header PIL cannot parse: let OpenCV decide
        im = None
    if im is None:
        return _decoded_size(path)
    with im:
        size = int(im.size[0]), int(im.size[1])
        try:
            im.verify()
        except Exception as exc:  # PIL reports broken files as OSError, SyntaxError, struct.error ...
            raise UnreadableImageError(path.name, f"broken image file {path}: {exc}") from exc
    return size


def _decoded_size(path: Path) -> tuple[int, int]:
    import cv2

    data = np.fromfile(str(path), dtype=np.uint8)
    img = cv2.imdecode(data, cv2.IMREAD_UNCHANGED) if data.size else None
    if img is None:
        raise UnreadableImageError(path.name, f"not a readable image: {path}")
    return int(img.shape[1]), int(img.shape[0])


class ImageLocator:
    """Finds the file an annotation names, however the dataset was unpacked.

    Annotation files name images relative to some folder that moved when the dataset was downloaded
    (LISA's ``dayTraining/dayClip1--00000.jpg`` lives in ``dayTrain/dayTrain/dayClip1/frames/``, Bosch's
    test labels once held absolute paths of Bosch's servers). The candidates given are tried first; then
    the file is looked up by name under the dataset root, the longest matching tail of the path winning.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_name: dict[str, list[Path]] | None = None

    def _index(self) -> dict[str, list[Path]]:
        if self._by_name is None:
            index: dict[str, list[Path]] = defaultdict(list)
            for p in sorted(self.root.rglob("*")):
                if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file():
                    index[p.name].append(p)
            self._by_name = dict(index)
        return self._by_name

    def find(self, name: str, candidates: Iterable[Path]) -> Path:
        """The image file for ``name`` (as the annotation wrote it).

        Raises:
            UnreadableImageError: No file, or several equally good ones.
        """
        for c in candidates:
            if c.is_file():
                return c
        posix = PurePosixPath(name.replace("\\", "/"))
        found = self._index().get(posix.name, [])
        if not found:
            raise UnreadableImageError(posix.name, f"image {name!r} not found under {self.root}")
        if len(found) == 1:
            return found[0]
        want = posix.parts[::-1]

        def tail(p: Path) -> int:
            n = 0
            for a, b in zip(p.parts[::-1], want, strict=False):
                if a != b:
                    break
                n += 1
            return n

        scores = sorted(((tail(p), p) for p in found), key=lambda t: -t[0])
        if scores[0][0] == scores[1][0]:
            raise UnreadableImageError(
                posix.name, f"image {name!r} is ambiguous: {', '.join(str(p) for _, p in scores[:3])}"
            )
        return scores[0][1]


def locate_image(
    locator: ImageLocator,
    name: str,
    candidates: Iterable[Path],
    *,
    check: bool,
    annotated: tuple[int, int] | None = None,
    default: tuple[int, int] | None = None,
) -> tuple[Path | None, int, int]:
    """Find an annotated image and its size.

    With ``check`` the file must exist and be readable, and a size the annotation gives must match the
    file's. Without it the file is not opened when the annotation gives the size; otherwise its header is
    read, and where that fails the format's published frame size (``default``) is taken if it has one.

    Returns:
        The file (``None`` when not found and not needed), width and height.

    Raises:
        UnreadableImageError: The image cannot be used.
    """
    try:
        path: Path | None = locator.find(name, candidates)
    except UnreadableImageError:
        if check or (annotated is None and default is None):
            raise
        path = None
    if check:
        assert path is not None
        w, h = check_image(path)
        if annotated is not None and annotated != (w, h):
            raise UnreadableImageError(
                path.name, f"the annotation says {annotated[0]}x{annotated[1]} but the file is {w}x{h}: {path}"
            )
        return path, w, h
    if annotated is not None:
        return path, annotated[0], annotated[1]
    try:
        if path is None:
            raise UnreadableImageError(name, "not found")
        w, h = image_size(path)
        return path, w, h
    except UnreadableImageError:
        if default is None:
            raise
        return path, default[0], default[1]


def relative_to(path: Path, root: Path) -> str:
    """The path relative to the dataset root where it lies inside it, else absolute (POSIX separators)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def split_from_name(name: str) -> str | None:
    """train / val / test from a file or folder name (LISA's test sets are its ``Sequence`` folders)."""
    low = name.lower()
    if "train" in low:
        return "train"
    if "val" in low:
        return "val"
    if "test" in low or "sequence" in low:
        return "test"
    return None


def keep_box(box: TLBox, image_id: str, index: int, width: int, height: int, skips: Skips) -> bool:
    """Whether a box lies in its image; a box that does not is recorded as skipped."""
    if box.inside(width, height):
        return True
    err = BoxOutsideImageError(image_id, index, box.xyxy(), (width, height))
    skips.add(f"{image_id} box {index}", err)
    return False


def unique_ids(images: list[TLImage]) -> list[TLImage]:
    """Give images their file stem as id, or their path without suffix where stems repeat."""
    stems: dict[str, int] = defaultdict(int)
    for im in images:
        stems[im.image_id] += 1
    out = []
    seen: set[str] = set()
    for im in images:
        new_id = im.image_id
        if stems[im.image_id] > 1 and im.path:
            new_id = str(PurePosixPath(im.path).with_suffix("")).lstrip("/")
        base, n = new_id, 1
        while new_id in seen:
            n += 1
            new_id = f"{base}~{n}"
        seen.add(new_id)
        out.append(im if new_id == im.image_id else im.model_copy(update={"image_id": new_id}))
    return out


def finish_dataset(*, name: str, root: Path, fmt: str, images: list[TLImage], skips: Skips, source: Path) -> TLDataset:
    """Build the dataset, or refuse an empty one.

    Raises:
        EmptyDatasetError: No image was left.
    """
    if not images:
        reason = "no labelled images found"
        if skips.items:
            first = skips.items[0]
            reason = f"no images left: {len(skips.items)} item(s) skipped, the first {first.item}: {first.reason}"
        raise EmptyDatasetError(str(source), reason)
    return TLDataset(
        name=name or root.resolve().name,
        root=str(root.resolve()),
        format=fmt,
        images=unique_ids(images),
        skipped=list(skips.items),
    )


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def output_names(dataset: TLDataset, folder: Callable[[TLImage], str | None] | None = None) -> dict[str, str]:
    """A file name per image for a written dataset: the source file's name, or its id where names clash.

    Args:
        dataset: The dataset being written.
        folder: The output folder an image goes to (its split by default); names are unique per folder.
    """
    where = folder or (lambda im: im.split)
    names: dict[str, str] = {}
    wanted: dict[tuple[str | None, str], int] = defaultdict(int)
    first: dict[str, str] = {}
    for im in dataset.images:
        suffix = PurePosixPath(im.path).suffix.lower() if im.path else ""
        suffix = suffix if suffix in IMAGE_SUFFIXES else ".png"
        base = PurePosixPath(im.path).name if im.path else ""
        if PurePosixPath(base).suffix.lower() not in IMAGE_SUFFIXES:
            base = f"{_SAFE.sub('_', im.image_id)}{suffix}"
        first[im.image_id] = base
        wanted[(where(im), base.lower())] += 1
    used: set[tuple[str | None, str]] = set()
    for im in dataset.images:
        base = first[im.image_id]
        if wanted[(where(im), base.lower())] > 1:
            base = f"{_SAFE.sub('_', im.image_id)}{PurePosixPath(base).suffix}"
        stem, suffix, n = PurePosixPath(base).stem, PurePosixPath(base).suffix, 1
        while (where(im), base.lower()) in used:
            n += 1
            base = f"{stem}~{n}{suffix}"
        used.add((where(im), base.lower()))
        names[im.image_id] = base
    return names


def write_image_file(
    dataset: TLDataset,
    image: TLImage,
    dest: Path,
    *,
    images: Mapping[str, np.ndarray] | None,
    copy_images: bool,
) -> None:
    """Put one image at ``dest``: encode it when given in memory, else copy the source file.

    Raises:
        DatasetFormatError: An in-memory image whose size differs from its labels'.
        UnreadableImageError: The source file to copy is missing.
    """
    if images is not None and image.image_id in images:
        arr = images[image.image_id]
        if arr.ndim != 3 or arr.shape[2] != 3 or (arr.shape[1], arr.shape[0]) != (image.width, image.height):
            raise DatasetFormatError(
                image.image_id,
                f"in-memory image has shape {arr.shape}, but its labels are for a {image.width}x{image.height} RGB image",
            )
        write_image(dest, arr.astype(np.uint8, copy=False))
        return
    if not copy_images:
        return
    src = dataset.image_path(image)
    if not src.is_file():
        raise UnreadableImageError(image.image_id, f"no such file to copy: {src}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() and dest.resolve() == src.resolve():
        return
    shutil.copyfile(src, dest)


def check_in_memory_ids(dataset: TLDataset, images: Mapping[str, np.ndarray] | None) -> None:
    """Refuse to write a dataset whose ids repeat, or in-memory images for ids it does not have.

    Both are a caller's slip that would otherwise overwrite or silently drop an image.

    Raises:
        DatasetFormatError: Naming the ids.
    """
    ids = [im.image_id for im in dataset.images]
    if len(set(ids)) != len(ids):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise DatasetFormatError(dataset.name, f"image ids repeat: {', '.join(repeated[:5])}")
    if not images:
        return
    unknown = sorted(set(images) - set(ids))
    if unknown:
        raise DatasetFormatError(dataset.name, f"in-memory images for unknown image ids: {', '.join(unknown[:5])}")
