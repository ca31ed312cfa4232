"""The driving models AutoMT's Judge runs: ``drivemt ads train`` and ``drivemt ads check``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from runners.cli._common import console, err_console, fail, progress_bar
from tools.errors import DrivemtError

__all__ = ["register"]

ads_app = typer.Typer(
    help="Driving models (ADSs) for AutoMT's Judge: train the zoo, check your own.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Add the ``ads`` group."""
    app.add_typer(ads_app, name="ads")
    ads_app.command("train")(ads_train)
    ads_app.command("check")(ads_check)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise fail(f"--size must be WIDTHxHEIGHT, e.g. 160x80, not {text!r}") from None
    if h < 64 or w < 64:
        raise fail(f"--size {text} is too small: the zoo's networks take at least 64x64")
    return h, w


def ads_train(
    data: Annotated[Path, typer.Argument(help="Driving cases: a synthetic set, Udacity, A2D2 or frames/+ego.csv.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the models, their specs and training.json.")],
    models: Annotated[
        list[str] | None,
        typer.Option(
            "--models",
            "-m",
            help="Architectures (repeat or comma-separate): pilotnet, epoch, resnet18, vgg11, cnn-lstm, cnn3d, "
            "resnet101, vgg16. AutoMT's six (with the CPU stand-ins) if omitted.",
        ),
    ] = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", help="Seconds of training in all, shared by cost per sample.")
    ] = 1200.0,
    epochs: Annotated[
        float | None,
        typer.Option(
            help="Train each model this many passes over its training frames, with --time-limit as a cap "
            "(the same models on any machine); by time only if omitted."
        ),
    ] = None,
    size: Annotated[
        str, typer.Option(help="Model input WIDTHxHEIGHT, as every --size in drivemt (AutoMT's: 320x160).")
    ] = "160x80",
    seed: Annotated[int, typer.Option(help="Seed of the split and the initial weights.")] = 0,
    prefix: Annotated[
        str, typer.Option(help="Put before each model's name (clean-epoch), so that several zoos share a folder.")
    ] = "",
    json_out: Annotated[bool, typer.Option("--json", help="Print the training report as JSON.")] = False,
) -> None:
    """Train driving models on driving cases, within a total time limit, and test them on held-out whole cases.

    Each model predicts the ego's speed and steering from the frames (one network with two heads). The report
    gives each one's held-out mean absolute error beside the constant-mean baseline; a model that does not beat
    the baseline on both outputs is flagged, since its verdicts would mean nothing. The models are written as
    TorchScript with adapter specs: pass the folder to ``drivemt mt run --models`` or ``submit cases --models``.
    """
    from runners.ads.architectures import ARCHITECTURES, DEFAULT_ZOO
    from runners.ads.train import load_case_frames, train_zoo

    names = [n.strip() for m in (models or []) for n in m.split(",") if n.strip()] or list(DEFAULT_ZOO)
    unknown = [n for n in names if n not in ARCHITECTURES]
    if unknown:
        raise fail(f"unknown architecture(s) {', '.join(unknown)}; known: {', '.join(ARCHITECTURES)}")
    if time_limit <= 0:
        raise fail("--time-limit must be positive")
    if epochs is not None and epochs <= 0:
        raise fail("--epochs must be positive")
    height, width = _size(size)
    if prefix and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", prefix):
        raise fail(f"--prefix {prefix!r} may hold letters, digits and _ . + - only, and start with a letter or digit")
    try:
        with progress_bar("reading cases") as update:
            frames = load_case_frames(data, height=height, width=width, progress=update)
        with progress_bar("training") as update:

            def tick(name: str, frac: float) -> None:
                update(round(frac * 1000), 1000)

            report = train_zoo(
                frames, out, models=names, time_limit_s=time_limit, epochs=epochs, height=height, width=width,
                seed=seed, prefix=prefix, progress=tick,
            )  # fmt: skip
    except DrivemtError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        print(json.dumps(report.to_json()))
        return
    table = Table(
        title=f"{len(report.models)} model(s) on {report.train_cases} cases, tested on {report.held_out_cases} "
        f"held-out whole cases at {height}x{width}",
        title_justify="left",
    )
    for col in ("model", "for", "params", "s", "epochs", "speed MAE", "steer MAE"):
        table.add_column(col, justify="left" if col in ("model", "for") else "right", no_wrap=True)
    table.add_row(
        "[dim]baseline[/]", "[dim]mean[/]", "", "", "",
        f"[dim]{report.baseline_speed_mae_kmh:.2f}[/]", f"[dim]{report.baseline_steering_mae_rad:.4f}[/]",
    )  # fmt: skip
    for m in report.models:
        speed_ok = m.speed_mae_kmh < report.baseline_speed_mae_kmh
        steer_ok = m.steering_mae_rad < report.baseline_steering_mae_rad
        table.add_row(
            m.name if m.beats_baseline else f"[red]{m.name}[/]",
            m.stands_in_for or "",
            f"{m.parameters / 1e6:.2f}M",
            f"{m.seconds:.0f}",
            f"{m.epochs:.1f}",
            f"{m.speed_mae_kmh:.2f}" if speed_ok else f"[red]{m.speed_mae_kmh:.2f}[/]",
            f"{m.steering_mae_rad:.4f}" if steer_ok else f"[red]{m.steering_mae_rad:.4f}[/]",
        )
    console.print(table)
    console.print("MAE on held-out whole cases: speed in km/h, steering in rad; baseline: the training mean")
    console.print(f"models and specs: [bold]{out}[/] ({report.seconds:.0f} s)")
    weak = [m.name for m in report.models if not m.beats_baseline]
    if weak:
        err_console.print(
            f"[bold yellow]warning:[/] {', '.join(weak)} did not beat the constant-mean baseline on both outputs: "
            "their verdicts would mean nothing. Train longer (--time-limit) or on more cases."
        )


def ads_check(
    models: Annotated[Path, typer.Argument(help="An adapter spec (.json) or a folder of them.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Load driving models through their adapter specs and run each on a dummy input: what the Judge would do."""
    from runners.ads.models import load_models
    from runners.ads.spec import find_specs

    specs = [models] if models.is_file() else find_specs(models)
    if not specs:
        raise fail(f"{models} holds no adapter spec (*.json)")
    loaded, errors = load_models(specs)
    rows: list[dict[str, Any]] = [
        {
            "model": m.name,
            "ok": True,
            "input": f"{m.spec.input.height}x{m.spec.input.width} {m.spec.input.colour} x{m.spec.input.frames}",
            "outputs": sorted({o.name for f in m.spec.files for o in f.outputs}),
        }
        for m in loaded
    ] + [{"model": e.model, "ok": False, "error": e.reason} for e in errors]
    if json_out:
        print(json.dumps(rows))
    else:
        for r in rows:
            if r["ok"]:
                console.print(f"[green]ok[/]    {r['model']}: {r['input']} -> {', '.join(r['outputs'])}")
            else:
                console.print(f"[red]error[/] {r['model']}: {r['error']}")
    if errors:
        raise typer.Exit(1)
