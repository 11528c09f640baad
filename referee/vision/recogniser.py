"""The card recogniser: the top card of the pile, read from its corner index.

`card_outline` finds the top card and warps it upright; `card_index` reads its rank and
suit from both corners. A `Profile` learns a deck's own glyphs (and a small picture of
each card) from one frame per card, and `Recogniser` puts these together, preferring a
card not yet seen since the deck was dealt when two readings are close.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path

import cv2
import numpy as np

from referee.cards import ASPECT, JOKER_CODE, Card, parse_card
from referee.errors import UserError

from . import corner_model, outline_model
from . import index as card_index
from . import outline as card_outline
from .index import _read_beside, _read_corner, band_regions, body_region, corner_regions
from .index_model import UNKNOWN, load_model
from .outline import (
    MAX_WIDTH,
    MIN_WIDTH,
    WARP_SIZE,
    aspect_of,
    change_outline,
    find_top_card,
    order_quad,
    outline_candidates,
    side_lengths,
    warp_card,
)

__all__ = ["WARP_SIZE", "Profile", "ProfileError", "Reading", "Recogniser", "find_top_card", "warp_card"]

FACE = (48, 68)  # a profile's picture of each whole card: its ink, this size (w, h)
FACE_SHIFT = (3, 4)  # px at FACE size a warp may be off by (the template is this much smaller)
SEEN_MARGIN = 1.0  # nats: a seen card gives way to an unseen runner-up this close (e times likelier)
MIN_SCORE = -6.0  # below this the best reading is no reading: glyphs unlike any card's
INDEX_BOX = (0.02, 0.24, 0.02, 0.36)  # x0, x1, y0, y1 of the top-left index, as parts of the card
_TOP_LEFT_UV = np.array(
    [[INDEX_BOX[i], INDEX_BOX[j]] for j in (2, 3) for i in (0, 1)], np.float32
)  # its corners, as parts of the card across and down
_INDEX_UV = np.concatenate([_TOP_LEFT_UV, 1.0 - _TOP_LEFT_UV])  # and the bottom-right index's
SURE = 0.9  # a reading this likely is not read again from a grown outline
SURE_AT = 0.99  # a reading this likely, both corners agreeing, is acted on (`is_sure`)
GUESS_LEAST = 0.5  # a still photo's guess less likely than this is no card: the table is asked
WEAK = (0.5, 0.9)  # ... this likely, is read from nudged sides: built-in model, with a profile
GROW = 1.05  # the grown outline, as a part of the one found
NUDGE = (-0.05, 0.05, 0.1)  # one side moved out or in, as parts of the card across it
FACE_WEIGHT = 3.0  # nats for a card whose picture matches worse by the best match's own misfit
FACE_FAIR, FACE_CLOSE = 0.9, 0.98  # correlations of the best match: no weight, full weight
FACE_WHOLE = 0.75  # ... below which the outline holds no whole card of the deck: never sure
FIT_READINGS, FIT_SHARE = 16, 0.25  # the profile judged on the last 16 readings (8 at least): a quarter fit
PROFILE_VERSION = 2


class ProfileError(ValueError):
    """A calibration profile that cannot be read: missing, corrupt, or another version."""


@dataclass(frozen=True)
class Reading:
    card: Card | None
    confidence: float  # 0..1
    quad: np.ndarray | None = None  # 4 x 2 float corners in image coordinates
    ranked: tuple[tuple[str, float], ...] = field(default=())
    # Sure enough to act on (`is_sure`, docs/vision.md): otherwise the table is asked.
    sure: bool = False
    # Both index corners were read and each alone named this card, or (an index printed once)
    # the index and the calibrated deck's own picture of the card did.
    agree: bool = False


def _face(warped: np.ndarray) -> np.ndarray:
    """The card's ink (print darker than the paper round it), FACE sized: light and glare, which
    vary slowly across the card, divide out."""
    grey = cv2.cvtColor(warped, cv2.COLOR_BGR2GRAY).astype(np.float32)
    paper = cv2.GaussianBlur(grey, (0, 0), 12)
    ink = np.clip(1.0 - grey / np.maximum(paper, 1.0), 0.0, 1.0)
    h, w = ink.shape
    ink = ink[h // 32 : h - h // 32, w // 32 : w - w // 32]  # the outline's own misfit left out
    face = cv2.resize(ink, FACE, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(face, (0, 0), 0.8)


def _face_template(face: np.ndarray) -> np.ndarray:
    sx, sy = FACE_SHIFT
    return np.ascontiguousarray(face[sy:-sy, sx:-sx])


# Calibration --------------------------------------------------------------------------------


class Profile:
    """One deck's own picture of each card (its ink, both ways up), learnt from one frame per card.

    Only the pictures: the deck's own corner glyphs, matched as templates, were tried and made
    readings worse than the built-in model (docs/vision.md)."""

    def __init__(self, faces: np.ndarray, face_codes: np.ndarray, aspect: float | None = None) -> None:
        self.faces, self.face_codes = faces, face_codes
        # The deck's length for its width: the outline search prefers quads of its shape.
        self.aspect = aspect

    @classmethod
    def learn(cls, images: dict[str, np.ndarray], quads: dict[str, np.ndarray] | None = None) -> Profile:
        """From frames of each card alone on the table (or on top of a pile, with its outline in
        `quads`, as the watcher found it), keyed by code; cards not found are skipped.

        One camera at one height mostly takes them all, so the cards are mostly one size: an
        outline far from the others' median length (a frame printed on the card, a box grown onto
        the table) is searched again for one of that length, unless the built-in reader names the
        photo's card on it (photos taken by hand, nearer and farther)."""
        given = quads or {}
        found = {
            code: (image, given.get(code), 1) if code in given else _find_any_size(image)
            for code, image in images.items()
        }
        lengths = [float(side_lengths(q).max()) * f for _, q, f in found.values() if q is not None]
        length = float(np.median(lengths)) if len(lengths) >= 3 else None
        reader = Recogniser(jokers=True)
        faces, codes, aspects = [], [], []
        for code, image in images.items():
            level, quad, f = found[code]
            long_ = None if quad is None else float(side_lengths(quad).max()) * f
            off = long_ is None or (length is not None and abs(long_ / length - 1) > 0.06)
            if length is not None and off and code not in given and quad is not None:
                off = reader.names(warp_card(level, quad)) != parse_card(code).code
            if length is not None and off and code not in given:
                again = _find_any_size(image, length)
                # Photos taken by hand are a little nearer or farther: an outline within 15 % of
                # the others' length is kept when none of their length is found.
                if again[1] is not None or long_ is None or abs(long_ / length - 1) > 0.15:
                    level, quad, f = again
            if quad is None:
                continue
            aspects.append(aspect_of(quad))
            warped = warp_card(level, quad)
            for view in (warped, warped[::-1, ::-1]):
                faces.append(_face_template(_face(view)))
                codes.append(parse_card(code).code)
        size = (FACE[1] - 2 * FACE_SHIFT[1], FACE[0] - 2 * FACE_SHIFT[0])
        # Of a few cards, the median: one outline found on a frame printed on its card is outvoted.
        aspect = float(np.median(aspects)) if len(aspects) >= 3 else None
        return cls(np.array(faces, np.float32).reshape(len(faces), *size), np.array(codes), aspect)

    def __len__(self) -> int:
        return len(set(self.face_codes.tolist()))

    def save(self, path: str | Path) -> None:
        extra = {} if self.aspect is None else {"aspect": np.array(self.aspect)}
        np.savez_compressed(
            path, version=np.array(PROFILE_VERSION), faces=self.faces, face_codes=self.face_codes, **extra
        )

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["version"])
                if version != PROFILE_VERSION:
                    raise ProfileError(f"{path}: card profile version {version}, expected {PROFILE_VERSION}")
                # Profiles saved before the deck's shape was kept have no aspect: still good.
                aspect = float(data["aspect"]) if "aspect" in data.files else None
                if aspect is not None and not 1.0 <= aspect <= 2.0:
                    raise ProfileError(f"{path}: card profile has no card's shape (aspect {aspect:g})")
                return cls(data["faces"], data["face_codes"], aspect)
        except ProfileError:
            raise
        except Exception as exc:  # zip, key or value errors all mean one thing here
            raise ProfileError(f"{path}: not a card profile ({type(exc).__name__})") from None


def _width(quad: np.ndarray) -> float:
    """A card's width in the frame, px: the mean of its outline's two short sides."""
    return float(np.sort(side_lengths(np.asarray(quad, np.float32)))[:2].mean())


def _in_sight(quad: np.ndarray, shape: tuple[int, ...]) -> tuple[bool, bool]:
    """Whether each index corner (top-left, bottom-right, as `warp_card` turns the card) lies in
    the frame: a card over the frame's edge has one cut off, and the replicated border read as
    ink would be a reading of nothing."""
    q = order_quad(quad)
    h, w = shape[:2]
    # Both corners' boxes at once (the bottom-right one is the top-left's turned round).
    u, v = _INDEX_UV[:, :1], _INDEX_UV[:, 1:]
    p = (1 - v) * ((1 - u) * q[0] + u * q[1]) + v * ((1 - u) * q[3] + u * q[2])
    seen = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    return bool(seen[:4].all()), bool(seen[4:].all())


def _nudged(quad: np.ndarray) -> list[np.ndarray]:
    """The outline with one side a little off, as it is when that side lies on the edge of a card
    underneath (white on white, the top card's own edge barely there) or is cut in by a shadow."""
    out = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        across = (quad[(i + 2) % 4] + quad[(i + 3) % 4] - a - b) / 2  # to the opposite side
        for f in NUDGE:
            moved = quad.copy()
            moved[i] = a + f * across
            moved[(i + 1) % 4] = b + f * across
            out.append(moved)
    return out


# The recogniser -----------------------------------------------------------------------------

LEVEL_STEP = 2  # each pyramid level is this much smaller than the one before (INTER_AREA's fast path)
LEVEL_REACH = 0.9  # a level is tried while a card MIN_WIDTH px wide there is this much of the frame's side
NEAR_TOP = 0.7  # a card this much of MAX_WIDTH (or wider) may be a frame printed on a bigger card


def _find_any_size(
    image: np.ndarray, length: float | None = None
) -> tuple[np.ndarray, np.ndarray | None, int]:
    """The card in a photo of one card, at any size, for learning a profile: at the frame's own
    size, then at each pyramid level where a bigger card is in the search window (a phone photo of
    one card, 1000 px wide and more), as `Recogniser.recognise` searches. Returns the level's
    image, the outline in its pixels, and the level's factor, so that the card is warped from that
    level's own pixels. `length`: the card's long side in frame px, when known."""
    first: tuple[np.ndarray, np.ndarray | None, int] = (image, None, 1)
    for f, level in _pyramid(image):
        quad = find_top_card(level, length=None if length is None else length / f)
        if quad is not None:
            if not _near_window_top(quad * f, f):
                return level, quad, f
            if first[1] is None:
                first = (level, quad, f)  # near the window's top: a bigger card may be round it
    return first


def _pyramid(image: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """The frame itself (factor 1), then each pyramid level (factor 2, 4 ..., by INTER_AREA) where
    a card MIN_WIDTH px wide there is still under LEVEL_REACH of the frame's short side; each
    level made only when asked for."""
    h, w = image.shape[:2]
    yield 1, image
    f = LEVEL_STEP
    while MIN_WIDTH * f <= LEVEL_REACH * min(h, w):
        yield f, cv2.resize(image, (w // f, h // f), interpolation=cv2.INTER_AREA)
        f *= LEVEL_STEP


AGREE_LEAST = 0.5  # an outline lying on the outline model's marks this well may be the top card's


_LEVELS_BOUND = range(8)  # more pyramid levels than any frame has: "no level stopped it yet"


def _guess(reading: Reading) -> Reading:
    """A reading made only because a photo was read thoroughly, as a guess: never sure. Held out,
    about one in twenty of those that looked sure were wrong (docs/vision.md), where the first
    reading's sure ones are wrong about one in 700: the referee shows the guess and asks."""
    return Reading(reading.card, reading.confidence, reading.quad, reading.ranked, False, reading.agree)


def _agreement(marks: tuple[np.ndarray, float] | None, quad: np.ndarray | None) -> float:
    """How well an outline lies on the outline model's marks (0 without them or an outline)."""
    return 0.0 if marks is None or quad is None else outline_model.agreement(marks, quad)


def _evidence(reading: Reading) -> int:
    """How much a reading says of its outline: 2 sure, 1 both corners naming one card at SURE or
    more, else 0. Two corners read alike are two readings of different pixels: an outline that
    makes them agree lies on a card with both its ends in sight."""
    if reading.sure:
        return 2
    return int(reading.agree and reading.confidence >= SURE)


def _level_for(box: np.ndarray) -> int:
    """The first pyramid level (its factor) where a box of frame px is in the search's size window."""
    f, short = 1, float(side_lengths(box).min())
    while short > MAX_WIDTH * f:
        f *= LEVEL_STEP
    return f


def _same_place(box: np.ndarray, quad: np.ndarray | None) -> bool:
    """Whether an outline lies where a box does: every corner within a tenth of the box's short side."""
    if quad is None:
        return False
    q = np.asarray(quad, np.float64).reshape(4, 2)
    tol = 0.1 * float(side_lengths(box).min())
    return all(float(np.linalg.norm(q - p, axis=1).min()) <= tol for p in np.asarray(box, np.float64))


def _refused(reading: Reading) -> bool:
    """Whether a reading is a refusal: an index read as none of the deck's."""
    return reading.card is None and bool(reading.ranked) and reading.ranked[0][0] == UNKNOWN


def _on_any(quad: np.ndarray | None, others: list[np.ndarray]) -> bool:
    """Whether an outline is about the same box as one of `others`: they overlap by half the
    larger's area or more. (Not half the smaller's: a refused box round two cards holds the
    top card's own outline, which may read it right.)"""
    if quad is None:
        return False
    q = np.asarray(quad, np.float32).reshape(4, 2)
    for other in others:
        o = np.asarray(other, np.float32).reshape(4, 2)
        larger = max(cv2.contourArea(q), cv2.contourArea(o))
        if larger > 0 and cv2.intersectConvexConvex(q, o)[0] >= 0.5 * larger:
            return True
    return False


def _likeliest_top(pool: list[tuple[Reading, float]]) -> Reading | None:
    """Of a still photo's readings (each with its outline's agreement with the outline model's
    marks), the guess at the top card: the most evidence (`_evidence`), then lying on the marks
    (AGREE_LEAST), then the likeliest. Chosen on the tuning scenes (tools/tuning_scenes.py, seeds
    7 and 11, 660 scenes): 611 right against 597 when only the marks chose, and that only when the
    picked outline's card agreed. With nothing on the marks and two cards read alike well (two
    cards apart, each whole), nothing is guessed: the table is asked with no card offered."""
    pool = [(r, a) for r, a in pool if r.card is not None]
    if not pool:
        return None
    best, agree = max(pool, key=lambda ra: (_evidence(ra[0]), ra[1] >= AGREE_LEAST, ra[0].confidence))
    if agree < AGREE_LEAST:
        level = _evidence(best)
        rivals = {
            r.card for r, a in pool if _evidence(r) == level and r.confidence >= SURE and a < AGREE_LEAST
        }
        if len(rivals) > 1:
            return None
    return best


def _near_window_top(quad: np.ndarray, f: int) -> bool:
    """Whether an outline found at pyramid level `f` (in frame px) is near the top of the search's
    size window there: perhaps the frame printed on a card too big for that level."""
    return float(side_lengths(quad).min()) >= NEAR_TOP * MAX_WIDTH * f


# Scores, their log-sum, the corners' agreed code, and whether the picture is a whole card's (`_read`).
_Read = tuple[dict[str, float], float, "str | None", bool]


def _best_card(scores: dict[str, float]) -> float:
    """The best score of a card (code UNKNOWN is no card's)."""
    return max(v for k, v in scores.items() if k != UNKNOWN)


def is_sure(confidence: float, agree: bool) -> bool:
    """Whether a reading is sure enough to act on: two readings named the card on their own (both
    index corners, or an index printed once and the deck's own picture), and it is likelier than
    SURE_AT (chosen on the project's own renderer, tools/tune_sure.py)."""
    return agree and confidence >= SURE_AT


@cache
def _warm_up() -> None:
    """Read one small rendered card, once per process: the first reading otherwise carries ~10 ms
    of one-off costs (numpy's median imports numpy.ma on its first call, OpenCV's first calls) on
    the frame the watch loop reads a card in. The modules' own functions, not this module's names
    for them, which tests may replace."""
    table = np.full((240, 320, 3), (40, 110, 50), np.uint8)
    frame = table.copy()  # a plain card drawn here: the shipped eyes never import the simulator
    box = cv2.boxPoints(((160.0, 120.0), (110.0, 110.0 * ASPECT), 20.0)).astype(np.int32)
    cv2.fillConvexPoly(frame, box, (245, 245, 245), cv2.LINE_AA)
    cv2.putText(frame, "Q", (125, 95), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (30, 30, 180), 2, cv2.LINE_AA)
    mask = cv2.dilate((frame != table).any(axis=2).astype(np.uint8) * 255, np.ones((9, 9), np.uint8))
    quad, _ = card_outline.change_outline(frame, mask)
    card_outline.find_top_card(frame, mask)
    if quad is not None:
        card_index._read_corner(card_outline.warp_card(frame, quad, regions=corner_regions(WARP_SIZE)))
        _face(card_outline.warp_card(frame, quad))


class Recogniser:
    """Reads the top card of a pile; a `Profile` makes it read that deck better."""

    def __init__(self, profile: Profile | None = None, jokers: bool = True) -> None:
        """`jokers`: whether the deck has jokers (54 cards); in a 52-card game a joker's corner is
        no card's, and is refused."""
        self.profile = profile
        self.jokers = jokers
        # Whether the profile's pictures matched the card read, per reading (the last few): a
        # profile of another deck matches next to none (docs/vision.md, "A profile of another deck").
        self._fits: deque[bool] = deque(maxlen=FIT_READINGS)
        self._tops: list[float] = []
        load_model()  # now, not on the first card read (~10 ms): the watch loop reads within a frame
        _warm_up()

    def read_warped(self, warped: np.ndarray, corners: tuple[bool, bool] = (True, True)) -> dict[str, float]:
        """Scores per code (log-likelihoods, higher is likelier) for an upright card: the better of
        its two index corners (top-left, bottom-right: those `corners` in sight), and (with a
        profile) how like the deck's own picture of it it is. Empty when nothing can be read.
        Code UNKNOWN scores glyphs that are no index of the deck (a Dutch B, a joker's lettering
        in a 52-card game)."""
        return self._read(warped, corners)[0]

    def names(self, warped: np.ndarray) -> str | None:
        """The code `read_warped` scores highest, if any."""
        scores = self.read_warped(warped)
        return max(scores, key=scores.__getitem__) if scores else None

    def _read(
        self,
        warped: np.ndarray,
        corners: tuple[bool, bool],
        across: Callable[[], np.ndarray] | None = None,
        body: Callable[[], np.ndarray] | None = None,
        magnified: bool = True,
    ) -> tuple[dict[str, float], str | None, bool]:
        """`read_warped`'s scores, the code both corners named each on its own (None unless both
        were read and agree): two readings of one card at its two ends, evidence for `is_sure`,
        and whether the card is whole (`_with_profile`; True without a profile): if not, no
        reading of it is sure, though its corners' agreement still weighs in a still's guess.
        When neither corner holds an index, the index laid across the card's top (`_read_beside`)
        of the warp `across()` gives (one with the card's top and bottom bands; `warped` itself
        when None): never sure, since such decks mostly print it once, and the reader has less
        behind it. A card in doubt is weighed by the body's pips (`index.read_body`) of the warp
        `body()` gives (one with the card's body; `warped` itself when None); one both corners
        named, by the body's suit only when the warp is `magnified` (the card fewer pixels wide in
        the frame than the warp): a third witness before it is acted on."""
        scores, named = self._corners(warped, corners, _read_corner)
        agreed = named[0] if len(named) == 2 and named[0] == named[1] != UNKNOWN else None
        once = None  # the code an index printed once (across the card's top) named
        # With a profile it is read also when the corners hold only glyphs of no card (a rank
        # without its pip beside it): the picture may then name the card with it.
        if not scores or (self.profile is not None and set(named) == {UNKNOWN}):
            beside, named = self._corners(warped if across is None else across(), corners, _read_beside)
            scores = {k: max(scores.get(k, -99.0), beside.get(k, -99.0)) for k in scores | beside}
            once = named[0] if len(set(named)) == 1 and named[0] != UNKNOWN else None
        doubt = bool(scores) and card_index.in_doubt(scores)
        witness = bool(scores) and agreed is not None and magnified
        if doubt or witness:
            pips = card_index.read_body(warped if body is None else body())
            if doubt:
                scores = card_index.weigh_body(scores, pips)
            if witness and (not doubt or pips.suits is None):
                # Blurred alike at both ends, an index's spade may read as a club at both; the
                # body's bigger pips witness the suit by their lean, however slight (each of a
                # blurred spade's pips may lean to it, none surely). The rank the corners
                # settle (a deck's ornate ace is a picture, unlike an ace's pip).
                lean = {k: v for k, v in (pips.lean or {}).items() if k != UNKNOWN} or None
                scores = card_index.weigh_body(scores, card_index.Body(lean, 0))
        # A calibrated deck's card whose picture matches none of its own (not whole): something
        # lies on it (the card under the top one, read at both its corners) or the outline is off.
        scores, pictured, whole = self._with_profile(warped, scores)
        if once is not None and once == pictured:
            # The deck's own picture of the card, matched closely, is the second reading an
            # index printed once lacks: it names the card from the whole face.
            agreed = once
        return scores, agreed, whole

    def _corners(
        self,
        warped: np.ndarray,
        corners: tuple[bool, bool],
        read: Callable[[np.ndarray], dict[str, float] | None],
    ) -> tuple[dict[str, float], list[str]]:
        """The best score per code of `read` at the card's two ends (those `corners` in sight), and
        the code each end named."""
        scores: dict[str, float] = {}
        named = []
        for turned, seen in zip((False, True), corners, strict=True):
            # Turned by a copy, not a view: OpenCV copies a view of negative strides at every call.
            got = read(cv2.flip(warped, -1) if turned else warped) if seen else None
            if got:
                if not self.jokers and JOKER_CODE in got:  # a joker's lettering is no card of this deck
                    got[UNKNOWN] = float(np.logaddexp(got.pop(JOKER_CODE), got.get(UNKNOWN, -99.0)))
                named.append(max(got, key=got.__getitem__))
                for k, v in got.items():
                    scores[k] = max(scores.get(k, -99.0), v)
        return scores, named

    def _with_profile(
        self, warped: np.ndarray, scores: dict[str, float]
    ) -> tuple[dict[str, float], str | None, bool]:
        """The corners' scores with the profile's pictures weighed in (unchanged without one), the
        card whose picture matches at FACE_CLOSE or better, if one does, and whether any matches at
        FACE_WHOLE or better (True without a profile)."""
        p = self.profile
        pictured = None
        whole = True
        if p is not None and len(p.face_codes):
            # Each card's own picture, allowed to sit a few px off. How much worse than the best
            # a card matches counts in units of the best match's own misfit: when the best fits
            # closely, a near look-alike (the 9 of clubs for the 9 of spades) is far behind.
            face = _face(warped)
            sim = np.array([float(cv2.matchTemplate(face, t, cv2.TM_CCOEFF_NORMED).max()) for t in p.faces])
            top = float(sim.max())
            self._tops.append(top)
            misfit = max(1.0 - top, 0.01)
            # A picture that matches nothing closely (the outline a little off, a hand's shadow)
            # says little: its weight fades out below a close match.
            weight = FACE_WEIGHT * float(np.clip((top - FACE_FAIR) / (FACE_CLOSE - FACE_FAIR), 0.0, 1.0))
            whole = top >= FACE_WHOLE
            if not scores and top < FACE_CLOSE:
                return {}, None, whole  # no index, and no picture close enough to stand alone
            by_code = {code: float(sim[p.face_codes == code].max()) for code in set(p.face_codes.tolist())}
            if top >= FACE_CLOSE:
                pictured = max(by_code, key=by_code.__getitem__)
            # With no index read (a rank joined to a picture), the picture alone decides.
            known = {
                code: (scores.get(code, -99.0) if scores else 0.0) + weight * (best - top) / misfit
                for code, best in by_code.items()
            }
            # A card the profile lacks (its photo was missing or unusable) has no picture to
            # match: it counts as matching like the runner-up card but loses at most the
            # picture's weight by it. Its own picture would have matched as closely as the best
            # (at FACE size a 7 of spades is a 7 of clubs but for a few px): so a clear corner
            # still names it, and a close match wins only over a corner in doubt. A joker only
            # if one was calibrated. No card of the deck (UNKNOWN) has no picture to match: it
            # loses all a close match says.
            runner = sorted(by_code.values())[-2] if len(by_code) > 1 else top
            for code, v in scores.items():
                if code not in known and code != JOKER_CODE:
                    lost = weight * (runner - top) / misfit
                    known[code] = v + (lost if code == UNKNOWN else max(lost, -weight))
            scores = known
            if top >= FACE_CLOSE:
                # A card whose own picture matches this closely is a reading, whatever its corner
                # said: all scores lifted alike (their odds unchanged) above the no-reading floor.
                lift = MIN_SCORE + 1.0 - max(scores.values())
                if lift > 0:
                    scores = {k: v + lift for k, v in scores.items()}
        return scores, pictured, whole

    def _surest(self, image: np.ndarray, quads: list[np.ndarray], enough: float) -> _Read:
        """The surest reading of the card (`_Read`: scores, their log-sum, agreed code, whole) from
        outlines tried in turn, stopping at one likelier than `enough`; scores of two warps are not
        on one scale."""
        best: _Read = ({}, 0.0, None, True)
        # Without a profile only the index corners are read: only they are warped.
        regions = None if self.profile is not None else corner_regions(WARP_SIZE)
        for quad in quads:
            warped = warp_card(image, quad, regions=regions)
            # An index across the card's top is read only when the corners hold none: its bands warped then.
            across = partial(warp_card, image, quad, regions=band_regions(WARP_SIZE)) if regions else None
            body = partial(warp_card, image, quad, regions=(body_region(WARP_SIZE),)) if regions else None
            # A card the warp magnifies has index pips of a few frame pixels, a blurred spade
            # and club alike at both corners: only then are its body's pips worth their cost.
            magnified = _width(quad) < WARP_SIZE[0]
            got, agreed, whole = self._read(warped, _in_sight(quad, image.shape), across, body, magnified)
            if not got:
                continue
            top = max(got.values())
            got_norm = float(np.log(np.exp(np.array(list(got.values())) - top).sum())) + top
            if not best[0] or self._surer((got, got_norm), best[:2]):
                best = (got, got_norm, agreed, whole)
            if self._likely(*best[:2]) > enough:
                break
        return best

    @staticmethod
    def _likely(scores: dict[str, float], norm: float) -> float:
        """How likely the best card is (UNKNOWN, no card, is not one)."""
        return float(np.exp(_best_card(scores) - norm))

    @classmethod
    def _surer(cls, a: tuple[dict[str, float], float], b: tuple[dict[str, float], float]) -> bool:
        """Whether reading a is surer than b: any reading beats glyphs unlike any card's."""
        a_card, b_card = _best_card(a[0]) >= MIN_SCORE, _best_card(b[0]) >= MIN_SCORE
        return a_card > b_card or (a_card == b_card and cls._likely(*a) > cls._likely(*b))

    def _read_outline(self, image: np.ndarray, quad: np.ndarray) -> _Read:
        """The card read from its outline, and a doubtful reading again from a slightly larger warp:
        an outline found a little inside the card's edge cuts an index that sits close to it."""
        centre = quad.mean(axis=0)
        return self._surest(image, [quad, (quad - centre) * GROW + centre], SURE)

    @classmethod
    def _card_odds(cls, scores: dict[str, float], norm: float) -> float:
        """How likely the best card is, 0 when there is none or it is unlike any card."""
        return cls._likely(scores, norm) if scores and _best_card(scores) >= MIN_SCORE else 0.0

    def recognise(
        self,
        image: np.ndarray,
        hint_mask: np.ndarray | None = None,
        seen: frozenset[str] = frozenset(),
        thorough: bool = False,
    ) -> Reading:
        """The top card, at any size: the outline search takes cards MIN_WIDTH to MAX_WIDTH px wide
        (card_outline), so a frame is read as it is, then, when that finds no outline or one near
        the top of that window (perhaps a frame printed on a bigger card), at every pyramid level (half
        the size, a quarter ...) where a card could be: cards twice, four times ... as big are in
        the window there. A level's reading is of its own pixels (warped from the level, not
        sampled from the frame at a tenth of its pixels); its outline is mapped back.

        `thorough` (a still photo, `referee recognize`; never the watch, which reads the next frame
        anyway): a reading that is not sure goes on down too, unless its index was refused, and
        then every other card-like outline is read (`_among_outlines`). What only that finds is a
        better guess to show, never sure: the table is asked (`_guess`). A guess less likely than
        GUESS_LEAST is no card: the table is asked with none offered."""
        self._tops.clear()
        tried: list[Reading] = []
        stop = len(_LEVELS_BOUND)  # how many levels a reading that is not thorough would have read
        # An outline well inside the window with an index read is the card's, read or refused:
        # the next level would only read it again from fewer pixels. One with no index may be a
        # frame printed on a bigger card. (Going on down for every reading that was not sure, or
        # read no card, was tried: it took the watch's mean 640x480 frame from 0.5 to 2.2 ms, and
        # a refused index was read as some card on a smaller level: refusals 170 to 160 of 240.
        # So only a still photo does, and never past a refused index.)
        for f, level in _pyramid(image):
            reading = self._read_level(f, level, hint_mask, seen)
            if len(tried) >= stop:
                # A level read only because the photo is read thoroughly: its card may be the
                # better guess, but never one to act on (_guess).
                reading = _guess(reading)
            tried.append(reading)
            if reading.quad is not None and reading.ranked and not _near_window_top(reading.quad, f):
                stop = min(stop, len(tried))
                if not thorough or reading.sure or _refused(reading):
                    break
        wide = image.shape[1] > card_outline.WORK_WIDTH
        if hint_mask is None and wide and all(r.quad is None for r in tried):
            # No outline at any level: a small card (under about 180 px in 1280x720), whose sides
            # the search's half-sized copy blurs into the cards round it, is looked for in the
            # frame's own pixels (stills only: the watch's crop round a change is not shrunk), at
            # most twice as wide as the search's copy (a phone photo 4000 px wide took 3 s).
            fine = min(image.shape[1], 2 * card_outline.WORK_WIDTH)
            tried.append(self._read_level(1, image, None, seen, work=fine))
        # The surest card of those read: sure first, then likelier.
        best = max(tried, key=lambda r: (r.card is not None, r.sure, r.confidence))
        if thorough and not best.sure:
            best = self._guessed(image, tried, best)
        if best.card is not None and self._tops:
            self._fits.append(max(self._tops) >= FACE_FAIR)  # its picture, on the outline that fits best
        return best

    def _guessed(self, image: np.ndarray, tried: list[Reading], best: Reading) -> Reading:
        """A still photo whose readings (`tried`, the surest `best`) are none of them sure: the
        guess among them and every other card-like outline's reading (`_likeliest_top`); no card
        when it is less likely than GUESS_LEAST."""
        marks = outline_model.cover(image)
        # Readings of no card are left out by _likeliest_top.
        pool = [(r, _agreement(marks, r.quad)) for r in tried] + self._among_outlines(image, marks)
        refused = [r.quad for r in tried if _refused(r) and r.quad is not None]
        if refused:
            # The card found first has an index of no card of this deck (a Dutch B, a joker in
            # a 52-card game): that stands, unless the outline model marks another card's
            # outline as the top card's. Else a card under it, read on its own outline, was the
            # guess (held out, figure e: 127 of 240 refused before this session's guess, 97 with
            # it and without this rule, 125 with it); nor is an outline about the refused one's
            # box (a little inside it, a few px off), which read its glyphs as some card, unless
            # that outline reads its card surely on its own: the refused box was then not a
            # card's (a court's printed frame, a box round a pile), and the card round or in it
            # has both indices in sight (tuning scenes: 434 to 436 of 440 and 326 to 328 of 330,
            # the refusal sets unchanged).
            pool = [
                (r, a)
                for r, a in pool
                if a >= AGREE_LEAST and (_evidence(r) == 2 or not _on_any(r.quad, refused))
            ]
        guess = _likeliest_top(pool)
        if guess is not None and guess is not best:
            best = _guess(guess)
        if best.card is not None and best.confidence < GUESS_LEAST:
            # Likelier some other card, or none: most such guesses were at a joker or a foreign
            # letter (tuning scenes: theme jokers refused 62 to 80 of 96, lettered 80 to 82, own
            # jokers 83 to 85; of 1210 scenes, no card read right lost).
            best = Reading(None, best.confidence, best.quad, best.ranked)
        return best

    def _read_level(
        self,
        f: int,
        level: np.ndarray,
        hint_mask: np.ndarray | None,
        seen: frozenset[str],
        work: int = card_outline.WORK_WIDTH,
    ) -> Reading:
        """The reading of one pyramid level (`f` frame pixels a side to its pixel), mapped back;
        `work`: the width the frame itself (f == 1) is searched at; a smaller level's is WORK_WIDTH."""
        if f == 1:
            return self._recognise_level(level, hint_mask, seen, work)
        mask = None
        if hint_mask is not None:
            h, w = hint_mask.shape[:2]
            mask = np.ascontiguousarray(hint_mask[: h // f * f : f, : w // f * f : f])
        got = self._recognise_level(level, mask, seen)
        # A level pixel is f frame pixels; its centre lies (f - 1) / 2 into them.
        quad = None if got.quad is None else got.quad * f + (f - 1) / 2
        return Reading(got.card, got.confidence, quad, got.ranked, got.sure, got.agree)

    def _among_outlines(
        self, image: np.ndarray, marks: tuple[np.ndarray, float] | None = None
    ) -> list[tuple[Reading, float]]:
        """A still photo whose picked outline read no card surely: every other card-like outline
        at every level, read, each with how well it lies on the outline model's `marks` (0 without
        them). More rough boxes come from the marks themselves (`fit_card`) and from the corner
        model's marked corners (`corner_model.boxes`), and the edges near the marks are searched
        for straight sides once more (`outline_model.near`)."""
        read: list[tuple[Reading, float]] = []
        fitted = None if marks is None else outline_model.fit_card(marks)
        near = None if marks is None else outline_model.near(marks)
        corners = corner_model.marks(image)
        cornered = [] if corners is None else corner_model.boxes(corners)
        boxes = ([] if fitted is None else [fitted]) + cornered
        for f, level in _pyramid(image):
            extra = [box / f for box in boxes]
            for quad in outline_candidates(level, boxes=extra, near=near):
                read.append(self._level_reading(level, f, quad, marks))
            # A corner box that no outline refined (its sides too faint, blurred on a white table,
            # to fit) is read as the model placed it, on the first level where it is in the window.
            for box in cornered:
                if _level_for(box) == f and not any(_same_place(box, r.quad) for r, _ in read):
                    read.append(self._level_reading(level, f, (box - (f - 1) / 2) / f, marks))
        return read

    def _level_reading(
        self, level: np.ndarray, f: int, quad: np.ndarray, marks: tuple[np.ndarray, float] | None
    ) -> tuple[Reading, float]:
        """An outline of pyramid level `f` read there, mapped back to the frame, with how well it
        lies on the outline model's marks."""
        scores, norm, agreed, whole = self._read_outline(level, quad)
        got = self._reading(scores, norm, agreed, quad, whole=whole)
        mapped = quad * f + (f - 1) / 2
        mapped_got = Reading(got.card, got.confidence, mapped, got.ranked, got.sure, got.agree)
        return mapped_got, _agreement(marks, mapped)

    def profile_mismatch(self) -> str | None:
        """Why the profile seems to be of another deck, once enough cards were read to tell
        (None: it fits, no profile, or too few readings yet). With the right deck's profile, the
        card read matches its picture in nearly every reading; with another deck's, in next to
        none (measured: 100 % against 0 to 10 %)."""
        fits = self._fits
        if self.profile is None or len(fits) < FIT_READINGS // 2:
            return None
        matched = sum(fits)
        if matched >= FIT_SHARE * len(fits):
            return None
        return (
            f"its pictures match {matched} of the last {len(fits)} cards read: a profile of another "
            "deck? (calibrate this deck: referee calibrate deck)"
        )

    def _recognise_level(
        self,
        image: np.ndarray,
        hint_mask: np.ndarray | None,
        seen: frozenset[str],
        work: int = card_outline.WORK_WIDTH,
    ) -> Reading:
        """The top card of a frame whose cards are in the outline search's size window."""
        aspect = self.profile.aspect if self.profile else None
        quick, sure, scores, norm, agreed, whole = None, False, {}, 0.0, None, True
        if hint_mask is not None:
            # The change's own outline first, sure or not: when it reads surely, the search round
            # the change (tens of ms at 1280x720) would only find it again; when it is sure, the
            # search is not made anyway.
            try:
                quick, sure = change_outline(image, hint_mask, aspect)
            except cv2.error:
                quick = None
            if quick is not None:
                scores, norm, agreed, whole = self._read_outline(image, quick)
        quad = quick
        if not sure and self._card_odds(scores, norm) <= SURE:
            try:
                quad = find_top_card(image, hint_mask, aspect=aspect, work=work)
            except cv2.error:
                quad = None
            if quad is None:
                return Reading(None, 0.0)
            if quick is None or not np.allclose(quad, quick, atol=0.5):
                scores, norm, agreed, whole = self._read_outline(image, quad)
        # Still weak: a side may be astray, misplacing the index. Measured (docs/vision.md), the
        # built-in model is sure of a wrong card from a nudged outline more often than a deck's
        # own pictures are, so it is nudged only when a reading is no better than even odds.
        weak = WEAK[self.profile is not None]
        if self._card_odds(scores, norm) <= weak:
            got = self._surest(image, _nudged(quad), SURE)
            if got[0] and (not scores or self._surer(got[:2], (scores, norm))):
                scores, norm, agreed, whole = got
        return self._reading(scores, norm, agreed, quad, seen, whole)

    def _reading(
        self,
        scores: dict[str, float],
        norm: float,
        agreed: str | None,
        quad: np.ndarray,
        seen: frozenset[str] = frozenset(),
        whole: bool = True,
    ) -> Reading:
        """The reading of an outline's scores: the card, refused, or none; never sure unless `whole`."""
        if not scores:
            return Reading(None, 0.05, quad)
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])[:5]
        best = ranked[0]
        pick = best
        if best[0] in seen:
            runner = next(((c, s) for c, s in ranked[1:] if c not in seen and c != UNKNOWN), None)
            if runner is not None and best[1] - runner[1] < SEEN_MARGIN:
                pick = runner
        conf = float(np.exp(pick[1] - norm))
        ranked_out = tuple((c, round(float(s), 4)) for c, s in ranked)
        if pick[0] == UNKNOWN:
            # Glyphs that are no index of this deck: refused, however like a card they are.
            return Reading(None, min(self._card_odds(scores, norm), 0.2), quad, ranked_out)
        if pick[1] < MIN_SCORE:
            return Reading(None, min(conf, 0.2), quad, ranked_out)
        agree = agreed == pick[0]
        return Reading(parse_card(pick[0]), conf, quad, ranked_out, whole and is_sure(conf, agree), agree)


def recogniser_for(profile_path: str | None, deck: int = 54) -> Recogniser:
    """The recogniser, with the table's profile if one is given (a bad one: one line, exit 2);
    in a 52-card deck (`deck`) a joker's corner is refused, not read."""
    if profile_path is None:
        return Recogniser(jokers=deck == 54)
    try:
        return Recogniser(Profile.load(profile_path), jokers=deck == 54)
    except ProfileError as e:
        raise UserError(str(e)) from None
