"""Errors of the BeamNG.tech adapter.

Two kinds matter to the agent on top. :class:`BeamNGUnavailableError` is an environment problem (no
BeamNG.tech install configured, or none answering): the run can succeed later on a machine that has one,
so it is a :class:`~tools.errors.DrivemtError`, not bad input; it names the scenario files written
instead, so the agent's error event can point a person at them. :class:`BeamNGScenarioError` is bad
input (a spec or scenario this adapter can never build) and derives from
:class:`~tools.errors.BadInputError` as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.errors import BadInputError, DrivemtError

__all__ = ["BeamNGConfigError", "BeamNGError", "BeamNGScenarioError", "BeamNGUnavailableError"]


class BeamNGError(DrivemtError):
    """Base of the BeamNG.tech adapter's errors."""


class BeamNGConfigError(BeamNGError):
    """A BeamNG setting (or the environment variable that gave it) that cannot be used."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"BeamNG setting {source}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.source, self.reason))


class BeamNGScenarioError(BadInputError, BeamNGError):
    """A scenario or run spec that BeamNG.tech runs of this adapter can never build."""

    def __init__(self, case_id: str, reason: str) -> None:
        self.case_id = case_id
        self.reason = reason
        super().__init__(f"case {case_id}: cannot build a BeamNG.tech scenario: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.case_id, self.reason))


class BeamNGUnavailableError(BeamNGError):
    """BeamNG.tech is needed for a run but none is configured or none answers.

    Attributes:
        reason: What is missing (not configured, nothing listening at host:port, no binary in home ...).
        files: The scenario files written for the run (info JSON, prefab, AI scripts, run manifest).
        files_dir: The folder holding them; its ``levels/`` folder goes into BeamNG's user folder.
        case_id: The scenario's case id.
        run_id: The run (``<ego>-<policy>-v<variant>``).
    """

    def __init__(
        self, reason: str, *, files: list[Path], files_dir: Path | None, case_id: str = "", run_id: str = ""
    ) -> None:
        self.reason = reason
        self.files = list(files)
        self.files_dir = files_dir
        self.case_id = case_id
        self.run_id = run_id
        what = f"case {case_id} run {run_id}" if case_id else "this run"
        where = (
            f" The scenario files were written instead, {len(self.files)} file(s) under {files_dir}: copy its "
            "levels/ folder into BeamNG.tech's user folder to open the scenario in the game, and see README.txt."
            if files_dir is not None
            else ""
        )
        super().__init__(
            f"BeamNG.tech is needed to simulate {what}, but {reason}. Configure it with beamng.home (BNG_HOME: "
            "the BeamNG.tech install folder, so drivemt can start the game) and/or beamng.host and beamng.port "
            "(BNG_HOST / BNG_PORT: a running BeamNG.tech with its BeamNGpy port open, 25252 by default)." + where
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only data would be lost by the default (message-only) pickling across processes.
        return (_unavailable, (self.reason, self.files, self.files_dir, self.case_id, self.run_id))


def _unavailable(
    reason: str, files: list[Path], files_dir: Path | None, case_id: str, run_id: str
) -> BeamNGUnavailableError:
    return BeamNGUnavailableError(reason, files=files, files_dir=files_dir, case_id=case_id, run_id=run_id)
