"""The thread both kernel-event button readers run (GPIO line events, USB input events): sleep
until one of the reader's file descriptors has something (or a tick passes), then sweep: read
what is queued and report progress. The readers say what to wait on and what a sweep is."""

from __future__ import annotations

import select
import threading

TICK_US = 4_000  # while the loop waits, progress is reported at least this often


class Sweeper:
    """A reader's sweep thread: `fds()` and `sweep()` are the reader's own."""

    thread_name = "buttons"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def fds(self) -> list[int]:
        raise NotImplementedError

    def sweep(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        """One sweep here (the first progress, and a source gone since it was opened is said
        before anything else runs), then the thread."""
        self.sweep()
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()

    def run(self) -> None:
        """Sleep until a source has events (or a tick passes), then sweep; until `close`."""
        while not self._stop.is_set():
            fds = self.fds()
            try:
                if fds:
                    select.select(fds, [], [], TICK_US / 1e6)
                else:
                    self._stop.wait(TICK_US / 1e6)
            except (OSError, ValueError):
                pass  # a source closed under select: the sweep finds out which
            if self._stop.is_set():
                return
            self.sweep()

    def stop_thread(self) -> None:
        """Stop the thread and wait for it (not from the thread itself)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)
