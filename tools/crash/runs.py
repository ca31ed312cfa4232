"""The runs of a crash scenario: SAFE's protocol of every actor as the ego, under each policy, in K variants."""

from __future__ import annotations

from tools.crash.models import RunSpec, Scenario, SimSettings

__all__ = ["plan_runs"]


def plan_runs(scenario: Scenario, settings: SimSettings) -> list[RunSpec]:
    """Every run of a scenario: each actor in turn as the ego, under each policy, in K seeded variants."""
    return [
        RunSpec(case_id=scenario.case_id, ego_id=actor.id, policy=policy, variant=k, seed=settings.base_seed + k)
        for actor in scenario.actors
        for policy in settings.policies
        for k in range(settings.variants)
    ]
