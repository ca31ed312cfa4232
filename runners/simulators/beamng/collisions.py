"""Collisions from BeamNG damage sensors.

BeamNG's damage sensor says how much a vehicle is deformed, not what it hit. A vehicle whose damage
grows by more than a threshold between two polls was hit; the other party is the nearest other
vehicle if it is within contact distance (vehicle centres a car length or so apart), else an object.
Each pair is reported once, at its first impact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tools.crash.models import SimCollision

__all__ = ["CollisionMonitor", "VehicleSample"]


@dataclass(frozen=True)
class VehicleSample:
    """One vehicle at one poll."""

    x: float
    y: float
    heading: float
    speed: float
    damage: float


class CollisionMonitor:
    """Turns polled damage and positions into :class:`~runners.simulators.base.SimCollision` events."""

    def __init__(self, *, damage_threshold: float, contact_distance_m: float) -> None:
        self.damage_threshold = damage_threshold
        self.contact_distance_m = contact_distance_m
        self._damage: dict[str, float] = {}
        self._seen: set[frozenset[str]] = set()
        self.collisions: list[SimCollision] = []

    def update(self, t: float, samples: dict[str, VehicleSample]) -> list[SimCollision]:
        """Record one poll; return the collisions first seen in it.

        Args:
            t: Simulated seconds since the start.
            samples: Every vehicle's position, heading, speed and total damage.
        """
        hit = []
        for vid, s in samples.items():
            before = self._damage.get(vid, s.damage)  # a first sample only sets the baseline
            self._damage[vid] = s.damage
            if s.damage - before >= self.damage_threshold:
                hit.append(vid)
        new: list[SimCollision] = []
        for vid in hit:
            me = samples[vid]
            others = [(math.hypot(o.x - me.x, o.y - me.y), oid) for oid, o in samples.items() if oid != vid]
            dist, oid = min(others) if others else (math.inf, "")
            other = oid if dist <= self.contact_distance_m else "object"
            pair = frozenset((vid, other)) if other != "object" else frozenset((vid, "object"))
            if pair in self._seen:
                continue
            self._seen.add(pair)
            o = samples.get(other)
            new.append(
                SimCollision(
                    t=round(t, 3),
                    a=vid,
                    b=other,
                    speed_a_mps=round(me.speed, 3),
                    speed_b_mps=None if o is None else round(o.speed, 3),
                    x=round(me.x if o is None else (me.x + o.x) / 2, 3),
                    y=round(me.y if o is None else (me.y + o.y) / 2, 3),
                )
            )
        self.collisions.extend(new)
        return new
