"""Registered tools of the crash -> scenario pipeline (used directly offline, and by LLM agents).

Every tool takes a :class:`CrashToolContext` first; its other parameters are plain JSON values so a
model can call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tools.common.registry import tool
from tools.crash.extract import OfflineCrashExtractor
from tools.crash.files import CrashReport
from tools.crash.models import ROAD_TYPES
from tools.crash.templates import ScenarioTemplate

__all__ = ["CRASH_TOOLS", "CrashToolContext", "extract_scenario", "scenario_template"]


@dataclass
class CrashToolContext:
    """What the crash tools may use."""

    templates: Mapping[str, ScenarioTemplate]

    def extractor(self) -> OfflineCrashExtractor:
        """The offline extractor over these templates."""
        return OfflineCrashExtractor(templates=self.templates.__getitem__)


@tool
def scenario_template(ctx: CrashToolContext, road_type: str) -> dict[str, Any]:
    """The scenario template of a road type (Straight, Curve, Intersection, T-intersection or Merge).

    Args:
        ctx: Tool context.
        road_type: One of the DSL's road types.
    """
    if road_type not in ctx.templates:
        raise ValueError(f"unknown road type {road_type!r}; known: {', '.join(ROAD_TYPES)}")
    return ctx.templates[road_type].model_dump(mode="json")


@tool
def extract_scenario(ctx: CrashToolContext, case_id: str, summary: str) -> dict[str, Any]:
    """Read a crash narrative into the scenario DSL with the offline rules (offline:crash-rules).

    Args:
        ctx: Tool context.
        case_id: The case id.
        summary: The crash narrative.
    """
    return ctx.extractor().extract(CrashReport(case_id=case_id, summary=summary)).to_dict()


CRASH_TOOLS = ("scenario_template", "extract_scenario")
