"""The rules engine: `step(state, event) -> (state, rulings)`, nothing else.

Pure: no I/O, clock, thread or global state. Time is the events' own `t`; timed
rules (the claim window, the race window) fire when an event, a `Wait` included,
reaches their time. `Celtic` holds the rules of seeds 000/001 as settled by the
rulebook (docs/rules.md), and the other seeds' machinery (the face-card challenge,
slap patterns on the top of the stack, card penalties, eliminations) behind options
that are off in `celtic`. The other presets (presets.py) subclass it and change its
defaults, as python-chess does its variants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any, ClassVar

from referee.cards import QUEEN_OF_SPADES, Card, deal_sizes

from .events import Event, Lay, Snap, Wait
from .options import Options
from .rulings import (
    Burned,
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
from .state import NO_CARD, Deferred, Hold, State

MIN_PLAYERS, MAX_PLAYERS = 2, 8

_new = tuple.__new__  # a ruling (a NamedTuple) made without its Python-level __new__


class IllegalEvent(ValueError):
    """An event that cannot have happened at a real table (a script error)."""


class SetupError(ValueError):
    """A game that cannot be set up: players, deck or hand sizes."""


class Celtic:
    """Celtic Egyptian Ratscrew (seeds 000 and 001), the default preset."""

    name: ClassVar[str] = "celtic"
    defaults: ClassVar[Options] = Options()
    # Picture cards start a count-out: J 1, Q 2, K 3, A 4 (indexed by rank; joker 0).
    # The face-card challenge gives the same numbers of chances.
    count_out_values: ClassVar[tuple[int, ...]] = (0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3)
    pair_reason: ClassVar[str] = "standard"  # the celtic seed's word for a pair
    sandwich_middle_differs: ClassVar[bool] = False  # paranoid: "separated by ... a different value"

    def __init__(self, options: Options | None = None) -> None:
        o = self.options = options if options is not None else self.defaults
        self._top_only = o.scan == "top"
        self._race = o.race_window
        self._claim = o.claim_window
        self._under = o.out_of_turn_card == "under"
        self._back = o.out_of_turn_card == "back"
        self._challenge = o.face_cards == "challenge"
        self._face_values = self.count_out_values if o.face_cards != "none" else (0,) * 14
        self._claim_by_slap = self._challenge and o.challenge_claim == "slap"
        # The celtic slaps are judged by the original, fastest code; any other mix of
        # patterns by `pattern_reasons`.
        self._celtic_slaps = (
            o.slap_calling_out
            and o.slap_pair
            and o.slap_sandwich
            and o.slap_dark_queen
            and not (o.slap_top_bottom or o.slap_run or o.slap_marriage or o.slap_triple or o.slap_joker)
            and self.pair_reason == "standard"
            and not self.sandwich_middle_differs
        )
        # Presses take the celtic path unless a rule of the other seeds touches them.
        self._house = (
            self._claim_by_slap
            or not o.penalty_bars
            or o.penalty_cards > 0
            or o.wrong_snap_gives_stack
            or o.wrong_snaps_out > 0
            or o.empty_wrong_snap != "penalty"
            or not o.slap_in
            or o.triple_wins_game
        )

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
        if s.pending_t is not None or s.deferred is not None or s.hold is not None:
            self.advance(s, t, out)  # most events find nothing waiting: no call for them
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
        turn = s.turn
        rank = card.rank
        if seat is None and turn is not None and s.hands[turn] and rank and not s.on_stack >> card.index & 1:
            seat = turn  # the usual lay: the seat on turn, a card not on the stack yet
        else:
            seat = self.laying_seat(s, seat, card)  # the checks, each with its own message
        in_turn = seat == s.turn
        hands = s.hands
        held = list(hands)  # a list's one change, then a tuple: half the time of slicing round it
        held[seat] -= 1
        s.hands = tuple(held)
        if not in_turn and self._back:
            self.take_back(s, seat, card, t, out)
            return
        s.laid += 1
        call = (s.laid - 1) % 13 + 1
        value = self._face_values[rank]
        after: list[Ruling] = []
        if not in_turn:
            count_out = self.lay_out_of_turn(s, seat, card, call, value, t, after)
        else:
            self.push(s, card, call)
            s.last_layer = seat
            if self._challenge:
                count_out = self.challenge_lay(s, seat, value, t, after)
            else:
                if value:
                    s.count_out, s.count_owner = value, seat
                elif s.count_out is not None:
                    s.count_out -= 1
                count_out = s.count_out  # the value this lay leaves, before any award clears it
                if count_out == 0:
                    self.start_claim(s, "counting_out", s.count_owner, t, after)  # type: ignore[arg-type]
                elif not hands[seat] - 1 and not any(s.hands):  # only the last card held can empty them
                    owner = s.count_owner if count_out is not None else seat
                    self.start_claim(s, "stall", owner, t, after)  # type: ignore[arg-type]
                else:
                    s.turn = self.next_seat(s, seat)
        out.append(_new(Laid, (t, seat, card, call, count_out, s.turn, not in_turn, self._challenge)))
        out.extend(after)

    def laying_seat(self, s: State, seat: int | None, card: Card) -> int:
        """The seat a lay is from (the seat on turn when it names none), once it may lay `card`."""
        if seat is None:
            seat = s.turn
            if seat is None:
                raise IllegalEvent("nobody is on turn (a claim hold is on): the lay must name its seat")
        else:
            self.check_seat(s, seat)
        if not s.hands[seat]:
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
        return seat

    def take_back(self, s: State, seat: int, card: Card, t: int, out: list[Ruling]) -> None:
        """Seed 002: a card played by accident "is ignored and set aside": the seat takes it
        back and plays it on its turn. It is never on the stack; the call stays."""
        out.append(Laid(t, seat, card, s.laid % 13 + 1, s.count_out, s.turn, True, self._challenge))
        if self.options.out_of_turn_penalised:
            self.penalise(s, seat, "out_of_turn", t, out)
        s.hands = s.hands[:seat] + (s.hands[seat] + 1,) + s.hands[seat + 1 :]
        out.append(TakeBack(t, seat, card))

    def lay_out_of_turn(
        self, s: State, seat: int, card: Card, call: int, value: int, t: int, out: list[Ruling]
    ) -> int | None:
        """A card laid out of turn and kept: under the stack (a variant's rule) or on it.
        Returns the count-out it leaves."""
        if self._under and s.size:
            self.push_under(s, card)
        else:
            self.push(s, card, call)
            s.last_layer = seat
            # A picture card starts a new count-out even out of turn (seed: "whenever
            # someone lays a picture card"), but not during a hold: the hold goes on.
            # A challenge is the next seat's turn to answer: a card out of turn is none.
            if value and s.hold is None and not self._challenge:
                s.count_out, s.count_owner = value, seat
        count_out = s.count_out
        if self.options.out_of_turn_penalised:
            self.penalise(s, seat, "out_of_turn", t, out)
        return count_out

    def challenge_lay(self, s: State, seat: int, value: int, t: int, out: list[Ruling]) -> int | None:
        """An in-turn card under the face-card challenge (seeds 002, 003, 004). Returns the
        chances it leaves (the `laid` ruling's `count_out`), before a failed challenge's award.

        A face card challenges the next seat with cards: it has `value` chances (J 1,
        Q 2, K 3, A 4) to lay a face card, and keeps the turn until it does or fails.
        `count_out` holds the chances left and `count_owner` the challenger.
        """
        if value:
            s.count_out, s.count_owner = value, seat
            nxt = self.next_seat(s, seat)
            if nxt != seat:
                s.turn = nxt
                return value
            s.count_out = 0  # nobody else holds a card: nobody can answer
        elif s.count_owner is not None:
            left = s.count_out = s.count_out - 1  # type: ignore[operator]
            # Out of chances, or out of cards: "unable to produce a face card" (seed 003).
            if left and s.hands[seat]:
                return left
        elif not any(s.hands):
            self.start_claim(s, "stall", seat, t, out)
            return None
        else:
            s.turn = self.next_seat(s, seat)
            return None
        left = s.count_out
        self.start_claim(s, "challenge", s.count_owner, t, out)  # type: ignore[arg-type]
        return left

    def meet(self, s: State, card: Any, adjacent: int, one_apart: int) -> int:
        """Count `card` onto the stack and note the pair or sandwich it makes with the
        ranks beside it (`adjacent`) and one further (`one_apart`). Returns its rank."""
        rank = card.rank
        if rank:
            if rank == adjacent:
                s.pair_seen = True
            if rank == one_apart and not (rank == adjacent and self.sandwich_middle_differs):
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
        if s.size == 1:  # the size counts burned cards: the card goes under them too
            s.second = rank
        elif s.size == 2:
            s.third = rank
        s.second_bottom, s.bottom = s.bottom, rank
        s.under = (card, s.under)  # a cons list too, bottom card first
        s.size += 1

    def next_seat(self, s: State, seat: int) -> int:
        """The next seat clockwise after `seat` that holds cards (`seat` itself last)."""
        hands, n = s.hands, len(s.hands)
        nxt = seat + 1 if seat + 1 < n else 0
        if hands[nxt]:
            return nxt  # the usual case, without the loop's set-up
        for step in range(2, n + 1):
            nxt = (seat + step) % n
            if hands[nxt]:
                return nxt
        return seat

    def start_claim(self, s: State, by: str, owner: int, t: int, out: list[Ruling]) -> None:
        """The count-out reached 0, a challenge failed, or nobody can lay: award now, or
        hold for a snap (a challenge claimed by slapping always holds)."""
        if by == "challenge" and self._claim_by_slap:
            # Seed 003: the challenger alone may slap at first, then anyone; the referee
            # closes the claim after claim_window more and gives the stack to the challenger.
            open_at = t + self.options.exclusive_claim
            s.hold = Hold(by, owner, open_at + self._claim, open_at)
            s.turn = None
        elif self.snap_reasons(s):
            s.hold = Hold(by, owner, t + self._claim)
            s.turn = None
        else:
            self.take_stack(s, owner, by, (), t, out)

    # Snaps ------------------------------------------------------------------------

    def snap_reasons(self, s: State) -> tuple[str, ...]:
        """Every reason that holds for a snap on the stack as it is now, in rulebook order."""
        if not self._celtic_slaps or self._claim_by_slap:
            return self.pattern_reasons(s, s.now, None)
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

    def reasons_for(self, s: State, seat: int | None, t: int) -> tuple[str, ...]:
        """The reasons a snap by `seat` at `t` holds: a slap claim may be the challenger's alone."""
        if not self._celtic_slaps or self._claim_by_slap:
            return self.pattern_reasons(s, t, seat)
        return self.snap_reasons(s)

    def pattern_reasons(self, s: State, t: int, seat: int | None) -> tuple[str, ...]:
        """Snap reasons under any mix of slap options (the celtic mix has its own fast path).

        Only the pair and sandwich look down the stack (with `scan: stack`); the other
        patterns are about the top cards. `seat` None: a seat other than a claim's owner.
        """
        o = self.options
        reasons: list[str] = []
        top = s.top
        hold = s.hold
        if top != NO_CARD:
            second, third = s.second, s.third
            if o.slap_calling_out and top == s.top_call:
                reasons.append("calling_out")
            if o.slap_pair and (top and top == second if self._top_only else s.pair_seen):
                reasons.append(self.pair_reason)
            if o.slap_sandwich:
                if self._top_only:
                    if top and top == third and not (self.sandwich_middle_differs and second == top):
                        reasons.append("sandwich")
                elif s.sandwich_seen:
                    reasons.append("sandwich")
            if o.slap_dark_queen and s.top_card is QUEEN_OF_SPADES:
                reasons.append("dark_queen")
            # The bottom is another card only on a stack of two or more; a burned card there
            # is one nobody has seen (face down): rank 0, which matches nothing.
            if o.slap_top_bottom and top and s.size > 1 and top == s.bottom:
                reasons.append("top_bottom")
            # A run needs its top two a rank apart (mod 13, so Q-K-A and K-A-2 pass): most
            # stacks are ruled out here, before the walk down the stack.
            if o.slap_run and s.size >= o.slap_run and second > 0 and (top - second) % 13 in (1, 12):
                ranks = self.top_ranks(s, o.slap_run)
                if len(ranks) == o.slap_run and is_run(ranks, o.run_wraps):
                    reasons.append("run")
            if o.slap_marriage and top + second == 25 and top in (12, 13):  # Q=12, K=13
                reasons.append("marriage")
            if o.slap_triple and top and top == second == third:
                reasons.append("triple")
            if o.slap_joker and top == 0:
                reasons.append("joker")
        if hold is not None:
            if hold.by == "counting_out":
                reasons.append("counting_out")
            elif hold.open_at is not None and (t >= hold.open_at or seat == hold.owner):
                reasons.append("claim")
        return tuple(reasons)

    def top_ranks(self, s: State, n: int) -> list[int]:
        """The ranks of the top `n` known cards, top first (fewer if the stack has fewer)."""
        ranks: list[int] = []
        node = s.stack
        while node is not None and len(ranks) < n:
            ranks.append(node[0].rank)
            node = node[1]  # type: ignore[assignment]
        if len(ranks) < n and s.under is not None:
            for card in reversed(s.under_cards()):
                if card is None:  # burned face down: no run goes through it
                    break
                ranks.append(card.rank)
                if len(ranks) == n:
                    break
        return ranks

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
        if self._house:
            self.resolve_house(s, t, contenders, out)
            return
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
        if self.late(s, t, contenders, out):
            return
        for seat in contenders:
            self.penalise(s, seat, "wrong_snap", t, out)

    def late(self, s: State, t: int, seats: list[int], out: list[Ruling]) -> bool:
        """Presses with no valid snap inside the race window after a won stack: late, not wrong."""
        if s.won_t is None or t >= s.won_t + self._race:
            return False
        late = tuple(SnapIgnored(t, seat, "late", t - s.won_t) for seat in seats)
        if s.deferred is not None:
            if not self.has_rival(s, seats):
                # The winner pressing again (a double tap) is no rival: keep waiting
                # for the margin, and report the extra press after the win.
                s.deferred = s.deferred._replace(after=s.deferred.after + late)
                return True
            self.flush_win(s, t - s.won_t, out)
        out.extend(late)
        return True

    def resolve_house(self, s: State, t: int, seats: list[int], out: list[Ruling]) -> None:
        """Presses under the other seeds' rules: seats out of the game, a claim that may be one
        seat's alone, and what a wrong snap costs."""
        contenders = []
        ignored: list[Ruling] = []
        for seat in seats:
            if s.out >> seat & 1:
                ignored.append(SnapIgnored(t, seat, "out"))
            elif not s.hands[seat] and not self.options.slap_in:
                ignored.append(SnapIgnored(t, seat, "no_cards"))
            else:
                contenders.append(seat)
        if ignored and s.deferred is not None:  # after the snap win that waits for its margin
            s.deferred = s.deferred._replace(after=s.deferred.after + tuple(ignored))
        else:
            out.extend(ignored)
        if not contenders:
            return
        valid, wrong = [], []
        for seat in contenders:
            reasons = self.reasons_for(s, seat, t)
            if reasons:
                valid.append((seat, reasons))
            else:
                wrong.append(seat)
        if len(valid) == 1:
            # A seat that pressed at the same instant without a valid snap (a claim not yet
            # open to it) is the runner-up: the margin is 0, known now.
            self.snap_win(s, *valid[0], t, out, margin=0 if wrong else None, defer=not wrong)
        elif valid and self.options.dead_heat == "lower_seat":
            self.snap_win(s, *valid[0], t, out, margin=0)  # seats are in order: the lower first
            heat = [SnapIgnored(t, seat, "dead_heat") for seat, _ in valid[1:]]
            if s.winner is not None:  # nothing after game_won: the other presses go before it
                out[-1:-1] = heat
            else:
                out.extend(heat)
        elif valid:
            out.extend(SnapIgnored(t, seat, "dead_heat") for seat, _ in valid)
        if not wrong or s.winner is not None or self.late(s, t, wrong, out):
            return  # (a snap that won the game: nothing after game_won)
        for seat in wrong:
            if s.winner is not None:
                break
            self.wrong_snap(s, seat, t, out)

    def snap_win(
        self,
        s: State,
        seat: int,
        reasons: tuple[str, ...],
        t: int,
        out: list[Ruling],
        margin: int | None = None,
        defer: bool = False,
    ) -> None:
        """A valid snap (or a slap claim) takes the stack; a triple may win the game."""
        o = self.options
        if s.streaks:
            s.streaks = s.streaks[:seat] + ((-1, 0),) + s.streaks[seat + 1 :]
        by = "claim" if "claim" in reasons else "snap"
        wins = "triple" if o.triple_wins_game and "triple" in reasons else None
        self.take_stack(s, seat, by, reasons, t, out, margin=margin, defer=defer, wins_game=wins)

    def wrong_snap(self, s: State, seat: int, t: int, out: list[Ruling]) -> None:
        """What a wrong snap costs, as the options say."""
        o = self.options
        if not s.hands[seat] and o.empty_wrong_snap != "penalty":
            if o.empty_wrong_snap == "ignored":  # seed 002: "they are ignored"
                out.append(SnapIgnored(t, seat, "not_in_game"))
            else:  # seed 004: "eliminated if they slap the pile in error"
                out.append(Penalty(t, seat, "wrong_snap", False))
                self.eliminate(s, seat, "wrong_snap_no_cards", t, out)
            return
        self.penalise(s, seat, "wrong_snap", t, out)
        if o.wrong_snap_gives_stack:
            self.give_stack(s, seat, t, out)
        if o.wrong_snaps_out and self.count_streak(s, seat) >= o.wrong_snaps_out and s.winner is None:
            self.eliminate(s, seat, "wrong_snaps_in_a_row", t, out)

    def count_streak(self, s: State, seat: int) -> int:
        """The seat's wrong snaps on cards in a row, this one included (seed 002: "incorrectly
        slaps more than five consecutive cards"). Two on one card count once."""
        streaks = s.streaks or ((-1, 0),) * len(s.hands)
        card, count = streaks[seat]
        if s.laid != card:
            count = count + 1 if s.laid == card + 1 else 1
        s.streaks = streaks[:seat] + ((s.laid, count),) + streaks[seat + 1 :]
        return count

    def give_stack(self, s: State, slapper: int, t: int, out: list[Ruling]) -> None:
        """Seed 002: after a wrong slap "the player who most recently played a card picks up
        the pile ..., unless a player slaps his own card, in which case the player before him"."""
        if not s.size and not s.penalty_pile:
            return
        taker = s.last_layer
        if taker is None or taker == slapper or s.out >> taker & 1:
            taker = self.previous_seat(s, slapper)
        if taker is not None:
            self.take_stack(s, taker, "penalty", (), t, out)

    def previous_seat(self, s: State, seat: int) -> int | None:
        """The seat before `seat` (counter-clockwise) that holds cards, if any."""
        hands, n = s.hands, len(s.hands)
        for back in range(1, n):
            prev = (seat - back) % n
            if hands[prev]:
                return prev
        return None

    def pay(self, s: State, seat: int, t: int, out: list[Ruling]) -> None:
        """The penalised seat pays `penalty_cards` (what it has, if fewer) face down."""
        cards = min(self.options.penalty_cards, s.hands[seat])
        if not cards:
            return
        s.hands = s.hands[:seat] + (s.hands[seat] - cards,) + s.hands[seat + 1 :]
        if self.options.penalty_cards_to == "stack":
            self.burn(s, cards)
        else:
            s.penalty_pile += cards
        out.append(Burned(t, seat, cards, self.options.penalty_cards_to))
        if not s.hands[seat]:
            self.hand_emptied(s, seat, t, out)

    def burn(self, s: State, cards: int) -> None:
        """`cards` unseen cards go face down under the stack."""
        for _ in range(cards):
            s.under = (None, s.under)  # type: ignore[assignment]
        s.size += cards
        s.burned += cards
        # Rank 0 is a card nobody saw: it matches nothing (and NO_CARD stays "no card").
        s.second_bottom = s.bottom if cards == 1 else 0
        s.bottom = 0

    def eliminate(self, s: State, seat: int, reason: str, t: int, out: list[Ruling]) -> None:
        """The seat is out of the game; any cards it holds go under the stack."""
        cards = s.hands[seat]
        if cards:
            s.hands = s.hands[:seat] + (0,) + s.hands[seat + 1 :]
            self.burn(s, cards)
        s.out |= 1 << seat
        s.penalised &= ~(1 << seat)
        out.append(SeatOut(t, seat, reason, cards))
        still_in = [x for x in range(len(s.hands)) if not s.out >> x & 1]
        if len(still_in) == 1:  # seed 004: "the only player left with cards to play wins"
            last = still_in[0]
            if s.size or s.penalty_pile:
                self.take_stack(s, last, "stall", (), t, out, wins_game="last_seat_in")
            else:
                s.winner = last
                out.append(GameWon(t, last, "last_seat_in"))
            return
        if s.count_owner == seat:  # nobody is left to claim: the challenge (or its hold) lapses
            s.count_out = s.count_owner = None
            if s.hold is not None and s.hold.owner == seat:
                s.hold = None
                s.turn = seat  # as if it had just laid: the turn moves on from it
                self.hand_emptied(s, seat, t, out)
                return
        if cards:
            self.hand_emptied(s, seat, t, out)

    def hand_emptied(self, s: State, seat: int, t: int, out: list[Ruling]) -> None:
        """The seat on turn lost its last cards other than by laying: the turn moves on."""
        if s.turn != seat:
            return
        owner = s.count_owner
        if self._challenge and owner is not None and owner != seat:
            self.start_claim(s, "challenge", owner, t, out)  # it can no longer answer
        elif any(s.hands):
            s.turn = self.next_seat(s, seat)
        else:  # the stall rule: nobody holds a card
            if owner is None:
                owner = s.last_layer if s.last_layer is not None else seat
            if s.out >> owner & 1:  # a seat out of the game takes nothing: the next one in does
                n = len(s.hands)
                owner = next((x for x in ((owner + k) % n for k in range(n)) if not s.out >> x & 1), owner)
            self.start_claim(s, "stall", owner, t, out)

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
        wins_game: str | None = None,
    ) -> None:
        """`seat` wins the stack (and the penalty pile): its cards go under the seat's pile
        and it lays next. `wins_game`: the reason this win also wins the game."""
        pile = s.penalty_pile
        cards = s.size + pile
        hands = s.hands
        s.hands = hands[:seat] + (hands[seat] + cards,) + hands[seat + 1 :]
        s.clear_stack()
        s.penalty_pile = 0
        s.penalised &= 1 << seat  # every other seat is freed; a count-out winner keeps its own
        s.turn = seat
        s.won_t = t
        if self.options.call_restarts_on_win:
            s.laid = 0
        won = StackWon(t, seat, by, reasons, cards, margin, seat, pile)
        game = GameWon(t, seat, wins_game) if wins_game or s.hands[seat] == s.total else None
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
        out.append(Penalty(t, seat, reason, self.options.penalty_bars))
        if self.options.penalty_bars:
            s.penalised |= 1 << seat
            if s.penalised == (1 << len(s.hands)) - 1:
                s.penalised = 0
                out.append(PenaltiesLifted(t))
        if self.options.penalty_cards:
            self.pay(s, seat, t, out)

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
        s.penalty_pile = 0
        s.out = 0
        s.streaks = ()
        s.pending_t, s.pending = None, ()
        s.won_t = None
        s.deferred = None
        return s


def is_run(ranks: Sequence[int], wraps: bool) -> bool:
    """Whether the ranks (top first) go up or down one at a time.

    Around the corner (`wraps`), K-A-2 counts: ranks are taken modulo 13. Otherwise the
    ace is low (A-2-3) or high (Q-K-A), but not both in one run.
    """
    if len(ranks) < 2 or 0 in ranks:  # a joker has no rank
        return False
    steps = {(b - a) % 13 for a, b in pairwise(ranks)}
    if wraps:
        return steps == {1} or steps == {12}
    for values in (ranks, [14 if r == 1 else r for r in ranks]):
        diffs = {b - a for a, b in pairwise(values)}
        if diffs == {1} or diffs == {-1}:
            return True
    return False


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
