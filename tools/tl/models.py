"""One label model for traffic-light datasets, whatever format they came in (LISA, Bosch, YOLO, COCO).

Boxes are absolute pixel corners ``(x1, y1, x2, y2)`` with ``x2 > x1`` and ``y2 > y1``, in the image's
own pixel grid (x to the right, y down). Every format maps its states onto :data:`TL_STATES`
(red, yellow, green, off); arrow lights keep their colour and set ``arrow``. Images in memory are
``numpy`` arrays, ``H x W x 3``, ``uint8``, **RGB** (OpenCV's BGR is converted at the edge, in
:func:`read_image` / :func:`write_image`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "TL_STATES",
    "TRANSFORM_CODES",
    "Arrow",
    "Orientation",
    "SkippedItem",
    "TLBox",
    "TLDataset",
    "TLImage",
    "TLState",
]

TLState = Literal["red", "yellow", "green", "off"]
TL_STATES: tuple[str, ...] = get_args(TLState)
Arrow = Literal["left", "right", "straight"]
Orientation = Literal["vertical", "horizontal"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TLBox(_Model):
    """One traffic light: its box, state and attributes."""

    x1: float
    y1: float
    x2: float
    y2: float
    state: TLState
    arrow: Arrow | None = Field(default=None, description="Arrow lights keep their colour and name the arrow.")
    occluded: bool = False
    source_label: str | None = Field(default=None, description="The label as the source format spelled it.")
    score: float | None = Field(default=None, ge=0, le=1, description="Detector confidence; None for ground truth.")

    @model_validator(mode="after")
    def _ordered(self) -> TLBox:
        if not (self.x2 > self.x1 and self.y2 > self.y1):
            raise ValueError(f"box corners out of order: ({self.x1}, {self.y1}, {self.x2}, {self.y2})")
        return self

    @property
    def width(self) -> float:
        """Box width in pixels."""
        return self.x2 - self.x1

    @property
    def height(self) -> float:
        """Box height in pixels."""
        return self.y2 - self.y1

    @property
    def cx(self) -> float:
        """Centre x."""
        return (self.x1 + self.x2) / 2

    @property
    def cy(self) -> float:
        """Centre y."""
        return (self.y1 + self.y2) / 2

    @property
    def area(self) -> float:
        """Box area in square pixels."""
        return self.width * self.height

    @property
    def orientation(self) -> Orientation:
        """Vertical housings are taller than wide (red on top); horizontal ones wider (red on the left)."""
        return "vertical" if self.height >= self.width else "horizontal"

    def xyxy(self) -> tuple[float, float, float, float]:
        """The corners as a tuple."""
        return (self.x1, self.y1, self.x2, self.y2)

    def int_xyxy(self) -> tuple[int, int, int, int]:
        """Corners rounded outward to whole pixels (for slicing: ``img[y1:y2, x1:x2]``)."""
        return (math.floor(self.x1), math.floor(self.y1), math.ceil(self.x2), math.ceil(self.y2))

    def inside(self, width: int, height: int, *, tol: float = 0.5) -> bool:
        """Whether the box lies within an image of this size (``tol`` pixels of rounding allowed)."""
        return self.x1 >= -tol and self.y1 >= -tol and self.x2 <= width + tol and self.y2 <= height + tol

    def clipped(self, width: int, height: int) -> TLBox | None:
        """The box cut to the image, or ``None`` when nothing of it is left."""
        x1, y1 = max(0.0, self.x1), max(0.0, self.y1)
        x2, y2 = min(float(width), self.x2), min(float(height), self.y2)
        if x2 - x1 < 1 or y2 - y1 < 1:
            return None
        return self.model_copy(update={"x1": x1, "y1": y1, "x2": x2, "y2": y2})


class TLImage(_Model):
    """One labelled image."""

    image_id: str = Field(min_length=1, description="Unique within the dataset; the file stem by default.")
    path: str | None = Field(default=None, description="Image file, relative to the dataset root or absolute.")
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    boxes: list[TLBox] = Field(default_factory=list)
    split: str | None = Field(default=None, description="train / val / test, where the format says.")
    attributes: dict[str, Any] = Field(default_factory=dict, description="Anything else the format carried.")

    def check_boxes(self) -> None:
        """Raise when a box lies outside the image.

        Raises:
            BoxOutsideImageError: Naming the image and the box.
        """
        from tools.tl.errors import BoxOutsideImageError  # here, so that `import bus` loads no error module of tl

        for i, box in enumerate(self.boxes):
            if not box.inside(self.width, self.height):
                raise BoxOutsideImageError(self.image_id, i, box.xyxy(), (self.width, self.height))

    def resolve(self, root: Path | None) -> Path:
        """The image file's full path."""
        if self.path is None:
            from tools.tl.errors import UnreadableImageError

            raise UnreadableImageError(self.image_id, "no image path")
        p = Path(self.path)
        return p if p.is_absolute() or root is None else root / p


class SkippedItem(_Model):
    """An image or label left out, and why (datasets go on without it)."""

    item: str
    reason: str


class TLDataset(_Model):
    """A labelled traffic-light dataset."""

    name: str
    root: str | None = Field(default=None, description="Folder image paths are relative to.")
    format: str = Field(default="drivemt", description="The format it was read from: lisa, bosch, yolo, coco ...")
    images: list[TLImage] = Field(default_factory=list)
    skipped: list[SkippedItem] = Field(default_factory=list, description="Items that could not be read, and why.")

    @property
    def root_path(self) -> Path | None:
        """The root as a path."""
        return Path(self.root) if self.root else None

    def image_path(self, image: TLImage) -> Path:
        """Full path of one image's file."""
        return image.resolve(self.root_path)

    def box_count(self) -> int:
        """Boxes over all images."""
        return sum(len(i.boxes) for i in self.images)


TRANSFORM_CODES: tuple[str, ...] = ("RN", "SW", "FG", "LF", "OE", "UE", "MB", "CC", "MP", "AD", "RT", "SC")
"""TIGAUG's twelve transformation codes, in the paper's order."""
