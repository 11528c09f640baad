"""Crash and damage, at benchmark scale: SIGKILL at 100 seeded points of each mode (a plain
game, a game with questions, a live rehearsal), and 2,000 seeded bit flips of a journal.

    .venv/bin/python benchmarks/bench_crash.py [--kills 100] [--flips 2000]

Prints, per mode, the kills that landed mid-game and the rulings told twice (the one being
told at the instant of the kill, announced again); and how many flipped journals read the
same as the undamaged one and how many were named on one line. Every assertion of
tests/test_crash_resume.py and tests/test_journal_damage.py holds at each point; `make test`
runs a sample of the same trials. Two trials run at once (the machine has 2 cores).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_crash_resume import _report, kills, live_mode, plain_mode, questions_mode
from tests.test_journal_damage import _flip_outcomes, _lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100, help="seeded kill points per mode (default 100)")
    parser.add_argument("--flips", type=int, default=2000, help="seeded bit flips (default 2000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n, make in enumerate((plain_mode, questions_mode, live_mode)):
            folder = root / make.__name__
            folder.mkdir()
            mode = make(folder)
            start = time.perf_counter()
            outcomes = kills(folder, mode, args.kills, 3000 + n)
            print(f"{_report(mode, outcomes)} ({time.perf_counter() - start:.0f} s)")
        from referee.live.journal import Journal

        pristine = root / "pristine"
        spec, lines = _lines()
        with Journal.open(pristine) as journal:
            game = journal.new_game(spec, "game.jsonl")
            for seq, line in enumerate(lines[:120]):
                journal.append(game, seq, line, seq + 2)
            journal.end_game(game, "stopped")
        (pristine / "journal.sqlite3.lock").unlink()
        work = root / "flips"
        work.mkdir()
        start = time.perf_counter()
        counts = _flip_outcomes(pristine, work, args.flips, 4000)
        took = time.perf_counter() - start
        print(
            f"bit flips: {args.flips} journals, {2 * args.flips} reads: {counts['same']} the same as "
            f"undamaged, {counts['named']} named on one line, 0 tracebacks ({took:.0f} s)"
        )


if __name__ == "__main__":
    main()
