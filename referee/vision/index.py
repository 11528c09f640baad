"""The card's corner index: rank glyph and suit pip cut out of an upright card, and scored.

The index in the top-left corner (the bottom-right one is read by turning the card round):
the crop grows to fit the index, Otsu separates the ink, long straight lines (a court
picture's frame) are taken out, and the blobs are grouped in rows, rank above suit pip.
The built-in index model (`index_model`) names each glyph; the ink's colour (red or black)
weighs the suit.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from referee.cards import JOKER_CODE, RANKS, SUITS

from .index_model import UNKNOWN, glyph_features, load_model

_REDS = ("H", "D")
# What `_index_parts` finds in a corner: rank glyph, suit pip, red ink, rows, letters (see there).
Parts = tuple[np.ndarray, np.ndarray, bool, int, int]
_CORNER = (0.015, 0.24, 0.012, 0.36)  # x0, x1, y0, y1 as parts of the card
_WIDE = (0.34, 0.5)  # x1, y1 of the region searched for a larger index than _CORNER holds
_BAND = (0.015, 0.985, 0.012, 0.3)  # x0, x1, y0, y1: the top band an index laid across lies in


def corner_regions(size: tuple[int, int]) -> tuple[tuple[int, int, int, int], ...]:
    """The boxes (x0, y0, x1, y1) of an upright card `size` = (w, h) that its two corners' reading
    looks at (`_read_corner` of the card and of the card turned round): nothing else of it."""
    w, h = size
    x1, y1 = round(_WIDE[0] * w), round(_WIDE[1] * h)
    return (0, 0, x1, y1), (w - x1, h - y1, w, h)


def band_regions(size: tuple[int, int]) -> tuple[tuple[int, int, int, int], ...]:
    """The boxes (x0, y0, x1, y1) of an upright card `size` = (w, h) that `_read_beside` looks at,
    of the card and of the card turned round: its top and bottom bands."""
    w, h = size
    y1 = round(_BAND[3] * h)
    return (0, 0, w, y1), (0, h - y1, w, h)


def _weakest(image: np.ndarray) -> np.ndarray:
    """Each pixel's weakest channel (OpenCV's min is several times faster than numpy's here)."""
    if image.ndim != 3:
        return image
    return cv2.min(cv2.min(image[:, :, 0], image[:, :, 1]), image[:, :, 2])


_FLAT = 0.3  # the window, as a part of the card's width, that a pixel's paper is looked for in
_EVEN = 0.85  # the paper's darkest over its brightest that is an even light (see _flat)


def _flat(grey: np.ndarray, card_w: int) -> np.ndarray:
    """`grey` with the light evened out: each pixel over the paper round it (a closing, on a copy
    a quarter the size: cheaper, and the light changes slowly). A hand's or a lamp's shadow across
    the index would otherwise be dark enough to be taken for ink, and swallow the glyphs it falls
    on. The closing is wider than any index glyph is thick, so the glyphs stay dark. Under an even
    light `grey` is left as it is: evening it out moves a glyph's soft edge by a pixel, and a glyph
    that touches a frame's line may then read otherwise."""
    h, w = grey.shape[:2]
    small = cv2.resize(grey, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    k = max(3, round(_FLAT * card_w / 4) | 1)
    paper = cv2.morphologyEx(small, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    lo, hi, _, _ = cv2.minMaxLoc(paper)
    if lo >= _EVEN * hi:
        return grey
    paper = cv2.resize(paper, (w, h), interpolation=cv2.INTER_LINEAR)
    return cv2.divide(grey, cv2.max(paper, 1), scale=255)


def _otsu_ink(region: np.ndarray, card_w: int) -> np.ndarray | None:
    """The ink (255) of a region of a card `card_w` px wide, its light evened out (`_flat`) and
    split by Otsu's threshold; None when the region is too flat to hold any."""
    grey = _flat(_weakest(region), card_w)
    if int(grey.max()) - int(grey.min()) < 40:
        return None
    return cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)[1]


def _corner_crop(warped: np.ndarray) -> np.ndarray:
    """The index corner: the fixed `_CORNER` box, grown to hold the rank and suit when they are larger."""
    return _corner_and_grey(warped)[0]


def _corner_and_grey(warped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The index corner (see `_corner_crop`) and its weakest channel: a corner of the wider
    region's, which is worked out anyway."""
    h, w = warped.shape[:2]
    x0, x1, y0, y1 = _CORNER
    ix0, iy0 = round(x0 * w), round(y0 * h)
    ix1, iy1 = round(x1 * w), round(y1 * h)
    region = warped[iy0 : round(_WIDE[1] * h), ix0 : round(_WIDE[0] * w)]
    grey = _flat(_weakest(region), w)
    if int(grey.max()) - int(grey.min()) >= 40:
        _, ink = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
        _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        rank = _rank_row(stats.tolist(), ink.shape, (w, h))
        if rank is not None:
            _, top, bottom, right = rank
            bh = bottom - top
            ix1 = max(ix1, min(ix0 + round(right + 0.45 * bh), round(_WIDE[0] * w)))
            iy1 = max(iy1, min(iy0 + round(bottom + 1.35 * bh), round(_WIDE[1] * h)))
    # The crop starts where the region does and lies inside it: its grey is a corner of the region's.
    return warped[iy0:iy1, ix0:ix1], grey[: iy1 - iy0, : ix1 - ix0]


def _rank_row(
    rows: list[list[int]], shape: tuple[int, ...], card: tuple[int, int]
) -> tuple[list[int], int, int, int] | None:
    """The rank's blobs among connected components' `rows` of stats in a crop of `shape` from the
    card's top-left corner (a card `card` = (w, h) px), and the row's top, bottom and right: its
    first glyph is the topmost glyph-sized blob near the left edge, and beside it the 0 of a 10."""
    w, h = card
    rh, rw = shape[:2]
    first = None
    for k in range(1, len(rows)):
        x, y, bw, bh, area = rows[k]
        if (x == 0 and y == 0) or bh < 0.05 * h or bh > 0.2 * h or bw > 0.3 * w or x > 0.1 * w:
            continue
        if area < 0.15 * bw * bh or x + bw >= rw or y + bh >= rh:
            continue
        if first is None or y < rows[first][cv2.CC_STAT_TOP]:
            first = k
    if first is None:
        return None
    x, y, bw, bh, _ = rows[first]
    blobs, top, bottom, right = [first], y, y + bh, x + bw
    for k in range(1, len(rows)):  # the rest of the rank's row (the 0 of a 10)
        kx, ky, kw, kh, _ = rows[k]
        beside = k != first and right - 2 <= kx < right + 0.3 * bh and kw < bh
        if beside and 0.75 * bh < kh < 1.25 * bh and abs(ky - top) < 0.2 * bh:
            blobs.append(k)
            right = max(right, kx + kw)
    return blobs, top, bottom, right


def _painted(labels: np.ndarray, n: int, blobs: list[int]) -> np.ndarray:
    """255 on the given blobs of a label image (of `n` labels), 0 elsewhere: a lookup, several times
    cheaper than np.isin."""
    table = np.zeros(n, np.uint8)
    table[blobs] = 255
    return table.take(labels)


def _has_hole(mask: np.ndarray) -> bool:
    """Whether a glyph (non-zero = ink) encloses background bigger than a speck: a 0 does, a pip
    doesn't."""
    padded = cv2.copyMakeBorder(mask.astype(np.uint8), 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    n, _, stats, _ = cv2.connectedComponentsWithStats(cv2.compare(padded, 0, cv2.CMP_EQ), connectivity=4)
    return any(stats[k, cv2.CC_STAT_AREA] >= 3 for k in range(2, n))


def _same_line(row: list[int], stats: list[list[int]], labels: np.ndarray, least: float = 0.0) -> list[int]:
    """The leftmost blob of a row at least `least` of the row's height, and beside it the 0 of a
    10: of its height and with a hole, unlike a big pip or a picture that shares the row."""
    tallest = max(stats[k][cv2.CC_STAT_HEIGHT] for k in row)
    row = sorted(row, key=lambda k: stats[k][cv2.CC_STAT_LEFT])
    first = next(i for i, k in enumerate(row) if stats[k][cv2.CC_STAT_HEIGHT] >= least * tallest)
    h = stats[row[first]][cv2.CC_STAT_HEIGHT]
    out = [row[first]]
    for k in row[first + 1 :]:
        x, y, bw, bh, _ = stats[k]
        if 0.7 * h <= bh <= 1.3 * h and _has_hole(labels[y : y + bh, x : x + bw] == k):
            out.append(k)
    return out


def _pieces(glyph: list[int], specks: list[int], stats: list[list[int]], above: int) -> list[int]:
    """The specks that lie over a glyph's columns, between `above` and the glyph's bottom: pieces
    of it that blur broke off (the top leaf of a small club)."""
    x0 = min(stats[k][cv2.CC_STAT_LEFT] for k in glyph)
    x1 = max(stats[k][cv2.CC_STAT_LEFT] + stats[k][cv2.CC_STAT_WIDTH] for k in glyph)
    y1 = max(stats[k][cv2.CC_STAT_TOP] + stats[k][cv2.CC_STAT_HEIGHT] for k in glyph)
    out = []
    for k in specks:
        x, y, bw, bh, _ = stats[k]
        if x >= x0 and x + bw <= x1 and y >= above and y + bh <= y1:
            out.append(k)
    return out


def _cut_pictures(ink: np.ndarray, labels: np.ndarray, stats: list[list[int]]) -> bool:
    """Cut a glyph from a big pip or picture it touches (a court card's J against its spade).

    A blob in the index column that is wider than tall (or about as wide, barely joined) is cut
    at its thinnest column, and the right part dropped unless it has a hole: a 10 whose digits
    touch stays whole.
    Changes `ink`; True if it cut anything."""
    ch, cw = ink.shape
    cut = False
    for k in range(1, len(stats)):
        x, y, bw, bh, _ = stats[k]
        if x > 0.3 * cw or bw < 0.9 * bh or bh < 0.1 * ch:
            continue
        mask = labels[y : y + bh, x : x + bw] == k
        cols = np.count_nonzero(mask, axis=0)
        lo, hi = round(0.2 * bw), round(0.85 * bw)
        if hi <= lo:
            continue
        at = lo + int(np.argmin(cols[lo:hi]))
        # A blob about as wide as tall may be one glyph (a wide K): cut only where it barely
        # touches (a condensed K's leg against the big pip beside it).
        thinnest = 0.25 if bw >= 1.15 * bh else 0.12
        if cols[at] <= thinnest * cols.max() and not _has_hole(mask[:, at:]):
            ink[y : y + bh, x + at : x + bw][mask[:, at:]] = 0
            cut = True
    return cut


def _index_parts(warped: np.ndarray, lift: float = 0.0) -> Parts | None:
    """Rank glyph, suit pip (each 255 = ink on its own canvas), whether the ink is red, the
    number of rows of glyphs, and how many of them a word down the corner fills (`_letters`).
    `lift`: the ink's threshold this share of the way from Otsu's up to the paper's grey (see
    _read_corner)."""
    crop, grey = _corner_and_grey(warped)  # red ink is dark in its weakest channel
    if int(grey.max()) - int(grey.min()) < 40:
        return None
    level, ink = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    if lift:
        paper = float(np.percentile(grey, _PAPER))
        _, ink = cv2.threshold(grey, level + lift * max(paper - level, 0.0), 255, cv2.THRESH_BINARY_INV)
    ch = ink.shape[0]
    cut = _drop_rules(ink)
    n, labels, stats_array, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    stats = stats_array.tolist()  # plain ints: numpy scalars are slow to unpack and compare one by one
    if _cut_pictures(ink, labels, stats):
        n, labels, stats_array, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        stats = stats_array.tolist()
    keep, specks = _glyph_blobs(ink, labels, stats, n, cut)
    if not keep:
        return None
    rows = _rows(keep, stats)
    # The rank is the first row that is big enough; tiny specks above are noise.
    big = [r for r in rows if max(stats[k][cv2.CC_STAT_HEIGHT] for k in r) >= 0.06 * ch]
    if len(big) < 2:
        return None
    # A rank row's blob less than half its height is no glyph of it (a piece of the card's outline
    # left of the rank); a pip may be, beside a bigger one.
    rank_blobs = _same_line(big[0], stats, labels, 0.5)
    letters = _letters(big, stats, rank_blobs[0])
    rank = _painted(labels, n, rank_blobs)
    suit_blobs = _same_line(big[1], stats, labels)
    rank_bottom = max(stats[k][cv2.CC_STAT_TOP] + stats[k][cv2.CC_STAT_HEIGHT] for k in rank_blobs)
    suit_blobs += _pieces(suit_blobs, specks, stats, int(rank_bottom))
    suit = _painted(labels, n, suit_blobs)
    suit = _trim_suit(suit, rank)
    if suit is None:
        return None
    return rank, suit, _redness(crop, ink) > 0.15, len(big), letters


def _letters(big: list[list[int]], stats: list[list[int]], rank: int) -> int:
    """How many rows from the top start with a glyph of the rank's size (blob `rank`), each right
    under the one above: a word written down the corner (JOKER) has four or more, an index two."""
    x, y, w0, h0, _ = stats[rank]
    cx, bottom, count = x + w0 / 2, y + h0, 1
    for row in big[1:]:
        k = min(row, key=lambda b: stats[b][cv2.CC_STAT_LEFT])
        bx, by, bw, bh, _ = stats[k]
        under = abs(bx + bw / 2 - cx) <= 0.5 * max(w0, bw) and by - bottom <= h0
        if not (under and 0.7 * h0 <= bh <= 1.3 * h0):
            break
        count, bottom = count + 1, by + bh
    return count


def _glyph_blobs(
    ink: np.ndarray, labels: np.ndarray, stats: list[list[int]], n: int, cut: np.ndarray | None
) -> tuple[list[int], list[int]]:
    """The ink blobs that may be index glyphs, and the specks (too small for a glyph, maybe a
    piece of a pip that blur broke)."""
    ch, cw = ink.shape
    keep: list[int] = []
    specks: list[int] = []
    for k in range(1, n):
        x, y, bw, bh, area = stats[k]
        if area < 6 or bh < 3:
            continue
        if bw < 0.1 * ch and bh < 0.1 * ch:
            # Smaller than any index glyph: a speck heading a row would be taken for the rank, but
            # it may be a piece of a pip that blur broke (a club's leaf), put back below.
            specks.append(k)
            continue
        touches = x == 0 or y == 0 or x + bw >= cw or y + bh >= ch
        # The table seen past a rounded corner fills the crop's corner, and the card's outline
        # curves round it as a line; a glyph-tall blob of thicker strokes that only touches both
        # edges is an index set close to them (a condensed 1 in a misfit warp).
        line = area < 2 * bh  # a line (no glyph's strokes are this thin on average)
        past_corner = x == 0 and y == 0 and (labels[0, 0] == k or bh < 0.2 * ch or line)
        if past_corner or (x + bw >= cw and y + bh >= ch and (bw > 0.5 * cw or bh > 0.5 * ch)):
            continue  # the table seen past a rounded corner, or a picture's corner
        if touches and (bw <= 3 or bh <= 3 or line or area < 0.2 * bw * bh or bw > 0.8 * cw or bh > 0.6 * ch):
            continue  # the card's outline or a court frame, not a glyph
        if x + bw >= cw and x > 0.6 * cw:
            continue  # the edge of a picture to the right
        # A small thin curve where a line was cut, or in the corner: the card's rounded corner.
        thin = area < 0.35 * bw * bh and bh < 0.2 * ch
        if thin and ((x < 0.15 * cw and y < 0.15 * ch) or (cut is not None and cut[labels == k].any())):
            continue
        keep.append(k)
    return keep, specks


def _rows(keep: list[int], stats: list[list[int]]) -> list[list[int]]:
    """Rows: blobs that overlap the row's first blob by half the smaller height belong together
    (the 1 and 0 of a 10). Measured against the first blob, not the row's growing span, so that
    a big pip beside the rank, reaching lower, doesn't swallow the suit row under it."""
    keep.sort(key=lambda k: stats[k][cv2.CC_STAT_TOP])
    rows: list[list[int]] = []
    for k in keep:
        top, kh = stats[k][cv2.CC_STAT_TOP], stats[k][cv2.CC_STAT_HEIGHT]
        if rows:
            a = rows[-1][0]
            at, ah = stats[a][cv2.CC_STAT_TOP], stats[a][cv2.CC_STAT_HEIGHT]
            if min(at + ah, top + kh) - max(at, top) >= 0.5 * min(ah, kh):
                rows[-1].append(k)
                continue
        rows.append([k])
    return rows


def _drop_rules(ink: np.ndarray) -> np.ndarray | None:
    """Take long straight lines out of the ink (a court picture's frame, the card's own edge): a
    rank that touches one would be one blob with it, too tall to be a glyph. Changes `ink`;
    returns where lines were cut (and round it), or None.

    OpenCV's opening counts the crop's edge as ink, so a run that reaches the bottom edge counts
    from half the length: picture strokes that join a pip from below are cut off with it (and so
    do runs across that reach a side: the table seen past the card's top edge, a frame's top).
    Not so the top edge, which the index itself sits against: a tall rank close to the card's top
    (a condensed serif 10 or 8) would have its upright strokes taken for rules."""
    ch, cw = ink.shape
    # Long runs of ink, less those that are thick across (the wide middle of a big pip is long too).
    # A blank margin above, as deep as the opening reaches, makes the top edge count as paper.
    long = max(8, round(0.6 * ch))
    down = cv2.copyMakeBorder(ink, long, 0, 0, 0, cv2.BORDER_CONSTANT, value=0)
    down = _opened_line(down, long, vertical=True)[long:]
    if cv2.countNonZero(down):  # (mostly there are none: the opening of nothing is nothing)
        down &= ~cv2.morphologyEx(down, cv2.MORPH_OPEN, np.ones((1, 5), np.uint8))
    across = _opened_line(ink, max(8, round(0.7 * cw)), vertical=False)
    if cv2.countNonZero(across):
        across &= ~cv2.morphologyEx(across, cv2.MORPH_OPEN, np.ones((5, 1), np.uint8))
    lines = down | across
    if not cv2.countNonZero(lines):
        return None
    cut = cv2.dilate(lines, np.ones((3, 3), np.uint8))
    ink &= ~cut
    return cv2.dilate(cut, np.ones((3, 3), np.uint8))


_ZEROS = cv2.BORDER_CONSTANT  # OpenCV's constant border: zeros


def _opened_line(ink: np.ndarray, length: int, vertical: bool) -> np.ndarray:
    """cv2.morphologyEx(ink, MORPH_OPEN, a line of ones `length` long), to the pixel (OpenCV's
    default borders: ink past the edge for the erosion, paper for the dilation), from two running
    counts: what is left of the erosion has no paper in its line, the opening some of that within
    the same line. OpenCV's opening costs about twice as much for a long line."""
    anchor = length // 2
    ksize, at = ((1, length), (0, anchor)) if vertical else ((length, 1), (anchor, 0))

    def count(image: np.ndarray) -> np.ndarray:  # non-zero pixels in each pixel's line (none past the edge)
        return cv2.boxFilter(image, cv2.CV_32S, ksize, anchor=at, normalize=False, borderType=_ZEROS)

    eroded = cv2.compare(count(cv2.compare(ink, 0, cv2.CMP_EQ)), 0, cv2.CMP_EQ)
    return cv2.compare(count(eroded), 0, cv2.CMP_GT)


def _trim_suit(suit: np.ndarray, rank: np.ndarray) -> np.ndarray | None:
    """The suit pip alone, where strokes of a picture beside it joined it (a queen's flower, a
    sceptre): the pip is no taller than the rank and about as wide, so what lies outside that box
    under the rank, and thin strokes, are cut off. None when no pip is left."""
    suit_px = cv2.countNonZero(suit)
    if cv2.countNonZero(rank) == 0 or suit_px == 0:
        return None
    # Bounding boxes of the ink (OpenCV's, of a mask's non-zero pixels: cheaper than np.nonzero).
    rx, _, rw, rh = cv2.boundingRect(rank)
    _, sy, sw, sh = cv2.boundingRect(suit)
    if sh <= 1.25 * rh and sw <= 1.5 * rh:
        return suit  # a pip's own size (some decks' pips are wider than the rank is tall)
    hull = cv2.convexHull(cv2.findNonZero(suit))
    if suit_px >= 0.75 * cv2.contourArea(hull):
        return suit  # solid: a big pip (a small rank beside it), not a pip with strokes
    centre = (rx + rx + rw - 1) / 2
    x0, x1 = max(0, round(centre - 0.75 * rh)), round(centre + 0.75 * rh) + 1
    y0, y1 = sy, sy + round(1.1 * rh)
    out = np.zeros_like(suit)
    out[y0:y1, x0:x1] = suit[y0:y1, x0:x1]
    k = max(2, round(0.12 * rh))
    out = cv2.morphologyEx(out, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(out, connectivity=8)
    if n < 2:
        return None
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return cv2.compare(labels, biggest, cv2.CMP_EQ)


def _redness(crop: np.ndarray, ink: np.ndarray) -> float:
    """How red the ink is, relative to the paper round it: over about 0.15 is red.

    The paper's median per channel comes from its histogram, and only the ink's own pixels are
    made float: the same values as medians of float copies of the crop, at half the cost."""
    if crop.ndim != 3:
        return 0.0
    n_ink = cv2.countNonZero(ink)
    n_paper = ink.size - n_ink
    if n_ink < 5 or n_paper < 5:
        return 0.0
    paper_mask = cv2.compare(ink, 0, cv2.CMP_EQ)
    hists = [cv2.calcHist([crop], [i], paper_mask, [256], [0, 256]).ravel() for i in range(3)]
    below = np.cumsum(hists, axis=1)
    # The two middle values (one when the count is odd), as np.median averages them.
    lo = (below < (n_paper - 1) // 2 + 1).sum(axis=1)
    hi = (below < n_paper // 2 + 1).sum(axis=1)
    paper = [float(v) / 2 + 1 for v in (lo + hi).tolist()]
    px = crop[ink > 0].astype(np.float32)
    bn, gn, rn = px[:, 0] / paper[0], px[:, 1] / paper[1], px[:, 2] / paper[2]
    return _median(rn - (gn + bn) / 2)


def _median(values: np.ndarray) -> float:
    """np.median of a 1-d array, to the bit (the two middle values' mean in the array's own type),
    without its overhead: a few us instead of ~20."""
    n = len(values)
    k = (n - 1) // 2
    if n % 2:
        return float(np.partition(values, k)[k])
    part = np.partition(values, (k, k + 1))
    return float((part[k] + part[k + 1]) / 2)


COLOUR_PENALTY = 3.0  # nats: ink colour is the surest cue to the suit
JOKER_SCORE = -2.0  # four rows down the corner spell JOKER, unless a card reads more surely
_WORD = 4  # glyphs of the rank's size stacked down the corner that are a word (JOKER), not an index
LIFT = 0.5  # a doubtful corner's second threshold: this share of the way from Otsu's to the paper's
_DOUBT = float(np.log(0.5))  # ... read when no card is likelier than this
_RANK_GROWTH = 1.6  # ... and taken only when the rank's ink grew this much with it (or was not found)
_PAPER = 90  # the percentile of a corner's grey levels that is its paper
_NO_CARD = (UNKNOWN, JOKER_CODE)  # codes a corner may score that name no card of a 52-card game


def _read_corner(warped: np.ndarray) -> dict[str, float] | None:
    """Log-likelihood-like scores for each code from one corner, or None when it holds no index:
    the built-in model's log-probabilities of rank and suit, the suit weighed by the ink's colour,
    and of code UNKNOWN (`index_model.UNKNOWN`): glyphs that are no index of the deck.

    A thin rank blurred is fainter than the pips beside it: Otsu's threshold, set between the
    paper and the darkest ink, keeps a piece of it or none. A corner that reads no card likely
    enough is read once more with the threshold lifted towards the paper (`LIFT`), and that
    reading is taken when it names a card likelier than the first did, and the rank grew with it
    (`_RANK_GROWTH`)."""
    parts = _index_parts(warped)
    scores = None if parts is None else _scores(*parts)
    first = _card_lp(scores)
    if first >= _DOUBT:
        return scores
    more = _index_parts(warped, LIFT)
    lifted = None if more is None else _scores(*more)
    if lifted is None or max(lifted, key=lifted.__getitem__) in _NO_CARD or _card_lp(lifted) <= first:
        return scores
    # Only a plain index, a rank over its pip, both times: more rows are a joker's lettering down
    # the corner, or a picture's pieces.
    if more[3] != 2 or (parts is not None and parts[3] != 2):
        return scores
    # A rank the first threshold kept whole (a Dutch B, refused) only grows by its soft edge: its
    # second reading is of the same glyph, fattened, and may look like some rank.
    if parts is not None and cv2.countNonZero(more[0]) < _RANK_GROWTH * cv2.countNonZero(parts[0]):
        return scores
    return lifted


def _card_lp(scores: dict[str, float] | None) -> float:
    """The best score of a card (neither UNKNOWN nor a joker) among `scores`, -inf when none."""
    return max((v for k, v in scores.items() if k not in _NO_CARD), default=-np.inf) if scores else -np.inf


def _beside_parts(warped: np.ndarray) -> Parts | None:
    """`_index_parts` of an index laid across the card's top (a modern deck's: the rank at the top
    left, its pip level with it at the top right), or None.

    The pip is the furthest blob right of the rank, level with it, of about its height, whole
    in the band, and it must end in the band's last fifth: a picture's piece seldom is all of
    these."""
    h, w = warped.shape[:2]
    x0, x1, y0, y1 = _BAND
    band = warped[round(y0 * h) : round(y1 * h), round(x0 * w) : round(x1 * w)]
    ink = _otsu_ink(band, w)
    if ink is None:
        return None
    _drop_rules(ink)
    n, labels, stats_array, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    stats = stats_array.tolist()
    found = _rank_row(stats, ink.shape, (w, h))
    if found is None:
        return None
    rank_blobs, top, bottom, right = found
    rh = bottom - top
    bh_, bw_ = ink.shape
    pip = None
    for k in range(1, n):
        x, y, bw, bh, area = stats[k]
        if k in rank_blobs or x < right or not 0.5 * rh <= bh <= 2.2 * rh or not 0.3 * rh <= bw <= 2.5 * rh:
            continue
        if min(y + bh, bottom) - max(y, top) < 0.5 * min(bh, rh) or area < 0.3 * bw * bh:
            continue
        if y == 0 or x + bw >= bw_ or y + bh >= bh_:
            continue  # cut by the band's edge: not a whole pip
        if pip is None or x + bw > stats[pip][cv2.CC_STAT_LEFT] + stats[pip][cv2.CC_STAT_WIDTH]:
            pip = k  # the furthest: a court's picture may hold a pip between
    if pip is None:
        return None
    if stats[pip][cv2.CC_STAT_LEFT] + stats[pip][cv2.CC_STAT_WIDTH] < 0.8 * bw_:
        return None  # not at the card's far side: a piece of a picture (inside a court's frame)
    glyphs = _painted(labels, n, [*rank_blobs, pip])
    return _painted(labels, n, rank_blobs), _painted(labels, n, [pip]), _redness(band, glyphs) > 0.15, 2, 1


def _read_beside(warped: np.ndarray) -> dict[str, float] | None:
    """`_read_corner`'s scores for an index laid across the card's top (`_beside_parts`)."""
    parts = _beside_parts(warped)
    return None if parts is None else _scores(*parts)


def _scores(
    rank: np.ndarray, suit: np.ndarray, red: bool, n_rows: int, letters: int
) -> dict[str, float] | None:
    """Scores per code of a rank glyph and a suit pip (`_read_corner`'s), None when either holds
    too little ink to be a glyph. `n_rows`: rows of glyphs down the corner (four spell JOKER);
    `letters`: of those, glyphs of the rank's size stacked under it (`_letters`)."""
    rank_f, suit_f = glyph_features(rank), glyph_features(suit)
    if rank_f is None or suit_f is None:
        return None
    rank_net, suit_net = load_model()
    rank_lp = dict(zip(rank_net.classes, rank_net.log_probs(rank_f)[0].tolist(), strict=True))
    suit_lp = dict(zip(suit_net.classes, suit_net.log_probs(suit_f)[0].tolist(), strict=True))
    # How likely each glyph is none of the deck's (a Dutch B, the O of JOKER): the corner is then
    # no card's, scored as code UNKNOWN against the cards (a model without the class has none).
    not_rank, not_suit = rank_lp.pop(UNKNOWN, None), suit_lp.pop(UNKNOWN, None)
    for s in SUITS:
        if (s in _REDS) != red:
            suit_lp[s] -= COLOUR_PENALTY
    out = {r + s: rank_lp[r] + suit_lp[s] for r in RANKS for s in SUITS}
    unknown = 0.0
    if not_rank is not None and not_suit is not None:
        unknown = 1.0 - (1.0 - np.exp(not_rank)) * (1.0 - np.exp(not_suit))
    if letters >= _WORD:
        # A word down the corner, not a rank over its pip: the joker's, whatever its J and O
        # look like (a blurred O is a blob, read as a club).
        out[JOKER_CODE] = 0.0
        unknown = 0.0
    elif n_rows >= 4:  # JOKER written down the corner, unless a card reads more surely
        # Its J over an O that is no pip is a joker's, not some unknown index: that share of the
        # unknown's chance is the joker's.
        joker = float(np.exp(rank_lp["J"] + not_suit)) if not_suit is not None else 0.0
        out[JOKER_CODE] = max(JOKER_SCORE, float(np.log(max(joker, 1e-12))))
        unknown -= min(joker, unknown)
    if not_rank is not None and not_suit is not None:
        out[UNKNOWN] = float(np.log(max(unknown, 1e-12)))
    return out


_BODY = (0.1, 0.9, 0.05, 0.95)  # x0, x1, y0, y1: the part of the card its body pips are looked for in
_BODY_INDEX = (0.22, 0.36)  # ... but for blobs centred in its index corners, this far in (x, y)
_BODY_LEAST = 3  # pips of one size it takes: two may be a court picture's pieces (a queen's flowers)
_BODY_SURE = 0.85  # ... and how likely their suit must be, on average, to say anything
_PIP_LOST = 2.0  # nats a number card loses that shows more pips than were counted (see `_count_loss`)
_PICTURE = 3.0  # ... and a court's picture, or no card's, when they are pips of a suit
_COURT_PIPS = 6  # the most pips of one size found on a court (a queen's flowers; see `most_pips`)
BODY_CAP = 6.0  # nats: the most the body pips take off a suit, and what a rank their count rules out loses


def body_region(size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The box (x0, y0, x1, y1) of an upright card `size` = (w, h) that `read_body` looks at."""
    w, h = size
    x0, x1, y0, y1 = _BODY
    return round(x0 * w), round(y0 * h), round(x1 * w), round(y1 * h)


class Body(NamedTuple):
    """What a card's body pips say (`read_body`): their suit's log-probabilities (None when they
    say none surely), how many pips of one size there are (0 when there is no ink), how many
    stand alone in an ace's or a two's places with no other ink in the body (`_sparse_pips`:
    1 or 2; 0, neither), whether it holds a court's picture (`_pictured`), whether a place
    where every card from 4 to 10 prints a pip is bare (`_bare_corner`), whether its middle
    column holds ink where a 4's and a 6's never does (`_inked_middle`), and which suit its pips
    lean to, however little (their suit's log-probabilities, None when there are too few)."""

    suits: dict[str, float] | None
    count: int
    sparse: int = 0
    picture: bool = False
    bare: bool = False
    middle: bool = False
    lean: dict[str, float] | None = None


def read_body(warped: np.ndarray) -> Body:
    """The pips in the card's body (`_BODY`): pip-like blobs of one size, and their suit (see
    `_pips_lean`).

    The index's pip is a small glyph; blurred, a club and a spade are alike there, and a blurred 8
    is a Q's blob. A number card's body pips are three to five times its size, and there are as
    many of them as its rank says."""
    h, w = warped.shape[:2]
    left, top, right, bottom = body_region((w, h))
    ink = _otsu_ink(warped[top:bottom, left:right], w)
    if ink is None:
        return Body(None, 0)
    _, labels, stats_array, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    ix, iy = round(_BODY_INDEX[0] * w) - left, round(_BODY_INDEX[1] * h) - top
    corners = ((0, 0, ix, iy), (right - left - ix, bottom - top - iy, right - left, bottom - top))
    stats = stats_array.tolist()
    pips = _pip_blobs(stats, ink.shape, w, corners)
    # Some decks print the index in all four corners: none of them is an ace's or a two's pip.
    rw, rh = right - left, bottom - top
    four = (*corners, (rw - ix, 0, rw, iy), (0, rh - iy, ix, rh))
    sparse = _sparse_pips(stats, (w, h), (left, top), four)
    if len(sparse) == 1:
        region = warped[top:bottom, left:right]
        red = _redness(region, cv2.compare(labels, sparse[0], cv2.CMP_EQ)) > 0.15
        suits = _lone_suit(labels, stats[sparse[0]], sparse[0], red)
        return Body(suits, len(pips), 1, lean=suits)
    if len(sparse) in (2, 3):
        # A 2's pair, or a 3's less its middle pip (upright either way up, so not read): two
        # pips are enough to name the suit, as they name a spade whose small index reads as a
        # club. (Before the varied pips of session 24 two blurred pips named a 2 of spades as
        # clubs on the own styles; a wrong suit here only costs a reading's sureness.)
        lean = _pips_lean(labels, pips, top, h, least=2)
        return Body(_sure_suit(lean), len(pips), len(sparse), lean=lean)
    lean = _pips_lean(labels, pips, top, h)
    return Body(
        _sure_suit(lean),
        len(pips),
        picture=_pictured(stats, (w, h), rw),
        bare=_bare_corner(ink, (w, h), (left, top)),
        middle=_inked_middle(ink, (w, h), (left, top)),
        lean=lean,
    )


_MIDDLE = (0.44, 0.56, 0.1, 0.9)  # x0, x1, y0, y1 of the card: the column between a 4's or a 6's pips
_MIDDLE_RUN = 0.08  # ... the height of a band of it (of the card's), and the share of the band
_MIDDLE_INKED = 0.5  # that is ink, at the most inked place, that is a pip's or a picture's


def _inked_middle(ink: np.ndarray, size: tuple[int, int], at: tuple[int, int]) -> bool:
    """Whether the middle column of the card (`_MIDDLE`) holds a band `_MIDDLE_RUN` of its height
    at least `_MIDDLE_INKED` ink: `ink` of the body region at `at` on a card `size` = (w, h). A 4
    and a 6 print their pips in two columns only; a 5, a 7, a 9 and a 10 print one between them,
    and a court's or a joker's picture fills it. On the design data of `_bare_corner`, 1 of 528
    fours and sixes had one (a deck with big pips, its outline 4 % off), and 90 to 100 % of
    every other rank from 5 up and of the jokers did."""
    column = _part(ink, _MIDDLE, size, at)
    if column.size == 0:
        return False
    rows = np.count_nonzero(column, axis=1) / column.shape[1]
    run = max(1, round(_MIDDLE_RUN * size[1]))
    if rows.size < run:
        return False
    return bool((np.convolve(rows, np.ones(run) / run, mode="valid") >= _MIDDLE_INKED).any())


_PIP_CORNERS = ((0.2, 0.42), (0.58, 0.8)), ((0.1, 0.32), (0.68, 0.9))  # x spans, y spans of the card
_BARE = 0.02  # ... the share of one of them that is ink, below which it holds no pip


def _bare_corner(ink: np.ndarray, size: tuple[int, int], at: tuple[int, int]) -> bool:
    """Whether one of the four places where every card from 4 to 10 prints a corner pip of its
    layout (`_PIP_CORNERS`, clear of the index) is all but bare: `ink` of the body region at
    `at` on a card `size` = (w, h). On the tuning side's eleven decks drawn clean, their
    outlines off by up to 4 % of a width and blurred, 2 % of one deck's number cards (small
    pips) had one, and the jokers of eight decks of the eleven did (their picture is in the
    middle); a court's may too, so only the number cards lose by it."""
    for x0, x1 in _PIP_CORNERS[0]:
        for y0, y1 in _PIP_CORNERS[1]:
            zone = _part(ink, (x0, x1, y0, y1), size, at)
            if zone.size and cv2.countNonZero(zone) < _BARE * zone.size:
                return True
    return False


def _part(
    ink: np.ndarray, box: tuple[float, float, float, float], size: tuple[int, int], at: tuple[int, int]
) -> np.ndarray:
    """The part `box` (x0, x1, y0, y1 as parts of the card) of `ink`, the body region at `at` on a
    card `size` = (w, h)."""
    (w, h), (x0, x1, y0, y1) = size, box
    return ink[round(y0 * h) - at[1] : round(y1 * h) - at[1], round(x0 * w) - at[0] : round(x1 * w) - at[0]]


def _pictured(stats: list[list[int]], size: tuple[int, int], region_w: int) -> bool:
    """Whether one of the body region's blobs (`stats`, the region `region_w` px wide on a card
    `size` = (w, h)) is a picture's: half the card's height or more, a third of its width or
    more, and clear of the region's sides (a misfit outline's strip of the table is not). On the
    tuning side's eleven decks, blurred up to 3 px, no number card or ace has one and 44 %
    of courts do."""
    w, h = size
    return any(
        bh >= 0.5 * h and bw >= 0.3 * w and x > 0 and x + bw < region_w for x, _, bw, bh, _ in stats[1:]
    )


def _lone_suit(labels: np.ndarray, stat: list[int], k: int, red: bool) -> dict[str, float] | None:
    """Log-chances of each suit from an ace's lone pip (blob `k` of `labels`, its box x, y, w, h
    first in `stat`; `red` ink or not), or
    None when it names none surely: a big, clean glyph, but upright only when the card lies the
    right way up, which the corners do not tell (they read alike either way). So each suit takes
    its better chance of the two ways up (a spade turned over reads as a diamond, a heart as a
    spade, a club as a diamond), and only the suits of the pip's colour are weighed."""
    x, y, bw, bh = stat[:4]
    glyph = cv2.compare(labels[y : y + bh, x : x + bw], k, cv2.CMP_EQ)
    features = [glyph_features(g) for g in (glyph, cv2.flip(glyph, -1))]
    if any(f is None for f in features):
        return None
    _, net = load_model()
    better = np.exp(net.log_probs(np.vstack(features))).max(axis=0)
    lp = {c: float(np.log(p + 1e-9)) for c, p in zip(net.classes, better.tolist(), strict=True)}
    for suit in SUITS:
        if (suit in _REDS) != red:
            lp[suit] = float(np.log(1e-9))
    best = max(lp, key=lp.__getitem__)
    if best == UNKNOWN or lp[best] < np.log(_BODY_SURE):
        return None
    return {s: lp[s] for s in SUITS}


_LONE_AT = (0.35, 0.65, 0.38, 0.62)  # x0, x1, y0, y1 of the card: where an ace's lone pip lies
_TWO_AT = (0.38, 0.62, 0.1, 0.38)  # ... and a two's upper pip (its lower one, turned about the centre)
_THREE_AT = (0.38, 0.62, 0.4, 0.6)  # ... and a three's middle one


def _sparse_pips(
    stats: list[list[int]], size: tuple[int, int], at: tuple[int, int], corners: tuple[tuple[int, ...], ...]
) -> tuple[int, ...]:
    """The labels of the body region's blobs of ink when they are an ace's pip or a two's pips,
    else (): of the region's blobs (`stats`, the region at `at` on a card `size` = (w, h)), specks
    and those in the index `corners` left out, one solid blob 8 to 60 % of the card's width
    centred in `_LONE_AT`, or two of one size, 7 to 30 % of its width, in `_TWO_AT` and the
    place opposite it through the card's centre. Every other number card prints more pips, or
    pips elsewhere, and a court a picture of many parts. A blob cut by the region's edge
    counts: a number card's outer pip may be."""
    w, h = size
    speck = (0.03 * w) ** 2
    blobs = []
    for k, (x, y, bw, bh, area) in enumerate(stats[1:], 1):
        cx, cy = x + bw / 2, y + bh / 2
        if area < speck or any(x0 <= cx < x1 and y0 <= cy < y1 for x0, y0, x1, y1 in corners):
            continue
        blobs.append((cx + at[0], cy + at[1], bw, bh, area, k))
    solid = all(area >= 0.3 * bw * bh for *_, bw, bh, area, _k in blobs)
    if len(blobs) == 1 and solid:
        cx, cy, bw, bh, _, k = blobs[0]
        return (k,) if _within(cx / w, cy / h, _LONE_AT) and 0.08 * w <= max(bw, bh) <= 0.6 * w else ()
    if len(blobs) in (2, 3) and solid:
        ordered = sorted(blobs, key=lambda b: b[1])
        (ax, ay, *_), (bx, by, *_) = ordered[0], ordered[-1]
        placed = _within(ax / w, ay / h, _TWO_AT) and _within(1 - bx / w, 1 - by / h, _TWO_AT)
        if len(blobs) == 3:  # a three's: a two's pair and one between them, at the centre
            placed = placed and _within(ordered[1][0] / w, ordered[1][1] / h, _THREE_AT)
        sized = all(0.07 * w <= min(bw, bh) and max(bw, bh) <= 0.3 * w for _, _, bw, bh, _, _ in blobs)
        areas = [b[4] for b in blobs]
        even = max(areas) <= min(areas) / 0.7  # of one size
        return tuple(b[5] for b in ordered) if placed and sized and even else ()
    return ()


def _within(x: float, y: float, box: tuple[float, float, float, float]) -> bool:
    return box[0] <= x <= box[1] and box[2] <= y <= box[3]


def _sure_suit(lean: dict[str, float] | None) -> dict[str, float] | None:
    """The pips' suit log-probabilities (`_pips_lean`) when they name a suit surely, else None."""
    if lean is None:
        return None
    best = max(lean, key=lean.__getitem__)
    if best == UNKNOWN or lean[best] < np.log(_BODY_SURE):
        return None
    return {s: lean[s] for s in SUITS}


def _pips_lean(
    labels: np.ndarray, pips: list[tuple[int, ...]], top: int, h: int, least: int = _BODY_LEAST
) -> dict[str, float] | None:
    """Log-probabilities of each suit and of none (`UNKNOWN`) from the `pips` (x, y, w, h, label
    in `labels`, whose first row is the card's row `top` of `h`), or None when there are fewer
    than `least` (a court's may be pieces of its picture): the mean of each pip's suit network
    chances, those in the lower half turned upright."""
    if len(pips) < least:
        return None
    # The lower half's pips are printed upside down, and the network knows upright ones; a pip
    # across the middle is upright on a card either way up, so it says nothing of which.
    features = []
    for x, y, bw, bh, k in pips:
        at = (top + y + bh / 2) / h
        if 0.45 <= at <= 0.55:
            continue
        glyph = cv2.compare(labels[y : y + bh, x : x + bw], k, cv2.CMP_EQ)
        features.append(glyph_features(cv2.flip(glyph, -1) if at > 0.55 else glyph))
    if len(features) < least or any(f is None for f in features):
        return None
    _, net = load_model()
    # The mean chance, not the mean log: one pip misread (a smudge, a glare) does not veto the rest.
    mean = np.log(np.exp(net.log_probs(np.vstack(features[:6]))).mean(axis=0) + 1e-9)
    return dict(zip(net.classes, mean.tolist(), strict=True))


def _pip_blobs(
    stats: list[list[int]], shape: tuple[int, int], card_w: int, corners: tuple[tuple[int, ...], ...]
) -> list[tuple[int, ...]]:
    """The blobs (x, y, w, h, label) that may be body pips: whole in the region, not centred in the
    index `corners` (boxes x0, y0, x1, y1), solid, about as wide as tall, 7 to 30 % of the card's
    width, and of the median one's area (0.7 to 1.4 times)."""
    rh, rw = shape
    found = []
    for k in range(1, len(stats)):
        x, y, bw, bh, area = stats[k]
        if not (0.07 * card_w <= min(bw, bh) and max(bw, bh) <= 0.3 * card_w and 0.6 <= bw / bh <= 1.6):
            continue
        if x == 0 or y == 0 or x + bw >= rw or y + bh >= rh or area < 0.4 * bw * bh:
            continue
        cx, cy = x + bw / 2, y + bh / 2
        if any(x0 <= cx < x1 and y0 <= cy < y1 for x0, y0, x1, y1 in corners):
            continue
        found.append((x, y, bw, bh, k, area))
    if not found:
        return []
    median = float(np.median([f[5] for f in found]))
    return [f[:5] for f in found if 0.7 * median <= f[5] <= 1.4 * median]


def in_doubt(scores: dict[str, float]) -> bool:
    """Whether the code `scores` name best (a card, or no card of the deck) has a rival within
    `BODY_CAP`: then the body's pips may settle it (`read_body`), else they need not be read."""
    ranked = sorted(scores.values(), reverse=True)
    return len(ranked) > 1 and ranked[1] > ranked[0] - BODY_CAP


def most_pips(rank: str) -> int:
    """The most body pips of one size a card of `rank` shows: a number card its number, an ace
    one, and a court up to `_COURT_PIPS` (pieces of its picture, or pips beside it)."""
    return {"A": 1, "J": _COURT_PIPS, "Q": _COURT_PIPS, "K": _COURT_PIPS}.get(rank) or int(rank)


def _count_loss(rank: str | None, counted: int, suited: bool) -> float:
    """Nats a card of `rank` loses when `counted` pips of one size were found in its body (0: too
    few, or more than a ten has, to say anything), `suited` when they named their suit. None:
    no card of the deck (a joker, a foreign index), whose body is a picture, like a court's.

    A pip may be lost to a glare, a shadow or two pips run together, but none is added: a
    number card showing fewer pips than were counted, or an ace, is out. One showing more
    loses a little. A picture makes up to `_COURT_PIPS` of one size, rarely a suit's (a court
    with pips beside its figure)."""
    if not counted:
        return 0.0
    if rank is None or rank in ("J", "Q", "K"):
        if counted > _COURT_PIPS:
            return BODY_CAP
        return _PICTURE if suited else 0.0
    most = most_pips(rank)
    if most < counted:
        return BODY_CAP
    return _PIP_LOST if most > counted else 0.0


def _sparse_loss(rank: str | None, sparse: int) -> float:
    """Nats a card of `rank` (None: no card of the deck) loses when its body shows only an ace's
    lone pip (`sparse` 1) or a two's pair (2; see `_sparse_pips`): every other card of the deck
    prints more ink there, but a three whose middle pip a glare hid loses only `_PIP_LOST`. No
    card of the deck loses nothing to a lone blob: a joker's picture may be one star."""
    if not sparse or (rank is None and sparse == 1):
        return 0.0
    fits = {1: "A", 2: "2", 3: "3"}[sparse]
    if rank == fits:
        return 0.0
    return _PIP_LOST if (sparse, rank) == (2, "3") else BODY_CAP


def weigh_body(scores: dict[str, float], body: Body) -> dict[str, float]:
    """`scores` weighed by the body's pips (`read_body`): a suit they make less likely than their
    best loses that many nats, at most `BODY_CAP`, and a rank what their count (`_count_loss`)
    or their places (an ace's, a two's: `_sparse_loss`) say against it; a picture rules out the
    number cards and the aces."""
    top = max(body.suits.values()) if body.suits else 0.0
    counted = body.count if _BODY_LEAST <= body.count <= most_pips("10") else 0
    suited = body.suits is not None
    out = {}
    for k, v in scores.items():
        rank = None if k in _NO_CARD else k[:-1]
        if rank is not None and body.suits:
            v += max(body.suits[k[-1]] - top, -BODY_CAP)
        out[k] = v - _count_loss(rank, counted, suited) - _sparse_loss(rank, body.sparse)
        if body.picture and rank is not None and rank not in ("J", "Q", "K"):
            out[k] -= BODY_CAP  # a number card or an ace prints pips, never a picture
        if body.bare and rank is not None and rank not in ("A", "2", "3", "J", "Q", "K"):
            out[k] -= _PICTURE  # a 4 to a 10 prints a pip in each corner of its layout
        if body.middle and rank in ("4", "6"):
            out[k] -= _PICTURE  # ... and a 4 and a 6 none between its two columns
    return out
