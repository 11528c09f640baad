"""The clocks' waits: what a live thread (the signal player) sleeps on between cues."""

from __future__ import annotations

import threading

import pytest

from hardware.clock import MonotonicClock, VirtualClock
from referee.live.assembly import GameClock


def test_a_virtual_wait_returns_at_once_when_its_time_has_come_or_its_event_is_set():
    clock = VirtualClock(1_000)
    event = threading.Event()
    clock.wait(event, 1_000)  # the time is now
    clock.wait(event, 500)  # long past
    event.set()
    clock.wait(event, 2_000)  # woken already
    clock.wait(event, None)
    assert clock.now_us() == 1_000  # a wait never moves the clock


def test_a_virtual_wait_is_woken_by_the_clock_reaching_its_time_not_before():
    clock = VirtualClock(0)
    event = threading.Event()
    woke_at: list[int] = []

    def waiter() -> None:
        clock.wait(event, 1_000)
        woke_at.append(clock.now_us())

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    clock.advance(999)
    assert not event.is_set()  # one microsecond short: the waiter sleeps on
    clock.sleep_until(1_000)  # another thread's sleep moves the clock there: the waiter wakes
    thread.join(30)
    assert not thread.is_alive() and woke_at == [1_000]


def test_a_virtual_wait_without_a_time_waits_for_its_event_only():
    clock = VirtualClock(0)
    event = threading.Event()
    thread = threading.Thread(target=clock.wait, args=(event, None), daemon=True)
    thread.start()
    clock.advance(10**12)
    assert not event.is_set()
    event.set()
    thread.join(30)
    assert not thread.is_alive()


def test_a_virtual_clock_never_goes_back():
    clock = VirtualClock(5)
    clock.sleep_until(3)
    assert clock.now_us() == 5
    with pytest.raises(ValueError, match="never goes back"):
        clock.advance(-1)


def test_a_real_wait_returns_at_its_time_or_when_set():
    clock = MonotonicClock()
    event = threading.Event()
    clock.wait(event, clock.now_us() + 1_000)  # a millisecond on the real clock
    clock.wait(event, 0)  # long past
    event.set()
    clock.wait(event, None)  # set: at once, no deadline needed


def test_a_game_clock_waits_on_its_base_clock_shifted():
    base = VirtualClock(100)
    clock = GameClock(base, 1_000_000)
    event = threading.Event()
    thread = threading.Thread(target=clock.wait, args=(event, 1_000_200), daemon=True)
    thread.start()
    base.advance(99)
    assert not event.is_set()
    base.advance(1)  # base 200 is game time 1_000_200
    thread.join(30)
    assert not thread.is_alive()
