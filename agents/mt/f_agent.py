"""F-Agent: each described case gets a follow-up made by one MR (AutoMT's F-Agent).

Methods, chosen per submission:

* ``automt``: the stored MRs that pass the filters (:mod:`tools.mt.matching`); the MR store's single owner
  claims the least used (ties by MiniLM cosine to the case's representation, then by id) and counts its use
  in the same step, so any number of F-Agent copies keep the count right;
* ``manual``: one of AutoMT's 9 manual MRs, a seeded uniform draw;
* ``random``: the case's road type with a manipulation and a behaviour drawn uniformly from the region's
  ontology (an ablation);
* ``null``: a behaviour-neutral edit (a distant object off the road), judged as "keep current".

The follow-up is re-rendered when the case is synthetic and the world can draw the MR, else edited
classically; with the diffusers generator configured, diffusion models draw every follow-up (a model that
cannot run is an error event per case). No fitting MR is a result ("no applicable MR"), not an error; an MR that cannot be rendered is a
result too, with the reason.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import structlog

from agents.runtime import Agent, error_event, handles
from bus import Bus, CasesDescribed, ErrorDomain, Event, FollowupGenerated, derived_id
from bus.events import FollowupGeneratedPayload
from bus.rpc import call
from bus.services import MRS_CLAIM, MRS_LIST, ClaimMR, ListMRs, MRFilters
from tools.common.artifacts import ArtifactStore, RunLayout
from tools.errors import BadInputError
from tools.mt.diffusion import DiffusionGenerator
from tools.mt.generate import UnrenderableError, generate_followup, null_plan
from tools.mt.matching import applicable, manual_mrs, plan_from_fields, random_fields, representation, stored_term
from tools.mt.models import PlannedMR
from tools.mt.synth.dataset import load_truth
from tools.rules.models import StoredMR
from tools.rules.ontology import Ontology

__all__ = ["FAgent"]

log = structlog.get_logger(__name__)

_QUERY_CHARS = 10_000
"""Longest tie-break text a claim takes (``ClaimMR.query``); the embedder reads far less of it anyway."""


class FAgent(Agent):
    """Makes follow-up cases.

    Args:
        bus: For the MR store's service (list, claim).
        store: Where frames are read and follow-ups written.
        ontology: The regions' vocabularies (the random method, canonical terms).
        cache_s: Seconds a region's MR list is reused before it is asked again.
        diffusion: Draw follow-ups with diffusion models (else classically, re-rendering synthetic scenes).
    """

    name: ClassVar[str] = "f-agent"
    produces = (FollowupGenerated,)
    error_domain = ErrorDomain.CASES

    def __init__(
        self,
        *,
        bus: Bus,
        store: ArtifactStore,
        ontology: Ontology,
        cache_s: float = 2.0,
        diffusion: DiffusionGenerator | None = None,
    ) -> None:
        self.bus = bus
        self.diffusion = diffusion
        self.store = store
        self.ontology = ontology
        self.cache_s = cache_s
        self._mrs: dict[str, tuple[float, list[StoredMR]]] = {}

    async def _region_mrs(self, region: str | None) -> list[StoredMR]:
        key = region or ""
        cached = self._mrs.get(key)
        if cached is not None and time.monotonic() - cached[0] < self.cache_s:
            return cached[1]
        reply = await call(self.bus, MRS_LIST, ListMRs(limit=10_000_000, filters=MRFilters(region=region)), timeout=60)
        self._mrs[key] = (time.monotonic(), reply.mrs)
        return reply.mrs

    async def plan(self, event: CasesDescribed) -> tuple[PlannedMR | None, str, int]:
        """The MR of a case by its submission's method, why there is none, and how many MRs fit (automt)."""
        p = event.payload
        case, desc = p.case, p.description
        assert desc is not None
        rng = random.Random(f"{p.seed}:{case.case_id}:{p.method}")
        if p.method == "fixed":
            if p.fixed_mr is None:
                return None, "the fixed method was given no MR", 0
            ok, why = applicable(p.fixed_mr, None, None, desc)
            if not ok:
                return None, f"the given MR does not fit this case: {why}", 0
            term = self.ontology.vocabulary(p.region or "core").canonical("manipulation", p.fixed_mr.manipulation)
            return plan_from_fields("fixed", p.fixed_mr, term=term, desc=desc, rng=rng), "", 1
        if p.method == "null":
            return null_plan(case), "", 0
        if p.method == "manual":
            pick = rng.choice(manual_mrs())
            return (
                plan_from_fields(
                    "manual",
                    pick.fields,
                    term=pick.fields.manipulation,
                    desc=desc,
                    rng=rng,
                    mr_id=pick.id,
                    gherkin=pick.gherkin,
                ),
                "",
                0,
            )
        if p.method == "random":
            vocab = self.ontology.vocabulary(p.region or "core")
            fields, term = random_fields(vocab, desc, rng)
            return plan_from_fields("random", fields, term=term, desc=desc, rng=rng), "", 0
        fitting = []
        reasons: dict[str, int] = {}
        for mr in await self._region_mrs(p.region):
            ok, why = applicable(mr.fields, p.region, mr.region, desc)
            if ok:
                fitting.append(mr)
            else:
                reasons[why.split(" (")[0]] = reasons.get(why.split(" (")[0], 0) + 1
        if not fitting:
            top = ", ".join(f"{k} x{v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
            return None, f"no stored MR fits this case ({top or 'no MR stored for the region'})", 0
        query = representation(desc)[:_QUERY_CHARS]  # a description of hostile length still claims an MR
        claimed = (await call(self.bus, MRS_CLAIM, ClaimMR(mr_ids=[m.mr_id for m in fitting], query=query))).mr
        if claimed is None:
            return None, "the fitting MRs are no longer stored", len(fitting)
        plan = plan_from_fields(
            "automt",
            claimed.fields,
            term=stored_term(claimed),
            desc=desc,
            rng=rng,
            mr_id=claimed.mr_id,
            gherkin=claimed.gherkin,
        )
        return plan, "", len(fitting)

    @handles(CasesDescribed)
    async def on_described(self, event: CasesDescribed) -> Sequence[Event]:
        """Choose the case's MR and make its follow-up; bad input about the case (an unknown region, an MR the
        ontology does not know) is an error event naming the case, which still ends (status ``error``), so that a
        client waiting for it hears why."""
        try:
            return await self._follow_up(event)
        except BadInputError as exc:
            p = event.payload
            payload = FollowupGeneratedPayload(
                case=p.case, description=p.description, status="error", reason=str(exc), **p.batch_fields()
            )
            error = error_event(event, agent=self.name, domain=self.error_domain, exc=exc, item_id=p.case.case_id)
            return [error, self._out(event, payload)]

    async def _follow_up(self, event: CasesDescribed) -> Sequence[Event]:
        p = event.payload
        case = p.case
        if p.description is None:
            payload = FollowupGeneratedPayload(
                case=case, status="unreadable", reason=p.problem or "the case was not described", **p.batch_fields()
            )
            return [self._out(event, payload)]
        description = p.description
        plan, reason, candidates = await self.plan(event)
        fields: dict[str, Any] = {
            **p.batch_fields(),
            "case": case,
            "description": p.description,
            "candidates": candidates,
        }
        if plan is None:
            return [self._out(event, FollowupGeneratedPayload(status="no_applicable_mr", reason=reason, **fields))]
        followup_id = f"{case.case_id.replace(':', '_').replace('#', '_')}-{p.method}"
        prefix = f"{RunLayout.batch(event.correlation_id)}/followups"

        def make() -> Any:
            truth = load_truth(self.store, case)  # a synthetic case carries its scene; others have none
            return generate_followup(
                self.store,
                case,
                description,
                plan,
                followup_id=followup_id,
                prefix=prefix,
                seed=p.seed,
                truth=truth,
                diffusion=self.diffusion,
            )

        try:
            follow = await asyncio.to_thread(make)
        except UnrenderableError as exc:
            return [self._out(event, FollowupGeneratedPayload(status="unrenderable", reason=str(exc), **fields))]
        return [self._out(event, FollowupGeneratedPayload(status="generated", followup=follow, **fields))]

    def _out(self, event: CasesDescribed, payload: FollowupGeneratedPayload) -> FollowupGenerated:
        return FollowupGenerated(
            **event.caused(event_id=derived_id(event.event_id, "followup", payload.method)),
            producer=self.name,
            payload=payload,
        )
