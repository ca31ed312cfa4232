"""T-Agent: each submitted driving case is described as AutoMT's representation (AutoMT's T-Agent).

Time, weather, road type and objects come from a vision model when one is configured (through autogen, the
key frames in one multimodal message), else from the offline describer (``offline:image-statistics``, named
as such), which reads time and weather from image statistics and road type and objects only from metadata.
The ego's speed and steering always come from the case's data. A case whose frames cannot be read is an
error event naming it, and travels on undescribed (so it still ends with a verdict); the batch's other cases
go on. With the conversation on, each described case also gets one ``agents.message``: the vision model's prompt
and answer excerpts, and the description settled on with its evidence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import structlog

from agents.runtime import Agent, error_event
from bus import AgentMessage, CasesDescribed, CasesSubmitted, ErrorDomain, ErrorReported, Event, derived_id
from bus.events import CasesDescribedPayload
from tools.common.artifacts import ArtifactStore
from tools.common.conversation import excerpt, recording
from tools.common.models import ConversationEntry
from tools.errors import BadInputError, LLMResponseError
from tools.mt.describe import describe_offline
from tools.mt.generate import read_frames
from tools.mt.llm_describer import LLMDescriber
from tools.mt.models import CaseDescription, DrivingCase

__all__ = ["TAgent"]

log = structlog.get_logger(__name__)


class TAgent(Agent):
    """Describes driving cases.

    Args:
        store: Where the cases' frames are.
        llm: A vision model's describer; the offline describer when None (and as its fallback).
        conversation: Publish one ``agents.message`` per described case.
    """

    name: ClassVar[str] = "t-agent"
    consumes = (CasesSubmitted,)
    produces = (CasesDescribed, ErrorReported, AgentMessage)
    error_domain = ErrorDomain.CASES

    def __init__(self, *, store: ArtifactStore, llm: LLMDescriber | None = None, conversation: bool = False) -> None:
        self.store = store
        self.llm = llm
        self.conversation = conversation

    async def handle(self, event: Event) -> Sequence[Event]:
        """One described event per case; an unreadable case is an error event and the others go on."""
        assert isinstance(event, CasesSubmitted)
        p = event.payload
        out: list[Event] = []
        for i, case in enumerate(p.cases):
            try:
                frames = await asyncio.to_thread(read_frames, self.store, case)
                description, transcript = await self._describe(case, frames)
            except BadInputError as exc:  # (frames that cannot be read or described: this case alone)
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
            if self.conversation:
                d = description
                why = "; ".join(f"{k}: {v}" for k, v in d.evidence.items())
                text = (
                    f"{d.time}, {d.weather}, road type {d.road_type}, objects {', '.join(d.objects) or 'none'}; "
                    f"ego {d.speed_kmh:.1f} km/h (from the data); {why}"
                )
                transcript.append(ConversationEntry(role="decision", reasoner=d.describer, text=excerpt(text)))
                out.append(
                    AgentMessage.bounded(event, agent=self.name, entries=transcript, item_id=case.case_id, index=i)
                )
        return out

    async def _describe(
        self, case: DrivingCase, frames: list[np.ndarray]
    ) -> tuple[CaseDescription, list[ConversationEntry]]:
        """The vision model's description, else (or when its answer is unusable) the offline one; with the
        conversation's transcript."""
        description = None
        with recording(active=self.conversation) as transcript:
            if self.llm is not None:
                try:
                    description = await self.llm.describe(case, frames)
                except LLMResponseError as exc:
                    log.warning(
                        "model description unusable; image statistics instead", case_id=case.case_id, reason=exc.reason
                    )
        if description is None:
            try:
                description = await asyncio.to_thread(describe_offline, case, frames)
            except Exception as exc:  # (image statistics are deterministic: a retry would fail the same way)
                raise BadInputError(
                    f"case {case.case_id}: its frames cannot be described: {type(exc).__name__}: {exc}"[:500]
                ) from exc
            if self.llm is not None:
                description.evidence["fallback"] = f"{self.llm.name} gave no usable answer; described offline instead"
        return description, transcript
