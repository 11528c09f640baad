"""Benchmark the pile watcher alone: its own cost per frame, without reading a card.

    .venv/bin/python benchmarks/bench_watcher.py          (about 10 s)

A rendered clip of 8 lays from all four sides (seed 3, as tests/test_watcher.py's game),
its first 120 frames at 640x480 and resized to 1280x720, fed to a PileWatcher whose
recogniser reads nothing, so that only the watcher's own work (motion, rest, entry edge)
is timed. Thread CPU time on one core (OpenCV held to one thread), so that other processes
on the machine don't count. bench_vision.py's figure 3 times the watch loop with the
recogniser. Plain script: prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from hardware.frames import Frame
from referee.cards import deck
from referee.sim.render import render_lay_sequence
from referee.vision.watcher import PileWatcher

FPS = 30.0
SIDE_OF_SEAT = {0: "bottom", 1: "left", 2: "top", 3: "right"}
SIDES = {side: seat for seat, side in SIDE_OF_SEAT.items()}


def clip(seed: int, n: int) -> list[tuple[int, np.ndarray]]:
    rng = np.random.default_rng(seed)
    cards = list(deck(52))[5 * seed : 5 * seed + n]
    seats = [(i + seed) % 4 for i in range(n)]
    frames, _ = render_lay_sequence(cards, seats, SIDE_OF_SEAT, rng, FPS)
    return frames


def per_frame_ms(frames: list[tuple[int, np.ndarray]], size: tuple[int, int], rounds: int) -> list[float]:
    """Each round's mean thread CPU time per frame, in ms, a fresh watcher each round."""
    images = [(t, cv2.resize(image, size) if image.shape[1::-1] != size else image) for t, image in frames]
    out = []
    for _ in range(rounds):
        watcher = PileWatcher(lambda image, hint: (None, 0.0), SIDES, FPS)
        start = time.thread_time()
        for k, (t, image) in enumerate(images):
            watcher.feed(Frame(image, t, k))
        out.append((time.thread_time() - start) / len(images) * 1e3)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=120, help="frames of the clip fed each round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    frames = clip(args.seed, 8)[: args.frames]
    print("Pile watcher benchmark (no card read: the watcher's own cost)")
    print(f"  command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"  clip    : seed {args.seed}, {len(frames)} frames, {args.rounds} rounds, thread CPU time")
    print(f"  {'size':<12}{'median':>10}{'best':>10}{'worst':>10}  (ms per frame)")
    for size in ((640, 480), (1280, 720)):
        ms = per_frame_ms(frames, size, args.rounds)
        print(f"  {size[0]}x{size[1]:<7}{statistics.median(ms):>10.3f}{min(ms):>10.3f}{max(ms):>10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
