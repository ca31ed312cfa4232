"""Detectors under test: specs, offline builds, a tiny training run per kind, save, load again, predict."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from runners.detectors import (
    CLASS_NAMES,
    DetectorCheckpointError,
    DetectorClassesError,
    DetectorSpec,
    DetectorSpecError,
    UnknownDetectorKindError,
    load_detector,
    state_for_class,
    train_detector,
)
from runners.detectors.base import states_for_names
from runners.detectors.yolo import write_yolo_layout
from tools.tl.detection import Detector
from tools.tl.errors import EmptyDatasetError
from tools.tl.images import read_image
from tools.tl.models import TL_STATES, TLDataset
from tools.tl.synth import SynthSettings, synth_tl


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TLDataset:
    """Eight small synthetic images (six train, one val, one test) with large lights."""
    return synth_tl(
        tmp_path_factory.mktemp("tiny") / "set",
        n_train=6,
        n_val=1,
        n_test=1,
        width=160,
        height=96,
        seed=11,
        settings=SynthSettings(size_range=(0.05, 0.07), lights_range=(1, 2), empty_fraction=0.0),
    )


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every attempt to resolve a name or open a connection is recorded and refused."""
    attempts: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(repr(args[:2]))
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield attempts


def _check_predictions(det: Detector, dataset: TLDataset) -> None:
    images = [read_image(dataset.image_path(i)) for i in dataset.images[:2]]
    out = det.predict(images, conf=0.0)
    assert len(out) == 2
    boxes = [b for per_image in out for b in per_image]
    assert boxes, "an untrained or barely trained model still ranks candidate boxes at conf=0"
    for img, per_image in zip(images, out, strict=True):
        for b in per_image:
            assert b.state in TL_STATES
            assert b.score is not None and 0.0 <= b.score <= 1.0
            assert b.inside(img.shape[1], img.shape[0])
    assert det.predict([], conf=0.25) == []


def test_spec_parsing(tmp_path: Path) -> None:
    """KIND:PATH parses (paths may contain colons); packaged yolo yamls need no file; kinds are case-insensitive."""
    weights = tmp_path / "a:b.pt"
    weights.write_bytes(b"x")
    spec = DetectorSpec.parse(f"FRCNN:{weights}")
    assert spec.kind == "frcnn" and spec.path == weights and str(spec) == f"frcnn:{weights}"
    assert DetectorSpec.parse("yolo:yolov8n.yaml").path == Path("yolov8n.yaml")
    assert DetectorSpec.parse("ssdlite:/nowhere.pt", must_exist=False).kind == "ssdlite"


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ("detr:/x.pt", UnknownDetectorKindError, "unknown detector kind 'detr'"),
        ("yolo", DetectorSpecError, "expected KIND:PATH"),
        ("yolo:", DetectorSpecError, "expected KIND:PATH"),
        ("frcnn:/no/such/file.pt", DetectorSpecError, "no such file"),
        ("yolo:not-a-shipped-model.yaml", DetectorSpecError, "no such file"),
    ],
)
def test_bad_specs_are_clear_errors(spec: str, error: type[Exception], match: str) -> None:
    """Unknown kinds, missing paths and missing files raise errors that say what is wrong."""
    with pytest.raises(error, match=match):
        load_detector(spec)


def test_class_names_map_onto_states() -> None:
    """States, synonyms and arrow classes map by colour; names that are not lights raise DetectorClassesError."""
    assert [state_for_class(n) for n in ("Red", "stop", "GreenLeft", "go_forward", "warning", "off")] == [
        "red",
        "red",
        "green",
        "green",
        "yellow",
        "off",
    ]
    assert state_for_class("person") is None
    assert states_for_names({0: "go", 1: "stop"}, "m.pt") == {0: "green", 1: "red"}
    with pytest.raises(DetectorClassesError, match="traffic light"):
        states_for_names(["person", "traffic light"], "coco.pt")


def test_not_a_checkpoint_is_refused(tmp_path: Path) -> None:
    """A file that is not a checkpoint of the named kind raises DetectorCheckpointError, not a crash."""
    junk = tmp_path / "junk.pt"
    junk.write_text("not a model")
    for kind in ("frcnn", "ssdlite", "yolo"):
        with pytest.raises(DetectorCheckpointError):
            load_detector(f"{kind}:{junk}")


def test_yolo_layout_labels(tiny: TLDataset, tmp_path: Path) -> None:
    """The YOLO copy has one label line per box: class index in CLASS_NAMES order and normalised centre/size."""
    data = write_yolo_layout(tiny, tmp_path / "y")
    assert "names" in data.read_text()
    image = tiny.images[0]
    labels = sorted((tmp_path / "y" / "labels" / "train").glob("*.txt"))[0].read_text().split("\n")
    first = [float(v) for v in labels[0].split()]
    box = image.boxes[0]
    assert int(first[0]) == CLASS_NAMES.index(box.state)
    assert first[1:] == pytest.approx(
        [box.cx / image.width, box.cy / image.height, box.width / image.width, box.height / image.height], abs=1e-5
    )
    with pytest.raises(EmptyDatasetError):
        write_yolo_layout(tiny.model_copy(update={"images": []}), tmp_path / "z")


@pytest.mark.slow
def test_yolo_from_yaml_offline(no_network: list[str]) -> None:
    """A packaged model yaml builds an untrained four-state detector without touching the network."""
    det = load_detector("yolo:yolov8n.yaml")
    out = det.predict([np.zeros((96, 160, 3), np.uint8)], conf=0.0)
    assert len(out) == 1 and all(b.state in TL_STATES for b in out[0])
    assert no_network == []


@pytest.mark.slow
def test_yolo_trains_saves_and_loads(tiny: TLDataset, tmp_path: Path, no_network: list[str]) -> None:
    """One ultralytics epoch on tiny images writes weights that load as yolo:PATH and predict states and scores, offline."""
    messages: list[str] = []
    weights = train_detector(
        "yolo", tiny, tmp_path / "yolo", epochs=1, imgsz=160, seed=1, progress=lambda m, f: messages.append(m)
    )
    assert weights.is_file() and messages
    det = load_detector(f"yolo:{weights}")
    assert det.name == f"yolo:{weights}"
    _check_predictions(det, tiny)
    assert no_network == []


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["frcnn", "ssdlite"])
def test_torchvision_trains_saves_and_loads(kind: str, tiny: TLDataset, tmp_path: Path, no_network: list[str]) -> None:
    """One short epoch of the torchvision loop writes a checkpoint that loads as KIND:PATH and predicts, offline."""
    small = tiny.model_copy(update={"images": tiny.images[:4]})
    weights = train_detector(kind, small, tmp_path / kind, epochs=1, imgsz=160, seed=1)
    assert weights.name == f"{kind}.pt"
    det = load_detector(f"{kind}:{weights}")
    _check_predictions(det, tiny)
    other = "ssdlite" if kind == "frcnn" else "frcnn"
    with pytest.raises(DetectorCheckpointError, match=f"holds a {kind} model"):
        load_detector(f"{other}:{weights}")
    assert no_network == []
