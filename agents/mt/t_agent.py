"""T-Agent: each submitted driving case is described as AutoMT's representation (AutoMT's T-Agent).

Time, weather, road type and objects come from a vision model when one is configured (through autogen, the
key frames in one multimodal message), else from the offline describer (``offline:image-statistics``, named
as such), which reads time and weather from image statistics and road type and objects only from metadata.
The ego's speed and steering always come from the case's data. A case whose frames cannot be read is an
error event naming it, and travels on undescribed (so it still ends with a verdict); the batch's other cases
go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

import structlog

from agents.runtime import Agent, error_event
from bus import CasesDescribed, CasesSubmitted, ErrorDomain, ErrorReported, Event, derived_id
from bus.events import CasesDescribedPayload
from tools.common.artifacts import ArtifactStore
from tools.errors import BadInputError, LLMResponseError
from tools.mt.describe import describe_offline
from tools.mt.generate import read_frames
from tools.mt.llm_describer import LLMDescriber

__all__ = ["TAgent"]

log = structlog.get_logger(__name__)


class TAgent(Agent):
    """Describes driving cases.

    Args:
        store: Where the cases' frames are.
        llm: A vision model's describer; the offline describer when None (and as its fallback).
    """

    name: ClassVar[str] = "t-agent"
    consumes = (CasesSubmitted,)
    produces = (CasesDescribed, ErrorReported)
    error_domain = ErrorDomain.CASES

    def __init__(self, *, store: ArtifactStore, llm: LLMDescriber | None = None) -> None:
        self.store = store
        self.llm = llm

    async def handle(self, event: Event) -> Sequence[Event]:
        """One described event per case; an unreadable case is an error event and the others go on."""
        assert isinstance(event, CasesSubmitted)
        p = event.payload
        out: list[Event] = []
        for i, case in enumerate(p.cases):
            try:
                frames = await asyncio.to_thread(read_frames, self.store, case)
            except BadInputError as exc:
                out.append(
                    error_event(
                        event, agent=self.name, domain=self.error_domain, exc=exc, item_id=case.case_id, index=i
                    )
                )
                # The case still travels on, undescribed, so that it ends with a verdict like the others.
                out.append(
                    CasesDescribed(
                        **event.caused(event_id=derived_id(event.event_id, "described", case.case_id)),
                        producer=self.name,
                        payload=CasesDescribedPayload(case=case, problem=str(exc), **p.batch_fields()),
                    )
                )
                continue
            description = None
            if self.llm is not None:
                try:
                    description = await self.llm.describe(case, frames)
                except LLMResponseError as exc:
                    log.warning(
                        "model description unusable; image statistics instead", case_id=case.case_id, reason=exc.reason
                    )
            if description is None:
                description = await asyncio.to_thread(describe_offline, case, frames)
                if self.llm is not None:
                    description.evidence["fallback"] = (
                        f"{self.llm.name} gave no usable answer; described offline instead"
                    )
            region = case.region or p.region
            out.append(
                CasesDescribed(
                    **event.caused(event_id=derived_id(event.event_id, "described", case.case_id)),
                    producer=self.name,
                    payload=CasesDescribedPayload(
                        case=case.model_copy(update={"region": region}),
                        description=description,
                        **{**p.batch_fields(), "region": region},
                    ),
                )
            )
        return out
