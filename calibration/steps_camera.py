"""The calibration wizard's camera step: light, focus, the card's size, the pile's area.

The shape every wizard step has (the terminal and the kiosk page drive the same logic):
a small state machine with no I/O of its own. The driver gives it camera frames
(`feed_frame`) and the user's answers (`answer`), and shows what `prompt()` says after
each: its text, the live meters and verdict, and whether it waits for frames or for a
yes/no answer. `lost(message)` tells it the camera went away; it then fails with one line
and keeps nothing. When `done`, `result()` is what the step learnt; before that it raises.
A step never writes files: the wizard saves its result in the table profile.

The camera step's phases:

1. ``light``: live meters on the empty table, until the light is neither black nor burnt out
   for `good_frames` still frames running; the last of them is the empty table.
2. ``lay``: "lay one card face up in the middle". When the picture has been still for
   `settle_s` (the hand gone), the change from the empty table is the card:
   `camera_check.find_pile_area`. A card off the middle or out of the picture, or no card,
   is said, and the step waits for the next lay. A change over most of the picture means the
   camera or the light moved: back to ``light`` to learn the empty table again.
3. ``card``: live meters on the card until it is lit, sharp and of a good size for
   `good_frames` still frames running; then the exposure (and the Camera Module 3's focus) is
   locked and the snapshot drawn. Any motion goes back to ``lay``.
4. ``confirm``: "Is the box round the pile right? (y/n)". Yes: ``done``. No: exposure
   unlocked, back to ``lay`` (take the card away and lay it again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from calibration.camera_check import (
    Meters,
    PileArea,
    Verdict,
    change_mask,
    draw_snapshot,
    find_pile_area,
    meters,
    placement_verdict,
    verdict,
)
from hardware.camera_controls import CameraControls, Exposure, NoControls
from hardware.frames import CameraLost, Frame
from referee.errors import UserError

Phase = Literal["light", "lay", "card", "confirm", "done", "failed"]
STILL_SHARE = 0.002  # the share of the picture that may change between two still frames
MOVED_SHARE = 0.4  # ... changed since the empty table that means the camera or the light moved
YES, NO = frozenset({"y", "yes"}), frozenset({"n", "no"})


@dataclass(frozen=True)
class Prompt:
    phase: Phase
    text: str  # what to tell the user now
    waits: Literal["frames", "answer", "nothing"]
    meters: Meters | None = None  # the last frame's
    verdict: Verdict | None = None  # ... and what it says
    area: PileArea | None = None  # the card and the pile's box, once found
    snapshot: np.ndarray | None = None  # the result drawn, to confirm


@dataclass(frozen=True)
class CameraResult:
    size: tuple[int, int]  # the frame's (w, h)
    pile_box: tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive)
    card_quad: np.ndarray  # 4 x 2 float32
    card_px: float
    exposure: Exposure | None  # what was locked; None for a source with nothing to lock
    meters: Meters  # the last good frame's
    snapshot: np.ndarray  # the frame with the result drawn (BGR)

    def to_profile(self) -> dict[str, Any]:
        """The table profile's camera part: plain JSON values."""
        return {
            "size": list(self.size),
            "pile_box": list(self.pile_box),
            "card_quad": [[round(float(x), 2), round(float(y), 2)] for x, y in self.card_quad],
            "card_px": round(self.card_px, 1),
            "exposure_us": None if self.exposure is None else self.exposure.exposure_us,
            "gain": None if self.exposure is None else self.exposure.gain,
            "lens_position": None if self.exposure is None else self.exposure.lens_position,
            "brightness": round(self.meters.brightness, 1),
            "blur_px": None if self.meters.blur_px is None else round(self.meters.blur_px, 2),
        }


_LAY = "Lay one card face up in the middle of the table, and take your hand away"


class CameraStep:
    name = "camera"

    def __init__(
        self,
        controls: CameraControls | None = None,
        *,
        fps: float = 30.0,
        good_frames: int = 10,
        settle_s: float = 0.3,
    ) -> None:
        self.controls = controls or NoControls()
        self.good_frames = max(1, int(good_frames))
        self.settle_frames = max(2, round(settle_s * fps))
        self._phase: Phase = "light"
        self._text = "Clear the table: measuring the light"
        self._prev: np.ndarray | None = None
        self._still = 0  # frames in the current still run
        self._good = 0  # good frames running
        self._empty: np.ndarray | None = None
        self._tried = False  # this still run's change has been looked at
        self._area: PileArea | None = None
        self._meters: Meters | None = None
        self._verdict: Verdict | None = None
        self._exposure: Exposure | None = None
        self._snapshot: np.ndarray | None = None

    @property
    def done(self) -> bool:
        return self._phase == "done"

    @property
    def failed(self) -> bool:
        return self._phase == "failed"

    def prompt(self) -> Prompt:
        waits = "answer" if self._phase == "confirm" else "nothing" if self.done or self.failed else "frames"
        return Prompt(self._phase, self._text, waits, self._meters, self._verdict, self._area, self._snapshot)

    def feed_frame(self, frame: Frame) -> None:
        if self._phase in ("confirm", "done", "failed"):
            return
        image = frame.image
        if self._prev is not None and self._prev.shape != image.shape:
            self._to_light("The picture's size changed: measuring the light again")
            self._prev = None
        moved = self._prev is None or _share(change_mask(self._prev, image)) > STILL_SHARE
        self._still = 0 if moved else self._still + 1
        self._prev = image
        if self._phase == "light":
            self._light(image, moved)
        elif self._phase == "lay":
            self._lay(image, moved)
        else:
            self._card(image, moved)

    def answer(self, text: str) -> None:
        if self._phase != "confirm":
            return
        word = text.strip().lower()
        if word in YES:
            self._phase, self._text = "done", "Camera calibrated"
        elif word in NO:
            self.controls.unlock()
            self._exposure = self._snapshot = None
            self._to_lay("Take the card away, then lay it again in the middle")
            self._tried = True  # the card still lying there is not a new lay
        else:
            self._text = "Is the box round the pile right? Answer y or n"

    def lost(self, message: str) -> None:
        """The camera went away: fail with one line, keep nothing."""
        self._phase = "failed"
        self._text = f"Camera lost ({message}): nothing was saved; check the cable and run this step again"
        self._area = self._exposure = self._snapshot = self._empty = None

    def result(self) -> CameraResult:
        if not self.done:
            raise UserError("the camera step is not finished: nothing to save")
        assert self._area is not None and self._meters is not None and self._snapshot is not None
        assert self._empty is not None
        h, w = self._empty.shape[:2]
        a = self._area
        return CameraResult((w, h), a.box, a.quad, a.card_px, self._exposure, self._meters, self._snapshot)

    # Phases ------------------------------------------------------------------------------

    def _to_light(self, text: str) -> None:
        self._phase, self._text = "light", text
        self._good, self._empty, self._area, self._still = 0, None, None, 0

    def _to_lay(self, text: str) -> None:
        self._phase, self._text = "lay", text
        self._good, self._area, self._tried = 0, None, False

    def _light(self, image: np.ndarray, moved: bool) -> None:
        self._meters = meters(image)
        self._verdict = verdict(self._meters, None)
        self._good = self._good + 1 if self._verdict.good and not moved else 0
        if self._good >= self.good_frames:
            self._empty = image
            self._to_lay(_LAY)
        elif not self._verdict.good:
            self._text = self._verdict.message

    def _lay(self, image: np.ndarray, moved: bool) -> None:
        assert self._empty is not None
        self._meters = meters(image)
        if moved:
            self._tried = False  # something moved: the next still picture is worth a look
            return
        if self._still < self.settle_frames or self._tried:
            return
        self._tried = True
        change = change_mask(self._empty, image)
        if _share(change) > MOVED_SHARE:
            self._to_light("The picture changed (camera or light moved): take the card away, clear the table")
            return
        area = find_pile_area(self._empty, image)
        if area is None:
            if _share(change) > STILL_SHARE:
                self._verdict = Verdict("no_card", f"No card found there: {_LAY.lower()}")
                self._text = self._verdict.message
            return
        placed = placement_verdict(area, (image.shape[1], image.shape[0]))
        if not placed.good:
            self._verdict, self._text, self._area = placed, placed.message, area
            return
        self._phase, self._area, self._good = "card", area, 0
        self._card(image, moved=False)

    def _card(self, image: np.ndarray, moved: bool) -> None:
        assert self._area is not None
        if moved:
            self._to_lay("The card moved: leave it in the middle, hands away")
            return
        self._meters = meters(image, self._area.quad)
        self._verdict = verdict(self._meters, self._area.card_px)
        self._text = self._verdict.message
        self._good = self._good + 1 if self._verdict.good else 0
        if self._good < self.good_frames:
            return
        self._exposure = self.controls.current()
        if self._exposure is not None:
            self.controls.lock(*self._exposure)
        self._snapshot = draw_snapshot(image, self._area, self._meters, self._verdict)
        self._phase, self._text = "confirm", "Is the box round the pile right? (y/n)"


def _share(mask: np.ndarray) -> float:
    return float(np.count_nonzero(mask)) / mask.size


def drive(step: CameraStep, frames: Iterable[Frame], ask: Callable[[Prompt], str]) -> Prompt:
    """Run `step` on `frames` until it is done or failed, asking `ask(prompt)` whenever it waits
    for an answer. A camera lost (CameraLost from the source, or the frames ending) fails the
    step with one line. The wizard's terminal and kiosk drivers do the same, with their own
    showing and asking; this one is theirs to reuse, and the tests'."""
    try:
        for frame in frames:
            step.feed_frame(frame)
            while step.prompt().waits == "answer":
                step.answer(ask(step.prompt()))
            if step.done or step.failed:
                return step.prompt()
    except CameraLost as e:
        step.lost(str(e))
        return step.prompt()
    step.lost("the camera stopped sending frames")
    return step.prompt()
