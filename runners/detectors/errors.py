"""Errors of the detector adapters: bad specs, unusable checkpoints, failed training.

Specs and checkpoints are bad input (:class:`tools.errors.BadInputError`): asking again cannot help, so
callers report them and move on. Training failures are plain drivemt errors.
"""

from __future__ import annotations

from tools.errors import BadInputError, DrivemtError

__all__ = [
    "DetectorCheckpointError",
    "DetectorClassesError",
    "DetectorError",
    "DetectorSpecError",
    "DetectorTrainingError",
    "UnknownDetectorKindError",
]


class DetectorError(DrivemtError):
    """Base of the detector errors."""


class DetectorSpecError(DetectorError, BadInputError):
    """A ``KIND:PATH`` detector spec that cannot be used (malformed, or no such file)."""

    def __init__(self, spec: str, reason: str) -> None:
        self.spec = spec
        self.reason = reason
        super().__init__(f"detector {spec!r}: {reason}")


class UnknownDetectorKindError(DetectorSpecError):
    """A spec whose kind is not one drivemt can load."""

    def __init__(self, spec: str, kind: str, known: tuple[str, ...]) -> None:
        self.kind = kind
        self.known = known
        super().__init__(spec, f"unknown detector kind {kind!r}; use one of {', '.join(known)} (as KIND:PATH)")


class DetectorCheckpointError(DetectorError, BadInputError):
    """A file that exists but is not a checkpoint of the kind named."""

    def __init__(self, path: str, kind: str, reason: str) -> None:
        self.path = path
        self.kind = kind
        self.reason = reason
        super().__init__(f"{path} is not a usable {kind} checkpoint: {reason}")


class DetectorClassesError(DetectorError, BadInputError):
    """A model whose class names cannot be mapped onto traffic-light states."""

    def __init__(self, path: str, names: list[str]) -> None:
        self.path = path
        self.names = names
        super().__init__(
            f"{path}: class names {names} do not map onto traffic-light states (red, yellow, green, off); "
            "train on a traffic-light dataset or rename the classes"
        )


class DetectorTrainingError(DetectorError):
    """Training could not run or produced no weights."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(f"training {kind}: {reason}")
