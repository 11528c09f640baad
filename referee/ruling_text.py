"""Rulings in plain words, for the kiosk's log and its last-ruling banner.

The same sentences as the demo's log (`demo.describe`), without its colours, padding
or clock: "Bob SNAP! takes 9 cards (sandwich) — beats Ann by 12.4 ms". A test keeps
the two in step over whole bot games.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rulings import GameWon, Laid, PenaltiesLifted, Penalty, Ruling, SnapIgnored, StackWon

REASON_WORDS = {
    "calling_out": "calling out",
    "standard": "pair",
    "sandwich": "sandwich",
    "dark_queen": "dark queen",
    "counting_out": "counting out",
}


def reason_words(reasons: Sequence[str]) -> list[str]:
    return [REASON_WORDS.get(r, r) for r in reasons]


def runner_up(ruling: Ruling, after: Sequence[Ruling]) -> int | None:
    """The seat a snap win beat (the late press `margin_us` after it, among the rulings that
    followed it); None for any other ruling."""
    if type(ruling) is not StackWon or ruling.by != "snap" or ruling.margin_us is None:
        return None
    late = (r for r in after if type(r) is SnapIgnored and r.reason == "late")
    return next((r.seat for r in late if r.late_us == ruling.margin_us), None)


def say(ruling: Ruling, names: Sequence[str], beaten: int | None = None) -> str:
    """One sentence for a ruling. `beaten` is the seat a snap win beat (see `runner_up`)."""
    kind = type(ruling)
    if kind is Laid:
        words = f"{names[ruling.seat]} lays {ruling.card.symbol} call {ruling.call}"
        if ruling.count_out is not None:
            words += f" count-out {ruling.count_out}"
        if ruling.out_of_turn:
            words += " OUT OF TURN"
        elif ruling.next is None:
            words += " hold: first snap wins"
        return words
    if kind is StackWon:
        who = names[ruling.seat]
        if ruling.by != "snap":
            how = "counting out" if ruling.by == "counting_out" else ruling.by
            return f"{who} takes {cards(ruling.cards)} by {how}"
        words = f"{who} SNAP! takes {cards(ruling.cards)} ({', '.join(reason_words(ruling.reasons))})"
        if beaten is not None and ruling.margin_us is not None:
            words += f" — beats {names[beaten]} by {ruling.margin_us / 1000:.1f} ms"
        return words
    if kind is Penalty:
        what = "wrong snap" if ruling.reason == "wrong_snap" else "laid out of turn"
        return f"{names[ruling.seat]} {what}: penalised until another seat wins a stack"
    if kind is SnapIgnored:
        who = names[ruling.seat]
        if ruling.reason == "late":
            return f"{who} snap {(ruling.late_us or 0) / 1000:.1f} ms late"
        if ruling.reason == "dead_heat":
            return f"{who} dead heat: pressed at the same microsecond, no winner"
        return f"{who} snap ignored: penalised"
    if kind is PenaltiesLifted:
        return "everyone was penalised: all penalties lifted"
    if kind is GameWon:
        return f"{names[ruling.seat]} holds every card and WINS THE GAME"
    raise TypeError(f"not a ruling: {ruling!r}")


def cards(n: int) -> str:
    return "1 card" if n == 1 else f"{n} cards"
