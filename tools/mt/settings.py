"""Settings of AutoMT's follow-up generation (light: read by the configuration without loading any model code)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from tools.mt.models import BandFloor, BandPolicy

__all__ = ["DiffusionSettings", "GenerationSettings", "MTJudgeSettings"]


class DiffusionSettings(BaseModel):
    """The diffusion generator: local model folders and sampling settings."""

    replaces_model: Path | None = Field(
        default=None, description="InstructPix2Pix folder (diffusers layout) for 'replaces' MRs."
    )
    adds_model: Path | None = Field(
        default=None, description="FLUX.1-Fill or Stable Diffusion inpainting folder for 'adds' MRs."
    )
    device: str = Field(default="auto", description="Torch device: auto (CUDA when present), cuda, cuda:1, mps, cpu.")
    allow_cpu: bool = Field(default=False, description="Run on a CPU anyway (minutes per frame; tests use it).")
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = Field(
        default="auto", description="auto: bfloat16 for FLUX and float16 for SD on a GPU, float32 on a CPU."
    )
    steps: int = Field(default=50, ge=1, le=500, description="Denoising steps (AutoMT: 50).")
    guidance_scale: float = Field(default=6.5, ge=0.0, description="InstructPix2Pix text guidance (AutoMT: 6.5).")
    image_guidance_scale: float = Field(
        default=1.5, ge=0.0, description="InstructPix2Pix image guidance (AutoMT: 1.5)."
    )
    fill_guidance_scale: float | None = Field(
        default=None, description="Inpainting guidance; the pipeline's own default (FLUX.1-Fill 30, SD 7.5) if unset."
    )
    resolution: int = Field(
        default=512, ge=32, le=2048, description="Frames are resized so their short side is this while edited."
    )
    context: float = Field(
        default=3.0, ge=1.5, le=10.0, description="An inpainting window is this many times the object's box."
    )


class GenerationSettings(BaseModel):
    """How the F-Agent draws follow-ups."""

    generator: Literal["classical", "diffusers"] = Field(
        default="classical",
        description="classical: CPU edits (and re-rendering of synthetic scenes); diffusers: the models below.",
    )
    diffusers: DiffusionSettings = Field(default_factory=DiffusionSettings)


class MTJudgeSettings(BaseModel):
    """The Judge's driving models and its band (AutoMT's last step)."""

    models: list[Path] = Field(
        default_factory=list,
        description="Adapter specs, or folders of them, judged when a submission names no models.",
    )
    band: BandPolicy = Field(
        default="automt-paper",
        description="automt-paper: the spread across models (three or more), else per model; per-model; strict.",
    )
    floor: BandFloor = Field(default_factory=BandFloor, description="The least per-model band.")
