"""Classical follow-up generation: milliseconds per frame at 640x480 on one core, per manipulation kind.

    python bench/mt_followup_speed.py [--cases 8] [--size 640x480] [--seed 0]

Pins the process to one core (and OpenCV and numpy to one thread). Draws ``--cases`` synthetic scenes (every road
kind in turn, their own weather and light), writes them into a store as a *recording* (``source`` set to
``folder:bench``, no scene passed), so :func:`tools.mt.generate.generate_followup` takes the classical path
(horizon estimated from the pixels, edits anchored by the ego's speed) as it would for Udacity or A2D2 frames,
never the synthetic re-render. Then makes every case's follow-up under each of several "replaces" (weather,
light, road surface) and "adds" (road users, signals, signs, a marking) terms, after one untimed warm-up pass.

One call of ``generate_followup`` reads 10 PNG frames, edits them and writes 10 PNGs. The PNG work is timed
apart, inside the same calls (``cv2.imdecode``/``cv2.imencode`` and the store's ``get``/``put`` are wrapped
by this script only):

* ``edit``   : the call's time less PNG decoding, PNG encoding and the store's reads and writes (the target's
  figure: the edit itself);
* ``call``   : the whole call, PNGs and files included;
* ``png in`` : reading and decoding the 10 source frames; ``png out``: encoding and writing the 10 follow-ups;
* ``drawn``  : for "adds", the share of frames in which the object is in view (and so drawn).

Target: <= 50 ms per frame (edit). AutoMT's anchor: about 9 s per frame on a GPU (its diffusion models).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.common.artifacts import LocalArtifactStore
from tools.common.text import normalise_phrase
from tools.mt.generate import generate_followup
from tools.mt.models import CaseDescription, DrivingCase, PlannedMR
from tools.mt.synth.dataset import render_case, write_case
from tools.mt.synth.scene import ROAD_KINDS, sample_scene
from tools.mt.terms import RECIPES

TARGET_MS = 50.0
ANCHOR_MS = 9000.0

REPLACES = [
    "fog",
    "rain",
    "snowfall",
    "night driving darkness",
    "low lighting environment",
    "heavy smoke",
    "sun glare",
    "wet road",
]
ADDS = [
    "pedestrian",
    "child",
    "bicyclist",
    "stopped vehicle",
    "oncoming vehicle",
    "public transport bus",
    "red light",
    "maximum speed limit sign",
    "stop sign",
    "crosswalk marking",
]


@dataclass
class Clock:
    """Seconds spent in PNG decoding/encoding and in the store's file reads/writes, since the last reset."""

    png_in: float = 0.0
    png_out: float = 0.0
    files_in: float = 0.0
    files_out: float = 0.0

    def reset(self) -> None:
        self.png_in = self.png_out = self.files_in = self.files_out = 0.0


@dataclass
class Row:
    call: list[float] = field(default_factory=list)
    edit: list[float] = field(default_factory=list)
    png_in: list[float] = field(default_factory=list)
    png_out: list[float] = field(default_factory=list)
    drawn: list[float] = field(default_factory=list)


class TimedStore(LocalArtifactStore):
    """A local store that adds the time of its reads and writes to a clock."""

    def __init__(self, root: Path, clock: Clock) -> None:
        super().__init__(root)
        self.clock = clock

    def get(self, ref: str) -> bytes:
        t = time.perf_counter()
        try:
            return super().get(ref)
        finally:
            self.clock.files_in += time.perf_counter() - t

    def put(self, ref: str, data: bytes | str | Path) -> str:
        t = time.perf_counter()
        try:
            return super().put(ref, data)
        finally:
            self.clock.files_out += time.perf_counter() - t


def _timed(fn: Callable[..., Any], clock: Clock, attr: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            setattr(clock, attr, getattr(clock, attr) + time.perf_counter() - t)

    return wrapper


def plan(term: str) -> PlannedMR:
    recipe = RECIPES[normalise_phrase(term)]
    return PlannedMR(
        method="automt",
        gherkin=term,
        road_type="any roads",
        verb=recipe.verb,  # type: ignore[arg-type]
        manipulation=term,
        term=term,
        expected_behavior="slow down",
    )


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(0.95 * len(s)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=8, help="Source cases (10 frames each) per manipulation.")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import cv2

    cv2.setNumThreads(1)
    missing = [t for t in REPLACES + ADDS if not (rec := RECIPES.get(normalise_phrase(t))) or not rec.rendered]
    if missing:
        raise SystemExit(f"terms without a rendering: {missing}")

    clock = Clock()
    with tempfile.TemporaryDirectory(prefix="drivemt-followup-bench-") as tmp:
        store = TimedStore(Path(tmp), clock)
        cases: list[DrivingCase] = []
        for k in range(args.cases):
            spec = sample_scene(args.seed * 100003 + k, road=ROAD_KINDS[k % len(ROAD_KINDS)])  # type: ignore[arg-type]
            case = write_case(store, f"src{k}", render_case(spec, width=width, height=height), prefix="src")
            cases.append(case.model_copy(update={"source": "folder:bench", "metadata": None}))
        desc = CaseDescription(speed_kmh=30.0, steering_rad=0.0, describer="bench")
        orig_decode, orig_encode = cv2.imdecode, cv2.imencode
        cv2.imdecode = _timed(orig_decode, clock, "png_in")
        cv2.imencode = _timed(orig_encode, clock, "png_out")
        rows: dict[str, Row] = {}
        generators: set[str] = set()
        try:
            for rep in range(2):  # pass 0: warm-up (imports, sprites, caches), not counted
                for term in REPLACES + ADDS:
                    for k, case in enumerate(cases if rep else cases[:1]):
                        clock.reset()
                        t0 = time.perf_counter()
                        follow = generate_followup(
                            store,
                            case,
                            desc.model_copy(update={"speed_kmh": case.mean_speed_kmh}),
                            plan(term),
                            followup_id=f"f{rep}-{k}-{normalise_phrase(term).replace(' ', '_')}",
                            prefix="fol",
                            seed=k,
                        )
                        total = time.perf_counter() - t0
                        generators.add(follow.edit.generator)
                        if not rep:
                            continue
                        n = len(case.frames)
                        png_in = clock.png_in + clock.files_in
                        png_out = clock.png_out + clock.files_out
                        row = rows.setdefault(term, Row())
                        row.call.append(1000 * total / n)
                        row.edit.append(1000 * (total - png_in - png_out) / n)
                        row.png_in.append(1000 * png_in / n)
                        row.png_out.append(1000 * png_out / n)
                        if follow.edit.op == "add":
                            row.drawn.append(sum(b is not None for b in follow.edit.boxes) / n)
        finally:
            cv2.imdecode, cv2.imencode = orig_decode, orig_encode

    if generators != {"classical"}:
        raise SystemExit(f"expected the classical generator only, got {sorted(generators)}")
    print(
        f"classical follow-ups at {width}x{height}, one core, {args.cases} recorded cases x 10 frames per term "
        f"(generator: classical; ms per frame; edit = call less PNG decode/encode and file reads/writes)"
    )
    print(
        f"{'verb':8} {'term':26} {'kind':14} {'edit':>7} {'p95':>7} {'call':>7} {'png in':>7} {'png out':>7} {'drawn':>6}  target"
    )
    for group in (REPLACES, ADDS):
        for term in group:
            r = rows[term]
            recipe = RECIPES[normalise_phrase(term)]
            mean = statistics.fmean(r.edit)
            print(
                f"{recipe.verb:8} {term[:26]:26} {recipe.kind[:14]:14} {mean:7.1f} {p95(r.edit):7.1f} "
                f"{statistics.fmean(r.call):7.1f} {statistics.fmean(r.png_in):7.1f} {statistics.fmean(r.png_out):7.1f} "
                f"{(f'{statistics.fmean(r.drawn):.0%}' if r.drawn else '-'):>6}  <= {TARGET_MS:.0f} {'ok' if mean <= TARGET_MS else 'MISSED'}"
            )
    for label, terms in (("replaces", REPLACES), ("adds", ADDS), ("all", REPLACES + ADDS)):
        edit = [v for t in terms for v in rows[t].edit]
        call = [v for t in terms for v in rows[t].call]
        print(
            f"{label:8} mean edit {statistics.fmean(edit):6.1f} ms/frame, p95 {p95(edit):6.1f}; "
            f"whole call mean {statistics.fmean(call):6.1f}, p95 {p95(call):6.1f}  "
            f"(target <= {TARGET_MS:.0f} ms/frame on one core; AutoMT ~{ANCHOR_MS / 1000:.0f} s/frame on a GPU, "
            f"{ANCHOR_MS / statistics.fmean(edit):.0f}x slower)"
        )


if __name__ == "__main__":
    main()
