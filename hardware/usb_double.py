"""A double of the kernel's input devices, for tests and the simulated table: no device needed.

`DoubleDevice` has the surface `UsbButtons` uses of python-evdev's `InputDevice` (path,
name, phys, fileno, read, capabilities, grab, close) and behaves as the kernel does:
`read` gives every queued event and raises BlockingIOError when none is queued, and
OSError(ENODEV) once the device is unplugged; events are stamped on CLOCK_REALTIME until
the EVIOCSCLOCKID ioctl asks for CLOCK_MONOTONIC; a grabbed device cannot be grabbed
again (EBUSY). Its file descriptor is a real pipe that is readable while events are
queued, so `select` works on it as on a device.

`DoubleSystem` is the machine's /dev/input: the devices plugged in, their by-id links,
and the ioctl. A press is `press(t)`/`release(t)` on a device: an EV_KEY event and its
EV_SYN report, stamped `t` (monotonic us) as the kernel would stamp them. On a
`VirtualClock`, the wall clock is the virtual one shifted by `wall_offset_us`.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from .clock import Clock
from .usb_buttons import EV_KEY, EVIOCSCLOCKID, KEY_DOWN, KEY_UP

EV_SYN = 0x00
EV_MSC = 0x04
MSC_SCAN = 0x04


class DoubleEvent(NamedTuple):
    """python-evdev's InputEvent, as far as the reader looks at it."""

    sec: int
    usec: int
    type: int
    code: int
    value: int


class DoubleDevice:
    """One input device: a joystick encoder, a keyboard."""

    def __init__(self, system: DoubleSystem, path: str, name: str, phys: str, keys: Iterable[int]) -> None:
        self.system = system
        self.path = path
        self.name = name
        self.phys = phys
        self.keys = sorted(set(keys))
        self.monotonic = False  # the kernel's default for a new client: CLOCK_REALTIME
        self.grabbed = False
        self.closed = False
        self._queue: list[DoubleEvent] = []
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)

    # The surface the reader uses ---------------------------------------------------------------

    def fileno(self) -> int:
        if self.closed:
            raise ValueError("I/O operation on closed device")
        return self._r

    def read(self) -> Iterator[DoubleEvent]:
        if self.closed:
            raise OSError(errno.EBADF, "Bad file descriptor")
        if self.path not in self.system.plugged:
            raise OSError(errno.ENODEV, "No such device")
        if not self._queue:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        batch, self._queue = self._queue[:64], self._queue[64:]  # evdev reads up to 64 at a time
        if not self._queue:
            self._drain_pipe()
        return iter(batch)

    def capabilities(self) -> dict[int, list[int]]:
        return {EV_SYN: [0, 1, 4], EV_KEY: list(self.keys)}

    def grab(self) -> None:
        if any(d.grabbed and d.path == self.path and d is not self for d in self.system.opened):
            raise OSError(errno.EBUSY, "Device or resource busy")
        self.grabbed = True

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.grabbed = False
            os.close(self._r)
            os.close(self._w)

    # The kernel's side ----------------------------------------------------------------------

    def report(self, t_us: int, code: int, value: int) -> None:
        """A HID report with one key change, stamped `t_us` on CLOCK_MONOTONIC."""
        if self.closed:
            return
        t = t_us if self.monotonic else t_us + self.system.wall_offset_us
        sec, usec = divmod(t, 1_000_000)
        self._queue += [
            DoubleEvent(sec, usec, EV_MSC, MSC_SCAN, 0x90000 + code),
            DoubleEvent(sec, usec, EV_KEY, code, value),
            DoubleEvent(sec, usec, EV_SYN, 0, 0),
        ]
        os.write(self._w, b"!")

    def press(self, t_us: int, code: int) -> None:
        self.report(t_us, code, KEY_DOWN)

    def release(self, t_us: int, code: int) -> None:
        self.report(t_us, code, KEY_UP)

    def repeat(self, t_us: int, code: int) -> None:
        self.report(t_us, code, 2)

    def _drain_pipe(self) -> None:
        try:
            while os.read(self._r, 4096):
                pass
        except BlockingIOError:
            pass


class _Plugged(NamedTuple):
    name: str
    phys: str
    keys: tuple[int, ...]
    by_id: str | None


class DoubleSystem:
    """The machine's input devices, as `UsbButtons` sees them through `InputSystem`."""

    def __init__(self, clock: Clock | None = None, wall_offset_us: int = 1_700_000_000_000_000) -> None:
        self.clock = clock
        self.wall_offset_us = wall_offset_us
        self.plugged: dict[str, _Plugged] = {}
        self.opened: list[DoubleDevice] = []
        self.refuse_clock = False  # True: EVIOCSCLOCKID fails, as on a kernel before 3.4
        self._n = 0

    def plug(
        self,
        name: str,
        keys: Iterable[int],
        phys: str = "",
        by_id: str | None = None,
        path: str | None = None,
    ) -> str:
        """A device appears; its /dev/input/eventN path."""
        if path is None:
            path = f"/dev/input/event{self._n}"
            self._n += 1
        self.plugged[path] = _Plugged(name, phys, tuple(keys), by_id)
        return path

    def unplug(self, path: str) -> None:
        self.plugged.pop(path, None)

    def device(self, path: str) -> DoubleDevice:
        """The open device at `path` (the reader's), to press its keys."""
        return next(d for d in reversed(self.opened) if d.path == path and not d.closed)

    def wall_us(self) -> int:
        now = self.clock.now_us() if self.clock is not None else time.monotonic_ns() // 1000
        return now + self.wall_offset_us

    # InputSystem --------------------------------------------------------------------------

    def paths(self) -> list[str]:
        return list(self.plugged)

    def links(self) -> dict[str, list[str]]:
        return {path: [p.by_id] for path, p in self.plugged.items() if p.by_id}

    def open(self, path: str) -> DoubleDevice:
        plugged = self.plugged.get(path)
        if plugged is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        device = DoubleDevice(self, path, plugged.name, plugged.phys, plugged.keys)
        self.opened.append(device)
        return device

    def ioctl(self, fd: int, request: int, arg: bytes) -> Any:
        device = next((d for d in self.opened if not d.closed and d.fileno() == fd), None)
        if device is None:
            raise OSError(errno.EBADF, "Bad file descriptor")
        if request != EVIOCSCLOCKID or self.refuse_clock:
            raise OSError(errno.EINVAL, "Invalid argument")
        clock_id = int.from_bytes(arg[:4], "little", signed=True)
        if clock_id == time.CLOCK_MONOTONIC:
            device.monotonic = True
        elif clock_id == time.CLOCK_REALTIME:
            device.monotonic = False
        else:
            raise OSError(errno.EINVAL, "Invalid argument")
        return arg
