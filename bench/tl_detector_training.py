"""The demo traffic-light detector: generate the synthetic set, train on CPU within the time limit, measure mAP.

    python bench/tl_detector_training.py [--out DIR] [--time-limit S] [--model yolo11n.yaml] [--others S]

Prints the seconds spent generating, training and evaluating, and mAP@[.5:.95] (with mAP@.5 and per
state) of the YOLO detector on the synthetic test split, against the 0.3 target of the demo. With
``--others S`` it also trains Faster R-CNN and SSDlite (from scratch, no downloads) for S seconds each on
the same images and prints their mAP. The load average is printed before and after: on a shared
machine the training gets fewer epochs into its time limit, so figures taken under load are
pessimistic.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runners.detectors import demo_training_recipe, load_detector, train_detector  # noqa: E402
from runners.detectors.evaluation import detect_images, evaluate_detector  # noqa: E402
from runners.detectors.yolo import YoloTrainSettings  # noqa: E402
from tools.tl.metrics import MapReport  # noqa: E402
from tools.tl.synth import load_manifest, synth_tl  # noqa: E402


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min) on {os.cpu_count()} cores"


def _row(name: str, seconds: float, report: MapReport) -> str:
    per = " ".join(f"{k}={v:.3f}" if v is not None else f"{k}=-" for k, v in report.per_class.items())
    return f"{name:<10} train {seconds:7.1f} s   mAP@[.5:.95] {report.map:.3f}   mAP@.5 {report.map_50:.3f}   {per}"


def main() -> None:
    """Run the recipe and print the figures."""
    recipe = demo_training_recipe()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="work folder (a temporary one by default)")
    parser.add_argument("--time-limit", type=float, default=recipe.time_limit_s, help="YOLO training seconds")
    parser.add_argument("--model", default=recipe.yolo.model, help="ultralytics model yaml (from scratch)")
    parser.add_argument("--n-train", type=int, default=recipe.n_train, help="synthetic training images")
    parser.add_argument("--imgsz", type=int, default=recipe.imgsz, help="YOLO training size")
    parser.add_argument("--others", type=float, default=0.0, help="also train frcnn and ssdlite for S seconds each")
    args = parser.parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix="drivemt-tl-bench-"))
    print(f"work folder {out}\nbefore: {_load()}", flush=True)
    data = out / "synth"
    t0 = time.perf_counter()
    if (data / "dataset.json").is_file():
        dataset = load_manifest(data)
        print(f"synthetic set: reusing {data} ({len(dataset.images)} images)")
    else:
        dataset = synth_tl(
            data,
            n_train=args.n_train,
            n_val=recipe.n_val,
            n_test=recipe.n_test,
            width=recipe.width,
            height=recipe.height,
            seed=recipe.seed,
            settings=recipe.synth,
        )
        n = len(dataset.images)
        dt = time.perf_counter() - t0
        print(f"synthetic set: {n} images {recipe.width}x{recipe.height} in {dt:.1f} s ({n / dt:.1f} images/s)")
    print(f"{dataset.box_count()} lights; training on {args.n_train}, testing on {recipe.n_test}", flush=True)

    rows = []
    settings = YoloTrainSettings(**(recipe.yolo.model_dump() | {"model": args.model}))
    t0 = time.perf_counter()
    weights = train_detector(
        "yolo",
        dataset,
        out / "yolo",
        epochs=recipe.epochs,
        imgsz=args.imgsz,
        time_limit_s=args.time_limit,
        seed=recipe.seed,
        yolo=settings,
        progress=lambda msg, frac: print(f"  {msg}", flush=True),
    )
    train_s = time.perf_counter() - t0
    detector = load_detector(f"yolo:{weights}")
    t0 = time.perf_counter()
    report = evaluate_detector(detector, dataset, split="test")
    eval_s = time.perf_counter() - t0
    test_images = [i for i in dataset.images if i.split == "test"]
    print(
        f"yolo ({args.model}) weights {weights}; evaluation {eval_s:.1f} s ({len(test_images) / eval_s:.1f} images/s)"
    )
    rows.append(_row("yolo", train_s, report))
    reached = "reached" if report.map >= recipe.target_map else "MISSED"
    rows.append(f"target mAP@[.5:.95] >= {recipe.target_map} within 900 s of training: {reached}")
    at_conf = detect_images(detector, dataset, test_images, conf=0.25)
    print(f"detections at conf 0.25: {sum(map(len, at_conf))} for {sum(len(i.boxes) for i in test_images)} lights")

    if args.others > 0:
        for kind in ("frcnn", "ssdlite"):
            t0 = time.perf_counter()
            path = train_detector(
                kind,
                dataset,
                out / kind,
                epochs=1000,
                imgsz=recipe.width,
                time_limit_s=args.others,
                seed=recipe.seed,
                progress=lambda msg, frac: print(f"  {msg}", flush=True),
            )
            seconds = time.perf_counter() - t0
            rows.append(_row(kind, seconds, evaluate_detector(load_detector(f"{kind}:{path}"), dataset, split="test")))

    print("\n".join(["", *rows]))
    print(f"after: {_load()} (figures under load are pessimistic: fewer epochs fit the time limit)")


if __name__ == "__main__":
    main()
