"""The calibration steps' front in the terminal: prompts printed, questions asked."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table

from calibration.wizard import typed_line
from calibration.wizard_view import choices


class Terminal:
    """The steps' front in the terminal: prompts printed (with a progress bar at a person's
    terminal), questions asked with input(), and at the simulated table answered yes by the
    simulated person. `pacer` holds the simulated table to the wall clock (`--speed`)."""

    types = True  # answers may be typed while the step waits (the kiosk's come from its page)

    def __init__(self, out: TextIO, sim: bool, pacer: Any, typed: Any = None) -> None:
        self.out, self.sim, self.pacer = out, sim, pacer
        self.typed = typed or typed_line  # a line typed while the camera runs, never waited for
        self.console: Any = None
        if hasattr(out, "isatty") and out.isatty():  # a person's terminal: prompts with progress bars
            self.console = Console(file=out, highlight=False)

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def begin(self, name: str, pile_box: Any = None) -> None:
        """A step starts (`pile_box`: the pile's area from the profile, for the preview)."""

    def show(self, prompt: Any) -> None:
        said = choices(prompt)
        text = prompt.text
        if said and self.types and not self.sim and getattr(prompt, "waits", None) != "answer":
            # Typed while the camera runs and the pins are watched: say what may be typed.
            text += f"  [type {' / '.join(said)} and Enter]"
        progress = getattr(prompt, "progress", None)
        if self.console is None or not progress or progress[1] < 2:
            self.say(text)
            return
        n, of = progress
        line = Table.grid(padding=(0, 1))
        line.add_row(ProgressBar(total=of, completed=n - 1, width=16), f"{n:>2}/{of}", escape(text))
        self.console.print(line)

    def ask(self, prompt: Any) -> str:
        """The answer to the question `prompt` asks (waiting for it)."""
        return "y" if self.sim else input(prompt.text + " ")

    def meanwhile(self, prompt: Any) -> str | None:
        """One of the prompt's choices given while the step waits for frames or presses: at a
        real table, a line typed at the terminal (read without waiting)."""
        if self.sim or not choices(prompt):
            return None
        line = self.typed()
        return line.strip() if line and line.strip() else None

    def seen(self, frame: Any, prompt: Any) -> None:
        """A frame on its way to the step."""
        self.pacer.at(frame.t_us)

    def done(self, name: str, line: str) -> None:
        self.say(line)

    def kept(self, name: str, line: str) -> None:
        self.say(line)

    def skipped(self, name: str, line: str) -> None:
        self.say(line)

    def finish(self, line: str | None) -> None:
        if line:
            self.say(line)
