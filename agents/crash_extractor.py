"""CrashExtractor: crash reports in, scenario DSLs out (SAFE's extraction stage).

Each report is read by the configured extractor (offline: :class:`tools.crash_extract.OfflineCrashExtractor`,
named ``offline:crash-rules``) with the template of its road type from the ``kb_templates`` collection.
A report that can never work (empty, unrelated, oversized) raises a bad-input error, which the runtime
turns into an error event on ``errors.crashes``; the agent goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from agents.runtime import Agent
from bus import CrashSubmitted, ErrorReported, Event, ScenarioExtracted, derived_id
from bus.events import ScenarioExtractedPayload
from memory.templates import TemplateStore
from tools.crash_extract import CrashReport
from tools.crash_templates import ScenarioTemplate, packaged_templates
from tools.crash_tools import CRASH_TOOLS, CrashToolContext
from tools.provenance import Provenance

__all__ = ["CrashExtractorAgent"]


class CrashExtractorAgent(Agent):
    """Turns crash reports into scenarios.

    Args:
        templates: The template store (``kb_templates``); the packaged templates when ``None``.
        provenance: Provenance attached to every scenario.
    """

    name: ClassVar[str] = "crash-extractor"
    consumes = (CrashSubmitted,)
    produces = (ScenarioExtracted, ErrorReported)
    tools = CRASH_TOOLS
    error_domain = "crashes"

    def __init__(self, *, templates: TemplateStore | None, provenance: Provenance) -> None:
        self.templates = templates
        self.provenance = provenance

    async def _template_lookup(self) -> dict[str, ScenarioTemplate]:
        stored = await self.templates.all() if self.templates is not None else {}
        return packaged_templates() | stored

    async def handle(self, event: Event) -> Sequence[Event]:
        """Extract one report's scenario (a bad report raises a bad-input error)."""
        assert isinstance(event, CrashSubmitted)
        p = event.payload
        templates = await self._template_lookup()
        extractor = CrashToolContext(templates).extractor()
        report = CrashReport(case_id=p.case_id, summary=p.summary, sketch=p.sketch)
        scenario = await asyncio.to_thread(extractor.extract, report)
        return [
            ScenarioExtracted(
                **event.caused(event_id=derived_id(event.event_id, "scenario", p.case_id)),
                producer=self.name,
                payload=ScenarioExtractedPayload(
                    case_id=p.case_id,
                    scenario=scenario,
                    extractor=extractor.name,
                    template=scenario.road_network.road_type,
                    provenance=self.provenance.model_copy(update={"models": [extractor.name]}),
                    summary=p.summary,
                    sketch=p.sketch,
                    simulate=p.simulate,
                ),
            )
        ]
