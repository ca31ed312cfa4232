"""Validator: judges each rule's MR candidates, keeps the best, stores it (AutoMT's Validator).

Each candidate gets a hallucination score from the configured validator (deterministic checks offline,
a model's yes/no answers with an LLM); the accepted candidate with the lowest score wins and is
upserted into memory in one batch with the rest of the batch's winners. A rule with no accepted
candidate gets an ``mrs.rejected`` event with the reasons. With the conversation on, one ``agents.message`` per
rule follows: each candidate's score and failed checks, the verdict, and a model validator's questions and answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from agents.runtime import Agent, Outcome
from bus import (
    AgentMessage,
    ErrorDomain,
    Event,
    MRAccepted,
    MRCandidatesProduced,
    MRRejected,
    ScoredCandidate,
    derived_id,
)
from bus.events import MRAcceptedPayload, MRRejectedPayload
from memory.mr_store import MRStore
from tools.common.conversation import excerpt, recording
from tools.common.models import ConversationEntry, Provenance
from tools.errors import BadInputError
from tools.rules.models import MRFields, Verdict
from tools.rules.mr import new_mr
from tools.rules.offline_parser import OFFLINE_PARSER_NAME
from tools.rules.ontology import Ontology
from tools.rules.validation import MRValidator, OfflineValidator, choose_best

__all__ = ["ValidatorAgent"]


class ValidatorAgent(Agent):
    """Validates MR candidates and stores the accepted MR of each rule.

    Args:
        validator: The validator (offline or LLM self-check).
        store: Where accepted MRs go.
        ontology: The MR ontology (for canonical keys).
        provenance: Provenance attached to results.
        conversation: Publish one ``agents.message`` per rule (scores, failed checks, the verdict).
    """

    name: ClassVar[str] = "validator"
    consumes = (MRCandidatesProduced,)
    produces = (MRAccepted, MRRejected, AgentMessage)
    error_domain = ErrorDomain.MRS
    batch_size = 64

    def __init__(
        self,
        *,
        validator: MRValidator,
        store: MRStore,
        ontology: Ontology,
        provenance: Provenance,
        conversation: bool = False,
    ) -> None:
        self.validator = validator
        self.store = store
        self.ontology = ontology
        self.provenance = provenance
        self.conversation = conversation

    async def handle(self, event: Event) -> Sequence[Event]:
        """Handle one candidates event (see :meth:`handle_batch`)."""
        outcome = (await self.handle_batch([event]))[0]
        if outcome.error is not None:
            raise outcome.error
        return outcome.events

    async def _verdicts(self, event: MRCandidatesProduced) -> list[Verdict]:
        payload = event.payload
        if not payload.candidates:
            return []
        return await self.validator.validate(payload.rule, payload.candidates)

    async def handle_batch(self, events: Sequence[Event]) -> list[Outcome]:
        """Validate every event's candidates, store the winners in one batch, emit one result per rule."""
        typed = [e for e in events if isinstance(e, MRCandidatesProduced)]
        assert len(typed) == len(events)
        transcripts: list[list[ConversationEntry]] = [[] for _ in typed]
        if isinstance(self.validator, OfflineValidator):
            offline = self.validator

            def validate_each() -> list[list[Verdict] | BaseException]:
                out: list[list[Verdict] | BaseException] = []
                offline.prepare([e.payload.rule for e in typed])  # one embedding call for the batch's retrieval
                for e in typed:  # a rule that cannot be validated (an unknown region) fails alone
                    try:
                        out.append(offline.validate_sync(e.payload.rule, e.payload.candidates))
                    except Exception as exc:
                        out.append(exc)
                return out

            verdict_lists = await asyncio.to_thread(validate_each)
        else:

            async def judged(n: int, event: MRCandidatesProduced) -> list[Verdict]:
                with recording(active=self.conversation) as transcripts[n]:
                    return await self._verdicts(event)

            verdict_lists = list(
                await asyncio.gather(*(judged(n, e) for n, e in enumerate(typed)), return_exceptions=True)
            )
        outcomes: list[Outcome] = [Outcome() for _ in typed]
        winners: list[tuple[int, Verdict]] = []
        verdicts_of: dict[int, list[Verdict]] = {}
        for n, (event, verdicts) in enumerate(zip(typed, verdict_lists, strict=True)):
            if isinstance(verdicts, BaseException):
                outcomes[n].error = verdicts
                continue
            verdicts_of[n] = verdicts
            best = choose_best(verdicts)
            if best is None:
                outcomes[n].events.append(self._rejected(event, verdicts))
            else:
                winners.append((n, best))
        stored: list[tuple[int, Verdict]] = []
        items = []
        for n, best in winners:
            rule = typed[n].payload.rule
            try:
                vocab = self.ontology.vocabulary(rule.region)
            except BadInputError as exc:  # this rule alone fails; its batch-mates are stored
                outcomes[n].error = exc
                continue
            stored.append((n, best))
            mr = best.candidate.mr
            items.append(
                new_mr(
                    mr,
                    vocab,
                    region=rule.region,
                    score=best.score,
                    rule_id=rule.id,
                    validator=best.validator,
                    parser=best.candidate.parser,
                )
            )
        if items:
            records = await self.store.add(items)
            for (n, best), record in zip(stored, records, strict=True):
                event = typed[n]
                outcomes[n].events.append(
                    MRAccepted(
                        **event.caused(event_id=derived_id(event.event_id, "validated")),
                        producer=self.name,
                        payload=MRAcceptedPayload(
                            rule=event.payload.rule,
                            winner=_scored([best])[0],
                            mr=record,
                            checks=best.checks,
                            candidates=_scored(verdicts_of[n]),
                            provenance=self.provenance,
                            parser_failures=event.payload.failures,
                        ),
                    )
                )
        if self.conversation:
            for n, event in enumerate(typed):
                if outcomes[n].error is None:
                    result = outcomes[n].events[-1]
                    outcomes[n].events.append(self._message(event, verdicts_of[n], transcripts[n], result))
        return outcomes

    def _message(
        self, event: MRCandidatesProduced, verdicts: list[Verdict], transcript: list[ConversationEntry], result: Event
    ) -> AgentMessage:
        """The conversation entry of one rule: a model's questions and answers, each candidate's score, the verdict."""
        entries = list(transcript)
        for v in verdicts:
            failed = f"; failed: {'; '.join(v.reasons)}" if v.reasons else ""
            verdict = "accepted" if v.accepted else "not accepted"
            text = f"{v.candidate.parser}: {_short(v.candidate.mr)} scored {v.score:.2f}, {verdict}{failed}"
            entries.append(ConversationEntry(role="decision", reasoner=v.validator, text=excerpt(text)))
        if isinstance(result, MRAccepted):
            win = result.payload.winner
            known = " (already known)" if result.payload.mr.duplicate else ""
            final = f"accepted {win.candidate.parser}'s {_short(win.candidate.mr)} (score {win.score:.2f}){known}"
        else:
            assert isinstance(result, MRRejected)
            final = f"rejected: {result.payload.reasons[0] if result.payload.reasons else 'no candidate'}"
        entries.append(ConversationEntry(role="decision", reasoner=self.validator.name, text=excerpt(final)))
        return AgentMessage.bounded(event, agent=self.name, entries=entries, item_id=event.payload.rule.id)

    def _rejected(self, event: MRCandidatesProduced, verdicts: list[Verdict]) -> MRRejected:
        payload = event.payload
        if not verdicts:
            reasons = [f"{f.parser}: {f.error}" for f in payload.failures] or ["no parser proposed a candidate"]
            if all(f.parser == OFFLINE_PARSER_NAME for f in payload.failures):
                reasons = ["no ontology term (road user, sign, light, weather ...) found in the rule"]
        else:
            best = min(verdicts, key=lambda v: v.hallucination)
            reasons = [
                f"best candidate ({best.candidate.gherkin}; score {best.score:.2f}): {r}" for r in best.reasons
            ] or [f"best candidate scored {best.score:.2f}, below the acceptance threshold"]
        return MRRejected(
            **event.caused(event_id=derived_id(event.event_id, "validated")),
            producer=self.name,
            payload=MRRejectedPayload(
                rule=payload.rule,
                reasons=reasons,
                candidates=_scored(verdicts),
                provenance=self.provenance,
                parser_failures=payload.failures,
            ),
        )


def _short(mr: MRFields) -> str:
    """An MR in a few words: where, what changes, what the ego should do."""
    return f"[{mr.road_type} | {mr.verb} {mr.manipulation} | {mr.expected_behavior}]"


def _scored(verdicts: Sequence[Verdict]) -> list[ScoredCandidate]:
    return [
        ScoredCandidate(
            candidate=v.candidate, score=v.score, accepted=v.accepted, reasons=v.reasons, confidence=v.confidence
        )
        for v in verdicts
    ]
