"""The MetaDrive adapter: DSL -> map and routes, spawn solver, collisions, reproduction, pictures, errors.

Tests marked slow run the real MetaDrive engine (headless, physics only, asset download disabled); one
warm simulator serves the whole module, as a SimRunner worker would use it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from runners.simulators.base import Simulator
from runners.simulators.metadrive import (
    MetaDriveSimulator,
    TooManyLanesError,
    UnknownActorError,
    plan_scenario,
)
from runners.simulators.metadrive.paths import Polyline
from runners.simulators.metadrive.placement import Mover, find_conflict, solve_placement
from tools.crash.models import RunRecord, RunSpec, Scenario, SimCollision, SimSettings
from tools.crash.runs import plan_runs
from tools.crash.verdict import RunOutcome, run_outcome
from tools.errors import BadInputError


def scenario(
    road: dict[str, Any], actors: list[dict[str, Any]], collisions: list[list[str]] | None = None, case_id: str = "t"
) -> Scenario:
    return Scenario.from_data(
        {"case_id": case_id, "road_network": road, "actors": actors, "collisions": collisions or []}
    )


STRAIGHT_4 = {"road_type": "Straight", "lanes": 4, "ways": 2, "lane_width_m": 3.5}
CROSSING = scenario(
    {"road_type": "Intersection", "lanes": 2, "ways": 2, "lane_width_m": 4.0},
    [
        {"id": "V1", "initial_position": "W2E", "actions": ["Move forward"], "speed_limit_mph": 40},
        {"id": "V2", "initial_position": "S2N", "actions": ["Move forward"], "speed_limit_mph": 40},
    ],
    [["V2", "V1"]],
    case_id="crossing",
)
HEAD_ON = scenario(
    {"road_type": "Straight", "lanes": 2, "ways": 2, "lane_width_m": 3.7},
    [
        {"id": "V1", "initial_position": "W2E", "lane": 1, "actions": ["Enter wrong way"], "speed_limit_mph": 45},
        {"id": "V2", "initial_position": "E2W", "lane": 1, "actions": ["Move forward"], "speed_limit_mph": 45},
    ],
    [["V1", "V2"]],
    case_id="head-on",
)


@pytest.fixture(scope="module")
def sim() -> Iterator[MetaDriveSimulator]:
    settings = SimSettings(variants=2, render_png=True, render_gif=True, duration_s=12.0)
    with MetaDriveSimulator(settings=settings) as s:
        yield s


# -- planning (no engine) ------------------------------------------------------------------------------
def test_plan_chooses_layout_lanes_and_records_approximations() -> None:
    """Each road type gets its MetaDrive layout; a 5-lane road with a centre turn lane becomes 2+2, noted."""
    expected = {
        "Straight": "straight",
        "Curve": "curve",
        "Intersection": "intersection",
        "T-intersection": "t_intersection",
        "Merge": "merge",
    }
    for road_type, layout in expected.items():
        road = {"road_type": road_type, "lanes": 5, "ways": 2, "centre_turn_lane": True}
        if road_type == "Merge":
            actors = [{"id": "V1", "initial_position": "Main road"}, {"id": "V2", "initial_position": "On-ramp"}]
        else:
            actors = [{"id": "V1", "initial_position": "W2E"}, {"id": "V2", "initial_position": "E2W"}]
        plan = plan_scenario(scenario(road, actors))
        assert plan.map.layout == layout
        assert plan.map.lanes == 2
        assert any("5 lanes built as 2+2" in n and "centre turn lane" in n for n in plan.approximations), (
            plan.approximations
        )
    one_way = plan_scenario(scenario({"road_type": "Straight", "lanes": 3, "ways": 1}, [{"id": "V1"}]))
    assert one_way.map.lanes == 3 and any("one-way" in n for n in one_way.approximations)


def test_plan_directions_lanes_and_turns() -> None:
    """DSL lane 1 is MetaDrive's outermost index; turns pick the exit leg; a north-south road is turned west-east."""
    plan = plan_scenario(
        scenario(
            {"road_type": "Intersection", "lanes": 4, "ways": 2},
            [
                {"id": "V1", "initial_position": "W2E", "lane": 1, "actions": ["Turn left"]},
                {"id": "V2", "initial_position": "N2S", "lane": 2, "actions": ["Turn right"]},
                {"id": "V3", "initial_position": "E2W", "actions": ["Move forward"]},
            ],
        )
    )
    v1, v2, v3 = plan.actor("V1"), plan.actor("V2"), plan.actor("V3")
    assert (v1.approach, v1.lane_index, v1.exit, v1.turn) == ("W", 1, "N", "left")
    assert (v2.approach, v2.lane_index, v2.exit) == ("N", 0, "W")
    assert (v3.approach, v3.exit) == ("E", "W")
    assert v1.speed_mps <= 7.0 < v3.speed_mps  # a turning vehicle takes the corner slowly
    ns = plan_scenario(
        scenario(
            {"road_type": "Straight", "lanes": 2, "ways": 2},
            [{"id": "V1", "initial_position": "S2N"}, {"id": "V2", "initial_position": "N2S"}],
        )
    )
    assert ns.map.quarter_turns == 1
    assert (ns.actor("V1").approach, ns.actor("V2").approach) == ("W", "E")
    assert any("compass turned" in n for n in ns.approximations)
    t = plan_scenario(
        scenario(
            {"road_type": "T-intersection", "main_lanes": 2, "main_ways": 2},
            [
                {"id": "V1", "initial_position": "W2E"},
                {"id": "V2", "initial_position": "S2N", "actions": ["Move forward"]},
            ],
        )
    )
    assert t.map.stem == "S"
    assert t.actor("V2").turn == "left"  # no straight on from a T's stem
    assert any("cannot go straight" in n for n in t.approximations)


def test_too_many_lanes_is_a_clear_bad_input_error() -> None:
    """Twelve lanes one way is more than MetaDrive builds: a BadInputError that names the lanes."""
    bad = scenario({"road_type": "Straight", "lanes": 12, "ways": 1}, [{"id": "V1"}], case_id="wide")
    with pytest.raises(TooManyLanesError) as info:
        plan_scenario(bad)
    assert isinstance(info.value, BadInputError)
    assert "12 lanes per direction" in str(info.value) and "wide" in str(info.value)


def test_a_policy_named_twice_is_planned_once() -> None:
    """`-p idm -p idm` runs IDM once per ego and variant: repeats shared their run ids, so the case waited for runs
    the bus had dropped as duplicates and never got its verdict."""
    from tools.crash.models import SimOptions

    s = scenario(STRAIGHT_4, [{"id": "V1"}, {"id": "V2"}])
    options = SimOptions(policies=["idm", "ppo", "idm"], variants=2)
    assert options.policies == ["idm", "ppo"]
    runs = plan_runs(s, options.settings())
    assert len({r.run_id for r in runs}) == len(runs) == len(s.actors) * 2 * 2


def test_plan_runs_counts_every_ego_policy_and_variant() -> None:
    """Three actors, two policies, K=5: thirty runs with distinct ids and seeds base_seed + k."""
    s = scenario(STRAIGHT_4, [{"id": "V1"}, {"id": "V2"}, {"id": "V3"}])
    runs = plan_runs(s, SimSettings(variants=5, policies=["idm", "ppo"], base_seed=10))
    assert len(runs) == 30
    assert len({r.run_id for r in runs}) == 30
    assert {r.seed for r in runs} == set(range(10, 15))


def test_reproduction_flag_logic() -> None:
    """Reproduced = the ego's first collision with another vehicle is a reported pair (any when none is reported):
    scripted vehicles crashing while the ego keeps clear reproduce nothing of the ego's."""

    def col(t: float, a: str, b: str) -> SimCollision:
        return SimCollision(t=t, a=a, b=b, speed_a_mps=10.0, speed_b_mps=None if not b.startswith("V") else 5.0)

    reported = [("V2", "V1")]
    assert run_outcome([col(3.0, "V1", "V2")], reported, "V1") == RunOutcome(True, True)
    # The ego V2 is in the reported crash, after two other vehicles touched.
    assert run_outcome([col(2.0, "V1", "V3"), col(3.0, "V1", "V2")], reported, "V2") == RunOutcome(True, True)
    # The ego V1's first vehicle collision is not the reported one.
    assert run_outcome([col(2.0, "V1", "V3"), col(3.0, "V1", "V2")], reported, "V1") == RunOutcome(False, True)
    # The reported pair crashed, but the ego V3 was in no collision: not reproduced by this ego.
    assert run_outcome([col(1.0, "V2", "sidewalk"), col(3.0, "V1", "V2")], reported, "V3") == RunOutcome(False, False)
    assert run_outcome([col(1.0, "V1", "sidewalk")], reported, "V1") == RunOutcome(
        False, True
    )  # a violation, not the crash
    assert run_outcome([col(2.0, "V3", "V2")], [], "V1") == RunOutcome(False, False)  # none reported: the ego's own
    assert run_outcome([col(2.0, "V3", "V1")], [], "V1") == RunOutcome(True, True)
    assert run_outcome([], reported, "V1") == RunOutcome(False, False)


def test_placement_times_crossing_paths_to_meet() -> None:
    """The solver spawns two crossing actors so that both reach the crossing at the same time."""
    east = Mover(id="V1", path=Polyline.from_points([(-200, 0), (100, 0)]), speed=15.0, length=4.5, width=1.9)
    north = Mover(id="V2", path=Polyline.from_points([(0, -150), (0, 100)]), speed=10.0, length=4.5, width=1.9)
    conflict = find_conflict(east, north)
    assert conflict.kind == "crossing"
    assert np.allclose(east.path.position(conflict.s_a), north.path.position(conflict.s_b), atol=1.5)
    sol = solve_placement({"V1": east, "V2": north}, [("V1", "V2")], reference=np.zeros(2))
    t1 = (conflict.s_a - sol.placements["V1"].s0) / sol.placements["V1"].speed
    t2 = (conflict.s_b - sol.placements["V2"].s0) / sol.placements["V2"].speed
    assert t1 == pytest.approx(t2, abs=0.05) and t1 == pytest.approx(sol.crash_time, abs=0.05)
    jittered = solve_placement(
        {"V1": east, "V2": north}, [("V1", "V2")], reference=np.zeros(2), rng=np.random.default_rng(3)
    )
    assert jittered.placements["V1"].s0 != sol.placements["V1"].s0


# -- the real engine -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_simulator_is_offline_and_implements_the_protocol(sim: MetaDriveSimulator) -> None:
    """The warm simulator is a Simulator; MetaDrive's asset download is patched out (no assets folder needed)."""
    from metadrive.engine.base_engine import BaseEngine

    from runners.simulators.metadrive.assets import _no_pull

    assert isinstance(sim, Simulator)
    assert BaseEngine.try_pull_asset is _no_pull or BaseEngine.try_pull_asset.__func__ is _no_pull  # type: ignore[attr-defined]
    assert sim.version.startswith("metadrive ")


@pytest.mark.slow
def test_every_road_type_builds_and_routes_follow_it(sim: MetaDriveSimulator) -> None:
    """Each road type builds in MetaDrive; a left turn at a junction ends up heading north from the west leg."""
    cases = {
        "Straight": ({"road_type": "Straight", "lanes": 2, "ways": 2}, "W2E", "Move forward"),
        "Curve": ({"road_type": "Curve", "lanes": 2, "ways": 2}, "W2E", "Move forward"),
        "Intersection": ({"road_type": "Intersection", "lanes": 2, "ways": 2}, "W2E", "Turn left"),
        "T-intersection": (
            {"road_type": "T-intersection", "main_lanes": 2, "main_ways": 2, "stem_direction": "S"},
            "W2E",
            "Turn right",
        ),
        "Merge": (
            {"road_type": "Merge", "main_lanes": 4, "main_ways": 2, "branch_lanes": 1},
            "On-ramp",
            "Move forward",
        ),
    }
    for road_type, (road, pos, action) in cases.items():
        s = scenario(
            road, [{"id": "V1", "initial_position": pos, "actions": [action], "speed_limit_mph": 30}], case_id=road_type
        )
        record = sim.run(s, RunSpec(case_id=s.case_id, ego_id="V1"))
        assert record.error is None, record.error
        assert record.map_blocks and record.map_blocks.startswith("I")
        poses = record.trajectories["V1"]
        assert len(poses) > 20 and record.sim_seconds > 2
        travelled = math.dist((poses[0].x, poses[0].y), (poses[-1].x, poses[-1].y))
        assert travelled > 20, road_type
        if road_type == "Intersection":
            assert poses[-1].y > poses[0].y + 20 and abs(math.sin(poses[-1].heading) - 1) < 0.2
        if road_type == "T-intersection":
            assert poses[-1].y < poses[0].y - 20  # right turn into the southern stem


@pytest.mark.slow
def test_a_crash_the_ego_is_not_in_does_not_end_its_run(sim: MetaDriveSimulator) -> None:
    """The ego's own first collision with another vehicle decides the reproduction, so the run ends a while after
    that, not after two scripted vehicles crash (their crash ended it, leaving the ego no time to reach it)."""
    third = CROSSING.to_dict()
    third["actors"].append({"id": "V3", "initial_position": "E2W", "actions": ["Stop"], "speed_limit_mph": 35})
    s = Scenario.from_data(third | {"case_id": "crossing-and-a-stopped-car"})
    record = sim.run(s, RunSpec(case_id=s.case_id, ego_id="V3"))
    crash = next(c for c in record.collisions if c.pair() == frozenset({"V1", "V2"}))
    assert not any(c.involves("V3") for c in record.collisions), record.collisions
    assert record.sim_seconds >= sim.settings.duration_s - 0.5 > crash.t + sim.settings.stop_after_first_collision_s
    assert not record.reproduced


@pytest.mark.slow
def test_actors_start_in_their_lane_and_heading(sim: MetaDriveSimulator) -> None:
    """W2E lane 1 starts heading east in the outer eastbound lane; E2W lane 2 heading west next to the centre line."""
    s = scenario(
        STRAIGHT_4,
        [
            {"id": "V1", "initial_position": "W2E", "lane": 1, "speed_limit_mph": 30},
            {"id": "V2", "initial_position": "E2W", "lane": 2, "speed_limit_mph": 30},
        ],
        case_id="lanes",
    )
    for ego in ("V1", "V2"):
        record = sim.run(s, RunSpec(case_id=s.case_id, ego_id=ego))
        v1, v2 = record.trajectories["V1"][0], record.trajectories["V2"][0]
        assert math.cos(v1.heading) > 0.99 and math.cos(v2.heading) < -0.99
        # right-hand traffic, north up: eastbound south of westbound; outer eastbound to inner westbound = 2 lanes
        assert v2.y - v1.y == pytest.approx(2 * 3.5, abs=0.3)
    crossing = sim.run(CROSSING, RunSpec(case_id=CROSSING.case_id, ego_id="V1"))
    start = crossing.trajectories["V2"][0]
    assert abs(math.sin(start.heading) - 1) < 0.05  # S2N heads north
    assert start.y < crossing.trajectories["V1"][0].y - 20  # ... from south of the junction


@pytest.mark.slow
def test_seeded_runs_are_deterministic(sim: MetaDriveSimulator) -> None:
    """The same spec twice (another run between) gives identical trajectories and collisions, IDM and PPO."""
    for policy in ("idm", "ppo"):
        spec = RunSpec(case_id=CROSSING.case_id, ego_id="V1", policy=policy, variant=1, seed=1)
        first = sim.run(CROSSING, spec)
        sim.run(HEAD_ON, RunSpec(case_id=HEAD_ON.case_id, ego_id="V2"))
        again = sim.run(CROSSING, spec)
        assert first.error is None, first.error
        assert first.trajectories == again.trajectories
        assert first.collisions == again.collisions
    other = sim.run(CROSSING, RunSpec(case_id=CROSSING.case_id, ego_id="V1", variant=2, seed=2))
    assert other.trajectories != first.trajectories


@pytest.mark.slow
def test_head_on_collision_is_named_and_reproduced(sim: MetaDriveSimulator) -> None:
    """A wrong-way driver meets the IDM ego head-on: both named, speeds and time at impact, reproduced, violation."""
    record = sim.run(HEAD_ON, RunSpec(case_id=HEAD_ON.case_id, ego_id="V2", policy="idm"))
    first = record.first_vehicle_collision
    assert first is not None and first.pair() == {"V1", "V2"}
    assert first.t > 1.0 and first.speed_a_mps > 5 and (first.speed_b_mps or 0) > 1
    assert first.x is not None and first.y is not None
    assert record.reproduced and record.ego_collided
    ego_wrong_way = sim.run(HEAD_ON, RunSpec(case_id=HEAD_ON.case_id, ego_id="V1", policy="idm"))
    assert any("wrong-way drive is not imposed" in n for n in ego_wrong_way.approximations)


@pytest.mark.slow
def test_crossing_collision_and_pictures_are_written(sim: MetaDriveSimulator, tmp_path: Path) -> None:
    """A timed crossing collides; the run writes a JSON record, a non-trivial PNG and an animated GIF."""
    from PIL import Image

    spec = RunSpec(case_id=CROSSING.case_id, ego_id="V1", policy="idm")
    record = sim.run(CROSSING, spec, out_dir=tmp_path)
    assert record.reproduced, record.collisions
    folder = tmp_path
    assert record.record_path == str(folder / f"{spec.run_id}.json")
    stored = RunRecord.model_validate(json.loads(Path(record.record_path).read_text()))
    assert stored.collisions == record.collisions and stored.png and stored.gif
    png = np.asarray(Image.open(folder / f"{spec.run_id}.png").convert("RGB"))
    assert min(png.shape[:2]) >= 150 and png.std() > 10
    assert (png[..., 0] > 150).sum() > 50  # the red collision cross and actor colours are drawn
    gif = Image.open(folder / f"{spec.run_id}.gif")
    assert gif.n_frames >= int(record.sim_seconds * sim.settings.gif_fps) - 1
    assert record.render_seconds > 0 and record.wall_seconds > 0


@pytest.mark.slow
def test_bad_input_raises_and_the_engine_keeps_working(sim: MetaDriveSimulator) -> None:
    """An unbuildable scenario or an unknown ego raises a BadInputError; the warm engine runs the next spec."""
    wide = scenario({"road_type": "Straight", "lanes": 12, "ways": 1}, [{"id": "V1"}], case_id="wide")
    with pytest.raises(TooManyLanesError):
        sim.run(wide, RunSpec(case_id="wide", ego_id="V1"))
    with pytest.raises(UnknownActorError, match="V9"):
        sim.run(CROSSING, RunSpec(case_id=CROSSING.case_id, ego_id="V9"))
    record = sim.run(CROSSING, RunSpec(case_id=CROSSING.case_id, ego_id="V2"))
    assert record.error is None and record.trajectories["V2"]
