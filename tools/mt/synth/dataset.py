"""Synthetic driving cases with ground truth: render a scene's frames, drive it, write it, re-render it edited.

A dataset folder is an artefact store of its own (refs are relative to it)::

    manifest.json                 what each case contains, and each rule's share of cases
    cases/<case id>/frame_00.png  the frames (10 at 10 FPS)
    cases/<case id>/case.json     the DrivingCase: frame refs, ego speed and steering, metadata
    cases/<case id>/truth.json    the scene (the case's description) and every frame's truth (objects, boxes)

A follow-up of a synthetic case is :func:`render_case` of :func:`~tools.mt.synth.scene.apply_edit` of its
scene: the same world with one change, and the scripted driver's own reaction to it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from tools.common.artifacts import ArtifactStore, LocalArtifactStore
from tools.mt.models import CASE_FPS, CASE_FRAMES, FAULT_RULES, CaseMetadata, DrivingCase, EgoSample, FrameTruth
from tools.mt.synth.camera import Camera
from tools.mt.synth.driver import DriverState, drive
from tools.mt.synth.render import SceneRenderer
from tools.mt.synth.scene import SceneSpec, sample_scene

__all__ = [
    "MANIFEST_NAME",
    "RenderedCase",
    "SynthManifest",
    "SynthTruth",
    "load_truth",
    "render_case",
    "synth_dataset",
    "write_case",
]

MANIFEST_NAME = "manifest.json"
FORMAT = "drivemt-synth-driving"


@dataclass
class RenderedCase:
    """A scene drawn and driven."""

    spec: SceneSpec
    images: list[np.ndarray]
    states: list[DriverState]
    truths: list[FrameTruth]
    render_seconds: float = 0.0
    ignore: list[str] = field(default_factory=list)

    @property
    def ego(self) -> list[EgoSample]:
        """The driver's speed and steering per frame."""
        return [EgoSample(speed_kmh=round(s.speed_kmh, 3), steering_rad=round(s.steering_rad, 5)) for s in self.states]

    @property
    def triggers(self) -> set[str]:
        """Rules whose condition is in view in some frame."""
        out: set[str] = set()
        for s in self.states:
            out |= s.triggers
        return out

    def metadata(self) -> CaseMetadata:
        """What the scene states: time, weather, road type, the kinds of objects in view."""
        kinds = sorted({o.kind for t in self.truths for o in t.objects})
        return CaseMetadata(
            time=self.spec.time, weather=self.spec.weather, road_type=self.spec.road_type, objects=kinds
        )


class SynthTruth(BaseModel):
    """A synthetic case's whole truth (``truth.json``)."""

    spec: SceneSpec
    frames: list[FrameTruth]
    ignore: list[str] = Field(default_factory=list)
    triggers: list[str] = Field(default_factory=list)
    binding: list[str] = Field(default_factory=list, description="The rule that set the driver's target, per frame.")


class SynthCaseEntry(BaseModel):
    """One case in the manifest."""

    case_id: str
    road: str
    road_type: str
    time: str
    weather: str
    triggers: list[str]
    objects: list[str]


class SynthManifest(BaseModel):
    """What a synthetic dataset holds."""

    format: str = FORMAT
    version: int = 1
    seed: int
    width: int
    height: int
    frames: int = CASE_FRAMES
    fps: float = CASE_FPS
    ignore: list[str] = Field(default_factory=list)
    cases: list[SynthCaseEntry] = Field(default_factory=list)
    shares: dict[str, float] = Field(default_factory=dict, description="Rule -> share of cases with its trigger.")
    seconds: float = 0.0
    frames_per_second: float = Field(default=0.0, description="Frames drawn per second (writing excluded).")


def render_case(
    spec: SceneSpec,
    *,
    width: int = 640,
    height: int = 320,
    frames: int = CASE_FRAMES,
    fps: float = CASE_FPS,
    ignore: Iterable[str] = (),
    along: Sequence[float] | None = None,
) -> RenderedCase:
    """Draw a scene's frames and drive it.

    Args:
        along: Where (metres travelled) to draw each frame, for a follow-up seen along its source's path, so
            that its frames show the edit and not the reaction to it; the driver's own path when None. The
            states (speed, steering) are the driver's reaction either way.
    """
    ignore = sorted(set(ignore))
    cam = Camera(width, height)
    states = drive(spec, frames=frames, fps=fps, ignore=ignore, camera=cam)
    if along is not None and len(along) != len(states):
        raise ValueError(f"along has {len(along)} positions for {len(states)} frames")
    t0 = time.perf_counter()
    renderer = SceneRenderer(spec, width=width, height=height)
    images, truths = [], []
    for i, st in enumerate(states):
        img, boxes = renderer.frame(st.t, st.s if along is None else along[i], i)
        images.append(img)
        truths.append(
            FrameTruth(
                road_type=spec.road_type,
                time=spec.time,
                weather=spec.weather,
                objects=boxes,
                speed_kmh=round(st.speed_kmh, 3),
                steering_rad=round(st.steering_rad, 5),
            )
        )
    return RenderedCase(spec, images, states, truths, time.perf_counter() - t0, ignore)


def write_case(
    store: ArtifactStore,
    case_id: str,
    rendered: RenderedCase,
    *,
    prefix: str = "cases",
    region: str | None = None,
    source: str = "synthetic",
) -> DrivingCase:
    """Write a rendered case into ``store`` under ``<prefix>/<case id>/`` and return it (refs into the store)."""
    import cv2

    folder = store.ref(prefix, case_id)
    refs = []
    for i, img in enumerate(rendered.images):
        ok, buf = cv2.imencode(".png", np.ascontiguousarray(img[:, :, ::-1]), [cv2.IMWRITE_PNG_COMPRESSION, 1])
        if not ok:  # pragma: no cover - OpenCV encodes any uint8 image
            raise RuntimeError(f"could not encode frame {i} of {case_id}")
        refs.append(store.put(f"{folder}/frame_{i:02d}.png", buf.tobytes()))
    case = DrivingCase(
        case_id=case_id,
        source=source,
        frames=refs,
        ego=rendered.ego,
        fps=CASE_FPS,
        metadata=rendered.metadata(),
        region=region,
    )
    truth = SynthTruth(
        spec=rendered.spec,
        frames=rendered.truths,
        ignore=rendered.ignore,
        triggers=sorted(rendered.triggers),
        binding=[s.binding for s in rendered.states],
    )
    store.put(f"{folder}/case.json", case.model_dump_json(indent=1))
    store.put(f"{folder}/truth.json", truth.model_dump_json())
    return case


def load_truth(store: ArtifactStore, case: DrivingCase) -> SynthTruth | None:
    """The truth of a synthetic case (None for a case that has none)."""
    folder = case.frames[0].rsplit("/", 1)[0]
    ref = f"{folder}/truth.json"
    try:
        if not store.exists(ref):
            return None
    except OSError:  # a frame name too long for the file system: no truth (reading its frames fails with the reason)
        return None
    return SynthTruth.model_validate_json(store.get(ref))


def synth_dataset(
    out: Path,
    *,
    cases: int,
    seed: int = 0,
    width: int = 640,
    height: int = 320,
    ignore: Sequence[str] = (),
    roads: Sequence[str] | None = None,
    focus: Sequence[str] = (),
    focus_share: float = 0.5,
    progress: Callable[[int, int], None] | None = None,
) -> SynthManifest:
    """Draw ``cases`` synthetic cases into ``out`` (a folder) and write its manifest.

    By default case k shows the trigger of rule ``k mod 10`` (each rule in a tenth of the cases, more with
    the triggers the sampler adds at random). With ``focus``, a ``focus_share`` of the cases shows one of those
    rules' triggers instead, and every scene is plain (no random weather, night or road users on the ego's
    path: ``sample_scene(plain=True)``): data in which one rule's situations stand out, to train a model that
    obeys or ignores it.

    Args:
        out: The dataset folder (created).
        cases: How many cases.
        seed: Seed of the whole set; case k uses scene seed ``seed * 100003 + k``.
        width: Frame width.
        height: Frame height.
        ignore: Rules the driver ignores (a faulty driver): see ``tools.mt.models.FAULT_RULES``.
        roads: Only these road kinds (all eight when None), in turn.
        focus: Rules whose triggers a ``focus_share`` of the cases show.
        focus_share: The share of focused cases (0..1).
        progress: Called with (cases done, cases).

    Raises:
        ValueError: For an unknown rule, a size too small to draw, or no cases.
    """
    unknown = (set(ignore) | set(focus)) - set(FAULT_RULES)
    if unknown:
        raise ValueError(f"unknown rule(s): {sorted(unknown)}; known: {', '.join(FAULT_RULES)}")
    if not 0.0 <= focus_share <= 1.0:
        raise ValueError(f"focus_share {focus_share} is not between 0 and 1")
    if cases < 1:
        raise ValueError("at least one case")
    if width < 64 or height < 32:
        raise ValueError(f"frames of {width}x{height} are too small to draw a road scene (at least 64x32)")
    store = LocalArtifactStore(out)
    manifest = SynthManifest(seed=seed, width=width, height=height, ignore=sorted(set(ignore)))
    counts: Counter[str] = Counter()
    started = time.perf_counter()
    drawing = 0.0
    for k in range(cases):
        road = roads[k % len(roads)] if roads else None
        scene_seed = seed * 100003 + k
        if focus:
            chosen = (k * 0.6180339887 + seed * 0.31) % 1.0 < focus_share  # evenly spread, deterministic
            focus_rule: str | None = focus[k % len(focus)] if chosen else None
        else:
            focus_rule = FAULT_RULES[(k + seed) % len(FAULT_RULES)]
        spec = sample_scene(scene_seed, road=road, focus=focus_rule, plain=bool(focus))  # type: ignore[arg-type]
        rendered = render_case(spec, width=width, height=height, ignore=ignore)
        drawing += rendered.render_seconds
        case_id = f"syn-{seed}-{k:05d}"
        write_case(store, case_id, rendered)
        triggers = sorted(rendered.triggers)
        counts.update(triggers)
        manifest.cases.append(
            SynthCaseEntry(
                case_id=case_id,
                road=spec.road,
                road_type=spec.road_type,
                time=spec.time,
                weather=spec.weather,
                triggers=triggers,
                objects=sorted({o.kind for o in spec.objects}),
            )
        )
        if progress is not None:
            progress(k + 1, cases)
    manifest.shares = {rule: round(counts[rule] / cases, 4) for rule in FAULT_RULES}
    manifest.seconds = round(time.perf_counter() - started, 3)
    manifest.frames_per_second = round(cases * CASE_FRAMES / drawing, 1) if drawing else 0.0
    store.put(MANIFEST_NAME, manifest.model_dump_json(indent=1))
    return manifest
