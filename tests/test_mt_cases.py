"""AutoMT's driving cases: the format, road types, the three loaders on fixtures, the synthetic world and its driver."""

from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from runners.cli import app
from tests.helpers import FIXTURES
from tools.common.artifacts import LocalArtifactStore
from tools.mt.loaders import NoCasesError, detect_format, import_cases, load_cases
from tools.mt.models import FAULT_RULES, DrivingCase, EgoSample
from tools.mt.roads import canonical_road_type, road_types_compatible
from tools.mt.synth.dataset import load_truth, render_case, synth_dataset, write_case
from tools.mt.synth.driver import drive
from tools.mt.synth.scene import ROAD_KINDS, AddObject, SetTime, SetWeather, apply_edit, sample_scene

MT = FIXTURES / "mt"


def test_a_case_needs_one_ego_sample_per_frame_and_finite_numbers() -> None:
    """Frames and ego samples must align; NaN speeds are refused at the edge."""
    ego = [EgoSample(speed_kmh=30, steering_rad=0.0)] * 2
    with pytest.raises(ValueError, match="3 frames but 2 ego"):
        DrivingCase(case_id="c", source="t", frames=["a", "b", "c"], ego=ego)
    with pytest.raises(ValueError, match="finite"):
        EgoSample(speed_kmh=math.nan, steering_rad=0.0)


def test_region_words_map_onto_canonical_road_types() -> None:
    """Each region's synonym maps onto one canonical term; 'any roads' MRs fit every case, others need equal terms."""
    assert canonical_road_type("Level crossing") == canonical_road_type("Railroad Crossings") == "railroad crossing"
    assert canonical_road_type("School Zones") == "school area" and canonical_road_type("All roads") == "any roads"
    assert canonical_road_type("curved road") == "any roads" and canonical_road_type("spaceport") is None
    assert road_types_compatible("All roads", "crosswalk") and road_types_compatible("Crosswalks", "crosswalk")
    assert not road_types_compatible("intersection", "crosswalk") and not road_types_compatible("intersection", None)


def test_udacity_loader_reads_units_and_signs() -> None:
    """interpolated.csv: centre camera only, 20 Hz halved to 10 FPS, m/s -> km/h, radians left-positive, cut by 10."""
    result = load_cases(MT / "udacity")
    assert result.format == "udacity" and not result.problems
    first, second = result.cases
    assert len(first.frame_paths) == 10 and all(p.parent.name == "center" for p in first.frame_paths)
    assert first.ego[0].speed_kmh == pytest.approx(36.0) and first.ego[0].steering_rad == pytest.approx(0.1)
    assert first.fps == pytest.approx(10.0, rel=0.01)
    assert second.ego[-1].steering_rad == pytest.approx(-0.2)  # the recording's right turn stays negative
    assert first.case_id == "udacity-1479425441182877835"


def test_a2d2_loader_converts_degrees_and_applies_the_sign() -> None:
    """Bus signals are interpolated to each frame's cam_tstamp; 90 degrees with sign 1 (right) is -pi/2 rad; 30 Hz
    becomes 10 FPS."""
    result = load_cases(MT / "a2d2")
    assert result.format == "a2d2" and not result.problems
    (case,) = result.cases
    assert case.ego[0].speed_kmh == pytest.approx(36.0)
    assert case.ego[0].steering_rad == pytest.approx(-math.pi / 2)
    assert case.fps == pytest.approx(10.0, rel=0.02)


def test_folder_loader_names_every_bad_file_and_keeps_the_rest() -> None:
    """A missing frame, a frame of another size and a non-image file are each named; the good cases still load."""
    result = load_cases(MT / "folder")
    by_id = {c.case_id: c for c in result.cases}
    assert "drive1-00000" in by_id
    good = by_id["drive1-00000"]
    assert good.ego[0].speed_kmh == 30.0 and good.ego[0].steering_rad == pytest.approx(math.radians(2.0), abs=1e-6)
    assert good.metadata is not None and good.metadata.road_type == "railroad crossing"  # "Level crossing"
    broken = [c for c in result.cases if c.case_id.startswith("broken")]
    assert [c.case_id for c in broken] == ["broken-00020"]  # the windows holding frame 3 or 14 are left out
    assert broken[0].ego[0].speed_kmh == pytest.approx(18.0) and broken[0].ego[0].steering_rad < 0  # m/s, degrees
    problems = " | ".join(str(p) for p in result.problems)
    assert "003.png: missing frame" in problems and "014.png" in problems and "notes.txt" in problems


def test_paths_without_a_recording_are_clear_errors(tmp_path: Path) -> None:
    """An empty folder or a missing path says what was expected."""
    with pytest.raises(NoCasesError, match="no driving recording"):
        detect_format(tmp_path)
    with pytest.raises(NoCasesError, match="no such file"):
        load_cases(tmp_path / "nope")


def test_imported_cases_carry_refs_into_the_store(tmp_path: Path) -> None:
    """Importing puts each frame into the artefact store; the case names refs, not absolute paths."""
    store = LocalArtifactStore(tmp_path / "runs")
    (case,) = import_cases(store, load_cases(MT / "a2d2").cases, prefix="b1/cases")
    assert all(not Path(r).is_absolute() and store.exists(r) for r in case.frames)
    assert case.frames[0] == "b1/cases/a2d2-1554121593909522/frame_00.png"


def test_every_road_kind_renders_a_road_scene() -> None:
    """Each road kind draws frames of the asked size with sky above the road, and boxes for objects in view."""
    for i, road in enumerate(ROAD_KINDS):
        rendered = render_case(sample_scene(10 + i, road=road), width=160, height=80, frames=3)  # type: ignore[arg-type]
        img = rendered.images[-1]
        assert img.shape == (80, 160, 3) and img.dtype == np.uint8
        assert img[:20].mean() != img[-20:].mean()  # sky and road differ
        assert rendered.truths[0].road_type == rendered.spec.road_type
        for box in rendered.truths[0].objects:
            assert 0 <= box.x1 < box.x2 <= 159 and 0 <= box.y1 < box.y2 <= 79


def test_the_driver_reacts_only_to_what_it_can_see() -> None:
    """A red light far beyond what fog lets the camera see changes nothing; the same light in clear air does."""
    base = sample_scene(5, road="straight").model_copy(
        update={"objects": [], "weather": "clear", "time": "day", "feature_s": 25.0}
    )
    light = apply_edit(base, AddObject(kind="traffic_light", place="roadside", distance_m=30.0, state="red"))
    foggy = light.model_copy(update={"weather": "fog", "weather_strength": 1.0})
    assert drive(light)[0].speed_kmh < drive(base)[0].speed_kmh
    foggy_base = foggy.model_copy(update={"objects": []})
    assert [s.speed_kmh for s in drive(foggy)] == [s.speed_kmh for s in drive(foggy_base)]


def test_re_rendering_with_a_red_light_shows_the_driver_stopping() -> None:
    """The same scene plus a red light 20 m ahead: the scripted driver brakes every frame, enough to stop at the line."""
    spec = sample_scene(7, road="straight").model_copy(update={"objects": [], "weather": "clear", "time": "day"})
    source = drive(spec)
    edited = apply_edit(spec, AddObject(kind="traffic_light", place="roadside", distance_m=20.0, state="red"))
    follow = drive(edited)
    light_s = edited.objects[-1].s
    speeds = [s.speed_mps for s in follow]
    assert all(b < a for a, b in itertools.pairwise(speeds))
    assert follow[-1].speed_kmh < source[-1].speed_kmh - 10 and follow[-1].binding == "red-light"
    for st in follow:  # braking at 2.5 m/s² from here stops before the line
        line = light_s - 1.5 - st.s
        assert st.speed_mps**2 / (2 * 2.5) <= line + 0.5


def test_weather_and_light_edits_slow_the_driver_and_a_faulty_driver_ignores_its_rule() -> None:
    """Fog and night slow the careful driver; a driver made to ignore fog keeps its speed in fog."""
    spec = sample_scene(9, road="straight").model_copy(update={"objects": [], "weather": "clear", "time": "day"})
    v = drive(spec)[0].speed_kmh
    fog = apply_edit(spec, SetWeather(weather="fog", strength=0.9))
    assert drive(fog)[0].speed_kmh < v * 0.7
    assert drive(fog, ignore=["fog"])[0].speed_kmh == pytest.approx(v)
    assert drive(apply_edit(spec, SetTime(time="night")))[0].speed_kmh < v
    with pytest.raises(ValueError, match="unknown rule"):
        drive(spec, ignore=["speeding"])


def test_a_synthetic_set_has_truth_shares_and_loads_back(tmp_path: Path) -> None:
    """A set writes frames, cases, truth and a manifest with each rule's share; the synthetic loader reads it back,
    and a faulty driver's set starts from the same view with other speeds."""
    good = synth_dataset(tmp_path / "good", cases=20, seed=3, width=96, height=48)
    synth_dataset(tmp_path / "faulty", cases=20, seed=3, width=96, height=48, ignore=["red-light"])
    assert set(good.shares) == set(FAULT_RULES) and all(v >= 0.1 for v in good.shares.values())
    manifest = json.loads((tmp_path / "good" / "manifest.json").read_text())
    assert manifest["format"] == "drivemt-synth-driving" and len(manifest["cases"]) == 20
    result = load_cases(tmp_path / "good")
    assert result.format == "synthetic" and len(result.cases) == 20 and not result.problems
    case = result.cases[0]
    assert case.metadata is not None and case.metadata.road_type and len(case.ego) == 10
    assert "truth.json" in case.extra_files
    red = [
        e.case_id
        for e in good.cases
        if "red-light" in json.loads((tmp_path / "good" / "cases" / e.case_id / "truth.json").read_text())["binding"]
    ]
    assert red, "no case where the red light sets the careful driver's speed"
    ego_good = json.loads((tmp_path / "good" / "cases" / red[0] / "case.json").read_text())["ego"]
    ego_bad = json.loads((tmp_path / "faulty" / "cases" / red[0] / "case.json").read_text())["ego"]
    assert ego_bad[-1]["speed_kmh"] > ego_good[-1]["speed_kmh"]
    assert (tmp_path / "good" / "cases" / red[0] / "frame_00.png").read_bytes() == (
        tmp_path / "faulty" / "cases" / red[0] / "frame_00.png"
    ).read_bytes()


def test_truth_travels_with_an_imported_synthetic_case(tmp_path: Path) -> None:
    """A synthetic case written to one store and imported into another keeps its scene for re-rendering."""
    spec = sample_scene(11, road="crosswalk")
    src = LocalArtifactStore(tmp_path / "set")
    write_case(src, "c1", render_case(spec, width=96, height=48))
    (raw,) = load_cases(tmp_path / "set", format="synthetic").cases
    runs = LocalArtifactStore(tmp_path / "runs")
    (case,) = import_cases(runs, [raw], prefix="b/cases")
    truth = load_truth(runs, case)
    assert truth is not None and truth.spec == spec and len(truth.frames) == 10


def test_cli_draws_a_set_and_a_contact_sheet(tmp_path: Path) -> None:
    """`data synth-driving` writes a set and reports shares; `data show` writes a contact sheet of a case."""
    runner = CliRunner()
    result = runner.invoke(
        app, ["data", "synth-driving", "--out", str(tmp_path / "s"), "--cases", "4", "--size", "128x64", "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["cases"] == 4 and set(summary["shares"]) == set(FAULT_RULES)
    sheet = tmp_path / "sheet.png"
    result = runner.invoke(app, ["data", "show", str(tmp_path / "s" / "cases" / "syn-0-00000"), "--out", str(sheet)])
    assert result.exit_code == 0, result.output
    from tools.tl.images import read_image

    img = read_image(sheet)
    assert img.shape[1] == 5 * 320 and img.std() > 20
    bad = runner.invoke(
        app, ["data", "synth-driving", "--out", str(tmp_path / "x"), "--cases", "2", "--ignore", "speeding"]
    )
    assert bad.exit_code != 0 and "speeding" in bad.output


def test_data_show_finds_the_frames_of_a_case_opened_from_inside_or_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case opened by a relative path from inside its folder (`data show .`), or a case folder copied elsewhere,
    still finds its frames: they are looked up from the resolved dataset, else beside case.json."""
    runner = CliRunner()
    result = runner.invoke(
        app, ["data", "synth-driving", "--out", str(tmp_path / "s"), "--cases", "1", "--size", "128x64"]
    )
    assert result.exit_code == 0, result.output
    case = tmp_path / "s" / "cases" / "syn-0-00000"
    copy = tmp_path / "elsewhere" / "mycase"
    shutil.copytree(case, copy)
    monkeypatch.chdir(case)
    result = runner.invoke(app, ["data", "show", ".", "--out", str(tmp_path / "inside.png")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["data", "show", str(copy), "--out", str(tmp_path / "copy.png")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "inside.png").is_file() and (tmp_path / "copy.png").is_file()
