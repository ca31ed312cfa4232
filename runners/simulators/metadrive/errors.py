"""Errors of the MetaDrive adapter.

A scenario MetaDrive cannot build is bad input (:class:`UnbuildableScenarioError` and its kinds): the
SimRunner reports it and moves on. A broken engine is :class:`MetaDriveEngineError`: the process-wide
MetaDrive engine could not start or failed mid-run; a fresh worker process may succeed.
"""

from __future__ import annotations

from tools.errors import BadInputError, DrivemtError

__all__ = [
    "MetaDriveEngineError",
    "TooManyLanesError",
    "UnbuildableScenarioError",
    "UnknownActorError",
    "UnsupportedLayoutError",
]


class UnbuildableScenarioError(BadInputError):
    """A scenario whose road or actors MetaDrive cannot build."""

    def __init__(self, case_id: str, reason: str) -> None:
        self.case_id = case_id
        self.reason = reason
        super().__init__(f"case {case_id}: MetaDrive cannot build this scenario: {reason}")


class TooManyLanesError(UnbuildableScenarioError):
    """More lanes per direction than MetaDrive's blocks hold."""

    def __init__(self, case_id: str, lanes_per_direction: int, limit: int) -> None:
        self.lanes_per_direction = lanes_per_direction
        self.limit = limit
        super().__init__(
            case_id,
            f"{lanes_per_direction} lanes per direction; MetaDrive's blocks hold at most {limit}, and a road "
            "this wide is not approximated (check the road network's lanes and ways)",
        )


class UnsupportedLayoutError(UnbuildableScenarioError):
    """A road type (or actor position on it) that has no MetaDrive layout."""

    def __init__(self, case_id: str, road_type: str, detail: str = "") -> None:
        self.road_type = road_type
        self.detail = detail
        extra = f": {detail}" if detail else ""
        super().__init__(case_id, f"no MetaDrive layout for road type {road_type!r}{extra}")


class UnknownActorError(UnbuildableScenarioError):
    """A run names an ego that is not one of the scenario's actors."""

    def __init__(self, case_id: str, actor_id: str, known: list[str]) -> None:
        self.actor_id = actor_id
        self.known = known
        super().__init__(case_id, f"the ego {actor_id} is not an actor of the scenario ({', '.join(known)})")


class MetaDriveEngineError(DrivemtError):
    """The MetaDrive engine could not start or failed during a run."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"MetaDrive engine: {reason}")
