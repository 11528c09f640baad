"""The pile watcher: camera frames in, one lay per laid card (and `cleared`) out.

It works on a small, blurred colour copy of each frame (160 px wide; colour, as
a grey image loses a hand whose grey level is the cloth's, so a grey `lores`
stream is not used) and runs a small state machine:

``START`` waits for two still frames and takes the first reference (and, with
``start_empty``, the picture of the empty table).
``STILL``: the frame matches the reference (the last settled frame). Once enough
of it differs, a hand is in: ``MOTION``.
``MOTION``: the watcher notes which frame edges the difference touches (the arm
always crosses the edge it came from) and waits for the scene to settle:
``settle_frames`` consecutive frames alike, with nothing that differs from the
reference touching the frame's border (a hand hovering still is not a rest).
A card can come to rest overhanging the edge; an arm can't be told from it in
one still frame, but it can by what happened before: an arm resting across the
border has differed there in every frame since it came in, while the arm that
laid a card has gone, and most of the motion's border evidence with it. Such a
rest is judged at once, border contact included. Any other rest with something
at the border is *held* (its frame kept): if, at a later rest, the held border
contact is still there unchanged although another arm crossed the border
elsewhere in between, it is parked, not an arm, and the held rest is judged then
(stamped at its own rest, reported late), before the current one. Until then it
is not adopted: a hand pausing over its card leaves it unread.
On settle, once per rest, the settled frame is compared with the reference:

- the pile region now looks like the empty table again: `WatchCleared`;
- a changed area not joined to the border (a card, not an arm; for a rest with
  a card over the edge, any changed area): the recogniser is asked about the
  full-size frame, hinted with that area, and a `WatchLay` is emitted unless it
  reads nothing or the card already on top (a nudged pile);
- nothing changed (a hand came and went): nothing.

The settled frame then becomes the reference. Every event is stamped with the
first frame of the still run: the first frame with the card in place and the
hand gone, the time the card came to rest. It is reported on the
``settle_frames - 1``-th frame after that (the next frame, by default); a held
rest's at the rest that proved it parked.

Per frame the cost is a nearest-neighbour pick and an area shrink into
preallocated buffers, a blur, two absdiffs, thresholds and counts (a pixel's
difference is half the sum of its channels' differences); contours,
masks at full size and recognition run only on settle.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import cv2
import numpy as np

from hardware.frames import Frame
from referee.cards import Card

EDGES = ("bottom", "top", "left", "right")

# recognise(full-size BGR image, uint8 hint mask of the same size, 255 = where the new card is)
# -> an object with `.card` (Card | None) and `.confidence` (0..1), e.g. Recogniser's Reading.
# A plain (card, confidence) tuple is accepted too.
Recognise = Callable[[np.ndarray, np.ndarray], Any]


@dataclass(frozen=True, slots=True)
class WatchLay:
    t_us: int  # when the card came to rest: the first still frame with it in place
    card: Card
    confidence: float
    seat: int | None  # only when the hand clearly came from one calibrated edge

    def to_json(self) -> str:
        line: dict[str, object] = {"t": self.t_us, "lay": self.card.code}
        line["confidence"] = round(float(self.confidence), 3)
        if self.seat is not None:
            line["seat"] = self.seat
        return json.dumps(line)


@dataclass(frozen=True, slots=True)
class WatchCleared:
    t_us: int  # the first still frame without the stack

    def to_json(self) -> str:
        return json.dumps({"t": self.t_us, "cleared": True})


@dataclass(frozen=True, slots=True)
class WatchAsk:
    """A card came to rest on the pile and could not be read for sure: the table is asked.
    `guess`: the best reading, if any, shown to whoever names the card; never acted on."""

    t_us: int
    guess: Card | None
    confidence: float
    seat: int | None
    # The rest frame's part where the pile changed (BGR): what the host is shown to name it.
    crop: np.ndarray | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> str:
        line: dict[str, object] = {"t": self.t_us, "lay": "?", "confidence": round(float(self.confidence), 3)}
        if self.seat is not None:
            line["seat"] = self.seat
        if self.guess is not None:
            line["guess"] = self.guess.code
        return json.dumps(line)


WatchEvent = WatchLay | WatchCleared | WatchAsk

_START, _STILL, _MOTION = "start", "still", "motion"


class _Held(NamedTuple):
    """A rest not judged yet because something touched the border: kept until that proves parked."""

    t_us: int  # when it came to rest
    image: np.ndarray  # its full-size frame, to read
    small: np.ndarray  # its working image
    contact: np.ndarray  # 255 on the border-strip pixels that differed from the reference
    other: np.ndarray  # 255 on the rest of the border strips
    hits: np.ndarray  # the entry-edge evidence of the motion that ended in it
    seat: int | None  # that evidence's seat, leaving out the contact: a parked card's own pixels


class _Pending(NamedTuple):
    """A settled card being read: its rest time, hint, best reading so far, seat, and reads made."""

    t_us: int
    mask: np.ndarray
    card: Card | None
    confidence: float
    seat: int | None
    reads: int
    sure: bool = True
    image: np.ndarray | None = None  # the rest frame, to show the host if the card is asked


def _reading(result: Any) -> tuple[Card | None, float, bool]:
    """(card, confidence, sure): `sure` is the recogniser's own word that the reading may be
    acted on, where it gives one (Reading.sure); a plain (card, confidence) is sure if read."""
    if isinstance(result, tuple):
        card, confidence = result
        sure = card is not None
    else:
        card, confidence = result.card, result.confidence
        sure = bool(getattr(result, "sure", card is not None))
    return card, float(confidence), sure and card is not None


class PileWatcher:
    """Watches the pile; `feed` each frame and pass on the events it returns.

    `sides` maps frame edges ("bottom", "top", "left", "right") to seats: the
    calibration of who sits where. Without it, lays carry no seat.

    Tuning (defaults are for 30 fps):
    `width` of the working image; `settle_frames` alike frames that make a rest;
    `min_level` and `noise_k`: a pixel has changed when it differs by more than
    max(min_level, noise_k x the measured mean frame-to-frame noise);
    `motion_frac`: the share of pixels that must differ from the reference to count as motion;
    `still_frac`: at most this share may differ from the previous frame for the two to be alike;
    `card_frac`: the share of pixels a new card must change (a card's ink
    changes even where it lands white on white); `side_share`: how much of the
    border contact must be on one edge to name the seat; `stale_s`: a scene still
    for this long with something at the border (an arm resting there) is judged
    anyway, ignoring what touches the border; `min_confidence`: weaker readings
    (and any the recogniser does not call sure) are asked (`WatchAsk`), not reported as
    a card; `start_empty`: the first still frame is the empty table, which `cleared` is
    judged against.
    """

    def __init__(
        self,
        recognise: Recognise,
        sides: Mapping[str, int] | None = None,
        fps: float = 30.0,
        *,
        width: int = 160,
        settle_frames: int = 2,
        min_level: float = 8.0,
        noise_k: float = 6.0,
        motion_frac: float = 0.002,
        still_frac: float = 0.0005,
        card_frac: float = 0.002,
        side_share: float = 0.75,
        stale_s: float = 1.5,
        min_confidence: float = 0.0,
        start_empty: bool = True,
        reread_below: float = 0.6,
        rereads: int = 2,
    ) -> None:
        unknown = set(sides or {}) - set(EDGES)
        if unknown:
            raise ValueError(f"unknown frame edge {sorted(unknown)}: expected {', '.join(EDGES)}")
        if settle_frames < 2:
            raise ValueError("settle_frames must be at least 2")
        self.recognise = recognise
        self.sides = dict(sides or {})
        self.fps = float(fps)
        self.width = int(width)
        self.settle_frames = int(settle_frames)
        self.min_level = float(min_level)
        self.noise_k = float(noise_k)
        self.motion_frac = float(motion_frac)
        self.still_frac = float(still_frac)
        self.card_frac = float(card_frac)
        self.side_share = float(side_share)
        self.stale_frames = max(self.settle_frames, round(stale_s * self.fps))
        self.min_confidence = float(min_confidence)
        self.start_empty = start_empty
        self.reread_below = float(reread_below)
        self.rereads = int(rereads)
        # Diagnostics.
        self.settles = 0
        self.unread = 0  # settles with a change the recogniser could not read for sure: asked
        self.nudges = 0  # settles where the card on top was the one already reported
        self.lifts = 0  # settles where the top card was picked back up (the one under it on top)
        self._full_size: tuple[int, int] | None = None  # (w, h) of the full frames
        self.reset()

    def reset(self) -> None:
        """Forget the scene: the next still frames become the reference."""
        self._state = _START
        self._ref: np.ndarray | None = None
        self._empty: np.ndarray | None = None
        self._pile: np.ndarray | None = None  # where cards have changed the picture since the last clear
        self._laid: list[Card | None] = []  # the cards reported since the last clear (None: asked)
        self._noise = 1.0  # mean absolute frame-to-frame difference of a quiet scene
        self._run = 0  # frames in the current still run
        self._run_t = 0
        # Entry evidence: per border pixel, 255 x the frames of this motion in which it differed.
        sw, sh = self._size if self._full_size is not None else (1, 1)
        self._hits = np.zeros((sh, sw), np.float32)
        self._prev_t = 0
        self._have_prev = False
        self._pending: _Pending | None = None
        self._held: _Held | None = None
        self._crossed = False  # since the hold, an arm crossed the border outside the held contact

    # Buffers -----------------------------------------------------------------------------

    def _allocate(self, w: int, h: int) -> None:
        self._full_size = (w, h)
        sw = self.width
        sh = max(2, round(sw * h / w))
        self._size = (sw, sh)
        self._pick = np.empty((2 * sh, 2 * sw, 3), np.uint8)  # every k-th pixel, before averaging
        self._raw = np.empty((sh, sw, 3), np.uint8)
        self._cur = np.empty((sh, sw, 3), np.uint8)
        self._prev = np.empty((sh, sw, 3), np.uint8)
        self._diff3 = np.empty((sh, sw, 3), np.uint8)
        self._diff = np.empty((sh, sw), np.uint8)
        self._log = np.empty((sh, sw), np.uint8)
        self._ref_log = np.empty((sh, sw), np.uint8)
        self._mask = np.empty((sh, sw), np.uint8)
        self._border = b = max(1, sw // 80)  # the edge strips: 2 px at 160
        self._strips = np.zeros((sh, sw), np.uint8)
        self._strips[:b] = self._strips[-b:] = 255
        self._strips[:, :b] = self._strips[:, -b:] = 255
        self._motion_px = max(4, round(self.motion_frac * sw * sh))
        self._card_px = max(4, round(self.card_frac * sw * sh))
        self._contact_px = max(2, round(0.0005 * sw * sh))
        self._still_px = max(2, round(self.still_frac * sw * sh))
        self.reset()  # a new frame size starts the scene afresh

    def _shrink(self, frame: Frame) -> None:
        """The frame as a small blurred colour image in `_cur`, its brightness matched to the reference.

        Colour, not grey: dark skin on green cloth has the cloth's grey level.
        """
        # Nearest picks a fixed 2x grid of pixels (the same ones every frame), then the area
        # shrink averages them: a 1280x720 frame costs ~0.05 ms instead of ~1 ms for a full INTER_AREA.
        cv2.resize(frame.image, self._pick.shape[1::-1], dst=self._pick, interpolation=cv2.INTER_NEAREST)
        cv2.resize(self._pick, self._size, dst=self._raw, interpolation=cv2.INTER_AREA)
        cv2.GaussianBlur(self._raw, (5, 5), 1.0, dst=self._cur)
        if self._ref is not None:
            # Flicker and auto-exposure scale the whole picture. The median of log(cur / ref) over the
            # green channel is that scale, whatever a hand or a new card does to less than half the frame.
            cv2.LUT(self._cur[:, :, 1], _LOG, dst=self._log)
            cv2.addWeighted(self._log, 1.0, self._ref_log, -1.0, 128.0, dst=self._log)
            step = _median(self._log) - 128
            if step:
                cv2.convertScaleAbs(self._cur, dst=self._cur, alpha=math.exp(-step / _LOG_SCALE))

    def _level(self) -> float:
        return max(self.min_level, self.noise_k * self._noise)

    def _changed(self, a: np.ndarray, b: np.ndarray) -> int:
        """Pixels where `a` and `b` differ beyond the noise, into `_mask`; returns their count."""
        cv2.absdiff(a, b, dst=self._diff3)
        cv2.transform(self._diff3, _CHANNEL_SUM, dst=self._diff)  # half the summed channel differences
        cv2.threshold(self._diff, self._level(), 255, cv2.THRESH_BINARY, dst=self._mask)
        return cv2.countNonZero(self._mask)

    def _edge_counts(self, m: np.ndarray) -> np.ndarray:
        b = self._border
        return np.array(
            [
                cv2.countNonZero(m[-b:]),
                cv2.countNonZero(m[:b]),
                cv2.countNonZero(m[:, :b]),
                cv2.countNonZero(m[:, -b:]),
            ],
            np.int64,
        )

    def _set_reference(self) -> None:
        if self._ref is None:
            self._ref = self._cur.copy()
        else:
            self._ref[:] = self._cur
        cv2.LUT(self._ref[:, :, 1], _LOG, dst=self._ref_log)

    # The loop ----------------------------------------------------------------------------

    def feed(self, frame: Frame) -> list[WatchEvent]:
        """Take one frame; returns the events it completes (usually none)."""
        image = frame.image
        if image is None or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
            return []
        h, w = image.shape[:2]
        if self._full_size != (w, h):
            self._allocate(w, h)
        self._shrink(frame)
        t = int(frame.t_us)
        events: list[WatchEvent] = []
        if not self._have_prev:
            self._have_prev = True
        else:
            n = self._changed(self._cur, self._prev)
            if n <= self._still_px:
                if n <= self._contact_px:
                    # A quiet pair: learn the sensor's noise, slowly.
                    self._noise = 0.95 * self._noise + 0.05 * max(0.2, float(cv2.mean(self._diff)[0]))
                if self._run == 0:
                    self._run, self._run_t = 1, self._prev_t  # the run started with the previous frame
                self._run += 1
            else:
                self._run = 0
            events = self._step(frame, t)
        self._prev[:] = self._cur
        self._prev_t = t
        return events

    def progress(self) -> int | None:
        """No event this watcher reports from now on is stamped at or before this (None: no frame
        yet). A still pile with nothing being read: the last frame ("nothing new before t"). In
        motion: just before the still run a rest would be stamped with (the last frame, a new run
        starting there). A rest held or a card being read again: just before its rest time."""
        if not self._have_prev:
            return None
        t = self._prev_t  # the frame just fed
        if self._state == _MOTION:
            t = (self._run_t if self._run > 0 else t) - 1
        if self._pending is not None:
            t = min(t, self._pending.t_us - 1)
        if self._held is not None:
            t = min(t, self._held.t_us - 1)
        return t

    def finish(self) -> list[WatchEvent]:
        """The stream ended: the lay still being read again, if any."""
        return self._conclude()

    def _step(self, frame: Frame, t: int) -> list[WatchEvent]:
        if self._pending is not None:
            return self._reread(frame)
        if self._state == _START:
            if self._run >= self.settle_frames:
                self._set_reference()
                if self.start_empty:
                    self._empty = self._ref.copy()
                self._state = _STILL
            return []
        assert self._ref is not None
        changed = self._changed(self._cur, self._ref)
        if self._state == _STILL:
            if changed <= self._motion_px:
                return []
            self._state = _MOTION
            self._hits[:] = 0
            self._run, self._run_t = 1, t  # a rest can't have begun before the change was seen
        edges = self._edge_counts(self._mask)
        held = self._held
        if held is None:
            cv2.accumulate(self._mask, self._hits, mask=self._strips)
        else:
            # Only border contact the held rest does not explain is another arm (and its seat).
            cv2.accumulate(self._mask, self._hits, mask=held.other)
            other = cv2.countNonZero(cv2.bitwise_and(self._mask, held.other))
            self._crossed |= other > self._contact_px
        if self._run < self.settle_frames:
            return []
        events: list[WatchEvent] = []
        if held is not None and self._run == self.settle_frames:  # a new rest, once
            if not self._held_unchanged():
                self._unhold()  # what touched the border moved: an arm (or the card was pushed)
            elif self._crossed:
                # It stayed put while another arm came and went: parked, not an arm.
                events = self._settle_held()
                self._changed(self._cur, self._ref)
                edges = self._edge_counts(self._mask)
        at_border = edges.sum() > self._contact_px
        if at_border and self._run == self.settle_frames and self._held is None:
            contact, other = self._contact()
            # A parked card's pixels differed in every frame since it landed, wherever the arm came
            # from: the seat is read from the rest of the evidence.
            seat = self._seat(cv2.bitwise_and(self._hits, self._hits, mask=other))
            if self._arm_gone(other):
                # Judged now, not at the next hand: a lay is due within 3 frames of its rest.
                return events + self._settle(frame.image, self._run_t, seat, parked=True)
            self._hold(frame, contact, other, seat)
        if at_border and self._run < self.stale_frames:
            return events  # still, but something is at the border: maybe a hand hovering, not a rest
        self._unhold()  # a stale rest: all its motion's entry evidence counts
        return events + self._settle(frame.image, self._run_t, self._seat(self._hits))

    def _contact(self) -> tuple[np.ndarray, np.ndarray]:
        """The border-strip pixels that differ from the reference now, and the rest of the strips."""
        self._changed(self._cur, self._ref)
        contact = cv2.bitwise_and(self._mask, self._strips)
        return contact, cv2.subtract(self._strips, contact)

    def _arm_gone(self, other: np.ndarray) -> bool:
        """Most of this motion's border evidence is where nothing differs any more: the arm that
        came in has left, and what still touches the border stayed there while it went (a card
        lying over the edge). An arm resting across the border keeps nearly all of it, its pixels
        having differed in every frame: measured on rendered clips, a hand pausing on its card
        leaves at most 0.21 of it elsewhere, a card left over the edge 0.47 and more."""
        total = float(self._hits.sum())
        return total > 0 and float(self._hits[other > 0].sum()) >= _GONE_SHARE * total

    def _hold(self, frame: Frame, contact: np.ndarray, other: np.ndarray, seat: int | None) -> None:
        """Keep this rest, with something at the border, until that proves parked or goes."""
        small = self._cur.copy()
        # The frame's image itself, not a copy (~1 ms at 1280x720): sources give each frame its own array.
        self._held = _Held(self._run_t, frame.image, small, contact, other, self._hits.copy(), seat)
        self._hits[:] = 0
        self._crossed = False

    def _held_unchanged(self) -> bool:
        """The held rest's border contact is still there, as it was."""
        assert self._held is not None
        self._changed(self._cur, self._held.small)
        return cv2.countNonZero(cv2.bitwise_and(self._mask, self._held.contact)) <= self._contact_px

    def _unhold(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            self._hits += held.hits  # one motion after all: its entry evidence counts again

    def _settle_held(self) -> list[WatchEvent]:
        """Judge the held rest now, as of its own rest and frame, border contact included; adopt it."""
        held, self._held = self._held, None
        assert held is not None
        cur, self._cur = self._cur, held.small
        try:
            events = self._settle(held.image, held.t_us, held.seat, parked=True)
            events += self._conclude()  # no later frame of that rest is left to read again
        finally:
            self._cur = cur
        self._state = _MOTION  # the current frame is still to be judged, against the held rest
        return events

    def _seat(self, hits: np.ndarray) -> int | None:
        b = self._border
        edges = np.array([hits[-b:].sum(), hits[:b].sum(), hits[:, :b].sum(), hits[:, -b:].sum()])
        total = float(edges.sum())
        if total == 0:
            return None
        best = int(edges.argmax())
        if edges[best] < self.side_share * total:
            return None
        return self.sides.get(EDGES[best])

    def _settle(self, image: np.ndarray, t: int, seat: int | None, parked: bool = False) -> list[WatchEvent]:
        """The scene came to rest: judge it against the reference, once, then adopt it.

        `parked`: what touches the border is known not to be an arm, so it may be the new card.
        """
        self.settles += 1
        events: list[WatchEvent] = []
        if self._is_cleared():
            events.append(WatchCleared(t))
            self._pile = None
            self._laid.clear()
            self._empty = self._cur.copy()
        else:
            hint = self._new_card_area(parked)
            if hint is not None:
                mask = self._full_mask(hint)
                card, confidence, sure = _reading(self.recognise(image, mask))
                self._pending = _Pending(t, mask, card, confidence, seat, 1, sure, image)
                if (sure and confidence >= self.reread_below) or self.rereads == 0:
                    events += self._conclude()
                self._pile = hint if self._pile is None else cv2.bitwise_or(self._pile, hint)
        self._set_reference()
        self._state = _STILL
        return events

    def _reread(self, frame: Frame) -> list[WatchEvent]:
        """A doubtful reading: read the card again on the next still frames (another frame's noise,
        glare and compression), keep the surest, and report within `rereads` frames."""
        p = self._pending
        assert p is not None and self._ref is not None
        if self._changed(self._cur, self._ref) > self._motion_px:
            events = self._conclude()  # a hand is coming: report what we have, then watch it
            return events + self._step(frame, int(frame.t_us))
        card, confidence, sure = _reading(self.recognise(frame.image, p.mask))
        # The surest reading wins: a sure one over any unsure one, then the likelier.
        if card is not None and (p.card is None or (sure, confidence) > (p.sure, p.confidence)):
            p = p._replace(card=card, confidence=confidence, sure=sure)
        self._pending = p = p._replace(reads=p.reads + 1)
        if (p.sure and p.confidence >= self.reread_below) or p.reads > self.rereads:
            return self._conclude()
        return []

    def _conclude(self) -> list[WatchEvent]:
        p, self._pending = self._pending, None
        if p is None:
            return []
        laid = self._laid
        if p.card is not None and laid and p.card == laid[-1]:
            self.nudges += 1  # the card on top, moved: read surely or not, nothing was laid
            return []
        sure = p.sure and p.confidence >= self.min_confidence
        if sure and len(laid) >= 2 and p.card == laid[-2]:
            # The card under the top one is on top again: the top card was picked back up (a card
            # laid out of turn and taken back). Nothing was laid; the referee already took it back.
            laid.pop()
            self.lifts += 1
            return []
        if not sure:
            # Never dropped, never guessed: the table is asked what was laid (if anything).
            self.unread += 1
            laid.append(None)
            return [WatchAsk(p.t_us, p.card, p.confidence, p.seat, _crop(p.image, p.mask))]
        laid.append(p.card)
        return [WatchLay(p.t_us, p.card, p.confidence, p.seat)]

    def _new_card_area(self, parked: bool = False) -> np.ndarray | None:
        """The changed area not joined to the border (or all of it, if `parked`), grown a little,
        if it is big enough for a card."""
        self._changed(self._cur, self._ref)
        mask = cv2.morphologyEx(self._mask, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
        # BBDT: the blobs every algorithm finds, at less than half the default's cost on such a mask.
        n, labels, stats, _ = cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_BBDT)
        sh, sw = mask.shape
        x, y, bw, bh = (stats[1:, i] for i in range(4))
        inside = parked | ((x > 0) & (y > 0) & (x + bw < sw) & (y + bh < sh))
        keep = np.flatnonzero(inside) + 1
        if keep.size == 0 or stats[keep, cv2.CC_STAT_AREA].sum() < self._card_px:
            return None
        table = np.zeros(n, np.uint8)  # the kept blobs painted by a lookup: cheaper than np.isin
        table[keep] = 255
        area = table.take(labels)
        # Close the gaps where the new card landed white on white, so the hint covers the card.
        return cv2.dilate(area, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7)))

    def _is_cleared(self) -> bool:
        """The pile's area changed, and now looks like the empty table again."""
        if self._pile is None or self._empty is None:
            return False
        pile = cv2.countNonZero(self._pile)
        if pile == 0:
            return False
        self._changed(self._cur, self._ref)
        gone = cv2.countNonZero(cv2.bitwise_and(self._mask, self._pile))
        self._changed(self._cur, self._empty)
        left = cv2.countNonZero(cv2.bitwise_and(self._mask, self._pile))
        return gone > 0.3 * pile and left < 0.1 * pile

    def _full_mask(self, small: np.ndarray) -> np.ndarray:
        assert self._full_size is not None
        return _blown_up(small, self._full_size)


_CHANNEL_SUM = np.full((1, 3), 0.5, np.float32)
_GONE_SHARE = 0.3  # of a motion's border evidence no longer at the border: the arm has left
_LOG_SCALE = 45.0  # log levels per e-fold: 255 spans ln(1)..ln(256), one level ~2.2% of brightness
_LOG = np.round(_LOG_SCALE * np.log(np.arange(256) + 1.0)).clip(0, 255).astype(np.uint8)


def _crop(image: np.ndarray | None, mask: np.ndarray) -> np.ndarray | None:
    """The image's part under the mask's box, with a margin: a copy (the frame is reused)."""
    if image is None or not mask.any():
        return None
    x, y, w, h = cv2.boundingRect(mask)
    pad = max(w, h) // 8
    x0, y0 = max(0, x - pad), max(0, y - pad)
    return image[y0 : y + h + pad, x0 : x + w + pad].copy()


def _blown_up(small: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A mask of the working image at full `size` (w, h), as a nearest-neighbour resize makes it.
    With whole pixels of the frame per pixel of the mask only the change's box is resized, the
    rest is zeros: 0.08 ms instead of 0.35 at 1280x720, on the frame that reads the card."""
    (w, h), (sh, sw) = size, small.shape
    if w % sw or h % sh:
        return cv2.resize(small, size, interpolation=cv2.INTER_NEAREST)
    kx, ky = w // sw, h // sh
    out = np.zeros((h, w), np.uint8)
    x, y, bw, bh = cv2.boundingRect(small)
    if bw and bh:
        box = cv2.resize(small[y : y + bh, x : x + bw], (bw * kx, bh * ky), interpolation=cv2.INTER_NEAREST)
        out[y * ky : (y + bh) * ky, x * kx : (x + bw) * kx] = box
    return out


def _median(img: np.ndarray) -> int:
    hist = cv2.calcHist([img], [0], None, [256], [0, 256]).ravel()
    return int(np.searchsorted(np.cumsum(hist), hist.sum() / 2))
