"""TIGAUG's twelve transformations: label correctness (hypothesis properties), determinism, bad input.

Scenes are drawn here with OpenCV (a sky/road background with noise and traffic-light housings with
three bulbs), small enough (240-360 px wide) for the properties to run many examples quickly.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.tl.errors import BoxOutsideImageError, UnknownTransformError
from tools.tl.models import TRANSFORM_CODES, TLBox, TLImage
from tools.tl.transform_base import make_rng, sub_seed
from tools.tl.transforms import (
    ImageMismatchError,
    TransformParamsError,
    apply_transform,
    describe_transforms,
    params_model,
    transform_detections,
)

EQ1 = ("RN", "SW", "FG", "LF", "OE", "UE", "MB")
LIGHT_OPS = ("CC", "MP", "AD", "RT", "SC")
PROPS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_LIT = {"red": (255, 30, 20), "yellow": (255, 190, 10), "green": (30, 255, 140)}
_DIM = {"red": (80, 30, 30), "yellow": (80, 70, 25), "green": (25, 70, 50)}


def draw_light(img: np.ndarray, box: tuple[int, int, int, int], state: str) -> None:
    """A dark housing with three bulbs, red first (top or left); one lit unless off."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    img[y1:y2, x1:x2] = (25, 25, 28)
    vertical = h >= w
    cell = (h if vertical else w) / 3
    r = max(1, int(min(w, h) * 0.35))
    for k, colour in enumerate(("red", "yellow", "green")):
        cx = x1 + w // 2 if vertical else int(x1 + cell * (k + 0.5))
        cy = int(y1 + cell * (k + 0.5)) if vertical else y1 + h // 2
        cv2.circle(img, (cx, cy), r, _LIT[colour] if state == colour else _DIM[colour], -1)


def scene(
    seed: int, width: int, height: int, lights: list[tuple[int, int, int, bool, str]]
) -> tuple[np.ndarray, TLImage]:
    """A background with noise and the given lights ``(x, y, short side, vertical, state)``; overlaps dropped."""
    rng = np.random.default_rng(seed)
    img: np.ndarray = np.zeros((height, width, 3), np.uint8)
    horizon = height // 2
    img[:horizon] = np.linspace(150, 230, horizon, dtype=np.uint8)[:, None, None]
    img[horizon:] = (80, 80, 85)
    cv2.circle(img, (int(rng.integers(width)), horizon), 25, (40, 140, 50), -1)  # a tree: green CC must not touch
    img = cv2.add(img, rng.integers(0, 20, img.shape, dtype=np.uint8))
    boxes: list[TLBox] = []
    taken: list[tuple[int, int, int, int]] = []
    for x, y, short, vertical, state in lights:
        long_ = int(short * 2.6)
        w, h = (short, long_) if vertical else (long_, short)
        x, y = min(x, width - w), min(y, height - h)
        b = (x, y, x + w, y + h)
        if any(not (b[2] + 2 <= t[0] or t[2] + 2 <= b[0] or b[3] + 2 <= t[1] or t[3] + 2 <= b[1]) for t in taken):
            continue
        draw_light(img, b, state)
        taken.append(b)
        boxes.append(TLBox(x1=b[0], y1=b[1], x2=b[2], y2=b[3], state=state))  # type: ignore[arg-type]
    return img, TLImage(image_id=f"s{seed}", width=width, height=height, boxes=boxes)


@st.composite
def scenes(draw: st.DrawFn, *, min_short: int = 4, max_lights: int = 4) -> tuple[np.ndarray, TLImage]:
    """Hypothesis scenes: 0..max_lights lights of any state and orientation, some at the border."""
    width = draw(st.sampled_from([240, 320, 360]))
    height = draw(st.sampled_from([160, 200, 240]))
    light = st.tuples(
        st.integers(0, width - 1),
        st.integers(0, height - 1),
        st.integers(min_short, 20),
        st.booleans(),
        st.sampled_from(["red", "yellow", "green", "off"]),
    )
    lights = draw(st.lists(light, min_size=0, max_size=max_lights))
    return scene(draw(st.integers(0, 1000)), width, height, lights)


def _gray(img: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x1, y1, x2, y2 = box
    return cv2.cvtColor(np.ascontiguousarray(img[y1:y2, x1:x2]), cv2.COLOR_RGB2GRAY).astype(np.float64)


def _rgb(img: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x1, y1, x2, y2 = box
    return img[y1:y2, x1:x2]


def _ibox(b: TLBox) -> tuple[int, int, int, int]:
    return round(b.x1), round(b.y1), round(b.x2), round(b.y2)


def _centred_mad(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference after removing each patch's mean (Poisson blending shifts the level)."""
    return float(np.mean(np.abs((a - a.mean()) - (b - b.mean()))))


# ---------------------------------------------------------------- all transforms


@PROPS
@given(data=scenes(), code=st.sampled_from(TRANSFORM_CODES), seed=st.integers(0, 2**31 - 1))
def test_boxes_stay_inside_and_image_keeps_shape(data: tuple[np.ndarray, TLImage], code: str, seed: int) -> None:
    """Every transformation returns an RGB uint8 image of the input's size and boxes inside it."""
    img, labels = data
    before = img.copy()
    res = apply_transform(code, img, labels, seed=seed)
    assert res.image.shape == img.shape and res.image.dtype == np.uint8
    assert np.array_equal(img, before), "the input image must not be modified"
    assert (res.labels.width, res.labels.height) == (labels.width, labels.height)
    for b in res.labels.boxes:
        assert b.inside(labels.width, labels.height, tol=0.0), (code, b.xyxy())
    assert all(0 <= i < len(labels.boxes) for i in res.changed)


@pytest.mark.parametrize("code", TRANSFORM_CODES)
def test_same_seed_same_output(code: str) -> None:
    """The same code, image, labels and seed give the same image bytes and labels."""
    img, labels = scene(
        3, 320, 200, [(40, 20, 10, True, "red"), (150, 30, 9, False, "green"), (250, 40, 8, True, "yellow")]
    )
    a = apply_transform(code, img, labels, seed=11)
    b = apply_transform(code, img, labels, seed=11)
    assert np.array_equal(a.image, b.image)
    assert a.labels == b.labels and a.notes == b.notes and a.sampled == b.sampled


@pytest.mark.parametrize("code", ["RN", "SW", "FG", "LF", "OE", "UE", "MB", "AD", "SC"])
def test_different_seeds_differ(code: str) -> None:
    """Transformations with random draws give different images for different seeds."""
    img, labels = scene(
        4, 320, 200, [(40, 20, 10, True, "red"), (150, 30, 9, False, "green"), (250, 40, 8, True, "yellow")]
    )
    a = apply_transform(code, img, labels, seed=1)
    b = apply_transform(code, img, labels, seed=2)
    assert not np.array_equal(a.image, b.image)


@PROPS
@given(data=scenes(), code=st.sampled_from(EQ1), seed=st.integers(0, 1000))
def test_weather_and_camera_keep_labels(data: tuple[np.ndarray, TLImage], code: str, seed: int) -> None:
    """Weather and camera transformations change pixels only: labels identical, no changes recorded."""
    img, labels = data
    res = apply_transform(code, img, labels, seed=seed)
    assert res.labels == labels
    assert res.changes == [] and res.changed == [] and res.affine is None
    assert not np.array_equal(res.image, img)


@pytest.mark.parametrize("code", TRANSFORM_CODES)
def test_image_without_lights(code: str) -> None:
    """An image with no lights works for every code; light operations say nothing was transformed."""
    img, labels = scene(5, 240, 160, [])
    res = apply_transform(code, img, labels, seed=0)
    assert res.image.shape == img.shape and res.labels.boxes == []
    if code in LIGHT_OPS:
        assert any("no traffic lights" in n for n in res.notes)


def test_unknown_code() -> None:
    """An unknown code raises UnknownTransformError naming the twelve codes; lower case is accepted."""
    img, labels = scene(6, 240, 160, [])
    with pytest.raises(UnknownTransformError) as err:
        apply_transform("XX", img, labels, seed=0)
    assert err.value.known == list(TRANSFORM_CODES)
    assert apply_transform("rn", img, labels, seed=0).code == "RN"


def test_bad_input() -> None:
    """A wrong array, a size mismatch, a box outside the image and bad params are clear errors."""
    img, labels = scene(7, 240, 160, [(20, 20, 8, True, "red")])
    with pytest.raises(ImageMismatchError):
        apply_transform("OE", img.astype(np.float32), labels, seed=0)
    with pytest.raises(ImageMismatchError):
        apply_transform("OE", img[:, :200], labels, seed=0)
    outside = labels.model_copy(update={"boxes": [TLBox(x1=230, y1=10, x2=260, y2=30, state="red")]})
    with pytest.raises(BoxOutsideImageError):
        apply_transform("CC", img, outside, seed=0)
    with pytest.raises(TransformParamsError):
        apply_transform("SC", img, labels, seed=0, params={"factor": (0.9, 0.5)})
    with pytest.raises(TransformParamsError):
        apply_transform("RN", img, labels, seed=0, params={"no_such_key": 1})


def test_params_as_dict_and_model() -> None:
    """Parameters given as a dict or as the model are used, and the result reports them."""
    img, labels = scene(8, 320, 200, [(60, 40, 10, True, "red")])
    a = apply_transform("SC", img, labels, seed=0, params={"factor": (0.5, 0.5)})
    b = apply_transform("SC", img, labels, seed=0, params=params_model("SC")(factor=(0.5, 0.5)))  # type: ignore[call-arg]
    assert a.params["factor"] == [0.5, 0.5] and a.sampled["factor"] == 0.5
    assert np.array_equal(a.image, b.image)


def test_describe_transforms() -> None:
    """describe_transforms gives one non-empty line for each of the twelve codes."""
    desc = describe_transforms()
    assert tuple(desc) == TRANSFORM_CODES
    assert all(line and "\n" not in line for line in desc.values())


# ---------------------------------------------------------------- light operations


@PROPS
@given(data=scenes(min_short=4), seed=st.integers(0, 1000))
def test_cc_keeps_boxes_and_swaps_red_green(data: tuple[np.ndarray, TLImage], seed: int) -> None:
    """CC keeps every box, swaps red and green, and leaves yellow and off lights alone with a note."""
    img, labels = data
    res = apply_transform("CC", img, labels, seed=seed)
    swap = {"red": "green", "green": "red"}
    for i, (a, b) in enumerate(zip(labels.boxes, res.labels.boxes, strict=True)):
        assert a.xyxy() == b.xyxy()
        if a.state in swap:
            assert b.state == swap[a.state] and i in res.changed
        else:
            assert b.state == a.state and i not in res.changed
            assert any(f"light {i}: {a.state} light left alone" in n for n in res.notes)
    outside = np.ones(img.shape[:2], bool)
    for b in labels.boxes:
        x1, y1, x2, y2 = b.int_xyxy()
        outside[y1:y2, x1:x2] = False
    assert np.array_equal(res.image[outside], img[outside]), "CC only touches pixels inside the boxes"


def _lit_row_and_hue(img: np.ndarray, box: tuple[int, int, int, int]) -> tuple[float, float]:
    """Where the brightest saturated pixels sit (0 top .. 1 bottom) and their mean OpenCV hue."""
    x1, y1, x2, y2 = box
    hsv = cv2.cvtColor(np.ascontiguousarray(img[y1:y2, x1:x2]), cv2.COLOR_RGB2HSV)
    lit = (hsv[..., 1] > 120) & (hsv[..., 2] > 200)
    rows = np.nonzero(lit)[0]
    return float(rows.mean() / (y2 - y1)), float(hsv[..., 0][lit].mean())


def test_cc_red_top_becomes_green_bottom() -> None:
    """A lit red top bulb becomes a lit green bottom bulb, and a green one a red top bulb; trees stay green."""
    img, labels = scene(9, 320, 200, [(50, 30, 16, True, "red"), (200, 30, 16, True, "green")])
    before_red, before_green = _ibox(labels.boxes[0]), _ibox(labels.boxes[1])
    row, hue = _lit_row_and_hue(img, before_red)
    assert row < 0.34 and (hue < 12 or hue > 160)
    res = apply_transform("CC", img, labels, seed=0)
    row, hue = _lit_row_and_hue(res.image, before_red)
    assert row > 0.66 and 40 <= hue <= 100
    row, hue = _lit_row_and_hue(res.image, before_green)
    assert row < 0.34 and (hue < 12 or hue > 160)


def test_cc_arrows() -> None:
    """A horizontal left-arrow red light becomes a right-arrow green one; a vertical straight arrow is skipped."""
    img, labels = scene(17, 320, 200, [(40, 40, 10, False, "red"), (200, 40, 10, True, "red")])
    boxes = [
        labels.boxes[0].model_copy(update={"arrow": "left"}),
        labels.boxes[1].model_copy(update={"arrow": "straight"}),
    ]
    res = apply_transform("CC", img, labels.model_copy(update={"boxes": boxes}), seed=0)
    assert (res.labels.boxes[0].state, res.labels.boxes[0].arrow) == ("green", "right")
    assert (res.labels.boxes[1].state, res.labels.boxes[1].arrow) == ("red", "straight")
    assert res.changed == [0] and any(n.startswith("light 1: skipped") for n in res.notes)


def test_lights_that_cannot_be_transformed_are_skipped_with_a_note() -> None:
    """Too small lights, and moves with no room on either side, leave the box as it was and say why."""
    img, labels = scene(18, 240, 160, [(100, 20, 3, True, "red"), (10, 80, 50, False, "green")])
    assert labels.boxes[1].width > 120  # wider than the room left of it and right of it
    for code in ("MP", "RT", "AD"):
        res = apply_transform(code, img, labels, seed=0)
        assert any(n == "light 0: skipped, smaller than 4 px" for n in res.notes), code
        assert res.labels.boxes[0] == labels.boxes[0]
    mp = apply_transform("MP", img, labels, seed=0)
    assert mp.changed == [] and any(n.startswith("light 1: not moved, no room") for n in mp.notes)


@PROPS
@given(data=scenes(min_short=8), seed=st.integers(0, 1000))
def test_mp_box_lands_on_the_moved_light(data: tuple[np.ndarray, TLImage], seed: int) -> None:
    """MP moves a box by its width sideways, and the pixels in the new box are the light's own pixels."""
    img, labels = data
    res = apply_transform("MP", img, labels, seed=seed)
    for c in res.changes:
        old, new = labels.boxes[c.source], res.labels.boxes[c.target]
        assert abs(abs(c.dx) - round(old.width)) < 1e-9 and c.dy == 0
        assert new.xyxy() == pytest.approx((old.x1 + c.dx, old.y1, old.x2 + c.dx, old.y2))
        assert np.array_equal(_rgb(res.image, _ibox(new)), _rgb(img, _ibox(old)))
    untouched = set(range(len(labels.boxes))) - set(res.changed)
    for i in untouched:
        assert res.labels.boxes[i] == labels.boxes[i]
        assert any(n.startswith(f"light {i}:") for n in res.notes)


@PROPS
@given(data=scenes(min_short=8), seed=st.integers(0, 1000))
def test_ad_copies_land_on_pasted_pixels(data: tuple[np.ndarray, TLImage], seed: int) -> None:
    """AD adds 1 to n/2 copies with the source's state, each box on a pixel copy of the source light."""
    img, labels = data
    res = apply_transform("AD", img, labels, seed=seed)
    n = len(labels.boxes)
    assert res.labels.boxes[:n] == labels.boxes
    added = res.labels.boxes[n:]
    assert len(added) == len(res.changes) <= max(1, n // 2)
    if n and not added:
        assert res.notes
    for c in res.changes:
        src_box, copy = labels.boxes[c.source], res.labels.boxes[c.target]
        assert copy.state == src_box.state and c.kind == "copy"
        assert copy.width == pytest.approx(src_box.width) and copy.height == pytest.approx(src_box.height)
        assert np.array_equal(_rgb(res.image, _ibox(copy)), _rgb(img, _ibox(src_box)))
        for other in res.labels.boxes:
            if other is not copy:
                assert _iou(other, copy) == 0.0


@pytest.mark.parametrize("code", ["MP", "AD", "RT"])
def test_plain_poisson_paste_keeps_the_light_recognisable(code: str) -> None:
    """With keep_light_pixels off (plain seamlessClone) the box still lands on the light's pattern."""
    img, labels = scene(16, 320, 200, [(60, 20, 12, True, "red"), (200, 30, 12, False, "green")])
    res = apply_transform(code, img, labels, seed=3, params={"keep_light_pixels": False})
    assert res.changes
    for c in res.changes:
        src = _gray(img, _ibox(labels.boxes[c.source]))
        new = res.labels.boxes[c.target]
        if c.kind == "rotate":
            src = np.rot90(src, c.quarter_turns)
        x1, y1 = int(np.floor(new.x1)), int(np.floor(new.y1))
        box = (x1, y1, x1 + src.shape[1], y1 + src.shape[0])
        dst = _gray(res.image, box)
        assert np.corrcoef(src.ravel(), dst.ravel())[0, 1] > 0.9
        assert _centred_mad(src, dst) < 0.5 * _centred_mad(src, _gray(img, box))
        assert not np.array_equal(dst, src), "plain Poisson blending shifts the pasted pixels a little"


def _iou(a: TLBox, b: TLBox) -> float:
    iw, ih = min(a.x2, b.x2) - max(a.x1, b.x1), min(a.y2, b.y2) - max(a.y1, b.y1)
    return 0.0 if iw <= 0 or ih <= 0 else iw * ih / (a.area + b.area - iw * ih)


@PROPS
@given(data=scenes(min_short=6), seed=st.integers(0, 1000))
def test_rt_swaps_width_and_height_about_the_centre(data: tuple[np.ndarray, TLImage], seed: int) -> None:
    """RT turns each light in place: same centre, width and height swapped, its pixels turned by 90 degrees."""
    img, labels = data
    res = apply_transform("RT", img, labels, seed=seed)
    for c in res.changes:
        old, new = labels.boxes[c.source], res.labels.boxes[c.target]
        assert (new.cx, new.cy) == pytest.approx((old.cx, old.cy))
        assert (new.width, new.height) == pytest.approx((old.height, old.width))
        turned = np.rot90(_rgb(img, _ibox(old)), c.quarter_turns)
        # for an odd w - h the turned pixels sit half a pixel up-left of the exact box: at its floor
        x1, y1 = int(np.floor(new.x1)), int(np.floor(new.y1))
        assert np.array_equal(_rgb(res.image, (x1, y1, x1 + turned.shape[1], y1 + turned.shape[0])), turned)
    for i in set(range(len(labels.boxes))) - set(res.changed):
        assert res.labels.boxes[i] == labels.boxes[i]


def test_rt_keeps_red_first() -> None:
    """By default a vertical light turns counter-clockwise (red on the left), a horizontal one clockwise."""
    img, labels = scene(10, 320, 200, [(60, 60, 14, True, "red"), (200, 60, 14, False, "red")])
    res = apply_transform("RT", img, labels, seed=0)
    assert [c.quarter_turns for c in res.changes] == [1, -1]
    for c in res.changes:
        x1, y1, x2, y2 = _ibox(res.labels.boxes[c.target])
        hsv = cv2.cvtColor(np.ascontiguousarray(res.image[y1:y2, x1:x2]), cv2.COLOR_RGB2HSV)
        ys, xs = np.nonzero((hsv[..., 1] > 120) & (hsv[..., 2] > 200))
        if c.quarter_turns == 1:  # now horizontal: red bulb on the left
            assert xs.mean() < (x2 - x1) / 3
        else:  # now vertical: red bulb on top
            assert ys.mean() < (y2 - y1) / 3


@PROPS
@given(data=scenes(min_short=4), seed=st.integers(0, 1000), lo=st.floats(0.5, 0.95))
def test_sc_boxes_shrink_by_the_formula(data: tuple[np.ndarray, TLImage], seed: int, lo: float) -> None:
    """SC maps every box by x' = s*x + (1-s)*W/2 (to a pixel of rounding) and the content follows."""
    img, labels = data
    res = apply_transform("SC", img, labels, seed=seed, params={"factor": (lo, min(0.95, lo + 0.1))})
    s = res.sampled["factor"]
    W, H = labels.width, labels.height
    assert res.affine is not None and res.changed == list(range(len(labels.boxes)))
    for old, new in zip(labels.boxes, res.labels.boxes, strict=True):
        expect = (
            s * old.x1 + (1 - s) * W / 2,
            s * old.y1 + (1 - s) * H / 2,
            s * old.x2 + (1 - s) * W / 2,
            s * old.y2 + (1 - s) * H / 2,
        )
        assert new.xyxy() == pytest.approx(expect, abs=1.0)
        assert new.width == pytest.approx(old.width * s, abs=0.05 * old.width)
        assert new.state == old.state
    a = res.affine
    for new in res.labels.boxes:  # the content: pixels wholly inside the new box show the light, shrunk
        x1, y1, x2, y2 = int(np.ceil(new.x1)), int(np.ceil(new.y1)), int(np.floor(new.x2)), int(np.floor(new.y2))
        if min(x2 - x1, y2 - y1) >= 6:
            back = [
                round((x1 - a.tx) / a.sx),
                round((y1 - a.ty) / a.sy),
                round((x2 - a.tx) / a.sx),
                round((y2 - a.ty) / a.sy),
            ]
            src = cv2.resize(_gray(img, tuple(back)), (x2 - x1, y2 - y1), interpolation=cv2.INTER_AREA)  # type: ignore[arg-type]
            dst = _gray(res.image, (x1, y1, x2, y2))
            assert np.corrcoef(src.ravel(), dst.ravel())[0, 1] > 0.7


# ---------------------------------------------------------------- τ on detections


@PROPS
@given(data=scenes(min_short=6), code=st.sampled_from(("CC", "MP", "RT", "SC", "AD")), seed=st.integers(0, 1000))
def test_tau_of_ground_truth_is_the_transformed_labels(data: tuple[np.ndarray, TLImage], code: str, seed: int) -> None:
    """τ applied to perfect detections (the ground truth) gives the transformed labels (as a multiset)."""
    img, labels = data
    res = apply_transform(code, img, labels, seed=seed)
    mapped = transform_detections(res, list(labels.boxes))

    def key(b: TLBox) -> tuple[float, ...]:
        return (round(b.x1, 3), round(b.y1, 3), round(b.x2, 3), round(b.y2, 3))

    assert sorted((key(b), b.state) for b in mapped) == sorted((key(b), b.state) for b in res.labels.boxes)


def test_tau_on_imperfect_detections() -> None:
    """Matched detections follow their light (state, offset, turn about the light's centre); others stay."""
    img, labels = scene(12, 320, 200, [(60, 60, 12, True, "red"), (200, 60, 12, True, "yellow")])
    red = labels.boxes[0]
    near = red.model_copy(update={"x1": red.x1 + 1, "x2": red.x2 + 1, "score": 0.9})  # IoU > 0.5
    stray = TLBox(x1=5, y1=150, x2=15, y2=175, state="green", score=0.4)  # matches nothing
    dets = [near, stray]

    cc = apply_transform("CC", img, labels, seed=0)
    out = transform_detections(cc, dets)
    assert [d.state for d in out] == ["green", "green"] and out[0].xyxy() == near.xyxy() and out[1] == stray

    mp = apply_transform("MP", img, labels, seed=0, params={"direction": "right"})
    dx = next(c.dx for c in mp.changes if c.source == 0)
    out = transform_detections(mp, dets)
    assert out[0].x1 == pytest.approx(near.x1 + dx) and out[1] == stray

    rt = apply_transform("RT", img, labels, seed=0)
    out = transform_detections(rt, dets)
    # turned counter-clockwise about the light's centre: 1 px right of it becomes 1 px above it
    assert (out[0].cx, out[0].cy) == pytest.approx((red.cx, red.cy - 1))
    assert (out[0].width, out[0].height) == pytest.approx((near.height, near.width))

    for code in EQ1:
        res = apply_transform(code, img, labels, seed=0)
        assert transform_detections(res, dets) == dets


# ---------------------------------------------------------------- faithful to imgaug


def _first_layer_seed(code: str, seed: int) -> int:
    rng = make_rng(seed, code)
    rng.integers(1, 2)  # the layer count, drawn first
    return sub_seed(rng)


def test_rain_at_full_layer_scale_is_imgaug_rain_layer() -> None:
    """RN with one layer at layer_scale 1 equals imgaug's RainLayer with the same random state (±1 level)."""
    import imgaug.random as iarandom
    from imgaug.augmenters.weather import RainLayer

    img, labels = scene(13, 320, 200, [(60, 60, 10, True, "red")])
    p = {"layers": (1, 1), "layer_scale": 1.0}
    ours = apply_transform("RN", img, labels, seed=5, params=p).image
    d = params_model("RN")().model_dump()
    layer = RainLayer(
        density=d["density"], density_uniformity=d["density_uniformity"], drop_size=d["drop_size"],
        drop_size_uniformity=d["drop_size_uniformity"], angle=d["angle"], speed=d["speed"],
        blur_sigma_fraction=(0.001, 0.001),
    )  # fmt: skip
    theirs = layer.draw_on_image(img, iarandom.RNG(_first_layer_seed("RN", 5)))
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 1
    assert np.abs(ours.astype(int) - img.astype(int)).mean() > 1


def test_snow_at_full_layer_scale_is_imgaug_snowflakes_layer() -> None:
    """SW with one layer at layer_scale 1 equals imgaug's SnowflakesLayer with the same random state."""
    import imgaug.random as iarandom
    from imgaug.augmenters.weather import SnowflakesLayer

    img, labels = scene(14, 320, 200, [(60, 60, 10, True, "red")])
    ours = apply_transform("SW", img, labels, seed=5, params={"layers": (1, 1), "layer_scale": 1.0}).image
    d = params_model("SW")().model_dump()
    layer = SnowflakesLayer(
        density=d["density"], density_uniformity=d["density_uniformity"], flake_size=d["flake_size"],
        flake_size_uniformity=d["flake_size_uniformity"], angle=d["angle"], speed=d["speed"],
        blur_sigma_fraction=(0.0001, 0.001),
    )  # fmt: skip
    theirs = layer.draw_on_image(img, iarandom.RNG(_first_layer_seed("SW", 5)))
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 1


def test_fog_at_full_layer_scale_is_imgaug_fog() -> None:
    """FG at layer_scale 1 equals imgaug's Fog drawn with the same random state (±1 level)."""
    import imgaug.augmenters as iaa
    import imgaug.random as iarandom

    img, labels = scene(15, 320, 200, [(60, 60, 10, True, "red")])
    ours = apply_transform("FG", img, labels, seed=5, params={"layer_scale": 1.0}).image
    theirs = iaa.Fog().draw_on_image(img, iarandom.RNG(sub_seed(make_rng(5, "FG"))))
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 1
