"""The replay's cost: coding a frame, and what a ruling sink call costs while the disk hangs.

    .venv/bin/python benchmarks/bench_replay.py

Coding: a 640x480 and a 1280x720 frame shrunk to 640 px and coded at quality 75 (the
defaults), per frame, on this machine. The ruling path: `ClipRecorder.ruling` (the table
loop's sink) timed while the writer thread is stuck in a write that does not return until
the end (a hung disk): the sink only appends to the inbox, so its time must not depend on
the disk. Figures are printed, not asserted.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from referee.live.clip_store import ClipRecorder, ClipStore, encode_frame, write_file
from referee.rules.clips import ReplaySettings
from referee.rules.rulings import StackWon


def coding() -> None:
    rng = np.random.default_rng(1)
    for w, h in ((640, 480), (1280, 720)):
        image = rng.integers(60, 120, (h, w, 3), np.uint8)  # textured, like a table under a lamp
        times = []
        for _ in range(60):
            t0 = time.perf_counter()
            jpeg = encode_frame(image, 640, 75)
            times.append(time.perf_counter() - t0)
        print(f"code a {w}x{h} frame: median {statistics.median(times) * 1e3:.2f} ms, {len(jpeg) // 1024} KB")


def ruling_path() -> None:
    gate = threading.Event()

    def hung(path: Path, data: bytes) -> None:
        gate.wait()
        write_file(path, data)

    with tempfile.TemporaryDirectory() as folder:
        store = ClipStore(Path(folder), 10**9, write=hung)
        rec = ClipRecorder(
            store, ReplaySettings(), 30.0, lambda: 1, lambda: ("Ann", "Bob"), encode=lambda _: b"x" * 40_000
        )
        rec.start()
        for k in range(200):
            rec.frame(k * 33_333, None)
        times = []
        for i in range(2000):
            ruling = StackWon(10_000_000 + i * 10_000, 0, "snap", ("pair",), 4, 5_000, 0)
            t0 = time.perf_counter_ns()
            rec.ruling(ruling)
            times.append(time.perf_counter_ns() - t0)
            if i % 30 == 0:
                for k in range(30):
                    rec.frame(10_000_000 + i * 10_000 + k * 33_333, None)
        gate.set()
        rec.close()
        times.sort()
        p99 = times[int(len(times) * 0.99)]
        print(
            f"ruling sink while the disk hangs: p50 {times[len(times) // 2] / 1e3:.1f} us, "
            f"p99 {p99 / 1e3:.1f} us, max {times[-1] / 1e3:.1f} us ({len(times)} rulings; "
            f"clips dropped for the slow disk: {rec.dropped_clips})"
        )


if __name__ == "__main__":
    coding()
    ruling_path()
