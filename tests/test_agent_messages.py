"""The conversation: agents publish what their models and offline paths said (agents.message), bounded and switchable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.crash.extractor import CrashExtractorAgent
from agents.mt.t_agent import TAgent
from bus import (
    AgentMessage,
    CasesDescribed,
    CasesSubmitted,
    CrashSubmitted,
    ErrorReported,
    MRAccepted,
    RulesSubmitted,
    Subjects,
    decode_event,
    encode_event,
)
from bus.events import MAX_MESSAGE_BYTES, CasesSubmittedPayload, CrashSubmittedPayload, RulesSubmittedPayload
from memory import MiniLMEmbedder
from runners.clients.rules import submit_and_collect
from runners.config import DrivemtConfig, load_config
from runners.host.daemon import Daemon
from tests.helpers import FIXTURES, Recorder, rule
from tools.common.artifacts import LocalArtifactStore
from tools.common.conversation import record, recording
from tools.common.llm import LLMSettings, ModelConfig
from tools.common.models import ConversationEntry, Provenance
from tools.crash.llm_extractor import LLMCrashExtractor
from tools.mt.describe import OFFLINE_DESCRIBER
from tools.mt.llm_describer import LLMDescriber
from tools.mt.synth.dataset import render_case, write_case
from tools.mt.synth.scene import SceneSpec

INFO = {"vision": False, "function_calling": True, "json_output": True, "structured_output": True, "family": "unknown"}
FOG = "If visibility is reduced to less than 50 meters due to fog, the speed must not exceed 50 km/h."
OFFLINE = "offline:ontology-grounded"


def _source() -> RulesSubmitted:
    return RulesSubmitted(producer="test", payload=RulesSubmittedPayload(rules=[rule(FOG, "de-01")]))


def _entry(role: str, text: str, reasoner: str = "openai:m1") -> ConversationEntry:
    return ConversationEntry(role=role, reasoner=reasoner, text=text)  # type: ignore[arg-type]


# -- the event and its bound ---------------------------------------------------------------------------------
def test_a_small_message_is_kept_whole_and_round_trips() -> None:
    """A short conversation is published as it is, on agents.messages.<agent>, with an id derived from its input."""
    src = _source()
    entries = [_entry("prompt", "Rule: fog"), _entry("decision", "fog environment (matched: fog)", OFFLINE)]
    msg = AgentMessage.bounded(src, agent="m-agent", entries=entries, item_id="de-01")
    assert msg.payload.entries == entries and not msg.payload.truncated
    assert msg.payload.reasoners == ["openai:m1", OFFLINE]
    assert msg.correlation_id == src.correlation_id and msg.causation_id == src.event_id
    assert msg.payload.input_event_id == src.event_id
    assert msg.event_id == AgentMessage.bounded(src, agent="m-agent", entries=entries, item_id="de-01").event_id
    assert msg.subject(Subjects("ns")) == "ns.agents.messages.m-agent"
    assert "ns.agents.messages.*" in Subjects("ns").result_subjects
    assert decode_event(encode_event(msg)) == msg
    assert msg.summary.startswith("m-agent (openai:m1, offline:ontology-grounded) on de-01: fog environment")


@pytest.mark.parametrize("filler", ["a", "ü", "→", '"\\', "\x01", "🚗"])
def test_long_conversations_are_cut_to_two_kilobytes(filler: str) -> None:
    """Whatever the text (multi-byte, escaped, control characters), the encoded event stays within 2 KB; long
    entries are cut first, so short decisions survive whole."""
    entries = [_entry("prompt", filler * 5000)] + [_entry("answer", filler * 400) for _ in range(30)]
    entries.append(_entry("decision", "accepted openai:m1's MR", "selfcheck:openai:judge"))
    msg = AgentMessage.bounded(_source(), agent="validator", entries=entries, item_id="x" * 500)
    data = encode_event(msg)
    assert len(data) <= MAX_MESSAGE_BYTES
    assert msg.payload.truncated
    assert msg.payload.entries[-1].text == "accepted openai:m1's MR"
    assert len(msg.payload.item_id or "") <= 200
    assert decode_event(data) == msg


def test_many_short_entries_are_dropped_not_cut_to_nothing() -> None:
    """When cutting would leave only a few characters each, entries are dropped instead, decisions last."""
    entries = [_entry("tool_call", f"ground_phrase(phrase='fog {i}')") for i in range(23)]
    entries.append(_entry("decision", "the decision", OFFLINE))
    msg = AgentMessage.bounded(_source(), agent="m-agent", entries=entries, max_bytes=1200)
    assert len(encode_event(msg)) <= 1200 and msg.payload.truncated
    assert msg.payload.entries[-1].text == "the decision"
    assert 0 < len(msg.payload.entries) < len(entries)
    assert all(e in entries for e in msg.payload.entries)  # dropped, not cut


def test_recording_is_off_outside_a_block_and_when_switched_off() -> None:
    """Tools record into the agent's current recording only; with the switch off nothing is kept."""
    record("decision", OFFLINE, "lost")
    with recording(active=False) as off:
        record("decision", OFFLINE, "lost too")
    with recording() as on:
        record("decision", OFFLINE, "kept " + "x" * 1000)
    assert off == [] and len(on) == 1 and on[0].text.endswith("…") and len(on[0].text) == 400


def test_the_switch_is_off_by_default() -> None:
    """conversation.enabled is off unless configured (DRIVEMT_CONVERSATION__ENABLED=true turns it on)."""
    assert load_config().conversation.enabled is False


# -- through a daemon ---------------------------------------------------------------------------------------
async def test_offline_parser_says_what_it_matched(
    config: DrivemtConfig, embedder: MiniLMEmbedder, sample_rules: list[dict]
) -> None:
    """With the switch on, every rule gets one M-Agent message naming the matched terms (and one from the
    Validator with its verdict), each within 2 KB, on the results stream for clients that catch up later."""
    cfg = config.model_copy(update={"conversation": config.conversation.model_copy(update={"enabled": True})})
    rules = [rule(str(r["text"]), str(r["id"])) for r in sample_rules]
    async with Daemon(cfg, embedder=embedder) as daemon:
        assert daemon.bus is not None
        subjects = daemon.bus.subjects
        rec = await Recorder().watch(daemon.bus, subjects.all_agent_messages)
        summary = await submit_and_collect(daemon.bus, rules, timeout=60)
        await rec.wait_for(lambda evs: len(evs) >= 2 * len(rules))
        stored = await daemon.bus.js.stream_info(subjects.streams.results, subjects_filter=subjects.all_agent_messages)
    assert summary.counts()["accepted"] == len(rules)
    assert stored.state.subjects == {subjects.agent_messages(a): len(rules) for a in ("m-agent", "validator")}
    assert all(len(data) <= MAX_MESSAGE_BYTES for _, data in rec.raw)
    by_agent: dict[str, dict[str, AgentMessage]] = {}
    for subject, data in rec.raw:
        msg = decode_event(data)
        assert isinstance(msg, AgentMessage) and subject == subjects.agent_messages(msg.payload.agent)
        assert msg.correlation_id == summary.correlation_id
        by_agent.setdefault(msg.payload.agent, {})[msg.payload.item_id or ""] = msg
    assert set(by_agent) == {"m-agent", "validator"}
    assert set(by_agent["m-agent"]) == set(by_agent["validator"]) == {r.id for r in rules}
    fog = by_agent["m-agent"]["de-01"].payload
    assert fog.reasoners == [OFFLINE] and {e.role for e in fog.entries} == {"decision"}
    assert "fog environment (matched: fog)" in fog.entries[0].text
    assert "road type any roads (no specific place named)" in fog.entries[0].text
    verdict = by_agent["validator"]["de-01"].payload
    assert verdict.entries[-1].text.startswith("accepted offline:ontology-grounded's [any roads | replaces")
    accepted = summary.results["de-01"].event
    assert isinstance(accepted, MRAccepted)
    assert by_agent["validator"]["de-01"].causation_id == accepted.causation_id


async def test_switched_off_no_message_is_published(config: DrivemtConfig, embedder: MiniLMEmbedder) -> None:
    """With the switch off (the default), the agents publish no agents.message."""
    async with Daemon(config, embedder=embedder) as daemon:
        assert daemon.bus is not None
        subjects = daemon.bus.subjects
        rec = await Recorder().watch(daemon.bus, subjects.all_agent_messages)
        summary = await submit_and_collect(
            daemon.bus, [rule(FOG, "de-01"), rule("Stop at red lights.", "r")], timeout=60
        )
        stored = await daemon.bus.js.stream_info(subjects.streams.results, subjects_filter=subjects.all_agent_messages)
    assert summary.counts()["accepted"] == 2
    assert rec.raw == [] and not stored.state.subjects


def _replay(*answers: str | CreateResult) -> ReplayChatCompletionClient:
    return ReplayChatCompletionClient(list(answers), model_info=INFO)  # type: ignore[arg-type]


async def test_llm_prompts_answers_and_tool_calls_are_published(
    config: DrivemtConfig, embedder: MiniLMEmbedder
) -> None:
    """A model parser's prompt, tool call, tool result and answer, labelled with the model, beside the offline
    parser's decision; the model validator's questions and answers in the Validator's message."""
    draft = json.dumps(
        {
            "road_type": "any roads",
            "manipulation_term": "fog environment",
            "verb": "replaces",
            "manipulation": "the weather into fog environment",
            "expected_behavior": "slow down",
        }
    )
    call = CreateResult(
        finish_reason="function_calls",
        content=[
            FunctionCall(
                id="c1",
                name="ground_phrase",
                arguments='{"phrase": "fog", "field": "manipulation", "region": "germany"}',
            )
        ],
        usage=RequestUsage(prompt_tokens=10, completion_tokens=5),
        cached=False,
    )
    parser, judge = _replay(call, draft), _replay(*['{"answers": ["yes", "yes", "yes"]}'] * 4)
    llm = LLMSettings(
        parsers=[ModelConfig(provider="openai", model="m1")],
        validator=ModelConfig(provider="anthropic", model="judge"),
        include_offline_parser=True,
    )
    cfg = config.model_copy(
        update={"llm": llm, "conversation": config.conversation.model_copy(update={"enabled": True})}
    )
    clients = {"openai:m1": parser, "anthropic:judge": judge}
    async with Daemon(cfg, embedder=embedder, model_clients=clients) as daemon:
        assert daemon.bus is not None
        rec = await Recorder().watch(daemon.bus, daemon.bus.subjects.all_agent_messages)
        summary = await submit_and_collect(daemon.bus, [rule(FOG, "de-01")], timeout=60)
        await rec.wait_for(lambda evs: len(evs) >= 2)
    assert isinstance(summary.results["de-01"].event, MRAccepted)
    msgs = {m.payload.agent: m.payload for m in rec.of(AgentMessage)}  # type: ignore[attr-defined]
    m = msgs["m-agent"]
    assert m.reasoners == ["openai:m1", OFFLINE]
    model = [(e.role, e.text) for e in m.entries if e.reasoner == "openai:m1"]
    assert [role for role, _ in model] == ["prompt", "tool_call", "tool_result", "answer"]
    assert FOG[:40] in model[0][1] and len(model[0][1]) <= 400  # the excerpt shows the rule inside the long prompt
    assert model[1][1].startswith("ground_phrase(") and '"fog"' in model[1][1]
    assert model[2][1].startswith("ground_phrase -> ") and "fog environment" in model[2][1]
    assert '"manipulation_term":"fog environment"' in model[3][1]
    assert [e.role for e in m.entries if e.reasoner == OFFLINE] == ["decision"]  # offline is never called a model
    v = msgs["validator"]
    asked = [e for e in v.entries if e.reasoner == "selfcheck:anthropic:judge"]
    assert {"prompt", "answer", "decision"} <= {e.role for e in asked}
    assert any(e.text.startswith(f'Traffic rule: """{FOG[:40]}') for e in asked if e.role == "prompt")
    assert all(len(encode_event(x)) <= MAX_MESSAGE_BYTES for x in rec.of(AgentMessage))


# -- the crash extractor -------------------------------------------------------------------------------------
async def test_crash_extractor_message_names_the_model_and_the_offline_fallback() -> None:
    """A model whose answers run out: its prompt and answer are in the message, then the offline rules' scenario,
    named as offline."""
    summary = (FIXTURES / "crashes" / "119839" / "summary.txt").read_text(encoding="utf-8")
    meta = json.dumps(
        {
            "reasoning": "V1 travels east; V2 comes north and turns left.",
            "road_type": "T-intersection",
            "vehicle_count": 2,
            "vehicles": [{"id": "V1", "direction": "W2E"}, {"id": "V2", "direction": "S2N"}],
        }
    )
    agent = CrashExtractorAgent(
        templates=None,
        provenance=Provenance(config_hash="h", ontology_hash="", models=[], seed=0),
        llm=LLMCrashExtractor(model_client=_replay(meta), label="openai:gpt-4o"),
        conversation=True,
    )
    event = CrashSubmitted(producer="test", payload=CrashSubmittedPayload(case_id="119839", summary=summary))
    out = await agent.handle(event)
    assert [e.type for e in out] == ["scenarios.extracted", "agents.message"]
    msg = out[1]
    assert isinstance(msg, AgentMessage) and msg.payload.item_id == "119839"
    assert msg.payload.reasoners == ["openai:gpt-4o", "offline:crash-rules"]
    roles = [(e.reasoner, e.role) for e in msg.payload.entries]
    assert roles[:2] == [("openai:gpt-4o", "prompt"), ("openai:gpt-4o", "answer")]
    assert roles[-2:] == [("offline:crash-rules", "decision")] * 2
    assert msg.payload.entries[-2].text.startswith("T-intersection: V1 ")
    assert "the model openai:gpt-4o's answer was unusable" in msg.payload.entries[-1].text
    assert len(encode_event(msg)) <= MAX_MESSAGE_BYTES
    quiet = CrashExtractorAgent(templates=None, provenance=agent.provenance)
    assert [e.type for e in await quiet.handle(event)] == ["scenarios.extracted"]


# -- the T-Agent ---------------------------------------------------------------------------------------------
async def test_t_agent_message_shows_the_vision_model_and_the_offline_describer(tmp_path: Path) -> None:
    """A vision model's prompt (its frames as markers) and answer, then the description settled on; without a
    model, the offline describer's decision, named as offline."""
    store = LocalArtifactStore(tmp_path / "runs")
    spec = SceneSpec(seed=4, road="straight", time="day", weather="clear", cruise_kmh=45.0)
    case = write_case(store, "street", render_case(spec, width=192, height=96), prefix="src")
    answer = json.dumps(
        {"reasoning": "Daylight, a straight street.", "time": "day", "weather": "clear", "road_type": "any roads"}
    )
    client = ReplayChatCompletionClient([answer], model_info={**INFO, "vision": True})  # type: ignore[arg-type]
    event = CasesSubmitted(producer="test", payload=CasesSubmittedPayload(cases=[case], region="germany"))
    agent = TAgent(store=store, llm=LLMDescriber(model_client=client, label="replay:vlm"), conversation=True)
    described, msg = await agent.handle(event)
    assert isinstance(described, CasesDescribed) and isinstance(msg, AgentMessage)
    assert msg.payload.item_id == case.case_id and msg.payload.reasoners == ["replay:vlm"]
    entries = msg.payload.entries
    assert [e.role for e in entries] == ["prompt", "answer", "decision"]
    assert entries[0].text.startswith("[3 images] These are the first, middle and last frames")
    assert '"reasoning":"Daylight, a straight street."' in entries[1].text
    assert entries[2].text.startswith("day, clear, road type any roads")
    offline = await TAgent(store=store, conversation=True).handle(event)
    assert isinstance(offline[1], AgentMessage)
    assert offline[1].payload.reasoners == [OFFLINE_DESCRIBER] and offline[1].payload.entries[0].role == "decision"
    assert [e.type for e in await TAgent(store=store).handle(event)] == ["cases.described"]


async def test_t_agent_reports_a_case_it_cannot_describe_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Frames one pixel high, and a describer that fails on a case's frames, are each an error event naming that
    case (which travels on undescribed, with the reason); the other cases of the event are described."""
    import cv2
    import numpy as np

    import agents.mt.t_agent as t_agent

    store = LocalArtifactStore(tmp_path / "runs")
    spec = SceneSpec(seed=4, road="straight", time="day", weather="clear", cruise_kmh=45.0)
    good = write_case(store, "good", render_case(spec, width=160, height=80))
    odd = write_case(store, "odd", render_case(spec, width=160, height=80))
    strip = write_case(store, "strip", render_case(spec, width=160, height=80))
    for ref in strip.frames:
        store.put(ref, cv2.imencode(".png", np.zeros((1, 160, 3), np.uint8))[1].tobytes())
    offline = t_agent.describe_offline

    def failing_on_odd(case: object, frames: object) -> object:
        if case.case_id == "odd":  # type: ignore[attr-defined]
            raise ValueError("the statistics broke")
        return offline(case, frames)  # type: ignore[arg-type]

    monkeypatch.setattr(t_agent, "describe_offline", failing_on_odd)
    event = CasesSubmitted(producer="test", payload=CasesSubmittedPayload(cases=[strip, odd, good], region="germany"))
    out = await TAgent(store=store).handle(event)
    errors = {e.payload.item_id: e.payload.reason for e in out if isinstance(e, ErrorReported)}
    assert set(errors) == {"strip", "odd"}
    assert "160x1 pixels" in errors["strip"] and "the statistics broke" in errors["odd"]
    described = {e.payload.case.case_id: e.payload for e in out if isinstance(e, CasesDescribed)}
    assert described["good"].description is not None and not described["good"].problem
    assert described["strip"].description is None and "160x1" in (described["strip"].problem or "")
    assert described["odd"].description is None and "cannot be described" in (described["odd"].problem or "")
