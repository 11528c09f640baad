"""Benchmark the live table: event-time loop throughput, and press-to-signal latency.

    .venv/bin/python benchmarks/bench_loop.py          (about 30 s)

1. Throughput: whole bot games fed to the TableLoop as a live table would feed it
   (lays through the vision queue, each press as a press edge and a release edge
   through the button queue), judged behind the watermark. Shown side by side
   with the pure engine on the same events, so the loop's own cost is the ratio.
2. Press-to-signal latency: the live loop in its own thread, the signal player in
   its own thread, gpiozero mock pins. For each press: from the moment the pin's
   callback starts to the moment the pressing seat's LED pin changes. p50 and p99.
Plain script: prints figures, asserts nothing about time.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from hardware.presses import Edge
from referee.cards import parse_card
from referee.live.loop import FAR_FUTURE, TableLoop
from referee.rules.engine import finish, step
from referee.rules.events import Event, Lay, Snap
from referee.sim.bots import VirtualTable


def games(count: int, players: int) -> list[tuple[VirtualTable, list[Event]]]:
    out = []
    for seed in range(count):
        table = VirtualTable(players=players, seed=seed)
        events = [play.event for play in table.play() if play.event is not None]
        out.append((table, events))
    return out


def engine_pass(recorded: list[tuple[VirtualTable, list[Event]]]) -> tuple[float, int]:
    start = time.perf_counter()
    count = 0
    for table, events in recorded:
        state = table.spec.new_game()
        for event in events:
            state, _ = step(state, event)
        finish(state)
        count += len(events)
    return time.perf_counter() - start, count


def loop_pass(recorded: list[tuple[VirtualTable, list[Event]]]) -> tuple[float, int]:
    """Each game through a TableLoop: fed in arrival batches, pumped as a live loop would be."""
    start = time.perf_counter()
    count = 0
    for table, events in recorded:
        ruled: list[object] = []
        loop = TableLoop(table.spec.new_game(), {"camera": 150_000, "buttons": 5_000}, rulings=[ruled.append])
        for event in events:
            if type(event) is Snap:
                loop.put_edge(Edge(event.seat, event.t, True))
                loop.put_edge(Edge(event.seat, event.t + 60_000, False))
                count += 2
            else:
                loop.put_lay(event)  # type: ignore[arg-type]
                count += 1
            loop.pump(event.t)
        loop.pump(FAR_FUTURE)
        loop.finish()
    return time.perf_counter() - start, count


def press_to_signal(presses: int) -> list[float]:
    """us from the button callback to the seat LED's change, through both live threads."""
    from hardware.buttons import SnapButtons
    from hardware.clock import MonotonicClock
    from hardware.pins import VirtualFactory
    from hardware.signals import TableSignals
    from referee.live.signal_player import SignalPlayer
    from referee.rules.announcer import Announcer

    clock = MonotonicClock()
    factory = VirtualFactory(clock)
    seats = 8  # in rotation, each seat's 480 ms win flash is over before its next press
    signals = TableSignals([17, 22, 24, 12, 11, 9, 10, 26], pin_factory=factory)
    changed = threading.Event()
    watched: list[object] = [None]
    stamp = [0]
    apply = signals.apply

    def timed_apply(target: object, value: object) -> None:
        apply(target, value)  # type: ignore[arg-type]
        if target == watched[0] and not changed.is_set():
            stamp[0] = time.perf_counter_ns()
            changed.set()

    signals.apply = timed_apply  # type: ignore[method-assign]
    player = SignalPlayer(Announcer(seats), signals, clock)
    state = VirtualTable(players=seats, seed=1).spec.new_game()
    # Declared latencies 0: what is measured is the referee's own work, not a chosen wait.
    loop = TableLoop(state, {"buttons": 0, "camera": 0}, signals=[player.announce])
    queen = parse_card("QS")
    buttons = SnapButtons([4, 27, 23, 6, 25, 5, 13, 19], loop.put_edge, pin_factory=factory)
    thread = threading.Thread(target=loop.run, args=(clock,), daemon=True)
    thread.start()
    player.start()
    latencies = []
    try:
        for i in range(presses):
            seat = i % seats
            loop.put_lay(Lay(clock.now_us(), queen))  # a dark queen: the press wins, its LED flashes
            time.sleep(0.01)  # the card lands well before the press, as at a real table
            watched[0] = ("seat", seat)
            changed.clear()
            t0 = time.perf_counter_ns()
            buttons.buttons[seat].pin.edge(False, clock.now_us())
            if not changed.wait(5):
                raise RuntimeError(f"no signal for press {i}")
            latencies.append((stamp[0] - t0) / 1000)
            buttons.buttons[seat].pin.edge(True, clock.now_us())
            time.sleep(0.06)  # the next card comes after the win, as at a real table
    finally:
        loop.stop()
        thread.join()
        player.close()
        buttons.close()
        signals.close()
    return latencies


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="bot games for the throughput figure")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--presses", type=int, default=300, help="presses for the latency figure")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    print("Live-table benchmark")
    print(f"  command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"  machine : {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    recorded = games(args.games, args.players)
    engine_runs = [engine_pass(recorded) for _ in range(args.repeat)]
    loop_runs = [loop_pass(recorded) for _ in range(args.repeat)]
    engine_s, engine_events = min(engine_runs)
    loop_s, loop_events = min(loop_runs)
    print(f"\n1. Throughput over {args.games} bot games, best of {args.repeat}")
    per_engine, per_loop = 1e6 * engine_s / engine_events, 1e6 * loop_s / loop_events
    print(f"  engine alone          {engine_events / engine_s:>12,.0f} events/s  {per_engine:6.2f} us/event")
    rate = loop_events / loop_s
    print(f"  table loop            {rate:>12,.0f} events/s  {per_loop:6.2f} us/event   goal >= 20,000")
    print(f"  loop / engine cost    {(loop_s / loop_events) / (engine_s / engine_events):>12.2f}x per event")

    latencies = press_to_signal(args.presses)
    q = statistics.quantiles(latencies, n=100)
    print(f"\n2. Press-to-signal latency over {len(latencies)} presses (callback -> seat LED pin)")
    print(f"  p50 {q[49]:8.1f} us   p99 {q[98]:8.1f} us   max {max(latencies):8.1f} us   goal p99 <= 1000 us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
