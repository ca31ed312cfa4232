"""The LLM crash extractor (SAFE's Algorithm 1) through autogen's ReplayChatCompletionClient: real agents, recorded answers."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from autogen_core import Image
from autogen_core.models import UserMessage
from autogen_ext.models.replay import ReplayChatCompletionClient
from PIL import Image as PILImage
from PIL import ImageDraw

from agents.crash.extractor import CrashExtractorAgent
from bus import CrashSubmitted, ScenarioExtracted
from bus.events import CrashSubmittedPayload
from memory import MiniLMEmbedder
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import FIXTURES, Recorder
from tools.common.llm import LLMSettings, ModelConfig, crash_extractor_model
from tools.common.models import Provenance
from tools.crash.files import CrashReport, NotACrashReportError
from tools.crash.llm_extractor import LLMCrashExtractor, MetaMessage, ScenarioDraft
from tools.crash.templates import ScenarioTemplate, packaged_templates

LABEL = "openai:gpt-4o"
SUMMARY = (FIXTURES / "crashes" / "119839" / "summary.txt").read_text(encoding="utf-8")


def info(*, vision: bool, structured: bool = True) -> dict[str, Any]:
    return {
        "vision": vision,
        "function_calling": True,
        "json_output": structured,
        "structured_output": structured,
        "family": "unknown",
    }


def replay(*answers: str, vision: bool = False, structured: bool = True) -> ReplayChatCompletionClient:
    return ReplayChatCompletionClient(list(answers), model_info=info(vision=vision, structured=structured))  # type: ignore[arg-type]


def meta(road: str = "T-intersection", vehicles: tuple[tuple[str, str], ...] = (("V1", "W2E"), ("V2", "S2N"))) -> str:
    return json.dumps(
        {
            "reasoning": "V1 travels east on the main road; V2 comes north on the stem and turns left.",
            "road_type": road,
            "vehicle_count": len(vehicles),
            "vehicles": [{"id": v, "direction": d} for v, d in vehicles],
        }
    )


GOOD_DSL: dict[str, Any] = {
    "reasoning": "A T-intersection: five-lane main road with a centre turn lane, two-lane stem to the south.",
    "road_network": {
        "road_type": "T-intersection",
        "main_lanes": 5,
        "main_ways": 2,
        "branch_lanes": 2,
        "branch_ways": 2,
        "stem_direction": "S",
        "centre_turn_lane": True,
    },
    "actors": [
        {
            "id": "V1",
            "body_type": "Minivan",
            "description": "1999 Ford Windstar",
            "initial_position": "W2E",
            "lane": 2,
            "actions": ["Move forward"],
            "speed_limit_mph": 35,
        },
        {
            "id": "V2",
            "body_type": "SUV",
            "description": "2005 Jeep Grand Cherokee",
            "initial_position": "S2N",
            "lane": 1,
            "actions": ["Turn left"],
            "speed_limit_mph": None,
        },
    ],
    "env": {"time": "Daytime", "weather": "Clear"},
    "collisions": [{"first": "V2", "second": "V1"}],
    "assumptions": ["the posted limit of the main road is 35 mph"],
}


def dsl(**changes: Any) -> str:
    """The good DSL answer with some parts replaced (``actor_1={...}`` updates the second actor)."""
    data = copy.deepcopy(GOOD_DSL)
    for key, value in changes.items():
        if key.startswith("actor_"):
            data["actors"][int(key[6:])].update(value)
        elif key == "road_network":
            data["road_network"].update(value)
        else:
            data[key] = value
    return json.dumps(data)


def report(sketch: Path | str | None = None) -> CrashReport:
    return CrashReport(case_id="119839", summary=SUMMARY, sketch=str(sketch) if sketch else None)


def last_user(call: dict[str, Any]) -> UserMessage:
    (message,) = [m for m in call["messages"] if isinstance(m, UserMessage)][-1:]
    return message


@pytest.fixture
def sketch(tmp_path: Path) -> Path:
    """A small drawn scene sketch: a T-junction with two labelled boxes."""
    picture = PILImage.new("RGB", (96, 64), "white")
    draw = ImageDraw.Draw(picture)
    draw.rectangle((0, 24, 95, 40), outline="black")
    draw.rectangle((40, 40, 56, 63), outline="black")
    draw.rectangle((10, 28, 22, 36), fill="red")
    draw.rectangle((44, 50, 52, 60), fill="blue")
    path = tmp_path / "sketch.png"
    picture.save(path)
    return path


@pytest.fixture
def templates() -> dict[str, ScenarioTemplate]:
    """The packaged templates with a site's own T-intersection template (as kb_templates would hold it)."""
    mine = packaged_templates()["T-intersection"].model_copy(deep=True)
    mine.description = "Site template: a stem road meeting a five-lane arterial with a centre turn lane."
    mine.road_network.length_m = 55
    return packaged_templates() | {"T-intersection": mine}


async def test_good_answers_become_the_scenario(templates: dict[str, ScenarioTemplate], sketch: Path) -> None:
    """A valid meta message and DSL become the scenario, named by the model label; a text-only model gets no image."""
    client = replay(meta(), dsl())
    extractor = LLMCrashExtractor(model_client=client, label=LABEL)
    scenario = await extractor.extract(report(sketch), templates)
    assert extractor.name == LABEL
    net = scenario.road_network
    assert (net.road_type, net.main_lanes, net.branch_lanes, net.stem_direction) == ("T-intersection", 5, 2, "S")
    assert net.centre_turn_lane and net.length_m == 55  # the retrieved (site) template's length
    v1, v2 = scenario.actors
    assert (v1.body_type, v1.lane, v1.speed_limit_mph, v1.description) == ("Minivan", 2, 35, "1999 Ford Windstar")
    assert (v2.body_type, v2.initial_position, v2.actions) == ("SUV", "S2N", ["Turn left"])
    assert scenario.collisions == [("V2", "V1")] and scenario.env.weather == "Clear"
    assert any(LABEL in n and "not vision-capable" in n for n in scenario.notes)
    assert "model assumed: the posted limit of the main road is 35 mph" in scenario.notes
    # The real prompts went out: structured output types, the summary, then the template and allowed values.
    first, second = client.create_calls
    assert first["json_output"] is MetaMessage and second["json_output"] is ScenarioDraft
    assert all(isinstance(last_user(c).content, str) for c in client.create_calls)
    assert "traversing through the T-intersection" in last_user(first).content
    prompt = last_user(second).content
    assert isinstance(prompt, str)
    assert "Site template: a stem road" in prompt and "V2: S2N" in prompt
    assert "Semi Truck" in prompt and "Enter wrong way" in prompt and "Not mentioned" in prompt


async def test_vision_models_get_the_sketch(templates: dict[str, ScenarioTemplate], sketch: Path) -> None:
    """A vision-capable model gets the summary and the sketch in one multimodal message, kept for the DSL step."""
    client = replay(meta(), dsl(), vision=True)
    scenario = await LLMCrashExtractor(model_client=client, label=LABEL).extract(report(sketch), templates)
    content = last_user(client.create_calls[0]).content
    assert isinstance(content, list) and isinstance(content[0], str) and "Ford Windstar" in content[0]
    (image,) = [part for part in content if isinstance(part, Image)]
    assert image.image.size == (96, 64)
    assert "sketch is attached" in content[0]
    later = [m for m in client.create_calls[1]["messages"] if isinstance(m, UserMessage)]
    assert isinstance(later[0].content, list)  # the DSL step sees the same conversation, sketch included
    assert any("from the summary and the sketch" in n for n in scenario.notes)


async def test_unreadable_sketch_is_text_only(templates: dict[str, ScenarioTemplate], tmp_path: Path) -> None:
    """A sketch that is not an image is not fatal: the model gets the text only and the notes say why."""
    broken = tmp_path / "sketch.jpg"
    broken.write_bytes(b"\xff\xd8 not really a JPEG")
    client = replay(meta(), dsl(), vision=True)
    scenario = await LLMCrashExtractor(model_client=client, label=LABEL).extract(report(broken), templates)
    assert isinstance(last_user(client.create_calls[0]).content, str)
    assert any("could not be read" in n and str(broken) in n for n in scenario.notes)
    assert scenario.actors[0].body_type == "Minivan"


@pytest.mark.parametrize(
    ("bad", "stated"),
    [
        (meta(road="Roundabout"), ["road_type", "'Roundabout'", "Straight", "T-intersection"]),
        (meta(road="Straight"), ["crossing directions (V1 W2E, V2 S2N) on a Straight road"]),
        (meta(vehicles=(("V1", "W2E"),)), ["the summary also names V2, which is missing"]),
    ],
    ids=["unknown-road-type", "crossing-on-straight", "missing-vehicle"],
)
async def test_bad_meta_message_is_asked_again(
    templates: dict[str, ScenarioTemplate], bad: str, stated: list[str]
) -> None:
    """A meta message that fails self-validation is asked again once, with the problem stated; the corrected one is used."""
    client = replay(bad, meta(), dsl())
    scenario = await LLMCrashExtractor(model_client=client, label=LABEL).extract(report(), templates)
    assert len(client.create_calls) == 3
    retry = last_user(client.create_calls[1]).content
    assert isinstance(retry, str) and "meta message has these problems" in retry
    for words in stated:
        assert words in retry
    assert scenario.road_network.road_type == "T-intersection" and [a.id for a in scenario.actors] == ["V1", "V2"]
    assert any(n.startswith("meta message asked again") for n in scenario.notes)
    assert client.create_calls[2]["json_output"] is ScenarioDraft


async def test_inconsistent_dsl_is_asked_again(templates: dict[str, ScenarioTemplate]) -> None:
    """A DSL that breaks the DSL's rules or contradicts the meta message is asked again once with every error named."""
    bad = dsl(actor_1={"initial_position": "N2S", "lane": 0}, collisions=[])
    client = replay(meta(), bad, dsl())
    scenario = await LLMCrashExtractor(model_client=client, label=LABEL).extract(report(), templates)
    retry = last_user(client.create_calls[2]).content
    assert isinstance(retry, str)
    assert "actors.1.initial_position: V2 is N2S, but the meta message says S2N" in retry
    assert "collisions is empty" in retry
    assert "actors.1.lane: Input should be greater than or equal to 1" in retry  # named by Scenario.from_data
    assert scenario.actor("V2").initial_position == "S2N" and scenario.collisions == [("V2", "V1")]
    assert any(n.startswith("scenario asked again") for n in scenario.notes)


async def test_unusable_answers_fall_back_to_the_offline_extractor(templates: dict[str, ScenarioTemplate]) -> None:
    """An answer that never validates makes the agent use the offline rules, saying so in the notes and the event."""
    client = replay(
        meta(), dsl(actor_0={"body_type": "Spaceship"}), dsl(road_network={"road_type": "Merge"}), vision=True
    )
    agent = CrashExtractorAgent(
        templates=None,
        provenance=Provenance(config_hash="h", ontology_hash="", models=[], seed=0),
        llm=LLMCrashExtractor(model_client=client, label=LABEL),
    )
    event = CrashSubmitted(
        producer="test", payload=CrashSubmittedPayload(case_id="119839", summary=SUMMARY, simulate=None)
    )
    (out,) = await agent.handle(event)
    assert isinstance(out, ScenarioExtracted)
    assert out.payload.extractor == "offline:crash-rules"
    assert out.payload.provenance.models == [LABEL, "offline:crash-rules"]
    first_note = out.payload.scenario.notes[0]
    assert f"the model {LABEL}'s answer was unusable" in first_note and "offline:crash-rules" in first_note
    assert "road_network.road_type is Merge" in first_note
    assert out.payload.scenario.road_network.road_type == "T-intersection"  # the offline rules' reading
    retry = last_user(client.create_calls[2]).content
    assert isinstance(retry, str) and "actors.0.body_type" in retry and "'Spaceship'" in retry


async def test_model_failure_falls_back_too(templates: dict[str, ScenarioTemplate]) -> None:
    """A model call that fails (here: the replay runs out of answers) is no crash: the offline rules read the report."""
    agent = CrashExtractorAgent(
        templates=None,
        provenance=Provenance(config_hash="h", ontology_hash="", models=[], seed=0),
        llm=LLMCrashExtractor(model_client=replay(meta()), label=LABEL),
    )
    scenario, extractor, models = await agent.extract(report(), templates)
    assert extractor == "offline:crash-rules" and models == [LABEL, extractor]
    assert "the model call failed" in scenario.notes[0]


async def test_models_without_structured_output_get_the_schema(templates: dict[str, ScenarioTemplate]) -> None:
    """Without structured output the prompts carry the JSON schema and fenced JSON answers are read."""
    client = replay(f"Here it is:\n```json\n{meta()}\n```", f"```\n{dsl()}\n```", structured=False)
    scenario = await LLMCrashExtractor(model_client=client, label="openai:qwen3:8b").extract(report(), templates)
    assert all(c["json_output"] is None for c in client.create_calls)
    prompt = last_user(client.create_calls[0]).content
    assert isinstance(prompt, str) and "follows this JSON schema" in prompt and '"vehicle_count"' in prompt
    assert scenario.road_network.stem_direction == "S"


async def test_bad_reports_never_reach_the_model(templates: dict[str, ScenarioTemplate]) -> None:
    """An empty or unrelated summary is bad input before any model call, as offline."""
    client = replay(meta(), dsl())
    extractor = LLMCrashExtractor(model_client=client, label=LABEL)
    for text in (" ", "The annual report is due in March."):
        with pytest.raises(NotACrashReportError):
            await extractor.extract(CrashReport(case_id="x", summary=text), templates)
    assert client.create_calls == []


def test_which_model_reads_crash_reports() -> None:
    """llm.crash_extractor wins ('offline' forces the rules); else the shorthand model or the validator, unless offline."""
    gpt = ModelConfig(provider="openai", model="gpt-4o")
    assert crash_extractor_model(LLMSettings()) is None
    assert crash_extractor_model(LLMSettings(crash_extractor=gpt)) == gpt
    shorthand = crash_extractor_model(LLMSettings(provider="openai", model="gpt-4o-mini"))
    assert shorthand is not None and shorthand.label == "openai:gpt-4o-mini"
    assert crash_extractor_model(LLMSettings(provider="openai", model="gpt-4o-mini", crash_extractor="offline")) is None
    judge = ModelConfig(provider="anthropic", model="judge")
    assert crash_extractor_model(LLMSettings(provider="openai", parsers=[gpt], validator=judge)) == judge
    assert crash_extractor_model(LLMSettings(parsers=[gpt], validator=judge)) is None  # provider offline


@pytest.mark.slow
async def test_daemon_extracts_with_the_model(config: DrivemtConfig, embedder: MiniLMEmbedder, sketch: Path) -> None:
    """Through a real daemon with an injected model client, a crash report yields a scenario extracted by the model."""
    client = replay(meta(), dsl(), vision=True)
    cfg = config.model_copy(update={"llm": LLMSettings(crash_extractor=ModelConfig(provider="openai", model="gpt-4o"))})
    async with Daemon(cfg, embedder=embedder, model_clients={LABEL: client}) as daemon:
        assert daemon.bus is not None
        rec = await Recorder().watch(daemon.bus, daemon.bus.subjects.scenarios_extracted)
        payload = CrashSubmittedPayload(case_id="119839", summary=SUMMARY, sketch=str(sketch), simulate=None)
        await daemon.bus.publish(CrashSubmitted(producer="test", payload=payload))
        (event,) = await rec.wait_for(lambda evs: len(evs) == 1, timeout=60)
    assert isinstance(event, ScenarioExtracted)
    assert event.payload.extractor == LABEL and event.payload.provenance.models == [LABEL]
    assert event.payload.scenario.road_network.stem_direction == "S"
    assert event.payload.sketch == str(sketch)
    assert any(isinstance(p, Image) for p in last_user(client.create_calls[0]).content)


async def test_unusable_meta_retry_keeps_the_first_answer_with_its_doubts(
    templates: dict[str, ScenarioTemplate],
) -> None:
    """When the meta retry's answer does not parse, the first (parsed) meta message is kept and its doubts noted."""
    straight = dsl(
        road_network={"road_type": "Straight", "lanes": 5, "ways": 2, "main_lanes": None, "main_ways": None},
        actor_0={"lane": 1},
    )
    client = replay(meta(road="Straight"), "not JSON at all", straight)
    scenario = await LLMCrashExtractor(model_client=client, label=LABEL).extract(report(), templates)
    assert scenario.road_network.road_type == "Straight" and scenario.road_network.lanes == 5
    doubts = [n for n in scenario.notes if n.startswith("meta message doubts left")]
    assert len(doubts) == 1 and "crossing directions" in doubts[0] and "the retry's answer was unusable" in doubts[0]


def test_crash_extract_names_who_extracted_each_case(tmp_path: Path) -> None:
    """When the configured model's answer is unusable (here a refusal from a real OpenAI client's server) and the
    offline rules read the report instead, the summary and each JSONL row say so; they named the model."""
    import yaml
    from typer.testing import CliRunner

    from runners.cli import app
    from tests.openai_stub import StubAnswer, openai_stub

    with openai_stub(StubAnswer("I am sorry, I cannot help with crash reports.")) as stub:
        model = {"provider": "openai", "model": "local", "base_url": stub.base_url, "max_retries": 0}
        model["model_info"] = {"vision": False, "function_calling": True, "json_output": True,
                               "structured_output": True, "family": "unknown"}  # fmt: skip
        cfg = tmp_path / "drivemt.yaml"
        cfg.write_text(yaml.safe_dump({"llm": {"crash_extractor": model}}))
        out = tmp_path / "out.jsonl"
        case = FIXTURES / "crashes" / "119839"
        result = CliRunner().invoke(app, ["crash", "extract", str(case), "-o", str(out), "-c", str(cfg)])
    assert result.exit_code == 0, result.output
    assert stub.requests, "the model was never asked"
    said = " ".join(result.stdout.split())  # the console wraps long lines
    assert (
        "1 of 1 case(s) extracted (1 by offline:crash-rules (the model failed or its answer was unusable))" in said
    ), said
    assert "by openai:local" not in said
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["extractor"] == "offline:crash-rules" and row["scenario"] is not None


def test_crash_extract_in_safe_format_names_files_not_from_this_run(tmp_path: Path) -> None:
    """--format safe writes <case>.yaml per case into a folder; .yaml files already there from another run are named
    in a warning (they looked like this run's output)."""
    from typer.testing import CliRunner

    from runners.cli import app

    out = tmp_path / "safe"
    out.mkdir()
    (out / "old-case.yaml").write_text("Scenario: old\n")
    result = CliRunner().invoke(app, ["crash", "extract", str(FIXTURES / "crashes" / "119839"), "--format", "safe",
                                      "-o", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (out / "119839.yaml").is_file()
    said = " ".join(result.output.split())
    assert "1 other .yaml file(s)" in said and "old-case.yaml" in said, said


def test_eval_crashes_json_says_who_extracted_the_scored_scenarios(tmp_path: Path) -> None:
    """With a configured model whose answers fell back to the offline rules, `eval crashes --json` counts the scored
    scenarios by extractor (the figures were the rules' while nothing in the JSON said so)."""
    import yaml
    from typer.testing import CliRunner

    from runners.cli import app
    from tests.openai_stub import StubAnswer, openai_stub

    with openai_stub(StubAnswer("unavailable", status=500)) as stub:
        model = {"provider": "openai", "model": "local", "base_url": stub.base_url, "max_retries": 0}
        cfg = tmp_path / "drivemt.yaml"
        info = {"vision": False, "function_calling": True, "json_output": True, "structured_output": True,
                "family": "unknown"}  # fmt: skip
        cfg.write_text(yaml.safe_dump({"llm": {"crash_extractor": model | {"model_info": info}}}))
        result = CliRunner().invoke(app, ["eval", "crashes", str(FIXTURES / "crashes"), "--json", "-c", str(cfg)])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["extracted_by"] == {"offline:crash-rules": figures["n"]}, figures
