"""Errors of the traffic-light tools: bad images, boxes, states and datasets.

All are bad input (:class:`tools.errors.BadInputError`): retrying cannot help. Dataset readers and the
augmenter catch them per item, record the item as skipped with the reason, and go on with the rest.
"""

from __future__ import annotations

from tools.errors import BadInputError

__all__ = [
    "BoxOutsideImageError",
    "DatasetFormatError",
    "EmptyDatasetError",
    "TLDataError",
    "UnknownStateError",
    "UnknownTransformError",
    "UnreadableImageError",
]


class TLDataError(BadInputError):
    """Base of the traffic-light data errors."""


class UnreadableImageError(TLDataError):
    """An image file that is missing or cannot be decoded."""

    def __init__(self, image_id: str, reason: str) -> None:
        self.image_id = image_id
        self.reason = reason
        super().__init__(f"image {image_id}: {reason}")


class BoxOutsideImageError(TLDataError):
    """A labelled box that lies (partly) outside its image."""

    def __init__(
        self, image_id: str, index: int, box: tuple[float, float, float, float], size: tuple[int, int]
    ) -> None:
        self.image_id = image_id
        self.index = index
        self.box = box
        self.size = size
        x1, y1, x2, y2 = box
        super().__init__(
            f"image {image_id}: box {index} ({x1:g}, {y1:g}, {x2:g}, {y2:g}) lies outside the {size[0]}x{size[1]} image"
        )


class UnknownStateError(TLDataError):
    """A label whose state cannot be mapped onto red, yellow, green or off."""

    def __init__(self, label: str, where: str) -> None:
        self.label = label
        self.where = where
        super().__init__(f"{where}: unknown traffic-light state {label!r} (expected a red, yellow, green or off label)")


class EmptyDatasetError(TLDataError):
    """A dataset with no images (or none that could be read)."""

    def __init__(self, source: str, reason: str = "no labelled images found") -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"dataset {source}: {reason}")


class DatasetFormatError(TLDataError):
    """An annotation file that does not follow its format."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class UnknownTransformError(TLDataError):
    """A transformation code that is not one of TIGAUG's twelve."""

    def __init__(self, code: str, known: list[str]) -> None:
        self.code = code
        self.known = known
        super().__init__(f"unknown transformation {code!r}; use one of {', '.join(known)}")
