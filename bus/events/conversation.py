"""The conversation: what each agent's models and offline paths said about an input, for every client to see.

With ``conversation.enabled`` the reasoning agents (M-Agent, Validator, crash extractor, T-Agent) publish one
:class:`AgentMessage` per input item (a rule, a crash report, a driving case) on ``<ns>.agents.messages.<agent>``:
prompt and answer excerpts and tool calls of each autogen agent, or an offline path's decision (the terms the
offline parser matched and why), each entry naming its reasoner. The event is bounded: built through
:meth:`AgentMessage.bounded`, its JSON stays within :data:`MAX_MESSAGE_BYTES`. No agent consumes it; it sits in
the results stream so that clients catch up on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from bus.envelope import Event, derived_id, encode_event, registry
from bus.subjects import Subjects
from tools.common.models import ConversationEntry

__all__ = ["MAX_MESSAGE_BYTES", "AgentMessage", "AgentMessagePayload"]

MAX_MESSAGE_BYTES = 2048
"""Largest encoded agent message, in bytes (the whole event's JSON)."""

_MAX_ENTRIES = 24
_MIN_ENTRY_CHARS = 40
_ELLIPSIS = "…"


class AgentMessagePayload(BaseModel):
    """What one agent's reasoners said about one input item."""

    agent: str = Field(max_length=64, description="The agent, e.g. 'm-agent'.")
    reasoners: list[str] = Field(
        description="Models ('openai:gpt-4o') and offline paths ('offline:ontology-grounded') that spoke, in order."
    )
    input_event_id: str = Field(description="The event the agent was handling.")
    item_id: str | None = Field(default=None, description="The rule, crash case or driving case it is about.")
    entries: list[ConversationEntry] = Field(max_length=_MAX_ENTRIES)
    truncated: bool = Field(default=False, description="Entries were cut or dropped to keep the event small.")


@registry.register
class AgentMessage(Event):
    """An agent's conversation about one input item (prompts, answers, tool calls, decisions)."""

    type: Literal["agents.message"] = "agents.message"
    payload: AgentMessagePayload
    subject_name: ClassVar[str] = ""

    def subject(self, subjects: Subjects) -> str:
        return subjects.agent_messages(self.payload.agent)

    def describe(self) -> str:
        p = self.payload
        headline = next((e for e in reversed(p.entries) if e.role == "decision"), None) or next(
            (e for e in reversed(p.entries) if e.role == "answer"), None
        )
        if headline is None and p.entries:
            headline = p.entries[0]
        item = f" on {p.item_id}" if p.item_id else ""
        said = f": {headline.text}" if headline is not None else ""
        return f"{p.agent} ({', '.join(p.reasoners)}){item}{said}"[:240]

    @classmethod
    def bounded(
        cls,
        source: Event,
        *,
        agent: str,
        entries: Sequence[ConversationEntry],
        item_id: str | None = None,
        index: object = 0,
        max_bytes: int = MAX_MESSAGE_BYTES,
    ) -> AgentMessage:
        """The message of ``agent`` about one item of ``source``, its encoded JSON at most ``max_bytes`` long.

        Long entries are cut to a common length first (short decisions survive long prompts whole); when that
        length would fall below a few words, entries are dropped instead, decisions last. ``truncated`` says
        whether anything was cut. The id is derived from the source, so a
        redelivered input gives the same message again (and the bus drops the repeat).

        Raises:
            ValueError: If ``max_bytes`` is too small even for the message without entries.
        """
        kept = [e.model_copy() for e in _most(entries, _MAX_ENTRIES)]
        truncated = len(entries) > len(kept)
        reasoners = list(dict.fromkeys(e.reasoner for e in entries)) or [agent]
        fields = source.caused(event_id=derived_id(source.event_id, agent, "message", index, item_id or ""))

        def build() -> tuple[AgentMessage, int]:
            message = cls(
                **fields,
                producer=agent,
                payload=AgentMessagePayload(
                    agent=agent,
                    reasoners=reasoners,
                    input_event_id=source.event_id,
                    item_id=item_id[:200] if item_id else item_id,
                    entries=kept,
                    truncated=truncated,
                ),
            )
            return message, len(encode_event(message))

        message, size = build()
        passes = 0
        while size > max_bytes:
            if not kept:
                raise ValueError(f"an agent message needs more than {max_bytes} bytes even without entries")
            passes += 1
            lengths = [len(e.text) for e in kept]
            # Cutting a character saves at least a byte; each ellipsis costs three.
            cap = _cap(lengths, sum(lengths) - (size - max_bytes) - 3 * len(kept))
            if cap >= _MIN_ENTRY_CHARS and passes <= 8:
                for e in kept:
                    if len(e.text) > cap:
                        e.text = e.text[: cap - 1].rstrip(_ELLIPSIS) + _ELLIPSIS
            else:  # entries would be cut to nothing: drop one, keeping decisions longest
                others = [i for i, e in enumerate(kept) if e.role != "decision"]
                kept.pop(others[-1] if others else -1)
            truncated = True
            message, size = build()
        return message


def _most(entries: Sequence[ConversationEntry], n: int) -> list[ConversationEntry]:
    """At most ``n`` entries in their order: the last decisions, then the first other entries."""
    if len(entries) <= n:
        return list(entries)
    decisions = [i for i, e in enumerate(entries) if e.role == "decision"][-n:]
    others = [i for i, e in enumerate(entries) if e.role != "decision"][: n - len(decisions)]
    return [entries[i] for i in sorted(decisions + others)]


def _cap(lengths: Sequence[int], budget: int) -> int:
    """The largest per-entry length ``cap`` with ``sum(min(n, cap)) <= budget`` (0 when none fits)."""
    if budget <= 0:
        return 0
    lo, hi = 0, max(lengths)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(n, mid) for n in lengths) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo
