"""How often each validity check agrees with the synthetic world's ground truth, and broken sets per check.

    python bench/validity_agreement.py [--cases 120] [--seed 32] [--size 320x160]

For synthetic cases (seed 32; the checks' thresholds were set on seed 31) and MRs drawn from every rendered
ontology term with each behaviour, makes follow-ups both ways (re-rendered scenes and classical edits) and
compares each check with the truth the generator and the scene know:

* scenario alignment: the MR's road type fits the case's true road type (the generators keep the scene);
* manipulation verification: the added thing is in view and large enough (and not lost in fog), or the
  condition really changed (rain on a rainy scene does not);
* logical alignment: the behaviour is possible for the true ego and road.

Then purpose-made broken sets, where each check must say no: frames of another road type, an object
off-screen or too small, weather strength zero, an impossible behaviour. A check that always says yes fails
there.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.common.artifacts import LocalArtifactStore
from tools.mt.describe import describe_offline
from tools.mt.generate import generate_followup, read_frames
from tools.mt.models import EgoSample, PlannedMR
from tools.mt.roads import road_types_compatible
from tools.mt.synth.dataset import load_truth, render_case, write_case
from tools.mt.synth.scene import SceneSpec, sample_scene
from tools.mt.terms import RECIPES
from tools.mt.validity import check_followup

ROADS = ["any roads", "intersection", "crosswalk", "school area", "bus stopping", "railroad crossing"]
BEHAVIOURS = ["slow down", "keep current", "turn left", "turn right"]


def _weather_of(term_kind: str) -> tuple[str, str] | None:
    return {
        "rain": ("weather", "rain"),
        "drizzle": ("weather", "rain"),
        "snow": ("weather", "snow"),
        "fog": ("weather", "fog"),
        "smoke": ("weather", "fog"),
        "dust": ("weather", "fog"),
        "night": ("time", "night"),
        "low_light": ("time", "dusk"),
    }.get(term_kind)


def manipulation_truth(spec: SceneSpec, recipe_kind: str, family: str, edit: object) -> bool:
    if family == "environment":
        cond = _weather_of(recipe_kind)
        if cond is None:
            return True
        field, value = cond
        if field == "time":
            return spec.time != value and not (value == "dusk" and spec.time == "night")
        return not (spec.weather == value and spec.weather_strength >= 0.5)
    boxes = edit.boxes  # type: ignore[attr-defined]
    return bool(edit.visible) and any(b is not None for b in boxes)  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", type=int, default=120)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--size", default="320x160")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    rng = random.Random(args.seed)
    rendered_terms = [r for r in RECIPES.values() if r.rendered]
    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    confusion: Counter[tuple[str, bool, bool]] = Counter()
    broken: Counter[str] = Counter()
    broken_total: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalArtifactStore(tmp)
        other = write_case(
            store, "other", render_case(sample_scene(5, road="railroad_crossing"), width=w, height=h), prefix="src"
        )
        other_frames = read_frames(store, other)
        for k in range(args.cases):
            spec = sample_scene(args.seed * 100003 + k)
            src = write_case(store, f"c{k}", render_case(spec, width=w, height=h), prefix="src")
            truth = load_truth(store, src)
            frames = read_frames(store, src)
            desc = describe_offline(src, frames)
            recipe = rng.choice(rendered_terms)
            road = rng.choice([spec.road_type, *ROADS])
            behaviour = rng.choice(BEHAVIOURS)
            plan = PlannedMR(
                method="automt",
                gherkin="",
                road_type=road,
                verb=recipe.verb,  # type: ignore[arg-type]
                manipulation=recipe.term,
                term=recipe.term,
                expected_behavior=behaviour,
            )
            use_truth = truth if k % 2 == 0 else None
            follow = generate_followup(
                store, src, desc, plan, followup_id=f"f{k}", prefix="fol", seed=k, truth=use_truth
            )
            fol_frames = read_frames(store, follow.case)
            v = check_followup(frames, fol_frames, source=src, description=desc, mr=plan)
            speeds = [e.speed_kmh for e in src.ego]
            truths = {
                "scenario_alignment": road_types_compatible(road, spec.road_type),
                "manipulation_verification": manipulation_truth(spec, recipe.kind, recipe.family, follow.edit),
                "logical_alignment": not (
                    (behaviour == "slow down" and max(speeds) < 1.0)
                    or (behaviour in ("turn left", "turn right") and spec.road not in ("intersection", "t_junction"))
                ),
            }
            for c in v.checks:
                total[c.name] += 1
                agree[c.name] += c.passed == truths[c.name]
                confusion[(c.name, truths[c.name], c.passed)] += 1
            # -- broken sets -------------------------------------------------------------------------------
            if k % 3 == 0:  # frames of another road type than the MR's
                wrong = next(
                    r
                    for r in ("railroad crossing", "school area", "intersection")
                    if not road_types_compatible(r, spec.road_type)
                )
                b = check_followup(
                    frames, fol_frames, source=src, description=desc, mr=plan.model_copy(update={"road_type": wrong})
                )
                broken_total["scenario_alignment"] += 1
                broken["scenario_alignment"] += not b.checks[0].passed
                # and the follow-up's frames swapped for another scene's (measured, not a target)
                b = check_followup(
                    frames,
                    other_frames,
                    source=src,
                    description=desc,
                    mr=plan.model_copy(update={"road_type": spec.road_type}),
                )
                broken_total["scene swapped (info)"] += 1
                broken["scene swapped (info)"] += not b.checks[0].passed
            if recipe.family in ("object", "sign", "marking") and k % 3 == 1:
                # off-screen: the frames unchanged; too small: a speck of 2x2 pixels where the object would be
                speck = [f.copy() for f in frames]
                for f in speck:
                    f[h // 2 : h // 2 + 2, w // 2 : w // 2 + 2] = 255 - f[h // 2, w // 2]
                for edited in (frames, speck):
                    b = check_followup(frames, edited, source=src, description=desc, mr=plan)
                    broken_total["manipulation_verification"] += 1
                    broken["manipulation_verification"] += not b.checks[1].passed
            if recipe.family == "environment" and k % 3 == 1:  # strength zero
                zero = generate_followup(
                    store, src, desc, plan, followup_id=f"z{k}", prefix="fol", seed=k, truth=None, strength=0.0
                )
                b = check_followup(frames, read_frames(store, zero.case), source=src, description=desc, mr=plan)
                broken_total["manipulation_verification"] += 1
                broken["manipulation_verification"] += not b.checks[1].passed
            if k % 3 == 2:  # an impossible behaviour: turning on a straight road, or slowing a stopped ego
                if spec.road in ("straight", "curve", "crosswalk", "school_zone", "bus_stop", "railroad_crossing"):
                    bad = plan.model_copy(update={"expected_behavior": "turn left"})
                    b = check_followup(frames, fol_frames, source=src, description=desc, mr=bad)
                else:
                    stopped = src.model_copy(
                        update={"ego": [EgoSample(speed_kmh=0.0, steering_rad=0.0)] * len(src.ego)}
                    )
                    bad = plan.model_copy(update={"expected_behavior": "slow down"})
                    b = check_followup(
                        frames,
                        fol_frames,
                        source=stopped,
                        description=desc.model_copy(update={"speed_kmh": 0.0}),
                        mr=bad,
                    )
                broken_total["logical_alignment"] += 1
                broken["logical_alignment"] += not b.checks[2].passed
    print(
        f"validity checks on {args.cases} synthetic follow-ups (seed {args.seed}, {w}x{h}; thresholds set on seed 31)"
    )
    for name in ("scenario_alignment", "manipulation_verification", "logical_alignment"):
        tp, fn = confusion[(name, True, True)], confusion[(name, True, False)]
        fp, tn = confusion[(name, False, True)], confusion[(name, False, False)]
        print(
            f"  {name:26} agreement {agree[name] / max(1, total[name]):6.1%} (target >= 95%)  "
            f"[truth yes: {tp} passed, {fn} failed; truth no: {fp} passed, {tn} failed]"
        )
    print("broken sets (each check must say no):")
    for name in ("scenario_alignment", "manipulation_verification", "logical_alignment", "scene swapped (info)"):
        print(f"  {name:26} refused {broken[name]}/{broken_total[name]}")


if __name__ == "__main__":
    main()
