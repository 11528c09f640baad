"""A button's edges and what they mean: plain values and plain state, no device.

Every button driver (gpiozero's callbacks, the kernel's line events, a USB encoder) turns
its input into an `Edge` stamped with the edge's own time; `Debouncer` decides what is a
press, what is contact bounce, and which button is stuck or chattering. The table loop,
the kiosk and hw-test see only these values, so they import no device library.

Debouncing is on the leading edge: the first edge is the press, at its exact time, and
further edges within the lockout are bounce.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

# A button's trouble in the words the table and hw-test say it.
TROUBLE_WORDS = {
    "stuck": "button stuck (held down too long): ignored until released",
    "chattering": "button chattering: ignored until it falls quiet",
    "recovered": "button back in order",
    "unplugged": "button's USB device unplugged: presses paused until it is back",
}


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
