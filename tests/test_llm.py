"""LLM paths through autogen's ReplayChatCompletionClient: the real agent code, recorded model answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient

from bus import MRAccepted
from memory import MiniLMEmbedder
from runners.clients.rules import submit_and_collect
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import rule
from tools.common.llm import LLMSettings, ModelConfig, build_model_client
from tools.errors import LLMConfigurationError
from tools.rules.llm_ontology import propose_terms
from tools.rules.llm_parser import LLMRuleParser, mr_draft_model
from tools.rules.offline_parser import OntologyGroundedParser
from tools.rules.ontology import Ontology
from tools.rules.tools import RuleToolContext
from tools.rules.validation import OfflineValidator

INFO = {"vision": False, "function_calling": True, "json_output": True, "structured_output": True, "family": "unknown"}
FOG = "If visibility is reduced to less than 50 meters due to fog, the speed must not exceed 50 km/h."


def draft(road: str, term: str, verb: str, phrase: str, beh: str) -> str:
    return json.dumps(
        {"road_type": road, "manipulation_term": term, "verb": verb, "manipulation": phrase, "expected_behavior": beh}
    )


def tool_call(name: str, **arguments: object) -> CreateResult:
    return CreateResult(
        finish_reason="function_calls",
        content=[FunctionCall(id="call-1", name=name, arguments=json.dumps(arguments))],
        usage=RequestUsage(prompt_tokens=10, completion_tokens=5),
        cached=False,
    )


def replay(*answers: str | CreateResult) -> ReplayChatCompletionClient:
    return ReplayChatCompletionClient(list(answers), model_info=INFO)  # type: ignore[arg-type]


@pytest.fixture
def tool_context(ontology: Ontology) -> RuleToolContext:
    parser = OntologyGroundedParser(ontology=ontology)
    return RuleToolContext(ontology, parser, OfflineValidator(ontology=ontology, parser=parser))


async def test_three_parsers_and_a_validator_through_the_daemon(
    config: DrivemtConfig, embedder: MiniLMEmbedder
) -> None:
    """Three model parsers run in parallel, a model validates each candidate, the lowest hallucination wins."""
    p1 = replay(draft("any roads", "fog environment", "replaces", "the weather into fog environment", "slow down"))
    p2 = replay(
        tool_call("ground_phrase", phrase="fog", field="manipulation", region="germany"),
        draft("any roads", "rain environment", "replaces", "the weather into rain environment", "slow down"),
    )
    p3 = replay("this is not JSON")
    validator = replay('{"answers": ["yes", "yes", "yes"]}', '{"answers": ["no", "yes", "no"]}')
    llm = LLMSettings(
        parsers=[ModelConfig(provider="openai", model=f"m{i}") for i in (1, 2, 3)],
        validator=ModelConfig(provider="anthropic", model="judge"),
        include_offline_parser=False,
    )
    cfg = config.model_copy(update={"llm": llm})
    clients = {"openai:m1": p1, "openai:m2": p2, "openai:m3": p3, "anthropic:judge": validator}
    async with Daemon(cfg, embedder=embedder, model_clients=clients) as daemon:
        assert daemon.bus is not None
        summary = await submit_and_collect(daemon.bus, [rule(FOG, "de-01")], timeout=60)
    event = summary.results["de-01"].event
    assert isinstance(event, MRAccepted)
    payload = event.payload
    assert payload.winner.candidate.parser == "openai:m1"
    assert payload.winner.candidate.mr.manipulation == "the weather into fog environment"
    assert payload.winner.score == 1.0
    scores = {c.candidate.parser: c.score for c in payload.candidates}
    assert scores["openai:m2"] == pytest.approx(1 / 3, abs=1e-3)
    assert "openai:m3" not in scores
    assert set(payload.provenance.models) >= {"openai:m1", "openai:m2", "openai:m3", "selfcheck:anthropic:judge"}
    # The real prompts went out: the rule and the ontology lists; the tool ran and its result went back.
    prompt = p1.create_calls[0]["messages"][-1].content
    assert FOG in prompt and "railroad crossings" in prompt and "fog environment (replaces)" in prompt
    assert p1.create_calls[0]["json_output"] is mr_draft_model(daemon.pipeline.ontology.vocabulary("germany"))  # type: ignore[union-attr]
    tool_result = p2.create_calls[1]["messages"][-1].content[0]
    assert tool_result.name == "ground_phrase" and "fog environment" in tool_result.content
    assert "Is the traffic rule supported by the MR?" in validator.create_calls[0]["messages"][-1].content


async def test_the_rule_parser_asks_a_real_openai_client(ontology: Ontology, tool_context: RuleToolContext) -> None:
    """Through the OpenAI SDK itself (a local server answering): the rule tools go out as strict function tools beside
    the MR draft's JSON schema, which the SDK refuses to combine with tools that are not, and the answer is parsed."""
    from tests.openai_stub import StubAnswer, openai_stub

    answer = draft("any roads", "fog environment", "replaces", "fog environment", "slow down")
    with openai_stub(StubAnswer(answer)) as stub:
        client = build_model_client(ModelConfig(provider="openai", model="gpt-4o-mini", base_url=stub.base_url))
        parser = LLMRuleParser(
            model_client=client, label="openai:gpt-4o-mini", ontology=ontology, tool_context=tool_context
        )
        (cand,) = await parser.parse(rule(FOG))
    assert cand.mr.manipulation == "fog environment" and cand.parser == "openai:gpt-4o-mini"
    (sent,) = stub.requests
    assert sent["response_format"]["type"] == "json_schema"
    tools = {t["function"]["name"]: t["function"] for t in sent["tools"]}
    assert set(tools) == {"ontology_terms", "ground_phrase", "find_rule_terms"}
    assert all(t["strict"] and t["parameters"]["additionalProperties"] is False for t in tools.values())


async def test_a_parser_that_fails_is_reported_not_hidden(config: DrivemtConfig, embedder: MiniLMEmbedder) -> None:
    """A model parser that cannot answer is named in the result and the summary, beside the offline parser's MR;
    without another parser the rule is an error (the model failed), not a rejection of the rule."""
    broken = [ModelConfig(provider="openai", model="broken")] * 2  # (two parsers of one label: one failure per rule)
    for offline in (True, False):
        llm = LLMSettings(parsers=broken, validator=None, include_offline_parser=offline)
        cfg = config.model_copy(update={"llm": llm})
        async with Daemon(cfg, embedder=embedder, model_clients={"openai:broken": replay("not JSON at all")}) as daemon:
            assert daemon.bus is not None
            summary = await submit_and_collect(daemon.bus, [rule(FOG, "de-01")], timeout=60)
        (row,) = summary.rows()
        assert {f["parser"] for f in row["parser_failures"]} == {"openai:broken"}, row
        (line,) = summary.failure_lines()
        assert line.startswith("parser openai:broken failed on 1 of 1 rule(s)"), line
        expected = {"accepted": 1, "rejected": 0, "error": 0} if offline else {"accepted": 0, "rejected": 0, "error": 1}
        assert {k: summary.counts()[k] for k in expected} == expected, (offline, row)
        assert offline or row["error"].startswith("error: openai:broken"), row


async def test_each_step_s_model_keeps_its_own_settings(config: DrivemtConfig, embedder: MiniLMEmbedder) -> None:
    """One model name configured for two steps with their own timeout, retries or server gets a client each (they
    shared the first one built, whose settings then held for both)."""
    from runners.host.composition import Composition

    def model(url: str, timeout: float, retries: int) -> ModelConfig:
        return ModelConfig(provider="openai", model="gpt-4o", base_url=url, timeout_s=timeout, max_retries=retries)

    llm = LLMSettings(
        parsers=[model("http://127.0.0.1:9/v1", 20, 0), model("http://127.0.0.2:9/v1", 20, 0)],
        validator=model("http://127.0.0.1:9/v1", 300, 5),
    )
    comp = Composition(config.model_copy(update={"llm": llm}), embedder=embedder)
    try:
        first, second = (p.model_client._client for p in comp.llm_parsers)
        judge = comp.validator.model_client._client  # type: ignore[attr-defined]
        assert (first.timeout, first.max_retries, str(first.base_url)) == (20, 0, "http://127.0.0.1:9/v1/")
        assert str(second.base_url) == "http://127.0.0.2:9/v1/"
        assert (judge.timeout, judge.max_retries) == (300, 5)
    finally:
        await comp.close()


def test_an_older_event_s_offline_parser_finding_nothing_is_no_failure() -> None:
    """Events of a version before ParserFailure.failed (a dead letter retried after an upgrade): the offline parser
    finding nothing stays a rejection of the rule; a model's failure stays a failure."""
    from bus.events import MRRejectedPayload, ParserFailure
    from tools.common.models import Provenance

    old = ParserFailure.model_validate({"parser": "offline:ontology-grounded", "error": "no ontology term"})
    assert old.failed is False
    assert ParserFailure.model_validate({"parser": "openai:x", "error": "APIError: 500"}).failed is True
    provenance = Provenance(config_hash="c", ontology_hash="o")
    payload = MRRejectedPayload(rule=rule(FOG), reasons=["none"], candidates=[], provenance=provenance,
                                parser_failures=[old])  # fmt: skip
    assert not payload.model_failed()


async def test_models_without_structured_output_answer_in_json_text(
    ontology: Ontology, tool_context: RuleToolContext
) -> None:
    """Anthropic's client (and many local servers) take no output type: the parser and the validator then give the
    answer's JSON schema in the prompt and read the JSON from the text, checked as structured output would be (both
    refused every rule before asking)."""
    from tools.errors import LLMResponseError
    from tools.rules.llm_validator import LLMSelfCheckValidator

    text_only = INFO | {"structured_output": False}
    answer = draft("any roads", "fog environment", "replaces", "fog environment", "slow down")
    client = ReplayChatCompletionClient([f"Here is the MR:\n```json\n{answer}\n```"], model_info=text_only)  # type: ignore[arg-type]
    parser = LLMRuleParser(model_client=client, label="anthropic:x", ontology=ontology, tool_context=tool_context)
    (cand,) = await parser.parse(rule(FOG))
    assert cand.mr.manipulation == "fog environment" and cand.parser == "anthropic:x"
    asked = client.create_calls[0]
    assert asked["json_output"] is None and "follows this JSON schema" in asked["messages"][-1].content
    wrong = ReplayChatCompletionClient([draft("motorway", "fog environment", "replaces", "fog", "slow down")],
                                       model_info=text_only)  # type: ignore[arg-type]  # fmt: skip
    with pytest.raises(LLMResponseError, match="road_type"):
        await LLMRuleParser(
            model_client=wrong, label="anthropic:x", ontology=ontology, tool_context=tool_context
        ).parse(rule(FOG))
    # Prose with braces of its own around the answer, and answers in capitals, are read as the answer they hold.
    judge = ReplayChatCompletionClient(['For {rule}: {"answers": ["Yes", "no", "YES"]}'], model_info=text_only)  # type: ignore[arg-type]
    validator = LLMSelfCheckValidator(model_client=judge, label="anthropic:judge", offline=tool_context.validator)
    (verdict,) = await validator.validate(rule(FOG), [cand])
    assert [c.detail for c in verdict.checks if c.check.startswith("model:")] == ["1/1 yes", "0/1 yes", "1/1 yes"]


async def test_model_answers_outside_the_ontology_are_refused(
    ontology: Ontology, tool_context: RuleToolContext
) -> None:
    """A road type the ontology lacks fails structured-output validation and is reported, not stored."""
    from tools.errors import LLMResponseError

    parser = LLMRuleParser(
        model_client=replay(draft("motorway", "fog environment", "replaces", "fog", "slow down")),
        label="openai:x",
        ontology=ontology,
        tool_context=tool_context,
    )
    with pytest.raises(LLMResponseError, match="openai:x"):
        await parser.parse(rule(FOG))


async def test_wandering_phrase_falls_back_to_the_term(ontology: Ontology, tool_context: RuleToolContext) -> None:
    """A manipulation phrase that names another term is replaced by the chosen ontology term."""
    parser = LLMRuleParser(
        model_client=replay(draft("intersection", "red light", "adds", "a green arrow", "slow down")),
        label="openai:x",
        ontology=ontology,
        tool_context=tool_context,
    )
    (cand,) = await parser.parse(rule("Red orders: stop before the intersection."))
    assert cand.mr.manipulation == "red light"


async def test_ontology_proposals_drop_known_terms(ontology: Ontology) -> None:
    """A model's proposal keeps only terms the region does not have yet."""
    client = replay(
        json.dumps(
            {
                "road_types": ["Tunnel", "Roundabout"],
                "traffic_infrastructure": ["stop sign", "Variable message sign"],
                "object": ["Pedestrian"],
                "environment": ["Hail"],
            }
        )
    )
    proposal = await propose_terms(
        model_client=client,
        label="replay:x",
        ontology=ontology,
        region="germany",
        document="Rules about hail and roundabouts.",
    )
    assert proposal.road_types == ["Roundabout"]
    assert proposal.traffic_infrastructure == ["Variable message sign"]
    assert proposal.object == [] and proposal.environment == ["Hail"]
    assert "Rules about hail" in client.create_calls[0]["messages"][-1].content


def test_provider_configuration_errors() -> None:
    """A hosted model without its key, or a replay model without answers, is a clear configuration error."""
    with pytest.raises(LLMConfigurationError, match="OPENAI_API_KEY"):
        build_model_client(ModelConfig(provider="openai", model="gpt-4o-mini"), api_key=None)
    with pytest.raises(LLMConfigurationError, match="ANTHROPIC_API_KEY"):
        build_model_client(ModelConfig(provider="anthropic", model="claude-sonnet-4-20250514"), api_key=None)
    with pytest.raises(LLMConfigurationError, match="replay_file"):
        build_model_client(ModelConfig(provider="replay", model="x"))
    with pytest.raises(ValueError, match="needs llm.model"):
        LLMSettings(provider="openai")
    # A misspelt key is refused, not ignored (the key would have come from the default variable).
    with pytest.raises(ValueError, match="api_key_enf"):
        ModelConfig.model_validate({"provider": "openai", "model": "m", "api_key_enf": "MY_KEY"})
    with pytest.raises(ValueError, match="modle"):
        LLMSettings.model_validate({"provider": "openai", "modle": "m", "model": "m"})
    # The shorthand's own keys without the shorthand model would be ignored: refused; with it, they reach the model.
    judge = {"provider": "openai", "model": "j"}
    with pytest.raises(ValueError, match="llm.timeout_s belongs to the shorthand"):
        LLMSettings.model_validate({"provider": "openai", "parsers": [judge], "timeout_s": 30})
    (one,) = LLMSettings.model_validate({"provider": "openai", "model": "m", "max_retries": 0, "timeout_s": 30}).parsers
    assert (one.max_retries, one.timeout_s) == (0, 30)
    full = LLMSettings.model_validate(LLMSettings(parsers=[ModelConfig(**judge)]).model_dump())  # (a full dump)
    assert full.parsers[0].label == "openai:j"


async def test_a_model_that_does_not_answer_in_time_fails_in_time(
    ontology: Ontology, tool_context: RuleToolContext
) -> None:
    """A request past the model's timeout_s fails (after max_retries more tries) instead of waiting out the SDK's
    ten minutes; the shorthand carries the timeout and model_info to its model."""
    import time

    from tests.openai_stub import StubAnswer, openai_stub
    from tools.errors import LLMResponseError

    with openai_stub(
        StubAnswer(draft("any roads", "fog environment", "replaces", "fog", "slow down"), delay_s=30)
    ) as stub:
        llm = LLMSettings(provider="openai", model="local", base_url=stub.base_url, model_info=INFO, timeout_s=1.0)
        (model,) = llm.parsers
        assert model.timeout_s == 1.0 and model.model_info == INFO
        client = build_model_client(model.model_copy(update={"max_retries": 1}), api_key="k")
        parser = LLMRuleParser(model_client=client, label=model.label, ontology=ontology, tool_context=tool_context)
        start = time.monotonic()
        with pytest.raises(LLMResponseError, match="openai:local"):
            await parser.parse(rule(FOG))
        took = time.monotonic() - start
    assert took < 15, took
    assert len(stub.requests) == 2  # the first try and one retry


def test_providers_build_real_clients(tmp_path: Path) -> None:
    """OpenAI (also an OpenAI-compatible URL), Anthropic and replay clients are built from configuration."""
    from autogen_ext.models.anthropic import AnthropicChatCompletionClient
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    assert isinstance(
        build_model_client(ModelConfig(provider="openai", model="gpt-4o-mini"), api_key="k"), OpenAIChatCompletionClient
    )
    local = build_model_client(
        ModelConfig(provider="openai", model="llama3", base_url="http://127.0.0.1:11434/v1", model_info=INFO),
        api_key=None,
    )
    assert isinstance(local, OpenAIChatCompletionClient)
    assert isinstance(
        build_model_client(ModelConfig(provider="anthropic", model="claude-sonnet-4-20250514"), api_key="k"),
        AnthropicChatCompletionClient,
    )
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(["hello"]))
    assert isinstance(
        build_model_client(ModelConfig(provider="replay", model="r", replay_file=answers)), ReplayChatCompletionClient
    )
    shorthand = LLMSettings(provider="openai", model="gpt-4o-mini")
    assert [p.label for p in shorthand.parsers] == ["openai:gpt-4o-mini"] and shorthand.validator is not None
