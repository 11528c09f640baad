"""The referee's voice on the table: seat LEDs, a status LED and a buzzer.

`TableSignals` owns the gpiozero devices and sets one target at a time.
`SignalPlayer` plays a `referee.rules.announcer.Announcer` on them: live, from a
daemon thread that sleeps until the next cue (on a `VirtualClock`, until the
clock gets there), or, in tests, synchronously on a `VirtualClock` with `run_until`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from gpiozero import PWMLED, RGBLED, Buzzer, TonalBuzzer
from gpiozero.tones import Tone

from referee.rules.announcer import Announcer, Target, Value
from referee.rules.rulings import Ruling

from .clock import Clock

log = logging.getLogger(__name__)

# TonalBuzzer plays only from mid_tone - octaves to mid_tone + octaves (default A4 +- 1 octave:
# 220..880 Hz, and it raises outside). E5 +- 2 octaves is 164.8..2637 Hz: every tone we use.
BUZZER_MID_TONE = "E5"
BUZZER_OCTAVES = 2


class TableSignals:
    """The table's output devices: one PWM LED per seat, an optional RGB status LED, a buzzer.

    Pins are BCM numbers. `tonal` picks a passive piezo on a PWM pin (`TonalBuzzer`,
    plays each frequency) or an active buzzer (`Buzzer`, any frequency is simply on).
    `pin_factory` None is gpiozero's default (lgpio on the Pi).
    """

    def __init__(
        self,
        seat_pins: Sequence[int],
        status_pins: tuple[int, int, int] | None = None,
        buzzer_pin: int | None = None,
        *,
        tonal: bool = True,
        pin_factory: Any = None,
    ) -> None:
        self.seats: list[PWMLED] = []
        self.status: RGBLED | None = None
        self.buzzer: TonalBuzzer | Buzzer | None = None
        try:
            for pin in seat_pins:
                self.seats.append(PWMLED(pin, pin_factory=pin_factory))
            if status_pins is not None:
                self.status = RGBLED(*status_pins, pin_factory=pin_factory)
            if buzzer_pin is not None:
                if tonal:
                    self.buzzer = TonalBuzzer(
                        buzzer_pin,
                        mid_tone=Tone(BUZZER_MID_TONE),
                        octaves=BUZZER_OCTAVES,
                        pin_factory=pin_factory,
                    )
                else:
                    self.buzzer = Buzzer(buzzer_pin, pin_factory=pin_factory)
        except Exception:
            self.close()  # release the pins already claimed
            raise

    @classmethod
    def from_wiring(cls, wiring: Any, pin_factory: Any = None) -> TableSignals:
        """The signals a wiring config (referee.live.wiring.Wiring) describes."""
        status, buzzer = wiring.status, wiring.buzzer
        return cls(
            [seat.led for seat in wiring.seats],
            (status.red, status.green, status.blue) if status is not None else None,
            buzzer.pin if buzzer is not None else None,
            tonal=buzzer is None or buzzer.kind == "tonal",
            pin_factory=pin_factory,
        )

    def apply(self, target: Target, value: Value) -> None:
        """Set one target: a seat's brightness, the status colour, or the buzzer's tone."""
        if isinstance(target, tuple):
            self.seats[target[1]].value = value
        elif target == "status":
            if self.status is not None:
                self.status.value = value
        elif target == "buzzer":
            self._buzz(value)  # type: ignore[arg-type]
        else:
            raise ValueError(f"unknown target {target!r}")

    def _buzz(self, hz: float | None) -> None:
        buzzer = self.buzzer
        if buzzer is None:
            return
        if isinstance(buzzer, Buzzer):
            if hz is None:
                buzzer.off()
            else:
                buzzer.on()
        elif hz is None:
            buzzer.stop()
        else:
            # Clamp rather than raise: a cue out of range must not stop the player.
            hz = min(max(hz, buzzer.min_tone.frequency), buzzer.max_tone.frequency)
            buzzer.play(Tone.from_frequency(hz))

    def dark(self) -> list[tuple[Target, Value]]:
        """Every target with its off value: the seats dark, the status LED black, the buzzer quiet."""
        out: list[tuple[Target, Value]] = [(("seat", i), 0.0) for i in range(len(self.seats))]
        if self.status is not None:
            out.append(("status", (0.0, 0.0, 0.0)))
        if self.buzzer is not None:
            out.append(("buzzer", None))
        return out

    def off(self) -> None:
        """Everything off, before the pins are released: gpiozero's close leaves an output as it
        was on some pin libraries, so a light or the buzzer could stay on after the service."""
        for target, value in self.dark():
            try:
                self.apply(target, value)
            except Exception:
                log.exception("could not turn %r off", target)  # the others still go off

    def close(self) -> None:
        for device in [*self.seats, self.status, self.buzzer]:
            if device is not None:
                device.close()
        self.seats, self.status, self.buzzer = [], None, None


class SignalPlayer:
    """Plays an announcer's cues on the table's signals, on `clock`.

    `announce` is what the table loop calls: it stamps the time, schedules and
    wakes the player, holding the lock only for the scheduling, never while a
    device is set. Live: `start()` runs a daemon thread. Tests: `run_until`.
    """

    def __init__(self, announcer: Announcer, signals: TableSignals, clock: Clock) -> None:
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
