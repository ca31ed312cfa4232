"""The adapter spec: how to feed a driving model frames and read its speed and steering.

A models folder holds one ``<name>.json`` spec per model, beside the model files it names (TorchScript
``.pt``/``.ts``, or ONNX ``.onnx``). A spec says what the model takes (size, colour space, frames per input,
tensor layout, scaling) and what it returns (which output and column is speed or steering, in which unit and
sign). One file may give both outputs (drivemt's own models: one trunk, two heads), or two files one each
(AutoMT's separate speed and steering networks). Example::

    {"name": "my-pilotnet",
     "input": {"width": 200, "height": 66, "colour": "yuv", "frames": 1, "layout": "NCHW",
               "scale": 0.00392157, "mean": [0, 0, 0], "std": [1, 1, 1]},
     "files": [{"file": "steer.onnx", "outputs": [{"name": "steering", "unit": "deg", "left_positive": false}]},
               {"file": "speed.pt", "outputs": [{"name": "speed", "unit": "m/s"}]}]}
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

__all__ = ["SPEC_SUFFIX", "AdapterSpec", "InputSpec", "ModelFile", "OutputSpec", "find_specs"]

SPEC_SUFFIX = ".json"


class InputSpec(BaseModel):
    """What the model takes."""

    width: int = Field(ge=8, le=4096)
    height: int = Field(ge=8, le=4096)
    colour: Literal["rgb", "bgr", "yuv", "gray"] = "rgb"
    frames: int = Field(default=1, ge=1, le=10, description="Frames per input, the current one last.")
    layout: Literal["NCHW", "NHWC", "NTCHW", "NCTHW"] = Field(
        default="NCHW", description="NCHW/NHWC for one frame; NTCHW/NCTHW for several."
    )
    scale: float = Field(default=1 / 255, description="Pixels (0-255) are multiplied by this ...")
    mean: list[float] = Field(default_factory=lambda: [0.0, 0.0, 0.0], description="... minus this ...")
    std: list[float] = Field(default_factory=lambda: [1.0, 1.0, 1.0], description="... divided by this.")
    resize: Literal["stretch", "exact"] = Field(
        default="stretch", description="stretch: frames are resized to the input; exact: they must match it."
    )

    @model_validator(mode="after")
    def _consistent(self) -> InputSpec:
        if self.frames > 1 and self.layout in ("NCHW", "NHWC"):
            raise ValueError(f"{self.frames} frames per input need the layout NTCHW or NCTHW, not {self.layout}")
        channels = 1 if self.colour == "gray" else 3
        if len(self.mean) not in (1, channels) or len(self.std) not in (1, channels):
            raise ValueError(f"mean and std need 1 or {channels} values")
        if any(s == 0 for s in self.std):
            raise ValueError("std may not be zero")
        return self


class OutputSpec(BaseModel):
    """One value a model file returns."""

    name: Literal["speed", "steering"]
    output: int = Field(default=0, ge=0, description="Which output tensor.")
    index: int = Field(default=0, ge=0, description="Which column of it.")
    unit: Literal["km/h", "m/s", "mph", "rad", "deg"]
    left_positive: bool = Field(default=True, description="Steering: positive means left.")
    scale: float = Field(default=1.0, description="raw * scale + offset, before the unit conversion.")
    offset: float = 0.0

    @model_validator(mode="after")
    def _unit_fits(self) -> OutputSpec:
        speed_units, angle_units = ("km/h", "m/s", "mph"), ("rad", "deg")
        if (self.name == "speed") != (self.unit in speed_units):
            allowed = speed_units if self.name == "speed" else angle_units
            raise ValueError(f"{self.name} cannot be in {self.unit}: use one of {', '.join(allowed)}")
        return self


class ModelFile(BaseModel):
    """A TorchScript or ONNX file and the outputs it gives."""

    file: str = Field(description="Path relative to the spec.")
    format: Literal["torchscript", "onnx"] | None = Field(default=None, description="From the suffix if unset.")
    outputs: list[OutputSpec] = Field(min_length=1)

    @property
    def kind(self) -> Literal["torchscript", "onnx"]:
        """The file's format."""
        if self.format is not None:
            return self.format
        return "onnx" if self.file.lower().endswith(".onnx") else "torchscript"


class AdapterSpec(BaseModel):
    """A driving model: its input, its files and their outputs."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
    input: InputSpec
    files: list[ModelFile] = Field(min_length=1, max_length=2)
    description: str = ""
    architecture: str | None = Field(default=None, description="drivemt's zoo architecture, for trained models.")
    stands_in_for: str | None = Field(default=None, description="AutoMT's model this one replaces on a CPU.")
    training: dict[str, float | int | str] = Field(default_factory=dict, description="Held-out errors and more.")

    @field_validator("files")
    @classmethod
    def _one_of_each(cls, files: list[ModelFile]) -> list[ModelFile]:
        names = [o.name for f in files for o in f.outputs]
        if len(names) != len(set(names)):
            raise ValueError("speed and steering may each come from one output only")
        return files

    @property
    def outputs(self) -> set[str]:
        """Which of speed and steering the model gives."""
        return {o.name for f in self.files for o in f.outputs}


def find_specs(folder: Path) -> list[Path]:
    """The adapter specs in a models folder (``*.json`` but training reports, ``*training.json``), sorted."""
    if folder.is_file():
        return [folder]
    return sorted(p for p in folder.glob(f"*{SPEC_SUFFIX}") if not p.name.endswith("training.json"))
