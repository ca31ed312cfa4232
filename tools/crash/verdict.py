"""The crash domain's oracle: what one run found, and what all runs of a case found.

This is the one definition of "crash reproduced" and of a case's verdict. The MetaDrive and BeamNG
simulators judge their runs with :func:`run_outcome`; the Judge, ``verdict.json`` and ``crashes.html``
judge cases with :func:`case_verdict`, so the figures a person reads in the report are the ones the bus
carried.

* A run **reproduces** the reported crash when the ego's first collision with another vehicle is a pair the
  report says collided: the ego under its policy is in the crash (scripted vehicles colliding while the ego
  keeps clear reproduce nothing of the ego's). A report that names no colliding pair is reproduced by any
  collision of the ego with another vehicle.
* A run is a **violation** when the ego was in any collision: with a vehicle, an object or the road side.
* A case is **reproduced** when any run that could be done reproduced it; its violations are counted
  over every run, and the 1st/2nd/3rd violating run numbers follow SAFE's Table 6.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tools.crash.models import CaseVerdict, RunSummary, SimCollision, ego_first_vehicle_collision

__all__ = ["RunOutcome", "case_verdict", "run_outcome"]


@dataclass(frozen=True)
class RunOutcome:
    """What one run found."""

    reproduced: bool
    ego_collided: bool


def run_outcome(
    collisions: Sequence[SimCollision], reported_pairs: Iterable[tuple[str, str]], ego_id: str
) -> RunOutcome:
    """Judge one run from its collisions.

    Args:
        collisions: Every collision of the run (any order).
        reported_pairs: The collisions the crash report names (the scenario's ``collisions``).
        ego_id: The actor the ego policy drove.
    """
    first = ego_first_vehicle_collision(list(collisions), ego_id)
    pairs = {frozenset(p) for p in reported_pairs}
    if first is None:
        reproduced = False
    elif pairs:
        reproduced = first.pair() in pairs
    else:
        reproduced = True
    return RunOutcome(reproduced=reproduced, ego_collided=any(c.involves(ego_id) for c in collisions))


def case_verdict(
    case_id: str, runs: Iterable[RunSummary], *, case_ref: str | None = None, batch_size: int | None = None
) -> CaseVerdict:
    """Judge a case from the summaries of all its runs (failed runs included).

    Args:
        case_id: The case.
        runs: Every run's summary, in any order.
        case_ref: Artefact ref of the case's folder, recorded in the verdict.
        batch_size: Cases in the case's batch, recorded in the verdict.
    """
    ordered = sorted(runs, key=lambda r: r.index)
    done = [r for r in ordered if not r.error]
    per_ego: dict[str, bool] = {}
    for r in done:
        key = f"{r.ego}/{r.policy}"
        per_ego[key] = per_ego.get(key, False) or r.reproduced
    violations = [i + 1 for i, r in enumerate(ordered) if r.ego_collided]
    return CaseVerdict(
        case_id=case_id,
        runs=len(ordered),
        reproduced=any(r.reproduced for r in done),
        reproduced_by=[r.run_id for r in done if r.reproduced],
        reproduced_per_ego=per_ego,
        violations=len(violations),
        first_violation_runs=violations[:3],
        seconds_per_run=sum(r.wall_seconds for r in done) / len(done) if done else 0.0,
        records=[r.record for r in ordered if r.record],
        errors=[f"{r.run_id}: {r.error}" for r in ordered if r.error],
        case_ref=case_ref,
        batch_size=batch_size,
    )
