"""Crash reports simulated through a real daemon: planner, SimRunner (real MetaDrive in a child), Judge, report."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bus import (
    Bus,
    CrashSubmitted,
    CrashVerdict,
    ErrorDomain,
    ErrorReported,
    Event,
    SimCompleted,
    SimRequested,
    ViolationFound,
)
from bus.events import CrashSubmittedPayload
from memory import MiniLMEmbedder
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from runners.simulators.worker import SimulatorRefusedError, SimWorker, SimWorkerError
from tests.helpers import FIXTURES, Recorder
from tools.common.artifacts import LocalArtifactStore
from tools.crash.extract import OfflineCrashExtractor
from tools.crash.files import read_case
from tools.crash.models import RunSpec, RunSummary, SimOptions, SimSettings
from tools.crash.report import load_batch
from tools.crash.verdict import case_verdict


@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    async with Daemon(config, embedder=embedder) as d:
        yield d


def submission(case: str, options: SimOptions | None, sketch: Path | None = None) -> CrashSubmitted:
    """One dev case, as ``drivemt submit crash`` sends it (a batch of one)."""
    report = read_case(FIXTURES / "crashes" / case)
    return CrashSubmitted(
        producer="test",
        payload=CrashSubmittedPayload(
            case_id=report.case_id,
            summary=report.summary,
            sketch=str(sketch) if sketch else None,
            simulate=options,
            batch_size=1,
        ),
    )


def small_sketch(path: Path) -> Path:
    """A stand-in scene sketch (a real JPEG file) for the report to show."""
    import numpy as np

    from tools.tl.images import write_image

    img = np.full((60, 80, 3), 255, np.uint8)
    img[28:32, :] = 0
    img[:, 38:42] = 0
    return write_image(path, img)


async def test_tally_keeps_every_part_under_concurrent_writers(bus: Bus) -> None:
    """Forty concurrent writers to one group lose no part, and a repeated part keeps its first value."""
    await asyncio.gather(*(bus.tally("g.case", f"r{i}", {"i": i}) for i in range(40)))
    parts = await bus.tally("g.case", "r0", {"i": 999})
    assert len(parts) == 40 and parts["r0"] == {"i": 0}


def test_verdict_counts_reproductions_violations_and_errors() -> None:
    """The verdict names the reproducing runs per ego and policy, the first three violations and failed runs."""
    runs = [
        RunSummary(
            index=(e - 1) * 2 + k,
            run_id=f"V{e}-idm-v{k}",
            ego=f"V{e}",
            policy="idm",
            reproduced=e == 2 and k == 1,
            ego_collided=e == 2,
            wall_seconds=0.5,
            record=f"/r/V{e}-{k}.json",
            error="UnbuildableScenarioError: no" if (e, k) == (1, 0) else None,
        )
        for e in (1, 2)
        for k in (0, 1)
    ]
    v = case_verdict("c1", reversed(runs))
    assert v.reproduced and v.reproduced_by == ["V2-idm-v1"]
    assert v.reproduced_per_ego == {"V1/idm": False, "V2/idm": True}
    assert v.violations == 2 and v.first_violation_runs == [3, 4]
    assert v.errors == ["V1-idm-v0: UnbuildableScenarioError: no"] and v.runs == 4


@pytest.mark.slow
async def test_a_crash_report_is_simulated_judged_and_reported(
    daemon: Daemon, config: DrivemtConfig, tmp_path: Path
) -> None:
    """A T-intersection report becomes one run per ego; the reported collision is reproduced, violations carry
    pictures, the verdict completes and the batch report is written beside the runs."""
    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(
        daemon.bus, s.sim_requested, s.sim_completed, s.crashes_verdict, s.violations_found, s.errors(ErrorDomain.SIM)
    )
    options = SimOptions(variants=1, duration_s=12.0, render=True)
    ev = submission("119839", options, sketch=small_sketch(tmp_path / "scene.jpg"))
    await daemon.bus.publish(ev)
    await rec.wait_for(lambda evs: any(isinstance(e, CrashVerdict) for e in evs), timeout=240)
    requested = rec.of(SimRequested)
    completed = rec.of(SimCompleted)
    assert len(requested) == len(completed) == 2  # two vehicles, each the ego once
    assert {c.payload.record.spec.ego_id for c in completed} == {"V1", "V2"}  # type: ignore[attr-defined]
    (verdict,) = rec.of(CrashVerdict)
    assert verdict.correlation_id == ev.correlation_id
    assert verdict.payload.reproduced and verdict.payload.runs == 2  # type: ignore[attr-defined]
    for v in rec.of(ViolationFound):
        assert v.payload.kind == "crash"  # type: ignore[attr-defined]
        evidence = v.payload.evidence  # type: ignore[attr-defined]
        assert evidence and all(not Path(p).is_absolute() and (config.runs_dir / p).is_file() for p in evidence)
    case_dir = config.runs_dir / ev.correlation_id / "crashes" / "119839"
    await rec.wait_for(lambda _evs: (config.runs_dir / ev.correlation_id / "crashes.html").is_file(), timeout=30)
    assert json.loads((case_dir / "verdict.json").read_text())["reproduced"] is True
    assert json.loads((case_dir / "case.json").read_text())["scenario"]["road_network"]["road_type"] == "T-intersection"
    html = (config.runs_dir / ev.correlation_id / "crashes.html").read_text()
    assert "119839" in html and "crash reproduced" in html and "sketch.jpg" in html
    (case,) = load_batch(LocalArtifactStore(config.runs_dir), ev.correlation_id)
    assert case.reproduced and all(r.png and (config.runs_dir / r.png).is_file() for r in case.runs)


@pytest.mark.slow
async def test_beamng_without_an_install_reports_errors_and_still_completes(
    daemon: Daemon, config: DrivemtConfig
) -> None:
    """Without BeamNG.tech each run is an error event naming it and the written files, the case still gets
    a verdict listing the failed runs (nothing waits forever), and the failed runs appear in the batch report."""
    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, s.crashes_verdict, s.errors(ErrorDomain.SIM))
    ev = submission("108909", SimOptions(simulator="beamng", variants=1, render=False))
    await daemon.bus.publish(ev)
    await rec.wait_for(lambda evs: any(isinstance(e, CrashVerdict) for e in evs), timeout=120)
    errors = rec.of(ErrorReported)
    assert errors and all(e.payload.error_type == "BeamNGUnavailableError" for e in errors)  # type: ignore[attr-defined]
    assert all("BeamNG.tech" in e.payload.reason for e in errors)  # type: ignore[attr-defined]
    assert all("files written" in (e.payload.excerpt or "") for e in errors)  # type: ignore[attr-defined]
    (verdict,) = rec.of(CrashVerdict)
    assert not verdict.payload.reproduced and len(verdict.payload.errors) == verdict.payload.runs  # type: ignore[attr-defined]
    (case,) = load_batch(LocalArtifactStore(config.runs_dir), ev.correlation_id)
    assert len(case.runs) == verdict.payload.runs and all(r.error and "BeamNG" in r.error for r in case.runs)  # type: ignore[attr-defined]
    await rec.wait_for(lambda _evs: (config.runs_dir / ev.correlation_id / "crashes.html").is_file(), timeout=30)
    html = (config.runs_dir / ev.correlation_id / "crashes.html").read_text()
    assert all(r.spec.run_id in html for r in case.runs) and "BeamNGUnavailableError" in html


@pytest.mark.slow
def test_a_hung_or_refused_run_never_takes_the_worker_down(tmp_path: Path) -> None:
    """A run past its time limit replaces the child process; a scenario the simulator refuses is a refusal;
    the same worker then completes a normal run."""
    scenario = OfflineCrashExtractor().extract(read_case(FIXTURES / "crashes" / "119839"))
    settings = SimSettings(variants=1, render_png=False, render_gif=False, duration_s=10)
    worker = SimWorker(name="test-sim")
    try:
        with pytest.raises(SimWorkerError, match="passed"):
            worker.run(
                "metadrive", scenario, RunSpec(case_id="119839", ego_id="V1"), settings, tmp_path, timeout_s=0.05
            )
        with pytest.raises(SimulatorRefusedError) as refused:
            worker.run("metadrive", scenario, RunSpec(case_id="119839", ego_id="V9"), settings, tmp_path)
        assert refused.value.error_type == "UnknownActorError"
        record = worker.run("metadrive", scenario, RunSpec(case_id="119839", ego_id="V2"), settings, tmp_path)
        assert record.error is None and record.collisions and record.record_path
    finally:
        worker.close()


def injected_scenario(scenario: dict[str, object], *, simulate: SimOptions) -> dict[str, object]:
    """A ``scenarios.extracted`` event as a user's own tool would inject it (plain JSON)."""
    from bus import ScenarioExtracted
    from bus.events import ScenarioExtractedPayload
    from tools.common.models import Provenance
    from tools.crash.models import Scenario

    good = Scenario.from_data({"case_id": "u1", "road_network": {"road_type": "Straight"}, "actors": [{"id": "V1"}]})
    event = ScenarioExtracted(
        producer="user-tool",
        payload=ScenarioExtractedPayload(
            case_id="u1",
            scenario=good,
            extractor="user",
            template="Straight",
            provenance=Provenance(config_hash="x", ontology_hash="x"),
            simulate=simulate,
        ),
    )
    data = json.loads(event.model_dump_json())
    data["payload"]["scenario"] = scenario
    return data


@pytest.mark.slow
async def test_injected_dsls_that_cannot_run_get_clear_errors(daemon: Daemon) -> None:
    """A DSL with an unknown field is refused at the edge (error event, dead letter); a road the simulator cannot
    build is an error event naming the problem, and the case still gets its verdict."""
    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, s.all_errors, s.crashes_verdict, s.all_deadletters)
    options = SimOptions(variants=1, render=False, duration_s=5)
    unknown_field = injected_scenario(
        {"case_id": "u1", "road_network": {"road_type": "Straight", "bridges": 2}, "actors": [{"id": "V1"}]},
        simulate=options,
    )
    await daemon.bus.publish_raw(s.scenarios_extracted, json.dumps(unknown_field).encode())
    too_wide = injected_scenario(
        {
            "case_id": "u1",
            "road_network": {"road_type": "Straight", "lanes": 12, "ways": 1},
            "actors": [{"id": "V1"}, {"id": "V2", "initial_position": "W2E"}],
            "collisions": [["V1", "V2"]],
        },
        simulate=options,
    )
    await daemon.bus.publish_raw(s.scenarios_extracted, json.dumps(too_wide).encode())
    await rec.wait_for(lambda evs: any(isinstance(e, CrashVerdict) for e in evs), timeout=180)
    errors = rec.of(ErrorReported)
    refused = [e for e in errors if "bridges" in e.payload.reason]  # type: ignore[attr-defined]
    assert refused and refused[0].payload.error_type == "EventValidationError"  # type: ignore[attr-defined]
    unbuildable = [e for e in errors if e.payload.error_type == "TooManyLanesError"]  # type: ignore[attr-defined]
    assert len(unbuildable) == 2 and "12" in unbuildable[0].payload.reason  # type: ignore[attr-defined]
    (verdict,) = rec.of(CrashVerdict)
    assert verdict.payload.runs == 2 and len(verdict.payload.errors) == 2  # type: ignore[attr-defined]


@pytest.mark.slow
async def test_verdicts_and_report_agree_and_the_report_is_drawn_once_the_batch_is_in(
    daemon: Daemon, config: DrivemtConfig
) -> None:
    """A batch of two cases, one whose report names no colliding pair: the verdict.json files and the HTML report
    give the same totals (one definition of "reproduced"), running totals come as progress, and the report is
    drawn when the last case is in."""
    from bus import ProgressReported, ScenarioExtracted
    from bus.events import ScenarioExtractedPayload
    from tools.common.models import Provenance
    from tools.crash.report import batch_totals

    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, s.crashes_verdict, s.progress)
    named = OfflineCrashExtractor().extract(read_case(FIXTURES / "crashes" / "119839"))
    unnamed = named.model_copy(update={"case_id": "no-pair", "collisions": []})
    options = SimOptions(variants=1, render=False, duration_s=12.0)
    batch = "batch-agree"
    for scenario in (named, unnamed):
        await daemon.bus.publish(
            ScenarioExtracted(
                correlation_id=batch,
                producer="test",
                payload=ScenarioExtractedPayload(
                    case_id=scenario.case_id,
                    scenario=scenario,
                    extractor="test",
                    template=scenario.road_network.road_type,
                    provenance=Provenance(config_hash="x", ontology_hash="x"),
                    simulate=options,
                    batch_size=2,
                ),
            )
        )
    report = config.runs_dir / batch / "crashes.html"
    await rec.wait_for(lambda evs: len([e for e in evs if isinstance(e, CrashVerdict)]) == 2, timeout=240)
    await rec.wait_for(lambda _evs: report.is_file(), timeout=30)
    verdicts = [json.loads(p.read_text()) for p in sorted((config.runs_dir / batch / "crashes").glob("*/verdict.json"))]
    assert len(verdicts) == 2
    totals = batch_totals(load_batch(LocalArtifactStore(config.runs_dir), batch))
    assert totals["reproduced"] == sum(v["reproduced"] for v in verdicts)
    assert totals["violations"] == sum(v["violations"] for v in verdicts)
    assert totals["runs"] == sum(v["runs"] for v in verdicts) == 4
    by_case = {v["case_id"]: v for v in verdicts}
    assert by_case["119839"]["reproduced"] is True  # the reported pair collides first
    html = report.read_text()
    assert f"<td>{totals['reproduced']} of 2</td>" in html and f"<b>{totals['violations']}</b>" in html

    def batch_progress(evs: list[Event]) -> list[Event]:
        return [e for e in evs if isinstance(e, ProgressReported) and e.payload.stage == "crash-batch"]

    await rec.wait_for(lambda evs: len(batch_progress(evs)) == 2, timeout=30)
    progress = batch_progress(rec.events)
    assert sorted(e.payload.done for e in progress) == [1, 2] and all(e.payload.total == 2 for e in progress)  # type: ignore[attr-defined]
    # The last one links the report (drawn once, when the batch is complete), for the console's Batches pane.
    links = {e.payload.done: e.payload.report for e in progress}  # type: ignore[attr-defined]
    assert links[1] is None and links[2] == f"{batch}/crashes.html"


def test_batch_totals_count_what_could_be_reproduced_and_each_case_s_own_runs() -> None:
    """A scenario with one vehicle (a pedestrian or a bicycle the DSL cannot hold) has no crash to reproduce and is
    out of the reproduction rate's denominator; seconds per scenario are over the scenarios simulated; the runs a
    scenario needed for its 1st/2nd violation are its own (as its verdict counts them), averaged over the scenarios
    that had one (they ran on over the batch in case order)."""
    from tools.crash.models import RunRecord
    from tools.crash.report import CaseResult, batch_totals

    def case(case_id: str, actors: int, outcomes: list[tuple[bool, bool]], error: str | None = None) -> CaseResult:
        scenario = {"actors": [{"id": f"V{i + 1}"} for i in range(actors)]}
        runs = [
            RunRecord(spec=RunSpec(case_id=case_id, ego_id="V1", variant=k), simulator="test", reproduced=rep,
                      ego_collided=hit, wall_seconds=2.0, error=error)
            for k, (rep, hit) in enumerate(outcomes)
        ]  # fmt: skip
        return CaseResult(case_id=case_id, folder=f"crashes/{case_id}", case={"scenario": scenario}, runs=runs)

    cases = [
        case("a", 2, [(False, False), (False, False), (True, True)]),  # 1st violation at its run 3
        case("b", 2, [(False, True), (False, True)]),  # at its runs 1 and 2
        case("c", 1, [(False, True)]),  # one vehicle: a violation, nothing to reproduce
        case("d", 2, [(False, False)], error="the simulator refused"),  # no run done: not simulated
    ]
    totals = batch_totals(cases)
    assert (totals["scenarios"], totals["simulated"], totals["reproducible"], totals["reproduced"]) == (4, 3, 2, 1)
    # A case's verdict counted its runs in plan order (policies as given: ppo before idm): its numbers are the ones.
    cases[0].verdict = {"first_violation_runs": [1]}
    assert batch_totals(cases)["nth_violation"][0] == pytest.approx((1 + 1 + 1) / 3)
    assert totals["seconds_per_scenario"] == pytest.approx(12.0 / 3)  # 6 runs of 2 s over the 3 simulated
    assert totals["nth_violation"] == [pytest.approx((3 + 1 + 1) / 3), 2.0, None]
    assert not cases[2].reproducible and cases[0].reproducible


def test_a_batch_s_runs_are_loaded_in_plan_order_as_the_judge_numbers_them(tmp_path: Path) -> None:
    """Runs come back in plan order (the scenario's actors in turn, policies as given, variants), so a report drawn
    before a case's verdict counts its runs as the verdict will (they were sorted by name: idm before ppo)."""
    from tools.common.artifacts import LocalArtifactStore, RunLayout
    from tools.crash.models import RunRecord
    from tools.crash.report import batch_totals, load_batch

    store = LocalArtifactStore(tmp_path)
    case_ref = RunLayout.crash_case("b2", "c1")
    scenario = {"actors": [{"id": "V2"}, {"id": "V1"}]}
    store.put(
        RunLayout.case_file(case_ref), json.dumps({"scenario": scenario, "simulate": {"policies": ["ppo", "idm"]}})
    )
    for ego, policy, hit in (("V1", "idm", False), ("V1", "ppo", True), ("V2", "idm", False), ("V2", "ppo", False)):
        spec = RunSpec(case_id="c1", ego_id=ego, policy=policy)
        record = RunRecord(spec=spec, simulator="test", ego_collided=hit)
        store.put(f"{case_ref}/{spec.run_id}.json", record.model_dump_json())
    (case,) = load_batch(store, "b2")
    assert [r.spec.run_id for r in case.runs] == ["V2-ppo-v0", "V2-idm-v0", "V1-ppo-v0", "V1-idm-v0"]
    assert batch_totals([case])["nth_violation"] == [3.0, None, None]


def test_a_sketch_that_is_no_picture_is_named_not_shown_broken(tmp_path: Path) -> None:
    """The report shows a case's sketch beside its summary; a sketch file that does not decode is named with the reason
    instead of a broken image (it was copied and linked as it was)."""
    from PIL import Image

    from tools.common.artifacts import LocalArtifactStore
    from tools.crash.report import CaseResult, write_batch_report

    good, bad = tmp_path / "good" / "sketch.png", tmp_path / "bad" / "sketch.jpg"
    good.parent.mkdir()
    bad.parent.mkdir()
    Image.new("RGB", (8, 8), "white").save(good)
    bad.write_text("this is a note, not a picture")
    store = LocalArtifactStore(tmp_path / "runs")
    cases = [
        CaseResult(case_id=name, folder=f"b1/crashes/{name}", case={"summary": "V1 struck V2.", "sketch": str(path)})
        for name, path in (("good", good), ("bad", bad))
    ]
    html = Path(store.local_path(write_batch_report(store, "b1", cases=cases))).read_text()
    assert 'alt="sketch of case good"' in html and 'alt="sketch of case bad"' not in html
    assert "the sketch sketch.jpg could not be read" in html


def test_ctrl_c_in_the_terminal_leaves_the_simulator_child_to_its_parent(tmp_path: Path) -> None:
    """Ctrl-C signals the whole process group: the child ignores it (it died with a traceback and the parent started a
    new one to retry the run), so the parent alone ends the runs, by closing the worker."""
    scenario = OfflineCrashExtractor().extract(read_case(FIXTURES / "crashes" / "119839"))
    settings = SimSettings(variants=1, render_png=False, render_gif=False, duration_s=5)
    worker = SimWorker(name="test-sim-sigint")
    try:
        for attempt in range(2):
            with pytest.raises(SimulatorRefusedError):  # (BeamNG is not installed: a quick refusal by a live child)
                worker.run("beamng", scenario, RunSpec(case_id="119839", ego_id="V1"), settings, tmp_path)
            if attempt == 0:
                os.kill(worker._proc.pid, signal.SIGINT)
                time.sleep(1.0)
                assert worker._proc.is_alive()
        assert worker.restarts == 0
    finally:
        worker.close()


@pytest.mark.slow
def test_closing_a_worker_cuts_a_run_in_progress_short(tmp_path: Path) -> None:
    """A stop closes the simulator worker while a long run (handed back by its agent) still goes on in another
    thread: the child is terminated rather than waited for, and that run fails; the stop is not held up."""
    scenario = OfflineCrashExtractor().extract(read_case(FIXTURES / "crashes" / "119839"))
    settings = SimSettings(variants=1, render_png=False, render_gif=False, duration_s=120)
    worker = SimWorker(name="test-sim-close")
    outcome: list[BaseException | object] = []

    def long_run() -> None:
        try:
            outcome.append(
                worker.run("metadrive", scenario, RunSpec(case_id="119839", ego_id="V1"), settings, tmp_path)
            )
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=long_run)
    thread.start()
    time.sleep(0.5)  # the child is starting its simulator (a few seconds)
    started = time.monotonic()
    worker.close()
    thread.join(30)
    assert time.monotonic() - started < 20 and not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], SimWorkerError), outcome
    with pytest.raises(SimWorkerError, match="closed"):  # (no child is started again once closed)
        worker.run("metadrive", scenario, RunSpec(case_id="119839", ego_id="V2"), settings, tmp_path)
    assert worker._proc is None
