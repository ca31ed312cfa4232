"""M-Agent: traffic rules in, MR candidates from every configured parser out (AutoMT's M-Agent).

A submission holds one rule or a batch. Each rule is checked first (empty, oversized, unknown region
-> an error event for that rule; the rest of the batch goes on). Every configured parser proposes
candidates: the offline ontology-grounded parser for the whole batch at once (its MiniLM fallback is
batched), and each LLM parser concurrently per rule. One ``mrs.candidates`` event per rule follows,
with a failure list naming parsers that produced nothing; the Validator decides.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

from agents.runtime import Agent, Outcome, error_event
from bus import ErrorDomain, ErrorReported, Event, MRCandidatesProduced, RulesSubmitted, derived_id
from bus.events import MRCandidatesPayload, ParserFailure
from tools.common.models import Provenance
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
    """

    name: ClassVar[str] = "m-agent"
    consumes = (RulesSubmitted,)
    produces = (MRCandidatesProduced, ErrorReported)
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
    ) -> None:
        if offline_parser is None and not llm_parsers:
            raise ValueError("the M-Agent needs at least one parser")
        self.ontology = ontology
        self.offline_parser = offline_parser
        self.llm_parsers = list(llm_parsers)
        self.provenance = provenance
        self.max_rule_bytes = max_rule_bytes
        self._llm_slots = asyncio.Semaphore(llm_concurrency)

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
                        ParserFailure(parser=self.offline_parser.name, error="no ontology term found in the rule")
                    )
        llm = await asyncio.gather(*(self._llm_candidates(rule) for rule in rules))
        for k, (n, i, event, rule) in enumerate(jobs):
            llm_cands, llm_failures = llm[k]
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
        return outcomes

    async def _llm_candidates(self, rule: TrafficRule) -> tuple[list[MRCandidate], list[ParserFailure]]:
        if not self.llm_parsers:
            return [], []

        async def one(parser: LLMRuleParser) -> Any:
            async with self._llm_slots:
                return await parser.parse(rule)

        results = await asyncio.gather(*(one(p) for p in self.llm_parsers), return_exceptions=True)
        cands: list[MRCandidate] = []
        fails: list[ParserFailure] = []
        for parser, res in zip(self.llm_parsers, results, strict=True):
            if isinstance(res, BaseException):
                fails.append(ParserFailure(parser=parser.name, error=f"{type(res).__name__}: {res}"[:1000]))
            else:
                cands.extend(res)
        return cands, fails
