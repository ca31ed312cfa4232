"""Events of the traffic-light domain: datasets submitted, augmented, and the detectors' verdicts."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bus.envelope import Event, registry
from tools.tl.models import TRANSFORM_CODES

__all__ = [
    "TLAugmented",
    "TLAugmentedPayload",
    "TLDatasetPayload",
    "TLDatasetSubmitted",
    "TLVerdict",
    "TLVerdictPayload",
]


class TLDatasetPayload(BaseModel):
    """A labelled traffic-light dataset to augment (and, with detectors, to test)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(min_length=1, description="Dataset folder or annotation file (LISA, Bosch, YOLO, COCO).")
    dataset_ref: str | None = Field(
        default=None,
        max_length=1000,
        description="Artefact ref of the dataset (folder or annotation file) that the client uploaded; read from the "
        "artefact store instead of 'dataset' when set.",
    )
    format: str | None = Field(default=None, description="lisa, bosch, yolo or coco; detected when null.")
    transforms: list[str] = Field(
        default_factory=lambda: list(TRANSFORM_CODES), min_length=1, description="TIGAUG transformation codes."
    )
    fraction: float = Field(default=1.0, gt=0, le=1, description="Share of the images to augment (seeded sample).")
    split: str | None = Field(default=None, description="Only images of this split (e.g. test); all when null.")
    params: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Parameters per transformation code (defaults are TIGAUG's), e.g. {SC: {factor: [0.6, 0.8]}}.",
    )
    seed: int = Field(default=0, ge=0, description="Seed of the sample and of every transformation.")
    detectors: list[str] = Field(
        default_factory=list, description="Detectors to test on it, as KIND:PATH (yolo:, frcnn:, ssdlite:)."
    )
    threshold: float | None = Field(default=None, ge=0, le=1, description="Consistency below which an image violates.")
    name: str | None = Field(default=None, description="A name for reports.")

    @field_validator("transforms")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        codes = [v.strip().upper() for v in value]
        unknown = [c for c in codes if c not in TRANSFORM_CODES]
        if unknown:
            raise ValueError(f"unknown transformation(s) {unknown}; use {', '.join(TRANSFORM_CODES)}")
        return list(dict.fromkeys(codes))


class TLAugmentedPayload(BaseModel):
    """An augmented dataset, with the pairs the Judge compares."""

    request: TLDatasetPayload
    format: str = Field(description="The format the input was read in.")
    out_ref: str = Field(description="Artefact ref of the augmented dataset's folder.")
    manifest_ref: str = Field(description="Artefact ref of the JSON file listing every (original, augmented) pair.")
    images_in: int
    pairs: int = Field(description="Augmented images written.")
    per_transform: dict[str, int] = Field(default_factory=dict)
    skipped: list[dict[str, str]] = Field(default_factory=list, description="Items left out, with the reason.")
    seconds: float
    images_per_second: float


class TLVerdictPayload(BaseModel):
    """Detectors tested on an augmented dataset."""

    dataset: str
    detectors: list[str]
    threshold: float
    images: int = Field(description="Original images compared.")
    pairs: int = Field(description="(original, augmented) pairs compared per detector.")
    violations: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="detector -> transform -> images violating the relation."
    )
    map_original: dict[str, float] = Field(default_factory=dict, description="detector -> mAP@[.5:.95] on originals.")
    map_augmented: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="detector -> transform -> mAP@[.5:.95] against ground truth."
    )
    report: str | None = Field(default=None, description="Artefact ref of the HTML report.")
    seconds: float = 0.0


@registry.register
class TLDatasetSubmitted(Event):
    """A traffic-light dataset to augment with TIGAUG's transformations."""

    type: Literal["tl.datasets.submitted"] = "tl.datasets.submitted"
    payload: TLDatasetPayload
    subject_name: ClassVar[str] = "tl_datasets_submitted"

    def describe(self) -> str:
        p = self.payload
        det = f", testing {len(p.detectors)} detector(s)" if p.detectors else ""
        return f"traffic-light dataset {p.dataset} submitted: {','.join(p.transforms)} on {p.fraction:.0%}{det}"[:500]


@registry.register
class TLAugmented(Event):
    """A traffic-light dataset was augmented."""

    type: Literal["tl.augmented"] = "tl.augmented"
    payload: TLAugmentedPayload
    subject_name: ClassVar[str] = "tl_augmented"

    def describe(self) -> str:
        p = self.payload
        skipped = f", {len(p.skipped)} skipped" if p.skipped else ""
        return (
            f"{p.pairs} augmented images from {p.images_in} in {p.seconds:.1f} s "
            f"({p.images_per_second:.1f}/s){skipped} -> {p.out_ref}"
        )[:500]


@registry.register
class TLVerdict(Event):
    """Detectors were run on original and augmented images and their relations checked."""

    type: Literal["tl.verdict"] = "tl.verdict"
    payload: TLVerdictPayload
    subject_name: ClassVar[str] = "tl_verdict"

    def describe(self) -> str:
        p = self.payload
        total = sum(sum(v.values()) for v in p.violations.values())
        return f"{p.dataset}: {total} violation(s) in {p.pairs} pair(s) x {len(p.detectors)} detector(s)"[:500]
