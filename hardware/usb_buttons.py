"""Snap buttons on USB: arcade encoders and keyboards, read through the kernel's input events.

A USB encoder (a "zero delay" joystick board, an I-PAC) or a keyboard appears as a Linux
input device, `/dev/input/eventN`. The kernel stamps each report as it reaches the host;
`evdev` (python-evdev) reads those events. Each key or button press becomes the same
`Edge(seat, t, pressed)` a GPIO button gives, with the kernel's own stamp, so the table
loop and the debouncer treat both alike.

What the stamps are worth:

- **Clock.** An evdev client's events are stamped on CLOCK_REALTIME unless it asks for
  another clock (the EVIOCSCLOCKID ioctl, which python-evdev does not wrap). The reader
  asks for CLOCK_MONOTONIC, the referee's one clock. If a device refuses, its stamps are
  taken as wall-clock time and moved onto the monotonic clock by the offset measured at
  each read: then a wall-clock step (NTP) between a press and its reading moves that press
  by the step, and the reader says so once.
- **Resolution.** A USB device is polled: a full-speed HID endpoint every 1 to 10 ms,
  8 ms for most encoders and keyboards. A press is stamped when the report arrives, so it
  happened up to one polling interval before its stamp (plus the encoder's own scan). The
  wiring declares each device's `resolution_ms` (default 8); the table loop rules two
  presses closer than that a dead heat (loop.py), never a guess.
- **Progress.** When a read finds a device's queue empty, every event stamped more than
  `QUEUE_SLACK_US` before the read began has been read: the kernel queues an event as it
  stamps it. So the reader reports its progress to the table loop ("nothing more stamped
  before t") after each sweep, instead of binding the buttons by a fixed latency.

A device that goes away (unplugged) is told to `lost` in one line; its seats can press
nothing until it is back, and the reader looks for it again every `RESCAN_US`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from .clock import Clock, MonotonicClock
from .presses import Edge
from .sweeper import TICK_US as TICK_US  # the readers' tick, where it always was
from .sweeper import Sweeper

EV_KEY = 0x01
KEY_UP, KEY_DOWN = 0, 1  # 2 is the keyboard's autorepeat: no new press
KEY_MAX = 0x2FF
# _IOW('E', 0xa0, int): which clock this client's events are stamped on (linux/input.h).
EVIOCSCLOCKID = 0x400445A0
USB_RESOLUTION_US = 8_000  # a full-speed HID device's usual polling interval
QUEUE_SLACK_US = 2_000  # an event reaches the client's queue within this of its stamp
RESCAN_US = 1_000_000  # a lost device is looked for again this often


class UsbError(RuntimeError):
    """A USB button device that cannot be used; str() is the one line the user sees."""


class InputEventLike(Protocol):
    """What the reader uses of python-evdev's `InputEvent`."""

    sec: int
    usec: int
    type: int
    code: int
    value: int


class InputDeviceLike(Protocol):
    """What the reader uses of python-evdev's `InputDevice` (the double in usb_double.py
    has exactly this surface)."""

    path: str
    name: str
    phys: str

    def fileno(self) -> int: ...

    def read(self) -> Iterator[InputEventLike]:
        """Every event queued; raises BlockingIOError when none is, OSError (ENODEV) when gone."""
        ...

    def capabilities(self) -> dict[int, list[int]]: ...

    def grab(self) -> None: ...

    def close(self) -> None: ...


class InputSystem(Protocol):
    """The machine's input devices: how they are listed, opened and told their clock."""

    def paths(self) -> list[str]:
        """Every /dev/input/eventN path that can be opened."""
        ...

    def links(self) -> dict[str, list[str]]:
        """Each event path's stable names (/dev/input/by-id/..., by-path/...)."""
        ...

    def open(self, path: str) -> InputDeviceLike: ...

    def ioctl(self, fd: int, request: int, arg: bytes) -> Any: ...


class EvdevSystem:
    """The real one, through python-evdev (Debian's python3-evdev on the Pi)."""

    def paths(self) -> list[str]:
        import evdev  # the kernel's input devices: only when USB buttons are used

        return sorted(evdev.list_devices(), key=_event_number)

    def links(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for folder in ("/dev/input/by-id", "/dev/input/by-path"):
            with contextlib.suppress(OSError):
                for entry in sorted(os.listdir(folder)):
                    link = os.path.join(folder, entry)
                    out.setdefault(os.path.realpath(link), []).append(link)
        return out

    def open(self, path: str) -> InputDeviceLike:
        import evdev  # as above

        return evdev.InputDevice(path)  # type: ignore[return-value]

    def ioctl(self, fd: int, request: int, arg: bytes) -> Any:
        return fcntl.ioctl(fd, request, arg)


def default_system() -> InputSystem:
    """The machine's input devices (a test swaps this for usb_double's DoubleSystem)."""
    return EvdevSystem()


def _event_number(path: str) -> int:
    digits = path.rsplit("event", 1)[-1]
    return int(digits) if digits.isdigit() else 1 << 30


# Key codes: names as linux/input-event-codes.h spells them -----------------------------------


def key_code(value: Any) -> int:
    """A key or button code from the wiring file: a name (`BTN_TRIGGER`, `KEY_A`) or a number.
    ValueError with the reason if it is neither."""
    if isinstance(value, bool):
        raise ValueError(f"a key is a name like BTN_TRIGGER or KEY_A, or a code, not {value!r}")
    if isinstance(value, int):
        if 1 <= value <= KEY_MAX:
            return value
        raise ValueError(f"key code {value} is not a key: 1 to {KEY_MAX}")
    if not isinstance(value, str):
        raise ValueError(f"a key is a name like BTN_TRIGGER or KEY_A, or a code, not {value!r}")
    from evdev import ecodes  # key names: only when a wiring names a key

    code = ecodes.ecodes.get(value.strip().upper())
    if code is None or not value.strip().upper().startswith(("KEY_", "BTN_")):
        raise ValueError(f'"{value}" is no key name (BTN_TRIGGER, KEY_A...: `referee hw-test` shows them)')
    return int(code)


def key_name(code: int) -> str:
    """The code's name for people (`BTN_TRIGGER`), or its number if it has none."""
    try:
        from evdev import ecodes  # as above
    except ImportError:  # pragma: no cover - evdev is a dependency on Linux
        return str(code)
    name = ecodes.KEY.get(code) or ecodes.BTN.get(code)
    if isinstance(name, list | tuple):  # one code, several names: not the range's (BTN_JOYSTICK)
        name = next((n for n in name if n not in _RANGE_NAMES), name[0])
    return name if isinstance(name, str) else str(code)


# Names that mark where a range of codes begins: the code's other name says what it is.
_RANGE_NAMES = frozenset(
    {"BTN_MISC", "BTN_MOUSE", "BTN_JOYSTICK", "BTN_GAMEPAD", "BTN_DIGI", "BTN_WHEEL", "BTN_TRIGGER_HAPPY"}
)


# Which device is which: pure ----------------------------------------------------------------


class DeviceInfo(NamedTuple):
    """An input device as the reader found it."""

    path: str
    name: str
    phys: str
    links: tuple[str, ...]  # its by-id and by-path names
    keys: frozenset[int]  # the key and button codes it can send


class UsbDevice(NamedTuple):
    """A device the wiring names: `match` is its name, a /dev/input path (by-id, by-path or
    eventN) or its phys; `keys` are the codes the seats use on it."""

    label: str  # the wiring's name for it: usb.LABEL
    match: str
    keys: frozenset[int]
    resolution_us: int = USB_RESOLUTION_US


def describe(info: DeviceInfo) -> str:
    stable = next((link for link in info.links if "/by-id/" in link), None)
    return f'{info.path} "{info.name}"' + (f" ({stable})" if stable else "")


def find_device(want: UsbDevice, found: Sequence[DeviceInfo]) -> DeviceInfo | None:
    """The one device `want` names, among `found`; None if none is there. UsbError if the
    name fits several (two identical encoders): then it must be named by its by-id path or phys.
    Of several devices one encoder shows (a keyboard and a mouse), the one with the keys wins."""
    match = want.match
    if match.startswith("/"):
        real = os.path.realpath(match)
        hits = [d for d in found if d.path in (match, real) or match in d.links]
    else:
        hits = [d for d in found if match in (d.name, d.phys)]
    if len(hits) > 1:
        with_keys = [d for d in hits if want.keys <= d.keys]
        hits = with_keys or hits
    if len(hits) > 1:
        names = ", ".join(d.path for d in hits)
        raise UsbError(
            f'usb.{want.label}: "{match}" fits {len(hits)} devices ({names}): name it by its '
            "/dev/input/by-id/ path or its phys (`referee hw-test` lists them)"
        )
    return hits[0] if hits else None


def scan(system: InputSystem) -> list[DeviceInfo]:
    """Every input device this process can open, with what it can send."""
    links = system.links()
    out = []
    for path in system.paths():
        try:
            device = system.open(path)
        except OSError:
            continue  # gone meanwhile, or not ours to read
        try:
            keys = frozenset(device.capabilities().get(EV_KEY, ()))
            out.append(DeviceInfo(path, device.name, device.phys or "", tuple(links.get(path, ())), keys))
        finally:
            device.close()
    return out


def stamp_us(event: InputEventLike) -> int:
    return event.sec * 1_000_000 + event.usec


def key_edges(
    events: Iterable[InputEventLike], seats: Mapping[int, int], shift_us: int = 0
) -> Iterator[tuple[int, Edge]]:
    """(code, Edge) for each key press and release of a mapped code, on the reader's clock
    (`shift_us` added); autorepeat, axes and sync reports are not presses."""
    for event in events:
        if event.type != EV_KEY or event.value not in (KEY_UP, KEY_DOWN):
            continue
        seat = seats.get(event.code)
        if seat is not None:
            yield event.code, Edge(seat, stamp_us(event) + shift_us, event.value == KEY_DOWN)


# The reader -----------------------------------------------------------------------------------


@dataclass
class _Open:
    want: UsbDevice
    seats: dict[int, int]  # code -> seat
    device: InputDeviceLike | None = None
    info: DeviceInfo | None = None
    monotonic: bool = True  # False: its stamps are wall-clock time, moved by the measured offset
    down: set[int] = field(default_factory=set)  # codes held down: released if the device goes


class UsbButtons(Sweeper):
    """The wiring's USB devices, each key edge handed to `sink` with its kernel stamp.

    `devices` with `seats[label][code] -> seat`. Opening is strict: a device the wiring
    names that is not plugged in is a UsbError (one line, naming it), so a typo is seen at
    once. Each device is grabbed, so that a keyboard's keys type nowhere else (the kiosk's
    browser). One thread reads them all (`start`); `sweep` is one turn of it, which tests
    and the simulated table call directly.
    """

    thread_name = "usb-buttons"

    def __init__(
        self,
        devices: Sequence[UsbDevice],
        seats: Mapping[str, Mapping[int, int]],
        sink: Callable[[Edge], Any],
        progress: Callable[[int], Any] | None = None,
        lost: Callable[[str, bool], Any] | None = None,
        wanted: Callable[[], bool] | None = None,
        clock: Clock | None = None,
        system: InputSystem | None = None,
        wall_us: Callable[[], int] | None = None,
        note: Callable[[str], Any] | None = None,
        others: Callable[[str, int, int], Any] | None = None,
        grab: bool = True,
    ) -> None:
        self.system = system or EvdevSystem()
        self.clock = clock or MonotonicClock()
        self.sink = sink
        self.progress = progress
        self.lost = lost
        self.wanted = wanted or (lambda: True)
        self.wall_us = wall_us or (lambda: time.time_ns() // 1000)
        self.note = note or (lambda text: None)
        self.others = others  # (label, code, t) of each press of a key no seat uses: hw-test shows them
        self.grab = grab  # hw-test does not grab: the keyboard typing its Ctrl-C may be one of them
        self._devices = [_Open(d, dict(seats.get(d.label, {}))) for d in devices]
        super().__init__()
        self._next_scan = 0
        self._wall_warned = False
        found = scan(self.system) if devices else []
        missing = []
        try:
            for d in self._devices:
                info = find_device(d.want, found)
                if info is None:
                    missing.append(d.want)
                    continue
                self._open(d, info)
        except BaseException:
            self.close()
            raise
        if missing:
            self.close()
            want = missing[0]
            raise UsbError(
                f'usb.{want.label}: no input device "{want.match}" is plugged in (or it is not '
                "readable: is the user in the input group?); `referee hw-test` lists those there are"
            )

    @property
    def resolution_us(self) -> int:
        return max((d.want.resolution_us for d in self._devices), default=0)

    def info(self, label: str) -> DeviceInfo | None:
        """The device `label` was found as (None while it is gone)."""
        return next((d.info for d in self._devices if d.want.label == label and d.device is not None), None)

    def _open(self, d: _Open, info: DeviceInfo) -> None:
        device = self.system.open(info.path)
        try:
            # The referee's one clock; a device that refuses keeps the wall clock (see above).
            self.system.ioctl(device.fileno(), EVIOCSCLOCKID, struct.pack("i", time.CLOCK_MONOTONIC))
            d.monotonic = True
        except OSError:
            d.monotonic = False
        try:
            if self.grab:
                device.grab()
        except OSError as e:
            device.close()
            raise UsbError(
                f"usb.{d.want.label}: {describe(info)} is held by another program ({e.strerror}): "
                "is another referee running?"
            ) from None
        d.device, d.info, d.down = device, info, set()

    def sweep(self) -> None:
        """Read every device until its queue is empty; hand on the edges, then the progress."""
        before = self.clock.now_us()
        shift = before - self.wall_us() if any(not d.monotonic for d in self._devices) else 0
        delivered = False
        for d in self._devices:
            if d.device is None:
                continue
            try:
                events = list(_read_all(d.device))
            except OSError as e:
                self._gone(d, before, e)
                continue
            if not d.monotonic and events and not self._wall_warned:
                self._wall_warned = True
                self.note(
                    f"usb.{d.want.label}: its stamps are on the wall clock (it refused CLOCK_MONOTONIC): "
                    "a clock step while it is pressed moves that press"
                )
            for code, edge in key_edges(events, d.seats, 0 if d.monotonic else shift):
                (d.down.add if edge.pressed else d.down.discard)(code)
                self.sink(edge)
                delivered = True
            if self.others is not None:
                for event in events:
                    if event.type == EV_KEY and event.value == KEY_DOWN and event.code not in d.seats:
                        self.others(d.want.label, event.code, stamp_us(event) + (0 if d.monotonic else shift))
        if before >= self._next_scan:
            self._next_scan = before + RESCAN_US
            self._rescan()
        if self.progress is not None and (delivered or self.wanted()):
            self.progress(before - QUEUE_SLACK_US)

    def _gone(self, d: _Open, now: int, error: OSError) -> None:
        assert d.device is not None and d.info is not None
        with contextlib.suppress(OSError):
            d.device.close()
        d.device = None
        for code in sorted(d.down):  # a key held at the unplugging is let go, not stuck
            self.sink(Edge(d.seats[code], now, False))
        d.down.clear()
        why = "unplugged" if error.errno in (errno.ENODEV, errno.EIO) else error.strerror or str(error)
        self.note(f"usb.{d.want.label}: {describe(d.info)} {why}: its seats' presses are paused")
        if self.lost is not None:
            self.lost(d.want.label, True)

    def _rescan(self) -> None:
        """Look again for the devices that went away."""
        gone = [d for d in self._devices if d.device is None]
        if not gone:
            return
        try:
            found = scan(self.system)
        except OSError:
            return
        for d in gone:
            try:
                info = find_device(d.want, found)
                if info is not None:
                    self._open(d, info)
            except (UsbError, OSError):
                continue  # not back yet in a usable state: try again next time
            if d.device is not None:
                self.note(f"usb.{d.want.label}: {describe(d.info)} back: its seats' presses count again")  # type: ignore[arg-type]
                if self.lost is not None:
                    self.lost(d.want.label, False)

    def fds(self) -> list[int]:
        return [d.device.fileno() for d in self._devices if d.device is not None]

    def missing(self) -> list[str]:
        """The labels of the devices that are gone."""
        return [d.want.label for d in self._devices if d.device is None]

    # The thread -----------------------------------------------------------------------------

    def close(self) -> None:
        self.stop_thread()
        for d in self._devices:
            if d.device is not None:
                with contextlib.suppress(OSError):
                    d.device.close()
                d.device = None


def _read_all(device: InputDeviceLike) -> Iterator[InputEventLike]:
    """Every event queued now (python-evdev reads up to 64 per call: read until it says none)."""
    while True:
        try:
            batch = list(device.read())
        except BlockingIOError:
            return
        if not batch:
            return
        yield from batch
