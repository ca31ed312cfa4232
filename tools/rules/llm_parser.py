"""The LLM rule parser: an autogen ``AssistantAgent`` that follows AutoMT's step-by-step prompt.

Its output is structured and constrained to the ontology: road type, manipulation term and behaviour
are ``Literal`` types built from the region's vocabulary, so a schema-following model cannot leave
it, and the answer is checked again on arrival. The rule tools (ontology lists, phrase grounding,
the rule's own terms) are handed to the agent as function tools.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from tools.common.conversation import record_autogen
from tools.common.json_answers import json_answer_instructions, parse_json_answer, uses_structured_output
from tools.common.registry import registry
from tools.common.text import normalise_phrase
from tools.errors import LLMResponseError
from tools.rules.models import MRCandidate, MRFields, TrafficRule
from tools.rules.ontology import Ontology, Vocabulary
from tools.rules.prompts import M_AGENT_SYSTEM, m_agent_task
from tools.rules.tools import RULE_TOOLS, RuleToolContext

__all__ = ["LLMRuleParser", "mr_draft_model"]


@cache
def _draft_model(
    road_types: tuple[str, ...], manipulations: tuple[str, ...], behaviours: tuple[str, ...]
) -> type[BaseModel]:
    # Literal types built at run time from the ontology: mypy cannot follow them, pydantic can.
    fields: dict[str, Any] = {
        "road_type": (Literal[road_types], Field(description="One road type from the ontology.")),
        "manipulation_term": (Literal[manipulations], Field(description="The ontology term of the manipulation.")),
        "verb": (Literal["adds", "replaces"], Field(description="adds for optional objects, replaces for conditions.")),
        "manipulation": (
            str,
            Field(description="Minimal phrase containing the term, e.g. 'a steady red light on the roadside'."),
        ),
        "expected_behavior": (Literal[behaviours], Field(description="One expected behaviour from the ontology.")),
    }
    model: type[BaseModel] = create_model("MRDraft", **fields)
    return model


def mr_draft_model(vocabulary: Vocabulary) -> type[BaseModel]:
    """The structured-output model for one region: every field but the phrase is an ontology ``Literal``."""
    return _draft_model(
        tuple(t.text for t in vocabulary.road_types),
        tuple(t.text for t in vocabulary.manipulations),
        tuple(t.text for t in vocabulary.behaviors),
    )


class LLMRuleParser:
    """One model as a rule parser.

    Args:
        model_client: An autogen ``ChatCompletionClient`` (OpenAI, Anthropic, OpenAI-compatible, or replay in tests).
        label: ``provider:model``, recorded with every candidate.
        ontology: The MR ontology.
        tool_context: Context for the rule tools handed to the agent.
        use_tools: Hand the rule tools to the agent (needs a model with function calling).
    """

    kind = "llm"

    def __init__(
        self,
        *,
        model_client: Any,
        label: str,
        ontology: Ontology,
        tool_context: RuleToolContext,
        use_tools: bool = True,
    ) -> None:
        self.model_client = model_client
        self.label = label
        self.ontology = ontology
        self.tool_context = tool_context
        self.use_tools = use_tools and bool(model_client.model_info.get("function_calling"))

    @property
    def name(self) -> str:
        """Parser name recorded with candidates."""
        return self.label

    async def parse(self, rule: TrafficRule) -> list[MRCandidate]:
        """Ask the model for the rule's MR.

        Raises:
            LLMResponseError: If the answer is not a structured MR inside the ontology.
        """
        from autogen_agentchat.agents import AssistantAgent
        from autogen_agentchat.messages import StructuredMessage, TextMessage

        vocab = self.ontology.vocabulary(rule.region)
        draft_type = mr_draft_model(vocab)
        structured = uses_structured_output(self.model_client)
        task = m_agent_task(rule.text, vocab)
        if not structured:  # (Anthropic's client, many local servers): the schema goes into the prompt
            task = f"{task}\n\n{json_answer_instructions(draft_type.model_json_schema())}"
        agent = AssistantAgent(
            name="m_agent",
            model_client=self.model_client,
            system_message=M_AGENT_SYSTEM,
            tools=list(registry.autogen_tools(RULE_TOOLS, self.tool_context)) if self.use_tools else None,
            output_content_type=draft_type if structured else None,
            reflect_on_tool_use=True,
            max_tool_iterations=3,
        )
        try:
            result = await agent.run(task=task)
        except Exception as exc:  # the model's answer failed to validate, or the provider failed
            raise LLMResponseError(self.label, f"{type(exc).__name__}: {exc}") from exc
        record_autogen(self.label, result.messages, focus=rule.text)
        final = result.messages[-1] if result.messages else None
        if isinstance(final, StructuredMessage):
            return [self._candidate(final.content, vocab)]
        if not structured and isinstance(final, TextMessage):
            draft, problems = parse_json_answer(final.content, draft_type)
            if draft is None:
                raise LLMResponseError(self.label, "; ".join(problems))
            return [self._candidate(draft, vocab)]
        raise LLMResponseError(self.label, f"expected a structured MR, got {type(final).__name__}")

    def _candidate(self, draft: Any, vocab: Vocabulary) -> MRCandidate:
        term = vocab.lookup("manipulation", draft.manipulation_term)
        if term is None:  # the Literal type makes this unreachable unless the ontology changed meanwhile
            raise LLMResponseError(self.label, f"manipulation term {draft.manipulation_term!r} not in the ontology")
        phrase = draft.manipulation.strip() or term.text
        if vocab.canonical("manipulation", phrase) != term.normalised:
            # The phrase wandered from the chosen term: keep the term, drop the decoration.
            phrase = term.text
        return MRCandidate(
            mr=MRFields(
                road_type=draft.road_type,
                verb=draft.verb,
                manipulation=phrase,
                expected_behavior=draft.expected_behavior,
            ),
            parser=self.label,
            confidence=0.7,
            evidence={
                "manipulation": draft.manipulation_term,
                "road_type": draft.road_type,
                "expected_behavior": normalise_phrase(draft.expected_behavior),
            },
        )
