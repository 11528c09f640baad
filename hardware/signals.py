"""The referee's voice on the table: seat LEDs, a status LED and a buzzer.

`TableSignals` owns the gpiozero devices and sets one target at a time: a seat's LED
(`("seat", i)`, a level 0..1), the status LED (`"status"`, an RGB triple) or the buzzer
(`"buzzer"`, a frequency in Hz, or None for silence). What to show when is the referee's
(`referee/live/signal_player.py` plays its announcer's cues here).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from gpiozero import PWMLED, RGBLED, Buzzer, TonalBuzzer
from gpiozero.tones import Tone

log = logging.getLogger(__name__)

# A device and what it shows (referee/rules/announcer.py's cues): ("seat", i) or "status" or
# "buzzer"; a level, an RGB triple, or a tone in Hz (None: silent).
Target = tuple[str, int] | str
Value = float | tuple[float, float, float] | None

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
