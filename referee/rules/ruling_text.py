"""Rulings in plain words, for the kiosk's log and its last-ruling banner.

The same sentences as the demo's log (`demo.describe`), without its colours, padding
or clock: "Bob SNAP! takes 9 cards (sandwich) — beats Ann by 12.4 ms". A test keeps
the two in step over whole bot games.

The referee cannot move cards: a burn, a hand-over, a seat out or a card taken back is
an instruction, and its sentence says what to do with which cards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .rulings import (
    Burned,
    Corrected,
    GameWon,
    Laid,
    PenaltiesLifted,
    Penalty,
    Ruling,
    SeatOut,
    SnapIgnored,
    StackWon,
    TakeBack,
)

REASON_WORDS = {
    "calling_out": "calling out",
    "standard": "pair",
    "pair": "pair",
    "sandwich": "sandwich",
    "dark_queen": "dark queen",
    "top_bottom": "top and bottom",
    "run": "run",
    "marriage": "marriage",
    "triple": "triple",
    "joker": "joker",
    "counting_out": "counting out",
    "claim": "claim",
}
AWARD_WORDS = {
    "counting_out": "by counting out",
    "stall": "by stall",
    "challenge": "by challenge: the face card was not answered",
    "penalty": "by penalty: a wrong slap",
}
IGNORED_WORDS = {
    "penalised": "snap ignored: penalised",
    "out": "snap ignored: out of the game",
    "not_in_game": "snap ignored: no cards, and nothing to slap",
    "no_cards": "snap ignored: no cards",
}
OUT_WORDS = {
    "wrong_snap_no_cards": "a wrong slap with no cards",
    "wrong_snaps_in_a_row": "wrong slaps on cards in a row",
}


def reason_words(reasons: Sequence[str]) -> list[str]:
    return [REASON_WORDS.get(r, r) for r in reasons]


def runner_up(ruling: Ruling, after: Sequence[Ruling]) -> int | None:
    """The seat a snap win beat (the late press `margin_us` after it, among the rulings that
    followed it); None for any other ruling."""
    if type(ruling) is not StackWon or ruling.by not in ("snap", "claim") or ruling.margin_us is None:
        return None
    late = (r for r in after if type(r) is SnapIgnored and r.reason == "late")
    return next((r.seat for r in late if r.late_us == ruling.margin_us), None)


def slapper(before: Sequence[Ruling]) -> int | None:
    """The seat whose wrong slap a stack handed over as a penalty answers: the last wrong
    snap among the rulings of the same event before it (`before`)."""
    wrong = (r.seat for r in reversed(before) if type(r) is Penalty and r.reason == "wrong_snap")
    return next(wrong, None)


def say(
    ruling: Ruling,
    names: Sequence[str],
    beaten: int | None = None,
    slapper: int | None = None,
    calls: bool = True,
) -> str:
    """One sentence for a ruling. `beaten` is the seat a snap win beat (see `runner_up`);
    `slapper`, for a stack handed over as a penalty, the seat whose wrong slap it answers (see
    `slapper`); `calls`: the game has calling out (else a lay's call is not worth saying)."""
    kind = type(ruling)
    if kind is Laid:
        return _laid(ruling, names, calls)  # type: ignore[arg-type]
    if kind is StackWon:
        return _stack_won(ruling, names, beaten, slapper)  # type: ignore[arg-type]
    words = _SAY.get(kind)
    if words is None:
        raise TypeError(f"not a ruling: {ruling!r}")
    return words(ruling, names)


def _laid(ruling: Laid, names: Sequence[str], calls: bool) -> str:
    words = f"{names[ruling.seat]} lays {ruling.card.symbol}"
    if calls:
        words += f" call {ruling.call}"
    if ruling.count_out is not None:
        words += f" {count_words(ruling)}"
    if ruling.out_of_turn:
        words += " OUT OF TURN"
    elif ruling.next is None:
        words += " hold: first snap wins"
    return words


def _stack_won(ruling: StackWon, names: Sequence[str], beaten: int | None, slapper: int | None) -> str:
    who = names[ruling.seat]
    if ruling.by not in ("snap", "claim"):
        how = AWARD_WORDS.get(ruling.by, f"by {ruling.by}")
        if ruling.by == "penalty" and slapper is not None:
            how = f"by penalty: {names[slapper]}'s wrong slap"
        return f"{who} takes {cards(ruling.cards)} {how}{pile(ruling)}"
    shout = "SNAP! takes" if ruling.by == "snap" else "CLAIMS"
    words = f"{who} {shout} {cards(ruling.cards)} ({', '.join(reason_words(ruling.reasons))})"
    words += pile(ruling)
    if beaten is not None and ruling.margin_us is not None:
        words += f" — beats {names[beaten]} by {ruling.margin_us / 1000:.1f} ms"
    return words


def _penalty(ruling: Penalty, names: Sequence[str]) -> str:
    what = "wrong snap" if ruling.reason == "wrong_snap" else "laid out of turn"
    if not ruling.barred:
        return f"{names[ruling.seat]} {what}: penalty"
    return f"{names[ruling.seat]} {what}: penalised until another seat wins a stack"


def _snap_ignored(ruling: SnapIgnored, names: Sequence[str]) -> str:
    who = names[ruling.seat]
    if ruling.reason == "late":
        return f"{who} snap {(ruling.late_us or 0) / 1000:.1f} ms late"
    if ruling.reason == "dead_heat":
        return f"{who} dead heat: pressed at the same microsecond, no winner"
    return f"{who} {IGNORED_WORDS.get(ruling.reason, 'snap ignored: ' + ruling.reason)}"


def _burned(ruling: Burned, names: Sequence[str]) -> str:
    where = "face down under the stack" if ruling.to == "stack" else "face down on the penalty pile"
    return f"{names[ruling.seat]} puts {cards(ruling.cards)} from the top of the pile {where}"


def _seat_out(ruling: SeatOut, names: Sequence[str]) -> str:
    words = f"{names[ruling.seat]} is OUT of the game ({OUT_WORDS.get(ruling.reason, ruling.reason)})"
    if ruling.cards:
        words += f": put all {cards(ruling.cards)} face down under the stack"
    return words


def _take_back(ruling: TakeBack, names: Sequence[str]) -> str:
    return f"{names[ruling.seat]} takes {ruling.card.symbol} back: set it aside and lay it on your turn"


def _lifted(ruling: PenaltiesLifted, names: Sequence[str]) -> str:
    return "everyone was penalised: all penalties lifted"


def _game_won(ruling: GameWon, names: Sequence[str]) -> str:
    if ruling.reason == "triple":
        return f"{names[ruling.seat]} slapped a TRIPLE and WINS THE GAME"
    if ruling.reason == "last_seat_in":
        return f"{names[ruling.seat]} is the last seat in and WINS THE GAME"
    return f"{names[ruling.seat]} holds every card and WINS THE GAME"


def _corrected(ruling: Corrected, names: Sequence[str]) -> str:
    at = _clock(ruling.lay_t)
    if ruling.was is None:  # a lay the camera missed, added by the host
        what = "no card" if ruling.card is None else ruling.card.symbol
        return f"corrected: the camera missed a card laid at {at}, {what}: the rulings since are judged again"
    now = "no card was laid there" if ruling.card is None else f"it was {ruling.card.symbol}"
    return (
        f"corrected: the card read as {ruling.was.symbol} at {at} was misread, {now}: "
        "the rulings since are judged again"
    )


# The rulings said from themselves and the names alone, by kind.
_SAY: dict[type, Callable[[Any, Sequence[str]], str]] = {
    Penalty: _penalty,
    SnapIgnored: _snap_ignored,
    Burned: _burned,
    SeatOut: _seat_out,
    TakeBack: _take_back,
    PenaltiesLifted: _lifted,
    GameWon: _game_won,
    Corrected: _corrected,
}


def _clock(t_us: int) -> str:
    minutes, rest = divmod(t_us, 60_000_000)
    return f"{minutes}:{rest / 1e6:06.3f}"


def count_words(ruling: Laid) -> str:
    """The running count-out, or a challenge's chances left."""
    if ruling.chances:
        return f"chances {ruling.count_out}"
    return f"count-out {ruling.count_out}"


def pile(ruling: StackWon) -> str:
    """What of a won stack is the penalty pile: the winner picks up both."""
    return f", the penalty pile's {ruling.penalty_pile} included" if ruling.penalty_pile else ""


def cards(n: int) -> str:
    return "1 card" if n == 1 else f"{n} cards"
