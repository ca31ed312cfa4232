"""Errors of the bus package."""

from __future__ import annotations

from tools.errors import BadInputError, DrivemtError

__all__ = [
    "BusError",
    "EmbeddedServerError",
    "EventValidationError",
    "InvalidSubjectError",
    "NoDaemonError",
    "UnknownEventTypeError",
]


class BusError(DrivemtError):
    """A failure talking to NATS."""


class InvalidSubjectError(BusError):
    """A subject token that NATS would misread (dots, wildcards, spaces)."""

    def __init__(self, token: str, reason: str) -> None:
        self.token = token
        self.reason = reason
        super().__init__(f"invalid subject token {token!r}: {reason}")


class EmbeddedServerError(BusError):
    """The embedded nats-server could not be found, started or reached."""

    def __init__(self, reason: str, *, log_tail: str = "") -> None:
        self.reason = reason
        self.log_tail = log_tail
        extra = f"\n--- nats-server log ---\n{log_tail}" if log_tail else ""
        super().__init__(f"embedded nats-server: {reason}{extra}")


class NoDaemonError(BusError):
    """No running daemon could be found for a command that needs one."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        super().__init__(
            f"no running drivemt daemon found for data dir {data_dir}; start one with "
            "`drivemt daemon`, or pass --nats-url"
        )


class EventValidationError(BadInputError):
    """Bytes on a subject that are not a valid drivemt event."""

    def __init__(self, subject: str, reason: str) -> None:
        self.subject = subject
        self.reason = reason
        super().__init__(f"invalid event on {subject}: {reason}")


class UnknownEventTypeError(EventValidationError):
    """An event whose ``type`` no model is registered for."""

    def __init__(self, subject: str, type_: str) -> None:
        self.type_ = type_
        super().__init__(subject, f"unknown event type {type_!r}")
