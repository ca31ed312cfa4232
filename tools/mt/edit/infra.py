"""Traffic infrastructure drawn procedurally: signs, signals and road markings, each as its real shape and colours.

Signs and signals are drawn into a box (the post and panel of an object standing at the roadside); markings are
drawn on the road plane in perspective. Every kind is drawn as itself: a generic blank panel is never used.
"""

from __future__ import annotations

import math

import numpy as np

from tools.mt.edit.stage import Stage

__all__ = ["MARKING_KINDS", "SIGNAL_KINDS", "SIGN_KINDS", "draw_marking", "draw_sign", "sign_size_m"]

RGB = tuple[int, int, int]
RED: RGB = (200, 25, 30)
WHITE: RGB = (238, 238, 236)
BLACK: RGB = (22, 22, 24)
YELLOW: RGB = (250, 200, 30)
ORANGE: RGB = (245, 130, 20)
GREEN: RGB = (20, 120, 60)
BLUE: RGB = (20, 70, 160)

SIGNAL_KINDS = (
    "red_light",
    "yellow_light",
    "green_light",
    "flashing_red_light",
    "flashing_yellow_light",
    "red_arrow",
    "green_arrow",
    "traffic_light",
    "pedestrian_signal",
    "ramp_meter",
)
SIGN_KINDS = (
    "stop_sign",
    "yield_sign",
    "speed_limit_sign",
    "us_speed_limit_sign",
    "no_entry_sign",
    "do_not_enter_sign",
    "all_vehicles_prohibited_sign",
    "motor_vehicles_prohibited_sign",
    "no_u_turn_sign",
    "warning_sign",
    "us_warning_sign",
    "work_zone_sign",
    "school_sign",
    "regulatory_sign",
    "wrong_way_sign",
    "chevron_sign",
    "distance_marker",
    "zone_30_sign",
    "priority_road_sign",
    "bus_stop_sign",
    "crossbuck",
    "overhead_sign",
    "reflective_post",
    "guardrail",
    "traffic_island",
)
MARKING_KINDS = (
    "crosswalk",
    "limit_line",
    "bike_lane",
    "center_left_turn_lane",
    "hov_lane",
    "lane_arrows",
    "sharrow",
    "yellow_lines",
    "road_markers",
)


def sign_size_m(kind: str) -> tuple[float, float]:
    """Width and height (post included) of a roadside sign or signal, in metres."""
    if kind in SIGNAL_KINDS:
        return (0.45, 0.9) if kind == "ramp_meter" else (0.45, 3.6)
    return {
        "overhead_sign": (6.0, 5.8),
        "guardrail": (6.0, 0.8),
        "traffic_island": (1.6, 1.0),
        "reflective_post": (0.15, 1.0),
        "distance_marker": (0.3, 1.1),
        "chevron_sign": (0.8, 2.2),
        "wrong_way_sign": (0.9, 2.2),
        "us_speed_limit_sign": (0.6, 2.5),
        "zone_30_sign": (0.75, 2.5),
        "crossbuck": (1.2, 2.8),
    }.get(kind, (0.75, 2.4))


def _font(cv2: object, scale_px: float) -> tuple[int, float, int]:
    size = max(0.2, scale_px / 30.0)
    return 0, size, max(1, round(scale_px / 12))  # FONT_HERSHEY_SIMPLEX


def _text(img: np.ndarray, text: str, centre: tuple[int, int], height_px: float, colour: RGB) -> None:
    import cv2

    if height_px < 4:
        return
    face, size, thick = cv2.FONT_HERSHEY_SIMPLEX, height_px / 22.0, max(1, round(height_px / 9))
    (tw, th), _ = cv2.getTextSize(text, face, size, thick)
    cv2.putText(img, text, (centre[0] - tw // 2, centre[1] + th // 2), face, size, colour, thick, cv2.LINE_AA)


def _polygon(centre: tuple[int, int], r: float, n: int, rot: float) -> np.ndarray:
    return np.array(
        [
            (centre[0] + r * math.cos(rot + 2 * math.pi * k / n), centre[1] + r * math.sin(rot + 2 * math.pi * k / n))
            for k in range(n)
        ],
        np.int32,
    )


def draw_sign(img: np.ndarray, kind: str, box: tuple[float, float, float, float], *, t: float = 0.0) -> None:
    """Draw a roadside sign or signal whose post stands at the bottom of ``box`` (x1, y1, x2, y2 in pixels)."""
    import cv2

    x1, y1, x2, y2 = (round(v) for v in box)
    bw, bh = max(1, x2 - x1), max(1, y2 - y1)
    cx = (x1 + x2) // 2
    grey = (105, 108, 112)
    if kind == "guardrail":
        for k in range(2):
            y = round(y1 + bh * (0.2 + 0.25 * k))
            cv2.rectangle(img, (x1, y), (x2, y + max(1, bh // 6)), (175, 178, 182), -1)
        for px in range(x1, x2 + 1, max(3, bw // 6)):
            cv2.line(img, (px, y1), (px, y2), grey, max(1, bw // 40))
        return
    if kind == "traffic_island":
        pts = np.array([(x1, y2), (x2, y2), (x2 - bw // 5, y1 + bh // 2), (x1 + bw // 5, y1 + bh // 2)], np.int32)
        cv2.fillConvexPoly(img, pts, (160, 160, 150))
        cv2.polylines(img, [pts], True, WHITE, max(1, bw // 25))
        cv2.rectangle(img, (cx - max(1, bw // 12), y1), (cx + max(1, bw // 12), y1 + bh // 2), WHITE, -1)
        cv2.circle(img, (cx, y1 + bh // 6), max(1, bw // 10), (40, 90, 200), -1)
        return
    if kind == "reflective_post":
        cv2.rectangle(img, (x1, y1), (x2, y2), WHITE, -1)
        cv2.rectangle(img, (x1, y1 + bh // 10), (x2, y1 + bh // 4), BLACK, -1)
        cv2.rectangle(img, (x1, y1 + bh // 7), (x2, y1 + bh // 5), (255, 140, 40), -1)
        return
    if kind == "overhead_sign":
        pw = max(1, bw // 40)
        cv2.rectangle(img, (x1, y1), (x1 + pw, y2), grey, -1)
        cv2.rectangle(img, (x2 - pw, y1), (x2, y2), grey, -1)
        cv2.rectangle(img, (x1, y1), (x2, y1 + max(1, bh // 30)), grey, -1)
        panel = (x1 + bw // 6, y1 + bh // 30, x2 - bw // 6, y1 + bh // 4)
        cv2.rectangle(img, panel[:2], panel[2:], GREEN, -1)
        cv2.rectangle(img, panel[:2], panel[2:], WHITE, max(1, bw // 120))
        _text(
            img,
            "EXIT 12  ->",
            ((panel[0] + panel[2]) // 2, (panel[1] + panel[3]) // 2),
            (panel[3] - panel[1]) * 0.5,
            WHITE,
        )
        return
    # A post, then the panel at its top.
    pw = max(1, bw // 9)
    cv2.line(img, (cx, y2), (cx, y1 + bw // 2), grey, pw)
    if kind in SIGNAL_KINDS:
        _draw_signal(img, kind, (x1, y1, x2, y2), t)
        return
    r = bw / 2
    head = (cx, round(y1 + r))
    if kind == "stop_sign":
        oct_ = _polygon(head, r, 8, math.pi / 8)
        cv2.fillConvexPoly(img, oct_, RED)
        cv2.polylines(img, [oct_], True, WHITE, max(1, round(r / 9)))
        _text(img, "STOP", head, r * 0.55, WHITE)
    elif kind == "yield_sign":
        tri = _polygon(head, r, 3, math.pi / 2)
        cv2.fillConvexPoly(img, tri, RED)
        cv2.fillConvexPoly(img, ((tri - np.array(head)) * 0.6 + np.array(head)).astype(np.int32), WHITE)
    elif kind in ("speed_limit_sign", "all_vehicles_prohibited_sign", "motor_vehicles_prohibited_sign"):
        cv2.circle(img, head, round(r), RED, -1)
        cv2.circle(img, head, max(1, round(r * 0.78)), WHITE, -1)
        if kind == "speed_limit_sign":
            _text(img, "30", head, r * 0.8, BLACK)
        elif kind == "motor_vehicles_prohibited_sign":
            car = (
                head[0] - round(r * 0.45),
                head[1] - round(r * 0.18),
                head[0] + round(r * 0.45),
                head[1] + round(r * 0.12),
            )
            cv2.rectangle(img, car[:2], car[2:], BLACK, -1)
            cv2.circle(img, (car[0] + round(r * 0.15), car[3]), max(1, round(r * 0.1)), BLACK, -1)
            cv2.circle(img, (car[2] - round(r * 0.15), car[3]), max(1, round(r * 0.1)), BLACK, -1)
    elif kind in ("no_entry_sign", "do_not_enter_sign"):
        cv2.circle(img, head, round(r), RED, -1)
        cv2.rectangle(
            img,
            (head[0] - round(r * 0.7), head[1] - max(1, round(r * 0.16))),
            (head[0] + round(r * 0.7), head[1] + max(1, round(r * 0.16))),
            WHITE,
            -1,
        )
        if kind == "do_not_enter_sign":
            _text(img, "DO NOT", (head[0], head[1] - round(r * 0.45)), r * 0.3, WHITE)
            _text(img, "ENTER", (head[0], head[1] + round(r * 0.45)), r * 0.3, WHITE)
    elif kind == "no_u_turn_sign":
        cv2.rectangle(
            img, (head[0] - round(r), head[1] - round(r)), (head[0] + round(r), head[1] + round(r)), WHITE, -1
        )
        cv2.ellipse(
            img, (head[0], head[1]), (round(r * 0.35), round(r * 0.4)), 0, 180, 360, BLACK, max(1, round(r / 7))
        )
        cv2.line(
            img,
            (head[0] - round(r * 0.35), head[1]),
            (head[0] - round(r * 0.35), head[1] + round(r * 0.5)),
            BLACK,
            max(1, round(r / 7)),
        )
        cv2.circle(img, head, round(r * 0.85), RED, max(1, round(r / 8)))
        cv2.line(
            img,
            (head[0] - round(r * 0.6), head[1] - round(r * 0.6)),
            (head[0] + round(r * 0.6), head[1] + round(r * 0.6)),
            RED,
            max(1, round(r / 8)),
        )
    elif kind == "warning_sign":
        tri = _polygon(head, r, 3, -math.pi / 2)
        cv2.fillConvexPoly(img, tri, RED)
        cv2.fillConvexPoly(img, ((tri - np.array(head)) * 0.66 + np.array(head)).astype(np.int32), WHITE)
        _text(img, "!", (head[0], head[1] + round(r * 0.15)), r * 0.55, BLACK)
    elif kind in ("us_warning_sign", "work_zone_sign", "priority_road_sign"):
        colour = {"us_warning_sign": YELLOW, "work_zone_sign": ORANGE, "priority_road_sign": WHITE}[kind]
        dia = _polygon(head, r, 4, 0.0)
        cv2.fillConvexPoly(img, dia, colour)
        cv2.polylines(img, [dia], True, BLACK, max(1, round(r / 12)))
        if kind == "priority_road_sign":
            cv2.fillConvexPoly(img, ((dia - np.array(head)) * 0.6 + np.array(head)).astype(np.int32), YELLOW)
        elif kind == "work_zone_sign":
            cv2.circle(img, (head[0], head[1] - round(r * 0.3)), max(1, round(r * 0.12)), BLACK, -1)
            cv2.line(
                img,
                (head[0], head[1] - round(r * 0.15)),
                (head[0] - round(r * 0.2), head[1] + round(r * 0.4)),
                BLACK,
                max(1, round(r / 9)),
            )
            cv2.line(
                img,
                (head[0] - round(r * 0.1), head[1]),
                (head[0] + round(r * 0.35), head[1] + round(r * 0.1)),
                BLACK,
                max(1, round(r / 10)),
            )
        else:
            _text(img, "!", head, r * 0.6, BLACK)
    elif kind == "school_sign":
        pent = np.array(
            [
                (head[0], head[1] - round(r)),
                (head[0] + round(r), head[1] - round(r / 3)),
                (head[0] + round(r), head[1] + round(r)),
                (head[0] - round(r), head[1] + round(r)),
                (head[0] - round(r), head[1] - round(r / 3)),
            ],
            np.int32,
        )
        cv2.fillConvexPoly(img, pent, (200, 220, 40))
        for fx in (-0.35, 0.3):
            px = head[0] + round(r * fx)
            cv2.circle(img, (px, head[1] - round(r * 0.25)), max(1, round(r / 7)), BLACK, -1)
            cv2.line(img, (px, head[1] - round(r / 6)), (px, head[1] + round(r / 2)), BLACK, max(1, round(r / 8)))
    elif kind == "regulatory_sign":
        rect = (head[0] - round(r * 0.8), head[1] - round(r), head[0] + round(r * 0.8), head[1] + round(r))
        cv2.rectangle(img, rect[:2], rect[2:], WHITE, -1)
        cv2.rectangle(img, rect[:2], rect[2:], RED, max(1, round(r / 10)))
        _text(img, "ONLY", (head[0], head[1] + round(r * 0.45)), r * 0.3, BLACK)
        cv2.arrowedLine(
            img, (head[0], head[1] + round(r * 0.15)), (head[0], head[1] - round(r * 0.6)), BLACK, max(1, round(r / 7))
        )
    elif kind == "wrong_way_sign":
        rect = (head[0] - round(r), head[1] - round(r * 0.6), head[0] + round(r), head[1] + round(r * 0.6))
        cv2.rectangle(img, rect[:2], rect[2:], RED, -1)
        _text(img, "WRONG", (head[0], head[1] - round(r * 0.22)), r * 0.32, WHITE)
        _text(img, "WAY", (head[0], head[1] + round(r * 0.3)), r * 0.32, WHITE)
    elif kind == "chevron_sign":
        rect = (head[0] - round(r * 0.7), head[1] - round(r), head[0] + round(r * 0.7), head[1] + round(r))
        cv2.rectangle(img, rect[:2], rect[2:], YELLOW, -1)
        chev = np.array(
            [
                (head[0] - round(r * 0.35), head[1] - round(r * 0.6)),
                (head[0] + round(r * 0.25), head[1]),
                (head[0] - round(r * 0.35), head[1] + round(r * 0.6)),
            ],
            np.int32,
        )
        cv2.polylines(img, [chev], False, BLACK, max(1, round(r / 5)))
    elif kind == "distance_marker":
        rect = (head[0] - round(r), head[1] - round(r * 0.8), head[0] + round(r), head[1] + round(r * 0.8))
        cv2.rectangle(img, rect[:2], rect[2:], GREEN, -1)
        _text(img, "12", head, r * 0.7, WHITE)
    elif kind == "zone_30_sign":
        rect = (head[0] - round(r), head[1] - round(r * 1.2), head[0] + round(r), head[1] + round(r * 1.2))
        cv2.rectangle(img, rect[:2], rect[2:], WHITE, -1)
        cv2.rectangle(img, rect[:2], rect[2:], BLACK, max(1, round(r / 14)))
        c2 = (head[0], head[1] - round(r * 0.35))
        cv2.circle(img, c2, round(r * 0.55), RED, -1)
        cv2.circle(img, c2, max(1, round(r * 0.42)), WHITE, -1)
        _text(img, "30", c2, r * 0.45, BLACK)
        _text(img, "ZONE", (head[0], head[1] + round(r * 0.7)), r * 0.35, BLACK)
    elif kind == "us_speed_limit_sign":
        rect = (head[0] - round(r * 0.75), head[1] - round(r), head[0] + round(r * 0.75), head[1] + round(r))
        cv2.rectangle(img, rect[:2], rect[2:], WHITE, -1)
        cv2.rectangle(img, rect[:2], rect[2:], BLACK, max(1, round(r / 14)))
        _text(img, "SPEED", (head[0], head[1] - round(r * 0.6)), r * 0.22, BLACK)
        _text(img, "LIMIT", (head[0], head[1] - round(r * 0.3)), r * 0.22, BLACK)
        _text(img, "25", (head[0], head[1] + round(r * 0.4)), r * 0.7, BLACK)
    elif kind == "bus_stop_sign":
        cv2.circle(img, head, round(r), YELLOW, -1)
        cv2.circle(img, head, round(r), GREEN, max(1, round(r / 10)))
        _text(img, "H", head, r * 0.8, GREEN)
    elif kind == "crossbuck":
        arm = round(r)
        for sgn in (-1, 1):
            a, b = (head[0] - arm, head[1] - sgn * arm // 2), (head[0] + arm, head[1] + sgn * arm // 2)
            cv2.line(img, a, b, RED, max(2, round(r / 4)))
            cv2.line(img, a, b, WHITE, max(1, round(r / 7)))
    else:
        raise ValueError(f"no drawing for sign kind {kind!r}")


def _draw_signal(img: np.ndarray, kind: str, box: tuple[int, int, int, int], t: float) -> None:
    import cv2

    x1, y1, x2, y2 = box
    bw, bh = max(1, x2 - x1), max(1, y2 - y1)
    cx = (x1 + x2) // 2
    if kind == "pedestrian_signal":
        hh = max(4, round(bh * 0.18))
        cv2.rectangle(img, (x1, y1), (x2, y1 + hh), BLACK, -1)
        walk = int(t * 2) % 2 == 0
        _text(
            img, "WALK" if walk else "DON'T", (cx, y1 + hh // 3), hh * 0.28, (240, 240, 240) if walk else (250, 120, 40)
        )
        _text(img, "" if walk else "WALK", (cx, y1 + 2 * hh // 3), hh * 0.28, (250, 120, 40))
        return
    lamps = 2 if kind == "ramp_meter" else 3
    hh = max(3 * lamps, round(bh * (0.26 if kind != "ramp_meter" else 0.6)))
    cv2.rectangle(img, (x1, y1), (x2, y1 + hh), BLACK, -1)
    lr = max(1, min(bw // 3, hh // (2 * lamps + 1)))
    on = {
        "red_light": 0,
        "flashing_red_light": 0 if int(t * 2) % 2 == 0 else None,
        "yellow_light": 1,
        "flashing_yellow_light": 1 if int(t * 2) % 2 == 0 else None,
        "green_light": 2,
        "traffic_light": 0,
        "red_arrow": 0,
        "green_arrow": 2,
        "ramp_meter": 0,
    }.get(kind)
    colours = [(255, 45, 35), (255, 200, 30), (40, 235, 110)][:lamps]
    for k, rgb in enumerate(colours):
        centre = (cx, y1 + round(hh * (k + 0.5) / lamps))
        lit = k == on
        cv2.circle(img, centre, lr, rgb if lit else tuple(int(c * 0.2) for c in rgb), -1)
        if lit and kind in ("red_arrow", "green_arrow"):
            cv2.circle(img, centre, lr, BLACK, -1)
            cv2.arrowedLine(
                img, (centre[0] + lr, centre[1]), (centre[0] - lr, centre[1]), rgb, max(1, lr // 2), tipLength=0.5
            )


def draw_marking(
    img: np.ndarray, kind: str, stage: Stage, ahead_m: float, *, lane_left_m: float = -1.75, lane_right_m: float = 1.75
) -> tuple[float, float, float, float] | None:
    """Draw a road marking ``ahead_m`` ahead in the ego's lane (between ``lane_left_m`` and ``lane_right_m``);
    return its box, or None when it is out of view."""
    import cv2

    if ahead_m < 2.0:
        return None

    def quad(l0: float, l1: float, d0: float, d1: float) -> np.ndarray:
        return np.array(
            [stage.ground(l0, d0), stage.ground(l1, d0), stage.ground(l1, d1), stage.ground(l0, d1)], np.int32
        )

    polys: list[tuple[np.ndarray, RGB]] = []
    d = ahead_m
    if kind == "crosswalk":
        x = lane_left_m - 3.5
        while x < lane_right_m + 3.5:
            polys.append((quad(x, x + 0.5, d, d + 4.0), WHITE))
            x += 1.0
    elif kind == "limit_line":
        polys.append((quad(lane_left_m, lane_right_m, d, d + 0.4), WHITE))
    elif kind == "bike_lane":
        polys.append((quad(lane_right_m - 1.4, lane_right_m, d - 6, d + 14), (40, 150, 80)))
        polys.append((quad(lane_right_m - 1.5, lane_right_m - 1.38, d - 6, d + 14), WHITE))
    elif kind == "center_left_turn_lane":
        polys.append((quad(lane_left_m - 0.12, lane_left_m, d - 5, d + 15), YELLOW))
        for k in range(2):
            polys.append((quad(lane_left_m - 3.5, lane_left_m - 3.38, d - 5 + k * 8, d - 1 + k * 8), YELLOW))
    elif kind == "hov_lane":
        c = (lane_left_m + lane_right_m) / 2
        dia = np.array(
            [
                stage.ground(c, d),
                stage.ground(c + 0.45, d + 2.5),
                stage.ground(c, d + 5),
                stage.ground(c - 0.45, d + 2.5),
            ],
            np.int32,
        )
        cv2.polylines(img, [dia], True, WHITE, 2)
        return _bounds(dia)
    elif kind in ("lane_arrows", "sharrow"):
        c = (lane_left_m + lane_right_m) / 2
        polys.append((quad(c - 0.12, c + 0.12, d, d + 3.0), WHITE))
        head = np.array(
            [stage.ground(c - 0.45, d + 3.0), stage.ground(c + 0.45, d + 3.0), stage.ground(c, d + 4.5)], np.int32
        )
        polys.append((head, WHITE))
        if kind == "sharrow":
            for k in range(2):
                chev = np.array(
                    [
                        stage.ground(c - 0.5, d + 5.5 + k),
                        stage.ground(c, d + 6.2 + k),
                        stage.ground(c + 0.5, d + 5.5 + k),
                    ],
                    np.int32,
                )
                cv2.polylines(img, [chev], False, WHITE, 2)
    elif kind == "yellow_lines":
        polys.append((quad(lane_left_m - 0.25, lane_left_m - 0.13, d - 5, d + 25), YELLOW))
        for k in range(4):
            polys.append((quad(lane_left_m - 0.06, lane_left_m + 0.06, d - 5 + 7 * k, d - 2 + 7 * k), YELLOW))
    elif kind == "road_markers":
        pts = []
        for k in range(8):
            dk = d + 3.0 * k
            for lat in (lane_left_m, lane_right_m):
                col, row = stage.ground(lat, dk)
                r = max(1, round(stage.px(0.12, dk)))
                cv2.circle(img, (round(col), round(row)), r, (250, 240, 200), -1)
                pts.append((col, row))
        return _bounds(np.array(pts, np.int32)) if pts else None
    else:
        raise ValueError(f"no drawing for marking kind {kind!r}")
    every = []
    for poly, rgb in polys:
        cv2.fillConvexPoly(img, poly, rgb, cv2.LINE_AA)
        every.append(poly)
    return _bounds(np.vstack(every)) if every else None


def _bounds(pts: np.ndarray) -> tuple[float, float, float, float]:
    return float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())
