"""Rulings: what the referee decides, as plain values.

Each ruling turns into one JSON line of the `referee adjudicate` contract
(docs/table-script.md); the key order here is that contract's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .cards import Card


class Laid(NamedTuple):
    """A card landed on the stack. `call` is the number called for it."""

    t: int
    seat: int
    card: Card
    call: int
    count_out: int | None  # the count-out value after this lay, None when none runs
    next: int | None  # the seat to lay next; None while a hold is on
    out_of_turn: bool = False

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
    """A seat takes the stack: `by` snap, counting_out or stall."""

    t: int
    seat: int
    by: str
    reasons: tuple[str, ...]
    cards: int
    margin_us: int | None  # how far ahead of the next press it was; None if no one else pressed
    next: int

    event = "stack_won"

    def to_json(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "event": "stack_won",
            "seat": self.seat,
            "by": self.by,
            "reasons": list(self.reasons),
            "cards": self.cards,
            "margin_us": self.margin_us,
            "next": self.next,
        }


class Penalty(NamedTuple):
    """A seat is penalised: `wrong_snap` or `out_of_turn`."""

    t: int
    seat: int
    reason: str

    event = "penalty"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "event": "penalty", "seat": self.seat, "reason": self.reason}


class SnapIgnored(NamedTuple):
    """A press that neither wins nor is penalised: penalised, late or dead_heat."""

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


class PenaltiesLifted(NamedTuple):
    """Every seat was under penalty, so every penalty is lifted."""

    t: int
    reason: str = "everyone_penalised"

    event = "penalties_lifted"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "event": "penalties_lifted", "reason": self.reason}


class GameWon(NamedTuple):
    """One seat holds every card."""

    t: int
    seat: int

    event = "game_won"

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "event": "game_won", "seat": self.seat}


Ruling = Laid | StackWon | Penalty | SnapIgnored | PenaltiesLifted | GameWon
