"""The LLM validator: AutoMT's SelfCheckGPT-style questions asked to a model.

For each candidate the model answers the three yes/no questions, ``samples`` times; the
hallucination score is the share of "no" answers. The deterministic ontology checks of the offline
validator's ontology checks still apply (an MR outside the ontology is never accepted, whatever a model
says); whether the rule grounds each element is the model's call, since a model may rightly see what the
lexicon does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from tools.common.conversation import record_autogen
from tools.common.json_answers import json_answer_instructions, parse_json_answer, uses_structured_output
from tools.errors import LLMResponseError
from tools.rules.models import CheckResult, MRCandidate, TrafficRule, Verdict
from tools.rules.prompts import VALIDATOR_SYSTEM, validator_task
from tools.rules.validation import ONTOLOGY_CHECKS, QUESTIONS, OfflineValidator

__all__ = ["LLMSelfCheckValidator", "SelfCheckAnswers"]


class SelfCheckAnswers(BaseModel):
    """The model's answers to the three questions, in order."""

    answers: list[Literal["yes", "no"]] = Field(min_length=3, max_length=3)

    @field_validator("answers", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:  # ("Yes", " no ": the answer, not its spelling)
        return [v.strip().lower() if isinstance(v, str) else v for v in value] if isinstance(value, list) else value


class LLMSelfCheckValidator:
    """Validator that asks a model.

    Args:
        model_client: An autogen ``ChatCompletionClient``.
        label: ``provider:model``.
        offline: The offline validator whose hard (ontology) checks still apply.
        samples: Answers sampled per candidate.
        min_score: Least ``1 - hallucination`` for acceptance.
    """

    def __init__(
        self, *, model_client: Any, label: str, offline: OfflineValidator, samples: int = 1, min_score: float = 0.6
    ) -> None:
        self.model_client = model_client
        self.label = label
        self.offline = offline
        self.samples = samples
        self.min_score = min_score

    @property
    def name(self) -> str:
        """Validator name recorded with verdicts."""
        return f"selfcheck:{self.label}"

    async def _ask(self, rule: TrafficRule, cand: MRCandidate) -> list[str]:
        from autogen_agentchat.agents import AssistantAgent
        from autogen_agentchat.messages import StructuredMessage, TextMessage

        structured = uses_structured_output(self.model_client)
        task = validator_task(rule.text, cand.gherkin)
        if not structured:  # (Anthropic's client, many local servers): the schema goes into the prompt
            task = f"{task}\n\n{json_answer_instructions(SelfCheckAnswers.model_json_schema())}"
        agent = AssistantAgent(
            name="validator",
            model_client=self.model_client,
            system_message=VALIDATOR_SYSTEM,
            output_content_type=SelfCheckAnswers if structured else None,
        )
        try:
            result = await agent.run(task=task)
        except Exception as exc:
            raise LLMResponseError(self.label, f"{type(exc).__name__}: {exc}") from exc
        record_autogen(self.name, result.messages)
        final = result.messages[-1] if result.messages else None
        if isinstance(final, StructuredMessage):
            return list(final.content.answers)
        if not structured and isinstance(final, TextMessage):
            answers, problems = parse_json_answer(final.content, SelfCheckAnswers)
            if answers is None:
                raise LLMResponseError(self.label, "yes/no answers expected: " + "; ".join(problems))
            return list(answers.answers)
        raise LLMResponseError(self.label, "expected yes/no answers")

    async def validate(self, rule: TrafficRule, candidates: Sequence[MRCandidate]) -> list[Verdict]:
        """Judge every candidate of one rule; candidates are asked about in order."""
        analysis = self.offline.parser.analyse(rule)
        verdicts = []
        for cand in candidates:
            hard = [c for c in self.offline.checks(analysis, cand) if c.check in ONTOLOGY_CHECKS]
            answers: list[list[str]] = [await self._ask(rule, cand) for _ in range(self.samples)]
            checks = list(hard)
            for qi, question in enumerate(QUESTIONS):
                votes = [a[qi] for a in answers]
                yes = votes.count("yes")
                checks.append(
                    CheckResult(
                        question=question,
                        check=f"model: {QUESTIONS[question]}",
                        passed=yes * 2 > len(votes),
                        detail=f"{yes}/{len(votes)} yes",
                    )
                )
            no_share = sum(a.count("no") for a in answers) / (3 * len(answers))
            hard_fail = any(not c.passed for c in hard)
            verdicts.append(
                Verdict(
                    candidate=cand,
                    hallucination=round(no_share, 4),
                    checks=checks,
                    validator=self.name,
                    accepted=(not hard_fail) and (1.0 - no_share) >= self.min_score,
                )
            )
        return verdicts
