"""The table as the referee sees it: card counts per seat, the stack, whose turn, penalties.

A `State` is a value: the engine never changes one that it has handed out. `step`
works on a fresh copy (`State.copy`, a flat slot copy, far cheaper than rebuilding
an immutable record per lay) and returns it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from referee.cards import Card

if TYPE_CHECKING:
    from .engine import Celtic
    from .rulings import GameWon, Ruling, StackWon

NO_CARD = -1  # the rank slot of a position the stack does not have


class Hold(NamedTuple):
    """Play holds for a claim: the first valid snap before `until` wins, else `owner` does."""

    by: str  # "counting_out", "stall" or "challenge": how the owner wins when the window ends
    owner: int
    until: int
    # A challenge claimed by slapping (option challenge_claim: slap): the owner may claim from
    # the start, every seat from `open_at`; None for a hold that only a valid snap ends early.
    open_at: int | None = None


class Deferred(NamedTuple):
    """A snap win already decided but not yet announced: its margin is still unknown."""

    won: StackWon
    game: GameWon | None  # the game_won that follows it, if this stack won the game
    after: tuple[Ruling, ...]  # the winner's own extra presses, reported after the win


class State:
    """Everything the referee knows mid-game. Read it; never assign to it."""

    __slots__ = (
        "rules",
        "players",
        "hands",
        "total",
        "jokers_allowed",
        "turn",
        "now",
        "winner",
        # the stack: a cons list (top card, rest) plus cards slid or burned under it (a
        # burned card, face down, is None there), and the
        # few facts that snap validity needs, kept up to date on each lay (O(1)).
        "stack",
        "under",
        "size",
        "on_stack",
        "jokers",
        "top",
        "second",
        "third",
        "bottom",
        "second_bottom",
        "top_card",
        "top_call",
        "pair_seen",
        "sandwich_seen",
        "laid",
        "count_out",
        "count_owner",
        "hold",
        "last_layer",
        "penalised",
        # the other seeds' penalties: cards burned face down under the stack (size counts
        # them; nobody knows them), the penalty pile, seats out of the game (a bit mask),
        # and per seat (card number, wrong snaps on cards in a row) for `wrong_snaps_out`.
        "burned",
        "penalty_pile",
        "out",
        "streaks",
        # presses at `pending_t` wait until time moves on (a dead heat needs them all),
        # and a snap win waits for the next press to learn its margin.
        "pending_t",
        "pending",
        "won_t",
        "deferred",
    )

    rules: Celtic
    players: tuple[str, ...]
    hands: tuple[int, ...]
    total: int
    jokers_allowed: int
    turn: int | None
    now: int
    winner: int | None
    stack: tuple[Card, object] | None
    under: tuple[Card | None, object] | None
    size: int
    on_stack: int
    jokers: int
    top: int
    second: int
    third: int
    bottom: int
    second_bottom: int
    top_card: Card | None
    top_call: int
    pair_seen: bool
    sandwich_seen: bool
    laid: int
    count_out: int | None
    count_owner: int | None
    hold: Hold | None
    last_layer: int | None  # the seat that laid the top card (kept once the stack is won)
    penalised: int
    burned: int
    penalty_pile: int
    out: int
    streaks: tuple[tuple[int, int], ...]
    pending_t: int | None
    pending: tuple[int, ...]
    won_t: int | None
    deferred: Deferred | None

    def copy(self) -> State:  # replaced below by a generated flat copy
        raise NotImplementedError

    def clear_stack(self) -> None:
        self.stack = None
        self.under = None
        self.size = self.on_stack = self.jokers = self.burned = 0
        self.top = self.second = self.third = self.bottom = self.second_bottom = NO_CARD
        self.top_card = None
        self.top_call = 0
        self.pair_seen = self.sandwich_seen = False
        self.count_out = self.count_owner = None
        self.hold = None

    # Reading the table -------------------------------------------------------------

    @property
    def seats(self) -> int:
        return len(self.hands)

    @property
    def over(self) -> bool:
        return self.winner is not None

    def stack_cards(self) -> list[Card]:
        """The stack's known cards from bottom to top (not those burned face down under it)."""
        top_down: list[Card] = []
        node = self.stack
        while node is not None:
            top_down.append(node[0])
            node = node[1]  # type: ignore[assignment]
        return [*(c for c in self.under_cards() if c is not None), *reversed(top_down)]

    def under_cards(self) -> list[Card | None]:
        """The cards slid or burned under the stack, bottom first; None: burned, face down."""
        bottom_up: list[Card | None] = []
        node = self.under
        while node is not None:
            bottom_up.append(node[0])
            node = node[1]  # type: ignore[assignment]
        return bottom_up

    def cards_in_play(self) -> int:
        """Cards in the seats' piles, the stack and the penalty pile: always `total`."""
        return sum(self.hands) + self.size + self.penalty_pile

    def is_out(self, seat: int) -> bool:
        """Whether the seat is out of the game (party, paranoid and classic eliminations)."""
        return bool(self.out >> seat & 1)

    def is_penalised(self, seat: int) -> bool:
        return bool(self.penalised >> seat & 1)

    def penalised_seats(self) -> list[int]:
        return [seat for seat in range(self.seats) if self.penalised >> seat & 1]

    def snap_reasons(self) -> tuple[str, ...]:
        """Every reason a snap now would be valid; empty if it would be wrong."""
        return self.rules.snap_reasons(self)

    def snap_reasons_for(self, seat: int, t: int) -> tuple[str, ...]:
        """The reasons a snap by `seat` at `t` would be valid (a claim may be the seat's alone)."""
        return self.rules.reasons_for(self, seat, t)

    def seats_with_cards(self) -> Iterator[int]:
        return (seat for seat, n in enumerate(self.hands) if n)


def _flat_copier() -> object:
    # One straight-line assignment per slot, as dataclasses generate their methods:
    # a getattr/setattr loop costs five times as much on every event.
    lines = [f"    new.{name} = self.{name}" for name in State.__slots__]
    source = "def copy(self):\n    new = _new(State)\n" + "\n".join(lines) + "\n    return new\n"
    namespace: dict[str, object] = {"_new": object.__new__, "State": State}
    exec(source, namespace)  # the source is built from our own slot names only
    return namespace["copy"]


State.copy = _flat_copier()  # type: ignore[method-assign]
