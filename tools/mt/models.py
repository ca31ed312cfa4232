"""The AutoMT domain's data: driving test cases (frames plus ego speed and steering), their metadata and truth.

A :class:`DrivingCase` is what AutoMT tests: consecutive camera frames (AutoMT uses 10 at 10 FPS), with, per
frame, the ego's speed in km/h and its steering angle in radians, positive to the left (the steering-wheel
angle, as Udacity and A2D2 record it). Frames are artefact refs (:mod:`tools.common.artifacts`), never
absolute paths. Optional metadata (time, weather, canonical road type, objects) is what a dataset states;
the T-Agent describes a case whether or not it has any. Pure data: events carry these models.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "CASE_FPS",
    "CASE_FRAMES",
    "FAULT_RULES",
    "BandFloor",
    "BandPolicy",
    "CaseMetadata",
    "DrivingCase",
    "EgoSample",
    "FaultRule",
    "FrameTruth",
    "ModelPrediction",
    "ModelVerdict",
    "ObjectBox",
    "TimeOfDay",
    "Weather",
]

CASE_FRAMES = 10
"""Frames per test case (AutoMT: 10 consecutive frames)."""
CASE_FPS = 10.0
"""Frames per second of a case (AutoMT: 10 FPS)."""

TimeOfDay = Literal["day", "dusk", "night"]
Weather = Literal["clear", "rain", "fog", "snow"]
FaultRule = Literal[
    "red-light", "stop-sign", "pedestrian", "cyclist", "lead-vehicle", "school-zone", "fog", "rain", "snow", "night"
]
FAULT_RULES: tuple[str, ...] = (
    "red-light",
    "stop-sign",
    "pedestrian",
    "cyclist",
    "lead-vehicle",
    "school-zone",
    "fog",
    "rain",
    "snow",
    "night",
)
"""The traffic rules the synthetic driver obeys, each of which a faulty driver can be made to ignore."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EgoSample(_Model):
    """The ego's state at one frame."""

    speed_kmh: float = Field(ge=0.0, le=400.0, description="Speed in km/h.")
    steering_rad: float = Field(
        ge=-4 * math.pi, le=4 * math.pi, description="Steering-wheel angle in radians, positive to the left."
    )

    @field_validator("speed_kmh", "steering_rad", mode="before")
    @classmethod
    def _finite(cls, value: object) -> object:
        if isinstance(value, int | float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


class ObjectBox(_Model):
    """One object seen in a frame, with its box in pixels."""

    kind: str = Field(description="vehicle, bus, truck, pedestrian, cyclist, traffic_light, stop_sign, ...")
    x1: float
    y1: float
    x2: float
    y2: float
    distance_m: float | None = Field(default=None, description="Distance ahead of the camera, where known.")
    state: str | None = Field(default=None, description="A traffic light's state (red, yellow, green).")
    track: int | None = Field(default=None, description="The same object across the case's frames.")


class CaseMetadata(_Model):
    """What a dataset (or a describer) says about a case; every field may be unknown."""

    time: TimeOfDay | None = None
    weather: Weather | None = None
    road_type: str | None = Field(default=None, description="A canonical ontology road type (tools.mt.roads).")
    objects: list[str] = Field(default_factory=list, description="Kinds of objects in the scene.")


class FrameTruth(_Model):
    """The ground truth of one synthetic frame."""

    road_type: str
    time: TimeOfDay
    weather: Weather
    objects: list[ObjectBox] = Field(default_factory=list)
    speed_kmh: float
    steering_rad: float


class DrivingCase(_Model):
    """One driving test case: frames, the ego's speed and steering per frame, optional metadata."""

    case_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:#-]+$")
    source: str = Field(description="Where it came from: 'synthetic', 'udacity:<file>', 'a2d2:<file>', 'folder:<dir>'.")
    frames: list[str] = Field(min_length=1, max_length=64, description="Artefact refs of the frames, in order.")
    ego: list[EgoSample] = Field(min_length=1, max_length=64, description="The ego's state at each frame.")
    fps: float = Field(default=CASE_FPS, gt=0.0, le=1000.0)
    metadata: CaseMetadata | None = None
    region: str | None = Field(default=None, description="Ontology region whose MRs apply (germany, california).")

    @model_validator(mode="after")
    def _aligned(self) -> DrivingCase:
        if len(self.frames) != len(self.ego):
            raise ValueError(f"{len(self.frames)} frames but {len(self.ego)} ego samples")
        return self

    @property
    def mean_speed_kmh(self) -> float:
        """Mean speed over the frames."""
        return sum(e.speed_kmh for e in self.ego) / len(self.ego)

    @property
    def mean_steering_rad(self) -> float:
        """Mean steering over the frames."""
        return sum(e.steering_rad for e in self.ego) / len(self.ego)

    def without_metadata(self) -> DrivingCase:
        """The same case with its metadata withheld (to measure a describer that must read the pixels)."""
        return self.model_copy(update={"metadata": None})


# -- test generation ---------------------------------------------------------------------------------------
Method = Literal["automt", "manual", "random", "null", "fixed"]
METHODS: tuple[str, ...] = ("automt", "manual", "random", "null")
"""The methods a user picks; ``fixed`` is one given MR applied wherever it fits (``mt run --mr``)."""
"""How a follow-up's MR is chosen: AutoMT's matching, AutoMT's 9 manual MRs, a random draw, or a neutral edit."""


class CaseDescription(_Model):
    """AutoMT's representation of a case: time, weather, road type, objects, and the ego from the data."""

    time: TimeOfDay | Literal["unknown"] = "unknown"
    weather: Weather | Literal["unknown"] = "unknown"
    road_type: str = Field(default="unknown", description="A canonical ontology road type, or 'unknown'.")
    objects: list[str] = Field(default_factory=list)
    speed_kmh: float = Field(description="The ego's mean speed over the case (from the data).")
    steering_rad: float = Field(description="The ego's mean steering over the case (from the data).")
    describer: str = Field(description="Who described it: 'offline:image-statistics' or '<provider>:<model>'.")
    evidence: dict[str, str] = Field(default_factory=dict, description="Per field, why (statistics, metadata).")


class PlannedMR(_Model):
    """The MR a follow-up applies, as the F-Agent chose it."""

    method: Method
    gherkin: str
    road_type: str
    verb: Literal["adds", "replaces"]
    manipulation: str = Field(description="The MR's manipulation phrase.")
    term: str = Field(description="Its canonical ontology term (what distinct manipulations count).")
    expected_behavior: str
    mr_id: str | None = Field(default=None, description="The stored MR (automt), or the manual MR's id.")
    limit_kmh: float | None = Field(
        default=None, description="A speed limit the MR names (or one drawn below the ego)."
    )


class EditRecord(_Model):
    """What the generator did to the frames (ground truth for measuring the checks; the checks never read it)."""

    generator: str = Field(description="'re-render' (synthetic scene), 'classical', or 'diffusers:<pipeline>'.")
    op: str = Field(description="'add' or 'replace'.")
    kind: str = Field(description="What was drawn or changed: pedestrian, red light, rain, night ...")
    place: str | None = None
    strength: float | None = None
    boxes: list[tuple[float, float, float, float] | None] = Field(
        default_factory=list, description="Per frame, the added object's box in pixels (None when out of view)."
    )
    visible: bool = Field(default=True, description="Whether the edit shows in the frames (truth).")
    expected_from_scene: str | None = Field(
        default=None, description="Synthetic re-render: the scripted driver's own reaction (slow down, keep current)."
    )


class FollowUp(_Model):
    """A follow-up case made from a source case by one MR."""

    followup_id: str
    source: DrivingCase
    description: CaseDescription
    mr: PlannedMR
    case: DrivingCase = Field(description="The follow-up: edited frames (refs) and the source's ego data.")
    edit: EditRecord
    seconds: float = 0.0


class ValidityCheck(_Model):
    """One of the three checks of a follow-up."""

    name: Literal["scenario_alignment", "manipulation_verification", "logical_alignment"]
    passed: bool
    reason: str
    value: float | None = None
    skipped: bool = False


class Validity(_Model):
    """The three checks; a follow-up is valid when all pass (a skipped check counts as passed)."""

    checks: list[ValidityCheck]
    checker: str = "offline:pixel-checks"
    error: str | None = Field(
        default=None, description="Why the follow-up could not be checked at all (its frames unreadable); not valid."
    )

    @property
    def valid(self) -> bool:
        """All three checks passed."""
        return self.error is None and all(c.passed for c in self.checks)

    def failing(self) -> list[str]:
        """Names of the checks that failed."""
        return [c.name for c in self.checks if not c.passed]


# -- the Judge ----------------------------------------------------------------------------------
BandPolicy = Literal["automt-paper", "per-model", "strict"]
"""How the Judge draws its band (:mod:`tools.mt.judging`)."""


class ModelPrediction(BaseModel):
    """One model's predictions over a case's frames."""

    model: str
    speed_kmh: list[float] | None = None
    steering_rad: list[float] | None = None


class BandFloor(BaseModel):
    """The least per-model band, calibrated on ``null`` follow-ups (``bench/judge_calibration.py``): over 100
    null follow-ups of the six-model zoo, the 99th percentile of |change| was 0.47-0.80 km/h for five models
    (1.41 for PilotNet) and 0.003-0.027 rad, so 1.0 km/h and 0.03 rad keep each model's false alarms under
    5 % (PilotNet 3 %, the others 0-1 %)."""

    speed_kmh: float = Field(default=1.0, ge=0.0)
    steering_rad: float = Field(default=0.03, ge=0.0)


class ModelVerdict(BaseModel):
    """One model's verdict on one follow-up."""

    model: str
    behaviour: str
    verdict: Literal["violation", "ok", "not judged", "error"]
    reason: str
    band: str = Field(description="'cross-model', 'per-model' or 'strict'.")
    band_value: float | None = Field(default=None, description="km/h for speed, rad for steering.")
    output: Literal["speed", "steering", "both"] | None = None
    source: float | None = Field(default=None, description="The source's median (km/h or rad).")
    followup: float | None = None
    change: float | None = None

    @property
    def violation(self) -> bool:
        """The model broke the MR."""
        return self.verdict == "violation"
