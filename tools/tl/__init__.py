"""Traffic-light tools (TIGAUG): the label model, dataset formats, the twelve transformations, metrics.

Heavy modules (imgaug, OpenCV, torch) load inside the functions that use them.
"""

from tools.tl.errors import (
    BoxOutsideImageError,
    DatasetFormatError,
    EmptyDatasetError,
    TLDataError,
    UnknownStateError,
    UnknownTransformError,
    UnreadableImageError,
)
from tools.tl.labels import TL_STATES, SkippedItem, TLBox, TLDataset, TLImage, TLState, read_image, write_image

__all__ = [
    "TL_STATES",
    "BoxOutsideImageError",
    "DatasetFormatError",
    "EmptyDatasetError",
    "SkippedItem",
    "TLBox",
    "TLDataError",
    "TLDataset",
    "TLImage",
    "TLState",
    "UnknownStateError",
    "UnknownTransformError",
    "UnreadableImageError",
    "read_image",
    "write_image",
]
