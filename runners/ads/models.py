"""Driving models behind one interface: TorchScript or ONNX files read through their adapter spec.

:meth:`DrivingModel.predict` takes a case's 10 frames (RGB) and returns the model's speed (km/h) and steering
(rad, left-positive) for each frame; a model of several frames per input sees each frame with the ones before
it (the first frame repeated where the case has none earlier).
"""

from __future__ import annotations

import json
import math
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from runners.ads.spec import AdapterSpec, InputSpec, ModelFile, OutputSpec
from tools.errors import BadInputError
from tools.mt.models import ModelPrediction

__all__ = ["DrivingModel", "DrivingModelError", "load_model", "load_models", "preprocess", "window_indices"]


class DrivingModelError(BadInputError):
    """A driving model that cannot be used: it does not load, its spec does not fit it, it returns NaN, or
    it cannot take a case's frames. The message names the model."""

    def __init__(self, model: str, reason: str) -> None:
        self.model = model
        self.reason = reason
        super().__init__(f"driving model {model!r}: {reason}")


_SPEED = {"km/h": 1.0, "m/s": 3.6, "mph": 1.609344}


class DrivingModel:
    """A loaded driving model.

    Args:
        spec: Its adapter spec.
        folder: Where its files are (the spec's folder).
        check: Run a dummy input through it now, so that a spec that does not fit fails at load.

    Raises:
        DrivingModelError: If a file is missing or does not load, or the spec does not fit the model.
    """

    def __init__(self, spec: AdapterSpec, folder: Path, *, check: bool = True) -> None:
        self.spec = spec
        self.name = spec.name
        self.frames = spec.input.frames
        self._runners = [self._load(f, folder) for f in spec.files]
        self._lock = threading.Lock()
        if check:  # (two batch sizes: an output of a fixed size cannot fit both)
            for rows in (2, 3):
                dummy = np.zeros((rows, *self._shape()), np.float32)
                for f, run in zip(spec.files, self._runners, strict=True):
                    try:
                        outs = run(dummy)
                    except Exception as exc:
                        raise DrivingModelError(
                            self.name,
                            f"the adapter spec does not fit {f.file}: an input of shape {list(dummy.shape)} "
                            f"({spec.input.layout}) fails: {_short(exc)}",
                        ) from exc
                    for o in f.outputs:
                        self._column(outs, o, f.file, rows=rows)

    def _shape(self) -> tuple[int, ...]:
        i = self.spec.input
        c = 1 if i.colour == "gray" else 3
        return {
            "NCHW": (c, i.height, i.width),
            "NHWC": (i.height, i.width, c),
            "NTCHW": (i.frames, c, i.height, i.width),
            "NCTHW": (c, i.frames, i.height, i.width),
        }[i.layout]

    def _load(self, f: ModelFile, folder: Path) -> Any:
        path = folder / f.file
        if not path.is_file():
            raise DrivingModelError(self.name, f"model file {path} does not exist")
        try:
            if f.kind == "onnx":
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.log_severity_level = 3
                session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                input_name = session.get_inputs()[0].name
                return lambda x: session.run(None, {input_name: x})
            import torch

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # torch 2.9 deprecates TorchScript; it still loads
                module = torch.jit.load(str(path), map_location="cpu")
            module.eval()

            def run(x: np.ndarray) -> list[np.ndarray]:
                with torch.inference_mode():
                    out = module(torch.from_numpy(x))
                outs = out if isinstance(out, (tuple, list)) else [out]
                return [o.detach().float().numpy() for o in outs]

            return run
        except DrivingModelError:
            raise
        except Exception as exc:
            raise DrivingModelError(self.name, f"{path.name} does not load as {f.kind}: {_short(exc)}") from exc

    def _column(self, outs: list[np.ndarray], o: OutputSpec, file: str, rows: int) -> np.ndarray:
        if o.output >= len(outs):
            raise DrivingModelError(
                self.name, f"the spec reads output {o.output} of {file} for {o.name}, which has {len(outs)}"
            )
        values = np.asarray(outs[o.output], np.float64)
        if values.ndim == 0 or values.shape[0] != rows:
            raise DrivingModelError(
                self.name,
                f"{file} returned shape {list(values.shape)} for {rows} inputs: its output {o.output} ({o.name}) "
                "needs one row per input",
            )
        arr = values.reshape(rows, -1)
        if o.index >= arr.shape[1]:
            raise DrivingModelError(
                self.name, f"the spec reads column {o.index} of {file}'s output for {o.name}, which has {arr.shape[1]}"
            )
        return arr[:, o.index]

    def prepare(self, frames: list[np.ndarray]) -> np.ndarray:
        """The model's input for every frame of a case (one row per frame, with its history).

        Raises:
            DrivingModelError: If the frames cannot be fed to the model (``exact`` size that does not match).
        """

        i = self.spec.input
        h, w = frames[0].shape[:2]
        if i.resize == "exact" and (w, h) != (i.width, i.height):
            raise DrivingModelError(self.name, f"it takes frames of exactly {i.width}x{i.height} and these are {w}x{h}")
        prepared = preprocess(frames, self.spec.input)
        windows = prepared[window_indices(len(prepared), i.frames)]  # [N, T, H, W, C]
        layout = {
            "NCHW": lambda a: a[:, -1].transpose(0, 3, 1, 2),
            "NHWC": lambda a: a[:, -1],
            "NTCHW": lambda a: a.transpose(0, 1, 4, 2, 3),
            "NCTHW": lambda a: a.transpose(0, 4, 1, 2, 3),
        }[i.layout]
        return np.ascontiguousarray(layout(windows), np.float32)

    def predict(self, frames: list[np.ndarray], *, case_id: str = "") -> ModelPrediction:
        """Speed (km/h) and steering (rad, left-positive) per frame.

        Raises:
            DrivingModelError: If the frames cannot be fed to it, it fails, or it returns NaN or infinity.
        """
        x = self.prepare(frames)
        values: dict[str, list[float]] = {}
        for f, run in zip(self.spec.files, self._runners, strict=True):
            try:
                with self._lock:
                    outs = run(x)
            except Exception as exc:
                raise DrivingModelError(self.name, f"{f.file} failed on case {case_id}: {_short(exc)}") from exc
            for o in f.outputs:
                raw = self._column(outs, o, f.file, rows=len(frames)) * o.scale + o.offset
                if not np.all(np.isfinite(raw)):
                    raise DrivingModelError(self.name, f"it returned NaN or infinite {o.name} on case {case_id}")
                if o.name == "speed":
                    values["speed"] = [float(v) * _SPEED[o.unit] for v in raw]
                else:
                    sign = 1.0 if o.left_positive else -1.0
                    factor = math.pi / 180.0 if o.unit == "deg" else 1.0
                    values["steering"] = [float(v) * factor * sign for v in raw]
        return ModelPrediction(model=self.name, speed_kmh=values.get("speed"), steering_rad=values.get("steering"))


def preprocess(frames: list[np.ndarray], spec: InputSpec) -> np.ndarray:
    """RGB frames as the model's pixels: resized, in its colour space, scaled; ``[N, H, W, C]`` float32."""
    import cv2

    mean = np.asarray(spec.mean, np.float32)
    std = np.asarray(spec.std, np.float32)
    out = []
    for f in frames:
        h, w = f.shape[:2]
        g = (
            f
            if (w, h) == (spec.width, spec.height)
            else cv2.resize(f, (spec.width, spec.height), interpolation=cv2.INTER_AREA)
        )
        if spec.colour == "bgr":
            g = g[:, :, ::-1]
        elif spec.colour == "yuv":
            g = cv2.cvtColor(np.ascontiguousarray(g), cv2.COLOR_RGB2YUV)
        elif spec.colour == "gray":
            g = cv2.cvtColor(np.ascontiguousarray(g), cv2.COLOR_RGB2GRAY)[:, :, None]
        out.append((g.astype(np.float32) * spec.scale - mean) / std)
    return np.stack(out)


def window_indices(n: int, frames: int) -> np.ndarray:
    """For each of ``n`` frames, the indices of its input window (``frames`` long, itself last; the first frame
    repeated before the case starts): shape ``[n, frames]``."""
    return np.array([[max(0, k - j) for j in range(frames - 1, -1, -1)] for k in range(n)], np.int64)


def load_model(spec_path: Path) -> DrivingModel:
    """The model an adapter spec describes.

    Raises:
        DrivingModelError: If the spec is unreadable or invalid, or the model does not load or fit it.
    """
    name = spec_path.stem
    try:
        raw = json.loads(spec_path.read_text(encoding="utf-8"))
        name = str(raw.get("name", name)) if isinstance(raw, dict) else name
        spec = AdapterSpec.model_validate(raw)
    except (OSError, ValueError) as exc:
        reason = (
            "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:4])
            if isinstance(exc, ValidationError)
            else _short(exc)
        )
        raise DrivingModelError(name, f"adapter spec {spec_path} is not valid: {reason}") from exc
    return DrivingModel(spec, spec_path.parent)


def load_models(paths: list[Path]) -> tuple[list[DrivingModel], list[DrivingModelError]]:
    """Every model that loads, and the errors of those that do not (one bad model never stops the others)."""
    models, errors = [], []
    for p in paths:
        try:
            models.append(load_model(p))
        except DrivingModelError as exc:
            errors.append(exc)
    return models, errors


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
