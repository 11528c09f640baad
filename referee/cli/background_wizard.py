"""A `referee calibrate ... --kiosk` command run in a thread, for tools and tests."""

from __future__ import annotations

import threading

from calibration.kiosk import Gate, Holds, KioskFront
from referee.errors import UserError

from .main import build_parser


class BackgroundWizard:
    """A `referee calibrate ... --kiosk` command run in a thread, for tools and tests: its page's
    URL once it is served, what it printed, and how it ended."""

    def __init__(self, argv: list[str], gate: Gate | None = None) -> None:
        self.args = build_parser().parse_args(argv)
        self.args.gate = gate
        self.lines: list[str] = []
        self.status: int | None = None
        self.error: BaseException | None = None
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="wizard", daemon=True)

    def start(self) -> BackgroundWizard:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.status = int(self.args.run(self.args, self))
        except UserError as e:
            self.status, self.error = 2, e
        except KeyboardInterrupt as e:
            self.status, self.error = 130, e
        except BaseException as e:  # a bug: kept for the caller to raise
            self.status, self.error = 1, e
        with self._changed:
            self._changed.notify_all()

    # The command's output (it writes here as to a terminal).
    def write(self, text: str) -> int:
        with self._changed:
            self.lines += text.splitlines()
            self._changed.notify_all()
        return len(text)

    def flush(self) -> None:
        pass

    def url(self, timeout: float) -> str:
        """The page's URL, once the command serves it."""
        prefix = "the wizard's page: "
        with self._changed:
            found = self._changed.wait_for(
                lambda: self.status is not None or any(line.startswith(prefix) for line in self.lines),
                timeout,
            )
            line = next((line for line in self.lines if line.startswith(prefix)), None)
        if not found or line is None:
            raise RuntimeError(f"the wizard's page was not served: {self.error or 'no answer'}")
        return line[len(prefix) :].split()[0]

    def join(self, timeout: float) -> int:
        """The exit status, once the command has ended."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the wizard did not end within {timeout} s")
        assert self.status is not None
        return self.status

    def stop(self) -> None:
        """Give up: the steps stop as at Ctrl-C, wherever they wait."""
        gate = self.args.gate
        if isinstance(gate, Holds):
            gate.cancel()
        front = getattr(self.args, "front", None)
        if isinstance(front, KioskFront):
            front.hub.cancel()
