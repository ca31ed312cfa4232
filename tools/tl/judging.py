"""Metamorphic testing of traffic-light detectors on an augmented dataset (TIGAUG's Judge).

For every detector and every (original i, augmented τ(i)) pair: the detector's boxes on τ(i) are scored
(mAP@[.5:.95]) against its boxes on i — as detected for the weather and camera transformations (Eq. 1),
transformed by τ for CC, MP, AD, RT and SC (Eq. 2). A pair whose consistency falls below the threshold
violates the relation; a side-by-side picture proves it. At dataset level the detector is scored against
ground truth on the originals and on each transformation's augmented set (TIGAUG Fig. 3).

Detections are made once, at a low confidence floor for the ground-truth mAP (COCO-style ranking), and
filtered at the operating confidence for the relation (what a driving stack would act on).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from tools.tl.augment import AugmentationManifest, AugmentedPair, file_stem
from tools.tl.detection import EVAL_CONF, Detector
from tools.tl.errors import EmptyDatasetError
from tools.tl.images import read_image, write_image
from tools.tl.metrics import DEFAULT_VIOLATION_THRESHOLD, consistency, is_violation, map_5095
from tools.tl.models import TLBox
from tools.tl.results import DetectorSummary, PairResult, TLTestResult
from tools.tl.transforms import transform_detections

__all__ = ["DetectorSummary", "PairResult", "TLTestResult", "draw_pair", "judge_detectors"]

ProgressFn = Callable[[int, int, str], None]

_STATE_BGR = {"red": (60, 60, 235), "yellow": (0, 200, 255), "green": (80, 200, 60), "off": (200, 200, 200)}


def _draw_boxes(img: np.ndarray, boxes: Sequence[TLBox], *, thick: int, dashed: bool = False) -> None:
    import cv2

    for b in boxes:
        x1, y1, x2, y2 = (round(v) for v in b.xyxy())
        colour = _STATE_BGR.get(b.state, (255, 255, 255))[::-1]
        pad = thick + 1
        if dashed:
            for x in range(x1 - pad, x2 + pad, 6):
                cv2.line(img, (x, y1 - pad), (min(x + 3, x2 + pad), y1 - pad), colour, 1)
                cv2.line(img, (x, y2 + pad), (min(x + 3, x2 + pad), y2 + pad), colour, 1)
            continue
        cv2.rectangle(img, (x1 - pad, y1 - pad), (x2 + pad, y2 + pad), colour, thick)
        if b.score is not None:
            cv2.putText(img, f"{b.state[0]}{b.score:.2f}", (x1, max(10, y1 - pad - 3)), 0, 0.4, colour, 1)


def draw_pair(pair: AugmentedPair, result: PairResult, out: Path, *, max_width: int = 1600) -> Path:
    """Original (ground truth dashed, detections solid) beside the augmented image (τ(truth) dashed,
    detections solid), with the transformation and consistency written on top."""
    import cv2

    a = read_image(pair.original_path).copy()
    b = read_image(pair.augmented_path).copy()
    _draw_boxes(a, pair.original.boxes, thick=1, dashed=True)
    _draw_boxes(a, result.detections_original, thick=2)
    _draw_boxes(b, pair.augmented.boxes, thick=1, dashed=True)
    _draw_boxes(b, result.detections_augmented, thick=2)
    h = max(a.shape[0], b.shape[0])
    canvas = np.zeros((h + 28, a.shape[1] + b.shape[1] + 8, 3), np.uint8)
    canvas[28 : 28 + a.shape[0], : a.shape[1]] = a
    canvas[28 : 28 + b.shape[0], a.shape[1] + 8 :] = b
    verdict = "VIOLATION" if result.violation else "ok"
    text = f"{pair.original_id}  {pair.code}  consistency {result.consistency:.2f}  {verdict}  ({result.detector})"
    cv2.putText(canvas, text, (6, 19), 0, 0.55, (255, 255, 255), 1, cv2.LINE_AA)
    if canvas.shape[1] > max_width:
        scale = max_width / canvas.shape[1]
        canvas = cv2.resize(canvas, (max_width, round(canvas.shape[0] * scale)), interpolation=cv2.INTER_AREA)
    return write_image(out, canvas)


def _predict_all(
    detector: Detector, paths: Sequence[str], *, batch: int, on_batch: Callable[[int], None] | None = None
) -> tuple[dict[str, list[TLBox]], dict[str, str]]:
    out: dict[str, list[TLBox]] = {}
    errors: dict[str, str] = {}
    for start in range(0, len(paths), batch):
        chunk = list(paths[start : start + batch])
        arrays, ok = [], []
        for p in chunk:
            try:
                arrays.append(read_image(p))
                ok.append(p)
            except Exception as exc:  # an unreadable file is reported, the rest are tested
                errors[p] = str(exc)
        if arrays:
            for p, dets in zip(ok, detector.predict(arrays, conf=EVAL_CONF), strict=True):
                out[p] = dets
        if on_batch is not None:
            on_batch(len(chunk))
    return out, errors


def judge_detectors(
    manifest: AugmentationManifest,
    detectors: Sequence[Detector],
    *,
    out_dir: Path,
    threshold: float = DEFAULT_VIOLATION_THRESHOLD,
    conf: float = 0.25,
    batch: int = 8,
    evidence_limit: int = 200,
    progress: ProgressFn | None = None,
) -> TLTestResult:
    """Run every detector on the originals and the augmented images of a manifest and judge each pair.

    Args:
        manifest: What :func:`tools.tl.augment.augment_dataset` made.
        detectors: Loaded detectors (``runners.detectors.load_detector`` loads a ``KIND:PATH`` spec).
        out_dir: Where evidence pictures go (``evidence/<detector>/``).
        threshold: Consistency below which a pair violates its relation.
        conf: Operating confidence for the relation (detections below it are ignored there).
        batch: Images per forward pass.
        evidence_limit: Most side-by-side pictures drawn per detector (lowest consistency first).
        progress: Called with (images done, images planned, detector name).
    """
    if not manifest.pairs:
        raise EmptyDatasetError(manifest.source, "its augmentation made no pairs: there is nothing to test")
    started = time.perf_counter()
    originals = list(dict.fromkeys(p.original_path for p in manifest.pairs))
    result = TLTestResult(
        dataset=manifest.source,
        manifest=str(Path(manifest.out_dir) / "manifest.json"),
        threshold=threshold,
        conf=conf,
        transforms=list(manifest.transforms),
        images=len(originals),
        skipped=[f"{s.item}: {s.reason}" for s in manifest.skipped],
    )
    loaded = list(detectors)
    planned = (len(originals) + len(manifest.pairs)) * len(loaded)
    done = 0
    for det in loaded:
        t0 = time.perf_counter()

        def tick(n: int, name: str = det.name) -> None:
            nonlocal done
            done += n
            if progress is not None:
                progress(done, planned, name)

        on_orig, err1 = _predict_all(det, originals, batch=batch, on_batch=tick)
        on_aug, err2 = _predict_all(det, [p.augmented_path for p in manifest.pairs], batch=batch, on_batch=tick)
        result.skipped += [f"{det.name}: {path}: {why}" for path, why in {**err1, **err2}.items()]
        summary = DetectorSummary(detector=det.name, map_original=0.0)
        gt_by_path = {p.original_path: p.original.boxes for p in manifest.pairs}
        tested = [p for p in originals if p in on_orig]
        summary.map_original = map_5095([on_orig[p] for p in tested], [gt_by_path[p] for p in tested])
        det_pairs: list[tuple[AugmentedPair, PairResult]] = []
        for code in manifest.transforms:
            pairs = [
                p
                for p in manifest.pairs
                if p.code == code and p.original_path in on_orig and p.augmented_path in on_aug
            ]
            if not pairs:
                continue
            summary.map_augmented[code] = map_5095(
                [on_aug[p.augmented_path] for p in pairs], [p.augmented.boxes for p in pairs]
            )
            judged: list[PairResult] = []
            for pair in pairs:
                orig = [b for b in on_orig[pair.original_path] if (b.score or 0) >= conf]
                aug = [b for b in on_aug[pair.augmented_path] if (b.score or 0) >= conf]
                expected = transform_detections(pair.as_result(), orig)
                c = consistency(aug, expected)
                pr = PairResult(
                    detector=det.name,
                    original_id=pair.original_id,
                    augmented_id=pair.augmented_id,
                    code=code,
                    consistency=c,
                    violation=is_violation(c, threshold),
                    detections_original=orig,
                    detections_augmented=aug,
                    expected=expected,
                    original_path=pair.original_path,
                    augmented_path=pair.augmented_path,
                )
                judged.append(pr)
                det_pairs.append((pair, pr))
            summary.pairs[code] = len(judged)
            summary.violations[code] = sum(pr.violation for pr in judged)
            summary.mean_consistency[code] = float(np.mean([pr.consistency for pr in judged]))
            summary.untested[code] = sum(
                1 for pr in judged if not pr.detections_original and not pr.detections_augmented
            )
        worst = sorted((x for x in det_pairs if x[1].violation), key=lambda x: x[1].consistency)[:evidence_limit]
        folder = out_dir / "evidence" / file_stem(det.name)
        for pair, pr in worst:
            pr.evidence = str(draw_pair(pair, pr, folder / f"{file_stem(pair.augmented_id)}.jpg"))
        summary.seconds = time.perf_counter() - t0
        result.summaries.append(summary)
        result.pairs.extend(pr for _, pr in det_pairs)
    result.seconds = time.perf_counter() - started
    return result
