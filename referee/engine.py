"""The rules engine: `step(state, event) -> (state, rulings)`, nothing else.

Pure: no I/O, clock, thread or global state. Time is the events' own `t`; timed
rules (the claim window, the race window) fire when an event, a `Wait` included,
reaches their time. `Celtic` holds the rules of seeds 000/001 as settled by the
rulebook (docs/rules.md); other presets subclass it and override a method or a
default, as python-chess does its variants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .cards import QUEEN_OF_SPADES, deal_sizes
from .events import Event, Lay, Snap, Wait
from .options import Options
from .rulings import (
    GameWon,
    Laid,
    PenaltiesLifted,
    Penalty,
    Ruling,
    SnapIgnored,
    StackWon,
)
from .table import NO_CARD, Deferred, Hold, State

MIN_PLAYERS, MAX_PLAYERS = 2, 8


class IllegalEvent(ValueError):
    """An event that cannot have happened at a real table (a script error)."""


class SetupError(ValueError):
    """A game that cannot be set up: players, deck or hand sizes."""


class Celtic:
    """Celtic Egyptian Ratscrew (seeds 000 and 001), the default preset."""

    name: ClassVar[str] = "celtic"
    defaults: ClassVar[Options] = Options()
    # Picture cards start a count-out: J 1, Q 2, K 3, A 4 (indexed by rank; joker 0).
    count_out_values: ClassVar[tuple[int, ...]] = (0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3)

    def __init__(self, options: Options | None = None) -> None:
        self.options = options if options is not None else self.defaults
        self._top_only = self.options.scan == "top"
        self._race = self.options.race_window
        self._claim = self.options.claim_window
        self._under = self.options.out_of_turn_card == "under"

    @classmethod
    def with_options(cls, given: Mapping[str, Any] | None = None) -> Celtic:
        """This preset with a script's options applied over its defaults."""
        return cls(cls.defaults.updated(given or {}))

    # The whole engine -------------------------------------------------------------

    def apply(self, s: State, event: Event, out: list[Ruling]) -> None:
        """Judge one event on `s` (a private copy), appending rulings to `out`."""
        t = event.t
        if t < s.now:
            raise IllegalEvent(f"time goes backwards: t={t} after t={s.now}")
        s.now = t
        self.advance(s, t, out)
        kind = type(event)
        if kind is Snap:
            self.check_seat(s, event.seat)  # type: ignore[union-attr]
        if s.winner is not None and s.deferred is None:
            return  # after game_won every event is ignored
        if kind is Lay:
            if s.deferred is not None:
                self.flush_win(s, None, out)
                if s.winner is not None:
                    return
            self.lay(s, event, out)  # type: ignore[arg-type]
        elif kind is Snap:
            seat = event.seat  # type: ignore[union-attr]
            if s.pending_t == t:
                if seat not in s.pending:
                    s.pending = (*s.pending, seat)
            else:
                s.pending_t, s.pending = t, (seat,)
        elif kind is not Wait:
            raise IllegalEvent(f"not a table event: {event!r}")

    def finish(self, s: State, out: list[Ruling]) -> None:
        """The input has ended: judge the last presses. No timer fires."""
        if s.pending_t is not None:
            self.resolve_presses(s, out)
        if s.deferred is not None:
            self.flush_win(s, None, out)

    def advance(self, s: State, t: int, out: list[Ruling]) -> None:
        """Time has reached `t`: settle what was waiting for an earlier moment."""
        if s.pending_t is not None and s.pending_t < t:
            self.resolve_presses(s, out)
        if s.deferred is not None and t >= s.won_t + self._race:  # type: ignore[operator]
            self.flush_win(s, None, out)
        hold = s.hold
        if hold is not None and t >= hold.until:
            self.take_stack(s, hold.owner, hold.by, (), hold.until, out)

    def deadline(self, s: State) -> int | None:
        """The earliest time at which the passing of time alone would change a ruling.

        Presses at `pending_t` are settled once time passes it; a snap win waiting
        for its margin is announced when the race window ends; a hold ends with its
        claim window. A live table feeds a `Wait` once its clock passes this.
        """
        times = []
        if s.pending_t is not None:
            times.append(s.pending_t + 1)
        if s.deferred is not None:
            times.append(s.won_t + self._race)  # type: ignore[operator]
        if s.hold is not None:
            times.append(s.hold.until)
        return min(times, default=None)

    # Lays -------------------------------------------------------------------------

    def lay(self, s: State, event: Lay, out: list[Ruling]) -> None:
        t, card, seat = event
        if seat is None:
            seat = s.turn
            if seat is None:
                raise IllegalEvent("nobody is on turn (a claim hold is on): the lay must name its seat")
        else:
            self.check_seat(s, seat)
        hands = s.hands
        if not hands[seat]:
            raise IllegalEvent(f"seat {seat} holds no cards and cannot lay {card.code}")
        if card.rank:
            if s.on_stack >> card.index & 1:
                raise IllegalEvent(f"{card.code} is already on the stack")
        elif s.jokers >= s.jokers_allowed:
            raise IllegalEvent(
                "a joker was laid, but this deck has no more jokers"
                if s.jokers_allowed
                else "a joker was laid, but the deck has no jokers"
            )
        in_turn = seat == s.turn
        s.hands = hands[:seat] + (hands[seat] - 1,) + hands[seat + 1 :]
        s.laid += 1
        call = (s.laid - 1) % 13 + 1
        s.last_layer = seat
        value = self.count_out_values[card.rank]
        after: list[Ruling] = []
        if in_turn:
            self.push(s, card, call)
            if value:
                s.count_out, s.count_owner = value, seat
            elif s.count_out is not None:
                s.count_out -= 1
            count_out = s.count_out  # the value this lay leaves, before any award clears it
            if count_out == 0:
                self.start_claim(s, "counting_out", s.count_owner, t, after)  # type: ignore[arg-type]
            elif not any(s.hands):
                owner = s.count_owner if count_out is not None else seat
                self.start_claim(s, "stall", owner, t, after)  # type: ignore[arg-type]
            else:
                s.turn = self.next_seat(s, seat)
        else:
            if self._under and s.size:
                self.push_under(s, card)
            else:
                self.push(s, card, call)
                # A picture card starts a new count-out even out of turn (seed: "whenever
                # someone lays a picture card"), but not during a hold: the hold goes on.
                if value and s.hold is None:
                    s.count_out, s.count_owner = value, seat
            count_out = s.count_out
            self.penalise(s, seat, "out_of_turn", t, after)
        out.append(Laid(t, seat, card, call, count_out, s.turn, not in_turn))
        out.extend(after)

    def meet(self, s: State, card: Any, adjacent: int, one_apart: int) -> int:
        """Count `card` onto the stack and note the pair or sandwich it makes with the
        ranks beside it (`adjacent`) and one further (`one_apart`). Returns its rank."""
        rank = card.rank
        if rank:
            if rank == adjacent:
                s.pair_seen = True
            if rank == one_apart:
                s.sandwich_seen = True
            s.on_stack |= 1 << card.index
        else:
            s.jokers += 1
        return rank

    def push(self, s: State, card: Any, call: int) -> None:
        """Put `card` on top, keeping snap validity current in O(1)."""
        rank = self.meet(s, card, s.top, s.second)
        if s.size == 0:
            s.bottom = rank
        elif s.size == 1:
            s.second_bottom = rank
        s.third, s.second, s.top = s.second, s.top, rank
        s.top_card, s.top_call = card, call
        s.stack = (card, s.stack)
        s.size += 1

    def push_under(self, s: State, card: Any) -> None:
        """Slide `card` under a non-empty stack (option out_of_turn_card: under)."""
        rank = self.meet(s, card, s.bottom, s.second_bottom)
        if s.size == 1:
            s.second = rank
        elif s.size == 2:
            s.third = rank
        s.second_bottom, s.bottom = s.bottom, rank
        s.under = (card, s.under)  # a cons list too, bottom card first
        s.size += 1

    def next_seat(self, s: State, seat: int) -> int:
        """The next seat clockwise after `seat` that holds cards (`seat` itself last)."""
        hands, n = s.hands, len(s.hands)
        for step in range(1, n + 1):
            nxt = (seat + step) % n
            if hands[nxt]:
                return nxt
        return seat

    def start_claim(self, s: State, by: str, owner: int, t: int, out: list[Ruling]) -> None:
        """The count-out reached 0 (or nobody can lay): award now, or hold for a snap."""
        if self.snap_reasons(s):
            s.hold = Hold(by, owner, t + self._claim)
            s.turn = None
        else:
            self.take_stack(s, owner, by, (), t, out)

    # Snaps ------------------------------------------------------------------------

    def snap_reasons(self, s: State) -> tuple[str, ...]:
        """Every reason that holds for a snap on the stack as it is now, in rulebook order."""
        top = s.top
        if top == NO_CARD:
            return ()
        reasons: list[str] = []
        if top == s.top_call:
            reasons.append("calling_out")
        if self._top_only:
            if top and top == s.second:
                reasons.append("standard")
            if top and top == s.third:
                reasons.append("sandwich")
        else:
            if s.pair_seen:
                reasons.append("standard")
            if s.sandwich_seen:
                reasons.append("sandwich")
        if s.top_card is QUEEN_OF_SPADES:
            reasons.append("dark_queen")
        if s.hold is not None and s.hold.by == "counting_out":
            reasons.append("counting_out")
        return tuple(reasons)

    def resolve_presses(self, s: State, out: list[Ruling]) -> None:
        """Judge every press made at one instant, after every lay of that instant."""
        t, seats = s.pending_t, sorted(s.pending)  # one instant: seat order, not arrival order
        s.pending_t, s.pending = None, ()
        assert t is not None
        if s.winner is not None:  # game already won: a press only gives the winning snap its margin
            if s.deferred is not None and self.has_rival(s, seats):
                self.flush_win(s, t - s.won_t, out)  # type: ignore[operator]
            return
        contenders = []
        for seat in seats:
            if s.penalised >> seat & 1:
                out.append(SnapIgnored(t, seat, "penalised"))
            else:
                contenders.append(seat)
        if not contenders:
            return
        reasons = self.snap_reasons(s)
        if reasons:
            if len(contenders) == 1:
                self.take_stack(s, contenders[0], "snap", reasons, t, out, defer=True)
            elif self.options.dead_heat == "lower_seat":
                winner = min(contenders)
                self.take_stack(s, winner, "snap", reasons, t, out, margin=0)
                out.extend(SnapIgnored(t, seat, "dead_heat") for seat in contenders if seat != winner)
            else:
                out.extend(SnapIgnored(t, seat, "dead_heat") for seat in contenders)
            return
        if s.won_t is not None and t < s.won_t + self._race:
            late = tuple(SnapIgnored(t, seat, "late", t - s.won_t) for seat in contenders)
            if s.deferred is not None:
                if not self.has_rival(s, contenders):
                    # The winner pressing again (a double tap) is no rival: keep waiting
                    # for the margin, and report the extra press after the win.
                    s.deferred = s.deferred._replace(after=s.deferred.after + late)
                    return
                self.flush_win(s, t - s.won_t, out)
            out.extend(late)
            return
        for seat in contenders:
            self.penalise(s, seat, "wrong_snap", t, out)

    def has_rival(self, s: State, seats: Sequence[int]) -> bool:
        """Whether a seat other than the waiting snap win's winner pressed."""
        winner = s.deferred.won.seat  # type: ignore[union-attr]
        return any(seat != winner for seat in seats)

    # Outcomes ---------------------------------------------------------------------

    def take_stack(
        self,
        s: State,
        seat: int,
        by: str,
        reasons: tuple[str, ...],
        t: int,
        out: list[Ruling],
        margin: int | None = None,
        defer: bool = False,
    ) -> None:
        """`seat` wins the stack: its cards go under the seat's pile and it lays next."""
        cards = s.size
        hands = s.hands
        s.hands = hands[:seat] + (hands[seat] + cards,) + hands[seat + 1 :]
        s.clear_stack()
        s.penalised &= 1 << seat  # every other seat is freed; a count-out winner keeps its own
        s.turn = seat
        s.won_t = t
        if self.options.call_restarts_on_win:
            s.laid = 0
        won = StackWon(t, seat, by, reasons, cards, margin, seat)
        game = GameWon(t, seat) if s.hands[seat] == s.total else None
        if game is not None:
            s.winner = seat
        if defer:
            s.deferred = Deferred(won, game, ())
        else:
            out.append(won)
            if game is not None:
                out.append(game)

    def flush_win(self, s: State, margin: int | None, out: list[Ruling]) -> None:
        """Announce the snap win that waited for its margin."""
        won, game, after = s.deferred  # type: ignore[misc]
        s.deferred = None
        out.append(won._replace(margin_us=margin))
        if game is not None:
            out.append(game)
        out.extend(after)

    def penalise(self, s: State, seat: int, reason: str, t: int, out: list[Ruling]) -> None:
        out.append(Penalty(t, seat, reason))
        s.penalised |= 1 << seat
        if s.penalised == (1 << len(s.hands)) - 1:
            s.penalised = 0
            out.append(PenaltiesLifted(t))

    def check_seat(self, s: State, seat: object) -> None:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(s.hands):
            raise IllegalEvent(f"seat {seat!r} is out of range 0..{len(s.hands) - 1}")

    # A new game -------------------------------------------------------------------

    def new_game(
        self, players: Sequence[str], deck: int = 52, hand_sizes: Sequence[int] | None = None
    ) -> State:
        """The table after the deal."""
        n = len(players)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise SetupError(f"a game has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}")
        if deck not in (52, 54):
            raise SetupError(f"deck must be 52 or 54, not {deck!r}")
        if hand_sizes is None:
            hands = tuple(deal_sizes(deck, n))
        else:
            hands = tuple(hand_sizes)
            if len(hands) != n:
                raise SetupError(f"hand_sizes has {len(hands)} entries for {n} players")
            if any(isinstance(h, bool) or not isinstance(h, int) or h < 0 for h in hands):
                raise SetupError("hand_sizes must be whole numbers of cards, 0 or more")
            if sum(hands) > deck:
                raise SetupError(f"hand_sizes deal {sum(hands)} cards from a {deck}-card deck")
            if sum(1 for h in hands if h) < 2:
                raise SetupError("hand_sizes must give cards to at least two seats")
        s = State.__new__(State)
        s.rules = self
        s.players = tuple(players)
        s.hands = hands
        s.total = sum(hands)
        s.jokers_allowed = 2 if deck == 54 else 0
        s.clear_stack()
        s.turn = next(s.seats_with_cards())
        s.now = 0
        s.winner = None
        s.laid = 0
        s.last_layer = None
        s.penalised = 0
        s.pending_t, s.pending = None, ()
        s.won_t = None
        s.deferred = None
        return s


def step(state: State, event: Event) -> tuple[State, list[Ruling]]:
    """The table after `event`, and the rulings it caused. `state` is left as it was."""
    s = state.copy()
    out: list[Ruling] = []
    state.rules.apply(s, event, out)
    return s, out


def finish(state: State) -> tuple[State, list[Ruling]]:
    """The table once the input has ended, and the rulings that were still waiting."""
    s = state.copy()
    out: list[Ruling] = []
    state.rules.finish(s, out)
    return s, out
