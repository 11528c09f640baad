"""The card recogniser: the top card of the pile, read from its corner index.

`card_outline` finds the top card and warps it upright; `card_index` reads its rank and
suit from both corners. A `Profile` learns a deck's own glyphs (and a small picture of
each card) from one frame per card, and `Recogniser` puts these together, preferring a
card not yet seen since the deck was dealt when two readings are close.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from .card_index import _Bank, _index_parts, _read_corner
from .card_outline import WARP_SIZE, find_top_card, warp_card
from .cards import RANKS, Card, parse_card

__all__ = ["WARP_SIZE", "Profile", "ProfileError", "Reading", "Recogniser", "find_top_card", "warp_card"]

THUMB = (32, 44)  # whole-card thumbnail for a profile
SEEN_MARGIN = 1.0  # nats: a seen card gives way to an unseen runner-up this close (e times likelier)
MIN_SCORE = -6.0  # below this the best reading is no reading: glyphs unlike any card's
GROW = (1.0, 1.05)  # warps tried in turn, as parts of the outline found
THUMB_WEIGHT = 4.0  # nats per unit of thumbnail correlation below the best match
PROFILE_VERSION = 1


class ProfileError(ValueError):
    """A calibration profile that cannot be read: missing, corrupt, or another version."""


@dataclass(frozen=True)
class Reading:
    card: Card | None
    confidence: float  # 0..1
    quad: np.ndarray | None = None  # 4 x 2 float corners in image coordinates
    ranked: tuple[tuple[str, float], ...] = field(default=())


def _thumb(warped: np.ndarray) -> np.ndarray:
    g = cv2.resize(cv2.cvtColor(warped, cv2.COLOR_BGR2GRAY), THUMB, interpolation=cv2.INTER_AREA)
    v = g.astype(np.float32).ravel()
    v -= v.mean()
    return v / max(1e-6, float(np.linalg.norm(v)))


# Calibration --------------------------------------------------------------------------------


class Profile:
    """One deck's own glyphs and card thumbnails, learnt from one frame per card."""

    def __init__(
        self,
        ranks: tuple[np.ndarray, np.ndarray, np.ndarray],
        suits: tuple[np.ndarray, np.ndarray, np.ndarray],
        thumbs: np.ndarray,
        thumb_codes: np.ndarray,
    ) -> None:
        self.ranks, self.suits = ranks, suits
        self.thumbs, self.thumb_codes = thumbs, thumb_codes

    @classmethod
    def learn(cls, images: dict[str, np.ndarray]) -> Profile:
        """From frames of each card alone on the table, keyed by code; cards not found are skipped."""
        ranks, suits = _Bank(), _Bank()
        thumbs, codes = [], []
        for code, image in images.items():
            card = parse_card(code)
            quad = find_top_card(image)
            if quad is None:
                continue
            warped = warp_card(image, quad)
            for view in (warped, warped[::-1, ::-1]):
                thumbs.append(_thumb(view))
                codes.append(card.code)
                parts = _index_parts(view) if not card.is_joker else None
                if parts is not None:
                    ranks.add(parts[0], RANKS[card.rank - 1])
                    suits.add(parts[1], card.suit)
        return cls(
            ranks.freeze(),
            suits.freeze(),
            np.array(thumbs, np.float32).reshape(len(thumbs), -1),
            np.array(codes),
        )

    def __len__(self) -> int:
        return len(set(self.thumb_codes.tolist()))

    def save(self, path: str | Path) -> None:
        np.savez_compressed(
            path,
            version=np.array(PROFILE_VERSION),
            rank_vectors=self.ranks[0],
            rank_aspects=self.ranks[1],
            rank_labels=self.ranks[2],
            suit_vectors=self.suits[0],
            suit_aspects=self.suits[1],
            suit_labels=self.suits[2],
            thumbs=self.thumbs,
            thumb_codes=self.thumb_codes,
        )

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["version"])
                if version != PROFILE_VERSION:
                    raise ProfileError(f"{path}: card profile version {version}, expected {PROFILE_VERSION}")
                return cls(
                    (data["rank_vectors"], data["rank_aspects"], data["rank_labels"]),
                    (data["suit_vectors"], data["suit_aspects"], data["suit_labels"]),
                    data["thumbs"],
                    data["thumb_codes"],
                )
        except ProfileError:
            raise
        except Exception as exc:  # zip, key or value errors all mean one thing here
            raise ProfileError(f"{path}: not a card profile ({type(exc).__name__})") from None


# The recogniser -----------------------------------------------------------------------------


class Recogniser:
    """Reads the top card of a pile; a `Profile` makes it read that deck better."""

    def __init__(self, profile: Profile | None = None) -> None:
        self.profile = profile
        self._banks = (
            (profile.ranks, profile.suits) if profile is not None and len(profile.ranks[0]) else None
        )

    def read_warped(self, warped: np.ndarray) -> dict[str, float]:
        """Scores per code (log-likelihoods, higher is likelier) for an upright card: the better of
        its two index corners, and (with a profile) how like the deck's own picture of it it is."""
        scores: dict[str, float] = {}
        for view in (warped, warped[::-1, ::-1]):
            got = _read_corner(view, self._banks)
            if got:
                for k, v in got.items():
                    scores[k] = max(scores.get(k, -99.0), v)
        p = self.profile
        if scores and p is not None and len(p.thumb_codes):
            sim = p.thumbs @ _thumb(warped)
            top = float(sim.max())
            for code in set(p.thumb_codes.tolist()):
                best = float(sim[p.thumb_codes == code].max())
                scores[code] = scores.get(code, -99.0) + THUMB_WEIGHT * (best - top)
        return scores

    def recognise(
        self, image: np.ndarray, hint_mask: np.ndarray | None = None, seen: frozenset[str] = frozenset()
    ) -> Reading:
        try:
            quad = find_top_card(image, hint_mask)
        except cv2.error:
            quad = None
        if quad is None:
            return Reading(None, 0.0)
        scores, norm = {}, 0.0
        centre = quad.mean(axis=0)
        for grow in GROW:
            # An outline found a little inside the card's edge cuts an index that sits close to
            # it: if the first reading is doubtful, read again from a slightly larger warp.
            got = self.read_warped(warp_card(image, (quad - centre) * grow + centre))
            if got:
                top = max(got.values())
                got_norm = float(np.log(np.exp(np.array(list(got.values())) - top).sum())) + top
                if not scores or top > max(scores.values()):
                    scores, norm = got, got_norm
                if top - got_norm > np.log(0.9):
                    break
        if not scores:
            return Reading(None, 0.05, quad)
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])[:5]
        best = ranked[0]
        pick = best
        if best[0] in seen:
            runner = next(((c, s) for c, s in ranked[1:] if c not in seen), None)
            if runner is not None and best[1] - runner[1] < SEEN_MARGIN:
                pick = runner
        conf = float(np.exp(pick[1] - norm))
        ranked_out = tuple((c, round(float(s), 4)) for c, s in ranked)
        if pick[1] < MIN_SCORE:
            return Reading(None, min(conf, 0.2), quad, ranked_out)
        return Reading(parse_card(pick[0]), conf, quad, ranked_out)
