"""Draws the synthetic world's front-camera frames on the CPU: no assets, nothing downloaded.

Per case, what does not move relative to the camera is computed once: the road's perspective geometry (each
ground pixel's distance and lateral position), the ground's colours (asphalt, kerbs, sidewalks, verges), the
sky with its clouds and distant skyline, the ego's headlight pool, fog per row, and the weather's layers.
Per frame only what moves is drawn: the asphalt texture and dashed markings scroll with the ego's travel,
crossings and junctions approach, and the scenery (buildings, trees, lamp posts) and the objects (vehicles,
people, cyclists, signs, lights) are projected and drawn back to front, each shaded, fogged and lit by the
time of day. At 640x320 a clear-day frame takes a few milliseconds on one core.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from tools.mt.models import ObjectBox
from tools.mt.synth.camera import CAMERA_HEIGHT_M, Camera
from tools.mt.synth.driver import visibility_m
from tools.mt.synth.scene import LANE_W, SceneObject, SceneSpec

__all__ = ["SceneRenderer"]

RGB = tuple[int, int, int]
_DIMS: dict[str, tuple[float, float]] = {  # width, height in metres
    "car": (1.85, 1.45),
    "bus": (2.55, 3.2),
    "truck": (2.5, 3.4),
    "emergency": (2.0, 2.2),
    "pedestrian": (0.55, 1.75),
    "child": (0.45, 1.2),
    "wheelchair": (0.75, 1.35),
    "cyclist": (0.6, 1.75),
    "animal": (1.4, 1.3),
    "obstacle": (0.5, 0.75),
    "traffic_light": (0.45, 4.2),
    "stop_sign": (0.75, 2.4),
    "yield_sign": (0.8, 2.3),
    "speed_sign": (0.65, 2.4),
    "school_sign": (0.75, 2.5),
    "bus_stop_sign": (0.5, 2.6),
    "crossbuck": (1.2, 2.8),
    "warning_sign": (0.8, 2.4),
    "no_entry_sign": (0.65, 2.3),
}
_SKIN = [(232, 190, 160), (198, 140, 105), (141, 85, 60), (90, 60, 45)]


@dataclass
class _Scenery:
    kind: str  # building, tree, lamp
    s: float
    x: float  # lateral from the road centre (sign = side)
    length: float = 0.0
    height: float = 0.0
    depth: float = 0.0
    colour: RGB = (150, 150, 150)
    seed: int = 0


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    t = min(1.0, max(0.0, t))
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def _scale(c: RGB, k: float) -> RGB:
    return (min(255, round(c[0] * k)), min(255, round(c[1] * k)), min(255, round(c[2] * k)))


class SceneRenderer:
    """Draws one scene's frames.

    Args:
        spec: The scene.
        width: Frame width in pixels.
        height: Frame height in pixels.
    """

    def __init__(self, spec: SceneSpec, *, width: int = 640, height: int = 320) -> None:
        import cv2

        self.cv2 = cv2
        self.spec = spec
        self.cam = Camera(width, height)
        self.w, self.h = width, height
        self.rng = random.Random(spec.seed * 7919 + 17)
        self._light = {"day": 1.0, "dusk": 0.72, "night": 0.32}[spec.time]
        self._fog_rgb: RGB = (
            (200, 202, 205) if spec.time == "day" else (120, 118, 122) if spec.time == "dusk" else (40, 42, 48)
        )
        self._vis = visibility_m(spec)
        self._fog_k = 0.0
        if spec.weather == "fog":
            self._fog_k = 1.2 / max(self._vis, 8.0)
        elif spec.weather in ("rain", "snow"):
            self._fog_k = (0.6 if spec.weather == "rain" else 0.9) * spec.weather_strength / 60.0
        self._ground_setup()
        self._sky = self._draw_sky()
        self._scenery = self._make_scenery()
        self._weather_setup()

    # -- helpers -------------------------------------------------------------------------------------
    def _fog(self, c: RGB, d: float) -> RGB:
        """A colour seen ``d`` metres away through the weather, lit by the time of day (and, in the dark, by the
        ego's headlights, which light what is near)."""
        light = self._light
        if self.spec.time != "day":
            light = max(light, 0.85 * math.exp(-max(0.0, d - 20.0) / 15.0))
        lit = _scale(c, light)
        if self._fog_k <= 0:
            return lit
        return _mix(lit, self._fog_rgb, 1.0 - math.exp(-self._fog_k * max(d, 0.0)))

    def _lat(self, x: float, d: float) -> float:
        """Camera-frame lateral position of a road-frame lateral ``x`` at distance ``d``."""
        return x - self.spec.ego_x - 0.5 * self.spec.curvature * d * d

    def _pt(self, x: float, d: float, y: float = 0.0) -> tuple[int, int]:
        """Pixel of a road-frame point ``x`` right of the centre line, ``d`` ahead, ``y`` above the road."""
        cam = self.cam
        col = cam.col_of(self._lat(x, d), d)
        row = cam.horizon + cam.f * (CAMERA_HEIGHT_M - y) / max(d, 1e-3)
        return round(col), round(row)

    # -- the ground ----------------------------------------------------------------------------------
    def _ground_setup(self) -> None:
        cam, spec = self.cam, self.spec
        self.y0 = math.floor(cam.horizon) + 1
        rows = np.arange(self.y0, self.h, dtype=np.float32)
        self.d_row = (cam.f * CAMERA_HEIGHT_M / (rows - cam.horizon)).astype(np.float32)
        cols = np.arange(self.w, dtype=np.float32)
        lat_cam = (cols[None, :] - cam.cx) * self.d_row[:, None] / cam.f
        u = lat_cam + spec.ego_x + 0.5 * spec.curvature * self.d_row[:, None] ** 2
        self.u = u.astype(np.float32)
        half = spec.half_road
        au = np.abs(self.u)
        self.road = au <= half
        kerb = (au > half) & (au <= half + 0.25)
        walk = (au > half + 0.25) & (au <= half + 3.6)
        verge = au > half + 3.6
        rng = np.random.default_rng(spec.seed)
        snow = spec.weather == "snow" and spec.weather_strength > 0.3
        wet = spec.weather == "rain" and spec.weather_strength > 0.3
        asphalt = np.array((72, 72, 76) if not wet else (48, 50, 55), np.float32)
        if snow:
            asphalt = np.array((150, 150, 158), np.float32)
        base = np.zeros((*self.u.shape, 3), np.float32)
        base[self.road] = asphalt
        base[kerb] = (168, 166, 160) if not snow else (225, 225, 230)
        base[walk] = (150, 144, 135) if not snow else (232, 232, 238)
        grass = (88, 118, 62) if spec.road != "bus_stop" else (128, 122, 115)
        base[verge] = grass if not snow else (236, 236, 242)
        # Light falls off with distance at night; the ego's headlights light a pool ahead.
        shade = np.full(self.u.shape, self._light, np.float32)
        if spec.time == "night":
            pool = np.exp(-(((self.d_row[:, None] - 9.0) / 14.0) ** 2)) * np.exp(-((lat_cam / 3.5) ** 2))
            shade += 0.9 * pool.astype(np.float32)
        elif spec.time == "dusk":
            shade += 0.1 * np.exp(-self.d_row[:, None] / 20.0).astype(np.float32)
        base *= shade[..., None]
        if self._fog_k > 0:
            a = (1.0 - np.exp(-self._fog_k * self.d_row))[:, None, None].astype(np.float32)
            base = base * (1 - a) + np.array(self._fog_rgb, np.float32) * a
        self.ground = np.clip(base, 0, 255).astype(np.uint8)
        self.shade = shade
        # A scrolling noise texture: rows by metres along the road, columns by lateral centimetres.
        import cv2

        noise: np.ndarray = cv2.GaussianBlur(rng.normal(0.0, 1.0, (512, 512)).astype(np.float32), (0, 0), 0.8)
        noise += 0.5 * cv2.resize(
            rng.normal(0.0, 1.0, (64, 64)).astype(np.float32), (512, 512), interpolation=cv2.INTER_CUBIC
        )
        self.tex = (noise * (10.0 if not snow else 6.0)).astype(np.int16)
        self.tex_col = ((self.u * 30.0).astype(np.int32)) % 512
        fade = np.clip(1.0 - self.d_row / 60.0, 0.15, 1.0)[:, None] * (self.road | walk)
        self.tex_amp = (fade * np.minimum(self.shade, 1.2)).astype(np.float32)
        # Lane markings: lateral masks (static); dashes and crossings are per frame.
        lw = 0.12
        self.edge_line = (np.abs(au - (half - 0.2)) < lw / 2) & self.road
        self.centre_line = np.abs(self.u) < lw / 2
        self.lane_lines = np.zeros_like(self.road)
        if spec.lanes == 2:
            self.lane_lines = np.abs(au - LANE_W) < lw / 2
        mark = (235, 235, 230) if not snow else (250, 250, 250)
        self.mark_rgb = np.array(self._fog(mark, 15.0), np.uint8)
        self.centre_rgb = np.array(self._fog((235, 190, 40) if spec.lanes == 2 else mark, 15.0), np.uint8)

    def _ground(self, ego_s: float) -> np.ndarray:
        spec = self.spec
        g = self.ground.astype(np.int16)
        ri = ((self.d_row + ego_s) * 12.0).astype(np.int32) % 512
        tex = self.tex[ri[:, None], self.tex_col]
        g += (tex * self.tex_amp).astype(np.int16)[..., None]
        out = np.clip(g, 0, 255).astype(np.uint8)
        along = self.d_row + ego_s
        dash = (along % 9.0) < 3.5
        visible_rows = self.d_row < max(self._vis, 20.0)
        out[self.edge_line & visible_rows[:, None]] = self.mark_rgb
        centre = self.centre_line & (dash if spec.lanes == 1 else np.ones_like(dash))[:, None] & visible_rows[:, None]
        out[centre] = self.centre_rgb
        if spec.lanes == 2:
            out[self.lane_lines & dash[:, None] & visible_rows[:, None]] = self.mark_rgb
        d_f = spec.feature_s - ego_s
        if spec.road in ("intersection", "t_junction"):
            band = (self.d_row >= d_f) & (self.d_row <= d_f + 11.0)
            if band.any():
                rows = np.nonzero(band)[0]
                out[rows] = self._row_colour(rows, (72, 72, 76))
            stop = (self.d_row >= d_f - 1.4) & (self.d_row <= d_f - 0.9)
            out[stop[:, None] & (self.u > 0) & self.road] = self.mark_rgb
            if spec.road == "t_junction":
                beyond = self.d_row > d_f + 11.0
                if beyond.any():
                    rows = np.nonzero(beyond)[0]
                    out[rows] = self._row_colour(rows, (98, 112, 70) if spec.weather != "snow" else (236, 236, 242))
        elif spec.road in ("crosswalk", "school_zone"):
            band = (self.d_row >= d_f) & (self.d_row <= d_f + 4.0)
            stripes = (np.floor(self.u / 0.6) % 2 == 0) & self.road
            out[band[:, None] & stripes] = self.mark_rgb
        elif spec.road == "railroad_crossing":
            for r in (d_f + 0.8, d_f + 2.3):
                rail = np.abs(self.d_row - r) < 0.09
                out[rail[:, None] & (np.abs(self.u) < spec.half_road + 3.6)] = self._fog((95, 85, 80), r)
            sleepers = (self.d_row >= d_f + 0.5) & (self.d_row <= d_f + 2.6)
            out[sleepers[:, None] & ~self.road & (np.abs(self.u) < spec.half_road + 3.6)] = self._fog((80, 60, 45), d_f)
            stop = (self.d_row >= d_f - 3.2) & (self.d_row <= d_f - 2.8)
            out[stop[:, None] & (self.u > 0) & self.road] = self.mark_rgb
        return out

    def _row_colour(self, rows: np.ndarray, rgb: RGB) -> np.ndarray:
        """A colour over whole rows, lit and fogged by each row's distance: shape ``(rows, 1, 3)``."""
        light = self.shade[rows].mean(axis=1)[:, None]
        c = np.array(rgb, np.float32)[None, :] * light
        if self._fog_k > 0:
            a = (1.0 - np.exp(-self._fog_k * self.d_row[rows]))[:, None]
            c = c * (1 - a) + np.array(self._fog_rgb, np.float32)[None, :] * a
        return np.clip(c, 0, 255).astype(np.uint8)[:, None, :]

    # -- the sky ------------------------------------------------------------------------------------
    def _draw_sky(self) -> np.ndarray:
        cv2, spec = self.cv2, self.spec
        top, bottom = {
            "day": ((70, 125, 200), (185, 210, 235)),
            "dusk": ((60, 55, 110), (240, 150, 90)),
            "night": ((8, 10, 22), (28, 30, 48)),
        }[spec.time]
        if spec.weather in ("rain", "snow") and spec.weather_strength > 0.2:
            grey = (110, 112, 118) if spec.time == "day" else (50, 50, 58) if spec.time == "dusk" else (14, 14, 20)
            top, bottom = _mix(top, grey, 0.8), _mix(bottom, grey, 0.7)
        hh = self.y0 + 1
        t = np.linspace(0.0, 1.0, hh, dtype=np.float32)[:, None, None]
        sky = np.array(top, np.float32) * (1 - t) + np.array(bottom, np.float32) * t
        sky = np.repeat(sky, self.w, axis=1)
        rng = np.random.default_rng(spec.seed + 1)
        if spec.time != "night":
            clouds = rng.random((max(2, hh // 8), max(2, self.w // 8))).astype(np.float32)
            clouds = cv2.resize(clouds, (self.w, hh), interpolation=cv2.INTER_CUBIC)
            clouds = cv2.GaussianBlur(clouds, (0, 0), 6)
            cover = np.clip((clouds - 0.45) * 2.5, 0, 1)[..., None] * (1 - t * 0.6)
            white = np.array((240, 240, 245) if spec.time == "day" else (230, 170, 150), np.float32)
            sky = sky * (1 - 0.6 * cover) + white * 0.6 * cover
        else:
            stars = rng.random((hh, self.w)) > 0.9985
            sky[stars] = (200, 200, 210)
        # Distant skyline: a band of far buildings and trees, hazy.
        sky_u8 = np.clip(sky, 0, 255).astype(np.uint8)
        x = 0
        hz = round(self.cam.horizon)
        far = _mix(_scale((110, 115, 130), self._light), self._fog_rgb, 0.55 if self._fog_k == 0 else 0.95)
        while x < self.w:
            bw = int(rng.integers(max(6, self.w // 40), max(8, self.w // 12)))
            bh = int(rng.integers(max(3, self.h // 40), max(4, self.h // 9)))
            cv2.rectangle(sky_u8, (x, hz - bh), (x + bw, hz + 1), far, -1)
            x += bw + int(rng.integers(0, max(2, self.w // 30)))
        if self._fog_k > 0:
            a = 1.0 - math.exp(-self._fog_k * 400.0)
            sky_u8 = (sky_u8 * (1 - a) + np.array(self._fog_rgb, np.float32) * a).astype(np.uint8)
        return sky_u8

    # -- scenery -------------------------------------------------------------------------------------
    def _make_scenery(self) -> list[_Scenery]:
        rng, spec = self.rng, self.spec
        items: list[_Scenery] = []
        half = spec.half_road
        for side in (-1, 1):
            s = rng.uniform(-5.0, 10.0)
            while s < 160.0:
                if spec.road in ("intersection", "t_junction") and spec.feature_s - 8 < s < spec.feature_s + 14:
                    s = spec.feature_s + 14
                    continue
                length = rng.uniform(8.0, 22.0)
                setback = half + 3.6 + rng.uniform(1.5, 6.0)
                if rng.random() < 0.7:
                    colour = rng.choice(
                        [
                            (190, 170, 150),
                            (160, 150, 140),
                            (200, 190, 170),
                            (140, 90, 70),
                            (170, 175, 180),
                            (215, 205, 180),
                        ]
                    )
                    items.append(
                        _Scenery(
                            "building",
                            s,
                            side * setback,
                            length,
                            rng.uniform(6.0, 18.0),
                            rng.uniform(6.0, 12.0),
                            colour,
                            rng.randrange(1 << 30),
                        )
                    )
                else:
                    for k in range(rng.randint(1, 3)):
                        items.append(
                            _Scenery(
                                "tree",
                                s + k * 5.0,
                                side * (half + 3.6 + rng.uniform(0.5, 2.5)),
                                height=rng.uniform(5, 9),
                                seed=rng.randrange(1 << 30),
                            )
                        )
                s += length + rng.uniform(1.0, 6.0)
            lamp = rng.uniform(5.0, 20.0)
            while lamp < 160.0:
                items.append(_Scenery("lamp", lamp, side * (half + 0.6), height=6.5))
                lamp += rng.uniform(25.0, 35.0)
        return items

    def _draw_building(self, img: np.ndarray, b: _Scenery, ego_s: float) -> None:
        cv2 = self.cv2
        d1, d2 = b.s - ego_s, b.s + b.length - ego_s
        if d2 < 2.0:
            return
        d1 = max(d1, 2.0)
        x_face = b.x
        near_col = self._pt(x_face, d1)
        if not (-self.w < near_col[0] < 2 * self.w):
            return
        face = np.array(
            [
                self._pt(x_face, d1),
                self._pt(x_face, d2),
                self._pt(x_face, d2, b.height),
                self._pt(x_face, d1, b.height),
            ],
            np.int32,
        )
        dmid = (d1 + d2) / 2
        shade = 0.78 if b.x > 0 else 0.9
        cv2.fillConvexPoly(img, face, self._fog(_scale(b.colour, shade), dmid))
        # The end facing the camera.
        x_back = b.x + (b.depth if b.x > 0 else -b.depth)
        end = np.array(
            [
                self._pt(x_face, d1),
                self._pt(x_back, d1),
                self._pt(x_back, d1, b.height),
                self._pt(x_face, d1, b.height),
            ],
            np.int32,
        )
        cv2.fillConvexPoly(img, end, self._fog(b.colour, d1))
        # Windows in a grid on the long face.
        if self.cam.pixels(1.2, dmid) < 2.0:
            return
        rng = random.Random(b.seed)
        lit = self.spec.time != "day"
        polys: list[np.ndarray] = []
        lit_polys: list[np.ndarray] = []
        floors = int(b.height // 3.2)
        bays = int(b.length // 3.0)
        for f in range(floors):
            y_lo, y_hi = 1.0 + f * 3.2, 2.4 + f * 3.2
            for k in range(bays):
                s_lo = b.s + 0.8 + k * 3.0
                s_hi = s_lo + 1.4
                if s_lo - ego_s < 2.0:
                    continue
                quad = [
                    self._pt(x_face, s_lo - ego_s, y_lo),
                    self._pt(x_face, s_hi - ego_s, y_lo),
                    self._pt(x_face, s_hi - ego_s, y_hi),
                    self._pt(x_face, s_lo - ego_s, y_hi),
                ]
                (lit_polys if lit and rng.random() < 0.45 else polys).append(np.array(quad, np.int32))
        if polys:
            cv2.fillPoly(img, polys, self._fog((55, 65, 80), dmid))
        if lit_polys:
            glow = (255, 210, 130) if self.spec.time == "night" else (230, 200, 150)
            cv2.fillPoly(img, lit_polys, _mix(glow, self._fog_rgb, 1 - math.exp(-self._fog_k * dmid)))

    def _draw_tree(self, img: np.ndarray, t: _Scenery, ego_s: float) -> None:
        cv2 = self.cv2
        d = t.s - ego_s
        if d < 2.0:
            return
        base = self._pt(t.x, d)
        top = self._pt(t.x, d, t.height * 0.45)
        r = max(1, round(self.cam.pixels(0.18, d)))
        cv2.line(img, base, top, self._fog((80, 60, 40), d), r)
        rng = random.Random(t.seed)
        canopy = round(self.cam.pixels(t.height * 0.28, d))
        if canopy < 1:
            return
        for k in range(4):
            c = (40 + rng.randrange(30), 90 + rng.randrange(50), 35 + rng.randrange(25))
            if self.spec.weather == "snow" and self.spec.weather_strength > 0.3 and k == 3:
                c = (230, 232, 238)
            cx = self._pt(t.x + rng.uniform(-1.0, 1.0), d, t.height * (0.62 + 0.12 * rng.random()))
            cv2.circle(img, cx, max(1, round(canopy * rng.uniform(0.6, 0.95))), self._fog(c, d), -1, cv2.LINE_AA)

    def _draw_lamp(
        self, img: np.ndarray, lamp: _Scenery, ego_s: float, glows: list[tuple[tuple[int, int], int, RGB]]
    ) -> None:
        cv2 = self.cv2
        d = lamp.s - ego_s
        if d < 2.0:
            return
        base, top = self._pt(lamp.x, d), self._pt(lamp.x, d, lamp.height)
        arm = self._pt(lamp.x - math.copysign(1.4, lamp.x), d, lamp.height)
        width = max(1, round(self.cam.pixels(0.14, d)))
        grey = self._fog((85, 88, 92), d)
        cv2.line(img, base, top, grey, width)
        cv2.line(img, top, arm, grey, max(1, width - 1))
        if self.spec.time != "day":
            cv2.ellipse(
                img,
                arm,
                (max(1, round(self.cam.pixels(0.35, d))), max(1, round(self.cam.pixels(0.12, d)))),
                0,
                0,
                360,
                (255, 236, 190),
                -1,
            )
            glows.append((arm, max(2, round(self.cam.pixels(0.6, d))), (255, 215, 140)))

    # -- objects -------------------------------------------------------------------------------------
    def _box(self, obj: SceneObject, x: float, d: float) -> tuple[int, int, int, int]:
        w, h = _DIMS[obj.kind]
        w, h = w * obj.scale, h * obj.scale
        if obj.kind in ("car", "bus", "truck", "emergency") and abs(obj.lateral_speed) > 0.5:
            w = {"car": 4.5, "bus": 12.0, "truck": 9.0, "emergency": 5.5}[obj.kind]
        cl, rb = self._pt(x - w / 2, d), self._pt(x + w / 2, d, h)
        return cl[0], rb[1], rb[0], cl[1]

    def _draw_object(
        self, img: np.ndarray, obj: SceneObject, x: float, d: float, glows: list[tuple[tuple[int, int], int, RGB]]
    ) -> tuple[int, int, int, int]:
        cv2 = self.cv2
        x1, y1, x2, y2 = self._box(obj, x, d)
        bw, bh = max(1, x2 - x1), max(1, y2 - y1)
        kind = obj.kind
        c = self._fog(obj.colour, d)
        dark = self._fog((25, 25, 28), d)
        night = self.spec.time == "night"
        if kind in ("car", "bus", "truck", "emergency"):
            # A soft shadow, then the body from behind (same direction), the front (oncoming) or the side.
            cv2.ellipse(
                img, ((x1 + x2) // 2, y2), (bw // 2 + 1, max(1, bh // 12)), 0, 0, 360, self._fog((30, 30, 32), d), -1
            )
            side = abs(obj.lateral_speed) > 0.5
            body_top = y1 + (bh * (0.45 if kind == "car" else 0.08))
            cv2.rectangle(img, (x1, round(body_top)), (x2, y2 - max(1, bh // 10)), c, -1)
            hi = _scale(c, 1.25)
            cv2.rectangle(img, (x1, round(body_top)), (x2, round(body_top + bh * 0.08)), hi, -1)
            if kind == "car":
                inset = bw * (0.14 if not side else 0.2)
                cabin = np.array(
                    [(x1 + inset, body_top), (x2 - inset, body_top), (x2 - inset * 1.6, y1), (x1 + inset * 1.6, y1)],
                    np.int32,
                )
                cv2.fillConvexPoly(img, cabin, c)
                glass = np.array(
                    [
                        (x1 + inset * 1.3, body_top - 1),
                        (x2 - inset * 1.3, body_top - 1),
                        (x2 - inset * 1.75, y1 + bh * 0.07),
                        (x1 + inset * 1.75, y1 + bh * 0.07),
                    ],
                    np.int32,
                )
                cv2.fillConvexPoly(img, glass, self._fog((40, 55, 70) if not night else (15, 18, 24), d))
            else:
                for k in range(1, 5 if kind == "bus" else 2):
                    wy = y1 + bh * (0.12 + 0.0 * k)
                    cv2.rectangle(
                        img,
                        (x1 + round(bw * 0.08), round(wy)),
                        (x2 - round(bw * 0.08), round(wy + bh * 0.3)),
                        self._fog((45, 60, 75), d),
                        -1,
                    )
                    break
            if kind == "emergency":
                bar = (round(x1 + bw * 0.3), round(body_top - bh * 0.08), round(x2 - bw * 0.3), round(body_top))
                cv2.rectangle(img, bar[:2], (bar[0] + (bar[2] - bar[0]) // 2, bar[3]), (255, 30, 30), -1)
                cv2.rectangle(img, (bar[0] + (bar[2] - bar[0]) // 2, bar[1]), bar[2:], (40, 70, 255), -1)
                glows.append((((x1 + x2) // 2, bar[1]), max(2, bw // 3), (255, 60, 60)))
            # Wheels.
            wh = max(1, bh // 7)
            if side:
                r = max(1, round(bh * 0.16))
                for fx in (0.18, 0.82):
                    cv2.circle(img, (round(x1 + bw * fx), y2 - r), r, dark, -1)
            else:
                cv2.rectangle(img, (x1, y2 - wh), (x1 + max(1, bw // 7), y2), dark, -1)
                cv2.rectangle(img, (x2 - max(1, bw // 7), y2 - wh), (x2, y2), dark, -1)
            lamp_y = round(body_top + bh * 0.16)
            lw, lh = max(1, bw // 7), max(1, bh // 12)
            if obj.speed < 0:  # oncoming: headlights
                col = (255, 250, 220) if night or self.spec.time == "dusk" else self._fog((230, 230, 220), d)
                for lx in (x1 + bw // 12, x2 - bw // 12 - lw):
                    cv2.rectangle(img, (lx, lamp_y), (lx + lw, lamp_y + lh), col, -1)
                    if night:
                        glows.append(((lx + lw // 2, lamp_y), max(2, bw // 4), (255, 245, 210)))
            elif not side:  # from behind: tail lights and a plate
                braking = obj.speed < 1.0
                col = (255, 40, 30) if (night or braking) else self._fog((170, 20, 20), d)
                for lx in (x1 + 1, x2 - lw - 1):
                    cv2.rectangle(img, (lx, lamp_y), (lx + lw, lamp_y + lh), col, -1)
                    if night or braking:
                        glows.append(((lx + lw // 2, lamp_y + lh // 2), max(2, bw // 6), (255, 50, 40)))
                pw = max(1, bw // 5)
                cx = (x1 + x2) // 2
                cv2.rectangle(
                    img,
                    (cx - pw // 2, lamp_y + lh + 1),
                    (cx + pw // 2, lamp_y + lh + 1 + max(1, lh)),
                    self._fog((230, 230, 225), d),
                    -1,
                )
        elif kind in ("pedestrian", "child", "wheelchair", "cyclist"):
            rng = random.Random(f"{self.spec.seed}:{obj.s}:{obj.x}")
            skin = self._fog(rng.choice(_SKIN), d)
            trousers = self._fog(rng.choice([(40, 45, 70), (60, 60, 60), (90, 70, 50), (30, 30, 35)]), d)
            cx = (x1 + x2) // 2
            head_r = max(1, round(bh * (0.075 if kind != "child" else 0.1)))
            if kind == "cyclist":
                r = max(1, round(bh * 0.2))
                for fx in (-0.9, 0.9):
                    cv2.circle(
                        img,
                        (round(cx + fx * r * (1 if abs(obj.lateral_speed) > 0.3 else 0.15)), y2 - r),
                        r,
                        dark,
                        max(1, r // 4),
                    )
                cv2.line(img, (cx, y2 - r), (cx, round(y1 + bh * 0.45)), self._fog((160, 160, 170), d), max(1, bw // 6))
                cv2.rectangle(img, (x1 + bw // 5, round(y1 + bh * 0.18)), (x2 - bw // 5, round(y1 + bh * 0.5)), c, -1)
                cv2.circle(img, (cx, round(y1 + head_r)), head_r, skin, -1)
                cv2.circle(img, (cx, round(y1 + head_r * 0.8)), head_r, self._fog((230, 230, 230), d), -1)  # helmet
            elif kind == "wheelchair":
                r = max(1, round(bh * 0.28))
                cv2.circle(img, (cx, y2 - r), r, dark, max(1, r // 5))
                cv2.rectangle(img, (x1 + bw // 4, round(y1 + bh * 0.22)), (x2 - bw // 4, round(y1 + bh * 0.62)), c, -1)
                cv2.circle(img, (cx, round(y1 + head_r)), head_r, skin, -1)
            else:
                leg_top = round(y1 + bh * 0.52)
                phase = (obj.s + obj.x) % 1.0
                spread = max(1, round(bw * 0.25 * (0.4 + phase)))
                lw_ = max(1, bw // 4)
                cv2.line(img, (cx, leg_top), (cx - spread, y2), trousers, lw_)
                cv2.line(img, (cx, leg_top), (cx + spread, y2), trousers, lw_)
                cv2.rectangle(img, (x1 + bw // 6, round(y1 + bh * 0.16)), (x2 - bw // 6, leg_top), c, -1)
                cv2.circle(img, (cx, round(y1 + head_r)), head_r, skin, -1)
                cv2.ellipse(
                    img,
                    (cx, round(y1 + head_r * 0.7)),
                    (head_r, max(1, head_r // 2)),
                    0,
                    180,
                    360,
                    self._fog((40, 30, 25), d),
                    -1,
                )
        elif kind == "animal":
            brown = self._fog((120, 80, 45), d)
            cv2.ellipse(img, ((x1 + x2) // 2, round(y1 + bh * 0.4)), (bw // 2, max(1, bh // 5)), 0, 0, 360, brown, -1)
            for fx in (0.2, 0.35, 0.65, 0.8):
                cv2.line(
                    img, (round(x1 + bw * fx), round(y1 + bh * 0.5)), (round(x1 + bw * fx), y2), brown, max(1, bw // 14)
                )
            cv2.circle(img, (x2, round(y1 + bh * 0.2)), max(1, bh // 7), brown, -1)
        elif kind == "obstacle":
            cone = np.array([(x1, y2), (x2, y2), ((x1 + x2) // 2, y1)], np.int32)
            cv2.fillConvexPoly(img, cone, self._fog((245, 110, 20), d))
            cv2.line(
                img,
                (x1 + bw // 4, (y1 + y2) // 2),
                (x2 - bw // 4, (y1 + y2) // 2),
                self._fog((240, 240, 240), d),
                max(1, bh // 8),
            )
        else:
            self._draw_sign(img, obj, x, d, (x1, y1, x2, y2), glows)
        return x1, y1, x2, y2

    def _draw_sign(
        self,
        img: np.ndarray,
        obj: SceneObject,
        x: float,
        d: float,
        box: tuple[int, int, int, int],
        glows: list[tuple[tuple[int, int], int, RGB]],
    ) -> None:
        cv2 = self.cv2
        x1, y1, x2, y2 = box
        bw, bh = max(1, x2 - x1), max(1, y2 - y1)
        cx = (x1 + x2) // 2
        pole = self._fog((110, 112, 116), d)
        pw = max(1, bw // 8)
        cv2.line(img, (cx, y2), (cx, y1 + bw // 2), pole, pw)
        kind = obj.kind
        r = max(1, bw // 2)
        head = (cx, y1 + r)
        lum = 1.0 if self.spec.time == "day" else 1.6  # retro-reflective signs in the headlights
        red = self._fog(_scale((200, 25, 30), lum), d)
        white = self._fog(_scale((235, 235, 235), lum), d)
        if kind == "traffic_light":
            hw = max(1, bw)
            hh = max(3, round(bh * 0.26))
            cv2.rectangle(img, (x1, y1), (x2, y1 + hh), self._fog((25, 25, 25), d), -1)
            lr = max(1, min(hw // 3, hh // 7))
            for k, colour in enumerate(("red", "yellow", "green")):
                centre = (cx, y1 + round(hh * (0.2 + 0.3 * k)))
                on = obj.state == colour
                rgb = {"red": (255, 45, 35), "yellow": (255, 200, 30), "green": (40, 235, 110)}[colour]
                cv2.circle(img, centre, lr, rgb if on else self._fog(_scale(rgb, 0.22), d), -1)
                if on:
                    glows.append((centre, max(2, lr * 3), rgb))
        elif kind == "stop_sign":
            pts = np.array(
                [
                    (
                        head[0] + r * math.cos(math.pi / 8 + k * math.pi / 4),
                        head[1] + r * math.sin(math.pi / 8 + k * math.pi / 4),
                    )
                    for k in range(8)
                ],
                np.int32,
            )
            cv2.fillConvexPoly(img, pts, red)
            cv2.polylines(img, [pts], True, white, max(1, r // 8))
            if r >= 8:
                cv2.putText(
                    img,
                    "STOP",
                    (head[0] - round(r * 0.8), head[1] + round(r * 0.22)),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    r / 28,
                    white,
                    max(1, r // 10),
                    cv2.LINE_AA,
                )
        elif kind in ("speed_sign", "no_entry_sign"):
            cv2.circle(img, head, r, red, -1)
            if kind == "speed_sign":
                cv2.circle(img, head, max(1, round(r * 0.78)), white, -1)
                if r >= 7:
                    text = obj.state or ""
                    cv2.putText(
                        img,
                        text,
                        (head[0] - round(r * 0.62), head[1] + round(r * 0.32)),
                        cv2.FONT_HERSHEY_SIMPLEX,
                        r / 22,
                        self._fog((20, 20, 20), d),
                        max(1, r // 8),
                        cv2.LINE_AA,
                    )
            else:
                cv2.rectangle(
                    img,
                    (head[0] - round(r * 0.7), head[1] - max(1, r // 5)),
                    (head[0] + round(r * 0.7), head[1] + max(1, r // 5)),
                    white,
                    -1,
                )
        elif kind in ("yield_sign", "warning_sign"):
            up = kind == "warning_sign"
            tri = np.array(
                [
                    (head[0] - r, head[1] - r if not up else head[1] + r),
                    (head[0] + r, head[1] - r if not up else head[1] + r),
                    (head[0], head[1] + r if not up else head[1] - r),
                ],
                np.int32,
            )
            cv2.fillConvexPoly(img, tri, red)
            inner = ((tri - np.array(head)) * 0.62 + np.array(head)).astype(np.int32)
            cv2.fillConvexPoly(img, inner, white)
        elif kind == "school_sign":
            pent = np.array(
                [
                    (head[0], head[1] - r),
                    (head[0] + r, head[1] - r // 3),
                    (head[0] + r, head[1] + r),
                    (head[0] - r, head[1] + r),
                    (head[0] - r, head[1] - r // 3),
                ],
                np.int32,
            )
            cv2.fillConvexPoly(img, pent, self._fog(_scale((200, 220, 40), lum), d))
            fig = self._fog((20, 20, 20), d)
            for fx in (-0.35, 0.3):
                px = head[0] + round(r * fx)
                cv2.circle(img, (px, head[1] - r // 4), max(1, r // 7), fig, -1)
                cv2.line(img, (px, head[1] - r // 6), (px, head[1] + r // 2), fig, max(1, r // 8))
        elif kind == "bus_stop_sign":
            cv2.circle(img, head, r, self._fog(_scale((240, 200, 40), lum), d), -1)
            if r >= 5:
                cv2.putText(
                    img,
                    "H",
                    (head[0] - round(r * 0.45), head[1] + round(r * 0.45)),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    r / 18,
                    self._fog((20, 120, 60), d),
                    max(1, r // 6),
                    cv2.LINE_AA,
                )
        elif kind == "crossbuck":
            arm = max(2, round(bw * 0.5))
            t = max(1, bw // 7)
            centre = (cx, y1 + arm)
            for sgn in (-1, 1):
                cv2.line(
                    img,
                    (centre[0] - arm, centre[1] - sgn * arm // 2),
                    (centre[0] + arm, centre[1] + sgn * arm // 2),
                    red,
                    t + 2,
                )
                cv2.line(
                    img,
                    (centre[0] - arm, centre[1] - sgn * arm // 2),
                    (centre[0] + arm, centre[1] + sgn * arm // 2),
                    white,
                    t,
                )

    # -- weather ---------------------------------------------------------------------------------------
    def _weather_setup(self) -> None:
        cv2, spec = self.cv2, self.spec
        self._layers: list[np.ndarray] = []
        if spec.weather == "rain" and spec.weather_strength > 0:
            rng = np.random.default_rng(spec.seed + 2)
            n = int(self.w * self.h / 900 * (0.4 + spec.weather_strength))
            for _ in range(3):
                layer = np.zeros((self.h, self.w), np.uint8)
                xs = rng.integers(0, self.w, n)
                ys = rng.integers(0, self.h, n)
                ln = rng.integers(self.h // 40 + 3, self.h // 14 + 5, n)
                for x, y, length in zip(xs, ys, ln, strict=True):
                    cv2.line(layer, (int(x), int(y)), (int(x) - int(length) // 5, int(y) + int(length)), 160, 1)
                self._layers.append(layer)
        elif spec.weather == "snow" and spec.weather_strength > 0:
            rng = np.random.default_rng(spec.seed + 3)
            n = int(self.w * self.h / 500 * (0.3 + spec.weather_strength))
            self._flakes = (
                rng.random(n) * self.w,
                rng.random(n) * self.h,
                rng.integers(1, max(2, self.h // 110) + 1, n),
                rng.random(n) * 40 + 20,
            )

    def _apply_weather(self, img: np.ndarray, t: float, index: int) -> np.ndarray:
        cv2, spec = self.cv2, self.spec
        if spec.weather == "rain" and self._layers:
            layer = self._layers[index % len(self._layers)]
            alpha = 0.55 * spec.weather_strength
            tint = np.array((200, 205, 215) if spec.time == "day" else (120, 125, 135), np.float32)
            a = layer[..., None].astype(np.float32) * (alpha / 255.0)
            img = (img * (1 - a) + tint * a).astype(np.uint8)
        elif spec.weather == "snow" and spec.weather_strength > 0:
            xs, ys, rs, fall = self._flakes
            yy = ((ys + fall * t * 3.0) % self.h).astype(np.int32)
            xx = ((xs + np.sin(t * 2 + ys) * 3) % self.w).astype(np.int32)
            colour = (245, 245, 250) if spec.time != "night" else (160, 160, 170)
            for x, y, r in zip(xx, yy, rs, strict=True):
                cv2.circle(img, (int(x), int(y)), int(r), colour, -1)
        return img

    # -- one frame ------------------------------------------------------------------------------------
    def frame(self, t: float, ego_s: float, index: int = 0) -> tuple[np.ndarray, list[ObjectBox]]:
        """The frame at ``t`` seconds with the ego ``ego_s`` metres along the road, and its objects' boxes.

        Returns:
            An RGB ``uint8`` image and the ground-truth boxes of every object in it.
        """
        cv2 = self.cv2
        img = np.empty((self.h, self.w, 3), np.uint8)
        img[: self.y0] = self._sky[: self.y0]
        img[self.y0 :] = self._ground(ego_s)
        glows: list[tuple[tuple[int, int], int, RGB]] = []
        drawables: list[tuple[float, int, Any]] = []
        for i, sc in enumerate(self._scenery):
            d = sc.s - ego_s
            if sc.kind == "building":
                d = max(d, 2.0) if sc.s + sc.length - ego_s > 2.0 else -1.0
            if 2.0 <= d <= 170.0:
                drawables.append((d + (sc.length if sc.kind == "building" else 0.0), i, sc))
        for i, obj in enumerate(self.spec.objects):
            s, x = obj.at(t)
            d = s - ego_s
            if 2.0 <= d <= 170.0:
                drawables.append((d, 10_000 + i, (obj, x, d)))
        drawables.sort(key=lambda it: -it[0])
        truth: list[ObjectBox] = []
        for _, key, item in drawables:
            if isinstance(item, _Scenery):
                if item.kind == "building":
                    self._draw_building(img, item, ego_s)
                elif item.kind == "tree":
                    self._draw_tree(img, item, ego_s)
                else:
                    self._draw_lamp(img, item, ego_s, glows)
                continue
            obj, x, d = item
            x1, y1, x2, y2 = self._draw_object(img, obj, x, d, glows)
            cx1, cy1, cx2, cy2 = max(0, x1), max(0, y1), min(self.w - 1, x2), min(self.h - 1, y2)
            if cx2 > cx1 and cy2 > cy1:
                truth.append(
                    ObjectBox(
                        kind=obj.kind,
                        x1=cx1,
                        y1=cy1,
                        x2=cx2,
                        y2=cy2,
                        distance_m=round(d, 2),
                        state=obj.state,
                        track=key - 10_000,
                    )
                )
        if glows:
            layer = np.zeros_like(img)
            for centre, radius, rgb in glows:
                cv2.circle(layer, centre, radius, rgb, -1, cv2.LINE_AA)
            k = max(3, (self.w // 80) | 1)
            layer = cv2.GaussianBlur(layer, (k, k), 0)
            img = cv2.add(img, (layer * (0.75 if self.spec.time != "day" else 0.35)).astype(np.uint8))
        img = self._apply_weather(img, t, index)
        return img, truth
