"""The referee's announcer played on the table's lights and buzzer, each cue at its time.

`SignalPlayer` plays a `referee.rules.announcer.Announcer` on any `Signals` (the Pi's
`hardware.signals.TableSignals`, or the demo's and kiosk's mirrors): live, from a daemon
thread that sleeps until the next cue (on a `VirtualClock`, until the clock gets there),
or, in tests, synchronously on a `VirtualClock` with `run_until`.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from hardware.clock import Clock
from referee.rules.announcer import Announcer, Target, Value
from referee.rules.rulings import Ruling

log = logging.getLogger(__name__)


class Signals(Protocol):
    """The table's lights and buzzer: one target set at a time."""

    def apply(self, target: Target, value: Value) -> None: ...


class SignalPlayer:
    """Plays an announcer's cues on the table's signals, on `clock`.

    `announce` is what the table loop calls: it stamps the time, schedules and
    wakes the player, holding the lock only for the scheduling, never while a
    device is set. Live: `start()` runs a daemon thread. Tests: `run_until`.
    """

    def __init__(self, announcer: Announcer, signals: Signals, clock: Clock) -> None:
        self.announcer = announcer
        self.signals = signals
        self.clock = clock
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None

    def announce(self, ruling: Ruling) -> None:
        with self._lock:
            self.announcer.announce(ruling, self.clock.now_us())
        self._wake.set()

    def ask(self, asking: bool) -> None:
        """The referee asks which card was laid, or has been told: shown and sounded at once."""
        with self._lock:
            self.announcer.ask(asking, self.clock.now_us())
        self._wake.set()

    def pause(self, paused: bool) -> None:
        """The game is paused (the camera is lost) or goes on again: shown at once."""
        with self._lock:
            self.announcer.pause(paused, self.clock.now_us())
        self._wake.set()

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the player is already running")
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="signal-player", daemon=True)
        self._thread.start()

    def run_until(self, t_us: int) -> None:
        """Apply every cue due up to `t_us`, each at its own time: a VirtualClock jumps there."""
        if self._thread is not None:
            raise RuntimeError("run_until drives the player only when no thread does")
        while True:
            with self._lock:
                t = self.announcer.next_due()
            if t is None or t > t_us:
                break
            self.clock.sleep_until(t)
            with self._lock:
                changes = self.announcer.due(self.clock.now_us())
            self._apply(changes)
        self.clock.sleep_until(t_us)

    def close(self) -> None:
        """Stop the thread (the devices stay as they are: `TableSignals.close` releases them)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop = True
            self._wake.set()
            thread.join()

    def _run(self) -> None:
        while True:
            # Clear, then look: an announce or a close after this point wakes the wait below.
            self._wake.clear()
            if self._stop:
                return
            with self._lock:
                changes = self.announcer.due(self.clock.now_us())
                t = self.announcer.next_due()
            self._apply(changes)
            self.clock.wait(self._wake, t)  # on a VirtualClock: until the clock gets to t

    def _apply(self, changes: list[tuple[Target, Value]]) -> None:
        for target, value in changes:
            try:
                self.signals.apply(target, value)
            except Exception:
                log.exception("could not set %r to %r", target, value)  # keep playing the other targets


class MirroredSignals:
    """The table's lights and buzzer, each change also shown on a mirror: the kiosk page's hub,
    or the demo's bar of lights (`mirror.signal(target, value)`)."""

    def __init__(self, signals: Any, mirror: Any) -> None:
        self.signals = signals
        self.hub = mirror

    def apply(self, target: Target, value: Value) -> None:
        self.signals.apply(target, value)
        self.hub.signal(target, value)

    def dark(self) -> list[tuple[Target, Value]]:
        return self.signals.dark()

    def off(self) -> None:
        """Every light and the buzzer off, the mirror's copy too."""
        for target, value in self.dark():
            self.apply(target, value)

    def close(self) -> None:
        self.signals.close()
