"""SimPlanner: an extracted scenario becomes one ``sim.requested`` event per run.

SAFE runs every scenario with each vehicle in turn as the ego, under each ego policy, in K seeded
variants. Each run is its own event on a shared work queue, so simulator workers in this process,
in other processes or on other machines take them one at a time and a dead worker loses one run,
which is redelivered.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from agents.runtime import Agent
from bus import ErrorDomain, Event, ScenarioExtracted, SimRequested, derived_id
from bus.events import SimRequestedPayload
from tools.crash.runs import plan_runs

__all__ = ["SimPlannerAgent", "crashes_dir"]


def crashes_dir(runs_dir: Path, correlation_id: str) -> Path:
    """Where the cases of one batch keep their runs: ``<runs>/<batch>/crashes/<case id>/``."""
    return runs_dir / correlation_id / "crashes"


def _write_case(case_dir: Path, event: ScenarioExtracted) -> None:
    """Keep the report, scenario and options beside the runs, for the batch report."""
    p = event.payload
    case_dir.mkdir(parents=True, exist_ok=True)
    case = {
        "case_id": p.case_id,
        "summary": p.summary,
        "sketch": p.sketch,
        "extractor": p.extractor,
        "scenario": p.scenario.to_dict(),
        "simulate": p.simulate.model_dump(mode="json") if p.simulate else None,
        "provenance": p.provenance.model_dump(mode="json"),
    }
    (case_dir / "case.json").write_text(json.dumps(case, indent=2), encoding="utf-8")


class SimPlannerAgent(Agent):
    """Fans an extracted scenario out into single runs.

    Args:
        runs_dir: Root of run artefacts (``<data dir>/runs``).
    """

    name: ClassVar[str] = "sim-planner"
    consumes = (ScenarioExtracted,)
    produces = (SimRequested,)
    tools = ("plan_runs",)
    error_domain = ErrorDomain.CRASHES

    def __init__(self, *, runs_dir: Path) -> None:
        self.runs_dir = runs_dir

    async def handle(self, event: Event) -> Sequence[Event]:
        """Plan the runs of one scenario (none when the submission asked for extraction only)."""
        assert isinstance(event, ScenarioExtracted)
        p = event.payload
        if p.simulate is None:
            return []
        settings = p.simulate.settings()
        specs = plan_runs(p.scenario, settings)
        out_dir = crashes_dir(self.runs_dir, event.correlation_id)
        await asyncio.to_thread(_write_case, out_dir / p.case_id, event)
        return [
            SimRequested(
                **event.caused(event_id=derived_id(event.event_id, "sim", spec.run_id)),
                producer=self.name,
                payload=SimRequestedPayload(
                    case_id=p.case_id,
                    scenario=p.scenario,
                    spec=spec,
                    settings=settings,
                    simulator=p.simulate.simulator,
                    index=i,
                    total=len(specs),
                    out_dir=str(out_dir),
                ),
            )
            for i, spec in enumerate(specs)
        ]
