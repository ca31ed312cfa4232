"""Every NATS subject, stream and consumer name drivemt uses, built and checked in one place.

Agents never spell a subject as a string literal: they ask a :class:`Subjects` instance, so that a
namespace (one per deployment, or one per test) keeps independent installations apart on a shared
NATS cluster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from bus.errors import InvalidSubjectError

__all__ = ["DEFAULT_NAMESPACE", "ErrorDomain", "StreamNames", "Subjects", "validate_token"]

DEFAULT_NAMESPACE = "drivemt"

_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")


class ErrorDomain(StrEnum):
    """Where an error happened; each domain has its own error subject (``<namespace>.errors.<domain>``)."""

    RULES = "rules"
    """Traffic rules the M-Agent could not read."""
    MRS = "mrs"
    """MR candidates the Validator could not judge or store."""
    CRASHES = "crashes"
    """Crash reports that could not be extracted or planned."""
    SIM = "sim"
    """Simulation runs that could not be done."""
    JUDGE = "judge"
    """Results the Judge could not judge or report."""
    TL = "tl"
    """Traffic-light datasets that could not be augmented."""
    CASES = "cases"
    """Driving test cases that could not be read, described or followed up."""
    AGENTS = "agents"
    """Anything else an agent refused (its own default)."""


def validate_token(token: str, *, what: str = "subject token") -> str:
    """Check one subject token: no dots, wildcards, spaces or empty strings.

    Args:
        token: The token to check.
        what: What the token is, for the error message.

    Returns:
        The token unchanged.

    Raises:
        InvalidSubjectError: If the token cannot be used inside a subject.
    """
    if not _TOKEN.match(token):
        raise InvalidSubjectError(token, f"{what} must be letters, digits, '_' or '-'")
    return token


@dataclass(frozen=True)
class StreamNames:
    """Names of the JetStream streams and key-value buckets of one namespace."""

    inputs: str
    results: str
    deadletter: str
    heartbeats: str
    processed_bucket: str
    tallies_bucket: str
    artifacts_bucket: str


@dataclass(frozen=True)
class Subjects:
    """Subjects of one drivemt namespace.

    Args:
        namespace: First token of every subject; lets several deployments or tests share one server.
    """

    namespace: str = DEFAULT_NAMESPACE

    def __post_init__(self) -> None:
        validate_token(self.namespace, what="namespace")

    def _s(self, *tokens: str) -> str:
        return ".".join((self.namespace, *tokens))

    # -- inputs (stream INPUTS) --------------------------------------------------------------
    @property
    def rules_submitted(self) -> str:
        """Traffic rules to turn into metamorphic relations."""
        return self._s("rules", "submitted")

    @property
    def crashes_submitted(self) -> str:
        """Crash reports to turn into simulated scenarios."""
        return self._s("crashes", "submitted")

    @property
    def cases_submitted(self) -> str:
        """Source test cases (frames, speed, steering) to build follow-ups for."""
        return self._s("cases", "submitted")

    @property
    def tl_datasets_submitted(self) -> str:
        """Labelled traffic-light datasets to augment."""
        return self._s("tl", "datasets", "submitted")

    # -- results (stream RESULTS) ------------------------------------------------------------
    @property
    def cases_described(self) -> str:
        """Driving cases described (AutoMT's representation) by the T-Agent."""
        return self._s("cases", "described")

    @property
    def followups_generated(self) -> str:
        """Follow-up cases made by the F-Agent (or why a case got none)."""
        return self._s("followups", "generated")

    @property
    def followups_validated(self) -> str:
        """Follow-ups with their three validity checks."""
        return self._s("followups", "validated")

    @property
    def followups_judged(self) -> str:
        """The driving models' verdicts on a follow-up (every case ends with one)."""
        return self._s("followups", "judged")

    @property
    def followups_batch_judged(self) -> str:
        """A submission of driving cases judged: its totals."""
        return self._s("followups", "batch_judged")

    @property
    def scenarios_extracted(self) -> str:
        """Scenario DSLs extracted from crash reports."""
        return self._s("scenarios", "extracted")

    @property
    def sim_requested(self) -> str:
        """Single simulation runs, a shared work queue for simulator workers."""
        return self._s("sim", "requested")

    @property
    def sim_completed(self) -> str:
        """Finished simulation runs with their records."""
        return self._s("sim", "completed")

    @property
    def crashes_verdict(self) -> str:
        """A crash case's runs judged: reproduced or not, violations."""
        return self._s("crashes", "verdict")

    @property
    def violations_found(self) -> str:
        """Findings, with the evidence that proves them."""
        return self._s("violations", "found")

    @property
    def tl_augmented(self) -> str:
        """Augmented traffic-light datasets."""
        return self._s("tl", "augmented")

    @property
    def tl_verdict(self) -> str:
        """Detectors tested on an augmented traffic-light dataset."""
        return self._s("tl", "verdict")

    @property
    def mrs_candidates(self) -> str:
        """MR candidates from every configured rule parser, one event per rule."""
        return self._s("mrs", "candidates")

    @property
    def mrs_accepted(self) -> str:
        """The validated MR of a rule, stored in memory."""
        return self._s("mrs", "accepted")

    @property
    def mrs_rejected(self) -> str:
        """A rule for which no candidate passed validation, with the reasons."""
        return self._s("mrs", "rejected")

    def errors(self, domain: ErrorDomain | str) -> str:
        """Bad-input and failure reports of one domain (``rules``, ``mrs`` ...): ``<ns>.errors.<domain>``.

        Raises:
            InvalidSubjectError: For a domain that is not an :class:`ErrorDomain`.
        """
        try:
            return self._s("errors", ErrorDomain(domain).value)
        except ValueError:
            raise InvalidSubjectError(
                str(domain), f"error domain must be one of {[d.value for d in ErrorDomain]}"
            ) from None

    @property
    def all_errors(self) -> str:
        """Wildcard over every domain's errors."""
        return self._s("errors", "*")

    @property
    def progress(self) -> str:
        """Progress of long work, for progress bars and the terminal UI."""
        return self._s("progress")

    # -- operations ----------------------------------------------------------------------------
    def heartbeat(self, agent: str, instance: str) -> str:
        """Liveness and counters of one agent instance (last value kept per subject)."""
        return self._s("agents", "heartbeat", validate_token(agent, what="agent name"), validate_token(instance))

    @property
    def all_heartbeats(self) -> str:
        """Wildcard over every agent's heartbeat."""
        return self._s("agents", "heartbeat", ">")

    def agent_messages(self, agent: str) -> str:
        """What one agent's models and offline paths said about each input (the conversation; off by default)."""
        return self._s("agents", "messages", validate_token(agent, what="agent name"))

    @property
    def all_agent_messages(self) -> str:
        """Wildcard over every agent's messages."""
        return self._s("agents", "messages", "*")

    def deadletter(self, consumer: str) -> str:
        """Events that consumer ``consumer`` could not handle, with the reason."""
        return self._s("deadletter", validate_token(consumer, what="consumer name"))

    @property
    def all_deadletters(self) -> str:
        """Wildcard over every consumer's dead letters."""
        return self._s("deadletter", "*")

    def rpc(self, method: str) -> str:
        """Request/reply subject of a daemon service method (``mrs.list`` ...)."""
        tokens = method.split(".")
        for token in tokens:
            validate_token(token, what="rpc method")
        return self._s("rpc", *tokens)

    @property
    def everything(self) -> str:
        """Wildcard over the whole namespace, for observers such as the terminal UI."""
        return self._s(">")

    # -- streams -------------------------------------------------------------------------------
    @property
    def streams(self) -> StreamNames:
        """Stream and bucket names; JetStream names may not contain dots, so they are upper-cased tokens."""
        prefix = self.namespace.upper().replace("-", "_")
        return StreamNames(
            inputs=f"{prefix}_INPUTS",
            results=f"{prefix}_RESULTS",
            deadletter=f"{prefix}_DEADLETTER",
            heartbeats=f"{prefix}_HEARTBEATS",
            processed_bucket=f"{prefix}_processed",
            tallies_bucket=f"{prefix}_tallies",
            artifacts_bucket=f"{prefix}_artifacts",
        )

    @property
    def input_subjects(self) -> list[str]:
        """Subjects captured by the inputs stream."""
        return [
            self.rules_submitted,
            self.crashes_submitted,
            self.cases_submitted,
            self.tl_datasets_submitted,
        ]

    @property
    def result_subjects(self) -> list[str]:
        """Subjects captured by the results stream."""
        return [
            self.cases_described,
            self.followups_generated,
            self.followups_validated,
            self.followups_judged,
            self.followups_batch_judged,
            self.mrs_candidates,
            self.mrs_accepted,
            self.mrs_rejected,
            self.scenarios_extracted,
            self.sim_requested,
            self.sim_completed,
            self.crashes_verdict,
            self.violations_found,
            self.tl_augmented,
            self.tl_verdict,
            self.all_errors,
            self.progress,
            self.all_agent_messages,
        ]
