"""How non-ego actors drive: a scripted driver that follows its path at its target speed.

The actors that are not the ego do what the report says they did, and nothing else: they follow their
path (lane, turn, lane change, drift across the centre line) at their target speed, stopping or pulling
away on schedule. They do not brake for the ego, or for anyone, before an impact; after one, they brake
to a stop. Steering is pure pursuit on the path, speed a proportional-integral loop on throttle/brake,
giving MetaDrive's ``[steering, throttle_brake]`` action (steering > 0 turns left).

The ego's policies (MetaDrive's IDM, the PPO expert that ships in the wheel) live with the engine in
``runners.simulators.metadrive.engine``. Nothing here imports MetaDrive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from runners.simulators.metadrive.paths import Polyline

__all__ = ["DriverPlan", "ScriptedDriver"]


@dataclass(frozen=True)
class DriverPlan:
    """What a scripted actor does: its path, target speed and departure time."""

    path: Polyline
    speed: float  # m/s
    depart_t: float = 0.0  # seconds; math.inf = stays where it is


class ScriptedDriver:
    """Follows a :class:`DriverPlan`; one instance per actor and run (it keeps its place on the path)."""

    KP_SPEED = 0.5
    KI_SPEED = 0.05

    def __init__(self, plan: DriverPlan, *, wheelbase: float, max_steering_deg: float) -> None:
        self.plan = plan
        self.wheelbase = wheelbase
        self.max_steer = math.radians(max_steering_deg)
        self.index: int | None = None
        self.integral = 0.0
        self.crashed = False

    def progress(self, x: float, y: float) -> float:
        """Arc length of the nearest path point (tracked from the last call)."""
        self.index = self.plan.path.project((x, y), hint=self.index)
        return float(self.plan.path.s[self.index])

    def act(self, t: float, x: float, y: float, heading: float, speed: float, dt: float) -> tuple[float, float]:
        """The action at time ``t`` for a vehicle at ``(x, y)`` with ``heading`` (rad) and ``speed`` (m/s)."""
        path = self.plan.path
        s = self.progress(x, y)
        if self.crashed:
            return 0.0, -1.0
        target_v = self.plan.speed if t >= self.plan.depart_t else 0.0
        if s > path.length - 3.0:
            target_v = 0.0
        if target_v <= 0.0:
            self.integral = 0.0
            return self._steer(s, x, y, heading, speed), -1.0
        lookahead = min(20.0, max(5.0, 0.6 * speed + 3.0))
        steer = self._steer(s, x, y, heading, speed, lookahead)
        err = target_v - speed
        self.integral = max(-5.0, min(5.0, self.integral + err * dt))
        throttle = self.KP_SPEED * err + self.KI_SPEED * self.integral
        return steer, max(-1.0, min(1.0, throttle))

    def _steer(self, s: float, x: float, y: float, heading: float, speed: float, lookahead: float = 5.0) -> float:
        tx, ty = self.plan.path.position(s + lookahead)
        alpha = math.atan2(ty - y, tx - x) - heading
        alpha = (alpha + math.pi) % (2 * math.pi) - math.pi
        delta = math.atan2(2.0 * self.wheelbase * math.sin(alpha), lookahead)
        return max(-1.0, min(1.0, delta / self.max_steer))
