"""The driving-model Judge's rule: did a model's predictions on the follow-up break the MR's expected behaviour?

As AutoMT's paper states it, each model's predictions over a case's frames are summarised by their median, and
a change counts only when it is larger than a band drawn from the spread of the models' predictions:

* **slow down** is violated when the follow-up's speed does not drop below the source's by more than the band;
* **keep current** is violated when the speed (and the steering, where the model gives it) leaves the band;
* **turn left / turn right** are violated when the steering does not move the right way (left positive) by
  more than the band.

The paper gives the band in words only; drivemt reads "the spread of the models' predictions" as the standard
deviation, across the judged models, of their median predictions on the source case (``automt-paper``, used
when three or more models are judged). With fewer models it falls back to a per-model band: the model's own
spread (standard deviation) over the source's frames, never below a floor calibrated on ``null`` follow-ups;
a model's verdicts then never depend on which other models are judged. ``strict`` has no band at all.

AutoMT's own code differs from its paper (``Compare_baseline.py``): it takes each model's mean with no band,
and an always-true ``if "slow" or ...`` judges every MR as "slow down". drivemt follows the paper.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from tools.common.text import normalise_phrase
from tools.mt.models import BandFloor, BandPolicy, ModelPrediction, ModelVerdict

__all__ = ["BEHAVIOURS", "CROSS_MODEL_MIN", "judge_models"]

BEHAVIOURS = ("slow down", "keep current", "turn left", "turn right")
CROSS_MODEL_MIN = 3
"""Models needed for the cross-model band; fewer fall back to the per-model band."""


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _spread(values: Sequence[float]) -> float:
    return float(statistics.pstdev(values)) if len(values) > 1 else 0.0


def _bands(
    output: str, source: dict[str, ModelPrediction], policy: BandPolicy, floor: BandFloor
) -> tuple[str, dict[str, float]]:
    """The band kind and each model's band for one output (``speed`` or ``steering``)."""
    key = "speed_kmh" if output == "speed" else "steering_rad"
    series = {m: getattr(p, key) for m, p in source.items() if getattr(p, key) is not None}
    if policy == "strict":
        return "strict", dict.fromkeys(series, 0.0)
    if policy == "automt-paper" and len(series) >= CROSS_MODEL_MIN:
        band = _spread([_median(v) for v in series.values()])
        return "cross-model", dict.fromkeys(series, band)
    least = floor.speed_kmh if output == "speed" else floor.steering_rad
    return "per-model", {m: max(least, _spread(v)) for m, v in series.items()}


def judge_models(
    behaviour: str,
    source: dict[str, ModelPrediction],
    followup: dict[str, ModelPrediction],
    *,
    policy: BandPolicy = "automt-paper",
    floor: BandFloor | None = None,
) -> list[ModelVerdict]:
    """Each model's verdict on one follow-up, by the MR's expected behaviour.

    Args:
        behaviour: The MR's expected behaviour (slow down, keep current, turn left, turn right).
        source: Each model's predictions on the source case.
        followup: Each model's predictions on the follow-up (the same models).
        policy: How the band is drawn (see the module's text).
        floor: The per-model band's floor.
    """
    floor = floor or BandFloor()
    b = normalise_phrase(behaviour)

    def not_judged(model: str, reason: str) -> ModelVerdict:
        return ModelVerdict(model=model, behaviour=b, verdict="not judged", reason=reason, band="-")

    if b not in BEHAVIOURS:
        return [not_judged(m, f"no rule for the behaviour {b!r}") for m in source]
    speed_kind, speed_bands = _bands("speed", source, policy, floor)
    steer_kind, steer_bands = _bands("steering", source, policy, floor)
    out = []
    for m, src in source.items():
        fol = followup[m]
        if b in ("slow down", "keep current"):
            if src.speed_kmh is None or fol.speed_kmh is None:
                out.append(not_judged(m, "it gives no speed"))
                continue
            s, f = _median(src.speed_kmh), _median(fol.speed_kmh)
            band, change = speed_bands[m], f - s
            if b == "slow down":
                broken = change >= -band  # slowing means a drop of more than the band
                reason = f"speed {s:.1f} -> {f:.1f} km/h ({change:+.1f}); slowing needs a drop of more than {band:.1f}"
                out.append(
                    ModelVerdict(
                        model=m, behaviour=b, verdict="violation" if broken else "ok", reason=reason,
                        band=speed_kind, band_value=band, output="speed", source=s, followup=f, change=change,
                    )
                )  # fmt: skip
                continue
            broken = abs(change) > band
            reason = f"speed {s:.1f} -> {f:.1f} km/h ({change:+.1f}), band +/-{band:.1f}"
            if src.steering_rad is not None and fol.steering_rad is not None:
                ss, sf = _median(src.steering_rad), _median(fol.steering_rad)
                sband = steer_bands[m]
                turned = abs(sf - ss) > sband
                broken = broken or turned
                reason += f"; steering {ss:+.3f} -> {sf:+.3f} rad, band +/-{sband:.3f}"
            out.append(
                ModelVerdict(
                    model=m, behaviour=b, verdict="violation" if broken else "ok", reason=reason,
                    band=speed_kind, band_value=band, output="both" if src.steering_rad is not None else "speed",
                    source=s, followup=f, change=change,
                )
            )  # fmt: skip
            continue
        if src.steering_rad is None or fol.steering_rad is None:
            out.append(not_judged(m, "it gives no steering"))
            continue
        s, f = _median(src.steering_rad), _median(fol.steering_rad)
        band, change = steer_bands[m], f - s
        broken = change <= band if b == "turn left" else change >= -band
        side = "left (+)" if b == "turn left" else "right (-)"
        reason = f"steering {s:+.3f} -> {f:+.3f} rad ({change:+.3f}); turning {side} needs more than {band:.3f}"
        out.append(
            ModelVerdict(
                model=m, behaviour=b, verdict="violation" if broken else "ok", reason=reason, band=steer_kind,
                band_value=band, output="steering", source=s, followup=f, change=change,
            )
        )  # fmt: skip
    return out
