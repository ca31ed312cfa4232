"""The diffusers generator with tiny random pipelines built in code: InstructPix2Pix for "replaces", SD
inpainting and FLUX.1-Fill for "adds", loaded from local folders; refused on a CPU unless forced; broken and
missing folders are clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from runners.cli import app
from tests.tiny_diffusers import build_tiny_pipelines
from tools.common.artifacts import LocalArtifactStore
from tools.mt.diffusion import DiffusersUnavailableError, DiffusionGenerator
from tools.mt.generate import generate_followup, read_frames
from tools.mt.models import CaseDescription, DrivingCase, PlannedMR
from tools.mt.settings import DiffusionSettings
from tools.mt.synth.dataset import render_case, synth_dataset, write_case
from tools.mt.synth.scene import SceneSpec


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_tiny_pipelines(tmp_path_factory.mktemp("tiny-diffusers"))


def fast(**kw: object) -> DiffusionSettings:
    """Forced onto the CPU, two steps, a small working size: the real pipelines, quickly."""
    return DiffusionSettings(device="cpu", allow_cpu=True, steps=2, resolution=48, **kw)  # type: ignore[arg-type]


@pytest.fixture
def folder_case(tmp_path: Path) -> tuple[LocalArtifactStore, DrivingCase]:
    """A 192x96 street case without a scene (as any recording)."""
    store = LocalArtifactStore(tmp_path / "runs")
    spec = SceneSpec(seed=4, road="straight", time="day", weather="clear", cruise_kmh=45.0)
    case = write_case(store, "street", render_case(spec, width=192, height=96), prefix="src")
    return store, case.model_copy(update={"source": "folder:street"})


def plan(term: str, verb: str) -> PlannedMR:
    return PlannedMR(
        method="automt", gherkin=term, road_type="any roads", verb=verb,  # type: ignore[arg-type]
        manipulation=term, term=term, expected_behavior="slow down",
    )  # fmt: skip


DESC = CaseDescription(speed_kmh=40.0, steering_rad=0.0, describer="test")


def test_refused_on_a_cpu_and_without_folders_with_what_to_change(tiny: dict[str, Path], tmp_path: Path) -> None:
    """A CPU is refused unless forced; no folder, a missing one, a non-pipeline folder and the wrong pipeline
    each name the setting or the problem."""
    with pytest.raises(DiffusersUnavailableError, match=r"needs a GPU.*allow_cpu"):
        DiffusionGenerator(DiffusionSettings(device="cpu", replaces_model=tiny["ip2p"])).preflight()
    with pytest.raises(DiffusersUnavailableError, match="no model folder"):
        DiffusionGenerator(fast()).preflight()
    with pytest.raises(DiffusersUnavailableError, match="does not exist"):
        DiffusionGenerator(fast(replaces_model=tmp_path / "nowhere")).preflight()
    (tmp_path / "empty").mkdir()
    with pytest.raises(DiffusersUnavailableError, match="model_index.json"):
        DiffusionGenerator(fast(adds_model=tmp_path / "empty")).preflight()
    with pytest.raises(DiffusersUnavailableError, match="StableDiffusionInpaintPipeline.*InstructPix2Pix"):
        DiffusionGenerator(fast(replaces_model=tiny["sd-inpaint"])).preflight()
    DiffusionGenerator(fast(replaces_model=tiny["ip2p"], adds_model=tiny["flux-fill"])).preflight()


@pytest.mark.slow
def test_instruct_pix2pix_edits_every_frame_with_one_seed(
    tiny: dict[str, Path], folder_case: tuple[LocalArtifactStore, DrivingCase]
) -> None:
    """ "replaces" runs InstructPix2Pix on all 10 frames at the frames' own size; the same seed gives the same
    follow-up, another seed another one."""
    store, case = folder_case
    gen = DiffusionGenerator(fast(replaces_model=tiny["ip2p"]))
    a = generate_followup(
        store, case, DESC, plan("fog", "replaces"), followup_id="a", prefix="f", seed=1, diffusion=gen
    )
    b = generate_followup(
        store, case, DESC, plan("fog", "replaces"), followup_id="b", prefix="f", seed=1, diffusion=gen
    )
    c = generate_followup(
        store, case, DESC, plan("fog", "replaces"), followup_id="c", prefix="f", seed=2, diffusion=gen
    )
    assert a.edit.generator == "diffusers:StableDiffusionInstructPix2PixPipeline" and a.edit.op == "replace"
    src, fa, fb, fc = (read_frames(store, x) for x in (case, a.case, b.case, c.case))
    assert len(fa) == 10 and all(x.shape == y.shape for x, y in zip(src, fa, strict=True))
    assert all(not np.array_equal(x, y) for x, y in zip(src, fa, strict=True))
    assert all(np.array_equal(x, y) for x, y in zip(fa, fb, strict=True))
    assert not np.array_equal(fa[0], fc[0])
    with pytest.raises(DiffusersUnavailableError, match="adds_model"):
        generate_followup(
            store, case, DESC, plan("pedestrian", "adds"), followup_id="d", prefix="f", seed=1, diffusion=gen
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("folder", "pipeline"), [("sd-inpaint", "StableDiffusionInpaintPipeline"), ("flux-fill", "FluxFillPipeline")]
)
def test_inpainting_paints_an_object_and_carries_it_across_the_frames(
    tiny: dict[str, Path], folder_case: tuple[LocalArtifactStore, DrivingCase], folder: str, pipeline: str
) -> None:
    """ "adds" paints into the placement box once and carries the patch, anchored and scaled, into every frame
    where the object is in view; pixels away from the boxes stay the source's."""
    store, case = folder_case
    gen = DiffusionGenerator(fast(adds_model=tiny[folder]))
    follow = generate_followup(
        store, case, DESC, plan("stopped vehicle", "adds"), followup_id="v", prefix="f", seed=3, diffusion=gen
    )
    assert follow.edit.generator == f"diffusers:{pipeline}" and follow.edit.op == "add"
    boxes = follow.edit.boxes
    assert all(b is not None for b in boxes) and boxes[-1][3] > boxes[0][3]  # type: ignore[index]
    src, fol = read_frames(store, case), read_frames(store, follow.case)
    for s, f, box in zip(src, fol, boxes, strict=True):
        assert box is not None
        x1, y1, x2, y2 = (round(v) for v in box)
        away = np.ones(s.shape[:2], bool)
        away[max(0, y1 - 2) : y2 + 3, max(0, x1 - 2) : x2 + 3] = False
        assert np.array_equal(s[away], f[away])
        assert np.abs(s[y1:y2, x1:x2].astype(int) - f[y1:y2, x1:x2].astype(int)).mean() > 1.0


@pytest.mark.slow
def test_broken_weights_are_a_clear_error(
    tiny: dict[str, Path], folder_case: tuple[LocalArtifactStore, DrivingCase], tmp_path: Path
) -> None:
    """A pipeline folder whose weights are corrupt names the folder and the failure."""
    store, case = folder_case
    broken = tmp_path / "broken"
    shutil.copytree(tiny["ip2p"], broken)
    for weights in (broken / "unet").glob("*.safetensors"):
        weights.write_bytes(b"not a tensor file")
    gen = DiffusionGenerator(fast(replaces_model=broken))
    gen.preflight()  # the index is fine; the weights fail when loaded
    with pytest.raises(DiffusersUnavailableError, match=r"cannot be loaded"):
        generate_followup(
            store, case, DESC, plan("rain", "replaces"), followup_id="x", prefix="f", seed=0, diffusion=gen
        )


@pytest.mark.slow
def test_mt_generate_with_the_diffusers_generator(tiny: dict[str, Path], tmp_path: Path) -> None:
    """`mt generate --generator diffusers` draws AutoMT's 9 manual MRs with the configured pipelines through the
    agents; without allow_cpu the command stops at once with the reason."""
    synth_dataset(tmp_path / "set", cases=4, seed=2, width=96, height=48)
    settings = {
        "replaces_model": str(tiny["ip2p"]),
        "adds_model": str(tiny["sd-inpaint"]),
        "steps": 2,
        "resolution": 48,
    }
    forced = tmp_path / "forced.yaml"
    forced.write_text(yaml.safe_dump({"generation": {"diffusers": {**settings, "device": "cpu", "allow_cpu": True}}}))
    refused = tmp_path / "refused.yaml"
    refused.write_text(yaml.safe_dump({"generation": {"diffusers": {**settings, "device": "cpu"}}}))
    runner = CliRunner()
    args = ["mt", "generate", str(tmp_path / "set"), "--method", "manual", "--generator", "diffusers", "--json"]
    ok = runner.invoke(
        app, [*args, "--config", str(forced), "--out", str(tmp_path / "o"), "--data-dir", str(tmp_path / "d")]
    )
    assert ok.exit_code == 0, ok.output
    figures = json.loads(ok.stdout.strip().splitlines()[-1])
    assert figures["generator"] == "diffusers" and figures["cases"] == 4 and figures["followups"] >= 1
    no = runner.invoke(
        app, [*args, "--config", str(refused), "--out", str(tmp_path / "o2"), "--data-dir", str(tmp_path / "d2")]
    )
    assert no.exit_code != 0 and "needs a GPU" in no.output
