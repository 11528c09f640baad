"""The referee's voice: the pure schedule, and its exact pin states on virtual time.

Pin histories are compared as whole lists, so the number of states is checked
too. Every pin starts with the state it had when it was built at t=0 (`OFF`).
A TonalBuzzer's pin records two frequencies when it is built (`BUILT`):
PWMOutputDevice starts PWM at 100 Hz, then the buzzer silences it.
"""

from __future__ import annotations

import itertools
import queue
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardware.clock import VirtualClock
from hardware.pins import VirtualFactory
from hardware.signals import TableSignals
from referee.cards import parse_card
from referee.live.signal_player import SignalPlayer
from referee.rules.announcer import (
    AMBER,
    BASE,
    GREEN,
    OFF,
    RED,
    Announcer,
    Cue,
    game_won,
    pattern,
    penalty,
    snap_ignored,
    stack_won,
)
from referee.rules.rulings import GameWon, Laid, PenaltiesLifted, Penalty, SnapIgnored, StackWon
from referee.rules.script import adjudicate
from referee.sim.bots import VirtualTable

MS = 1000
S = 1_000_000
SEAT_PINS = (5, 6, 13)
STATUS_PINS = (17, 27, 22)
BUZZER_PIN = 18
OFF_STATE = [(0, 0.0)]
BUILT = [(0, 100), (0, None)]
CARD = parse_card("5H")
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def laid(seat, nxt, out_of_turn=False):
    return Laid(0, seat, CARD, 1, None, nxt, out_of_turn)


def won(seat, by="snap"):
    return StackWon(0, seat, by, ("standard",) if by == "snap" else (), 3, None, seat)


def ms(*times):
    return [round(t * MS) for t in times]


class Rig:
    """Three seats, a status LED and a buzzer on gpiozero's mock pins, on a virtual clock."""

    def __init__(self, seats=3, tonal=True, status=True, buzzer=True):
        self.clock = VirtualClock(0)
        self.factory = VirtualFactory(self.clock)
        self.signals = TableSignals(
            SEAT_PINS[:seats],
            STATUS_PINS if status else None,
            BUZZER_PIN if buzzer else None,
            tonal=tonal,
            pin_factory=self.factory,
        )
        self.announcer = Announcer(seats)
        self.player = SignalPlayer(self.announcer, self.signals, self.clock)

    def at(self, t_ms, *rulings):
        """Play up to `t_ms`, then announce `rulings` at that instant."""
        self.player.run_until(round(t_ms * MS))
        for ruling in rulings:
            self.player.announce(ruling)

    def seat(self, i):
        return self.factory.pin(SEAT_PINS[i]).history_us()

    def rgb(self):
        return tuple(self.factory.pin(p).history_us() for p in STATUS_PINS)

    def buzzer(self):
        pin = self.factory.pin(BUZZER_PIN)
        return pin.history_us(), pin.frequencies

    def close(self):
        self.player.close()
        self.signals.close()
        self.factory.close()


@pytest.fixture
def rig():
    r = Rig()
    yield r
    r.close()


def states(start, *pairs):
    """A pin history: OFF at 0, then (ms, value) pairs."""
    return [(0, start)] + [(round(t * MS), v) for t, v in pairs]


def flash(start_ms, end_level, on_first=True):
    """The winner's 4 flashes of 60 ms from `start_ms`, then its base level."""
    out = []
    for k in range(8):
        if k or on_first:
            out.append((start_ms + 60 * k, 1.0 if k % 2 == 0 else 0.0))
    if end_level != 0.0:
        out.append((start_ms + 480, end_level))
    return out


# The pure schedule -------------------------------------------------------------------


def every_pattern(seats=3):
    rulings = [
        laid(0, 1),
        laid(0, None),
        won(1),
        won(1, "counting_out"),
        won(2, "stall"),
        Penalty(0, 2, "wrong_snap"),
        SnapIgnored(0, 1, "late", 5),
        SnapIgnored(0, 1, "dead_heat"),
        SnapIgnored(0, 1, "penalised"),
        PenaltiesLifted(0),
        GameWon(0, 1),
    ]
    return [(r, *pattern(r, seats)) for r in rulings]


@pytest.mark.parametrize(("ruling", "prio", "cues"), every_pattern())
def test_every_pattern_hands_each_target_back_to_its_base_mode_last(ruling, prio, cues):
    by_target = {}
    for cue in cues:
        by_target.setdefault(cue.target, []).append(cue)
    for target, own in by_target.items():
        last = max(c.at_us for c in own)
        assert [c.value for c in own if c.at_us == last] == [BASE], target
        assert [c for c in own if c.value is BASE] == [own[-1]], target


def test_the_patterns_durations_and_frequencies():
    assert stack_won(1, "snap")[-4:] == [
        Cue(0, "buzzer", 880),
        Cue(60 * MS, "buzzer", 1175),
        Cue(120 * MS, "buzzer", 1568),
        Cue(180 * MS, "buzzer", BASE),
    ]
    assert [c for c in stack_won(1, "stall") if c.target == "buzzer"] == [
        Cue(0, "buzzer", 1319),
        Cue(120 * MS, "buzzer", 988),
        Cue(360 * MS, "buzzer", BASE),
    ]
    assert [c for c in penalty(2) if c.target != "status"] == [
        Cue(0, ("seat", 2), BASE),
        Cue(0, "buzzer", 220),
        Cue(300 * MS, "buzzer", BASE),
    ]
    assert snap_ignored("late") == [Cue(0, "buzzer", 2000), Cue(15 * MS, "buzzer", BASE)]
    assert snap_ignored("dead_heat") == [
        Cue(0, "buzzer", 2000),
        Cue(15 * MS, "buzzer", None),
        Cue(60 * MS, "buzzer", 2000),
        Cue(75 * MS, "buzzer", BASE),
    ]
    assert snap_ignored("penalised") == []
    finale = game_won(1, 4)
    assert [c.at_us for c in finale if c.target == ("seat", 0) and c.value is BASE] == [1200 * MS]
    assert [c.value for c in finale if c.target == "buzzer"] == [1047, 1319, 1568, 2093, BASE]
    assert max(c.at_us for c in finale if c.target == "buzzer") == 900 * MS


def test_the_seat_on_turn_glows_and_a_hold_turns_the_status_amber():
    a = Announcer(3)
    assert a.due(0) == [] and a.next_due() is None  # everything starts off, as the devices do
    a.announce(laid(0, 1), 1 * S)
    assert a.next_due() == 1 * S
    assert a.due(1 * S) == [(("seat", 1), 0.25)]
    a.announce(laid(1, None), 2 * S)
    assert a.due(2 * S) == [(("seat", 1), 0.0), ("status", AMBER)]
    a.announce(Penalty(0, 2, "out_of_turn"), 3 * S)  # a card laid during the hold
    assert a.due(3 * S) == [(("seat", 2), 1.0), ("status", RED), ("buzzer", 220)]
    assert a.due(3 * S + 300 * MS) == [("status", AMBER), ("buzzer", None)]


def test_due_gives_each_change_once_in_time_order_and_next_due_wakes_for_each():
    a = Announcer(2)
    a.announce(won(0), 0)
    seen = []
    while (t := a.next_due()) is not None:
        seen += [(t, target, value) for target, value in a.due(t)]
    assert [x[0] for x in seen] == sorted(x[0] for x in seen)
    assert [(t, v) for t, target, v in seen if target == ("seat", 0)] == [
        (t * MS, v) for t, v in flash(0, 0.25)
    ]
    assert [(t, v) for t, target, v in seen if target == "status"] == [(0, GREEN), (480 * MS, OFF)]
    assert a.due(10 * S) == []


def test_a_late_tick_never_cuts_the_chirp_of_the_win_it_comes_with():
    a = Announcer(3)
    a.announce(won(1), 1 * S)
    a.announce(SnapIgnored(0, 0, "late", 12_400), 1 * S)  # the rival's press that gave the margin
    assert a.due(1 * S)[-1] == ("buzzer", 880)
    assert a.due(1 * S + 180 * MS)[-1] == ("buzzer", None)
    a.announce(SnapIgnored(0, 2, "late", 250_000), 1 * S + 250 * MS)  # after the chirp: it ticks
    assert a.due(1 * S + 250 * MS)[-1] == ("buzzer", 2000)
    assert a.due(1 * S + 265 * MS) == [("buzzer", None)]


def test_nothing_cuts_the_finale():
    a = Announcer(2)
    a.announce(GameWon(0, 0), 0)
    a.due(0)
    a.announce(laid(0, 1), 100 * MS)  # a new game begins while the finale plays
    a.announce(Penalty(0, 1, "wrong_snap"), 100 * MS)
    assert ("buzzer", 220) not in a.due(100 * MS)
    assert a.due(150 * MS)[-1] == ("buzzer", 1319)


def test_a_blink_is_endless_and_next_due_is_its_next_toggle():
    a = Announcer(2)
    a.announce(Penalty(0, 1, "wrong_snap"), 1 * S)
    a.due(1 * S)
    a.due(1 * S + 300 * MS)
    toggles = []
    for _ in range(5):
        t = a.next_due()
        toggles.append((t, a.due(t)))
    assert toggles == [
        (1_500_000, [(("seat", 1), 0.0)]),
        (2_000_000, [(("seat", 1), 1.0)]),
        (2_500_000, [(("seat", 1), 0.0)]),
        (3_000_000, [(("seat", 1), 1.0)]),
        (3_500_000, [(("seat", 1), 0.0)]),
    ]


def test_a_late_wake_gives_only_the_latest_blink_state():
    a = Announcer(2)
    a.announce(Penalty(0, 0, "wrong_snap"), 0)
    assert a.due(0) == [(("seat", 0), 1.0), ("status", RED), ("buzzer", 220)]
    # In time order: the buzz ends at 300 ms; of twenty toggles only the one at 10.5 s is given.
    assert a.due(10_700_000) == [("status", OFF), ("buzzer", None), (("seat", 0), 0.0)]
    assert a.next_due() == 11_000_000


def test_time_never_goes_back():
    a = Announcer(2)
    a.due(5 * S)
    a.announce(laid(0, 1), 1 * S)  # stamped late by a slow caller: taken as now
    assert a.next_due() == 5 * S
    assert a.due(5 * S) == [(("seat", 1), 0.25)]


def test_announcer_needs_a_seat():
    with pytest.raises(ValueError):
        Announcer(0)


ruling_choices = st.one_of(
    st.builds(laid, st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))),
    st.builds(won, st.integers(0, 2), st.sampled_from(["snap", "counting_out", "stall"])),
    st.builds(Penalty, st.just(0), st.integers(0, 2), st.just("wrong_snap")),
    st.builds(
        SnapIgnored, st.just(0), st.integers(0, 2), st.sampled_from(["late", "dead_heat", "penalised"])
    ),
    st.builds(PenaltiesLifted, st.just(0)),
    st.builds(GameWon, st.just(0), st.integers(0, 2)),
)


@given(st.lists(st.tuples(st.integers(0, 1500), ruling_choices), max_size=25), st.integers(0, 3000))
def test_what_shows_does_not_depend_on_how_often_due_is_called(script, tail_ms):
    """Woken at every cue, or only at each announcement: the same values at the end."""
    stepped, sparse = Announcer(3), Announcer(3)
    now = 0
    for gap_ms, ruling in script:
        now += gap_ms * MS
        while (t := stepped.next_due()) is not None and t <= now:
            stepped.due(t)
        sparse.due(now)
        stepped.announce(ruling, now)
        sparse.announce(ruling, now)
    end = now + tail_ms * MS
    while (t := stepped.next_due()) is not None and t <= end:
        stepped.due(t)
    sparse.due(end)
    stepped.due(end)
    targets = [("seat", i) for i in range(3)] + ["status", "buzzer"]
    assert [stepped.shown(t) for t in targets] == [sparse.shown(t) for t in targets]
    assert stepped.next_due() == sparse.next_due()


# On the pins, exact to the microsecond ------------------------------------------------


def test_turn_and_hold_then_a_counting_out_award(rig):
    rig.at(1000, laid(0, 1))
    rig.at(2000, laid(1, 2))
    rig.at(3000, laid(2, None))  # count-out reached 0 with a snap on the stack: hold
    rig.at(6000, won(0, "counting_out"))
    rig.at(7000)
    assert rig.seat(0) == states(0.0, *flash(6000, 0.25))
    assert rig.seat(1) == states(0.0, (1000, 0.25), (2000, 0.0))
    assert rig.seat(2) == states(0.0, (2000, 0.25), (3000, 0.0))
    red, green, blue = rig.rgb()
    assert red == states(0.0, (3000, 1.0), (6000, 0.0))
    assert green == states(0.0, (3000, 0.5), (6000, 1.0), (6480, 0.0))
    assert blue == OFF_STATE
    assert rig.buzzer() == (
        states(0.0, (6000, 0.5), (6360, 0.0)),
        BUILT + [(6_000_000, 1319.0), (6_120_000, 988.0), (6_360_000, None)],
    )


def test_a_snap_win_flashes_the_winner_chirps_and_shows_green(rig):
    rig.at(1000, laid(0, 1))
    rig.at(2000, won(2))
    rig.at(3000)
    assert rig.seat(0) == OFF_STATE
    assert rig.seat(1) == states(0.0, (1000, 0.25), (2000, 0.0))
    assert rig.seat(2) == states(0.0, *flash(2000, 0.25))
    assert rig.rgb() == (OFF_STATE, states(0.0, (2000, 1.0), (2480, 0.0)), OFF_STATE)
    assert rig.buzzer() == (
        states(0.0, (2000, 0.5), (2180, 0.0)),
        BUILT + [(2_000_000, 880.0), (2_060_000, 1175.0), (2_120_000, 1568.0), (2_180_000, None)],
    )


def test_late_presses_tick_but_not_over_the_chirp(rig):
    rig.at(1000, won(1), SnapIgnored(0, 0, "late", 12_400))
    rig.at(1250, SnapIgnored(0, 2, "late", 250_000))
    rig.at(2000)
    assert rig.buzzer() == (
        states(0.0, (1000, 0.5), (1180, 0.0), (1250, 0.5), (1265, 0.0)),
        BUILT
        + [(t * MS, hz) for t, hz in [(1000, 880.0), (1060, 1175.0), (1120, 1568.0), (1180, None)]]
        + [(1_250_000, 2000.0), (1_265_000, None)],
    )


def test_a_dead_heat_double_ticks_and_a_penalised_press_is_silent(rig):
    rig.at(1000, SnapIgnored(0, 0, "dead_heat"), SnapIgnored(0, 2, "dead_heat"))
    rig.at(2000, SnapIgnored(0, 1, "penalised"))
    rig.at(3000)
    assert rig.buzzer() == (
        states(0.0, (1000, 0.5), (1015, 0.0), (1060, 0.5), (1075, 0.0)),
        BUILT + [(1_000_000, 2000.0), (1_015_000, None), (1_060_000, 2000.0), (1_075_000, None)],
    )
    assert [rig.seat(i) for i in range(3)] == [OFF_STATE] * 3
    assert rig.rgb() == (OFF_STATE,) * 3


def test_a_penalty_buzzes_and_blinks_until_another_seat_wins_a_stack(rig):
    rig.at(1000, laid(0, 1))
    rig.at(1300, Penalty(0, 2, "wrong_snap"))
    rig.at(3400, won(0))
    rig.at(6000)
    assert rig.seat(2) == states(
        0.0, (1300, 1.0), (1800, 0.0), (2300, 1.0), (2800, 0.0), (3300, 1.0), (3400, 0.0)
    )
    assert rig.seat(0) == states(0.0, *flash(3400, 0.25))
    assert rig.seat(1) == states(0.0, (1000, 0.25), (3400, 0.0))
    assert rig.rgb() == (
        states(0.0, (1300, 1.0), (1600, 0.0)),
        states(0.0, (3400, 1.0), (3880, 0.0)),
        OFF_STATE,
    )
    assert rig.buzzer() == (
        states(0.0, (1300, 0.5), (1600, 0.0), (3400, 0.5), (3580, 0.0)),
        BUILT
        + [(1_300_000, 220.0), (1_600_000, None)]
        + [(3_400_000, 880.0), (3_460_000, 1175.0), (3_520_000, 1568.0), (3_580_000, None)],
    )
    assert rig.announcer.next_due() is None  # no blink left to wake for


def test_a_penalised_winner_keeps_its_own_blink_in_phase(rig):
    rig.at(1000, Penalty(0, 1, "wrong_snap"))
    rig.at(1650, Penalty(0, 2, "wrong_snap"))
    rig.at(2100, won(1, "counting_out"))  # seat 1's own picture card: it keeps its penalty
    rig.at(4200)
    # On at 2100 already (its blink's on phase): the flash's first on is no change.
    blink = [(1000, 1.0), (1500, 0.0), (2000, 1.0)]
    on_turn = [(3000, 1.0), (3500, 0.25), (4000, 1.0)]  # back in phase: 2580 falls in an off half
    assert rig.seat(1) == states(0.0, *blink, *flash(2100, 0.25, on_first=False), *on_turn)
    assert rig.seat(2) == states(0.0, (1650, 1.0), (2100, 0.0))
    assert rig.buzzer() == (
        states(0.0, (1000, 0.5), (1300, 0.0), (1650, 0.5), (1950, 0.0), (2100, 0.5), (2460, 0.0)),
        BUILT
        + [(t * MS, hz) for t, hz in [(1000, 220.0), (1300, None), (1650, 220.0), (1950, None)]]
        + [(2_100_000, 1319.0), (2_220_000, 988.0), (2_460_000, None)],
    )


def test_penalties_lifted_stops_every_blink(rig):
    rig.at(1000, Penalty(0, 0, "wrong_snap"))
    rig.at(1200, Penalty(0, 1, "wrong_snap"))
    rig.at(1400, Penalty(0, 2, "wrong_snap"), PenaltiesLifted(0))
    rig.at(4000)
    assert rig.seat(0) == states(0.0, (1000, 1.0), (1400, 0.0))
    assert rig.seat(1) == states(0.0, (1200, 1.0), (1400, 0.0))
    assert rig.seat(2) == OFF_STATE  # lifted at the instant it began
    # Each penalty restarts the same buzz: one tone, 300 ms after the last penalty.
    assert rig.buzzer() == (
        states(0.0, (1000, 0.5), (1700, 0.0)),
        BUILT + [(1_000_000, 220.0), (1_700_000, None)],
    )
    assert rig.rgb()[0] == states(0.0, (1000, 1.0), (1700, 0.0))
    assert rig.announcer.next_due() is None


def test_a_new_ruling_during_a_flash_ends_it_cleanly(rig):
    rig.at(1000, laid(0, 1))
    rig.at(2000, won(1))
    rig.at(2090, Penalty(0, 1, "out_of_turn"))  # in the flash's first off phase
    rig.at(3700)
    # The flash stops; the seat shows its base mode: the blink, on first, then its turn level.
    assert rig.seat(1) == states(
        0.0, (1000, 0.25), (2000, 1.0), (2060, 0.0), (2090, 1.0), (2590, 0.25), (3090, 1.0), (3590, 0.25)
    )
    assert rig.rgb() == (
        states(0.0, (2090, 1.0), (2390, 0.0)),
        states(0.0, (2000, 1.0), (2090, 0.0)),
        OFF_STATE,
    )
    assert rig.buzzer() == (
        states(0.0, (2000, 0.5), (2390, 0.0)),
        BUILT + [(2_000_000, 880.0), (2_060_000, 1175.0), (2_090_000, 220.0), (2_390_000, None)],
    )


def test_a_turn_change_during_a_flash_waits_for_its_end(rig):
    rig.at(1000, won(2))
    rig.at(1200, laid(2, 0))  # the winner lays at once: seat 0 is on turn
    rig.at(2000)
    assert rig.seat(0) == states(0.0, (1200, 0.25))
    assert rig.seat(2) == states(0.0, *flash(1000, 0.0))  # ends off, as its base now is: no extra state


def test_a_game_won_plays_a_melody_a_chase_and_a_rainbow(rig):
    rig.at(1000, laid(0, 1))
    rig.at(2000, won(2), GameWon(0, 2))
    rig.at(5000, laid(0, 1))  # the next game
    rig.at(6000)
    # 3 rounds of 100 ms per seat, from the winner clockwise; the winner then stays lit.
    assert rig.seat(2) == states(
        0.0,
        (2000, 1.0),
        (2100, 0.0),
        (2300, 1.0),
        (2400, 0.0),
        (2600, 1.0),
        (2700, 0.0),
        (2900, 1.0),
        (5000, 0.0),
    )
    assert rig.seat(0) == states(
        0.0, (2100, 1.0), (2200, 0.0), (2400, 1.0), (2500, 0.0), (2700, 1.0), (2800, 0.0)
    )
    assert rig.seat(1) == states(
        0.0,
        (1000, 0.25),
        (2000, 0.0),
        (2200, 1.0),
        (2300, 0.0),
        (2500, 1.0),
        (2600, 0.0),
        (2800, 1.0),
        (2900, 0.0),
        (5000, 0.25),
    )
    # red, yellow, green, cyan, blue, magenta, 150 ms each; then green until the next game.
    assert rig.rgb() == (
        states(0.0, (2000, 1.0), (2300, 0.0), (2750, 1.0), (2900, 0.0)),
        states(0.0, (2150, 1.0), (2600, 0.0), (2900, 1.0), (5000, 0.0)),
        states(0.0, (2450, 1.0), (2900, 0.0)),
    )
    assert rig.buzzer() == (
        states(0.0, (2000, 0.5), (2900, 0.0)),
        BUILT
        + [
            (t * MS, hz)
            for t, hz in [(2000, 1047.0), (2150, 1319.0), (2300, 1568.0), (2450, 2093.0), (2900, None)]
        ],
    )


def test_an_active_buzzer_is_on_for_any_tone():
    rig = Rig(tonal=False)
    try:
        rig.at(1000, won(1))
        rig.at(2000, SnapIgnored(0, 0, "dead_heat"))
        rig.at(3000)
        assert rig.buzzer() == (
            states(0.0, (1000, 1.0), (1180, 0.0), (2000, 1.0), (2015, 0.0), (2060, 1.0), (2075, 0.0)),
            [],
        )
    finally:
        rig.close()


def test_without_status_led_or_buzzer_only_the_seats_show():
    rig = Rig(status=False, buzzer=False)
    try:
        rig.at(1000, won(0), GameWon(0, 0))
        rig.at(3000)
        assert rig.seat(0)[-1] == (1_900_000, 1.0)  # the champion's LED, after the chase
        assert rig.signals.status is None and rig.signals.buzzer is None
    finally:
        rig.close()


def test_the_tonal_buzzer_covers_every_tone_and_clamps_the_rest(rig):
    buzzer = rig.signals.buzzer
    assert buzzer.min_tone.frequency < 200 and buzzer.max_tone.frequency > 2500
    rig.signals.apply("buzzer", 50)
    rig.signals.apply("buzzer", 5000)
    frequencies = rig.buzzer()[1][2:]
    assert frequencies == [(0, buzzer.min_tone.frequency), (0, buzzer.max_tone.frequency)]


def test_closing_the_signals_frees_their_pins(rig):
    rig.signals.close()
    again = TableSignals(SEAT_PINS, STATUS_PINS, BUZZER_PIN, pin_factory=rig.factory)
    again.close()


@pytest.mark.parametrize(
    "name", ["design-example", "penalties", "counting-out-hold", "race-and-late-press", "dead-heat"]
)
def test_the_examples_play_and_the_devices_end_as_the_schedule_says(name):
    lines = (EXAMPLES / f"{name}.jsonl").read_text().splitlines()
    rig = Rig()
    try:
        for ruling in adjudicate(lines, name):
            rig.at(max(rig.clock.now_us(), ruling.t) / MS, ruling)
        rig.at(rig.clock.now_us() / MS + 5000)
        for i, led in enumerate(rig.signals.seats):
            assert led.value == rig.announcer.shown(("seat", i))
        assert rig.signals.status.value == rig.announcer.shown("status")
        hz = rig.announcer.shown("buzzer")
        assert (rig.signals.buzzer.tone is None) == (hz is None)
    finally:
        rig.close()


def test_a_bot_game_plays_to_its_finale():
    table = VirtualTable(players=3, seed=4)
    rig = Rig()
    try:
        rulings = [r for play in table.play() for r in play.rulings]
        for ruling in rulings:
            rig.at(max(rig.clock.now_us(), ruling.t) / MS, ruling)
        assert isinstance(rulings[-1], GameWon)
        rig.at(rig.clock.now_us() / MS + 5000)
        winner = rulings[-1].seat
        assert [led.value for led in rig.signals.seats] == [1.0 if i == winner else 0.0 for i in range(3)]
        assert rig.signals.status.value == GREEN
    finally:
        rig.close()


# Live: the player's own daemon thread, on a virtual clock the test moves ------------------


class Gate:
    """Wraps TableSignals.apply: the first call blocks until released, as a stuck device would."""

    def __init__(self, signals):
        self.signals = signals
        self.entered = threading.Event()
        self.release = threading.Event()
        self.melody_done = threading.Event()
        self.applied = []

    def apply(self, target, value):
        self.entered.set()
        assert self.release.wait(30)
        self.signals.apply(target, value)
        self.applied.append((target, value))
        if target == "buzzer" and value is None:
            self.melody_done.set()


def test_announce_never_waits_for_the_player():
    clock = VirtualClock(0)
    factory = VirtualFactory(clock)
    signals = TableSignals(SEAT_PINS, STATUS_PINS, BUZZER_PIN, pin_factory=factory)
    gate = Gate(signals)
    player = SignalPlayer(Announcer(3), gate, clock)  # type: ignore[arg-type]
    player.start()
    try:
        player.announce(GameWon(0, 2))
        assert gate.entered.wait(30)  # the player is now stuck setting a device

        def announce_many():
            for seat, nxt in itertools.islice(itertools.cycle([(0, 1), (1, 2), (2, 0)]), 1000):
                player.announce(laid(seat, nxt))

        caller = threading.Thread(target=announce_many, daemon=True)
        caller.start()
        caller.join(30)
        assert not caller.is_alive()  # 1000 announcements went through while the player was stuck

        gate.release.set()
        clock.advance(10 * S)  # the finale's time passes: the player plays it to its end
        assert gate.melody_done.wait(30)
        assert [v for t, v in gate.applied if t == "buzzer"] == [1047, 1319, 1568, 2093, None]
    finally:
        gate.release.set()
        player.close()
        assert player._thread is None
        signals.close()
        factory.close()


def test_the_live_player_wakes_when_its_clock_reaches_each_cue_and_stops_on_close():
    clock = VirtualClock(0)
    factory = VirtualFactory(clock)
    signals = TableSignals(SEAT_PINS, STATUS_PINS, BUZZER_PIN, pin_factory=factory)
    seat0: queue.SimpleQueue[object] = queue.SimpleQueue()
    done = threading.Event()

    class Watch:
        def apply(self, target, value):
            signals.apply(target, value)
            if target == ("seat", 0):
                seat0.put(value)
            if target == "status" and value == OFF:
                done.set()

    player = SignalPlayer(Announcer(3), Watch(), clock)  # type: ignore[arg-type]
    player.start()
    try:
        player.announce(won(0))
        assert seat0.get(timeout=30) == 1.0  # at once
        # Each step of the flash when the clock gets there, woken by the clock, not by a timeout:
        # a step is awaited before the clock moves on, so each is stamped at its own time.
        for k in range(1, 9):
            clock.advance(60 * MS)
            assert seat0.get(timeout=30) == (0.25 if k == 8 else 1.0 if k % 2 == 0 else 0.0)
        assert done.wait(30)
        assert factory.pin(SEAT_PINS[0]).history_us() == states(0.0, *flash(0, 0.25))
        thread = player._thread
        with pytest.raises(RuntimeError):
            player.run_until(0)
    finally:
        player.close()
        signals.close()
        factory.close()
    assert thread is not None and not thread.is_alive()


def test_a_paused_game_shows_red_on_the_status_led_until_it_goes_on():
    a = Announcer(3)
    a.announce(laid(0, None), 1 * S)  # a hold: amber
    assert a.due(1 * S) == [("status", AMBER)]
    a.pause(True, 2 * S)
    assert a.due(2 * S) == [("status", RED)]
    a.pause(False, 3 * S)
    assert a.due(3 * S) == [("status", AMBER)]


def test_a_question_plays_a_rising_query_tone_and_shows_amber_until_the_card_is_named():
    a = Announcer(3)
    a.announce(laid(0, 1), 1 * S)
    a.due(1 * S)
    a.ask(True, 2 * S)
    assert a.due(2 * S) == [("status", AMBER), ("buzzer", 660)]
    assert a.due(2 * S + 90 * MS) == [("buzzer", None)]
    assert a.due(2 * S + 130 * MS) == [("buzzer", 990)]
    assert a.due(2 * S + 270 * MS) == [("buzzer", None)]
    a.ask(True, 3 * S)  # still asking (a second question): no second tone
    assert a.due(4 * S) == []
    a.pause(True, 5 * S)  # a lost camera outranks the question
    assert a.due(5 * S) == [("status", RED)]
    a.pause(False, 6 * S)
    assert a.due(6 * S) == [("status", AMBER)]
    a.ask(False, 7 * S)
    assert a.due(7 * S) == [("status", OFF)]
