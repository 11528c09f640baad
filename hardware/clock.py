"""The one clock: CLOCK_MONOTONIC in integer microseconds, and a virtual double.

lgpio stamps button edges and picamera2 stamps frames on CLOCK_MONOTONIC, so
everything the referee orders by time uses it too: never the wall clock.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def now_us(self) -> int: ...

    def sleep_until(self, t_us: int) -> None: ...

    def wait(self, event: threading.Event, t_us: int | None) -> None:
        """Until `event` is set or this clock reaches `t_us` (None: until `event` only)."""
        ...


class MonotonicClock:
    """The real clock (time.monotonic_ns is CLOCK_MONOTONIC on Linux)."""

    def now_us(self) -> int:
        return time.monotonic_ns() // 1000

    def sleep_until(self, t_us: int) -> None:
        delay = (t_us - self.now_us()) / 1e6
        if delay > 0:
            time.sleep(delay)

    def wait(self, event: threading.Event, t_us: int | None) -> None:
        event.wait(None if t_us is None else max(0.0, (t_us - self.now_us()) / 1e6))


class VirtualClock:
    """A clock that moves only when told: exact, instant tests of anything timed.

    `sleep_until` jumps the clock (the sleeper is the one driving time); `wait` never moves
    it: a thread waiting for a time is woken when another thread's sleep or `advance` gets
    the clock there, so a live thread (the signal player) runs on virtual time too.
    """

    def __init__(self, start_us: int = 0) -> None:
        self._now = start_us
        self._lock = threading.Lock()
        self._waiting: list[tuple[int, threading.Event]] = []

    def now_us(self) -> int:
        return self._now

    def sleep_until(self, t_us: int) -> None:
        self._move(max(self._now, t_us))

    def advance(self, us: int) -> None:
        if us < 0:
            raise ValueError("a clock never goes back")
        self._move(self._now + us)

    def wait(self, event: threading.Event, t_us: int | None) -> None:
        entry = None
        with self._lock:
            if t_us is not None:
                if self._now >= t_us:
                    return
                entry = (t_us, event)
                self._waiting.append(entry)
        event.wait()
        if entry is not None:
            with self._lock:
                if entry in self._waiting:
                    self._waiting.remove(entry)

    def _move(self, t_us: int) -> None:
        with self._lock:
            self._now = t_us
            if not self._waiting:
                return
            due = [e for e in self._waiting if e[0] <= t_us]
            self._waiting = [e for e in self._waiting if e[0] > t_us]
        for _, event in due:
            event.set()  # the waiter's own event: it wakes and looks again, as on any wake
