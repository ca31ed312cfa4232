"""M-Agent: traffic rules in, MR candidates from every configured parser out (AutoMT's M-Agent).

A submission holds one rule or a batch. Each rule is checked first (empty, oversized, unknown region
-> an error event for that rule; the rest of the batch goes on). Every configured parser proposes
candidates: the offline ontology-grounded parser for the whole batch at once (its MiniLM fallback is
batched), and each LLM parser concurrently per rule. One ``mrs.candidates`` event per rule follows,
with a failure list naming parsers that produced nothing; the Validator decides. With the conversation on, one
``agents.message`` per rule follows too: the LLM parsers' prompts, answers and tool calls, and the terms the offline
parser matched and why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

from agents.runtime import Agent, Outcome, error_event
from bus import AgentMessage, ErrorDomain, ErrorReported, Event, MRCandidatesProduced, RulesSubmitted, derived_id
from bus.events import MRCandidatesPayload, ParserFailure
from tools.common.conversation import excerpt, recording
from tools.common.models import ConversationEntry, Provenance
from tools.errors import BadInputError
from tools.rules.llm_parser import LLMRuleParser
from tools.rules.models import MAX_RULE_BYTES, MRCandidate, TrafficRule, check_rule
from tools.rules.offline_parser import OntologyGroundedParser
from tools.rules.ontology import Ontology
from tools.rules.tools import RULE_TOOLS

__all__ = ["MAgent"]


class MAgent(Agent):
    """Turns traffic rules into MR candidates.

    Args:
        ontology: The MR ontology (regions are checked against it).
        offline_parser: The offline parser, or ``None`` when only LLMs parse.
        llm_parsers: LLM parsers run in parallel per rule.
        provenance: Provenance attached to every candidates event.
        max_rule_bytes: Largest rule accepted.
        llm_concurrency: LLM calls in flight at once.
        conversation: Publish one ``agents.message`` per rule (what each parser said).
    """

    name: ClassVar[str] = "m-agent"
    consumes = (RulesSubmitted,)
    produces = (MRCandidatesProduced, ErrorReported, AgentMessage)
    tools = RULE_TOOLS
    error_domain = ErrorDomain.RULES
    batch_size = 32

    def __init__(
        self,
        *,
        ontology: Ontology,
        offline_parser: OntologyGroundedParser | None,
        llm_parsers: Sequence[LLMRuleParser] = (),
        provenance: Provenance,
        max_rule_bytes: int = MAX_RULE_BYTES,
        llm_concurrency: int = 8,
        conversation: bool = False,
    ) -> None:
        if offline_parser is None and not llm_parsers:
            raise ValueError("the M-Agent needs at least one parser")
        self.ontology = ontology
        self.offline_parser = offline_parser
        self.llm_parsers = list(llm_parsers)
        self.provenance = provenance
        self.max_rule_bytes = max_rule_bytes
        self._llm_slots = asyncio.Semaphore(llm_concurrency)
        self.conversation = conversation

    async def handle(self, event: Event) -> Sequence[Event]:
        """Handle one submission (see :meth:`handle_batch`)."""
        outcome = (await self.handle_batch([event]))[0]
        if outcome.error is not None:
            raise outcome.error
        return outcome.events

    async def handle_batch(self, events: Sequence[Event]) -> list[Outcome]:
        """Check every rule of every submission, parse the good ones together, emit one event per rule."""
        outcomes = [Outcome() for _ in events]
        jobs: list[tuple[int, int, RulesSubmitted, TrafficRule]] = []
        for n, event in enumerate(events):
            assert isinstance(event, RulesSubmitted)
            for i, rule in enumerate(event.payload.rules):
                try:
                    check_rule(rule, max_bytes=self.max_rule_bytes)
                    self.ontology.vocabulary(rule.region)
                except BadInputError as exc:
                    outcomes[n].events.append(
                        error_event(
                            event,
                            agent=self.name,
                            domain=self.error_domain,
                            exc=exc,
                            item_id=rule.id,
                            excerpt=rule.text[:200],
                            index=i,
                        )
                    )
                    continue
                jobs.append((n, i, event, rule))
        if not jobs:
            return outcomes
        rules = [job[3] for job in jobs]
        offline: list[list[MRCandidate]] = [[] for _ in rules]
        failures: list[list[ParserFailure]] = [[] for _ in rules]
        if self.offline_parser is not None:
            offline = await asyncio.to_thread(self.offline_parser.parse_many, rules)
            for k, cands in enumerate(offline):
                if not cands:
                    failures[k].append(
                        ParserFailure(
                            parser=self.offline_parser.name, error="no ontology term found in the rule", failed=False
                        )
                    )
        llm = await asyncio.gather(*(self._llm_candidates(rule) for rule in rules))
        for k, (n, i, event, rule) in enumerate(jobs):
            llm_cands, llm_failures, transcript = llm[k]
            candidates = llm_cands + offline[k]
            outcomes[n].events.append(
                MRCandidatesProduced(
                    **event.caused(event_id=derived_id(event.event_id, "candidates", i, rule.id)),
                    producer=self.name,
                    payload=MRCandidatesPayload(
                        rule=rule,
                        candidates=candidates,
                        failures=failures[k] + llm_failures,
                        provenance=self.provenance,
                    ),
                )
            )
            if self.conversation:
                entries = transcript + [_offline_decision(c) for c in offline[k]]
                entries += [
                    ConversationEntry(role="decision", reasoner=f.parser, text=excerpt(f"no candidate: {f.error}"))
                    for f in failures[k] + llm_failures
                ]
                outcomes[n].events.append(
                    AgentMessage.bounded(event, agent=self.name, entries=entries, item_id=rule.id, index=i)
                )
        return outcomes

    async def _llm_candidates(
        self, rule: TrafficRule
    ) -> tuple[list[MRCandidate], list[ParserFailure], list[ConversationEntry]]:
        if not self.llm_parsers:
            return [], [], []

        async def one(parser: LLMRuleParser) -> Any:
            async with self._llm_slots:
                return await parser.parse(rule)

        with recording(active=self.conversation) as transcript:
            results = await asyncio.gather(*(one(p) for p in self.llm_parsers), return_exceptions=True)
        cands: list[MRCandidate] = []
        fails: list[ParserFailure] = []
        for parser, res in zip(self.llm_parsers, results, strict=True):
            if isinstance(res, BaseException):
                fails.append(ParserFailure(parser=parser.name, error=f"{type(res).__name__}: {res}"[:1000]))
            else:
                cands.extend(res)
        return cands, fails, transcript


def _offline_decision(cand: MRCandidate) -> ConversationEntry:
    """What the offline parser decided for one candidate: each field's term and the words of the rule behind it."""
    mr, why = cand.mr, cand.evidence
    text = (
        f"{mr.verb} {mr.manipulation} (matched: {why.get('manipulation', '?')}); "
        f"road type {mr.road_type} ({why.get('road_type', '?')}); "
        f"behaviour {mr.expected_behavior} ({why.get('expected_behavior', '?')}); confidence {cand.confidence:.2f}"
    )
    return ConversationEntry(role="decision", reasoner=cand.parser, text=excerpt(text))
