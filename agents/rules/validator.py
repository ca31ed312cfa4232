"""Validator: judges each rule's MR candidates, keeps the best, stores it (AutoMT's Validator).

Each candidate gets a hallucination score from the configured validator (deterministic checks offline,
a model's yes/no answers with an LLM); the accepted candidate with the lowest score wins and is
upserted into memory in one batch with the rest of the batch's winners. A rule with no accepted
candidate gets an ``mrs.rejected`` event with the reasons.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from agents.runtime import Agent, Outcome
from bus import ErrorDomain, Event, MRAccepted, MRCandidatesProduced, MRRejected, ScoredCandidate, derived_id
from bus.events import MRAcceptedPayload, MRRejectedPayload
from memory.mr_store import MRStore
from tools.common.models import Provenance
from tools.rules.models import Verdict
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
    """

    name: ClassVar[str] = "validator"
    consumes = (MRCandidatesProduced,)
    produces = (MRAccepted, MRRejected)
    error_domain = ErrorDomain.MRS
    batch_size = 64

    def __init__(self, *, validator: MRValidator, store: MRStore, ontology: Ontology, provenance: Provenance) -> None:
        self.validator = validator
        self.store = store
        self.ontology = ontology
        self.provenance = provenance

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
        if isinstance(self.validator, OfflineValidator):
            verdict_lists = await asyncio.to_thread(
                lambda: [self.validator.validate_sync(e.payload.rule, e.payload.candidates) for e in typed]  # type: ignore[attr-defined]
            )
        else:
            verdict_lists = list(await asyncio.gather(*(self._verdicts(e) for e in typed), return_exceptions=True))
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
        if winners:
            items = []
            for n, best in winners:
                rule = typed[n].payload.rule
                vocab = self.ontology.vocabulary(rule.region)
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
            records = await self.store.add(items)
            for (n, best), record in zip(winners, records, strict=True):
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
                        ),
                    )
                )
        return outcomes

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
                rule=payload.rule, reasons=reasons, candidates=_scored(verdicts), provenance=self.provenance
            ),
        )


def _scored(verdicts: Sequence[Verdict]) -> list[ScoredCandidate]:
    return [
        ScoredCandidate(candidate=v.candidate, score=v.score, accepted=v.accepted, reasons=v.reasons) for v in verdicts
    ]
