"""Do phones watching the kiosk delay a ruling? A demo table with 0 and with 200 viewers.

    .venv/bin/python benchmarks/bench_viewers.py [--viewers 200] [--seconds 20] [--speed 4]

The demo's table (the bots, the GPIO buttons' reader on its double, the live table loop) plays
the same seeded game twice, paced on the wall clock, its rulings fed to a kiosk hub served by
the kiosk's own server (uvicorn in a thread of this process, as `referee run` serves it):
once with no viewer, once with `--viewers` event streams open, each from its own loopback
address (127.0.0.2, 127.0.0.3...: one phone each, so the per-client connection cap is the
real one) in a separate process, which reads every view as a phone's browser would.

Ruling latency: from the moment the input that decides a ruling is due on the wall clock (the
table's pace: its start plus the input's table time over --speed) to the ruling handed to the
kiosk's hub (`hub.add` returned) in the table's thread. It is what a viewer could delay: the
server's thread shares the process (and the GIL) with the table's. The time from the ruling to
the last viewer's copy of it is printed too (each viewer's first view at least as new). Plain
script: prints figures, asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hardware.clock import MonotonicClock  # noqa: E402
from referee.kiosk.app import KioskHub, make_app  # noqa: E402
from referee.kiosk.server import KioskServer  # noqa: E402
from referee.kiosk.view import TableView  # noqa: E402
from referee.sim.bots import VirtualTable  # noqa: E402
from referee.sim.demo_table import DemoTable  # noqa: E402

# The viewers: asyncio streams reading Server-Sent Events, each from its own loopback address;
# on stdin's end they print, per viewer, the versions they got and when (time.time()).
VIEWERS = textwrap.dedent(
    """
    import asyncio, json, sys, time

    async def viewer(i, port, got, ready):
        local = (f"127.0.{1 + i // 250}.{2 + i % 250}", 0)
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=local)
        writer.write(f"GET /events HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n".encode())
        await writer.drain()
        seen = []
        got.append(seen)
        while True:
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"id: "):
                seen.append((int(line[4:]), time.time()))
                if len(seen) == 1:
                    ready.append(i)

    async def main(n, port):
        got, ready = [], []
        tasks = [asyncio.create_task(viewer(i, port, got, ready)) for i in range(n)]
        while len(ready) < n:
            await asyncio.sleep(0.05)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        for t in tasks:
            t.cancel()
        print(json.dumps(got), flush=True)

    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
    """
)


def run(viewers: int, seconds: float, speed: float, seed: int) -> tuple[list[float], list[float], int]:
    """One game paced for `seconds`: the ruling latencies (ms), the latencies to the last viewer
    (ms), and how many rulings."""
    table = VirtualTable(players=4, seed=seed, cap=100_000)
    hub = KioskHub(TableView(table.spec.new_game(), t0=0))
    server = KioskServer(make_app(hub, "t" * 32, None), hub, port=0, per_client=4)
    server.start()
    child = None
    if viewers:
        child = subprocess.Popen(
            [sys.executable, "-c", VIEWERS, str(viewers), str(server.port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    clock = MonotonicClock()
    started: list[int] = []
    latencies: list[float] = []
    made: list[tuple[int, float]] = []  # (the hub's version, when the ruling was handed over)
    demo: DemoTable

    def pace(t: int) -> None:
        started[:] = started or [clock.now_us() - round(t / speed)]
        clock.sleep_until(started[0] + round(t / speed))

    def rulings(batch: list, after: object) -> None:
        due = (started[0] + demo.clock.now_us() / speed) / 1e6  # this input's moment, wall clock
        for ruling in batch:
            hub.add(ruling, after)  # type: ignore[arg-type]
        now = clock.now_us() / 1e6
        made.append((hub.version, time.time()))
        latencies.extend([(now - due) * 1000] * len(batch))

    end = time.monotonic() + seconds
    demo = DemoTable(table, rulings=rulings)
    demo.run(pace=pace, stop=lambda: time.monotonic() > end)
    to_last: list[float] = []
    if child is not None:
        out, _ = child.communicate("")
        got = json.loads(out.strip().splitlines()[-1])
        for version, when in made:
            firsts = [next((at for v, at in seen if v >= version), None) for seen in got]
            if all(at is not None for at in firsts):
                to_last.append((max(firsts) - when) * 1000)  # type: ignore[type-var]
    server.stop()
    return latencies, to_last, len(latencies)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0, help="wall time each run plays (default 20)")
    parser.add_argument("--speed", type=float, default=4.0, help="the table's pace: 4 = four times real time")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"{platform.node()} · {platform.processor() or platform.machine()} · {os.cpu_count()} CPUs")
    print(
        f"demo table: 4 bots, seed {args.seed}, {args.speed:g}x real time, {args.seconds:g} s a run; "
        f"the same game with 0 and with {args.viewers} viewers"
    )
    results = {n: run(n, args.seconds, args.speed, args.seed) for n in (0, args.viewers)}
    print(f"\n{'ruling latency (ms)':<34}{'0 viewers':>12}{f'{args.viewers} viewers':>14}")
    (base, _, n0), (loaded, to_last, n1) = results[0], results[args.viewers]
    print(f"{'rulings':<34}{n0:>12}{n1:>14}")
    for name, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
        print(f"{'  ' + name:<34}{pct(base, q):>12.2f}{pct(loaded, q):>14.2f}")
    print(f"{'  mean':<34}{statistics.fmean(base):>12.2f}{statistics.fmean(loaded):>14.2f}")
    if to_last:
        print(
            f"\nruling to the last of {args.viewers} viewers: p50 {pct(to_last, 0.5):.1f} ms, "
            f"p99 {pct(to_last, 0.99):.1f} ms, max {max(to_last):.1f} ms ({len(to_last)} handovers)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
