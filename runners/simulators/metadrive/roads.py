"""MetaDrive's side of the map: block configurations, junction legs long enough to time a crash, and lane paths.

This module imports MetaDrive at the top; only ``runners.simulators.metadrive.simulator`` imports it, lazily, after
the asset download is disabled. :func:`block_configs` writes the map as MetaDrive's "pg_map_file"
block list (each block's parameters fixed, nothing random), so a scenario always builds the same road.
:class:`RoadGeometry` reads the built road network back: the node where each side's inbound lanes begin
and its outbound lanes end, and each actor's route as a lane sequence and a :class:`Polyline`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from metadrive.component.algorithm.blocks_prob_dist import PGBlockDistConfig
from metadrive.component.pgblock.intersection import InterSection
from metadrive.component.pgblock.ramp import InRampOnStraight
from metadrive.component.pgblock.t_intersection import TInterSection

from runners.simulators.metadrive.mapping import ActorPlan, MapPlan, Side
from runners.simulators.metadrive.paths import Polyline, lane_shift

__all__ = [
    "APPROACH_M",
    "LEG_M",
    "CrashBlocks",
    "LaneStep",
    "RoadGeometry",
    "Route",
    "block_configs",
    "map_config",
]

LEG_M = 110.0  # each junction leg: long enough for about 4 s at 60 mph before the junction
APPROACH_M = 110.0  # the straight before a junction, ramp or curve (after MetaDrive's 50 m first block)
STRAIGHT_M = 250.0  # a straight road's block after the first block
FIRST_BLOCK_M = 50.0
_JOIN_BLEND_M = 30.0


class _LongInterSection(InterSection):
    """MetaDrive's 4-leg intersection with longer legs (its own are 35 m)."""

    EXIT_PART_LENGTH = LEG_M


class _LongTInterSection(TInterSection):
    """MetaDrive's T-intersection with longer legs."""

    EXIT_PART_LENGTH = LEG_M


class _LongInRamp(InRampOnStraight):
    """MetaDrive's on-ramp with a longer ramp before it bends onto the main road."""

    RAMP_LEN = 70


class CrashBlocks(PGBlockDistConfig):
    """The block registry the engine builds our maps from: MetaDrive's, with longer junction legs."""

    _OURS: dict[str, type] = {"X": _LongInterSection, "T": _LongTInterSection, "r": _LongInRamp}

    @classmethod
    def get_block(cls, block_id: str, version: str = "v2") -> Any:
        """The block class for a one-letter id."""
        return cls._OURS.get(block_id) or super().get_block(block_id, version)


def block_configs(plan: MapPlan) -> list[dict[str, Any]]:
    """The map as MetaDrive's block list: first block, then fixed-parameter blocks, each on the last one's socket."""
    blocks: list[dict[str, Any]] = [{"id": "I", "pre_block_socket_index": None}]

    def add(block_id: str, **params: Any) -> None:
        prev = len(blocks) - 1
        prev_id = blocks[prev]["id"]
        blocks.append({"id": block_id, "pre_block_socket_index": f"{prev}{prev_id}-socket0", **params})

    if plan.layout == "straight":
        add("S", length=STRAIGHT_M)
    elif plan.layout == "curve":
        add("S", length=APPROACH_M)
        add("C", length=60.0, radius=60.0, angle=75.0, dir=0)
        add("S", length=APPROACH_M)
    elif plan.layout == "intersection":
        add("S", length=APPROACH_M - FIRST_BLOCK_M + 40.0)
        add("X", radius=10.0, change_lane_num=0, decrease_increase=0)
    elif plan.layout == "t_intersection":
        add("S", length=APPROACH_M - FIRST_BLOCK_M + 40.0)
        # t_type names the leg MetaDrive leaves out: 0 right (south), 2 left (north)
        add("T", radius=10.0, t_type=2 if plan.stem == "S" else 0, change_lane_num=0, decrease_increase=0)
    elif plan.layout == "merge":
        add("S", length=APPROACH_M)
        add("r", length=40.0, extension_length=20.0)
        add("S", length=APPROACH_M)
    return blocks


def map_config(plan: MapPlan) -> dict[str, Any]:
    """MetaDrive's ``map_config`` for the plan."""
    return {
        "type": "pg_map_file",
        "config": block_configs(plan),
        "lane_num": plan.lanes,
        "lane_width": plan.lane_width,
        "exit_length": FIRST_BLOCK_M,
        "start_position": [0, 0],
    }


@dataclass(frozen=True)
class LaneStep:
    """One lane of a route and where it starts along the route's path."""

    index: tuple[str, str, int]
    s_start: float
    length: float


@dataclass(frozen=True)
class Route:
    """An actor's lanes from its entry to its exit, and the path through them (no manoeuvres)."""

    lanes: tuple[LaneStep, ...]
    path: Polyline
    destination: str  # the last node, MetaDrive navigation's destination

    def lane_at(self, s: float) -> tuple[tuple[str, str, int], float]:
        """The lane index and the longitude on it at arc length ``s`` of the path."""
        for step in reversed(self.lanes):
            if s >= step.s_start:
                return step.index, min(s - step.s_start, step.length - 0.1)
        first = self.lanes[0]
        return first.index, max(0.0, s)


def _heading_side(heading: float) -> Side:
    deg = math.degrees(heading) % 360
    if deg < 45 or deg >= 315:
        return "E"
    if deg < 135:
        return "N"
    if deg < 225:
        return "W"
    return "S"


def _sample(lane: Any, step: float = 1.0) -> np.ndarray:
    n = max(2, math.ceil(lane.length / step) + 1)
    return np.array([lane.position(s, 0.0) for s in np.linspace(0.0, lane.length, n)], dtype=np.float64)


class RoadGeometry:
    """The built map read back: entries, exits, the junction or reference point, and lane paths."""

    def __init__(self, metadrive_map: Any, plan: MapPlan) -> None:
        self.plan = plan
        self.network = metadrive_map.road_network
        self.graph = self.network.graph
        self.entry: dict[str, str] = {"W": ">"}
        self.exit: dict[str, str] = {"W": "->"}
        self.leg_start: dict[str, str] = {}
        blocks = metadrive_map.blocks
        last = blocks[-1]
        if plan.layout in {"intersection", "t_intersection"}:
            self._junction_legs(last)
        else:
            sock = last.get_socket(0)
            self.entry["E"] = sock.negative_road.start_node
            self.exit["E"] = sock.positive_road.end_node
        if plan.layout == "merge":
            ramp = next(b for b in blocks if b.ID == "r")
            self.entry["ramp"] = f"{ramp.name}1_0_"
        self.reference = self._reference_point(blocks)

    def _junction_legs(self, block: Any) -> None:
        for i in range(3):
            out_start, out_end = f"{block.name}{i}_0_", f"{block.name}{i}_1_"
            lanes = self.graph.get(out_start, {}).get(out_end)
            if not lanes:
                continue
            side = _heading_side(lanes[0].heading_theta_at(0.0))
            self.exit[side] = out_end
            self.entry[side] = f"-{out_end}"
            self.leg_start[side] = out_start
        self.junction_block = block

    def _reference_point(self, blocks: list[Any]) -> np.ndarray:
        """Where the crash is staged: the junction centre, the middle of a straight or curve, the ramp's end."""
        if self.plan.layout in {"intersection", "t_intersection"}:
            # the centre line where the west approach meets the junction, and where the east leg leaves it
            sock = self.junction_block.pre_block_socket
            pos = sock.positive_road.get_lanes(self.network)[0]
            neg = sock.negative_road.get_lanes(self.network)[0]
            west = (np.asarray(pos.position(pos.length, 0.0)) + np.asarray(neg.position(0.0, 0.0))) / 2
            out_start = self.leg_start["E"]
            lane_out = self.graph[out_start][self.exit["E"]][0]
            lane_in = self.graph[self.entry["E"]][f"-{out_start}"][0]
            east = (np.asarray(lane_out.position(0.0, 0.0)) + np.asarray(lane_in.position(lane_in.length, 0.0))) / 2
            return np.asarray((west + east) / 2, dtype=np.float64)
        if self.plan.layout == "merge":
            ramp = next(b for b in blocks if b.ID == "r")
            acc = self.graph[f"{ramp.name}0_0_"][f"{ramp.name}0_1_"][-1]
            return np.asarray(acc.position(acc.length * 0.35, 0.0), dtype=np.float64)
        path = self.route(">", self.exit["E"], 0).path
        return path.position(path.length / 2)

    # -- routes --------------------------------------------------------------------------------------
    def route_lanes(self, start: str, end: str, index: int) -> list[Any]:
        """The lanes from node ``start`` to node ``end``, keeping to lane ``index`` where the lanes connect."""
        nodes = self.network.shortest_path((start, None, 0), end)  # it reads the start node from a lane index
        if len(nodes) < 2:
            raise ValueError(f"no route from {start} to {end}")
        lanes: list[Any] = []
        for n0, n1 in itertools.pairwise(nodes):
            road = self.graph[n0][n1]
            if not lanes:
                lanes.append(road[min(index, len(road) - 1)])
                continue
            end_pt = np.asarray(lanes[-1].position(lanes[-1].length, 0.0))
            same = road[min(lanes[-1].index[2], len(road) - 1)]
            if np.linalg.norm(np.asarray(same.position(0.0, 0.0)) - end_pt) < 0.5:
                lanes.append(same)
            else:
                lanes.append(
                    min(road, key=lambda ln: float(np.linalg.norm(np.asarray(ln.position(0.0, 0.0)) - end_pt)))
                )
        return lanes

    def route(self, start: str, end: str, index: int) -> Route:
        """A lane route and its path; where consecutive lanes do not join (an ending lane), the path blends across."""
        lanes = self.route_lanes(start, end, index)
        steps: list[LaneStep] = []
        path: Polyline | None = None
        for lane in lanes:
            pts = _sample(lane)
            if path is None:
                steps.append(LaneStep(index=lane.index, s_start=0.0, length=float(lane.length)))
                path = Polyline.from_points(pts)
                continue
            gap = float(np.linalg.norm(pts[0] - path.points[-1]))
            s_here = path.length
            if gap < 0.5:
                path = Polyline.from_points(np.vstack([path.points, pts[1:]]))
            else:  # the lane ended: drift onto the next lane over the last stretch
                h = lane.heading_theta_at(0.0)
                back = pts[0] - np.outer(np.linspace(_JOIN_BLEND_M + 5, 1.0, 12), [math.cos(h), math.sin(h)])
                target = Polyline.from_points(np.vstack([back, pts]))
                path = lane_shift(path, target, max(0.0, s_here - _JOIN_BLEND_M), s_here)
                s_here = path.length - float(lane.length)
            steps.append(LaneStep(index=lane.index, s_start=s_here, length=float(lane.length)))
        assert path is not None
        return Route(lanes=tuple(steps), path=path, destination=end)

    def actor_route(self, actor: ActorPlan, *, lane_index: int | None = None) -> Route:
        """The route an actor's plan names (entry side, lane, exit side)."""
        start = self.entry[actor.approach]
        end = self.exit[actor.exit]
        return self.route(start, end, actor.lane_index if lane_index is None else lane_index)

    def opposing_route(self, actor: ActorPlan) -> Route:
        """The innermost lane of the opposite direction, run the opposite way (for a wrong-way drive)."""
        side = actor.approach if actor.approach != "ramp" else "W"
        opposite_entry = {"W": "E", "E": "W", "S": "N", "N": "S"}[side]
        if opposite_entry not in self.entry or side not in self.exit:
            opposite_entry = "E" if side == "W" else "W"
            side = "W" if opposite_entry == "E" else "E"
        return self.route(self.entry[opposite_entry], self.exit[side], 0)
