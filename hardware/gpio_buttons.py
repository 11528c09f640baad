"""Snap buttons on GPIO pins, read through the kernel's GPIO character device.

Each seat's button (a pulled-up pin, pressed to ground) is a line of the chip wired to the
40-pin header, requested through the v2 line-event uAPI with libgpiod's Python bindings
(`gpiod`): both edges, the pull-up on, every edge stamped by the kernel on CLOCK_MONOTONIC
(`timestamp_ns`) and queued on the request's file descriptor. Each edge becomes the same
`Edge(seat, t, pressed)` as before, so the debouncer and the table loop are unchanged.

Why not gpiozero's callbacks (`SnapButtons`, still the fallback: `buttons = "gpiozero"`):
they hand over each edge with its stamp, but nothing says when no edge is still on its way,
so the table loop had to wait out the buttons' declared 60 ms before judging any press. Here
the reader drains the queue itself, and `poll()` says when it is empty:

- **Progress.** When a read finds the queue empty, every edge stamped more than
  `QUEUE_SLACK_US` before the read began has been read: the kernel stamps an edge in the
  interrupt and queues it from the interrupt's thread a few microseconds later (a real-time
  kernel thread, so the 2 ms slack holds on a loaded machine). So after each sweep the
  reader reports "nothing more stamped before t" to the table loop, as the USB reader does.
- **Resolution.** The kernel's stamp of the edge, to the microsecond (`timestamp_ns // 1000`):
  rules.md's dead heats are unchanged for GPIO seats (resolution 0).
- **Debounce.** The existing software debouncer (`Debouncer`, on the leading edge), not
  the kernel's `debounce_period_us`: the kernel's debounce reports an edge only once the
  line has been still for the period, stamped then (from a work queue, to the scheduler's
  tick), so the stamp would be the period late and coarse. No debounce is asked for.

The line request holds only the buttons' lines; the LEDs and the buzzer stay on gpiozero
(lgpio requests its own lines on the same chip), so the two never claim the same line as
long as the wiring gives each part its own pin (referee/live/wiring.py checks that). A line
another program holds, a chip that is not there or not ours to open: a `GpioError`, one
line naming it. A read that fails mid-game is said in one line, the buttons' presses are
paused, and the lines are asked for again every `RETRY_US` (as a USB device unplugged).
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from .board import HEADER_CHIP_LABELS, Chip, header_chip, read_chips
from .clock import Clock, MonotonicClock
from .presses import Edge
from .sweeper import TICK_US as TICK_US  # the readers' tick, where it always was
from .sweeper import Sweeper

QUEUE_SLACK_US = 2_000  # an edge reaches the request's queue within this of its stamp
RETRY_US = 1_000_000  # lines that failed are asked for again this often
EVENT_BUFFER = 256  # the kernel's queue for the request (its default: 16 per line)
CONSUMER = "referee-buttons"  # what `gpioinfo` shows as the lines' user


class GpioError(RuntimeError):
    """GPIO buttons that cannot be used; str() is the one line the user sees."""


@dataclass(frozen=True)
class LineConfig:
    """How the buttons' lines are requested: inputs with the pull-up, both edges stamped on
    CLOCK_MONOTONIC, no kernel debounce (see above)."""

    pull_up: bool = True
    both_edges: bool = True
    monotonic: bool = True
    debounce_us: int = 0


class EdgeEventLike(Protocol):
    """What the reader uses of gpiod's `EdgeEvent`."""

    event_type: Any  # an enum whose name is RISING_EDGE or FALLING_EDGE
    timestamp_ns: int
    line_offset: int
    line_seqno: int


class LineRequestLike(Protocol):
    """What the reader uses of gpiod's `LineRequest` (the double in gpio_double.py has exactly
    this surface)."""

    def fileno(self) -> int: ...

    def wait_edge_events(self, timeout: float | None = None) -> bool:
        """True if an edge is queued (poll on the fd); timeout 0: at once."""
        ...

    def read_edge_events(self, max_events: int | None = None) -> list[EdgeEventLike]:
        """The edges queued (blocks if there are none: ask `wait_edge_events(0)` first)."""
        ...

    def release(self) -> None: ...


class GpioSystem(Protocol):
    """The machine's GPIO chips: listed, a request of lines, who holds a line."""

    def chips(self) -> list[Chip]: ...

    def request(self, chip: int, offsets: Sequence[int], config: LineConfig) -> LineRequestLike:
        """The lines, requested as `config` says; OSError as the kernel refuses (EBUSY...)."""
        ...

    def holder(self, chip: int, offset: int) -> str | None:
        """Who holds the line (its consumer), None if nobody does or it cannot be told."""
        ...


class GpiodSystem:
    """The real one, through libgpiod v2's Python bindings (`gpiod` from PyPI, or Debian
    trixie's python3-libgpiod). Bookworm's python3-libgpiod is v1, another API: told apart."""

    def chips(self) -> list[Chip]:
        return read_chips()

    def request(self, chip: int, offsets: Sequence[int], config: LineConfig) -> LineRequestLike:
        gpiod = _gpiod()
        return gpiod.request_lines(  # type: ignore[no-any-return]
            f"/dev/gpiochip{chip}",
            config={tuple(offsets): line_settings(config, gpiod)},
            consumer=CONSUMER,
            event_buffer_size=EVENT_BUFFER,
        )

    def holder(self, chip: int, offset: int) -> str | None:
        gpiod = _gpiod()
        try:
            with gpiod.Chip(f"/dev/gpiochip{chip}") as c:
                info = c.get_line_info(offset)
        except (OSError, ValueError):
            return None
        return (info.consumer or "another program") if info.used else None


def _gpiod() -> Any:
    try:
        import gpiod  # libgpiod's bindings: absent off Linux, and a v1 is told apart below
    except ImportError:
        raise GpioError(
            'gpio: the gpiod module (libgpiod v2) is not installed: `pip install "gpiod>=2.1"` '
            'in the referee\'s venv, or set buttons = "gpiozero" under [hardware]'
        ) from None
    if not hasattr(gpiod, "request_lines"):
        raise GpioError(
            f"gpio: the gpiod module found ({getattr(gpiod, '__file__', '?')}) is libgpiod v1 "
            "(Debian bookworm's python3-libgpiod): `pip install \"gpiod>=2.1\"` in the referee's venv"
        )
    return gpiod


def line_settings(config: LineConfig, gpiod: Any) -> Any:
    """gpiod's `LineSettings` for `config`."""
    line = gpiod.line
    return gpiod.LineSettings(
        direction=line.Direction.INPUT,
        edge_detection=line.Edge.BOTH if config.both_edges else line.Edge.FALLING,
        bias=line.Bias.PULL_UP if config.pull_up else line.Bias.AS_IS,
        debounce_period=timedelta(microseconds=config.debounce_us),
        event_clock=line.Clock.MONOTONIC if config.monotonic else line.Clock.REALTIME,
    )


def default_system() -> GpioSystem:
    """The machine's GPIO chips (a test swaps this for gpio_double's DoubleGpio)."""
    return GpiodSystem()


# Pure: edges from the kernel's events -----------------------------------------------------------


def is_press(event: EdgeEventLike) -> bool:
    """A falling edge is a press: the button pulls its pulled-up line to ground."""
    return bool(event.event_type.name == "FALLING_EDGE")


def stamp_us(event: EdgeEventLike) -> int:
    return event.timestamp_ns // 1000


def line_edges(events: Sequence[EdgeEventLike], seats: dict[int, int]) -> Iterator[Edge]:
    """An Edge for each event of a seat's line, with the kernel's stamp."""
    for event in events:
        seat = seats.get(event.line_offset)
        if seat is not None:
            yield Edge(seat, stamp_us(event), is_press(event))


def lost_edges(events: Sequence[EdgeEventLike], last: dict[int, int]) -> int:
    """How many edges the kernel dropped (its queue overflowed): the gaps in each line's
    sequence numbers, counted from `last` (updated)."""
    lost = 0
    for event in events:
        before = last.get(event.line_offset)
        if before is not None and event.line_seqno > before + 1:
            lost += event.line_seqno - before - 1
        last[event.line_offset] = event.line_seqno
    return lost


def chip_error(chips: Sequence[Chip]) -> str:
    """The one line for a machine where the header's chip is not found, or not ours to open."""
    closed = [c for c in chips if not c.label]
    if closed:
        names = ", ".join(f"/dev/gpiochip{c.number}" for c in closed)
        return (
            f"gpio: cannot open {names} to find the header's chip (no permission: is the user "
            "in the gpio group?)"
        )
    labels = ", ".join(HEADER_CHIP_LABELS)
    found = ", ".join(f"gpiochip{c.number} ({c.label})" for c in chips) or "no /dev/gpiochip* at all"
    return (
        f"gpio: no GPIO chip of the 40-pin header here (looked for {labels}; found {found}): "
        'not a Raspberry Pi? use pins = "mock" under [hardware]'
    )


# The reader -------------------------------------------------------------------------------------


class GpioButtons(Sweeper):
    """The wiring's GPIO buttons (`pins[seat]`, BCM numbers; None: that seat has none), each
    edge handed to `sink` with its kernel stamp, then the progress.

    Opening is strict: a line that cannot be requested is a GpioError naming it. One thread
    reads them (`start`); `sweep` is one turn of it, which tests and the simulated table
    call directly.
    """

    thread_name = "gpio-buttons"

    def __init__(
        self,
        pins: Sequence[int | None],
        sink: Callable[[Edge], Any],
        progress: Callable[[int], Any] | None = None,
        lost: Callable[[bool], Any] | None = None,
        wanted: Callable[[], bool] | None = None,
        clock: Clock | None = None,
        system: GpioSystem | None = None,
        note: Callable[[str], Any] | None = None,
        names: Sequence[str] = (),
    ) -> None:
        self.system = system or GpiodSystem()
        self.clock = clock or MonotonicClock()
        self.sink = sink
        self.progress = progress
        self.lost = lost
        self.wanted = wanted or (lambda: True)
        self.note = note or (lambda text: None)
        self.names = tuple(names)
        self.seats = {pin: seat for seat, pin in enumerate(pins) if pin is not None}
        self._pins = {seat: pin for pin, seat in self.seats.items()}
        self.request: LineRequestLike | None = None
        self._down: set[int] = set()  # lines held down: let go if the lines fail
        self._seqno: dict[int, int] = {}
        self._retry = 0
        super().__init__()
        self.chip: Chip | None = None
        if not self.seats:
            return
        chips = self.system.chips()
        self.chip = header_chip(chips)
        if self.chip is None:
            raise GpioError(chip_error(chips))
        self.request = self._request()

    def _line(self, pin: int) -> str:
        seat = self.seats[pin]
        who = f"{self.names[seat]}'s" if seat < len(self.names) else f"seat {seat}'s"
        return f"BCM {pin} ({who} button)"

    def _request(self) -> LineRequestLike:
        assert self.chip is not None
        chip = self.chip
        where = f"/dev/gpiochip{chip.number} ({chip.label})"
        offsets = sorted(self.seats)
        try:
            request = self.system.request(chip.number, offsets, LineConfig())
            self._seqno = dict.fromkeys(offsets, 0)  # each line's edges are numbered from 1
            return request
        except GpioError:
            raise
        except OSError as e:
            if e.errno == errno.EBUSY:
                held = [(p, self.system.holder(chip.number, p)) for p in offsets]
                pin, who = next(((p, w) for p, w in held if w is not None), (offsets[0], None))
                by = f'held by "{who}"' if who is not None else "held by another program"
                raise GpioError(
                    f"gpio: {self._line(pin)} on {where} is busy, {by}: is another referee "
                    "running, or is the pin also an LED's or the buzzer's in the wiring?"
                ) from None
            if e.errno in (errno.EACCES, errno.EPERM):
                raise GpioError(f"gpio: {where}: permission denied: is the user in the gpio group?") from None
            if e.errno == errno.ENOENT:
                raise GpioError(f"gpio: {where} is not there any more") from None
            if e.errno == errno.EINVAL:
                bad = [p for p in offsets if p >= chip.lines]
                what = self._line(bad[0]) if bad else "the buttons' lines"
                raise GpioError(f"gpio: {what}: {where} has no such line ({chip.lines} lines)") from None
            raise GpioError(f"gpio: the buttons' lines on {where}: {e.strerror or e}") from None

    # One turn -------------------------------------------------------------------------------

    def sweep(self) -> None:
        """Read the queue until it is empty; hand on the edges, then the progress."""
        before = self.clock.now_us()
        delivered = False
        if self.request is not None:
            try:
                events = list(_read_all(self.request))
            except OSError as e:
                self._fail(before, e)
                events = []
            lost = lost_edges(events, self._seqno)
            if lost:
                self.note(f"gpio: the kernel's edge queue overflowed: {lost} edge(s) lost")
            for edge in line_edges(events, self.seats):
                (self._down.add if edge.pressed else self._down.discard)(self._pins[edge.seat])
                self.sink(edge)
                delivered = True
        elif self.chip is not None and before >= self._retry:
            self._again(before)
        if self.progress is not None and (delivered or self.wanted()):
            self.progress(before - QUEUE_SLACK_US)

    def _fail(self, now: int, error: OSError) -> None:
        assert self.request is not None and self.chip is not None
        with contextlib.suppress(OSError):
            self.request.release()
        self.request = None
        self._retry = now + RETRY_US
        for pin in sorted(self._down):  # a button held when the lines failed is let go, not stuck
            self.sink(Edge(self.seats[pin], now, False))
        self._down.clear()
        self.note(
            f"gpio: reading the buttons on /dev/gpiochip{self.chip.number} failed "
            f"({error.strerror or error}): their presses are paused"
        )
        if self.lost is not None:
            self.lost(True)

    def _again(self, now: int) -> None:
        self._retry = now + RETRY_US
        try:
            self.request = self._request()
        except GpioError:
            return  # not back yet: try again later
        self.note(f"gpio: the buttons on /dev/gpiochip{self.chip.number} are back: their presses count again")  # type: ignore[union-attr]
        if self.lost is not None:
            self.lost(False)

    def fds(self) -> list[int]:
        return [self.request.fileno()] if self.request is not None else []

    # The thread -----------------------------------------------------------------------------

    def close(self) -> None:
        self.stop_thread()
        request, self.request = self.request, None
        if request is not None:
            with contextlib.suppress(OSError):
                request.release()


def _read_all(request: LineRequestLike) -> Iterator[EdgeEventLike]:
    """Every edge queued now: read while poll says one is (a read with none queued blocks)."""
    while request.wait_edge_events(0):
        batch = request.read_edge_events()
        if not batch:
            return
        yield from batch
