"""Benchmark the simulator's table camera: its speed, and what the watcher makes of a whole game.

    .venv/bin/python benchmarks/bench_table_camera.py          (about 4 minutes)

The table events are a bot game's (`referee.sim.bots.VirtualTable`), turned into lays and takes as
the demo's table turns them (each lay by the seat the referee ruled laid it, each won stack
swept off 0.3 to 0.7 s after the win), told to a `TableCamera` at their own times, the frames
pulled with `frames_ready` as a simulation that learns its events as they happen pulls them.

1. Speed, on one core (OpenCV held to one thread), in thread CPU time: a 200-lay game rendered
   alone, then rendered and watched (PileWatcher and the built-in Recogniser, the cards seen
   since the last `cleared` passed to it, as `referee watch` runs them), at 640x480 with
   140-px cards, 480x360 with 105-px cards and 320x240 with 70-px cards.
2. What the watcher sees over a long game (500 lays): misses, duplicates, wrong cards, seats
   wrong or not named, stamps against the camera's rests, frames from rest to report, and
   `cleared` against the takes; with the project's own cards and, when installed, a Debian theme.
Plain script: prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np

from hardware.frames import Frame
from referee.cards import Card
from referee.rules.events import Lay
from referee.rules.rulings import Laid, StackWon
from referee.sim.bots import VirtualTable
from referee.sim.card_themes import available_themes, theme_cards
from referee.sim.demo_table import PICKUP_US
from referee.sim.table_camera import TableCamera, frame_at_or_after, frame_time
from referee.vision.recogniser import Recogniser
from referee.vision.watcher import PileWatcher, WatchEvent, WatchLay

SIZES = (((640, 480), 140), ((480, 360), 105), ((320, 240), 70))
THEME = "anglo"
TOLERANCE = 2  # frames: a lay this close to a rest counts as its lay (the stamp is reported apart)

TableEvent = tuple[str, int, Card | None, int, int]  # (kind, t_us, card, seat, when it is told)


def bot_game(players: int, seed: int, lays: int) -> list[TableEvent]:
    """A bot game's lays and takes in time order, as `DemoTable` hands them to its lay stage."""
    table = VirtualTable(players=players, seed=seed, cap=lays)
    pickup = random.Random(seed)
    events: list[TableEvent] = []
    taken: set[tuple[int, int]] = set()
    for play in table.play():
        event = play.event
        if type(event) is Lay:
            laid = next((r for r in play.rulings if type(r) is Laid), None)
            seat = laid.seat if laid is not None else event.seat
            if seat is not None:
                events.append(("lay", event.t, event.card, seat, event.t))
        won = [r for r in play.rulings if type(r) is StackWon]
        if play.state.deferred is not None:
            won.append(play.state.deferred.won)
        for r in won:
            if (r.t, r.seat) not in taken:
                taken.add((r.t, r.seat))
                events.append(("take", r.t + pickup.randint(*PICKUP_US), None, r.seat, event.t))
    return events


def bot_games(players: int, seed: int, lays: int) -> list[TableEvent]:
    """`lays` lays of bot games (seed, seed + 1, ...) played one after another on one table: a game
    won early is followed, 2 s later, by the next, its pile swept off first."""
    events: list[TableEvent] = []
    while True:
        game = bot_game(players, seed, lays)
        if events:
            end = max(e[1] for e in events)
            if max(e[1] for e in events if e[0] == "lay") > max(
                (e[1] for e in events if e[0] == "take"), default=0
            ):
                events.append(("take", end + 1_000_000, None, 0, end))  # the last game's stack
            offset = end + 2_000_000
            game = [(kind, t + offset, card, seat, told + offset) for kind, t, card, seat, told in game]
        for event in game:
            lays -= event[0] == "lay"
            events.append(event)
            if lays == 0:
                return events
        seed += 1


def pulled(camera: TableCamera, events: list[TableEvent]) -> Iterator[tuple[int, Frame]]:
    """The frames as the demo's table would pull them: at each event's moment, the frames ready,
    then the event (a take is told when the stack is won, for the moment it will be swept off).
    Each frame comes with how late it is: how far the simulation's clock had already passed its
    time when it was pulled (0 when it came in time)."""
    clock = 0
    for kind, t, card, seat, told in events:
        for frame in camera.frames_ready(told):
            yield max(0, clock - frame.t_us), frame
        clock = told
        if kind == "lay":
            assert card is not None
            camera.lay(t, card, seat)
        else:
            camera.take(t, seat)
    for frame in camera.finish():
        yield max(0, clock - frame.t_us), frame


def frames(camera: TableCamera, events: list[TableEvent]) -> Iterator[Frame]:
    return (frame for _, frame in pulled(camera, events))


def watcher(camera: TableCamera, recogniser: Recogniser) -> tuple[PileWatcher, set[str]]:
    seen: set[str] = set()
    watch = PileWatcher(
        lambda image, mask: recogniser.recognise(image, mask, frozenset(seen)), camera.watcher_sides
    )
    return watch, seen


def figure_speed(players: int, seed: int, lays: int, repeat: int) -> None:
    cv2.setNumThreads(1)
    events = bot_games(players, seed, lays)
    recogniser = Recogniser()
    print(
        f"\n1. Speed: a {lays}-lay game of {players} bots (seed {seed}), one core, thread CPU time, "
        f"best of {repeat}"
    )
    print(
        f"  {'frame':<10}{'card':>6}{'frames':>8}{'render':>14}{'render + watch':>17}{'watch':>11}"
        f"{'lays seen':>11}"
    )
    for size, card_width in SIZES:
        render_s = both_s = math.inf
        for _ in range(repeat):
            camera = TableCamera(players, np.random.default_rng(seed), size=size, card_width=card_width)
            start = time.thread_time()
            n = sum(1 for _ in frames(camera, events))
            render_s = min(render_s, time.thread_time() - start)
            camera = TableCamera(players, np.random.default_rng(seed), size=size, card_width=card_width)
            watch, seen = watcher(camera, recogniser)
            got = 0
            start = time.thread_time()
            for frame in frames(camera, events):
                for event in watch.feed(frame):
                    if type(event) is WatchLay:
                        seen.add(event.card.code)
                        got += 1
                    else:
                        seen.clear()
            both_s = min(both_s, time.thread_time() - start)
        told = sum(e[0] == "lay" for e in events)
        print(
            f"  {size[0]}x{size[1]:<6}{card_width:>4}px{n:>8}{n / render_s:>10.0f} f/s{n / both_s:>13.0f} f/s"
            f"{1000 * (both_s - render_s) / n:>8.2f} ms{got:>6} / {told}"
        )
    print("  render: frames per second of the camera alone; render + watch: with the pile watcher and")
    print("  the recogniser on every frame; watch: their cost per frame. The outline search takes cards")
    print("  90 px wide and up (outline.MIN_WIDTH): at 320x240 the cards are 70 px, and go unread.")


def score(camera: TableCamera, got: list[tuple[WatchEvent, int]], fps: float) -> dict[str, object]:
    """The watcher's events against the camera's rests: `got` is each event with the frame it came on."""
    rests = [(frame_at_or_after(s.t_us, fps), s) for s in camera.shown]
    lays = [(k, s) for k, s in rests if s.kind == "lay"]
    takes, bare = [], True
    for k, s in rests:  # a take of a table with no card since the last one has nothing to clear
        if s.kind == "take" and not bare:
            takes.append(k)
        bare = s.kind == "take"
    matched: dict[int, tuple[WatchLay, int]] = {}
    strays = 0
    for event, at in got:
        if type(event) is not WatchLay:
            continue
        k = frame_at_or_after(event.t_us, fps)
        hit = next((i for i, (r, _) in enumerate(lays) if i not in matched and abs(r - k) <= TOLERANCE), None)
        if hit is None:
            strays += 1
        else:
            matched[hit] = (event, at)
    cleared = {frame_at_or_after(e.t_us, fps) for e, _ in got if type(e) is not WatchLay}
    stamps = [frame_at_or_after(e.t_us, fps) - lays[i][0] for i, (e, _) in matched.items()]
    delays = [at - lays[i][0] for i, (_, at) in matched.items()]
    put_off = [s.t_us - frame_time(frame_at_or_after(s.asked_us, fps), fps) for s in camera.shown]
    return {
        "lays": len(lays),
        "misses": len(lays) - len(matched),
        "strays": strays,
        "wrong": [
            f"{lays[i][1].card.code} as {e.card.code}"
            for i, (e, _) in matched.items()
            if e.card != lays[i][1].card
        ],
        "wrong seat": sum(e.seat is not None and e.seat != lays[i][1].seat for i, (e, _) in matched.items()),
        "no seat": sum(e.seat is None for e, _ in matched.values()),
        "stamps": (min(stamps, default=0), max(stamps, default=0)),
        "report": max(delays, default=0),
        "takes": len(takes),
        "cleared": sum(k in cleared for k in takes),
        "stray cleared": len(cleared - set(takes)),
        "put off": {
            kind: [d / 1000 for d, s in zip(put_off, camera.shown, strict=True) if d > 0 and s.kind == kind]
            for kind in ("lay", "take")
        },
    }


def figure_accuracy(players: int, seed: int, lays: int) -> None:
    events = bot_games(players, seed, lays)
    recogniser = Recogniser()
    decks: list[tuple[str, dict | None, str]] = [("own style (classic), green cloth", None, "green_cloth")]
    if THEME in available_themes():
        decks.append((f"Debian {THEME}, wood, glare 0.2", theme_cards(THEME, 250), "wood"))
    print(
        f"\n2. A {lays}-lay game of {players} bots (seed {seed}) through the watcher, 640x480, 140-px cards"
    )
    for name, faces, table in decks:
        glare = 0.2 if faces is not None else 0.0
        camera = TableCamera(players, np.random.default_rng(seed), table=table, faces=faces, glare=glare)
        watch, seen = watcher(camera, recogniser)
        got: list[tuple[WatchEvent, int]] = []
        late: list[int] = []  # per lay reported, how late the frame it came on was pulled
        last = 0
        for behind, frame in pulled(camera, events):
            last = frame.index
            for event in watch.feed(frame):
                got.append((event, last))
                if type(event) is WatchLay:
                    late.append(behind)
                    seen.add(event.card.code)
                else:
                    seen.clear()
        got += [(event, last) for event in watch.finish()]
        r = score(camera, got, camera.fps)
        print(f"  {name}")
        print(
            f"    lays {r['lays']}: misses {r['misses']}, duplicates or strays {r['strays']}, wrong card "
            f"{len(r['wrong'])} {r['wrong']}, wrong seat {r['wrong seat']}, no seat {r['no seat']}"
        )
        print(
            f"    stamp against rest {r['stamps'][0]:+d}..{r['stamps'][1]:+d} frames, rest to report <= "
            f"{r['report']} frames; takes {r['takes']}: cleared {r['cleared']}, stray cleared "
            f"{r['stray cleared']}"
        )
        off = {kind: ", ".join(f"{ms:.0f}" for ms in by) for kind, by in r["put off"].items()}
        print(
            f"    put off: {len(r['put off']['lay'])} lays (by {off['lay'] or 0} ms), "
            f"{len(r['put off']['take'])} takes (by {off['take'] or 0} ms); lays reported on a frame "
            f"pulled late: {sum(b > 0 for b in late)} (the latest {max(late, default=0) / 1000:.0f} ms "
            "behind the clock)"
        )
    print("  A lay is put off when it comes under 4 frames after the last rest (an out-of-turn lay 80 to")
    print("  100 ms after another), a take when it is told after its moment (a snap's stack ruled won a")
    print("  second after the press); `shown` records when, and the stamps are against that. A frame is")
    print("  pulled late when the simulation's clock has passed it before it is ready: a doubtful reading")
    print("  read again on the next frames, with the next event coming soon.")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed-lays", type=int, default=200)
    parser.add_argument("--lays", type=int, default=500, help="lays of the accuracy game")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the speed figure, the best kept")
    args = parser.parse_args(argv)
    print("Table camera benchmark")
    print(f"  command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    figure_speed(args.players, args.seed, args.speed_lays, args.repeat)
    figure_accuracy(args.players, args.seed, args.lays)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
