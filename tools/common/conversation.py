"""What agents said about an input, recorded while they reason: model prompts, answers and tool calls, and the
decisions of offline paths.

An agent that publishes its conversation opens a :func:`recording` around the work on one input; the tools it
calls (the LLM rule parser, the self-check validator, the crash extractor, the describer) hand each autogen
``TaskResult``'s messages to :func:`record_autogen`, and offline paths add their reasoning with :func:`record`.
Outside a recording both are no-ops, so with the conversation switched off nothing is kept. The recording is a
context variable: asyncio tasks started inside it (parsers run concurrently) add to the same list.

Entries are excerpts: whitespace collapsed and cut at :data:`ENTRY_CHARS` characters; the event that carries them
(``bus.events.AgentMessage``) cuts them further to stay within its size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

from tools.common.models import ConversationEntry, ConversationRole

__all__ = [
    "ENTRY_CHARS",
    "entries_from_autogen",
    "excerpt",
    "record",
    "record_autogen",
    "recording",
]

ENTRY_CHARS = 400
"""Longest excerpt kept per entry, in characters."""

_current: ContextVar[list[ConversationEntry] | None] = ContextVar("drivemt_conversation", default=None)


def excerpt(text: str, limit: int = ENTRY_CHARS, *, focus: str | None = None) -> str:
    """``text`` on one line, cut to ``limit`` characters with ellipses.

    Args:
        text: The text.
        limit: Most characters kept.
        focus: A part of ``text`` the excerpt should show (the rule inside a long prompt of fixed lists); the
            window starts a little before it. The start of the text when it is not found.
    """
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    start = 0
    if focus:
        at = flat.find(" ".join(focus.split())[:80])
        if at > 0:
            start = max(0, at - limit // 8)
    head = "…" if start else ""
    room = limit - len(head)
    body = flat[start : start + room]
    if start + room < len(flat):
        body = body[: room - 1] + "…"
    return head + body


@contextmanager
def recording(*, active: bool = True) -> Iterator[list[ConversationEntry]]:
    """Collect the entries recorded inside the block (in this task and the tasks it starts).

    Args:
        active: When False, nothing is recorded and the list stays empty (the switch is off).
    """
    entries: list[ConversationEntry] = []
    if not active:
        yield entries
        return
    token = _current.set(entries)
    try:
        yield entries
    finally:
        _current.reset(token)


def record(role: ConversationRole, reasoner: str, text: str) -> None:
    """Add one entry to the current recording (a no-op outside one)."""
    entries = _current.get()
    if entries is not None:
        entries.append(ConversationEntry(role=role, reasoner=reasoner[:120], text=excerpt(text)))


def record_autogen(reasoner: str, messages: Sequence[Any], *, focus: str | None = None) -> None:
    """Add an autogen run's messages (``TaskResult.messages``) to the current recording (a no-op outside one).

    Args:
        reasoner: The model's label.
        messages: The run's messages.
        focus: What the prompt excerpts should show (see :func:`excerpt`).
    """
    entries = _current.get()
    if entries is not None:
        entries.extend(entries_from_autogen(reasoner, messages, focus=focus))


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, BaseModel):
        return content.model_dump_json()
    if isinstance(content, list):  # a multimodal message: how many pictures went along, then its text
        text = " ".join(part for part in content if isinstance(part, str))
        pictures = len(content) - sum(isinstance(part, str) for part in content)
        return f"[{pictures} image{'s' if pictures != 1 else ''}] {text}" if pictures else text
    return str(content)


def _calls(calls: Iterable[Any]) -> str:
    return "; ".join(f"{getattr(c, 'name', '?')}({getattr(c, 'arguments', '')})" for c in calls)


def _results(results: Iterable[Any]) -> str:
    parts = []
    for r in results:
        error = " (error)" if getattr(r, "is_error", False) else ""
        parts.append(f"{getattr(r, 'name', '?')}{error} -> {getattr(r, 'content', r)}")
    return "; ".join(parts)


def entries_from_autogen(
    reasoner: str, messages: Sequence[Any], *, focus: str | None = None
) -> list[ConversationEntry]:
    """Conversation entries of autogen agentchat messages: the task as the prompt, tool calls and their results,
    the model's answers (text or structured); streaming chunks and other events are left out."""
    from autogen_agentchat.messages import (
        MultiModalMessage,
        StructuredMessage,
        TextMessage,
        ThoughtEvent,
        ToolCallExecutionEvent,
        ToolCallRequestEvent,
        ToolCallSummaryMessage,
    )

    out: list[ConversationEntry] = []
    for msg in messages:
        role: ConversationRole
        if isinstance(msg, ToolCallRequestEvent):
            role, text = "tool_call", _calls(msg.content)
        elif isinstance(msg, ToolCallExecutionEvent):
            role, text = "tool_result", _results(msg.content)
        elif isinstance(msg, ToolCallSummaryMessage):
            role, text = "tool_result", msg.content
        elif isinstance(msg, TextMessage | MultiModalMessage | StructuredMessage):
            role = "prompt" if msg.source == "user" else "answer"
            text = _text_of(msg.content)
        elif isinstance(msg, ThoughtEvent):
            role, text = "answer", f"(thought) {msg.content}"
        else:
            continue
        shown = excerpt(text, focus=focus if role == "prompt" else None)
        out.append(ConversationEntry(role=role, reasoner=reasoner[:120], text=shown))
    return out
