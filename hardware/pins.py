"""The pin-factory seam: real pins on the Pi, gpiozero's MockFactory everywhere else.

`VirtualFactory` is gpiozero's own MockFactory with one change: time comes from
our clock (`hardware.clock`), not from `time.monotonic`. Tests then drive edges
at exact microseconds and read back every state a pin went through, and
`edge()` plays what lgpio does on the Pi: the kernel stamps the edge, and the
callback runs later, with that stamp.
"""

from __future__ import annotations

from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin, PinState

from .board import Board
from .clock import Clock

# A revision code per board family, for a MockFactory that plays that board (gpiozero's own
# tables: its header, its model). "older": a Pi 3 B+.
MOCK_REVISIONS = {"pi5": "d04170", "pi4": "c03114", "older": "a020d3"}


def ticks_to_us(ticks: float) -> int:
    """A pin factory's ticks (float seconds of CLOCK_MONOTONIC on lgpio) as integer us."""
    return round(ticks * 1_000_000)


class _VirtualTime:
    """Stamps every pin change with the factory's clock instead of time.monotonic."""

    _factory: VirtualFactory
    _state: object
    _last_change: float
    _edges: str
    _when_changed: object
    states: list[PinState]

    def _stamp(self, value: object, stamp: float) -> bool:
        if self._state == value:
            return False
        self._state = value
        self.states.append(PinState(stamp - self._last_change, value))
        self._last_change = stamp
        return True

    def _change_state(self, value: object) -> bool:
        return self._stamp(value, self._factory.clock.now_us() / 1_000_000)

    def clear_states(self) -> None:
        self._last_change = self._factory.clock.now_us() / 1_000_000
        self.states = [PinState(0.0, self._state)]

    def edge(self, high: bool, t_us: int) -> bool:
        """The input goes `high` or low at `t_us` (the kernel's stamp); callbacks run now."""
        if not self._stamp(high, t_us / 1_000_000):
            return False
        if self._when_changed is not None and self._edges in ("both", "rising" if high else "falling"):
            self._call_when_changed()  # type: ignore[attr-defined]
        return True

    def history_us(self) -> list[tuple[int, object]]:
        """Every state the pin went through, with the absolute time (us) it began."""
        out = []
        t = self._last_change - sum(s.timestamp for s in self.states[1:])
        for i, state in enumerate(self.states):
            if i:
                t += state.timestamp
            out.append((round(t * 1_000_000), state.state))
        return out


class VirtualPin(_VirtualTime, MockPin):
    """A mock input or output pin on virtual time."""


class VirtualPWMPin(_VirtualTime, MockPWMPin):
    """A mock PWM pin on virtual time that also records each frequency it is set to."""

    def __init__(self, factory: VirtualFactory, info: object) -> None:
        self.frequencies: list[tuple[int, float | None]] = []
        super().__init__(factory, info)

    def _set_frequency(self, value: float | None) -> None:
        self.frequencies.append((self._factory.clock.now_us(), value))
        super()._set_frequency(value)


class VirtualFactory(MockFactory):
    """gpiozero's MockFactory on our clock: every pin can PWM, as lgpio's can in software."""

    def __init__(self, clock: Clock, pwm: bool = True, board: Board | None = None) -> None:
        revision = MOCK_REVISIONS.get(board.family) if board is not None else None
        super().__init__(revision=revision, pin_class=VirtualPWMPin if pwm else VirtualPin)
        self.clock = clock

    def ticks(self) -> float:  # type: ignore[override]
        return self.clock.now_us() / 1_000_000
