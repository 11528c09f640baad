"""The camera's questions at `referee run`'s terminal: each asked once, answered by a typed code
(a fake stdin: the lines are handed in, nothing waits on a real terminal)."""

from __future__ import annotations

import io
import sys

from referee.cards import parse_card
from referee.live.loop import TableLoop
from referee.live.terminal import TerminalQuestions, loop_namer, question_line
from referee.rules.events import Lay, Unread
from referee.rules.script import GameSpec

from .test_host import _command

SPEC = GameSpec(("Ann", "Bob", "Cy"))


class Namer:
    def __init__(self) -> None:
        self.calls: list[tuple[int, str | None]] = []

    def __call__(self, lay_t: int, code: str | None) -> str:
        if code == "9H":
            raise ValueError("9H is already on the stack")
        self.calls.append((lay_t, code))
        return "no card was laid there" if code is None else f"the card is {code}"


def test_the_terminal_asks_each_question_once_and_takes_typed_answers():
    said: list[str] = []
    namer = Namer()
    terminal = TerminalQuestions(namer, said.append)
    terminal.read(io.StringIO("7H\n"))  # nothing asked yet
    assert said == ["no card is asked now ('7H' ignored)"] and namer.calls == []
    asked = (Unread(83_400_000, 0, parse_card("QH")), Unread(90_000_000))
    terminal.ask(asked)
    terminal.ask(asked)  # the same question again: not printed twice
    assert said[1:] == [
        "camera: which card was laid at 1:23.4? (it looks like QH) "
        "type its code (e.g. 7H), or 'none', then Enter"
    ]
    terminal.read(io.StringIO("\n  \n1Z\n9H\nqh\n"))
    assert said[2:] == [
        "bad card code '1Z': expected a rank (A 2-10 T J Q K) and a suit (S H D C or ♠ ♥ ♦ ♣), or JOKER: "
        "type its code again (e.g. 7H), or 'none'",
        "9H is already on the stack: type its code again (e.g. 7H), or 'none'",
        "host: the card is QH",
    ]
    terminal.ask(asked[1:])
    terminal.read(io.StringIO("None\n"))
    assert said[-2:] == [question_line(asked[1]), "host: no card was laid there"]
    assert namer.calls == [(83_400_000, "QH"), (90_000_000, None)]


def test_a_typed_answer_without_a_kiosk_is_taken_in_the_loops_thread():
    state = SPEC.new_game()
    loop = TableLoop(state, {"camera": 0})
    loop.put_lay(Lay(1_000_000, parse_card("9H")))
    loop.put_lay(Unread(2_000_000))
    loop.pump(2_000_000)
    said: list[str] = []
    terminal = TerminalQuestions(loop_namer(loop), said.append)
    loop.question_sinks.append(terminal.ask)
    terminal.ask(loop.judging.open)
    _command(loop, lambda: terminal.read(io.StringIO("9h\n8D\n")))
    loop.pump(2_100_000)
    assert said[1:] == [
        "9H is already on the stack: type its code again (e.g. 7H), or 'none'",
        "host: the card is 8D",
    ]
    assert [c.code for c in loop.state.stack_cards()] == ["9H", "8D"] and loop.judging.open == ()


class FakeStdin(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__("")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_answers_are_read_only_from_a_person_at_a_terminal(monkeypatch):
    from referee.live.table_run import terminal

    by_hand = None  # no --lays-from: the camera's lays
    monkeypatch.setattr("sys.stdin", FakeStdin(tty=True))
    assert terminal(by_hand) is sys.stdin
    assert terminal("-") is None  # stdin carries the lays
    monkeypatch.setattr("sys.stdin", FakeStdin(tty=False))  # systemd: stdin is /dev/null
    assert terminal(by_hand) is None
