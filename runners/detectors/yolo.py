"""ultralytics YOLO as a detector under test: load local weights or a model yaml, predict, train.

Offline by construction. Before ultralytics is first imported, :func:`configure_ultralytics` sets
``YOLO_OFFLINE=1`` (no connectivity checks, no telemetry), ``YOLO_AUTOINSTALL=false`` (no pip at run
time) and ``YOLO_CONFIG_DIR`` to a folder of ours (its ``settings.json``, with every logger integration
off and its datasets/weights/runs dirs under the same folder), and puts a copy of a font matplotlib ships
there as ``Arial.ttf``: ultralytics' dataset check asks for that font and would otherwise try to download
it. Training passes ``plots=False`` and ``amp=False`` (no AMP check weights), ``pretrained=False`` and
absolute paths only. Model yamls (``yolov8n.yaml``, ``yolo11n.yaml``) are read from the ultralytics wheel.

Threads: ultralytics resets torch to ``min(8, cores - 1)`` threads whenever it selects the device (one
on a two-core machine). Inference here uses ours instead (two by default). Training keeps ultralytics'
count by default: its data-loader worker needs the remaining core, and on two busy cores a second torch
thread made an epoch three times slower (every parallel region waits for its descheduled thread).

Training writes a YOLO-layout copy of the dataset (images linked, labels as ``class cx cy w h``
normalised) under the output folder; the class order is :data:`runners.detectors.base.CLASS_NAMES`, and
the names travel inside the weights file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from runners.detectors.base import (
    CLASS_NAMES,
    DEFAULT_TORCH_THREADS,
    TrainProgress,
    set_torch_threads,
    states_for_names,
)
from runners.detectors.errors import DetectorCheckpointError, DetectorTrainingError
from tools.tl.errors import EmptyDatasetError
from tools.tl.models import TLBox, TLDataset, TLImage, TLState

__all__ = [
    "YoloDetector",
    "YoloTrainSettings",
    "configure_ultralytics",
    "load_yolo",
    "packaged_model_yaml",
    "train_yolo",
    "write_yolo_layout",
]

_configured: Path | None = None


def configure_ultralytics(config_dir: Path | None = None) -> Path:
    """Keep ultralytics offline and inside a folder of ours; call before ultralytics is imported.

    Every loader and trainer here calls it first. If something imported ultralytics earlier, its config
    folder is already fixed: the settings are then changed in memory only, and ``YOLO_OFFLINE`` may come
    too late for ultralytics' import-time connectivity check.

    Args:
        config_dir: Where ultralytics keeps its settings and fonts; a ``drivemt/ultralytics`` folder in
            the user's cache dir when None. Ignored after the first call (ultralytics reads it at import).

    Returns:
        The folder in use.
    """
    global _configured
    if _configured is not None:
        return _configured
    import platformdirs

    folder = Path(config_dir) if config_dir else Path(platformdirs.user_cache_dir("drivemt")) / "ultralytics"
    folder.mkdir(parents=True, exist_ok=True)
    if "ultralytics" not in sys.modules:
        os.environ["YOLO_CONFIG_DIR"] = str(folder)
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "false"
    os.environ.setdefault("YOLO_VERBOSE", "false")
    from ultralytics.utils import SETTINGS, USER_CONFIG_DIR

    font = USER_CONFIG_DIR / "Arial.ttf"
    if not font.exists():
        import matplotlib

        src = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        if src.is_file():
            shutil.copyfile(src, font)
    off: dict[str, Any] = {
        k: False for k in ("sync", "clearml", "comet", "dvc", "mlflow", "raytune", "tensorboard", "wandb")
    }
    off |= {"vscode_msg": False, "openvino_msg": False}
    if Path(USER_CONFIG_DIR).parent == folder:  # ours (ultralytics adds an 'Ultralytics' sub-folder): persist
        off |= {"datasets_dir": str(folder / "datasets"), "runs_dir": str(folder / "runs")}
        off |= {"weights_dir": str(folder / "weights")}
        if any(SETTINGS.get(k) != v for k, v in off.items()):
            SETTINGS.update(off)
    else:  # ultralytics was imported first and uses the user's folder: change this process only, write nothing
        dict.update(SETTINGS, off)
    _configured = folder
    return folder


def _ultralytics_threads(threads: int | None) -> None:
    """Make ultralytics use our thread count (None: keep its ``min(8, cores - 1)``)."""
    if threads is not None:
        set_torch_threads(threads)
        import torch
        from ultralytics.utils import torch_utils

        torch_utils.NUM_THREADS = torch.get_num_threads()


def packaged_model_yaml(name: str) -> Path | None:
    """The model config the ultralytics wheel ships for a name like ``yolov8n.yaml`` (scale letter dropped)."""
    import importlib.util

    spec = importlib.util.find_spec("ultralytics")
    if spec is None or spec.origin is None:
        return None
    unified = re.sub(r"(\d+)([nslmx])(.+)?$", r"\1\3", Path(name).stem) + ".yaml"
    for candidate in (Path(name).name, unified):
        hits = sorted((Path(spec.origin).parent / "cfg" / "models").rglob(candidate))
        if hits:
            return hits[0]
    return None


class YoloDetector:
    """An ultralytics detection model whose classes map onto traffic-light states."""

    def __init__(self, model: Any, *, name: str, states: dict[int, TLState], imgsz: int = 640) -> None:
        """Wrap a loaded ``ultralytics.YOLO``.

        Args:
            model: The ``YOLO`` object.
            name: Shown in reports (the spec).
            states: Class index -> state.
            imgsz: Inference size (the long side); the training size by default.
        """
        self._model = model
        self._name = name
        self.states = states
        self.imgsz = imgsz

    @property
    def name(self) -> str:
        """The spec the detector was loaded from."""
        return self._name

    def predict(self, images: Sequence[np.ndarray], *, conf: float = 0.25) -> list[list[TLBox]]:
        """Detect lights in RGB images (ultralytics expects BGR arrays: the channels are swapped here)."""
        if not images:
            return []
        bgr = [np.ascontiguousarray(im[:, :, ::-1]) for im in images]
        results = self._model.predict(bgr, conf=conf, imgsz=self.imgsz, device="cpu", verbose=False)
        out: list[list[TLBox]] = []
        for im, res in zip(images, results, strict=True):
            h, w = im.shape[:2]
            boxes = res.boxes
            xyxy = boxes.xyxy.cpu().numpy()
            scores = boxes.conf.cpu().numpy()
            classes = boxes.cls.cpu().numpy().astype(int)
            dets = []
            for (x1, y1, x2, y2), s, c in zip(xyxy, scores, classes, strict=True):
                x1, x2 = max(0.0, float(x1)), min(float(w), float(x2))
                y1, y2 = max(0.0, float(y1)), min(float(h), float(y2))
                if x2 - x1 > 0 and y2 - y1 > 0 and int(c) in self.states:
                    dets.append(TLBox(x1=x1, y1=y1, x2=x2, y2=y2, state=self.states[int(c)], score=float(s)))
            out.append(dets)
        return out


def load_yolo(path: Path, *, name: str | None = None, threads: int | None = DEFAULT_TORCH_THREADS) -> YoloDetector:
    """Load ultralytics weights (``.pt``) or build an untrained model from a yaml (4 traffic-light classes).

    Args:
        path: A local ``.pt`` file, or a model yaml (a file, or a name the ultralytics wheel ships).
        name: Shown in reports; ``yolo:PATH`` when None.
        threads: Torch intra-op threads.

    Raises:
        DetectorCheckpointError: Not loadable, or not a detection model.
        DetectorClassesError: Class names that do not map onto states.
    """
    configure_ultralytics()
    _ultralytics_threads(threads)
    from ultralytics import YOLO

    label = name or f"yolo:{path}"
    try:
        if path.suffix in {".yaml", ".yml"}:
            from ultralytics.nn.tasks import DetectionModel, yaml_model_load

            cfg = yaml_model_load(str(path))
            model: Any = YOLO(str(path), task="detect")
            model.model = DetectionModel(cfg, nc=len(CLASS_NAMES), verbose=False)
            model.model.names = dict(enumerate(CLASS_NAMES))
            model.model.task = "detect"
            model.model.args = {"imgsz": 640}
            model.model.eval()
        else:
            model = YOLO(str(path), task="detect")
    except DetectorCheckpointError:
        raise
    except Exception as exc:
        raise DetectorCheckpointError(str(path), "yolo", f"{type(exc).__name__}: {exc}") from exc
    if getattr(model, "task", "detect") != "detect":
        raise DetectorCheckpointError(str(path), "yolo", f"a {model.task} model, not a detection model")
    states = states_for_names(model.names, str(path))
    args = getattr(model.model, "args", {}) or {}
    imgsz = args.get("imgsz", 640) if isinstance(args, dict) else getattr(args, "imgsz", 640)
    if isinstance(imgsz, list | tuple):
        imgsz = max(imgsz)
    return YoloDetector(model, name=label, states=states, imgsz=int(imgsz or 640))


def _safe_id(image: TLImage, index: int) -> str:
    return f"{index:06d}_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", image.image_id)[:80]


def write_yolo_layout(
    dataset: TLDataset, work: Path, *, splits: dict[str, list[TLImage]] | None = None, link: bool = True
) -> Path:
    """Write ``images/<split>``, ``labels/<split>`` and ``data.yaml`` for ultralytics.

    Args:
        dataset: The dataset (images resolved against its root).
        work: Folder to write into (created; existing files are replaced).
        splits: Images per split; by default train = split "train" or unset, val = "val" (else "test",
            else the train images), test = "test".
        link: Symlink images instead of copying them (copied where links fail).

    Returns:
        The ``data.yaml`` path.

    Raises:
        EmptyDatasetError: No training image.
    """
    import yaml

    if splits is None:
        splits = _default_splits(dataset)
    if not splits.get("train"):
        raise EmptyDatasetError(dataset.name, "no training images (split 'train' or unset)")
    index = 0
    for split, images in splits.items():
        img_dir, lbl_dir = work / "images" / split, work / "labels" / split
        if img_dir.exists():
            shutil.rmtree(img_dir)
        if lbl_dir.exists():
            shutil.rmtree(lbl_dir)
        img_dir.mkdir(parents=True)
        lbl_dir.mkdir(parents=True)
        for image in images:
            src = dataset.image_path(image).resolve()
            stem = _safe_id(image, index)
            index += 1
            dst = img_dir / f"{stem}{src.suffix.lower() or '.jpg'}"
            try:
                if not link:
                    raise OSError("copy asked for")
                dst.symlink_to(src)
            except OSError:
                shutil.copyfile(src, dst)
            lines = []
            for b in image.boxes:
                c = b.clipped(image.width, image.height)
                if c is None:
                    continue
                cls = CLASS_NAMES.index(c.state)
                lines.append(
                    f"{cls} {c.cx / image.width:.6f} {c.cy / image.height:.6f} "
                    f"{c.width / image.width:.6f} {c.height / image.height:.6f}"
                )
            (lbl_dir / f"{stem}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
    data: dict[str, Any] = {
        "path": str(work.resolve()),
        "train": "images/train",
        "val": "images/val" if splits.get("val") else "images/train",
        "names": dict(enumerate(CLASS_NAMES)),
    }
    if splits.get("test"):
        data["test"] = "images/test"
    out = work / "data.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def _default_splits(dataset: TLDataset) -> dict[str, list[TLImage]]:
    train = [i for i in dataset.images if i.split in (None, "train")]
    val = [i for i in dataset.images if i.split == "val"] or [i for i in dataset.images if i.split == "test"]
    test = [i for i in dataset.images if i.split == "test"]
    return {"train": train, "val": val or train[: max(1, len(train) // 10)], "test": test}


class YoloTrainSettings(BaseModel):
    """ultralytics training arguments drivemt sets (the rest stay ultralytics' defaults)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(default="yolov8n.yaml", description="Model yaml (from scratch) or local .pt to fine-tune.")
    batch: int = Field(default=8, ge=1, description="Images per batch.")
    nbs: int | None = Field(
        default=None,
        description="Nominal batch size (gradients accumulate up to it); None = batch, one step per batch: "
        "a CPU run has few batches and needs every optimizer step.",
    )
    workers: int = Field(default=1, ge=0, description="Data-loader processes (one: the cores are few).")
    mosaic: float = Field(default=1.0, ge=0, le=1, description="Mosaic probability: more lights per batch.")
    close_mosaic: int = Field(default=2, ge=0, description="Epochs at the end without mosaic.")
    scale: float = Field(default=0.3, ge=0, le=0.9, description="Random scale gain (+/-); small lights suffer.")
    fliplr: float = Field(
        default=0.0, ge=0, le=1, description="Left-right flips would put red on the right of horizontal housings."
    )
    hsv_h: float = Field(
        default=0.0, ge=0, le=0.5, description="Hue jitter (off: hue shifts turn one state into another)."
    )
    lr0: float = Field(default=0.002, gt=0, description="Initial learning rate (AdamW's scale).")
    optimizer: str = Field(
        default="AdamW", description="ultralytics optimizer name; AdamW converges fastest in a short run from scratch."
    )
    warmup_epochs: float = Field(default=1.0, ge=0, description="Warm-up epochs.")
    cache: bool = Field(default=True, description="Keep decoded images in RAM (the demo set is small).")
    val: bool = Field(default=False, description="Validate every epoch (costly on CPU); the last epoch always is.")


@contextlib.contextmanager
def _quiet_progress_bars() -> Iterator[None]:
    """Switch off ultralytics' own progress bars while it trains.

    Its dataset caching draws a bar whatever ``YOLO_VERBOSE`` says (it passes ``disable`` explicitly), which
    garbles drivemt's own progress bar and the JSON a command prints; our ``progress`` callback reports
    the epochs instead. The class's ``__init__`` is wrapped for the duration and restored after.
    """
    from ultralytics.utils import tqdm as ul_tqdm

    original = ul_tqdm.TQDM.__init__

    def quiet(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["disable"] = True
        original(self, *args, **kwargs)

    ul_tqdm.TQDM.__init__ = quiet  # type: ignore[method-assign]
    try:
        yield
    finally:
        ul_tqdm.TQDM.__init__ = original  # type: ignore[method-assign]


def train_yolo(
    dataset: TLDataset,
    out: Path,
    *,
    epochs: int,
    imgsz: int,
    time_limit_s: float | None = None,
    seed: int = 0,
    settings: YoloTrainSettings | None = None,
    progress: TrainProgress | None = None,
    threads: int | None = None,
) -> Path:
    """Train an ultralytics detector on CPU, offline, and return its weights file.

    Args:
        dataset: Train on split "train" (or unset); validate on "val" (else "test").
        out: Output folder: ``yolo_data/`` (the YOLO-layout copy), ``yolo/`` (ultralytics' run) and
            ``yolo.pt`` (the final weights, the file to load with ``yolo:PATH``).
        epochs: Epochs (ultralytics re-plans them when ``time_limit_s`` is set, so the learning-rate
            schedule still ends on time).
        imgsz: Training size (square; images are letterboxed).
        time_limit_s: Stop after this many seconds of training.
        seed: Seeds ultralytics (``deterministic=True``).
        settings: Model and hyper-parameters; :class:`YoloTrainSettings` defaults when None.
        progress: Called after each epoch with a message and the fraction done.
        threads: Torch intra-op threads; None keeps ultralytics' ``min(8, cores - 1)`` (see the module
            docstring).

    Raises:
        EmptyDatasetError: No training image.
        DetectorTrainingError: ultralytics failed or wrote no weights.
    """
    s = settings or YoloTrainSettings()
    configure_ultralytics()
    _ultralytics_threads(threads)
    from ultralytics import YOLO

    out = Path(out).resolve()
    data_yaml = write_yolo_layout(dataset, out / "yolo_data")
    model_path = s.model
    if not Path(model_path).is_file() and packaged_model_yaml(model_path) is None:
        raise DetectorTrainingError("yolo", f"no such model file or packaged yaml: {model_path}")
    model = YOLO(model_path, task="detect")
    started = time.monotonic()

    def _epoch_end(trainer: Any) -> None:
        if progress is not None:
            done = trainer.epoch + 1
            progress(f"yolo epoch {done}/{trainer.epochs} ({time.monotonic() - started:.0f} s)", done / trainer.epochs)

    model.add_callback("on_train_epoch_end", _epoch_end)
    args: dict[str, Any] = {
        "data": str(data_yaml),
        "epochs": epochs,
        "imgsz": imgsz,
        "device": "cpu",
        "workers": s.workers,
        "batch": s.batch,
        "nbs": s.nbs or s.batch,
        "plots": False,
        "amp": False,
        "pretrained": False,
        "exist_ok": True,
        "project": str(out),
        "name": "yolo",
        "verbose": False,
        "seed": seed,
        "deterministic": True,
        "mosaic": s.mosaic,
        "close_mosaic": s.close_mosaic,
        "scale": s.scale,
        "fliplr": s.fliplr,
        "hsv_h": s.hsv_h,
        "lr0": s.lr0,
        "optimizer": s.optimizer,
        "warmup_epochs": s.warmup_epochs,
        "cache": "ram" if s.cache else False,
        "val": s.val,
        "save_period": -1,
    }
    if time_limit_s:
        args["time"] = time_limit_s / 3600.0
    try:
        with _quiet_progress_bars():
            model.train(**args)
    except Exception as exc:
        raise DetectorTrainingError("yolo", f"{type(exc).__name__}: {exc}") from exc
    weights = out / "yolo" / "weights"
    final = weights / "last.pt" if (weights / "last.pt").is_file() else weights / "best.pt"
    if not final.is_file():
        raise DetectorTrainingError("yolo", f"ultralytics wrote no weights under {weights}")
    target = out / "yolo.pt"
    shutil.copyfile(final, target)
    return target
