"""The table script's event lines and `referee adjudicate`'s ruling lines as typed records,
decoded, checked and encoded by msgspec (docs/table-script.md is the contract).

This is the reader's fast path. `fast_item` takes one raw line and either returns what the
line says (an event, an unread lay, a named card, or `RULING` for a ruling line to skip) or
None: "not sure", and the caller reads the line again with the precise checks of
`script.parse_event`, which word every message. So a bad line costs a second reading and a
good one costs one msgspec decode; a record is only accepted here when those checks would
accept the line and read the same event from it (tests/test_script_records.py holds the two
side by side on fuzzed lines).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Final

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType, field

from referee.cards import CardError, deck, parse_card

from .events import Event, Lay, Named, Snap, Unread, Wait
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

UNREAD = "?"  # the card of a lay the camera could not read for sure

Micros = Annotated[int, Meta(ge=0)]  # a time: whole microseconds, any size (JSON has no bound)


# Event lines in ---------------------------------------------------------------------------


class EventLine(Struct, forbid_unknown_fields=True, gc=False):
    """Any event line: which of `lay`, `snap`, `wait`, `cleared` and `card` it holds is its
    kind (exactly one, checked after decoding: the kinds are told apart by their keys, not
    by a tag msgspec could dispatch on). Unset: the key is absent."""

    t: Micros | UnsetType = UNSET
    lay: str | UnsetType = UNSET
    snap: int | UnsetType = UNSET
    wait: bool | UnsetType = UNSET  # true only: checked below (msgspec < 0.20 has no Literal[True])
    card: str | UnsetType | None = UNSET
    lay_t: Micros | UnsetType = field(default=UNSET, name="for")  # a card line's
    cleared: bool | UnsetType = UNSET  # true only, as `wait`
    seat: int | UnsetType | None = UNSET  # a lay line's; null: not known, as if absent
    confidence: Annotated[float, Meta(ge=0, le=1)] | UnsetType = UNSET  # a lay line's, ignored
    guess: str | UnsetType | None = UNSET  # a "?" lay line's, null or not


class RulingLine(Struct, gc=False):
    """A ruling line in a script is skipped: it needs a time and a ruling's name, and may
    carry anything else but a game."""

    t: int
    event: str
    game: msgspec.Raw | UnsetType = UNSET


_decode_event = msgspec.json.Decoder(EventLine).decode
_decode_ruling = msgspec.json.Decoder(RulingLine).decode

RULING: Final = "ruling"  # what `fast_item` returns for a ruling line (to skip)

# What a failed decode raises: msgspec's errors, and UnicodeDecodeError (a ValueError) for
# bad UTF-8 in a string. msgspec has its own depth limit, so never a RecursionError.
_DECODE_ERRORS = (msgspec.DecodeError, ValueError)
_new = tuple.__new__  # an event (a NamedTuple) without its Python-level __new__
_CARDS: Final = {card.code: card for card in deck(54)}  # canonical codes: parse_card's own cards


def fast_item(raw: bytes | str, seats: int) -> Event | Unread | Named | str | None:
    """What an event line says, `RULING` for a ruling line, or None when not sure."""
    try:
        # Every key is a field and every value is decoded (its strings as strict UTF-8; a
        # str with a lone surrogate cannot be encoded), so a line decoded here is UTF-8.
        line = _decode_event(raw)
    except msgspec.ValidationError:
        return _ruling(raw)  # perhaps: "event" is no event line's key
    except _DECODE_ERRORS:
        return None
    t, lay = line.t, line.lay
    try:
        if lay is not UNSET:
            if t is UNSET or not (line.snap is line.wait is line.card is line.cleared is line.lay_t is UNSET):
                return None
            seat, guess = line.seat, line.guess
            if seat is UNSET:
                seat = None
            elif seat is not None and not 0 <= seat < seats:
                return None
            if guess is UNSET and lay != UNREAD:
                return _new(Lay, (t, _CARDS.get(lay) or parse_card(lay), seat))
            if lay != UNREAD:
                return None
            return _new(Unread, (t, seat, None if guess is None or guess is UNSET else parse_card(guess)))
        if t is UNSET or not (line.seat is line.confidence is line.guess is UNSET):
            return None  # no time, or a lay line's keys on another kind of line
        snap, wait, card, cleared = line.snap, line.wait, line.card, line.cleared
        if snap is not UNSET:
            if wait is card is cleared is line.lay_t is UNSET and 0 <= snap < seats:
                return _new(Snap, (t, snap))
            return None
        if card is not UNSET:
            lay_t = line.lay_t
            if wait is cleared is UNSET and lay_t is not UNSET and lay_t <= t:
                return _new(Named, (t, lay_t, None if card is None else parse_card(card)))
            return None
        if line.lay_t is UNSET and (
            (wait is True and cleared is UNSET) or (cleared is True and wait is UNSET)
        ):
            return _new(Wait, (t,))  # a wait, or the camera seeing the stack cleared: time reached t
        return None
    except CardError:
        return None


def _ruling(raw: bytes | str) -> str | None:
    try:
        if type(raw) is bytes and not raw.isascii():
            raw.decode()  # msgspec skips the keys and values a record does not name, unchecked
        return RULING if _decode_ruling(raw).game is UNSET else None
    except _DECODE_ERRORS:
        return None


# Ruling lines out: one record per ruling, its keys in the contract's order ------------------


class LaidOut(Struct, omit_defaults=True, gc=False):
    t: int
    event: str
    seat: int
    card: str
    call: int
    count_out: int | None
    next: int | None
    out_of_turn: bool = False


class StackWonOut(Struct, omit_defaults=True, gc=False):
    t: int
    event: str
    seat: int
    by: str
    reasons: tuple[str, ...]
    cards: int
    margin_us: int | None
    next: int
    penalty_pile: int = 0


class PenaltyOut(Struct, gc=False):
    t: int
    event: str
    seat: int
    reason: str


class SnapIgnoredOut(Struct, omit_defaults=True, gc=False):
    t: int
    event: str
    seat: int
    reason: str
    late_us: int | None = None


class BurnedOut(Struct, gc=False):
    t: int
    event: str
    seat: int
    cards: int
    to: str


class SeatOutOut(Struct, gc=False):
    t: int
    event: str
    seat: int
    reason: str
    cards: int


class TakeBackOut(Struct, gc=False):
    t: int
    event: str
    seat: int
    card: str


class PenaltiesLiftedOut(Struct, gc=False):
    t: int
    event: str
    reason: str


class GameWonOut(Struct, omit_defaults=True, gc=False):
    t: int
    event: str
    seat: int
    reason: str | None = None


class CorrectedOut(Struct, gc=False):
    t: int
    event: str
    lay_t: int = field(name="for")
    card: str | None
    was: str | None
    void: int


def _record(r: Any) -> Struct:
    kind = type(r)
    if kind is Laid:
        return LaidOut(r.t, "laid", r.seat, r.card.code, r.call, r.count_out, r.next, r.out_of_turn)
    if kind is StackWon:
        return StackWonOut(
            r.t, "stack_won", r.seat, r.by, r.reasons, r.cards, r.margin_us, r.next, r.penalty_pile
        )
    if kind is Penalty:
        return PenaltyOut(r.t, "penalty", r.seat, r.reason)
    if kind is SnapIgnored:
        return SnapIgnoredOut(r.t, "snap_ignored", r.seat, r.reason, r.late_us)
    if kind is Burned:
        return BurnedOut(r.t, "burned", r.seat, r.cards, r.to)
    if kind is SeatOut:
        return SeatOutOut(r.t, "seat_out", r.seat, r.reason, r.cards)
    if kind is TakeBack:
        return TakeBackOut(r.t, "take_back", r.seat, r.card.code)
    if kind is PenaltiesLifted:
        return PenaltiesLiftedOut(r.t, "penalties_lifted", r.reason)
    if kind is GameWon:
        return GameWonOut(r.t, "game_won", r.seat, r.reason)
    assert kind is Corrected, kind
    card, was = r.card, r.was
    return CorrectedOut(
        r.t,
        "corrected",
        r.lay_t,
        None if card is None else card.code,
        None if was is None else was.code,
        r.void,
    )


_encode = msgspec.json.Encoder().encode
_format = msgspec.json.format


def ruling_line(ruling: Ruling) -> str:
    """A ruling's JSON line (no newline), byte for byte `json.dumps(ruling.to_json())`:
    msgspec writes it compact and `format(indent=0)` spaces it as json.dumps does."""
    try:
        line = _format(_encode(_record(ruling)), indent=0)
    except OverflowError:  # an integer past 64 bits (a script may say any time)
        line = b""
    if line and line.isascii():  # json.dumps writes \u escapes for the rest: not ours to mimic
        return line.decode()
    return json.dumps(ruling.to_json())


def ruling_lines(rulings: Sequence[Ruling]) -> str:
    """Rulings' lines, each ending in a newline, exactly as `ruling_line` writes them, made
    together: one encode and one format of them all as a JSON array, whose items are cut
    apart again where format wrote `}, {` between them. A ruling holds no object and no
    string with braces, so there is no other; were there one, the count of cuts would say
    so, and each ruling is written on its own (as it is when one is not all ASCII)."""
    if not rulings:
        return ""
    try:
        array = _format(_encode([_record(r) for r in rulings]), indent=0)
    except OverflowError:
        array = b""
    if array.count(b"}, {") != len(rulings) - 1 or not array.isascii():
        return "".join([ruling_line(r) + "\n" for r in rulings])
    return array[1:-1].replace(b"}, {", b"}\n{").decode() + "\n"
