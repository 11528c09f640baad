"""`referee adjudicate` on one long game: the msgspec reader beside the reader it replaced.

    .venv/bin/python benchmarks/bench_adjudicate.py [--lays 25000] [--seed 1] [--players 4]
        [--repeat 5]

The game is bench_engine.py's seeded driver (real cards, celtic, keep-alive so that one game
lasts): --lays 25000 makes a 35,524-line script, issue 20's long game. Both readers then
run it end to end through the command's own path, `cmd_adjudicate(args, out)`: the file
read line by line (64 KiB cap), decoded, checked, judged by the engine, each ruling encoded
and written to /dev/null. "old" is benchmarks/_old_script_reader.py, the code as it was
before msgspec (json.loads and the hand-written checks, questions.take for every event,
json.dumps for every ruling); "new" is referee/. Each run is a fresh process, old and new
taking turns, so that neither inherits the other's heap; their outputs are checked byte for
byte first.

Prints, best and median of --repeat runs: lines/s in the process (wall clock, and CPU time,
which other work on a shared machine disturbs less), the whole process's wall clock
(interpreter start-up and imports included), the ratio new/old, and for scale the engine
alone (`step` over the same events). It measures and prints; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

GOAL_RATIO = 3.0  # issue 20: at least three times the old reader's lines per second


def child(which: str, path: str) -> int:
    """One timed run in this (fresh) process; prints its figures as JSON."""
    from referee.cli import main as cli

    if which == "engine":
        from referee.rules.engine import step
        from referee.rules.script import read_script

        with open(path, "rb") as f:
            items = [item for _, item in read_script(f, path)]
        state, events = items[0], items[1:]
        wall, cpu = time.perf_counter(), time.process_time()
        for event in events:
            state, _ = step(state, event)  # type: ignore[arg-type]
        print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))
        return 0
    if which == "old":
        import _old_script_reader

        run = _old_script_reader.cmd_adjudicate
    else:
        run = cli.cmd_adjudicate
    args = cli.build_parser().parse_args(["adjudicate", path])
    with open(os.devnull, "w", encoding="utf-8") as out:
        wall, cpu = time.perf_counter(), time.process_time()
        status = run(args, out)
        figures = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    print(json.dumps(figures))
    return status


def spawn(which: str, path: Path) -> tuple[dict[str, float], float]:
    """A fresh process's run: its own figures, and its whole wall-clock time."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", which, str(path)], capture_output=True, text=True, check=False
    )
    whole = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the {which} run failed ({done.returncode}): {done.stderr[-800:]}")
    return json.loads(done.stdout.splitlines()[-1]), whole


def output_of(which: str, path: Path) -> bytes:
    """The rulings a reader writes for the script (through the same command path)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from referee.cli import main as cli; "
        + (
            "import _old_script_reader as m; run = m.cmd_adjudicate; "
            if which == "old"
            else "run = cli.cmd_adjudicate; "
        )
        + "args = cli.build_parser().parse_args(['adjudicate', sys.argv[2]]); run(args, sys.stdout)"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(HERE), str(path)], capture_output=True, check=True
    ).stdout


def write_game(path: Path, lays: int, seed: int, players: int) -> tuple[int, int]:
    from bench_engine import Driver, write_script

    driver = Driver(seed, players, keep_alive=True, rules="celtic")
    game = driver.run(lays)[0]
    return write_script(game, path), game.lays


def best_median(runs: list[float]) -> tuple[float, float]:
    return min(runs), statistics.median(runs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lays", type=int, default=25_000, help="lays in the game (default 25000)")
    parser.add_argument("--seed", type=int, default=1, help="seeds the deal and the driver (default 1)")
    parser.add_argument("--players", type=int, default=4, help="seats, 2-8 (default 4)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each reader (default 5)")
    parser.add_argument("--child", nargs=2, metavar=("WHICH", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)
    if args.lays < 1 or args.repeat < 1:
        parser.error("--lays and --repeat must be at least 1")

    out = print
    out("referee adjudicate: the msgspec reader beside the old one")
    out(f"  command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    out(f"  machine : {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}")
    out(f"  python  : {platform.python_implementation()} {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="bench-adjudicate-") as tmp:
        path = Path(tmp) / "game.jsonl"
        lines, lays = write_game(path, args.lays, args.seed, args.players)
        out(
            f"  game    : celtic, seed {args.seed}, {args.players} players: {lines:,} lines "
            f"({lays:,} lays), {path.stat().st_size / 1e6:.1f} MB"
        )
        old_out, new_out = output_of("old", path), output_of("new", path)
        if old_out != new_out:
            sys.exit("the two readers' rulings differ: no figures (tests/test_script_records.py)")
        rulings = new_out.count(b"\n")
        out(f"  rulings : {rulings:,}, byte-identical from both readers")
        runs: dict[str, dict[str, list[float]]] = {
            w: {"wall": [], "cpu": [], "whole": []} for w in ("old", "new", "engine")
        }
        for _ in range(args.repeat):
            for which in ("old", "new", "engine"):
                figures, whole = spawn(which, path)
                runs[which]["wall"].append(figures["wall"])
                runs[which]["cpu"].append(figures["cpu"])
                runs[which]["whole"].append(whole)

    out("")
    out(f"Figures, {args.repeat} runs of each (best, median); lines/s = {lines:,} lines / seconds")
    out(f"  {'':<36}{'old':>22}{'new':>22}{'new/old':>16}")
    for key, label in (
        ("wall", "in the process, wall clock"),
        ("cpu", "in the process, CPU time"),
        ("whole", "whole process (start-up included)"),
    ):
        (ob, om), (nb, nm) = best_median(runs["old"][key]), best_median(runs["new"][key])
        out(
            f"  {label:<36}{f'{lines / ob:,.0f} ({lines / om:,.0f})':>22}"
            f"{f'{lines / nb:,.0f} ({lines / nm:,.0f})':>22}{f'{ob / nb:.2f} ({om / nm:.2f})':>16}"
        )
    ratio = min(runs["old"]["cpu"]) / min(runs["new"]["cpu"])
    verdict = "met" if ratio >= GOAL_RATIO else "NOT met"
    out(f"  goal: new/old >= {GOAL_RATIO:.0f} in the process (CPU time, best): {ratio:.2f}, {verdict}")
    eb, em = best_median(runs["engine"]["cpu"])
    nb = min(runs["new"]["cpu"])
    out(
        f"  for scale: the engine alone (step over the same {lines - 1:,} events), CPU time: "
        f"{eb * 1e3:.0f} ms ({em * 1e3:.0f}), {eb / nb:.0%} of the new reader's best run; "
        f"the old reader's best: {min(runs['old']['cpu']) * 1e3:.0f} ms, the new: {nb * 1e3:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
