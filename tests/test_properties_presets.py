"""Invariants of every preset's rules, over random games (hypothesis, derandomized).

The same kind of driver as test_properties.py (which pins celtic in depth), run for
every preset and for random mixes of the other seeds' options. After every event:
every card is accounted for (piles, stack, cards burned under it, the penalty pile),
the card counts follow the rulings alone (so every burn, hand-over and elimination
is announced), one winner per stack taking exactly what was put on it, snap validity
equal to a naive look at the top of the stack, and a table that can always move on.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.cards import QUEEN_OF_SPADES, Card, deck
from referee.rules.engine import Celtic, step
from referee.rules.events import Event, Lay, Snap, Wait
from referee.rules.presets import PRESETS, rules_for
from referee.rules.rulings import Burned, GameWon, Laid, Penalty, Ruling, SeatOut, StackWon, TakeBack

from .helpers import free_card
from .test_properties import Referee as CelticReferee

GAPS_US = (0, 1, 1_000, 150_000, 299_999, 300_000, 700_000, 3_000_000, 3_500_000, 6_500_000)

actions = st.lists(
    st.tuples(
        st.sampled_from(["lay", "lay", "lay", "lay", "oot", "snap", "snap", "snap", "wait"]),
        st.integers(0, 7),  # a seat
        st.integers(0, 53),  # which card, among those not on the stack
        st.sampled_from(GAPS_US),
    ),
    min_size=20,
    max_size=300,
)
# Options a host may mix into any preset (a preset's own defaults are drawn too).
house_rules = st.fixed_dictionaries(
    {},
    optional={
        "scan": st.sampled_from(["stack", "top"]),
        "dead_heat": st.sampled_from(["no_winner", "lower_seat"]),
        "out_of_turn_card": st.sampled_from(["stays", "under", "back"]),
        "race_window": st.sampled_from([0, 1, 300]),
        "claim_window": st.sampled_from([0, 500, 3000]),
        "exclusive_claim": st.sampled_from([0, 3000]),
        "face_cards": st.sampled_from(["counting_out", "challenge", "none"]),
        "challenge_claim": st.sampled_from(["award", "slap"]),
        "slap_top_bottom": st.booleans(),
        "slap_run": st.sampled_from([0, 3, 4]),
        "run_wraps": st.booleans(),
        "slap_marriage": st.booleans(),
        "slap_triple": st.booleans(),
        "triple_wins_game": st.booleans(),
        "slap_joker": st.booleans(),
        "penalty_bars": st.booleans(),
        "penalty_cards": st.sampled_from([0, 1, 2, 5]),
        "penalty_cards_to": st.sampled_from(["stack", "penalty_pile"]),
        "wrong_snap_gives_stack": st.booleans(),
        "wrong_snaps_out": st.sampled_from([0, 2, 6]),
        "empty_wrong_snap": st.sampled_from(["penalty", "out", "ignored"]),
        "slap_in": st.booleans(),
        "out_of_turn_penalised": st.booleans(),
    },
)


def is_run_naive(ranks: list[int], wraps: bool) -> bool:
    """Runs by listing every run there is: n ranks in a row, up or down."""
    n = len(ranks)
    ring = list(range(1, 14)) * 2  # K then A again: around the corner
    high = [*range(1, 14), 1]  # the ace low or high, but not around the corner
    lines = [ring[i : i + n] for i in range(13)] if wraps else [high[i : i + n] for i in range(15 - n)]
    return any(ranks in (line, line[::-1]) for line in lines)


def naive_reasons(rules: Celtic, pile: list[tuple[Card | None, int]]) -> set[str]:
    """Snap validity from the stack as it lies (bottom first; None: burned face down),
    kept from the rulings alone, the way the seeds word it."""
    o = rules.options
    reasons: set[str] = set()
    if not pile or pile[-1][0] is None:
        return reasons
    ranks = [c.rank if c is not None else None for c, _ in pile]
    top, top_call = ranks[-1], pile[-1][1]
    known = [r is not None for r in ranks]

    def same(*rs: int | None) -> bool:
        return all(r is not None and r != 0 and r == rs[0] for r in rs)

    pairs = [same(a, b) for a, b in pairwise(ranks)]
    triples = list(zip(ranks, ranks[1:], ranks[2:], strict=False))
    if o.scan == "top":
        pairs, triples = pairs[-1:], triples[-1:]
    if o.slap_calling_out and top == top_call:
        reasons.add("calling_out")
    if o.slap_pair and any(pairs):
        reasons.add(rules.pair_reason)
    if o.slap_sandwich and any(
        same(a, c) and not (rules.sandwich_middle_differs and b == a) for a, b, c in triples
    ):
        reasons.add("sandwich")
    if o.slap_dark_queen and pile[-1][0] is QUEEN_OF_SPADES:
        reasons.add("dark_queen")
    if o.slap_top_bottom and len(ranks) > 1 and same(top, ranks[0]):
        reasons.add("top_bottom")
    n = o.slap_run
    if n and len(ranks) >= n and all(known[-n:]) and is_run_naive(ranks[-n:][::-1], o.run_wraps):  # type: ignore[arg-type]
        reasons.add("run")
    if o.slap_marriage and len(ranks) > 1 and {top, ranks[-2]} == {12, 13}:
        reasons.add("marriage")
    if o.slap_triple and len(ranks) > 2 and same(top, ranks[-2], ranks[-3]):
        reasons.add("triple")
    if o.slap_joker and top == 0:
        reasons.add("joker")
    return reasons


class Referee(CelticReferee):
    """Drives one random game of a preset (playing and ending it as the celtic games do) and
    checks every invariant after every event."""

    def __init__(self, preset: str, players: int, given: dict[str, Any], hands: list[int] | None) -> None:
        self.rules = rules_for(preset, given)
        deck_size = 54 if hands is None and players % 2 else 52
        self.state = self.rules.new_game([f"P{i}" for i in range(players)], deck_size, hands)
        self.cards = deck(deck_size)
        self.t = 1_000_000
        self.out: list[Ruling] = []
        self.events: list[Event] = []
        self.hands = list(self.state.hands)  # the card counts as the rulings tell them
        self.stack: list[tuple[Card | None, int]] = []  # as it lies, bottom first, with each call
        self.pile = 0

    def event_for(self, kind: str, seat: int, which: int, gap: int) -> Event | None:
        s = self.state
        self.t += gap
        seat %= s.seats
        if kind == "snap":
            return Snap(self.t, seat)
        if kind == "wait":
            return Wait(self.t)
        if s.pending_t is not None and s.pending_t < self.t:
            # Presses waiting to be judged are judged before this lay, and may cost cards or
            # move the turn: choose the lay against the table as it will be.
            s = step(s, Wait(self.t))[0]
        card: Card = free_card(s, self.cards, which)
        if kind == "lay" and s.turn is not None:
            return Lay(self.t, card)
        if s.hands[seat]:
            return Lay(self.t, card, seat)
        return Wait(self.t)

    def check(self, event: Event | None, rulings: list[Ruling]) -> None:
        s = self.state
        # Every card is accounted for, the ones burned face down and the penalty pile included.
        assert sum(s.hands) + s.size + s.penalty_pile == s.total == s.cards_in_play()
        assert min(s.hands) >= 0 and s.burned >= 0 and s.penalty_pile >= 0
        cards = s.stack_cards()
        assert len(cards) == s.size - s.burned
        suited = [c for c in cards if not c.is_joker]
        assert len(set(suited)) == len(suited)
        for ruling in rulings:
            assert not any(type(r) is GameWon for r in self.out), "a ruling after game_won"
            assert not self.out or ruling.t >= self.out[-1].t, "rulings go back in time"
            if event is not None:
                assert ruling.t <= event.t
            self.follow(ruling)
            self.out.append(ruling)
        if s.deferred is None:  # a snap win waiting for its margin has moved its cards already
            assert tuple(self.hands) == s.hands, "a card count changed without a ruling"
            assert self.pile == s.penalty_pile
        for seat in range(s.seats):  # a seat out of the game holds nothing
            assert not s.is_out(seat) or s.hands[seat] == 0
        if s.deferred is None:
            assert [c for c, _ in self.stack if c is not None] == cards
        if s.winner is None and s.deferred is None:
            expected = naive_reasons(self.rules, self.stack)
            got = set(s.snap_reasons()) - {"counting_out", "claim"}
            assert got == expected, (got, expected, [c.code if c else "??" for c, _ in self.stack])
        # The table can always move on: a seat with cards is on turn, or a hold will end.
        assert s.over or s.hold is not None or (s.turn is not None and s.hands[s.turn] > 0)
        assert (s.turn is None) == (s.hold is not None) or s.over

    def follow(self, ruling: Ruling) -> None:
        """The counts as an onlooker keeps them from the announcements alone."""
        kind = type(ruling)
        if kind is Laid:
            self.hands[ruling.seat] -= 1
            if ruling.out_of_turn and self.rules.options.out_of_turn_card == "under" and self.stack:
                self.stack.insert(0, (ruling.card, ruling.call))
            else:
                self.stack.append((ruling.card, ruling.call))
        elif kind is TakeBack:  # the card just laid goes back to its seat
            assert self.stack[-1][0] is ruling.card
            self.stack.pop()
            self.hands[ruling.seat] += 1
        elif kind is Burned:
            self.hands[ruling.seat] -= ruling.cards
            if ruling.to == "stack":
                self.stack[:0] = [(None, 0)] * ruling.cards
            else:
                self.pile += ruling.cards
        elif kind is SeatOut:
            assert self.hands[ruling.seat] == ruling.cards
            self.hands[ruling.seat] = 0
            self.stack[:0] = [(None, 0)] * ruling.cards
        elif kind is StackWon:
            # One winner per stack, taking exactly what was put on it (and the penalty pile).
            assert ruling.cards == len(self.stack) + self.pile and ruling.penalty_pile == self.pile
            assert ruling.cards > 0
            self.hands[ruling.seat] += ruling.cards
            self.stack.clear()
            self.pile = 0
        elif kind is GameWon:
            assert self.hands[ruling.seat] == self.state.total or ruling.reason in ("triple", "last_seat_in")

    def check_history(self) -> None:
        for i, ruling in enumerate(self.out):
            if type(ruling) is Penalty:
                if ruling.reason == "wrong_snap":
                    assert Snap(ruling.t, ruling.seat) in self.events
                else:
                    previous = self.out[i - 1]
                    assert type(previous) is Laid and previous.out_of_turn
            elif type(ruling) is Burned or type(ruling) is SeatOut:
                assert any(type(r) is Penalty and r.seat == ruling.seat for r in self.out[:i])


def run_game(preset: str, players: int, given: dict[str, Any], short_deal: bool, script: list[Any]) -> None:
    referee = Referee(preset, players, given, [3] * players if short_deal else None)
    for kind, seat, which, gap in script:
        if referee.state.over:
            break
        event = referee.event_for(kind, seat, which, gap)
        if event is not None:
            referee.play(event)
    referee.end()
    referee.check_history()


@settings(max_examples=150)
@given(
    preset=st.sampled_from(sorted(PRESETS)),
    players=st.integers(2, 5),
    short_deal=st.booleans(),
    script=actions,
)
def test_every_preset_keeps_every_invariant(preset, players, short_deal, script):
    run_game(preset, players, {}, short_deal, script)


@settings(max_examples=250)
@example(  # a dead heat given to the lower seat wins the game: nothing after game_won
    "paranoid",
    4,
    {
        "dead_heat": "lower_seat",
        "scan": "stack",
        "empty_wrong_snap": "penalty",
        "out_of_turn_penalised": False,
    },
    True,
    [("oot", 1, 0, 0), *[("lay", 0, 0, 0)] * 10, ("lay", 0, 0, 150000), ("snap", 0, 13, 150000)]
    + [("snap", 0, 0, 0), *[("lay", 0, 0, 0)] * 4, ("snap", 0, 5, 3500000), ("snap", 2, 0, 0)],
)
@example(  # the owner of a hold, with no cards, slaps wrongly and is out: its hold lapses
    "party",
    3,
    {},
    False,
    [*[("lay", 0, 0, 0)] * 10, ("lay", 0, 1, 0), *[("lay", 0, 0, 0)] * 7]
    + [("snap", 0, 0, 0), ("lay", 0, 0, 3000000)],
)
@example(  # a claim and a wrong slap at one instant: the claim first, the penalty pile after it
    "paranoid",
    2,
    {"scan": "stack", "out_of_turn_penalised": False, "race_window": 0},
    False,
    [*[("lay", 0, 0, 0)] * 18, ("snap", 0, 0, 0), ("snap", 1, 0, 0)],
)
@given(
    preset=st.sampled_from(sorted(PRESETS)),
    players=st.integers(2, 5),
    given_options=house_rules,
    short_deal=st.booleans(),
    script=actions,
)
def test_any_mix_of_house_rules_keeps_every_invariant(preset, players, given_options, short_deal, script):
    run_game(preset, players, given_options, short_deal, script)
