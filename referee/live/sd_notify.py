"""Telling systemd how the service is: READY=1, STATUS=..., WATCHDOG=1, STOPPING=1.

The sd_notify protocol is one datagram of `KEY=value` lines to the AF_UNIX socket named
by $NOTIFY_SOCKET (a path, or an abstract name written with a leading '@'), so it is a
few lines here rather than a dependency on python-systemd.

Outside systemd (NOTIFY_SOCKET unset or empty) every message is quietly not sent, so the
same `referee run` works at a terminal. A NOTIFY_SOCKET, WATCHDOG_USEC or WATCHDOG_PID
that is set but malformed is a broken setup, not something to guess around: reading it
raises `NotifyError`, a `UserError`, so the service stops with one line and exit 2 (the
unit does not restart on 2). A message that cannot be delivered to a well-formed socket
(systemd gone) is dropped: systemd itself notices a missing READY or WATCHDOG.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

from hardware.clock import Clock, MonotonicClock
from referee.errors import UserError

MAX_ADDRESS = 107  # sun_path holds 108 bytes, one kept for the terminating NUL


class NotifyError(UserError):
    """$NOTIFY_SOCKET, $WATCHDOG_USEC or $WATCHDOG_PID is set but malformed."""


def socket_address(value: str | None) -> str | bytes | None:
    """$NOTIFY_SOCKET as an AF_UNIX address: a path, abstract bytes, or None when unset."""
    if not value:
        return None
    if value.startswith("@"):
        address: str | bytes = b"\0" + os.fsencode(value[1:])
    elif value.startswith("/"):
        address = value
    else:
        raise NotifyError(f"NOTIFY_SOCKET={value!r}: should be an absolute path or an abstract @name")
    if len(os.fsencode(address)) > MAX_ADDRESS:
        raise NotifyError(f"NOTIFY_SOCKET={value!r}: longer than a socket address can be")
    return address


def message(**fields: str) -> bytes:
    """The datagram for these fields. A newline would start a new field: it becomes a space."""
    return "".join(f"{key}={' '.join(str(value).splitlines())}\n" for key, value in fields.items()).encode()


def _whole(text: str) -> bool:
    return text.isascii() and text.isdigit()  # not str.isdigit alone: "²" is a digit int() refuses


def watchdog_interval_us(env: Mapping[str, str], pid: int) -> int | None:
    """The watchdog interval systemd expects pings within, or None when there is no watchdog
    for this process (WATCHDOG_USEC unset, or WATCHDOG_PID naming another process)."""
    usec = env.get("WATCHDOG_USEC", "")
    if not usec:
        return None
    if not _whole(usec) or int(usec) == 0:
        raise NotifyError(f"WATCHDOG_USEC={usec!r}: should be a whole number of microseconds above 0")
    owner = env.get("WATCHDOG_PID", "")
    if owner:
        if not _whole(owner):
            raise NotifyError(f"WATCHDOG_PID={owner!r}: should be a process id")
        if int(owner) != pid:
            return None  # the watchdog is another process's to ping
    return int(usec)


class Notifier:
    """Sends sd_notify messages to one socket; sends nothing when there is none."""

    def __init__(self, address: str | bytes | None) -> None:
        self.address = address

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        return cls(socket_address((os.environ if env is None else env).get("NOTIFY_SOCKET")))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, **fields: str) -> bool:
        """Send the fields as one datagram; False when not sent (no socket, or undeliverable)."""
        if self.address is None:
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.sendto(message(**fields), self.address)
        except OSError:
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        return self.send(READY="1", **({"STATUS": status} if status is not None else {}))

    def status(self, text: str) -> bool:
        return self.send(STATUS=text)

    def watchdog(self) -> bool:
        return self.send(WATCHDOG="1")

    def stopping(self, status: str | None = None) -> bool:
        return self.send(STOPPING="1", **({"STATUS": status} if status is not None else {}))


class Watchdog:
    """Pings systemd's watchdog at half its interval, as sd_watchdog_enabled(3) advises.

    Call `tick()` from the loop whose progress the watchdog should prove (never from a
    thread of its own, which would keep pinging while the loop hangs), at least every
    `period_us`; `due_in_us()` says how long that loop may block before the next ping.
    """

    def __init__(self, notifier: Notifier, interval_us: int, clock: Clock | None = None) -> None:
        self.notifier = notifier
        self.interval_us = interval_us
        self.period_us = interval_us // 2
        self.clock = clock or MonotonicClock()
        self._last_us: int | None = None

    @classmethod
    def from_env(
        cls,
        notifier: Notifier,
        env: Mapping[str, str] | None = None,
        pid: int | None = None,
        clock: Clock | None = None,
    ) -> Watchdog | None:
        """The watchdog systemd set up for this process, or None when there is none."""
        interval = watchdog_interval_us(
            os.environ if env is None else env, os.getpid() if pid is None else pid
        )
        return None if interval is None else cls(notifier, interval, clock)

    def due_in_us(self) -> int:
        """Microseconds until the next ping is due: 0 when it is due now."""
        if self._last_us is None:
            return 0
        return max(0, self._last_us + self.period_us - self.clock.now_us())

    def tick(self) -> bool:
        """Ping if half the interval has passed since the last ping; True when a ping was due."""
        if self.due_in_us() > 0:
            return False
        self._last_us = self.clock.now_us()
        self.notifier.watchdog()
        return True
