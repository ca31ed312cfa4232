"""The scripted driver of the synthetic world: it obeys the traffic rules, using only what the frames show.

At every frame the driver looks at what is visible (in the camera's field of view, nearer than the weather
and the light let it see) and sets a target speed from the tightest rule that applies:

* red (or yellow) lights and stop signs: approach slowly and stop at the line (a gentle 1.2 m/s² approach
  profile from wherever the light or sign comes into view, as drivers ease off well before a red light);
* pedestrians, children, wheelchair users and cyclists on its path: stop, or follow a cyclist;
* a slower vehicle ahead in its lane: keep a 1.5 s gap (stop behind a stopped one);
* school zones (a school sign or children at the roadside in view): 30 km/h;
* fog, rain, snow (by their strength) and night: slower;
* a speed-limit sign, a curve's lateral acceleration, an obstacle, an animal, an emergency vehicle.

Its speed then moves toward the target within its braking (6 m/s²) and acceleration (2 m/s²) limits; at the
first frame it already drives at the target (it has been reacting all along). It steers along the road:
the steering-wheel angle is the road-wheel angle of the road's curvature times a 15:1 steering ratio,
positive to the left. A faulty driver (``ignore``) simply does not apply some rules.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from tools.mt.models import CASE_FPS, CASE_FRAMES, FAULT_RULES
from tools.mt.synth.camera import Camera
from tools.mt.synth.scene import SceneObject, SceneSpec

__all__ = ["STEERING_RATIO", "WHEELBASE_M", "DriverState", "drive", "visibility_m", "visible_objects"]

WHEELBASE_M = 2.7
STEERING_RATIO = 15.0
"""Steering-wheel degrees per road-wheel degree (Udacity's Lincoln MKZ driver uses 14.8-16)."""
_BRAKE = 2.5  # comfortable braking when planning a stop, m/s²
_APPROACH = 1.2  # the gentler profile of an approach to a red light or a stop sign, m/s²
_MAX_BRAKE = 6.0
_MAX_ACCEL = 2.0
_PEOPLE = {"pedestrian", "child", "wheelchair"}
_VEHICLES = {"car", "bus", "truck", "emergency"}
_LENGTH = {"car": 4.5, "bus": 12.0, "truck": 9.0, "emergency": 5.5, "cyclist": 1.8}


@dataclass
class DriverState:
    """The ego at one frame."""

    t: float
    s: float = 0.0
    speed_mps: float = 0.0
    steering_rad: float = 0.0
    target_mps: float = 0.0
    binding: str = "cruise"
    triggers: set[str] = field(default_factory=set)

    @property
    def speed_kmh(self) -> float:
        """Speed in km/h."""
        return self.speed_mps * 3.6


def visibility_m(spec: SceneSpec, kind: str = "") -> float:
    """How far the driver (and a camera) can see in these conditions; lit lights carry further at night."""
    vis = 130.0
    s = spec.weather_strength
    if spec.weather == "fog":
        vis = 90.0 - 70.0 * s
    elif spec.weather == "snow":
        vis = 110.0 - 60.0 * s
    elif spec.weather == "rain":
        vis = 120.0 - 45.0 * s
    if spec.time == "night" and kind not in {"traffic_light", "emergency"}:
        vis = min(vis, 55.0)
    elif spec.time == "dusk":
        vis = min(vis, 95.0)
    return vis


def _lateral_in_camera(spec: SceneSpec, x: float, d: float) -> float:
    return x - spec.ego_x - 0.5 * spec.curvature * d * d


def visible_objects(spec: SceneSpec, t: float, ego_s: float, camera: Camera) -> list[tuple[SceneObject, float, float]]:
    """``(object, distance ahead, lateral position on the road)`` of every object the driver can see at ``t``."""
    out = []
    for obj in spec.objects:
        s, x = obj.at(t)
        d = s - ego_s
        if d < 1.5 or d > visibility_m(spec, obj.kind):
            continue
        if not camera.in_view(_lateral_in_camera(spec, x, d), d, margin_m=0.5):
            continue
        out.append((obj, d, x))
    return out


def _stop_speed(distance_m: float, decel: float = _BRAKE) -> float:
    """The speed from which braking at ``decel`` stops within ``distance_m``."""
    return math.sqrt(2.0 * decel * max(0.0, distance_m))


def _target(spec: SceneSpec, t: float, ego_s: float, camera: Camera, ignore: set[str]) -> tuple[float, str, set[str]]:
    """The target speed (m/s), the rule that sets it, and every rule whose condition is in view."""
    limits: list[tuple[float, str]] = [(spec.cruise_kmh / 3.6, "cruise")]
    seen: set[str] = set()

    def limit(rule: str, v: float) -> None:
        seen.add(rule)
        if rule not in ignore:
            limits.append((max(0.0, v), rule))

    if abs(spec.curvature) > 1e-4:
        limits.append((math.sqrt(2.5 / abs(spec.curvature)), "curve"))
    strength = spec.weather_strength
    if spec.weather in ("fog", "rain", "snow") and strength >= 0.25:
        factor = {"fog": 1.0 - 0.5 * strength, "rain": 1.0 - 0.28 * strength, "snow": 1.0 - 0.45 * strength}[
            spec.weather
        ]
        limit(spec.weather, spec.cruise_kmh / 3.6 * factor)
    if spec.time == "night":
        limit("night", spec.cruise_kmh / 3.6 * 0.8)
    half_lane = 1.75
    for obj, d, x in visible_objects(spec, t, ego_s, camera):
        kind = obj.kind
        in_lane = abs(x - spec.ego_x) < half_lane + 0.3
        if kind == "traffic_light" and obj.state in ("red", "yellow"):
            limit("red-light", _stop_speed(d - 1.5, _APPROACH))
        elif kind == "stop_sign":
            limit("stop-sign", _stop_speed(d - 1.0, _APPROACH))
        elif kind == "yield_sign":
            limits.append((max(_stop_speed(d) * 0.6, 15 / 3.6), "yield"))
        elif kind == "no_entry_sign":
            limits.append((_stop_speed(d - 2.0), "no-entry"))
        elif kind == "warning_sign":
            limits.append((spec.cruise_kmh / 3.6 * 0.8, "warning"))
        elif kind == "crossbuck":
            limits.append((30 / 3.6, "railroad"))
        elif kind == "speed_sign" and obj.state and obj.state.isdigit():
            limits.append((float(obj.state) / 3.6, "speed-limit"))
        elif kind == "school_sign" or (kind == "child" and not in_lane and abs(obj.lateral_speed) < 0.1):
            limit("school-zone", 30 / 3.6)
        elif kind in _PEOPLE:
            heading_in = abs(x + obj.lateral_speed * 2.5 - spec.ego_x) < half_lane + 0.5 or (
                (x - spec.ego_x) * obj.lateral_speed < 0 and abs(x - spec.ego_x) < spec.half_road + 3
            )
            if in_lane or (abs(obj.lateral_speed) > 0.1 and heading_in):
                limit("pedestrian", _stop_speed(d - 4.0))
        elif kind == "cyclist":
            if in_lane:
                gap = d - _LENGTH["cyclist"]
                limit("cyclist", max(0.0, min(obj.speed + 0.4 * (gap - 6.0), _stop_speed(gap - 3.0) + obj.speed)))
        elif kind in _VEHICLES and in_lane and obj.speed >= 0:
            gap = d - _LENGTH.get(kind, 4.5)
            v_lead = obj.speed
            limit(
                "lead-vehicle",
                max(0.0, min(v_lead + 0.5 * (gap - (4.0 + 1.5 * v_lead)), _stop_speed(gap - 3.0) + v_lead)),
            )
        elif kind == "emergency":
            limits.append((spec.cruise_kmh / 3.6 * 0.5, "emergency"))
        elif kind in ("animal", "obstacle") and in_lane:
            limits.append((_stop_speed(d - 4.0), "obstacle"))
    value, rule = min(limits, key=lambda vr: vr[0])
    return value, rule, seen


def drive(
    spec: SceneSpec,
    *,
    frames: int = CASE_FRAMES,
    fps: float = CASE_FPS,
    ignore: Iterable[str] = (),
    camera: Camera | None = None,
) -> list[DriverState]:
    """The ego's state at each frame of a case.

    Args:
        spec: The scene.
        frames: Frames in the case.
        fps: Frames per second.
        ignore: Rules this (faulty) driver does not apply (``tools.mt.models.FAULT_RULES``).
        camera: The camera whose view the driver sees (visibility depends on the field of view).

    Raises:
        ValueError: For an unknown rule in ``ignore``.
    """
    ignored = set(ignore)
    unknown = ignored - set(FAULT_RULES)
    if unknown:
        raise ValueError(f"unknown rule(s) {sorted(unknown)}; known: {', '.join(FAULT_RULES)}")
    cam = camera or Camera(640, 320)
    dt = 1.0 / fps
    wheel = math.atan(WHEELBASE_M * spec.curvature) * STEERING_RATIO
    states: list[DriverState] = []
    s, v = 0.0, 0.0
    for i in range(frames):
        t = i * dt
        target, rule, seen = _target(spec, t, s, cam, ignored)
        v = target if i == 0 else min(max(target, v - _MAX_BRAKE * dt), v + _MAX_ACCEL * dt)
        states.append(
            DriverState(t=t, s=s, speed_mps=v, steering_rad=wheel, target_mps=target, binding=rule, triggers=seen)
        )
        s += v * dt
    return states
