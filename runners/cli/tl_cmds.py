"""``drivemt tl augment|test|train|retrain``, ``drivemt data synth-tl`` and ``drivemt submit tl``.

The traffic-light commands run the same tools the TL-Augmenter and the Judge use, in this process, with
progress bars; ``submit tl`` hands a dataset to a running daemon instead.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from runners.cli._common import (
    ConfigOpt,
    DataDirOpt,
    LogLevelOpt,
    NatsUrlOpt,
    bus_artifacts,
    connect_bus,
    console,
    data_app,
    err_console,
    fail,
    make_config,
    progress_bar,
    run_async,
    submit_app,
)
from tools.errors import DrivemtError

__all__ = ["register"]

_CODES = "RN,SW,FG,LF,OE,UE,MB,CC,MP,AD,RT,SC"
_TRANSFORM_HELP = (
    "Comma-separated TIGAUG codes (default: all twelve): RN rain, SW snow, FG fog, LF lens flare, "
    "OE overexposure, UE underexposure, MB motion blur, CC change colour (red<->green), MP move, AD add, "
    "RT rotate, SC scale."
)

tl_app = typer.Typer(
    help="Traffic-light images (TIGAUG): augment with 12 transformations, test detectors, retrain.",
    no_args_is_help=True,
)

DatasetArg = Annotated[
    Path,
    typer.Argument(
        help="Dataset folder or annotation file: LISA (CSV), Bosch (YAML), YOLO (data.yaml), COCO (JSON), or a "
        "drivemt dataset.json (see `drivemt data synth-tl`).",
        exists=True,
    ),
]
FormatOpt = Annotated[
    str | None, typer.Option("--format", "-f", help="lisa, bosch, yolo, coco or drivemt (detected when omitted).")
]
TransformsOpt = Annotated[str, typer.Option("--transforms", "-t", help=_TRANSFORM_HELP)]
SeedOpt = Annotated[int, typer.Option(help="Seed of the sample and of every transformation.")]
FractionOpt = Annotated[
    float, typer.Option(help="Share of the images to augment (a seeded sample).", min=0.001, max=1.0)
]
ParamsOpt = Annotated[
    Path | None,
    typer.Option(
        "--params",
        help="YAML file of parameters per transformation code (defaults are TIGAUG's), e.g. "
        "'RN: {drop_size: [0.1, 0.2]}' or 'SC: {factor: [0.6, 0.8]}'.",
        exists=True,
        dir_okay=False,
    ),
]
DetectorOpt = Annotated[
    list[str],
    typer.Option(
        "--detector",
        "-d",
        help="Detector under test as KIND:PATH: yolo:weights.pt (or a model yaml), frcnn:ckpt.pt, ssdlite:ckpt.pt. "
        "Repeat for several.",
    ),
]


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(tl_app, name="tl")
    submit_app.command("tl")(submit_tl)


def _codes(text: str) -> list[str]:
    from tools.tl.augment import transform_codes

    chosen = [c for c in text.split(",") if c.strip()]
    if not chosen:
        raise fail("--transforms names no transformation (omit it for all twelve; --help lists their codes)")
    try:
        return transform_codes(chosen)
    except DrivemtError as exc:
        raise fail(str(exc)) from exc


def _load(path: Path, fmt: str | None, split: str | None = None) -> Any:
    from tools.tl.datasets import load_dataset

    try:
        ds = load_dataset(path, fmt, split=split)
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    for s in ds.skipped[:20]:
        err_console.print(f"[yellow]skipped[/] {s.item}: {s.reason}", highlight=False)
    if len(ds.skipped) > 20:
        err_console.print(f"[yellow]… and {len(ds.skipped) - 20} more skipped[/]")
    return ds


def _params(path: Path | None) -> dict[str, dict[str, Any]] | None:
    """Transformation parameters from a YAML file (codes upper-cased; each checked by its params model)."""
    if path is None:
        return None
    import yaml

    from tools.tl.transforms import params_model

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise fail(f"{path}: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise fail(f"{path}: expected a mapping of transformation codes to parameter mappings")
    out = {str(k).upper(): v for k, v in data.items()}
    for code, values in out.items():
        try:
            params_model(code).model_validate(values)
        except (DrivemtError, ValueError) as exc:
            raise fail(f"{path}: {code}: {exc}") from exc
    return out


def _augment(ds: Any, out: Path, codes: list[str], seed: int, fraction: float, export: bool, params: Any = None) -> Any:
    from tools.tl.augment import augment_dataset
    from tools.tl.formats import FORMATS

    export_format = ds.format if export and ds.format in FORMATS else None
    with progress_bar("augmenting") as update:
        try:
            return augment_dataset(
                ds,
                out=out,
                transforms=codes,
                seed=seed,
                fraction=fraction,
                params=params,
                export_format=export_format,
                progress=update,
            )
        except DrivemtError as exc:
            raise fail(str(exc)) from exc


def _print_augmentation(m: Any) -> None:
    table = Table(title=f"{m.images_sampled} of {m.images_in} image(s) augmented -> {m.out_dir}", title_justify="left")
    table.add_column("transformation")
    table.add_column("images", justify="right")
    from tools.tl.transforms import describe_transforms

    names = describe_transforms()
    for code, n in m.per_transform().items():
        table.add_row(f"{code}  [dim]{names.get(code, '').split(':')[0]}[/]", str(n))
    console.print(table)
    rate = len(m.pairs) / m.transform_seconds if m.transform_seconds else 0.0
    console.print(
        f"{len(m.pairs)} augmented images in {m.seconds:.1f} s ({rate:.1f} images/s in the transformations, "
        f"decoding and encoding excluded); manifest {Path(m.out_dir) / 'manifest.json'}"
        + (f"; {m.format} copy in {m.export}" if m.export else "")
    )
    if m.skipped:
        console.print(f"[yellow]{len(m.skipped)} item(s) skipped[/] (listed in the manifest)")


@tl_app.command("augment")
def tl_augment(
    dataset: DatasetArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (images/<code>/, manifest.json, dataset/).")],
    format_: FormatOpt = None,
    transforms: TransformsOpt = _CODES,
    seed: SeedOpt = 0,
    fraction: FractionOpt = 1.0,
    export: Annotated[
        bool, typer.Option("--export/--no-export", help="Also write the augmented set in the input's format.")
    ] = True,
    params: ParamsOpt = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Augment a labelled traffic-light dataset with TIGAUG's transformations; labels follow each change.

    Every sampled image gets every transformation, seeded; unreadable images, boxes outside their image and
    unknown states are skipped and listed, and the rest goes on.
    """
    make_config(log_level=log_level)
    codes = _codes(transforms)
    ds = _load(dataset, format_)
    _print_augmentation(_augment(ds, out, codes, seed, fraction, export, _params(params)))


def _print_test(result: Any) -> None:
    table = Table(title="mAP@[.5:.95] against ground truth (violations / pairs)", title_justify="left")
    table.add_column("transformation")
    for s in result.summaries:
        table.add_column(s.detector, justify="right", overflow="fold")
    table.add_row("original", *[f"{s.map_original:.3f}" for s in result.summaries])
    for code in result.transforms:
        cells = []
        for s in result.summaries:
            if code not in s.map_augmented:
                cells.append("–")
                continue
            d = s.map_augmented[code] - s.map_original
            colour = "red" if d < -0.005 else ("green" if d > 0.005 else "white")
            cells.append(
                f"{s.map_augmented[code]:.3f} [{colour}]{d:+.3f}[/] ({s.violations.get(code, 0)}/{s.pairs.get(code, 0)})"
            )
        table.add_row(code, *cells)
    console.print(table)
    console.print(f"{len(result.violations())} violation(s) at consistency < {result.threshold}")
    for s in result.summaries:
        untested = sum(s.untested.values())
        if untested:  # (nothing found on either image agrees trivially: it is no evidence of robustness)
            err_console.print(
                f"[bold yellow]warning:[/] {s.detector} found no light on either image in {untested} of "
                f"{sum(s.pairs.values())} pairs: its relations are untested there"
            )


@tl_app.command("test")
def tl_test(
    dataset: DatasetArg,
    detector: DetectorOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (augmented set, evidence, report).")],
    format_: FormatOpt = None,
    transforms: TransformsOpt = _CODES,
    seed: SeedOpt = 0,
    fraction: FractionOpt = 1.0,
    split: Annotated[
        str | None, typer.Option(help="Only images of this split (e.g. test); all images when omitted.")
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            help="Consistency below which an image violates its relation (default 0.55, see the report).",
            min=0.0,
            max=1.0,
        ),
    ] = None,
    conf: Annotated[
        float, typer.Option(help="Operating confidence of the detectors for the relations.", min=0.0, max=1.0)
    ] = 0.25,
    params: ParamsOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    log_level: LogLevelOpt = None,
) -> None:
    """Test detectors: augment the dataset, run each detector on originals and augmented images, check
    TIGAUG's relations per image (consistency = mAP@[.5:.95] of the detections on τ(i) against τ(detections
    on i)), score mAP against ground truth per transformation, and write an HTML report, violations first.
    """
    make_config(log_level=log_level)
    if not detector:
        raise fail("name at least one --detector KIND:PATH")
    from runners.detectors import DetectorSpec, load_detector
    from tools.tl.judging import judge_detectors
    from tools.tl.metrics import DEFAULT_VIOLATION_THRESHOLD
    from tools.tl.report import write_tl_report

    codes = _codes(transforms)
    ds = _load(dataset, format_, split)
    try:  # (every detector loads before anything is written: a broken one leaves no half-made output)
        detectors = [load_detector(str(DetectorSpec.parse(d))) for d in detector]
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    manifest = _augment(ds, out / "augmented", codes, seed, fraction, export=False, params=_params(params))
    _print_augmentation(manifest)
    with progress_bar("detecting") as update:
        try:
            result = judge_detectors(
                manifest,
                detectors,
                out_dir=out,
                threshold=threshold if threshold is not None else DEFAULT_VIOLATION_THRESHOLD,
                conf=conf,
                progress=lambda done, total, _name: update(done, total),
            )
        except DrivemtError as exc:
            raise fail(str(exc)) from exc
    (out / "results.json").write_text(result.model_dump_json(indent=1), encoding="utf-8")
    rate = len(manifest.pairs) / manifest.transform_seconds if manifest.transform_seconds else 0.0
    report = write_tl_report(
        result, out / "report.html", augmentation={"images_per_second": rate, "pairs": len(manifest.pairs)}
    )
    if json_out:
        print(
            json.dumps(
                {
                    "report": str(report),
                    "violations": len(result.violations()),
                    "detectors": [s.model_dump() for s in result.summaries],
                }
            )
        )
        return
    _print_test(result)
    console.print(f"report: [bold]{report}[/]")


@tl_app.command("train")
def tl_train(
    dataset: DatasetArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder; prints the detector spec to use.")],
    kind: Annotated[str, typer.Option(help="yolo, frcnn or ssdlite.")] = "yolo",
    model: Annotated[str, typer.Option(help="yolo: model yaml (from scratch) or local .pt to fine-tune.")] = (
        "yolov8n.yaml"
    ),
    format_: FormatOpt = None,
    epochs: Annotated[int, typer.Option(help="Epoch cap (yolo fits the epochs into --time-limit).")] = 30,
    imgsz: Annotated[int, typer.Option(help="Training size (long side).", min=32)] = 320,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Training budget in seconds.", min=1.0)] = 600.0,
    seed: SeedOpt = 0,
    log_level: LogLevelOpt = None,
) -> None:
    """Train a detector on a dataset's train split, on the CPU, offline (nothing is downloaded)."""
    make_config(log_level=log_level)
    from runners.detectors import load_detector, train_detector
    from runners.detectors.evaluation import evaluate_detector
    from runners.detectors.yolo import YoloTrainSettings

    ds = _load(dataset, format_)
    with progress_bar(f"training {kind}") as update:
        try:
            weights = train_detector(
                kind,
                ds,
                out,
                epochs=epochs,
                imgsz=imgsz,
                time_limit_s=time_limit,
                seed=seed,
                yolo=YoloTrainSettings(model=model) if kind == "yolo" else None,
                progress=lambda _msg, frac: update(round(frac * 100), 100),
            )
        except DrivemtError as exc:
            raise fail(str(exc)) from exc
    spec = f"{kind}:{weights}"
    if any(i.split == "test" for i in ds.images):
        report = evaluate_detector(load_detector(spec), ds, split="test")
        console.print(f"mAP@[.5:.95] on the test split: [bold]{report.map:.3f}[/]")
    console.print(f"detector: [bold]{spec}[/]")


@tl_app.command("retrain")
def tl_retrain(
    dataset: DatasetArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")],
    kind: Annotated[str, typer.Option(help="yolo, frcnn or ssdlite.")] = "yolo",
    baseline: Annotated[
        str | None,
        typer.Option("--detector", "-d", help="Baseline detector KIND:PATH (trained on the originals when omitted)."),
    ] = None,
    format_: FormatOpt = None,
    transforms: TransformsOpt = _CODES,
    fraction: Annotated[
        float, typer.Option(help="Share of augmented training images added (TIGAUG: 0.1-0.5).", min=0.01, max=1.0)
    ] = 0.1,
    epochs: Annotated[int, typer.Option(help="Epoch cap per training.")] = 30,
    imgsz: Annotated[int, typer.Option(help="Training size.", min=32)] = 320,
    time_limit: Annotated[
        float, typer.Option("--time-limit", help="Budget per training run, seconds.", min=1.0)
    ] = 600.0,
    seed: SeedOpt = 0,
    log_level: LogLevelOpt = None,
) -> None:
    """Retrain with augmented data (TIGAUG RQ2): original training images plus a share of augmented ones, then
    mAP of baseline and retrained detector on the original and the augmented test images."""
    make_config(log_level=log_level)
    from runners.detectors.retrain import retrain_with_augmentation

    codes = _codes(transforms)
    ds = _load(dataset, format_)
    try:
        result = retrain_with_augmentation(
            ds,
            out=out,
            kind=kind,
            baseline=baseline,
            transforms=codes,
            fraction=fraction,
            epochs=epochs,
            imgsz=imgsz,
            time_limit_s=time_limit,
            seed=seed,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    table = Table(title=f"mAP@[.5:.95] on {result.test_images} test images", title_justify="left")
    table.add_column("test set")
    table.add_column("baseline", justify="right")
    table.add_column(f"retrained (+{result.augmented_train_images} augmented)", justify="right")
    table.add_row("original", f"{result.map_original['baseline']:.3f}", f"{result.map_original['retrained']:.3f}")
    for code in result.transforms:
        b = result.map_augmented["baseline"].get(code)
        r = result.map_augmented["retrained"].get(code)
        table.add_row(code, f"{b:.3f}" if b is not None else "–", f"{r:.3f}" if r is not None else "–")
    console.print(table)
    console.print(f"retrained detector: [bold]{result.retrained}[/]; results {out / 'retrain.json'}")


@data_app.command("synth-tl")
def synth_tl_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (images/<split>/, dataset.json).")],
    n_train: Annotated[int, typer.Option(help="Training images.", min=0)] = 800,
    n_val: Annotated[int, typer.Option(help="Validation images.", min=0)] = 60,
    n_test: Annotated[int, typer.Option(help="Test images.", min=0)] = 150,
    width: Annotated[int, typer.Option(help="Image width.", min=64)] = 640,
    height: Annotated[int, typer.Option(help="Image height.", min=64)] = 360,
    seed: SeedOpt = 0,
) -> None:
    """Generate a labelled traffic-light dataset: vertical and horizontal housings, red/yellow/green/off lights at
    dashcam-like sizes and places, drawn on procedural road scenes; small enough to train on a CPU in minutes."""
    from tools.tl.synth import synth_tl

    with progress_bar("drawing") as update:
        try:
            ds = synth_tl(
                out, n_train=n_train, n_val=n_val, n_test=n_test, width=width, height=height, seed=seed, progress=update
            )
        except DrivemtError as exc:
            raise fail(str(exc)) from exc
    console.print(f"{len(ds.images)} images with {ds.box_count()} lights -> {out / 'dataset.json'}")


def submit_tl(
    dataset: DatasetArg,
    format_: FormatOpt = None,
    transforms: TransformsOpt = _CODES,
    fraction: FractionOpt = 1.0,
    seed: SeedOpt = 0,
    split: Annotated[str | None, typer.Option(help="Only images of this split (e.g. test).")] = None,
    detector: DetectorOpt = [],  # noqa: B006 - typer reads list defaults as given
    threshold: Annotated[
        float | None, typer.Option(help="Violation threshold of the consistency.", min=0.0, max=1.0)
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the augmented set (and the verdict).")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.", min=1.0)] = 3600.0,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
) -> None:
    """Publish a traffic-light dataset into a running daemon: the TL-Augmenter augments it, the Judge tests the
    --detector(s) on it and writes the report."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url)
    codes = _codes(transforms)

    async def main() -> Any:
        from bus import TLDatasetSubmitted
        from bus.events import TLDatasetPayload
        from runners.clients.tl import wait_for_tl

        event = TLDatasetSubmitted(
            producer="cli",
            payload=TLDatasetPayload(
                dataset=str(dataset.resolve()),
                format=format_,
                transforms=codes,
                fraction=fraction,
                seed=seed,
                split=split,
                detectors=list(detector),
                threshold=threshold,
            ),
        )
        async with connect_bus(cfg, name="drivemt-submit") as bus:
            with bus_artifacts(cfg, bus) as objects:
                if detector:  # the Judge loads detectors from the artefact store only
                    from runners.clients.tl import import_detectors
                    from tools.common.artifacts import LocalArtifactStore

                    specs = await asyncio.to_thread(
                        import_detectors, objects or LocalArtifactStore(cfg.runs_dir), list(detector)
                    )
                    payload = event.payload.model_copy(update={"detectors": specs})
                    event = event.model_copy(update={"payload": payload})
                if objects is not None:  # workers elsewhere read the dataset from the Object Store
                    from runners.clients.tl import upload_dataset

                    with progress_bar("uploading") as update:
                        update(0, 1)
                        ref = await asyncio.to_thread(upload_dataset, objects, dataset.resolve(), event.correlation_id)
                        update(1, 1)
                    payload = event.payload.model_copy(update={"dataset_ref": ref})
                    event = event.model_copy(update={"payload": payload})
                if not wait:
                    await bus.publish(event)
                    return event.correlation_id, None
                with progress_bar("dataset") as update:
                    outcome = await wait_for_tl(bus, event, timeout=timeout, on_progress=update)
                if objects is not None:  # the report and its pictures, here
                    await asyncio.to_thread(objects.pull, event.correlation_id)
                return event.correlation_id, outcome

    correlation, outcome = run_async(main)
    if outcome is None:
        console.print(f"submitted {dataset}; batch [bold]{correlation}[/]")
        return
    for line in outcome.lines():
        console.print(line, highlight=False)
    if not outcome.complete:
        raise fail(f"no final result after {timeout:.0f} s")
