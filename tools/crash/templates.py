"""Scenario templates per road type (SAFE's template knowledge base).

The packaged templates live in ``tools/data/scenario_templates.yaml``; the daemon stores them (and a
user's own) in the Qdrant collection ``kb_templates`` (:mod:`memory.templates`), and the extractor asks
for the template of the road type it has read.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError

from tools.crash.models import RoadNetwork, ScenarioError

__all__ = ["ScenarioTemplate", "load_templates", "packaged_templates"]


class ScenarioTemplate(BaseModel):
    """The skeleton of a scenario on one road type."""

    road_type: str
    description: str = Field(description="What crashes on this road look like; embedded for retrieval.")
    road_network: RoadNetwork = Field(description="Defaults where the narrative is silent.")
    default_positions: dict[str, str] = Field(default_factory=dict, description="Vehicle id -> initial position.")
    guidance: str = Field(default="", description="What to fill in, for a language model's prompt.")


def _parse(data: Any, source: str) -> dict[str, ScenarioTemplate]:
    if not isinstance(data, list):
        raise ScenarioError(f"{source}: expected a list of templates")
    out: dict[str, ScenarioTemplate] = {}
    for i, item in enumerate(data):
        try:
            t = ScenarioTemplate.model_validate(item)
        except ValidationError as exc:
            raise ScenarioError(f"{source}: template {i}: {exc.errors()[0]['msg']}") from exc
        out[t.road_type] = t
    return out


@cache
def packaged_templates() -> dict[str, ScenarioTemplate]:
    """The five packaged templates by road type."""
    text = resources.files("tools.data").joinpath("scenario_templates.yaml").read_text(encoding="utf-8")
    return _parse(yaml.safe_load(text), "packaged scenario_templates.yaml")


def load_templates(path: Path | str) -> dict[str, ScenarioTemplate]:
    """Templates from a user's YAML file (a list in the packaged file's shape)."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"{p}: {exc}") from exc
    return _parse(data, str(p))
