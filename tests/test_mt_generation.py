"""AutoMT's test generation: matching, follow-ups (classical and re-rendered), validity, the T-Agent's model path,
the agents through a real daemon, and the CLI."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from autogen_ext.models.replay import ReplayChatCompletionClient
from typer.testing import CliRunner

from memory import MiniLMEmbedder
from runners.ads.pool import import_models
from runners.cli import app
from runners.clients.mt import case_submissions, submit_cases_and_collect
from runners.clients.rules import submit_and_collect
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import FIXTURES, rule
from tools.common.artifacts import LocalArtifactStore
from tools.errors import LLMResponseError
from tools.mt.coverage import coverage
from tools.mt.describe import OFFLINE_DESCRIBER, describe_offline
from tools.mt.generate import UnrenderableError, generate_followup, null_plan, read_frames
from tools.mt.llm_describer import LLMDescriber
from tools.mt.loaders import import_cases, load_cases
from tools.mt.matching import applicable, manual_mrs, plan_from_fields
from tools.mt.models import CaseDescription, DrivingCase, EgoSample, PlannedMR
from tools.mt.synth.dataset import load_truth, render_case, synth_dataset, write_case
from tools.mt.synth.scene import SceneSpec
from tools.mt.validity import check_followup
from tools.rules.models import MRFields
from tools.rules.ontology import load_ontology


def desc(speed: float = 40.0, road: str = "any roads") -> CaseDescription:
    return CaseDescription(speed_kmh=speed, steering_rad=0.0, describer="test", road_type=road)


def plan(
    term: str, verb: str = "adds", behaviour: str = "slow down", road: str = "any roads", method: str = "automt"
) -> PlannedMR:
    return PlannedMR(
        method=method,  # type: ignore[arg-type]
        gherkin=term,
        road_type=road,
        verb=verb,  # type: ignore[arg-type]
        manipulation=term,
        term=term,
        expected_behavior=behaviour,
    )


@pytest.fixture
def street(tmp_path: Path) -> tuple[LocalArtifactStore, DrivingCase]:
    """A clear-day synthetic street case, written into a store (with its scene for re-rendering)."""
    store = LocalArtifactStore(tmp_path / "runs")
    spec = SceneSpec(seed=4, road="straight", time="day", weather="clear", cruise_kmh=45.0)
    return store, write_case(store, "street", render_case(spec, width=192, height=96), prefix="src")


def test_matching_filters_say_why() -> None:
    """Region, road type, a stationary ego, turns, speed limits and weather the case already has each keep an MR
    out, with the reason."""
    mr = MRFields(road_type="intersection", verb="adds", manipulation="a red light", expected_behavior="slow down")
    assert applicable(mr, "germany", "germany", desc(road="intersection")) == (True, "fits")
    assert not applicable(mr, "germany", "california", desc(road="intersection"))[0]
    assert "road type" in applicable(mr, "germany", "germany", desc(road="crosswalk"))[1]
    any_road = mr.model_copy(update={"road_type": "All roads"})
    assert applicable(any_road, None, None, desc(road="crosswalk"))[0]
    assert "moving ego" in applicable(any_road, None, None, desc(speed=0.3))[1]
    turn = any_road.model_copy(update={"expected_behavior": "turn left"})
    assert (
        not applicable(turn, None, None, desc(road="crosswalk"))[0]
        and applicable(turn, None, None, desc(road="intersection"))[0]
    )
    limit = any_road.model_copy(update={"manipulation": "a maximum speed limit sign of 50 km/h"})
    assert not applicable(limit, None, None, desc(speed=45))[0] and applicable(limit, None, None, desc(speed=60))[0]
    fog = any_road.model_copy(update={"verb": "replaces", "manipulation": "fog environment"})
    foggy = desc().model_copy(update={"weather": "fog"})
    assert "already shows fog" in applicable(fog, None, None, foggy)[1] and applicable(fog, None, None, desc())[0]
    unnamed = any_road.model_copy(update={"manipulation": "a speed limit sign"})
    drawn = plan_from_fields("automt", unnamed, term="speed limit sign", desc=desc(speed=55), rng=random.Random(1))
    assert drawn.limit_kmh is not None and 10 <= drawn.limit_kmh < 55


def test_manual_mrs_are_autoMTs_nine() -> None:
    """The 9 manual MRs are packaged with their ids and parse."""
    mrs = manual_mrs()
    assert [m.id for m in mrs] == [f"manual-{i}" for i in range(1, 10)]
    assert {m.fields.expected_behavior for m in mrs} == {"slow down", "keep current"}


async def test_a_follow_up_whose_frames_are_gone_ends_not_valid_with_an_error_naming_its_case(tmp_path: Path) -> None:
    """The validity checker cannot read a follow-up's frames: an error event naming the case, and the case goes on
    to the Judge as an error, each check saying why (it was an error with no case, and the case never ended)."""
    from agents.mt.validity import ValidityAgent
    from bus import ErrorReported, FollowupGenerated, FollowupValidated
    from bus.events import FollowupGeneratedPayload

    store = LocalArtifactStore(tmp_path)
    (case,) = import_cases(
        store, load_cases(FIXTURES / "mt" / "folder" / "drive1", check_images=False).cases, prefix="c"
    )
    follow = generate_followup(store, case, desc(), plan("stopped vehicle"), followup_id="f", prefix="f", seed=1)
    store.local_path(follow.case.frames[3]).unlink()
    event = FollowupGenerated(
        producer="test",
        payload=FollowupGeneratedPayload(case=case, description=desc(), status="generated", followup=follow),
    )
    out = await ValidityAgent(store=store).on_generated(event)
    (error,) = [e for e in out if isinstance(e, ErrorReported)]
    (validated,) = [e for e in out if isinstance(e, FollowupValidated)]
    assert error.payload.item_id == case.case_id and "cannot be read" in error.payload.reason
    assert not validated.payload.validity.valid
    assert all(c.reason.startswith("could not be checked") for c in validated.payload.validity.checks)
    assert len(validated.payload.validity.checks) == 3
    # An error, not an invalid follow-up: no check's pass rate counts it (review round 1).
    from runners.clients.mt import CaseOutcome

    assert "cannot be read" in (validated.payload.validity.error or "")
    result = CaseOutcome(case.case_id, validated=validated).result()
    assert result.status == "error" and result.validity is None and "cannot be read" in result.reason


def test_ontology_coverage_is_at_least_eighty_percent() -> None:
    """At least 80 % of the ontology's adds and replaces terms have a rendering (not a placeholder)."""
    rows = coverage(load_ontology())
    assert sum(r.rendered for r in rows) / len(rows) >= 0.8
    behind = next(r for r in rows if r.term == "vehicle behind")
    assert not behind.rendered and "behind" in behind.note


def test_an_added_object_stays_anchored_as_the_ego_drives(tmp_path: Path) -> None:
    """Classically, a pedestrian added 15-25 m ahead grows and moves down the frame as the ego approaches; the
    source's pixels elsewhere are untouched."""
    store = LocalArtifactStore(tmp_path)
    (case,) = import_cases(
        store, load_cases(FIXTURES / "mt" / "folder" / "drive1", check_images=False).cases, prefix="c"
    )
    follow = generate_followup(store, case, desc(), plan("stopped vehicle"), followup_id="f", prefix="f", seed=1)
    boxes = [b for b in follow.edit.boxes if b is not None]
    assert len(boxes) == 10 and follow.edit.generator == "classical"
    assert boxes[-1][3] > boxes[0][3] and (boxes[-1][2] - boxes[-1][0]) > (boxes[0][2] - boxes[0][0])
    src, fol = read_frames(store, case), read_frames(store, follow.case)
    x1, y1, x2, y2 = (round(v) for v in boxes[0])
    untouched = np.ones(src[0].shape[:2], bool)
    untouched[max(0, y1 - 3) : y2 + 4, max(0, x1 - 6) : x2 + 7] = False
    assert (src[0][untouched] == fol[0][untouched]).mean() > 0.97
    assert follow.case.ego == case.ego and all(not Path(r).is_absolute() for r in follow.case.frames)


def test_replaces_changes_every_frame_and_strength_zero_changes_nothing(
    street: tuple[LocalArtifactStore, DrivingCase],
) -> None:
    """Fog lowers the contrast of every frame, most in the distance; at strength zero the frames are the source's."""
    store, case = street
    case = case.model_copy(update={"source": "folder:x"})  # no scene: classical
    fog = generate_followup(store, case, desc(), plan("fog", "replaces"), followup_id="fog", prefix="f", seed=2)
    src, fol = read_frames(store, case), read_frames(store, fog.case)
    assert all(b.std() < 0.9 * a.std() for a, b in zip(src, fol, strict=True))
    far = slice(src[0].shape[0] // 4, src[0].shape[0] // 2)  # around the horizon, where fog is thickest
    assert all(b[far].std() < 0.7 * a[far].std() for a, b in zip(src, fol, strict=True))
    zero = generate_followup(
        store, case, desc(), plan("fog", "replaces"), followup_id="z", prefix="f", seed=2, strength=0.0
    )
    assert all(np.array_equal(a, b) for a, b in zip(src, read_frames(store, zero.case), strict=True))


def test_a_synthetic_case_is_re_rendered_with_the_drivers_reaction(
    street: tuple[LocalArtifactStore, DrivingCase],
) -> None:
    """With its scene, a red light is re-rendered into the world and the scripted driver's reaction recorded."""
    store, case = street
    truth = load_truth(store, case)
    follow = generate_followup(
        store, case, desc(), plan("red light"), followup_id="red", prefix="f", seed=3, truth=truth
    )
    assert follow.edit.generator == "re-render" and follow.edit.expected_from_scene == "slow down"
    assert any(b is not None for b in follow.edit.boxes)
    null = generate_followup(store, case, desc(), null_plan(case), followup_id="null", prefix="f", seed=3, truth=truth)
    assert null.edit.expected_from_scene == "keep current" and null.mr.expected_behavior == "keep current"


def test_unrenderable_mrs_and_unreadable_frames_are_clear(
    street: tuple[LocalArtifactStore, DrivingCase], tmp_path: Path
) -> None:
    """An MR about something a front camera cannot show, and a case with a broken frame, each raise with the reason."""
    store, case = street
    with pytest.raises(UnrenderableError, match="behind"):
        generate_followup(store, case, desc(), plan("vehicle behind"), followup_id="x", prefix="f", seed=0)
    store.put(case.frames[3], b"not a png")
    with pytest.raises(UnrenderableError, match="frame_03"):
        read_frames(store, case)


def test_validity_passes_a_good_follow_up_and_each_check_refuses_its_broken_case(
    street: tuple[LocalArtifactStore, DrivingCase],
) -> None:
    """A visible pedestrian on a fitting road is valid; a road-type mismatch, an unchanged follow-up and a turn on a
    straight road each fail their own check; the null method skips manipulation verification."""
    store, case = street
    case = case.model_copy(update={"source": "folder:x"})
    good = plan("pedestrian")
    follow = generate_followup(store, case, desc(), good, followup_id="g", prefix="f", seed=5)
    src, fol = read_frames(store, case), read_frames(store, follow.case)
    described = describe_offline(case, src).model_copy(update={"road_type": "any roads"})
    v = check_followup(src, fol, source=case, description=described, mr=good)
    assert v.valid, [c.reason for c in v.checks]
    wrong_road = check_followup(
        src, fol, source=case, description=described, mr=good.model_copy(update={"road_type": "railroad crossing"})
    )
    assert wrong_road.failing() == ["scenario_alignment"]
    unchanged = check_followup(src, src, source=case, description=described, mr=good)
    assert "manipulation_verification" in unchanged.failing()
    # Half of the view replaced in one piece is another scene, not one thing added (added things changed at most 6 %
    # of a synthetic frame, bench/validity_agreement.py).
    swapped = [f.copy() for f in fol]
    for f in swapped:
        f[f.shape[0] * 11 // 20 :] = 255 - f[f.shape[0] * 11 // 20 :]
    assert "scenario_alignment" in check_followup(src, swapped, source=case, description=described, mr=good).failing()
    turn = check_followup(
        src, fol, source=case, description=described, mr=good.model_copy(update={"expected_behavior": "turn left"})
    )
    assert turn.failing() == ["logical_alignment"]
    stopped = case.model_copy(update={"ego": [EgoSample(speed_kmh=0.0, steering_rad=0.0)] * 10})
    assert "logical_alignment" in check_followup(src, fol, source=stopped, description=described, mr=good).failing()
    null = check_followup(src, fol, source=case, description=described, mr=null_plan(case))
    assert next(c for c in null.checks if c.name == "manipulation_verification").skipped


async def test_the_t_agent_describes_with_a_vision_model_through_autogen(
    street: tuple[LocalArtifactStore, DrivingCase],
) -> None:
    """A vision model's structured answer becomes AutoMT's representation (ego from the data, road type a canonical
    term); a model that cannot see is refused, so the T-Agent falls back to image statistics."""
    store, case = street
    frames = read_frames(store, case)
    info = {
        "vision": True,
        "function_calling": False,
        "json_output": True,
        "structured_output": True,
        "family": "unknown",
    }
    answer = json.dumps(
        {
            "reasoning": "Daylight, dry road, a straight street.",
            "time": "day",
            "weather": "clear",
            "road_type": "any roads",
            "objects": ["Car"],
        }
    )
    client = ReplayChatCompletionClient([answer], model_info=info)  # type: ignore[arg-type]
    d = await LLMDescriber(model_client=client, label="replay:vlm").describe(case, frames)
    assert (d.time, d.weather, d.road_type, d.objects, d.describer) == (
        "day",
        "clear",
        "any roads",
        ["car"],
        "replay:vlm",
    )
    assert d.speed_kmh == pytest.approx(case.mean_speed_kmh, abs=1e-3)
    bad = ReplayChatCompletionClient(
        ['{"reasoning": "x", "time": "noon", "weather": "clear", "road_type": "any roads"}'] * 2, model_info=info
    )  # type: ignore[arg-type]
    with pytest.raises(LLMResponseError):
        await LLMDescriber(model_client=bad, label="replay:bad").describe(case, frames)
    blind = ReplayChatCompletionClient([answer], model_info={**info, "vision": False})  # type: ignore[arg-type]
    with pytest.raises(LLMResponseError, match="vision"):
        await LLMDescriber(model_client=blind, label="replay:text").describe(case, frames)
    assert describe_offline(case, frames).describer == OFFLINE_DESCRIBER


@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    agents = config.agents.model_copy(deep=True)
    agents.f_agent.copies = 2  # two F-Agents share the work and the MR store's counts
    async with Daemon(config.model_copy(update={"agents": agents}), embedder=embedder) as d:
        yield d


@pytest.mark.slow
async def test_cases_become_validated_follow_ups_through_the_daemon(
    daemon: Daemon, config: DrivemtConfig, tmp_path: Path
) -> None:
    """Rules become MRs; synthetic cases are described, followed up by two F-Agent copies and checked; every use of
    an MR is counted once; a case with a broken frame is an error and the batch goes on."""
    from bus.rpc import call
    from bus.services import MRS_LIST, ListMRs

    assert daemon.bus is not None and daemon.pipeline is not None
    rules = [
        rule(t, f"r{i}")
        for i, t in enumerate(["Slow down in fog.", "Stop at a red light.", "Give way to pedestrians."])
    ]
    await submit_and_collect(daemon.bus, rules, timeout=60)
    synth_dataset(tmp_path / "set", cases=8, seed=5, width=160, height=80)
    store = LocalArtifactStore(config.runs_dir)
    models = _brightness_models(tmp_path / "models")
    refs = import_models(store, models)
    _, events, _ = case_submissions(store, tmp_path / "set", region="germany", per_event=3, models=refs)
    broken = events[0].payload.cases[0]
    store.put(broken.frames[2], b"broken")
    results = await submit_cases_and_collect(daemon.bus, events, timeout=180)
    assert results.complete()
    outcomes = results.outcomes
    assert outcomes[broken.case_id].error is not None and "frame" in outcomes[broken.case_id].error.payload.reason
    made = [o for o in outcomes.values() if o.validated is not None]
    generated = [o for o in outcomes.values() if o.generated is not None and o.generated.payload.followup is not None]
    assert len(made) == len(generated) >= 1
    assert all(len(o.validated.payload.validity.checks) == 3 for o in made)  # type: ignore[union-attr]
    counted = sum(m.execution_count for m in (await call(daemon.bus, MRS_LIST, ListMRs(limit=1000))).mrs)
    automt_uses = sum(1 for o in generated if o.generated.payload.followup.mr.mr_id)  # type: ignore[union-attr]
    assert counted == automt_uses
    # The Judge: a verdict for every case; both models on each valid follow-up, none on an invalid one.
    for o in outcomes.values():
        judged = o.judged.payload  # type: ignore[union-attr]
        assert (judged.status == "judged") == o.valid
        if o.valid:
            assert {v.model for v in judged.verdicts} == {"bright", "dark"}
            assert all(v.band in ("per-model", "-") for v in judged.verdicts)  # two models: per-model bands
            assert len(judged.source_predictions) == 2
    assert results.batch is not None and results.batch.payload.cases == 8
    assert set(results.batch.payload.violations) == {"bright", "dark"}
    valid = sum(o.valid for o in outcomes.values())
    assert results.batch.payload.valid == valid
    predictions = list((config.runs_dir / "predictions").rglob("*.json"))
    assert len(predictions) >= 2 * valid  # sources and follow-ups, cached in the store
    # A submission that names a model by a path of the daemon's machine gets an error naming the rule, no verdict.
    local = [str((models / "bright.json").resolve())]
    _, again, _ = case_submissions(store, tmp_path / "set", region="germany", per_event=8, models=local, seed=1)
    again_results = await submit_cases_and_collect(daemon.bus, again, timeout=180)
    assert again_results.complete()
    refused = [e.payload.reason for e in again_results.model_errors]  # type: ignore[attr-defined]
    judged_again = [o.judged.payload for o in again_results.outcomes.values() if o.valid]  # type: ignore[union-attr]
    assert judged_again and all(not j.verdicts for j in judged_again)
    assert refused and all("artefact ref" in r for r in refused), refused


@pytest.mark.slow
async def test_cases_the_f_agent_refuses_each_end_with_the_reason(
    daemon: Daemon, config: DrivemtConfig, tmp_path: Path
) -> None:
    """Cases of a region the ontology does not have: each gets an error naming it and still ends with the Judge
    (not judged, with the reason), so a waiting client hears why instead of waiting out its timeout."""
    assert daemon.bus is not None
    synth_dataset(tmp_path / "set", cases=3, seed=5, width=160, height=80)
    store = LocalArtifactStore(config.runs_dir)
    _, events, _ = case_submissions(store, tmp_path / "set", region="atlantis", method="random", per_event=3)
    results = await submit_cases_and_collect(daemon.bus, events, timeout=60)
    assert results.complete(), [o for o in results.outcomes.values() if not o.done]
    for o in results.outcomes.values():
        assert o.error is not None and "atlantis" in o.error.payload.reason
        assert o.judged is not None and o.judged.payload.status == "not judged"
        assert "atlantis" in o.judged.payload.reason
        assert o.result().status == "error"


def _brightness_models(folder: Path) -> Path:
    """Two TorchScript models whose speed follows the frames' brightness (one inverted), with adapter specs."""
    import torch
    from torch import nn

    class Bright(nn.Module):
        def __init__(self, sign: float) -> None:
            super().__init__()
            self.sign = sign

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            m = x.mean(dim=(1, 2, 3))
            return torch.stack([30.0 + self.sign * 20.0 * m, 0.1 * m], dim=1)

    folder.mkdir(parents=True)
    for name, sign in (("bright", 1.0), ("dark", -1.0)):
        torch.jit.script(Bright(sign)).save(str(folder / f"{name}.pt"))
        spec = {
            "name": name,
            "input": {"width": 80, "height": 40, "colour": "rgb", "layout": "NCHW"},
            "files": [
                {
                    "file": f"{name}.pt",
                    "outputs": [
                        {"name": "speed", "index": 0, "unit": "km/h"},
                        {"name": "steering", "index": 1, "unit": "rad"},
                    ],
                }
            ],
        }
        (folder / f"{name}.json").write_text(json.dumps(spec))
    return folder


@pytest.mark.slow
def test_mt_generate_prints_the_figures_and_writes_a_report(tmp_path: Path) -> None:
    """`drivemt mt generate --json` runs rules -> MRs -> follow-ups -> validity in-process and reports AutoMT's
    figures; the manual method needs no rules."""
    synth_dataset(tmp_path / "set", cases=6, seed=8, width=160, height=80)
    runner = CliRunner()
    args = ["mt", "generate", str(tmp_path / "set"), "--region", "germany", "--out", str(tmp_path / "out"), "--json"]
    result = runner.invoke(
        app, [*args, "--rules", str(FIXTURES / "rules_de_sample.jsonl"), "--data-dir", str(tmp_path / "d")]
    )
    assert result.exit_code == 0, result.output
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["cases"] == 6 and figures["followups"] <= 6
    assert {"validation_rate", "checks", "distinct_manipulations", "seconds"} <= set(figures)
    assert figures["validation_rate"] == pytest.approx(figures["valid"] / 6, abs=1e-3)
    html = Path(figures["report"]).read_text()
    assert "validation rate" in html and "scenario alignment" in html
    manual = runner.invoke(app, [*args, "--method", "manual", "--data-dir", str(tmp_path / "d2")])
    assert manual.exit_code == 0, manual.output
    assert json.loads(manual.stdout.strip().splitlines()[-1])["method"] == "manual"
    missing = runner.invoke(app, args)
    assert missing.exit_code != 0 and "--rules" in missing.output


def test_many_claims_through_one_store_are_all_counted(embedder: MiniLMEmbedder, tmp_path: Path) -> None:
    """Many simultaneous claims through one store are all counted (the store serialises them), least-used first."""
    from memory.mr_store import QdrantMRStore, StoreSettings
    from tools.rules.mr import new_mr

    async def run() -> tuple[int, list[int]]:
        store = QdrantMRStore(settings=StoreSettings(path=tmp_path / "q"), embedder=embedder)
        async with store:
            vocab = load_ontology().vocabulary("germany")
            fields = [
                MRFields(road_type="any roads", verb="replaces", manipulation=m, expected_behavior="slow down")
                for m in ("fog", "rain", "snowfall")
            ]
            stored = await store.add([new_mr(f, vocab, region="germany", score=1.0, rule_id="r") for f in fields])
            claims = await asyncio.gather(*(store.claim([s.mr_id for s in stored]) for _ in range(30)))
            assert all(c is not None for c in claims)
            return sum(m.execution_count for m in await store.list()), [m.execution_count for m in await store.list()]

    total, counts = asyncio.run(run())
    assert total == 30 and counts == [10, 10, 10]  # least-used first: the three MRs share the uses evenly


def test_a_checks_pass_rate_counts_only_the_follow_ups_it_was_measured_on() -> None:
    """A skipped check is neither passed nor failed (it showed 100 % where it was skipped on every follow-up), and a
    run with no follow-up has no rate for any check (it showed 0.0 % of 0)."""
    from tools.mt.models import Validity, ValidityCheck
    from tools.mt.report import GenerationResult, summarise

    def validity(skip_manipulation: bool, logic_passed: bool) -> Validity:
        return Validity(
            checks=[
                ValidityCheck(name="scenario_alignment", passed=True, reason="r"),
                ValidityCheck(name="manipulation_verification", passed=True, reason="r", skipped=skip_manipulation),
                ValidityCheck(name="logical_alignment", passed=logic_passed, reason="r"),
            ]
        )

    results = [
        GenerationResult("a", "valid", validity=validity(True, True)),
        GenerationResult("b", "invalid", validity=validity(True, False)),
        GenerationResult("c", "valid", validity=validity(False, True)),
    ]
    figures = summarise(results, seconds=1.0)
    assert figures["checks"] == {
        "scenario_alignment": 1.0,
        "manipulation_verification": 1.0,
        "logical_alignment": 0.6667,
    }
    assert figures["checks_measured"]["manipulation_verification"] == 1
    skipped_everywhere = summarise(results[:2], seconds=1.0)
    assert skipped_everywhere["checks"]["manipulation_verification"] is None
    none = summarise([GenerationResult("d", "no_applicable_mr")], seconds=1.0)
    assert set(none["checks"].values()) == {None}
