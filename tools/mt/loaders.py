"""Driving recordings into test cases: Udacity challenge 2, A2D2, plain folders and drivemt's synthetic sets.

Every loader normalises to drivemt's convention: speed in km/h, steering as the steering-wheel angle in
radians, **positive to the left**, and frames at (about) 10 FPS, AutoMT's rate; a long recording is cut into
cases of ``length`` frames every ``stride`` frames. A bad file (a missing or unreadable frame, a frame of
another size, a recording without ego data) is a :class:`LoadProblem` naming the file; the cases it spoils are
left out and the rest of the folder is still loaded.

Units and signs, with their sources:

* **Udacity** (``interpolated.csv`` of rwightman/udacity-driving-reader, the challenge 2 tool): columns
  ``index,timestamp,width,height,frame_id,filename,angle,torque,speed,lat,long,alt``; ``timestamp`` in
  nanoseconds; ``frame_id`` ``center_camera`` for the centre camera; ``angle`` is the Dataspeed
  ``SteeringReport.steering_wheel_angle`` ("rad") and ``speed`` its ``speed`` ("m/s", so km/h = 3.6 x).
  Positive angles turn left: the driver computes yaw rate as ``speed * tan(angle / ratio) / wheelbase`` and
  ROS (REP 103) makes positive yaw counter-clockwise. The cameras run at 20 Hz, so every 2nd frame is kept.
* **A2D2** (Audi; ``<date>_bus_signals.json`` and ``camera/cam_front_center/*.png`` with a ``.json`` per
  frame): each signal is ``{"unit", "values": [[timestamp_us, value], ...]}``; ``vehicle_speed`` is in
  ``Unit_KiloMeterPerHour``; ``steering_angle_calculated`` is the steering-wheel angle in
  ``Unit_DegreOfArc`` (a magnitude; 614.10 and 614.25 mean "initialising" and "error") and
  ``steering_angle_calculated_sign`` is 0 for left/positive, 1 for right/negative (the schema and FAQ of
  ros-box/a2d2_to_ros). Frame times are each frame's ``cam_tstamp`` (microseconds, the bus's clock); signals
  are interpolated to them. The cameras run at 30 Hz, so every 3rd frame is kept.
* **A plain folder**: ``frames/*.png|jpg`` and ``ego.csv`` with ``frame,speed_kmh,steering_rad`` (or
  ``speed_mps`` / ``steering_deg``), already in drivemt's units; optional ``metadata.json`` (time, weather,
  road type, objects) applies to every case of the folder. A folder of such folders is read folder by folder.
"""

from __future__ import annotations

import bisect
import csv
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tools.common.artifacts import ArtifactStore
from tools.errors import BadInputError
from tools.mt.models import CASE_FPS, CASE_FRAMES, CaseMetadata, DrivingCase, EgoSample
from tools.mt.roads import canonical_road_type

__all__ = [
    "CASE_FORMATS",
    "LoadProblem",
    "LoadResult",
    "RawCase",
    "detect_format",
    "import_cases",
    "load_cases",
]

CASE_FORMATS = ("synthetic", "udacity", "a2d2", "folder")
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg"}
_A2D2_SENTINELS = (614.10, 614.25)


class NoCasesError(BadInputError):
    """A path that holds no driving recording drivemt can read."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


@dataclass
class LoadProblem:
    """A file that could not be used, and why (its cases are left out)."""

    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


@dataclass
class RawCase:
    """A case as read from disk: local frame files, not yet in an artefact store."""

    case_id: str
    source: str
    frame_paths: list[Path]
    ego: list[EgoSample]
    fps: float = CASE_FPS
    metadata: CaseMetadata | None = None
    region: str | None = None
    stored: DrivingCase | None = None
    """For drivemt's own datasets: the case as stored, with refs relative to its folder."""
    extra_files: dict[str, Path] = field(default_factory=dict)
    """Files that travel with the case (a synthetic case's ``truth.json``), by name."""


@dataclass
class LoadResult:
    """What a path came to."""

    format: str
    cases: list[RawCase] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)


def detect_format(path: Path) -> str:
    """Which format a path holds.

    Raises:
        NoCasesError: If it matches none.
    """
    if not path.exists():
        raise NoCasesError(path, "no such file or folder")
    if path.is_file():
        if path.name == "interpolated.csv":
            return "udacity"
        if path.name.endswith("bus_signals.json"):
            return "a2d2"
        raise NoCasesError(path, "not a recording: give a folder, interpolated.csv or *_bus_signals.json")
    manifest = path / "manifest.json"
    if manifest.is_file():
        try:
            if json.loads(manifest.read_text(encoding="utf-8")).get("format") == "drivemt-synth-driving":
                return "synthetic"
        except (OSError, ValueError, AttributeError):
            pass
    if (path / "interpolated.csv").is_file():
        return "udacity"
    if list(path.glob("*bus_signals.json")) or list(path.glob("bus/*bus_signals.json")):
        return "a2d2"
    if (path / "ego.csv").is_file() or (path / "frames").is_dir():
        return "folder"
    if any((sub / "ego.csv").is_file() or (sub / "frames").is_dir() for sub in path.iterdir() if sub.is_dir()):
        return "folder"
    raise NoCasesError(
        path,
        "no driving recording found: expected drivemt's manifest.json, Udacity's interpolated.csv, A2D2's "
        "*_bus_signals.json, or frames/ with ego.csv",
    )


def load_cases(
    path: Path,
    *,
    format: str | None = None,
    length: int = CASE_FRAMES,
    stride: int = CASE_FRAMES,
    region: str | None = None,
    check_images: bool = True,
) -> LoadResult:
    """Read the driving cases under ``path``.

    Args:
        path: A folder (or Udacity's ``interpolated.csv``, or an A2D2 ``*_bus_signals.json``).
        format: One of :data:`CASE_FORMATS`; detected when None.
        length: Frames per case.
        stride: Frames between the starts of consecutive cases of a long recording.
        region: The ontology region whose MRs apply to these cases.
        check_images: Open every frame's header to check that it is an image of the recording's size.

    Raises:
        NoCasesError: If the path holds no recording.
    """
    fmt = format or detect_format(path)
    if fmt not in CASE_FORMATS:
        raise NoCasesError(path, f"unknown format {fmt!r}; use {', '.join(CASE_FORMATS)}")
    if length < 1 or stride < 1:
        raise ValueError("length and stride must be positive")
    if fmt == "synthetic":
        result = _load_synthetic(path)
    elif fmt == "udacity":
        result = _load_udacity(path, length, stride)
    elif fmt == "a2d2":
        result = _load_a2d2(path, length, stride)
    else:
        result = _load_folders(path, length, stride)
    for case in result.cases:
        case.region = case.region or region
    if check_images:
        _check_images(result)
    return result


# -- checks ---------------------------------------------------------------------------------------------
def _image_size(path: Path) -> tuple[int, int]:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return im.size
    except FileNotFoundError as exc:
        raise BadInputError("missing frame") from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise BadInputError(f"not an image ({type(exc).__name__})") from exc


def _check_images(result: LoadResult) -> None:
    """Drop the cases with a missing, unreadable or differently sized frame; name each file."""
    sizes: dict[Path, tuple[int, int] | str] = {}
    kept = []
    for case in result.cases:
        bad = None
        case_sizes = set()
        for p in case.frame_paths:
            if p not in sizes:
                try:
                    sizes[p] = _image_size(p)
                except BadInputError as exc:
                    sizes[p] = str(exc)
                    result.problems.append(LoadProblem(str(p), str(exc)))
            size = sizes[p]
            if isinstance(size, str):
                bad = size
                break
            case_sizes.add(size)
        if bad is None and len(case_sizes) > 1:
            odd = [p for p in case.frame_paths if sizes[p] != sizes[case.frame_paths[0]]]
            result.problems.append(
                LoadProblem(str(odd[0]), f"frame of size {sizes[odd[0]]} among frames of {sizes[case.frame_paths[0]]}")
            )
            bad = "sizes differ"
        if bad is None:
            kept.append(case)
    result.cases = kept


def _windows(n: int, length: int, stride: int) -> list[range]:
    return [range(i, i + length) for i in range(0, n - length + 1, stride)]


def _subsample(times: list[float], target_fps: float = CASE_FPS) -> int:
    """Every how many frames to keep for about ``target_fps`` (1 when the recording is slower)."""
    if len(times) < 2:
        return 1
    gaps = sorted(b - a for a, b in itertools.pairwise(times) if b > a)
    if not gaps:
        return 1
    median = gaps[len(gaps) // 2]
    return max(1, round((1.0 / target_fps) / median))


# -- drivemt's synthetic sets ------------------------------------------------------------------------------
def _load_synthetic(path: Path) -> LoadResult:
    result = LoadResult("synthetic")
    for case_file in sorted(path.glob("cases/*/case.json")):
        try:
            case = DrivingCase.model_validate_json(case_file.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError) as exc:
            result.problems.append(LoadProblem(str(case_file), f"not a drivemt case: {str(exc)[:200]}"))
            continue
        result.cases.append(
            RawCase(
                case_id=case.case_id,
                source=case.source,
                frame_paths=[path / ref for ref in case.frames],
                ego=case.ego,
                fps=case.fps,
                metadata=case.metadata,
                region=case.region,
                stored=case,
                extra_files={"truth.json": case_file.parent / "truth.json"}
                if (case_file.parent / "truth.json").is_file()
                else {},
            )
        )
    if not result.cases and not result.problems:
        raise NoCasesError(path, "the manifest lists no case folder with case.json")
    return result


# -- Udacity ------------------------------------------------------------------------------------------------
def _load_udacity(path: Path, length: int, stride: int) -> LoadResult:
    csv_path = path if path.is_file() else path / "interpolated.csv"
    root = csv_path.parent
    result = LoadResult("udacity")
    rows: list[tuple[int, Path, float, float]] = []
    try:
        with csv_path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            need = {"timestamp", "frame_id", "filename", "angle", "speed"}
            missing = need - set(reader.fieldnames or [])
            if missing:
                raise NoCasesError(csv_path, f"not Udacity's interpolated.csv: no column(s) {sorted(missing)}")
            for n, row in enumerate(reader, start=2):
                if row["frame_id"] != "center_camera":
                    continue
                try:
                    ts = int(row["timestamp"]) if row["timestamp"].isdigit() else int(float(row["timestamp"]))
                    angle = float(row["angle"])  # steering-wheel angle, rad, positive left
                    speed = float(row["speed"]) * 3.6  # m/s -> km/h
                except ValueError:
                    result.problems.append(LoadProblem(f"{csv_path}:{n}", "unreadable number in angle/speed/timestamp"))
                    continue
                if not (math.isfinite(angle) and math.isfinite(speed)) or speed < 0:
                    result.problems.append(LoadProblem(f"{csv_path}:{n}", "no valid ego data (NaN or negative speed)"))
                    continue
                rows.append((ts, root / row["filename"], speed, angle))
    except (OSError, UnicodeDecodeError) as exc:
        raise NoCasesError(csv_path, f"cannot read: {exc}") from exc
    if not rows:
        raise NoCasesError(csv_path, "no center_camera rows with ego data")
    rows.sort()
    step = _subsample([r[0] / 1e9 for r in rows])
    kept = rows[::step]
    fps = round(1.0 / (((kept[-1][0] - kept[0][0]) / 1e9) / max(1, len(kept) - 1)), 2) if len(kept) > 1 else CASE_FPS
    for w in _windows(len(kept), length, stride):
        frames = [kept[i] for i in w]
        result.cases.append(
            RawCase(
                case_id=f"udacity-{frames[0][0]}",
                source=f"udacity:{csv_path.name}",
                frame_paths=[f[1] for f in frames],
                ego=[EgoSample(speed_kmh=f[2], steering_rad=f[3]) for f in frames],
                fps=fps,
            )
        )
    return result


# -- A2D2 ----------------------------------------------------------------------------------------------------
def _signal(bus: dict[str, object], name: str, file: Path) -> list[tuple[int, float]]:
    entry = bus.get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("values"), list):
        raise NoCasesError(file, f"no {name!r} signal with 'values'")
    out = []
    for item in entry["values"]:
        if isinstance(item, list | tuple) and len(item) == 2:
            try:
                out.append((int(item[0]), float(item[1])))
            except (TypeError, ValueError):
                continue
    out.sort()
    return out


def _interp(series: list[tuple[int, float]], t: int) -> float | None:
    """Linear interpolation at ``t`` (None outside the series)."""
    times = [s[0] for s in series]
    i = bisect.bisect_left(times, t)
    if i < len(series) and times[i] == t:
        return series[i][1]
    if i == 0 or i == len(series):
        return None
    (t0, v0), (t1, v1) = series[i - 1], series[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def _nearest(series: list[tuple[int, float]], t: int) -> float | None:
    times = [s[0] for s in series]
    i = bisect.bisect_left(times, t)
    best = [j for j in (i - 1, i) if 0 <= j < len(series)]
    if not best:
        return None
    return series[min(best, key=lambda j: abs(times[j] - t))][1]


def _load_a2d2(path: Path, length: int, stride: int) -> LoadResult:
    if path.is_file():
        bus_file, root = path, path.parent.parent if path.parent.name == "bus" else path.parent
    else:
        found = sorted(path.glob("*bus_signals.json")) or sorted(path.glob("bus/*bus_signals.json"))
        bus_file, root = found[0], path
    result = LoadResult("a2d2")
    try:
        bus = json.loads(bus_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NoCasesError(bus_file, f"not readable JSON: {exc}") from exc
    if not isinstance(bus, dict):
        raise NoCasesError(bus_file, "expected a JSON object of signals")
    speed = _signal(bus, "vehicle_speed", bus_file)  # km/h
    angle = [(t, v) for t, v in _signal(bus, "steering_angle_calculated", bus_file) if v not in _A2D2_SENTINELS]
    sign = _signal(bus, "steering_angle_calculated_sign", bus_file)  # 0 left/positive, 1 right/negative
    cam_dir = root / "camera" / "cam_front_center"
    if not cam_dir.is_dir():
        raise NoCasesError(root, "no camera/cam_front_center folder beside the bus signals")
    frames: list[tuple[int, Path, float, float]] = []
    for png in sorted(cam_dir.glob("*.png")):
        meta = png.with_suffix(".json")
        try:
            stamp = int(json.loads(meta.read_text(encoding="utf-8"))["cam_tstamp"])
        except (OSError, ValueError, KeyError, TypeError):
            result.problems.append(LoadProblem(str(meta), "no frame time (cam_tstamp) for this frame"))
            continue
        v = _interp(speed, stamp)
        a = _interp(angle, stamp)
        s = _nearest(sign, stamp)
        if v is None or a is None or s is None:
            result.problems.append(LoadProblem(str(png), "no ego data at this frame's time (outside the bus signals)"))
            continue
        steering = math.radians(a) * (1.0 if s < 0.5 else -1.0)
        frames.append((stamp, png, v, steering))
    if not frames:
        raise NoCasesError(root, "no front-centre frame with ego data")
    frames.sort()
    step = _subsample([f[0] / 1e6 for f in frames])
    kept = frames[::step]
    fps = round(1.0 / (((kept[-1][0] - kept[0][0]) / 1e6) / max(1, len(kept) - 1)), 2) if len(kept) > 1 else CASE_FPS
    for w in _windows(len(kept), length, stride):
        sel = [kept[i] for i in w]
        result.cases.append(
            RawCase(
                case_id=f"a2d2-{sel[0][0]}",
                source=f"a2d2:{bus_file.name}",
                frame_paths=[f[1] for f in sel],
                ego=[EgoSample(speed_kmh=f[2], steering_rad=f[3]) for f in sel],
                fps=fps,
            )
        )
    return result


# -- plain folders ---------------------------------------------------------------------------------------------
def _load_folders(path: Path, length: int, stride: int) -> LoadResult:
    result = LoadResult("folder")
    folders = (
        [path]
        if (path / "ego.csv").is_file() or (path / "frames").is_dir()
        else sorted(p for p in path.iterdir() if p.is_dir())
    )
    for folder in folders:
        try:
            _load_folder(folder, length, stride, result)
        except NoCasesError as exc:
            result.problems.append(LoadProblem(str(exc.path), exc.reason))
    if not result.cases and not result.problems:
        raise NoCasesError(path, "no folder with frames/ and ego.csv")
    return result


def _load_folder(folder: Path, length: int, stride: int, result: LoadResult) -> None:
    ego_csv = folder / "ego.csv"
    frames_dir = folder / "frames"
    if not frames_dir.is_dir():
        raise NoCasesError(folder, "no frames/ folder")
    if not ego_csv.is_file():
        raise NoCasesError(ego_csv, "no ego data: expected ego.csv with frame,speed_kmh,steering_rad")
    metadata = None
    meta_file = folder / "metadata.json"
    if meta_file.is_file():
        try:
            raw = json.loads(meta_file.read_text(encoding="utf-8"))
            if isinstance(raw, dict) and raw.get("road_type"):
                raw["road_type"] = canonical_road_type(str(raw["road_type"])) or raw["road_type"]
            metadata = CaseMetadata.model_validate(raw)
        except (OSError, ValueError) as exc:
            result.problems.append(LoadProblem(str(meta_file), f"metadata ignored: {str(exc)[:200]}"))
    rows: list[tuple[Path, EgoSample]] = []
    with ego_csv.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        cols = set(reader.fieldnames or [])
        if (
            "frame" not in cols
            or not ({"speed_kmh", "speed_mps"} & cols)
            or not ({"steering_rad", "steering_deg"} & cols)
        ):
            raise NoCasesError(
                ego_csv, "expected columns frame, speed_kmh (or speed_mps), steering_rad (or steering_deg)"
            )
        for n, row in enumerate(reader, start=2):
            try:
                speed = (
                    float(row["speed_kmh"]) if row.get("speed_kmh") not in (None, "") else float(row["speed_mps"]) * 3.6
                )
                steer = (
                    float(row["steering_rad"])
                    if row.get("steering_rad") not in (None, "")
                    else math.radians(float(row["steering_deg"]))
                )
                ego = EgoSample(speed_kmh=speed, steering_rad=steer)
            except (ValueError, TypeError, KeyError, ValidationError):
                result.problems.append(LoadProblem(f"{ego_csv}:{n}", "no valid speed or steering on this row"))
                continue
            frame = frames_dir / row["frame"]
            if frame.suffix.lower() not in _IMAGE_SUFFIXES:
                result.problems.append(LoadProblem(str(frame), "not an image file (.png, .jpg)"))
                continue
            rows.append((frame, ego))
    listed = {r[0].name for r in rows}
    for extra in sorted(frames_dir.iterdir()):
        if extra.is_file() and extra.name not in listed and extra.suffix.lower() not in _IMAGE_SUFFIXES:
            result.problems.append(LoadProblem(str(extra), "not an image file (.png, .jpg); ignored"))
    if not rows:
        raise NoCasesError(ego_csv, "no usable rows")
    for w in _windows(len(rows), length, stride):
        sel = [rows[i] for i in w]
        result.cases.append(
            RawCase(
                case_id=f"{folder.name}-{w.start:05d}",
                source=f"folder:{folder.name}",
                frame_paths=[f for f, _ in sel],
                ego=[e for _, e in sel],
                metadata=metadata,
            )
        )


# -- into a store ------------------------------------------------------------------------------------------------
def import_cases(store: ArtifactStore, cases: list[RawCase], *, prefix: str) -> list[DrivingCase]:
    """Put the cases' frames into ``store`` under ``<prefix>/<case id>/`` and return the cases with refs."""
    out = []
    for case in cases:
        folder = store.ref(prefix, case.case_id.replace("#", "_").replace(":", "_"))
        refs = [store.put(f"{folder}/frame_{i:02d}{p.suffix.lower()}", p) for i, p in enumerate(case.frame_paths)]
        for name, extra in case.extra_files.items():
            store.put(f"{folder}/{name}", extra)
        out.append(
            DrivingCase(
                case_id=case.case_id,
                source=case.source,
                frames=refs,
                ego=case.ego,
                fps=case.fps,
                metadata=case.metadata,
                region=case.region,
            )
        )
    return out
