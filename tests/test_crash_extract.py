"""The scenario DSL, the offline crash extractor and the SAFE-style scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import FIXTURES
from tools.crash.extract import OfflineCrashExtractor
from tools.crash.files import CrashReport, NotACrashReportError, find_cases, read_case
from tools.crash.models import Actor, RoadNetwork, Scenario, ScenarioError
from tools.crash.scoring import CrashScoreReport, score_case

CASES = FIXTURES / "crashes"
SHARED_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "crashes" / "dev"


@pytest.fixture(scope="module")
def extractor() -> OfflineCrashExtractor:
    return OfflineCrashExtractor()


def extract(extractor: OfflineCrashExtractor, text: str, case_id: str = "t") -> Scenario:
    return extractor.extract(CrashReport(case_id=case_id, summary=text))


def t_shape(s: Scenario) -> tuple[str, int, int]:
    """A T's road type with its main and branch lane counts, as SAFE's DSL gives them."""
    net = s.to_safe()["Road network"]
    return s.road_network.road_type, net["No_lanes_main_road"], net["No_lanes_branch_road"]


def test_dsl_round_trips_and_names_bad_fields() -> None:
    """A scenario survives YAML and JSON; a wrong value is reported with its field path."""
    s = Scenario(
        case_id="c1",
        road_network=RoadNetwork(road_type="T-intersection", main_lanes=4, branch_lanes=2),
        actors=[Actor(id="V1", body_type="Semi Truck"), Actor(id="V2", initial_position="S2N", actions=["Turn left"])],
        collisions=[("V1", "V2")],
    )
    assert Scenario.from_yaml(s.to_yaml()) == s and Scenario.from_yaml(s.to_json()) == s
    assert s.actor("V1").vehicle_class == "Truck" and s.to_safe()["Road network"]["No_lanes_main_road"] == 4
    bad = s.to_dict()
    bad["actors"][1]["initial_position"] = "sideways"
    bad["env"] = {"weather": "Hail", "time": "Daytime"}
    with pytest.raises(ScenarioError, match=r"actors\.1\.initial_position") as err:
        Scenario.from_data(bad)
    assert "env.weather" in str(err.value)
    with pytest.raises(ScenarioError, match="not an actor"):
        Scenario.from_data({**s.to_dict(), "collisions": [["V1", "V9"]]})


def test_fixture_cases_match_their_gold(extractor: OfflineCrashExtractor) -> None:
    """The bundled merge, T-intersection and three-vehicle cases come out as their gold files say."""
    report = CrashScoreReport()
    for folder in find_cases(CASES):
        gold = yaml.safe_load((folder / "gold.yaml").read_text())
        report.cases.append(score_case(extractor.extract(read_case(folder)), gold, case_id=folder.name))
    assert report.as_dict() == {"n": 3, "road_network": 1.0, "actors": 1.0, "env": 1.0, "overall": 1.0}, [
        c.differences for c in report.cases
    ]


def test_merge_case_details(extractor: OfflineCrashExtractor) -> None:
    """The ramp vehicle is on the on-ramp, the tractor is a truck on the main road, and they collided."""
    s = extractor.extract(read_case(CASES / "108909"))
    assert s.road_network.main_lanes == 6 and s.road_network.branch_lanes == 1
    assert (s.actor("V1").initial_position, s.actor("V2").initial_position) == ("On-ramp", "Main road")
    assert s.actor("V2").body_type == "Semi Truck" and s.actor("V2").vehicle_class == "Truck"
    assert set(s.collisions[0]) == {"V1", "V2"}
    assert (s.env.time, s.env.weather) == ("Daytime", "Rainy")


@pytest.mark.skipif(not SHARED_DEV.is_dir(), reason="../shared/data is not beside this checkout")
def test_dev_set_reaches_the_targets(extractor: OfflineCrashExtractor) -> None:
    """On the 15 dev cases: road network and env >= 90%, actors >= 85%, overall >= 75%."""
    report = CrashScoreReport()
    for folder in find_cases(SHARED_DEV):
        gold = yaml.safe_load((folder / "gold.yaml").read_text())
        report.cases.append(score_case(extractor.extract(read_case(folder)), gold, case_id=folder.name))
    d = report.as_dict()
    assert d["n"] == 15
    assert d["road_network"] >= 0.9 and d["env"] >= 0.9 and d["actors"] >= 0.85 and d["overall"] >= 0.75, d


def test_unseen_narratives(extractor: OfflineCrashExtractor) -> None:
    """General knowledge: a curve, a motorcycle, a bus, a model named without its body, one-way roads."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2006 Harley-Davidson FLHT was traveling west on a two-lane, two-way rural road and "
        "was negotiating a left curve. Vehicle two (V2), a 2004 Toyota Sienna was traveling east in the eastbound "
        "lane. It was dark and foggy. The driver of V2 drifted left of center and the front of V2 struck V1.",
    )
    assert s.road_network.road_type == "Curve" and (s.road_network.lanes, s.road_network.ways) == (2, 2)
    assert s.actor("V1").body_type == "Motorcycle" and s.actor("V2").body_type == "Minivan"
    assert s.actor("V1").initial_position == "E2W" and "Enter wrong way" in s.actor("V2").actions
    assert (s.env.time, s.env.weather) == ("Nighttime", "Foggy") and s.collisions == [("V2", "V1")]

    s = extract(
        extractor,
        "Vehicle one (V1), a 2010 Ford F-150 was traveling south on a three-lane, one-way street. Vehicle two (V2), "
        "a 2008 Blue Bird school bus was traveling east and was approaching the intersection. V1 attempted to turn "
        "right. The front of V2 struck the left side of V1. It was daylight and snowing.",
    )
    assert s.road_network.road_type == "Intersection" and (s.road_network.lanes, s.road_network.ways) == (3, 1)
    assert s.actor("V1").body_type == "Pickup" and s.actor("V2").vehicle_class == "Truck"
    assert s.actor("V1").actions == ["Turn right"] and s.env.weather == "Snowy"


def test_crossing_traffic_on_a_straight_road_is_an_intersection(extractor: OfflineCrashExtractor) -> None:
    """Meta self-check: vehicles on crossing axes with no junction named are placed at an intersection."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2001 Honda Civic, 4-door sedan was traveling north on a two-lane road. Vehicle two "
        "(V2), a 2003 Ford Explorer was traveling west. The front of V1 struck the right side of V2.",
    )
    assert s.road_network.road_type == "Intersection" and any("crossing roads" in n for n in s.notes)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("The annual report is due in March.", "no vehicles"),
        ("x" * 70_000, "KB"),
        (" ".join(f"V{i} struck the rear of V{i + 1}." for i in range(1, 13)), "names 13 vehicles"),
    ],
    ids=["empty", "blank", "unrelated", "oversized", "thirteen vehicles"],
)
def test_bad_reports_get_clear_errors(extractor: OfflineCrashExtractor, text: str, match: str) -> None:
    """Empty, unrelated and oversized summaries, and one naming more vehicles than a scenario holds, raise a bad-input
    error that says why (the last was a bare ValidationError, retried as if it could pass)."""
    with pytest.raises(NotACrashReportError, match=match):
        extract(extractor, text)


def test_unreadable_case_folder(tmp_path: Path) -> None:
    """A folder without a readable summary is a clear error, not a crash."""
    (tmp_path / "c1").mkdir()
    (tmp_path / "c1" / "summary.txt").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(NotACrashReportError, match="cannot read"):
        read_case(tmp_path / "c1")
    with pytest.raises(NotACrashReportError, match="no case folder"):
        find_cases(tmp_path / "c1" / "nothing")


@pytest.mark.skipif(not SHARED_DEV.is_dir(), reason="../shared/data is not beside this checkout")
def test_eval_crashes_prints_leave_one_out_and_constant_beside_dev() -> None:
    """``drivemt eval crashes --json`` on the dev cases: the leave-one-out row (phrases only the case's own
    summary holds removed) sits between the constant answer and the in-sample figure, and the constant answer
    (most common gold of each part) is far below both."""
    from typer.testing import CliRunner

    from runners.cli import app

    result = CliRunner().invoke(app, ["eval", "crashes", str(SHARED_DEV), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output.strip().splitlines()[-1])
    loo, strict, constant = figures["leave-one-out"], figures["leave-one-out, strict"], figures["constant"]
    for part in ("road_network", "actors", "env", "overall"):
        assert constant[part] <= strict[part] <= loo[part] <= figures[part], (part, figures)
    assert strict["overall"] >= 0.6 and constant["overall"] <= 0.2, figures


def test_leave_one_out_keeps_only_the_forms_of_a_label_word() -> None:
    """'snowing' is the label Snowy's own word and no case taught it; 'sleet' and 'dark' are wording a case may
    have taught, so leave-one-out drops them where only that case holds them."""
    from tools.crash.evaluation import label_forms

    forms = label_forms(
        {
            "weather_cues": {"Snowy": ["snow", "snowing", "sleet"], "Foggy": ["foggy", "mist"], "Cloudy": ["clouds"]},
            "time_cues": {"Daytime": ["daylight"], "Nighttime": ["dark", "night-time"]},
            "road_type_cues": {"T-intersection": ["t-intersection", "t-junction"], "Curve": ["curve", "bend"]},
        }
    )
    assert forms == {"snow", "snowing", "foggy", "clouds", "daylight", "night-time", "t-intersection", "curve"}


def test_weather_words_match_their_inflections(extractor: OfflineCrashExtractor) -> None:
    """A weather word the lexicon lists in its base form matches its other forms ("rained", "sleeted")."""
    base = "Vehicle one (V1), a 2004 Toyota Camry was traveling west on a two-lane, two-way road. "
    end = " The front of V1 struck a tree."
    assert extract(extractor, base + "It was daylight and it had rained." + end).env.weather == "Rainy"
    assert extract(extractor, base + "It was daylight and it sleeted." + end).env.weather == "Snowy"
    assert extract(extractor, base + "It was dark and the sky was overcast." + end).env.time == "Nighttime"


@pytest.mark.parametrize(
    ("road", "lanes"),
    [
        ("a divided roadway with three lanes in each direction", 6),
        ("a divided highway with two travel lanes each way", 4),
        ("a roadway with two northbound lanes and two southbound lanes", 4),
        # uneven directions, one of them explained in brackets before the other is counted
        ("a hill road with two northbound lanes (a through lane and a truck lane) and one southbound lane", 3),
        ("a four-lane, divided highway with a grass median", 4),
        # a turn lane added to the through lanes of each direction
        ("a boulevard that has two through lanes and a separate left-turn lane for each direction", 6),
        ("a divided arterial with three travel lanes plus an exclusive right-turn lane in each direction", 8),
        # per direction, and the direction after the lanes
        ("a divided freeway with three travel lanes per direction", 6),
        ("a rural road. It has one lane northbound and one lane southbound", 2),
        ("a divided highway that carries two lanes northbound and two lanes southbound", 4),
        ("a boulevard with two through lanes eastbound and two through lanes westbound", 4),
    ],
)
def test_lanes_counted_per_direction(extractor: OfflineCrashExtractor, road: str, lanes: int) -> None:
    """NHTSA narratives give a road's lanes as a total or per direction; either way SAFE counts them all."""
    text = (
        f"Vehicle one (V1), a 2015 Toyota Corolla, was traveling north on {road}. Vehicle two (V2), a 2010 "
        "Chevrolet Malibu, was stopped ahead in the same lane. It was daylight. The front of V1 struck the back of V2."
    )
    net = extract(extractor, text).to_safe()["Road network"]
    assert (net["No_lanes"], net["No_ways"]) == (lanes, 2)


def test_the_light_condition_beats_the_clock_and_a_negated_weather_word_names_none(
    extractor: OfflineCrashExtractor,
) -> None:
    """'early morning hours' with 'dark' is a night; 'it was not raining' names no rain."""
    base = "Vehicle one (V1), a 2004 Toyota Camry was traveling west on a two-lane, two-way road. "
    end = " The front of V1 struck a tree."
    night = extract(extractor, base + "The crash happened in the early morning hours and it was dark." + end)
    assert night.env.time == "Nighttime"
    dry = extract(extractor, base + "It was daylight and it was not raining." + end)
    assert (dry.env.time, dry.env.weather) == ("Daytime", "Not mentioned")
    wet = extract(extractor, base + "It was daylight and it was raining." + end)
    assert wet.env.weather == "Rainy"


def test_a_road_that_curved_is_a_curve(extractor: OfflineCrashExtractor) -> None:
    """'a road that curved to the left' is a curve, as 'a curve' and 'curving' are."""
    text = (
        "Vehicle one (V1), a 2012 Honda Civic, was traveling east on a two-lane, two-way road that curved to the "
        "left. Vehicle two (V2), a 2010 Ford Focus, was traveling west. It was daylight. V1 crossed the centerline "
        "and struck V2."
    )
    assert extract(extractor, text).road_network.road_type == "Curve"


@pytest.mark.parametrize("style", ["Vehicle 1", "Vehicle #1", "Vehicle No. 1", "vehicle one", "Unit 1"])
def test_vehicles_named_by_number_are_read_as_v_numbers(extractor: OfflineCrashExtractor, style: str) -> None:
    """'Vehicle 1' / 'Vehicle #1' / 'vehicle one' narratives read like V1 ones: the truck is V1's, and 'a one-vehicle
    crash' or 'one-way' name no vehicle."""
    first, second = style, style.replace("1", "2").replace("one", "two")
    text = (
        f"{first}, a 2006 Kenworth T800 dump truck, was eastbound on a curving two-lane, one-way rural road. "
        f"{second}, a 2013 Subaru Outback, was westbound. It was daylight. {first} crossed the center line and "
        f"struck {second} head-on. It was not a one-vehicle crash."
    )
    s = extract(extractor, text)
    assert [a.id for a in s.actors] == ["V1", "V2"]
    assert s.actor("V1").vehicle_class == "Truck" and s.actor("V2").vehicle_class == "Car"
    assert ("V1", "V2") in s.collisions or ("V2", "V1") in s.collisions


def test_dawn_dusk_and_sky_states_outside_safes_vocabulary(extractor: OfflineCrashExtractor) -> None:
    """CIREN's dawn and dusk get a time to render by (day, night); in SAFE's layout an overcast or foggy sky is
    Cloudy and wind names no weather (SAFE's gold knows Sunny, Cloudy, Rainy, Snowy and Not mentioned)."""
    base = "Vehicle one (V1), a 2004 Toyota Camry was traveling west on a two-lane, two-way road. "
    end = " The front of V1 struck a tree."
    dusk = extract(extractor, base + "It was dusk and the sky was overcast." + end)
    assert (dusk.env.time, dusk.env.weather) == ("Nighttime", "Overcast")
    assert dusk.to_safe()["Env"] == {"Time": "Nighttime", "Weather": "Cloudy"}
    dawn = extract(extractor, base + "It was dawn and foggy." + end)
    assert dawn.to_safe()["Env"] == {"Time": "Daytime", "Weather": "Cloudy"}
    windy = extract(extractor, base + "It was daylight and windy." + end)
    assert windy.env.weather == "Windy" and windy.to_safe()["Env"]["Weather"] == "Not mentioned"
    # A sky named with the wind is the weather (the wind has none to render).
    gusts = extract(extractor, base + "It was a bright, sunny day with strong gusty winds from the west." + end)
    assert gusts.to_safe()["Env"] == {"Time": "Daytime", "Weather": "Sunny"}
    squall = extract(extractor, base + "The sky was cloudy and it was windy." + end)
    assert squall.to_safe()["Env"]["Weather"] == "Cloudy"
    # ... but a vehicle that "cleared" something names no clear sky.
    crest = extract(extractor, base + "It was daylight and windy as V1 cleared the crest of a hill." + end)
    assert crest.to_safe()["Env"]["Weather"] == "Not mentioned"
    assert extract(extractor, base + "It was daylight and clear." + end).to_safe()["Env"]["Weather"] == "Sunny"
    sun = extract(extractor, base + "The sun was shining and the road was dry." + end)
    assert sun.to_safe()["Env"] == {"Time": "Daytime", "Weather": "Sunny"}


def test_a_compass_word_that_names_a_place_gives_no_heading(extractor: OfflineCrashExtractor) -> None:
    """'exiting a lot on the north side of the road' says where V2 was, not that it travelled north: no crossing
    axes, so the road stays straight (the word still reads as a heading where it is one)."""
    text = (
        "Vehicle one (V1), a 2004 Dodge Ram pickup, was traveling west on a five-lane, two-way road with a center "
        "turn lane. Vehicle two (V2), a 2011 Toyota Prius, was exiting a parking lot on the north side of the road. "
        "It was daylight. V2 pulled into the path of V1 and the front of V1 struck the left side of V2."
    )
    s = extract(extractor, text)
    assert s.road_network.road_type == "Straight" and not any("crossing roads" in n for n in s.notes)
    assert s.actor("V1").initial_position == "E2W"
    heading = extract(extractor, text.replace("on the north side of the road", "and turned north"))
    assert heading.road_network.road_type == "Intersection"


def test_a_ramp_that_is_the_only_road_gives_the_lane_count(extractor: OfflineCrashExtractor) -> None:
    """On 'a one-lane, one-way exit ramp' with no other road described, the ramp's counts are the road's."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2004 Toyota Camry, was traveling north on a one-lane, one-way exit ramp. Vehicle two "
        "(V2), a 2005 Honda Civic, was stopped ahead of V1. It was daylight. The front of V1 struck the back of V2.",
    )
    assert (s.road_network.lanes, s.road_network.ways) == (1, 1)
    assert not any("no lane count" in n for n in s.notes)


@pytest.mark.parametrize(
    ("vehicle", "body", "klass"),
    [
        ("2007 Freightliner M2 box truck", "Straight truck", "Truck"),
        ("2003 Isuzu NPR", "Straight truck", "Truck"),
        ("2005 Ford F-650 flatbed", "Straight truck", "Truck"),
        # a tow truck named by its body
        ("2019 Ford F-550 rollback wrecker", "Straight truck", "Truck"),
        ("2006 Kenworth", "Semi Truck", "Truck"),
        ("2012 Ram ProMaster", "Van", "Car"),
        ("2006 Ford F-350 dually pickup", "Pickup", "Car"),
    ],
)
def test_medium_duty_trucks_and_a_body_named_outright(
    extractor: OfflineCrashExtractor, vehicle: str, body: str, klass: str
) -> None:
    """Medium-duty models are trucks without the word; a body named outright beats what the make suggests
    (a Freightliner is not always a tractor), while a make that builds only tractors still says more than 'truck'."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2004 Toyota Camry, was traveling north on a two-lane, two-way road. Vehicle two (V2), "
        f"a {vehicle}, was traveling south. It was daylight. The front of V1 struck the front of V2.",
    )
    assert (s.actor("V2").body_type, s.actor("V2").vehicle_class) == (body, klass)


@pytest.mark.parametrize(
    ("when", "time"),
    [
        ("at 2130 hours", "Nighttime"),
        ("at approximately 9:30 p.m.", "Nighttime"),
        ("at 1415 hours", "Daytime"),
        ("around 10 AM", "Daytime"),
        ("at 1830 hours", "Not mentioned"),
        ("at 1415 hours; it was dark", "Nighttime"),
        ("on a weekday. The impact caused V1 to rotate; it was transported at 2130 hours", "Not mentioned"),
        # Near dusk or dawn the named month decides (its sunrise and sunset, mid-latitude United States).
        ("at 1730 hours on December 12", "Nighttime"),
        ("at about 5:45 p.m. on a December evening", "Nighttime"),
        ("on June 24 at 1930 hours", "Daytime"),
        ("at 0630 hours on a July morning", "Daytime"),
        ("at 0630 hours on January 9", "Nighttime"),
        # A 24-hour clock with a colon, or with "hrs" or "local time" after it.
        ("at 03:20 local time", "Nighttime"),
        ("at about 14:45", "Daytime"),
        ("at 2315 hrs", "Nighttime"),
        ("at 1010 local time", "Daytime"),
        # "9:30" with no a.m. or p.m. could be either.
        ("at 9:30", "Not mentioned"),
    ],
)
def test_a_clock_time_gives_day_or_night_when_no_light_condition_does(
    extractor: OfflineCrashExtractor, when: str, time: str
) -> None:
    """Hours clearly by day or by night are read as such; the hours around dusk and dawn are read against the month the
    narrative names (local clock time), and stay open without one; a named light condition beats the clock."""
    s = extract(
        extractor,
        f"The crash occurred {when}. Vehicle one (V1), a 2004 Toyota Camry, was traveling north on a two-lane, "
        "two-way road. The front of V1 struck a tree.",
    )
    assert s.env.time == time


@pytest.mark.parametrize(
    ("road", "road_type"),
    [
        ("through a roundabout", "Intersection"),
        ("and the road ended at its intersection with an east/west highway", "T-intersection"),
        ("approaching a Y-intersection with a county road", "T-intersection"),
        ("and was negotiating a sharp left-hand curve", "Curve"),
        # a junction said to be away or absent is no place of the crash
        ("mid-block, well away from any intersection", "Straight"),
        ("where there is no intersection for half a mile", "Straight"),
    ],
)
def test_junction_words_beyond_the_dev_cases(extractor: OfflineCrashExtractor, road: str, road_type: str) -> None:
    """SAFE's road types have no roundabout (an intersection); a road that ends at another, or a Y, meets it on
    three legs (a T-intersection)."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2004 Toyota Camry, was traveling north on a two-lane road {road}. Vehicle two (V2), a "
        "2005 Honda Civic, was traveling north ahead of V1. It was daylight. The front of V1 struck the back of V2.",
    )
    assert s.road_network.road_type == road_type


@pytest.mark.parametrize(
    ("first", "second", "main", "branch"),
    [
        # The road described first ends at the second: it is the branch.
        (
            "a two-lane, two-way road that terminates at a five-lane, two-way highway",
            "the highway",
            (5, 2),
            (2, 2),
        ),
        (
            "a two-lane, two-way road and was approaching a three-leg intersection where the road terminated at a "
            "four-lane, two-way highway",
            "the highway",
            (4, 2),
            (2, 2),
        ),
        # The road described second ends at the first: the order of mention already holds.
        (
            "a four-lane, two-way urban road",
            "a two-lane, one-way residential street that ends at the north-south road",
            (4, 2),
            (2, 1),
        ),
        # the first road forms the T with the second: the first is the stem, though both have two lanes
        (
            "a two-lane, one-way connector that widened near its stop line and formed a T-intersection with a "
            "two-lane, two-way county highway",
            "the highway",
            (2, 2),
            (2, 1),
        ),
        (
            "a two-lane, two-way highway",
            "a two-lane, one-way frontage road that forms a T-junction with the highway",
            (2, 2),
            (2, 1),
        ),
        # where the lane counts tell, the wider road goes through, whichever road the phrase is said of
        (
            "a two-lane, two-way county road",
            "a four-lane, two-way state highway. The county road forms a T-intersection with the highway",
            (4, 2),
            (2, 2),
        ),
        (
            "a two-lane, two-way side street",
            "Main Street, a four-lane, two-way arterial that formed a T-intersection with the side street",
            (4, 2),
            (2, 2),
        ),
    ],
)
def test_a_road_that_ends_at_another_is_the_branch_of_a_t(
    extractor: OfflineCrashExtractor,
    first: str,
    second: str,
    main: tuple[int, int],
    branch: tuple[int, int],
) -> None:
    """'a road that terminates at / ends at' another makes a T-intersection (with or without 'that', in any tense),
    and that road is its branch, whichever the narrative described first. 'X, which formed a T-intersection with Y':
    X is the branch too, where the lane counts do not tell."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2004 Toyota Camry, was traveling south on {first}. Vehicle two (V2), a 2005 Honda "
        f"Civic, was traveling east on {second}. It was daylight. The front of V2 struck the left side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_ways_main_road"]) == main
    assert (net["No_lanes_branch_road"], net["No_ways_branch_road"]) == branch


@pytest.mark.parametrize(
    ("intro", "ends", "main", "branch"),
    [
        # V1 is put on the two-lane road, though the four-lane road it meets is named nearer the end.
        (
            "Vehicle one (V1), a 2007 Saturn Ion, was stopped facing north in the northbound lane of a two-lane, "
            "two-way residential road at its T-intersection with a four-lane, two-way suburban road.",
            "V1's road ended at the intersection.",
            (4, 2),
            (2, 2),
        ),
        (
            "Vehicle one (V1), a 2007 Saturn Ion, was traveling south, approaching its T-intersection with a "
            "four-lane, two-way divided highway, on a two-lane, two-way rural county road.",
            "V1's roadway, a county road, terminated at the highway.",
            (4, 2),
            (2, 2),
        ),
        (
            "On a two-lane, two-way residential road, Vehicle one (V1), a 2007 Saturn Ion, was stopped at its "
            "T-intersection with a four-lane, two-way suburban road.",
            "V1's road ended at the intersection.",
            (4, 2),
            (2, 2),
        ),
        # V2 is put on the two-lane road, described before the four-lane road V1 is on.
        (
            "Vehicle two (V2), a 2003 GMC Yukon, was stopped in the northbound lane of a two-lane, two-way "
            "residential road. Vehicle one (V1), a 2007 Saturn Ion, was traveling west in the right lane of a "
            "four-lane, two-way suburban road.",
            "V2's road ended at the suburban road.",
            (4, 2),
            (2, 2),
        ),
        # (where the vehicle's sentence puts it on no road, the road named last before the ending stays the branch)
        (
            "This crash involved Vehicle one (V1), a 2007 Saturn Ion, at the T-intersection of a four-lane, two-way "
            "highway and a two-lane, two-way county road. V1 was northbound on the county road.",
            "V1's road ended at the highway.",
            (4, 2),
            (2, 2),
        ),
    ],
)
def test_a_vehicles_own_road_that_ends_is_the_road_it_travels_on(
    extractor: OfflineCrashExtractor, intro: str, ends: str, main: tuple[int, int], branch: tuple[int, int]
) -> None:
    """'V1's road ended at the intersection' names the road the narrative put V1 on where it introduced it ('on a
    two-lane road', 'in the northbound lane of a two-lane road'), not the road named just before the words."""
    s = extract(extractor, f"{intro} {ends} It was daylight. The front of V2 struck the left side of V1.")
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_ways_main_road"]) == main, s.notes
    assert (net["No_lanes_branch_road"], net["No_ways_branch_road"]) == branch, s.notes


def test_times_and_weather_after_the_crash_or_before_it_are_not_the_crashs(extractor: OfflineCrashExtractor) -> None:
    """'the following morning' in the hospital's part is no daytime; 'wet from an earlier rain' is no rain at the
    crash (the road shows it, the sky need not); sun glare is a sunny day."""
    base = "Vehicle one (V1), a 2004 Toyota Camry, was traveling west on a two-lane, two-way road. "
    later = (
        " The front of V1 struck a tree. V1 came to rest in the ditch. The driver was transported to a trauma center"
        " and underwent surgery the following morning."
    )
    s = extract(extractor, base + "The road surface was wet from an earlier rain." + later)
    assert (s.env.time, s.env.weather) == ("Not mentioned", "Not mentioned")
    s = extract(extractor, base + "The crash occurred in the morning and the road surface was dry." + later)
    assert s.env.time == "Daytime"
    s = extract(extractor, base + "The driver said she was blinded by sun glare." + later)
    assert s.to_safe()["Env"] == {"Time": "Daytime", "Weather": "Sunny"}


def test_each_vehicle_takes_its_body_from_its_own_description(extractor: OfflineCrashExtractor) -> None:
    """A vehicle introduced by an appositive ('V2, a 2010 Honda Accord sedan, was ... behind a garbage truck'), in
    a sentence that begins with another vehicle, or as 'Vehicle #3 (V3)' is described by its own words only."""
    s = extract(
        extractor,
        "The case vehicle, a 2018 Nissan Rogue (Vehicle 1), was traveling south on a two-lane road. Vehicle 2, a "
        "2010 Honda Accord sedan, was stopped behind a garbage truck. V3, a 2014 Chevrolet Impala, was northbound, "
        "and V4, a 2016 Mack Anthem tractor pulling a loaded semitrailer, was northbound beside it. Vehicle #5 (V5), "
        "a 2017 Peterbilt 579 tractor, was parked. It was daylight. The front of V1 struck the rear of V2.",
    )
    assert s.to_safe()["Actors"] == {
        "V1_type": "Car",
        "V2_type": "Car",
        "V3_type": "Car",
        "V4_type": "Truck",
        "V5_type": "Truck",
    }


@pytest.mark.parametrize(
    ("road", "lanes", "ways"),
    [
        ("a one-way street with three eastbound travel lanes", 3, 1),
        ("a two-lane road with a center two-way left turn lane", 3, 2),
        ("the left of three eastbound lanes of a divided highway", 6, 2),
        ("a two-way street with four lanes", 4, 2),
        # lanes said to be marked
        ("a one-way street with three marked travel lanes", 3, 1),
        # a lane width in metres with feet after it
        ("a divided highway with two 3.7 m (12 ft) travel lanes in each direction", 4, 2),
        # lanes counted in words, then the centre turn lane
        ("a two-way boulevard with two traffic lanes and a painted center left turn lane", 3, 2),
        ("a two-way arterial that has four through lanes, plus a center two-way left-turn lane", 5, 2),
    ],
)
def test_lanes_counted_in_words_and_a_centre_turn_lane(
    extractor: OfflineCrashExtractor, road: str, lanes: int, ways: int
) -> None:
    """Lanes written as words belong to their road; one direction's lanes of a two-way road are half of them; a
    centre turn lane named after an 'N-lane road' is one more lane (as SAFE's annotators count it)."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2004 Toyota Camry, was traveling east in {road}. Vehicle two (V2), a 2005 Honda "
        "Civic, was ahead of V1. It was daylight. The front of V1 struck the back of V2.",
    )
    net = s.to_safe()["Road network"]
    assert (net["No_lanes"], net["No_ways"]) == (lanes, ways)


def test_an_arterial_is_a_road_and_weather_that_had_ended_is_not_the_crashs(
    extractor: OfflineCrashExtractor,
) -> None:
    """'The street ended at an east-west arterial with two lanes in each direction': the arterial is the main road
    of the T; 'Rain had ended' with an overcast sky is cloudy; 'under clear skies' by day is sunny."""
    s = extract(
        extractor,
        "V1, a 2001 Honda Civic, was northbound on a two-lane, two-way residential street. The street ended at an "
        "east-west arterial with two lanes in each direction. V2, a 2016 Ram 1500 pickup, was eastbound on the "
        "arterial. It was daytime. Rain had ended about an hour earlier; the sky remained overcast. The front of V2 "
        "struck the left side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"]) == (4, 2)
    assert s.to_safe()["Env"] == {"Time": "Daytime", "Weather": "Cloudy"}
    s = extract(
        extractor,
        "V1, a 2001 Honda Civic, was northbound on a two-lane road. The crash occurred at 1420 hours under clear "
        "skies. The front of V1 struck a tree.",
    )
    assert s.to_safe()["Env"] == {"Time": "Daytime", "Weather": "Sunny"}


def test_a_road_forming_a_leg_a_bracketed_place_word_and_a_ramp_that_merges(
    extractor: OfflineCrashExtractor,
) -> None:
    """'a road that forms the north leg of a T-intersection with a four-lane highway' is the T's branch; 'the right
    (west) curb' is a place, not a heading; 'The exit ramp merges into the frontage road' is a merge."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2010 Chevrolet Impala, was stopped facing south on a two-lane, two-way road that forms "
        "the north leg of a T-intersection with a four-lane, two-way highway. Vehicle two (V2), a 2007 Honda Civic, "
        "was traveling west on the highway. It was daylight. The front of V2 struck the left side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"]) == (4, 2)
    s = extract(
        extractor,
        "Vehicle one (V1), a 2014 Toyota Corolla, was traveling south in a three-lane, one-way street. Vehicle two "
        "(V2), a 2006 Buick Lucerne, was parked along the right (west) curb. It was dark. The front of V1 struck V2.",
    )
    assert s.road_network.road_type == "Straight"
    s = extract(
        extractor,
        "Vehicle one (V1), a 2007 Toyota Yaris, was traveling south on a three-lane, one-way frontage road. Vehicle "
        "two (V2), a 2019 Chevrolet Tahoe, was traveling south on a single-lane exit ramp. The exit ramp merges into "
        "the right side of the frontage road. It was daylight. The left side of V2 sideswiped the right side of V1.",
    )
    assert s.road_network.road_type == "Merge"


def test_night_after_the_crash_and_a_fire_apparatus(extractor: OfflineCrashExtractor) -> None:
    """'late that night' in the hospital's part is no night-time crash; a fire apparatus (pumper) is a truck."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2004 Pontiac Vibe, was traveling south on a two-lane, two-way road. Vehicle two (V2), a "
        "2009 Pierce Arrow XT fire apparatus (pumper), was parked across the right lane. The weather was cloudy. The "
        "front of V1 struck the rear of V2. V1 came to rest in the lane. The driver was transported to a trauma "
        "center, where she underwent surgery late that night.",
    )
    assert s.to_safe()["Env"] == {"Time": "Not mentioned", "Weather": "Cloudy"}
    assert s.to_safe()["Actors"]["V2_type"] == "Truck"


def test_a_junction_elsewhere_snow_on_the_road_and_a_street_that_ends(extractor: OfflineCrashExtractor) -> None:
    """'a left turn at the next intersection' and 'an intersection approximately 100 m to the east' are not the
    crash's place; 'covered with packed snow' under a clear sky is no snowfall; 'where the one-way street ends' makes
    a T (a lane that ends is a merge's, not here)."""
    base = "Vehicle one (V1), a 2001 Nissan Sentra, was traveling north in a three-lane, one-way street. "
    end = " It was daylight. The front of V1 struck a pole."
    for where in (
        "V1 moved left to turn at the next intersection.",
        "Traffic was backed up from a signalized intersection approximately 100 m to the east.",
    ):
        assert extract(extractor, base + where + end).road_network.road_type == "Straight"
    s = extract(
        extractor,
        base + "It was daylight and the sky was clear, but the road was covered with packed snow. The front of V1 "
        "struck a pole.",
    )
    assert s.to_safe()["Env"] == {"Time": "Daytime", "Weather": "Sunny"}
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Nissan Altima, was traveling south on a one-lane, one-way street and was "
        "approaching a five-lane, two-way arterial, where the one-way street ends. Vehicle two (V2), a 2010 Hyundai "
        "Sonata, was traveling west on the arterial. It was daylight. The front of V2 struck the left side of V1.",
    )
    assert s.road_network.road_type == "T-intersection"


@pytest.mark.parametrize(
    "where",
    [
        "The only traffic signal on the street stands at an intersection, some 150 m to the west.",
        "Streetlights were present only at the closest intersection to the north.",
    ],
)
def test_a_junction_set_off_by_a_distance_or_called_the_nearest_is_elsewhere(
    extractor: OfflineCrashExtractor, where: str
) -> None:
    """A junction followed by a comma and a distance ("at an intersection, some 150 m to the west"), or named as the
    nearest or closest one, is somewhere other than the crash."""
    text = (
        "Vehicle one (V1), a 2011 Ford Focus, was traveling west on a two-lane, two-way road. "
        + where
        + " Vehicle two (V2), a 2015 Kia Soul, was traveling east. It was daylight. The front of V1 struck the front"
        " of V2."
    )
    assert extract(extractor, text).road_network.road_type == "Straight"


def test_a_junction_followed_by_its_own_size_is_the_crash_place(extractor: OfflineCrashExtractor) -> None:
    """ "the intersection, 30 m across" gives the junction's size, not a distance to somewhere else."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Mazda 3, was traveling north on a two-lane, two-way road and entered the "
        "intersection, 30 m across, with a four-lane, two-way highway. Vehicle two (V2), a 2016 Jeep Cherokee, was "
        "traveling north behind V1. It was daylight. The front of V2 struck the back of V1.",
    )
    assert s.road_network.road_type == "Intersection"


def test_a_road_that_widens_at_the_intersection_has_the_widened_count(extractor: OfflineCrashExtractor) -> None:
    """At an intersection the most lanes a bordering road has count: a four-lane road that widens to eight lanes on
    its approaches is eight lanes (a left-turn lane and three through lanes in each direction), whatever its bracketed
    list sums to."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2014 Honda Civic, was traveling north on a four-lane, two-way arterial approaching a "
        "signalized intersection. Near the intersection the arterial widens to eight lanes (a left-turn lane and "
        "three through lanes in each direction). Vehicle two (V2), a 2010 Ford Fusion, was traveling east on a two-lane, "
        "two-way street. It was daylight. The front of V2 struck the right side of V1.",
    )
    assert (s.road_network.road_type, s.road_network.lanes) == ("Intersection", 8)


def test_an_intersection_takes_the_larger_roads_lanes_and_a_total_given_in_all(
    extractor: OfflineCrashExtractor,
) -> None:
    """SAFE asks 'how many lanes are there at most for roads bordering the intersection': a two-lane road crossing a
    four-lane highway is four lanes, whichever road V1 is on; 'giving six lanes in all' beats the per-direction
    count; per-direction lanes with a centre turn lane add one."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2003 Chevrolet Impala, was traveling east on a two-lane, two-way county road and stopped "
        "where it crosses a four-lane, two-way highway at a four-leg intersection. Vehicle two (V2), a 2016 Honda "
        "Accord, was southbound on the highway. It was daylight. The front of V2 struck the left side of V1.",
    )
    assert s.road_network.road_type == "Intersection"
    assert (s.to_safe()["Road network"]["No_lanes"], s.to_safe()["Road network"]["No_ways"]) == (4, 2)
    for road, lanes in (
        ("Each direction of Wexford Road has a left-turn lane and two through lanes, giving six lanes in all.", 6),
        ("Wexford Road is an urban arterial with two through lanes in each direction and a continuous two-way "
         "center left-turn lane.", 5),
    ):  # fmt: skip
        s = extract(
            extractor,
            f"{road} Vehicle one (V1), a 2010 Ford Focus, was southbound on Wexford Road. Vehicle two (V2), a 2015 "
            "Kia Soul, was ahead of V1. It was daylight. The front of V1 struck the back of V2.",
        )
        assert s.to_safe()["Road network"]["No_lanes"] == lanes, road


@pytest.mark.parametrize(
    "ramp",
    [
        "Vehicle two (V2), a 2018 Isuzu NPR box truck, was in the left lane of a two-lane ramp carrying traffic from "
        "a boulevard onto the northbound freeway.",
        "Vehicle two (V2), a 2007 Honda Civic, was leaving a rest area by way of a single-lane ramp that joins the "
        "right northbound lane.",
    ],
)
def test_a_ramp_onto_the_road_is_a_merge_without_the_word(extractor: OfflineCrashExtractor, ramp: str) -> None:
    """A ramp that carries traffic onto the road or joins it ends in a merge, though no 'merge' or 'on-ramp' is
    written; an exit ramp that ends at a road is the branch of a T, one way and one lane."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2013 Toyota Sienna, was traveling north in the right lane of a six-lane, divided "
        f"freeway. {ramp} It was daylight. The front of V2 struck the right side of V1.",
    )
    assert s.road_network.road_type == "Merge"
    s = extract(
        extractor,
        "Vehicle two (V2), a 2007 GMC Yukon, drove to the end of the exit ramp, which terminates at a rural two-lane "
        "county road and forms a T-junction. Vehicle one (V1), a 2018 Nissan Rogue, was southbound on the county "
        "road. It was daylight. The front of V1 struck the left side of V2.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"], net["No_ways_branch_road"]) == (2, 1, 1)


@pytest.mark.parametrize(
    ("light", "env"),
    [
        ("The sun had set roughly an hour before the crash and there was no roadway lighting.",
         {"Time": "Nighttime", "Weather": "Not mentioned"}),
        ("The crash occurred about ten minutes after sunrise; the sky was clear.", {"Time": "Daytime", "Weather": "Sunny"}),
        ("It was a bright, cloudless day and the asphalt was dry.", {"Time": "Not mentioned", "Weather": "Sunny"}),
        ("The afternoon sun was low in the west and the driver was looking into the sun.",
         {"Time": "Daytime", "Weather": "Sunny"}),
        ("Under the streetlights the road was dry.", {"Time": "Nighttime", "Weather": "Not mentioned"}),
        ("It was daylight. A thunderstorm had passed through the area before the crash and the road was wet.",
         {"Time": "Daytime", "Weather": "Not mentioned"}),
        ("It was dark and overcast. Snow had fallen the previous day and the road was snow-covered.",
         {"Time": "Nighttime", "Weather": "Cloudy"}),
        ("It was daylight and overcast; snow began falling about fifteen minutes after the crash.",
         {"Time": "Daytime", "Weather": "Cloudy"}),
        ("It was mid-afternoon and the driver had the wipers running.", {"Time": "Daytime", "Weather": "Rainy"}),
        ("The sun had not yet risen and there was no roadway lighting.", {"Time": "Nighttime", "Weather": "Not mentioned"}),
        ("The day was bright and clear.", {"Time": "Daytime", "Weather": "Sunny"}),
        ("At about 10 a.m. on a clear, dry day the traffic was light.", {"Time": "Daytime", "Weather": "Sunny"}),
        ("The concrete was clear of debris and dry.", {"Time": "Not mentioned", "Weather": "Not mentioned"}),
        ("It was night and overcast; it had rained earlier in the evening but the rain had stopped.",
         {"Time": "Nighttime", "Weather": "Cloudy"}),
        ("The morning fog had lifted and the sun was out.", {"Time": "Daytime", "Weather": "Sunny"}),
    ],
)  # fmt: skip
def test_light_and_weather_only_implied_or_outside_the_crash(
    extractor: OfflineCrashExtractor, light: str, env: dict[str, str]
) -> None:
    """Sunset, sunrise, streetlights, a low sun, a hyphenated part of the day ("mid-afternoon"), a sun not yet risen
    or one that was out imply the light; a cloudless, bright or clear, dry day is clear and wipers running say rain
    ('clear of debris' says nothing of the sky); weather that had passed, lifted, was earlier, had fallen the day
    before, or began after the crash is not the crash's."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2005 Toyota Camry, was northbound on a two-lane, two-way road. {light} The front of V1 "
        "struck a tree.",
    )
    assert s.to_safe()["Env"] == env


def test_a_collector_that_ends_in_a_t_a_one_way_connector_and_a_shared_introduction(
    extractor: OfflineCrashExtractor,
) -> None:
    """A collector or connector is a road: the one that ends at a highway is the T's branch, and a one-way connector
    is one way. Two vehicles introduced in one sentence each take their own body. 'forming a T' is a T."""
    s = extract(
        extractor,
        "The crash happened where a two-lane, two-way collector ends at a four-lane, two-way highway. Vehicle one "
        "(V1), a 2012 Honda Pilot, was stopped on the collector. Vehicle two (V2), a 2015 Ford Fusion, was "
        "southbound on the highway. It was daylight. The front of V2 struck the left side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"]) == (4, 2)
    s = extract(
        extractor,
        "A single-lane ramp joins a three-lane, one-way connector from the right. Vehicle one (V1), a 2014 Kia "
        "Optima, was in the right lane of the connector. Vehicle two (V2), a 2012 Ford Transit van, came up the "
        "ramp. It was daylight. The left side of V2 struck the right side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "Merge"
    assert (net["No_lanes_main_road"], net["No_ways_main_road"]) == (3, 1)
    s = extract(
        extractor,
        "Vehicle one (V1), a 2011 Toyota Sienna minivan, and vehicle two (V2), a 2016 Peterbilt 389 tractor pulling "
        "a flatbed trailer, were both northbound on a two-lane road. It was daylight. The trailer of V2 struck the "
        "left side of V1.",
    )
    assert s.to_safe()["Actors"] == {"V1_type": "Car", "V2_type": "Truck"}
    s = extract(
        extractor,
        "A gravel road meets the two-lane, two-way highway from the south, forming a T. Vehicle one (V1), a 2004 "
        "Pontiac Grand Prix, was westbound on the highway. Vehicle two (V2), a 2006 Chevrolet Tahoe, was turning "
        "left onto the gravel road. It was daylight. The front of V1 struck the left side of V2.",
    )
    assert s.road_network.road_type == "T-intersection"


def test_roads_described_after_the_crash_with_widths_one_sided_junctions_and_ends(
    extractor: OfflineCrashExtractor,
) -> None:
    """Lane counts with a width between ('two 3.6 m travel lanes in each direction'), a one-way count after its
    road ('The street carries one-way traffic'), a road that meets another from one side only (a T), a centre
    'two-way left-turn lane' beside per-direction lanes, and the road that is 'approaching its end' (the branch)."""
    base = "Vehicle one (V1), a 2006 Chevrolet Impala, was northbound. It was daylight. The front of V1 struck a pole. "
    s = extract(extractor, base + "The highway has two 3.6 m travel lanes in each direction and a grass median.")
    assert s.to_safe()["Road network"]["No_lanes"] == 4
    s = extract(extractor, base + "The street carries one-way northbound traffic in three 3.3 m travel lanes.")
    assert (s.to_safe()["Road network"]["No_lanes"], s.to_safe()["Road network"]["No_ways"]) == (3, 1)
    s = extract(
        extractor,
        "Vehicle one (V1), a 2015 Kia Soul, was northbound on a two-lane, two-way highway. Vehicle two (V2), a 2006 "
        "Ford Ranger, was stopped on a two-lane, two-way township road that meets the highway from the west only. "
        "It was daylight. The front of V1 struck the left side of V2.",
    )
    assert s.road_network.road_type == "T-intersection"
    s = extract(
        extractor,
        "Vehicle one (V1), a 2018 Toyota RAV4, was northbound on a two-lane, two-way gravel road approaching its end "
        "at an avenue, which it joins from the south side only. The avenue has two lanes in each direction and a "
        "continuous center two-way left-turn lane. Vehicle two (V2), a 2011 Chevrolet Tahoe, was eastbound on the "
        "avenue. It was daylight. The front of V2 struck the left side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"]) == (5, 2)


@pytest.mark.parametrize(
    ("light", "time"),
    [
        ("The streetlights were on and the pavement was dry.", "Nighttime"),
        ("The sun had not yet set.", "Daytime"),
        # Lamps said to be on with words between, or headlights as the only light: night.
        ("The overhead streetlights along this stretch were lit and the asphalt was dry.", "Nighttime"),
        ("The only light at the scene came from the vehicles' headlights.", "Nighttime"),
        # A sun ahead of the driver: day.
        ("The driver said the sun was directly ahead and she could not see well.", "Daytime"),
        ("He said that the sun, low in the eastern sky, kept him from seeing the signal.", "Daytime"),
        ("She told police the sun was directly in her eyes as she crested the hill.", "Daytime"),
        # a light cue after "since" says when something began, not the light at the crash
        ("Rain had been falling since before dawn, and the crash occurred at 11:15 a.m.", "Daytime"),
        ("The rain had stopped before dawn; the crash happened at 8:10 a.m.", "Daytime"),
        # lamps said to light the scene
        ("Overhead sodium lamps lit the junction and the pavement was dry.", "Nighttime"),
        # a clock time says more than a clock word
        ("Snow had fallen earlier in the afternoon; the crash happened at about 9:50 p.m.", "Nighttime"),
        ("The crash occurred at 0545 hours on a January morning.", "Nighttime"),
        # a clock word without its hyphen
        ("The crash happened in midafternoon on a weekday.", "Daytime"),
        # no lamps along the road and the drivers' own lamps lit: the dark, told by what lit the road
        ("No street lights line this stretch, and both drivers had their headlights on.", "Nighttime"),
        ("The road is unlighted here; V1's high beams were on.", "Nighttime"),
        ("Rain was falling in the beams of his headlamps.", "Nighttime"),
        ("The overhead highway lights were on at the time.", "Nighttime"),
        # a light condition outranks the lamps: headlights on by day
        ("It was daylight, it was foggy, and both drivers had their headlights on.", "Daytime"),
        # headlights seen or flashed are another driver's signal, not the light at the crash
        ("It was daylight. The driver of V2 flashed his headlights to wave V1 through.", "Daytime"),
        # traffic signals overhead are no street lighting
        ("The overhead traffic lights were operating normally. It was daylight.", "Daytime"),
        # a clock word outranks the lamps
        ("The driver of V1 had her headlights on. The crash occurred in the afternoon.", "Daytime"),
        # lamps on a vehicle, lamps denied, an unlit sign, and lamps on in rain name no dark
        ("The headlights on V2 were damaged in a previous crash.", "Not mentioned"),
        ("She stated that she did not have her headlights on.", "Not mentioned"),
        ("The warning sign was not lighted.", "Not mentioned"),
        ("It was raining and the driver had her headlights on.", "Not mentioned"),
    ],
)
def test_lamps_that_are_on_or_the_sun_in_view_give_night_or_day(
    extractor: OfflineCrashExtractor, light: str, time: str
) -> None:
    """Streetlights on or headlights as the only light mean night; a sun not yet set or in the driver's view, day.
    (The clock-time test above asks the same of a clock time.) Where no light condition or clock is named, a road
    without street lights, headlamp beams seen or drivers with their own lamps on (not in rain, snow or fog) mean night
    too; overhead lights of a road said to be on are streetlights, overhead signals are not."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2005 Toyota Camry, was northbound on a two-lane, two-way road. {light} The front of V1 "
        "struck a tree.",
    )
    assert s.env.time == time


def test_lanes_far_from_any_road_noun_are_those_of_the_road_their_sentence_described(
    extractor: OfflineCrashExtractor,
) -> None:
    """The lanes listed after a long description of a five-lane road are that road's, not a third road between the
    main road and the side street."""
    s = extract(
        extractor,
        "The crash occurred on Cedar Boulevard, a five-lane, two-way suburban arterial running north-south: two "
        "northbound lanes, a continuous center left-turn lane and two southbound lanes. Here a two-lane, two-way "
        "residential street meets the arterial from the west; the street does not continue east of it. Vehicle one "
        "(V1), a 2011 Honda Pilot, was southbound. Vehicle two (V2), a 2004 Ford Taurus, turned left from the street. "
        "It was daylight. The front of V1 struck the left side of V2.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"]) == (5, 2)


def test_a_road_named_again_is_the_road_described_at_its_first_naming(extractor: OfflineCrashExtractor) -> None:
    """ "on Alder Avenue, a one-way westbound street ... Alder Avenue has four travel lanes": four lanes, one way."""
    s = extract(
        extractor,
        "The crash occurred on Alder Avenue, a one-way westbound street downtown. Alder Avenue has four travel lanes "
        "with parking along both curbs. Vehicle one (V1), a 2012 Toyota Camry, was westbound in the left lane. It "
        "was daylight. The front of V1 struck a parked car.",
    )
    net = s.to_safe()["Road network"]
    assert (net["No_lanes"], net["No_ways"]) == (4, 1)


def test_a_negation_in_one_sentence_does_not_reach_the_weather_of_the_next(extractor: OfflineCrashExtractor) -> None:
    """ "... there is no lighting. Snow showers were passing": the "no" ends with its sentence, so it snowed."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2008 Subaru Outback, was eastbound on a two-lane, two-way road at night; there is no "
        "lighting. Snow showers were passing through. The front of V1 struck a guardrail.",
    )
    assert s.env.weather == "Snowy"


@pytest.mark.parametrize(
    "junction",
    [
        "A two-lane, one-way exit ramp from the interstate terminates at the road, controlled by a stop sign.",
        "It is normally a four-leg intersection, but the eastern leg was closed and barricaded for bridge work.",
        "A two-lane access road leaves the north side of the road; there is no roadway on the south side opposite it.",
        "A two-lane, two-way township road that joins from the north meets it; a farm driveway lies opposite.",
        # a leg that does not exist, a side road that entered from one side, a leg that is only a driveway
        "It meets a two-lane, two-way side road at an intersection whose south leg does not exist.",
        "A two-lane, two-way side road that entered from the south met it at a stop sign.",
        "At the intersection with a two-lane, two-way side road, the north leg is a private driveway to a farm.",
        # a side road that goes no farther, does not continue, or stops at the road; an exit ramp "of" an interchange
        "It is met by a two-lane, two-way farm road that reaches it from the south and goes no further.",
        "A two-lane, two-way town street, which climbs the hill to it, did not continue past it.",
        "A two-lane, two-way residential street that comes down from the north and stops at the road has a stop sign.",
        "The westbound one-lane exit ramp of the interchange ends at the road, at a stop sign.",
        "A two-lane, two-way lane meets it at a stop sign; the lane does not continue south of the road.",
        # a side road that meets it from one side and ends, with no road named for it to end at
        "A two-lane, two-way service road joins it from the west and terminates; a stop sign controls it.",
    ],
)
def test_an_exit_ramp_that_ends_a_closed_leg_and_no_road_opposite_make_a_t(
    extractor: OfflineCrashExtractor, junction: str
) -> None:
    s = extract(
        extractor,
        "Vehicle one (V1), a 2015 Kia Soul, was eastbound on a four-lane, two-way road (two lanes in each direction). "
        f"{junction} Vehicle two (V2), a 2006 Ford Ranger, turned left in front of V1. It was daylight. The front of "
        "V1 struck the left side of V2.",
    )
    assert s.road_network.road_type == "T-intersection"
    assert s.to_safe()["Road network"]["No_lanes_main_road"] == 4


def test_a_continuous_centre_turn_lane_named_after_the_lanes_in_each_direction(
    extractor: OfflineCrashExtractor,
) -> None:
    s = extract(
        extractor,
        "Vehicle one (V1), a 1997 Buick LeSabre, was southbound on an urban arterial that has two through lanes in "
        "each direction and a continuous two-way left-turn lane in the center. It was daylight. The front of V1 struck "
        "a pole.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 5


def test_a_count_on_a_lane_describes_the_road_the_sentence_is_about(extractor: OfflineCrashExtractor) -> None:
    """ "The off-ramp is a single one-way lane that stops at a yield sign beside Route 30": the one-way count is the
    ramp's, not Route 30's, and the ramp is the T's one-lane, one-way branch."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2016 Jeep Cherokee, was westbound on Route 30, a two-lane, two-way highway. The off-ramp "
        "from the interstate is a single one-way lane that ends at a stop sign beside Route 30; there is no road "
        "opposite it. Vehicle two (V2), a 2009 Ford Focus, left the ramp to turn left. It was daylight. The front of V1 "
        "struck the left side of V2.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "T-intersection"
    assert (net["No_lanes_main_road"], net["No_ways_main_road"]) == (2, 2)
    assert (net["No_lanes_branch_road"], net["No_ways_branch_road"]) == (1, 1)


def test_a_cross_section_of_a_road_named_without_a_road_noun_is_its_lanes(extractor: OfflineCrashExtractor) -> None:
    """ "Broadway runs north-south. At the intersection its cross-section is ...": the listed lanes are the road's,
    though no road noun stands before them."""
    s = extract(
        extractor,
        "The crash occurred at the signalized intersection of Broadway and 5th Street. Broadway runs north-south. At "
        "the intersection its cross-section, from west to east, is a southbound right-turn lane, two southbound through "
        "lanes, a raised median and two northbound through lanes. Vehicle one (V1), a 2010 Honda Civic, was northbound "
        "on Broadway. Vehicle two (V2), a 2013 Ford Escape, turned left in front of it. It was daylight. The front of "
        "V1 struck the right side of V2.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 5


@pytest.mark.parametrize("ramp", ["The on-ramp is a single lane.", "The entrance ramp has two lanes."])
def test_a_ramp_described_after_the_freeway_is_its_own_road(extractor: OfflineCrashExtractor, ramp: str) -> None:
    """ "The freeway has three lanes in each direction. The on-ramp is a single lane": "the on-ramp" is a new road,
    not the freeway again, so its lanes are the merge's branch."""
    s = extract(
        extractor,
        f"The freeway has three lanes in each direction. {ramp} Vehicle one (V1), a 2012 Mazda 3, came down the "
        "on-ramp to merge. Vehicle two (V2), a 2015 Ford Fusion, was in the right lane. It was daylight. The front of "
        "V2 struck the left side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "Merge"
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"]) == (6, 1 if "single" in ramp else 2)


@pytest.mark.parametrize(
    "denied", ["with no median and no center turn lane", "without any centre left-turn lane", "but no center turn lane"]
)
def test_a_centre_turn_lane_said_not_to_be_there_is_not_counted(extractor: OfflineCrashExtractor, denied: str) -> None:
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2003 Honda Accord, was westbound on a city street that has two lanes in each direction "
        f"{denied}. It was daylight. The front of V1 struck a pole.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 4
    assert not s.road_network.centre_turn_lane


@pytest.mark.parametrize(
    ("section", "lanes"),
    [
        # lane by lane across both directions, turn lanes and a median among them
        ("At the signal the avenue has two northbound through lanes, a northbound right-turn lane, a grass median and "
         "two southbound through lanes.", 5),
        ("At the junction the eastbound roadway of the avenue has a left-turn lane and two through lanes, and beyond a "
         "raised median lie three westbound through lanes.", 6),
        # a count per direction that a turn lane adds to, and a turn lane between the directions
        ("The avenue has two lanes in each direction and widens to add one left-turn lane for northbound traffic.", 5),
        ("The avenue has a single through lane in each direction with the left-turn lane between them.", 3),
        # lanes named by where they lie: curb, inside, a two-way center turn lane
        ("Listed from north to south, the avenue has a westbound curb lane, a westbound inside lane, a two-way center "
         "left-turn lane, an eastbound inside lane and an eastbound curb lane.", 5),
        # turn bays listed curb to curb, a decimal width in between, a painted centre lane
        ("From the north curb there are two westbound through lanes and a westbound left-turn bay, then a 1.2 m painted "
         "median, then an eastbound left-turn bay and two eastbound through lanes.", 6),
        ("From its south curb it has two eastbound lanes, a painted two-way center left-turn lane and two westbound "
         "lanes.", 5),
        # a turn bay the road flares to add at the junction is no lane of its cross-section
        ("The avenue has two through lanes in each direction and flares to add a left-turn bay on each approach.", 4),
        # one count stated twice is one count
        ("The avenue is two lanes wide with one lane each way.", 2),
    ],
)  # fmt: skip
def test_a_cross_section_listed_lane_by_lane_is_summed(
    extractor: OfflineCrashExtractor, section: str, lanes: int
) -> None:
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2012 Ford Focus, was northbound on the avenue. {section} It was daylight. The front of "
        "V1 struck a pole.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == lanes


def test_the_street_of_the_next_sentence_is_the_road_before_it(extractor: OfflineCrashExtractor) -> None:
    """ "... a one-way downtown street. The street has three northbound travel lanes": the lanes are the one-way
    street's (three, one way), not a new road's three per direction."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Honda Fit, was northbound in the left lane of a one-way city street. The street has "
        "three northbound travel lanes and parking along both curbs. It was daylight. The front of V1 struck a "
        "parked van.",
    )
    net = s.to_safe()["Road network"]
    assert (net["No_lanes"], net["No_ways"]) == (3, 1)


@pytest.mark.parametrize(
    "narrative",
    [
        # a drive that forms "a three-leg junction" with the road makes a T; a one-way street "with a single travel
        # lane" has one lane
        "Vehicle one (V1), a 2015 Kia Soul, was westbound on Oak Avenue, a two-lane, two-way road. Vehicle two (V2), "
        "a 2009 Chevrolet Malibu, was southbound on Elm Lane, a one-way street with a single travel lane that meets "
        "Oak Avenue from the north, forming a three-leg junction. It was daylight. V2 pulled out and the front of V1 "
        "struck its left side.",
        # "left the freeway on an exit ramp ... The ramp curves north and terminates at a two-lane route": the bare
        # "ramp" is the exit ramp, and it ends in a T
        "It was daylight. Vehicle one (V1), a 2011 Mazda 3, left the freeway on a single-lane, one-way exit ramp. The "
        "ramp curves north and terminates at a stop sign on a two-lane, two-way state route. The front of Vehicle two "
        "(V2), a 2015 Dodge Ram, struck the left side of V1 as it turned left.",
        # a vehicle stopped "at the end of" a one-way exit ramp, which "meets" the road along its edge
        "It was daylight. Vehicle one (V1), a 2013 Honda Fit, was eastbound on a two-lane, two-way county road. "
        "Vehicle two (V2), a 2016 GMC Sierra, had waited at a stop sign at the end of a one-lane, one-way off-ramp "
        "that meets the county road along its north side. V2 pulled out and the front of V1 struck its left side.",
    ],
)
def test_a_t_with_a_one_lane_one_way_branch(extractor: OfflineCrashExtractor, narrative: str) -> None:
    """T-junctions said as "a three-leg junction" or by an exit ramp that terminates at a road, each with a one-lane,
    one-way branch off a two-lane road."""
    out = extract(extractor, narrative).to_safe()
    assert out["Road type"] == "T-intersection", out
    net = out["Road network"]
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"], net["No_ways_branch_road"]) == (2, 1, 1), net


@pytest.mark.parametrize(
    "road_words",
    [
        # a named road in apposition, then "ends at"
        "Birch Court, a two-lane, two-way residential street, ends at the north edge of a four-lane, two-way highway",
        # a road that runs on and then terminates
        "a two-lane, two-way access drive runs north out of the lot and terminates at a four-lane, two-way highway",
        # a side street that meets the other road from one side
        "a two-lane, two-way side street that meets a four-lane, two-way highway from the south",
        # the stem of a T, and a road that T's into another
        "a two-lane, two-way gravel road forms the stem of a T at a four-lane, two-way highway",
        "a two-lane, two-way gravel road T's into a four-lane, two-way highway from the south",
        # a long clause that "... and ends at the highway"
        "Cedar Street, which is a two-lane, two-way street lined with houses, comes in from the south and ends at the "
        "four-lane, two-way highway",
        # a closed leg, said with the junction named and an adverb
        "a two-lane, two-way street crosses a four-lane, two-way highway; the south leg of this junction was "
        "permanently closed with a curb",
        # a road that "... and ends at" a road named by its number, with no article
        "a two-lane, two-way township road enters from the north and ends at State Route 9, a four-lane, two-way "
        "highway",
        "a two-lane, two-way street comes in from the west and ends at US-20, a four-lane, two-way highway",
        # ... or at a road whose noun follows four words, one in brackets
        "a two-lane, two-way street enters from the south and ends at a four-lane, two-way (east-west) divided highway",
    ],
)
def test_ts_said_in_other_words_and_the_wider_road_goes_through(
    extractor: OfflineCrashExtractor, road_words: str
) -> None:
    """Ways of saying a road meets another in a T. Where nothing says which road ends, the wider road is the main
    road (every T of the development cases and read probe sets has main lanes >= branch lanes)."""
    s = extract(
        extractor,
        f"The crash happened where {road_words}. It was daylight. Vehicle one (V1), a 2013 Ford Focus, was eastbound "
        "on the highway. Vehicle two (V2), a 2010 Honda Civic, pulled out from the street and the front of V1 struck "
        "its left side.",
    )
    out = s.to_safe()
    assert out["Road type"] == "T-intersection", out
    net = out["Road network"]
    assert (net["No_lanes_main_road"], net["No_lanes_branch_road"]) == (4, 2), net


@pytest.mark.parametrize(
    "road_words",
    [
        "The left lane narrows and ends at the culvert that runs under the highway.",
        "The passing lane runs 300 m. It ends at a taper before the old county road.",
        "The climbing lane runs 300 m. It ends at the highway overpass.",
    ],
)
def test_a_lane_that_ends_near_a_road_makes_no_t(extractor: OfflineCrashExtractor, road_words: str) -> None:
    """A lane that ends at something that is not a road, with a road named a few words on, is no road ending at
    another: the crash stays on a straight road."""
    s = extract(
        extractor,
        f"The crash occurred on a four-lane, two-way highway. {road_words} It was daylight. Vehicle one (V1), a 2012 "
        "Kia Rio, was eastbound in the right lane. Vehicle two (V2), a 2015 Ford Escape, was eastbound in the left "
        "lane. V1 changed lanes to the left and the front of V1 struck the right side of V2.",
    )
    assert s.to_safe()["Road type"] == "Straight", s.to_safe()


@pytest.mark.parametrize(
    ("conditions", "time", "weather"),
    [
        ("The luminaires over the junction were on. Snowflakes were falling.", "Nighttime", "Snowy"),
        ("It was late morning, and both drivers were using their windshield wipers.", "Daytime", "Rainy"),
        (
            "It was daylight. Snow that had fallen the night before lay on the shoulders, but it was not snowing and "
            "the sky was cloudy.",
            "Daytime",
            "Cloudy",
        ),
        ("The road has no overhead lighting, and the drivers relied on their headlights. It was raining.",
         "Nighttime", "Rainy"),
        # ... but a light condition says more
        ("In thick fog the drivers relied on their headlights. It was daylight.", "Daytime", "Foggy"),
    ],
)  # fmt: skip
def test_lamps_flakes_wipers_and_snow_that_had_fallen(
    extractor: OfflineCrashExtractor, conditions: str, time: str, weather: str
) -> None:
    """Luminaires that were on say night, as do drivers relying on their headlights; snowflakes say snow; wipers in
    use say rain; snow that had fallen the day before is not snow falling."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2016 Subaru Outback, was northbound on a two-lane, two-way road. "
        f"{conditions} The front of V1 struck the back of Vehicle two (V2), a 2012 Ford Fusion.",
    )
    assert (s.env.time, s.env.weather) == (time, weather)


def test_an_odd_lane_count_already_holds_its_centre_turn_lane(extractor: OfflineCrashExtractor) -> None:
    """ "a five-lane arterial with a center turn lane" is five lanes (two each way and the turn lane); "a four-lane
    road with a center turn lane" would be five too."""
    for road in ("a five-lane urban arterial with a center turn lane", "a four-lane road with a center turn lane"):
        s = extract(
            extractor,
            f"Vehicle one (V1), a 2016 Subaru Outback, was northbound on {road}. It was daylight. The front of V1 "
            "struck the back of Vehicle two (V2), a 2012 Ford Fusion.",
        )
        assert s.to_safe()["Road network"]["No_lanes"] == 5, road


@pytest.mark.parametrize(
    "section",
    [
        "Each of its approaches has a dedicated left-turn lane and two through lanes.",
        "Each direction of the boulevard consists of two through lanes and a right-turn lane.",
        "On each approach there are two through lanes and an exclusive left-turn lane.",
    ],
)
def test_a_list_of_lanes_said_of_each_approach_counts_once_per_direction(
    extractor: OfflineCrashExtractor, section: str
) -> None:
    """A lane list that a leading "each approach" or "each direction" governs gives one direction's lanes: the road
    has twice as many."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2012 Ford Focus, was northbound on the boulevard. {section} It was daylight. The front of "
        "V1 struck the side of Vehicle two (V2), a 2015 Kia Soul.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 6


def test_street_lamps_said_to_be_lit_give_night(extractor: OfflineCrashExtractor) -> None:
    """Street lamps (not only streetlights) that were lit along the road say it was dark."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2016 Subaru Outback, was eastbound on a two-lane, two-way road. The overhead street "
        "lamps along the road were lit at the time. The front of V1 struck the back of Vehicle two (V2), a 2012 Ford "
        "Fusion.",
    )
    assert s.env.time == "Nighttime"


@pytest.mark.parametrize(
    "where",
    [
        "The crash site lies about 90 m south of a signalized intersection.",
        "The collision happened some 300 feet west of the Elm Street intersection.",
        "About 250 m east of the crash site the road narrows, and a left-turn lane opens at the Mill Road intersection.",
        # a route name's full stops end no sentence
        "About 250 m east of the crash site U.S. 30 gains a left-turn lane at the Mill Road intersection.",
    ],
)
def test_a_junction_placed_a_distance_from_the_crash_is_not_its_place(
    extractor: OfflineCrashExtractor, where: str
) -> None:
    """A junction said to lie a distance away ("90 m south of a signalized intersection"), or named in a sentence
    that opens a distance from the crash site, is not where the crash happened."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2004 Dodge Neon, was traveling north on a four-lane, two-way road. "
        f"{where} It was daylight. The front of V1 struck the back of Vehicle two (V2), a 1999 Toyota Corolla, which "
        "was stopped in traffic ahead of it.",
    )
    assert s.road_network.road_type == "Straight"


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        # the junction named again ("that junction") after the crash was placed away from it
        (
            "About 200 m south of the crash site, the road crosses Oak Street at a four-way junction. V2 had just "
            "driven through that junction.",
            "Straight",
        ),
        # a place named at length after the distance ("the point where the on-ramp ends")
        (
            "The crash occurred about 300 m west of the point where the acceleration lane of the Exit 4 on-ramp ends.",
            "Straight",
        ),
        # a stretch of road up to the crash is no place away: the bend named again stays the crash's place
        (
            "For about 300 m east of the crash site the road runs straight, and then it enters a sharp bend. V1 "
            "drifted wide in the bend.",
            "Curve",
        ),
    ],
)
def test_a_crash_placed_a_distance_from_a_junction_is_not_at_it_when_the_junction_is_named_again(
    extractor: OfflineCrashExtractor, where: str, expected: str
) -> None:
    """Once the crash is placed a distance from a junction, the junction named again with a definite word, or the
    rest of the place's clause, does not bring the crash back to it."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2011 Ford Fusion, was traveling east on a two-lane, two-way road. "
        f"{where} It was daylight. The front of V1 struck the front of Vehicle two (V2), a 2008 Honda Civic, which was "
        "traveling west.",
    )
    assert s.road_network.road_type == expected


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        # the T the crash is away from, with the road that ends there, and "that intersection" named again
        (
            "The collision happened about 200 m west of a T-intersection where a gravel road ends at the south side "
            "of the highway; no vehicle had used that intersection.",
            "Straight",
        ),
        # a junction placed by a distance from the crash that comes after it in its sentence
        (
            "V1 had gone through a four-way intersection, signed with stop signs for the side road, about 90 m west "
            "of the collision site and was entering a curve to the right.",
            "Curve",
        ),
    ],
)
def test_a_junction_the_crash_is_away_from_gives_no_junction_road_type(
    extractor: OfflineCrashExtractor, where: str, expected: str
) -> None:
    """A T whose branch "ends at" the road, or a junction located by a distance from the crash written after it, is
    not the crash's place when the distance puts the crash away from it."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2010 Ford Fusion, was traveling east on a two-lane, two-way rural highway. "
        f"{where} It was daylight. The front of V1 struck the front of Vehicle two (V2), a 2007 Honda Accord, which "
        "was traveling west.",
    )
    assert s.road_network.road_type == expected


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        # a curve the vehicle had come through is behind it
        (
            "V1 had just rounded a bend to the left and was on a straight stretch of the road when it began to slide.",
            "Straight",
        ),
        ("Vehicle one had negotiated a curve and was on a level, straight section.", "Straight"),
        # a junction it had gone through, too, and the vehicle named earlier in the clause
        ("V1 had passed through an intersection and was on a straight section of the road.", "Straight"),
        ("V1 was heading north and had just come around a curve; it was on a straight section.", "Straight"),
        # a stop made at the place, or a part of it, keeps the crash there
        ("V1 had just completed a stop at the intersection and was moving off when it began to slide.", "Intersection"),
        ("V1 had negotiated most of the curve when it began to slide.", "Curve"),
        ("V1 had just negotiated the apex of the curve when it began to slide.", "Curve"),
        # a curve the vehicle is in still is the crash's place ...
        ("V1 was negotiating a curve to the right when it began to slide.", "Curve"),
        # ... and so is one another road user had passed through
        ("A snowplow had just come through the curve, and V1 was negotiating it when it began to slide.", "Curve"),
    ],
)
def test_a_place_the_vehicle_had_already_gone_through_is_behind_it(
    extractor: OfflineCrashExtractor, where: str, expected: str
) -> None:
    """A curve or junction that a numbered vehicle "had negotiated" or "had passed through" is behind the vehicle,
    not where the crash is; one that someone else had passed through, or where the vehicle had made a stop, or whose
    part it had come through ("most of the curve"), stays the crash's place."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2009 Toyota Corolla, was traveling north on a two-lane, two-way rural road. "
        f"{where} It was daylight. The front of Vehicle two (V2), a 2012 Chevrolet Malibu, which was traveling south, "
        "struck the left side of V1.",
    )
    assert s.road_network.road_type == expected


def test_a_lane_count_before_a_bracketed_lane_list_is_that_list_s_total(extractor: OfflineCrashExtractor) -> None:
    """ "it has four lanes (two southbound lanes, a northbound left-turn lane and one northbound lane)": the count
    before the brackets is the total of the list inside them, not one of its items."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Honda Civic, was traveling south on Park Road toward its four-leg intersection with "
        "Lake Street. At the intersection Park Road has four lanes (two southbound lanes, a northbound left-turn lane "
        "and one northbound lane). Lake Street is a two-lane, two-way street. It was daylight. The front of Vehicle "
        "two (V2), a 2011 Ford Escape, struck the right side of V1.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 4


def test_the_road_that_ends_at_a_t_can_be_named_by_its_ways(extractor: OfflineCrashExtractor) -> None:
    """ "The two-way road ended at the one-way avenue": the branch is the two-way road, though the one-way avenue was
    described last before the sentence."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2013 Ford Focus, was traveling east on a two-lane, two-way road toward a T-intersection "
        "with a four-lane, one-way northbound avenue. The two-way road ended at the one-way avenue at a stop sign. "
        "Vehicle two (V2), a 2016 Toyota RAV4, was traveling north on the avenue. It was daylight. The front of V2 "
        "struck the left side of V1.",
    )
    net = s.to_safe()["Road network"]
    assert (net["No_lanes_main_road"], net["No_ways_main_road"]) == (4, 1)
    assert (net["No_lanes_branch_road"], net["No_ways_branch_road"]) == (2, 2)


def test_a_road_that_begins_at_one_side_of_another_makes_a_t(extractor: OfflineCrashExtractor) -> None:
    """ "Mill Lane begins at the north side of Route 4": a road that starts on one side of another meets it in a T."""
    s = extract(
        extractor,
        "Route 4 is a two-lane, two-way highway. Mill Lane, a two-lane, two-way road, begins at the north side of "
        "Route 4 and runs north. Vehicle one (V1), a 2012 Honda Civic, was eastbound on Route 4. Vehicle two (V2), a "
        "2015 Ford F-150 pickup, pulled out of Mill Lane to turn east. It was daylight. The front of V1 struck the "
        "left side of V2.",
    )
    assert s.road_network.road_type == "T-intersection"


def test_a_main_road_counted_again_at_the_t_junction_has_that_many_lanes(extractor: OfflineCrashExtractor) -> None:
    """A main road described as two lanes, then counted again "at the junction" where a turn bay is added, has the
    junction's count."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Mazda 3, was traveling west on Highway 4, a two-lane, two-way road. Birch Road, a "
        "two-lane, two-way road, ends at Highway 4 from the south. A right-turn lane opens 60 m east of Birch Road, "
        "so at the junction the highway carries three lanes. Vehicle two (V2), a 2009 GMC Sierra pickup, pulled out "
        "of Birch Road. It was daylight. The front of V1 struck the left side of V2.",
    )
    safe = s.to_safe()
    assert safe["Road type"] == "T-intersection"
    assert safe["Road network"]["No_lanes_main_road"] == 3
    assert safe["Road network"]["No_lanes_branch_road"] == 2


@pytest.mark.parametrize(
    ("ramp", "key", "lanes"),
    [
        (
            "The entrance ramp carries two lanes from the interchange signal but narrows to a single lane some 100 m "
            "before it merges onto the freeway.",
            "No_lanes_branch_road",
            1,
        ),
        (
            "The exit ramp from the interstate terminates at the road at a stop sign. It is a one-way, one-lane ramp "
            "that widens to three lanes near its end.",
            "No_lanes_branch_road",
            3,
        ),
    ],
)
def test_a_ramp_whose_lanes_change_along_it_has_the_count_it_ends_with(
    extractor: OfflineCrashExtractor, ramp: str, key: str, lanes: int
) -> None:
    """A ramp that widens or narrows before it ends has, where it ends (at the crash), the lanes it changes to."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2013 Nissan Altima, was on a four-lane, two-way road next to the interchange with "
        f"Interstate 70. {ramp} Vehicle two (V2), a 2016 Ram 1500 pickup, was on the ramp. It was daylight. The front "
        "of V2 struck the left side of V1.",
    )
    assert s.to_safe()["Road network"][key] == lanes


def test_a_crash_placed_on_a_section_by_its_lane_count_takes_that_section(extractor: OfflineCrashExtractor) -> None:
    """Where a road changes from four lanes to two and the crash is said to be on "the two-lane stretch", the road is
    two lanes, two-way."""
    s = extract(
        extractor,
        "Route 7 is a four-lane divided highway through the town; east of the town line it becomes a two-lane, "
        "two-way road, and the collision happened on the two-lane stretch. Vehicle one (V1), a 2015 Ford Focus, was "
        "eastbound. It was daylight. V1 struck the front of Vehicle two (V2), a 2012 Jeep Liberty, which was "
        "westbound.",
    )
    safe = s.to_safe()
    assert (safe["Road type"], safe["Road network"]["No_lanes"], safe["Road network"]["No_ways"]) == ("Straight", 2, 2)


def test_a_turn_lane_named_with_the_inside_a_cross_section_counts_as_one_lane(
    extractor: OfflineCrashExtractor,
) -> None:
    """ "two northbound through lanes, the southbound left-turn bay and two southbound through lanes": the turn lane
    named with "the" between counted items is one lane of the cross-section."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2014 Kia Optima, was traveling south on Elm Avenue toward its signalized intersection "
        "with 9th Street. At the intersection Elm Avenue consists of two northbound through lanes, the southbound "
        "left-turn bay, and two southbound through lanes. 9th Street is a two-lane, two-way street. It was daylight. The front of "
        "Vehicle two (V2), a 2010 Toyota Camry, struck the left side of V1.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 5


def test_an_exit_ramp_named_by_its_freeway_and_direction_that_terminates_at_a_road_is_a_t(
    extractor: OfflineCrashExtractor,
) -> None:
    """ "the exit ramp from southbound Interstate 80 terminates at ...": the ramp's origin may take three words."""
    s = extract(
        extractor,
        "The one-lane exit ramp from southbound Interstate 80 terminates at Route 6, a two-lane, two-way road. "
        "Vehicle one (V1), a 2010 Honda Civic, had stopped at the end of the ramp. Vehicle two (V2), a 2015 Ford "
        "F-150 pickup, was traveling west on Route 6. It was daylight. The front of V2 struck the left side of V1.",
    )
    assert s.road_network.road_type == "T-intersection"


@pytest.mark.parametrize(
    "junction",
    [
        # a side road that comes in from one side and then ends at the main road, named without an article
        "Pine Street, a two-lane, two-way street, comes in from the south and ends at Main Street.",
        # a numbered route that ends at another
        "V1 was approaching the point where Route 9 ends at Route 40.",
        # the side road named, then "It ends at" in the next sentence
        "Pine Street is a two-lane, two-way street. It ends at Main Street, where a stop sign controls its traffic.",
        # nothing on the far side: "no street or driveway opposite", "no street on the north side"
        "Pine Street meets Main Street. There is no street or driveway opposite Pine Street.",
        "Pine Street meets Main Street there. There is no street on the north side of the junction.",
        # an abbreviated street name that terminates at another
        "V1 had stopped where Birch Ct. terminates at Main St.",
        # a side road that meets the main road, named, from one side
        "Pine Street is a two-lane road that meets Main Street from the east and ends there at a stop sign.",
    ],
)
def test_side_roads_that_end_at_the_main_road_told_in_other_ways_make_a_t(
    extractor: OfflineCrashExtractor, junction: str
) -> None:
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2009 Toyota Corolla, was traveling north on Pine Street. {junction} Vehicle two (V2), "
        "a 2012 Nissan Altima, was traveling east on Main Street, a two-lane, two-way road. It was daylight. The "
        "front of V2 struck the left side of V1.",
    )
    assert s.road_network.road_type == "T-intersection"


def test_a_lane_total_before_a_colon_is_not_one_of_the_lanes_it_lists(extractor: OfflineCrashExtractor) -> None:
    """ "has three lanes: a northbound lane, a two-way left-turn lane and a southbound lane" is three lanes."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2011 Toyota Sienna, was traveling north on Oak Avenue. The roadway has three lanes: a "
        "northbound lane, a two-way left-turn lane and a southbound lane. It was daylight. The front of V1 struck the "
        "back of Vehicle two (V2), a 2008 Honda Fit.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 3


@pytest.mark.parametrize(
    "junction",
    [
        "Route 5 meets Route 12 at right angles, and all four approaches are controlled by stop signs.",
        "The two county roads meet at an all-way stop.",
    ],
)
def test_a_junction_told_by_its_four_approaches_or_an_all_way_stop_is_an_intersection(
    extractor: OfflineCrashExtractor, junction: str
) -> None:
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2003 Peterbilt tractor-semitrailer, was traveling east on Route 12. {junction} It was "
        "daylight. V1 rolled onto its left side while turning right.",
    )
    assert s.road_network.road_type == "Intersection"


def test_a_count_per_direction_earlier_in_the_sentence_governs_no_later_list(extractor: OfflineCrashExtractor) -> None:
    """ "two lanes in each direction; at the junction ... two northbound lanes, a northbound left-turn lane and two
    southbound lanes": the later list is the whole cross-section, not one direction's."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Ford Fusion, was traveling north on Oak Street. Oak Street has two lanes in each "
        "direction; at the junction its cross-section is two northbound lanes, a northbound left-turn lane and two "
        "southbound lanes. It was daylight. The front of Vehicle two (V2), a 2015 Chevrolet Silverado pickup, struck "
        "the back of V1.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 5


@pytest.mark.parametrize(
    ("conditions", "weather"),
    [
        # storms that had moved across before the crash, and the rain that had stopped: only the cloud is left
        ("A line of thunderstorms had crossed the county an hour before the crash, and the rain had stopped; it was "
         "daylight and the sky stayed overcast.", "Cloudy"),
        # snow told only by the flakes on a windshield
        ("It was daylight. The driver said heavy, wet flakes were building up on the windshield faster than the "
         "wipers could clear them.", "Snowy"),
    ],
)  # fmt: skip
def test_storms_that_had_crossed_and_flakes_on_a_windshield(
    extractor: OfflineCrashExtractor, conditions: str, weather: str
) -> None:
    s = extract(
        extractor,
        "Vehicle one (V1), a 2000 Mazda 626, was traveling west on a two-lane, two-way highway. "
        f"{conditions} The front of Vehicle two (V2), a 2004 Chrysler minivan, struck the right side of V1.",
    )
    assert s.to_safe()["Env"]["Weather"] == weather


def test_one_directions_lane_list_after_the_others_is_summed(extractor: OfflineCrashExtractor) -> None:
    """ "On the eastbound approach it has ...; on the westbound side it has ...": the two lists are the road's."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2006 Nissan Altima, was eastbound on Route 30 approaching Elm Street. On the eastbound "
        "approach Route 30 has, from left to right, a left-turn lane, two through lanes and a right-turn lane; on the "
        "westbound side it has a left-turn lane and two through lanes. It was daylight. The front of V1 struck the "
        "right side of Vehicle two (V2), a 2004 Toyota Highlander.",
    )
    assert s.to_safe()["Road network"]["No_lanes"] == 7


def test_a_centre_two_way_turn_lane_in_a_lane_by_lane_listing_and_a_lane_that_becomes_another(
    extractor: OfflineCrashExtractor,
) -> None:
    """ "a center two-way left-turn lane" (center before two-way) is an item of the listing; a lane "that becomes a
    dedicated left-turn lane" is the same lane, not another."""
    for section, lanes in (
        ("From south to north the roadway consists of an eastbound curb lane, an eastbound inside lane, a center "
         "two-way left-turn lane, a westbound inside lane and a westbound curb lane.", 5),
        ("The avenue has two through lanes in each direction and a center two-way left-turn lane that becomes a "
         "dedicated left-turn lane at the intersection.", 5),
    ):  # fmt: skip
        s = extract(
            extractor,
            f"Vehicle one (V1), a 2002 Honda Odyssey, was traveling west on the avenue. {section} It was daylight. "
            "The front of V1 struck the back of Vehicle two (V2), a 2009 Ford Ranger.",
        )
        assert s.to_safe()["Road network"]["No_lanes"] == lanes, section


def test_a_lane_list_late_in_a_long_sentence_is_the_roads_that_sentence_describes(
    extractor: OfflineCrashExtractor,
) -> None:
    """ "It is a two-lane road that widens about 50 m south of the junction, so that at the signal it has a
    northbound left-turn lane, a northbound right-turn lane and one southbound lane": the three lanes are that
    road's, so the wider road it ends at stays the main road of the T."""
    s = extract(
        extractor,
        "Harbor Boulevard is a five-lane, two-way road. Vehicle one (V1), a 2006 Chevrolet Equinox, was northbound on "
        "Mill Road, stopped at the signal where it meets Harbor Boulevard. Mill Road does not continue north of Harbor "
        "Boulevard. It is a two-lane, two-way road that widens approximately 50 meters south of the junction, so that "
        "at the signal it has a northbound left-turn lane, a northbound right-turn lane, and one southbound lane. It "
        "was daylight. The front of Vehicle two (V2), a 2003 Volkswagen Jetta, struck the left side of V1.",
    )
    assert t_shape(s) == ("T-intersection", 5, 3)


def test_a_turn_lane_whose_direction_follows_its_kind_is_an_item_of_the_cross_section(
    extractor: OfflineCrashExtractor,
) -> None:
    """ "two eastbound through lanes, an exclusive eastbound right-turn lane and two westbound through lanes": the
    turn lane is counted though "eastbound" comes after "exclusive"."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Mazda 3, was eastbound on a divided state highway approaching a signalized "
        "intersection. There the highway has two eastbound through lanes, an exclusive eastbound right-turn lane and "
        "two westbound through lanes. Vehicle two (V2), a 2008 GMC Sierra pickup, was northbound on the crossing "
        "two-lane, two-way road. It was daylight. The front of V1 struck the left side of V2.",
    )
    assert s.road_network.road_type == "Intersection"
    assert s.to_safe()["Road network"]["No_lanes"] == 5


def test_a_road_named_in_passing_and_described_in_a_later_sentence_keeps_its_place(
    extractor: OfflineCrashExtractor,
) -> None:
    """ "... where the service road of a shopping centre joins the highway from the west and ends. The service road is
    a two-way road with two lanes": the two lanes are the service road's, the branch of the T, and the highway keeps
    its four. (Guard: a ramp described in its own sentence is not moved, and keeps the lanes it widens to there.)"""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2015 Honda Accord, was southbound in the left lane of a four-lane, two-way state highway, "
        "nearing the point where the service road of a shopping centre joins the highway from the west and ends. The "
        "service road is a two-way road that has two lanes. It was night and the roadway was dry. Vehicle two (V2), a "
        "2009 Ford Ranger pickup, was eastbound on the service road and turned left. The front of V1 struck the left "
        "side of V2.",
    )
    assert t_shape(s) == ("T-intersection", 4, 2)
    ramp = extract(
        extractor,
        "Vehicle one (V1), a 2011 Kia Soul, was westbound on Route 40, a two-lane, two-way rural highway, passing the "
        "end of the southbound exit ramp from Interstate 81. The exit ramp is a one-way, single-lane ramp that widens "
        "to two lanes about 50 m before it ends at a stop sign on the north side of Route 40. No road continues north of this junction. It was daylight. Vehicle "
        "two (V2), a 2004 Buick LeSabre, pulled out from the ramp. The front of V1 struck the left side of V2.",
    )
    assert (ramp.road_network.road_type, ramp.to_safe()["Road network"]["No_lanes_branch_road"]) == (
        "T-intersection",
        2,
    )


def test_a_vehicle_pushed_into_a_junction_some_metres_ahead_was_not_hit_there(extractor: OfflineCrashExtractor) -> None:
    """ "... queued for a red signal at an intersection about 50 m ahead ... V1 was shoved into the intersection": the
    rear-end crash was in the queue, short of the junction; the impact only pushed V1 into it."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2009 Honda Civic, was stopped in the left westbound lane of a four-lane divided avenue, "
        "queued for a red signal at an intersection about 50 m ahead. Vehicle two (V2), a 2015 Kenworth tractor "
        "without a trailer, was traveling west in the same lane. It was daylight and clear. The front of V2 struck "
        "the rear of V1. V1 was shoved into the intersection and came to rest facing west.",
    )
    assert s.road_network.road_type == "Straight"


def test_a_road_that_runs_on_and_then_after_a_comma_terminates_at_another_is_a_t(
    extractor: OfflineCrashExtractor,
) -> None:
    """ "The county road runs north-south, terminates at the highway from the south side": a T, as "runs ... and
    terminates at" already was."""
    s = extract(
        extractor,
        "The crash occurred where a two-lane, two-way county road meets a two-lane, two-way state highway. The county "
        "road runs north-south, terminates at the highway from the south side, and has a stop sign. It was dark and "
        "foggy. Vehicle one (V1), a 2012 Ford Focus, was eastbound on the highway. Vehicle two (V2), a 2007 Dodge Ram "
        "pickup, was northbound on the county road and pulled out. The front of V1 struck the left side of V2.",
    )
    assert s.road_network.road_type == "T-intersection"


@pytest.mark.parametrize(
    ("narrative", "road_type", "lanes"),
    [
        # a curve the crash is placed away from stays elsewhere
        (
            "Vehicle one (V1), a 2010 Ford Focus, was northbound on a two-lane road approximately 300 m south of the "
            "point where the road enters a long sweeping curve to the left. It was daylight. Vehicle two (V2), a 2005 "
            "Honda Civic, was southbound. The front of V1 struck the front of V2.",
            "Straight",
            None,
        ),
        # a junction some metres ahead that a vehicle then drives into is the crash's place
        (
            "Vehicle one (V1), a 2010 Ford Focus, was northbound on a two-lane road, approaching an intersection 80 m "
            "ahead. It was daylight. V1 entered the intersection and the front of V1 struck the left side of Vehicle "
            "two (V2), a 2005 Honda Civic.",
            "Intersection",
            None,
        ),
        # only the first road after "is a" is the road described again; the highway keeps its own lanes
        (
            "Vehicle one (V1), a 2010 Ford Focus, was eastbound on the service road of a mall. The service road is a "
            "two-lane road that meets the four-lane highway from the west and ends. It was daylight. Vehicle two (V2), "
            "a 2005 Honda Civic, was northbound on the highway. The front of V2 struck the left side of V1.",
            "T-intersection",
            (4, 2),
        ),
    ],
)
def test_places_elsewhere_and_roads_described_again_keep_to_what_the_narrative_says(
    extractor: OfflineCrashExtractor, narrative: str, road_type: str, lanes: tuple[int, int] | None
) -> None:
    s = extract(extractor, narrative)
    assert s.road_network.road_type == road_type
    if lanes is not None:
        assert t_shape(s)[1:] == lanes


def test_what_is_told_after_the_aftermath_still_describes_the_scene(extractor: OfflineCrashExtractor) -> None:
    """A junction described only after the rest positions ('The junction is a three-leg intersection ...') is the
    crash's; a clock time in a sentence saying when the crash occurred tells its time wherever it stands; a downpour is
    rain. A rest position 'in the intersection' after the impact makes no junction of a straight road."""
    text = (
        "Vehicle one (V1), a 2005 Buick LaCrosse, was traveling east on County Road 12. Vehicle two (V2), a 2003 "
        "Chevrolet Silverado, was stopped at a stop sign facing north. The driver of V2 pulled out and the front of V1 "
        "struck the left side of V2. V2 came to rest on the north shoulder facing northeast. The crash occurred shortly "
        "after 2200 hours during a steady downpour. The junction is a three-leg intersection: County Road 12 is a "
        "two-lane, two-way road, and Hanson Road ends at it. Both vehicles were towed."
    )
    s = extract(extractor, text)
    assert s.road_network.road_type == "T-intersection", s.road_network
    env = s.to_safe()["Env"]
    assert (env["Time"], env["Weather"]) == ("Nighttime", "Rainy"), env
    straight = (
        "Vehicle one (V1), a 2005 Buick LaCrosse, was traveling east on a two-lane, two-way road. Vehicle two (V2), a "
        "2003 Chevrolet Silverado, was traveling east ahead of V1. It was daylight. The front of V1 struck the back of "
        "V2. V2 was pushed forward. V2 came to rest in the intersection. Both vehicles were towed."
    )
    assert extract(extractor, straight).road_network.road_type == "Straight"
    # nor does a later sentence about where a driver was going
    told = straight + " The driver of V1 said she was on her way to the intersection of Main Street and 5th Avenue."
    assert extract(extractor, told).road_network.road_type == "Straight"
    # a month named elsewhere still dates the clock time of the sentence that says when the crash occurred
    january = (
        "On a Tuesday in January, Vehicle one (V1), a 2005 Buick LaCrosse, was traveling east on a two-lane, two-way "
        "road. The front of V1 struck a tree. V1 came to rest on the shoulder. The crash occurred at 1745 hours."
    )
    assert extract(extractor, january).to_safe()["Env"]["Time"] == "Nighttime"


def test_a_road_said_to_be_one_way_keeps_its_own_count(extractor: OfflineCrashExtractor) -> None:
    """'Main Street is also one-way and has four westbound lanes. Both streets are lit.': the one-way is Main Street's,
    not a road of the next sentence's, so its lanes given for one direction are all its lanes (SAFE's intersection
    count is the most lanes and ways of the roads that meet: four lanes, one way)."""
    text = (
        "Vehicle one (V1), a 2012 Honda Accord, was southbound on Elm Avenue, a one-way street with two southbound "
        "lanes. Elm Avenue crosses Main Street at a signalized intersection. Main Street is also one-way and has four "
        "westbound lanes. Both streets are lit by overhead lamps. Vehicle two (V2), a 2014 Ford Focus, was westbound "
        "on Main Street. It was night. The front of V1 struck the left side of V2 in the intersection."
    )
    s = extract(extractor, text)
    assert s.road_network.road_type == "Intersection"
    assert (s.road_network.lanes, s.road_network.ways) == (4, 1), s.notes


@pytest.mark.parametrize(
    ("weather", "expected"),
    [
        ("It was daylight and overcast, and the pavement was wet from melting snow.", "Overcast"),
        ("It was daylight under a clear sky; snow was piled along both shoulders.", "Clear"),
        ("It was daylight and cloudy, with plowed snow heaped in the median.", "Cloudy"),
        # falling snow is still the weather
        ("It was daylight and snow was falling on the piled snow along the shoulders.", "Snowy"),
        ("It was daylight and wet, melting snow was falling.", "Snowy"),
        ("It was daylight under a clear sky, with piles of snow along the curbs.", "Clear"),
        ("It was daylight and clear; snow banks lined the road.", "Clear"),
        # only snow lies by the road: fog lying in the low areas is fog
        ("It was daylight and fog was lying in the low areas along the road.", "Foggy"),
        # snow covering the road, with the sky told: the sky is the weather
        ("It was daylight under a clear sky, and the road was snow covered after an overnight storm.", "Clear"),
        ("It was daylight and the sky was overcast. V1 slid on the snow.", "Overcast"),
        # with nothing said of the sky, the snow on the road is
        ("It was daylight and the asphalt was snow covered.", "Snowy"),
        ("It was daylight. V1 slid on the snow.", "Snowy"),
        # snow falling is the weather whatever the sky, also where its clause says so later
        ("It was daylight and snowing under an overcast sky, and the road was snow covered.", "Snowy"),
        ("It was daylight and overcast. Heavy snow covered the road and continued to fall.", "Snowy"),
        # only a sky outranks the snow on the road: not wipers, wind or a snowy morning
        ("It was daylight. V1 slid on the snow. The driver had his wipers on.", "Snowy"),
        ("It was daylight and windy, and the road was snow covered.", "Snowy"),
        ("On the snowy morning of the crash it was daylight and overcast.", "Snowy"),
        # a fall in the same clause is the snow's only when the snow is what falls
        ("It was daylight and overcast. The road was snow covered and the driver of V1 fell asleep.", "Overcast"),
        ("It was daylight and overcast. V1 slid on the fresh snow, which was still falling.", "Snowy"),
        ("It was daylight and overcast. The road was covered in snow.", "Overcast"),
    ],
)
def test_snow_lying_by_the_road_is_not_snow_falling(
    extractor: OfflineCrashExtractor, weather: str, expected: str
) -> None:
    """Melting snow, or snow piled or heaped along the road, lies there from an earlier storm: the sky named in the
    narrative is the weather. Snow on the road itself ("slid on the snow", "snow covered") gives way to a sky the
    narrative tells, and is the weather where none is told."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2006 Honda Civic, was northbound on a two-lane, two-way rural road. {weather} The front "
        "of V1 struck the front of Vehicle two (V2), a 2003 Ford Focus.",
    )
    assert s.env.weather == expected


@pytest.mark.parametrize(
    ("vehicle", "kind"),
    [
        ("a 2011 MCI D4505 motor coach", "Truck"),
        ("a 2015 Chevrolet G4500 type III ambulance", "Truck"),
        ("a 2013 Ford F-450 Type 1 ambulance", "Truck"),
        # coach makers named without the word "coach" (Europe's, sold in the US too)
        ("a 2014 Van Hool CX45", "Truck"),
        ("a 2012 Setra S 417", "Truck"),
        # a van-bodied ambulance stays a car, as a van does
        ("a 2016 Ford Transit van ambulance", "Car"),
    ],
)
def test_coaches_and_box_ambulances_are_trucks(extractor: OfflineCrashExtractor, vehicle: str, kind: str) -> None:
    """A motor coach (or a coach maker's vehicle) is a bus, and a type I or III (box) ambulance a straight truck:
    both are SAFE's Truck."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2006 Honda Civic, was traveling north on a two-lane, two-way road. Vehicle two (V2), "
        f"{vehicle}, was traveling south. It was daylight. The front of V2 struck the front of V1.",
    )
    assert {a.id: a.vehicle_class for a in s.actors}["V2"] == kind


@pytest.mark.parametrize(
    ("roads", "main"),
    [
        (
            "was on a single-lane on-ramp that starts at a two-lane, one-way service road and was merging into the "
            "right lane of a six-lane, divided freeway (three lanes in each direction)",
            (6, 2),
        ),
        # the road merged into is named first, and the ramp leaves a wider one
        (
            "was on a four-lane, divided freeway (two lanes in each direction) at an entrance ramp. The single-lane "
            "on-ramp begins at a six-lane, divided arterial, and V1 was merging from it into the right lane of the "
            "freeway",
            (4, 2),
        ),
    ],
)
def test_a_merge_joins_the_road_it_enters(extractor: OfflineCrashExtractor, roads: str, main: tuple[int, int]) -> None:
    """An on-ramp that starts at another road ("begins at a two-lane, one-way service road") merges into the road it
    enters: that is the merge's main road, whichever the narrative named first and whichever is wider."""
    s = extract(
        extractor,
        f"Vehicle one (V1), a 2009 Honda Odyssey, {roads}. Vehicle two (V2), a 2016 Kenworth T680 tractor-trailer, was "
        "traveling in the right lane of the freeway. It was daylight. The front of V2 struck the rear of V1.",
    )
    net = s.to_safe()["Road network"]
    assert s.road_network.road_type == "Merge"
    assert (net["No_lanes_main_road"], net["No_ways_main_road"]) == main


@pytest.mark.parametrize(
    "goal",
    [
        "turned right across both lanes in order to reach an on-ramp to the freeway that starts 150 m to the east",
        "pulled out of a gas station, trying to get to the entrance ramp of the interstate",
        "pulled out of a gas station, heading to the entrance ramp of the interstate",
    ],
)
def test_a_ramp_a_vehicle_was_heading_for_is_not_the_crash_place(extractor: OfflineCrashExtractor, goal: str) -> None:
    """A ramp that a driver set out to reach ("in order to reach an on-ramp", "to get to the entrance ramp") is where
    the vehicle was going, not where the crash happened: the crash is on the road it was crossing."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Mazda 6, was traveling west in the right lane of a two-lane, one-way frontage road. "
        f"Vehicle two (V2), a 2014 Ford F-150 pickup, {goal}. It was daylight. The front of V1 struck the left side "
        "of V2.",
    )
    assert (s.road_network.road_type, s.road_network.lanes, s.road_network.ways) == ("Straight", 2, 1)


def test_an_intersection_a_driver_hurried_to_reach_is_the_crash_place(extractor: OfflineCrashExtractor) -> None:
    """Only a ramp set out for is elsewhere: a driver who sped up "to reach the intersection before the light turned
    red" crashed there."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2012 Mazda 6, was traveling north on a two-lane, two-way road. The driver of V1 "
        "accelerated to reach the intersection before the light turned red. Vehicle two (V2), a 2014 Ford F-150, was "
        "stopped ahead. It was daylight. The front of V1 struck the back of V2.",
    )
    assert s.road_network.road_type == "Intersection"


@pytest.mark.parametrize(
    "section",
    [
        "At the intersection the avenue is 5 lanes wide (two northbound lanes, a southbound left-turn lane and two "
        "southbound through lanes), and north of the intersection the two southbound through lanes narrow to one.",
        # a place inside one item's own description does not end the list
        "At the intersection the avenue has two northbound through lanes east of the median, a southbound left-turn "
        "lane and two southbound through lanes.",
    ],
)
def test_a_lane_list_ends_where_the_narrative_moves_elsewhere(extractor: OfflineCrashExtractor, section: str) -> None:
    """A cross-section listed at the junction ("two northbound lanes, a southbound left-turn lane and two southbound
    lanes") is the junction's count: lanes named next in a clause placed away from it ("and north of the signal the
    two southbound lanes narrow to one") are not more of its lanes, though an item placed by the median still is."""
    s = extract(
        extractor,
        "Vehicle one (V1), a 2010 Toyota Corolla, was traveling south on a two-way avenue and was stopped in the "
        f"southbound left-turn lane at a signalized four-leg intersection. {section} Vehicle two (V2), a 2017 Nissan "
        "Altima, was traveling north. It was daylight. The front of V2 struck the right side of V1.",
    )
    assert (s.road_network.road_type, s.road_network.lanes) == ("Intersection", 5)


def test_road_users_the_dsl_cannot_hold_are_named_in_the_notes(extractor: OfflineCrashExtractor) -> None:
    """A pedestrian or a cyclist in the report is left out of the vehicles-only DSL with a note saying so, and a
    scenario left with one vehicle says there is no crash between vehicles to reproduce; a place named after cyclists
    (a bicycle lane) names no road user."""
    struck = extract(
        extractor,
        "V1, a 2012 Honda Civic, was traveling east on a two-lane urban road in daylight. A pedestrian stepped off the "
        "north curb, and the front of V1 struck the pedestrian. A bicyclist riding behind was not involved.",
    )
    assert [a.id for a in struck.actors] == ["V1"]
    assert any("not a vehicle (pedestrian)" in n for n in struck.notes), struck.notes
    assert any(n.startswith("one vehicle:") for n in struck.notes), struck.notes
    lane = extract(
        extractor,
        "V1 was traveling north in the right lane beside a bike-lane on a two-lane road, past a pedestrian refuge "
        "island. V2, a motor bike, was stopped ahead in the same lane. No pedestrians or cyclists were present. The "
        "front of V1 struck the back of V2.",
    )
    assert len(lane.actors) == 2 and not any("not a vehicle" in n or "one vehicle" in n for n in lane.notes), lane.notes
    # ... while a road user who was there still is one, however the sentence goes on.
    for there in ("A pedestrian crossing against the signal was struck by V1.", "No one saw the cyclist until V1 hit.",
                  "V1 struck a jogger present in the crosswalk."):  # fmt: skip
        scenario = extract(extractor, f"V1 was traveling east on a two-lane road in daylight. {there}")
        assert any("not a vehicle" in n for n in scenario.notes), (there, scenario.notes)
