"""Artefacts through NATS JetStream's Object Store: workers with different data dirs (no shared file system) finish a
crash batch and a traffic-light batch, and the client fetches complete reports."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bus import CrashSubmitted, CrashVerdict, Subjects, TLDatasetSubmitted, TLVerdict
from bus.events import CrashSubmittedPayload, TLDatasetPayload
from memory import MiniLMEmbedder
from runners.clients.crash import upload_sketches
from runners.clients.objects import ObjectArtifactStore, sha256_digest
from runners.clients.rules import submit_and_collect
from runners.clients.tl import upload_dataset
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import FIXTURES, Recorder, rule
from tools.common.artifacts import LocalArtifactStore, RunLayout
from tools.crash.files import read_case
from tools.crash.models import SimOptions
from tools.tl.synth import synth_tl


def _store(config: DrivemtConfig, cache: Path) -> ObjectArtifactStore:
    return ObjectArtifactStore(url=str(config.nats_url), subjects=Subjects(config.namespace), cache_dir=cache)


def test_object_store_round_trips_with_checksums(config: DrivemtConfig, tmp_path: Path) -> None:
    """Bytes, text and files go in and come back (in another process's cache), listed by prefix; a file whose
    cached copy is stale is fetched again; a folder a tool wrote is pushed in one call; a bad ref is refused."""
    with _store(config, tmp_path / "a") as a, _store(config, tmp_path / "b") as b:
        a.put("batch/x/one.txt", "hello")
        a.put("batch/x/two.bin", bytes(range(256)) * 5000)
        assert b.get("batch/x/one.txt") == b"hello" and b.exists("batch/x/two.bin") and not b.exists("batch/none")
        assert b.list("batch") == ["batch/x/one.txt", "batch/x/two.bin"]
        local = b.local_path("batch/x/two.bin")
        assert sha256_digest(local) == sha256_digest(bytes(range(256)) * 5000)
        local.write_bytes(b"tampered")  # a stale or damaged cache is replaced from the bucket
        assert b.get("batch/x/two.bin") == bytes(range(256)) * 5000
        folder = a.local_path("batch/tool/x").parent
        (folder / "sub").mkdir(parents=True, exist_ok=True)
        (folder / "sub" / "img.png").write_bytes(b"png")
        assert a.push("batch/tool") == ["batch/tool/sub/img.png"] and a.push("batch/tool") == []
        assert (b.pull("batch/tool") / "sub" / "img.png").read_bytes() == b"png"
        from tools.common.artifacts import BadArtifactRefError

        with pytest.raises(BadArtifactRefError):
            b.get("../etc/passwd")
        with pytest.raises(FileNotFoundError):
            b.get("batch/missing.txt")


@pytest.fixture
async def workers(
    config: DrivemtConfig, embedder: MiniLMEmbedder, tmp_path: Path
) -> AsyncIterator[tuple[Daemon, Daemon]]:
    """Two workers with data dirs of their own: one owns the memory and reads inputs (extractor, planner, augmenter),
    the other simulates and judges; artefacts pass only through the Object Store."""
    first = config.model_copy(update={"data_dir": tmp_path / "w1", "artifacts": "bus"})
    second = config.model_copy(update={"data_dir": tmp_path / "w2", "artifacts": "bus", "memory": "bus"})
    a = Daemon(
        first, embedder=embedder, only=["crash_extractor", "sim_planner", "tl_augmenter"], write_state_file=False
    )
    b = Daemon(second, embedder=embedder, only=["sim_runner", "judge"], worker=True)
    async with a, b:
        yield a, b


def _links(html: str) -> list[str]:
    return [x for x in re.findall(r'(?:src|href)="([^"#:]+)"', html) if not x.startswith(("http", "data", "/"))]


@pytest.mark.slow
async def test_two_workers_without_a_shared_folder_complete_crash_and_tl_batches(
    workers: tuple[Daemon, Daemon], config: DrivemtConfig, tmp_path: Path
) -> None:
    a, _b = workers
    assert a.bus is not None
    s = a.bus.subjects
    rec = await Recorder().watch(a.bus, s.crashes_verdict, s.tl_verdict, s.all_errors)
    dataset = tmp_path / "tl-set"
    synth_tl(dataset, n_train=0, n_val=0, n_test=4, width=320, height=180, seed=3)
    report = read_case(FIXTURES / "crashes" / "119839")
    with _store(config, tmp_path / "client") as client:
        tl = TLDatasetSubmitted(producer="test", payload=TLDatasetPayload(dataset=str(dataset)))
        ref = upload_dataset(client, dataset, tl.correlation_id)
        tl = tl.model_copy(
            update={
                "payload": TLDatasetPayload(
                    dataset="/nowhere/tl-set", dataset_ref=ref, transforms=["RN", "CC"], detectors=["yolo:yolov8n.yaml"]
                )
            }
        )
        sketch = tmp_path / "sketch.jpg"
        sketch.write_bytes(b"\xff\xd8\xff\xd9")  # the report only links it
        crash = CrashSubmitted(
            producer="test",
            payload=CrashSubmittedPayload(
                case_id=report.case_id, summary=report.summary, sketch="/nowhere/sketch.jpg",
                simulate=SimOptions(variants=1, duration_s=8.0, render=True), batch_size=1,
            ),
        )  # fmt: skip
        upload_sketches(client, crash.correlation_id, [dataclasses.replace(report, sketch=str(sketch))])
        await a.bus.publish_many([tl, crash])
        await rec.wait_for(lambda evs: sum(isinstance(e, CrashVerdict | TLVerdict) for e in evs) == 2, timeout=300)
        (verdict,) = rec.of(TLVerdict)
        assert verdict.payload.pairs == 8 and verdict.payload.report  # type: ignore[attr-defined]
        (crash_verdict,) = rec.of(CrashVerdict)
        assert crash_verdict.payload.runs == 2 and not crash_verdict.payload.errors  # type: ignore[attr-defined]
        # Nothing crossed through a folder: the judge's results never reach the augmenter's worker, whose inputs
        # came from the client through the bucket (the judge's worker fetched its own copies the same way).
        assert not list((tmp_path / "w1").rglob("report.html")) and not list((tmp_path / "w1").rglob("results.json"))
        assert list((tmp_path / "w1").rglob("tl/input/dataset.json")) and list((tmp_path / "w2").rglob("V1-*.png"))
        # The client fetches each batch and finds every picture its report links to.
        for batch, report_ref in (
            (tl.correlation_id, RunLayout.tl_report(tl.correlation_id)),
            (crash.correlation_id, RunLayout.crash_report(crash.correlation_id)),
        ):
            for _ in range(300):  # the Judge draws a batch's report just after its last verdict
                if client.exists(report_ref):
                    break
                await asyncio.sleep(0.1)
            folder = client.pull(batch)
            html = (folder.parent / report_ref).read_text()
            links = _links(html)
            assert links, report_ref
            missing = [x for x in links if not ((folder.parent / report_ref).parent / x).is_file()]
            assert not missing, (report_ref, missing[:5])
        assert "sketch.jpg" in (tmp_path / "client" / RunLayout.crash_report(crash.correlation_id)).read_text()


@pytest.mark.slow
async def test_submit_cases_from_another_data_dir_sends_frames_through_the_object_store(
    config: DrivemtConfig, embedder: MiniLMEmbedder, tmp_path: Path
) -> None:
    """`drivemt submit cases --wait` from a client with its own data dir: the frames go up to the Object Store, the
    daemon's agents make and check follow-ups from them, and the client draws the batch report from the bucket."""
    import asyncio
    import os
    import sys

    from tools.mt.synth.dataset import synth_dataset

    cases = tmp_path / "cases"
    synth_dataset(cases, cases=4, seed=2, width=320, height=160)
    daemon_cfg = config.model_copy(update={"data_dir": tmp_path / "daemon", "artifacts": "bus"})
    async with Daemon(daemon_cfg, embedder=embedder, write_state_file=False) as daemon:
        assert daemon.bus is not None
        rules = [rule("Stop at a red traffic light.", "red"), rule("In dense fog the speed must be reduced.", "fog")]
        assert (await submit_and_collect(daemon.bus, rules, timeout=120)).counts()["accepted"] == 2
        env = os.environ | {"DRIVEMT_NAMESPACE": config.namespace, "DRIVEMT_ARTIFACTS": "bus"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "runners.cli", "submit", "cases", str(cases), "--wait",
            "--timeout", "240", "--nats-url", str(config.nats_url), "--data-dir", str(tmp_path / "client"),
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 300)
    text = out.decode() + err.decode()
    assert proc.returncode == 0, text[-3000:]
    assert "submitted 4 driving case(s)" in text and "valid follow-ups of 4 cases" in text, text[-2000:]
    reports = list((tmp_path / "client" / "runs").rglob("*.html"))
    assert reports, text[-2000:]
    # The daemon's agents read the frames from the bucket into their own cache: the client's folder is not theirs.
    assert list((tmp_path / "daemon" / "runs").rglob("frame_00.png"))


def test_a_local_put_replaces_the_file_whole(tmp_path: Path) -> None:
    """A put writes beside the file and moves it into place: the old content or the new, never a half-written file,
    and no partial file is left behind or listed (a reader polling for a report must not read it half-drawn)."""
    store = LocalArtifactStore(tmp_path / "runs")
    store.put("b1/crashes.html", "<p>first</p>")
    store.put("b1/crashes.html", "<p>second, longer</p>")
    source = tmp_path / "sketch.jpg"
    source.write_bytes(b"\xff\xd8 jpeg")
    store.put("b1/sketch.jpg", source)
    folder = tmp_path / "runs" / "b1"
    assert sorted(p.name for p in folder.iterdir()) == ["crashes.html", "sketch.jpg"]
    assert store.get("b1/crashes.html") == b"<p>second, longer</p>" and store.get("b1/sketch.jpg") == b"\xff\xd8 jpeg"
    (folder / ".crashes.html.0123.part").write_text("<p>half")  # a put under way in another process
    assert store.list("b1") == ["b1/crashes.html", "b1/sketch.jpg"]
