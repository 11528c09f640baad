"""Snap buttons on gpiozero's MockFactory and a virtual clock, exact to the microsecond."""

import gc

from hardware.buttons import SnapButtons
from hardware.clock import VirtualClock
from hardware.pins import VirtualFactory
from hardware.presses import ButtonTrouble, Debouncer, Edge, Press

T = 10_000_000  # a moment well into a game, in us


def presses(debouncer, *edges):
    out = []
    for seat, t, pressed in edges:
        out += debouncer.feed(Edge(seat, t, pressed))
    return out


def test_each_edge_is_stamped_with_the_pins_own_time_to_the_microsecond():
    factory = VirtualFactory(VirtualClock(T + 40_000))  # the callback runs 40 ms after the edge
    got = []
    buttons = SnapButtons([17, 27], got.append, pin_factory=factory)
    buttons.buttons[1].pin.edge(False, T + 3)  # pulled up: pressing pulls the pin low
    buttons.buttons[1].pin.edge(True, T + 80_000)
    assert got == [Edge(1, T + 3, True), Edge(1, T + 80_000, False)]


def test_the_callback_is_kept_alive_although_gpiozero_holds_it_weakly():
    factory = VirtualFactory(VirtualClock(T))
    got = []
    buttons = SnapButtons([17], lambda edge: got.append(edge), pin_factory=factory)
    gc.collect()
    buttons.buttons[0].pin.edge(False, T)
    assert got == [Edge(0, T, True)]


def test_the_first_edge_is_the_press_at_its_own_time():
    assert presses(Debouncer(2), (0, T, True)) == [Press(0, T)]


def test_contact_bounce_adds_no_press_and_does_not_move_the_leading_edge():
    bounce = [(0, T + dt, dt % 2 == 0) for dt in (1, 2, 700, 1_500, 4_999, 19_999)]
    assert presses(Debouncer(2), (0, T, True), *bounce) == [Press(0, T)]


def test_release_bounce_is_no_press_and_the_next_real_press_counts():
    debouncer = Debouncer(2)
    events = [(0, T, True), (0, T + 90_000, False), (0, T + 90_004, True), (0, T + 90_009, False)]
    assert presses(debouncer, *events) == [Press(0, T)]
    assert presses(debouncer, (0, T + 110_009, True)) == [Press(0, T + 110_009)]


def test_a_tap_shorter_than_the_lockout_still_lets_the_next_press_count():
    debouncer = Debouncer(2)
    assert presses(debouncer, (0, T, True), (0, T + 8_000, False), (0, T + 150_000, True)) == [
        Press(0, T),
        Press(0, T + 150_000),
    ]


def test_the_lockout_is_configurable():
    edges = [(0, T, True), (0, T + 10_000, False), (0, T + 16_000, True)]
    assert presses(Debouncer(1, lockout_us=20_000), *edges) == [Press(0, T)]
    assert presses(Debouncer(1, lockout_us=5_000), *edges) == [Press(0, T), Press(0, T + 16_000)]


def test_each_button_is_debounced_on_its_own():
    got = presses(Debouncer(3), (2, T, True), (1, T + 3, True), (2, T + 5, False), (1, T + 6, False))
    assert got == [Press(2, T), Press(1, T + 3)]


def test_a_button_held_past_the_limit_is_stuck_ignored_and_announced_until_released():
    debouncer = Debouncer(2, stuck_us=5_000_000)
    assert presses(debouncer, (1, T, True)) == [Press(1, T)]
    assert debouncer.next_check() == T + 5_000_000
    assert debouncer.check(T + 4_999_999) == []
    assert debouncer.check(T + 5_000_000) == [ButtonTrouble(1, T + 5_000_000, "stuck")]
    assert debouncer.check(T + 6_000_000) == []  # announced once
    # While stuck its edges are ignored; the release brings it back.
    assert presses(debouncer, (1, T + 6_000_000, False), (1, T + 6_000_001, True)) == [
        ButtonTrouble(1, T + 6_000_000, "recovered")
    ]
    assert presses(debouncer, (1, T + 6_100_000, False), (1, T + 6_200_000, True)) == [
        Press(1, T + 6_200_000)
    ]


def test_a_chattering_button_is_ignored_and_announced_until_it_falls_quiet():
    debouncer = Debouncer(1, chatter_presses=10, chatter_window_us=1_000_000, quiet_us=2_000_000)
    edges = []
    for i in range(11):
        t = T + i * 50_000
        edges += [(0, t, True), (0, t + 25_000, False)]
    got = presses(debouncer, *edges)
    assert got == [Press(0, T + i * 50_000) for i in range(10)] + [
        ButtonTrouble(0, T + 500_000, "chattering")
    ]
    assert presses(debouncer, (0, T + 2_000_000, True), (0, T + 2_030_000, False)) == []
    assert debouncer.check(T + 4_029_999) == []
    assert debouncer.check(T + 4_030_000) == [ButtonTrouble(0, T + 4_030_000, "recovered")]
    assert presses(debouncer, (0, T + 4_100_000, True)) == [Press(0, T + 4_100_000)]
