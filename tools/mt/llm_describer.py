"""The T-Agent with a vision-language model: AutoMT's representation of a driving case, through autogen.

The model sees a case's key frames (first, middle, last) in one autogen ``MultiModalMessage`` and answers with
the scene's time of day, weather, road type and objects (structured output where the model supports it; the
road type is one of drivemt's canonical ontology terms or ``unknown``). The ego's speed and steering are never
asked: they come from the case's data. An answer that does not fit, after one retry with the problems named,
raises :class:`~tools.errors.LLMResponseError`, and the T-Agent falls back to the offline describer and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np
import structlog
from pydantic import BaseModel, Field, ValidationError

from tools.common.conversation import record, record_autogen
from tools.errors import LLMResponseError
from tools.mt.models import CaseDescription, DrivingCase, TimeOfDay, Weather
from tools.mt.roads import CANONICAL_ROAD_TYPES

__all__ = ["DESCRIBER_SYSTEM", "DescriptionAnswer", "LLMDescriber", "describer_task"]

log = structlog.get_logger(__name__)

RoadTypeName: Any = Enum(  # type: ignore[misc]  # built from the canonical terms
    "RoadTypeName", {t.replace(" ", "_").replace("-", "_"): t for t in (*CANONICAL_ROAD_TYPES, "unknown")}
)


class DescriptionAnswer(BaseModel):
    """What the model says a driving scene is."""

    reasoning: str = Field(description="One or two sentences on what in the frames decides each field.")
    time: TimeOfDay
    weather: Weather
    road_type: RoadTypeName
    objects: list[str] = Field(default_factory=list, max_length=20, description="Traffic participants and signs seen.")


DESCRIBER_SYSTEM = (
    "You describe scenes from a car's front camera for testing driving systems. You see a few frames of one "
    "short clip. Say what time of day it is, what the weather is, which kind of road the car is on, and which "
    "traffic participants, signs and signals are visible. Use only what the frames show; when you cannot tell "
    "the road type, answer 'unknown'."
)


def describer_task() -> str:
    """The question sent with the frames (written from AutoMT's description of its T-Agent)."""
    roads = ", ".join(f"'{t}'" for t in (*CANONICAL_ROAD_TYPES, "unknown"))
    return (
        "These are the first, middle and last frames of a driving clip. Describe the scene as JSON with the keys "
        "reasoning, time ('day', 'dusk' or 'night'), weather ('clear', 'rain', 'fog' or 'snow'), road_type (one of "
        f"{roads}: a straight or curved road with nothing special is 'any roads') and objects (a list of what you "
        "see, e.g. 'pedestrian', 'cyclist', 'red light', 'stop sign')."
    )


def _image(frame: np.ndarray) -> Any:
    from autogen_core import Image
    from PIL import Image as PILImage

    return Image.from_pil(PILImage.fromarray(np.ascontiguousarray(frame)))


class LLMDescriber:
    """Describes cases with a vision-capable model.

    Args:
        model_client: An autogen chat completion client (OpenAI, Anthropic, OpenAI-compatible, replay).
        label: ``provider:model``, recorded as the describer.
    """

    def __init__(self, *, model_client: Any, label: str) -> None:
        self.model_client = model_client
        self.label = label

    @property
    def name(self) -> str:
        """The describer's name in results."""
        return self.label

    async def describe(self, case: DrivingCase, frames: Sequence[np.ndarray]) -> CaseDescription:
        """AutoMT's representation of ``case``.

        Raises:
            LLMResponseError: When the model is not vision-capable, fails, or answers unusably twice.
        """
        from autogen_agentchat.agents import AssistantAgent
        from autogen_agentchat.messages import MultiModalMessage, StructuredMessage, TextMessage

        info = self.model_client.model_info
        if not info.get("vision"):
            raise LLMResponseError(self.label, "the model is not vision-capable; the T-Agent needs to see the frames")
        structured = bool(info.get("structured_output"))
        agent = AssistantAgent(
            name="t_agent",
            model_client=self.model_client,
            system_message=DESCRIBER_SYSTEM,
            output_content_type=DescriptionAnswer if structured else None,
        )
        keys = [frames[0], frames[len(frames) // 2], frames[-1]]
        task: Any = MultiModalMessage(content=[describer_task(), *[_image(f) for f in keys]], source="user")
        problems: list[str] = []
        for attempt in range(2):
            try:
                result = await agent.run(task=task)
            except ValidationError as exc:
                problems = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]]
            except Exception as exc:
                raise LLMResponseError(self.label, f"the model call failed: {type(exc).__name__}: {exc}") from exc
            else:
                record_autogen(self.label, result.messages)
                final = result.messages[-1] if result.messages else None
                answer: DescriptionAnswer | None = None
                if isinstance(final, StructuredMessage) and isinstance(final.content, DescriptionAnswer):
                    answer = final.content
                elif isinstance(final, TextMessage):
                    try:
                        answer = DescriptionAnswer.model_validate_json(_json_part(final.content))
                    except (ValidationError, ValueError) as exc:
                        problems = [str(exc)[:300]]
                if answer is not None:
                    return CaseDescription(
                        time=answer.time,
                        weather=answer.weather,
                        road_type=answer.road_type.value,
                        objects=[o.strip().lower() for o in answer.objects if o.strip()],
                        speed_kmh=round(case.mean_speed_kmh, 3),
                        steering_rad=round(case.mean_steering_rad, 5),
                        describer=self.label,
                        evidence={"reasoning": answer.reasoning[:500]},
                    )
            log.info("describer answer unusable", model=self.label, attempt=attempt + 1, problems=problems)
            record("decision", self.label, f"the answer did not fit: {'; '.join(problems)}")
            task = "Your answer did not fit: " + "; ".join(problems) + ". Answer again with the JSON only."
        raise LLMResponseError(self.label, "; ".join(problems) or "no usable answer")


def _json_part(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the answer")
    return text[start : end + 1]
