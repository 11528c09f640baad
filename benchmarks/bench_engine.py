"""Benchmark the rules engine and `referee adjudicate` on one long, legal, seeded game.

    .venv/bin/python benchmarks/bench_engine.py [--lays N] [--seed S] [--repeat R]
        [--e2e-repeat R] [--players P] [--no-keep-alive] [--rules PRESET,...]

It measures and prints; it asserts nothing about time. The figures:

1. engine: `step` alone over the recorded events of each preset's game (every preset by
   default, side by side): lays/s and us/event;
2. end to end, for the first preset of --rules (celtic): `referee adjudicate FILE >
   /dev/null` as a subprocess, and the same work in process (adjudicate + json.dumps of
   each ruling), so that interpreter start-up and imports show as the difference;
3. O(1) per lay (celtic): the cost of one lay onto a stack of 1-5 cards and onto one of 40-50.

The game is generated in a first pass by a driver that keeps the real cards (which card
each seat holds, in which order) and moves them as the referee rules, checking after every
event that its piles match the referee's card counts (burns, the penalty pile, a seat out
and a card taken back move the cards as the referee says). Only the second pass, a replay of the
recorded events from a fresh deal, is timed. So that one game (one table script) lasts the
whole benchmark, the driver keeps it alive: once a seat holds a third of the cards or more,
the poorest seat snaps every valid stack (--no-keep-alive lets games end; they are then
replayed back to back, and the script holds the first one).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.cards import Card, deck
from referee.rules.engine import MAX_PLAYERS, MIN_PLAYERS, Celtic, step
from referee.rules.events import Event, Lay, Snap, Wait
from referee.rules.presets import PRESETS, rules_for
from referee.rules.rulings import Burned, Laid, Ruling, SeatOut, StackWon, TakeBack
from referee.rules.script import GameSpec, adjudicate, event_to_json
from referee.rules.state import Hold, State

MS = 1000  # microseconds
START_US = 1_000_000
TEMPO_US = (300 * MS, 900 * MS)  # from one lay to the next
REACTION_US = (150 * MS, 400 * MS)  # from a lay to a press
SNAP_CHANCE = 1 / 8  # a random seat presses after a lay, valid stack or not
SECOND_PRESS_CHANCE = 0.25  # another seat presses too: a race (late press) or a dead heat
DEAD_HEAT_CHANCE = 0.1  # of second presses: at the same microsecond
HOLD_SNAP_CHANCE = 0.4  # someone presses during a claim hold rather than let it run out
OUT_OF_TURN_CHANCE = 1 / 250  # per lay: a seat not on turn lays (named seat)
# Keep-alive, so that one game lasts the whole benchmark: once a seat holds this share of
# the cards, every valid stack is snapped by the poorest seat that may snap.
DANGER_SHARE = 0.35
CHECK_STACK_EVERY = 1009  # steps between full comparisons of the stack with the model

GOAL_ENGINE_LAYS_PER_S = 200_000
GOAL_E2E_LINES_PER_S = 50_000


# Pass 1: a long random but legal game ---------------------------------------------------------


@dataclass
class Game:
    """One game as recorded: its game line, its events, and what the driver saw happen."""

    spec: GameSpec
    events: list[Event] = field(default_factory=list)
    lays: int = 0
    rulings: Counter[str] = field(default_factory=Counter)
    winner: int | None = None
    final: State | None = None


class Driver:
    """Plays seeded random games against the engine, holding the real cards.

    A lay without a seat is made by the seat on turn with the top card of its pile; a won
    stack goes under the winner's pile, at the press (a snap win is announced only once
    its margin is known, but the cards change hands at once). Presses are settled with a
    Wait before the next lay whenever they change the table, so that the driver always
    knows whose card comes next.
    """

    def __init__(self, seed: int, players: int, keep_alive: bool = True, rules: str = "celtic") -> None:
        self.rng = random.Random(seed)
        self.n = players
        self.spec = GameSpec(tuple(f"P{seat}" for seat in range(players)), rules)
        self.keep_alive = keep_alive
        self.now = START_US
        self.total_lays = 0
        self.steps = 0
        self.kept_alive = 0  # lays after which the keep-alive rule chose the presses
        self.games: list[Game] = []
        self._new_game()

    def _new_game(self) -> None:
        cards = deck(52)
        self.rng.shuffle(cards)
        self.piles: list[deque[Card]] = [deque(cards[seat :: self.n]) for seat in range(self.n)]
        self.stack: list[Card] = []  # bottom first, burned cards included
        self.burned: set[Card] = set()  # of those, the ones face down (the referee never saw them)
        self.penalty_pile: list[Card] = []
        self.state: State = self.spec.new_game()
        self.moved: StackWon | None = None  # the deferred snap win whose cards already moved
        self.game = Game(self.spec)
        self.games.append(self.game)
        self._check()

    def run(self, lays: int) -> list[Game]:
        while self.total_lays < lays:
            s = self.state
            if s.winner is not None:
                self.game.winner, self.game.final = s.winner, s
                self.now += 10_000 * MS
                self._new_game()
            elif s.hold is not None:
                self._during_hold(s.hold)
            else:
                self._turn()
        self.game.final = self.state
        return self.games

    # Choices ------------------------------------------------------------------------------

    def _turn(self) -> None:
        rng, s = self.rng, self.state
        t = self.now + rng.randint(*TEMPO_US)
        if rng.random() < OUT_OF_TURN_CHANCE:
            seat = rng.randrange(self.n)
            if seat != s.turn and s.hands[seat]:
                self._lay(t, seat)
                return
        self._lay(t, None)

    def _during_hold(self, hold: Hold) -> None:
        rng, s = self.rng, self.state
        earliest = self.now + REACTION_US[0]
        takes_all = s.hands[hold.owner] + s.size == s.total
        force = self.keep_alive and (takes_all or self._danger())
        if earliest < hold.until and (force or rng.random() < HOLD_SNAP_CHANCE):
            seat = self._poorest(exclude=hold.owner) if force else rng.randrange(self.n)
            self._presses(min(self.now + rng.randint(*REACTION_US), hold.until - 1), seat, race=not force)
        elif earliest < hold.until and rng.random() < OUT_OF_TURN_CHANCE * 10:
            seat = rng.randrange(self.n)
            if s.hands[seat]:  # during a hold every lay names its seat
                self._lay(self.now + rng.randint(80 * MS, 150 * MS), seat)
        else:
            self._emit(Wait(hold.until))

    def _react(self) -> None:
        """After a lay: perhaps a press (valid or wrong), perhaps a keep-alive snap."""
        rng, s = self.rng, self.state
        if s.winner is not None:
            return
        if self.keep_alive and self._danger():
            self.kept_alive += 1
            # Keep-alive: the poorest seat snaps every valid stack; wrong snaps only penalise
            # the richest seat, so that the poor stay free to snap.
            if s.snap_reasons():
                seat = self._poorest()
            elif rng.random() < SNAP_CHANCE:
                seat = max(range(self.n), key=lambda x: (s.hands[x], rng.random()))
            else:
                return
            self._presses(self.now + rng.randint(*REACTION_US), seat, race=False)
            return
        if rng.random() < SNAP_CHANCE:
            seat = rng.randrange(self.n)
        else:
            return
        self._presses(self.now + rng.randint(*REACTION_US), seat)

    def _presses(self, t: int, seat: int, race: bool = True) -> None:
        rng = self.rng
        self._emit(Snap(t, seat))
        last = t
        if race and rng.random() < SECOND_PRESS_CHANCE:
            other = rng.choice([x for x in range(self.n) if x != seat])
            last = t if rng.random() < DEAD_HEAT_CHANCE else t + rng.randint(5 * MS, 120 * MS)
            self._emit(Snap(last, other))
        self._settle(last + rng.randint(1 * MS, 50 * MS))

    def _danger(self) -> bool:
        s = self.state
        return max(s.hands) >= DANGER_SHARE * s.total

    def _poorest(self, exclude: int | None = None) -> int:
        s, rng = self.state, self.rng
        seats = [
            x for x in range(self.n) if x != exclude and not s.out >> x & 1
        ] or [  # the out press in vain
            x for x in range(self.n) if x != exclude
        ]
        free = [x for x in seats if not s.penalised >> x & 1] or seats
        return min(free, key=lambda x: (s.hands[x], rng.random()))

    # Events -------------------------------------------------------------------------------

    def _lay(self, t: int, seat: int | None) -> None:
        layer = self.state.turn if seat is None else seat
        assert layer is not None
        self._emit(Lay(t, self.piles[layer].popleft(), seat))
        self.game.lays += 1
        self.total_lays += 1
        self._react()

    def _settle(self, t: int) -> None:
        """If the presses waiting change the table once time moves on, record a Wait now."""
        s = self.state
        if s.pending_t is None:
            return
        probe, rulings = step(s, Wait(t))
        if (probe.hands, probe.turn, probe.hold, probe.winner) != (s.hands, s.turn, s.hold, s.winner):
            self._record(Wait(t), s, probe, rulings)

    def _emit(self, event: Event) -> None:
        prev = self.state
        state, rulings = step(prev, event)
        self._record(event, prev, state, rulings)

    def _record(self, event: Event, prev: State, state: State, rulings: list[Ruling]) -> None:
        self.game.events.append(event)
        self.now = event.t
        self.state = state
        counts = self.game.rulings
        for ruling in rulings:
            kind = type(ruling)
            detail = getattr(ruling, "by", None) or getattr(ruling, "reason", None)
            counts[f"{kind.event}:{detail}" if detail else kind.event] += 1  # type: ignore[attr-defined]
            if kind is Laid:
                self.stack.append(ruling.card)  # type: ignore[union-attr]
            elif kind is TakeBack:
                self.piles[ruling.seat].appendleft(self.stack.pop())  # type: ignore[union-attr]
            elif kind is Burned or kind is SeatOut:
                seat, count = ruling.seat, ruling.cards  # type: ignore[union-attr]
                paid = [self.piles[seat].popleft() for _ in range(count)]
                if kind is Burned and ruling.to == "penalty_pile":  # type: ignore[union-attr]
                    self.penalty_pile.extend(paid)
                else:
                    self.stack[:0] = paid
                    self.burned.update(paid)
            elif kind is StackWon:
                if self.moved is not None and ruling._replace(margin_us=None) == self.moved:  # type: ignore[union-attr]
                    self.moved = None  # announced now; its cards moved at the press
                else:
                    assert self.moved is None, "a stack won while an earlier snap win was unannounced"
                    self._take(ruling.seat)
        deferred = state.deferred
        if deferred is not None and deferred is not prev.deferred:
            self._take(deferred[0].seat)
            self.moved = deferred[0]  # type: ignore[assignment]
        self._check()

    def _take(self, seat: int) -> None:
        self.piles[seat].extend(self.stack)  # under the pile, bottom card first
        self.piles[seat].extend(self.penalty_pile)
        self.stack.clear()
        self.burned.clear()
        self.penalty_pile.clear()

    def _check(self) -> None:
        s = self.state
        self.steps += 1
        for seat, pile in enumerate(self.piles):
            assert len(pile) == s.hands[seat], (seat, len(pile), s.hands)
        assert len(self.stack) == s.size, (len(self.stack), s.size)
        assert len(self.penalty_pile) == s.penalty_pile
        assert not self.stack or s.top_card is None or self.stack[-1] is s.top_card
        if self.steps % CHECK_STACK_EVERY == 0:
            assert [c for c in self.stack if c not in self.burned] == s.stack_cards()


# Timing helpers ------------------------------------------------------------------------------


def best_median(runs: Sequence[float]) -> tuple[float, float]:
    return min(runs), statistics.median(runs)


def time_engine(games: Sequence[Game], repeat: int) -> list[float]:
    """Seconds spent in `step` over every recorded event, once per repeat."""
    runs: list[float] = []
    clock = time.perf_counter
    for _ in range(repeat):
        elapsed = 0.0
        for game in games:
            state = game.spec.new_game()
            events = game.events
            started = clock()
            for event in events:
                state, _ = step(state, event)
            elapsed += clock() - started
            final = game.final
            assert final is not None and (state.hands, state.size, state.laid, state.winner) == (
                final.hands,
                final.size,
                final.laid,
                final.winner,
            ), "the replay does not end where the recording did"
        runs.append(elapsed)
    return runs


def write_script(game: Game, path: Path) -> int:
    """The game as a table script; returns its number of lines."""
    dumps = json.dumps
    with path.open("w", encoding="utf-8") as f:
        f.write(dumps(game.spec.to_json()) + "\n")
        f.writelines(dumps(event_to_json(event)) + "\n" for event in game.events)
    return 1 + len(game.events)


def referee_command() -> Path:
    exe = Path(sys.executable).parent / ("referee.exe" if os.name == "nt" else "referee")
    if not exe.exists():
        sys.exit(f"{exe} not found: install the project into this interpreter's venv (make test)")
    return exe


def time_subprocess(command: list[str], repeat: int) -> list[float]:
    runs: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        runs.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"{shlex.join(command)} failed ({done.returncode}): {done.stderr.decode()[:500]}")
    return runs


def time_in_process(path: Path, repeat: int) -> tuple[list[float], int]:
    """Seconds for what `referee adjudicate` does after start-up, and the rulings it writes."""
    runs: list[float] = []
    written = 0
    dumps = json.dumps
    for _ in range(repeat):
        written = 0
        with path.open("rb") as stream, open(os.devnull, "w", encoding="utf-8") as out:
            write = out.write
            started = time.perf_counter()
            for ruling in adjudicate(stream, str(path)):
                write(dumps(ruling.to_json()) + "\n")
                written += 1
            runs.append(time.perf_counter() - started)
    return runs, written


# Figure 3: one lay onto a small stack and onto a large one -----------------------------------


def lay_cases(rules: Celtic, sizes: range) -> list[tuple[State, Lay]]:
    """For each size k: a state whose stack holds k cards, and an in-turn lay of a picture card.

    No snaps. The number cards go down first, then picture cards back to back, so that each
    count-out is renewed before it runs out and no claim ever starts; the measured lay is a
    picture card in every case, so it takes the same path through `lay` whatever the size.
    """
    cards = deck(52)
    numbers = [c for c in cards if 2 <= c.rank <= 10]
    pictures = [c for c in cards if not 2 <= c.rank <= 10]
    cases: list[tuple[State, Lay]] = []
    for k in sizes:
        if k <= len(numbers):
            order, card = numbers[:k], pictures[0]
        else:
            order = numbers + pictures[: k - len(numbers)]
            card = pictures[k - len(numbers)]
        state = rules.new_game(["A", "B"], 52, hand_sizes=[26, 26])
        t = START_US
        for c in order:
            state, _ = step(state, Lay(t, c))
            t += 500 * MS
        assert state.size == k and state.hold is None and state.turn is not None
        cases.append((state, Lay(t, card)))
    return cases


def time_lay(state: State, lay: Lay, lays: int) -> float:
    """Microseconds per lay: `step(state, lay)` done `lays` times (a state is a value)."""
    loop = range(lays)
    started = time.perf_counter()
    for _ in loop:
        step(state, lay)
    return (time.perf_counter() - started) / lays * 1e6


def time_copy(state: State, copies: int) -> float:
    """Microseconds per `State.copy()`, the fixed cost `step` pays on every event."""
    copy = state.copy
    loop = range(copies)
    started = time.perf_counter()
    for _ in loop:
        copy()
    return (time.perf_counter() - started) / copies * 1e6


@dataclass
class LayCost:
    small: list[float]  # us/lay per chunk, onto a stack of 1-5 cards
    large: list[float]  # us/lay per chunk, onto a stack of 40-50 cards
    copy: float  # best us per State.copy()


def figure_3(repeat: int, lays: int = 100_000, chunk: int = 2_000) -> LayCost:
    """Small and large stacks timed in alternating chunks, so that noise hits both alike."""
    rules = rules_for("celtic", {"scan": "stack"})
    small = lay_cases(rules, range(1, 6))
    large = lay_cases(rules, range(40, 51))
    for state, lay in (*small, *large):  # the measured lay takes the plain path: no claim
        after, _ = step(state, lay)
        assert after.size == state.size + 1 and after.turn is not None and after.hold is None
    cost = LayCost([], [], float("inf"))
    for _ in range(repeat):
        for i in range(max(1, lays // chunk)):
            cost.small.append(time_lay(*small[i % len(small)], chunk))
            cost.large.append(time_lay(*large[i % len(large)], chunk))
        cost.copy = min(cost.copy, time_copy(large[0][0], lays))
    return cost


# Report --------------------------------------------------------------------------------------


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    processor = platform.processor() or platform.machine()
    cpus = os.cpu_count()
    return f"{processor}{f' ({model})' if model else ''}, {cpus} CPUs, {platform.platform()}"


def row(label: str, best: str, median: str, goal: str = "", verdict: str = "") -> str:
    return f"  {label:<44} {best:>14} {median:>14}   {goal:<16} {verdict}"


def repeats(n: int) -> str:
    return f"{n} repeat{'' if n == 1 else 's'}"


def num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


@dataclass
class Recorded:
    """One preset's game as recorded in pass 1, and its engine timings (figure 1)."""

    rules: str
    games: list[Game]
    events: int
    lays: int
    runs: list[float]


def record(rules: str, args: argparse.Namespace, out: Callable[[str], object]) -> Recorded:
    """Pass 1 for one preset (its game, described), then figure 1's timings of it."""
    started = time.perf_counter()
    driver = Driver(args.seed, args.players, keep_alive=not args.no_keep_alive, rules=rules)
    games = driver.run(args.lays)
    generated = time.perf_counter() - started
    events = sum(len(g.events) for g in games)
    lays = sum(g.lays for g in games)
    kinds = Counter(type(e).__name__ for g in games for e in g.events)
    rulings: Counter[str] = Counter()
    for g in games:
        rulings.update(g.rulings)
    ended = [g for g in games if g.winner is not None]
    out("")
    out(
        f"Game of {rules} (pass 1, untimed, {generated:.1f} s): seed {args.seed}, {args.players} players, "
        f"{len(games)} game{'s' if len(games) > 1 else ''} ({len(ended)} won), "
        f"piles checked against the referee after each of {driver.steps:,} steps"
    )
    out(f"  events  : {events:,} = {kinds['Lay']:,} lays + {kinds['Snap']:,} snaps + {kinds['Wait']:,} waits")
    out("  rulings : " + ", ".join(f"{k} {v:,}" for k, v in sorted(rulings.items())))
    keep = "off" if args.no_keep_alive else f"on (a seat holds >= {DANGER_SHARE:.0%} of the cards)"
    out(f"  keep-alive: {keep}; it was in force after {driver.kept_alive:,} of the {lays:,} lays")
    if len(games) > 1:
        out(f"  note    : {len(ended)} game(s) ended; figure 1 replays all {len(games)} back to back")
    return Recorded(rules, games, events, lays, time_engine(games, args.repeat))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lays", type=int, default=200_000, help="lays in each game (default 200000)")
    parser.add_argument("--seed", type=int, default=1, help="seeds the deal and the driver (default 1)")
    parser.add_argument("--repeat", type=int, default=5, help="repeats of the in-process timings (default 5)")
    parser.add_argument(
        "--e2e-repeat", type=int, default=3, help="repeats of the subprocess timing (default 3)"
    )
    parser.add_argument("--players", type=int, default=4, help="seats at the table, 2-8 (default 4)")
    parser.add_argument(
        "--no-keep-alive",
        action="store_true",
        help="let games end: figure 1 replays them back to back, figure 2 uses the first one",
    )
    parser.add_argument(
        "--rules",
        default=",".join(PRESETS),
        metavar="PRESET,...",
        help=f"the presets to time, side by side (default {','.join(PRESETS)}); figure 2 uses the first",
    )
    args = parser.parse_args(argv)
    if args.lays < 1 or args.repeat < 1 or args.e2e_repeat < 1:
        parser.error("--lays, --repeat and --e2e-repeat must be at least 1")
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        parser.error(f"--players must be {MIN_PLAYERS} to {MAX_PLAYERS}")
    presets = [name.strip() for name in args.rules.split(",") if name.strip()]
    unknown = [name for name in presets if name not in PRESETS]
    if not presets or unknown:
        parser.error(
            f"--rules: unknown rules {unknown[0] if unknown else ''!r} (known: {', '.join(PRESETS)})"
        )
    out = print

    command = shlex.join([sys.executable, *sys.argv])
    out("Referee engine benchmark")
    out(f"  command : {command}")
    out(f"  machine : {machine()}")
    out(f"  python  : {platform.python_implementation()} {platform.python_version()} ({sys.executable})")
    out(f"  gc      : {'enabled' if gc.isenabled() else 'disabled'} (left as it is, as in real use)")
    out(
        f"  driver  : a press by a random seat after ~1 in {round(1 / SNAP_CHANCE)} lays "
        f"(+{REACTION_US[0] // MS}-{REACTION_US[1] // MS} ms), {SECOND_PRESS_CHANCE:.0%} of them raced "
        f"by a second seat; out-of-turn lays ~1 in {round(1 / OUT_OF_TURN_CHANCE)}; a wait when presses "
        "change the table or a claim hold runs out"
    )

    # Pass 1 and figure 1, one preset after another.
    recorded = [record(rules, args, out) for rules in presets]

    # Figure 2: end to end, on the first preset's first game only (a script holds one game).
    games = recorded[0].games
    first = games[0]
    referee = referee_command()
    with tempfile.TemporaryDirectory(prefix="bench-referee-") as tmp:
        path = Path(tmp) / "game.jsonl"
        lines = write_script(first, path)
        size_mb = path.stat().st_size / 1e6
        tiny = Path(tmp) / "empty-game.jsonl"
        tiny.write_text(json.dumps(first.spec.to_json()) + "\n", encoding="utf-8")
        sub_runs = time_subprocess([str(referee), "adjudicate", str(path)], args.e2e_repeat)
        boot_runs = time_subprocess([str(referee), "adjudicate", str(tiny)], args.e2e_repeat)
        inproc_runs, written = time_in_process(path, args.repeat)
    s_best, s_median = best_median(sub_runs)
    i_best, i_median = best_median(inproc_runs)
    b_best, b_median = best_median(boot_runs)

    # Figure 3: O(1) per lay.
    cost = figure_3(args.repeat)
    small_best, small_median = best_median(cost.small)
    large_best, large_median = best_median(cost.large)

    out("")
    out("Figures (best and median of the repeats; no assertion is made on any of them)")
    out(f"  1. engine: step() over each preset's recorded events, {repeats(args.repeat)}: best (median)")
    out("  " + f"{'':<30}" + "".join(f"{r.rules:>22}" for r in recorded))
    out("  " + f"{'events':<30}" + "".join(f"{r.events:>22,}" for r in recorded))
    out("  " + f"{'lays':<30}" + "".join(f"{r.lays:>22,}" for r in recorded))

    def line(label: str, figure: Callable[[Recorded, float], float], digits: int) -> None:
        cells = []
        for r in recorded:
            best, median = best_median(r.runs)
            cells.append(f"{num(figure(r, best), digits)} ({num(figure(r, median), digits)})")
        out("  " + f"{label:<30}" + "".join(f"{cell:>22}" for cell in cells))

    line("lays/s", lambda r, t: r.lays / t, 0)
    line("events/s", lambda r, t: r.events / t, 0)
    line("us/event", lambda r, t: t / r.events * 1e6, 2)
    line("us/lay (all events' time/lays)", lambda r, t: t / r.lays * 1e6, 2)
    verdicts = ["met" if r.lays / min(r.runs) >= GOAL_ENGINE_LAYS_PER_S else "NOT met" for r in recorded]
    out("  " + f"{f'goal lays/s >= {GOAL_ENGINE_LAYS_PER_S:,}':<30}" + "".join(f"{v:>22}" for v in verdicts))
    out(row("", "best", "median", "goal"))
    what = "the whole game" if len(games) == 1 else f"game 1 of {len(games)} only"
    out(
        f"  2. end to end ({recorded[0].rules}): referee adjudicate FILE > /dev/null, {what}: "
        f"{lines:,} lines ({first.lays:,} lays, {size_mb:.1f} MB) -> {written:,} rulings"
    )
    met = "met" if lines / s_best >= GOAL_E2E_LINES_PER_S else "NOT met"
    out(f"     subprocess, {repeats(args.e2e_repeat)}:")
    out(row("lines/s", num(lines / s_best), num(lines / s_median), f">= {GOAL_E2E_LINES_PER_S:,}", met))
    out(row("us/line", num(s_best / lines * 1e6, 2), num(s_median / lines * 1e6, 2)))
    out(row("seconds", num(s_best, 3), num(s_median, 3)))
    out(f"     in process (adjudicate + json.dumps + write to /dev/null), {repeats(args.repeat)}:")
    out(row("lines/s", num(lines / i_best), num(lines / i_median)))
    out(row("us/line", num(i_best / lines * 1e6, 2), num(i_median / lines * 1e6, 2)))
    out(row("seconds", num(i_best, 3), num(i_median, 3)))
    out(
        row(
            "subprocess - in process (start-up, imports)",
            num(s_best - i_best, 3),
            num(s_median - i_median, 3),
        )
    )
    out(row("for comparison: adjudicate a game line only", num(b_best, 3), num(b_median, 3)))
    chunks = len(cost.small)
    out(
        f"  3. celtic: one in-turn lay of a picture card, no snaps, scan 'stack': {chunks} chunks "
        "of 2,000 lays each"
    )
    out(row("us/lay onto a stack of 1-5 cards", num(small_best, 3), num(small_median, 3)))
    out(row("us/lay onto a stack of 40-50 cards", num(large_best, 3), num(large_median, 3)))
    ratio_best, ratio_median = large_best / small_best, large_median / small_median
    out(row("ratio large / small", num(ratio_best, 3), num(ratio_median, 3), "about 1.0 (O(1))"))
    out(row("for comparison: State.copy() alone, us", num(cost.copy, 3), ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
