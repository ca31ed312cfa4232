"""Follow-up cases: a source case edited by one MR, classically on the CPU or by re-rendering a synthetic scene.

* A **synthetic** case whose MR the synthetic world can draw is re-rendered from its scene plus the edit, along
  the source's path (the frames show the edit, not a reaction to it), so the follow-up has ground truth: where
  the edit is in every frame, and the scripted driver's own reaction.
* Any other case is edited classically: "replaces" terms change the weather, the light or the road over all
  10 frames with one seed; "adds" terms place an object where it belongs (on the road ahead, at the roadside,
  crossing, oncoming), scale it by perspective, light and shade it, and keep it anchored in the world as the
  ego drives (from the case's own speed data), standing in for AutoMT's video model.
* With the diffusers generator configured (:mod:`tools.mt.diffusion`), every case is edited by AutoMT's kind of
  models instead: InstructPix2Pix for "replaces", FLUX.1-Fill or SD inpainting for "adds".

The generator records what it did (:class:`~tools.mt.models.EditRecord`); the validity checks never read it.
"""

from __future__ import annotations

import dataclasses
import random
import time

import numpy as np

from tools.common.artifacts import ArtifactStore
from tools.errors import BadInputError
from tools.mt.diffusion import DiffusionGenerator, paste_patch
from tools.mt.edit.environment import apply_environment
from tools.mt.edit.infra import draw_marking, draw_sign
from tools.mt.edit.objects import draw_parts
from tools.mt.edit.stage import Placement, Stage, estimate_horizon, travelled
from tools.mt.models import CaseDescription, DrivingCase, EditRecord, FollowUp, PlannedMR
from tools.mt.synth.camera import Camera
from tools.mt.synth.dataset import SynthTruth, render_case, write_case
from tools.mt.synth.driver import drive, visibility_m
from tools.mt.synth.scene import AddObject, SceneEdit, SetTime, SetWeather, apply_edit
from tools.mt.terms import OBJECTS, Recipe, place_from_phrase, recipe_for_phrase

__all__ = ["NULL_TERM", "UnrenderableError", "generate_followup", "null_plan", "read_frames"]

NULL_TERM = "null:distant object off the road"
_SYNTH_HORIZON = 0.42


class UnrenderableError(BadInputError):
    """An MR whose manipulation drivemt cannot draw, or a case whose frames cannot be edited."""

    def __init__(self, what: str, reason: str) -> None:
        self.what = what
        self.reason = reason
        super().__init__(f"cannot render {what!r}: {reason}")


MIN_FRAME_SIDE = 8
"""Fewest pixels a frame may have on either side (a strip of one pixel cannot be described, edited or judged)."""


def read_frames(store: ArtifactStore, case: DrivingCase) -> list[np.ndarray]:
    """A case's frames as RGB arrays.

    Raises:
        UnrenderableError: When a frame is missing, not an image, or smaller than ``MIN_FRAME_SIDE``.
    """
    import cv2

    frames = []
    for ref in case.frames:
        try:
            data = np.frombuffer(store.get(ref), np.uint8)
        except (FileNotFoundError, OSError) as exc:
            raise UnrenderableError(case.case_id, f"frame {ref} cannot be read: {exc}") from exc
        img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
        if img is None:
            raise UnrenderableError(case.case_id, f"frame {ref} is not an image")
        h, w = img.shape[:2]
        if min(h, w) < MIN_FRAME_SIDE:
            raise UnrenderableError(
                case.case_id,
                f"frame {ref} is {w}x{h} pixels: a driving frame needs at least {MIN_FRAME_SIDE} on each side",
            )
        frames.append(np.ascontiguousarray(img[:, :, ::-1]))
    if len({f.shape for f in frames}) > 1:
        raise UnrenderableError(case.case_id, "its frames differ in size")
    return frames


def null_plan(case: DrivingCase) -> PlannedMR:
    """The behaviour-neutral MR of the ``null`` method: a distant, stationary object off the road."""
    return PlannedMR(
        method="null",
        gherkin=(
            "Given the ego-vehicle approaches to any roads, When drivemt adds a distant parked vehicle off the road, "
            "Then ego-vehicle should keep current"
        ),
        road_type="any roads",
        verb="adds",
        manipulation="a distant parked vehicle off the road",
        term=NULL_TERM,
        expected_behavior="keep current",
    )


def _placement(recipe: Recipe, place: str, rng: random.Random, *, null: bool = False) -> Placement:
    w, h = recipe.size_m() if recipe.family != "marking" else (3.5, 0.0)
    if null:
        return Placement(
            ahead_m=rng.uniform(45.0, 60.0),
            lateral_m=rng.choice([-1, 1]) * rng.uniform(9.0, 12.0),
            width_m=w,
            height_m=h,
        )
    if place == "roadside":
        return Placement(ahead_m=rng.uniform(14.0, 24.0), lateral_m=rng.uniform(3.0, 3.8), width_m=w, height_m=h)
    if place == "crossing":
        start = rng.choice([-1, 1])
        return Placement(
            ahead_m=rng.uniform(13.0, 22.0),
            lateral_m=start * rng.uniform(2.2, 3.2),
            width_m=w,
            height_m=h,
            lateral_speed_mps=-start * rng.uniform(0.9, 1.4),
        )
    if place == "oncoming":
        return Placement(
            ahead_m=rng.uniform(25.0, 40.0), lateral_m=-3.5, width_m=w, height_m=h, speed_mps=-rng.uniform(5.0, 10.0)
        )
    if place == "overhead":
        return Placement(ahead_m=rng.uniform(30.0, 40.0), lateral_m=0.0, width_m=w, height_m=h)
    return Placement(ahead_m=rng.uniform(14.0, 24.0), lateral_m=0.0, width_m=w, height_m=h)


def _light(frame: np.ndarray, box: tuple[float, float, float, float]) -> float:
    """How bright the scene is where an object stands, relative to a daylit street."""
    h, w = frame.shape[:2]
    x1, y1, x2, y2 = (round(v) for v in box)
    x1, x2 = max(0, x1 - (x2 - x1)), min(w, x2 + (x2 - x1))
    y1, y2 = max(0, y1), min(h, y2 + 2)
    region = frame[y1:y2, x1:x2] if y2 > y1 and x2 > x1 else frame
    return float(np.clip(region.mean() / 125.0, 0.55, 1.15))  # at night, the ego's headlights light it


def _synth_edit(recipe: Recipe, place: str, rng: random.Random, plan: PlannedMR) -> SceneEdit | None:
    if recipe.synth is None:
        return None
    op, kind, state = recipe.synth
    if op == "weather":
        return SetWeather(weather=kind, strength=0.85)  # type: ignore[arg-type]
    if op == "time":
        return SetTime(time=kind)  # type: ignore[arg-type]
    synth_place = {"ahead": "ahead", "roadside": "roadside", "crossing": "crossing", "oncoming": "oncoming"}.get(
        place, "roadside"
    )
    if state in ("oncoming", "crossing"):
        synth_place, state = state, None
    if kind == "speed_sign" and plan.limit_kmh is not None:
        state = str(int(plan.limit_kmh))
    return AddObject(kind=kind, place=synth_place, distance_m=rng.uniform(14.0, 24.0), state=state)  # type: ignore[arg-type]


def _expected_from_scene(source_ego: list[float], follow_ego: list[float]) -> str:
    """The scripted driver's reaction: slower over the case by more than 2 km/h is "slow down"."""
    drop = sum(source_ego) / len(source_ego) - sum(follow_ego) / len(follow_ego)
    return "slow down" if drop > 2.0 else "keep current"


def generate_followup(
    store: ArtifactStore,
    case: DrivingCase,
    description: CaseDescription,
    plan: PlannedMR,
    *,
    followup_id: str,
    prefix: str,
    seed: int,
    truth: SynthTruth | None = None,
    strength: float = 0.85,
    diffusion: DiffusionGenerator | None = None,
) -> FollowUp:
    """Make the follow-up of ``case`` under ``plan`` and write its frames into ``store`` under ``<prefix>/<id>/``.

    With ``diffusion``, the frames are drawn by its models (every case, synthetic ones too, which then carry no
    scripted reaction); without it, synthetic scenes are re-rendered and other cases edited classically.

    Raises:
        UnrenderableError: If the MR's manipulation cannot be drawn or the case's frames cannot be edited.
        DiffusersUnavailableError: If ``diffusion`` cannot run (no model for the verb, a broken folder, a CPU).
    """
    started = time.perf_counter()
    rng = random.Random(f"{seed}:{case.case_id}:{plan.term}")
    null = plan.method == "null"
    recipe = OBJECTS_CAR_RECIPE if null else recipe_for_phrase(plan.manipulation, plan.term)
    if recipe is None or not recipe.rendered:
        raise UnrenderableError(plan.manipulation, recipe.note if recipe else "no rendering for this term")
    place = "off_path" if null else place_from_phrase(plan.manipulation, recipe.place)
    folder = store.ref(prefix, followup_id)
    if truth is not None and diffusion is None:
        edit = (
            AddObject(kind="car", place="off_path", distance_m=rng.uniform(45.0, 60.0))
            if null
            else _synth_edit(recipe, place, rng, plan)
        )
        if edit is not None:
            spec = apply_edit(truth.spec, edit)
            sample = read_frames(store, case)[0]
            width, height = sample.shape[1], sample.shape[0]
            # Seen along the source's path: the frames show the edit; the driver's reaction is the truth only.
            path = [st.s for st in drive(truth.spec, ignore=truth.ignore, camera=Camera(width, height))]
            rendered = render_case(spec, width=width, height=height, ignore=truth.ignore, along=path)
            stored = write_case(
                store, followup_id, rendered, prefix=prefix, region=case.region, source=f"followup:{case.case_id}"
            )
            added = len(spec.objects) - 1 if isinstance(edit, AddObject) else None
            seen_within = 0.8 * visibility_m(spec, edit.kind if isinstance(edit, AddObject) else "")
            boxes = [
                next(
                    (
                        (o.x1, o.y1, o.x2, o.y2)
                        for o in t.objects
                        if o.track == added and (o.distance_m is None or o.distance_m <= seen_within)
                    ),
                    None,
                )
                if added is not None
                else None
                for t in rendered.truths
            ]
            record = EditRecord(
                generator="re-render",
                op="add" if isinstance(edit, AddObject) else "replace",
                kind=edit.kind
                if isinstance(edit, AddObject)
                else (edit.weather if isinstance(edit, SetWeather) else edit.time),
                place=edit.place if isinstance(edit, AddObject) else None,
                strength=edit.strength if isinstance(edit, SetWeather) else None,
                boxes=boxes,
                visible=_visible(boxes, sample.shape) if added is not None else True,
                expected_from_scene=_expected_from_scene(
                    [e.speed_kmh for e in case.ego], [s.speed_kmh for s in rendered.states]
                ),
            )
            follow_case = stored.model_copy(update={"ego": case.ego, "metadata": None})
            return FollowUp(
                followup_id=followup_id,
                source=case,
                description=description,
                mr=plan,
                case=follow_case,
                edit=record,
                seconds=time.perf_counter() - started,
            )
    frames = read_frames(store, case)
    h, w = frames[0].shape[:2]
    horizon = _SYNTH_HORIZON if case.source == "synthetic" else estimate_horizon(frames[0])
    stage = Stage(w, h, horizon)
    moved = travelled(case.ego, case.fps)
    if diffusion is not None:
        out, record = _diffusion_edit(diffusion, frames, recipe, plan, place, rng, stage, moved, case.fps, seed, null)
    elif recipe.family == "environment":
        out = apply_environment(frames, recipe.kind, strength=strength, seed=seed, stage=stage, travelled_m=moved)
        record = EditRecord(generator="classical", op="replace", kind=recipe.kind, strength=strength)
    else:
        placement = _placement(recipe, place, rng, null=null)
        out, boxes = [], []
        for i, f in enumerate(frames):
            g = f.copy()
            t = i / case.fps
            if recipe.family == "marking":
                d, _ = placement.at(moved[i], t)
                box = draw_marking(g, recipe.kind, stage, d)
            else:
                box = placement.box(stage, moved[i], t)
                if box is not None:
                    if recipe.family == "sign":
                        draw_sign(g, recipe.kind, box, t=t)
                    else:
                        parts, _size = OBJECTS[recipe.kind]
                        facing_left = placement.lateral_speed_mps < 0
                        if facing_left:
                            parts = tuple(dataclasses.replace(p, flip=not p.flip) for p in parts)
                        draw_parts(g, parts, box, light=_light(f, box))
            boxes.append(box)
            out.append(g)
        record = EditRecord(
            generator="classical", op="add", kind=recipe.kind, place=place, boxes=boxes, visible=_visible(boxes, (h, w))
        )
    refs = []
    import cv2

    for i, img in enumerate(out):
        ok, buf = cv2.imencode(".png", np.ascontiguousarray(img[:, :, ::-1]), [cv2.IMWRITE_PNG_COMPRESSION, 1])
        if not ok:  # pragma: no cover
            raise UnrenderableError(case.case_id, f"frame {i} could not be encoded")
        refs.append(store.put(f"{folder}/frame_{i:02d}.png", buf.tobytes()))
    follow_case = DrivingCase(
        case_id=followup_id,
        source=f"followup:{case.case_id}",
        frames=refs,
        ego=case.ego,
        fps=case.fps,
        region=case.region,
    )
    return FollowUp(
        followup_id=followup_id,
        source=case,
        description=description,
        mr=plan,
        case=follow_case,
        edit=record,
        seconds=time.perf_counter() - started,
    )


def _diffusion_edit(
    diffusion: DiffusionGenerator,
    frames: list[np.ndarray],
    recipe: Recipe,
    plan: PlannedMR,
    place: str,
    rng: random.Random,
    stage: Stage,
    moved: list[float],
    fps: float,
    seed: int,
    null: bool,
) -> tuple[list[np.ndarray], EditRecord]:
    """Frames edited by the diffusion models: "replaces" per frame, "adds" painted once and carried."""
    if recipe.family == "environment":
        out = diffusion.replace(frames, plan.manipulation, seed=seed)
        name = diffusion.pipeline_name("replaces")
        return out, EditRecord(generator=f"diffusers:{name}", op="replace", kind=recipe.kind)
    placement = _placement(recipe, place, rng, null=null)
    boxes: list[tuple[float, float, float, float] | None] = []
    for i, f in enumerate(frames):
        t = i / fps
        if recipe.family == "marking":
            d, _ = placement.at(moved[i], t)
            boxes.append(draw_marking(f.copy(), recipe.kind, stage, d))  # where the marking lies; drawn by the model
        else:
            boxes.append(placement.box(stage, moved[i], t))
    out = [f.copy() for f in frames]
    shown = [i for i, b in enumerate(boxes) if b is not None and b[2] - b[0] >= 2 and b[3] - b[1] >= 2]
    if shown:
        key = max(shown, key=lambda i: _area(boxes[i]))
        painted = boxes[key]
        assert painted is not None
        patch, alpha = diffusion.paint_object(frames[key], painted, plan.manipulation, seed=seed)
        for i in shown:
            box = boxes[i]
            assert box is not None
            paste_patch(out[i], patch, alpha, box)
    name = diffusion.pipeline_name("adds")
    h, w = frames[0].shape[:2]
    record = EditRecord(
        generator=f"diffusers:{name}",
        op="add",
        kind=recipe.kind,
        place=place,
        boxes=boxes,
        visible=_visible(boxes, (h, w)),
    )
    return out, record


def _area(box: tuple[float, float, float, float] | None) -> float:
    return 0.0 if box is None else (box[2] - box[0]) * (box[3] - box[1])


def _visible(boxes: list[tuple[float, float, float, float] | None], shape: tuple[int, ...]) -> bool:
    """Truth: the added thing shows in some frame at a size a viewer (or a model) can see."""
    h, w = shape[0], shape[1]
    min_area = 0.0008 * h * w
    return any(b is not None and (b[2] - b[0]) * (b[3] - b[1]) >= min_area for b in boxes)


OBJECTS_CAR_RECIPE = Recipe(NULL_TERM, "adds", "object", "car_oncoming", "off_path")
