"""SimPlanner: an extracted scenario becomes one ``sim.requested`` event per run.

SAFE runs every scenario with each vehicle in turn as the ego, under each ego policy, in K seeded
variants. Each run is its own event on a shared work queue, so simulator workers in this process,
in other processes or on other machines take them one at a time and a dead worker loses one run,
which is redelivered. The planner keeps the report, scenario and options in the case's folder of the
artefact store, where the batch report finds them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import ClassVar

from agents.runtime import Agent
from bus import ErrorDomain, Event, ScenarioExtracted, SimRequested, derived_id
from bus.events import SimRequestedPayload
from tools.common.artifacts import ArtifactStore, RunLayout
from tools.crash.runs import plan_runs

__all__ = ["SimPlannerAgent"]


def _case_json(event: ScenarioExtracted) -> str:
    """The report, scenario and options of a case, for the batch report."""
    p = event.payload
    case = {
        "case_id": p.case_id,
        "summary": p.summary,
        "sketch": p.sketch,
        "extractor": p.extractor,
        "scenario": p.scenario.to_dict(),
        "simulate": p.simulate.model_dump(mode="json") if p.simulate else None,
        "provenance": p.provenance.model_dump(mode="json"),
    }
    return json.dumps(case, indent=2)


class SimPlannerAgent(Agent):
    """Fans an extracted scenario out into single runs.

    Args:
        store: Where run artefacts go.
    """

    name: ClassVar[str] = "sim-planner"
    consumes = (ScenarioExtracted,)
    produces = (SimRequested,)
    error_domain = ErrorDomain.CRASHES

    def __init__(self, *, store: ArtifactStore) -> None:
        self.store = store

    async def handle(self, event: Event) -> Sequence[Event]:
        """Plan the runs of one scenario (none when the submission asked for extraction only)."""
        assert isinstance(event, ScenarioExtracted)
        p = event.payload
        if p.simulate is None:
            return []
        settings = p.simulate.settings()
        specs = plan_runs(p.scenario, settings)
        case_ref = RunLayout.crash_case(event.correlation_id, p.case_id)
        await asyncio.to_thread(self.store.put, RunLayout.case_file(case_ref), _case_json(event))
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
                    case_ref=case_ref,
                    batch_size=p.batch_size,
                ),
            )
            for i, spec in enumerate(specs)
        ]
