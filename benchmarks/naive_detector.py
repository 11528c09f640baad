"""The naive baseline the referee's recogniser is measured against.

This is the best-known Raspberry Pi card detector's method, rewritten here in a
few lines:
1. threshold the whole frame once, at one global level;
2. take external contours with 4 corners as cards;
3. flatten the largest into a 200x300 card, cut its top-left corner, split it
   into rank and suit, and match each against templates by absolute difference.

It needs a dark cloth, good light and cards that do not overlap. It exists only
so that the benchmarks can show, in one run, what the real recogniser gains.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from referee.cards import RANKS, SUITS, parse_card
from referee.sim.render import STYLES, draw_card

CARD_W, CARD_H = 200, 300
CORNER_W, CORNER_H = 32, 84
RANK_SIZE, SUIT_SIZE = (70, 125), (70, 100)
BKG_THRESH = 60  # the original adds this to the background level to pick its threshold


def _flatten(image: np.ndarray, pts: np.ndarray) -> np.ndarray:
    pts = pts.reshape(4, 2).astype(np.float32)
    s, d = pts.sum(axis=1), np.diff(pts, axis=1).ravel()
    ordered = np.array([pts[s.argmin()], pts[d.argmin()], pts[s.argmax()], pts[d.argmax()]], np.float32)
    w = np.linalg.norm(ordered[1] - ordered[0])
    h = np.linalg.norm(ordered[3] - ordered[0])
    if w > h:  # lying on its side: turn it upright
        ordered = np.roll(ordered, -1, axis=0)
    target = np.array([[0, 0], [CARD_W - 1, 0], [CARD_W - 1, CARD_H - 1], [0, CARD_H - 1]], np.float32)
    return cv2.warpPerspective(image, cv2.getPerspectiveTransform(ordered, target), (CARD_W, CARD_H))


def _glyphs(card: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The rank and suit images cut from the card's top-left corner."""
    corner = cv2.cvtColor(card[:CORNER_H, :CORNER_W], cv2.COLOR_BGR2GRAY)
    corner = cv2.resize(corner, None, fx=4, fy=4)
    level = max(int(corner[15, (CORNER_W * 4) // 2]) - 30, 1)
    _, ink = cv2.threshold(corner, level, 255, cv2.THRESH_BINARY_INV)
    parts = []
    for piece, size in ((ink[:186], RANK_SIZE), (ink[186:336], SUIT_SIZE)):
        contours, _ = cv2.findContours(piece, cv2.RETR_TREE, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            return None
        x, y, w, h = cv2.boundingRect(max(contours, key=cv2.contourArea))
        parts.append(cv2.resize(piece[y : y + h, x : x + w], size))
    return parts[0], parts[1]


@dataclass
class NaiveDetector:
    """Templates cut, as the original does, from one known deck (the renderer's classic style)."""

    ranks: dict[str, np.ndarray]
    suits: dict[str, np.ndarray]

    @classmethod
    def from_renderer(cls) -> NaiveDetector:
        ranks: dict[str, np.ndarray] = {}
        suits: dict[str, np.ndarray] = {}
        for suit in SUITS:
            for rank in RANKS:
                image, _ = draw_card(parse_card(rank + suit), CARD_W, STYLES["classic"])
                card = cv2.resize(image, (CARD_W, CARD_H))
                glyphs = _glyphs(card)
                if glyphs is not None:
                    ranks.setdefault(rank, glyphs[0])
                    suits.setdefault(suit, glyphs[1])
        return cls(ranks, suits)

    def recognise(self, image: np.ndarray) -> str | None:
        grey = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (5, 5), 0)
        h, w = grey.shape
        level = int(grey[h // 100, w // 2]) + BKG_THRESH  # one global level from the background
        _, binary = cv2.threshold(grey, level, 255, cv2.THRESH_BINARY)
        contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cards = []
        for contour in contours:
            area = cv2.contourArea(contour)
            approx = cv2.approxPolyDP(contour, 0.01 * cv2.arcLength(contour, True), True)
            if 5_000 < area < 400_000 and len(approx) == 4:
                cards.append((area, approx))
        if not cards:
            return None
        glyphs = _glyphs(_flatten(image, max(cards, key=lambda c: c[0])[1]))
        if glyphs is None:
            return None
        rank = min(self.ranks, key=lambda r: int(cv2.absdiff(glyphs[0], self.ranks[r]).sum()))
        suit = min(self.suits, key=lambda s: int(cv2.absdiff(glyphs[1], self.suits[s]).sum()))
        return rank + suit
