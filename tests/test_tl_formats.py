"""Traffic-light dataset formats: LISA, Bosch, YOLO and COCO fixtures written to each published description,
round trips, conversion between formats, auto-detection, bad input and in-memory images."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from tools.tl.errors import DatasetFormatError, EmptyDatasetError, UnknownStateError
from tools.tl.formats import FORMATS, detect_format, read_dataset, write_dataset
from tools.tl.formats.states import BOSCH_LABELS, LISA_TAGS, bosch_label, lisa_tag, state_from_label
from tools.tl.formats.yolo import label_path
from tools.tl.images import read_image
from tools.tl.models import TLBox, TLDataset, TLImage

FIX = Path(__file__).parent / "fixtures" / "tl"

Row = tuple[float, float, float, float, str, str | None]

# What each fixture's hand-written annotation files say, image by image (box corners, state, arrow).
LISA_EXPECTED: dict[str, list[Row]] = {
    "dayClip1--00000": [(10, 5, 16, 19, "green", None), (30, 4, 36, 18, "green", "left")],
    "dayClip1--00001": [(11, 6, 17, 20, "red", None), (40, 8, 46, 22, "yellow", "left")],
    "dayClip1--00002": [],  # a frame of the clip that no row names: no lights
    "daySequence1--00000": [
        (20, 10, 26, 24, "green", "straight"),
        (44, 3, 50, 17, "red", "left"),
        (5, 25, 11, 39, "yellow", None),
    ],
}
BOSCH_EXPECTED: dict[str, list[Row]] = {
    "24594": [(10.625, 5.25, 15.75, 19.5, "yellow", None), (31.0, 4.0, 36.5, 18.375, "red", "left")],
    "24664": [],
    "56988": [
        (14.5, 16.0, 20.0, 30.25, "off", None),
        (45.0, 8.0, 51.0, 22.0, "green", "left"),
        (30.5, 27.0, 36.0, 40.0, "green", None),
    ],
    "24068": [(9.0, 5.125, 12.25, 15.125, "green", None)],
    "24070": [(40.25, 10.5, 44.75, 21.0, "red", "straight")],
}
YOLO_EXPECTED: dict[str, list[Row]] = {
    "000001": [(10, 5, 16, 19, "red", None), (31, 4, 37, 18, "green", None)],
    "000002": [(46, 22, 52, 36, "yellow", None), (15, 17, 21, 31, "red", "left"), (5, 34, 11, 44, "off", None)],
    "000003": [],
    "000004": [(28, 16, 36, 32, "green", None)],
}
COCO_EXPECTED: dict[str, list[Row]] = {
    "frame_0001": [(10, 5, 16, 19, "red", None), (30.5, 4, 36.5, 18, "green", "left")],
    "frame_0002": [(40, 20, 46, 34, "yellow", None), (8, 26, 18, 31, "off", None)],
    "frame_0003": [(22, 12, 28, 26, "green", None)],
}
EXPECTED = {"lisa": LISA_EXPECTED, "bosch": BOSCH_EXPECTED, "yolo": YOLO_EXPECTED, "coco": COCO_EXPECTED}
SPLITS = {
    "lisa": {
        "dayClip1--00000": "train",
        "dayClip1--00001": "train",
        "dayClip1--00002": "train",
        "daySequence1--00000": "test",
    },
    "bosch": {"24594": "train", "24664": "train", "56988": "train", "24068": "test", "24070": "test"},
    "yolo": {"000001": "train", "000002": "train", "000003": "val", "000004": "val"},
    "coco": {"frame_0001": "train", "frame_0002": "train", "frame_0003": "val"},
}
CARRIES_ARROWS = {"lisa": True, "bosch": True, "yolo": False, "coco": True}
CARRIES_OCCLUSION = {"lisa": False, "bosch": True, "yolo": False, "coco": True}
# One image file per fixture, by path and id, for the bad-input cases.
ONE_IMAGE = {
    "lisa": ("dayTrain/dayTrain/dayClip1/frames/dayClip1--00001.jpg", "dayClip1--00001"),
    "bosch": ("rgb/train/2015-10-05-10-52-01_bag/24594.png", "24594"),
    "yolo": ("images/train/000002.jpg", "000002"),
    "coco": ("images/train/frame_0002.png", "frame_0002"),
}
# The image that _add_box() adds a box to.
FIRST_IMAGE = {"lisa": "dayClip1--00000", "bosch": "24594", "yolo": "000001", "coco": "frame_0001"}


def rows(ds: TLDataset, *, arrows: bool = True) -> dict[str, list[Row]]:
    """Boxes per image id, as (x1, y1, x2, y2, state, arrow), sorted."""
    return {
        im.image_id: sorted((b.x1, b.y1, b.x2, b.y2, b.state, b.arrow if arrows else None) for b in im.boxes)
        for im in ds.images
    }


def assert_same_boxes(got: TLDataset, want: dict[str, list[Row]], *, tol: float, arrows: bool = True) -> None:
    """Same images, and per image the same boxes within ``tol`` pixels with the same states (and arrows)."""
    have = rows(got, arrows=arrows)
    assert set(have) == set(want)
    for image_id, expected in want.items():
        exp = sorted((*r[:5], r[5] if arrows else None) for r in expected)
        assert len(have[image_id]) == len(exp), image_id
        for a, b in zip(have[image_id], exp, strict=True):
            assert a[4:] == b[4:], (image_id, a, b)
            assert np.allclose(a[:4], b[:4], atol=tol), (image_id, a, b)


def copy_fixture(fmt: str, tmp_path: Path) -> Path:
    """A writable copy of one format's fixture."""
    dst = tmp_path / f"{fmt}_copy"
    shutil.copytree(FIX / fmt, dst)
    return dst


def add_box(fmt: str, root: Path, label: str, xyxy: tuple[float, float, float, float]) -> None:
    """Add one box with a label to the fixture copy's first image, in the format's own way."""
    x1, y1, x2, y2 = xyxy
    if fmt == "lisa":
        csv = root / "Annotations/Annotations/dayTrain/dayClip1/frameAnnotationsBOX.csv"
        with csv.open("a", encoding="utf-8") as f:
            f.write(f"dayTraining/dayClip1--00000.jpg;{label};{x1:g};{y1:g};{x2:g};{y2:g};o.mp4;0;o.mp4;0\n")
    elif fmt == "bosch":
        entries = yaml.safe_load((root / "train.yaml").read_text())
        entries[0]["boxes"].append(
            {"label": label, "occluded": False, "x_min": x1, "x_max": x2, "y_min": y1, "y_max": y2}
        )
        (root / "train.yaml").write_text(yaml.safe_dump(entries))
    elif fmt == "yolo":
        data = yaml.safe_load((root / "data.yaml").read_text())
        names = {int(k): v for k, v in data["names"].items()}
        if label not in names.values():
            names[len(names)] = label
            data["names"] = names
            (root / "data.yaml").write_text(yaml.safe_dump(data))
        cls = next(k for k, v in names.items() if v == label)
        w, h = 64, 48
        with (root / "labels/train/000001.txt").open("a") as f:
            f.write(f"{cls} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}\n")
    else:
        path = root / "annotations/instances_train.json"
        doc = json.loads(path.read_text())
        cats = {c["name"]: c["id"] for c in doc["categories"]}
        if label not in cats:
            cats[label] = max(cats.values()) + 1
            doc["categories"].append({"id": cats[label], "name": label, "supercategory": "traffic light"})
        doc["annotations"].append(
            {
                "id": 99,
                "image_id": 1,
                "category_id": cats[label],
                "bbox": [x1, y1, x2 - x1, y2 - y1],
                "area": 1,
                "iscrowd": 0,
            }
        )
        path.write_text(json.dumps(doc))


# --- state mapping tables -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("go", ("green", None)),
        ("goLeft", ("green", "left")),
        ("goForward", ("green", "straight")),
        ("warning", ("yellow", None)),
        ("warningLeft", ("yellow", "left")),
        ("stop", ("red", None)),
        ("stopLeft", ("red", "left")),
        ("Red", ("red", None)),
        ("off", ("off", None)),
        ("Off", ("off", None)),
        ("GreenRight", ("green", "right")),
        ("RedStraight", ("red", "straight")),
        ("RedStraightLeft", ("red", "left")),
        ("GreenStraightRight", ("green", "right")),
        ("RedStraightRight", ("red", "right")),
        ("stopRight", ("red", "right")),
        ("traffic light yellow", ("yellow", None)),
        ("traffic_light_red_left", ("red", "left")),
        ("AMBER", ("yellow", None)),
        ("green", ("green", None)),
    ],
)
def test_labels_map_onto_states_and_arrows(label: str, expected: tuple[str, str | None]) -> None:
    """Published LISA tags, Bosch labels and free-form names map onto drivemt's state and arrow."""
    assert state_from_label(label, where="t") == expected


@pytest.mark.parametrize("label", ["traffic light", "pedestrian", "red-green", "", "unknown"])
def test_labels_without_one_colour_are_unknown(label: str) -> None:
    """A label naming no colour, or two, is an unknown state naming where it was found."""
    with pytest.raises(UnknownStateError, match="file.csv:7"):
        state_from_label(label, where="file.csv:7")


def test_published_labels_are_written_back_unchanged() -> None:
    """Every published LISA tag and Bosch label maps to a state and back to itself."""
    for tag in LISA_TAGS:
        assert lisa_tag(*state_from_label(tag, where="t")) == tag
        assert lisa_tag(*state_from_label(tag, where="t"), tag) == tag
    for label in BOSCH_LABELS:
        assert bosch_label(*state_from_label(label, where="t"), label) == label


def test_labels_a_format_lacks_drop_the_arrow_or_use_the_nearest_label() -> None:
    """Arrows a format has no label for are dropped, LISA's missing unlit state becomes 'off', recolouring keeps Bosch's arrow part."""
    assert lisa_tag("off", None) == "off"
    assert lisa_tag("red", "right") == "stop"
    assert lisa_tag("green", "straight") == "goForward"
    assert bosch_label("yellow", "left") == "Yellow"
    assert bosch_label("off", "left") == "off"
    assert bosch_label("green", "left", "RedStraightLeft") == "GreenStraightLeft"
    assert bosch_label("green", "left") == "GreenLeft"
    assert bosch_label("red", None, "GreenLeft") == "Red"


# --- the fixtures, read as published -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_fixture_reads_with_its_boxes_states_arrows_and_splits(fmt: str) -> None:
    """Each format's fixture gives its images, boxes, states, arrows and splits as the annotation files say."""
    ds = read_dataset(FIX / fmt, fmt)
    assert ds.format == fmt
    assert ds.skipped == []
    assert_same_boxes(ds, EXPECTED[fmt], tol=1e-3)
    assert {im.image_id: im.split for im in ds.images} == SPLITS[fmt]
    assert all((im.width, im.height) == (64, 48) for im in ds.images)
    assert all(ds.image_path(im).is_file() for im in ds.images)


def test_lisa_reads_box_annotations_only_and_resolves_frames_by_name() -> None:
    """LISA's BULB files are not counted twice and Filename values are resolved to the unpacked frames."""
    ds = read_dataset(FIX / "lisa")
    assert ds.box_count() == 7  # the BOX files' rows; the BULB file holds four more
    assert {b.source_label for im in ds.images for b in im.boxes} == {
        "go",
        "goLeft",
        "goForward",
        "stop",
        "stopLeft",
        "warning",
        "warningLeft",
    }
    paths = {im.image_id: im.path for im in ds.images}
    assert paths["dayClip1--00000"] == "dayTrain/dayTrain/dayClip1/frames/dayClip1--00000.jpg"


def test_bosch_keeps_occlusion_source_labels_and_fixes_swapped_corners() -> None:
    """Bosch's occluded flags and labels are kept, x_min > x_max is swapped, a server path is found by name."""
    ds = read_dataset(FIX / "bosch")
    by_id = {im.image_id: im for im in ds.images}
    assert [b.occluded for b in by_id["24594"].boxes] == [True, False]
    assert by_id["24070"].boxes[0].occluded
    assert [b.source_label for b in by_id["56988"].boxes] == ["off", "GreenStraightLeft", "Green"]
    swapped = by_id["56988"].boxes[2]
    assert (swapped.x1, swapped.x2) == (30.5, 36.0)
    assert by_id["24070"].path == "rgb/test/24070.png"


def test_yolo_maps_class_names_by_name_and_reads_scores_and_polygons(tmp_path: Path) -> None:
    """YOLO class ids are mapped through data.yaml's names; a sixth column is a score; a polygon line gives its box."""
    root = copy_fixture("yolo", tmp_path)
    (root / "labels/val/000003.txt").write_text("2 0.5 0.5 0.25 0.5 0.875\n1 0.25 0.25 0.375 0.25 0.375 0.5 0.25 0.5\n")
    ds = read_dataset(root)
    boxes = {im.image_id: im.boxes for im in ds.images}["000003"]
    assert (boxes[0].state, boxes[0].score) == ("red", 0.875)
    assert np.allclose(boxes[0].xyxy(), (24, 12, 40, 36))
    assert (boxes[1].state, boxes[1].score) == ("yellow", None)
    assert np.allclose(boxes[1].xyxy(), (16, 12, 24, 24))


def test_coco_keeps_attributes_and_scores(tmp_path: Path) -> None:
    """COCO annotation attributes (arrow, occluded) and result scores are read."""
    root = copy_fixture("coco", tmp_path)
    path = root / "annotations/instances_val.json"
    doc = json.loads(path.read_text())
    doc["annotations"][0]["score"] = 0.625
    path.write_text(json.dumps(doc))
    ds = read_dataset(root)
    by_id = {im.image_id: im for im in ds.images}
    assert [(b.arrow, b.occluded) for b in by_id["frame_0001"].boxes] == [(None, False), ("left", True)]
    assert by_id["frame_0003"].boxes[0].score == 0.625


# --- round trips and conversion -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_keeps_boxes_states_and_what_the_format_carries(fmt: str, tmp_path: Path) -> None:
    """Reading a fixture, writing it in its format and reading it again gives the same images and labels."""
    first = read_dataset(FIX / fmt)
    out = write_dataset(first, tmp_path / "out", fmt)
    second = read_dataset(out, fmt)
    assert second.skipped == []
    assert {im.image_id: im.split for im in second.images} == SPLITS[fmt]
    assert rows(second, arrows=CARRIES_ARROWS[fmt]).keys() == rows(first).keys()
    assert_same_boxes(second, rows(first), tol=1e-3, arrows=CARRIES_ARROWS[fmt])
    if CARRIES_OCCLUSION[fmt]:
        occ = {im.image_id: [b.occluded for b in im.boxes] for im in first.images}
        assert {im.image_id: [b.occluded for b in im.boxes] for im in second.images} == occ
    for a, b in zip(
        sorted(first.images, key=lambda i: i.image_id), sorted(second.images, key=lambda i: i.image_id), strict=True
    ):
        assert read_image(first.image_path(a)).shape == read_image(second.image_path(b)).shape


def test_bosch_round_trip_keeps_its_labels(tmp_path: Path) -> None:
    """A Bosch dataset written as Bosch keeps every label as spelled, including RedStraight and GreenStraightLeft."""
    first = read_dataset(FIX / "bosch")
    second = read_dataset(write_dataset(first, tmp_path / "b", "bosch"))
    labels = sorted(b.source_label or "" for im in first.images for b in im.boxes)
    assert sorted(b.source_label or "" for im in second.images for b in im.boxes) == labels


def test_conversion_lisa_coco_yolo_bosch_keeps_boxes_within_a_pixel(tmp_path: Path) -> None:
    """LISA -> COCO -> YOLO -> Bosch keeps every image, box (within a pixel) and state; YOLO drops the arrows."""
    lisa = read_dataset(FIX / "lisa")
    ds = lisa
    for fmt in ("coco", "yolo", "bosch"):
        ds = read_dataset(write_dataset(ds, tmp_path / fmt, fmt))
        assert ds.format == fmt
        assert ds.skipped == []
        assert_same_boxes(ds, rows(lisa), tol=1.0, arrows=fmt == "coco")
    assert all(b.arrow is None for im in ds.images for b in im.boxes)
    assert {im.image_id: im.split for im in ds.images} == SPLITS["lisa"]


def test_conversion_to_a_format_without_a_label_keeps_the_light(tmp_path: Path) -> None:
    """Bosch -> LISA keeps the unlit light (as 'off') and a red straight arrow as 'stop'; COCO -> Bosch keeps source labels."""
    bosch = read_dataset(FIX / "bosch")
    lisa = read_dataset(write_dataset(bosch, tmp_path / "lisa", "lisa"))
    assert_same_boxes(lisa, {k: [(*r[:5], None) for r in v] for k, v in rows(bosch).items()}, tol=0.5, arrows=False)
    tags = {im.image_id: sorted(b.source_label or "" for b in im.boxes) for im in lisa.images}
    assert tags["56988"] == ["go", "goLeft", "off"]
    assert tags["24070"] == ["stop"]
    back = read_dataset(
        write_dataset(read_dataset(write_dataset(bosch, tmp_path / "coco", "coco")), tmp_path / "b", "bosch")
    )
    assert sorted(b.source_label or "" for im in back.images for b in im.boxes) == sorted(
        b.source_label or "" for im in bosch.images for b in im.boxes
    )


def test_written_coco_loads_in_pycocotools(tmp_path: Path) -> None:
    """pycocotools reads drivemt's COCO output with the boxes and categories drivemt wrote."""
    from pycocotools.coco import COCO

    ds = read_dataset(FIX / "lisa")
    out = write_dataset(ds, tmp_path / "coco", "coco")
    coco = COCO(str(out / "annotations/instances_train.json"))
    train = [im for im in ds.images if im.split == "train"]
    assert len(coco.getImgIds()) == len(train)
    assert len(coco.getAnnIds()) == sum(len(im.boxes) for im in train)
    assert {c["name"] for c in coco.loadCats(coco.getCatIds())} == {"red", "yellow", "green", "off"}
    first = coco.loadImgs(coco.getImgIds())[0]
    boxes = {im.image_id: im.boxes for im in train}[Path(first["file_name"]).stem]
    got = sorted(tuple(a["bbox"]) for a in coco.loadAnns(coco.getAnnIds(imgIds=[first["id"]])))
    assert got == sorted((b.x1, b.y1, b.width, b.height) for b in boxes)


@pytest.mark.slow
def test_written_yolo_labels_read_by_ultralytics(tmp_path: Path) -> None:
    """ultralytics finds drivemt's YOLO label files and reads the same normalised boxes from them."""
    from ultralytics.data.utils import img2label_paths, verify_image_label

    ds = read_dataset(FIX / "bosch")
    out = write_dataset(ds, tmp_path / "yolo", "yolo")
    data = yaml.safe_load((out / "data.yaml").read_text())
    assert data["names"] == {0: "red", 1: "yellow", 2: "green", 3: "off"}
    written = read_dataset(out)
    for im in written.images:
        img = written.image_path(im)
        (lbl,) = img2label_paths([str(img)])
        assert Path(lbl) == label_path(img)
        result = verify_image_label((str(img), lbl, "", False, 4, 0, 0, False))
        lb = result[1]
        assert lb is not None, result[-1]
        want = sorted(
            (("red", "yellow", "green", "off").index(b.state), b.cx / 64, b.cy / 48, b.width / 64, b.height / 48)
            for b in im.boxes
        )
        assert np.allclose(sorted(map(tuple, lb.tolist())), want, atol=1e-5) if want else len(lb) == 0


# --- auto-detection -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_formats_are_detected_in_fixtures_and_written_folders(fmt: str, tmp_path: Path) -> None:
    """The format of each fixture and of each written dataset is told from its files."""
    assert detect_format(FIX / fmt) == fmt
    out = write_dataset(read_dataset(FIX / "coco"), tmp_path / "w", fmt)
    assert detect_format(out) == fmt
    assert read_dataset(out).format == fmt


@pytest.mark.parametrize(
    ("fmt", "file", "images"),
    [
        ("lisa", "Annotations/Annotations/daySequence1/frameAnnotationsBOX.csv", {"daySequence1--00000"}),
        ("bosch", "test.yaml", {"24068", "24070"}),
        ("yolo", "data.yaml", set(YOLO_EXPECTED)),
        ("coco", "annotations/instances_val.json", {"frame_0003"}),
    ],
)
def test_single_annotation_files_are_detected_and_read(fmt: str, file: str, images: set[str]) -> None:
    """One annotation file is enough: its format is detected and its images are found."""
    assert detect_format(FIX / fmt / file) == fmt
    ds = read_dataset(FIX / fmt / file)
    assert {im.image_id for im in ds.images} == images
    assert all(ds.image_path(im).is_file() for im in ds.images)


def test_undetectable_and_ambiguous_folders_fail_clearly(tmp_path: Path) -> None:
    """No format, several formats, a missing path or an unknown format name each give a clear format error."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetFormatError, match="cannot tell the dataset format"):
        read_dataset(tmp_path / "empty")
    both = tmp_path / "both"
    shutil.copytree(FIX / "coco", both)
    shutil.copy(FIX / "bosch/test.yaml", both / "test.yaml")
    with pytest.raises(DatasetFormatError, match=r"several formats \(bosch, coco\)"):
        detect_format(both)
    assert read_dataset(both, "coco").format == "coco"
    with pytest.raises(DatasetFormatError, match="no such file"):
        read_dataset(tmp_path / "nowhere")
    with pytest.raises(DatasetFormatError, match="use one of lisa, bosch, yolo, coco"):
        read_dataset(FIX / "coco", "voc")
    with pytest.raises(DatasetFormatError, match="no Bosch label file"):
        read_dataset(FIX / "coco", "bosch")


# --- bad input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_unreadable_image_is_skipped_and_the_rest_read(fmt: str, damage: str, tmp_path: Path) -> None:
    """An image file that is not an image, or is missing, is skipped with the reason; the other images are read."""
    root = copy_fixture(fmt, tmp_path)
    rel, image_id = ONE_IMAGE[fmt]
    if damage == "garbage":
        (root / rel).write_bytes(b"this is not an image")
    else:
        (root / rel).unlink()
    ds = read_dataset(root, fmt)
    assert {im.image_id for im in ds.images} == set(EXPECTED[fmt]) - {image_id}
    assert len(ds.skipped) == 1
    assert Path(rel).stem in ds.skipped[0].item + ds.skipped[0].reason
    # a YOLO image is known by its file only: a missing one leaves its label file behind, reported as such
    missing = "has no image" if fmt == "yolo" else "not found"
    assert ("not a readable image" if damage == "garbage" else missing) in ds.skipped[0].reason
    assert_same_boxes(ds, {k: v for k, v in EXPECTED[fmt].items() if k != image_id}, tol=1e-3)


def test_unchecked_images_take_their_size_from_the_annotation(tmp_path: Path) -> None:
    """Without image checks a COCO image is not opened (its size is in the JSON), so a broken file is kept."""
    root = copy_fixture("coco", tmp_path)
    (root / ONE_IMAGE["coco"][0]).write_bytes(b"broken")
    ds = read_dataset(root, check_images=False)
    assert {im.image_id for im in ds.images} == set(COCO_EXPECTED)
    assert ds.skipped == []


def test_annotated_size_must_match_the_checked_image(tmp_path: Path) -> None:
    """A COCO image whose file is not the size the JSON says is skipped (its boxes would be misplaced)."""
    root = copy_fixture("coco", tmp_path)
    path = root / "annotations/instances_val.json"
    doc = json.loads(path.read_text())
    doc["images"][0]["width"] = 640
    path.write_text(json.dumps(doc))
    ds = read_dataset(root)
    assert "frame_0003" not in {im.image_id for im in ds.images}
    assert "the annotation says 640x48 but the file is 64x48" in ds.skipped[0].reason


@pytest.mark.parametrize("fmt", FORMATS)
def test_box_outside_the_image_is_skipped(fmt: str, tmp_path: Path) -> None:
    """A box reaching past the image's edge is left out with the reason; its image and other boxes stay."""
    root = copy_fixture(fmt, tmp_path)
    add_box(fmt, root, "red", (50, 30, 80, 60))
    ds = read_dataset(root)
    assert_same_boxes(ds, EXPECTED[fmt], tol=1e-3)
    (skip,) = ds.skipped
    assert FIRST_IMAGE[fmt] in skip.item
    assert "lies outside the 64x48 image" in skip.reason


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_state_is_skipped(fmt: str, tmp_path: Path) -> None:
    """A label with no traffic-light state is left out with the reason; its image and other boxes stay."""
    root = copy_fixture(fmt, tmp_path)
    add_box(fmt, root, "pedestrian", (2, 2, 8, 12))
    ds = read_dataset(root)
    assert_same_boxes(ds, EXPECTED[fmt], tol=1e-3)
    (skip,) = ds.skipped
    assert "unknown traffic-light state 'pedestrian'" in skip.reason


def test_yolo_class_id_outside_the_names_is_skipped(tmp_path: Path) -> None:
    """A YOLO class id data.yaml does not name is an unknown state, skipped naming the file and line."""
    root = copy_fixture("yolo", tmp_path)
    with (root / "labels/train/000001.txt").open("a") as f:
        f.write("9 0.5 0.5 0.1 0.1\n")
    ds = read_dataset(root)
    assert_same_boxes(ds, YOLO_EXPECTED, tol=1e-3)
    (skip,) = ds.skipped
    assert "000001.txt:3" in skip.reason
    assert "class 9" in skip.reason


@pytest.mark.parametrize("fmt", FORMATS)
def test_dataset_with_no_readable_image_is_an_error(fmt: str, tmp_path: Path) -> None:
    """When every image is unreadable nothing is left, and the error says why."""
    root = copy_fixture(fmt, tmp_path)
    for p in root.rglob("*"):
        if p.suffix in (".png", ".jpg"):
            p.write_bytes(b"x")
    with pytest.raises(EmptyDatasetError, match="no images left") as info:
        read_dataset(root, fmt)
    assert "not a readable image" in str(info.value)


@pytest.mark.parametrize(
    ("fmt", "write"),
    [
        (
            "lisa",
            {
                "a/Annotations/Annotations/x/frameAnnotationsBOX.csv": ";".join(
                    [
                        "Filename",
                        "Annotation tag",
                        "Upper left corner X",
                        "Upper left corner Y",
                        "Lower right corner X",
                        "Lower right corner Y",
                    ]
                )
                + "\n"
            },
        ),
        ("bosch", {"a/train.yaml": "- boxes: []\n  path: ./x.png\n", "a/x.png": None}),
        ("yolo", {"a/data.yaml": "train: images/train\nval: images/train\nnames: [red]\n", "a/images/train/.keep": ""}),
        ("coco", {"a/instances_train.json": '{"images": [], "annotations": [], "categories": []}'}),
    ],
)
def test_annotations_listing_no_image_are_an_empty_dataset(
    fmt: str, write: dict[str, str | None], tmp_path: Path
) -> None:
    """Annotation files that list no (readable) image give an empty-dataset error."""
    for rel, text in write.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            (tmp_path / rel).write_text(text)
    with pytest.raises(EmptyDatasetError):
        read_dataset(tmp_path / "a", fmt)


@pytest.mark.parametrize(
    ("fmt", "rel", "edit", "where"),
    [
        (
            "lisa",
            "Annotations/Annotations/dayTrain/dayClip1/frameAnnotationsBOX.csv",
            ("30;4;36", "30;four;36"),
            "frameAnnotationsBOX.csv:3",
        ),
        (
            "lisa",
            "Annotations/Annotations/dayTrain/dayClip1/frameAnnotationsBOX.csv",
            (";warningLeft;40;8;46;22;", ";warningLeft;40\n#"),
            "frameAnnotationsBOX.csv:5",
        ),
        (
            "lisa",
            "Annotations/Annotations/daySequence1/frameAnnotationsBOX.csv",
            ("Filename;", "File;"),
            "frameAnnotationsBOX.csv:1",
        ),
        ("bosch", "train.yaml", ("x_max: 20.0, ", ""), "train.yaml:8"),
        ("bosch", "train.yaml", ("y_min: 5.25}", "y_min: 5.25"), "train.yaml:"),
        ("bosch", "test.yaml", ("path: ./rgb/test/24068.png", "pth: ./rgb/test/24068.png"), "test.yaml:1"),
        (
            "yolo",
            "labels/train/000002.txt",
            ("4 0.281250 0.500000 0.093750 0.291667", "4 0.281250 0.500000"),
            "000002.txt:2",
        ),
        ("yolo", "labels/train/000001.txt", ("0 0.531250", "x 0.531250"), "000001.txt:2"),
        (
            "coco",
            "annotations/instances_train.json",
            ('"bbox": [40, 20, 6, 14]', '"bbox": [40, 20, 6'),
            "instances_train.json:12",
        ),
        ("coco", "annotations/instances_train.json", ('"bbox": [40, 20, 6, 14]', '"bbox": [40, 20]'), "annotations[2]"),
    ],
)
def test_malformed_annotation_file_names_file_and_line(
    fmt: str, rel: str, edit: tuple[str, str], where: str, tmp_path: Path
) -> None:
    """A malformed annotation file stops the read with a format error naming the file and the line (or element)."""
    root = copy_fixture(fmt, tmp_path)
    text = (root / rel).read_text()
    assert edit[0] in text
    (root / rel).write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(DatasetFormatError) as info:
        read_dataset(root, fmt)
    assert where in str(info.value)


# --- writing images -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_in_memory_images_are_encoded_and_the_others_copied(fmt: str, tmp_path: Path) -> None:
    """Images given in memory are written in place of the source file; the others are copied unchanged."""
    src = read_dataset(FIX / "coco")  # PNG sources: the written pixels can be compared exactly
    target = src.images[0]
    augmented = 255 - read_image(src.image_path(target))
    out = write_dataset(src, tmp_path / "out", fmt, images={target.image_id: augmented})
    back = read_dataset(out)
    by_id = {im.image_id: im for im in back.images}
    assert np.array_equal(read_image(back.image_path(by_id[target.image_id])), augmented)
    for im in src.images[1:]:
        assert back.image_path(by_id[im.image_id]).read_bytes() == src.image_path(im).read_bytes()


def test_without_copying_only_in_memory_images_are_written(tmp_path: Path) -> None:
    """With copy_images off only annotations and in-memory images are written; reading it reports the absent files."""
    src = read_dataset(FIX / "coco")
    target = src.images[0]
    arr = read_image(src.image_path(target))
    out = write_dataset(src, tmp_path / "out", "coco", images={target.image_id: arr}, copy_images=False)
    assert sorted(p.name for p in (out / "images").rglob("*.png")) == ["frame_0001.png"]
    assert {im.image_id for im in read_dataset(out, check_images=False).images} == set(COCO_EXPECTED)
    checked = read_dataset(out)
    assert {im.image_id for im in checked.images} == {"frame_0001"}
    assert len(checked.skipped) == 2


def test_in_memory_images_must_fit_the_dataset(tmp_path: Path) -> None:
    """An in-memory image of another size, or for an unknown id, is refused before anything is misplaced."""
    src = read_dataset(FIX / "coco")
    with pytest.raises(DatasetFormatError, match="for a 64x48 RGB image"):
        write_dataset(src, tmp_path / "a", "yolo", images={"frame_0001": np.zeros((10, 10, 3), np.uint8)})
    with pytest.raises(DatasetFormatError, match="unknown image ids: nope"):
        write_dataset(src, tmp_path / "b", "yolo", images={"nope": np.zeros((48, 64, 3), np.uint8)})


def test_repeated_file_names_get_unique_ids_and_files(tmp_path: Path) -> None:
    """Two images with one file name in different folders keep apart: unique ids, distinct written files."""
    root = copy_fixture("bosch", tmp_path)
    other = root / "rgb/train/2015-10-05-10-55-33_bag/24594.png"
    shutil.copy(root / "rgb/test/24068.png", other)
    entries = yaml.safe_load((root / "train.yaml").read_text())
    entries.append(
        {
            "path": "./rgb/train/2015-10-05-10-55-33_bag/24594.png",
            "boxes": [{"label": "Red", "occluded": False, "x_min": 1.0, "x_max": 5.0, "y_min": 1.0, "y_max": 9.0}],
        }
    )
    (root / "train.yaml").write_text(yaml.safe_dump(entries))
    ds = read_dataset(root)
    ids = [im.image_id for im in ds.images]
    assert len(ids) == len(set(ids)) == 6
    assert {i for i in ids if i.endswith("24594")} == {
        "rgb/train/2015-10-05-10-52-01_bag/24594",
        "rgb/train/2015-10-05-10-55-33_bag/24594",
    }
    back = read_dataset(write_dataset(ds, tmp_path / "coco", "coco"))
    assert len(back.images) == 6
    assert sorted(len(im.boxes) for im in back.images) == sorted(len(im.boxes) for im in ds.images)


def test_dataset_built_in_memory_is_written_from_arrays_only(tmp_path: Path) -> None:
    """A dataset with no source files (a generated one) is written entirely from in-memory images."""
    img = np.full((48, 64, 3), 90, np.uint8)
    ds = TLDataset(
        name="mem",
        images=[
            TLImage(
                image_id="s0",
                width=64,
                height=48,
                split="train",
                boxes=[TLBox(x1=4, y1=4, x2=10, y2=18, state="red", arrow="left")],
            ),
            TLImage(image_id="s1", width=64, height=48, split="val", boxes=[]),
        ],
    )
    for fmt in FORMATS:
        out = write_dataset(ds, tmp_path / fmt, fmt, images={"s0": img, "s1": img})
        back = read_dataset(out)
        assert {im.image_id: im.split for im in back.images} == {"s0": "train", "s1": "val"}
        assert_same_boxes(back, {"s0": [(4, 4, 10, 18, "red", "left")], "s1": []}, tol=1e-3, arrows=CARRIES_ARROWS[fmt])


def test_repeated_image_ids_are_refused_when_writing(tmp_path: Path) -> None:
    """A dataset whose image ids repeat is refused rather than one image overwriting the other."""
    img = TLImage(image_id="same", width=64, height=48)
    ds = TLDataset(name="dup", images=[img, img.model_copy()])
    with pytest.raises(DatasetFormatError, match="image ids repeat: same"):
        write_dataset(ds, tmp_path / "out", "coco", images={"same": np.zeros((48, 64, 3), np.uint8)})


def test_yolo_puts_images_without_a_split_beside_the_training_images(tmp_path: Path) -> None:
    """In a YOLO dataset where only some images have a split, the others go to train, with distinct file names."""
    src = read_dataset(FIX / "coco")
    images = [im.model_copy(update={"split": None}) if im.image_id == "frame_0002" else im for im in src.images]
    ds = src.model_copy(update={"images": images})
    back = read_dataset(write_dataset(ds, tmp_path / "y", "yolo"))
    assert {im.image_id: im.split for im in back.images} == {
        "frame_0001": "train",
        "frame_0002": "train",
        "frame_0003": "val",
    }
    assert_same_boxes(back, COCO_EXPECTED, tol=1e-3, arrows=False)


@pytest.mark.slow
def test_image_checks_do_not_go_through_ultralytics_patched_pil_open(tmp_path: Path) -> None:
    """With ultralytics imported (it replaces PIL's Image.open and would pip-install a plugin), a broken image is only skipped."""
    import ultralytics.utils.patches  # noqa: F401  (importing it applies the patch)
    from PIL import Image

    assert Image.open.__module__ == "ultralytics.utils.patches"
    root = copy_fixture("coco", tmp_path)
    (root / ONE_IMAGE["coco"][0]).write_bytes(b"\x89PNG\r\n\x1a\n but then nothing of a PNG")
    (root / "images/val/frame_0003.png").write_bytes(b"plain garbage")
    ds = read_dataset(root)
    assert {im.image_id for im in ds.images} == {"frame_0001"}
    assert len(ds.skipped) == 2


@pytest.mark.parametrize(
    ("fmt", "rel", "edit"),
    [
        ("lisa", "Annotations/Annotations/dayTrain/dayClip1/frameAnnotationsBOX.csv", ("40;8;46", "40;8;x")),
        ("bosch", "train.yaml", ("x_max: 15.75", "x_max: wide")),
        ("yolo", "labels/train/000002.txt", ("1 0.765625", "1 0.7x")),
    ],
)
def test_malformed_rows_of_an_unreadable_image_still_stop_the_read(
    fmt: str, rel: str, edit: tuple[str, str], tmp_path: Path
) -> None:
    """A malformed annotation is reported whether or not its image can be read (the outcome does not hang on the pixels)."""
    root = copy_fixture(fmt, tmp_path)
    (root / ONE_IMAGE[fmt][0]).write_bytes(b"garbage")
    text = (root / rel).read_text()
    assert edit[0] in text
    (root / rel).write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(DatasetFormatError, match=Path(rel).name):
        read_dataset(root, fmt)
