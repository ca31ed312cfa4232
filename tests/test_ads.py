"""Driving models for AutoMT's Judge: the zoo, training on whole-case splits, users' TorchScript and ONNX models
through adapter specs, bad models, the Judge's MR rule, and ``drivemt ads`` / ``drivemt mt run`` end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn
from typer.testing import CliRunner

from runners.ads.architectures import ARCHITECTURES, DEFAULT_ZOO, build, parameter_count
from runners.ads.models import DrivingModelError, load_model, load_models
from runners.ads.train import _split, load_case_frames, train_zoo
from runners.cli import app
from tools.mt.judging import judge_models
from tools.mt.models import BandFloor, ModelPrediction
from tools.mt.synth.dataset import synth_dataset

RED_LIGHT_MR = (
    "Given the ego-vehicle approaches an intersection When drivemt adds a red traffic light "
    "Then the ego-vehicle should slow down"
)


# -- the zoo ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DEFAULT_ZOO)
def test_each_architecture_takes_its_window_and_gives_speed_and_steering(name: str) -> None:
    arch = ARCHITECTURES[name]
    net = build(name, 80, 160).eval()
    with torch.inference_mode():
        out = net(torch.zeros(2, arch.frames, 3, 80, 160))
    assert out.shape == (2, 2)
    assert parameter_count(net) > 50_000
    assert (arch.stands_in_for is not None) == (name in ("resnet18", "vgg11"))


def test_unknown_architecture_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="pilotnet"):
        build("alexnet")


def test_the_split_holds_out_whole_cases() -> None:
    train, val, test = _split(50, seed=3, held_out=0.2)
    assert len(test) == 10 and set(train).isdisjoint(test) and set(val).isdisjoint(test)
    assert sorted(train + val + test) == list(range(50))


@pytest.fixture(scope="module")
def synth_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ads") / "set"
    synth_dataset(root, cases=16, seed=11, width=160, height=80)
    return root


@pytest.fixture(scope="module")
def trained(synth_set: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PilotNet and CNN3D, trained for a few seconds at 64x128 (enough to load and run, not to be good)."""
    out = tmp_path_factory.mktemp("ads") / "models"
    train_zoo(synth_set, out, models=("pilotnet", "cnn3d"), time_limit_s=6, height=64, width=128, seed=0)
    return out


def test_training_writes_loadable_models_and_a_report_against_the_baseline(trained: Path, synth_set: Path) -> None:
    report = json.loads((trained / "training.json").read_text())
    assert report["train_cases"] + report["held_out_cases"] <= 16 and report["held_out_cases"] >= 3
    assert report["baseline_speed_mae_kmh"] > 0
    assert [m["name"] for m in report["models"]] == ["pilotnet", "cnn3d"]
    for m in report["models"]:
        assert m["beats_baseline"] == (
            m["speed_mae_kmh"] < report["baseline_speed_mae_kmh"]
            and m["steering_mae_rad"] < report["baseline_steering_mae_rad"]
        )
    frames = load_case_frames(synth_set, height=64, width=128)
    cnn3d = load_model(trained / "cnn3d.json")
    assert cnn3d.frames == 4 and cnn3d.spec.architecture == "cnn3d"
    case_dir = next(p for p in sorted((synth_set / "cases").iterdir()) if p.is_dir())
    images = [_read(p) for p in sorted(case_dir.glob("frame_*.png"))]
    pred = cnn3d.predict(images, case_id=case_dir.name)
    assert pred.speed_kmh is not None and pred.steering_rad is not None and len(pred.speed_kmh) == 10
    assert all(math.isfinite(v) for v in pred.speed_kmh)
    assert frames.pixels.shape[1:] == (10, 3, 64, 128)


def _read(path: Path) -> np.ndarray:
    import cv2

    return cv2.imread(str(path))[:, :, ::-1].copy()


# -- users' models ------------------------------------------------------------------------------------------
class _Tiny(nn.Module):
    """Mean brightness -> speed in m/s and steering in degrees, right positive (a foreign convention)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.mean(dim=(1, 2, 3))
        return torch.stack([m * 10.0, -m * 2.0], dim=1)


def _foreign_spec(file: str, **input_: Any) -> dict[str, Any]:
    return {
        "name": Path(file).stem,
        "input": {"width": 64, "height": 32, "colour": "rgb", "layout": "NCHW", **input_},
        "files": [
            {
                "file": file,
                "outputs": [
                    {"name": "speed", "index": 0, "unit": "m/s"},
                    {"name": "steering", "index": 1, "unit": "deg", "left_positive": False},
                ],
            }
        ],
    }


def _write_spec(folder: Path, spec: dict[str, Any]) -> Path:
    path = folder / f"{spec['name']}.json"
    path.write_text(json.dumps(spec))
    return path


def test_onnx_and_torchscript_models_load_through_their_specs_with_units_converted(tmp_path: Path) -> None:
    torch.onnx.export(
        _Tiny(), (torch.zeros(1, 3, 32, 64),), str(tmp_path / "tiny_onnx.onnx"), dynamo=False,
        input_names=["x"], dynamic_axes={"x": {0: "n"}},
    )  # fmt: skip
    torch.jit.script(_Tiny()).save(str(tmp_path / "tiny_ts.pt"))
    frames = [np.full((80, 160, 3), 51, np.uint8)] * 10  # 51 * (1/255) = 0.2 mean
    for file in ("tiny_onnx.onnx", "tiny_ts.pt"):
        model = load_model(_write_spec(tmp_path, _foreign_spec(file)))
        pred = model.predict(frames)
        assert pred.speed_kmh == pytest.approx([0.2 * 10.0 * 3.6] * 10, rel=1e-4)
        assert pred.steering_rad == pytest.approx([0.2 * 2.0 * math.pi / 180] * 10, rel=1e-4)  # right+ -> left+


def test_bad_models_each_get_a_clear_error_naming_the_model(tmp_path: Path) -> None:
    class _NaN(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.full((x.shape[0], 2), float("nan"))

    class _Linear(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3 * 32 * 64, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(x.flatten(1))

    class _Fixed(nn.Module):  # an output whose size does not follow the batch
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(2, 2)

    class _Fixed3(nn.Module):  # the same, of a size one batch at load fits
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(3, 2)

    torch.jit.script(_Linear()).save(str(tmp_path / "good.pt"))
    torch.jit.script(_NaN()).save(str(tmp_path / "nan.pt"))
    torch.jit.script(_Fixed()).save(str(tmp_path / "fixed.pt"))
    torch.jit.script(_Fixed3()).save(str(tmp_path / "fixed3.pt"))
    (tmp_path / "broken.pt").write_bytes(b"not a model at all")
    specs = [
        _write_spec(tmp_path, {**_foreign_spec("good.pt"), "name": "good"}),
        _write_spec(tmp_path, {**_foreign_spec("missing.pt"), "name": "missing"}),
        _write_spec(tmp_path, {**_foreign_spec("broken.pt"), "name": "broken"}),
        _write_spec(tmp_path, {**_foreign_spec("good.pt", width=48), "name": "misfit"}),
        _write_spec(tmp_path, {**_foreign_spec("good.pt", resize="exact"), "name": "exact"}),
        _write_spec(tmp_path, {**_foreign_spec("nan.pt"), "name": "nan"}),
        _write_spec(tmp_path, {**_foreign_spec("fixed.pt"), "name": "fixed"}),
        _write_spec(tmp_path, {**_foreign_spec("fixed3.pt"), "name": "fixed3"}),
    ]
    (tmp_path / "invalid.json").write_text(json.dumps({"name": "invalid", "input": {"width": 0}}))
    models, errors = load_models([*specs, tmp_path / "invalid.json"])
    reasons = {e.model: e.reason for e in errors}
    assert "does not exist" in reasons["missing"]
    assert "does not load" in reasons["broken"]
    assert "does not fit" in reasons["misfit"]
    assert "not valid" in reasons["invalid"]
    assert "returned shape [2, 2] for 3 inputs" in reasons["fixed"] and "one row per input" in reasons["fixed"]
    assert "returned shape [3, 2] for 2 inputs" in reasons["fixed3"]
    loaded = {m.name: m for m in models}
    assert set(loaded) == {"good", "exact", "nan"}
    frames = [np.zeros((80, 160, 3), np.uint8)] * 10
    assert loaded["good"].predict(frames).speed_kmh is not None
    with pytest.raises(DrivingModelError, match="exactly 64x32"):
        loaded["exact"].predict(frames)
    with pytest.raises(DrivingModelError, match="NaN") as err:
        loaded["nan"].predict(frames, case_id="c1")
    assert "'nan'" in str(err.value)


# -- the Judge's rule ---------------------------------------------------------------------------------------
def _p(model: str, speed: list[float] | float, steer: list[float] | float = 0.0) -> ModelPrediction:
    s = speed if isinstance(speed, list) else [speed] * 10
    t = steer if isinstance(steer, list) else [steer] * 10
    return ModelPrediction(model=model, speed_kmh=s, steering_rad=t)


def test_slow_down_needs_a_drop_beyond_the_band_and_strict_has_none() -> None:
    src = {"a": _p("a", 30.0), "b": _p("b", 30.0)}
    small = {"a": _p("a", 29.0), "b": _p("b", 20.0)}
    per_model = {v.model: v for v in judge_models("slow down", src, small, policy="automt-paper")}
    assert per_model["a"].violation and not per_model["b"].violation  # a drop of 1 is not more than the 1.0 floor
    assert per_model["a"].band == "per-model" and per_model["a"].band_value == pytest.approx(1.0)
    strict = {v.model: v for v in judge_models("slow down", src, small, policy="strict")}
    assert not strict["a"].violation and strict["a"].band == "strict"
    same = {v.model: v for v in judge_models("slow down", src, src, policy="strict")}
    assert same["a"].violation  # no drop at all breaks "slow down" even without a band


def test_the_cross_model_band_needs_three_models_and_per_model_verdicts_do_not_depend_on_others() -> None:
    src = {"a": _p("a", 30.0), "b": _p("b", 34.0), "c": _p("c", 38.0)}
    fol = {"a": _p("a", 27.0), "b": _p("b", 31.0), "c": _p("c", 37.5)}
    cross = {v.model: v for v in judge_models("slow down", src, fol)}
    assert {v.band for v in cross.values()} == {"cross-model"}
    assert cross["a"].band_value == pytest.approx(float(np.std([30.0, 34.0, 38.0])))  # 3.27 > the 3.0 drop
    assert all(v.violation for v in cross.values())
    two = {m: src[m] for m in "ab"}
    alone = judge_models("slow down", two, {m: fol[m] for m in "ab"}, policy="per-model")
    three = judge_models("slow down", src, fol, policy="per-model")
    assert [v.model_dump() for v in alone] == [v.model_dump() for v in three if v.model in "ab"]
    assert not any(v.violation for v in alone)


def test_turns_and_keep_current_follow_the_sign_and_the_band() -> None:
    floor = BandFloor(speed_kmh=1.0, steering_rad=0.02)
    src = {"a": _p("a", 30.0, 0.0)}
    left = {"a": _p("a", 30.0, 0.1)}
    right = {"a": _p("a", 30.0, -0.1)}
    assert not judge_models("turn left", src, left, floor=floor)[0].violation
    assert judge_models("turn left", src, right, floor=floor)[0].violation
    assert not judge_models("turn right", src, right, floor=floor)[0].violation
    assert judge_models("turn right", src, {"a": _p("a", 30.0, -0.01)}, floor=floor)[0].violation
    assert not judge_models("keep current", src, {"a": _p("a", 30.5, 0.01)}, floor=floor)[0].violation
    assert judge_models("keep current", src, {"a": _p("a", 30.0, 0.1)}, floor=floor)[0].violation  # steering moved
    assert judge_models("keep current", src, {"a": _p("a", 25.0, 0.0)}, floor=floor)[0].violation
    odd = judge_models("sing a song", src, left)[0]
    assert odd.verdict == "not judged" and "no rule" in odd.reason


def test_a_noisy_source_widens_its_own_per_model_band() -> None:
    noisy = [30.0, 34.0] * 5
    v = judge_models("slow down", {"a": _p("a", noisy)}, {"a": _p("a", 29.0)}, policy="per-model")[0]
    assert v.band_value == pytest.approx(2.0) and not v.violation  # median 32 -> 29: a drop of 3, beyond 2
    w = judge_models("slow down", {"a": _p("a", noisy)}, {"a": _p("a", 30.5)}, policy="per-model")[0]
    assert w.violation  # a drop of 1.5 stays inside the noisy source's band


# -- the commands -------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_ads_train_then_mt_run_judges_every_valid_follow_up_and_a_bad_model_only_costs_itself(
    synth_set: Path, tmp_path: Path
) -> None:
    """`ads train` writes a zoo; `mt run --mr ... --method fixed,null` judges the valid follow-ups with every model
    that works, names the one that returns NaN, and reports AutoMT's figures, the t-test and the scene truth."""
    import shutil

    runner = CliRunner()
    models = tmp_path / "models"
    trained = runner.invoke(
        app, ["ads", "train", str(synth_set), "--out", str(models), "--models", "pilotnet,epoch",
              "--time-limit", "8", "--size", "128x64", "--json"],
    )  # fmt: skip
    assert trained.exit_code == 0, trained.output
    report = json.loads(trained.stdout.strip().splitlines()[-1])
    assert [m["name"] for m in report["models"]] == ["pilotnet", "epoch"]
    size = json.loads((models / "pilotnet.json").read_text())["input"]
    assert (size["width"], size["height"]) == (128, 64)  # --size is WIDTHxHEIGHT, as in `data synth-driving`
    bad = runner.invoke(app, ["ads", "train", str(synth_set), "--out", str(tmp_path / "x"), "--models", "alexnet"])
    assert bad.exit_code != 0 and "alexnet" in bad.output

    class _NaN(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.full((x.shape[0], 2), float("nan"))

    torch.jit.script(_NaN()).save(str(models / "nan.pt"))
    nan_spec = json.loads((models / "pilotnet.json").read_text())
    nan_spec.update(name="nan", input={**nan_spec["input"], "frames": 1, "layout": "NCHW"})
    nan_spec["files"][0]["file"] = "nan.pt"
    (models / "nan.json").write_text(json.dumps(nan_spec))
    check = runner.invoke(app, ["ads", "check", str(models), "--json"])
    assert check.exit_code == 0, check.output
    assert {r["model"] for r in json.loads(check.stdout)} == {"pilotnet", "epoch", "nan"}

    args = ["mt", "run", str(synth_set), "--models", str(models), "--mr", RED_LIGHT_MR, "--method", "fixed,null",
            "--out", str(tmp_path / "out"), "--data-dir", str(tmp_path / "d"), "--json"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(summary["methods"]) == {"fixed", "null"} and set(summary["models"]) == {"epoch", "pilotnet"}
    for f in summary["methods"].values():
        assert f["cases"] == 16 and 0 <= f["validation_rate"] <= 1
        for model in ("epoch", "pilotnet"):
            assert 0 <= f["violation_rate"][model] <= f["validation_rate"]  # violations count on valid only
    assert summary["methods"]["null"]["validation_rate"] > 0.5
    assert summary["methods"]["fixed"]["distinct_manipulations"] <= 1
    assert any("nan" in e and "NaN" in e for e in summary["model_errors"])
    from runners.ads.train import weak_models_warning

    weak = [m["name"] for m in report["models"] if not m["beats_baseline"]]  # (eight seconds of training)
    assert summary["warnings"] == ([weak_models_warning(weak)] if weak else [])
    assert summary["band"] == "automt-paper" and summary["bands_used"] == ["per-model"]  # (two models: the fallback)
    assert all(t["note"].startswith("n/a") for t in summary["tests"])  # one round: no t-test
    assert summary["agreement"]["verdicts"] > 0
    html = Path(summary["report"]).read_text()
    assert "Violation rate per method and model" in html and "partly circular" in html
    shutil.rmtree(tmp_path / "out")
    both = runner.invoke(app, [*args[:5], "--rules", "x.jsonl", *args[5:]])
    assert both.exit_code != 0 and "either" in both.output


def test_models_that_did_not_beat_the_baseline_are_named_from_their_training_report(tmp_path: Path) -> None:
    """A zoo's training report names the models no better than the constant-mean baseline (the demo showed their
    violation rates with no warning); a folder of users' own models, with no report, names none."""
    from runners.ads.train import below_baseline

    (tmp_path / "training.json").write_text(
        json.dumps(
            {"models": [{"name": "pilotnet", "beats_baseline": False}, {"name": "epoch", "beats_baseline": True}]}
        )
    )
    assert below_baseline(tmp_path) == ["pilotnet"]
    (tmp_path / "own").mkdir()
    assert below_baseline(tmp_path / "own") == []


@pytest.mark.slow
def test_mt_run_with_no_model_that_can_judge_fails_and_names_why(synth_set: Path, tmp_path: Path) -> None:
    """`mt run` whose models all fail to load exits 1 with their reasons, after printing what it did measure; its
    distinct manipulations count the valid follow-ups, judged or not."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "broken.pt").write_bytes(b"not a model at all")
    _write_spec(models, {**_foreign_spec("broken.pt"), "name": "broken"})
    result = CliRunner().invoke(
        app, ["mt", "run", str(synth_set), "--models", str(models), "--mr", RED_LIGHT_MR, "--method", "null",
              "--out", str(tmp_path / "out"), "--data-dir", str(tmp_path / "d"), "--json"],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "no driving model" in result.output and "broken" in result.output and "does not load" in result.output
    summary = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    null = summary["methods"]["null"]
    assert summary["models"] == [] and null["validation_rate"] > 0
    assert null["distinct_manipulations"] == null["distinct_manipulations_per_round"][0] >= 1


@pytest.mark.slow
async def test_the_oracle_flags_a_model_that_ignores_red_lights_and_neither_on_null(
    tmp_path: Path, embedder: Any
) -> None:
    """Epoch trained where the scripted driver ignores red lights is flagged on added red lights at least twice as
    often as Epoch trained where it obeys (and on >= 30 % of cases); on null follow-ups neither is flagged more
    than 5 %. 120 plain straight-road training cases each, 5 passes of training per model (not a time budget: a
    slower machine must train the same models; about a minute each here), 40 test cases: about 3.5 minutes."""
    from runners.config import load_config
    from runners.host.experiment import prove_oracle

    run = await prove_oracle(
        load_config(data_dir=tmp_path / "data"), "red-light", tmp_path, train_cases=120, test_cases=40, epochs=5,
        embedder=embedder,
    )  # fmt: skip
    fixed, null = run.summary["methods"]["fixed"], run.summary["methods"]["null"]
    clean, faulty = fixed["violation_rate"]["clean-epoch"], fixed["violation_rate"]["faulty-epoch"]
    assert fixed["validation_rate"] >= 0.6, fixed
    assert faulty >= 0.30 and faulty >= 2 * clean, fixed["violation_rate"]
    assert max(null["violation_rate"].values()) <= 0.05, null["violation_rate"]
