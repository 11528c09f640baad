"""The camera's questions at the terminal: `referee run` started by a person (stdin a TTY).

Each lay the camera could not read for sure is asked on stderr (stdout carries the
rulings); the host types the card's code, or "none" when nothing was laid, and Enter.
The answer is for the oldest open question, and goes through the same check as the
kiosk's (`HostCommands.name_card`, or the loop's `name` in its own thread): a bad code
or an impossible card is one line, and the question is asked again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from referee.cards import parse_card
from referee.errors import UserError
from referee.kiosk.view import clock
from referee.rules.events import Unread

WAIT_S = 5.0  # an answer the loop has not taken by then is reported, not hung on
MAX_LINE = 200  # a typed answer is a few characters: anything longer is cut, never kept whole


class TerminalQuestions:
    """The question sink that prints, and the reader that answers (`read`, in its own thread).

    `name_card(lay_t, code)` takes an answer (code None: nothing was laid there) and returns a
    short message, or raises ValueError with the reason; `say` prints one line.
    """

    def __init__(self, name_card: Callable[[int, str | None], str], say: Callable[[str], Any]) -> None:
        self.name_card = name_card
        self.say = say
        self._lock = threading.Lock()
        self._open: tuple[Unread, ...] = ()
        self._asked: int | None = None  # the lay whose question was printed last

    def ask(self, questions: tuple[Unread, ...], state: Any = None) -> None:
        """The loop's question sink (its thread): print the oldest question, once."""
        with self._lock:
            self._open = tuple(questions)
            first = self._open[0] if self._open else None
            if first is None or first.t == self._asked:
                return
            self._asked = first.t
        self.say(question_line(first))

    def read(self, lines: Iterable[str]) -> None:
        """Answers typed at the terminal, one a line, until the input ends."""
        for raw in lines:
            self.answer(raw[:MAX_LINE])

    def answer(self, typed: str) -> None:
        text = typed.strip()
        if not text:
            return
        with self._lock:
            first = self._open[0] if self._open else None
        if first is None:
            self.say(f"no card is asked now ({text!r} ignored)")
            return
        try:
            code = None if text.lower() == "none" else parse_card(text).code
            message = self.name_card(first.t, code)
        except (ValueError, UserError) as e:
            self.say(f"{e}: type its code again (e.g. 7H), or 'none'")
            return
        self.say(f"host: {message}")


def question_line(question: Unread) -> str:
    guess = f" (it looks like {question.guess.code})" if question.guess is not None else ""
    return (
        f"camera: which card was laid at {clock(question.t)}?{guess} "
        "type its code (e.g. 7H), or 'none', then Enter"
    )


def loop_namer(loop: Any, wait_s: float = WAIT_S) -> Callable[[int, str | None], str]:
    """An answer taken in the table loop's own thread (`TableLoop.name` through `call`), for a
    service with no kiosk (with one, `HostCommands.name_card` does the same)."""

    def name_card(lay_t: int, code: str | None) -> str:
        card = None if code is None else parse_card(code)
        try:
            return loop.call(lambda: loop.name(lay_t, card)).result(timeout=wait_s)
        except FutureTimeout:
            raise ValueError("the table did not answer in time") from None

    return name_card


def start_reader(questions: TerminalQuestions, stream: Any) -> threading.Thread:
    """Read answers from `stream` (the terminal) in a daemon thread: it blocks on the
    terminal and must not keep the service from exiting."""
    thread = threading.Thread(target=questions.read, args=(stream,), name="answers", daemon=True)
    thread.start()
    return thread
