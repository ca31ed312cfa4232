"""Whole-dataset augmentation, detector testing (TIGAUG Eq. 1/2 on real images) and the HTML report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from runners.detectors import load_detector
from tools.tl.augment import AugmentationManifest, augment_dataset, load_augmentation, sample_images, transform_seed
from tools.tl.datasets import load_dataset
from tools.tl.errors import DatasetFormatError, EmptyDatasetError, UnknownTransformError
from tools.tl.formats import read_dataset
from tools.tl.images import write_image
from tools.tl.judging import judge_detectors
from tools.tl.models import TLBox, TLDataset, TLImage
from tools.tl.report import write_tl_report
from tools.tl.synth import synth_tl
from tools.tl.transforms import transform_detections


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> TLDataset:
    """A small synthetic set (real generator): 8 test images with lights."""
    out = tmp_path_factory.mktemp("synth")
    synth_tl(out, n_train=0, n_val=0, n_test=8, width=320, height=180, seed=3)
    return load_dataset(out)


class OracleDetector:
    """Answers with the ground truth of whichever image it is shown (looked up by its pixels).

    A stand-in for a perfect detector, so the Judge's relation logic is checked against known answers;
    ``blind_to_colour`` makes it read every lit light as red (a detector that ignores colour).
    """

    def __init__(self, truth: dict[bytes, list[TLBox]], *, blind_to_colour: bool = False) -> None:
        self.truth = truth
        self.blind = blind_to_colour

    @property
    def name(self) -> str:
        return "oracle-colour-blind" if self.blind else "oracle"

    def predict(self, images: Sequence[np.ndarray], *, conf: float = 0.25) -> list[list[TLBox]]:
        out = []
        for img in images:
            boxes = self.truth.get(img.tobytes(), [])
            out.append(
                [
                    b.model_copy(update={"score": 0.9, "state": "red" if self.blind and b.state != "off" else b.state})
                    for b in boxes
                ]
            )
        return out


def _oracle(manifest_pairs: list, *, blind: bool = False) -> OracleDetector:
    from tools.tl.images import read_image

    truth: dict[bytes, list[TLBox]] = {}
    for p in manifest_pairs:
        truth[read_image(p.original_path).tobytes()] = list(p.original.boxes)
        truth[read_image(p.augmented_path).tobytes()] = list(p.augmented.boxes)
    return OracleDetector(truth, blind_to_colour=blind)


def test_augment_writes_every_pair_and_a_manifest(synth: TLDataset, tmp_path: Path) -> None:
    """Every sampled image gets every requested transformation; the manifest reads back and names real files."""
    m = augment_dataset(synth, out=tmp_path / "aug", transforms=["RN", "cc", "SC"], seed=1, fraction=0.5)
    assert m.images_sampled == 4 and len(m.pairs) == 12
    assert m.per_transform() == {"RN": 4, "CC": 4, "SC": 4}
    again = load_augmentation(tmp_path / "aug")
    assert again.model_dump(mode="json") == json.loads(m.model_dump_json())
    for p in m.pairs:
        assert Path(p.augmented_path).is_file() and p.augmented_id == f"{p.original_id}__{p.code}"
        assert p.augmented.width == p.original.width
        if p.code == "RN":
            assert [b.xyxy() for b in p.augmented.boxes] == [b.xyxy() for b in p.original.boxes]
        if p.code == "SC":
            assert p.affine is not None
    # τ on the ground truth of the original gives the transformed ground truth, from the manifest alone.
    for p in m.pairs:
        mapped = transform_detections(p.as_result(), list(p.original.boxes))
        assert [(b.state, tuple(round(v, 3) for v in b.xyxy())) for b in mapped] == [
            (b.state, tuple(round(v, 3) for v in b.xyxy())) for b in p.augmented.boxes
        ]


def test_sampling_and_seeds_are_stable(synth: TLDataset) -> None:
    """The same seed picks the same images and the same per-image seeds; another seed picks others."""
    a = [i.image_id for i in sample_images(synth.images, 0.5, seed=7)]
    b = [i.image_id for i in sample_images(synth.images, 0.5, seed=7)]
    c = [i.image_id for i in sample_images(synth.images, 0.5, seed=8)]
    assert a == b and len(a) == 4 and a != c
    assert transform_seed(1, "x", "RN") == transform_seed(1, "x", "RN") != transform_seed(1, "x", "SW")


def test_bad_images_are_skipped_and_the_rest_augmented(synth: TLDataset, tmp_path: Path) -> None:
    """An unreadable image and a box outside its image are skipped with reasons; the other images still come out."""
    images = list(synth.images[:3])
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    images[0] = images[0].model_copy(update={"path": str(broken)})
    outside = TLBox(x1=300, y1=10, x2=400, y2=40, state="red")
    images[1] = images[1].model_copy(update={"boxes": [*images[1].boxes, outside]})
    ds = synth.model_copy(update={"images": images})
    m = augment_dataset(ds, out=tmp_path / "aug", transforms=["OE"], seed=0)
    assert len(m.pairs) == 1 and m.pairs[0].original_id == images[2].image_id
    reasons = {s.item: s.reason for s in m.skipped}
    assert "not a readable image" in reasons[images[0].image_id]
    assert "outside" in reasons[images[1].image_id]


def test_bad_requests_are_clear_errors(synth: TLDataset, tmp_path: Path) -> None:
    """An unknown code, an empty dataset, a folder that is no dataset and an empty split each raise a clear error."""
    with pytest.raises(UnknownTransformError, match="XX"):
        augment_dataset(synth, out=tmp_path / "a", transforms=["XX"])
    with pytest.raises(EmptyDatasetError):
        augment_dataset(synth.model_copy(update={"images": []}), out=tmp_path / "b")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetFormatError):
        load_dataset(tmp_path / "empty")
    with pytest.raises(EmptyDatasetError, match="no images in split 'val'"):
        load_dataset(Path(synth.root or ""), split="val")
    assert len(load_dataset(Path(synth.root or ""), split="test").images) == len(synth.images)


def test_export_in_the_input_format_reads_back(tmp_path: Path) -> None:
    """A COCO dataset comes back augmented as COCO, readable by the format reader."""
    ds = read_dataset(Path(__file__).parent / "fixtures" / "tl" / "coco")
    m = augment_dataset(ds, out=tmp_path / "aug", transforms=["MB", "MP"], seed=0, export_format="coco")
    assert m.export is not None
    back = read_dataset(m.export, "coco")
    assert len(back.images) == len(m.pairs)
    assert sorted(len(i.boxes) for i in back.images) == sorted(len(p.augmented.boxes) for p in m.pairs)
    moved = [p for p in m.pairs if p.code == "MP" and p.changed]
    assert moved, "the fixture's lights should have room to move"


def test_perfect_detector_keeps_every_relation(synth: TLDataset, tmp_path: Path) -> None:
    """A detector that always reads the scene right has consistency 1 on every pair and mAP 1 everywhere."""
    m = augment_dataset(synth, out=tmp_path / "aug", transforms=["FG", "CC", "MP", "AD", "RT", "SC"], seed=2)
    result = judge_detectors(m, [_oracle(m.pairs)], out_dir=tmp_path)
    (s,) = result.summaries
    assert s.map_original == pytest.approx(1.0)
    assert all(v == pytest.approx(1.0) for v in s.map_augmented.values())
    assert not result.violations() and all(p.consistency == pytest.approx(1.0) for p in result.pairs)


def test_colour_blind_detector_violates_change_colour(synth: TLDataset, tmp_path: Path) -> None:
    """A detector that reads green as red breaks CC's relation (Eq. 2), keeps FG's (Eq. 1), and the report shows it."""
    m = augment_dataset(synth, out=tmp_path / "aug", transforms=["FG", "CC"], seed=2)
    changed = [p for p in m.pairs if p.code == "CC" and p.changed]
    assert changed, "the synthetic images should hold red or green lights"
    result = judge_detectors(m, [_oracle(m.pairs, blind=True)], out_dir=tmp_path)
    bad = {(v.original_id, v.code) for v in result.violations()}
    assert {(p.original_id, "CC") for p in changed} <= bad
    assert not any(code == "FG" for _, code in bad)
    assert all(Path(v.evidence or "").is_file() for v in result.violations())
    report = write_tl_report(result, tmp_path / "report.html")
    html = report.read_text()
    assert "violation" in html and "CC" in html and "oracle-colour-blind" in html
    assert html.index("Violations") < html.index(result.violations()[0].evidence.split("/")[-1])
    assert json.loads(result.model_dump_json())["threshold"] == result.threshold


def test_augmenting_into_the_same_folder_again_keeps_only_the_new_run(synth: TLDataset, tmp_path: Path) -> None:
    """A second run into one output folder leaves only its own images there (the first run's stayed beside a manifest
    that no longer listed them)."""
    augment_dataset(synth, out=tmp_path / "aug", transforms=["CC", "MP"], seed=0)
    m = augment_dataset(synth, out=tmp_path / "aug", transforms=["SC"], seed=1)
    assert sorted(p.name for p in (tmp_path / "aug" / "images").iterdir()) == ["SC"]
    assert len(list((tmp_path / "aug" / "images" / "SC").iterdir())) == len(m.pairs)


def test_a_detector_that_finds_nothing_is_not_reported_as_robust(synth: TLDataset, tmp_path: Path) -> None:
    """Nothing found on either image agrees trivially (consistency 1): those pairs are counted as untested and the
    report says so, instead of 'every detector kept its reading' alone (a blind detector looked robust)."""
    m = augment_dataset(synth, out=tmp_path / "aug", transforms=["FG", "CC"], seed=2)
    blind = OracleDetector({})
    result = judge_detectors(m, [blind], out_dir=tmp_path)
    (s,) = result.summaries
    assert not result.violations() and s.untested == s.pairs and s.untested_share() == 1.0
    html = write_tl_report(result, tmp_path / "report.html").read_text()
    assert "found no light on either image" in html and "untested" in html
    seeing = judge_detectors(m, [_oracle(m.pairs)], out_dir=tmp_path / "o").summaries[0]
    assert sum(seeing.untested.values()) < sum(seeing.pairs.values())


@pytest.mark.slow
def test_untrained_yolo_runs_through_the_judge(synth: TLDataset, tmp_path: Path) -> None:
    """A real ultralytics model built from its yaml (untrained, offline) is run on every image and judged."""
    m = augment_dataset(synth, out=tmp_path / "aug", transforms=["UE", "RT"], seed=0, fraction=0.5)
    result = judge_detectors(m, [load_detector("yolo:yolov8n.yaml")], out_dir=tmp_path)
    (s,) = result.summaries
    assert set(s.pairs) == {"UE", "RT"} and sum(s.pairs.values()) == len(m.pairs)
    assert 0.0 <= s.map_original <= 1.0 and len(result.pairs) == len(m.pairs)


def test_image_sizes_must_match_labels(synth: TLDataset, tmp_path: Path) -> None:
    """An image whose file size differs from its labels is skipped, not transformed with wrong boxes."""
    small = tmp_path / "small.png"
    write_image(small, np.zeros((10, 10, 3), np.uint8))
    img = TLImage(image_id="small", path=str(small), width=320, height=180, boxes=[])
    m = augment_dataset(
        synth.model_copy(update={"images": [img, synth.images[0]]}), out=tmp_path / "aug", transforms=["RN"]
    )
    assert [p.original_id for p in m.pairs] == [synth.images[0].image_id]
    assert "labels say 320x180" in m.skipped[0].reason


def test_a_set_with_nothing_augmented_is_an_error_not_a_clean_result(synth: TLDataset, tmp_path: Path) -> None:
    """Every image unreadable, or parameters that do not fit: one clear error, never an empty manifest that a Judge
    would score as mAP 1.000 with no violations; a manifest that is missing or not one is bad input too."""
    from tools.tl.errors import EmptyDatasetError
    from tools.tl.judging import judge_detectors
    from tools.tl.transforms import TransformParamsError

    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image")
    img = TLImage(image_id="junk", path=str(junk), width=320, height=180, boxes=[])
    with pytest.raises(EmptyDatasetError, match="none of its 1 sampled images could be augmented") as info:
        augment_dataset(synth.model_copy(update={"images": [img]}), out=tmp_path / "aug", transforms=["RN"])
    assert "junk" in str(info.value)
    with pytest.raises(TransformParamsError, match="SC"):
        augment_dataset(synth, out=tmp_path / "p", transforms=["SC"], params={"SC": {"factor": "abc"}})
    empty = AugmentationManifest(source="x", format="drivemt", out_dir=str(tmp_path), transforms=["RN"], seed=0,
                                 fraction=1.0, images_in=0, images_sampled=0)  # fmt: skip
    with pytest.raises(EmptyDatasetError, match="nothing to test"):
        judge_detectors(empty, [], out_dir=tmp_path / "j")
    from tools.tl.errors import TLDataError

    with pytest.raises(TLDataError, match="no augmentation manifest"):  # (bad input, not a retried FileNotFoundError)
        load_augmentation(tmp_path / "nowhere" / "manifest.json")
    with pytest.raises(TLDataError, match="not a readable augmentation manifest"):
        load_augmentation(junk)
