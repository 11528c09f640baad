"""Rulings: what the referee decides, as plain values.

Each ruling turns into one JSON line of the `referee adjudicate` contract
(docs/table-script.md); the key order here is that contract's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from referee.cards import Card


class Laid(NamedTuple):
    """A card landed on the stack. `call` is the number called for it."""

    t: int
    seat: int
    card: Card
    call: int
    count_out: int | None  # the count-out value after this lay, None when none runs
    next: int | None  # the seat to lay next; None while a hold is on
    out_of_turn: bool = False
    chances: bool = False  # `count_out` is a face-card challenge's chances left (not in the JSON)

    event = "laid"

    def to_json(self) -> dict[str, Any]:
        out = {
            "t": self.t,
            "event": "laid",
            "seat": self.seat,
            "card": self.card.code,
            "call": self.call,
            "count_out": self.count_out,
            "next": self.next,
        }
        if self.out_of_turn:
            out["out_of_turn"] = True
        return out


class StackWon(NamedTuple):
    """A seat takes the stack: `by` snap, counting_out, stall, challenge, claim or penalty."""

    t: int
    seat: int
    by: str
    reasons: tuple[str, ...]
    cards: int  # every card the seat picks up, the penalty pile's included
    margin_us: int | None  # how far ahead of the next press it was; None if no one else pressed
    next: int
    penalty_pile: int = 0  # of `cards`, those on the penalty pile (told apart: two piles to pick up)

    event = "stack_won"

    def to_json(self) -> dict[str, Any]:
        out = {
            "t": self.t,
            "event": "stack_won",
            "seat": self.seat,
            "by": self.by,
            "reasons": list(self.reasons),
            "cards": self.cards,
            "margin_us": self.margin_us,
            "next": self.next,
        }
        if self.penalty_pile:
            out["penalty_pile"] = self.penalty_pile
        return out


class Penalty(NamedTuple):
    """A seat is penalised: `wrong_snap` or `out_of_turn` (what it costs follows: a `burned`,
    a `stack_won` by penalty, a `seat_out`, or in celtic the bar on snapping)."""

    t: int
    seat: int
    reason: str
    barred: bool = True  # the seat may not snap until another wins a stack (not in the JSON)

    event = "penalty"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "event": "penalty", "seat": self.seat, "reason": self.reason}


class SnapIgnored(NamedTuple):
    """A press that neither wins nor is penalised: penalised, late, dead_heat, out (the seat
    is out of the game), no_cards (option slap_in off) or not_in_game (classic: a seat with
    no cards slapped nothing)."""

    t: int
    seat: int
    reason: str
    late_us: int | None = None  # for `late`: how long after the stack was won

    event = "snap_ignored"

    def to_json(self) -> dict[str, Any]:
        out = {"t": self.t, "event": "snap_ignored", "seat": self.seat, "reason": self.reason}
        if self.late_us is not None:
            out["late_us"] = self.late_us
        return out


class Burned(NamedTuple):
    """A seat pays `cards` from the top of its pile, face down: under the stack or onto
    the penalty pile (`to`). The referee cannot move cards: this is an instruction."""

    t: int
    seat: int
    cards: int
    to: str  # "stack" (under it) or "penalty_pile"

    event = "burned"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "event": "burned", "seat": self.seat, "cards": self.cards, "to": self.to}


class SeatOut(NamedTuple):
    """A seat is out of the game; its `cards` (if any) go face down under the stack."""

    t: int
    seat: int
    reason: str  # "wrong_snap_no_cards" or "wrong_snaps_in_a_row"
    cards: int

    event = "seat_out"

    def to_json(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "event": "seat_out",
            "seat": self.seat,
            "reason": self.reason,
            "cards": self.cards,
        }


class TakeBack(NamedTuple):
    """The seat takes back the card it laid out of turn, to play it on its turn
    (option out_of_turn_card: back). An instruction: the card was never on the stack."""

    t: int
    seat: int
    card: Card

    event = "take_back"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "event": "take_back", "seat": self.seat, "card": self.card.code}


class PenaltiesLifted(NamedTuple):
    """Every seat was under penalty, so every penalty is lifted."""

    t: int
    reason: str = "everyone_penalised"

    event = "penalties_lifted"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "event": "penalties_lifted", "reason": self.reason}


class GameWon(NamedTuple):
    """One seat holds every card; or, as `reason` says, slapped a triple or is the last seat in."""

    t: int
    seat: int
    reason: str | None = None  # None, "triple" or "last_seat_in"

    event = "game_won"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": self.t, "event": "game_won", "seat": self.seat}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


class Corrected(NamedTuple):
    """The card laid at `lay_t` was `card`, not `was` (the host corrected a misreading): every
    ruling since that lay is judged again. The last `void` rulings told are void, and the
    rulings after this one replace them."""

    t: int
    lay_t: int
    card: Card | None  # None: no card was laid there after all (a nudge of the pile, read as one)
    was: Card | None  # None: the camera saw no card laid then (a missed lay), or was told none was
    void: int

    event = "corrected"

    def to_json(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "event": "corrected",
            "for": self.lay_t,
            "card": None if self.card is None else self.card.code,
            "was": None if self.was is None else self.was.code,
            "void": self.void,
        }


Ruling = (
    Laid
    | StackWon
    | Penalty
    | SnapIgnored
    | Burned
    | SeatOut
    | TakeBack
    | PenaltiesLifted
    | GameWon
    | Corrected
)
