"""The simulator's camera for a whole game: what happens at the table in, camera frames out.

`render.render_lay_sequence` renders one clip from a list of lays on its own
timing. A game needs a camera that keeps running: `TableCamera` is told each card
laid (`lay`) and each stack taken (`take`), with its time, and renders frames on
demand, stamped ``t_us = round(k * 1e6 / fps)`` on one timeline from frame 0, with
the table still between hands.

The timing rule. Each event is a *rest*: for a lay, the first frame with the card
in place on the pile and the hand gone; for a take, the first frame with the table
bare and the hand gone. That frame is the first frame at or after the time asked
for. The hand's frames come before it: the carry-in (or the reach, for a take) and
the withdrawal, `carry_s` + `leave_s` long. So a frame can be rendered only once
every event that may reach back into it is known. There are two ways to pull them:

- ``frames_ready(t)``: every event before `t` has been told (a simulation calls it
  with its clock, before it tells the events at that time). It renders every frame
  that no event still to come can change: up to two frames past the last rest told
  for `t` or earlier (no hand comes sooner, below), and up to `lead_us` before `t`.
  So the watcher sees a lay's rest, and reports it, as soon as the lay is told.
- ``frames_until(t)``: the frames stamped before `t`; every event before
  ``t + lead_us`` must have been told.

Events may be told in any order: a take can be told when the stack is won, for the
moment it will be swept off, and a lay told after it for an earlier time goes
before it. Events told for the same time are shown in the order told. An event
told after frames its hand needed have gone out (the engine can rule a snap's
stack won a second or more after the press) is shown as soon as it can be: its
hand in the frames left, its rest put off if need be.

One hand at a time. A visit starts no earlier than two frames after the previous
rest (the rest frame and one more still frame: the pile watcher's rest), so the
watcher sees every rest. When the gap is shorter than a whole visit, the carry-in
and the withdrawal are compressed in proportion, down to one frame each (a lay
150 ms after a take gets two or three frames). Only when even that does not fit,
rests under four frames apart (133 ms at 30 fps: an out-of-turn lay 80 to 100 ms
after the last), is the rest put off to the first frame that allows it. `shown`
records every rest as it is shown, put off or not. Two hands at once were not
chosen: the watcher would see one motion with two new cards, and read only the
top one.

Seats: a seat's hand comes from its side of the frame (bottom, left, top, right).
With more than four seats some share a side (`default_sides`); the pile watcher
names a seat by the frame edge its hand crossed, so a lay from a shared side
carries no seat (`watcher_sides` maps only the edges with one seat).

Speed: a frame of the still table is shot once per noise variant and pile, then
reused (its array is read-only and shared between frames). A frame with a hand is
shot as its change from the still scene under it (`Lens.shoot_change`: only the
changed box is lit, blurred, noised and JPEG-coded, to the same pixels as the
whole frame). Figures in docs/vision.md.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

import cv2
import numpy as np

from hardware.frames import Frame
from referee.cards import Card

from .render import (
    ASPECT,
    SIDES,
    Camera,
    CardStyle,
    HandLook,
    Sprite,
    card_sprite,
    draw_hand,
    hand_fingertip,
    paste_sprite,
    random_hand,
    rotate_sprite,
    table_surface,
)

SETTLE_FRAMES = 2  # still frames after a rest before the next hand: the watcher's settle
MIN_VISIT_FRAMES = 2  # the fewest frames with a hand: one coming in, one going out
ROUND_THE_TABLE = ("bottom", "left", "top", "right")
_LONG_SIDES_FIRST = ("bottom", "top", "left", "right")  # a 4:3 frame's long edges take extra seats
Kind = Literal["lay", "take", "lift"]


def default_sides(seats: int) -> dict[int, str]:
    """Seats round the table from the camera's bottom edge: two face each other, up to four one a
    side, five to eight share sides (the frame's long edges first), in order round the table."""
    if not 2 <= seats <= 8:
        raise ValueError(f"a table seats 2 to 8 players, not {seats}")
    if seats == 2:
        return {0: "bottom", 1: "top"}
    if seats <= 4:
        return dict(enumerate(ROUND_THE_TABLE[:seats]))
    per_side = dict.fromkeys(ROUND_THE_TABLE, 1)
    for side in _LONG_SIDES_FIRST[: seats - 4]:
        per_side[side] += 1
    order = [side for side in ROUND_THE_TABLE for _ in range(per_side[side])]
    return dict(enumerate(order))


def frame_time(k: int, fps: float) -> int:
    """The stamp of frame `k`, in microseconds."""
    return round(k * 1e6 / fps)


def frame_at_or_after(t_us: int, fps: float) -> int:
    """The first frame whose stamp is at or after `t_us` (frame 0 for any time before it)."""
    k = max(0, math.ceil(t_us * fps / 1e6) - 1)
    while frame_time(k, fps) < t_us:
        k += 1
    while k > 0 and frame_time(k - 1, fps) >= t_us:
        k -= 1
    return k


@dataclass(frozen=True, slots=True)
class Shown:
    """A rest as the camera shows it: the truth to check a pile watcher against."""

    t_us: int  # the rest frame's stamp: the card in place (or the table bare) and the hand gone
    kind: Kind
    seat: int
    card: Card | None  # the card laid; None for a take
    asked_us: int  # the time the caller asked for; t_us is the first frame at or after it, or later
    # when the previous rest was too close or the event was told too late (the module's timing rule)


class _Shadow(NamedTuple):
    """The shadow of something carried over the table, made once for all its frames."""

    keep: np.ndarray  # uint8, 3 channels: 255 x the share of the light the shadow leaves
    dx: float  # where its centre falls from the centre of what casts it
    dy: float


def _shadow(mask: np.ndarray, strength: float) -> _Shadow:
    """`render.paste_sprite`'s shadow of `mask`, made once (it is most of that function's cost)."""
    size = max(mask.shape)
    blur = max(1.0, size * 0.025)
    pad = round(3 * blur)
    padded = cv2.copyMakeBorder(mask, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    soft = cv2.GaussianBlur(padded, (0, 0), blur).astype(np.float32) * (strength / 255)
    keep = np.round(255 * (1 - soft)).astype(np.uint8)
    off = size * 0.02
    return _Shadow(cv2.merge([keep, keep, keep]), off, 1.5 * off)


def _carry(frame: np.ndarray, sprite: Sprite, cx: float, cy: float, shadow: _Shadow) -> None:
    """Composite a sprite centred on (cx, cy) in place, over a shadow made beforehand."""
    where = _region(frame.shape[:2], shadow.keep.shape, cx + shadow.dx, cy + shadow.dy)
    if where is not None:
        f, s = where
        frame[f] = cv2.multiply(frame[f], shadow.keep[s], scale=1 / 255)
    img, mask = sprite
    where = _region(frame.shape[:2], mask.shape, cx, cy)
    if where is not None:
        f, s = where
        alpha = cv2.merge([mask[s], mask[s], mask[s]])
        under = cv2.multiply(frame[f], cv2.bitwise_not(alpha), scale=1 / 255)
        frame[f] = cv2.add(under, cv2.multiply(img[s], alpha, scale=1 / 255))


@dataclass(slots=True)
class _Visit:
    """One hand's visit to the pile, planned: frames [start, rest) show the hand."""

    shown: Shown
    side: str
    start: int  # the first frame with the hand
    rest: int  # the rest frame
    carry: int  # frames coming in; the others, rest - start - carry, going out
    drop: np.ndarray  # where the card lands (its centre); unused for a take
    angle: float  # the card's final angle
    swing: float  # how much it turns on the way in
    let_go: bool = False  # the card is down (the pile in hand, for a take): the scene is the rest's
    shadow: _Shadow | None = None  # the shadow of what the hand carries
    pile: tuple[Sprite, np.ndarray] | None = None  # a take's pile as a sprite, and its centre
    target: np.ndarray | None = None  # where the fingertips go


def _ease(p: float) -> float:
    return 1 - (1 - p) ** 2  # decelerate as the hand arrives


def _region(shape: tuple[int, int], sprite_shape: tuple[int, ...], cx: float, cy: float):
    """Frame and sprite slices where a sprite centred on (cx, cy) overlaps a frame of `shape` (h, w),
    placed as `render.paste_sprite` places it; None when they do not overlap."""
    fh, fw = shape
    sh, sw = sprite_shape[:2]
    x0, y0 = round(cx - (sw - 1) / 2), round(cy - (sh - 1) / 2)
    fx0, fy0, fx1, fy1 = max(0, x0), max(0, y0), min(fw, x0 + sw), min(fh, y0 + sh)
    if fx0 >= fx1 or fy0 >= fy1:
        return None
    return (slice(fy0, fy1), slice(fx0, fx1)), (slice(fy0 - y0, fy1 - y0), slice(fx0 - x0, fx1 - x0))


MCU = 16  # JPEG's block of 4:2:0 colour (OpenCV's default): blocks are coded each on its own


class Lens:
    """`render.Camera`'s light and lens in two steps: `develop` (light, glare, blur) and `expose`
    (one of the noise bank's frames, then JPEG). `shoot_change` makes a frame that differs from an
    already shot one in a box, working on that box alone, to the same pixels as `shoot`."""

    def __init__(self, camera: Camera) -> None:
        self.camera = camera
        self.variants = max(1, len(camera.noise))
        # OpenCV's gaussian kernel for 8-bit images reaches round(3 sigma) px; one more for safety.
        self.reach = math.ceil(3 * camera.blur) + 1 if camera.blur > 0 else 0

    def develop(self, image: np.ndarray, at: tuple[int, int] = (0, 0)) -> np.ndarray:
        """Light, glare and blur, on the whole frame or on a part of it whose top-left is `at`."""
        c, out = self.camera, image
        (y, x), (h, w) = at, image.shape[:2]
        if c.gain is not None:
            out = cv2.multiply(out, c.gain[y : y + h, x : x + w], scale=1 / 128)
        if c.glare is not None:
            out = cv2.add(out, c.glare[y : y + h, x : x + w])
        if c.blur > 0:
            out = cv2.GaussianBlur(out, (0, 0), c.blur)
        return out

    def expose(self, developed: np.ndarray, variant: int, at: tuple[int, int] = (0, 0)) -> np.ndarray:
        """Noise and JPEG, on the whole frame or on a part of it whose top-left is `at`."""
        c, out = self.camera, developed
        (y, x), (h, w) = at, developed.shape[:2]
        if c.noise:
            up, down = c.noise[variant]
            out = cv2.subtract(cv2.add(out, up[y : y + h, x : x + w]), down[y : y + h, x : x + w])
        if c.jpeg_quality is not None:
            ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(c.jpeg_quality)])
            if not ok:
                raise RuntimeError("JPEG encoding failed")
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return out.copy() if out is developed else out

    def shoot(self, image: np.ndarray, variant: int) -> np.ndarray:
        return self.expose(self.develop(image), variant)

    def shoot_change(
        self, image: np.ndarray, base: np.ndarray, developed: np.ndarray, shot: np.ndarray, variant: int
    ) -> np.ndarray:
        """`shoot(image, variant)`, given `base` (an image that differs from `image` only in a box),
        `developed` (`base` developed) and `shot` (`base` shot with the same variant).

        Light, glare and noise are per pixel and the blur reaches `reach` px, so only the changed
        box grown by that much is developed again. JPEG codes each block on its own (its DC term's
        prediction is lossless); only the decoder's smoothing of colour across blocks reads a
        block's neighbours, so a part cut on the block grid decodes to the same pixels as the
        whole frame, but for its outermost pixel. The part is cut a block wider than the change
        on each side and pasted back without its outer half block."""
        changed = cv2.absdiff(image, base).reshape(image.shape[0], -1)  # BGR side by side
        x, y, bw, bh = cv2.boundingRect(changed)
        if bw == 0:
            return shot
        h, w = image.shape[:2]
        r = self.reach
        x0, x1 = max(0, x // 3 - r), min(w, (x + bw + 2) // 3 + r)  # the developed pixels that change
        y0, y1 = max(0, y - r), min(h, y + bh + r)
        # Developed from a part grown by the blur's reach again: its own border is then no border.
        gx0, gy0, gx1, gy1 = max(0, x0 - r), max(0, y0 - r), min(w, x1 + r), min(h, y1 + r)
        grown = self.develop(image[gy0:gy1, gx0:gx1], (gy0, gx0))
        if self.camera.jpeg_quality is None:
            part = self.expose(grown[y0 - gy0 : y1 - gy0, x0 - gx0 : x1 - gx0], variant, (y0, x0))
            out = shot.copy()
            out[y0:y1, x0:x1] = part
            return out
        jx0, jy0 = max(0, (x0 // MCU - 1) * MCU), max(0, (y0 // MCU - 1) * MCU)
        jx1, jy1 = min(w, (-(-x1 // MCU) + 1) * MCU), min(h, (-(-y1 // MCU) + 1) * MCU)
        part = developed[jy0:jy1, jx0:jx1].copy()
        part[y0 - jy0 : y1 - jy0, x0 - jx0 : x1 - jx0] = grown[y0 - gy0 : y1 - gy0, x0 - gx0 : x1 - gx0]
        part = self.expose(part, variant, (jy0, jx0))
        # Keep the part's outer half block only where it is the frame's own edge.
        half = MCU // 2
        kx0, ky0 = jx0 + (half if jx0 > 0 else 0), jy0 + (half if jy0 > 0 else 0)
        kx1, ky1 = jx1 - (half if jx1 < w else 0), jy1 - (half if jy1 < h else 0)
        out = shot.copy()
        out[ky0:ky1, kx0:kx1] = part[ky0 - jy0 : ky1 - jy0, kx0 - jx0 : kx1 - jx0]
        return out


def _seat_sides(seats: int | Mapping[int, str]) -> dict[int, str]:
    """Each seat's side of the frame: `seats` laid out by `default_sides`, or as given (checked)."""
    sides = default_sides(seats) if isinstance(seats, int) else dict(seats)
    bad = {seat: side for seat, side in sides.items() if side not in SIDES}
    if bad:
        raise ValueError(f"unknown side for seats {bad}: expected one of {', '.join(SIDES)}")
    return sides


class TableCamera:
    """A camera over the pile for a whole game, told what happens and rendering frames on demand.

    `seats`: how many (laid out by `default_sides`) or each seat's side of the frame.
    `table`: a kind for `render.table_surface` or an image of the frame's size. `style` or
    `faces` (e.g. `card_themes.theme_cards`) give the cards' looks, as in `render.card_sprite`.
    `lighting`, `glare`, `blur`, `noise` and `jpeg_quality` are `render.Camera`'s, with a bank
    of `noise_frames` noise frames. `carry_s` and `leave_s` are a whole visit's carry-in and
    withdrawal; `scatter` how far from the pile's centre a card lands, in card widths.

    Everything is drawn from `rng`: the table, the light, each seat's hand, and each lay's
    landing place when it is told. The noise is a stream of its own, so the same events told in
    the same order give the same frames however the caller interleaves telling and pulling.
    """

    def __init__(
        self,
        seats: int | Mapping[int, str],
        rng: np.random.Generator,
        *,
        size: tuple[int, int] = (640, 480),
        fps: float = 30.0,
        table: str | np.ndarray = "green_cloth",
        card_width: int = 140,
        style: CardStyle | None = None,
        faces: Mapping[str, np.ndarray] | None = None,
        lighting: float = 0.3,
        glare: float = 0.0,
        blur: float = 0.6,
        noise: float = 3.0,
        jpeg_quality: int | None = 85,
        noise_frames: int = 4,
        carry_s: float = 0.25,
        leave_s: float = 0.2,
        scatter: float = 0.12,
    ) -> None:
        self.sides = _seat_sides(seats)
        if not fps > 0:
            raise ValueError(f"fps must be positive, not {fps}")
        self.fps = float(fps)
        draw, noise_seed = rng.integers(0, 2**63, size=2)
        self._draw = np.random.default_rng(draw)
        self._noise_rng = np.random.default_rng(noise_seed)
        self._table = table_surface(table, size, self._draw) if isinstance(table, str) else table.copy()
        h, w = self._table.shape[:2]
        self.size = (w, h)
        self._lens = Lens(
            Camera((w, h), self._draw, lighting, glare, blur, noise, jpeg_quality, noise_frames)
        )
        self.card_width = int(card_width)
        self.style, self.faces = style, faces
        self.scatter = float(scatter)
        self._centre = np.array([(w - 1) / 2, (h - 1) / 2]) + self._draw.normal(0, 0.03 * min(w, h), 2)
        self._looks: dict[int, HandLook] = {
            seat: random_hand(self._draw, 1.3 * self.card_width) for seat in sorted(self.sides)
        }
        self._carry = max(1, round(carry_s * self.fps))
        self._leave = max(1, round(leave_s * self.fps))
        # Frames from a visit's first hand frame to its rest, and one more for the stamps' rounding.
        self.lead_us = math.ceil((self._carry + self._leave + 1) * 1e6 / self.fps)
        self._start()

    def _start(self) -> None:
        """The timeline at frame 0: nothing told, nothing rendered, the table bare."""
        h, w = self._table.shape[:2]
        self._shown: list[Shown] = []  # the rests of the visits rendered
        self._visits: list[_Visit] = []  # the visits to render, in the order they will be shown
        self._done_rest = 0  # the last rendered visit's rest; frame 0 is one: the empty table
        self._next = 0  # the next frame to render
        self._scene = self._table.copy()  # the table and the pile, before light and lens
        self._pile = np.zeros((h, w), np.uint8)  # 255 where a card of the pile lies
        # The pile's lays since the last take, each with the scene and pile from before it: a card
        # lifted off the top leaves the pile as it was.
        self._laid: list[tuple[np.ndarray, np.ndarray, _Visit]] = []
        self._sprites: dict[str, Sprite] = {}
        self._developed: np.ndarray | None = None  # the still scene through light and lens
        self._stills: dict[int, np.ndarray] = {}  # ... exposed, per noise variant
        self._variant = -1

    # Being told what happens -----------------------------------------------------------------

    @property
    def watcher_sides(self) -> dict[str, int]:
        """The frame edges a pile watcher can name a seat by: those with one seat."""
        seats: dict[str, list[int]] = {}
        for seat, side in self.sides.items():
            seats.setdefault(side, []).append(seat)
        return {side: group[0] for side, group in seats.items() if len(group) == 1}

    def lay(self, t_rest_us: int, card: Card, seat: int) -> Shown:
        """`seat` lays `card` on the pile; it is at rest, the hand gone, in the first frame at or
        after `t_rest_us` (or later, see the module's timing rule). Returns that rest as planned now
        (an event told later for an earlier time can put it off: `shown` has it as shown)."""
        drop = self._centre + self._draw.normal(0, self.scatter * self.card_width, 2)
        angle = float(self._draw.uniform(-180, 180))
        swing = float(self._draw.uniform(-25, 25))
        return self._plan("lay", t_rest_us, seat, card, drop, angle, swing)

    def take(self, t_us: int, seat: int) -> Shown:
        """`seat` sweeps the pile off the table; the table is bare, the hand gone, in the first
        frame at or after `t_us` (or later, see the module's timing rule). Returns that rest as
        planned now, as `lay` does."""
        return self._plan("take", t_us, seat, None, self._centre, 0.0, 0.0)

    def lift(self, t_us: int, seat: int, card: Card) -> Shown:
        """`seat` picks `card` back up off the top of the pile (a card taken back); the pile is as it
        was before that card came, the hand gone, in the first frame at or after `t_us` (the
        module's timing rule). A card no longer on top by then (another was laid on it) stays."""
        return self._plan("lift", t_us, seat, card, self._centre, 0.0, 0.0)

    @property
    def shown(self) -> list[Shown]:
        """Every rest told, in the order shown, as it is (or will be) shown."""
        return self._shown + [visit.shown for visit in self._visits]

    def _plan(
        self,
        kind: Kind,
        t_us: int,
        seat: int,
        card: Card | None,
        drop: np.ndarray,
        angle: float,
        swing: float,
    ) -> Shown:
        if seat not in self.sides:
            raise ValueError(f"seat {seat} has no side of the frame (seats: {sorted(self.sides)})")
        # After the visits told for the same time or earlier, and after the one on screen, if any;
        # those after it are planned again (none of their frames is out yet).
        on = 1 if self._visits and self._visits[0].start < self._next else 0
        i = on + bisect.bisect_right([v.shown.asked_us for v in self._visits[on:]], t_us)
        new = _Visit(Shown(t_us, kind, seat, card, t_us), self.sides[seat], 0, 0, 0, drop, angle, swing)
        self._visits.insert(i, new)
        rest = self._visits[i - 1].rest if i else self._done_rest
        whole = self._carry + self._leave
        for visit in self._visits[i:]:
            asked = frame_at_or_after(visit.shown.asked_us, self.fps)
            # Its hand's first frame: after the last rest's still frames, and not among frames out.
            visit.start = max(rest + SETTLE_FRAMES, asked - whole, self._next)
            visit.rest = rest = max(asked, visit.start + MIN_VISIT_FRAMES)
            frames = rest - visit.start
            visit.carry = self._carry
            if frames < whole:  # compressed in proportion, at least one frame each
                visit.carry = min(frames - 1, max(1, round(frames * self._carry / whole)))
            visit.shown = replace(visit.shown, t_us=frame_time(rest, self.fps))
        return new.shown

    # Rendering -------------------------------------------------------------------------------

    def frames_until(self, t_us: int) -> Iterator[Frame]:
        """The frames stamped before `t_us`, in order, from the first not yet rendered. Every event
        before ``t_us + lead_us`` must have been told."""
        while frame_time(self._next, self.fps) < t_us:
            k = self._next
            self._next += 1
            yield Frame(self._render(k), frame_time(k, self.fps), k)

    def frames_ready(self, told_until_us: int) -> Iterator[Frame]:
        """Every frame not rendered yet that no event still to be told can change, given that every
        event before `told_until_us` has been told: an event to come starts its visit two frames
        after the last rest told for that time or earlier at the soonest, and `carry_s` + `leave_s`
        before its own rest."""
        whole = self._carry + self._leave
        # An event still to come is told for `told_until_us` or later: it goes after these.
        told = [v.rest for v in self._visits if v.shown.asked_us <= told_until_us]
        last_rest = max(told, default=self._done_rest)
        ready = max(last_rest + SETTLE_FRAMES, frame_at_or_after(told_until_us, self.fps) - whole)
        return self.frames_until(frame_time(ready, self.fps))

    def finish(self, tail_s: float = 0.2) -> Iterator[Frame]:
        """Nothing more happens: the frames through the last rest and `tail_s` after it."""
        last_rest = self._visits[-1].rest if self._visits else self._done_rest
        end = max(last_rest, self._next) + math.ceil(tail_s * self.fps)
        return self.frames_until(frame_time(end, self.fps) + 1)

    def _render(self, k: int) -> np.ndarray:
        visit = self._visits[0] if self._visits else None
        if visit is not None and k >= visit.rest:
            # Let go on its first frame out: the scene is already the rest's.
            done = self._visits.pop(0)
            self._shown.append(done.shown)
            self._done_rest = done.rest
            visit = None
        if visit is None or k < visit.start:
            return self._still(self._next_variant())
        p, coming = self._hand(visit, k)
        if not coming and not visit.let_go:
            self._let_go(visit)
        kind = visit.shown.kind
        if kind == "lay":
            image = self._lay_frame(visit, p, coming)
        elif kind == "lift":
            image = self._lift_frame(visit, p, coming)
        else:
            image = self._take_frame(visit, p, coming)
        return self._shoot(image, self._next_variant())

    def _let_go(self, visit: _Visit) -> None:
        """The hand lets go of its card or has the pile in hand: the scene under it from now on is the
        rest's (so a frame of the hand going out is shot as the change from the still scene it leaves)."""
        visit.let_go = True
        if visit.shown.kind == "lift":
            top = self._laid[-1] if self._laid else None
            if top is None or top[2].shown.card != visit.shown.card:
                return  # the card is not on top any more: the hand comes and goes
            self._scene, self._pile, laid = self._laid.pop()
            visit.pile = (self._sprite(laid), laid.drop)  # what the hand carries away
            visit.angle = laid.angle
        elif visit.shown.kind == "lay":
            self._laid.append((self._scene, self._pile.copy(), visit))  # for a lift: the pile before it
            self._scene = self._scene.copy()
            sprite = self._sprite(visit)
            paste_sprite(self._scene, sprite, *visit.drop)
            where = _region(self._pile.shape, sprite[1].shape, *visit.drop)
            if where is not None:
                f, s = where
                np.maximum(self._pile[f], sprite[1][s], out=self._pile[f])
        else:
            self._scene = self._table.copy()
            self._pile[:] = 0
            self._laid.clear()
        self._developed = None
        self._stills.clear()

    def _sprite(self, visit: _Visit, turn: float = 0.0) -> Sprite:
        """A lay's card at its final angle, or `turn` degrees off it."""
        card = visit.shown.card
        assert card is not None
        upright = self._sprites.get(card.code)
        if upright is None:
            upright = self._sprites[card.code] = card_sprite(card, self.card_width, self.style, self.faces)
        return rotate_sprite(*upright, visit.angle + turn)

    def _hand(self, visit: _Visit, k: int) -> tuple[float, bool]:
        """How far in the hand is at frame `k` (0..1), and whether it is still coming in."""
        j = k - visit.start
        if j < visit.carry:
            return _ease((j + 1) / visit.carry), True
        leave = visit.rest - visit.start - visit.carry
        return _ease((visit.rest - k) / (leave + 1)), False  # above 0: the last frame out still shows it

    def _lay_frame(self, visit: _Visit, p: float, coming: bool) -> np.ndarray:
        _, d = hand_fingertip(visit.side, 0.0, self.size, (0.0, 0.0))
        hold = 0.3 * self.card_width * ASPECT  # the fingertips this far short of the card's centre
        if visit.target is None:
            visit.target = visit.drop - d * hold
        target = (float(visit.target[0]), float(visit.target[1]))
        look = self._looks[visit.shown.seat]
        if not coming:
            return draw_hand(self._scene, visit.side, p, target=target, look=look)
        tip, _ = hand_fingertip(visit.side, p, self.size, target)
        frame = self._scene.copy()
        at = tip + d * hold  # the card moves with the fingertips, turning to its final angle
        if visit.shadow is None:
            visit.shadow = _shadow(self._sprite(visit)[1], 0.3)  # held up: fainter than on the table
        _carry(frame, self._sprite(visit, (1 - p) * visit.swing), at[0], at[1], visit.shadow)
        return draw_hand(frame, visit.side, p, target=target, look=look)

    def _lift_frame(self, visit: _Visit, p: float, coming: bool) -> np.ndarray:
        """The hand reaches for the top card and carries it back to the seat."""
        _, d = hand_fingertip(visit.side, 0.0, self.size, (0.0, 0.0))
        look = self._looks[visit.shown.seat]
        if visit.target is None:
            top = self._laid[-1][2] if self._laid else None
            drop = top.drop if top is not None else self._centre
            visit.target = drop - d * 0.3 * self.card_width * ASPECT
        return self._carry_away(visit, p, coming, look, 0.3)

    def _take_frame(self, visit: _Visit, p: float, coming: bool) -> np.ndarray:
        _, d = hand_fingertip(visit.side, 0.0, self.size, (0.0, 0.0))
        look = self._looks[visit.shown.seat]
        if visit.target is None:
            # The fingertips reach over the far part of the pile and sweep it back to the seat.
            ys, xs = np.nonzero(self._pile)
            if xs.size:
                x0, x1, y0, y1 = int(xs.min()), int(xs.max()) + 1, int(ys.min()), int(ys.max()) + 1
                centre = np.array([(x0 + x1 - 1) / 2, (y0 + y1 - 1) / 2])
                reach = 0.3 * (abs(d[0]) * (x1 - x0) + abs(d[1]) * (y1 - y0))
                sprite = (self._scene[y0:y1, x0:x1].copy(), self._pile[y0:y1, x0:x1].copy())
                visit.pile = (sprite, centre)
                visit.shadow = _shadow(sprite[1], 0.45)
            else:
                centre, reach = self._centre, 0.0  # nothing to take: the hand comes and goes
            visit.target = centre + d * reach
        return self._carry_away(visit, p, coming, look, 0.45)

    def _carry_away(self, visit: _Visit, p: float, coming: bool, look: HandLook, shade: float) -> np.ndarray:
        """A take's or a lift's frame: the hand reaching for `visit.target`, then going out with
        what it picked up (`visit.pile`: a sprite and its centre) moving with the fingertips, over
        the scene it leaves; `shade`: how dark what it carries shadows the table."""
        target = (float(visit.target[0]), float(visit.target[1]))  # type: ignore[index]
        if coming or visit.pile is None:
            return draw_hand(self._scene, visit.side, p, target=target, look=look)
        tip, _ = hand_fingertip(visit.side, p, self.size, target)
        sprite, centre = visit.pile
        at = centre + (tip - visit.target)
        frame = self._scene.copy()
        if visit.shadow is None:
            visit.shadow = _shadow(sprite[1], shade)
        _carry(frame, sprite, at[0], at[1], visit.shadow)
        return draw_hand(frame, visit.side, p, target=target, look=look)

    def _next_variant(self) -> int:
        """The noise variant of the next frame: never the last one again (no camera gives two
        identical frames)."""
        n = self._lens.variants
        self._variant = (self._variant + int(self._noise_rng.integers(1, n))) % n if n > 1 else 0
        return self._variant

    def _still(self, variant: int) -> np.ndarray:
        """The still scene shot with a noise variant: once per scene and variant, then reused."""
        still = self._stills.get(variant)
        if still is None:
            if self._developed is None:
                self._developed = self._lens.develop(self._scene)
            still = self._lens.expose(self._developed, variant)
            still.flags.writeable = False
            self._stills[variant] = still
        return still

    def _shoot(self, image: np.ndarray, variant: int) -> np.ndarray:
        """A frame with a hand: shot as the still scene with the hand's part shot again."""
        still = self._still(variant)
        assert self._developed is not None
        return self._lens.shoot_change(image, self._scene, self._developed, still, variant)
