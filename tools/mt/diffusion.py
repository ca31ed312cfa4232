"""Follow-ups made by diffusion models (AutoMT's generators), loaded from local model folders.

* **"replaces"** (weather, light, road surface): an InstructPix2Pix pipeline edits every frame with the
  instruction "what would it look like if it were <manipulation>?" (AutoMT's guidance 6.5, image guidance 1.5,
  50 steps by default), with one seed for the 10 frames of a case.
* **"adds"** (objects, signs, markings): an inpainting pipeline (FLUX.1-Fill, or Stable Diffusion inpainting)
  paints the object into a masked box where it belongs (the same placement as the classical generator: on the
  road ahead for road users, at the roadside for signs) in the frame where it is largest. The painted object
  is then carried into the other 9 frames, anchored in the world by the ego's motion and scaled by
  perspective. AutoMT uses a video model for that step; drivemt uses the anchoring of its classical path.
  AutoMT's mask protects road, sidewalk, building and sky by segmentation; drivemt's mask is the placement box.

Which pipeline a folder holds is read from its ``model_index.json``. Diffusion on a CPU takes minutes per
frame, so it is refused there unless forced (``allow_cpu``). Models are never downloaded: the folders are
local (``huggingface-cli download ... --local-dir``).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from tools.errors import BadInputError
from tools.mt.settings import DiffusionSettings, GenerationSettings

if TYPE_CHECKING:
    import torch

__all__ = [
    "ADD_PIPELINES",
    "REPLACE_PIPELINES",
    "DiffusersUnavailableError",
    "DiffusionGenerator",
    "DiffusionSettings",
    "GenerationSettings",
    "add_prompt",
    "paste_patch",
    "replace_instruction",
]

REPLACE_PIPELINES = ("StableDiffusionInstructPix2PixPipeline",)
ADD_PIPELINES = ("FluxFillPipeline", "StableDiffusionInpaintPipeline")


class DiffusersUnavailableError(BadInputError):
    """The diffusion generator cannot run: no model folder, a broken one, a wrong pipeline, or a CPU.

    Reported for each case it meets (an error event), never retried: retrying cannot mend a configuration.
    """


def replace_instruction(manipulation: str) -> str:
    """The InstructPix2Pix instruction for a "replaces" MR (AutoMT's form)."""
    return f"what would it look like if it were {manipulation.strip().rstrip('.')}?"


def add_prompt(manipulation: str) -> str:
    """The inpainting prompt for an "adds" MR: the object in a dashboard camera's street photo."""
    return f"{manipulation.strip().rstrip('.')}, in a street photo taken from a car's dashboard camera, realistic"


def _pipeline_class(folder: Path, allowed: tuple[str, ...], role: str) -> str:
    index = folder / "model_index.json"
    if not folder.is_dir():
        raise DiffusersUnavailableError(f"the {role} model folder {folder} does not exist")
    try:
        name = json.loads(index.read_text())["_class_name"]
    except FileNotFoundError as exc:
        raise DiffusersUnavailableError(
            f"{folder} is not a diffusers pipeline folder (no model_index.json); "
            "save one with pipeline.save_pretrained or huggingface-cli download --local-dir"
        ) from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise DiffusersUnavailableError(f"{index} is not a readable pipeline index: {exc}") from exc
    if name not in allowed:
        raise DiffusersUnavailableError(f"{folder} holds a {name}; {role} needs one of {', '.join(allowed)}")
    return str(name)


def _even(v: float, k: int) -> int:
    return max(k, round(v / k) * k)


class DiffusionGenerator:
    """Edits frames with the configured diffusion pipelines (loaded once, on first use, one call at a time).

    Args:
        settings: Model folders, device and sampling.

    Raises:
        DiffusersUnavailableError: From :meth:`preflight` and the edits, with what to change.
    """

    def __init__(self, settings: DiffusionSettings) -> None:
        self.settings = settings
        self._pipes: dict[str, Any] = {}
        self._lock = threading.Lock()

    def device(self) -> str:
        """The torch device the pipelines run on (refusing a CPU unless forced)."""
        import torch

        wanted = self.settings.device
        if wanted == "auto":
            wanted = "cuda" if torch.cuda.is_available() else "cpu"
        if wanted.startswith("cuda") and not torch.cuda.is_available():
            raise DiffusersUnavailableError(f"device {wanted!r} is configured but torch sees no CUDA GPU")
        if wanted == "cpu" and not self.settings.allow_cpu:
            raise DiffusersUnavailableError(
                "the diffusers generator needs a GPU: on a CPU it takes minutes per frame. Use the classical "
                "generator (generation.generator: classical), or force it with generation.diffusers.allow_cpu: true"
            )
        return wanted

    def preflight(self) -> None:
        """Check the device and the folders without loading weights (a daemon calls this at start)."""
        self.device()
        s = self.settings
        if s.replaces_model is None and s.adds_model is None:
            raise DiffusersUnavailableError(
                "the diffusers generator has no model folder: set generation.diffusers.replaces_model "
                "(InstructPix2Pix) and/or generation.diffusers.adds_model (FLUX.1-Fill or SD inpainting)"
            )
        if s.replaces_model is not None:
            _pipeline_class(s.replaces_model, REPLACE_PIPELINES, "'replaces'")
        if s.adds_model is not None:
            _pipeline_class(s.adds_model, ADD_PIPELINES, "'adds'")

    def pipeline_name(self, verb: Literal["adds", "replaces"]) -> str:
        """The class name of the pipeline that draws ``verb`` MRs."""
        folder, allowed = self._folder(verb)
        return _pipeline_class(folder, allowed, f"{verb!r}")

    def _folder(self, verb: str) -> tuple[Path, tuple[str, ...]]:
        s = self.settings
        folder = s.replaces_model if verb == "replaces" else s.adds_model
        if folder is None:
            key = "replaces_model" if verb == "replaces" else "adds_model"
            raise DiffusersUnavailableError(f"no {verb!r} model is configured (generation.diffusers.{key})")
        return folder, REPLACE_PIPELINES if verb == "replaces" else ADD_PIPELINES

    def _dtype(self, name: str, device: str) -> torch.dtype:
        import torch

        if self.settings.dtype != "auto":
            return getattr(torch, self.settings.dtype)
        if device == "cpu":
            return torch.float32
        return torch.bfloat16 if name.startswith("Flux") else torch.float16

    def _pipe(self, verb: Literal["adds", "replaces"]) -> Any:
        if verb in self._pipes:
            return self._pipes[verb]
        folder, allowed = self._folder(verb)
        name = _pipeline_class(folder, allowed, f"{verb!r}")
        device = self.device()
        import diffusers
        from diffusers.utils import logging as dlog

        dlog.set_verbosity_error()
        dlog.disable_progress_bar()
        try:
            from transformers.utils import logging as tlog

            tlog.set_verbosity_error()
            tlog.disable_progress_bar()
        except ImportError:  # pragma: no cover - diffusers pipelines all bring transformers
            pass
        try:
            pipe = getattr(diffusers, name).from_pretrained(
                folder, dtype=self._dtype(name, device), local_files_only=True
            )
            pipe = pipe.to(device)
        except Exception as exc:  # a broken folder can fail in many ways; all are the same to the user
            raise DiffusersUnavailableError(f"the {verb!r} model in {folder} cannot be loaded: {exc}") from exc
        pipe.set_progress_bar_config(disable=True)
        self._pipes[verb] = pipe
        return pipe

    def _generator(self, seed: int) -> torch.Generator:
        import torch

        device = self.device()
        return torch.Generator(device="cpu" if device == "mps" else device).manual_seed(seed)

    def _size(self, w: int, h: int) -> tuple[int, int]:
        scale = self.settings.resolution / min(w, h)
        return _even(w * scale, 16), _even(h * scale, 16)

    def replace(self, frames: list[np.ndarray], manipulation: str, *, seed: int) -> list[np.ndarray]:
        """Every frame edited by InstructPix2Pix with one seed (RGB uint8 in, same size out)."""
        import cv2
        from PIL import Image

        h, w = frames[0].shape[:2]
        ew, eh = self._size(w, h)
        instruction = replace_instruction(manipulation)
        out = []
        with self._lock:
            pipe = self._pipe("replaces")
            for f in frames:
                image = Image.fromarray(cv2.resize(f, (ew, eh), interpolation=cv2.INTER_AREA))
                result = pipe(
                    prompt=instruction,
                    image=image,
                    num_inference_steps=self.settings.steps,
                    guidance_scale=self.settings.guidance_scale,
                    image_guidance_scale=self.settings.image_guidance_scale,
                    generator=self._generator(seed),
                    output_type="np",
                ).images[0]
                out.append(_to_frame(result, w, h))
        return out

    def paint_object(
        self, frame: np.ndarray, box: tuple[float, float, float, float], manipulation: str, *, seed: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Inpaint the object into ``box`` of ``frame``; return the painted box (RGB) and its alpha (0..1).

        The window around the box (``context`` times its size) is edited at the working resolution; the alpha
        keeps what the model changed inside the box, feathered, so the object can be carried to other frames.
        """
        import cv2
        from PIL import Image

        fh, fw = frame.shape[:2]
        x1, y1, x2, y2 = box
        bw, bh = max(2.0, x2 - x1), max(2.0, y2 - y1)
        side = max(bw, bh) * self.settings.context
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        wx1, wy1 = int(max(0, cx - side / 2)), int(max(0, cy - side / 2))
        wx2, wy2 = int(min(fw, cx + side / 2)), int(min(fh, cy + side / 2))
        window = frame[wy1:wy2, wx1:wx2]
        ww, wh = wx2 - wx1, wy2 - wy1
        ew, eh = self._size(ww, wh)
        mask = np.zeros((wh, ww), np.uint8)
        bx1, by1 = int(max(0, x1 - wx1)), int(max(0, y1 - wy1))
        bx2, by2 = int(min(ww, x2 - wx1 + 1)), int(min(wh, y2 - wy1 + 1))
        mask[by1:by2, bx1:bx2] = 255
        pipe_kwargs: dict[str, Any] = {}
        if self.settings.fill_guidance_scale is not None:
            pipe_kwargs["guidance_scale"] = self.settings.fill_guidance_scale
        with self._lock:
            pipe = self._pipe("adds")
            painted = pipe(
                prompt=add_prompt(manipulation),
                image=Image.fromarray(cv2.resize(window, (ew, eh), interpolation=cv2.INTER_AREA)),
                mask_image=Image.fromarray(cv2.resize(mask, (ew, eh), interpolation=cv2.INTER_NEAREST)),
                height=eh,
                width=ew,
                num_inference_steps=self.settings.steps,
                generator=self._generator(seed),
                output_type="np",
                **pipe_kwargs,
            ).images[0]
        painted_window = _to_frame(painted, ww, wh)
        patch = painted_window[by1:by2, bx1:bx2]
        before = window[by1:by2, bx1:bx2].astype(np.float32)
        changed = np.abs(patch.astype(np.float32) - before).mean(axis=2)
        alpha = np.clip((changed - 10.0) / 30.0, 0.0, 1.0)
        alpha = cv2.GaussianBlur(alpha, (0, 0), max(0.6, min(patch.shape[:2]) / 40))
        return patch, alpha.astype(np.float32)


def paste_patch(
    frame: np.ndarray, patch: np.ndarray, alpha: np.ndarray, box: tuple[float, float, float, float]
) -> None:
    """Blend ``patch`` (scaled to ``box``) into ``frame`` in place, clipped at the frame's edges."""
    import cv2

    fh, fw = frame.shape[:2]
    x1, y1, x2, y2 = box
    bw, bh = round(x2 - x1) + 1, round(y2 - y1) + 1
    if bw < 1 or bh < 1:
        return
    p = cv2.resize(patch, (bw, bh), interpolation=cv2.INTER_AREA if bw < patch.shape[1] else cv2.INTER_LINEAR)
    a = cv2.resize(alpha, (bw, bh), interpolation=cv2.INTER_LINEAR)[..., None]
    ox, oy = round(x1), round(y1)
    sx1, sy1 = max(0, -ox), max(0, -oy)
    dx1, dy1 = max(0, ox), max(0, oy)
    dx2, dy2 = min(fw, ox + bw), min(fh, oy + bh)
    if dx2 <= dx1 or dy2 <= dy1:
        return
    region = frame[dy1:dy2, dx1:dx2].astype(np.float32)
    src = p[sy1 : sy1 + dy2 - dy1, sx1 : sx1 + dx2 - dx1].astype(np.float32)
    aa = a[sy1 : sy1 + dy2 - dy1, sx1 : sx1 + dx2 - dx1]
    frame[dy1:dy2, dx1:dx2] = (region * (1 - aa) + src * aa).round().clip(0, 255).astype(np.uint8)


def _to_frame(result: np.ndarray, w: int, h: int) -> np.ndarray:
    import cv2

    img = (np.clip(result, 0.0, 1.0) * 255.0).round().astype(np.uint8)
    return np.ascontiguousarray(cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA))
