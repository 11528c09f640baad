"""Benchmark: whole demo games refereed through the camera, every preset, many seeds.

    .venv/bin/python benchmarks/bench_demo_camera.py              (80 games: about 25 minutes on 2 cores)
    .venv/bin/python benchmarks/bench_demo_camera.py --seeds 3    (a quick look)

Each game is `referee demo --rules R --headless --seed S`'s table without the terminal: bots
play, the simulator's table camera renders every lay and take, the pile watcher and the
built-in recogniser read the frames, and the live table loop judges them. When the camera
cannot read a card for sure the referee asks, and the demo's simulated host names it after
a human delay (1.5 to 4 s); a card the camera read wrong, or missed, the host corrects once
the players have seen it on the kiosk. Per preset it prints: games that reached a winner,
lays read, lays asked (unsure readings, and readings the deck made impossible), lays read
wrong and acted on until the host corrected them, lays missed, and the host's answer times.
A game whose referee saw a different winner than the bots' game counts as wrong.
The frames are the project's own renderer's, the recogniser's tuning data: these figures
say whether games hold together through asking, not how well cards are read on decks never
seen (benchmarks/bench_heldout.py says that).
Plain script: prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PRESETS = ("celtic", "classic", "paranoid", "party")


@dataclass(frozen=True)
class Game:
    preset: str
    seed: int
    won: bool  # the referee saw a winner
    right: bool  # ... the bots' own winner
    lays: int
    read: int
    asked: int
    unsure: int
    wrong: int
    missed: int
    corrections: int
    answers_us: tuple[int, ...]
    seconds: float
    error: str = ""


def play(preset: str, seed: int, players: int) -> Game:
    import cv2

    from referee.sim.bots import VirtualTable
    from referee.sim.demo_table import CameraStage, DemoTable

    cv2.setNumThreads(1)
    truth = None
    for p in VirtualTable(players=players, seed=seed, rules=preset).play():
        truth = p.state
    table = VirtualTable(players=players, seed=seed, rules=preset)
    stage = CameraStage(players, seed)
    demo = DemoTable(table, stage=stage, refused=lambda event, why: None)
    start = time.process_time()
    error = ""
    try:
        state = demo.run()
        winner = state.winner
    except Exception as e:  # reported, not hidden: a game the referee could not finish
        winner, error = None, f"{type(e).__name__}: {e}"
    return Game(
        preset,
        seed,
        winner is not None,
        truth is not None and winner == truth.winner,
        table.lays,
        stage.read,
        demo.questions,
        stage.asked,
        stage.wrong,
        stage.missed_lays,
        demo.corrections,
        tuple(demo.answer_us),
        time.process_time() - start,
        error,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rules", nargs="*", default=list(PRESETS))
    args = parser.parse_args()
    started = time.monotonic()
    jobs = [(preset, seed) for preset in args.rules for seed in range(1, args.seeds + 1)]
    with ProcessPoolExecutor(args.jobs) as pool:
        games = list(pool.map(play, *zip(*jobs, strict=True), [args.players] * len(jobs)))
    print(f"Command: {' '.join(sys.argv)}  ({args.players} bots, seeds 1-{args.seeds})")
    print()
    header = (
        "| preset | winner reached | the bots' winner | lays read | asked (unsure + impossible) "
        "| read wrong, acted on | missed | host's corrections | answer time |"
    )
    print(header)
    print("| --- |" + " ---: |" * 8)
    for preset in args.rules:
        rows = [g for g in games if g.preset == preset]
        answers = sorted(a for g in rows for a in g.answers_us)
        spread = f"{answers[0] / 1e6:.1f}-{answers[-1] / 1e6:.1f} s" if answers else "-"
        print(
            f"| {preset} | {sum(g.won for g in rows)} of {len(rows)} "
            f"| {sum(g.right for g in rows)} of {len(rows)} "
            f"| {sum(g.read for g in rows)} | {sum(g.asked for g in rows)} "
            f"({sum(g.unsure for g in rows)} + {sum(g.asked - g.unsure for g in rows)}) "
            f"| {sum(g.wrong for g in rows)} | {sum(g.missed for g in rows)} "
            f"| {sum(g.corrections for g in rows)} | {spread} |"
        )
    lays = sum(g.read + g.unsure for g in games)
    wrong = sum(g.wrong for g in games)
    print()
    print(
        f"All: {sum(g.won for g in games)} of {len(games)} games reached a winner, "
        f"{sum(g.right for g in games)} the bots' own; {lays} lays seen, "
        f"{sum(g.asked for g in games)} asked, {wrong} read wrong and acted on "
        f"({1000 * wrong / max(lays, 1):.1f} per 1000), {sum(g.missed for g in games)} missed."
    )
    for g in games:
        if g.error or not g.right:
            print(f"  {g.preset} seed {g.seed}: {g.error or 'another winner than the bots'}")
    print(
        f"CPU per game: {sum(g.seconds for g in games) / len(games):.1f} s; "
        f"wall {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
