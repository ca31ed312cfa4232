"""Training the driving-model zoo on driving cases (synthetic, Udacity, A2D2 or a folder), on the CPU.

* Cases are split whole: 20 % of them are held out for the test (no frame of a held-out case is trained on,
  so neighbouring frames never sit on both sides of the split); 10 % of the rest choose the checkpoint.
* Labels are each frame's own speed (m/s) and steering (rad, left-positive), standardised. The loss is the
  squared error: AutoMT uses L1, but L1 drives a model to the median of an uncertain case, all or nothing,
  while the squared error keeps the response graded, which is what a metamorphic test compares (measured: an
  Epoch model trained on 120 red-light cases answered an added red light with -2.9 km/h under the squared
  error and 0.0 under L1). AutoMT labels a frame with the next frame's values; at 10 FPS they differ little.
* The time limit is the total: each model gets a share in proportion to its measured cost per sample, so
  every architecture sees about as many samples.
* The report gives each model's held-out mean absolute error on speed (km/h) and steering (rad) beside the
  constant-mean baseline; a model that does not beat it on both is flagged, as its verdicts would mean nothing.

Each trained model is written as TorchScript (de-standardisation included) with its adapter spec, so it
loads like any user's model (:mod:`runners.ads.models`).
"""

from __future__ import annotations

import json
import random
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from runners.ads.architectures import ARCHITECTURES, DEFAULT_ZOO, build, parameter_count
from runners.ads.models import preprocess, window_indices
from runners.ads.spec import AdapterSpec, InputSpec, ModelFile, OutputSpec
from tools.errors import BadInputError
from tools.mt.loaders import load_cases

__all__ = ["COST_MS", "CaseFrames", "ModelReport", "TrainingReport", "load_case_frames", "train_zoo"]

COST_MS = {
    "pilotnet": 2.4,
    "epoch": 17.5,
    "resnet18": 17.2,
    "vgg11": 73.0,
    "cnn-lstm": 11.0,
    "cnn3d": 5.8,
    "resnet101": 300.0,
    "vgg16": 200.0,
}
"""Training cost per sample at 80x160 on this machine's 2 cores, ms (``bench/ads_training.py``)."""

Progress = Callable[[str, float], None]


@dataclass
class CaseFrames:
    """Cases' frames at a model input size, YUV in [-1, 1], with their labels."""

    case_ids: list[str]
    pixels: np.ndarray
    """``[cases, frames, 3, H, W]`` float16."""
    speed_mps: np.ndarray
    """``[cases, frames]``."""
    steering_rad: np.ndarray
    source: str = "(frames)"
    """Where the cases were read from (the training report names it)."""

    def __len__(self) -> int:
        return len(self.case_ids)


def _input_spec(height: int, width: int, frames: int) -> InputSpec:
    return InputSpec(
        width=width, height=height, colour="yuv", frames=frames, layout="NTCHW",
        scale=1 / 127.5, mean=[1.0, 1.0, 1.0], std=[1.0, 1.0, 1.0],
    )  # fmt: skip


def load_case_frames(
    path: Path, *, height: int = 80, width: int = 160, progress: Callable[[int, int], None] | None = None
) -> CaseFrames:
    """Every case under ``path`` (any loader's format), preprocessed as the zoo's models take it.

    Raises:
        BadInputError: If the path holds no usable case.
    """
    import cv2

    result = load_cases(path)
    if not result.cases:
        problems = "; ".join(str(p) for p in result.problems[:3])
        raise BadInputError(f"no usable driving case in {path}" + (f": {problems}" if problems else ""))
    spec = _input_spec(height, width, 1)
    ids, pixels, speed, steer = [], [], [], []
    for k, case in enumerate(result.cases):
        frames = []
        for p in case.frame_paths:
            img = cv2.imread(str(p), cv2.IMREAD_COLOR)
            if img is None:
                break
            frames.append(img[:, :, ::-1])
        if len(frames) != len(case.frame_paths):
            continue
        ids.append(case.case_id)
        pixels.append(preprocess(frames, spec).transpose(0, 3, 1, 2).astype(np.float16))
        speed.append([e.speed_kmh / 3.6 for e in case.ego])
        steer.append([e.steering_rad for e in case.ego])
        if progress:
            progress(k + 1, len(result.cases))
    if not ids:
        raise BadInputError(f"no driving case in {path} has readable frames")
    return CaseFrames(
        ids, np.stack(pixels), np.asarray(speed, np.float32), np.asarray(steer, np.float32), source=str(path)
    )


@dataclass
class ModelReport:
    """One model's training."""

    name: str
    stands_in_for: str | None
    parameters: int
    seconds: float
    samples_seen: int
    epochs: float
    speed_mae_kmh: float
    steering_mae_rad: float
    spec: str
    beats_baseline: bool


@dataclass
class TrainingReport:
    """The zoo's training, with the constant-mean baseline on the same held-out cases."""

    data: str
    train_cases: int
    held_out_cases: int
    height: int
    width: int
    baseline_speed_mae_kmh: float
    baseline_steering_mae_rad: float
    models: list[ModelReport] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        """The report as JSON-ready data."""
        import dataclasses

        return dataclasses.asdict(self)


def below_baseline(models: Path) -> list[str]:
    """The models of a trained zoo (its ``*training.json`` reports) that did not beat the constant-mean baseline on
    both outputs: their verdicts would mean nothing. Empty for a folder with no training report (users' own models)."""
    weak: list[str] = []
    folder = models if models.is_dir() else models.parent
    for report in sorted(folder.glob("*training.json")):
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
            weak += [str(m["name"]) for m in data.get("models", []) if not m.get("beats_baseline", True)]
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return weak


def weak_models_warning(weak: Sequence[str]) -> str:
    """What a report and the terminal say about such models."""
    return (
        f"{', '.join(weak)} did not beat the constant-mean baseline on both outputs in training: their violation "
        "rates say little about them (train longer, or on more cases)"
    )


def _split(n: int, seed: int, held_out: float) -> tuple[list[int], list[int], list[int]]:
    order = list(range(n))
    random.Random(seed).shuffle(order)
    n_test = max(1, round(n * held_out)) if n >= 3 else 0
    test, rest = order[:n_test], order[n_test:]
    n_val = max(1, round(len(rest) * 0.1)) if len(rest) >= 5 else 0
    return rest[n_val:], rest[:n_val], test


def train_zoo(
    data: Path | CaseFrames,
    out: Path,
    *,
    models: Sequence[str] = DEFAULT_ZOO,
    time_limit_s: float = 1200.0,
    height: int = 80,
    width: int = 160,
    seed: int = 0,
    held_out: float = 0.2,
    batch_size: int = 32,
    prefix: str = "",
    epochs: float | None = None,
    progress: Progress | None = None,
) -> TrainingReport:
    """Train ``models`` on the cases in ``data`` within ``time_limit_s`` in all; write each model and a report
    (``<prefix>training.json``). ``prefix`` goes before each model's name (``clean-epoch``), so that models trained
    on different data can share one folder.

    With ``epochs`` each model trains that many passes over its training frames (``time_limit_s`` stays a cap) and
    keeps its best state by the validation loss at the end of each pass: the result no longer depends on how fast
    the machine is. Without it, each model trains for its share of the time and is validated every so often.

    Raises:
        KeyError: For an unknown architecture.
        BadInputError: If the data holds too few cases to hold some out.
    """
    import torch

    for name in models:
        if name not in ARCHITECTURES:
            raise KeyError(f"unknown architecture {name!r}; known: {', '.join(ARCHITECTURES)}")
    started = time.perf_counter()
    frames = data if isinstance(data, CaseFrames) else load_case_frames(data, height=height, width=width)
    train_idx, val_idx, test_idx = _split(len(frames), seed, held_out)
    if not test_idx or not train_idx:
        raise BadInputError(f"{len(frames)} case(s) are too few to hold whole cases out for the test")
    y_speed, y_steer = frames.speed_mps[train_idx].ravel(), frames.steering_rad[train_idx].ravel()
    stats = np.array([[y_speed.mean(), y_speed.std() + 1e-6], [y_steer.mean(), y_steer.std() + 1e-6]], np.float32)
    test_speed, test_steer = frames.speed_mps[test_idx], frames.steering_rad[test_idx]
    report = TrainingReport(
        data=frames.source,
        train_cases=len(train_idx),
        held_out_cases=len(test_idx),
        height=height,
        width=width,
        baseline_speed_mae_kmh=float(np.abs(test_speed - stats[0, 0]).mean() * 3.6),
        baseline_steering_mae_rad=float(np.abs(test_steer - stats[1, 0]).mean()),
    )
    out.mkdir(parents=True, exist_ok=True)
    total_cost = sum(COST_MS[m] for m in models)
    spent = 0.0
    for name in models:
        budget = time_limit_s * COST_MS[name] / total_cost
        done_before = spent

        def tick(frac: float, name: str = name, budget: float = budget, before: float = done_before) -> None:
            if progress:
                progress(name, min(1.0, (before + frac * budget) / time_limit_s))

        torch.manual_seed(seed)
        report.models.append(
            _train_one(
                name,
                frames,
                train_idx,
                val_idx,
                test_idx,
                stats,
                out,
                budget,
                batch_size,
                seed,
                report,
                tick,
                prefix,
                epochs,
            )
        )
        spent += budget
    report.seconds = time.perf_counter() - started
    (out / f"{prefix}training.json").write_text(json.dumps(report.to_json(), indent=2), encoding="utf-8")
    return report


def _batches(idx: list[int], frames_per_case: int, batch: int, rng: np.random.Generator) -> list[np.ndarray]:
    pairs = np.array([(c, k) for c in idx for k in range(frames_per_case)], np.int64)
    rng.shuffle(pairs)
    return [pairs[i : i + batch] for i in range(0, len(pairs), batch)]


def _inputs(frames: CaseFrames, pairs: np.ndarray, windows: np.ndarray) -> np.ndarray:
    return frames.pixels[pairs[:, :1], windows[pairs[:, 1]]].astype(np.float32)  # [B, T, 3, H, W]


def _predict(net: object, frames: CaseFrames, idx: list[int], windows: np.ndarray, stats: np.ndarray) -> np.ndarray:
    import torch

    n = frames.pixels.shape[1]
    pairs = np.array([(c, k) for c in idx for k in range(n)], np.int64)
    outs = []
    with torch.inference_mode():
        for i in range(0, len(pairs), 64):
            x = torch.from_numpy(_inputs(frames, pairs[i : i + 64], windows))
            outs.append(net(x).numpy())  # type: ignore[operator]
    pred = np.concatenate(outs) * stats[:, 1] + stats[:, 0]
    return pred.reshape(len(idx), n, 2)


def _train_one(
    name: str,
    frames: CaseFrames,
    train_idx: list[int],
    val_idx: list[int],
    test_idx: list[int],
    stats: np.ndarray,
    out: Path,
    budget: float,
    batch_size: int,
    seed: int,
    report: TrainingReport,
    tick: Callable[[float], None],
    prefix: str = "",
    epochs: float | None = None,
) -> ModelReport:
    import torch

    arch = ARCHITECTURES[name]
    h, w = frames.pixels.shape[-2:]
    net = build(name, h, w)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    n_frames = frames.pixels.shape[1]
    windows = window_indices(n_frames, arch.frames)
    targets = np.stack([frames.speed_mps, frames.steering_rad], axis=-1)
    norm = torch.from_numpy(stats)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    seen, best, best_state = 0, float("inf"), None
    check_every = max(10.0, budget / 8)
    last_check = start
    max_seen = None if epochs is None else int(epochs * len(train_idx) * n_frames)

    def done(now: float) -> bool:
        return now - start >= budget or (max_seen is not None and seen >= max_seen)

    while not done(time.perf_counter()):
        net.train()
        for pairs in _batches(train_idx, n_frames, batch_size, rng):
            x = torch.from_numpy(_inputs(frames, pairs, windows))
            y = (torch.from_numpy(targets[pairs[:, 0], pairs[:, 1]]) - norm[:, 0]) / norm[:, 1]
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(net(x), y)
            loss.backward()
            opt.step()
            seen += len(pairs)
            now = time.perf_counter()
            tick(max((now - start) / budget, 0.0 if max_seen is None else seen / max_seen))
            if done(now):
                break
            if val_idx and max_seen is None and now - last_check >= check_every:
                last_check = now
                best, best_state = _keep_best(net, frames, val_idx, windows, stats, targets, best, best_state)
        if val_idx and max_seen is not None and not done(time.perf_counter()):  # by passes: validate after each
            best, best_state = _keep_best(net, frames, val_idx, windows, stats, targets, best, best_state)
    net.eval()
    if val_idx:
        best, best_state = _keep_best(net, frames, val_idx, windows, stats, targets, best, best_state)
        if best_state is not None:
            net.load_state_dict(best_state)
    net.eval()
    pred = _predict(net, frames, test_idx, windows, stats)
    speed_mae = float(np.abs(pred[..., 0] - frames.speed_mps[test_idx]).mean() * 3.6)
    steer_mae = float(np.abs(pred[..., 1] - frames.steering_rad[test_idx]).mean())
    label = prefix + name
    spec_path = _export(net, name, label, arch.frames, h, w, stats, out, arch.stands_in_for, speed_mae, steer_mae)
    seconds = time.perf_counter() - start
    return ModelReport(
        name=label,
        stands_in_for=arch.stands_in_for,
        parameters=parameter_count(net),
        seconds=round(seconds, 1),
        samples_seen=seen,
        epochs=round(seen / max(1, len(train_idx) * n_frames), 2),
        speed_mae_kmh=round(speed_mae, 3),
        steering_mae_rad=round(steer_mae, 5),
        spec=str(spec_path),
        beats_baseline=speed_mae < report.baseline_speed_mae_kmh and steer_mae < report.baseline_steering_mae_rad,
    )


def _keep_best(
    net: object,
    frames: CaseFrames,
    val_idx: list[int],
    windows: np.ndarray,
    stats: np.ndarray,
    targets: np.ndarray,
    best: float,
    best_state: dict[str, object] | None,
) -> tuple[float, dict[str, object] | None]:
    import copy

    net.eval()  # type: ignore[attr-defined]
    pred = _predict(net, frames, val_idx, windows, stats)
    err = np.abs((pred - targets[val_idx]) / stats[:, 1]).mean()
    net.train()  # type: ignore[attr-defined]
    if err < best:
        return float(err), copy.deepcopy(net.state_dict())  # type: ignore[attr-defined]
    return best, best_state


def _export(
    net: object,
    name: str,
    label: str,
    frames: int,
    h: int,
    w: int,
    stats: np.ndarray,
    out: Path,
    stands_in_for: str | None,
    speed_mae: float,
    steer_mae: float,
) -> Path:
    import torch

    class Exported(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module, stats: torch.Tensor) -> None:
            super().__init__()
            self.inner = inner
            self.register_buffer("stats", stats)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.inner(x) * self.stats[:, 1] + self.stats[:, 0]  # type: ignore[index]

    wrapper = Exported(net, torch.from_numpy(stats)).eval()  # type: ignore[arg-type]
    example = torch.zeros(2, frames, 3, h, w)
    with torch.inference_mode():
        with warnings.catch_warnings():
            # torch 2.9 deprecates tracing in favour of torch.export; TorchScript is still what users can load.
            warnings.simplefilter("ignore", FutureWarning)
            traced = torch.jit.trace(wrapper, example)
    model_file = out / f"{label}.pt"
    traced.save(str(model_file))
    spec = AdapterSpec(
        name=label,
        input=_input_spec(h, w, frames),
        files=[
            ModelFile(
                file=model_file.name,
                outputs=[
                    OutputSpec(name="speed", index=0, unit="m/s"),
                    OutputSpec(name="steering", index=1, unit="rad"),
                ],
            )
        ],
        description=f"drivemt zoo: {name}" + (f" (stands in for AutoMT's {stands_in_for})" if stands_in_for else ""),
        architecture=name,
        stands_in_for=stands_in_for,
        training={"speed_mae_kmh": round(speed_mae, 3), "steering_mae_rad": round(steer_mae, 5)},
    )
    spec_path = out / f"{label}.json"
    spec_path.write_text(spec.model_dump_json(indent=2, exclude_none=True), encoding="utf-8")
    return spec_path
