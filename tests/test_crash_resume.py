"""The plug pulled: `referee run` killed with SIGKILL at 50 seeded random points of a game.

Each time the killed run is started again on the same journal: it must resume the game
and end it with exactly the rulings an uninterrupted run gives, and every ruling the
killed run had printed (acknowledged) must be one of them, in order.
"""

from __future__ import annotations

import fcntl
import io
import os
import random
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from referee.bots import VirtualTable
from referee.journal import OPEN, Journal
from referee.script import adjudicate, event_to_json

ROOT = Path(__file__).resolve().parent.parent
KILLS = 50
F_SETPIPE_SZ = 1031  # Linux: a small pipe, so the run cannot race far ahead of what was read


def _script(seed: int = 55, players: int = 3) -> str:
    import json

    table = VirtualTable(players=players, seed=seed)
    lines = [json.dumps(table.spec.to_json())]
    lines += [json.dumps(event_to_json(p.event)) for p in table.play() if p.event is not None]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("game")
    script = folder / "game.jsonl"
    script.write_text(_script())
    import json

    rulings = [json.dumps(r.to_json()) for r in adjudicate(io.StringIO(script.read_text()), "game")]
    assert len(rulings) > 250
    return script, rulings


def _config(folder: Path) -> Path:
    config = folder / "referee.toml"
    config.write_text(
        '[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\npins = "mock"\n'
        f'[service]\ndata_dir = "{folder / "data"}"\nkiosk = false\n'
    )
    return config


def _run(config: Path, script: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "run", "--config", str(config), "--lays-from", str(script)]
        + ["--at-once"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    fcntl.fcntl(proc.stdout.fileno(), F_SETPIPE_SZ, 4096)
    return proc


def _export(folder: Path) -> list[str]:
    return (
        subprocess.run(
            [sys.executable, "-m", "referee.cli", "export", "1", "--data-dir", str(folder / "data")],
            capture_output=True,
            cwd=ROOT,
            check=True,
        )
        .stdout.decode()
        .splitlines()
    )


def _trial(folder: Path, script: Path, expected: list[str], kill_after: int) -> str:
    """One crash and one resume; what happened ("resumed" or "finished" before the kill)."""
    config = _config(folder)
    proc = _run(config, script)
    assert proc.stdout is not None
    acknowledged = [proc.stdout.readline().decode().rstrip("\n") for _ in range(kill_after)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert proc.stderr is not None
    proc.stderr.close()
    assert acknowledged == expected[:kill_after], "a printed ruling that the uninterrupted run does not give"

    # Nothing acknowledged is lost: the journal holds every event behind a printed ruling.
    kept = [line for line in _export(folder) if '"event":' in line]
    assert kept[:kill_after] == acknowledged, "a ruling was printed for an event the journal lost"
    with Journal.open(folder / "data") as journal:
        (record,) = journal.games()
    if record.status != OPEN:
        return "finished"
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "run", "--config", str(config), "--lays-from", str(script)]
        + ["--at-once"],
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"resuming game 1" in done.stderr
    after = done.stdout.decode().splitlines()
    # The resumed run announces the rulings the journal's events had not yet led to.
    assert after == expected[len(expected) - len(after) :]

    rulings = [line for line in _export(folder) if '"event":' in line]
    assert rulings == expected, "the resumed game did not end with the uninterrupted run's rulings"
    return "resumed"


def _kills(tmp_path: Path, script: Path, expected: list[str], kills: int, seed: int) -> list[str]:
    """`kills` trials, each killed after a seeded random number of printed rulings, two at a time."""
    rng = random.Random(seed)
    points = [rng.randrange(len(expected)) for _ in range(kills)]
    folders = [tmp_path / f"kill{i}" for i in range(kills)]
    for folder in folders:
        folder.mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda i: _trial(folders[i], script, expected, points[i]), range(kills)))


def test_a_game_killed_at_50_random_points_resumes_to_the_same_rulings(
    game: tuple[Path, list[str]], tmp_path: Path
) -> None:
    script, expected = game
    outcomes = _kills(tmp_path, script, expected, KILLS, 2026)
    # Most kills must land mid-game (the small pipe holds the run back), or this tests little.
    assert outcomes.count("resumed") >= KILLS * 0.8, outcomes
    print(f"{outcomes.count('resumed')} of {KILLS} kills landed mid-game")


def test_a_game_with_questions_killed_at_random_points_resumes_to_the_same_rulings(tmp_path: Path) -> None:
    """Lays asked and named later: a kill while a question is open leaves it open in the journal,
    with the presses that waited behind it, and the resumed run judges them when it is named."""
    import json

    from .test_questions import _ask

    lines = [json.loads(line) for line in _script(seed=56).splitlines()]
    asked = _ask(lines, random.Random(56), 12)
    script = tmp_path / "asked.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in asked))
    expected = [json.dumps(r.to_json()) for r in adjudicate(io.StringIO(script.read_text()), "game")]
    kills = 12
    outcomes = _kills(tmp_path, script, expected, kills, 2027)
    assert outcomes.count("resumed") >= kills * 0.7, outcomes
