"""Traffic-light datasets through a real daemon: TL-Augmenter, Judge with a real detector, report, bad input."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bus import ErrorDomain, ErrorReported, ProgressReported, TLAugmented, TLDatasetSubmitted, TLVerdict, decode_event
from bus.errors import EventValidationError
from bus.events import TLDatasetPayload
from memory import MiniLMEmbedder
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tests.helpers import Recorder
from tools.tl.datasets import load_dataset, save_manifest
from tools.tl.synth import synth_tl


@pytest.fixture
async def daemon(config: DrivemtConfig, embedder: MiniLMEmbedder) -> AsyncIterator[Daemon]:
    async with Daemon(config, embedder=embedder) as d:
        yield d


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six small synthetic images; one of them made unreadable (the rest must still be augmented)."""
    out = tmp_path_factory.mktemp("tl")
    synth_tl(out, n_train=0, n_val=0, n_test=6, width=320, height=180, seed=5)
    ds = load_dataset(out)
    ds.image_path(ds.images[0]).write_bytes(b"\x00 broken")
    save_manifest(ds.model_copy(update={"root": None}), out)
    return out


def submitted(path: Path, **fields: object) -> TLDatasetSubmitted:
    """A dataset submission as ``drivemt submit tl`` sends it."""
    return TLDatasetSubmitted(producer="test", payload=TLDatasetPayload(dataset=str(path), **fields))  # type: ignore[arg-type]


@pytest.mark.slow
async def test_dataset_is_augmented_tested_and_reported(daemon: Daemon, dataset: Path, config: DrivemtConfig) -> None:
    """The augmenter streams progress and skips the broken image; the Judge runs a real (untrained) YOLO on every
    pair and publishes a verdict whose report exists."""
    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, s.tl_augmented, s.tl_verdict, s.progress, s.errors(ErrorDomain.TL))
    ev = submitted(dataset, transforms=["RN", "CC", "SC"], detectors=["yolo:yolov8n.yaml"], seed=1)
    await daemon.bus.publish(ev)
    await rec.wait_for(lambda evs: any(isinstance(e, TLVerdict) for e in evs), timeout=240)
    (aug,) = rec.of(TLAugmented)
    p = aug.payload  # type: ignore[attr-defined]
    assert p.images_in == 6 and p.pairs == 15 and p.per_transform == {"RN": 5, "CC": 5, "SC": 5}
    assert len(p.skipped) == 1 and "not a readable image" in p.skipped[0]["reason"]
    assert not Path(p.manifest_ref).is_absolute() and (config.runs_dir / p.manifest_ref).is_file()
    assert any(e.payload.stage == "tl-augment" for e in rec.of(ProgressReported))  # type: ignore[attr-defined]
    (verdict,) = rec.of(TLVerdict)
    v = verdict.payload  # type: ignore[attr-defined]
    assert (
        v.detectors == ["yolo:yolov8n.yaml"]
        and v.pairs == 15
        and set(v.map_augmented["yolo:yolov8n.yaml"])
        == {
            "RN",
            "CC",
            "SC",
        }
    )
    assert v.report and (config.runs_dir / v.report).is_file() and verdict.correlation_id == ev.correlation_id


@pytest.mark.slow
async def test_the_judge_loads_detectors_from_the_store_and_refuses_local_paths(
    daemon: Daemon, dataset: Path, config: DrivemtConfig, tmp_path: Path
) -> None:
    """A detector named by a path of the daemon's machine is refused with the reason (weights would be unpickled
    from a file an event chose); the same file imported into the artefact store (``import_detectors``, as
    ``drivemt submit tl`` does) is loaded from there and tested."""
    import shutil

    from runners.clients.tl import import_detectors
    from runners.detectors.yolo import packaged_model_yaml
    from tools.common.artifacts import LocalArtifactStore

    packaged = packaged_model_yaml("yolov8n.yaml")
    assert packaged is not None
    local = tmp_path / "yolov8n.yaml"
    shutil.copyfile(packaged, local)
    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, s.tl_verdict, s.errors(ErrorDomain.JUDGE))
    await daemon.bus.publish(submitted(dataset, transforms=["RN"], detectors=[f"yolo:{local}"], fraction=0.5))
    await rec.wait_for(lambda evs: any(isinstance(e, ErrorReported) for e in evs), timeout=120)
    reasons = " | ".join(e.payload.reason for e in rec.of(ErrorReported))  # type: ignore[attr-defined]
    assert "artefact ref" in reasons and not rec.of(TLVerdict), reasons
    (spec,) = import_detectors(LocalArtifactStore(config.runs_dir), [f"yolo:{local}"])
    assert spec.startswith("yolo:detectors/") and spec.endswith("/yolov8n.yaml")
    assert import_detectors(LocalArtifactStore(config.runs_dir), [f"yolo:{local}", "yolo:yolov8n.yaml"]) == [
        spec,
        "yolo:yolov8n.yaml",
    ]  # by content, once; a packaged config passes as it is
    await daemon.bus.publish(submitted(dataset, transforms=["RN"], detectors=[spec], fraction=0.5))
    await rec.wait_for(lambda evs: any(isinstance(e, TLVerdict) for e in evs), timeout=240)
    (verdict,) = rec.of(TLVerdict)
    assert verdict.payload.detectors == [spec] and verdict.payload.pairs > 0  # type: ignore[attr-defined]


async def test_unreadable_and_malformed_datasets_get_error_events(daemon: Daemon, tmp_path: Path) -> None:
    """A folder that is no dataset and an event with an unknown transformation each get an error; the agent goes on."""
    assert daemon.bus is not None
    s = daemon.bus.subjects
    rec = await Recorder().watch(daemon.bus, s.errors(ErrorDomain.TL), s.errors(ErrorDomain.AGENTS), s.tl_augmented)
    (tmp_path / "empty").mkdir()
    await daemon.bus.publish(submitted(tmp_path / "empty", transforms=["OE"]))
    bad = submitted(tmp_path / "empty").model_dump(mode="json")
    bad["payload"]["transforms"] = ["ZZ"]
    await daemon.bus.publish_raw(s.tl_datasets_submitted, json.dumps(bad).encode())
    await rec.wait_for(lambda evs: len(rec.of(ErrorReported)) >= 2, timeout=60)
    reasons = " | ".join(e.payload.reason for e in rec.of(ErrorReported))  # type: ignore[attr-defined]
    assert "empty" in reasons and "ZZ" in reasons
    with pytest.raises(EventValidationError, match="ZZ"):
        decode_event(json.dumps(bad).encode())
