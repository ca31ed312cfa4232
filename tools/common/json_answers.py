"""Answers as JSON from models without structured output (Anthropic's autogen client, many local servers).

A model whose ``model_info`` has no ``structured_output`` is asked for one JSON object following the answer type's
schema, in the prompt; its text answer is read back here, fenced or not, and checked against the same pydantic type
that structured output would have used, so both paths accept exactly the same answers.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["answer_problems", "json_answer_instructions", "parse_json_answer", "uses_structured_output"]

Answer = TypeVar("Answer", bound=BaseModel)


def uses_structured_output(model_client: Any) -> bool:
    """Whether a client takes an output type (structured output); otherwise the schema goes into the prompt."""
    return bool(model_client.model_info.get("structured_output"))


def json_answer_instructions(schema: dict[str, Any]) -> str:
    """For models without structured output: the JSON schema the answer must follow."""
    return "Answer with one JSON object only, no other text, that follows this JSON schema:\n" + json.dumps(
        schema, separators=(",", ":")
    )


def answer_problems(exc: ValidationError) -> list[str]:
    """What is wrong with an answer, one line per field (at most 8), with the value given when it is short."""
    out = []
    for err in exc.errors()[:8]:
        loc = ".".join(str(p) for p in err["loc"]) or "(the answer)"
        got = err.get("input")
        shown = ""
        if err["type"] != "missing" and isinstance(got, str | int | float | bool) and len(repr(got)) <= 60:
            shown = f" (got {got!r})"
        out.append(f"{loc}: {err['msg']}{shown}")
    return out


def parse_json_answer(text: str, answer_type: type[Answer]) -> tuple[Answer | None, list[str]]:
    """The answer in a model's text: the first JSON object in it (a fenced block first) that fits ``answer_type``,
    whatever prose or other braces surround it; or None and what was wrong with the first object found."""
    fenced = re.findall(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    decoder = json.JSONDecoder()
    first_problems: list[str] | None = None
    for body in [*fenced, text]:
        for start in (m.start() for m in re.finditer(r"\{", body)):
            try:
                value, _ = decoder.raw_decode(body, start)
            except ValueError:
                continue
            if not isinstance(value, dict):
                continue
            try:
                return answer_type.model_validate(value), []
            except ValidationError as exc:
                if first_problems is None:
                    first_problems = answer_problems(exc)
    return None, first_problems if first_problems is not None else ["the answer holds no JSON object"]
