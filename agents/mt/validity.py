"""Validity checker: each generated follow-up gets AutoMT's three checks (scenario, manipulation, logic).

The checks read the source's and the follow-up's pixels, the MR, the case's data and its description, never
the generator's own record (:mod:`tools.mt.validity`). Follow-ups that could not be made pass through as they
are: the Judge and the reports count them as not valid.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from agents.runtime import Agent, error_event, handles
from bus import ErrorDomain, Event, FollowupGenerated, FollowupValidated, derived_id
from bus.events import FollowupValidatedPayload
from tools.common.artifacts import ArtifactStore
from tools.errors import BadInputError
from tools.mt.generate import read_frames
from tools.mt.models import Validity, ValidityCheck
from tools.mt.report import CHECKS
from tools.mt.validity import check_followup

__all__ = ["ValidityAgent"]


class ValidityAgent(Agent):
    """Checks follow-ups.

    Args:
        store: Where the frames are.
    """

    name: ClassVar[str] = "validity-checker"
    produces = (FollowupValidated,)
    error_domain = ErrorDomain.CASES

    def __init__(self, *, store: ArtifactStore) -> None:
        self.store = store

    @handles(FollowupGenerated)
    async def on_generated(self, event: FollowupGenerated) -> Sequence[Event]:
        """Check a generated follow-up (nothing to check for a case that got none)."""
        p = event.payload
        if p.followup is None:
            return []
        follow = p.followup

        def check() -> Validity:
            source = read_frames(self.store, follow.source)
            edited = read_frames(self.store, follow.case)
            return check_followup(source, edited, source=follow.source, description=follow.description, mr=follow.mr)

        try:
            validity = await asyncio.to_thread(check)
        except BadInputError as exc:  # (frames gone or unreadable: the case ends as an error, with the reason)
            reason = f"could not be checked: {exc}"
            validity = Validity(
                checks=[ValidityCheck.model_validate({"name": n, "passed": False, "reason": reason}) for n in CHECKS],
                error=str(exc),
            )
            error = error_event(
                event, agent=self.name, domain=self.error_domain, exc=exc, item_id=follow.source.case_id
            )
            return [error, self._validated(event, validity)]
        return [self._validated(event, validity)]

    def _validated(self, event: FollowupGenerated, validity: Validity) -> FollowupValidated:
        p = event.payload
        assert p.followup is not None
        return FollowupValidated(
            **event.caused(event_id=derived_id(event.event_id, "validated")),
            producer=self.name,
            payload=FollowupValidatedPayload(followup=p.followup, validity=validity, **p.batch_fields()),
        )
