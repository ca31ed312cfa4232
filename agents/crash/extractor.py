"""CrashExtractor: crash reports in, scenario DSLs out (SAFE's extraction stage).

Each report is read with the template of its road type from the ``kb_templates`` collection by the
configured extractor: a model (:class:`tools.crash.llm_extractor.LLMCrashExtractor`, named by its label such as
``openai:gpt-4o``; the sketch goes along when the model is vision-capable) or, without one, the offline
rules (:class:`tools.crash.extract.OfflineCrashExtractor`, ``offline:crash-rules``). When the model's
answer cannot be made valid after its retries, or the model call fails, the offline rules read the report
instead; the scenario's notes, the event's ``extractor`` and a warning log say so.

A report that can never work (empty, unrelated, oversized) raises a bad-input error, which the runtime
turns into an error event on ``errors.crashes``; the agent goes on.

With the conversation on, each report also gets one ``agents.message``: the model's prompts and answers (meta
message, DSL, retries), and the scenario the extractor settled on, or the offline rules' reading of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import ClassVar

import structlog

from agents.runtime import Agent, error_event
from bus import (
    AgentMessage,
    CrashSubmitted,
    CrashVerdict,
    ErrorDomain,
    ErrorReported,
    Event,
    ScenarioExtracted,
    derived_id,
)
from bus.events import ScenarioExtractedPayload
from memory.templates import TemplateSource
from tools.common.artifacts import RunLayout
from tools.common.conversation import excerpt, recording
from tools.common.models import ConversationEntry, Provenance
from tools.crash.extract import OFFLINE_CRASH_EXTRACTOR
from tools.crash.files import CrashReport
from tools.crash.llm_extractor import LLMCrashExtractor
from tools.crash.models import CaseVerdict, Scenario
from tools.crash.templates import ScenarioTemplate, packaged_templates
from tools.crash.tools import CrashToolContext
from tools.errors import BadInputError, LLMResponseError

__all__ = ["CrashExtractorAgent"]

log = structlog.get_logger(__name__)


class CrashExtractorAgent(Agent):
    """Turns crash reports into scenarios.

    Args:
        templates: The template store (``kb_templates``); the packaged templates when ``None``.
        provenance: Provenance attached to every scenario.
        llm: The model extractor; the offline rules when ``None`` (and as its fallback).
        conversation: Publish one ``agents.message`` per report (the model's messages, the scenario decided).
    """

    name: ClassVar[str] = "crash-extractor"
    consumes = (CrashSubmitted,)
    produces = (ScenarioExtracted, CrashVerdict, ErrorReported, AgentMessage)
    error_domain = ErrorDomain.CRASHES

    def __init__(
        self,
        *,
        templates: TemplateSource | None,
        provenance: Provenance,
        llm: LLMCrashExtractor | None = None,
        conversation: bool = False,
    ) -> None:
        self.templates = templates
        self.provenance = provenance
        self.llm = llm
        self.conversation = conversation

    async def _template_lookup(self) -> dict[str, ScenarioTemplate]:
        stored = await self.templates.all() if self.templates is not None else {}
        return packaged_templates() | stored

    async def extract(
        self, report: CrashReport, templates: Mapping[str, ScenarioTemplate]
    ) -> tuple[Scenario, str, list[str]]:
        """The scenario, the name of the extractor that produced it, and every model consulted.

        Raises:
            NotACrashReportError: If the report can never work (from either extractor).
        """
        offline = CrashToolContext(templates).extractor()
        if self.llm is None:
            return await asyncio.to_thread(offline.extract, report), offline.name, [offline.name]
        try:
            return await self.llm.extract(report, templates), self.llm.name, [self.llm.name]
        except LLMResponseError as exc:
            log.warning(
                "model answer unusable; the offline extractor reads the report",
                model=self.llm.name,
                case_id=report.case_id,
                reason=exc.reason,
            )
            scenario = await asyncio.to_thread(offline.extract, report)
            note = (
                f"the model {self.llm.name}'s answer was unusable ({exc.reason}); "
                f"extracted by {offline.name} (rules, not a language model) instead"
            )
            fallback = scenario.model_copy(update={"notes": [note, *scenario.notes]})
            return fallback, offline.name, [self.llm.name, offline.name]

    async def handle(self, event: Event) -> Sequence[Event]:
        """Extract one report's scenario (a bad report raises a bad-input error)."""
        assert isinstance(event, CrashSubmitted)
        p = event.payload
        templates = await self._template_lookup()
        report = CrashReport(case_id=p.case_id, summary=p.summary, sketch=p.sketch)
        failed: BadInputError | None = None
        with recording(active=self.conversation) as transcript:
            try:
                scenario, extractor, models = await self.extract(report, templates)
            except BadInputError as exc:
                if p.simulate is None:
                    raise
                failed = exc
        if failed is not None:
            # The case ends here: its error, and a verdict saying so, so the batch still completes.
            err = error_event(event, agent=self.name, domain=self.error_domain, exc=failed, item_id=p.case_id)
            verdict = CaseVerdict(
                case_id=p.case_id,
                runs=0,
                reproduced=False,
                violations=0,
                seconds_per_run=0.0,
                error=f"{type(failed).__name__}: {failed}"[:2000],
                case_ref=RunLayout.crash_case(event.correlation_id, p.case_id),
                batch_size=p.batch_size,
            )
            out: list[Event] = [
                err,
                CrashVerdict(
                    **event.caused(event_id=derived_id(event.event_id, "verdict", p.case_id)),
                    producer=self.name,
                    payload=verdict,
                ),
            ]
            if self.conversation:
                reasoner = self.llm.name if self.llm is not None else OFFLINE_CRASH_EXTRACTOR
                transcript.append(
                    ConversationEntry(role="decision", reasoner=reasoner, text=excerpt(f"not extracted: {failed}"))
                )
                out.append(AgentMessage.bounded(event, agent=self.name, entries=transcript, item_id=p.case_id))
            return out
        out = [
            ScenarioExtracted(
                **event.caused(event_id=derived_id(event.event_id, "scenario", p.case_id)),
                producer=self.name,
                payload=ScenarioExtractedPayload(
                    case_id=p.case_id,
                    scenario=scenario,
                    extractor=extractor,
                    template=scenario.road_network.road_type,
                    provenance=self.provenance.model_copy(update={"models": models}),
                    summary=p.summary,
                    sketch=p.sketch,
                    simulate=p.simulate,
                    batch_size=p.batch_size,
                ),
            )
        ]
        if self.conversation:
            transcript += _scenario_decision(scenario, extractor)
            out.append(AgentMessage.bounded(event, agent=self.name, entries=transcript, item_id=p.case_id))
        return out


def _scenario_decision(scenario: Scenario, extractor: str) -> list[ConversationEntry]:
    """The scenario an extractor settled on, in a line, and its notes (assumptions, retries, fallbacks)."""
    actors = ", ".join(f"{a.id} {a.body_type} {a.initial_position} ({', '.join(a.actions)})" for a in scenario.actors)
    crashes = ", ".join(f"{a}-{b}" for a, b in scenario.collisions) or "none"
    env = scenario.env
    text = f"{scenario.road_network.road_type}: {actors}; collisions {crashes}; {env.time}, {env.weather}"
    out = [ConversationEntry(role="decision", reasoner=extractor, text=excerpt(text))]
    if scenario.notes:
        out.append(
            ConversationEntry(role="decision", reasoner=extractor, text=excerpt("notes: " + "; ".join(scenario.notes)))
        )
    return out
