"""Small helpers so that rule tests read like table scripts."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from referee.rules.script import ScriptError, adjudicate
from referee.sim.pipeline import adjudicate_pipeline
from referee.sim.render import STYLES, card_sprite, compose, table_surface

PLAYERS = ["Ann", "Bob", "Cy"]


def lay(t_ms: float, card: str, seat: int | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"t": round(t_ms * 1000), "lay": card}
    if seat is not None:
        line["seat"] = seat
    return line


def snap(t_ms: float, seat: int) -> dict[str, Any]:
    return {"t": round(t_ms * 1000), "snap": seat}


def wait(t_ms: float) -> dict[str, Any]:
    return {"t": round(t_ms * 1000), "wait": True}


def game(players: list[str] | int = 3, **extra: Any) -> dict[str, Any]:
    names = PLAYERS[:players] if isinstance(players, int) and players <= 3 else players
    if isinstance(names, int):
        names = [f"P{i}" for i in range(names)]
    return {"game": {"players": names, "rules": "celtic", "options": {}, **extra}}


def judge(*events: dict[str, Any], players: list[str] | int = 3, **extra: Any) -> list[dict[str, Any]]:
    """The rulings for a game line built from `extra` followed by `events`, as JSON dicts.

    Every script is also replayed through the live table loop on simulated buttons and
    camera (`referee adjudicate --pipeline`), which must rule exactly the same, errors included.
    """
    lines = [json.dumps(game(players, **extra))] + [json.dumps(e) for e in events]
    direct, error = run_both(adjudicate, lines)
    piped, piped_error = run_both(adjudicate_pipeline, lines)
    assert (piped, str(piped_error)) == (direct, str(error)), "the live loop ruled differently"
    if error is not None:
        raise error
    return [r.to_json() for r in direct]


def run_both(adjudicator: Any, lines: list[str]) -> tuple[list[Any], ScriptError | None]:
    out: list[Any] = []
    try:
        for ruling in adjudicator(lines, "test"):
            out.append(ruling)
    except ScriptError as e:
        return out, e
    return out, None


def of(rulings: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [r for r in rulings if r["event"] == event]


def won(rulings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return of(rulings, "stack_won")


def snapshot(state: Any) -> tuple[Any, ...]:
    """Every slot of an engine state, to show a state handed out never changes."""
    return tuple(getattr(state, name) for name in type(state).__slots__)


def free_card(state: Any, cards: list[Any], which: int) -> Any:
    """A card a random game may lay next: not on the stack (jokers up to those allowed)."""
    on_stack = state.stack_cards()
    jokers_on_stack = sum(1 for c in on_stack if c.is_joker)
    free = [
        c
        for c in cards
        if (c.is_joker and jokers_on_stack < state.jokers_allowed) or (not c.is_joker and c not in on_stack)
    ]
    return free[which % len(free)]


def power_cut(folder: Any, keep: int, game: int = 1) -> None:
    """The journal in `folder` as a power cut after game `game`'s event `keep - 1` leaves it: the
    later events never committed, the game still open, the sidecar record saying as much (its
    rulings all told). Through the journal's own writer, so the rows' checksums hold."""
    from referee.live.journal import OPEN, Journal, Last

    with Journal.open(folder) as journal:
        db = journal._db
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM events WHERE game = ? AND seq >= ?", (game, keep))
        journal._set_game(game, status=OPEN, winner=None, ended=None, events=None)
        db.execute("COMMIT")
        (total,) = db.execute(
            "SELECT sum FROM events WHERE game = ? AND seq = ?", (game, keep - 1)
        ).fetchone()
        journal._write_last(Last(game, keep, total, keep - 1, 1 << 30))


def table_config(tmp_path: Any, extra: str = "", players: str = '["Ann", "Bob", "Cy"]') -> Any:
    """A `referee run` config in `tmp_path`: mock pins, the journal in data/, no kiosk, and
    `extra` TOML after the [service] table's keys."""
    path = tmp_path / "referee.toml"
    path.write_text(
        f'[table]\nplayers = {players}\n[hardware]\npins = "mock"\n'
        f'[service]\ndata_dir = "data"\nkiosk = false\n{extra}'
    )
    return path


def service_config(folder: Any) -> Any:
    """A `referee run` config in `folder`: three players, mock pins, the journal in folder/data,
    no kiosk (the crash and stop tests' subprocesses)."""
    config = folder / "referee.toml"
    config.write_text(
        '[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\npins = "mock"\n'
        f'[service]\ndata_dir = "{folder / "data"}"\nkiosk = false\n'
    )
    return config


class Heard:
    """What a button reader (GPIO or USB) hands on, in order: edges, progress and notes; each
    reader's test adds its own `lost` (their signatures differ)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object]] = []

    def edge(self, e: Any) -> None:
        self.log.append(("edge", e))

    def progress(self, t: int) -> None:
        self.log.append(("progress", t))

    def note(self, text: str) -> None:
        self.log.append(("note", text))

    def of(self, kind: str) -> list[object]:
        return [v for k, v in self.log if k == kind]


def cards_on_wood(placed: list[Any], portrait: bool = False) -> tuple[Any, Any]:
    """A 1280x720 frame of the own renderer's classic cards on wood (turned over its diagonal when
    `portrait`), and the last (top) card's four corners in it."""
    frame = compose(placed, table_surface("wood", (1280, 720), np.random.default_rng(3)))
    top = placed[-1]
    w, h = top.width, card_sprite(top.card, top.width, STYLES["classic"])[0].shape[0]
    a = np.radians(top.angle)
    offs = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    truth = offs @ np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]).T + [top.x, top.y]
    if portrait:
        return np.ascontiguousarray(frame.transpose(1, 0, 2)), truth[:, ::-1]
    return frame, truth
