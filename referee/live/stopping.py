"""SIGTERM and SIGINT as a request to stop, taken at safe points.

`systemctl stop` sends SIGTERM; Ctrl-C at a terminal sends SIGINT. Either may come at any
moment: while Python imports, while the journal writes an event, while the pins are being
released. An exception thrown into whatever the main thread was doing (Python's own
KeyboardInterrupt) could cut a journal write or the pins' release in half, and prints a
traceback. So the handler only records the request and runs the hooks registered for it
(each must be safe there: putting on a `queue.SimpleQueue`, sending one datagram, setting
a flag). The program takes the request where it is safe: `check()` between startup steps
raises `Stopped`; the table loop returns at its next turn (`TableLoop.stop` as a hook).
A second signal while stopping changes nothing: the stop is already under way.

Exit status: 0 for SIGTERM (a stop on request), 130 for SIGINT (the shell's 128 + 2).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

EXIT_CODES = {signal.SIGTERM: 0, signal.SIGINT: 130}
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stopped(Exception):
    """Raised by `StopRequest.check` at a safe point; `code` is the exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(f"stopped (exit {code})")
        self.code = code


class StopRequest:
    """Whether a stop was asked for, and what to do at once when it is."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._hooks: list[Callable[[], Any]] = []
        self._saved: dict[int, Any] | None = None

    @property
    def installed(self) -> bool:
        return self._saved is not None

    def install(self) -> bool:
        """Take SIGTERM and SIGINT from now on (main thread only: False elsewhere). A signal that
        the process inherited blocked, and that came before this, is taken now."""
        if self._saved is not None:
            return True
        if threading.current_thread() is not threading.main_thread():
            return False
        self._saved = {signum: signal.signal(signum, self._handle) for signum in _SIGNALS}
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
        return True

    def uninstall(self) -> None:
        """Give the signals back their previous handlers (a request already made stays)."""
        saved, self._saved = self._saved, None
        if saved is not None:
            for signum, handler in saved.items():
                signal.signal(signum, handler)

    def reset(self) -> None:
        self.signum = None
        self._hooks.clear()

    def _handle(self, signum: int, frame: Any) -> None:
        self.request(signum)

    def request(self, signum: int = signal.SIGTERM) -> None:
        """Ask for a stop, as the signal `signum` does (tests call this directly)."""
        if self.signum is not None:
            return  # already stopping: a second Ctrl-C changes nothing
        self.signum = signum
        for hook in list(self._hooks):
            with contextlib.suppress(Exception):  # a hook's trouble must not land in the main thread
                hook()

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.signum, 128 + (self.signum or 0))  # type: ignore[arg-type]

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else "nothing"

    def check(self) -> None:
        """At a safe point: raise `Stopped` if a stop was asked for."""
        if self.signum is not None:
            raise Stopped(self.exit_code)

    @contextlib.contextmanager
    def on_stop(self, hook: Callable[[], Any]) -> Iterator[None]:
        """Run `hook` when a stop is asked for while inside (at once if it already was)."""
        self._hooks.append(hook)
        try:
            if self.signum is not None:
                with contextlib.suppress(Exception):
                    hook()
            yield
        finally:
            self._hooks.remove(hook)


stop_request = StopRequest()  # the process's one request: the signal handlers' and the program's
