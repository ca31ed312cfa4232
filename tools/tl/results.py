"""Results of testing traffic-light detectors on an augmented dataset (what the Judge and reports share)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tools.tl.models import TLBox

__all__ = ["DetectorSummary", "PairResult", "TLTestResult"]


class PairResult(BaseModel):
    """One detector on one (original, augmented) pair."""

    model_config = ConfigDict(extra="forbid")

    detector: str
    original_id: str
    augmented_id: str
    code: str
    consistency: float = Field(description="mAP@[.5:.95] of the detections on τ(i) against τ(detections on i).")
    violation: bool
    detections_original: list[TLBox] = Field(default_factory=list)
    detections_augmented: list[TLBox] = Field(default_factory=list)
    expected: list[TLBox] = Field(default_factory=list, description="τ applied to the detections on the original.")
    original_path: str
    augmented_path: str
    evidence: str | None = Field(default=None, description="Side-by-side picture (violations).")


class DetectorSummary(BaseModel):
    """One detector over the dataset."""

    model_config = ConfigDict(extra="forbid")

    detector: str
    map_original: float = Field(description="mAP@[.5:.95] against ground truth on the original images.")
    map_augmented: dict[str, float] = Field(default_factory=dict, description="Per transformation, against τ(truth).")
    pairs: dict[str, int] = Field(default_factory=dict)
    violations: dict[str, int] = Field(default_factory=dict)
    mean_consistency: dict[str, float] = Field(default_factory=dict)
    untested: dict[str, int] = Field(
        default_factory=dict,
        description="Per transformation, pairs where the detector found no light on either image: they agree "
        "trivially (consistency 1), so its relation is untested there.",
    )
    seconds: float = 0.0

    def untested_share(self) -> float:
        """Share of its pairs where it found nothing on either image."""
        total = sum(self.pairs.values())
        return sum(self.untested.values()) / total if total else 0.0


class TLTestResult(BaseModel):
    """Every detector on every pair."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    manifest: str
    threshold: float
    conf: float
    transforms: list[str]
    images: int
    summaries: list[DetectorSummary] = Field(default_factory=list)
    pairs: list[PairResult] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list, description="Images that could not be tested, and why.")
    seconds: float = 0.0

    def violations(self) -> list[PairResult]:
        """Violating pairs, lowest consistency first."""
        return sorted((p for p in self.pairs if p.violation), key=lambda p: (p.consistency, p.detector, p.code))
