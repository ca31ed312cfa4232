"""The message bus: embedded nats-server, connection, subjects and event models.

Knows nothing of agents, memory or runners; imports only drivemt's plain data models.
"""

from bus.connection import Bus, BusSettings, ConsumerSettings
from bus.errors import (
    BusError,
    EmbeddedServerError,
    EventValidationError,
    InvalidSubjectError,
    NoDaemonError,
    UnknownEventTypeError,
)
from bus.events import (
    AgentHeartbeat,
    AnyEvent,
    CrashSubmitted,
    DeadLettered,
    ErrorReported,
    Event,
    MRAccepted,
    MRCandidatesProduced,
    MRRejected,
    ProgressReported,
    RulesSubmitted,
    ScenarioExtracted,
    ScoredCandidate,
    decode_event,
    derived_id,
    encode_event,
    event_json_schemas,
    registry,
)
from bus.server import EmbeddedNatsServer, adoptable, find_nats_server, port_open
from bus.subjects import DEFAULT_NAMESPACE, Subjects

__all__ = [
    "DEFAULT_NAMESPACE",
    "AgentHeartbeat",
    "AnyEvent",
    "Bus",
    "BusError",
    "BusSettings",
    "ConsumerSettings",
    "CrashSubmitted",
    "DeadLettered",
    "EmbeddedNatsServer",
    "EmbeddedServerError",
    "ErrorReported",
    "Event",
    "EventValidationError",
    "InvalidSubjectError",
    "MRAccepted",
    "MRCandidatesProduced",
    "MRRejected",
    "NoDaemonError",
    "ProgressReported",
    "RulesSubmitted",
    "ScenarioExtracted",
    "ScoredCandidate",
    "Subjects",
    "UnknownEventTypeError",
    "adoptable",
    "decode_event",
    "derived_id",
    "encode_event",
    "event_json_schemas",
    "find_nats_server",
    "port_open",
    "registry",
]
