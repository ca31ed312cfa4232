"""What a traffic-light detector under test is, to the tools that judge it (adapters are in runners.detectors).

A detector is anything with a ``name`` and a ``predict`` that turns RGB images into
:class:`tools.tl.models.TLBox` lists, the state taken from the predicted class and ``score`` set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from tools.tl.models import TLBox

__all__ = ["EVAL_CONF", "Detector"]

EVAL_CONF = 0.001
"""Confidence floor for ground-truth mAP: detections are ranked COCO-style, so low scores still count."""


@runtime_checkable
class Detector(Protocol):
    """A traffic-light detector under test."""

    @property
    def name(self) -> str:
        """Shown in reports and events: the spec it was loaded from."""
        ...

    def predict(self, images: Sequence[np.ndarray], *, conf: float = 0.25) -> list[list[TLBox]]:
        """Detect traffic lights.

        Args:
            images: RGB ``uint8`` arrays, ``H x W x 3``, any sizes.
            conf: Detections scoring below this are dropped.

        Returns:
            One list per image of boxes in that image's pixels, with ``state`` and ``score`` set.
        """
        ...
