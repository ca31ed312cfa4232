"""The BeamNG.tech adapter without the game: scenario files, geometry, routes, timing and its refusals.

There is no BeamNG.tech here, so every run ends in BeamNGUnavailableError after writing real files
with real beamngpy objects; the tests read those files back (the prefab, the info JSON, the AI path
files through beamngpy's own reader) and check what a person or the game would get.
"""

from __future__ import annotations

import itertools
import json
import math
import pickle
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runners.simulators.base import Simulator
from runners.simulators.beamng import (
    BeamNGConfigError,
    BeamNGScenarioError,
    BeamNGSettings,
    BeamNGSimulator,
    BeamNGUnavailableError,
    ScenePlan,
    beamng_settings_from_env,
    plan_scene,
)
from runners.simulators.beamng.collisions import CollisionMonitor, VehicleSample
from tools.crash.models import ACTIONS, BODY_TYPES, DIRECTIONS, ROAD_TYPES, RunSpec, Scenario, SimSettings
from tools.errors import BadInputError, DrivemtError

W = 3.5  # lane width used by the scenarios below


def _scenario(
    road: dict[str, Any], actors: list[dict[str, Any]], collisions: list[list[str]] | None = None
) -> Scenario:
    return Scenario.from_data(
        {
            "case_id": "T1",
            "road_network": {"lane_width_m": W, **road},
            "actors": actors,
            "collisions": collisions if collisions is not None else [[actors[0]["id"], actors[-1]["id"]]],
        }
    )


SCENARIOS: dict[str, Scenario] = {
    "Straight": _scenario(
        {"road_type": "Straight", "lanes": 4, "ways": 2},
        [
            {"id": "V1", "body_type": "Sedan", "initial_position": "W2E", "lane": 1, "speed_limit_mph": 40},
            {"id": "V2", "body_type": "SUV", "initial_position": "W2E", "lane": 1, "actions": ["Stop"]},
        ],
    ),
    "Curve": _scenario(
        {"road_type": "Curve", "lanes": 2, "ways": 2},
        [
            {"id": "V1", "body_type": "Pickup", "initial_position": "W2E", "actions": ["Enter wrong way"]},
            {"id": "V2", "body_type": "Sedan", "initial_position": "E2W"},
        ],
    ),
    "Intersection": _scenario(
        {"road_type": "Intersection", "lanes": 4, "ways": 2},
        [
            {"id": "V1", "body_type": "Sedan", "initial_position": "W2E", "actions": ["Turn left"]},
            {"id": "V2", "body_type": "Semi Truck", "initial_position": "E2W", "lane": 2},
        ],
    ),
    "T-intersection": _scenario(
        {"road_type": "T-intersection", "main_lanes": 2, "main_ways": 2, "branch_lanes": 2, "stem_direction": "S"},
        [
            {"id": "V1", "body_type": "Minivan", "initial_position": "W2E"},
            {"id": "V2", "body_type": "Bus", "initial_position": "S2N", "actions": ["Stop", "Turn left"]},
        ],
    ),
    "Merge": _scenario(
        {"road_type": "Merge", "main_lanes": 6, "main_ways": 2, "branch_lanes": 1},
        [
            {"id": "V1", "body_type": "Coupe", "initial_position": "Main road", "lane": 1, "speed_limit_mph": 65},
            {"id": "V2", "body_type": "Van", "initial_position": "On-ramp", "speed_limit_mph": 65},
        ],
        [["V2", "V1"]],
    ),
}


def _run(scenario: Scenario, out: Path, *, ego: str = "V1", seed: int = 0, **settings: Any) -> BeamNGUnavailableError:
    """Run without BeamNG.tech; return the error (which every run here ends in)."""
    sim = BeamNGSimulator(settings=SimSettings(duration_s=20), beamng=BeamNGSettings(**settings))
    with sim, pytest.raises(BeamNGUnavailableError) as info:
        sim.run(scenario, RunSpec(case_id=scenario.case_id, ego_id=ego, seed=seed, variant=seed), out_dir=out)
    return info.value


def _prefab(err: BeamNGUnavailableError) -> list[dict[str, Any]]:
    """The prefab's scene objects (BeamNG's lenient JSON: one object per line, trailing commas)."""
    path = next(f for f in err.files if f.name.endswith(".prefab.json"))
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return [json.loads(re.sub(r",\s*([\]}])", r"\1", ln)) for ln in lines]


def _plan(err: BeamNGUnavailableError) -> ScenePlan:
    path = next(f for f in err.files if f.name == "plan.json")
    return ScenePlan.model_validate_json(path.read_text(encoding="utf-8"))


def _surfaces(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["name"].rsplit("_", 1)[-1]: o for o in objs if o["class"] == "DecalRoad" and "_line" not in o["name"]}


def _forward(matrix: list[float]) -> tuple[float, float]:
    """World direction a BeamNG vehicle faces: its rotation applied to its forward axis (0, -1, 0)."""
    return (-matrix[1], -matrix[4])


def _right_of(nodes: list[tuple[float, float, float, float]], x: float, y: float, heading: float) -> float:
    """How far right of a road's centreline (its decal nodes) a point is, for travel along ``heading``."""
    best = (math.inf, 0.0)
    for (x0, y0, *_), (x1, y1, *_) in itertools.pairwise(nodes):
        dx, dy = x1 - x0, y1 - y0
        f = min(1.0, max(0.0, ((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy)))
        cx, cy = x0 + f * dx, y0 + f * dy
        d = math.hypot(x - cx, y - cy)
        if d < best[0]:
            side = (x - cx) * math.sin(heading) - (y - cy) * math.cos(heading)
            best = (d, math.copysign(d, side))
    return best[1]


def _at(script: list[Any], t: float) -> tuple[float, float]:
    """Where a timed script puts a vehicle at time ``t`` (linear between nodes)."""
    for a, b in itertools.pairwise(script):
        if a.t <= t <= b.t:
            f = 0.0 if b.t == a.t else (t - a.t) / (b.t - a.t)
            return (a.x + f * (b.x - a.x), a.y + f * (b.y - a.y))
    last = script[-1] if t > script[-1].t else script[0]
    return (last.x, last.y)


@pytest.mark.parametrize("road_type", list(SCENARIOS))
def test_files_written_for_each_road_type(road_type: str, tmp_path: Path) -> None:
    """Each road type yields an info JSON naming its prefab, a prefab with the roads and vehicles, and AI path files."""
    scenario = SCENARIOS[road_type]
    err = _run(scenario, tmp_path)
    root = tmp_path / "beamng"
    assert err.files_dir == root
    assert all(f.is_file() and root in f.parents for f in err.files)
    info_path = next(f for f in err.files if f.suffix == ".json" and f.parent.parent.name == "scenarios")
    (info,) = json.loads(info_path.read_text(encoding="utf-8"))
    rel = info["prefabs"][0]
    assert (root / rel).is_file() and rel.startswith("levels/smallgrid/scenarios/")
    assert set(info["vehicles"]) == {"V1", "V2"} and info["vehicles"]["V1"].get("startFocus") is True
    objs = _prefab(err)
    classes = [o["class"] for o in objs]
    assert classes.count("BeamNGVehicle") == 2 and classes[-1] == "SimGroup"
    kinds = set(_surfaces(objs))
    assert "main" in kinds
    assert {"Intersection": "cross", "T-intersection": "stem", "Merge": "ramp"}.get(road_type, "main") in kinds
    assert (root / "README.txt").read_text(encoding="utf-8").count("levels/") >= 2


def test_road_widths_are_lanes_times_lane_width(tmp_path: Path) -> None:
    """Surface widths are lanes x lane width (a centre turn lane adds one), branches and ramps by their own lanes."""
    cases = {
        "Straight": {"main": 4 * W},
        "Curve": {"main": 2 * W},
        "Intersection": {"main": 4 * W, "cross": 4 * W},
        "T-intersection": {"main": 2 * W, "stem": 2 * W},
        "Merge": {"main": 6 * W, "ramp": 1 * W},
    }
    for road_type, widths in cases.items():
        surfaces = _surfaces(_prefab(_run(SCENARIOS[road_type], tmp_path / road_type)))
        for name, width in widths.items():
            node_widths = [n[3] for n in surfaces[name]["nodes"]]
            assert node_widths[0] == pytest.approx(width), (road_type, name)
            assert max(node_widths) == pytest.approx(width)
    ctl = _scenario(
        {"road_type": "Straight", "lanes": 5, "ways": 2, "centre_turn_lane": True},
        [{"id": "V1", "initial_position": "W2E", "lane": 2}, {"id": "V2", "initial_position": "E2W", "lane": 2}],
    )
    err = _run(ctl, tmp_path / "ctl")
    assert _surfaces(_prefab(err))["main"]["nodes"][0][3] == pytest.approx(5 * W)
    plan = _plan(err)
    main = next(r for r in plan.roads if r.id == "main")
    assert (main.lanes_forward, main.lanes_backward, main.median_m) == (2, 2, pytest.approx(W))
    # Lane 2 of two each way is the inner lane, beside the turn lane: half the median plus half a lane out.
    assert abs(plan.actor("V1").position[1]) == pytest.approx(W / 2 + W / 2, abs=0.05)
    yellow = [r for r in plan.roads if r.kind == "marking" and r.material == "line_yellow"]
    assert len(yellow) == 2


def test_road_nodes_follow_the_road_type(tmp_path: Path) -> None:
    """A straight road is a straight line through the centre; a curve bends by its angle; a ramp tapers into the main road."""
    straight = _surfaces(_prefab(_run(SCENARIOS["Straight"], tmp_path / "s")))["main"]["nodes"]
    assert all(abs(n[1]) < 1e-6 for n in straight) and min(n[0] for n in straight) < -50 < 50 < max(
        n[0] for n in straight
    )
    curve = _surfaces(_prefab(_run(SCENARIOS["Curve"], tmp_path / "c")))["main"]["nodes"]
    h0 = math.atan2(curve[1][1] - curve[0][1], curve[1][0] - curve[0][0])
    h1 = math.atan2(curve[-1][1] - curve[-2][1], curve[-1][0] - curve[-2][0])
    assert math.degrees(h1 - h0) == pytest.approx(60, abs=3)
    ramp = _surfaces(_prefab(_run(SCENARIOS["Merge"], tmp_path / "m")))["ramp"]["nodes"]
    assert ramp[-1][3] < ramp[0][3] / 2 and ramp[0][1] < ramp[-1][1] < 0


def test_vehicles_match_actors(tmp_path: Path) -> None:
    """One vehicle per actor, with the model of its body type, spawned on its approach in its right-hand lane, facing its travel direction."""
    scenario = _scenario(
        {"road_type": "Intersection", "lanes": 4, "ways": 2},
        [
            {"id": "V1", "body_type": "Sedan", "initial_position": "W2E", "lane": 1},
            {"id": "V2", "body_type": "Pickup", "initial_position": "E2W", "lane": 2},
            {"id": "V3", "body_type": "Semi Truck", "initial_position": "S2N", "lane": 1},
            {"id": "V4", "body_type": "Motorcycle", "initial_position": "N2S", "lane": 2},
        ],
        [["V1", "V3"]],
    )
    err = _run(scenario, tmp_path)
    vehicles = {o["name"]: o for o in _prefab(err) if o["class"] == "BeamNGVehicle"}
    assert {v: o["jBeam"] for v, o in vehicles.items()} == {
        "V1": "etk800",
        "V2": "pickup",
        "V3": "us_semi",
        "V4": "autobello",
    }
    travel = {"V1": (1, 0), "V2": (-1, 0), "V3": (0, 1), "V4": (0, -1)}
    lane = {"V1": 1, "V2": 2, "V3": 1, "V4": 2}
    for vid, (tx, ty) in travel.items():
        x, y, _ = vehicles[vid]["position"]
        fx, fy = _forward(vehicles[vid]["rotationMatrix"])
        assert fx == pytest.approx(tx, abs=1e-6) and fy == pytest.approx(ty, abs=1e-6), vid
        along = x * tx + y * ty
        right = x * ty - y * tx  # offset to the right of the direction of travel
        assert along < -10, f"{vid} spawns before the junction"
        assert right == pytest.approx((2 - lane[vid] + 0.5) * W, abs=0.05), vid
    plan = _plan(err)
    assert any("motorcycle" in note for note in plan.approximations)
    assert plan.actor("V1").ego and not plan.actor("V2").ego


def test_ai_routes_follow_actions(tmp_path: Path) -> None:
    """A left turner's path ends northbound on the road to its left, a right turner's on the road to its right, a through driver's ahead in its lane."""
    scenario = _scenario(
        {"road_type": "Intersection", "lanes": 4, "ways": 2},
        [
            {"id": "V1", "initial_position": "W2E", "lane": 2, "actions": ["Turn left"]},
            {"id": "V2", "initial_position": "W2E", "lane": 1, "actions": ["Turn right"]},
            {"id": "V3", "initial_position": "E2W", "lane": 1, "actions": ["Move forward"]},
        ],
        [["V1", "V3"]],
    )
    err = _run(scenario, tmp_path)
    plan = _plan(err)
    left, right, through = (plan.actor(v).script for v in ("V1", "V2", "V3"))
    assert left[-1].y > 50 and left[-1].y > left[-2].y, "ends going north"
    assert left[-1].x == pytest.approx(0.5 * W, abs=0.05), "in the inner northbound lane"
    assert right[-1].y < -50 and right[-1].y < right[-2].y, "ends going south"
    assert right[-1].x == pytest.approx(-1.5 * W, abs=0.05), "in the outer southbound lane"
    assert through[-1].x < -50 and through[-1].y == pytest.approx(1.5 * W, abs=0.05)
    for script in (left, right, through):
        assert all(b.t >= a.t for a, b in itertools.pairwise(script))
    # The files hold the same paths, in the format beamngpy's own reader takes.
    from beamngpy import Vehicle

    reader = Vehicle("reader", model="etk800")
    for vid in ("V1", "V2", "V3"):
        path = next(f for f in err.files if f.name == f"{vid}.json")
        nodes = reader.ai.import_script_ai_file(path)
        assert [(n["x"], n["y"], n["t"]) for n in nodes] == [(w.x, w.y, w.t) for w in plan.actor(vid).script]


def test_reported_pair_reaches_conflict_point_together(tmp_path: Path) -> None:
    """The vehicles the report says collided are at their routes' crossing at the same time; seeds vary the placement, a seed repeats it."""
    scenario = SCENARIOS["Intersection"]
    plans = [_plan(_run(scenario, tmp_path / f"s{seed}", seed=seed)) for seed in (0, 1, 0)]
    for plan in plans:
        v1, v2 = plan.actor("V1"), plan.actor("V2")
        assert math.dist(v1.meet_point, v2.meet_point) < 1.0
        t = v1.meet_time_s
        assert math.dist(_at(v1.script, t), _at(v2.script, t)) < 3.0
        assert math.dist(v1.position[:2], v2.position[:2]) > 30
    assert plans[0].actor("V1").position != plans[1].actor("V1").position
    assert plans[0] == plans[2].model_copy(update={"run_id": plans[0].run_id})


def test_rear_end_merge_and_wrong_way_timing(tmp_path: Path) -> None:
    """A stopped leader waits where the follower reaches it; an on-ramp vehicle meets the main-road one in lane 1; a wrong-way driver meets the oncoming one in its lane."""
    rear = _plan(_run(SCENARIOS["Straight"], tmp_path / "rear"))
    v1, v2 = rear.actor("V1"), rear.actor("V2")
    stop = v2.script[-1]
    assert (v2.script[-2].x, v2.script[-2].y) == (stop.x, stop.y), "the leader stands still at the end"
    assert v2.script[-2].t < v1.meet_time_s - 1
    assert math.dist(_at(v1.script, v1.meet_time_s), (stop.x, stop.y)) < 2.0
    merge = _plan(_run(SCENARIOS["Merge"], tmp_path / "merge"))
    main, ramp = merge.actor("V1"), merge.actor("V2")
    lane1 = -2.5 * W  # lane 1 of three eastbound
    assert ramp.script[-1].y == pytest.approx(lane1, abs=0.05) and ramp.position[1] < lane1 - W
    assert math.dist(_at(main.script, ramp.meet_time_s), _at(ramp.script, ramp.meet_time_s)) < 3.0
    wrong = _plan(_run(SCENARIOS["Curve"], tmp_path / "wrong"))
    w1, w2 = wrong.actor("V1"), wrong.actor("V2")
    main_nodes = next(r for r in wrong.roads if r.id == "main").nodes
    for actor in (w1, w2):
        start = actor.script[0]
        assert _right_of(main_nodes, start.x, start.y, actor.heading) == pytest.approx(W / 2, abs=0.2), actor.id
    crossed = _at(w1.script, w1.meet_time_s)
    assert _right_of(main_nodes, crossed[0], crossed[1], w1.heading) < 0, "V1 is on the other side at the meeting"
    assert math.dist(_at(w1.script, w1.meet_time_s), _at(w2.script, w1.meet_time_s)) < 3.0


def test_unavailable_error_names_beamng_and_files(tmp_path: Path) -> None:
    """Without a configured BeamNG.tech the run raises an environment error that says BeamNG.tech is needed, how to configure it and where the files are."""
    err = _run(SCENARIOS["Straight"], tmp_path)
    assert isinstance(err, DrivemtError) and not isinstance(err, BadInputError)
    text = str(err)
    for needle in (
        "BeamNG.tech is needed",
        "no BeamNG.tech install is configured",
        "BNG_HOME",
        "BNG_HOST",
        "25252",
        str(err.files_dir),
    ):
        assert needle in text
    assert err.case_id == "T1" and err.run_id == "V1-idm-v0"
    assert len(err.files) == 6 and all(f.is_file() for f in err.files)
    clone = pickle.loads(pickle.dumps(err))  # it crosses process boundaries with its data
    assert (str(clone), clone.files, clone.files_dir) == (text, err.files, err.files_dir)
    assert isinstance(BeamNGSimulator(), Simulator)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_refuses_cleanly_when_host_unreachable(tmp_path: Path) -> None:
    """A configured host with nothing listening gives the unavailable error quickly, naming host and port."""
    port = _closed_port()
    started = time.perf_counter()
    err = _run(SCENARIOS["Straight"], tmp_path, host="127.0.0.1", port=port, connect_timeout_s=0.5)
    assert time.perf_counter() - started < 10
    assert f"127.0.0.1:{port}" in str(err) and err.files


def test_listener_that_is_not_beamng_is_unavailable(tmp_path: Path) -> None:
    """Something that accepts connections but does not speak BeamNGpy's protocol is reported as not answering."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = int(server.getsockname()[1])

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        err = _run(SCENARIOS["Straight"], tmp_path, host="127.0.0.1", port=port, socket_timeout_s=2)
    finally:
        server.close()
    assert f"BeamNG.tech at 127.0.0.1:{port} did not answer" in str(err) and err.files


def test_home_without_binary_is_unavailable(tmp_path: Path) -> None:
    """A home folder without the game's binary, and nothing listening, is reported as such rather than launched."""
    home = tmp_path / "BeamNG.tech"
    home.mkdir()
    err = _run(SCENARIOS["Straight"], tmp_path / "out", home=home, port=_closed_port(), connect_timeout_s=0.5)
    assert "no BeamNG.tech binary" in str(err) and str(home) in str(err)


def test_scenario_it_cannot_build(tmp_path: Path) -> None:
    """An ego that is not an actor, a MetaDrive-only policy or a spec of another case is bad input, named, with nothing written."""
    scenario = SCENARIOS["Intersection"]
    sim = BeamNGSimulator()
    bad = [
        (RunSpec(case_id="T1", ego_id="V7"), "V7"),
        (RunSpec(case_id="T1", ego_id="V1", policy="ppo"), "MetaDrive"),
        (RunSpec(case_id="other", ego_id="V1"), "other"),
    ]
    for spec, needle in bad:
        with pytest.raises(BeamNGScenarioError) as info:
            sim.run(scenario, spec, out_dir=tmp_path)
        assert isinstance(info.value, BadInputError) and needle in str(info.value) and "T1" in str(info.value)
        assert str(pickle.loads(pickle.dumps(info.value))) == str(info.value)
    assert not any(tmp_path.iterdir())


def test_settings_from_env() -> None:
    """The conventional BNG_* variables fill the settings; a bad value names its variable."""
    base = BeamNGSettings(level="gridmap_v2")
    s = beamng_settings_from_env({"BNG_HOME": "/opt/BeamNG.tech", "BNG_PORT": "64256", "OTHER": "x"}, base)
    assert s.home == Path("/opt/BeamNG.tech") and s.port == 64256 and s.level == "gridmap_v2" and s.configured
    assert s.host is None and s.effective_host == "localhost"
    assert not beamng_settings_from_env({}).configured
    with pytest.raises(BeamNGConfigError, match="BNG_PORT"):
        beamng_settings_from_env({"BNG_PORT": "not-a-port"})


def test_collision_monitor_names_both_vehicles() -> None:
    """A damage jump names the nearest vehicle within contact distance (else an object), once per pair; a first sample only sets the baseline."""
    mon = CollisionMonitor(damage_threshold=10, contact_distance_m=8)

    def poll(t: float, **dmg: tuple[float, float, float]) -> list[Any]:
        return mon.update(
            t, {v: VehicleSample(x=x, y=0, heading=0, speed=sp, damage=d) for v, (x, sp, d) in dmg.items()}
        )

    assert poll(0.1, V1=(0, 10, 50), V2=(30, 5, 0), V3=(100, 0, 0)) == []
    (hit,) = poll(0.2, V1=(0, 10, 50), V2=(4, 5, 400), V3=(100, 0, 0))
    assert (hit.a, hit.b, hit.t, hit.speed_a_mps, hit.speed_b_mps, hit.x) == ("V2", "V1", 0.2, 5, 10, 2)
    assert poll(0.3, V1=(0, 0, 900), V2=(4, 0, 900), V3=(100, 0, 0)) == []  # the same pair again
    (wall,) = poll(0.4, V1=(0, 0, 900), V2=(4, 0, 900), V3=(100, 0, 30))
    assert (wall.a, wall.b) == ("V3", "object")
    assert [c.pair() for c in mon.collisions] == [frozenset({"V1", "V2"}), frozenset({"V3", "object"})]


@st.composite
def _random_scenario(draw: st.DrawFn) -> Scenario:
    road_type = draw(st.sampled_from(ROAD_TYPES))
    lanes, ways = draw(st.integers(1, 6)), draw(st.sampled_from([1, 2]))
    road: dict[str, Any] = {"road_type": road_type, "lanes": lanes, "ways": ways}
    if road_type in ("T-intersection", "Merge"):
        road.update(branch_lanes=draw(st.integers(1, 3)), branch_ways=draw(st.sampled_from([1, 2])))
        road["stem_direction"] = draw(st.sampled_from([None, "N", "S", "E", "W"]))
    else:
        road["centre_turn_lane"] = draw(st.booleans())
    n = draw(st.integers(1, 4))
    actors = [
        {
            "id": f"V{i + 1}",
            "body_type": draw(st.sampled_from(BODY_TYPES)),
            "initial_position": draw(st.sampled_from(DIRECTIONS)),
            "lane": draw(st.integers(1, 4)),
            "actions": draw(st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=2, unique=True)),
            "speed_limit_mph": draw(st.sampled_from([15, 30, 45, 70])),
        }
        for i in range(n)
    ]
    ids = [a["id"] for a in actors]
    pairs = (
        draw(st.lists(st.lists(st.sampled_from(ids), min_size=2, max_size=2, unique=True), max_size=2)) if n > 1 else []
    )
    return Scenario.from_data({"case_id": "H", "road_network": road, "actors": actors, "collisions": pairs})


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=_random_scenario(), seed=st.integers(0, 1000))
def test_any_valid_scenario_plans(scenario: Scenario, seed: int) -> None:
    """Every valid DSL scenario plans: one vehicle per actor, times that never run backwards, lane-mates apart at the start."""
    plan = plan_scene(scenario, RunSpec(case_id="H", ego_id="V1", seed=seed), BeamNGSettings(), duration_s=20)
    assert [a.id for a in plan.actors] == [a.id for a in scenario.actors]
    for actor in plan.actors:
        assert len(actor.script) >= 2 and actor.script[0].t == 0
        assert all(b.t >= a.t for a, b in itertools.pairwise(actor.script))
        assert (actor.script[0].x, actor.script[0].y) == actor.position[:2]
    for i, a in enumerate(plan.actors):
        for b in plan.actors[i + 1 :]:
            if (a.entry, a.lane) == (b.entry, b.lane):
                assert math.dist(a.position[:2], b.position[:2]) > 5, (a.id, b.id)
