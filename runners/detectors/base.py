"""The detector interface, detector specs (``KIND:PATH``) and the fixed class order.

A detector under test is anything with a ``name`` and a ``predict`` that turns RGB images into
:class:`tools.tl.models.TLBox` lists, the state taken from the predicted class and ``score`` set. The
class index order is fixed (:data:`CLASS_NAMES`: red, yellow, green, off) and stored in every checkpoint
drivemt writes, so a checkpoint read back maps its indices the same way whatever the code's order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from runners.detectors.errors import DetectorClassesError, DetectorSpecError, UnknownDetectorKindError
from tools.tl.models import TL_STATES, TLState

__all__ = [
    "CLASS_NAMES",
    "DEFAULT_TORCH_THREADS",
    "DETECTOR_KINDS",
    "DetectorKind",
    "DetectorSpec",
    "TrainProgress",
    "set_torch_threads",
    "state_for_class",
    "states_for_names",
]

DetectorKind = Literal["yolo", "frcnn", "ssdlite"]
DETECTOR_KINDS: tuple[str, ...] = get_args(DetectorKind)

CLASS_NAMES: tuple[TLState, ...] = ("red", "yellow", "green", "off")
"""Class index -> state for every model drivemt trains (torchvision models add background as 0)."""
assert set(CLASS_NAMES) == set(TL_STATES)

DEFAULT_TORCH_THREADS = 2
"""Intra-op threads for inference and training: the build machines have two cores shared with others."""

TrainProgress = Callable[[str, float], None]
"""Training progress: called with a short message and the fraction done (0..1)."""

_SYNONYMS: dict[str, TLState] = {
    "red": "red",
    "stop": "red",
    "yellow": "yellow",
    "amber": "yellow",
    "warning": "yellow",
    "green": "green",
    "go": "green",
    "off": "off",
    "unknown": "off",
}


def state_for_class(name: str) -> TLState | None:
    """Map a model's class name onto a state: exact states, common synonyms, arrow names by their colour.

    Args:
        name: A class name as the model spells it (``"red"``, ``"stop"``, ``"GreenLeft"``, ``"go_forward"``).

    Returns:
        The state, or None when the name names no traffic-light state.
    """
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key in _SYNONYMS:
        return _SYNONYMS[key]
    for prefix, state in _SYNONYMS.items():  # "redleft", "go_forward", "warningleft", "stop_left"
        if key.startswith(prefix):
            return state
    return None


def states_for_names(names: dict[int, str] | Sequence[str], where: str) -> dict[int, TLState]:
    """Class index -> state for a model's names; every name must map.

    Raises:
        DetectorClassesError: Naming the model and its names when one does not map.
    """
    items = names.items() if isinstance(names, dict) else enumerate(names)
    out: dict[int, TLState] = {}
    for idx, name in items:
        state = state_for_class(str(name))
        if state is None:
            listed = list(names.values()) if isinstance(names, dict) else list(names)
            raise DetectorClassesError(where, [str(n) for n in listed])
        out[int(idx)] = state
    return out


class DetectorSpec(BaseModel):
    """A detector named on the command line or in an event: ``KIND:PATH``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: DetectorKind = Field(description="yolo (ultralytics), frcnn (Faster R-CNN MobileNet-v3 FPN), ssdlite.")
    path: Path = Field(description="Local weights or checkpoint; for yolo also a model yaml (built untrained).")

    @classmethod
    def parse(cls, spec: str, *, must_exist: bool = True) -> DetectorSpec:
        """Parse ``KIND:PATH`` (the first colon separates; the path may hold more).

        Args:
            spec: The spec string, e.g. ``yolo:runs/tl/best.pt`` or ``frcnn:/models/frcnn.pt``.
            must_exist: Check that the file exists. A yolo model yaml may also name one shipped in the
                ultralytics wheel (``yolo:yolov8n.yaml``).

        Raises:
            DetectorSpecError: No colon, empty path, or a missing file.
            UnknownDetectorKindError: A kind that is not yolo, frcnn or ssdlite.
        """
        kind, sep, path = spec.partition(":")
        kind = kind.strip().lower()
        if not sep or not path.strip():
            raise DetectorSpecError(spec, f"expected KIND:PATH with KIND one of {', '.join(DETECTOR_KINDS)}")
        if kind not in DETECTOR_KINDS:
            raise UnknownDetectorKindError(spec, kind, DETECTOR_KINDS)
        try:
            p = Path(path.strip()).expanduser()
            missing = must_exist and not p.is_file() and not (kind == "yolo" and _is_packaged_yaml(p))
        except (OSError, ValueError, RuntimeError) as exc:  # a name too long, a NUL byte, '~nobody'
            raise DetectorSpecError(spec[:300], f"not a usable path: {exc}"[:500]) from exc
        if missing:
            raise DetectorSpecError(spec, f"no such file: {p}")
        return cls(kind=kind, path=p)  # type: ignore[arg-type]  # kind checked against DETECTOR_KINDS above

    def __str__(self) -> str:
        return f"{self.kind}:{self.path}"


def _is_packaged_yaml(p: Path) -> bool:
    """Whether a bare ``*.yaml`` name is a model config the ultralytics wheel ships (built offline)."""
    if p.suffix not in {".yaml", ".yml"} or len(p.parts) != 1:
        return False
    from runners.detectors.yolo import packaged_model_yaml

    return packaged_model_yaml(p.name) is not None


def set_torch_threads(threads: int | None = DEFAULT_TORCH_THREADS) -> None:
    """Cap torch's intra-op threads (never above the machine's cores); None leaves torch's choice."""
    if threads is None:
        return
    import torch

    torch.set_num_threads(max(1, min(threads, os.cpu_count() or 1)))
