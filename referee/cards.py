"""Playing cards: codes as players write them, decks and seeded shuffles.

Only 53 distinct cards exist (52 plus the joker), so `parse_card` hands out
shared instances: comparing, hashing and masking them costs nothing in the
engine's hot path.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
_SYMBOL_TO_SUIT = {
    "\u2660": "S",
    "\u2664": "S",  # ♠ ♤
    "\u2665": "H",
    "\u2661": "H",  # ♥ ♡
    "\u2666": "D",
    "\u2662": "D",  # ♦ ♢
    "\u2663": "C",
    "\u2667": "C",  # ♣ ♧
}
JOKER_CODE = "JOKER"
ASPECT = 88 / 63  # height / width of a poker-size card: the renderer draws it, the eyes expect it


class CardError(ValueError):
    """A card code that names no card."""


class Card:
    """One card. `rank` is 1..13 (A=1, J=11, Q=12, K=13), 0 for the joker."""

    __slots__ = ("rank", "suit", "index", "code")

    rank: int
    suit: str
    index: int  # 0..51 for the suited cards, 52 for the joker: a bit in a stack mask
    code: str

    def __init__(self, rank: int, suit: str) -> None:
        self.rank = rank
        self.suit = suit
        if rank == 0:
            self.index, self.code = 52, JOKER_CODE
        else:
            self.index = SUITS.index(suit) * 13 + rank - 1
            self.code = RANKS[rank - 1] + suit

    @property
    def is_joker(self) -> bool:
        return self.rank == 0

    @property
    def symbol(self) -> str:
        """The code with a suit symbol, for people: ``Q♠``."""
        return self.code if self.rank == 0 else RANKS[self.rank - 1] + SUIT_SYMBOLS[self.suit]

    def __repr__(self) -> str:
        return f"Card({self.code})"

    def __str__(self) -> str:
        return self.code

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (parse_card, (self.code,))


JOKER = Card(0, "")
_BY_CODE: dict[str, Card] = {JOKER_CODE: JOKER}
for _s in SUITS:
    for _r in range(1, 14):
        _c = Card(_r, _s)
        _BY_CODE[_c.code] = _c
SUITED = tuple(_BY_CODE[r + s] for s in SUITS for r in RANKS)
QUEEN_OF_SPADES = _BY_CODE["QS"]


def parse_card(text: str) -> Card:
    """Read a card code: ``QS``, ``10H``, ``TH``, ``qs``, ``Q♠``, ``JOKER``."""
    if not isinstance(text, str):
        raise CardError(f"card code must be a string such as 'QS', not {text!r}")
    card = _BY_CODE.get(text)  # the common case: already canonical
    if card is not None:
        return card
    code = text.strip().upper()
    if code and code[-1] in _SYMBOL_TO_SUIT:
        code = code[:-1] + _SYMBOL_TO_SUIT[code[-1]]
    if code.startswith("T") and len(code) == 2:
        code = "10" + code[1]
    card = _BY_CODE.get(code)
    if card is None:
        raise CardError(
            f"bad card code {text!r}: expected a rank (A 2-10 T J Q K) and a suit "
            "(S H D C or \u2660 \u2665 \u2666 \u2663), or JOKER"
        )
    return card


def deck(size: int = 52) -> list[Card]:
    """A new deck in a fixed order: 52 cards, or 54 with two jokers."""
    if size == 52:
        return list(SUITED)
    if size == 54:
        return [*SUITED, JOKER, JOKER]
    raise CardError(f"a deck has 52 or 54 cards, not {size!r}")


def shuffled(cards: Iterable[Card], seed: int | str) -> list[Card]:
    """The cards in a shuffled order that depends only on `seed`."""
    out = list(cards)
    random.Random(seed).shuffle(out)
    return out


def deal_sizes(cards: int, players: int) -> list[int]:
    """Hand sizes when `cards` are dealt one at a time from seat 0."""
    base, extra = divmod(cards, players)
    return [base + (1 if seat < extra else 0) for seat in range(players)]
