"""Scoring extracted scenarios against gold annotations, the way SAFE's RQ1 counts (``drivemt eval crashes``).

A case counts for the road network when the road type and every lane and way count the gold gives
(``No_*`` keys, main and branch included) are right; lengths and widths are not scored. It counts for
actors when the set of vehicles and each one's coarse type (``Car``/``Truck``) are right; for env when
time and weather are right (``Clear`` counts as the gold's ``Sunny``); overall when all three are.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from tools.crash.models import Scenario

__all__ = ["CaseScore", "CrashScoreReport", "constant_answer", "score_case", "score_safe"]

_SAME_WEATHER = {"Clear": "Sunny"}


class CaseScore(BaseModel):
    """Verdict on one case, with what differed."""

    case_id: str
    road_network: bool
    actors: bool
    env: bool
    overall: bool
    differences: list[str] = Field(default_factory=list)


class CrashScoreReport(BaseModel):
    """Verdicts over a set of cases."""

    cases: list[CaseScore] = Field(default_factory=list)

    @property
    def n(self) -> int:
        """Number of scored cases."""
        return len(self.cases)

    def fraction(self, name: str) -> float:
        """Share of cases right on one part (or ``overall``)."""
        return sum(bool(getattr(c, name)) for c in self.cases) / self.n if self.cases else 0.0

    def as_dict(self) -> dict[str, float | int]:
        """``{"n", "road_network", "actors", "env", "overall"}``, fractions rounded to 4 places."""
        return {"n": self.n, **{k: round(self.fraction(k), 4) for k in ("road_network", "actors", "env", "overall")}}


def score_case(predicted: Scenario | None, gold: Mapping[str, Any], *, case_id: str | None = None) -> CaseScore:
    """Score one predicted scenario (None when extraction failed) against a ``gold.yaml`` mapping."""
    cid = case_id or str(gold.get("Scenario", "?"))
    if predicted is None:
        return CaseScore(
            case_id=cid, road_network=False, actors=False, env=False, overall=False, differences=["no scenario"]
        )
    return score_safe(predicted.to_safe(), gold, case_id=cid)


def score_safe(mine: Mapping[str, Any], gold: Mapping[str, Any], *, case_id: str) -> CaseScore:
    """Score a scenario in SAFE's gold layout (``Road type``, ``Road network``, ``Actors``, ``Env``)."""
    cid = case_id
    diffs: list[str] = []

    road_ok = mine["Road type"] == gold.get("Road type")
    if not road_ok:
        diffs.append(f"road type {mine['Road type']} (gold {gold.get('Road type')})")
    gold_net = gold.get("Road network") or {}
    for key, value in gold_net.items():
        if not key.startswith("No_"):
            continue
        if mine["Road network"].get(key) != value:
            road_ok = False
            diffs.append(f"{key} {mine['Road network'].get(key)} (gold {value})")

    gold_actors = dict(gold.get("Actors") or {})
    actors_ok = mine["Actors"] == gold_actors
    if not actors_ok:
        diffs.append(f"actors {mine['Actors']} (gold {gold_actors})")

    gold_env = gold.get("Env") or {}
    weather = _SAME_WEATHER.get(mine["Env"]["Weather"], mine["Env"]["Weather"])
    env_ok = mine["Env"]["Time"] == gold_env.get("Time") and weather == gold_env.get("Weather")
    if not env_ok:
        diffs.append(f"env {mine['Env']} (gold {gold_env})")
    return CaseScore(
        case_id=cid,
        road_network=road_ok,
        actors=actors_ok,
        env=env_ok,
        overall=road_ok and actors_ok and env_ok,
        differences=diffs,
    )


def constant_answer(golds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The baseline that ignores the report: the most common gold answer of each part (road type with its most
    common lane and way counts, the most common set of actors, the most common time and weather)."""

    def mode(values: Sequence[Any]) -> Any:
        keyed = Counter(json.dumps(v, sort_keys=True) for v in values)
        return json.loads(keyed.most_common(1)[0][0]) if keyed else None

    road = mode([g.get("Road type") for g in golds])
    nets = [dict(g.get("Road network") or {}) for g in golds if g.get("Road type") == road]
    keys = {k for n in nets for k in n if k.startswith("No_")}
    network = {k: mode([n[k] for n in nets if k in n]) for k in sorted(keys)}
    env = [dict(g.get("Env") or {}) for g in golds]
    return {
        "Road type": road,
        "Road network": network,
        "Actors": mode([dict(g.get("Actors") or {}) for g in golds]) or {},
        "Env": {"Time": mode([e.get("Time") for e in env]), "Weather": mode([e.get("Weather") for e in env])},
    }
