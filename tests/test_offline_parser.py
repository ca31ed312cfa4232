"""The offline ontology-grounded parser and the offline validator."""

from __future__ import annotations

import pytest

from memory.embeddings import MiniLMEmbedder
from tests.helpers import rule
from tools.rules.lexicon import tokenize_rule
from tools.rules.models import MRCandidate, MRFields
from tools.rules.offline_parser import OFFLINE_PARSER_NAME, OntologyGroundedParser
from tools.rules.ontology import Ontology
from tools.rules.scoring import score_rules
from tools.rules.validation import OfflineValidator, choose_best


@pytest.fixture(scope="module")
def parser(ontology: Ontology) -> OntologyGroundedParser:
    return OntologyGroundedParser(ontology=ontology)


@pytest.fixture(scope="module")
def validator(ontology: Ontology, parser: OntologyGroundedParser) -> OfflineValidator:
    return OfflineValidator(ontology=ontology, parser=parser)


def best(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, region: str = "germany"
) -> MRFields | None:
    r = rule(text, region=region)
    verdict = choose_best(validator.validate_sync(r, parser.parse(r)))
    return verdict.candidate.mr if verdict else None


def test_names_itself_as_offline(parser: OntologyGroundedParser) -> None:
    """Candidates say they come from the offline parser, never from an LLM."""
    cands = parser.parse(rule("Slow down when children are near the road."))
    assert cands and all(c.parser == OFFLINE_PARSER_NAME for c in cands)
    assert "offline" in OFFLINE_PARSER_NAME


def test_weather_is_replaced_with_core_term(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """Weather maps onto the core environment term with the verb replaces."""
    mr = best(parser, validator, "In heavy snowfall the speed must be reduced.")
    assert mr is not None
    assert (mr.road_type, mr.verb, mr.expected_behavior) == ("any roads", "replaces", "slow down")
    assert "snow environment" in mr.manipulation


def test_place_and_object_are_found(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """A rule naming a place and a road user gives that place and that road user."""
    mr = best(
        parser,
        validator,
        "Drivers must give the right-of-way to pedestrians at an uncontrolled crosswalk.",
        "california",
    )
    assert mr is not None and mr.road_type == "crosswalk" and "pedestrian" in mr.manipulation and mr.verb == "adds"


def test_ego_vehicle_is_not_a_manipulation(parser: OntologyGroundedParser) -> None:
    """'Anyone driving a vehicle' is the ego-vehicle, not an added vehicle."""
    analysis = parser.analyse(rule("Anyone driving a vehicle must be careful.", region="california"))
    assert all(m.term.normalised != "vehicle" for m in analysis.manipulations)


def test_terms_inside_longer_terms_are_dropped(parser: OntologyGroundedParser) -> None:
    """'bicycle' inside the road type 'bicycle path' is not a road user."""
    analysis = parser.analyse(rule("Those using a bicycle path must behave accordingly at railroad crossings."))
    assert "bicycle" not in {m.term.normalised for m in analysis.manipulations}
    assert "railroad crossing" in {m.term.normalised for m in analysis.road_types}


def test_the_more_specific_of_overlapping_terms_stands_alone(parser: OntologyGroundedParser) -> None:
    """'A flashing red traffic signal light' is a flashing red light, not also a plain red light."""
    analysis = parser.analyse(
        rule("At a flashing red traffic signal light, stop and then proceed.", region="california")
    )
    names = {m.term.normalised for m in analysis.manipulations}
    assert "flashing red light" in names
    assert "red light" not in names


def test_a_gap_over_another_term_is_a_coordination(parser: OntologyGroundedParser) -> None:
    """'heavy fog or smoke' names fog and smoke; it is not a gapped 'heavy ... smoke' over the fog."""
    analysis = parser.analyse(rule("If you must drive in heavy fog or smoke, drive slowly.", region="california"))
    spans = sorted((m.start, m.end, m.term.normalised) for m in analysis.manipulations)
    assert all(m.gap == 0 for m in analysis.manipulations), spans
    assert {"fog environment", "heavy smoke environment"} <= {n for _, _, n in spans}


def test_a_core_term_goes_before_a_region_term(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """Slippery roads (a California term) come from rain: AutoMT's prompt offers the core list, so 'rain
    environment' is the MR's manipulation, with the region term still a candidate behind it."""
    text = "Slippery Roads. Rain can make the roads slippery. Drive more slowly than you would on a dry road."
    mr = best(parser, validator, text, region="california")
    assert mr is not None and "rain environment" in mr.manipulation
    names = [c.mr.manipulation for c in parser.parse(rule(text, region="california"))]
    assert any("slippery road" in n for n in names), names


def test_what_a_rule_names_only_to_rule_out_goes_last(parser: OntologyGroundedParser) -> None:
    """'Without STOP or YIELD signs' is about the vehicles at the junction, not about a stop sign; 'with or
    without' rules nothing out."""
    analysis = parser.analyse(
        rule("Without STOP or YIELD signs: the vehicle that arrives first at the intersection goes first.")
    )
    assert {m.term.normalised for m in analysis.manipulations if m.ruled_out} >= {"stop sign", "yield sign"}
    kept = parser.analyse(rule("Slow down for children crossing with or without a school bus nearby."))
    assert not any(m.ruled_out for m in kept.manipulations)


def test_a_sentence_of_examples_names_the_subject(parser: OntologyGroundedParser) -> None:
    """'This includes roller skates' lists what the rule is about; 'including roller skates' inside a sentence is
    an aside, ranked down as before."""

    def skates(text: str) -> float:
        analysis = parser.analyse(rule(text, region="california"))
        return next(m.score for m in analysis.manipulations if m.term.normalised == "person using roller skate")

    defining = skates("Watch for people moving on the road. This includes roller skates and scooters.")
    aside = skates("Watch for people moving on the road, including roller skates and scooters.")
    assert defining - aside > 1.0


def test_words_that_name_no_term_where_they_stand(parser: OntologyGroundedParser) -> None:
    """A blind spot is no blind pedestrian; a turn signal, turning the lights on and deer that cross roads are no
    junction; a blind person (a pedestrian) and a right turn still are what they were."""
    spot = parser.analyse(rule("Check your blind spot before changing lanes.", region="california"))
    assert not {m.term.normalised for m in spot.manipulations} & {"guide dog user", "blind pedestrian"}
    for text in (
        "Use your turn signal before changing lanes.",
        "Turn on your headlights in fog.",
        "Deer often cross roads at dusk.",
        "If you see a WRONG WAY sign, pull over and turn around.",
    ):
        assert "intersection" not in {m.term.normalised for m in parser.analyse(rule(text)).road_types}, text
    assert "intersection" in {
        m.term.normalised for m in parser.analyse(rule("Slow down before you turn right.")).road_types
    }
    blind = parser.analyse(rule("Stop for a blind person with a white cane.", region="california"))
    assert "pedestrian" in {m.term.normalised for m in blind.manipulations}


def test_a_compound_names_its_last_noun(ontology: Ontology) -> None:
    """'light rail tracks' are tracks (a railroad crossing), not a rail vehicle: 'light rail' (a vehicle) and 'rail
    track' (a place) overlap, and the one that runs on to the right is the head (here without the lexicon's
    whole phrase 'light rail track', which would hide the overlap)."""
    from tools.rules.evaluation import filter_phrases
    from tools.rules.lexicon import load_lexicon

    lexicon = filter_phrases(load_lexicon(), lambda p: p != "light rail track")
    parser = OntologyGroundedParser(ontology=ontology, lexicon=lexicon)
    analysis = parser.analyse(rule("Near light rail tracks, look both ways.", region="california"))
    assert "rail vehicle" not in {m.term.normalised for m in analysis.manipulations}
    assert "railroad crossing" in {m.term.normalised for m in analysis.road_types}


def test_every_lexicon_field_says_how_leave_one_out_drops_it() -> None:
    """Each field of ``Lexicon`` declares its kind once; leave-one-out's filter and phrase list follow the
    declaration, so keeping nothing leaves no phrase in any declared phrase field (a field added without a kind,
    or with one the filter ignores, fails here instead of escaping leave-one-out)."""
    import dataclasses

    from tools.rules.evaluation import all_phrases, filter_phrases
    from tools.rules.lexicon import PHRASE_KINDS, Lexicon, load_lexicon

    kinds = {f.name: f.metadata.get("leave_one_out") for f in dataclasses.fields(Lexicon)}
    assert all(k in PHRASE_KINDS for k in kinds.values()), kinds
    lexicon = load_lexicon()
    assert {"red light", "a pedestrian", "at night"} & all_phrases(lexicon)
    empty = filter_phrases(lexicon, lambda p: False)
    assert not all_phrases(empty)
    for name, kind in kinds.items():
        value = getattr(empty, name)
        if kind == "phrases":
            assert value == [], name
        elif kind in ("phrase_lists", "cues"):
            assert value and all(v == [] for v in value.values()), name
        elif kind == "keyed":
            assert value == {}, name
        else:
            assert value == getattr(lexicon, name), name
    keyed = {f"{name}:{k}" for name, kind in kinds.items() if kind == "keyed" for k in getattr(lexicon, name)}
    assert set(lexicon.provenance) <= all_phrases(lexicon) | keyed, "provenance for an entry leave-one-out ignores"
    one = filter_phrases(lexicon, lambda p: p != "specialised_generics:oncoming vehicle")
    assert "oncoming vehicle" in lexicon.specialised_generics
    assert "oncoming vehicle" not in one.specialised_generics


def test_every_exception_cue_is_a_keep_current_cue() -> None:
    """An exception cue only drops a keep-current cue the matcher found: one missing from ``behavior_cues`` (or
    written in another spelling there) would never apply."""
    from tools.common.text import tokens
    from tools.rules.lexicon import load_lexicon

    lexicon = load_lexicon()
    keep = {tokens(phrase) for phrase, _ in lexicon.behavior_cues["keep current"]}
    assert lexicon.exception_cues
    assert not {tokens(p) for p in lexicon.exception_cues} - keep


def test_a_bare_head_noun_refers_back(parser: OntologyGroundedParser) -> None:
    """'the bus' after 'school buses' is the school bus, not any public transport bus."""
    analysis = parser.analyse(
        rule("School buses stop to let children off. Slow down near the bus.", region="california")
    )
    assert {m.term.normalised for m in analysis.manipulations if m.surface.lower() == "bus"} == {"school bus"}


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("Carpool lanes are for vehicles with two or more people.", "high-occupancy vehicle (hov) lanes"),
        ("Use the two-way left turn lane only to begin or end a left turn.", "center left turn lanes"),
        ("Always obey a regulatory sign.", "red and white regulatory sign"),
        ("Watch for adults riding a tricycle on the shoulder.", "tricycle"),
        ("Botts dots mark the lanes on many freeways.", "raised pavement markers"),
        ("Slow down when you see a diamond-shaped sign.", "warning signs"),
        ("Orange signs mark road work ahead; slow down.", "work zone sign"),
        ("A round yellow sign means a railroad crossing is ahead.", "warning signs"),
        ("A pennant-shaped yellow sign marks a no-passing zone.", "warning signs"),
        ("White rectangular signs tell you the law.", "speed limit sign"),
        ("Do not pass in a no-passing zone.", "solid and broken yellow lines"),
        ("Give a rider on a motorized scooter plenty of room.", "electric micro-vehicle"),
    ],
)
def test_california_terms_by_their_handbook_names(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """California ontology terms whose labels are rarely written out ('High-Occupancy Vehicle (HOV) Lanes') are
    found by the names a handbook gives them."""
    mr = best(parser, validator, text, region="california")
    assert mr is not None and term in mr.manipulation.lower(), mr


def test_signal_colours_need_a_signal_context(parser: OntologyGroundedParser) -> None:
    """'Red' means a red light at an intersection, but a yellow line is no signal."""
    red = parser.analyse(rule('Red orders: "Stop before the intersection."'))
    assert "red light" in {m.term.normalised for m in red.manipulations}
    line = parser.analyse(rule("Do not cross a solid yellow line.", region="california"))
    assert "yellow light" not in {m.term.normalised for m in line.manipulations}


def test_behaviour_cues(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """Overtaking bans keep the current behaviour; waiting and walking speed slow down."""
    keep = best(
        parser, validator, "Public transport buses approaching a stop with hazard lights on must not be overtaken."
    )
    slow = best(parser, validator, "When passengers are boarding, vehicles may only pass at walking speed.")
    assert keep is not None and keep.expected_behavior == "keep current"
    assert slow is not None and slow.expected_behavior == "slow down" and slow.road_type == "bus stopping"


def test_a_step_after_then_weighs_less_than_the_first(parser: OntologyGroundedParser) -> None:
    """'do not stop there; drive on through it and then pull to the right': what the driver does first is to go on;
    the pull-over is a later step. A stop that comes first stays the behaviour ('Stop at the limit line, then go
    when it is safe')."""
    on = parser.analyse(
        rule(
            "If a fire engine with its siren on comes while you are inside an intersection, do not stop there. Drive "
            "on through it and then pull to the right.",
            region="california",
        )
    )
    assert max(on.behavior_scores, key=on.behavior_scores.__getitem__) == "keep current", on.behavior_scores
    first = parser.analyse(rule("A flashing red light means stop at the limit line, then go when it is safe."))
    assert max(first.behavior_scores, key=first.behavior_scores.__getitem__) == "slow down", first.behavior_scores
    # a "then" after a condition opens the main clause: no later step
    cond = parser.analyse(
        rule(
            "Do not stop on the railroad tracks. If the crossing signal flashes red, then stop at least 15 feet from "
            "the nearest rail.",
            region="california",
        )
    )
    assert parser.parse(cond.rule)[0].mr.expected_behavior == "slow down", cond.behavior_scores


def test_a_crosswalk_to_stop_before_is_no_place_of_a_junction_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'Stop at the limit line or before you enter the crosswalk' says where a STOP sign's stop is made: the sign's
    place is its junction. A crosswalk the rule is about stays the place ('Stop for pedestrians in a crosswalk')."""
    sign = best(
        parser,
        validator,
        "An eight-sided red sign tells you to stop completely. Stop at the limit line, or before you enter the "
        "crosswalk.",
        "california",
    )
    assert sign is not None and "stop sign" in sign.manipulation and sign.road_type == "intersection", sign
    walk = best(parser, validator, "Stop for pedestrians in a crosswalk.", "california")
    assert walk is not None and walk.road_type == "crosswalk", walk
    # A signal at a crosswalk, where the stop is not placed before it, stands at the crosswalk.
    light = best(
        parser, validator, "Stop for the flashing red light at a crosswalk in the middle of the block.", "california"
    )
    assert light is not None and light.road_type == "crosswalk", light


def test_a_crosswalk_last_in_a_list_of_stop_points_is_no_place_of_a_junction_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'stop behind the limit line or crosswalk': the crosswalk too is where the STOP sign's stop is made, and the
    Validator, which grounds the sign's junction, counts it no more than the parser does (it had kept the road users
    at the crosswalk instead)."""
    text = (
        "STOP Sign red eight-sided sign\nCome to a complete stop behind the limit line or crosswalk, then move on only "
        "when the way is clear of cars, bicyclists, and people walking."
    )
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.road_type, mr.manipulation) == ("intersection", "a stop sign"), mr
    # (a list of three, with a comma before its 'or')
    three = "At a STOP sign, come to a complete stop behind the limit line, stop line, or crosswalk."
    mr3 = best(parser, validator, three, "california")
    assert mr3 is not None and mr3.road_type == "intersection", mr3
    # (a crosswalk in a list with no stop word before it stays a place)
    walk = best(parser, validator, "Watch for people walking at a corner or crosswalk.", "california")
    assert walk is not None and walk.road_type == "crosswalk", walk


def test_a_hazard_named_as_a_signs_legend_is_the_sign(parser: OntologyGroundedParser) -> None:
    """'Lane Ends merge sign' and 'a LANE ENDS sign' are warning signs, named by what they warn of; a road user a sign
    marks ('Slow Moving Vehicles orange triangle sign') stays the road user."""
    for text in (
        "Lane Ends merge sign Where two lanes narrow to one, take turns with the other lane.",
        "Lane Ends A LANE ENDS sign tells you that your lane stops ahead. Merge when there is a gap.",
    ):
        top = parser.parse(rule(text, region="california"))[0].mr
        assert top.manipulation == "warning signs", (text, top)
    slow = parser.parse(
        rule(
            "Slow Moving Vehicles orange triangle sign An orange triangle on the back of a vehicle means it goes 25 "
            "mph or slower, like road maintenance vehicles. Slow down.",
            region="california",
        )
    )[0].mr
    assert "sign" not in slow.manipulation, slow
    # a sign that opens the next sentence names no legend of the hazard before it
    fog = parser.parse(
        rule("Slow down when you drive in fog. Speed limit signs show the top speed.", region="california")
    )[0].mr
    assert "fog" in fog.manipulation, fog


def test_a_region_event_in_a_heading_leads_the_core_vehicle_that_carries_it_out(
    parser: OntologyGroundedParser,
) -> None:
    """'Traffic Breaks An officer switches on the patrol car's rear lights ...': the traffic break the heading names is
    the subject, not the patrol car named twice after it."""
    text = (
        "Traffic Breaks An officer may switch on the patrol car's rear lights and weave from lane to lane. Slow down, "
        "do not pass the patrol car, and stay back until the break ends."
    )
    assert parser.parse(rule(text, region="california"))[0].mr.manipulation == "a traffic break"


def test_a_sign_in_a_heading_leads_the_weather_it_is_seen_in(parser: OntologyGroundedParser) -> None:
    """'Speed Limit Signs The number on the sign ... When it is raining, drive slower than the posted number': the
    sign the heading names is the subject, not the rain named as a case of it; without the heading the rain leads."""
    body = "The number on the sign is the top speed in ideal conditions. When it is raining, drive slower than that."
    top = parser.parse(rule("Speed Limit Signs " + body, region="california"))[0].mr
    assert "speed limit" in top.manipulation, top
    bare = parser.parse(rule("Speed limit signs: " + body.lower(), region="california"))[0].mr
    assert "rain" in bare.manipulation, bare


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        # a heading, then the picture's text, then the paragraph, all run together as a scraped page gives them
        (
            "Warning Signs elk crossing sign Yellow diamond signs showing an elk mark stretches where wild animals "
            "cross. Take extra care at dusk and slow down.",
            "warning",
        ),
        # the picture's text first, then the heading
        (
            "raised pavement markers Raised Pavement Markers Little raised reflectors along the lane lines are easy "
            "to spot at night or in rain. Keep between them.",
            "raised pavement",
        ),
    ],
)
def test_a_heading_glued_to_a_pictures_text_still_heads_the_rule(
    parser: OntologyGroundedParser, text: str, subject: str
) -> None:
    """A sign or marking in the glued opening of a scraped page leads the light or weather named as a case of it;
    without the heading the weather leads."""
    assert subject in parser.parse(rule(text, region="california"))[0].mr.manipulation
    bare = "Raised pavement markers are easy to spot at night or in rain. Keep between them."
    assert "rain" in parser.parse(rule(bare, region="california"))[0].mr.manipulation
    # a place named in the sentence makes no heading of its opening words
    named = "Raised pavement markers in California are easy to spot at night or in rain. Keep between them."
    assert "rain" in parser.parse(rule(named, region="california"))[0].mr.manipulation


@pytest.mark.parametrize(
    "text",
    [
        "At a STOP sign Drivers must wait.",  # glued at "Drivers", not at "STOP": a word in capitals glues nothing
        "Stop at a STOP sign and wait.",
        "Warning signs in California are hard to read.",  # a name after a preposition or article glues nothing ...
        "Watch for a U-turn sign.",  # ... nor does a word with a capital inside a hyphenated word
        "Slow down. Watch for deer Yellow signs show where.",  # only the first sentence can be glued
        "Watch for deer at dusk, Yellow signs show where.",  # a comma ends the run
    ],
)
def test_only_a_capital_run_on_after_a_lower_case_word_glues_an_opening(
    parser: OntologyGroundedParser, text: str
) -> None:
    from tools.rules.offline_parser import _glued_opening

    assert _glued_opening(parser.analyse(rule(text, region="california")).tokens) == (4 if "Drivers" in text else 0)


def test_a_condition_in_a_heading_leads_the_light_it_comes_from(parser: OntologyGroundedParser) -> None:
    """'Sun Glare ... Glare from the rising sun': the glare the heading names is the subject, not the sunrise that
    causes it; but where the text opens on the conditions ('Slippery Roads Rain, snow, or ice can make the pavement
    slick'), those conditions are what it tells of."""
    glare = (
        "Sun Glare driving east at sunrise Glare from the rising sun can hide signals and people on foot. Slow down "
        "and use your visor."
    )
    assert "glare" in parser.parse(rule(glare, region="california"))[0].mr.manipulation.lower()
    slick = "Slippery Roads Rain, snow, or ice can make the pavement slick. Drive slower than you would on a dry road."
    assert "slippery" not in parser.parse(rule(slick, region="california"))[0].mr.manipulation.lower()
    for opening in ("In rain, snow, or ice the pavement gets slick.", "When it rains or snows, the pavement is slick."):
        text = "Slippery Roads " + opening + " Drive slower."
        assert "slippery" not in parser.parse(rule(text, region="california"))[0].mr.manipulation.lower(), text


def test_an_orange_warning_sign_is_a_work_zone_sign(parser: OntologyGroundedParser) -> None:
    """US handbooks: warning signs are yellow, work zone signs orange; an 'orange warning sign' is the work zone's."""
    orange = parser.parse(rule("Slow down when you pass an orange warning sign.", region="california"))[0].mr
    assert "work zone" in orange.manipulation.lower(), orange
    yellow = parser.parse(rule("Slow down when you pass a yellow warning sign.", region="california"))[0].mr
    assert "warning" in yellow.manipulation.lower(), yellow


def test_slow_traffic_that_others_are_in_is_no_cue_to_slow_down(parser: OntologyGroundedParser) -> None:
    """'Motorcyclists may ride between lanes of slow or stopped traffic. Stay in your lane': the slow traffic is the
    others'; the ego keeps its lane. A verb that slows traffic ('weaves across the lanes to slow traffic') still asks
    the ego to slow with it."""
    text = "Motorcyclists may ride between lanes of slow or stopped traffic. Stay in your lane when they do."
    splitting = parser.analyse(rule(text, region="california"))
    assert "slow down" not in splitting.behavior_scores, splitting.behavior_evidence
    when = "Motorcyclists may ride between lanes when traffic is slow or stopped. Stay in your lane when they do."
    assert "slow down" not in parser.analyse(rule(when, region="california")).behavior_scores
    weave = "An officer weaves across the lanes to slow traffic behind an emergency."
    assert "slow down" in parser.analyse(rule(weave, region="california")).behavior_scores


def test_what_a_habit_causes_is_an_aside(parser: OntologyGroundedParser) -> None:
    """'Do not slow down to stare at a collision ... Gawkers cause traffic jams': the collision is the subject; the
    traffic jams it causes are a consequence, not what the rule is about."""
    text = "Do not slow down to stare at a collision beside the road. Gawkers cause more crashes and traffic jams."
    a = parser.analyse(rule(text, region="california"))
    jams = [m for m in a.manipulations if m.term.normalised == "heavy traffic"]
    assert jams and all(m.aside for m in jams), jams
    assert parser.parse(rule(text, region="california"))[0].mr.manipulation == "a collision"
    # whom a manoeuvre causes to swerve is no consequence but the road user the rule protects
    swerve = parser.analyse(rule("When passing, do not cause a bicyclist to swerve.", region="california"))
    assert not any(m.aside for m in swerve.manipulations if m.term.normalised == "bicyclist"), swerve.manipulations


def test_unrelated_text_is_rejected(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """Text with no traffic element yields no accepted MR."""
    assert best(parser, validator, "The annual report is due in March.") is None


def test_semantic_fallback_uses_minilm(ontology: Ontology, embedder: MiniLMEmbedder) -> None:
    """With no term in the text, the nearest ontology label by MiniLM similarity is proposed."""
    p = OntologyGroundedParser(ontology=ontology, embedder=embedder, semantic_threshold=0.4)
    r = rule("Watch out for kids chasing a ball between parked cars near schools.")
    analysis = p.analyse(r)
    p._semantic_fallback([analysis])
    assert analysis.semantic, "the fallback found no label at all"
    labels = [label for label, _ in analysis.semantic]
    assert any(term in labels for term in ("child", "Child", "stopped vehicle", "Escorted School Children"))


def test_sample_rules_reach_the_target(
    parser: OntologyGroundedParser, validator: OfflineValidator, ontology: Ontology, sample_rules: list[dict]
) -> None:
    """On twelve German rules the offline reasoner gets at least 10 triples right."""
    items = []
    for r in sample_rules:
        tr = rule(r["text"], r["id"])
        verdict = choose_best(validator.validate_sync(tr, parser.parse(tr)))
        items.append(
            (
                r["id"],
                "germany",
                verdict.candidate.mr if verdict else None,
                [MRFields(**p) for p in r["reference_parsed"]],
            )
        )
    report = score_rules(ontology, items)
    assert report.fraction("triple") >= 10 / 12, report.as_dict()


def test_validator_flags_wrong_verb_and_impossible_turn(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'adds fog' and turning left on a railroad crossing score lower than the right MR."""
    r = rule("At railroad crossings with a St. Andrew's cross, approach at moderate speed in fog.")
    good = MRCandidate(
        mr=MRFields(
            road_type="railroad crossings",
            verb="adds",
            manipulation="a st. andrew's cross sign",
            expected_behavior="slow down",
        ),
        parser="t",
    )
    wrong_verb = MRCandidate(
        mr=MRFields(road_type="any roads", verb="adds", manipulation="fog environment", expected_behavior="slow down"),
        parser="t",
    )
    turn = MRCandidate(
        mr=MRFields(
            road_type="railroad crossings",
            verb="adds",
            manipulation="a st. andrew's cross sign",
            expected_behavior="turn left",
        ),
        parser="t",
    )
    v_good, v_verb, v_turn = validator.validate_sync(r, [good, wrong_verb, turn])
    assert v_good.score == 1.0 and v_good.accepted
    assert v_verb.score < v_good.score and any("verb" in reason for reason in v_verb.reasons)
    assert v_turn.score < v_good.score and any("turning" in reason for reason in v_turn.reasons)
    assert choose_best([v_verb, v_turn, v_good]) is v_good


def test_validator_rejects_terms_outside_the_ontology(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A made-up manipulation or behaviour fails a hard check."""
    r = rule("Yield to a unicorn on the road.")
    cand = MRCandidate(
        mr=MRFields(road_type="any roads", verb="adds", manipulation="a unicorn", expected_behavior="fly away"),
        parser="t",
    )
    (v,) = validator.validate_sync(r, [cand])
    assert not v.accepted
    assert any("manipulation in ontology" in reason for reason in v.reasons)
    assert any("behaviour in ontology" in reason for reason in v.reasons)


def test_a_train_puts_the_rule_at_a_railroad_crossing(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A rule about an approaching train that names no place is about a railroad crossing."""
    mr = best(
        parser, validator, "Stop at least 15 feet from the nearest rail when a train is approaching.", "california"
    )
    assert mr is not None and mr.road_type == "railroad crossings" and "rail vehicle" in mr.manipulation


def test_no_article_before_a_plural_or_a_mass_noun(parser: OntologyGroundedParser) -> None:
    """The Gherkin reads 'adds heavy traffic' and 'adds flaggers (in construction zones)', and still 'adds a school
    bus'."""
    for text, want in (
        ("Expect heavy traffic near the stadium.", "heavy traffic"),
        ("Slow down when you see a flagger.", "flaggers (in construction zones)"),
        ("Stop for a school bus.", "a school bus"),
    ):
        assert parser.parse(rule(text, region="california"))[0].mr.manipulation == want, text


def test_a_named_kind_of_road_beats_an_implied_place(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'on motorways' is the rule's own place, so a stop sign does not move the rule to a junction; with only 'the
    road' named, a red light still implies one."""
    motorway = parser.parse(rule("On motorways, watch for a stop sign at the end of the hard shoulder."))
    assert motorway[0].mr.road_type == "any roads" and "stop sign" in motorway[0].mr.manipulation
    light = best(parser, validator, "A red light on the road means stop.", "california")
    assert light is not None and light.road_type == "intersection"


def test_an_especially_clause_is_an_aside(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """'Keep a safe distance from the vehicle ahead, especially at night or in bad weather' is about the vehicle
    ahead: the weather named after 'especially' is a case of the rule, not its subject."""
    mr = best(parser, validator, "Keep a safe distance from the vehicle ahead, especially at night or in bad weather.")
    assert mr is not None and "driver in front" in mr.manipulation


def test_a_vehicles_own_lights_imply_no_junction(parser: OntologyGroundedParser) -> None:
    """Coloured lights imply an intersection when the rule is about the light; an ambulance's or a school bus's
    lights are the vehicle's, and the place stays any road (a red light on its own still implies a junction)."""
    for text in (
        "You must yield to any police car, fire engine, or ambulance using a siren and red lights.",
        "Some school buses flash yellow lights when preparing to stop to let children off the bus.",
    ):
        best = parser.parse(rule(text, region="california"))[0].mr
        assert best.road_type == "any roads", (text, best)
    signal = parser.parse(rule("A flashing red light means stop.", region="california"))[0].mr
    assert (signal.road_type, signal.manipulation) == ("intersection", "a flashing red light")


def test_a_term_before_a_participle_and_adverb_is_no_modifier(parser: OntologyGroundedParser) -> None:
    """'a vehicle turning left': 'turning left' ends in an adverb, so the turning vehicle is no modifier of a
    compound and stays a manipulation (the road is the junction the turn implies)."""
    best = parser.parse(rule("Yield to a vehicle turning left.", region="california"))[0].mr
    assert (best.road_type, best.manipulation) == ("intersection", "a turning vehicle")


def test_set_phrases_opening_with_a_trigger_word_are_no_trigger(parser: OntologyGroundedParser) -> None:
    """'leave at least three feet ... the bicycle': 'at least' names no situation, so the bicycle at the end does
    not outrank the bicyclist the rule opens with; a real trigger ("near the bicycle") still counts. (Germany's list
    keeps the bicycle apart from its rider; California's reads a bicycle as its rider.)"""
    text = "Pass a bicyclist only when it is safe, and leave at least three feet between your vehicle and the bicycle."
    assert parser.parse(rule(text, region="germany"))[0].mr.manipulation == "a bicyclist"
    near = parser.parse(rule("Pass a bicyclist with care, and slow down near the bicycle.", region="germany"))
    assert near.pop(0).mr.manipulation == "a bicycle"  # "near" is a trigger: the bicycle there is the situation


def test_no_article_before_a_plural_head_after_brackets(parser: OntologyGroundedParser) -> None:
    """The head noun is the last word outside brackets: 'high-occupancy vehicle (hov) lanes' is plural."""
    mr = parser.parse(rule("Do not drive in a carpool lane alone.", region="california"))[0].mr
    assert mr.manipulation == "high-occupancy vehicle (hov) lanes"
    assert parser.parse(rule("Be patient with seniors.", region="california"))[0].mr.manipulation.startswith("a ")


def test_a_generic_vehicle_takes_the_kind_its_clause_names(parser: OntologyGroundedParser) -> None:
    """'a vehicle is tailgating you' is the vehicle behind, though 'let it pass' would imply an oncoming one; a
    clause that names no kind still leaves it to the implication."""
    tail = parser.parse(rule("If a vehicle is tailgating you, change lanes to let it pass.", region="california"))
    assert tail[0].mr.manipulation == "a vehicle behind"
    plain = parser.parse(rule("Let the vehicle pass.", region="california"))
    assert plain[0].mr.manipulation == "an oncoming vehicle"


def test_a_place_after_a_signalling_verb_is_no_trigger(parser: OntologyGroundedParser) -> None:
    """'A STOP sign means make a full stop at the limit line': the limit line is where the driver stops (the
    consequence), so the sign stays the rule's subject."""
    mr = parser.parse(rule("A STOP sign means make a full stop at the limit line.", region="california"))[0].mr
    assert (mr.road_type, mr.manipulation) == ("intersection", "a stop sign")


def test_an_aside_core_term_ranks_after_the_rules_own_subject(parser: OntologyGroundedParser) -> None:
    """'Watch for deer ..., especially at dawn and dusk': the deer (a California term) is the subject; the low
    light named in the aside comes after it though it is a core term."""
    text = "Watch for deer near the road, especially at dawn and dusk."
    assert parser.parse(rule(text, region="california"))[0].mr.manipulation == "a deer"


def test_a_most_of_all_phrase_is_an_aside_too(parser: OntologyGroundedParser) -> None:
    """'most of all at dusk' marks a case of the rule as 'especially' does: the animals stay its subject; and a speed
    'posted on the limit sign' names the speed limit sign."""
    text = "Wild animals often run across this road, most of all at dawn and dusk. Reduce your speed."
    assert parser.parse(rule(text, region="california"))[0].mr.manipulation == "animals"
    posted = parser.analyse(rule("Never drive faster than the speed shown on the limit sign.", region="california"))
    assert "speed limit sign" in {m.term.normalised for m in posted.manipulations}, posted.manipulations
    weight = parser.analyse(rule("Trucks must obey weight limit signs posted before bridges.", region="california"))
    assert "speed limit sign" not in {m.term.normalised for m in weight.manipulations}, weight.manipulations


def test_coming_back_into_a_lane_names_no_alley(parser: OntologyGroundedParser) -> None:
    """'get back into your lane' is no back lane (an alley); an alley named as such still is one."""
    back = parser.analyse(rule("After you pass, get back into your lane before the curve.", region="california"))
    assert "alley" not in {m.term.normalised for m in back.road_types}, back.road_types
    alley = parser.analyse(rule("Drive slowly in an alley.", region="california"))
    assert "alley" in {m.term.normalised for m in alley.road_types}, alley.road_types


def test_a_gap_that_cuts_a_compound_is_no_match(parser: OntologyGroundedParser) -> None:
    """'a traffic signal ahead' is no 'traffic ahead' (the driver in front); 'a red traffic signal light' is still a
    red light."""
    ahead = parser.analyse(rule("There is a traffic signal ahead. Be prepared to stop.", region="california"))
    assert "driver in front" not in {m.term.normalised for m in ahead.manipulations}
    red = parser.parse(rule("A red traffic signal light means STOP.", region="california"))[0].mr
    assert red.manipulation == "a red light"


def test_a_plural_set_apart_from_a_road_word_modifies_no_road(parser: OntologyGroundedParser) -> None:
    """Two plural nouns set apart are two noun phrases: in "where bikes sometimes share paths" no bicycle path is
    named, while "a bike path", a singular modifier set apart ("a bike or foot path") and a plural subject with its
    verb ("buses have stopped": a bus stopping) still are road types."""
    share = parser.analyse(rule("Slow down where bikes sometimes share paths with cars.", region="california"))
    assert "field path" not in {m.term.normalised for m in share.road_types}, share.road_types
    for text in ("Slow down on a bike path.", "Watch for riders on a bike or foot path."):
        named = parser.analyse(rule(text, region="california"))
        assert "field path" in {m.term.normalised for m in named.road_types}, (text, named.road_types)
    stopped = parser.analyse(rule("Slow down when buses have stopped ahead.", region="california"))
    assert "bus stopping" in {m.term.normalised for m in stopped.road_types}, stopped.road_types


def test_a_car_length_is_a_distance_not_a_vehicle(parser: OntologyGroundedParser) -> None:
    """ "One car length back" measures where to stop; the road user of the rule is the one it names."""
    rule_text = "Stop about one car length back from the crossing and wait for anyone on foot to get across."
    analysis = parser.analyse(rule(rule_text, region="california"))
    assert "car" not in {m.surface.lower() for m in analysis.manipulations}, analysis.manipulations
    assert parser.parse(rule(rule_text, region="california"))[0].mr.manipulation == "a pedestrian"


def test_phrases_match_across_hyphenation() -> None:
    """A phrase written with spaces finds its hyphenated spelling and the other way round; a phrase written in the
    other spelling keeps its own target."""
    from tools.rules.lexicon import Pattern, PhraseMatcher, tokenize_rule

    matcher = PhraseMatcher([Pattern(("no", "passing", "zone"), "no passing", "alias"),
                             Pattern(("two-way", "road"), "two way", "alias")])  # fmt: skip
    for text, target in (("a no-passing zone", "no passing"), ("a two way road", "two way"),
                         ("a no passing zone", "no passing"), ("a two-way road", "two way")):  # fmt: skip
        assert [m.pattern.target for m in matcher.find(tokenize_rule(text))] == [target], text
    own = PhraseMatcher([Pattern(("left", "turn"), "a", "alias"), Pattern(("left-turn",), "b", "alias")])
    assert [m.pattern.target for m in own.find(tokenize_rule("a left-turn lane"))] == ["b"]


def test_a_negated_contraction_reads_as_its_two_words(parser: OntologyGroundedParser) -> None:
    """ "Don't", "can't" and "won't" are "do not", "can not" and "will not" (the rule text's own offsets kept), so a
    contracted rule parses as its spelt-out twin; a lexicon phrase written with a contraction ("walk/don't walk")
    still finds the split words, and a possessive is no contraction."""
    from tools.rules.lexicon import Pattern, PhraseMatcher

    text = "Don't pass if you can\u2019t see; it won't wait. St. Andrew's cross"
    toks = tokenize_rule(text)
    assert [t.word for t in toks] == [
        "do", "not", "pass", "if", "you", "can", "not", "see", "it", "will", "not", "wait", "st", "andrew", "cross",
    ]  # fmt: skip
    assert all(text[t.start : t.end] == t.raw for t in toks)
    assert [t.raw for t in toks if t.word in {"do", "can", "will", "not"}] == [
        "Do",
        "n't",
        "ca",
        "n\u2019t",
        "wo",
        "n't",
    ]
    matcher = PhraseMatcher([Pattern(("don't", "walk"), "signal", "alias"), Pattern(("walk/don't",), "both", "alias")])
    assert [m.pattern.target for m in matcher.find(tokenize_rule("the DON'T WALK light"))] == ["signal"]
    assert [m.pattern.target for m in matcher.find(tokenize_rule("a WALK/DON'T light"))] == ["both"]
    for spelt, contracted in (
        ("Do not pass a school bus with flashing red lights.", "Don't pass a school bus with flashing red lights."),
        ("You must not enter an intersection you cannot clear.", "You mustn't enter an intersection you can't clear."),
        # (a modal with a contraction still addresses the road users listed before it)
        (
            "Trucks, buses and motorcycles must not drive in the carpool lane.",
            "Trucks, buses and motorcycles mustn't drive in the carpool lane.",
        ),
    ):
        a, b = (parser.parse(rule(t, region="california"))[0].mr for t in (spelt, contracted))
        assert (a.road_type, a.manipulation, a.expected_behavior) == (b.road_type, b.manipulation, b.expected_behavior)


def test_turning_with_a_manoeuvre_made_anywhere_names_no_junction(parser: OntologyGroundedParser) -> None:
    """'when parking or turning' is driving in general (any road); turning alone still implies a junction."""
    anywhere = parser.parse(rule("Watch for small children when parking or turning.", region="california"))[0].mr
    assert (anywhere.road_type, anywhere.manipulation) == ("any roads", "a child")
    junction = parser.parse(rule("Yield to pedestrians when turning.", region="california"))[0].mr
    assert junction.road_type == "intersection"


def test_a_turn_to_one_side_beside_passing_names_no_junction(parser: OntologyGroundedParser) -> None:
    """Lane-choice advice ('the left lane is for those who pass or turn left') is about any road: passing is done
    anywhere, so a turn to a side coordinated with it names no junction; planning a turn alone still does."""
    for lane in (
        "The lane farthest to the left is for drivers who want to pass or turn left.",
        "Keep to the left lane only to pass or to turn left.",
        "Check for motorcyclists before you turn right or pass.",
    ):
        assert parser.parse(rule(lane, region="california"))[0].mr.road_type == "any roads", lane
    for turn in (
        "Stay in the left lane when you plan to turn left.",
        # others pass, then the ego turns: no choice between passing and turning
        "Let the cars coming toward you pass, and then turn left.",
        "Wait until the people on foot pass and turn right when it is clear.",
    ):
        assert parser.parse(rule(turn, region="california"))[0].mr.road_type == "intersection", turn


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # the list's last items stand more than ten words after "such as": still its asides
        ("Give extra room to road users such as a person with a disability who travels by wheelchair, tricycle, or "
         "quadricycle.", "a person with a disability using a wheelchair"),
        # an aside that opens the sentence ends at its comma: the list after it is the subject
        ("Like bicyclists, motorcyclists and pedestrians are hard to see.", "a pedestrian"),
        ("Just like bicyclists, motorcyclists and pedestrians are hard to see.", "a pedestrian"),
        # the list of examples closes with its "or": what follows a comma after it is a list of its own
        ("Watch for large vehicles such as trucks or buses, bicyclists, and pedestrians.", "a bicyclist"),
    ],
)  # fmt: skip
def test_an_aside_runs_to_the_end_of_its_list(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """Every item of a list given as examples is an example, the first one leading; an opening aside is no list."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == term, mr


def test_what_the_wording_implies_comes_before_the_nearest_label(ontology: Ontology, embedder: MiniLMEmbedder) -> None:
    """A rule that names no term: what its wording implies ('a traffic signal' its red light, 'yield' an oncoming
    vehicle) is the first candidate, ahead of MiniLM's nearest labels (which found 'heavy traffic' and 'a yield
    sign' here)."""
    with_labels = OntologyGroundedParser(ontology=ontology, embedder=embedder)
    for text, term in (
        ("There is a traffic signal ahead. Be prepared to stop.", "a red light"),
        ("Yield the right-of-way when you enter a highway from a driveway.", "an oncoming vehicle"),
    ):
        candidates = with_labels.parse(rule(text, region="california"))
        assert candidates[0].mr.manipulation == term, [c.mr.manipulation for c in candidates]
        assert any("nearest ontology term" in c.evidence["manipulation"] for c in candidates[1:])


def test_where_to_stop_is_no_trigger(parser: OntologyGroundedParser) -> None:
    """'Come to a complete stop at the limit line': the place after 'stop at' is part of what to do, so the sign
    the rule opens with stays its subject."""
    text = "An eight-sided red sign means stop. Come to a complete stop at the limit line."
    assert parser.parse(rule(text, region="california"))[0].mr.manipulation == "a stop sign"


def test_an_animal_crossing_the_road_makes_no_crosswalk(parser: OntologyGroundedParser) -> None:
    """'deer crossing the road' is on any road; a pedestrian crossing it, and a deer at a named crosswalk, are at
    a crosswalk."""
    deer = parser.parse(rule("Watch for deer crossing the road.", region="california"))[0].mr
    assert (deer.road_type, deer.manipulation) == ("any roads", "a deer")
    walker = parser.parse(rule("Watch for pedestrians crossing the road.", region="california"))[0].mr
    assert walker.road_type == "crosswalk"
    named = parser.parse(rule("Watch for deer near the crosswalk.", region="california"))[0].mr
    assert named.road_type == "crosswalk"


def test_a_bus_that_stops_stays_the_manipulation(parser: OntologyGroundedParser) -> None:
    """'The school bus stops to pick up passengers': 'stops' is the bus's verb, so the school bus is no modifier of
    a bus stop; the place is the bus stopping."""
    mr = parser.parse(rule("The school bus stops to pick up passengers.", region="california"))[0].mr
    assert (mr.road_type, mr.manipulation) == ("bus stopping", "a school bus")


def test_what_your_names_is_the_egos_own(parser: OntologyGroundedParser) -> None:
    """'turn on your emergency flashers' names the ego's flashers, not an emergency vehicle; 'after sunset' is low
    light."""
    own = parser.analyse(rule("Pull onto the shoulder and turn on your emergency flashers.", region="california"))
    assert "emergency vehicle" not in {m.term.normalised for m in own.manipulations}
    other = parser.analyse(rule("Slow down for a vehicle's emergency flashers ahead.", region="california"))
    assert "emergency vehicle" in {m.term.normalised for m in other.manipulations}
    dusk = parser.parse(rule("Use your headlights from 30 minutes after sunset.", region="california"))[0].mr
    assert dusk.manipulation == "the lighting with low lighting environment"


def test_a_bracketed_gloss_and_the_egos_words_do_not_hide_a_term(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'a High-Occupancy Vehicle (HOV) lane' is the term itself: a bracket ends no clause, and the ego's own words
    ('drive a vehicle') are written out whole, not gapped over the term."""
    mr = best(
        parser,
        validator,
        "Do not drive in a High-Occupancy Vehicle (HOV) lane unless you carry two people.",
        "california",
    )
    assert mr is not None and "high-occupancy vehicle (hov) lanes" in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("A flashing red traffic signal light means the same as a STOP sign.", "flashing red light"),
        # (a flashing yellow arrow is no such light: see test_a_flashing_yellow_arrow_is_about_whom_the_turn_yields_to)
        (
            "A flashing yellow light means go on with care; unlike a STOP sign, it does not ask you to stop.",
            "flashing yellow light",
        ),
    ],
)
def test_a_region_term_that_refines_a_core_one_ranks_with_the_core_terms(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """Core terms come first, but 'Flashing Red Light' is the core 'red light' made specific: the rule's subject
    stays ahead of the STOP sign it is compared with."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    "text",
    [
        "Do not pass another vehicle on a hill or a curve.",
        "You must not pass within 100 feet of a railroad crossing.",
        "Do not change lanes in an intersection.",
        "Never switch lanes while you are crossing a junction.",
    ],
)
def test_do_not_pass_is_keep_current_like_must_not_be_overtaken(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """US handbooks' 'pass' is overtaking: as for 'must not be overtaken', the ego keeps its lane and pace."""
    r = rule(text, region="california")
    analysis = parser.analyse(r)
    assert max(analysis.behavior_scores, key=analysis.behavior_scores.__getitem__) == "keep current"


def test_quotes_around_a_sign_name_end_no_clause(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """'"Give Way" Sign (Sign 205)': the quoted name and the word sign are one phrase."""
    mr = best(
        parser, validator, '"Give Way" Sign (Sign 205): Anyone driving a vehicle must give way at the next junction.'
    )
    assert mr is not None and "yield sign" in mr.manipulation, mr


def test_what_is_said_not_to_be_there_is_ruled_out(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """'If there is no limit line' names no limit line: it neither outranks the STOP sign nor counts as a second
    mention of one."""
    mr = best(
        parser,
        validator,
        "An eight-sided red STOP sign means you must make a full stop before the limit line. If there is no limit "
        "line, stop before the intersection.",
        "california",
    )
    assert mr is not None and "stop sign" in mr.manipulation, mr


def test_an_exclusion_in_an_opening_phrase_ends_with_it(parser: OntologyGroundedParser) -> None:
    """'At a T intersection without STOP or YIELD signs, vehicles on the through road have the right-of-way': the
    signs are ruled out, the vehicles are not; in a list ('such as seniors, people with disabilities') the aside
    runs on past the comma."""
    a = parser.analyse(
        rule(
            "At a T intersection without STOP or YIELD signs, vehicles on the through road have the right-of-way.",
            region="california",
        )
    )
    out = {m.term.normalised: m.ruled_out for m in a.manipulations}
    assert out["stop sign"] and out["yield sign"] and not out["vehicle"], out
    a = parser.analyse(
        rule("Allow pedestrians time to cross, as some groups such as seniors, people with disabilities need more.")
    )
    assert all(m.aside for m in a.manipulations if m.term.normalised != "pedestrian")


def test_a_list_after_no_is_ruled_out_item_by_item(parser: OntologyGroundedParser) -> None:
    """'with no STOP sign, YIELD sign, or signal' rules out every sign of the comma list, not its first alone; a
    road user after the comma that closes such a phrase ('no signal, and pedestrians have the right-of-way') or one
    that acts in its own clause is no item of the list."""
    cases = {
        "At a corner with no STOP sign, YIELD sign, or signal, let vehicles already crossing go first.": (
            {"stop sign", "yield sign"},
            {"vehicle"},
        ),
        "Where there is no crosswalk, bicyclist, or pedestrian, keep to your lane.": (
            {"crosswalk", "bicyclist", "pedestrian"},
            set(),
        ),
        "There is no STOP sign, and pedestrians have the right-of-way.": ({"stop sign"}, {"pedestrian"}),
        "If there is no limit line, pedestrians at the corner go first.": ({"limit line"}, {"pedestrian"}),
        # a list that runs on into the sentence's verb, and a negation of no thing, open no list of things ruled out
        "On roads without shoulders, bicyclists, pedestrians, and farm vehicles share the lane.": (
            {"shoulder"},
            {"bicyclist", "pedestrian"},
        ),
        "If there is no crosswalk, a pedestrian, bicyclist, or child may still cross.": (
            {"crosswalk"},
            {"pedestrian", "bicyclist"},
        ),
    }
    for text, (out, kept) in cases.items():
        a = parser.analyse(rule(text, region="california"))
        found = {m.term.normalised: m.ruled_out for m in a.manipulations}
        for term in out:
            if term in found:
                assert found[term], (text, found)
        assert all(not found[t] for t in kept if t in found), (text, found)
        assert kept <= set(found) and (out & set(found) or not out - {"shoulder", "crosswalk"}), (text, found)


@pytest.mark.parametrize(
    "text", ["Never make a U-turn at a railroad crossing.", "Do not back up on a railroad crossing."]
)
def test_a_nearest_term_keeps_to_the_place_the_rule_names(
    ontology: Ontology, embedder: MiniLMEmbedder, text: str
) -> None:
    """A rule that names no term of its own but a railroad crossing: MiniLM's nearest label may be a school's
    crossing guard (the word "crossing"), but the term the MR adds is the one whose place is the crossing."""
    with_model = OntologyGroundedParser(ontology=ontology, embedder=embedder)
    r = rule(text, region="california")
    checks = OfflineValidator(ontology=ontology, parser=with_model)
    verdict = choose_best(checks.validate_sync(r, with_model.parse(r)))
    assert verdict is not None, text
    mr = verdict.candidate.mr
    assert (mr.road_type, mr.manipulation) == ("railroad crossings", "a railroad crossing sign (crossbuck)"), mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("Work Zones\nMove through the zone with care and expect sudden stops.", "a work zone sign"),
        ("In highway work areas, merge early where a lane is closed and keep your speed down.", "a work zone sign"),
        # (a work zone's person or vehicle, where named, is the rule's own)
        ("In a work zone, obey the flagger.", "flaggers"),
        ("In a construction zone, stay well back from the snowplow.", "road work vehicle"),
    ],
)
def test_a_work_zone_with_nothing_named_in_it_is_known_by_its_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """A rule about driving through a work zone that names no road user, vehicle or sign at all adds the zone's
    orange sign, the way a driver knows one is there."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower(), mr


def test_implied_terms_stay_ahead_of_the_nearest_terms_ordered_by_place(
    ontology: Ontology, embedder: MiniLMEmbedder
) -> None:
    """Ordering MiniLM's nearest terms by the place the rule names leaves what its wording implies (a signal light:
    its red) ahead of them all."""
    with_model = OntologyGroundedParser(ontology=ontology, embedder=embedder)
    lights = with_model.parse(rule("At a railroad crossing, obey the signal light.", region="california"))
    assert lights[0].mr.manipulation == "a red light", [c.mr.manipulation for c in lights]


@pytest.mark.parametrize(
    ("text", "region"),
    [
        ("At a junction where a side road with no STOP sign meets a highway, the drivers on the highway have the "
         "right-of-way.", "california"),
        ("At a junction without a YIELD sign, let the traffic on the main road go first.", "germany"),
        # (no junction word: the road type is any road, which a T's own wording does not yet change)
        ("Where a side road ends at a highway with no STOP sign, the drivers on the highway have the right-of-way.",
         "california"),
    ],
)  # fmt: skip
def test_what_the_wording_implies_outranks_the_terms_it_rules_out(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, region: str
) -> None:
    """A rule that names only signs it rules out, and no road user the lexicon knows: the vehicle its right-of-way
    wording implies is the MR's subject, not the absent sign; a junction the rule names is its place."""
    mr = best(parser, validator, text, region)
    assert mr is not None and mr.manipulation == "an oncoming vehicle", mr
    if "junction" in text:
        assert mr.road_type == "intersection", mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("Use low-beam headlights in fog; high beams reflect back.", "fog environment"),
        # (no road user named: "for oncoming drivers" would name the oncoming vehicle, as "oncoming traffic" does)
        ("Dim your high beams within 500 feet and use your headlights.", "low lighting environment"),
    ],
)
def test_the_egos_own_lights_only_imply_darkness(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """Headlights and beams are what the ego does: the weather they are used in is the rule's subject; alone,
    they imply low light."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation, mr


def test_a_turn_cue_does_not_count_against_slowing_down_on_any_road(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'drive to the right edge of the road and stop' is no turn on any road (turns are made at junctions), so the
    validator does not prefer a candidate placed at an intersection only because it may turn there."""
    mr = best(
        parser,
        validator,
        "When you see an emergency vehicle with flashing red lights coming toward you, drive to the right edge of "
        "the road and stop until it has passed.",
        "california",
    )
    assert mr is not None and (mr.road_type, mr.expected_behavior) == ("any roads", "slow down"), mr
    assert "emergency vehicle" in mr.manipulation, mr


@pytest.mark.parametrize(("region", "term"), [("germany", "police officer"), ("california", "traffic officer")])
def test_a_police_officer_is_each_regions_officer_term(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, term: str
) -> None:
    """Germany's 'Police officer (directing traffic)' and California's 'Traffic Officer' answer to 'police officer'."""
    mr = best(parser, validator, "Instructions given by police officers take precedence over all other rules.", region)
    assert mr is not None and term in mr.manipulation.lower(), mr


def test_things_said_not_to_be_there_in_coordination_and_as_places(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'there are no STOP or YIELD signs' rules out both signs; 'even if they are not in a crosswalk' names no
    crosswalk as the place."""
    a = parser.analyse(
        rule("Where there are no STOP or YIELD signs, yield to the vehicles on the through road.", region="california")
    )
    out = {m.term.normalised: m.ruled_out for m in a.manipulations}
    assert out["stop sign"] and out["yield sign"], out
    mr = best(
        parser,
        validator,
        "A five-sided sign means you are near a school. Slow down and stop for children, even if they are not in a "
        "crosswalk.",
        "california",
    )
    assert mr is not None and mr.road_type == "school area", mr


def test_a_turn_into_a_driveway_names_no_junction(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    mr = best(parser, validator, "Look for pedestrians when you turn left into a driveway.", "california")
    assert mr is not None and mr.road_type == "any roads", mr


@pytest.mark.parametrize(
    ("text", "road", "behaviour"),
    [
        # A turn into a driveway is no junction; pulling over is slowing to a stop, not a turn.
        (
            "Where a solid yellow line is on your side, do not pass, except to turn left into a driveway.",
            "any roads",
            "keep current",
        ),
        (
            "When an emergency vehicle approaches with its siren on, pull over to the right and stop.",
            "any roads",
            "slow down",
        ),
        ("Never make a U-turn where a NO U-TURN sign is posted.", None, "keep current"),
    ],
)
def test_driveways_pulling_over_and_prohibited_u_turns(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str | None, behaviour: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == behaviour, mr
    assert road is None or mr.road_type == road, mr


def test_what_a_rule_is_compared_with_is_an_aside(parser: OntologyGroundedParser) -> None:
    """'Obey a flagger as you would a traffic signal': the signal is what the flagger is compared with."""
    a = parser.analyse(rule("Obey a flagger's directions as you would a traffic signal.", region="california"))
    asides = {m.term.normalised for m in a.manipulations + a.road_types if m.aside}
    assert "flaggers (in construction zones)" not in asides and asides, asides


@pytest.mark.parametrize(
    "text",
    [
        "Make a full stop at a red STOP sign before the limit line. If there is no limit line, stop before you enter "
        "the crosswalk.",
        "Stop before the limit line. If there is no limit line, stop before the crosswalk. If there is no crosswalk, "
        "stop before entering the intersection.",
    ],
)
def test_a_place_named_only_as_a_fallback_is_not_the_rules_place(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """'If there is no limit line, stop before the crosswalk': the crosswalk is a fallback, not where the rule
    applies; the STOP sign's junction is."""
    mr = best(parser, validator, "A red STOP sign means stop. " + text, "california")
    assert mr is not None and mr.road_type == "intersection", mr


def test_turning_among_manoeuvres_made_anywhere_and_vehicles_described_after_their_noun(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'Avoid sudden braking or turning' names no junction; 'a vehicle that is stopped' is a stopped vehicle and
    'a turning truck' a turning vehicle."""
    mr = best(parser, validator, "On icy roads, slow down and avoid sudden braking or turning.", "california")
    assert mr is not None and mr.road_type == "any roads", mr
    mr = best(parser, validator, "Do not pass a vehicle that is stopped at a crosswalk.", "california")
    assert mr is not None and "stopped vehicle" in mr.manipulation, mr
    mr = best(parser, validator, "Do not squeeze between a turning truck and the curb.", "california")
    assert mr is not None and "turning vehicle" in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "term", "behaviour"),
    [
        # What a person holds is theirs: the crossing guard, not the STOP sign.
        ("Always stop for school crossing guards who are holding a STOP sign.", "crossing guard", "slow down"),
        # ... and what they raise or lift to show it
        (
            "Crossing Guards Do as a crossing guard directs. Stop when the guard lifts a STOP sign, and stay stopped "
            "until the guard is back on the curb.",
            "crossing guard",
            "slow down",
        ),
        # A speed limit stated as a figure yields to what the rule warns of.
        ("The speed limit is 25 mph. Watch for children playing near the street.", "child", "slow down"),
        ("Traffic break: slowly decrease your speed to the same speed as the officer.", "traffic break", "slow down"),
        ("Do not slow down or stop to look at a collision; keep moving with traffic.", "collision", "keep current"),
    ],
)
def test_held_things_stated_limits_and_negated_cues(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str, behaviour: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower() and mr.expected_behavior == behaviour, mr


def test_a_turn_beside_a_lane_change_names_no_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    mr = best(parser, validator, "Check for motorcyclists before you change lanes or turn.", "california")
    assert mr is not None and mr.road_type == "any roads", mr


@pytest.mark.parametrize(("region", "term"), [("california", "sun glare"), ("germany", "glare from sun")])
def test_glare_is_its_regions_glare_and_outranks_the_road_users_it_hides(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, term: str
) -> None:
    """Glare is too much light, not low light; no core term names it, so the region's does, and a core road user
    the glare hides ('hard to see pedestrians') is no rival for a change of the environment."""
    mr = best(parser, validator, "When the sun is low, glare can make it hard to see pedestrians. Slow down.", region)
    assert mr is not None and term in mr.manipulation.lower() and mr.verb == "replaces", mr


def test_a_road_user_goes_where_the_rule_puts_it(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """A light rail vehicle usually belongs at a railroad crossing, but 'never turn in front of an approaching light
    rail vehicle' puts it at a junction; the validator does not trade it for a generic oncoming vehicle."""
    mr = best(
        parser,
        validator,
        "Light rail vehicles have the same rights as other vehicles. Never turn in front of an approaching light rail "
        "vehicle.",
        "california",
    )
    assert mr is not None and "rail vehicle" in mr.manipulation, mr


def test_waiting_before_you_proceed_is_slowing_down(parser: OntologyGroundedParser) -> None:
    a = parser.analyse(
        rule("Allow the crossing guard and children to cross the street before you proceed.", region="california")
    )
    assert max(a.behavior_scores, key=a.behavior_scores.__getitem__) == "slow down", a.behavior_scores


@pytest.mark.parametrize(
    ("text", "road", "term"),
    [
        # The STOP sign's junction, though a crosswalk is named: only as a fallback, or said to be absent.
        ("Red Octagon STOP Sign\nStop at the white limit line. Where there is no limit line, stop ahead of the "
         "crosswalk; where there is no crosswalk either, stop at the corner. Go only after giving the right-of-way to "
         "traffic and pedestrians.", "intersection", "stop sign"),
        ("A driver facing a STOP sign shall stop at the limit line. Where there is neither a limit line nor a "
         "crosswalk, stop where traffic can be seen.", "intersection", "stop sign"),
        # A signal that is dark is out of order, not low light; 'as if there were STOP signs' is then the rule's.
        ("When a traffic light is dark or not working, treat the intersection as if there were STOP signs on every "
         "corner. Stop completely and go only when it is your turn.", "intersection", "stop sign"),
        # A concession names what the rule overrides.
        ("Follow a traffic officer's hand signals even if the light is green or a STOP sign is posted.", None,
         "traffic officer"),
    ],
)  # fmt: skip
def test_absent_things_dark_signals_concessions_and_blind_places(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str | None, term: str | None
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None, text
    assert road is None or mr.road_type == road, mr
    assert term is None or term in mr.manipulation.lower(), mr


def test_a_blind_intersection_is_no_blind_person_and_no_corner_with_a_sign_is_no_sign(
    parser: OntologyGroundedParser,
) -> None:
    a = parser.analyse(
        rule("Blind Intersections\nAn intersection is blind if no corner has a STOP sign and you cannot see 100 feet "
             "to either side. Slow down.", region="california")
    )  # fmt: skip
    assert all(m.absent for m in a.manipulations if m.term.normalised == "stop sign"), a.manipulations
    assert not any("blind" in m.term.normalised or "guide dog" in m.term.normalised for m in a.manipulations)


@pytest.mark.parametrize(
    "text",
    [
        "Double solid yellow lines mean no passing. Do not drive to the left of them except to turn left into a "
        "driveway or at an intersection.",
        "On ice, slow down well ahead. Do not brake hard or turn sharply on ice.",
        "When a school bus has its red lights flashing, stop. Children may be crossing the road in front of the bus.",
    ],
)
def test_no_junction_from_an_exception_a_swerve_or_others_crossing(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """An exception runs to the end of its clause; a sharp turn is a swerve; where children cross is not the school
    bus's place."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type not in {"intersection", "crosswalk"}, mr


def test_a_signal_that_turns_green_yellow_lane_lines_and_a_held_sign(parser: OntologyGroundedParser) -> None:
    """'go when it turns green' makes no turn at a junction; 'Yellow Lane Lines' are markings, not a yellow light;
    the STOP sign a crossing guard 'holds up' is the guard's."""
    a = parser.analyse(
        rule("Stop at the ramp meter while it shows red and go when it turns green.", region="california")
    )
    assert not any(m.term.normalised == "intersection" for m in a.road_types), a.road_types
    a = parser.analyse(
        rule("Yellow Lane Lines\nYellow lines divide traffic. Obey the signal lights.", region="california")
    )
    assert not any(m.term.normalised == "yellow light" for m in a.manipulations), a.manipulations
    a = parser.analyse(rule("Stop for a crossing guard who holds up a STOP sign.", region="california"))
    assert all(m.aside for m in a.manipulations if m.term.normalised == "stop sign"), a.manipulations


@pytest.mark.parametrize(
    ("text", "term"),
    [
        (
            "Watch for deer near the road. Braking hard for one can make you skid into another vehicle.",
            "deer",
        ),
        ("Give a motorcyclist the whole lane; a motorcycle is easy to lose behind another car.", "motorcyclist"),
    ],
)
def test_a_generic_vehicle_word_does_not_outrank_the_rules_subject(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """A core term reached only through a bare 'another vehicle' or 'car' named in passing does not push the rule's
    own (region) subject aside."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    ("text", "road", "term", "behaviour"),
    [
        # a signal said to be dark is out of order, not low light
        (
            "When the traffic signals at a junction are dark, behave as if a STOP sign faced every approach.",
            "intersection",
            "stop sign",
            None,
        ),
        # a fronted "Without X," is a fallback: its crosswalk is no place of the STOP-sign rule
        (
            "At a STOP sign, stop at the limit line. Without a limit line, stop before the crosswalk.",
            "intersection",
            "stop sign",
            None,
        ),
        # a U-turn the rule forbids is no junction
        ("Do not make a U-turn where a NO U-TURN sign stands.", "any roads", "u-turn", "keep current"),
        # the driver passing the ego comes from behind, and the ego keeps its speed
        ("If a driver is passing you, do not speed up.", "any roads", "vehicle behind", "keep current"),
        # a signal on a freeway ramp stands at no junction
        (
            "Metering lights on freeway on-ramps let one car go per green light; stop at the red light.",
            "any roads",
            None,
            None,
        ),
        # a concession names what the rule overrides
        ("Even with a green light, do not enter an intersection that you cannot clear.", "intersection", None, None),
        # where the ego may already be, said after the rule's subject, is a sub-case
        (
            "Pull to the right edge of the road and stop for an ambulance using its siren. If you are in an "
            "intersection, clear it first.",
            "any roads",
            "emergency vehicle",
            None,
        ),
        # children crossing the street near a school are in the school area
        (
            "Within 500 feet of a school, drive at 25 mph while children are crossing the street.",
            "school area",
            "child",
            None,
        ),
    ],
)
def test_dark_signals_fallbacks_forbidden_u_turns_passing_ramps_concessions_and_sub_cases(
    parser: OntologyGroundedParser,
    validator: OfflineValidator,
    text: str,
    road: str,
    term: str | None,
    behaviour: str | None,
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == road, mr
    assert term is None or term in mr.manipulation.lower(), mr
    assert behaviour is None or mr.expected_behavior == behaviour, mr
    if "Even with" in text:
        assert "green light" not in mr.manipulation, mr
    if "are dark" in text:
        assert "lighting" not in mr.manipulation, mr


def test_a_cross_street_is_no_crossing_and_a_named_crosswalk_keeps_its_place(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "closest to the cross street" holds no "to cross" (its last word opens the longer "cross street"); a rule
    that names a crosswalk keeps it though it also mentions schools."""
    a = parser.analyse(rule("Stop at the point closest to the cross street where you can see.", region="california"))
    assert not any(m.term.normalised == "crosswalk" for m in a.road_types), a.road_types
    mr = best(
        parser,
        validator,
        "Crosswalks\nMost crosswalks are marked with white lines. People on foot have the right-of-way in them, "
        "and yellow lines may be used near schools. Slow down for anyone crossing or about to cross.",
        "california",
    )
    assert mr is not None and mr.road_type == "crosswalk", mr


def test_a_streetcar_runs_in_the_street_and_a_four_way_stop_has_stop_signs(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A streetcar or light rail vehicle implies no railroad crossing (a train still does); a four-way stop is a
    junction with STOP signs."""
    mr = best(parser, validator, "Do not overtake a streetcar on its left side while it is moving.", "california")
    assert mr is not None and "rail vehicle" in mr.manipulation and mr.road_type == "any roads", mr
    mr = best(parser, validator, "Slow down and look both ways for a train before the tracks.", "california")
    assert mr is not None and mr.road_type == "railroad crossings", mr
    mr = best(parser, validator, "At an all-way stop, the driver who arrived first goes first.", "california")
    assert mr is not None and mr.road_type == "intersection" and "stop sign" in mr.manipulation, mr


def test_vehicles_lined_up_behind_you_and_a_patrol_car(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "behind you" is the vehicle behind; a patrol car is an emergency vehicle (US handbook wording)."""
    mr = best(parser, validator, "Pull into a turnout if several cars are lined up behind you.", "california")
    assert mr is not None and "vehicle behind" in mr.manipulation, mr
    mr = best(parser, validator, "Do not try to pass a patrol car that is weaving across the lanes.", "california")
    assert mr is not None and "emergency vehicle" in mr.manipulation, mr


def test_a_headings_bare_plural_is_the_kind_the_body_names(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Big Trucks" over a body about "a turning truck" is the turning vehicle, not any motor vehicle."""
    text = "Big Trucks\nTrucks swing wide before a right turn. Never pull up beside a turning truck on its right."
    mr = best(parser, validator, text, "california")
    assert mr is not None and "turning vehicle" in mr.manipulation, mr


def test_a_place_used_only_if_another_is_missing_and_a_signal_gone_completely_dark(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "or before the crosswalk if there is no line" is a fallback, not the rule's place; a signal that may "go
    completely dark" is out of order, not low light."""
    mr = best(
        parser,
        validator,
        "A red light that flashes means stop at the limit line, or before the crosswalk if there is no line, then go "
        "when it is safe.",
        "california",
    )
    assert mr is not None and mr.road_type == "intersection", mr
    a = parser.analyse(rule("In a power cut the traffic signal may go completely dark.", region="california"))
    assert not any("lighting" in m.term.normalised for m in a.manipulations), a.manipulations


@pytest.mark.parametrize(
    "text",
    [
        "Crossing Arms\nStay back from a lowered crossing arm until it is fully raised and the red lights are no "
        "longer flashing.",
        "Railroad Crossings\nWait behind the gate until the red lights are no longer blinking.",
    ],
)
def test_red_lights_said_to_flash_a_few_words_on_are_flashing_red_lights(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """ "the red lights are no longer flashing": the lights are the crossing's flashing red lights, though the verb
    comes four words after them."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.road_type, mr.manipulation) == ("railroad crossings", "a flashing red light"), mr


@pytest.mark.parametrize(
    "text",
    ["Stop at a red light until the arrow flashes.", "Stop at the red light unless an officer flashes a signal."],
)
def test_a_flash_word_of_something_else_leaves_a_steady_light(parser: OntologyGroundedParser, text: str) -> None:
    """Four words on, "flashes" is another subject's verb (the arrow's, the officer's): the red light stays steady."""
    names = {m.term.normalised for m in parser.analyse(rule(text, region="california")).manipulations}
    assert "red light" in names and "flashing red light" not in names, names


@pytest.mark.parametrize(
    "text",
    [
        "Do not drive onto the railroad tracks until there is room on the other side for your car.",
        "Wait off the railroad tracks while traffic ahead is not moving.",
    ],
)
def test_traffic_ahead_and_room_on_the_far_side_are_a_queue(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """ "traffic ahead" is many vehicles (heavy traffic), not the one in front; waiting for room on the far side is
    waiting for the queue beyond the tracks."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and "heavy traffic" in mr.manipulation and mr.road_type == "railroad crossings", mr


def test_turning_on_red_names_the_red_light(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """ "turn right on red" speaks of the signal: the colour alone is its red light."""
    mr = best(parser, validator, "After a full stop you may turn right on red unless a sign forbids it.", "california")
    assert mr is not None and "red light" in mr.manipulation and mr.road_type == "intersection", mr


def test_a_speed_stated_as_a_figure_is_slowing_down(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A limit in mph outweighs a no-passing aside in the same rule: the rule asks the ego to slow to it."""
    mr = best(
        parser,
        validator,
        "Near a school with children outside, drive no faster than 25 mph and do not pass other vehicles.",
        "california",
    )
    assert mr is not None and mr.expected_behavior == "slow down", mr


def test_a_lane_reserved_for_others_keeps_the_ego_in_its_own(parser: OntologyGroundedParser) -> None:
    """ "reserved for" restricts a lane: the behaviour cue is keep current."""
    a = parser.analyse(rule("The diamond lane is reserved for carpools with two or more people.", region="california"))
    scores = a.behavior_scores
    assert scores.get("keep current", 0.0) > scores.get("slow down", 0.0), scores


def test_to_slow_traffic_is_a_verb(parser: OntologyGroundedParser) -> None:
    """ "weaves across the lanes to slow traffic" names no slow (heavy) traffic."""
    a = parser.analyse(
        rule("The officer weaves across the lanes to slow traffic behind the crash.", region="california")
    )
    assert not any(m.term.normalised == "heavy traffic" for m in a.manipulations), a.manipulations


def test_a_pedestrian_signal_is_no_kind_of_pedestrian(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A region term refines a core one only when it ends in the same head: "Flashing Red Light" is a red light made
    specific, a "pedestrian signal" is a signal, so the pedestrians the rule protects come first."""
    text = "Pedestrian Signals\nA pedestrian signal shows WALK or DON'T WALK. Let pedestrians finish crossing first."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation.lower() in {"a pedestrian", "pedestrians"}, mr


def test_a_bare_head_is_not_resolved_to_a_gapped_match(parser: OntologyGroundedParser) -> None:
    """A bare "truck" is not resolved to a later gapped match ("turning [tow] truck"), only to a whole phrase."""
    a = parser.analyse(rule("Give a truck room. A turning tow truck swings wide.", region="california"))
    bare = [m for m in a.manipulations if m.surface.lower() == "truck"]
    assert bare and all(m.term.normalised != "turning vehicle" for m in bare), a.manipulations


@pytest.mark.parametrize(
    ("text", "phrase", "canonical"),
    [
        # Wordings of a vehicle's own flashing lights, in any order; the colour is the rule's own word.
        ("When a school bus is flashing its red lights, stop until the lights are off.", "red", "flashing red light"),
        ("If a school bus has stopped and its red lights are flashing, you must stop.", "red", "flashing red light"),
        ("Some school buses flash yellow lights before they stop. Slow down.", "yellow", "flashing yellow light"),
        ("Slow down for a tow truck on the shoulder with amber lights flashing.", "amber", "tow truck"),
        # the lights named first, their vehicle just after them
        ("The flashing red lights on a school bus tell you to stop in either direction.", "red", "flashing red light"),
        # ... the colour before "flashing"
        ("Red flashing lights on a school bus mean you must stop.", "red", "flashing red light"),
    ],
)
def test_a_vehicle_flashing_its_lights_is_written_with_them(
    parser: OntologyGroundedParser,
    validator: OfflineValidator,
    ontology: Ontology,
    text: str,
    phrase: str,
    canonical: str,
) -> None:
    """The MR keeps the vehicle and its lights as the rule says them ("a school bus with flashing red lights"), as
    the development references do; scoring then reads the longest ontology term in that phrase."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and f"with flashing {phrase} lights" in mr.manipulation
    assert ontology.vocabulary("california").canonical("manipulation", mr.manipulation) == canonical


def test_a_flashing_traffic_signal_is_not_a_vehicles_light(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    mr = best(parser, validator, "A flashing red signal light means stop. Then go when it is safe.", "california")
    assert mr is not None and mr.manipulation == "a flashing red light"


def test_do_not_enter_is_the_core_red_and_white_regulatory_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """AutoMT's later MR prompt lists a no entry sign where the core list has the red and white regulatory sign
    (the ontology's note); a prohibited way is kept out of, so the ego keeps its current way."""
    mr = best(parser, validator, "Never drive past a DO NOT ENTER sign.", "california")
    assert mr is not None
    assert (mr.manipulation, mr.expected_behavior) == ("a red and white regulatory sign", "keep current")


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ('Sign 205 ("Give way"): grant the right of way.', "yield sign"),
        (
            'Anyone approaching an intersection on a road on which Sign 206 ("Stop. Give way.") is placed must stop at '
            "the stop line or, where there is none, at the edge of the crossing roadway.",
            "stop sign",
        ),
        ("Motor vehicles must not pass beyond Sign 251.", "prohibition for motor vehicles sign"),
    ],
)
def test_german_signs_named_by_their_stvo_number(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    mr = best(parser, validator, text, "germany")
    assert mr is not None and term in mr.manipulation


def test_do_not_enter_as_a_verb_is_no_sign(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    text = "At a roundabout, do not enter until the bicyclist already riding around it has gone past."
    mr = best(parser, validator, text, "california")
    assert mr is not None and "bicyclist" in mr.manipulation and mr.expected_behavior == "slow down"


@pytest.mark.parametrize(
    ("text", "region", "term"),
    [
        (
            "Trucks, buses, motorcycles, and passenger cars must all obey a YIELD sign: slow down and let cross "
            "traffic go first.",
            "california",
            "yield sign",
        ),
        (
            "Bicycles, horse-drawn vehicles and pedestrians may continue, but motorcycles, cars and other multi-track "
            "motor vehicles must not pass beyond Sign 260 (Prohibition for Motor Vehicles).",
            "germany",
            "prohibition for motor vehicles sign",
        ),
    ],
)
def test_a_list_of_road_users_told_what_they_must_do_is_the_rules_addressee(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, region: str, term: str
) -> None:
    """Road users listed as the subject of "must" or "may" are who the rule speaks to (the ego among them), not what
    an MR adds; a sign's name in brackets after its number is the sign."""
    mr = best(parser, validator, text, region)
    assert mr is not None and term in mr.manipulation


def test_road_users_that_must_not_be_passed_are_no_addressees(parser: OntologyGroundedParser) -> None:
    text = "Public transport buses and school buses with hazard lights on must not be overtaken."
    a = parser.analyse(rule(text, "germany"))
    assert any(m.term.normalised == "public transport bus" and not m.aside for m in a.manipulations)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "A STOP sign means stop. Stop at the white limit line, or before the crosswalk if no line is painted.",
            ("intersection", "a stop sign", "slow down"),
        ),
        (
            "Do not speed up to get through the intersection before a yellow traffic signal turns red; stop if you can "
            "do so safely.",
            ("intersection", "a yellow light", "slow down"),
        ),
        (
            "Not every crosswalk has painted lines. You must yield to anyone walking across a crosswalk.",
            ("crosswalk", "a pedestrian", "slow down"),
        ),
        (
            "Center Left Turn Lane A lane in the middle of a two-way street is reserved for left turns and U-turns. "
            "Never use it to pass.",
            ("any roads", "center left turn lanes", "keep current"),
        ),
    ],
)
def test_fallbacks_without_there_is_a_stop_over_not_speeding_up_walkers_and_a_turn_lanes_turns(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: tuple[str, str, str]
) -> None:
    """'if no line is painted' is a fallback; a stop the rule asks for outweighs 'do not speed up'; 'anyone walking'
    is a pedestrian; the turns a centre turn lane is for name no junction."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.road_type, mr.manipulation, mr.expected_behavior) == expected


def test_lanes_of_traffic_are_no_line_of_traffic(parser: OntologyGroundedParser) -> None:
    a = parser.analyse(
        rule("Broken white lines separate lanes of traffic moving in the same direction.", region="california")
    )
    assert all(m.term.normalised != "heavy traffic" for m in a.manipulations)


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("At dusk and after dark, scan the edges of the road for deer. Brake firmly instead of swerving.", "deer"),
        ("On wet pavement, motorcycles need more room to stop. Leave a larger following distance.", "motorcyclist"),
        ("In heavy fog, slow down and use your low beams.", "fog environment"),
        ("If visibility is reduced to less than 50 meters due to fog, the speed must not exceed 50 km/h.", "fog"),
    ],
)
def test_weather_or_light_fronted_before_a_road_user_is_when_the_rule_applies(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """A circumstance fronted before the main clause ("At dusk and after dark, ...") says when the rule applies: the
    road user the rule then names is its subject. Without one, the weather is the rule's."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation


def test_a_flashing_red_light_fits_a_railroad_crossing(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    text = (
        "Do not drive onto the tracks of a railroad crossing while its red lights are flashing, even if the vehicle in "
        "front of you keeps going."
    )
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.road_type, mr.manipulation) == ("railroad crossings", "a flashing red light")


@pytest.mark.parametrize(
    "text",
    [
        "School Buses\nIf a school bus is stopped and flashing red lights, you must stop until the lights stop flashing.",
        "School Buses\nIf a school bus stops and flashes red lights, you must stop until all children have crossed.",
    ],
)
def test_a_school_bus_that_is_stopped_or_stops_is_no_modifier_of_a_bus_stop(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """ "a school bus is stopped", "a school bus stops and ...": the bus's verb, so the school bus stays a mention and
    the lights it flashes are its own."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a school bus with flashing red lights"


@pytest.mark.parametrize(
    ("text", "term"),
    [
        (
            "Ramp meters are signals on freeway on-ramps. Stop at the limit line while the meter is red and go when it "
            "turns green.",
            "ramp meter signals",
        ),
        (
            "Bike Lanes\nA bike lane is reserved for bicyclists. Yield to bicyclists in the bike lane before you turn.",
            "bicyclist",
        ),
    ],
)
def test_a_region_signal_the_rule_opens_with_outranks_the_core_lines_and_lights_it_mentions(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """A ramp meter is the rule's subject, not the limit line or the red it shows; a core road user the rule names
    (a bike lane's bicyclists) still comes first."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower()


@pytest.mark.parametrize(
    ("text", "term"),
    [
        (
            "Obey school crossing guards. When a guard holds up a STOP paddle, stop and stay stopped until every child "
            "has crossed and the guard has returned to the curb.",
            "crossing guard",
        ),
        ("Even with a green light, do not enter an intersection that you cannot clear.", "heavy traffic"),
    ],
)
def test_what_ends_the_wait_is_a_detail_and_a_junction_you_cannot_clear_is_blocked(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    """Road users named in an "until" clause (the children who must have crossed) say when the wait ends: the rule's
    subject is the crossing guard. A junction "you cannot clear" is one the queue beyond it blocks."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower()


@pytest.mark.parametrize(
    "text",
    [
        "Whether or not the WALK signal is lit, drivers must stop for a person in a wheelchair who is crossing at a "
        "corner.",
        "If a person on a skateboard is still crossing in front of you, wait and let them reach the other side.",
    ],
)
def test_a_person_who_is_crossing_is_at_a_crosswalk(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """A person "is crossing" or "still crossing" without a road noun: the crossing is theirs, a crosswalk."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "crosswalk"


@pytest.mark.parametrize(
    "text",
    [
        "Carpool lanes (HOV lanes) are intended for buses, motorcycles and cars carrying two or more people. Never "
        "cross the double solid lines to get into one.",
        "The HOV lane is open to buses and to cars that carry at least two people; do not cross over double "
        "solid lines to enter it.",
    ],
)
def test_the_motor_vehicles_a_lane_is_for_are_no_rival_of_the_lane(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Buses and carpools a lane is meant for say who may use it: the lane is the subject, and double solid lines
    are not to be crossed (keep current)."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and "high-occupancy vehicle" in mr.manipulation and mr.expected_behavior == "keep current"


def test_the_bicyclists_a_bike_lane_is_for_stay_its_subject(parser: OntologyGroundedParser) -> None:
    """Vulnerable road users a lane is for are who the ego watches out for: they stay."""
    a = parser.analyse(
        rule("Bike lanes are reserved for bicyclists. Do not drive in a bike lane except to turn.", region="california")
    )
    assert any(m.term.normalised == "bicyclist" and not m.aside for m in a.manipulations)


@pytest.mark.parametrize(
    "text",
    [
        "Do not overtake a car that has stopped for people on foot.",
        "You must never pass a vehicle that is stopped at a marked crosswalk; someone may be walking in front of it.",
    ],
)
def test_a_stopped_vehicle_not_to_be_passed_means_stopping_behind_it(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Not passing a stopped vehicle is stopping behind it (slow down); not passing a moving one keeps current."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and "stopped vehicle" in mr.manipulation and mr.expected_behavior == "slow down"
    moving = best(parser, validator, "Do not pass a truck on a hill or a curve.", "california")
    assert moving is not None and moving.expected_behavior == "keep current"


def test_a_place_said_to_lack_signals_is_still_the_place(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "intersections with no traffic signals": the intersection is there, only its signals are not (a fallback place
    after an absence still is no place of the rule)."""
    mr = best(
        parser,
        validator,
        "At intersections with no traffic signals or signs, let pedestrians already in the street go first.",
        "california",
    )
    assert mr is not None and mr.road_type == "intersection"


def test_a_crossing_gate_is_at_a_railroad_crossing(parser: OntologyGroundedParser) -> None:
    """A crossing gate (arm) stands at a railroad crossing."""
    a = parser.analyse(rule("Never drive around a crossing gate that is down or coming down.", region="california"))
    assert [m.term.text for m in a.road_types] == ["railroad crossings"]


def test_a_region_sign_the_rule_opens_with_gives_way_to_the_core_term_inside_it(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Orange diamond signs" hold the core "diamond signs": the core warning sign names it (the development
    references write work-zone signs as warning signs), while a region signal no core term names still leads."""
    mr = best(parser, validator, "Orange diamond signs along a road mean workers may be ahead.", "california")
    assert mr is not None and "warning sign" in mr.manipulation
    meter = best(
        parser, validator, "Ramp meters control traffic onto the freeway. Stop at the limit line on red.", "california"
    )
    assert meter is not None and "ramp meter" in meter.manipulation


def test_a_bicycle_symbol_is_a_marking_not_a_bicycle(parser: OntologyGroundedParser) -> None:
    """A bicycle symbol painted on the road names no bicycle."""
    a = parser.analyse(rule("A bicycle symbol with two chevrons marks where bicyclists may ride.", region="california"))
    assert "bicycle" not in {m.term.normalised for m in a.manipulations}


def test_a_person_on_foot_crosses_at_the_crosswalk_the_rule_names_not_at_the_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """Pedestrians crossing where the rule names both a junction and its crosswalk are at the crosswalk; a roundabout
    keeps its crossings."""
    mr = best(
        parser,
        validator,
        "An intersection has a crosswalk on every side even when no lines are painted, so yield to pedestrians "
        "crossing there.",
        "california",
    )
    assert mr is not None and mr.road_type == "crosswalk" and "pedestrian" in mr.manipulation
    ring = best(
        parser,
        validator,
        "Roundabouts\nSlow down near a roundabout and yield to pedestrians in its crosswalks before you enter.",
        "california",
    )
    assert ring is not None and ring.road_type == "intersection"


def test_an_emergency_vehicles_lights_are_written_without_their_colour(
    parser: OntologyGroundedParser, validator: OfflineValidator, ontology: Ontology
) -> None:
    """An emergency vehicle's flashing lights say it is on a call: "an emergency vehicle with flashing lights" (as
    ca-55 writes it), which scores as the emergency vehicle, not as a flashing red signal."""
    mr = best(
        parser,
        validator,
        "If a fire engine or other emergency vehicle with its red lights flashing is coming toward you, drive to the "
        "right edge of the road and stop.",
        "california",
    )
    assert mr is not None and mr.manipulation.endswith("with flashing lights")
    assert ontology.vocabulary("california").canonical("manipulation", mr.manipulation) == "emergency vehicle"


def test_a_turn_lane_the_rule_opens_with_outranks_the_traffic_it_warns_of(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A region lane the rule opens with stays its subject over motor traffic it mentions (oncoming vehicles turning
    from it); its turns name no junction. (A vulnerable road user still comes first: see the bike lane.)"""
    mr = best(
        parser,
        validator,
        "Center Left Turn Lanes\nUse the middle lane only to begin or end a left turn, and watch for oncoming vehicles "
        "turning left from the same lane.",
        "california",
    )
    assert mr is not None and "center left turn lane" in mr.manipulation and mr.road_type == "any roads"


def test_your_whole_vehicle_is_the_egos_and_room_beyond_the_tracks_is_traffic(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "room on the far side for your whole vehicle": the vehicle is the ego's, and the rule is about the queue
    beyond the tracks (heavy traffic)."""
    mr = best(
        parser,
        validator,
        "Do not stop on railroad tracks. Start across only when there is room on the other side for your entire "
        "vehicle, even when the traffic in front is slow.",
        "california",
    )
    assert mr is not None and mr.road_type == "railroad crossings" and "heavy traffic" in mr.manipulation


def test_children_crossing_near_a_school_are_in_the_school_area(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """Children "outside or crossing" near a school: the crossing, named only by its verb, is the school area's."""
    mr = best(
        parser,
        validator,
        "Keep to 25 mph close to a school when children are out or crossing.",
        "california",
    )
    assert mr is not None and mr.road_type == "school area" and "child" in mr.manipulation


def test_weather_light_and_surface_rules_hold_on_any_road(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """The signals and stop signs a weather or light rule mentions are what is harder to see or stop for, not its
    place: the MR is on any roads, as every development reference for weather, light and surface is."""
    mr = best(
        parser,
        validator,
        "Low sun glare in the morning can make traffic lights and stop signs hard to see, so slow down and use your "
        "visor.",
        "california",
    )
    assert mr is not None and mr.road_type == "any roads" and mr.verb == "replaces"


def test_the_example_before_or_other_is_what_the_mr_adds(parser: OntologyGroundedParser) -> None:
    """ "a deer or other animal": the deer is the thing to add; "other animal" only says what else is covered."""
    a = parser.analyse(
        rule("Slow down if a deer or other animal stands at the side of the highway.", region="california")
    )
    assert [m.term.normalised for m in parser._ranked_manipulations(parser.region_model("california"), a)][:1] == [
        "deer"
    ]
    assert any(m.term.normalised == "animal" and m.aside for m in a.manipulations)


def test_what_swerving_could_lead_to_is_no_subject(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """ "swerving may send you into oncoming traffic": a risk of the manoeuvre the rule warns against; the deer is
    the subject."""
    mr = best(
        parser,
        validator,
        "When a deer runs onto the road, brake and stay in your lane; a sudden swerve could send you into oncoming "
        "traffic.",
        "california",
    )
    assert mr is not None and "deer" in mr.manipulation


def test_lights_that_were_dark_are_out_of_order(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """ "the lights at a junction were dark": the signal's lights are out, which is no low light. (The word list
    that says so was shadowed by a later constant of the same name, so "lights" never counted as a signal noun.)"""
    mr = best(
        parser,
        validator,
        "Where the lights at a junction were dark because of a power failure, stop as you would at a STOP sign.",
        "california",
    )
    assert mr is not None and "low lighting" not in mr.manipulation


@pytest.mark.parametrize(
    ("text", "road", "term"),
    [
        # an exception ("unless you are in an intersection") says where the ego may be, not where the rule is
        (
            "Give way to a fire truck sounding its siren: move to the right edge of the road and stop there, unless "
            "you are in an intersection.",
            "any roads",
            "emergency vehicle",
        ),
        # a railroad crossing is a noun, not the crossing of a road, so trucks that must stop keep it as their place
        (
            "Trucks hauling fuel must come to a stop at each railroad crossing before going over the tracks; expect "
            "them to stop.",
            "railroad crossings",
            None,
        ),
        # a signal named only as the thing compared to ("as you would a traffic signal") stands nowhere
        (
            "Where a lane is closed for road repairs, do what a flagger shows you, as you would a traffic signal.",
            "any roads",
            "flagger",
        ),
    ],
)
def test_exceptions_railroad_crossings_and_comparisons_as_places(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str, term: str | None
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == road, mr
    assert term is None or term in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    ("region", "text", "road", "behaviour"),
    [
        # red lights and a stop line imply a junction, except in a rule about a railroad crossing (its St. Andrew's
        # cross, crossbuck or train): there they are the crossing's
        (
            "germany",
            "Vehicles must wait before the St. Andrew's cross or at the stop line when red light signals are shown or "
            "a train is coming.",
            "railroad crossings",
            None,
        ),
        (
            "california",
            "Stop at the crossbuck when the red lights flash and the gate comes down; do not start over the tracks "
            "until the train has gone.",
            "railroad crossings",
            None,
        ),
        # "Driving school example: ..." teaches a rule; the junction it then names is the rule's place
        (
            "germany",
            "Driving school example: you drive through a residential area at 30 km/h. At the next junction there is "
            "no sign, so the vehicle coming from the street on your right has priority.",
            "intersection",
            None,
        ),
        # "stop before the crosswalk. With no crosswalk, ...": the next sentence's missing crosswalk does not make the
        # fallback crosswalk a place said to lack something (it stays a fallback; the STOP sign's junction is the place)
        (
            "california",
            "Octagonal red STOP sign: Stop fully at the limit line. With no limit line, stop before the crosswalk. "
            "With no crosswalk, stop before entering the intersection.",
            "intersection",
            None,
        ),
        # "cross them only to turn left into or out of a driveway": the turn is into a property, so the lines' rule
        # stays on any road and keeps the lane
        (
            "california",
            "Two solid yellow lines mean no passing. You may cross them only to turn left into or out of a driveway.",
            "any roads",
            "keep current",
        ),
        # the crosswalk at a roundabout's entry is part of the roundabout: the rule's place is the junction
        (
            "california",
            "As you come to a roundabout, reduce speed and give way to people walking and riding bikes at the crosswalk",
            "intersection",
            None,
        ),
        # "stopped to let passengers off and there is no safety zone": the stop is named before the missing safety
        # zone, so it stays the rule's place (a place named after an absence, "If there is no limit line, stop before
        # the crosswalk", is still a fallback)
        (
            "california",
            "When a trolley has stopped to let passengers off and there is no safety zone, stop behind its rear door "
            "until the riders reach the curb.",
            "bus stopping",
            None,
        ),
    ],
)
def test_railroad_lights_driving_schools_fallbacks_driveways_roundabouts_and_absences_as_places(
    parser: OntologyGroundedParser, region: str, text: str, road: str, behaviour: str | None
) -> None:
    """The place (and, where given, the behaviour) of the parser's first candidate."""
    mr = parser.parse(rule(text, region=region))[0].mr
    assert mr.road_type == road, mr
    assert behaviour is None or mr.expected_behavior == behaviour, mr


def test_when_a_hazard_is_most_likely_is_an_aside(parser: OntologyGroundedParser) -> None:
    """ "above all at dusk and at night" says when the animals come, like "especially": the darkness is no subject."""
    mr = parser.parse(
        rule(
            "The warning sign for wild animals means deer may step onto the road, above all at dusk and at night near "
            "woods. Reduce your speed.",
            region="germany",
        )
    )[0].mr
    assert "lighting" not in mr.manipulation, mr


def test_a_traffic_calmed_area_is_no_30_zone(parser: OntologyGroundedParser) -> None:
    """Sign 325.1 (a traffic-calmed area, walking speed) is another sign than Sign 274.1 (a 30 km/h zone): the
    children and pedestrians it lets use the street are what the MR adds."""
    mr = parser.parse(
        rule(
            "In a traffic-calmed area, drive no faster than walking pace: children may play on the whole width of the "
            "street.",
            region="germany",
        )
    )[0].mr
    assert "30 km/h" not in mr.manipulation and "child" in mr.manipulation, mr


def test_a_car_door_is_no_vehicle(parser: OntologyGroundedParser) -> None:
    """The car doors that riders keep clear of belong to parked cars: the bicyclist is what the MR adds."""
    mr = parser.parse(
        rule(
            "Sharrows are painted in the lane to keep riders away from car doors, and they remind drivers that a "
            "bicyclist may take the full lane. Stay back a safe distance.",
            region="california",
        )
    )[0].mr
    assert "bicyclist" in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the truck's own clause says it turns
        (
            "When a delivery truck in front of you is turning right, do not squeeze in between it and the curb.",
            "a turning vehicle",
        ),
        # the one in front is said to have stopped there
        (
            "Wait behind it whenever the vehicle ahead has stopped at a crosswalk; someone may be walking in front of "
            "it.",
            "a stopped vehicle",
        ),
    ],
)
def test_a_vehicle_whose_own_clause_says_what_it_does_is_that_kind(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: str
) -> None:
    """ "a delivery truck in front of you is turning right" adds a turning vehicle, "whenever the vehicle ahead has
    stopped at a crosswalk" a stopped vehicle; the validator counts each as named."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == expected, mr


def test_a_slow_moving_vehicle_is_no_road_work_vehicle(parser: OntologyGroundedParser) -> None:
    """The orange-triangle emblem marks any vehicle built to go slowly (farm machinery, carts): the MR adds a vehicle."""
    mr = parser.parse(
        rule(
            "A vehicle carrying an orange triangle with a red border is a slow-moving vehicle. Slow down early when you "
            "come up behind one.",
            region="california",
        )
    )[0].mr
    assert mr.manipulation == "a vehicle", mr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "with care" asks to slow down; the "proceed" before it does not keep the speed
        ("A flashing amber signal tells drivers to proceed with care.", ("flashing yellow light", "slow down")),
        # a crossing gate that is down stands for the train it waits for, as the ontology has no gate
        (
            "Do not drive around a crossing gate while it is lowered. Wait until it has gone all the way up.",
            ("rail vehicle", "slow down"),
        ),
        # a colour said to blink is a flashing light
        (
            "Where a traffic light only blinks red, stop fully and then go on when it is safe.",
            ("flashing red light", "slow down"),
        ),
        # a car said to have stopped is a stopped vehicle; one that must stop is the ego's rule, not what it adds
        (
            "If a car in the lane beside you has stopped at a crosswalk, do not overtake it: a walker may be in front.",
            ("stopped vehicle", "slow down"),
        ),
        (
            "Cars must stop behind the limit line whenever a pedestrian is on the crosswalk.",
            ("pedestrian", "slow down"),
        ),
        # the yellow bus with its stop arm is the school bus
        (
            "When the yellow bus ahead swings out its stop arm, traffic both ways must halt.",
            ("school bus", "slow down"),
        ),
        # "turning around" is a U-turn, no junction
        (
            "NO U-TURN: a bent arrow crossed out in a red circle. Turning around is not allowed past this sign.",
            ("no u-turn sign", "keep current", "any roads"),
        ),
        # speed kept low is speed lowered; tire chains are for snow
        ("Tire chains may be needed on passes in winter; with them on, keep your speed low.", ("snow", "slow down")),
        # the time of day at which the rule's subject acts is when, not what
        (
            "Elk wander onto the highway at dawn and dusk. If one runs out in front of you, more may follow: slow down.",
            ("deer", "slow down"),
        ),
        # traffic that "goes first" has the right-of-way
        (
            "At a roundabout, cars already circling go first: wait for a gap before you enter.",
            ("oncoming vehicle", "slow down", "intersection"),
        ),
        # what a "do not stop" rule names only as its exception is when the ego may stop: adding it slows the ego
        (
            "Join the freeway at the speed of its traffic, and do not stop on the on-ramp unless traffic is very heavy.",
            ("heavy traffic", "slow down"),
        ),
        # "do not pass it", "do not drive around it": the stopped vehicle said before is what is not to be passed, and
        # the ego stops behind it
        (
            "If a car in the next lane is stopped at a crosswalk, do not pass it: someone may be crossing there.",
            ("stopped vehicle", "slow down"),
        ),
        (
            "When the car beside you has stopped before a crosswalk, never drive around it.",
            ("stopped vehicle", "slow down"),
        ),
        # the yield sign described by its shape and colours, as US handbooks teach it
        (
            "Where a red and white triangle pointing down stands at the ramp, let the traffic on the highway go first.",
            ("yield sign", "slow down"),
        ),
        # more of the handbook's shape-and-colour descriptions: a triangle with a point down, eight sides, an X, an
        # orange vest and a paddle, a white diamond on a lane
        (
            "A triangle with its point down, edged in red, tells you to let the cross traffic go first.",
            ("yield", "slow down"),
        ),
        ("A red sign with eight sides at the corner means come to a full stop.", ("stop sign", "slow down")),
        (
            "A sign shaped like a triangle with one point down tells you to let cars and cyclists on the other road go "
            "first.",
            ("yield", "slow down"),
        ),
        (
            "Come to a full stop at the limit line wherever you see a red octagon at the corner.",
            ("stop sign", "slow down"),
        ),
        # (the crossbuck is California's own railroad crossing sign, the core St. Andrew's cross elsewhere)
        ("A white X-shaped sign beside the road marks a railroad crossing.", ("crossbuck", "slow down")),
        (
            "In a road work zone, obey the worker in the orange vest who turns the STOP/SLOW paddle.",
            ("flagger", "slow down"),
        ),
        (
            "A lane with a white diamond painted on it is reserved for cars with two or more people in them.",
            ("high-occupancy", "keep current"),
        ),
        # "stop before the crosswalk; with no crosswalk, ...": the crosswalk is the next clause's absence, and a
        # fallback place of the one before it
        (
            "STOP sign. Halt at the limit line. With no limit line, halt before the crosswalk; with no crosswalk, halt "
            "before the intersection.",
            ("stop sign", "slow down", "intersection"),
        ),
        # the DO NOT ENTER sign described: a red square with a white bar; it keeps the ego to its way
        (
            "Never drive past a red square sign with a white bar across it: you would be going the wrong way.",
            ("red and white regulatory sign", "keep current"),
        ),
        # a signal that changes from one colour to another shows the second
        (
            "If the light turns from green to steady yellow as you come near the corner, stop before the limit line.",
            ("yellow light", "slow down", "intersection"),
        ),
        # a road that ends at a through road meets it at a junction
        (
            "Where your road ends at a through road with no sign or signal, let the cars on the through road go first.",
            ("vehicle", "slow down", "intersection"),
        ),
        # a road that freezes is an icy one
        ("Shaded stretches of the highway freeze first on cold mornings.", ("ice road", "slow down")),
        ("In cold weather a bridge deck can freeze over before the road around it.", ("ice road", "slow down")),
        # a sharp turn of the road (a bend) is no junction
        (
            "Warning signs show a sharp turn ahead; reduce your speed before you reach it.",
            ("warning sign", "slow down", "any roads"),
        ),
        # a lane kept for others (the HOV lane) is one the ego keeps out of
        ("Stay out of a High-Occupancy Vehicle (HOV) lane when you drive alone.", ("high-occupancy", "keep current")),
        # "even if no lines are painted" concedes: the crosswalk is there anyway, and is the place
        (
            "Every corner has a crosswalk even if no lines are painted. Stop for pedestrians waiting there.",
            ("pedestrian", "slow down", "crosswalk"),
        ),
        # where the ego must never stop on its way is no place of the rule
        (
            "When a fire engine with its siren on comes up behind you, pull to the right and stop. Never stop inside an "
            "intersection.",
            ("emergency vehicle", "slow down", "any roads"),
        ),
        # a playground is no school: children near one are on any road
        ("Kids near a playground can dash out without warning; drive slowly.", ("child", "slow down", "any roads")),
    ],
)
def test_what_a_rule_asks_and_implies(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: tuple[str, ...]
) -> None:
    """What the MR adds and how the ego drives (and its place, where given)."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and expected[0] in mr.manipulation and mr.expected_behavior == expected[1], mr
    assert expected[2:] in ((), (mr.road_type,)), mr


def test_lines_that_border_a_named_lane_describe_it_and_a_candidate_set_aside_is_trusted_less(
    parser: OntologyGroundedParser,
) -> None:
    """The yellow lines that edge a center left turn lane are the lane's description, not the rule's subject; and a
    candidate built from a mention set aside gets less confidence, so that retrieval's agreement with it does not
    easily put it above the rule's own subject."""
    analysis = parser.analyse(
        rule(
            "A center left turn lane, edged by yellow lines on each side, may be used only to start or finish a left "
            "turn or a U-turn.",
            region="california",
        )
    )
    lines = [m for m in analysis.manipulations if "line" in m.term.tokens]
    assert lines and all(m.aside for m in lines)
    first, *rest = parser.candidates(analysis)
    assert "center left turn lane" in first.mr.manipulation
    yellow = [c for c in rest if "yellow" in c.mr.manipulation]
    assert yellow and all(c.confidence < 0.5 for c in yellow), yellow


def test_the_stvo_title_of_sign_205_is_the_yield_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """The StVO calls sign 205 "Grant right of way" (Vorfahrt gewaehren): the sign is the yield sign, not a
    right-of-way regulation sign."""
    mr = best(parser, validator, '"Grant Right-of-Way" sign: drivers let the traffic on the main road go first.')
    assert mr is not None and "yield sign" in mr.manipulation, mr


@pytest.mark.parametrize(
    ("region", "text", "term"),
    [
        ("california", "On a residential street the posted speed limit is usually 25 mph.", "speed limit sign"),
        ("california", "Do not go faster than the speed limit sign allows, even on an empty road.", "speed limit sign"),
        ("germany", "Do not go faster than the speed limit sign allows, even on an empty road.", "maximum speed limit"),
        ("germany", "Outside built-up areas the speed limit is 100 km/h.", "maximum speed limit"),
        # the same habit for dust: California's own "Dust Storms", the core heavy smoke elsewhere
        ("california", "If blowing dust hides the road ahead, slow down.", "dust storms"),
        ("germany", "If blowing dust hides the road ahead, slow down.", "heavy smoke"),
        # and for drizzle: California's own "Drizzle", the core rain elsewhere
        ("california", "A fine drizzle leaves a film of water on the asphalt; ease off the gas.", "drizzle"),
        ("germany", "A fine drizzle leaves a film of water on the asphalt; ease off the gas.", "rain"),
    ],
)
def test_the_regions_own_term_for_a_speed_limit_or_dust_where_it_has_one(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, text: str, term: str
) -> None:
    """California's ontology names its own "Speed Limit Signs", "Dust Storms" and "Drizzle": a US rule's speed limit,
    blowing dust or drizzle is that term, not the core one (the "maximum" speed limit sign written for German sign 274,
    heavy smoke, rain), which the German rules keep."""
    mr = best(parser, validator, text, region)
    assert mr is not None and term in mr.manipulation, mr
    assert region == "germany" or "maximum" not in mr.manipulation, mr


def test_a_bike_in_a_us_handbook_is_met_as_its_rider(parser: OntologyGroundedParser) -> None:
    """US handbooks' "bikes" ("bikes may use the full lane") are ridden: the MR adds a bicyclist, not a riderless
    bicycle."""
    mr = parser.parse(
        rule(
            "Bikes may use the full lane where it is too narrow to share. Give them room when passing.",
            region="california",
        )
    )[0].mr
    assert "bicyclist" in mr.manipulation, mr


def test_a_colour_that_describes_a_sign_a_few_words_on_is_no_signal_light(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Eight-sided and red, a STOP sign ...": the red is the sign's, so the MR adds the stop sign, not a red light,
    though the rule goes on to the limit line and the intersection."""
    mr = best(
        parser,
        validator,
        "Eight-sided and red, a STOP sign tells you to stop completely at the limit line before the intersection.",
        "california",
    )
    assert mr is not None and mr.manipulation == "a stop sign", mr


@pytest.mark.parametrize("legend", ["YIELD", "STOP"])
def test_a_sign_is_named_by_its_legend_not_its_colours(parser: OntologyGroundedParser, legend: str) -> None:
    """ "a red and white YIELD sign": the colours describe the sign the legend names."""
    mr = parser.parse(
        rule(
            f"A red and white {legend} sign at a corner means you must let cross traffic go first.", region="california"
        )
    )[0].mr
    assert mr.manipulation == f"a {legend.lower()} sign", mr


def test_a_turn_the_driver_makes_is_not_the_other_vehicles(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Give way to approaching cars when you turn left": the turn in the "when" clause is the ego's, so the cars
    are the ones it lets pass, not turning vehicles."""
    mr = best(parser, validator, "Give way to approaching cars when you turn left across their path.", "california")
    assert mr is not None and mr.manipulation == "an oncoming vehicle", mr


def test_what_the_subject_is_likened_to_is_an_aside(parser: OntologyGroundedParser) -> None:
    """ "a flagger has the same authority as a regulatory sign": the sign is only what the flagger is compared to."""
    mr = parser.parse(
        rule(
            "Obey flaggers in work zones. A flagger has the same authority as a regulatory sign, so stop when the "
            "paddle says STOP.",
            region="california",
        )
    )[0].mr
    assert "flagger" in mr.manipulation.lower(), mr


def test_a_regions_road_user_is_no_rival_of_a_core_road_surface_or_bare_cars(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A region's road user ("motorcycle", California's motorcyclist) named as the rule's subject gives way to a core
    road user, not to a wet road the rule mentions in passing nor to the "cars" it is compared with."""
    mr = best(
        parser,
        validator,
        "Keep four seconds behind a motorcycle. Motorcycles can stop faster than cars, and on wet pavement the rider "
        "needs even more room.",
        "california",
    )
    assert mr is not None and mr.manipulation == "a motorcyclist", mr


def test_an_ice_cream_truck_is_no_icy_road(parser: OntologyGroundedParser) -> None:
    """The ice in "ice cream truck" names no road surface."""
    candidates = parser.parse(
        rule("Drive slowly near an ice cream truck; children may run to it.", region="california")
    )
    assert all("ice road" not in c.mr.manipulation for c in candidates), [c.mr for c in candidates]


def test_the_verb_hydroplane_names_a_wet_road(parser: OntologyGroundedParser) -> None:
    """ "If your car starts to hydroplane": the verb, not only "hydroplaning", is water on the road."""
    mr = parser.parse(
        rule("If your car starts to hydroplane, ease off the gas and do not brake hard.", region="california")
    )[0].mr
    assert "wet road" in mr.manipulation, mr


def test_a_top_speed_is_a_speed_limit(parser: OntologyGroundedParser) -> None:
    """ "The top speed on most highways is sixty-five" states a speed limit."""
    mr = parser.parse(
        rule("The top speed on most highways is sixty-five, but never drive faster than is safe.", region="california")
    )[0].mr
    assert "speed limit sign" in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    "text",
    [
        "Wait for a person carrying a white cane to finish crossing before you turn.",
        "Never sound your horn at someone who is blind and waiting at the corner.",
    ],
)
def test_a_blind_person_on_foot_is_met_as_a_pedestrian(parser: OntologyGroundedParser, text: str) -> None:
    """A white cane or blindness marks a pedestrian: the MR adds one (as the development rule on blind pedestrians'
    references do), not the narrower guide dog user, which a guide dog still names."""
    mr = parser.parse(rule(text, region="california"))[0].mr
    assert "pedestrian" in mr.manipulation, mr
    dog = parser.parse(rule("Give a guide dog and its handler plenty of room.", region="california"))[0].mr
    assert "guide dog" in dog.manipulation.lower(), dog


def test_the_tracks_are_a_railroad_crossing_unless_a_street_rail_vehicle_runs_on_them(
    parser: OntologyGroundedParser,
) -> None:
    """ "the tracks" of a US handbook are a railroad crossing's; a streetcar's tracks run in the street."""
    rail = parser.parse(
        rule("Do not stop on the tracks; make sure the traffic ahead has room before you cross.", region="california")
    )[0].mr
    assert rail.road_type == "railroad crossings", rail
    street = parser.parse(
        rule(
            "Never turn left in front of a streetcar, and look both ways before you cross the tracks.",
            region="california",
        )
    )[0].mr
    assert street.road_type != "railroad crossings", street


def test_a_car_behind_another_road_user_is_not_behind_the_ego(parser: OntologyGroundedParser) -> None:
    """ "a car behind a scooter" is behind the scooter (the ego following it): the MR is about the road user ahead,
    not a vehicle behind the ego; "a car behind you" still is one."""
    mr = parser.parse(
        rule("Following a motorcycle: picture of a car behind a motorcycle. Keep a long gap.", region="california")
    )[0].mr
    assert "motorcyclist" in mr.manipulation.lower(), mr
    behind = parser.parse(rule("If a car behind you is following too closely, let it pass.", region="california"))[0].mr
    assert "behind" in behind.manipulation, behind


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yield to pedestrains waiting at the corner.", "pedestrian"),
        ("Give a bicylist at least three feet when you pass.", "bicyclist"),
    ],
)
def test_a_misspelt_word_one_edit_from_a_lexicon_word_is_read_as_that_word(
    parser: OntologyGroundedParser, text: str, expected: str
) -> None:
    """Scraped rules hold typos (the development rules have "vehicl" and "assistancs"): a word one edit away from
    exactly one lexicon word, and no common English word itself, is read as that word."""
    mr = parser.parse(rule(text, region="california"))[0].mr
    assert expected in mr.manipulation, mr


def test_the_speller_leaves_real_words_and_short_words_alone() -> None:
    """ "pausing" is one letter from "passing" but is a word; "lane" is too short to mend; an unknown word two edits
    from everything stays as written."""
    from tools.rules.lexicon import Speller, english_words, tokenize_rule

    speller = Speller(["passing", "pedestrian", "lane"], english_words())
    words = [t.word for t in speller.fix(tokenize_rule("pausing near a lnae, then pedestrains and zzqqxxw"))]
    assert words == ["pausing", "near", "a", "lnae", "then", "pedestrian", "and", "zzqqxxw"]


@pytest.mark.parametrize(
    "text",
    [
        "Keep an eye out for kids near parks and parked cars.",
        "Look out for pedestrians stepping out between parked vehicles.",
    ],
)
def test_parked_cars_a_road_user_comes_from_are_a_hiding_place_not_the_subject(
    parser: OntologyGroundedParser, text: str
) -> None:
    """Parked cars named as where a child or a pedestrian comes from are where they hide: the MR adds the road user,
    not a stopped vehicle."""
    mr = parser.parse(rule(text, region="california"))[0].mr
    assert "stopped" not in mr.manipulation and "parked" not in mr.manipulation, mr


@pytest.mark.parametrize(
    "text",
    [
        "When you turn at a corner, let the people in the crosswalk get all the way across first.",
        "Look twice before a right turn on red: someone crossing from your right may be hard to see.",
    ],
)
def test_people_in_the_crosswalk_and_someone_crossing_are_pedestrians(
    parser: OntologyGroundedParser, text: str
) -> None:
    """Handbooks name pedestrians by what they do ("people in the crosswalk", "someone crossing"), not by the word."""
    analysis = parser.analyse(rule(text, region="california"))
    assert "pedestrian" in {m.term.normalised for m in analysis.manipulations if not m.ruled_out}


@pytest.mark.parametrize(
    "text",
    [
        "When a trolley halts in the street to let people on or off, wait behind it until everyone is on the sidewalk.",
        "A city bus that stops in your lane to pick up or drop off riders may have people walking around it.",
    ],
)
def test_a_bus_or_streetcar_stopping_for_riders_is_named_for_its_passengers(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """The riders getting on or off are whom the ego waits for: the MR adds the passengers at the stop."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.road_type, mr.manipulation) == ("bus stopping", "a passenger"), mr


def test_a_school_bus_loading_children_stays_the_school_bus(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A school bus stopping to load or unload children is still the rule's subject (its lights and stop arm)."""
    text = "Stop for a school bus that has stopped to load or unload children and is flashing red lights."
    mr = best(parser, validator, text, "california")
    assert mr is not None and ("school bus" in mr.manipulation or "flashing red" in mr.manipulation), mr


def test_a_bus_said_to_turn_is_a_turning_vehicle(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """A bus whose own clause tells of its turn is added as a turning vehicle, as a truck or car would be."""
    text = "A bus making a left turn needs extra room, so wait for it to clear the intersection before you go."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a turning vehicle", mr


def test_another_vehicle_passing_you_is_the_vehicle_behind(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "another vehicle" alone may be oncoming; one that "is passing you" comes from behind."""
    mr = best(
        parser, validator, "Hold your speed steady while another vehicle is passing you on the left.", "california"
    )
    assert mr is not None and mr.manipulation == "a vehicle behind", mr


@pytest.mark.parametrize(
    "text",
    [
        "A person with a white cane who is standing at the curb has the right-of-way; wait for them.",
        "If an elderly pedestrian is waiting at the corner, give them time to get across.",
    ],
)
def test_a_person_on_foot_at_the_curb_or_corner_is_at_a_crossing(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Where no place is named, a pedestrian at the curb or the corner is there to cross: the place is the crosswalk."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "crosswalk", mr


def test_a_sign_held_up_by_a_crossing_guard_is_the_guards(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "holding up a hand-held STOP sign": the sign a few words after the holding verb is still the guard's."""
    text = "When a crossing guard is holding up a hand-held STOP sign, stay stopped until the children have crossed."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a crossing guard", mr


def test_a_wrong_way_heading_names_the_wrong_way_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A section headed "WRONG WAY" that then says "this red sign" is about the WRONG WAY sign."""
    text = "WRONG WAY\nThis red sign tells you that you are driving against the flow of traffic. Turn around safely."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a wrong way sign", mr


def test_farm_animals_are_livestock_in_california(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """Cows, sheep and goats are the California list's livestock, not its general "Animals"."""
    text = "On unfenced rural roads, cows and goats may wander onto the pavement; slow down when you see them."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "livestock", mr


def test_not_stopping_inside_a_junction_keeps_the_ego_going(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Never stop inside an intersection ... keep going through": the ego carries on through the junction."""
    text = "If a fire truck comes up behind you at a junction, never stop inside the intersection; keep going through."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == "keep current", mr


def test_the_sun_shining_into_your_eyes_is_sun_glare(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A sun that shines into the driver's eyes is glare, whatever it hides (signals, people crossing)."""
    text = "A rising sun may shine right into your eyes and hide traffic lights and pedestrians. Slow down."
    mr = best(parser, validator, text, "california")
    assert mr is not None and "sun glare" in mr.manipulation, mr


def test_an_older_pedestrian_is_a_senior(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """ "older pedestrians" names the senior (elderly person), the narrower term, not any pedestrian."""
    text = "Give older pedestrians extra time to finish crossing before you drive on."
    mr = best(parser, validator, text, "california")
    assert mr is not None and "senior" in mr.manipulation, mr


def test_a_car_ahead_that_stops_is_a_stopped_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "a car ahead stops" says the car has stopped: the words fold plurals ("stops" reads "stop"), so the check reads
    the verb as written."""
    text = "When the car ahead stops at a crosswalk, do not go around it."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a stopped vehicle", mr


def test_a_car_said_to_be_waiting_or_halted_is_a_stopped_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    text = "Do not pass a car that is waiting in front of a crosswalk; someone may be walking across."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a stopped vehicle", mr
    text = (
        "Stay behind a car that has halted next to you just short of a crosswalk: its driver may see someone crossing."
    )
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a stopped vehicle", mr


@pytest.mark.parametrize(
    ("text", "manipulation"),
    [
        # a class of sign as the heading, the sign it shows right after: that sign is the subject
        (
            "Red and White Regulatory Sign NO U-TURN Turning around to head back is not allowed where it is posted.",
            "a no u-turn sign",
        ),
        (
            "Red and White Regulatory Sign WRONG WAY Traffic comes at you here: stop safely and turn back.",
            "a wrong way sign",
        ),
        # the no-entry sign is the one the class stands for in AutoMT's prompt: the class stays
        (
            "Red and White Regulatory Sign DO NOT ENTER This sign means you may not drive into the road past it.",
            "a red and white regulatory sign",
        ),
    ],
)
def test_a_class_of_sign_gives_way_to_the_sign_it_shows(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, manipulation: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == manipulation


@pytest.mark.parametrize(
    ("text", "manipulation"),
    [
        # "another vehicle" is any other vehicle: one beside you, one you pass, one in your blind spot.
        ("Do not drive for long beside another vehicle; pull ahead or drop back.", "a vehicle"),
        ("Before you change lanes, look over your shoulder for another vehicle in your blind spot.", "a vehicle"),
        # One coming at you from ahead is still oncoming (the guards).
        ("Before you pass, make sure that no oncoming vehicle is near.", "an oncoming vehicle"),
        ("Dim your high beams whenever another vehicle comes toward you.", "an oncoming vehicle"),
        ("When you meet another vehicle on a narrow bridge, keep right.", "an oncoming vehicle"),
        # an oncoming driver is the oncoming vehicle
        (
            "When an oncoming driver fails to dim the headlights, look toward the right edge of your lane.",
            "an oncoming vehicle",
        ),
        # a road user whose own clause says it comes toward the driver is the oncoming one
        ("On a left turn, give way to bicyclists who are coming from the opposite direction.", "an oncoming bicyclist"),
        ("Before you pass, look out for cars going the other way and for curves ahead.", "an oncoming vehicle"),
        ("On a two-lane road, slow down for trucks coming toward you.", "an oncoming vehicle"),
        ("Watch out for bikes riding in the other direction on a two-way bike path.", "an oncoming bicyclist"),
        # where it goes is no way it comes from
        ("Look out for bicyclists turning the other way at the junction.", "a bicyclist"),
        ("Slow down for bicyclists riding next to you.", "a bicyclist"),
        # what another road user or the ego does later in the clause is not the road user's own coming
        ("Slow down for a bicyclist and let cars coming the other way pass first.", "a bicyclist"),
        ("Leave room for bicyclists as traffic going the other way passes.", "a bicyclist"),
        ("Pass a bicyclist only as you are going the other way.", "a bicyclist"),
        ("Look out for a car backing out of a driveway as you are coming the other way.", "a vehicle"),
        # said with a bare "is" too
        ("When a bicyclist is riding the other way, give room.", "an oncoming bicyclist"),
        # nor does another car's coming make the car ahead an oncoming one
        ("Keep three seconds behind the vehicle ahead, and watch for trucks coming toward you.", "a vehicle"),
    ],
)
def test_which_road_user_is_the_oncoming_one(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, manipulation: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == manipulation, mr


@pytest.mark.parametrize(
    ("region", "manipulation"),
    [
        # California has its own name for the crossbuck, and it outranks the train the sign warns of ...
        ("california", "a railroad crossing sign (crossbuck)"),
        # ... a region without it keeps the core St. Andrew's cross
        ("germany", "a st. andrew's cross sign"),
    ],
)
def test_the_crossbuck_is_the_regions_own_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, manipulation: str
) -> None:
    text = "Railroad Crossing A white X-shaped crossbuck stands where the tracks cross the road. Listen for a train."
    mr = best(parser, validator, text, region)
    assert mr is not None and mr.manipulation == manipulation, mr


@pytest.mark.parametrize(("region", "term"), [("california", "flooded roads"), ("germany", "wet road")])
def test_a_flooded_road_is_the_regions_own_term(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, term: str
) -> None:
    """California names flooded roads for themselves, a kind of wet road that ranks with the core one even where the
    rule also says "wet"; a region without the term keeps the core wet road."""
    text = "Flooded Roads Never drive into a flooded underpass: the water may be deeper than it looks, and your brakes get wet."
    mr = best(parser, validator, text, region)
    assert mr is not None and term in mr.manipulation, mr
    # water standing on the road is a flood of it too
    mr = best(parser, validator, "Go through standing water slowly, then try your brakes.", region)
    assert mr is not None and term in mr.manipulation, mr


def test_a_railroad_crossing_sign_is_californias_crossbuck(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    text = "Railroad Crossing Sign Look both ways and listen before you drive over the tracks."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a railroad crossing sign (crossbuck)", mr


@pytest.mark.parametrize(
    "text",
    [
        "You may cross double solid yellow lines only to make a U-turn where one is allowed; never cross them to pass.",
        # (the lane itself, as before)
        "Center Left Turn Lane Drivers from both directions use this lane to begin a left turn, so watch for an "
        "oncoming car in it.",
    ],
)
def test_the_turns_a_centre_lane_or_yellow_line_allows_name_no_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """The turns such a rule allows are what the lane or line is for: it runs along any road."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "any roads", mr


@pytest.mark.parametrize(
    "text",
    [
        "White curb: stop only long enough for a passenger to get in or out of your car.",
        "Colored Curbs A red curb means no stopping or parking, though a bus may stop in a red zone marked for buses.",
    ],
)
def test_a_rule_about_curb_colours_makes_no_bus_stop(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Curb colours say where a car may stop along any road; the passengers and buses they mention make no bus stop."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "any roads", mr


def test_a_streetcar_letting_riders_on_or_off_is_at_its_stop(parser: OntologyGroundedParser) -> None:
    """The place is in the words, whichever road user the MR then adds (the streetcar or its riders)."""
    text = "A trolley that halts to let riders on or off may have people walking in front of it: stay behind it."
    places = {m.term.normalised for m in parser.analyse(rule(text, region="california")).road_types}
    assert "bus stopping" in places, places


def test_a_pedestrian_signal_stands_at_a_crosswalk(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    text = "Pedestrian Signals A raised hand tells walkers not to start, but someone may still be out in the street."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "crosswalk", mr


@pytest.mark.parametrize(
    "text",
    [
        "When you join the freeway, give way to the traffic already on the freeway.",
        "Joining a Freeway Come up to the speed of freeway traffic on the ramp and look for an opening between cars.",
    ],
)
def test_traffic_on_a_freeway_one_joins_is_heavy_traffic(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Merging is finding a gap in the freeway's flow: that flow is the heavy traffic, not one oncoming car."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "heavy traffic", mr


def test_the_exception_to_a_ban_on_stopping_slows_the_ego_even_when_named_twice(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """The heavy traffic that lets the ego stop on the ramp is also named as the flow it joins; the MR still slows."""
    text = (
        "Cars coming down the ramp must blend into the traffic already on the freeway. Never stop on the ramp "
        "unless the traffic is too heavy to join; vehicles already on the freeway go first."
    )
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.manipulation, mr.expected_behavior) == ("heavy traffic", "slow down"), mr


def test_a_lane_change_rule_that_names_no_road_user_is_about_the_vehicle_beside(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """Changing lanes is about the vehicle in the lane one moves into; the implied term is compared by its normalised
    name ("Vehicle" is "vehicle"), so the validator sees it grounded."""
    mr = best(parser, validator, "Look over your shoulder and signal before you change lanes.", "california")
    assert mr is not None and mr.manipulation == "a vehicle", mr


def test_the_stop_line_of_a_ramp_meter_is_on_the_ramp(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A ramp meter's red light and its line are the meter's, as a railroad crossing's are the crossing's."""
    text = "Ramp meters let one car at a time join the freeway. Stop at the line on red and go on green."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "any roads", mr


@pytest.mark.parametrize(
    "text",
    [
        "When two lanes become one, drivers should take turns and let one car from the other lane in.",
        "Parking Downhill Turn the front wheels toward the curb and set the parking brake before you leave the car.",
        # the wheels named again as "them", and turning to look back before reversing
        "On a slope, point the front wheels at the curb; uphill, turn them out so the car rolls back against it.",
        "Reversing Small children can hide behind a car. Turn to look through the rear window and back up slowly.",
    ],
)
def test_taking_turns_or_turning_the_wheels_is_no_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "any roads", mr


@pytest.mark.parametrize(("second", "chosen"), [(0.805, 0), (0.85, 1)])
def test_a_confidence_within_a_hundredth_keeps_the_parsers_order(
    parser: OntologyGroundedParser, validator: OfflineValidator, second: float, chosen: int
) -> None:
    """Two accepted MRs that pass the same checks: a lead in confidence of a hundredth or less (retrieval's support
    moves by more than that between near neighbours) does not overturn the parser's first choice; a clear lead does."""
    r = rule("Slow down when children are playing near a school.", region="california")
    first, other = (
        MRCandidate(
            mr=MRFields(road_type="school area", verb="adds", manipulation=m, expected_behavior="slow down"), parser="t"
        )
        for m in ("a child", "a pedestrian")
    )
    verdicts = [
        v.model_copy(update={"hallucination": 0.0, "accepted": True, "confidence": c})
        for v, c in zip(validator.validate_sync(r, [first, other]), (0.8, second), strict=True)
    ]
    assert choose_best(verdicts) is verdicts[chosen]


def test_turning_on_lights_is_no_turn_at_a_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    text = "Traffic Breaks A patrol car turning on its rear lights and zigzagging across the freeway asks you to slow."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "any roads", mr


@pytest.mark.parametrize(
    "text",
    [
        "Where the center of the road has two solid yellow lines, passing is not allowed from either side.",
        "Never cross two solid yellow lines to get around a truck; cross them only to turn left into a driveway.",
    ],
)
def test_a_no_passing_line_keeps_the_ego_in_its_lane(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == "keep current", mr


def test_a_two_way_stop_is_a_stop_sign_at_a_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    mr = best(parser, validator, "At a two-way stop, wait for a gap in the cross traffic before you go.", "california")
    assert mr is not None and (mr.road_type, mr.manipulation) == ("intersection", "a stop sign"), mr


def test_people_on_the_sidewalk_are_pedestrians(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    text = "Leaving a parking garage, edge out slowly: a wall may hide someone on the sidewalk until the last moment."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a pedestrian", mr


def test_a_flashing_yellow_arrow_is_about_whom_the_turn_yields_to(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """The ontology has red and green arrows and the flashing yellow light, but no flashing yellow arrow."""
    text = "A flashing yellow arrow lets you turn left once you have given way to oncoming cars."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "an oncoming vehicle", mr


def test_a_heading_glued_to_the_same_road_user_is_no_list_of_addressees(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """'Motorcycles A motorcycle can ...': the heading and the first words name one road user, not a list the rule
    speaks to, so the motorcyclist stays the rule's subject rather than the car it is compared with."""
    text = "Motorcycles A motorcycle can brake harder than a car, so keep well back from a motorcyclist ahead."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a motorcyclist", mr


def test_a_speed_given_in_mph_is_its_limit_sign(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    mr = best(parser, validator, "Keep to 15 mph where hedges hide the cross street.", "california")
    assert mr is not None and "speed limit sign" in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    ("region", "expected"),
    [
        # California's list names the bicyclist and no bicycle: a bicycle on the road there is its rider
        ("california", "a bicyclist"),
        # Germany's list names the bicycle itself, which stays
        ("germany", "a bicycle"),
    ],
)
def test_a_bicycle_is_its_rider_where_the_region_lists_only_the_rider(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, expected: str
) -> None:
    mr = best(parser, validator, "Give bicycles plenty of room and slow down when you pass them.", region)
    assert mr is not None and mr.manipulation == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # lanes and nothing else: the vehicle in the lane
        ("Keep right and use the left lane only to go faster than the traffic around you.", "a vehicle"),
        # what yielding implies comes first
        ("Pick a lane early and yield before you move across.", "an oncoming vehicle"),
    ],
)
def test_a_rule_about_lanes_that_names_no_road_user_implies_the_vehicle_in_the_lane_last(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == expected, mr


@pytest.mark.parametrize(
    ("region", "expected"),
    [
        # California lists its own "Loose Gravel"
        ("california", "loose gravel"),
        # elsewhere gravel is the core mud environment
        ("germany", "mud environment"),
    ],
)
def test_gravel_is_the_regions_own_loose_gravel_where_it_has_that_term(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, expected: str
) -> None:
    mr = best(
        parser, validator, "On a gravel road your tyres grip less, so brake early and keep your speed down.", region
    )
    assert mr is not None and mr.manipulation.endswith(expected), mr


@pytest.mark.parametrize(
    ("region", "expected"),
    [
        # California lists its own "Obstacle": what blocks the view at a blind corner is one
        ("california", ("intersection", "an obstacle")),
        # Germany has no such term: the parked cars stay what they are
        ("germany", ("intersection", "a stopped vehicle")),
    ],
)
def test_what_blocks_the_view_at_a_blind_corner_is_the_regions_obstacle(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, expected: tuple[str, str]
) -> None:
    text = "At a blind corner, where parked cars block your view of the cross street, creep forward slowly."
    mr = best(parser, validator, text, region)
    assert mr is not None and (mr.road_type, mr.manipulation) == expected, mr


def test_a_white_rectangular_sign_is_the_speed_limit_sign_not_the_red_and_white_one(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """US handbooks' white rectangular signs are regulatory, with the speed limit their example; the red and white
    regulatory sign is the DO NOT ENTER kind."""
    mr = best(
        parser, validator, "Keep to the figure shown on the white rectangular sign beside the road.", "california"
    )
    assert mr is not None and "speed limit sign" in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Give a large truck ahead of you extra room, since it needs far longer to stop.",
            "a multi-track motor vehicle",
        ),
        # a big rig said to turn is still the turning vehicle
        ("A big rig that is turning right swings wide first; never squeeze past it on the right.", "a turning vehicle"),
    ],
)
def test_a_big_truck_is_the_multi_track_motor_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == expected, mr


@pytest.mark.parametrize(
    ("text", "expected_road"),
    [
        # the crossing is another item of the list of places, not where the sign stands
        (
            "Never turn around where a NO U-TURN sign is posted, on or near a railroad crossing, or across the "
            "median of a divided highway.",
            "any roads",
        ),
        # a place in the sign's own clause is where it is posted
        ("Do not make a U-turn where a NO U-TURN sign is posted at the intersection.", "intersection"),
    ],
)
def test_a_sign_said_to_be_posted_stands_in_its_own_clause_not_at_the_other_places_listed(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected_road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a no u-turn sign" and mr.road_type == expected_road, mr


def test_words_joined_by_a_slash_are_words_of_their_own(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Carpool/High-Occupancy Vehicle (HOV) Lanes" is two words and more; a unit or a short pair keeps its slash. An
    ontology term written with a slash ("Skater/scooter rider") is still found in the split words. (The HOV rule is
    a guard: the HOV lanes stay its subject.)"""
    assert [t.word for t in tokenize_rule("Carpool/High-Occupancy lane at 50 km/h or 30 km/hr and/or less")] == [
        "carpool",
        "high-occupancy",
        "lane",
        "at",
        "50",
        "km/h",
        "or",
        "30",
        "km/hr",
        "and/or",
        "less",
    ]
    skater = best(parser, validator, "Give skater/scooter riders on the carriageway a wide berth.", "germany")
    assert skater is not None and skater.manipulation == "a skater/scooter rider", skater
    mr = best(
        parser,
        validator,
        "Carpool/High-Occupancy Vehicle (HOV) Lanes\nA diamond painted on the pavement marks them. Enter one only if "
        "your car carries as many people as the sign requires.",
        "california",
    )
    assert mr is not None and mr.manipulation == "high-occupancy vehicle (hov) lanes", mr


def test_plain_vehicles_said_to_swing_wide_are_the_turning_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Long vehicles swing wide ...": the generic vehicle said to turn is the turning vehicle, as a truck is."""
    mr = best(
        parser,
        validator,
        "Long vehicles swing wide to the left before they turn right. Never slip into the gap on the right of a truck "
        "that is making a right turn.",
        "california",
    )
    assert mr is not None and mr.manipulation == "a turning vehicle", mr


def test_a_driver_on_the_cross_street_is_cross_traffic(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A driver or car on the cross street is cross traffic (the oncoming vehicle, as "cross traffic" already is), not
    MiniLM's nearest label for a rule that names no road user."""
    mr = best(
        parser,
        validator,
        "At a junction with no signs or signals, ease off and be ready to brake: a car on the cross street may not "
        "have seen you.",
        "california",
    )
    assert mr is not None and mr.manipulation == "an oncoming vehicle", mr


def test_without_and_a_gerund_that_ends_its_clause_rule_nothing_out(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "... they may run out without looking, above all near schools and bus stops": the schools are where, not ruled
    out, so the school area is the place, as it is without the "without looking"."""
    text = (
        "Kids\nDrive slowly where kids are about. They are easy to miss and may run out without looking, above all "
        "near schools, parks and bus stops."
    )
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.manipulation, mr.road_type) == ("a child", "school area"), mr


@pytest.mark.parametrize(
    ("text", "expected_road"),
    [
        # the opening phrase of the sign's own sentence places it
        ("At an intersection, do not make a U-turn where a NO U-TURN sign is posted.", "intersection"),
        ("On a one-way street, never turn around where a NO U-TURN sign has been posted.", "any roads"),
    ],
)
def test_a_posted_sign_keeps_the_place_that_opens_its_sentence(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected_road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and (mr.manipulation, mr.road_type) == ("a no u-turn sign", expected_road), mr


def test_plain_vehicles_that_may_turn_are_not_the_turning_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "Vehicles in the left lane may turn left": what they may do, not a vehicle seen turning."""
    mr = best(parser, validator, "Vehicles in the left lane may turn left or go straight on.", "california")
    assert mr is not None and mr.manipulation == "a vehicle", mr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the list names oncoming traffic first: it ranks first, though "pedestrians" is the ontology's own word
        (
            "Flashing Yellow Arrow A turn on this arrow is not protected: give way to oncoming traffic and pedestrians "
            "before you go.",
            "an oncoming vehicle",
        ),
        # guard: "cars" first in a list is any traffic, and the named road user after it stays the subject
        (
            "Before pulling away from the curb, signal and glance back over your shoulder for cars and bicyclists",
            "a bicyclist",
        ),
    ],
)
def test_road_users_listed_together_rank_in_the_lists_order(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == expected, mr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a heading that names a region road user or event is the rule's subject; the patrol car is how it is done
        (
            "Traffic Breaks Highway patrol may hold back the traffic behind it by zigzagging a police car over every "
            "lane with its emergency lights on. Do not overtake until the lights are switched off.",
            "a traffic break",
        ),
        # the patrol car's own lights (an aside) are no sign the heading would name
        (
            "Traffic Breaks A police car with flashing amber lights zigzags over every lane to hold the traffic "
            "back. Stay behind it.",
            "a traffic break",
        ),
        # guard: a heading that names a sign names what the sign shows, and the sign stays the subject
        (
            "Cattle Crossing sign yellow diamond with a cow Livestock may be on the road in open range country. Slow "
            "down and be ready to stop.",
            "warning signs",
        ),
    ],
)
def test_a_road_user_that_heads_the_rule_is_its_subject(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == expected, mr


@pytest.mark.parametrize("region", ["california", "germany"])
def test_a_list_that_repeats_its_preposition_keeps_its_order(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str
) -> None:
    """ "Look out for people walking and for cars backing out": still one list, led by the people on foot. A lone
    "for" ("behind the parked car for the bicyclist to pass") makes no list."""
    mr = best(
        parser,
        validator,
        "Parking Lots Drive slowly between the rows and look out for people walking and for cars backing out.",
        region,
    )
    assert mr is not None and mr.manipulation == "a pedestrian", mr
    lone = best(parser, validator, "Wait behind the parked car for the bicyclist to pass.", region)
    assert lone is not None and lone.manipulation == "a bicyclist", lone


def test_the_subject_of_a_sentences_is_or_are_is_what_it_is_about(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "A limit line is ...": the sign and the signal named after it say where the line is used. A bare "vehicles"
    opening a later sentence is any traffic, and the rule's road user stays its subject."""
    vehicles = best(
        parser,
        validator,
        "Yield to people walking in a crosswalk. Vehicles are not allowed to stand on it.",
        "california",
    )
    assert vehicles is not None and vehicles.manipulation == "a pedestrian", vehicles
    mr = best(
        parser,
        validator,
        "A limit line is the broad white stripe painted across your lane that marks where to halt for a red light "
        "or a STOP sign.",
        "california",
    )
    assert mr is not None and mr.manipulation == "limit lines", mr


@pytest.mark.parametrize(
    ("text", "expected_ca", "expected_de"),
    [
        (
            "When the car ahead of you brakes, ease off early so that you can still stop behind it.",
            "a vehicle",
            "a driver in front",
        ),
        ("Trucks and cars must keep to the right lane on this stretch of road.", "a vehicle", "a motor vehicle"),
    ],
)
def test_a_region_that_lists_only_the_plain_vehicle_calls_cars_vehicles(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected_ca: str, expected_de: str
) -> None:
    """California's list names the plain Vehicle and no motor vehicle or driver in front; Germany's names those."""
    ca = best(parser, validator, text, "california")
    de = best(parser, validator, text, "germany")
    assert ca is not None and ca.manipulation == expected_ca, ca
    assert de is not None and de.manipulation == expected_de, de


def test_whom_a_stopped_car_stopped_for_may_be_named_by_a_phrase(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "stopped for people on foot": the people are why it stopped, though "people" stands between "for" and them."""
    a = parser.analyse(rule("Never go around a car that has stopped for people on foot.", region="california"))
    assert [m.aside for m in a.manipulations if m.term.normalised == "pedestrian"] == [True]


def test_the_car_ahead_implies_no_oncoming_vehicle(parser: OntologyGroundedParser, validator: OfflineValidator) -> None:
    """California's "car ahead" is a plain vehicle there, but still the one in front: a yield nearby makes it no
    oncoming vehicle."""
    mr = best(
        parser, validator, "Keep well back from the car ahead, since it may have to yield at any moment.", "california"
    )
    assert mr is not None and mr.manipulation == "a vehicle", mr


def test_a_gapped_phrase_leaves_the_plain_vehicle_it_spans(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "a truck is turning": the truck stays a mention of its own, whose clause says what it does."""
    mr = best(parser, validator, "A truck is turning right at the corner, so stay back.", "california")
    assert mr is not None and mr.manipulation == "a turning vehicle", mr


def test_a_place_after_for_is_no_reason_for_stopping(parser: OntologyGroundedParser) -> None:
    """ "stopped for long near children": "for" reaches no road user across a preposition."""
    a = parser.analyse(rule("Never pass a car stopped for long near children.", region="california"))
    assert [m.aside for m in a.manipulations if m.term.normalised == "child"] == [False]


def test_a_sudden_stop_ahead_is_braking_not_a_stopped_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "if the car in front stops suddenly": it brakes; the ego keeps room behind the one in front."""
    mr = best(
        parser, validator, "Stay far enough back to brake in time if the driver in front stops suddenly.", "germany"
    )
    assert mr is not None and mr.manipulation == "a driver in front", mr


@pytest.mark.parametrize(
    "text",
    [
        "Near the corner, walls, shrubs or parked cars can keep you from seeing traffic on the cross street; go slowly.",
        "Where a fence, tall hedges or parked trucks hide the side road, drive no faster than 15 mph.",
        "Walls, shrubs, or parked cars can keep you from seeing the cross street; go slowly.",
        "Parked cars or tall shrubs can block your sight of the side road; go slowly there.",
    ],
)
def test_parked_cars_listed_with_buildings_and_trees_are_an_obstacle_to_the_view(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Parked cars named among the things that stand in the way of a driver's view (walls, hedges, trees) are one
    more such thing: California's Obstacle, not a stopped vehicle."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "an obstacle", mr


@pytest.mark.parametrize(
    "text",
    [
        "Look for people getting out of parked cars and give them room. A tree may stand at the corner.",
        "A tree fell. Watch for people getting out of parked cars and give them room.",
        "Look out for bicyclists riding near walls or parked cars and give them room.",
    ],
)
def test_parked_cars_with_no_view_blocker_beside_them_stay_stopped_vehicles(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Guard: parked cars on their own (a tree in another sentence) are still stopped vehicles."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and "obstacle" not in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        (
            "An intersection is uncontrolled when no signs or signals stand at any of its corners; slow for cross traffic.",
            "intersection",
        ),
        (
            "A crosswalk is unmarked when no white lines are painted on it, yet pedestrians there have the right-of-way.",
            "crosswalk",
        ),
    ],
)
def test_a_place_defined_by_what_it_lacks_is_still_the_rules_place(
    parser: OntologyGroundedParser, text: str, road: str
) -> None:
    """ "An intersection is uncontrolled when no signs ...": the place is the subject the sentence defines, not a
    fallback used only when something is missing ("stop before the crosswalk if there is no line")."""
    mr = parser.parse(rule(text, region="california"))[0].mr
    assert mr.road_type == road, mr


@pytest.mark.parametrize(
    "text",
    [
        "All-Way Stops\nHalt fully at the limit line. When two cars halt together, the car on the right goes first.",
        "All-Way Stop\nStop completely at the limit line, then the driver who stopped first goes first.",
    ],
)
def test_a_sign_heading_leads_the_line_its_stop_is_made_at(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """ "All-Way Stops / Halt fully at the limit line": the line is where the heading's sign has the driver stop; the
    sign is what the rule is about."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "a stop sign", mr


@pytest.mark.parametrize(
    "text",
    [
        "Limit Lines\nStop at the wide white limit line when a sign or signal tells you to stop.",
        "Bike Lanes\nWhen you stop at the limit line, look for the painted lane beside you.",
        "Stop Signs and Limit Lines\nAt a STOP sign, make your stop at the white limit line painted across the lane.",
    ],
)
def test_a_heading_that_names_the_line_keeps_the_line(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """Guard: where the heading names the line itself, the line stays the subject."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and "limit line" in mr.manipulation, mr


def test_a_sign_heading_joined_to_the_line_keeps_the_line(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """Guard: "Stop Signs and Limit Lines" glued to picture text names the line in the heading, though the heading
    runs on into lower-case words: the line stays the subject."""
    mr = best(
        parser,
        validator,
        "Stop Signs and Limit Lines white limit line painted across a lane At a STOP sign, you make your stop at the "
        "limit line.",
        "california",
    )
    assert mr is not None and "limit line" in mr.manipulation, mr


def test_a_sign_heading_leaves_a_line_that_is_not_where_to_stop(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """Guard: "All-Way Stops / A limit line is a wide white line": a line the body only describes is no stop point."""
    mr = best(parser, validator, "All-Way Stops\nA limit line is a wide white line across the lane.", "california")
    assert mr is not None and "limit line" in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "behaviour"),
    [
        # Holding one's pace and lane is carrying on, in any of a handbook's words for it.
        ("On a wet highway with traffic moving, pick a lane and hold a steady speed.", "keep current"),
        ("When a motorcyclist rides between lanes in stopped traffic, keep to your own lane.", "keep current"),
        ("In heavy traffic, keep up with the vehicles around you.", "keep current"),
        ("When traffic is heavy, choose one lane and do not weave between the others.", "keep current"),
        ("On a dry freeway with traffic flowing, keep pace with the cars around you.", "keep current"),
        # Keeping up that the driver cannot manage is no cue to carry on.
        ("If you cannot keep up with the traffic around you, use the right lane.", "slow down"),
        (
            "If an oncoming driver leaves the high beams on, look to the edge and keep driving in your lane.",
            "keep current",
        ),
        # Staying back from a slow vehicle is slowing, though passing it is also ruled out.
        ("Stay well back from a snowplow and do not pass it until the road ahead is clear.", "slow down"),
    ],
)
def test_holding_pace_or_lane_is_keep_current_and_staying_back_is_slowing(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, behaviour: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == behaviour, mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # A weather or light rule set in a place, by a heading or an opening phrase of place, is told of that place.
        ("Alleys\nAn alley is often narrow and dark, so drive through it slowly.", "alleys"),
        ("At an unmarked rail crossing in thick fog, slow down and listen for a train.", "railroad crossings"),
        (
            "At a railroad crossing without lights or gates, thick fog can hide what is coming, so slow down and listen.",
            "railroad crossings",
        ),
        # Tracks are only a word for the crossing, and the surface is slick wherever they run.
        ("Railroad Tracks\nRailroad tracks get slippery in the rain; drive over them slowly.", "any roads"),
        # A place the rule does not open on is where the condition is felt, not the rule's place ...
        ("Before an intersection in thick fog, slow down and listen for traffic.", "any roads"),
        # ... nor is a place named as the subject: it is one more thing the condition hides.
        ("Crosswalks are hard to see in fog, so slow down.", "any roads"),
        ("Sun glare can hide traffic lights and people in a crosswalk; lower your visor and slow down.", "any roads"),
    ],
)
def test_a_condition_rule_keeps_the_place_it_is_set_in(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == road, mr


@pytest.mark.parametrize(
    ("text", "sign", "behaviour"),
    [
        # The red circle and slash pictures a prohibitory sign; the sign named beside it (up to six words before it,
        # or just after it or what its slash crosses) is which one.
        (
            "No U-Turn Sign red circle and slash over a black U-shaped arrow. Do not turn around where it stands.",
            "no u-turn sign",
            "keep current",
        ),
        (
            "NO U-TURN sign black U-turn arrow in a red circle with a slash. U-turns are not allowed where it stands.",
            "no u-turn sign",
            "keep current",
        ),
        # ... or just after what the picture's slash crosses.
        (
            "Red circle with a slash across a U-turn arrow NO U-TURN\nDo not turn around here; go on in your lane.",
            "no u-turn sign",
            "keep current",
        ),
        (
            "Red Circle with a Red Line Through a U-Turn Arrow NO U-TURN You may not turn around where it is posted.",
            "no u-turn sign",
            "keep current",
        ),
        # A class of sign named just after the sign it shows, as well as just before it.
        (
            "WRONG WAY Red and white regulatory sign. If you see this sign, you are driving against traffic.",
            "wrong way sign",
            None,
        ),
        # With no sign named beside it, the picture is the prohibitory sign itself ...
        (
            "Red Circle with a Red Line Through It The picture inside the circle shows what you cannot do.",
            "prohibition for vehicles of all kinds sign",
            None,
        ),
        # ... a sign listed with it is no sign it shows ...
        (
            "Where a road closed sign and a stop sign are posted together, stop and turn around.",
            "prohibition for vehicles of all kinds sign",
            None,
        ),
        # ... a sign named a few words on, as an example or a contrast, is not the one it shows ...
        (
            "A red circle with a slash, as on a NO U-TURN sign, means the action shown is not allowed.",
            "prohibition for vehicles of all kinds sign",
            None,
        ),
        (
            "A red circle with a red line through it, unlike a STOP sign, shows a move you may not make.",
            "prohibition for vehicles of all kinds sign",
            None,
        ),
        # ... and a sign named in another sentence is only an example of it.
        (
            "A red circle with a slash tells you a move is not allowed. A NO U-TURN sign is one of these.",
            "prohibition for vehicles of all kinds sign",
            None,
        ),
    ],
)
def test_a_prohibitory_picture_is_the_sign_named_beside_it(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, sign: str, behaviour: str | None
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and sign in mr.manipulation, mr
    assert behaviour is None or mr.expected_behavior == behaviour, mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # Switching lights on or off is no turn at a junction, with the lights named between verb and particle too.
        (
            "During a traffic break, stay behind the patrol car and do not pass until the officer turns the lights off.",
            "any roads",
        ),
        ("Traffic Breaks\nKeep behind the patrol car until it turns its lights off, and do not pass it.", "any roads"),
        # ... and so with other words for whose lights are switched, or for the siren.
        ("Stay behind the patrol car until the officer turns his lights off, and do not pass it.", "any roads"),
        ("Do not pass the patrol car until it turns the siren off.", "any roads"),
        # A turn the rule asks for is still a junction's.
        ("Before you turn the corner, slow down and look for people crossing.", "intersection"),
    ],
)
def test_switching_lights_off_is_no_turn(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == road, mr


@pytest.mark.parametrize(
    ("text", "behaviour"),
    [
        # Going on until one is clear of the tracks outweighs the stop the rule rules out beside it ...
        (
            "If the red lights start to flash after you are already on the tracks, keep going until your car is clear "
            "of them. Never stop on the rails.",
            "keep current",
        ),
        # ... and not stopping on the tracks is waiting before them, no cue to go on.
        (
            "Do not stop on the railroad tracks, where a train may come; before you start across, be sure there is "
            "room beyond them.",
            "slow down",
        ),
    ],
)
def test_going_on_until_clear_and_not_stopping_on_the_tracks(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, behaviour: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == behaviour, mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # A signal named only by its colour is no rival for a region road user the rule is about ...
        (
            "When an officer is directing traffic at a junction, follow the officer's hand signals over the traffic "
            "lights; if you are waved on while your light is red, go.",
            "traffic officer",
        ),
        # ... but a red light named as such still is.
        (
            "When a police officer is directing traffic, do as the officer signals. A red light still means stop when "
            "the officer leaves.",
            "red light",
        ),
    ],
)
def test_a_colour_alone_does_not_outrank_a_region_subject(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # A heading in sentence case on a line of its own leads the weather it is seen in, as a title-case one does.
        (
            "Raised pavement markers\nThese small reflectors along the lane lines are easy to see at night or in rain.",
            "raised pavement marker",
        ),
        # A first sentence that only opens with the marking's name is no heading.
        ("Raised pavement markers can be hard to see in heavy rain, so slow down.", "rain"),
    ],
)
def test_a_sentence_case_heading_line_leads_the_weather(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # An arrow that allows a U-turn is no sign that forbids one.
        ("Follow the U-shaped arrow painted on the pavement to turn around in the cul-de-sac.", None),
        # A red light named as such elsewhere in the rule is more than a bare colour.
        (
            "When an officer is directing traffic, if you are waved on while your light is red, go. Once the officer "
            "leaves, a red light again means stop.",
            "red light",
        ),
    ],
)
def test_review_guards_on_signs_and_colours(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str | None
) -> None:
    mr = best(parser, validator, text, "california")
    if term is None:
        assert mr is None or "u-turn" not in mr.manipulation, mr
    else:
        assert mr is not None and term in mr.manipulation, mr


def test_a_u_turn_that_is_not_prohibited_is_no_cue_to_keep_the_way() -> None:
    """'if a U-turn is not prohibited' names no prohibition: only the full phrases are keep-current cues."""
    from tools.rules.lexicon import load_lexicon

    cues = {phrase for phrase, _ in load_lexicon().behavior_cues["keep current"]}
    assert "u-turn is not prohibited" not in cues and not any(c in {"u-turn is not", "u-turns are not"} for c in cues)
    assert {"u-turn is not allowed", "u-turns are prohibited"} <= cues


@pytest.mark.parametrize(
    ("text", "term", "road"),
    [
        # An officer who directs traffic overrides the lights and signs named in the same breath: the officer is the
        # rule's subject, the light or sign only what the officer overrides.
        (
            "Do what a traffic officer directs, even if it differs from the lights. If an officer waves you through "
            "a red light, go; if the officer signals you to stop on a green light, stop.",
            "traffic officer",
            "intersection",  # the lights the officer overrides stand at a junction
        ),
        (
            "Where an officer who is directing traffic waves you on past a STOP sign, go ahead carefully.",
            "traffic officer",
            None,
        ),
        # A light the rule speaks of on its own, where no officer directs, stays the subject.
        (
            "When an officer is directing traffic, if you are waved on while your light is red, go. Once the officer "
            "leaves, a red light again means stop.",
            "red light",
            None,
        ),
        # A bare "officer" who directs is the region's traffic officer.
        ("If an officer motions you on through a red light, go.", "traffic officer", "intersection"),
        # An officer who does not direct leaves the light its subject: "signal" is the traffic signal here, "hand"
        # a verb.
        ("A police officer at a signal may ticket drivers who run the red light.", "red light", None),
        ("A police officer may hand you a ticket if you run a red light.", "red light", None),
        # A road user named before the officer keeps its place.
        (
            "At a school crossing, a crossing guard or police officer may direct you to stop; obey the STOP sign "
            "they hold.",
            "crossing guard",
            None,
        ),
        # The lights of a railroad crossing make no junction of it.
        (
            "If a police officer waves you across the railroad tracks while the red lights flash, cross carefully.",
            "traffic officer",
            "railroad crossing",
        ),
    ],
)
def test_an_officer_directing_traffic_outranks_the_lights_overridden(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str, road: str | None
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation, mr
    assert road is None or road in mr.road_type, mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # An officer directing traffic past the signals, where the rule names no place, stands at a junction.
        (
            "Always do as a traffic officer's hand signals tell you, even when the signal lights say otherwise.",
            "intersection",
        ),
        # A place the rule names is still its place.
        ("On the freeway, a traffic officer may direct you to leave by the next exit; follow the directions.", "any"),
        # An officer who directs no traffic past signals or signs stands at no junction.
        ("A police officer may stop you on the highway for speeding.", "any"),
        ("If a police officer pulls you over, stay in your car.", "any"),
        # The driver's own signal, or the verb, is no traffic signal.
        ("If a police officer waves you to the shoulder, signal and pull over safely.", "any"),
        ("A police officer may direct you around a crash ahead; follow the directions.", "any"),
    ],
)
def test_an_officer_directing_traffic_implies_a_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and "officer" in mr.manipulation and road in mr.road_type, mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # A turn made on a road without junctions is made at none.
        ("Missed your exit? Never stop, back up or make a U-turn on the freeway; go on to the next exit.", "any"),
        # A turn elsewhere still implies a junction (the guards), also in a rule that names a freeway elsewhere.
        ("Never stop, back up or make a U-turn in the middle of a block; go on to the next corner.", "intersection"),
        ("Where the freeway exit ramp ends, watch for people on foot before you make a U-turn.", "intersection"),
    ],
)
def test_a_turn_on_a_freeway_names_no_junction(
    ontology: Ontology, embedder: MiniLMEmbedder, text: str, road: str
) -> None:
    with_model = OntologyGroundedParser(ontology=ontology, embedder=embedder)
    cands = with_model.parse(rule(text, region="california"))
    assert cands and road in cands[0].mr.road_type, cands[:1]


@pytest.mark.parametrize(
    ("text", "manipulation"),
    [
        # The time of day an animal is about says when to watch for it: the animal is the subject.
        ("Keep an eye out for elk and deer near the highway around dawn and dusk.", "a deer"),
        # The light named as such keeps its lead (the guards), and so does a time of day in another sentence.
        ("Keep an eye out for elk and deer near the highway when it is dark.", "low lighting"),
        (
            "Driving at night takes more care. Use high beams on empty country roads, where elk may cross.",
            "low lighting",
        ),
    ],
)
def test_an_animal_named_with_a_time_of_day_leads(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, manipulation: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and manipulation in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "manipulation"),
    [
        # A storm that cut the power put the signals out: the all-way stop the rule asks for is its subject.
        (
            "In a storm or a power outage the traffic signals may go dark. Treat the junction like an all-way STOP.",
            "stop sign",
        ),
        ("During a storm, or a power failure, the signals may go dark. Treat the junction as an all-way STOP.", "stop"),
        ("Wind and rain or a power failure can put the signals out. Treat the junction as an all-way STOP.", "stop"),
        ("If a storm knocks out the power, treat the junction like an all-way STOP.", "stop sign"),
        # A storm by itself is the road's condition (the guards); so is weather the rule only names as its
        # exception, with no power failure in sight.
        (
            "Where a minimum speed is posted, do not go slower than it, except when fog, ice or heavy traffic makes"
            " that speed unsafe.",
            "fog",
        ),
        ("In a storm the road may flood. Treat the junction like an all-way STOP.", "rain"),
    ],
)
def test_weather_beside_a_power_failure_is_what_put_the_signals_out(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, manipulation: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and manipulation in mr.manipulation, mr


@pytest.mark.parametrize(
    "text",
    [
        "Never pass other traffic on the shoulder, unless posted signs permit it or an officer tells you to.",
        # (the exception reaches over a comma within its sentence)
        "Never pass other traffic on the shoulder unless posted signs permit it, or an officer tells you to.",
    ],
)
def test_an_officer_named_as_the_exception_directs_nothing(
    ontology: Ontology, embedder: MiniLMEmbedder, parser: OntologyGroundedParser, text: str
) -> None:
    """ "unless ... an officer directs you to" names the officer only as the exception to the rule: no officer term is
    read from the bare "officer", and no junction is implied by the officer and the signs beside it; the traffic
    passed on the shoulder is the rule's subject."""
    with_model = OntologyGroundedParser(ontology=ontology, embedder=embedder)
    first = with_model.parse(rule(text, region="california"))[0].mr
    assert (first.road_type, first.manipulation) == ("any roads", "heavy traffic"), first
    # The same officer, not in the exception, still directs (the guard).
    directs = "Pass other traffic on the shoulder only where posted signs permit it or an officer tells you to."
    first = parser.parse(rule(directs, region="california"))[0].mr
    assert "officer" in first.manipulation, first


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # Tracks the rule calls a railroad's are a railroad crossing, even beside light rail.
        (
            "Before you drive across light rail or railroad tracks, look both ways and make sure you can clear them.",
            "railroad",
        ),
        # A streetcar's tracks in the street are none.
        ("Look out for a light rail vehicle before you cross the tracks in the middle of the street.", "any"),
        # A rider's turn beside a fall or a wobble is one more thing the rider may do anywhere: no junction.
        ("Skateboarders in the street may fall or turn without warning, so keep well back from them.", "any"),
        ("A person on roller skates can wobble or turn in front of you; give the skater plenty of room.", "any"),
    ],
)
def test_railroad_tracks_and_a_riders_turn_are_placed_by_their_words(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and road in mr.road_type, mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # A handbook's list that opens a sentence ("This covers:", "These include:") names the rule's own case: the
        # first road user it lists leads the group named before it.
        (
            "Slow down or change lanes for any vehicle stopped at the side of the road. This covers:\n"
            "A tow truck stopped on the shoulder with its amber lights on.",
            "tow truck",
        ),
        (
            "Give room to vehicles stopped on the shoulder. These include: Stationary Caltrans trucks with their "
            "warning lights flashing.",
            "road work vehicle",
        ),
        # A specific road user inside a generic phrase is the one listed ("Parked emergency vehicles").
        (
            "Move over for vehicles stopped along the highway. These include:\nParked emergency vehicles with "
            "their lights flashing.",
            "emergency vehicle",
        ),
        # The opener on a line of its own lists past a blank line, a number or a bullet, and "applies to:" opens too.
        (
            "Change lanes or slow down for vehicles stopped beside the freeway. This covers:\n\n1. A tow truck with "
            "its amber lights on.",
            "tow truck",
        ),
        (
            "Slow down for vehicles stopped on the shoulder. This covers the following vehicles:\n- Tow trucks\n- "
            "Caltrans trucks",
            "tow truck",
        ),
        (
            "Move Over\nWhen you come up on a stopped vehicle with flashing lights, change lanes if you can. This "
            "applies to:\nTow trucks showing amber lights.",
            "tow truck",
        ),
        # Guards: a list two sentences after the lead lists another group; a list of groups alone names no case.
        (
            "Move over for emergency vehicles stopped on the shoulder. Other road users near the shoulder need room "
            "too. These include bicyclists and pedestrians.",
            "emergency vehicle",
        ),
        (
            "Move over for a tow truck stopped on the shoulder. This covers:\nAny vehicle parked there.",
            "tow truck",
        ),
        # The list follows a line break or a heading, or opens inline after its colon.
        ("Slow down for vehicles stopped on the shoulder.\nThis includes tow trucks and Caltrans trucks.", "tow truck"),
        (
            "Stopped Vehicles\nSlow down for vehicles stopped on the shoulder. This includes tow trucks.",
            "tow truck",
        ),
        ("Slow down for vehicles stopped on the shoulder. This applies to: tow trucks with amber lights.", "tow truck"),
        # Guards: a colon after words that list nothing ("This means you should:") opens no list.
        (
            "Slow down when you see a stopped emergency vehicle. This means you should:\nChange lanes away from it.\n"
            "Watch for people walking near the road.",
            "emergency vehicle",
        ),
        ("Slow down in fog. This is important:\nPedestrians and bicyclists are hard to see.", "fog"),
    ],
)
def test_a_list_opening_a_sentence_names_the_rules_case(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation, mr


@pytest.mark.parametrize(
    "text",
    [
        "Road crews and their construction machinery often work right beside open lanes, so leave them plenty of room.",
        "In a work zone, construction equipment may pull into your lane with little warning. Slow down.",
    ],
)
def test_construction_machinery_is_a_road_work_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """US handbooks' work-zone machinery is the ontology's road work vehicle."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and "road work vehicle" in mr.manipulation, mr
    # Farm machinery is none (the guard).
    farm = "On rural roads, slow down for tractors and other heavy farm machinery."
    mr = best(parser, validator, farm, "california")
    assert mr is None or "road work vehicle" not in mr.manipulation, mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # A handbook's list item named by a label ("Ice: ...") after a line that opens the list: the label is the
        # case the rule is about, over the conditions named before it.
        (
            "Slick Roads\nRain, fog or a dusting of snow all cut your grip, so go slower than on a dry road. Change "
            "your speed to suit:\nIce: Creep along at walking pace.",
            "ice road",
        ),
        (
            "Bad Weather\nSnow and rain make it hard to stop. Slow down as follows:\n- Fog: Drive no faster than you "
            "can see to stop.",
            "fog",
        ),
    ],
)
def test_a_labelled_list_item_names_the_rules_case(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation, mr
    # A label on a line of its own that no list opens ("Note: ...") leads nothing (the guard).
    plain = "Rain makes the road slick, so slow down.\nIce: may form on bridges first."
    mr = best(parser, validator, plain, "california")
    assert mr is not None and "rain" in mr.manipulation, mr


@pytest.mark.parametrize(
    "text",
    [
        "Slick Roads\nRain, fog or snow cut your grip. Change your speed to suit:\n– Ice: Creep along at walking pace.",
        "Slick Roads\nRain, fog or snow cut your grip. Change your speed to suit:\n1. Ice/Snow: Creep along.",
        "Slick Roads\nRain, fog or snow cut your grip. Change your speed to suit:\n▪ Black ice: Creep along.",
        # A run of labelled items: the first names the case.
        "Slick Roads\nRain or fog cut your grip. Change your speed to suit:\nIce: Creep along.\nWet road: 5 mph slower.",
        # A blank line keeps the list open; a letter marks an item as a number does.
        "Slick Roads\nRain, fog or snow cut your grip. Change your speed to suit:\n\nIce: Creep along at walking pace.",
        "Slick Roads\nRain, fog or snow cut your grip. Change your speed to suit:\na) Ice: Creep along at walking pace.",
    ],
)
def test_a_label_is_read_past_its_bullet_and_modifiers(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and "ice road" in mr.manipulation, mr


@pytest.mark.parametrize(
    "text",
    [
        "Drivers on the far side of a divided highway do not have to stop for a school bus with flashing red lights.",
        "You need not stop for a school bus that has stopped on the other side of a highway with a median.",
        "There is no need to stop for a school bus across a divided road; go on at a careful speed.",
        "If a bicyclist rides in a bike lane beside you, you do not need to brake for the rider.",
        "It is not necessary to stop for a school bus on the far side of a divided highway.",
        # A heading that names stopping asks for nothing.
        "Stopping for School Buses\nYou do not have to stop for a school bus across a divided highway.",
    ],
)
def test_a_stop_the_rule_says_is_not_needed_is_keep_current(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    """'You do not have to stop' lets the ego carry on: no stop cue."""
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == "keep current", mr
    # After a sentence that asks for the stop, it is the rule's exception, and the stop stands (the guard).
    stop_first = (
        "When a school bus flashes its red lights, you must stop and stay stopped until the lights go off. " + text
    )
    mr = best(parser, validator, stop_first, "california")
    assert mr is not None and mr.expected_behavior == "slow down", mr


@pytest.mark.parametrize(
    "text",
    [
        # A purpose ("so that you do not have to stop") states no rule; nor does a concession "but" takes back.
        "If a car is tailgating you, leave extra space ahead so that you do not have to stop suddenly.",
        "At a flashing yellow signal you are not required to stop, but ease off and look for cross traffic.",
        "If you are tailgated, leave space so that the driver behind you does not have to stop suddenly.",
        "Do not assume you will not have to stop at a railroad crossing with no gates.",
        # An exception after a stop asked for in the same sentence.
        "You must stop for a school bus with flashing red lights, but you do not have to stop if the bus is across a "
        "divided highway.",
    ],
)
def test_a_stop_not_needed_as_a_purpose_or_concession_is_no_cue(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == "slow down", mr


@pytest.mark.parametrize(
    ("text", "region", "term"),
    [
        ("Never drive into water that covers the road; you cannot tell how deep it is.", "california", "flooded"),
        ("If you must drive where water is standing on the road, go slowly.", "california", "flooded"),
        # Germany has no flooded-road term: water over the road is the core wet road.
        ("Where water covers the road, reduce speed.", "germany", "wet road"),
    ],
)
def test_water_over_the_road_is_a_flooded_road(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, region: str, term: str
) -> None:
    mr = best(parser, validator, text, region)
    assert mr is not None and term in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    ("text", "behaviour"),
    [
        # The bus's own stop is no request to the driver: the rule's statement is that no stop is needed.
        ("If a school bus stops on the other side of a divided highway, you do not have to stop.", "keep current"),
        ("So long as the bus is across a divided highway you do not have to stop for it.", "keep current"),
        # the sign or the law that does not require a stop
        (
            "A school bus with flashing red lights on the far side of a divided highway does not require you to stop.",
            "keep current",
        ),
        # Lacking time to brake is no cue of its own, and a bulleted first line is no heading.
        ("If you follow a truck too closely, you will not have time to brake.", "slow down"),
        (
            "- Stop for a school bus with flashing red lights\n- You do not have to stop if the bus is across a "
            "divided highway",
            "slow down",
        ),
        ("A school bus with its stop arm out is across a divided highway. You do not have to stop.", "keep current"),
    ],
)
def test_who_asks_for_the_stop_decides_the_exception(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, behaviour: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.expected_behavior == behaviour, mr


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # weather after "after" is when the rule's thing came about, not the condition to replace
        (
            "Sinkholes and potholes tend to form after heavy rains. Slow down before the wheel drops into one.",
            "pothole",
        ),
        ("Potholes show up after a long storm; ease off before you reach one.", "pothole"),
        # a night cue that opens with "after" is still the rule's light
        ("Slow down after dusk because pedestrians are hard to see.", "low lighting"),
        # weather the rule itself names is still the condition
        ("In heavy rain, slow down: potholes fill with water and hide.", "rain"),
        # the "after" opens the weather's own clause only: what follows the comma is the rule's subject
        ("After winter storms, potholes open up; slow down before you reach one.", "pothole"),
        # ... in any sentence
        ("Drive carefully. After a rain, the road is slippery; slow down.", "wet road"),
        # rain that is only beginning is the rain of the rule
        ("Right after rain begins, oil makes the road slick; slow down.", "rain"),
    ],
)
def test_weather_after_after_is_an_earlier_event(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower(), mr


@pytest.mark.parametrize(
    ("text", "term", "road"),
    [
        # road surfaces listed as a rider's hazards: the rider is the subject, and the tracks among them no crossing
        (
            "Oil slicks, potholes, loose gravel and streetcar rails are far more dangerous for motorcyclists. Leave "
            "extra room behind them.",
            "motorcyclist",
            "any roads",
        ),
        (
            "Potholes, ice, mud and railroad tracks make it harder for a bicyclist to stay up, so pass cyclists with "
            "extra room.",
            "bicyclist",
            "any roads",
        ),
        # a rider who is one more road user, not the one the surfaces endanger, leaves the surface its lead
        ("Slow down on wet, icy or slippery roads; bicyclists may also be on the shoulder.", "wet road", "any roads"),
        ("Ice, mud and wet roads make every vehicle skid, not just motorcycles; slow down.", "ice", "any roads"),
        # two surfaces are no list: the condition the rule names keeps its lead
        ("Wet or icy pavement is hard on motorcyclists; slow down.", "wet road", "any roads"),
        # a list of weather and light, not of surfaces, leaves the places where it holds
        (
            "After dark and in rain or fog, slow down and watch for pedestrians, especially near crosswalks.",
            "pedestrian",
            "crosswalk",
        ),
    ],
)
def test_surfaces_listed_as_a_riders_hazards_make_the_rider_the_subject(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, term: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and term in mr.manipulation.lower() and mr.road_type == road, mr


def test_a_place_that_sets_the_rule_is_no_item_of_a_hazard_list(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """ "At railroad crossings, the tracks may be wet, icy or covered with gravel": the crossing is the rule's place."""
    text = (
        "At railroad crossings, the tracks may be wet, icy or covered with gravel; slow down and watch for bicyclists."
    )
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == "railroad crossings", mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # one's turn in a queue is no turn at a junction
        ("Ramp meters let one vehicle onto the freeway at a time; wait for your turn at the ramp meter.", "any roads"),
        ("At a ramp meter, carpools may use the bypass lane; everyone else waits for their turn.", "any roads"),
        # a turn that is made keeps its junction
        ("Before you start your turn, look for bicyclists coming up on your right.", "intersection"),
        ("Signal for your turn and yield to oncoming traffic.", "intersection"),
        ("Bicyclists in turn lanes must yield to pedestrians.", "intersection"),
    ],
)
def test_ones_turn_in_a_queue_names_no_junction(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == road, mr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # California's car ahead is a plain vehicle, and one its clause says has stopped is the stopped vehicle
        ("If the car in front of you has stopped at a crosswalk, never drive around it.", "a stopped vehicle"),
        # come to a stop, said of the car, is the car standing
        ("Never overtake a car that has come to a full stop before a crosswalk.", "a stopped vehicle"),
        ("If the vehicle next to you came to a halt at the crosswalk, do not go around it.", "a stopped vehicle"),
        ("If the car ahead of you has just come to a stop at the crosswalk, do not pass it.", "a stopped vehicle"),
        ("Do not pass a vehicle that has come to a standstill at a crosswalk.", "a stopped vehicle"),
        ("Never pass a car that came to a full and complete stop at a crosswalk.", "a stopped vehicle"),
        # what the car must do is the ego's rule, not a car standing still
        ("Every car must come to a full stop before the crosswalk.", "a vehicle"),
        # nor what it does not do, nor the ego's own stop
        ("If the car ahead of you does not come to a stop at the crosswalk, slow down.", "a vehicle"),
        ("Leave enough room behind the car ahead so that you come to a stop safely.", "a vehicle"),
    ],
)
def test_a_car_said_to_have_stopped_or_come_to_a_stop_is_the_stopped_vehicle(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, expected: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == expected, mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # a bus that leaves or pulls away from its stop is at its stop
        ("When a bus is leaving a stop, be ready to let it back into your lane.", "bus stopping"),
        ("Watch for buses pulling away from stops along the curb and let them merge.", "bus stopping"),
        ("When a streetcar is pulling out of the stop, stay behind it.", "bus stopping"),
        ("Yield to a bus when it is pulling away from the stop.", "bus stopping"),
        ("When the bus in front of you is leaving a stop, let it merge.", "bus stopping"),
        # the ego leaving, with a bus named before
        ("You may pass the bus when you are leaving the stop.", "any roads"),
        # a STOP sign left behind is no bus stop
        ("After leaving a stop sign, speed up gradually and check for pedestrians.", "intersection"),
        ("When pulling away from a stop sign, watch for cross traffic.", "intersection"),
        # nor is the ego's own stop, or a truck's
        ("When leaving a stop, check for pedestrians before you move.", "any roads"),
        ("Trucks pulling out of a stop may block the lane; be patient.", "any roads"),
    ],
)
def test_a_bus_leaving_its_stop_is_at_the_bus_stop(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == road, mr


@pytest.mark.parametrize(
    ("text", "road"),
    [
        # a sign that warns of animals or bicyclists crossing the road stands on any road
        ("A yellow warning sign with a deer on it warns that deer may be crossing the road ahead.", "any roads"),
        ("This warning sign tells you that bicyclists may be crossing the road ahead. Slow down.", "any roads"),
        # whether the MR adds the sign or the bicyclists it warns of
        ("A warning sign with a bicycle on it tells you that bicyclists may be crossing the road ahead.", "any roads"),
        # people on foot cross at a crosswalk, also with others, or named by a word that is no road user of its own
        ("This warning sign tells you that people may be crossing the road ahead. Slow down.", "crosswalk"),
        ("This warning sign tells you that children may be crossing the street ahead. Slow down.", "crosswalk"),
        ("This warning sign tells you that pedestrians and bicyclists may be crossing the road ahead.", "crosswalk"),
        ("This warning sign tells truck drivers that people may be crossing the road ahead.", "crosswalk"),
        ("This warning sign tells you that children on bikes may be crossing the street ahead.", "crosswalk"),
        ("This warning sign tells you that hikers and horses may be crossing the road ahead.", "crosswalk"),
        ("A warning sign tells you that bicyclists may be crossing the road, as well as pedestrians.", "crosswalk"),
        (
            "This warning sign tells you that bicyclists may be crossing the road, and so may wheelchair users.",
            "crosswalk",
        ),
    ],
)
def test_a_sign_warning_of_others_crossing_marks_no_crosswalk(
    parser: OntologyGroundedParser, validator: OfflineValidator, text: str, road: str
) -> None:
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.road_type == road, mr


def test_a_line_bus_leaving_its_stop_and_bicyclists_crossing_at_a_stop_sign(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """Germany's line bus leaves its stop as a bus does; a STOP sign warns of no one, so bicyclists crossing there
    keep their crosswalk."""
    mr = best(parser, validator, "Line buses pulling away from a stop must be allowed to pull out.", "germany")
    assert mr is not None and mr.road_type == "bus stopping", mr
    mr = best(parser, validator, "At a stop sign, let bicyclists crossing the road go first.", "california")
    assert mr is not None and (mr.manipulation, mr.road_type) == ("a bicyclist", "crosswalk"), mr


def test_people_who_are_already_walking_are_pedestrians(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A relative clause with an adverb in it ("people who are already walking") still names people on foot."""
    for text in (
        "Before you turn right, look for people who are already walking across the street you turn into.",
        "On a left turn, wait for people who are still walking across the road you enter.",
    ):
        mr = best(parser, validator, text, "california")
        assert mr is not None and mr.manipulation == "a pedestrian", (text, mr)
    # people crossing on a bicycle are no pedestrians
    mr = best(parser, validator, "Persons who are crossing the roadway on a bicycle must dismount.", "germany")
    assert mr is not None and mr.manipulation == "a bicycle", mr


def test_a_heading_on_its_own_line_is_no_list_of_addressees(
    parser: OntologyGroundedParser, validator: OfflineValidator
) -> None:
    """A heading line and the sentence under it ("Electric Scooters / Scooter riders may ...") are no list of road
    users that a modal speaks to: the heading still names what the rule is about."""
    text = "Electric Scooters\nScooter riders may use a bike lane. Slow down and give them room when you pass them."
    mr = best(parser, validator, text, "california")
    assert mr is not None and mr.manipulation == "an electric micro-vehicle", mr
    # the same road users joined on one line by a comma are such a list, and stay asides; so is a list wrapped after a
    # comma, and one under a heading line
    for text in (
        "Motorized scooters, bicycles and cars must all stop at a red light.",
        "Motorized scooters, bicycles\nand cars must all stop at a red light.",
        "Trucks\nBuses, motorcycles and cars must all stop at a red light.",
    ):
        a = parser.analyse(rule(text, region="california"))
        assert all(m.aside for m in a.manipulations if m.term.category == "object"), (text, a.manipulations)


@pytest.mark.parametrize(
    ("region", "text", "expected"),
    [
        # the region's signal whose colour is told is what the rule is about, not the line to stop at
        (
            "california",
            "Wait behind the limit line while the ramp meter shows red, then go on green.",
            "ramp meter signals",
        ),
        ("california", "On the on-ramp, a red ramp meter means that you stop at the line.", "ramp meter signals"),
        # a core signal told the same way stays the core light
        ("california", "Stop at the limit line when the traffic light is red.", "a red light"),
        # a region signal whose colour is not told stays behind the core road user the rule is about
        (
            "california",
            "A pedestrian signal tells walkers when they may cross; yield to anyone in the crosswalk.",
            "a pedestrian",
        ),
        (
            "california",
            "When the pedestrian signal is red, yield to pedestrians still in the crosswalk.",
            "a pedestrian",
        ),
        # the meter's own light; a colour that belongs to another signal is no meter's
        ("california", "Wait behind the limit line while the ramp meter light shows red.", "ramp meter signals"),
        ("california", "Wait behind the limit line while the ramp meter shows a red light.", "ramp meter signals"),
        ("california", "Wait behind the limit line while the ramp meter is showing red.", "ramp meter signals"),
        ("california", "Stop at the limit line when the light is red (ramp meters work the same way).", "a red light"),
        # Germany's traffic light (signal system) shows the core lights' colours: its red is the core red light
        ("germany", "When the traffic light signal system shows red, stop at the stop line.", "a red light"),
    ],
)
def test_a_region_signal_with_its_colour_told_leads_the_line_to_stop_at(
    parser: OntologyGroundedParser, validator: OfflineValidator, region: str, text: str, expected: str
) -> None:
    mr = best(parser, validator, text, region)
    assert mr is not None and mr.manipulation == expected, mr


@pytest.mark.parametrize(
    ("text", "behaviour"),
    [
        # the adverb and the comparative say slow down, even beside a "do not stop"
        ("Go slowly past a crash site, and do not stop to watch.", "slow down"),
        ("When the road is icy, drive slower and leave more room.", "slow down"),
        # ... but driving too slowly is what the rule is against: the ego keeps up
        ("Going too slowly can also cause crashes. Keep up with the flow of traffic when it is safe.", "keep current"),
        ("Driving too slowly\nDo not drive so slowly that you block the traffic behind you.", "keep current"),
    ],
)
def test_driving_slowly_slows_down_and_too_slowly_keeps_up(
    parser: OntologyGroundedParser, text: str, behaviour: str
) -> None:
    """'slowly' and 'slower' are cues to slow down like 'slow'; 'too slowly' (or 'too slow') names what a rule warns
    against, so it outweighs them."""
    scores = parser.analyse(rule(text, region="california")).behavior_scores
    assert max(scores, key=lambda b: (scores[b], b == "slow down")) == behaviour, scores
