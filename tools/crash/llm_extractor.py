"""The LLM crash extractor: SAFE's Algorithm 1 with a (multimodal) model through autogen.

One report is one conversation with the model, held by two autogen ``AssistantAgent``s that share a model
context (so the DSL step sees the meta step, sketch included):

1. **Meta message**: road type, vehicles and driving directions, from the summary and, when the model is
   vision-capable, the sketch (an autogen ``MultiModalMessage``).
2. **Self-validation**, one retry: the answer must parse (structured output), name exactly the vehicles
   the summary numbers, and not put crossing traffic on a straight road; problems are stated in the retry.
3. **Template** of the confirmed road type (``kb_templates``, else the packaged one).
4. **Prompt generation and DSL extraction**: every allowed value named (:mod:`tools.crash.prompts`).
5. **Self-validation**, one retry: the answer must parse, agree with the meta message and pass
   :meth:`tools.crash.models.Scenario.from_data` (which names each bad field); then the **encoder** fills the
   template's defaults and returns the :class:`tools.crash.models.Scenario`.

An answer that is still unusable after the retries, or a failing model call, raises
:class:`tools.errors.LLMResponseError`; the CrashExtractor then uses the offline extractor and says so.
Results name the model (``openai:gpt-4o``), never ``offline``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.common.conversation import record, record_autogen
from tools.common.json_answers import answer_problems, json_answer_instructions, parse_json_answer
from tools.crash.files import MAX_SUMMARY_BYTES, CrashReport, NotACrashReportError
from tools.crash.models import Action, BodyType, Compass, Direction, RoadType, Scenario, ScenarioError, Time, Weather
from tools.crash.prompts import (
    CRASH_EXTRACTOR_SYSTEM,
    dsl_retry,
    dsl_task,
    meta_retry,
    meta_task,
)
from tools.crash.templates import ScenarioTemplate, packaged_templates
from tools.errors import LLMResponseError

__all__ = [
    "ActorDraft",
    "LLMCrashExtractor",
    "MetaMessage",
    "ScenarioDraft",
    "VehicleMeta",
    "check_draft",
    "check_meta",
    "encode_draft",
    "vehicles_named",
]

log = structlog.get_logger("drivemt.tools.llm_crash")

_VEHICLE_ID = re.compile(r"\bV(\d{1,2})\b")
_AXIS = {"W2E": "EW", "E2W": "EW", "S2N": "NS", "N2S": "NS"}
_MERGE_POSITIONS = frozenset({"Main road", "On-ramp"})
_MAX_SKETCH_SIDE = 2048  # pixels; providers scale larger images down anyway, this keeps the request small

MetaDirection = Literal["W2E", "E2W", "S2N", "N2S", "Main road", "On-ramp", "Not mentioned"]
Answer = TypeVar("Answer", bound=BaseModel)
Result = TypeVar("Result")


class _Draft(BaseModel):
    # Unknown keys are named as errors; every field is required or defaults to None, which keeps the schema
    # usable as OpenAI strict structured output.
    model_config = ConfigDict(extra="forbid")


# -- structured answers ------------------------------------------------------------------------------
class VehicleMeta(_Draft):
    """One vehicle of the meta message."""

    id: str = Field(pattern=r"^V[1-9][0-9]?$", description="V1, V2 ... as the summary numbers the vehicle.")
    direction: MetaDirection = Field(
        description="Driving direction before the crash: W2E, E2W, S2N, N2S; Main road or On-ramp on a merge."
    )


class MetaMessage(_Draft):
    """SAFE's meta message: road type, number of vehicles, driving directions."""

    reasoning: str = Field(description="Short reasoning: the road features and direction words relied on.")
    road_type: RoadType
    vehicle_count: int = Field(description="How many vehicles the summary numbers.")
    vehicles: list[VehicleMeta]


class RoadNetworkDraft(_Draft):
    """The road network as the model gives it (null: the template's default)."""

    road_type: RoadType
    lanes: int | None = None
    ways: int | None = None
    main_lanes: int | None = None
    main_ways: int | None = None
    branch_lanes: int | None = None
    branch_ways: int | None = None
    stem_direction: Compass | None = None
    centre_turn_lane: bool | None = None


class ActorDraft(_Draft):
    """One vehicle as the model gives it."""

    id: str
    body_type: BodyType
    description: str | None = None
    initial_position: Direction
    lane: int | None = None
    actions: list[Action]
    speed_limit_mph: float | None = None


class EnvDraft(_Draft):
    """Time and weather."""

    time: Time
    weather: Weather


class CollisionDraft(_Draft):
    """Two vehicles that struck each other."""

    first: str
    second: str


class ScenarioDraft(_Draft):
    """The model's scenario, before the encoder fills defaults and the DSL validates it."""

    reasoning: str = Field(description="Short step-by-step reasoning behind the fields.")
    road_network: RoadNetworkDraft
    actors: list[ActorDraft]
    env: EnvDraft
    collisions: list[CollisionDraft] = Field(description="First impact first.")
    assumptions: list[str] = Field(description="What had to be assumed, in short phrases.")


# -- self-validation ---------------------------------------------------------------------------------
def vehicles_named(summary: str) -> list[str]:
    """The vehicle ids a narrative numbers (``V1``, ``V2`` ...), in numeric order."""
    return [f"V{i}" for i in sorted({int(m) for m in _VEHICLE_ID.findall(summary)})]


def _vehicle_problems(ids: Sequence[str], named: Sequence[str], what: str) -> list[str]:
    problems = []
    twice = sorted({i for i in ids if list(ids).count(i) > 1})
    if twice:
        problems.append(f"{what}: {', '.join(twice)} listed more than once")
    unknown = [i for i in dict.fromkeys(ids) if i not in named]
    if unknown:
        problems.append(f"{what}: {', '.join(unknown)} not named in the summary (it names {', '.join(named)})")
    missing = [i for i in named if i not in ids]
    if missing:
        problems.append(f"{what}: the summary also names {', '.join(missing)}, which is missing")
    return problems


def check_meta(meta: MetaMessage, named: Sequence[str]) -> list[str]:
    """Problems of a meta message against the summary (empty when it fits).

    Args:
        meta: The model's meta message.
        named: The vehicles the summary numbers.
    """
    ids = [v.id for v in meta.vehicles]
    problems = []
    if meta.vehicle_count != len(ids):
        problems.append(f"vehicle_count is {meta.vehicle_count}, but {len(ids)} vehicles are listed")
    problems += _vehicle_problems(ids, named, "vehicles")
    crossing = [v for v in meta.vehicles if v.direction in _AXIS]
    if meta.road_type in {"Straight", "Curve"} and len({_AXIS[v.direction] for v in crossing}) == 2:
        directions = ", ".join(f"{v.id} {v.direction}" for v in crossing)
        problems.append(
            f"crossing directions ({directions}) on a {meta.road_type} road: vehicles on crossing roads meet at a "
            "junction, so the road type may be Intersection or T-intersection; check the road type and the directions"
        )
    if meta.road_type != "Merge":
        ramp = [v.id for v in meta.vehicles if v.direction in _MERGE_POSITIONS]
        if ramp:
            problems.append(
                f"{', '.join(ramp)}: Main road and On-ramp are directions on a Merge road only; "
                f"give the compass direction on a {meta.road_type} road"
            )
    return problems


def encode_draft(
    draft: ScenarioDraft, *, case_id: str, template: ScenarioTemplate, notes: list[str] | None = None
) -> Scenario:
    """SAFE's encoder: the model's draft plus the template's defaults, validated into the DSL.

    Raises:
        ScenarioError: Naming each field that does not fit the DSL.
    """
    notes = list(notes or [])
    defaults = template.road_network
    net: dict[str, Any] = draft.road_network.model_dump(exclude_none=True)
    if draft.road_network.road_type in {"T-intersection", "Merge"}:
        keys = {"main_lanes": "lanes", "main_ways": "ways", "branch_lanes": None, "branch_ways": None}
    else:
        keys = {"lanes": "main_lanes", "ways": "main_ways"}
    filled = []
    for key, alias in keys.items():
        if net.get(key) is None and (alias is None or net.get(alias) is None) and getattr(defaults, key) is not None:
            net[key] = getattr(defaults, key)
            filled.append(key)
    if filled:
        notes.append(f"the answer gave no {', '.join(filled)}; the {template.road_type} template's defaults are used")
    net["centre_turn_lane"] = bool(draft.road_network.centre_turn_lane)
    for key in ("length_m", "lane_width_m"):
        if getattr(defaults, key) is not None:
            net[key] = getattr(defaults, key)
    data = {
        "case_id": case_id,
        "road_network": net,
        "actors": [a.model_dump(exclude_none=True) for a in draft.actors],
        "env": draft.env.model_dump(),
        "collisions": [[c.first, c.second] for c in draft.collisions],
        "notes": notes + [f"model assumed: {a}" for a in draft.assumptions if a.strip()],
    }
    return Scenario.from_data(data, source="the scenario")


def check_draft(
    draft: ScenarioDraft,
    meta: MetaMessage,
    named: Sequence[str],
    *,
    case_id: str,
    templates: Mapping[str, ScenarioTemplate],
) -> tuple[Scenario | None, list[str]]:
    """The encoded scenario, or the problems of a draft against the meta message, the summary and the DSL.

    Args:
        draft: The model's scenario.
        meta: The confirmed meta message.
        named: The vehicles the summary numbers.
        case_id: The case id.
        templates: Templates by road type (the packaged ones fill gaps).
    """
    problems = []
    road_type = draft.road_network.road_type
    if road_type != meta.road_type:
        problems.append(f"road_network.road_type is {road_type}, but the confirmed meta message says {meta.road_type}")
    problems += _vehicle_problems([a.id for a in draft.actors], named, "actors")
    directions = {v.id: v.direction for v in meta.vehicles}
    for i, actor in enumerate(draft.actors):
        where = f"actors.{i}.initial_position"
        if road_type == "Merge":
            if actor.initial_position not in _MERGE_POSITIONS:
                problems.append(
                    f"{where}: {actor.id} is {actor.initial_position} on a Merge road; use Main road or On-ramp"
                )
        elif actor.initial_position in _MERGE_POSITIONS:
            problems.append(f"{where}: {actor.initial_position} exists on a Merge road only, not on a {road_type} road")
        else:
            wanted = directions.get(actor.id)
            if wanted in _AXIS and wanted != actor.initial_position:
                problems.append(f"{where}: {actor.id} is {actor.initial_position}, but the meta message says {wanted}")
    if len(draft.actors) >= 2 and not draft.collisions:
        problems.append("collisions is empty: give the pair of vehicles that struck each other first")
    template = templates.get(road_type) or packaged_templates()[road_type]
    try:
        scenario = encode_draft(draft, case_id=case_id, template=template)
    except ScenarioError as exc:
        problems.append(str(exc))
        return None, problems
    return (None, problems) if problems else (scenario, [])


def _load_sketch(path: str) -> Any:
    from autogen_core import Image
    from PIL import Image as PILImage

    with PILImage.open(path) as opened:
        picture = opened.convert("RGB")  # decodes the whole file, so a truncated one fails here
    picture.thumbnail((_MAX_SKETCH_SIDE, _MAX_SKETCH_SIDE))
    return Image.from_pil(picture)


# -- the extractor -----------------------------------------------------------------------------------
class LLMCrashExtractor:
    """Crash report (summary and sketch) → scenario DSL by a model, after SAFE's Algorithm 1.

    Args:
        model_client: An autogen ``ChatCompletionClient`` (OpenAI, Anthropic, OpenAI-compatible, or replay in tests).
            Its ``model_info`` decides whether the sketch is sent (``vision``) and whether answers use structured
            output (``structured_output``; otherwise the JSON schema goes into the prompt).
        label: ``provider:model``; the extractor's name in results.
        retries: Times the meta message and the DSL are each asked again with their problems stated.
    """

    def __init__(self, *, model_client: Any, label: str, retries: int = 1) -> None:
        self.model_client = model_client
        self.label = label
        self.retries = retries

    @property
    def name(self) -> str:
        """Extractor name recorded with scenarios: the model label."""
        return self.label

    @property
    def vision(self) -> bool:
        """Whether the model takes images (the sketch is sent)."""
        return bool(self.model_client.model_info.get("vision"))

    @property
    def structured(self) -> bool:
        """Whether answers use the client's structured output."""
        return bool(self.model_client.model_info.get("structured_output"))

    async def extract(self, report: CrashReport, templates: Mapping[str, ScenarioTemplate]) -> Scenario:
        """The scenario of one crash report.

        Args:
            report: The case id, summary and optional sketch path.
            templates: Templates by road type (``kb_templates``); the packaged ones fill gaps.

        Raises:
            NotACrashReportError: If the summary is empty, too long, or numbers no vehicle (no model is asked).
            LLMResponseError: If the model call fails, or an answer is still unusable after the retries.
        """
        from autogen_core.model_context import UnboundedChatCompletionContext

        named = self._precheck(report)
        sketch, source = await self._sketch(report)
        context = UnboundedChatCompletionContext()
        notes = [f"extracted by {self.label} {source}"]

        # 1-2: meta message and its self-validation.
        first = meta_task(report.case_id, report.summary.strip(), has_sketch=sketch is not None)
        meta, problems, earlier = await self._converse(
            self._agent("crash_meta", MetaMessage, context),
            self._task(first, MetaMessage, sketch),
            MetaMessage,
            lambda m: (m, check_meta(m, named)),
            meta_retry,
        )
        if meta is None:
            raise LLMResponseError(
                self.label, f"meta message unusable after {self.retries + 1} tries: {'; '.join(problems)}"
            )
        if earlier:
            notes.append(f"meta message asked again: {'; '.join(earlier)}")
        if problems:
            notes.append(f"meta message doubts left after the retry: {'; '.join(problems)}")
            log.info("meta message kept with doubts", model=self.label, case_id=report.case_id, problems=problems)

        # 3: the template of the confirmed road type; 4: the generated prompt and the DSL; 5: its self-validation.
        template = templates.get(meta.road_type) or packaged_templates()[meta.road_type]
        prompt = dsl_task(meta.road_type, [(v.id, v.direction) for v in meta.vehicles], template)
        scenario, problems, earlier = await self._converse(
            self._agent("crash_dsl", ScenarioDraft, context),
            self._task(prompt, ScenarioDraft, None),
            ScenarioDraft,
            lambda d: check_draft(d, meta, named, case_id=report.case_id, templates=templates),
            dsl_retry,
        )
        if scenario is None:
            raise LLMResponseError(
                self.label, f"scenario unusable after {self.retries + 1} tries: {'; '.join(problems)}"
            )
        if earlier:
            notes.append(f"scenario asked again: {'; '.join(earlier)}")
        notes.append(f"template: {template.road_type}")
        return scenario.model_copy(update={"notes": notes + scenario.notes})

    # -- steps -------------------------------------------------------------------------------------
    def _precheck(self, report: CrashReport) -> list[str]:
        text = " ".join(report.summary.split())
        if not text:
            raise NotACrashReportError(report.case_id, "the crash summary is empty")
        if len(report.summary.encode("utf-8")) > MAX_SUMMARY_BYTES:
            raise NotACrashReportError(report.case_id, f"the summary is over {MAX_SUMMARY_BYTES // 1024} KB")
        named = vehicles_named(text)
        if not named:
            raise NotACrashReportError(
                report.case_id,
                "no vehicles found (expected V1, V2 … as crash narratives number them); is this a crash summary?",
            )
        return named

    async def _sketch(self, report: CrashReport) -> tuple[Any, str]:
        """The sketch as an autogen ``Image`` (or None) and how the report was read, for the notes."""
        if not report.sketch:
            return None, "from the summary text only (the report has no sketch)"
        if not self.vision:
            return None, f"from the summary text only ({self.label} is not vision-capable, so the sketch was not sent)"
        try:
            image = await asyncio.to_thread(_load_sketch, report.sketch)
        except Exception as exc:  # any unreadable picture: not fatal, the summary still carries the case
            log.warning("sketch unreadable; text only", case_id=report.case_id, sketch=report.sketch, error=str(exc))
            return None, f"from the summary text only (the sketch {report.sketch} could not be read: {exc})"
        return image, "from the summary and the sketch"

    def _agent(self, name: str, answer_type: type[BaseModel], context: Any) -> Any:
        from autogen_agentchat.agents import AssistantAgent

        return AssistantAgent(
            name=name,
            model_client=self.model_client,
            system_message=CRASH_EXTRACTOR_SYSTEM,
            output_content_type=answer_type if self.structured else None,
            model_context=context,
        )

    def _task(self, text: str, answer_type: type[BaseModel], sketch: Any) -> Any:
        if not self.structured:
            text = f"{text}\n\n{json_answer_instructions(answer_type.model_json_schema())}"
        if sketch is None:
            return text
        from autogen_agentchat.messages import MultiModalMessage

        return MultiModalMessage(content=[text, sketch], source="user")

    async def _converse(
        self,
        agent: Any,
        task: Any,
        answer_type: type[Answer],
        check: Callable[[Answer], tuple[Result | None, list[str]]],
        retry: Callable[[Sequence[str]], str],
    ) -> tuple[Result | None, list[str], list[str]]:
        """Ask, check, and ask again with the problems stated, up to ``retries`` times.

        Returns:
            The last checked result (None when the last answer did not parse or encode), its problems, and
            the problems of the earlier answers.
        """
        earlier: list[str] = []
        best: tuple[Result, list[str]] | None = None
        result: Result | None = None
        problems: list[str] = []
        for attempt in range(self.retries + 1):
            if attempt:
                earlier += problems
                task = self._task(retry(problems), answer_type, None)
            answer, problems = await self._ask(agent, task, answer_type)
            result = None
            if answer is not None:
                result, problems = check(answer)
            if not problems:
                return result, [], earlier
            record("decision", self.label, f"{agent.name}: asking again: {'; '.join(problems)}")
            if result is not None:
                best = (result, problems)
            log.info("answer has problems", model=self.label, step=agent.name, attempt=attempt + 1, problems=problems)
        if result is None and best is not None:  # a usable earlier answer beats an unusable retry
            return best[0], [*best[1], f"the retry's answer was unusable: {'; '.join(problems)}"], earlier
        return result, problems, earlier

    async def _ask(self, agent: Any, task: Any, answer_type: type[Answer]) -> tuple[Answer | None, list[str]]:
        from autogen_agentchat.messages import StructuredMessage, TextMessage

        try:
            result = await agent.run(task=task)
        except ValidationError as exc:  # structured output that does not fit: the agent keeps the answer in context
            problems = answer_problems(exc)
            record("decision", self.label, f"{agent.name}: the answer did not fit: {'; '.join(problems)}")
            return None, problems
        except Exception as exc:  # the provider failed (network, quota, refused request)
            raise LLMResponseError(self.label, f"the model call failed: {type(exc).__name__}: {exc}") from exc
        record_autogen(self.label, result.messages)
        final = result.messages[-1] if result.messages else None
        if isinstance(final, StructuredMessage) and isinstance(final.content, answer_type):
            return final.content, []
        if isinstance(final, TextMessage):
            return parse_json_answer(final.content, answer_type)
        return None, [f"expected a JSON answer, got {type(final).__name__}"]
