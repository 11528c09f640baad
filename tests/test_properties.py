"""Invariants of the rules, over random games (hypothesis, derandomized).

A driver turns hypothesis' choices into legal table events; after every event we
check what must always hold: every card accounted for, one winner per stack,
penalties only for a wrong snap or an out-of-turn lay, snap validity equal to a
naive rescan of the whole stack, a table that can always move on, and states
that never change once handed out.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cards import QUEEN_OF_SPADES, Card, deck
from referee.rules.engine import finish, step
from referee.rules.events import Event, Lay, Snap, Wait
from referee.rules.presets import rules_for
from referee.rules.rulings import GameWon, Laid, PenaltiesLifted, Penalty, Ruling, SnapIgnored, StackWon
from referee.sim.bots import VirtualTable

from .helpers import free_card, snapshot

GAPS_US = (0, 1, 1_000, 150_000, 299_999, 300_000, 700_000, 3_000_000, 3_500_000)

actions = st.lists(
    st.tuples(
        st.sampled_from(["lay", "lay", "lay", "lay", "oot", "snap", "snap", "wait"]),
        st.integers(0, 7),  # a seat
        st.integers(0, 53),  # which card, among those not on the stack
        st.sampled_from(GAPS_US),
    ),
    min_size=20,
    max_size=300,
)
options = st.fixed_dictionaries(
    {},
    optional={
        "scan": st.sampled_from(["stack", "top"]),
        "call_restarts_on_win": st.booleans(),
        "dead_heat": st.sampled_from(["no_winner", "lower_seat"]),
        "out_of_turn_card": st.sampled_from(["stays", "under"]),
        "race_window": st.sampled_from([0, 1, 300]),
        "claim_window": st.sampled_from([0, 500, 3000]),
    },
)


def naive_reasons(cards: list[Card], top_call: int, top_only: bool) -> set[str]:
    """Snap validity by rescanning the whole stack, the way the rules are written."""
    reasons = set()
    if not cards:
        return reasons
    ranks = [c.rank for c in cards]
    if ranks[-1] == top_call:
        reasons.add("calling_out")
    start = max(len(cards) - 3, 0) if top_only else 0
    window = ranks[start:]
    pairs = [a and a == b for a, b in pairwise(window)]
    if any(pairs) and (not top_only or pairs[-1]):
        reasons.add("standard")
    if any(a and a == c for a, c in zip(window, window[2:], strict=False)):
        reasons.add("sandwich")
    if cards[-1] is QUEEN_OF_SPADES:
        reasons.add("dark_queen")
    return reasons


class Referee:
    """Drives one random game and checks every invariant after every event."""

    def __init__(self, players: int, given_options: dict[str, Any], hand_sizes: list[int] | None) -> None:
        self.rules = rules_for("celtic", given_options)
        deck_size = 54 if hand_sizes is None and players % 2 else 52
        self.state = self.rules.new_game([f"P{i}" for i in range(players)], deck_size, hand_sizes)
        self.cards = deck(deck_size)
        self.t = 1_000_000
        self.out: list[Ruling] = []
        self.events: list[Event] = []
        self.top_call = 0
        self.penalised: set[int] = set()  # a model of who is penalised, from the rulings alone

    def event_for(self, kind: str, seat: int, which: int, gap: int) -> Event | None:
        s = self.state
        self.t += gap
        seat %= s.seats
        if kind == "snap":
            return Snap(self.t, seat)
        if kind == "wait":
            return Wait(self.t)
        card = free_card(s, self.cards, which)
        if kind == "lay" and s.turn is not None:
            return Lay(self.t, card)
        if s.hands[seat]:
            return Lay(self.t, card, seat)
        return Wait(self.t)

    def play(self, event: Event) -> None:
        before = self.state
        frozen = snapshot(before)
        self.state, rulings = step(before, event)
        assert snapshot(before) == frozen, "step changed the state it was given"
        self.events.append(event)
        self.check(event, rulings)

    def end(self) -> None:
        self.state, rulings = finish(self.state)
        self.check(None, rulings)

    def check(self, event: Event | None, rulings: list[Ruling]) -> None:
        s = self.state
        # Every card is accounted for: piles plus stack is the whole deck in play.
        assert sum(s.hands) + s.size == s.total and min(s.hands) >= 0
        cards = s.stack_cards()
        assert len(cards) == s.size
        suited = [c for c in cards if not c.is_joker]
        assert len(set(suited)) == len(suited)
        for ruling in rulings:
            assert not any(type(r) is GameWon for r in self.out), "a ruling after game_won"
            assert not self.out or ruling.t >= self.out[-1].t, "rulings go back in time"
            if event is not None:
                assert ruling.t <= event.t
            if type(ruling) is Laid and not (ruling.out_of_turn and self.rules._under and len(cards) > 1):
                self.top_call = ruling.call
            self.follow_penalties(ruling)
            self.out.append(ruling)
        if s.deferred is None:  # a snap win waiting for its margin has already freed the others
            assert set(s.penalised_seats()) == self.penalised
        # Snap validity kept incrementally equals a naive rescan of the whole stack.
        if s.winner is None:
            expected = naive_reasons(cards, self.top_call, self.rules.options.scan == "top")
            if s.hold is not None and s.hold.by == "counting_out":
                expected.add("counting_out")
            assert set(s.snap_reasons()) == expected
        # The table can always move on: a seat with cards is on turn, or a hold will end.
        assert s.over or s.hold is not None or (s.turn is not None and s.hands[s.turn] > 0)
        assert (s.turn is None) == (s.hold is not None) or s.over

    def follow_penalties(self, ruling: Ruling) -> None:
        """Penalties as the rulebook tells them: until another seat wins, or all are penalised."""
        if type(ruling) is Penalty:
            self.penalised.add(ruling.seat)
        elif type(ruling) is StackWon:
            self.penalised &= {ruling.seat}
        elif type(ruling) is PenaltiesLifted:
            assert self.penalised == set(range(self.state.seats))
            self.penalised.clear()
        elif type(ruling) is SnapIgnored and ruling.reason == "penalised":
            assert ruling.seat in self.penalised

    def check_history(self) -> None:
        laid_since_win = 0
        for i, ruling in enumerate(self.out):
            if type(ruling) is Laid:
                laid_since_win += 1
            elif type(ruling) is StackWon:
                # One winner per stack, taking exactly the cards laid since the last win.
                assert ruling.cards == laid_since_win and ruling.cards > 0
                laid_since_win = 0
            elif type(ruling) is Penalty:
                if ruling.reason == "wrong_snap":
                    assert Snap(ruling.t, ruling.seat) in self.events
                else:
                    assert ruling.reason == "out_of_turn"
                    previous = self.out[i - 1]
                    assert type(previous) is Laid and previous.out_of_turn
                    assert (previous.t, previous.seat) == (ruling.t, ruling.seat)


@settings(max_examples=400)
@given(
    players=st.integers(2, 5),
    given_options=options,
    short_deal=st.booleans(),
    script=actions,
)
def test_random_games_keep_every_invariant(players, given_options, short_deal, script):
    hand_sizes = [3] * players if short_deal else None
    referee = Referee(players, given_options, hand_sizes)
    for kind, seat, which, gap in script:
        if referee.state.over:
            break
        event = referee.event_for(kind, seat, which, gap)
        if event is not None:
            referee.play(event)
    referee.end()
    referee.check_history()


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 8))
def test_random_bot_games_always_progress_to_a_winner(seed, players):
    table = VirtualTable(players=players, seed=seed, cap=20_000)
    last = None
    for play in table.play():
        last = play
    assert last is not None and not table.stopped
    assert last.state.over and sum(last.state.hands) == 52
    assert type(last.rulings[-1]) is GameWon
