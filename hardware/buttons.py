"""Snap buttons on gpiozero: one arcade button per seat, timed by the edge's own timestamp.

Who pressed first is decided by the kernel's stamp of each edge (lgpio gives it
to the pin's `when_changed` as CLOCK_MONOTONIC seconds), never by the order in
which Python ran the callbacks. The gpiozero callback only turns the edge into
an `Edge` and hands it on; `Debouncer` (plain state, no threads) decides what is
a press, what is contact bounce, and which button is stuck or chattering.

lgpio's own `bounce_time` is not used: it delays the report and shifts the
stamp. Debouncing here is on the leading edge: the first edge is the press, at
its exact time, and further edges within the lockout are bounce.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gpiozero import DigitalInputDevice

from .pins import ticks_to_us
from .presses import Edge


class SnapButton(DigitalInputDevice):
    """A button to ground on a pulled-up pin that reports every edge with its own stamp.

    A DigitalInputDevice rather than a gpiozero Button: Button's hold-detection
    thread is of no use to a referee, and it costs a thread per seat.
    """

    def __init__(self, pin: int, seat: int, sink: Callable[[Edge], Any], **kwargs: Any) -> None:
        self._seat = seat
        self._sink = sink  # a strong reference: gpiozero holds pin callbacks weakly
        super().__init__(pin, pull_up=True, bounce_time=None, **kwargs)

    def _pin_changed(self, ticks: float, state: Any) -> None:
        # Runs in the pin library's callback thread: stamp, hand on, return.
        self._sink(Edge(self._seat, ticks_to_us(ticks), bool(self._state_to_value(state))))
        super()._pin_changed(ticks, state)


class SnapButtons:
    """One SnapButton per seat; every edge goes to `sink` (e.g. the table loop's inbox). A seat
    whose pin is None has no GPIO button (its button is a USB key: usb_buttons.py)."""

    def __init__(
        self, pins: Sequence[int | None], sink: Callable[[Edge], Any], pin_factory: Any = None
    ) -> None:
        self.buttons = [
            SnapButton(pin, seat, sink, pin_factory=pin_factory)
            for seat, pin in enumerate(pins)
            if pin is not None
        ]

    def close(self) -> None:
        for button in self.buttons:
            button.close()
