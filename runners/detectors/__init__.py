"""Traffic-light detectors under test: ultralytics YOLO, torchvision Faster R-CNN and SSDlite.

Every detector loads from a local file named by a ``KIND:PATH`` spec (nothing is fetched from a model
hub) and answers :class:`Detector`'s ``predict`` with :class:`tools.tl.models.TLBox` lists. torch,
torchvision and ultralytics load inside the functions that need them.

    det = load_detector("yolo:runs/demo/yolo.pt")
    boxes = det.predict([read_image("frame.png")], conf=0.25)[0]
"""

from __future__ import annotations

from runners.detectors.base import (
    CLASS_NAMES,
    DEFAULT_TORCH_THREADS,
    DETECTOR_KINDS,
    DetectorKind,
    DetectorSpec,
    TrainProgress,
    state_for_class,
)
from runners.detectors.errors import (
    DetectorCheckpointError,
    DetectorClassesError,
    DetectorError,
    DetectorSpecError,
    DetectorTrainingError,
    UnknownDetectorKindError,
)
from runners.detectors.training import DemoRecipe, demo_training_recipe, train_detector
from tools.tl.detection import Detector

__all__ = [
    "CLASS_NAMES",
    "DEFAULT_TORCH_THREADS",
    "DETECTOR_KINDS",
    "DemoRecipe",
    "Detector",
    "DetectorCheckpointError",
    "DetectorClassesError",
    "DetectorError",
    "DetectorKind",
    "DetectorSpec",
    "DetectorSpecError",
    "DetectorTrainingError",
    "TrainProgress",
    "UnknownDetectorKindError",
    "demo_training_recipe",
    "load_detector",
    "state_for_class",
    "train_detector",
]


def load_detector(
    spec: str | DetectorSpec, *, name: str | None = None, threads: int | None = DEFAULT_TORCH_THREADS
) -> Detector:
    """Load a detector from a local file.

    Args:
        spec: ``yolo:PATH`` (ultralytics ``.pt`` weights, or a model yaml such as ``yolov8n.yaml`` built
            untrained with the four states), ``frcnn:PATH`` or ``ssdlite:PATH`` (checkpoints written by
            :func:`train_detector`).
        name: Its name in reports (the spec when None; the Judge names a detector by its submitted ref).
        threads: Torch intra-op threads (two by default: the machines are small and shared).

    Returns:
        The detector, named.

    Raises:
        DetectorSpecError: Malformed spec or missing file.
        UnknownDetectorKindError: A kind other than yolo, frcnn, ssdlite.
        DetectorCheckpointError: A file that is not a checkpoint of that kind.
        DetectorClassesError: A model whose classes are not traffic-light states.
    """
    parsed = DetectorSpec.parse(spec) if isinstance(spec, str) else spec
    name = name or str(parsed)
    if parsed.kind == "yolo":
        from runners.detectors.yolo import load_yolo

        return load_yolo(parsed.path, name=name, threads=threads)
    from runners.detectors.torchvision_models import load_torchvision

    return load_torchvision(parsed.kind, parsed.path, name=name, threads=threads)
