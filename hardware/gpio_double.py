"""A double of the kernel's GPIO character devices, for tests and the simulated table.

`DoubleGpio` is the machine's /dev/gpiochipN as `GpioButtons` sees them (`GpioSystem`): the
chips with their labels, a line request, who holds a line. `DoubleRequest` has the surface
the reader uses of gpiod's `LineRequest` (fileno, wait_edge_events, read_edge_events,
release) and behaves as the kernel does:

- an edge is stamped `t` (monotonic us, as the kernel stamps it in the interrupt) and
  queued when the test says so (`edge`, `press`, `release`): the test scripts both the stamp
  and the moment the edge reaches the queue, so the moments the queue is empty are its own;
- `wait_edge_events(0)` says whether an edge is queued; `read_edge_events` gives up to 64
  (libgpiod's buffer), in order, each with its line's sequence number;
- the queue holds `event_buffer_size` edges; when it is full the oldest is dropped and the
  line's sequence number still counts it, as the kernel does (the reader sees the gap);
- a line already requested (by the referee, or by another program: `claim`, as gpiozero's
  lgpio does for an LED) cannot be requested again: EBUSY; a chip that is not there: ENOENT;
  `refuse` makes every request fail with that errno (EACCES: not in the gpio group);
- `fail(errno)`: the chip goes away under the reader: reading raises OSError.

Its file descriptor is a real pipe that is readable while edges are queued, so `select`
works on it as on a request's fd. A `pin(offset)` has the `edge(high, t)` of gpiozero's
mock pins (hardware/pins.py), so the demo's delivery loop drives either the same way.
"""

from __future__ import annotations

import enum
import errno
import os
from collections.abc import Sequence
from typing import NamedTuple

from .board import Chip
from .gpio_buttons import EVENT_BUFFER, LineConfig

# The Pi 5's SoC's own GPIO chips, listed beside the header's (since kernel 6.6.45).
PI5_OTHER_CHIPS = (Chip(10, "gpio-brcmstb@107d508500", 32), Chip(11, "gpio-brcmstb@107d517c00", 15))
READ_MAX = 64  # libgpiod's default edge-event buffer: one read gives at most this many


class EdgeType(enum.Enum):
    """gpiod's EdgeEvent.Type, by name and value."""

    RISING_EDGE = 1
    FALLING_EDGE = 2


class DoubleEdgeEvent(NamedTuple):
    """gpiod's EdgeEvent, as far as the reader looks at it."""

    event_type: EdgeType
    timestamp_ns: int
    line_offset: int
    global_seqno: int
    line_seqno: int


class DoubleRequest:
    """One line request: its queue of edges and its fd."""

    def __init__(self, gpio: DoubleGpio, chip: int, offsets: Sequence[int], config: LineConfig) -> None:
        self.gpio = gpio
        self.chip = chip
        self.offsets = tuple(offsets)
        self.config = config
        self.released = False
        self.failed: int | None = None  # an errno: the chip went away
        self._queue: list[DoubleEdgeEvent] = []
        self._seqno = 0
        self._line_seqno = dict.fromkeys(self.offsets, 0)
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)
        os.set_blocking(self._w, False)

    # The surface the reader uses ---------------------------------------------------------------

    def fileno(self) -> int:
        if self.released:
            raise ValueError("the request is released")
        return self._r

    def wait_edge_events(self, timeout: float | None = None) -> bool:
        self._check()
        if self.failed is not None:
            return True  # poll says POLLERR: the read then fails
        return bool(self._queue)  # a real one would block up to `timeout`: the test drives time

    def read_edge_events(self, max_events: int | None = None) -> list[DoubleEdgeEvent]:
        self._check()
        if self.failed is not None:
            raise OSError(self.failed, os.strerror(self.failed))
        if not self._queue:
            raise AssertionError("read with no edge queued: the real one blocks here")
        n = min(max_events or READ_MAX, READ_MAX)
        batch, self._queue = self._queue[:n], self._queue[n:]
        if not self._queue:
            self._drain_pipe()
        return batch

    def release(self) -> None:
        if not self.released:
            self.released = True
            os.close(self._r)
            os.close(self._w)
            self.gpio._released(self)

    def _check(self) -> None:
        if self.released:
            raise ValueError("the request is released")

    # The kernel's side ----------------------------------------------------------------------

    def queue(self, offset: int, falling: bool, t_us: int) -> None:
        if self.released or self.failed is not None:
            return
        self._seqno += 1
        self._line_seqno[offset] += 1
        kind = EdgeType.FALLING_EDGE if falling else EdgeType.RISING_EDGE
        self._queue.append(DoubleEdgeEvent(kind, t_us * 1000, offset, self._seqno, self._line_seqno[offset]))
        if len(self._queue) > self.gpio.event_buffer_size:
            del self._queue[0]  # the kernel drops the oldest edge; the sequence numbers show it
        os.write(self._w, b"!")

    def _drain_pipe(self) -> None:
        try:
            while os.read(self._r, 4096):
                pass
        except BlockingIOError:
            pass


class DoublePin:
    """One line, driven as gpiozero's mock pins are: `edge(high, t)` (pulled up: low is pressed)."""

    def __init__(self, gpio: DoubleGpio, offset: int) -> None:
        self.gpio, self.offset = gpio, offset

    def edge(self, high: bool, t_us: int) -> bool:
        return self.gpio.edge(self.offset, not high, t_us)


class DoubleGpio:
    """The machine's GPIO chips: by default a Pi 5's (the header's `pinctrl-rp1` as gpiochip0,
    54 lines, and the SoC's own small chips beside it)."""

    def __init__(
        self,
        label: str = "pinctrl-rp1",
        number: int = 0,
        lines: int = 54,
        others: Sequence[Chip] = (
            Chip(10, "gpio-brcmstb@107d508500", 32),
            Chip(11, "gpio-brcmstb@107d517c00", 15),
        ),
        event_buffer_size: int = EVENT_BUFFER,
    ) -> None:
        self.header = Chip(number, label, lines)
        self.listed: list[Chip] = [self.header, *others]
        self.event_buffer_size = event_buffer_size
        self.held: dict[int, str] = {}  # offset -> consumer, on the header's chip
        self.requests: list[DoubleRequest] = []  # every request made, released or not
        self.refuse: int | None = None  # an errno every request fails with
        self.gone = False  # the header's chip is not there (unbound)

    # GpioSystem ---------------------------------------------------------------------------------

    def chips(self) -> list[Chip]:
        return [c for c in self.listed if not (self.gone and c is self.header)]

    def request(self, chip: int, offsets: Sequence[int], config: LineConfig) -> DoubleRequest:
        if self.refuse is not None:
            raise OSError(self.refuse, os.strerror(self.refuse))
        if chip != self.header.number or self.gone:
            if any(c.number == chip for c in self.listed if c is not self.header):
                raise OSError(errno.EINVAL, "Invalid argument")  # not a chip this double drives
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", f"/dev/gpiochip{chip}")
        if any(not 0 <= o < self.header.lines for o in offsets) or len(set(offsets)) != len(offsets):
            raise OSError(errno.EINVAL, "Invalid argument")
        if any(o in self.held for o in offsets):
            raise OSError(errno.EBUSY, "Device or resource busy")
        request = DoubleRequest(self, chip, offsets, config)
        for o in offsets:
            self.held[o] = "referee-buttons"
        self.requests.append(request)
        return request

    def holder(self, chip: int, offset: int) -> str | None:
        return self.held.get(offset) if chip == self.header.number else None

    # The test's side --------------------------------------------------------------------------

    def claim(self, offset: int, consumer: str = "lg") -> None:
        """Another program holds the line (lgpio's consumer name is "lg")."""
        self.held[offset] = consumer

    def live(self) -> DoubleRequest | None:
        """The request that holds the buttons' lines now."""
        return next((r for r in reversed(self.requests) if not r.released), None)

    def edge(self, offset: int, falling: bool, t_us: int) -> bool:
        """The line changes at `t_us` (the kernel's stamp) and the edge is queued now. False
        if no request watches the line (it is not a button's)."""
        request = next((r for r in self.requests if not r.released and offset in r.offsets), None)
        if request is None:
            return False
        request.queue(offset, falling, t_us)
        return True

    def press(self, offset: int, t_us: int) -> bool:
        return self.edge(offset, True, t_us)

    def release(self, offset: int, t_us: int) -> bool:
        return self.edge(offset, False, t_us)

    def pin(self, offset: int) -> DoublePin:
        return DoublePin(self, offset)

    def fail(self, code: int = errno.ENODEV) -> None:
        """The chip goes away under the reader: its reads fail, new requests find no chip."""
        self.gone = True
        for r in self.requests:
            if not r.released:
                r.failed = code
                os.write(r._w, b"!")

    def back(self) -> None:
        self.gone = False

    def _released(self, request: DoubleRequest) -> None:
        for o in request.offsets:
            if self.held.get(o) == "referee-buttons":
                del self.held[o]


def mock_chips() -> DoubleGpio:
    """The chips `pins = "mock"` gives the service's GPIO buttons (a test swaps this)."""
    return DoubleGpio()
