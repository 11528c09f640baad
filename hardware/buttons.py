"""Snap buttons: one arcade button per seat, timed by the edge's own timestamp.

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

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpiozero import DigitalInputDevice

from .pins import ticks_to_us


class Edge(NamedTuple):
    """A button's contact changed at `t` (us, the edge's own timestamp)."""

    seat: int
    t: int
    pressed: bool


class Press(NamedTuple):
    """A debounced press: a snap by `seat` at `t`."""

    seat: int
    t: int


class ButtonTrouble(NamedTuple):
    """A button that misbehaves: `stuck`, `chattering`, or `recovered`."""

    seat: int
    t: int
    kind: str


@dataclass
class _Contact:
    pressed: bool = False  # the raw level, bounce included
    since: int = 0  # when the raw level last changed
    quiet_until: int = -1  # edges before this are bounce
    stuck: bool = False
    chattering: bool = False
    last_edge: int = 0
    presses: deque[int] = field(default_factory=deque)  # recent press times, for chatter


@dataclass
class Debouncer:
    """Turns raw edges into presses. Owned by one thread (the table loop's)."""

    seats: int
    lockout_us: int = 20_000  # edges of one button within this after a counted edge are bounce
    stuck_us: int = 5_000_000  # held down longer than this: stuck
    chatter_presses: int = 10  # more presses than this within `chatter_window_us`: chattering
    chatter_window_us: int = 1_000_000
    quiet_us: int = 2_000_000  # a chattering button recovers after this long without an edge
    _contacts: list[_Contact] = field(init=False)

    def __post_init__(self) -> None:
        self._contacts = [_Contact() for _ in range(self.seats)]

    def feed(self, edge: Edge) -> list[Press | ButtonTrouble]:
        """What one edge means. Edges of one button must come in their own order."""
        c = self._contacts[edge.seat]
        seat, t, pressed = edge
        c.pressed, c.since = pressed, t
        out: list[Press | ButtonTrouble] = []
        if c.stuck:
            if not pressed:  # released at last: back in play after the release's own bounce
                c.stuck = False
                c.quiet_until = t + self.lockout_us
                out.append(ButtonTrouble(seat, t, "recovered"))
            return out
        if c.chattering:
            if t - c.last_edge < self.quiet_us:
                c.last_edge = t
                return out
            c.chattering = False
            c.presses.clear()
            out.append(ButtonTrouble(seat, t, "recovered"))
        c.last_edge = t
        if t < c.quiet_until:
            return out  # contact bounce
        c.quiet_until = t + self.lockout_us
        if pressed:
            window = c.presses
            window.append(t)
            while window and window[0] <= t - self.chatter_window_us:
                window.popleft()
            if len(window) > self.chatter_presses:
                c.chattering = True
                out.append(ButtonTrouble(seat, t, "chattering"))
            else:
                out.append(Press(seat, t))
        return out

    def check(self, now: int) -> list[ButtonTrouble]:
        """Buttons found stuck (or recovered from chatter) by time `now`, with no edge to tell."""
        out = []
        for seat, c in enumerate(self._contacts):
            if c.pressed and not c.stuck and now - c.since >= self.stuck_us:
                c.stuck = True
                out.append(ButtonTrouble(seat, c.since + self.stuck_us, "stuck"))
            elif c.chattering and now - c.last_edge >= self.quiet_us:
                c.chattering = False
                c.presses.clear()
                out.append(ButtonTrouble(seat, c.last_edge + self.quiet_us, "recovered"))
        return out

    def next_check(self) -> int | None:
        """When `check` could next find something, or None if nothing is pending."""
        times = [c.since + self.stuck_us for c in self._contacts if c.pressed and not c.stuck]
        times += [c.last_edge + self.quiet_us for c in self._contacts if c.chattering]
        return min(times, default=None)


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
