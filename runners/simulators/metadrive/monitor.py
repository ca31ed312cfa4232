"""The collision monitor: every contact between two actors, named, timed, with speeds at impact.

MetaDrive flags a crash on the agent only (``info["crash_vehicle"]``) and does not say with whom. The
engine side (``runners.simulators.metadrive.engine``) asks Bullet for contacts between every pair of actor chassis
at each physics step (``contactTestPair``) and reads each vehicle's road-edge and object flags after
each control step; this class turns those observations into :class:`runners.simulators.base.SimCollision`
records. A pair touching over consecutive steps is one collision; after they have been apart for
``rearm_s`` a new contact is a new collision (a side-slap after the first impact). The speed at impact is
the speed one physics step before the contact was seen, so it is the speed the vehicles hit with, not
the speed the impulse left them with.

Nothing here imports MetaDrive.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tools.crash.models import SimCollision

__all__ = ["CollisionMonitor", "Contact"]

Contact = tuple[str, str, tuple[float, float] | None]  # actor a, actor b, where


class CollisionMonitor:
    """Collects collisions from per-step contact observations."""

    def __init__(self, *, rearm_s: float = 0.5) -> None:
        self.rearm_s = rearm_s
        self.collisions: list[SimCollision] = []
        self._last_touch: dict[frozenset[str], float] = {}
        self._prev_speed: dict[str, float] = {}
        self._road_hits: set[tuple[str, str]] = set()

    def observe(self, t: float, contacts: Iterable[Contact], speeds: Mapping[str, float]) -> list[SimCollision]:
        """Record the contacts seen at time ``t``; return the collisions that began now."""
        new: list[SimCollision] = []
        for a, b, where in contacts:
            pair = frozenset((a, b))
            last = self._last_touch.get(pair)
            self._last_touch[pair] = t
            if last is not None and t - last <= self.rearm_s:
                continue
            c = SimCollision(
                t=round(t, 3),
                a=a,
                b=b,
                speed_a_mps=round(self._prev_speed.get(a, speeds.get(a, 0.0)), 3),
                speed_b_mps=round(self._prev_speed.get(b, speeds.get(b, 0.0)), 3),
                x=None if where is None else round(where[0], 2),
                y=None if where is None else round(where[1], 2),
            )
            self.collisions.append(c)
            new.append(c)
        self._prev_speed = dict(speeds)
        return new

    def observe_road(
        self, t: float, actor: str, kind: str, speed: float, where: tuple[float, float]
    ) -> SimCollision | None:
        """Record an actor touching the road edge (``sidewalk``) or an object (``object``), once per run."""
        if (actor, kind) in self._road_hits:
            return None
        self._road_hits.add((actor, kind))
        c = SimCollision(
            t=round(t, 3),
            a=actor,
            b=kind,
            speed_a_mps=round(speed, 3),
            x=round(where[0], 2),
            y=round(where[1], 2),
        )
        self.collisions.append(c)
        return c

    def sorted(self) -> list[SimCollision]:
        """Every collision in time order (vehicle-vehicle before road contacts at the same time)."""
        return sorted(self.collisions, key=lambda c: (c.t, not c.b.startswith("V")))

    def actor_crashed(self, actor: str) -> bool:
        """Whether ``actor`` has touched another actor."""
        return any(c.involves(actor) and c.b.startswith("V") and c.a.startswith("V") for c in self.collisions)
