"""The message bus: embedded nats-server, connection, subjects, the event envelope and every event model.

Knows nothing of agents, memory or runners. From ``tools`` it imports only :mod:`tools.errors` and the
``tools.<domain>.models`` modules, so ``import bus`` loads no domain logic and no heavy library.
"""

from bus.connection import Bus, BusSettings, ConsumerSettings
from bus.envelope import Event, decode_event, derived_id, encode_event, event_json_schemas, registry
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
    CasesSubmitted,
    CrashSubmitted,
    CrashVerdict,
    DeadLettered,
    ErrorReported,
    MRAccepted,
    MRCandidatesProduced,
    MRRejected,
    ProgressReported,
    RulesSubmitted,
    ScenarioExtracted,
    ScoredCandidate,
    SimCompleted,
    SimRequested,
    TLAugmented,
    TLDatasetSubmitted,
    TLVerdict,
    ViolationFound,
)
from bus.server import EmbeddedNatsServer, adoptable, find_nats_server, port_open
from bus.subjects import DEFAULT_NAMESPACE, ErrorDomain, Subjects

__all__ = [
    "DEFAULT_NAMESPACE",
    "AgentHeartbeat",
    "AnyEvent",
    "Bus",
    "BusError",
    "BusSettings",
    "CasesSubmitted",
    "ConsumerSettings",
    "CrashSubmitted",
    "CrashVerdict",
    "DeadLettered",
    "EmbeddedNatsServer",
    "EmbeddedServerError",
    "ErrorDomain",
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
    "SimCompleted",
    "SimRequested",
    "Subjects",
    "TLAugmented",
    "TLDatasetSubmitted",
    "TLVerdict",
    "UnknownEventTypeError",
    "ViolationFound",
    "adoptable",
    "decode_event",
    "derived_id",
    "encode_event",
    "event_json_schemas",
    "find_nats_server",
    "port_open",
    "registry",
]
