"""One realistic sample of every registered event type (tests check that each round-trips and has a schema).

A new event type without a sample here fails ``test_every_registered_event_has_a_sample``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bus import events as ev
from bus.envelope import Event
from tools.common.models import ConversationEntry, Provenance
from tools.crash.models import CaseVerdict, RunRecord, RunSpec, Scenario, SimCollision, SimOptions, SimSettings
from tools.mt.models import (
    CaseDescription,
    CaseMetadata,
    DrivingCase,
    EditRecord,
    EgoSample,
    FollowUp,
    ModelPrediction,
    ModelVerdict,
    PlannedMR,
    Validity,
    ValidityCheck,
)
from tools.rules.models import CheckResult, MRCandidate, MRFields, StoredMR, TrafficRule

__all__ = ["samples"]


def samples() -> dict[str, Event]:
    """Event type -> a sample event of that type."""
    case = DrivingCase(
        case_id="syn-0-00001",
        source="synthetic",
        frames=[f"b/cases/syn-0-00001/frame_{i:02d}.png" for i in range(10)],
        ego=[EgoSample(speed_kmh=40.0 - i, steering_rad=0.01) for i in range(10)],
        metadata=CaseMetadata(time="day", weather="clear", road_type="crosswalk", objects=["pedestrian"]),
        region="germany",
    )
    description = CaseDescription(
        speed_kmh=35.5,
        steering_rad=0.01,
        describer="offline:image-statistics",
        time="day",
        weather="clear",
        road_type="crosswalk",
        objects=["pedestrian"],
    )
    followup = FollowUp(
        followup_id="syn-0-00001-fog",
        source=case,
        description=description,
        mr=PlannedMR(
            method="automt",
            gherkin="Given ...",
            road_type="any roads",
            verb="replaces",
            manipulation="fog",
            term="fog",
            expected_behavior="slow down",
            mr_id="m1",
        ),
        case=case.model_copy(
            update={
                "case_id": "syn-0-00001-fog",
                "metadata": None,
                "frames": [f"b/followups/f/frame_{i:02d}.png" for i in range(10)],
            }
        ),
        edit=EditRecord(generator="classical", op="replace", kind="fog", strength=0.85),
        seconds=0.12,
    )
    rule = TrafficRule(id="de-01", text="Slow down in fog.", region="germany")
    fields = MRFields(road_type="any roads", verb="replaces", manipulation="fog", expected_behavior="slow down")
    cand = MRCandidate(mr=fields, parser="offline:ontology-grounded", confidence=0.8, evidence={"manipulation": "fog"})
    scored = ev.ScoredCandidate(candidate=cand, score=0.9, accepted=True)
    prov = Provenance(config_hash="c", ontology_hash="o", models=["offline:ontology-grounded"], seed=0)
    stored = StoredMR(
        mr_id="m1",
        gherkin=fields.gherkin,
        fields=fields,
        canonical_key="any roads|replaces|fog|slow down",
        region="germany",
        score=0.9,
        source_rule_ids=["de-01"],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    check = CheckResult(question="elements_in_rule", check="manipulation in rule", passed=True, detail="fog")
    scenario = Scenario.from_data(
        {
            "case_id": "c1",
            "road_network": {"road_type": "Intersection"},
            "actors": [{"id": "V1", "initial_position": "W2E"}, {"id": "V2", "initial_position": "S2N"}],
            "collisions": [["V1", "V2"]],
        }
    )
    spec = RunSpec(case_id="c1", ego_id="V1", policy="idm", variant=0, seed=0)
    record = RunRecord(
        spec=spec,
        simulator="metadrive 0.4.3",
        collisions=[SimCollision(t=3.0, a="V1", b="V2", speed_a_mps=8.0, speed_b_mps=6.0)],
        reported_pairs=[("V1", "V2")],
        reproduced=True,
        ego_collided=True,
        png="b/crashes/c1/V1-idm-v0.png",
        record_path="b/crashes/c1/V1-idm-v0.json",
    )
    tl_request = ev.TLDatasetPayload(dataset="/data/lisa", transforms=["RN", "CC"], detectors=["yolo:best.pt"])
    out: list[Event] = [
        ev.RulesSubmitted(producer="t", payload=ev.RulesSubmittedPayload(rules=[rule], source="test")),
        ev.MRCandidatesProduced(
            producer="m-agent",
            payload=ev.MRCandidatesPayload(
                rule=rule, candidates=[cand], failures=[ev.ParserFailure(parser="x", error="y")], provenance=prov
            ),
        ),
        ev.MRAccepted(
            producer="validator",
            payload=ev.MRAcceptedPayload(
                rule=rule, winner=scored, mr=stored, checks=[check], candidates=[scored], provenance=prov
            ),
        ),
        ev.MRRejected(
            producer="validator",
            payload=ev.MRRejectedPayload(rule=rule, reasons=["no fit"], candidates=[scored], provenance=prov),
        ),
        ev.CrashSubmitted(
            producer="t",
            payload=ev.CrashSubmittedPayload(
                case_id="c1", summary="V1 struck V2.", simulate=SimOptions(), batch_size=1
            ),
        ),
        ev.ScenarioExtracted(
            producer="crash-extractor",
            payload=ev.ScenarioExtractedPayload(
                case_id="c1",
                scenario=scenario,
                extractor="offline:crash-rules",
                template="Intersection",
                provenance=prov,
            ),
        ),
        ev.SimRequested(
            producer="sim-planner",
            payload=ev.SimRequestedPayload(
                case_id="c1",
                scenario=scenario,
                spec=spec,
                settings=SimSettings(),
                index=0,
                total=2,
                case_ref="b/crashes/c1",
                batch_size=1,
            ),
        ),
        ev.SimCompleted(
            producer="sim-runner",
            payload=ev.SimCompletedPayload(
                case_id="c1",
                record=record,
                index=0,
                total=2,
                simulator="metadrive",
                worker="sim1",
                case_ref="b/crashes/c1",
            ),
        ),
        ev.CrashVerdict(
            producer="judge",
            payload=CaseVerdict(
                case_id="c1", runs=2, reproduced=True, reproduced_by=["V1-idm-v0"], violations=1, seconds_per_run=0.4
            ),
        ),
        ev.ViolationFound(
            producer="judge",
            payload=ev.ViolationPayload(
                kind="crash", item_id="c1/V1-idm-v0", description="ego V1 collided with V2", evidence=[record.png or ""]
            ),
        ),
        ev.TLDatasetSubmitted(producer="t", payload=tl_request),
        ev.TLAugmented(
            producer="tl-augmenter",
            payload=ev.TLAugmentedPayload(
                request=tl_request,
                format="lisa",
                out_ref="b/tl/augmented",
                manifest_ref="b/tl/augmented/manifest.json",
                images_in=4,
                pairs=8,
                seconds=1.0,
                images_per_second=8.0,
            ),
        ),
        ev.TLVerdict(
            producer="judge",
            payload=ev.TLVerdictPayload(
                dataset="/data/lisa",
                detectors=["yolo:best.pt"],
                threshold=0.55,
                images=4,
                pairs=8,
                report="b/tl/report.html",
            ),
        ),
        ev.ErrorReported(
            producer="m-agent",
            payload=ev.ErrorPayload(domain="rules", agent="m-agent", error_type="EmptyRuleError", reason="empty"),
        ),
        ev.DeadLettered(
            producer="m-agent",
            payload=ev.DeadLetterPayload(
                consumer="m-agent", original_subject="drivemt.rules.submitted", deliveries=1, reason="bad", data="{"
            ),
        ),
        ev.AgentHeartbeat(
            producer="m-agent",
            payload=ev.HeartbeatPayload(
                agent="m-agent",
                instance="h-1",
                host="h",
                pid=1,
                started_at=datetime(2026, 1, 1, tzinfo=UTC),
                status="ready",
                consumes=["rules.submitted"],
                produces=["mrs.candidates"],
                tools=[],
            ),
        ),
        ev.ProgressReported(producer="judge", payload=ev.ProgressPayload(stage="crash-batch", done=1, total=2)),
        ev.AgentMessage(
            producer="m-agent",
            payload=ev.AgentMessagePayload(
                agent="m-agent",
                reasoners=["offline:ontology-grounded"],
                input_event_id="e1",
                item_id="de-01",
                entries=[
                    ConversationEntry(
                        role="decision",
                        reasoner="offline:ontology-grounded",
                        text="replaces the weather with fog environment (matched: fog); road type any roads",
                    )
                ],
            ),
        ),
        ev.CasesSubmitted(
            producer="t",
            payload=ev.CasesSubmittedPayload(cases=[case], region="germany", batch_size=1),
        ),
        ev.CasesDescribed(
            producer="t-agent",
            payload=ev.CasesDescribedPayload(case=case, description=description, region="germany", batch_size=1),
        ),
        ev.FollowupGenerated(
            producer="f-agent",
            payload=ev.FollowupGeneratedPayload(
                case=case, description=description, status="generated", followup=followup, candidates=3, batch_size=1
            ),
        ),
        ev.FollowupJudged(
            producer="judge",
            payload=ev.FollowupJudgedPayload(
                case=case,
                status="judged",
                followup=followup,
                valid=True,
                verdicts=[
                    ModelVerdict(
                        model="pilotnet",
                        behaviour="slow down",
                        verdict="violation",
                        reason="speed 40.0 -> 39.6 km/h (-0.4); slowing needs a drop of more than 1.5",
                        band="per-model",
                        band_value=1.5,
                        output="speed",
                        source=40.0,
                        followup=39.6,
                        change=-0.4,
                    )
                ],
                band_policy="per-model",
                source_predictions=[ModelPrediction(model="pilotnet", speed_kmh=[40.0] * 10, steering_rad=[0.0] * 10)],
                followup_predictions=[
                    ModelPrediction(model="pilotnet", speed_kmh=[39.6] * 10, steering_rad=[0.0] * 10)
                ],
                models=["models/abc/pilotnet.json"],
                batch_size=1,
            ),
        ),
        ev.MTBatchJudged(
            producer="judge",
            payload=ev.MTBatchJudgedPayload(
                cases=1,
                followups=1,
                valid=1,
                violations={"pilotnet": 1},
                violation_rate={"pilotnet": 1.0},
                distinct_manipulations=1,
                batch_size=1,
            ),
        ),
        ev.FollowupValidated(
            producer="validity-checker",
            payload=ev.FollowupValidatedPayload(
                followup=followup,
                validity=Validity(
                    checks=[
                        ValidityCheck(
                            name="scenario_alignment", passed=True, reason="SSIM 0.91 outside the edit", value=0.91
                        ),
                        ValidityCheck(
                            name="manipulation_verification", passed=True, reason="contrast fell 41 %", value=0.41
                        ),
                        ValidityCheck(name="logical_alignment", passed=True, reason="a moving ego can slow down"),
                    ]
                ),
                batch_size=1,
            ),
        ),
    ]
    return {e.type: e for e in out}
