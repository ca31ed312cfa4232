"""mAP@[.5:.95] and TIGAUG's per-image consistency: exact values, edge cases, agreement with torchmetrics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tools.tl.metrics import (
    DEFAULT_VIOLATION_THRESHOLD,
    consistency,
    is_violation,
    map_5095,
    map_report,
    per_image_map,
)
from tools.tl.models import TL_STATES, TLBox


def gt(x: float, y: float, w: float = 10, h: float = 30, state: str = "red") -> TLBox:
    """A ground-truth light."""
    return TLBox(x1=x, y1=y, x2=x + w, y2=y + h, state=state)  # type: ignore[arg-type]


def det(box: TLBox, score: float = 0.9, *, dx: float = 0, dy: float = 0, state: str | None = None) -> TLBox:
    """A detection of a box, optionally shifted or with another state."""
    return box.model_copy(
        update={"x1": box.x1 + dx, "x2": box.x2 + dx, "y1": box.y1 + dy, "y2": box.y2 + dy, "score": score}
        | ({"state": state} if state else {})
    )


LIGHTS = [gt(10, 10), gt(40, 12, state="green"), gt(80, 8, 30, 10, state="yellow"), gt(130, 20, state="off")]


def test_perfect_predictions_score_one() -> None:
    """Detections equal to the ground truth score 1.0 per dataset and per image."""
    preds = [[det(b) for b in LIGHTS], [det(LIGHTS[0])]]
    targets = [LIGHTS, [LIGHTS[0]]]
    assert map_5095(preds, targets) == pytest.approx(1.0)
    assert per_image_map(preds, targets) == pytest.approx([1.0, 1.0])
    report = map_report(preds, targets)
    assert report.map_50 == pytest.approx(1.0) and report.n_targets == 5 and report.n_predictions == 5
    assert all(v == pytest.approx(1.0) for v in report.per_class.values())


def test_single_light_value_is_the_share_of_thresholds_its_iou_reaches() -> None:
    """One light detected at IoU u scores #{t in .50..95 : t <= u} / 10 (the table behind the violation threshold)."""
    target = gt(0, 0, 100, 30)
    for dx, expected in [(0, 1.0), (10, 0.7), (14, 0.6), (16, 0.5), (20, 0.4), (30, 0.1), (34, 0.0)]:
        iou = (100 - dx) / (100 + dx)
        value = consistency([det(target, dx=dx)], [target])
        assert value == pytest.approx(expected), (dx, iou)


def test_shifted_boxes_score_lower_and_consistency_is_monotone() -> None:
    """Shifting every detection further from its light never raises mAP or consistency, and ends at 0."""
    values = [map_5095([[det(b, dx=s, dy=s / 2) for b in LIGHTS]], [LIGHTS]) for s in np.arange(0, 12, 0.5)]
    assert values[0] == pytest.approx(1.0)
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert values[3] < 1.0 and values[-1] == 0.0
    cons = [consistency([det(b, dx=s) for b in LIGHTS], LIGHTS) for s in range(0, 12)]
    assert all(a >= b for a, b in itertools.pairwise(cons)) and cons[0] == 1.0 and cons[-1] == 0.0


def test_wrong_state_scores_zero() -> None:
    """A light found in the right place with the wrong state scores 0, per image and as consistency."""
    assert map_5095([[det(LIGHTS[0], state="green")]], [[LIGHTS[0]]]) == 0.0
    assert consistency([det(b, state="yellow" if b.state == "red" else "red") for b in LIGHTS], LIGHTS) == 0.0


@pytest.mark.parametrize(
    ("preds", "targets", "expected"),
    [
        ([], [], 1.0),  # nothing expected, nothing found
        ([det(LIGHTS[0])], [], 0.0),  # invented lights
        ([], [LIGHTS[0]], 0.0),  # lost lights
    ],
)
def test_empty_cases(preds: list[TLBox], targets: list[TLBox], expected: float) -> None:
    """Both empty scores 1.0; detections with nothing expected, or nothing detected where lights are, score 0.0."""
    assert consistency(preds, targets) == expected
    assert map_5095([preds], [targets]) == expected
    assert map_5095([preds], [targets], coco_classes=True) == expected


def test_empty_images_in_a_dataset_only_count_their_false_positives() -> None:
    """An image with no lights adds nothing to a dataset's mAP unless something is detected in it."""
    base = map_5095([[det(LIGHTS[0])]], [[LIGHTS[0]]])
    assert map_5095([[det(LIGHTS[0])], []], [[LIGHTS[0]], []]) == base == 1.0
    with_fp = map_5095([[det(LIGHTS[0], 0.5)], [det(gt(5, 5), 0.9)]], [[LIGHTS[0]], []])
    assert with_fp == pytest.approx(0.5, abs=0.01)


def test_a_class_seen_only_in_detections_counts_unless_coco_classes() -> None:
    """An invented light of a state without ground truth halves a perfect image's score; COCO mode ignores it."""
    preds = [det(LIGHTS[0]), det(gt(60, 10, state="green"), 0.8)]
    assert map_5095([preds], [[LIGHTS[0]]]) == pytest.approx(0.5)
    assert map_5095([preds], [[LIGHTS[0]]], coco_classes=True) == pytest.approx(1.0)
    assert map_report([preds], [[LIGHTS[0]]]).per_class["green"] == 0.0


def test_default_threshold_flags_lost_invented_and_moved_lights() -> None:
    """At the default threshold a lost light of two, an invented light, a changed state and IoU < 0.75 violate; IoU >= 0.75 does not."""
    pair = [gt(10, 10), gt(40, 10)]
    assert consistency([det(pair[0])], pair) == pytest.approx(51 / 101)
    assert is_violation(consistency([det(pair[0])], pair))
    assert is_violation(consistency([det(pair[0]), det(pair[1]), det(gt(80, 10, state="green"))], pair))
    assert is_violation(consistency([det(pair[0], state="green"), det(pair[1])], pair))
    target = gt(0, 0, 100, 30)
    assert is_violation(consistency([det(target, dx=16)], [target]))  # IoU 0.724
    assert not is_violation(consistency([det(target, dx=14)], [target]))  # IoU 0.754
    assert not is_violation(consistency([det(b, 0.9 - 0.1 * i) for i, b in enumerate(pair)], pair))
    assert not is_violation(consistency([det(pair[0]), det(pair[1]), det(gt(80, 10), 0.1)], pair))
    assert DEFAULT_VIOLATION_THRESHOLD == 0.55


def test_bad_arguments_are_refused() -> None:
    """Detections without a score, or prediction and target lists of different lengths, raise ValueError."""
    with pytest.raises(ValueError, match="scores"):
        map_5095([[LIGHTS[0]]], [[LIGHTS[0]]])
    with pytest.raises(ValueError, match="target lists"):
        map_5095([[det(LIGHTS[0])]], [[LIGHTS[0]], []])


def _random_sets(rng: np.random.Generator, n_images: int) -> tuple[list[list[TLBox]], list[list[TLBox]]]:
    preds, targets = [], []
    for _ in range(n_images):
        t, p = [], []
        for _ in range(int(rng.integers(0, 5))):
            x, y = rng.uniform(0, 200, 2)
            w, h = rng.uniform(3, 25, 2)
            t.append(gt(x, y, w, h, state=TL_STATES[int(rng.integers(0, 4))]))
            if rng.random() < 0.8:
                d = rng.normal(0, 1.5, 4)
                state = t[-1].state if rng.random() < 0.8 else TL_STATES[int(rng.integers(0, 4))]
                score = float(rng.choice([0.5, 0.7])) if rng.random() < 0.3 else float(rng.random())  # ties too
                p.append(
                    TLBox(
                        x1=x + d[0],
                        y1=y + d[1],
                        x2=x + w + abs(d[2]) + 2,
                        y2=y + h + abs(d[3]) + 2,
                        state=state,
                        score=score,
                    )
                )
        for _ in range(int(rng.integers(0, 3))):
            x, y = rng.uniform(0, 200, 2)
            p.append(
                gt(x, y, 8, 20, state=TL_STATES[int(rng.integers(0, 4))]).model_copy(
                    update={"score": float(rng.random())}
                )
            )
        preds.append(p)
        targets.append(t)
    return preds, targets


@pytest.mark.slow
def test_equals_torchmetrics_on_random_sets() -> None:
    """The numpy mAP equals torchmetrics' MeanAveragePrecision (pycocotools) on random sets, with and without COCO class rules."""
    rng = np.random.default_rng(2024)
    for _ in range(40):
        preds, targets = _random_sets(rng, int(rng.integers(1, 6)))
        for coco in (True, False):
            ours = map_report(preds, targets, coco_classes=coco)
            theirs = map_report(preds, targets, coco_classes=coco, backend="torchmetrics")
            assert ours.map == pytest.approx(theirs.map, abs=1e-6)
            assert ours.map_50 == pytest.approx(theirs.map_50, abs=1e-6)
            assert ours.map_75 == pytest.approx(theirs.map_75, abs=1e-6)
            for state in TL_STATES:
                a, b = ours.per_class[state], theirs.per_class[state]
                assert (a is None and b is None) or a == pytest.approx(b, abs=1e-6)
