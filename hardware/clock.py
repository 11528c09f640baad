"""The one clock: CLOCK_MONOTONIC in integer microseconds, and a virtual double.

lgpio stamps button edges and picamera2 stamps frames on CLOCK_MONOTONIC, so
everything the referee orders by time uses it too: never the wall clock.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now_us(self) -> int: ...

    def sleep_until(self, t_us: int) -> None: ...


class MonotonicClock:
    """The real clock (time.monotonic_ns is CLOCK_MONOTONIC on Linux)."""

    def now_us(self) -> int:
        return time.monotonic_ns() // 1000

    def sleep_until(self, t_us: int) -> None:
        delay = (t_us - self.now_us()) / 1e6
        if delay > 0:
            time.sleep(delay)


class VirtualClock:
    """A clock that moves only when told: exact, instant tests of anything timed."""

    def __init__(self, start_us: int = 0) -> None:
        self._now = start_us

    def now_us(self) -> int:
        return self._now

    def sleep_until(self, t_us: int) -> None:
        self._now = max(self._now, t_us)

    def advance(self, us: int) -> None:
        if us < 0:
            raise ValueError("a clock never goes back")
        self._now += us
