"""Render drivemt's road-user sprites from the Noto Color Emoji font (run once by a developer; never at run time).

    apt-get install fonts-noto-color-emoji && .venv/bin/python scripts/render_sprites.py

Writes tools/data/sprites/<name>.png (RGBA, cropped, at most 96 px on a side). The images are Google's Noto
Emoji (Apache-2.0; see tools/data/sprites/NOTICE). The apt package is needed only to re-render them.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"
OUT = Path(__file__).resolve().parents[1] / "tools" / "data" / "sprites"
SPRITES = {
    "pedestrian": "\U0001f6b6",
    "person_standing": "\U0001f9cd",
    "runner": "\U0001f3c3",
    "cyclist": "\U0001f6b4",
    "bicycle": "\U0001f6b2",
    "wheelchair_user": "\U0001f9d1\u200d\U0001f9bd",
    "white_cane": "\U0001f9d1\u200d\U0001f9af",
    "guide_dog": "\U0001f9ae",
    "dog": "\U0001f415",
    "deer": "\U0001f98c",
    "cow": "\U0001f404",
    "sheep": "\U0001f411",
    "horse": "\U0001f40e",
    "car_front": "\U0001f698",
    "taxi_front": "\U0001f696",
    "bus_front": "\U0001f68d",
    "police_car_front": "\U0001f694",
    "car_side": "\U0001f697",
    "suv": "\U0001f699",
    "pickup": "\U0001f6fb",
    "bus": "\U0001f68c",
    "minibus": "\U0001f690",
    "ambulance": "\U0001f691",
    "fire_engine": "\U0001f692",
    "police_car": "\U0001f693",
    "truck": "\U0001f69a",
    "lorry": "\U0001f69b",
    "tractor": "\U0001f69c",
    "motorcycle": "\U0001f3cd",
    "motor_scooter": "\U0001f6f5",
    "scooter": "\U0001f6f4",
    "skateboard": "\U0001f6f9",
    "roller_skate": "\U0001f6fc",
    "collision": "\U0001f4a5",
    "barrier": "\U0001f6a7",
    "rock": "\U0001faa8",
    "package": "\U0001f4e6",
    "oil_drum": "\U0001f6e2",
    "locomotive": "\U0001f682",
    "tram": "\U0001f68b",
    "flag": "\U0001f6a9",
    "children_crossing": "\U0001f6b8",
}


def main() -> None:
    font = ImageFont.truetype(FONT, 109)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, char in SPRITES.items():
        im = Image.new("RGBA", (160, 160), (0, 0, 0, 0))
        ImageDraw.Draw(im).text((10, 10), char, font=font, embedded_color=True)
        box = im.getbbox()
        if box is None:
            raise SystemExit(f"the font drew nothing for {name}")
        im = im.crop(box)
        im.thumbnail((96, 96), Image.LANCZOS)
        im.save(OUT / f"{name}.png", optimize=True)
    print(f"{len(SPRITES)} sprites -> {OUT}")


if __name__ == "__main__":
    main()
