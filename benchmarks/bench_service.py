"""The service's figures: the journal's cost per event, and start to READY.

    .venv/bin/python benchmarks/bench_service.py [--events 2000] [--starts 5]

1. The journal's cost per event: each event committed on its own, as `referee run`
   does (WAL, synchronous=FULL: an fsync a commit), beside synchronous=NORMAL (no
   fsync at commit: what a power cut could lose) and beside no journal at all, on
   the same events in one run. Also a whole game judged by `referee run --at-once`
   beside `referee adjudicate` on it, end to end.
2. Start to READY: `referee run` started as systemd starts it (NOTIFY_SOCKET set),
   from the process's spawn to its READY=1 datagram, for a rehearsal script and
   for a camera source (an image folder: the recogniser and OpenCV load first).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.live.journal import Journal  # noqa: E402
from referee.rules.script import event_to_json  # noqa: E402
from referee.sim.bots import VirtualTable  # noqa: E402


def game_script(seed: int = 3) -> tuple[str, list[dict]]:
    table = VirtualTable(players=3, seed=seed)
    events = [event_to_json(p.event) for p in table.play() if p.event is not None]
    text = "\n".join([json.dumps(table.spec.to_json()), *map(json.dumps, events)]) + "\n"
    return text, events


def journal_cost(events: list[dict], folder: Path) -> None:
    print(f"\n1. The journal's cost per event ({len(events)} events of a 3-bot game, one commit each)")
    rows = []
    for mode in ("FULL", "NORMAL"):
        with Journal.open(folder / mode) as journal:
            if mode != "FULL":
                journal._db.execute(f"PRAGMA synchronous={mode}")
            game = journal.new_game({"game": {"players": ["Ann", "Bob", "Cy"]}})
            start = time.perf_counter()
            for seq, line in enumerate(events):
                journal.append(game, seq, line)
            rows.append((f"WAL, synchronous={mode}", (time.perf_counter() - start) / len(events)))
    start = time.perf_counter()
    for line in events:
        json.dumps(line)  # what the journal does besides SQLite: the line's JSON
    rows.append(("no journal (the line's JSON only)", (time.perf_counter() - start) / len(events)))
    full = rows[0][1]
    for name, per in rows:
        print(f"  {name:<36}{per * 1e6:10.1f} us/event   {per / full:6.3f} x FULL")
    print("  FULL is what referee run uses: an event is on the disk before its rulings go out.")


def end_to_end(text: str, folder: Path) -> None:
    script = folder / "game.jsonl"
    script.write_text(text)
    config = folder / "referee.toml"
    config.write_text(
        f'[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\npins = "mock"\n'
        f'[service]\ndata_dir = "{folder / "e2e"}"\nkiosk = false\n'
    )
    n = len(text.splitlines()) - 1
    runs = {
        "referee adjudicate": [sys.executable, "-m", "referee.cli.main", "adjudicate", str(script)],
        "referee run --at-once (journaled)": [
            *(sys.executable, "-m", "referee.cli.main", "run", "--config", str(config)),
            *("--lays-from", str(script), "--at-once", "--new-game"),
        ],
    }
    times = {}
    for name, argv in runs.items():
        best = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
            best.append(time.perf_counter() - start)
        times[name] = min(best)
    print(f"\n   A whole game end to end ({n} events, best of 3, process start included):")
    base = times["referee adjudicate"]
    for name, t in times.items():
        print(f"  {name:<36}{t * 1000:10.0f} ms   {t / base:6.2f} x adjudicate   {t / n * 1e6:8.0f} us/event")


def start_to_ready(folder: Path, starts: int) -> None:
    import cv2
    import numpy as np

    from referee.cards import parse_card
    from referee.sim.render import render_lay_sequence

    frames, _ = render_lay_sequence([parse_card("7H")], [0], {0: "bottom"}, np.random.default_rng(1))
    clip = folder / "clip"
    clip.mkdir()
    for i, (_, image) in enumerate(frames[:3]):
        cv2.imwrite(str(clip / f"f{i}.png"), image)
    lays = folder / "lays.jsonl"
    lays.write_text('{"t": 1000000, "lay": "7H"}\n')
    print(f"\n2. Start to READY (spawn to the READY=1 datagram, median of {starts})")
    for name, camera, extra in (
        ("rehearsal script (--lays-from)", "", ["--lays-from", str(lays)]),
        ("camera source (image folder)", f'[camera]\nsource = "{clip}"\n', []),
    ):
        config = folder / f"ready-{len(extra)}.toml"
        config.write_text(
            f'[table]\nplayers = ["Ann", "Bob"]\n[hardware]\npins = "mock"\n'
            f'[service]\ndata_dir = "{folder / "ready"}"\nkiosk = false\n{camera}'
        )
        took = []
        for i in range(starts):
            path = folder / f"notify{len(extra)}-{i}"
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            listener.bind(str(path))
            listener.settimeout(60)
            env = {**os.environ, "NOTIFY_SOCKET": str(path)}
            start = time.perf_counter()
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "referee.cli.main",
                    "run",
                    "--config",
                    str(config),
                    "--new-game",
                    *extra,
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            while not listener.recv(4096).startswith(b"READY=1"):
                pass
            took.append(time.perf_counter() - start)
            proc.wait()
            listener.close()
        print(f"  {name:<36}{statistics.median(took) * 1000:10.0f} ms   (min {min(took) * 1000:.0f} ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5, help="starts to time for READY")
    args = parser.parse_args()
    print("Service benchmark")
    print(f"  command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"  sqlite  : {sqlite3.sqlite_version}, on {tempfile.gettempdir()}")
    text, events = game_script()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        journal_cost(events, folder)
        end_to_end(text, folder)
        start_to_ready(folder, args.starts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
