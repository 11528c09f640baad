"""What the wizard's kiosk page shows of a step: pure functions over the steps' prompts.

The steps have three kinds of prompt (`steps.Prompt` for seats and deck, the camera step's
and the buttons step's own); the page gets one shape for all (`prompt_view`), and a camera
preview drawn from the latest frame the step saw (`preview_image`): downscaled, with the
step's overlay (the camera step's meters, the card and the pile's box; the pile's box from
the profile for the steps after it).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from .camera_check import PileArea, draw_snapshot

PREVIEW_WIDTH = 480  # px: sharp enough for half of the 7-inch screen, and 15 to 30 KB a frame
PREVIEW_QUALITY = 70
YES_NO = ("yes", "no")
LABELS = {"camera": "Camera", "seats": "Seats", "deck": "Deck", "buttons": "Buttons"}
_YELLOW = (40, 220, 240)


def choices(prompt: Any) -> tuple[str, ...]:
    """The answers the page offers: the prompt's own choices (the buttons step's; the seats and
    deck steps' once `steps.Prompt` has them, such as "missing" while a card is awaited), else
    yes and no when the step asks a question."""
    own = tuple(getattr(prompt, "choices", ()) or ())
    if own:
        return own
    return YES_NO if waits(prompt) == "answer" else ()


def waits(prompt: Any) -> str:
    """What the step waits for: "card", "clear" or "frames" (the camera), "press" (a button),
    "answer", or "nothing" (done)."""
    return str(getattr(prompt, "waits_for", None) or prompt.waits)


def prompt_view(prompt: Any) -> dict[str, Any]:
    """One prompt of any step as plain JSON values for the page."""
    progress = getattr(prompt, "progress", None)
    if progress is not None and progress[1] <= 1:
        progress = None  # "1 of 1" (the buzzer's question) says nothing
    phase = getattr(prompt, "phase", None)
    if getattr(prompt, "check", False):
        phase = "self-check"
    offered = choices(prompt)
    text = prompt.text
    if offered == YES_NO:
        text = text.removesuffix(" (y/n)")  # the page's buttons say it
    return {
        "text": text,
        "note": getattr(prompt, "note", "") or "",
        "waits": waits(prompt),
        "progress": list(progress) if progress is not None else None,
        "choices": list(offered),
        "phase": phase,
        "lights": cue_lights(getattr(prompt, "cues", ())),
    }


def cue_lights(cues: Any) -> dict[str, Any] | None:
    """The seats' lights and the buzzer as the prompt's cues leave them (the buttons step), for
    the page to mirror the table's own: `{"seats": [level, ...], "tune": bool}`, or None when
    nothing is on."""
    levels: dict[int, float] = {}
    tune = False
    for _, target, value in sorted(cues, key=lambda cue: cue[0]):
        if isinstance(target, tuple) and target[0] == "seat":
            levels[target[1]] = float(value or 0.0)
        elif target == "buzzer" and value is not None:
            tune = True
    if not tune and not any(levels.values()):
        return None
    seats = max(levels) + 1 if levels else 0
    return {"seats": [levels.get(i, 0.0) for i in range(seats)], "tune": tune}


def preview_image(
    image: np.ndarray,
    prompt: Any = None,
    pile_box: tuple[int, int, int, int] | None = None,
    width: int = PREVIEW_WIDTH,
) -> np.ndarray:
    """`image` no wider than `width`, with the step's overlay: for the camera step, its meters
    and verdict, the card's outline and the pile's box (drawn at the preview's size, so that the
    text stays readable); for the others, the pile's box from the profile, when known."""
    h, w = image.shape[:2]
    scale = min(1.0, width / w)
    small = image
    if scale < 1.0:
        small = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    if prompt is not None and hasattr(prompt, "meters"):  # the camera step
        area = prompt.area
        if area is not None:
            area = _scaled(area, scale)
        return draw_snapshot(small, area, prompt.meters, prompt.verdict)
    out = small.copy() if small.ndim == 3 else cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    if pile_box is not None:
        x0, y0, x1, y1 = (round(v * scale) for v in pile_box)
        cv2.rectangle(
            out, (x0, y0), (x1 - 1, y1 - 1), _YELLOW, max(1, round(out.shape[1] / 400)), cv2.LINE_AA
        )
    return out


def _scaled(area: PileArea, scale: float) -> PileArea:
    # The card's width stays as measured: the meters' line names the camera's pixels.
    x0, y0, x1, y1 = area.box
    box = (round(x0 * scale), round(y0 * scale), round(x1 * scale), round(y1 * scale))
    centre = (area.centre[0] * scale, area.centre[1] * scale)
    return PileArea(area.quad * scale, area.card_px, centre, box)


def jpeg(image: np.ndarray, quality: int = PREVIEW_QUALITY) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("the preview could not be encoded as JPEG")
    return data.tobytes()
