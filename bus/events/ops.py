"""Operational events: errors, dead letters, heartbeats and progress."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from bus.envelope import Event, registry
from bus.subjects import ErrorDomain, Subjects

__all__ = [
    "AgentHeartbeat",
    "DeadLetterPayload",
    "DeadLettered",
    "ErrorPayload",
    "ErrorReported",
    "HeartbeatPayload",
    "ProgressPayload",
    "ProgressReported",
]


class ErrorPayload(BaseModel):
    """Bad input or a failure, reported where people and tools can see it."""

    domain: ErrorDomain = Field(description="Where the error happened; its subject is <namespace>.errors.<domain>.")
    agent: str
    error_type: str = Field(description="Exception class name, e.g. EmptyRuleError.")
    reason: str
    input_subject: str | None = None
    input_event_id: str | None = None
    item_id: str | None = Field(default=None, description="The rule, case or image the error is about.")
    excerpt: str | None = Field(default=None, description="Start of the offending input, for people.")


class DeadLetterPayload(BaseModel):
    """An event no agent could handle."""

    consumer: str
    original_subject: str
    stream_sequence: int | None = None
    deliveries: int
    reason: str
    data: str = Field(description="The original bytes, UTF-8 decoded with replacement characters.")
    data_b64: str | None = Field(default=None, description="The original bytes in base64 when they are not UTF-8.")
    headers: dict[str, str] = Field(default_factory=dict)
    truncated: bool = Field(
        default=False,
        description="The message was too large to carry whole (data holds its start, data_b64 nothing); it cannot be "
        "retried.",
    )
    size: int | None = Field(default=None, description="The original message's size in bytes, when truncated.")


class HeartbeatPayload(BaseModel):
    """Liveness and counters of one agent instance."""

    agent: str
    instance: str
    host: str
    pid: int
    started_at: datetime
    status: Literal["starting", "ready", "stopping"]
    consumes: list[str]
    produces: list[str]
    tools: list[str]
    handled: int = 0
    failed: int = 0
    in_flight: int = 0
    last_error: str | None = None
    interval_s: float = 5.0


class ProgressPayload(BaseModel):
    """How far a long piece of work is."""

    stage: str
    done: int
    total: int | None = None
    unit: str = "items"
    message: str = ""
    report: str | None = Field(default=None, description="Artefact ref of the batch's report, once it is drawn.")


@registry.register
class ErrorReported(Event):
    """An agent could not handle (part of) an input."""

    type: Literal["error"] = "error"
    payload: ErrorPayload
    subject_name: ClassVar[str] = ""

    def subject(self, subjects: Subjects) -> str:
        return subjects.errors(self.payload.domain)

    def describe(self) -> str:
        item = f" {self.payload.item_id}" if self.payload.item_id else ""
        return f"{self.payload.agent} error{item}: {self.payload.reason}"[:500]


@registry.register
class DeadLettered(Event):
    """An event set aside after failing validation or exceeding its deliveries."""

    type: Literal["deadletter"] = "deadletter"
    payload: DeadLetterPayload
    subject_name: ClassVar[str] = ""

    def subject(self, subjects: Subjects) -> str:
        return subjects.deadletter(self.payload.consumer)

    def describe(self) -> str:
        return f"dead letter from {self.payload.consumer} ({self.payload.original_subject}): {self.payload.reason}"[
            :500
        ]


@registry.register
class AgentHeartbeat(Event):
    """An agent instance is alive."""

    type: Literal["agent.heartbeat"] = "agent.heartbeat"
    payload: HeartbeatPayload
    subject_name: ClassVar[str] = ""

    def subject(self, subjects: Subjects) -> str:
        return subjects.heartbeat(self.payload.agent, self.payload.instance)

    def describe(self) -> str:
        p = self.payload
        return f"{p.agent}/{p.instance} {p.status}: {p.handled} handled, {p.failed} failed, {p.in_flight} in flight"


@registry.register
class ProgressReported(Event):
    """Progress of long work (a rules batch, a dataset)."""

    type: Literal["progress"] = "progress"
    payload: ProgressPayload
    subject_name: ClassVar[str] = "progress"

    def describe(self) -> str:
        p = self.payload
        total = f"/{p.total}" if p.total is not None else ""
        return f"{p.stage}: {p.done}{total} {p.unit} {p.message}".strip()
