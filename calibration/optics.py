"""How high to mount the camera: a card's width in pixels at each height, from the lens's field
of view. Pure functions, and `python -m calibration.optics` prints the table of docs/build.md.

A pinhole (rectilinear) camera straight above the table sees a strip 2 h tan(hfov / 2) wide
at height h, spread over the frame's width in pixels; a card of width w in the middle of the
picture is then w / strip * frame_px wide. A real lens bends a little (the wide one more:
a card near the picture's edge looks smaller than in the middle), so the figures hold for the
middle of the picture, where the pile is. The wizard's camera step measures the real width.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

# The card widths the referee reads, and the ones the camera step aims at (calibration/
# camera_check.py's CARD_PX; a test keeps the two the same: that module needs OpenCV).
READ_PX = (120, 400)
AIM_PX = (130, 300)
POKER_CARD_MM = 63.0  # 2.5 in; a bridge-size card is 57 mm (2.25 in)


@dataclass(frozen=True)
class Camera:
    """A camera as the referee uses it: its name, the frame it captures and its field of view."""

    name: str
    frame: tuple[int, int]  # the frame the referee reads (width, height), px
    hfov_deg: float  # horizontal field of view at that frame

    @property
    def vfov_deg(self) -> float:
        """The vertical field of view, from the horizontal one and the frame's shape (square pixels)."""
        w, h = self.frame
        return math.degrees(2 * math.atan(math.tan(math.radians(self.hfov_deg) / 2) * h / w))


def hfov_from_diagonal(dfov_deg: float, aspect: tuple[int, int]) -> float:
    """A horizontal field of view from the diagonal one webcams are sold by (aspect: 16, 9)."""
    w, h = aspect
    half = math.tan(math.radians(dfov_deg) / 2) * w / math.hypot(w, h)
    return math.degrees(2 * math.atan(half))


# The referee's frame is 1280x720 on every camera (hardware/camera.py). The Camera Module 3's
# 16:9 sensor gives that frame its whole field of view (a binned mode, not a crop).
CAMERAS = (
    # Raspberry Pi's datasheet: 66 x 41 degrees (standard), 102 x 67 degrees (wide).
    Camera("Camera Module 3", (1280, 720), 66.0),
    Camera("Camera Module 3 Wide", (1280, 720), 102.0),
    # A common 1280x720 webcam (Logitech C270 class): sold as 55 degrees diagonal.
    Camera("USB webcam 1280x720 (55° diagonal)", (1280, 720), round(hfov_from_diagonal(55.0, (16, 9)), 1)),
)
HEIGHTS_CM = (20, 25, 30, 35, 40, 45, 50, 60, 70, 80)


def view_mm(camera: Camera, height_mm: float) -> tuple[float, float]:
    """The table area in view (width, depth) in mm, at `height_mm` above the table."""
    w = 2 * height_mm * math.tan(math.radians(camera.hfov_deg) / 2)
    return w, w * camera.frame[1] / camera.frame[0]


def card_px(camera: Camera, height_mm: float, card_mm: float = POKER_CARD_MM) -> float:
    """A card's width in pixels in the middle of the picture, the camera `height_mm` above it."""
    if height_mm <= 0 or card_mm <= 0:
        raise ValueError(f"height and card width must be positive, not {height_mm} and {card_mm}")
    return card_mm / view_mm(camera, height_mm)[0] * camera.frame[0]


def height_for(camera: Camera, px: float, card_mm: float = POKER_CARD_MM) -> float:
    """The height (mm) at which a card is `px` wide: card_px's inverse."""
    return card_mm * camera.frame[0] / (px * 2 * math.tan(math.radians(camera.hfov_deg) / 2))


def heights_table(
    cameras: Sequence[Camera] = CAMERAS,
    heights_cm: Sequence[float] = HEIGHTS_CM,
    card_mm: float = POKER_CARD_MM,
) -> str:
    """The Markdown table of docs/build.md: per height, each camera's card width and view."""
    head = "| height | " + " | ".join(c.name for c in cameras) + " |"
    lines = [head, "| --- |" + " --- |" * len(cameras)]
    for h in heights_cm:
        cells = []
        for c in cameras:
            px = card_px(c, h * 10, card_mm)
            w, d = view_mm(c, h * 10)
            sees = f"sees {w / 10:.0f} × {d / 10:.0f} cm"
            text = f"{px:.0f} px, {sees}"
            if AIM_PX[0] <= px <= AIM_PX[1]:
                text = f"**{text}**"
            elif not READ_PX[0] <= px <= READ_PX[1]:
                text = f"{px:.0f} px (too {'small' if px < READ_PX[0] else 'big'}), {sees}"
            cells.append(text)
        lines.append(f"| {h:g} cm | " + " | ".join(cells) + " |")
    best = ", ".join(
        f"{c.name} {height_for(c, AIM_PX[1], card_mm) / 10:.0f} to "
        f"{height_for(c, AIM_PX[0], card_mm) / 10:.0f} cm"
        for c in cameras
    )
    lines += [
        "",
        f"Bold: in the camera step's aim ({AIM_PX[0]} to {AIM_PX[1]} px). Too small or too big: outside "
        f"what the recogniser reads ({READ_PX[0]} to {READ_PX[1]} px). In the aim: {best}.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m calibration.optics",
        description="A card's width in pixels at each camera height, for each camera (docs/build.md).",
    )
    parser.add_argument(
        "--card-mm", type=float, default=POKER_CARD_MM, help="the card's width (default 63: poker size)"
    )
    args = parser.parse_args(argv)
    if not 20 <= args.card_mm <= 150:
        print(f"--card-mm: a playing card is 20 to 150 mm wide, not {args.card_mm:g}", file=sys.stderr)
        return 2
    print(heights_table(card_mm=args.card_mm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
