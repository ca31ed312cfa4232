"""Submitting driving test cases: read a recording with any loader, put its frames into the store, publish them."""

from __future__ import annotations

import uuid
from pathlib import Path

from bus import CasesSubmitted
from bus.events import CasesSubmittedPayload
from tools.common.artifacts import ArtifactStore, RunLayout
from tools.mt.loaders import LoadResult, import_cases, load_cases
from tools.mt.models import CASE_FRAMES

__all__ = ["case_submissions"]


def case_submissions(
    store: ArtifactStore,
    path: Path,
    *,
    region: str | None,
    producer: str = "cli",
    per_event: int = 10,
    format: str | None = None,
    stride: int | None = None,
) -> tuple[str, list[CasesSubmitted], LoadResult]:
    """Events for the cases under ``path`` (their frames put into ``store`` under the batch's folder).

    Args:
        store: The daemon's artefact store (events carry refs into it).
        path: A recording or a dataset: Udacity, A2D2, a plain folder, or a drivemt synthetic set.
        region: The ontology region whose MRs apply.
        producer: Who submits.
        per_event: Cases per event.
        format: The recording's format; detected when None.
        stride: Frames between consecutive cases of a long recording (the case length when None).

    Returns:
        The batch's correlation id, its events, and what the loader found (problems included).

    Raises:
        NoCasesError: If the path holds no recording.
    """
    result = load_cases(path, format=format, region=region, stride=stride or CASE_FRAMES)
    correlation = str(uuid.uuid4())
    cases = import_cases(store, result.cases, prefix=RunLayout.cases(correlation))
    events = [
        CasesSubmitted(
            correlation_id=correlation,
            producer=producer,
            payload=CasesSubmittedPayload(
                cases=cases[i : i + per_event], region=region, source=str(path), batch_size=len(cases)
            ),
        )
        for i in range(0, len(cases), max(1, per_event))
    ]
    return correlation, events, result
