"""The plug pulled: `referee run` killed with SIGKILL at seeded random points of a game.

Each time the killed run is started again on the same journal. It must announce every
ruling exactly once: what the killed run wrote to stdout (read to the end of the pipe
after the kill), then what the restart announces again (each line marked `"again": true`:
rulings whose event was journaled but which may not have gone out), then the new ones,
together make the uninterrupted run's rulings, with at most one ruling in both (the one
being told at the instant of the kill, announced again). The game ends with the rulings
`referee adjudicate` gives on the same input: the script at once, the journal's own
events (timers included) in a live rehearsal, whose lines keep their offset to the
game's clock across the restart (the time between two lines is not lost to the crash).

Three modes: a plain game at once, a game with questions at once, and a live rehearsal
(the script's times shrunk so that a game takes about 3 s). `make test` kills one live
rehearsal; `make test-slow` kills 48 more, at seeded points of the three modes (the tests marked
slow); `benchmarks/bench_crash.py` kills 100 seeded points of each mode.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import random
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.live.journal import OPEN, Journal
from referee.rules.script import adjudicate, event_to_json
from referee.sim.bots import VirtualTable
from tests.helpers import service_config

ROOT = Path(__file__).resolve().parent.parent
KILLS = 30
F_SETPIPE_SZ = 1031  # Linux: a small pipe, so the run cannot race far ahead of what was read


def _script(seed: int = 55, players: int = 3, shrink: int = 1) -> str:
    table = VirtualTable(players=players, seed=seed)
    lines = [json.dumps(table.spec.to_json())]
    for p in table.play():
        if p.event is not None:
            line = event_to_json(p.event)
            line["t"] //= shrink
            lines.append(json.dumps(line))
    return "\n".join(lines) + "\n"


def _rulings(text: str) -> list[str]:
    return [json.dumps(r.to_json()) for r in adjudicate(io.StringIO(text), "game")]


@dataclass(frozen=True)
class Mode:
    name: str
    script: Path
    expected: list[str]  # the uninterrupted run's rulings (None-like [] for live: the journal's)
    live: bool = False


def plain_mode(folder: Path) -> Mode:
    script = folder / "game.jsonl"
    script.write_text(_script())
    expected = _rulings(script.read_text())
    assert len(expected) > 250
    return Mode("plain", script, expected)


def questions_mode(folder: Path) -> Mode:
    """Lays asked and named later: a kill while a question is open leaves it open in the journal,
    with the presses that waited behind it, and the resumed run judges them when it is named."""
    from .test_questions import _ask

    lines = [json.loads(line) for line in _script(seed=56).splitlines()]
    asked = _ask(lines, random.Random(56), 12)
    script = folder / "asked.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in asked))
    return Mode("questions", script, _rulings(script.read_text()))


def live_mode(folder: Path) -> Mode:
    """A live rehearsal: the lines at their own times on the game's clock, timers fired live."""
    script = folder / "live.jsonl"
    script.write_text("".join(_script(seed=57, shrink=25).splitlines(keepends=True)[:120]))
    return Mode("live", script, [], live=True)


def _argv(config: Path, mode: Mode) -> list[str]:
    argv = [sys.executable, "-m", "referee", "run", "--config", str(config), "--lays-from", str(mode.script)]
    return argv if mode.live else [*argv, "--at-once"]


def _export(folder: Path) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "referee", "export", "1", "--data-dir", str(folder / "data")],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    return out.stdout.decode().splitlines()


def _split(lines: list[str]) -> tuple[list[str], list[str]]:
    """A restart's stdout: the rulings announced again (their mark taken off), then the new ones."""
    again, new = [], []
    for line in lines:
        ruling = json.loads(line)
        if ruling.pop("again", False):
            assert not new, "a ruling announced again after a new one"
            again.append(json.dumps(ruling))
        else:
            new.append(line)
    return again, new


def _offsets(folder: Path, script: Path) -> set[int]:
    """Game time minus script time of every journaled script line: one value when kept."""
    own = [json.loads(line).get("t") for line in script.read_text().splitlines()]  # line n at own[n - 1]
    with Journal.open(folder / "data", readonly=True) as journal:
        record = journal.games()[0]  # game 1 (a finished one's restart plays the script as game 2)
        return {e.line["t"] - own[e.mark - 1] for e in journal.events(record.id) if e.mark is not None}


def trial(folder: Path, mode: Mode, kill_after: int) -> tuple[str, int]:
    """One crash and one restart: ("resumed" or "finished" before the kill, rulings told twice)."""
    config = service_config(folder)
    proc = subprocess.Popen(_argv(config, mode), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    fcntl.fcntl(proc.stdout.fileno(), F_SETPIPE_SZ, 4096)
    read = []
    for _ in range(kill_after):
        line = proc.stdout.readline()
        if not line:
            break
        read.append(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    # Told means written to stdout: what was still in the pipe, unread, was told too.
    before = b"".join([*read, proc.stdout.read()]).decode().splitlines()
    proc.stdout.close()

    status = None  # killed before the journal had the game
    if (folder / "data" / "journal.sqlite3").exists():
        with Journal.open(folder / "data", readonly=True) as journal:
            status = next((g.status for g in journal.games()), None)
    done = subprocess.run(_argv(config, mode), capture_output=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    again, new = _split(done.stdout.decode().splitlines())
    if status is None:
        outcome = "before"
    elif status == OPEN:
        assert b"resuming game 1" in done.stderr
        outcome = "resumed"
    else:
        outcome = "finished"  # the run was killed after the game ended: a new game follows
        new = []
    export = [line for line in _export(folder) if '"event":' in line]
    expected = mode.expected or export  # live: the rulings of what the journal holds
    assert export == expected, "the game did not end with the uninterrupted run's rulings"
    # Exactly once: told before, then again (from at most one ruling before the kill's point on),
    # then new, is the whole game.
    a = len(before)
    assert before == expected[:a], "a ruling told before the kill that the game does not give"
    x = next((x for x in (a, a - 1) if x >= 0 and expected[x : x + len(again)] == again), None)
    assert x is not None, f"announced again: {again[:3]}... is not what followed the {a} rulings told"
    y = x + len(again)
    assert y >= a, "a ruling was lost: neither told before the kill nor announced again"
    if outcome in ("resumed", "before"):  # killed before the journal had the game: all of it is new
        assert new == expected[y:], "the resumed run's new rulings are not the rest of the game"
    else:
        assert y == len(expected), "the end of a finished game was not all told"
    if mode.live:
        assert len(_offsets(folder, mode.script)) <= 1, "the script's spacing was lost across the restart"
    return outcome, a - x


def kills(tmp_path: Path, mode: Mode, count: int, seed: int) -> list[tuple[str, int]]:
    """`count` trials of `mode`, each killed after a seeded random number of rulings read."""
    rng = random.Random(seed)
    total = len(mode.expected) or 200
    points = [rng.randrange(total) for _ in range(count)]
    folders = [tmp_path / f"{mode.name}{i}" for i in range(count)]
    for folder in folders:
        folder.mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda i: trial(folders[i], mode, points[i]), range(count)))


def _report(mode: Mode, outcomes: list[tuple[str, int]]) -> str:
    resumed = sum(1 for o, _ in outcomes if o == "resumed")
    twice = sum(d for _, d in outcomes)
    return (
        f"{mode.name}: {len(outcomes)} kills, {resumed} mid-game, {twice} rulings told twice (marked again)"
    )


@pytest.mark.slow  # 30 kills, about 30 s: `make test-slow`
def test_a_game_killed_at_random_points_announces_every_ruling_once_and_resumes_to_the_same_rulings(
    tmp_path: Path,
) -> None:
    mode = plain_mode(tmp_path)
    outcomes = kills(tmp_path, mode, KILLS, 2026)
    # Most kills must land mid-game (the small pipe holds the run back), or this tests little.
    assert sum(1 for o, _ in outcomes if o == "resumed") >= KILLS * 0.8, outcomes
    print(_report(mode, outcomes))


@pytest.mark.slow
def test_a_game_with_questions_killed_at_random_points_resumes_to_the_same_rulings(tmp_path: Path) -> None:
    mode = questions_mode(tmp_path)
    kills_ = 10
    outcomes = kills(tmp_path, mode, kills_, 2027)
    assert sum(1 for o, _ in outcomes if o == "resumed") >= kills_ * 0.7, outcomes


@pytest.mark.slow
def test_a_live_rehearsal_killed_at_random_points_keeps_its_spacing_and_announces_every_ruling_once(
    tmp_path: Path,
) -> None:
    mode = live_mode(tmp_path)
    kills_ = 6
    outcomes = kills(tmp_path, mode, kills_, 2028)
    assert sum(1 for o, _ in outcomes if o == "resumed") >= kills_ * 0.5, outcomes


# One kill in the fast set (`make test`); the other two points in the slow set.
@pytest.mark.parametrize(
    "kill_after", [pytest.param(1, marks=pytest.mark.slow), 5, pytest.param(40, marks=pytest.mark.slow)]
)
def test_a_live_rehearsal_resumed_keeps_the_gap_after_its_last_journaled_line(
    tmp_path: Path, kill_after: int
) -> None:
    """The first new line lands at its own time after the last one judged, not at that one's time."""
    mode = live_mode(tmp_path)
    outcome, _ = trial(tmp_path, mode, kill_after)
    assert outcome == "resumed"
    assert len(_offsets(tmp_path, mode.script)) == 1
