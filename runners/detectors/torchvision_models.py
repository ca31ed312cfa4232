"""torchvision detectors under test: Faster R-CNN (MobileNet-v3-Large FPN) and SSDlite320 (MobileNet-v3-Large).

Both are built with ``weights=None`` and ``weights_backbone=None``, so nothing is downloaded; they learn
from scratch on the dataset given (TIGAUG tested pretrained Faster R-CNN and SSD; with no downloads
allowed, ours start from random weights and need far more training to be useful). A checkpoint is a plain
dict saved with ``torch.save`` and read back with ``weights_only=True``::

    {"format": "drivemt-tl-detector", "version": 1, "kind": "frcnn" | "ssdlite",
     "classes": ["red", "yellow", "green", "off"], "build": {...}, "state_dict": {...}}

Label 0 is torchvision's background; label k >= 1 is ``classes[k - 1]``. ``build`` holds what the
architecture needs to be rebuilt identically (input size, anchor sizes).

Faster R-CNN's anchors are made smaller than torchvision's (8-128 px instead of 32-512 px, with tall and
wide ratios) because traffic lights are small and three times as long as wide.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from runners.detectors.base import CLASS_NAMES, DEFAULT_TORCH_THREADS, TrainProgress, set_torch_threads
from runners.detectors.errors import DetectorCheckpointError, DetectorClassesError, DetectorTrainingError
from tools.tl.errors import EmptyDatasetError
from tools.tl.images import read_image
from tools.tl.models import TLBox, TLDataset, TLState

__all__ = [
    "CHECKPOINT_FORMAT",
    "TorchvisionDetector",
    "TorchvisionKind",
    "TorchvisionTrainSettings",
    "build_torchvision_model",
    "load_torchvision",
    "save_checkpoint",
    "train_torchvision",
]

CHECKPOINT_FORMAT = "drivemt-tl-detector"
TorchvisionKind = Literal["frcnn", "ssdlite"]

_FRCNN_ANCHORS: tuple[int, ...] = (8, 16, 32, 64, 128)
_FRCNN_RATIOS: tuple[float, ...] = (0.33, 0.5, 1.0, 2.0, 3.0)


def build_torchvision_model(kind: TorchvisionKind, build: dict[str, Any]) -> Any:
    """Build an untrained model (offline) with 4 states plus background.

    Args:
        kind: ``frcnn`` or ``ssdlite``.
        build: ``{"imgsz": int}`` (the long side images are resized to; SSDlite is fixed at 320x320) and,
            for frcnn, ``anchor_sizes`` and ``aspect_ratios``.

    Returns:
        The ``torch.nn.Module``, in training mode.
    """
    from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn, ssdlite320_mobilenet_v3_large

    n = len(CLASS_NAMES) + 1
    if kind == "frcnn":
        from torchvision.models.detection.anchor_utils import AnchorGenerator
        from torchvision.models.detection.rpn import RPNHead

        imgsz = int(build.get("imgsz", 640))
        model = fasterrcnn_mobilenet_v3_large_fpn(
            weights=None, weights_backbone=None, num_classes=n, min_size=imgsz, max_size=imgsz
        )
        sizes = tuple(int(s) for s in build.get("anchor_sizes", _FRCNN_ANCHORS))
        ratios = tuple(float(r) for r in build.get("aspect_ratios", _FRCNN_RATIOS))
        n_maps = len(model.rpn.anchor_generator.sizes)
        model.rpn.anchor_generator = AnchorGenerator((sizes,) * n_maps, (ratios,) * n_maps)
        model.rpn.head = RPNHead(model.backbone.out_channels, len(sizes) * len(ratios))
        return model
    if kind == "ssdlite":
        return ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=n)
    raise ValueError(f"not a torchvision detector kind: {kind}")


def _default_build(kind: TorchvisionKind, imgsz: int) -> dict[str, Any]:
    if kind == "frcnn":
        return {"imgsz": imgsz, "anchor_sizes": list(_FRCNN_ANCHORS), "aspect_ratios": list(_FRCNN_RATIOS)}
    return {"imgsz": 320}


def save_checkpoint(model: Any, kind: TorchvisionKind, build: dict[str, Any], path: Path) -> Path:
    """Write a checkpoint :func:`load_torchvision` reads (class order included)."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "format": CHECKPOINT_FORMAT,
            "version": 1,
            "kind": kind,
            "classes": list(CLASS_NAMES),
            "build": build,
            "state_dict": model.state_dict(),
        },
        path,
    )
    return path


class TorchvisionDetector:
    """A torchvision detection model whose labels 1..4 are the checkpoint's classes."""

    def __init__(self, model: Any, *, name: str, classes: Sequence[TLState], batch: int = 4) -> None:
        """Wrap a model in eval mode.

        Args:
            model: The torchvision detection model.
            name: Shown in reports (the spec).
            classes: State of label 1, 2, ...
            batch: Images per forward pass.
        """
        self._model = model.eval()
        self._name = name
        self.classes = list(classes)
        self.batch = batch

    @property
    def name(self) -> str:
        """The spec the detector was loaded from."""
        return self._name

    def predict(self, images: Sequence[np.ndarray], *, conf: float = 0.25) -> list[list[TLBox]]:
        """Detect lights in RGB images; boxes come back in each image's own pixels."""
        import torch

        out: list[list[TLBox]] = []
        with torch.inference_mode():
            for start in range(0, len(images), self.batch):
                chunk = images[start : start + self.batch]
                tensors = [torch.from_numpy(np.ascontiguousarray(im)).permute(2, 0, 1).float() / 255 for im in chunk]
                for im, res in zip(chunk, self._model(tensors), strict=True):
                    h, w = im.shape[:2]
                    dets = []
                    for (x1, y1, x2, y2), label, score in zip(
                        res["boxes"].tolist(), res["labels"].tolist(), res["scores"].tolist(), strict=True
                    ):
                        x1, y1, x2, y2 = max(0.0, x1), max(0.0, y1), min(float(w), x2), min(float(h), y2)
                        if score < conf or not (1 <= label <= len(self.classes)) or x2 <= x1 or y2 <= y1:
                            continue
                        dets.append(
                            TLBox(x1=x1, y1=y1, x2=x2, y2=y2, state=self.classes[label - 1], score=float(score))
                        )
                    out.append(dets)
        return out


def load_torchvision(
    kind: TorchvisionKind, path: Path, *, name: str | None = None, threads: int | None = DEFAULT_TORCH_THREADS
) -> TorchvisionDetector:
    """Load a checkpoint written by :func:`save_checkpoint` / :func:`train_torchvision`.

    Raises:
        DetectorCheckpointError: Not a drivemt checkpoint, of another kind, or weights that do not fit.
        DetectorClassesError: Classes that are not traffic-light states.
    """
    import torch

    set_torch_threads(threads)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise DetectorCheckpointError(str(path), kind, f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise DetectorCheckpointError(str(path), kind, f"not a {CHECKPOINT_FORMAT} checkpoint")
    if ckpt.get("kind") != kind:
        raise DetectorCheckpointError(str(path), kind, f"it holds a {ckpt.get('kind')} model")
    classes = [str(c) for c in ckpt.get("classes", [])]
    if not classes or any(c not in CLASS_NAMES for c in classes):
        raise DetectorClassesError(str(path), classes)
    model = build_torchvision_model(kind, dict(ckpt.get("build", {})))
    try:
        model.load_state_dict(ckpt["state_dict"])
    except (RuntimeError, KeyError) as exc:
        raise DetectorCheckpointError(str(path), kind, f"weights do not fit the architecture: {exc}") from exc
    return TorchvisionDetector(model, name=name or f"{kind}:{path}", classes=classes)  # type: ignore[arg-type]


class TorchvisionTrainSettings(BaseModel):
    """The plain PyTorch training loop's knobs."""

    model_config = ConfigDict(extra="forbid")

    batch: int = Field(default=4, ge=1, description="Images per step.")
    lr: float = Field(
        default=1e-3, gt=0, description="AdamW learning rate (from scratch: Adam-type optimisers converge faster)."
    )
    weight_decay: float = Field(default=1e-4, ge=0, description="AdamW weight decay.")
    warmup_steps: int = Field(default=50, ge=0, description="Linear learning-rate warm-up steps.")
    grad_clip: float = Field(default=10.0, gt=0, description="Gradient norm clip: early from-scratch steps spike.")


def train_torchvision(
    kind: TorchvisionKind,
    dataset: TLDataset,
    out: Path,
    *,
    epochs: int,
    imgsz: int,
    time_limit_s: float | None = None,
    seed: int = 0,
    settings: TorchvisionTrainSettings | None = None,
    progress: TrainProgress | None = None,
    threads: int | None = DEFAULT_TORCH_THREADS,
) -> Path:
    """Train Faster R-CNN or SSDlite from scratch with a plain loop and save ``out/<kind>.pt``.

    Args:
        kind: ``frcnn`` or ``ssdlite``.
        dataset: Trains on split "train" (or unset).
        out: Output folder.
        epochs: Passes over the training images.
        imgsz: Long side images are resized to (frcnn; SSDlite always uses 320x320).
        time_limit_s: Stop after this many seconds (checked after every step).
        seed: Seeds torch, numpy and the shuffling.
        settings: Batch size and optimiser; defaults when None.
        progress: Called after each epoch with a message and the fraction done.
        threads: Torch intra-op threads.

    Raises:
        EmptyDatasetError: No training image.
        DetectorTrainingError: A non-finite loss.
    """
    import torch

    s = settings or TorchvisionTrainSettings()
    set_torch_threads(threads)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    train = [i for i in dataset.images if i.split in (None, "train")]
    if not train:
        raise EmptyDatasetError(dataset.name, "no training images (split 'train' or unset)")
    samples = []
    for image in train:
        img = read_image(dataset.image_path(image), image_id=image.image_id)
        boxes = [c for b in image.boxes if (c := b.clipped(img.shape[1], img.shape[0])) is not None]
        samples.append(
            (
                torch.from_numpy(img).permute(2, 0, 1).contiguous(),
                {
                    "boxes": torch.tensor([b.xyxy() for b in boxes], dtype=torch.float32).reshape(-1, 4),
                    "labels": torch.tensor([CLASS_NAMES.index(b.state) + 1 for b in boxes], dtype=torch.int64),
                },
            )
        )
    build = _default_build(kind, imgsz)
    model = build_torchvision_model(kind, build)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=s.lr, weight_decay=s.weight_decay)
    steps_per_epoch = math.ceil(len(samples) / s.batch)
    total_steps = max(1, steps_per_epoch * epochs)
    started = time.monotonic()
    step = 0
    stop = False
    for epoch in range(epochs):
        order = list(range(len(samples)))
        rng.shuffle(order)
        for start in range(0, len(order), s.batch):
            batch = [samples[k] for k in order[start : start + s.batch]]
            lr_scale = min(1.0, (step + 1) / max(1, s.warmup_steps))
            if time_limit_s:  # cosine over the time budget, else over the steps
                frac = min(1.0, (time.monotonic() - started) / time_limit_s)
            else:
                frac = step / total_steps
            for group in optimizer.param_groups:
                group["lr"] = s.lr * lr_scale * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
            losses = model([im.float() / 255 for im, _ in batch], [t for _, t in batch])
            loss = sum(losses.values())
            if not torch.isfinite(loss):
                raise DetectorTrainingError(kind, f"non-finite loss at step {step}: {float(loss)}")
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, s.grad_clip)
            optimizer.step()
            step += 1
            if time_limit_s and time.monotonic() - started > time_limit_s:
                stop = True
                break
        if progress is not None:
            elapsed = time.monotonic() - started
            progress(
                f"{kind} epoch {epoch + 1}/{epochs} ({elapsed:.0f} s, loss {loss.item():.3f})", (epoch + 1) / epochs
            )
        if stop:
            break
    model.eval()
    return save_checkpoint(model, kind, build, Path(out) / f"{kind}.pt")
