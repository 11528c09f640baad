"""The host's commands from the kiosk: a new game, the rules, names and house rules for it, undo.

The kiosk calls them from a worker thread; each hands its work to the table loop's own
thread (`TableLoop.call`) and waits for it, so the table, the journal and the kiosk's
view change between two events, never during one. Every change is journaled: a new
game closes the old one; an undo marks the undone events (kept in the file, left out
of every replay), so a restart comes back to the same table; the next game's rules,
names and house rules are journaled as they are set, so a restart keeps them too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.cards import parse_card
from referee.kiosk.app import KioskHub
from referee.kiosk.view import TableView
from referee.rules.engine import MAX_PLAYERS, MIN_PLAYERS
from referee.rules.house_rules import overrides
from referee.rules.presets import PRESETS
from referee.rules.questions import Judging, take
from referee.rules.script import GameSpec, read_script
from referee.rules.state import State

from .journal import ABANDONED, WON, Journal
from .loop import TableLoop
from .replay import undo_last

WAIT_S = 5.0  # a command the loop has not run by then is reported, not hung on


@dataclass
class HostCommands:
    """`kiosk.TableCommands` for a running service."""

    journal: Journal
    recorder: Any  # service.Recorder: the journal's game and next seq, moved on a new game
    hub: KioskHub
    spec: GameSpec  # the next new game's players, rules and options
    source: str
    loop: TableLoop | None = None  # set once the loop exists
    on_new_game: list[Callable[[State], Any]] = field(default_factory=list)
    crops: Any = ()  # the lay times whose picture the kiosk serves (service.AskedCrops)
    # The config's game line: what the host's changes are set over, journaled beside them, so a
    # config changed since wins over them at a restart (`Journal.next_game`). None: `spec`'s.
    base: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.base is None:
            self.base = self.spec.to_json()

    def _in_loop(self, work: Callable[[], str]) -> str:
        if self.loop is None:
            raise ValueError("the table is not running yet")
        try:
            return self.loop.call(work).result(timeout=WAIT_S)
        except TimeoutError:
            raise ValueError("the table did not answer in time: try again") from None

    def new_game(self) -> str:
        def work() -> str:
            assert self.loop is not None
            old = self.loop.state
            self.journal.end_game(
                self.recorder.game, WON if old.winner is not None else ABANDONED, old.winner
            )
            self.recorder.game = self.journal.new_game(self.spec.to_json(), self.source)
            self.recorder.seq = 0
            state = self.spec.new_game()
            asked = self.loop.judging.open
            self.loop.state = state
            self.hub.reset(TableView(state))
            if asked:
                self._questions_changed()  # the old game's question is gone: the light, the terminal
            for hook in self.on_new_game:
                hook(state)
            return f"new game {self.recorder.game}: {', '.join(self.spec.players)} ({self.spec.rules})"

        return self._in_loop(work)

    def set_rules(self, preset: str) -> str:
        if preset not in PRESETS:
            raise ValueError(f"unknown rules {preset!r} (known: {', '.join(sorted(PRESETS))})")
        self._next(GameSpec(self.spec.players, preset))  # a preset's own options, not the last one's
        return f"rules {preset} from the next new game"

    def set_house_rules(self, options: dict[str, Any]) -> str:
        """The next game's house rules: its preset's options, replacing any set before. The game
        being played keeps its own (its events were judged under them)."""
        chosen = overrides(self.spec.rules, options)  # OptionError (a ValueError): one line
        self._next(GameSpec(self.spec.players, self.spec.rules, chosen))
        words = ", ".join(f"{k} {v}" for k, v in chosen.items()) or f"{self.spec.rules}'s own"
        return f"house rules from the next new game: {words}"

    def set_names(self, names: list[str]) -> str:
        clean = [n.strip() for n in names]
        if not MIN_PLAYERS <= len(clean) <= MAX_PLAYERS or not all(clean):
            raise ValueError(f"give {MIN_PLAYERS} to {MAX_PLAYERS} names, none empty")
        if len({n.casefold() for n in clean}) != len(clean):
            raise ValueError("two players have the same name")
        self._next(GameSpec(tuple(clean), self.spec.rules, self.spec.options))
        return f"players {', '.join(clean)} from the next new game"

    def _next(self, spec: GameSpec) -> None:
        """The next new game's line: journaled (in the table's thread, between two events, once
        it runs), then kept and shown in the legend."""

        def work() -> str:
            assert self.base is not None
            self.journal.set_next_game(spec.to_json(), self.base, self.recorder.game)
            return ""

        if self.loop is None:
            work()  # before the table runs: nothing else writes the journal yet
        else:
            self._in_loop(work)
        self.spec = spec
        self.hub.next_game(spec.to_json())

    def name_card(self, lay_t: int, card: str | None) -> str:
        """The card of a lay the camera asked about (None: nothing was laid there), or the right
        card for one it misread: judged in event time, journaled, shown."""
        code = None if card is None else parse_card(card)

        def work() -> str:
            assert self.loop is not None
            return self.loop.name(lay_t, code)

        return self._in_loop(work)

    def _questions_changed(self) -> None:
        """Tell the loop's question sinks (the status light, the terminal, the kiosk) of a table
        changed outside the loop's own judging: the loop tells them only of what it judges."""
        assert self.loop is not None
        for sink in self.loop.question_sinks:
            sink(self.loop.judging.open, self.loop.judging.state)

    def undo_last(self) -> str:
        def work() -> str:
            assert self.loop is not None
            game = self.journal.game(self.recorder.game)
            assert game is not None
            events = list(self.journal.events(game.id))
            seqs, judging = undo_last(game, events)
            self.journal.undo(game.id, seqs)
            asked = self.loop.judging.open
            self.loop.judging = judging
            view = _view_of(game.spec, [e.line for e in events[: len(events) - len(seqs)]])
            view.ask(judging.open, self.crops)
            self.hub.reset(view, keep_marks=True)  # what a restart announced again, still said so
            if judging.open != asked:
                self._questions_changed()
            return f"undone: the last ruling ({len(seqs)} event{'s' if len(seqs) != 1 else ''} taken back)"

        return self._in_loop(work)


def _view_of(spec: dict[str, Any], lines: list[dict[str, Any]]) -> TableView:
    """The kiosk's view of a game rebuilt from its events: every ruling fed again, as they
    were told (a host's correction shown, the rulings it voided left out by the view)."""
    items = read_script([json.dumps(spec), *map(json.dumps, lines)], "journal")
    start: State = next(items)[1]  # type: ignore[assignment]
    judging = Judging(start)
    view = TableView(start)
    for _, event in items:
        judging, rulings = take(judging, event)  # type: ignore[arg-type]
        for ruling in rulings:
            view.add(ruling)
        view.update(judging.state)
    return view


def view_of(judging: Judging) -> TableView:
    """The kiosk's view of a game from its start: every ruling of what was taken fed again (a
    correction's rewrite included, so the view holds no voided ruling)."""
    start = judging.start if judging.start is not None else judging.state
    again = Judging(start)
    view = TableView(start)
    for item in judging.items():
        again, rulings = take(again, item)
        for ruling in rulings:
            view.add(ruling)
        view.update(again.state)
    return view
