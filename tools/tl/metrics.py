"""Detection metrics for the traffic-light pipeline: mAP@[.5:.95] and TIGAUG's per-image consistency.

The class of a box is its state (red, yellow, green, off). mAP is COCO's: per class, detections sorted
by score are matched greedily to unmatched ground truth at each IoU threshold 0.50, 0.55, ... 0.95;
precision is made monotone and read at 101 recall points; the mean runs over thresholds and classes.
It is computed here in numpy because the Judge calls it once per image and transformation (thousands of
calls; torchmetrics with the pycocotools backend costs ~10 ms per call, this ~0.1 ms).
``tests/test_tl_metrics.py`` checks that it equals torchmetrics' ``MeanAveragePrecision`` (pycocotools
backend) on random sets, and ``backend="torchmetrics"`` runs torchmetrics itself.

One deliberate difference from COCO, on by default: a class that appears only in the detections (no
ground truth in the evaluated set) counts with AP 0 instead of being left out. COCO leaves it out, so a
light that changes from red to green would still score 1.0 wherever a red light remains, and an
invented green light next to a correct red one would go unnoticed. Pass ``coco_classes=True`` for
COCO's numbers. On a whole dataset, where every state has ground truth, the two agree.

Edge cases (one rule for a single image and for a dataset): nothing expected and nothing detected scores
1.0 (nothing to find, nothing claimed); detections where nothing is expected score 0.0; expected lights
with no detection score 0.0.

**Consistency** (TIGAUG Eq. 1 and 2): the detections on the augmented image τ(i) scored against the
detections on the original image i used as ground truth — as detected for weather and camera
transformations (Eq. 1), transformed by τ for the light transformations CC/MP/AD/RT/SC (Eq. 2; the caller
transforms the reference, this module only scores). The reference's scores are ignored.

**Violation threshold** :data:`DEFAULT_VIOLATION_THRESHOLD` = 0.55: an image violates its relation when
its consistency is below it. What per-image values mean, with one light in the reference:

* the same state at IoU u scores the share of thresholds 0.50 ... 0.95 that u reaches: IoU 0.75 -> 0.6,
  0.70 -> 0.5, 0.50 -> 0.1, below 0.50 -> 0; so below 0.55 means IoU below 0.75;
* a changed state or a lost light -> 0; an extra light of another state -> 0.5; an extra light of the
  same state ranked above the right one -> 0.5 (ranked below: 1.0, a low-confidence extra is tolerated).

With two lights, losing one scores 0.505 (51 of 101 recall points). So the default flags exactly the
changes a driver would call a different reading of the scene: a light lost or invented, a state changed,
a box that no longer sits on its light (IoU < 0.75; for a 10 px wide light that is a shift of about
1.5 px). It sits between the discrete values 0.5 and 0.6 that a single light can take, so no single-light
case falls on the boundary; 0.5 would let a lost light of two (0.505) and an invented light (0.5) through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tools.tl.models import TL_STATES, TLBox

__all__ = [
    "DEFAULT_VIOLATION_THRESHOLD",
    "IOU_THRESHOLDS",
    "MapReport",
    "consistency",
    "is_violation",
    "map_5095",
    "map_report",
    "per_image_map",
]

DEFAULT_VIOLATION_THRESHOLD = 0.55
"""Consistency below this flags a violation; see the module docstring for what the value means."""

IOU_THRESHOLDS: np.ndarray = np.linspace(0.5, 0.95, 10)
"""COCO's IoU thresholds 0.50:0.05:0.95."""

_REC_THRS = np.linspace(0.0, 1.0, 101)
_MAX_DETS = 100
_STATE_INDEX = {s: i for i, s in enumerate(TL_STATES)}


class MapReport(BaseModel):
    """mAP of a set of images, with the parts reports show (TIGAUG Fig. 3 uses ``map``)."""

    model_config = ConfigDict(extra="forbid")

    map: float = Field(description="mAP@[.5:.95].")
    map_50: float = Field(description="mAP at IoU 0.5.")
    map_75: float = Field(description="mAP at IoU 0.75.")
    per_class: dict[str, float | None] = Field(
        description="AP@[.5:.95] per state; None where the state is in neither ground truth nor detections."
    )
    n_images: int
    n_targets: int
    n_predictions: int


def _arrays(boxes: Sequence[TLBox], *, need_scores: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xyxy = np.array([b.xyxy() for b in boxes], dtype=np.float64).reshape(-1, 4)
    cls = np.array([_STATE_INDEX[b.state] for b in boxes], dtype=np.int64)
    if need_scores:
        missing = [i for i, b in enumerate(boxes) if b.score is None]
        if missing:
            raise ValueError(f"detections need scores (boxes {missing[:5]} have none); ground truth goes in targets")
        scores = np.array([b.score for b in boxes], dtype=np.float64)
    else:
        scores = np.ones(len(boxes))
    return xyxy, cls, scores


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix of xyxy boxes (no +1 pixel convention, as pycocotools)."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
    area_a = np.prod(a[:, 2:] - a[:, :2], axis=1)
    area_b = np.prod(b[:, 2:] - b[:, :2], axis=1)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def _match(ious: np.ndarray) -> np.ndarray:
    """TP flags (thresholds x detections) for one image and class; detections already sorted by score."""
    n_det, n_gt = ious.shape
    tp = np.zeros((len(IOU_THRESHOLDS), n_det), dtype=bool)
    for ti, t in enumerate(IOU_THRESHOLDS):
        used = np.zeros(n_gt, dtype=bool)
        for d in range(n_det):
            best, best_iou = -1, min(float(t), 1 - 1e-10)
            for g in range(n_gt):
                if used[g] or ious[d, g] < best_iou:
                    continue
                best_iou, best = ious[d, g], g
            if best >= 0:
                used[best] = True
                tp[ti, d] = True
    return tp


def _ap_per_threshold(tp: np.ndarray, scores: np.ndarray, n_gt: int) -> np.ndarray:
    """AP at each IoU threshold from pooled detections (pycocotools' accumulate)."""
    if tp.shape[1] == 0:
        return np.zeros(len(IOU_THRESHOLDS))
    order = np.argsort(-scores, kind="mergesort")
    tp = tp[:, order]
    tps = np.cumsum(tp, axis=1, dtype=np.float64)
    fps = np.cumsum(~tp, axis=1, dtype=np.float64)
    out = np.zeros(len(IOU_THRESHOLDS))
    for ti in range(len(IOU_THRESHOLDS)):
        rc = tps[ti] / n_gt
        pr = tps[ti] / (tps[ti] + fps[ti] + np.spacing(1))
        pr = np.maximum.accumulate(pr[::-1])[::-1]  # precision envelope
        inds = np.searchsorted(rc, _REC_THRS, side="left")
        valid = inds < len(pr)
        q = np.zeros(len(_REC_THRS))
        q[valid] = pr[inds[valid]]
        out[ti] = q.mean()
    return out


def _per_class_ap(
    predictions: Sequence[Sequence[TLBox]], targets: Sequence[Sequence[TLBox]]
) -> tuple[dict[int, np.ndarray | None], int, int]:
    """Per class: AP per IoU threshold, or None when the class has detections but no ground truth."""
    if len(predictions) != len(targets):
        raise ValueError(f"{len(predictions)} prediction lists for {len(targets)} target lists")
    pooled_tp: dict[int, list[np.ndarray]] = {}
    pooled_scores: dict[int, list[np.ndarray]] = {}
    n_gt: dict[int, int] = {}
    n_t = n_p = 0
    for preds, gts in zip(predictions, targets, strict=True):
        p_box, p_cls, p_score = _arrays(preds, need_scores=True)
        g_box, g_cls, _ = _arrays(gts, need_scores=False)
        n_t += len(gts)
        n_p += len(preds)
        for c in set(p_cls.tolist()) | set(g_cls.tolist()):
            g = g_box[g_cls == c]
            n_gt[c] = n_gt.get(c, 0) + len(g)
            sel = np.flatnonzero(p_cls == c)
            if len(sel) == 0:
                continue
            sel = sel[np.argsort(-p_score[sel], kind="mergesort")][:_MAX_DETS]
            tp = _match(_iou(p_box[sel], g)) if len(g) else np.zeros((len(IOU_THRESHOLDS), len(sel)), bool)
            pooled_tp.setdefault(c, []).append(tp)
            pooled_scores.setdefault(c, []).append(p_score[sel])
    out: dict[int, np.ndarray | None] = {}
    for c, count in n_gt.items():
        if count == 0:
            out[c] = None
            continue
        tp = np.concatenate(pooled_tp[c], axis=1) if c in pooled_tp else np.zeros((len(IOU_THRESHOLDS), 0), bool)
        scores = np.concatenate(pooled_scores[c]) if c in pooled_scores else np.zeros(0)
        out[c] = _ap_per_threshold(tp, scores, count)
    return out, n_t, n_p


def map_report(
    predictions: Sequence[Sequence[TLBox]],
    targets: Sequence[Sequence[TLBox]],
    *,
    coco_classes: bool = False,
    backend: Literal["numpy", "torchmetrics"] = "numpy",
) -> MapReport:
    """mAP of detections against ground truth over a set of images.

    Args:
        predictions: Per image, the detections (``score`` required).
        targets: Per image, the ground truth (scores ignored), in the same order.
        coco_classes: Average over classes with ground truth only, as COCO does; by default a class
            seen only in the detections counts with AP 0 (see the module docstring).
        backend: ``"numpy"`` (this module) or ``"torchmetrics"`` (``MeanAveragePrecision``, pycocotools).

    Returns:
        The report; ``map`` follows the edge-case rules in the module docstring.

    Raises:
        ValueError: Lists of different lengths, or a detection without a score.
    """
    if backend == "torchmetrics":
        return _torchmetrics_report(predictions, targets, coco_classes=coco_classes)
    per_class, n_t, n_p = _per_class_ap(predictions, targets)
    per_state: dict[str, float | None] = {s: None for s in TL_STATES}
    rows = []
    for c, ap in per_class.items():
        if ap is None:
            per_state[TL_STATES[c]] = 0.0 if not coco_classes else None
            if not coco_classes:
                rows.append(np.zeros(len(IOU_THRESHOLDS)))
        else:
            per_state[TL_STATES[c]] = _r(ap.mean())
            rows.append(ap)
    if not rows:  # no class counts: nothing expected (anything detected scores 0 in COCO mode too)
        value = 1.0 if n_p == 0 and n_t == 0 else 0.0
        return MapReport(
            map=value,
            map_50=value,
            map_75=value,
            per_class=per_state,
            n_images=len(targets),
            n_targets=n_t,
            n_predictions=n_p,
        )
    table = np.stack(rows)  # classes x thresholds
    return MapReport(
        map=_r(table.mean()),
        map_50=_r(table[:, 0].mean()),
        map_75=_r(table[:, 5].mean()),
        per_class=per_state,
        n_images=len(targets),
        n_targets=n_t,
        n_predictions=n_p,
    )


def _r(value: float | np.floating) -> float:
    """Round away float noise (precision is tp / (tp + fp + eps)), so a perfect score is exactly 1.0."""
    return round(float(value), 10)


def map_5095(
    predictions: Sequence[Sequence[TLBox]], targets: Sequence[Sequence[TLBox]], *, coco_classes: bool = False
) -> float:
    """mAP@[.5:.95] over a set of images (a dataset): :func:`map_report`'s ``map``."""
    return map_report(predictions, targets, coco_classes=coco_classes).map


def per_image_map(
    predictions: Sequence[Sequence[TLBox]], targets: Sequence[Sequence[TLBox]], *, coco_classes: bool = False
) -> list[float]:
    """mAP@[.5:.95] of each image on its own (same rules as :func:`map_5095`)."""
    if len(predictions) != len(targets):
        raise ValueError(f"{len(predictions)} prediction lists for {len(targets)} target lists")
    return [map_5095([p], [t], coco_classes=coco_classes) for p, t in zip(predictions, targets, strict=True)]


def consistency(dets_on_augmented: Sequence[TLBox], reference: Sequence[TLBox]) -> float:
    """TIGAUG's per-image consistency: mAP@[.5:.95] of the detections on τ(i) against the reference.

    Args:
        dets_on_augmented: The detector's boxes on the augmented image (scores required).
        reference: The detector's boxes on the original image, as they are (Eq. 1: weather and camera
            transformations) or transformed by τ (Eq. 2: CC, MP, AD, RT, SC); their scores are ignored.

    Returns:
        A value in [0, 1]; 1.0 when both are empty, 0.0 when exactly one is.
    """
    return map_5095([list(dets_on_augmented)], [list(reference)])


def is_violation(value: float, threshold: float = DEFAULT_VIOLATION_THRESHOLD) -> bool:
    """Whether a consistency value breaks the metamorphic relation (strictly below the threshold)."""
    return value < threshold


def _torchmetrics_report(
    predictions: Sequence[Sequence[TLBox]], targets: Sequence[Sequence[TLBox]], *, coco_classes: bool
) -> MapReport:
    """The same report from torchmetrics' ``MeanAveragePrecision`` (pycocotools backend)."""
    import torch
    from torchmetrics.detection import MeanAveragePrecision

    if len(predictions) != len(targets):
        raise ValueError(f"{len(predictions)} prediction lists for {len(targets)} target lists")
    metric = MeanAveragePrecision(iou_type="bbox", box_format="xyxy", class_metrics=True, backend="pycocotools")
    preds, tgts = [], []
    n_t = n_p = 0
    pred_classes: set[int] = set()
    gt_classes: set[int] = set()
    for p, t in zip(predictions, targets, strict=True):
        pb, pc, ps = _arrays(p, need_scores=True)
        tb, tc, _ = _arrays(t, need_scores=False)
        n_p += len(p)
        n_t += len(t)
        pred_classes |= set(pc.tolist())
        gt_classes |= set(tc.tolist())
        preds.append({"boxes": torch.tensor(pb), "scores": torch.tensor(ps), "labels": torch.tensor(pc)})
        tgts.append({"boxes": torch.tensor(tb), "labels": torch.tensor(tc)})
    per_state: dict[str, float | None] = {s: None for s in TL_STATES}
    if not gt_classes:
        value = 1.0 if n_p == 0 else 0.0
        if not coco_classes:
            per_state |= {TL_STATES[c]: 0.0 for c in pred_classes}
        return MapReport(
            map=value,
            map_50=value,
            map_75=value,
            per_class=per_state,
            n_images=len(targets),
            n_targets=n_t,
            n_predictions=n_p,
        )
    metric.update(preds, tgts)
    res = metric.compute()
    for c, ap in zip(res["classes"].reshape(-1).tolist(), res["map_per_class"].reshape(-1).tolist(), strict=True):
        per_state[TL_STATES[int(c)]] = _r(ap) if ap >= 0 else (None if coco_classes else 0.0)
    n_counted = len(gt_classes) if coco_classes else len(gt_classes | pred_classes)
    scale = len(gt_classes) / n_counted  # extra classes add zeros to the mean
    return MapReport(
        map=_r(float(res["map"]) * scale),
        map_50=_r(float(res["map_50"]) * scale),
        map_75=_r(float(res["map_75"]) * scale),
        per_class=per_state,
        n_images=len(targets),
        n_targets=n_t,
        n_predictions=n_p,
    )
