"""The crash, traffic-light and demo commands, in-process (typer's runner), on the embedded defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runners.cli import app
from tests.helpers import FIXTURES

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    """Run a command; returns its exit code and its standard output (errors and logs go to stderr)."""
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


@pytest.mark.slow
def test_crash_run_simulates_judges_and_reports(tmp_path: Path) -> None:
    """`crash run` on two cases with two simulator processes prints the batch totals and writes the report."""
    cases = tmp_path / "cases"
    for case in ("108909", "119839"):
        (cases / case).mkdir(parents=True)
        (cases / case / "summary.txt").write_text((FIXTURES / "crashes" / case / "summary.txt").read_text())
    code, out = invoke(
        "crash", "run", str(cases), "--variants", "1", "--workers", "2", "--duration", "12", "--no-render", "--json",
        "--data-dir", str(tmp_path / "data"),
    )  # fmt: skip
    assert code == 0, out
    totals = json.loads(out.strip().splitlines()[-1])
    assert totals["scenarios"] == 2 and totals["runs"] == 4 and totals["errors"] == 0
    assert totals["reproduced"] >= 1 and Path(totals["report"]).is_file()


def test_crash_run_refuses_bad_options(tmp_path: Path) -> None:
    """An unknown ego policy and a folder without cases are clear errors, before anything starts."""
    code, out = invoke("crash", "run", str(FIXTURES / "crashes"), "--ego-policy", "rl", "--data-dir", str(tmp_path))
    assert code == 1 and "policies" in out
    (tmp_path / "none").mkdir()
    code, out = invoke("crash", "run", str(tmp_path / "none"), "--data-dir", str(tmp_path))
    assert code == 1 and "summary.txt" in out


@pytest.mark.slow
def test_tl_commands_from_synthetic_data_to_report(tmp_path: Path) -> None:
    """`data synth-tl`, `tl augment` (COCO-free drivemt layout), `tl test` with a real YOLO built from its yaml,
    a bad transformation code and a corrupt detector (refused before anything is written), each as a person would
    type them."""
    data = tmp_path / "synth"
    code, out = invoke("data", "synth-tl", "--out", str(data), "--n-train", "0", "--n-val", "0", "--n-test", "4")
    assert code == 0 and "4 images" in out, out
    code, out = invoke("tl", "augment", str(data), "--out", str(tmp_path / "aug"), "--transforms", "RN,MP")
    assert code == 0, out
    manifest = json.loads((tmp_path / "aug" / "manifest.json").read_text())
    assert len(manifest["pairs"]) == 8 and {p["code"] for p in manifest["pairs"]} == {"RN", "MP"}
    code, out = invoke(
        "tl", "test", str(data), "--detector", "yolo:yolov8n.yaml", "--out", str(tmp_path / "t"),
        "--transforms", "UE,SC", "--json",
    )  # fmt: skip
    assert code == 0, out
    result = json.loads(out.strip().splitlines()[-1])
    assert Path(result["report"]).is_file() and result["detectors"][0]["pairs"] == {"UE": 4, "SC": 4}
    code, out = invoke("tl", "augment", str(data), "--out", str(tmp_path / "x"), "--transforms", "RN,QQ")
    assert code == 1 and "QQ" in out
    (tmp_path / "corrupt.pt").write_bytes(b"garbage")
    code, out = invoke(
        "tl", "test", str(data), "--detector", f"yolo:{tmp_path / 'corrupt.pt'}", "--out", str(tmp_path / "c"),
        "--transforms", "UE",
    )  # fmt: skip
    assert code == 1 and "not a usable yolo checkpoint" in out, out
    assert not (tmp_path / "c").exists(), "a broken detector left a half-made output behind"


def test_installed_console_script_answers_from_anywhere(tmp_path: Path) -> None:
    """The `drivemt` console script imports from outside the checkout (the packages are really installed)."""
    script = Path(sys.executable).parent / "drivemt"
    result = subprocess.run(
        [str(script), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )
    assert result.returncode == 0, result.stderr
    for command in ("crash", "tl", "demo", "daemon", "submit"):
        assert command in result.stdout


@pytest.mark.slow
def test_demo_runs_every_part_and_links_their_reports(tmp_path: Path) -> None:
    """`demo` on a fresh data dir: rules, AutoMT follow-ups of synthetic cases by those rules' MRs, bundled crash
    reports and the traffic-light part (two driving models trained briefly for AutoMT's Judge) (with a very short detector training) all finish, and `runs/demo.html`
    links four reports that exist."""
    data = tmp_path / "data"
    code, out = invoke(
        "demo", "--data-dir", str(data), "--variants", "1", "--tl-train-seconds", "15", "--tl-train-images", "16",
        "--mt-train-seconds", "8",
    )  # fmt: skip
    assert code == 0, out
    index = (data / "runs" / "demo.html").read_text()
    links = [part.split('"', 1)[0] for part in index.split('href="file://')[1:]]
    assert len(links) == 4 and all(Path(link).is_file() for link in links)
    assert "crashes reproduced" in index and "violations in" in index
    assert "valid follow-ups of 24 cases" in index and "validation rate" in out
    assert "violation rate epoch" in index and "pilotnet" in index  # the Judge ran the two demo models
    assert "crash reproduced" in out or "reported crashes reproduced" in out
    # A second demo reuses the trained detector instead of training again.
    weights = next(data.glob("demo/tl-*/detector/yolo.pt"))
    stamp = weights.stat().st_mtime
    code, out = invoke(
        "demo", "--data-dir", str(data), "--parts", "tl", "--tl-train-seconds", "15", "--tl-train-images", "16"
    )
    assert code == 0, out
    assert weights.stat().st_mtime == stamp
