"""The synthetic traffic-light dataset: determinism, label correctness (boxes, lit bulbs), manifest round trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tools.tl.errors import DatasetFormatError, EmptyDatasetError
from tools.tl.images import read_image
from tools.tl.models import TL_STATES, TLDataset
from tools.tl.synth import MANIFEST_NAME, SynthSettings, bulb_centres, load_manifest, render_scene, synth_tl

PNG = SynthSettings(image_format="png")


@pytest.fixture(scope="module")
def synth_set(tmp_path_factory: pytest.TempPathFactory) -> TLDataset:
    """Forty lossless 640x360 images (two splits)."""
    return synth_tl(tmp_path_factory.mktemp("synth") / "set", n_train=30, n_val=0, n_test=10, seed=7, settings=PNG)


def test_same_seed_same_files_other_seed_other_images(tmp_path: Path) -> None:
    """Two runs with one seed write byte-identical images and manifests; another seed draws other images."""
    a = synth_tl(tmp_path / "a", n_train=3, n_val=1, n_test=1, seed=3)
    b = synth_tl(tmp_path / "b", n_train=3, n_val=1, n_test=1, seed=3)
    c = synth_tl(tmp_path / "c", n_train=3, n_val=1, n_test=1, seed=4)
    assert (tmp_path / "a" / MANIFEST_NAME).read_bytes() == (tmp_path / "b" / MANIFEST_NAME).read_bytes()
    for ia, ib, ic in zip(a.images, b.images, c.images, strict=True):
        assert a.image_path(ia).read_bytes() == b.image_path(ib).read_bytes()
        assert a.image_path(ia).read_bytes() != c.image_path(ic).read_bytes()


def test_images_do_not_depend_on_the_other_splits_sizes() -> None:
    """An image is seeded by (seed, split, index), so adding images to another split leaves it unchanged."""
    img1, boxes1 = render_scene(np.random.default_rng([5, 2, 0]), 320, 180)
    img2, boxes2 = render_scene(np.random.default_rng([5, 2, 0]), 320, 180)
    assert np.array_equal(img1, img2) and boxes1 == boxes2


def test_files_splits_and_sizes(synth_set: TLDataset) -> None:
    """Every image is written under images/<split>/, has the asked size, and its split recorded."""
    root = Path(synth_set.root or "")
    assert [i.split for i in synth_set.images] == ["train"] * 30 + ["test"] * 10
    for image in synth_set.images:
        assert image.path is not None and image.path.startswith(f"images/{image.split}/")
        assert not Path(image.path).is_absolute()
        arr = read_image(root / image.path)
        assert arr.shape == (360, 640, 3) and arr.dtype == np.uint8
        assert (image.width, image.height) == (640, 360)


def test_boxes_inside_upper_half_and_dashcam_sized(synth_set: TLDataset) -> None:
    """Boxes lie inside the image, in its upper half, never overlap, and are small (dashcam-like)."""
    for image in synth_set.images:
        image.check_boxes()
        for i, b in enumerate(image.boxes):
            assert b.cy < image.height * 0.55
            assert 0.012 * image.width <= min(b.width, b.height) <= 0.05 * image.width
            assert 2.4 <= max(b.width, b.height) / min(b.width, b.height) <= 3.1
            for other in image.boxes[i + 1 :]:
                assert b.x2 <= other.x1 or other.x2 <= b.x1 or b.y2 <= other.y1 or other.y2 <= b.y1


def test_the_set_has_both_housings_every_state_and_groups(synth_set: TLDataset) -> None:
    """Across forty images there are vertical and horizontal housings, all four states, and lights side by side on one arm."""
    boxes = [b for i in synth_set.images for b in i.boxes]
    assert {b.orientation for b in boxes} == {"vertical", "horizontal"}
    assert {b.state for b in boxes} == set(TL_STATES)
    grouped = any(
        abs(a.y1 - b.y1) < 0.01 and abs(a.width - b.width) < 0.01
        for i in synth_set.images
        for a in i.boxes
        for b in i.boxes
        if a is not b
    )
    assert grouped


def _patch_mean(img: np.ndarray, x: float, y: float) -> np.ndarray:
    xi, yi = int(x), int(y)
    return img[yi - 1 : yi + 2, xi - 1 : xi + 2].reshape(-1, 3).astype(float).mean(axis=0)


def test_lit_bulb_matches_the_state(synth_set: TLDataset) -> None:
    """The bulb of the labelled colour is lit and of that colour; the others, and all three of an off light, are dark."""
    checked = 0
    for image in synth_set.images:
        img = read_image(synth_set.image_path(image))
        for box in image.boxes:
            colours = {name: _patch_mean(img, x, y) for name, (x, y) in bulb_centres(box).items()}
            brightness = {name: c.max() for name, c in colours.items()}
            if box.state == "off":
                assert max(brightness.values()) < 130, (image.image_id, box, colours)
                continue
            r, g, b = colours[box.state]
            assert brightness[box.state] > 170, (image.image_id, box, colours)
            assert all(brightness[box.state] > v + 60 for k, v in brightness.items() if k != box.state)
            if box.state == "red":
                assert r > g + 60 and r > b + 60
            elif box.state == "yellow":
                assert r > b + 60 and g > b + 40 and g > 100
            else:
                assert g > r + 40 and g > 150
            checked += 1
    assert checked >= 40


def test_manifest_round_trip(synth_set: TLDataset) -> None:
    """dataset.json holds relative paths and a relative root; load_manifest gives the same dataset back from the file or folder."""
    root = Path(synth_set.root or "")
    raw = json.loads((root / MANIFEST_NAME).read_text())
    assert raw["root"] == "." and raw["images"][0]["path"].startswith("images/")
    assert load_manifest(root) == synth_set
    assert load_manifest(root / MANIFEST_NAME) == synth_set


def test_moved_dataset_still_resolves(tmp_path: Path) -> None:
    """A dataset folder moved elsewhere loads with its images found (paths are relative to the manifest)."""
    synth_tl(tmp_path / "before", n_train=2, n_val=0, n_test=0, seed=1)
    (tmp_path / "before").rename(tmp_path / "after")
    ds = load_manifest(tmp_path / "after")
    assert all(ds.image_path(i).is_file() for i in ds.images)


def test_bad_manifests_and_empty_requests_are_clear_errors(tmp_path: Path) -> None:
    """A missing or malformed manifest raises DatasetFormatError; asking for no images raises EmptyDatasetError."""
    with pytest.raises(DatasetFormatError, match="no such manifest"):
        load_manifest(tmp_path / "nothing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"images": 3}')
    with pytest.raises(DatasetFormatError, match="not a traffic-light dataset"):
        load_manifest(bad)
    with pytest.raises(EmptyDatasetError):
        synth_tl(tmp_path / "empty", n_train=0, n_val=0, n_test=0)


def test_progress_counts_every_image(tmp_path: Path) -> None:
    """The progress callback is called once per image with the running count and the total."""
    calls: list[tuple[int, int]] = []
    synth_tl(
        tmp_path / "p", n_train=2, n_val=1, n_test=1, width=160, height=90, progress=lambda d, t: calls.append((d, t))
    )
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]


@pytest.mark.parametrize(
    "bad",
    [
        {"state_weights": {"blue": 1.0}},
        {"sky_weights": {"day": 0.0}},
        {"size_range": (0.0, 0.05)},
        {"size_range": (0.05, 0.02)},
        {"lights_range": (3, 1)},
    ],
)
def test_settings_refuse_impossible_values(bad: dict[str, object]) -> None:
    """Unknown states or skies, zero weights and inverted ranges are refused when the settings are built."""
    with pytest.raises(ValueError):
        SynthSettings.model_validate(bad)
