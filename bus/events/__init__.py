"""Every event drivemt puts on the bus, one module per domain; importing this package registers them all.

``rules``, ``crash``, ``tl`` and ``mt`` wrap their domain's data models (``tools.<domain>.models``) in events;
``findings`` carries violations from every pipeline; ``ops`` holds errors, dead letters, heartbeats and
progress; ``conversation`` what the agents' models and offline paths said. :data:`AnyEvent` is derived from the registry, so a new event type needs no second list.
"""

from bus.envelope import (
    SCHEMA_VERSION,
    Event,
    EventRegistry,
    decode_event,
    derived_id,
    encode_event,
    event_json_schemas,
    registry,
)
from bus.events.conversation import MAX_MESSAGE_BYTES, AgentMessage, AgentMessagePayload
from bus.events.crash import (
    CrashSubmitted,
    CrashSubmittedPayload,
    CrashVerdict,
    ScenarioExtracted,
    ScenarioExtractedPayload,
    SimCompleted,
    SimCompletedPayload,
    SimRequested,
    SimRequestedPayload,
)
from bus.events.findings import ViolationFound, ViolationPayload
from bus.events.mt import (
    CasesDescribed,
    CasesDescribedPayload,
    CasesSubmitted,
    CasesSubmittedPayload,
    FollowupGenerated,
    FollowupGeneratedPayload,
    FollowupJudged,
    FollowupJudgedPayload,
    FollowupValidated,
    FollowupValidatedPayload,
    MTBatchJudged,
    MTBatchJudgedPayload,
)
from bus.events.ops import (
    AgentHeartbeat,
    DeadLettered,
    DeadLetterPayload,
    ErrorPayload,
    ErrorReported,
    HeartbeatPayload,
    ProgressPayload,
    ProgressReported,
)
from bus.events.rules import (
    MRAccepted,
    MRAcceptedPayload,
    MRCandidatesPayload,
    MRCandidatesProduced,
    MRRejected,
    MRRejectedPayload,
    ParserFailure,
    RulesSubmitted,
    RulesSubmittedPayload,
    ScoredCandidate,
)
from bus.events.tl import (
    TLAugmented,
    TLAugmentedPayload,
    TLDatasetPayload,
    TLDatasetSubmitted,
    TLVerdict,
    TLVerdictPayload,
)

AnyEvent = registry.union()
"""Any registered event, discriminated by ``type`` (for pydantic models and TypeAdapters)."""

__all__ = [
    "MAX_MESSAGE_BYTES",
    "SCHEMA_VERSION",
    "AgentHeartbeat",
    "AgentMessage",
    "AgentMessagePayload",
    "AnyEvent",
    "CasesDescribed",
    "CasesDescribedPayload",
    "CasesSubmitted",
    "CasesSubmittedPayload",
    "CrashSubmitted",
    "CrashSubmittedPayload",
    "CrashVerdict",
    "DeadLetterPayload",
    "DeadLettered",
    "ErrorPayload",
    "ErrorReported",
    "Event",
    "EventRegistry",
    "FollowupGenerated",
    "FollowupGeneratedPayload",
    "FollowupJudged",
    "FollowupJudgedPayload",
    "FollowupValidated",
    "FollowupValidatedPayload",
    "HeartbeatPayload",
    "MRAccepted",
    "MRAcceptedPayload",
    "MRCandidatesPayload",
    "MRCandidatesProduced",
    "MRRejected",
    "MRRejectedPayload",
    "MTBatchJudged",
    "MTBatchJudgedPayload",
    "ParserFailure",
    "ProgressPayload",
    "ProgressReported",
    "RulesSubmitted",
    "RulesSubmittedPayload",
    "ScenarioExtracted",
    "ScenarioExtractedPayload",
    "ScoredCandidate",
    "SimCompleted",
    "SimCompletedPayload",
    "SimRequested",
    "SimRequestedPayload",
    "TLAugmented",
    "TLAugmentedPayload",
    "TLDatasetPayload",
    "TLDatasetSubmitted",
    "TLVerdict",
    "TLVerdictPayload",
    "ViolationFound",
    "ViolationPayload",
    "decode_event",
    "derived_id",
    "encode_event",
    "event_json_schemas",
    "registry",
]
