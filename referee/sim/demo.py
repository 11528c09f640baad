"""`referee demo`: bots play a whole game and the referee's rulings scroll by.

The words for each ruling (`describe`) and the end-of-game figures (`summarize`)
are plain functions; printing and pacing live in `run_demo`.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import secrets
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from hardware.clock import Clock, MonotonicClock
from referee.errors import UserError
from referee.kiosk.phones import lan_address, watch_url
from referee.kiosk.token import load_or_create_token
from referee.kiosk.view import TableView
from referee.live.clip_store import ClipRecorder, open_clips
from referee.live.config import default_data_dir
from referee.live.journal import STOPPED, WON, GameRecord, Journal
from referee.live.loop import EventError
from referee.live.replay import replay, untold
from referee.live.scores import NightFeed
from referee.live.signal_player import MirroredSignals
from referee.live.sinks import Recorder, Teller
from referee.live.stopping import StopRequest, stop_request
from referee.rules.clips import ReplaySettings
from referee.rules.engine import MAX_PLAYERS, MIN_PLAYERS
from referee.rules.events import Event, Named, Unread
from referee.rules.presets import UnknownPreset, rules_for
from referee.rules.questions import Judging
from referee.rules.ruling_text import (
    AWARD_WORDS,
    IGNORED_WORDS,
    REASON_WORDS,
    count_words,
    pile,
    say,
    slapper,
)
from referee.rules.rulings import (
    Burned,
    Corrected,
    GameWon,
    Laid,
    PenaltiesLifted,
    Penalty,
    Ruling,
    SeatOut,
    SnapIgnored,
    StackWon,
    TakeBack,
)
from referee.rules.script import event_to_json
from referee.rules.state import State

from .bots import START_US, VirtualTable
from .demo_table import CameraStage, DemoTable

EXIT_WON, EXIT_STOPPED, EXIT_USAGE = 0, 1, 2
GAME_TITLES = {
    "celtic": "Celtic Egyptian Ratscrew",
    "classic": "Egyptian Ratscrew, classic rules",
    "paranoid": "The Paranoid Game",
    "party": "Egyptian Ratscrew, party rules",
}
COLOURS = ("cyan", "magenta", "yellow", "green", "bright_blue", "bright_red", "white", "bright_green")


def clock_text(t_us: int) -> str:
    minutes, rest = divmod(t_us, 60_000_000)
    return f"{minutes:2d}:{rest / 1e6:06.3f}"


def describe(
    ruling: Ruling,
    names: Sequence[str],
    after: Sequence[Ruling] = (),
    before: Sequence[Ruling] = (),
    calls: bool = True,
) -> Text:
    """One log line for a ruling. `after` is what followed it (to name a runner-up), `before`
    what came before it in its event (to name a wrong slap's seat); `calls`: the game has
    calling out (else a lay's call is not shown)."""
    line = Text(clock_text(ruling.t) + "  ", style="dim")
    words = _WORDS.get(type(ruling))
    if words is not None:
        # Appended piece by piece: each keeps its own style (a seat's colour is its name's only).
        for piece in words(ruling, _Context(names, after, before, calls)):
            line += piece
    return line


@dataclass(frozen=True)
class _Context:
    """What a ruling's line may name besides the ruling: the seats, the rulings around it."""

    names: Sequence[str]
    after: Sequence[Ruling]
    before: Sequence[Ruling]
    calls: bool

    def who(self, seat: int) -> Text:
        return Text(f"{self.names[seat]:<4}", style=f"bold {COLOURS[seat % len(COLOURS)]}")

    def said(self, ruling: Ruling, style: str) -> list[Text]:
        """The seat, then the rest of the ruling's plain words (which start with its name)."""
        seat = ruling.seat  # type: ignore[attr-defined]
        return [self.who(seat), Text(say(ruling, self.names).removeprefix(self.names[seat]), style=style)]


def _laid_words(ruling: Laid, c: _Context) -> list[Text]:
    words = [
        c.who(ruling.seat),
        Text(f" lays {ruling.card.symbol:<4}", style="bold" if ruling.out_of_turn else ""),
    ]
    if c.calls:
        matched = ruling.card.rank == ruling.call
        words.append(Text(f" call {ruling.call:>2}", style="bold green" if matched else ""))
    if ruling.count_out is not None:
        words.append(Text(f"  {count_words(ruling)}", style="yellow"))
    if ruling.out_of_turn:
        words.append(Text("  OUT OF TURN", style="bold red"))
    elif ruling.next is None:
        words.append(Text("  hold: first snap wins", style="bold yellow"))
    return words


def _stack_won_words(ruling: StackWon, c: _Context) -> list[Text]:
    if ruling.by not in ("snap", "claim"):
        how = AWARD_WORDS.get(ruling.by, f"by {ruling.by}")
        if ruling.by == "penalty" and (seat := slapper(c.before)) is not None:
            how = f"by penalty: {c.names[seat]}'s wrong slap"
        return [c.who(ruling.seat), Text(f" takes {_cards(ruling.cards)} {how}{pile(ruling)}", style="green")]
    reasons = ", ".join(REASON_WORDS.get(r, r) for r in ruling.reasons)
    shout = "SNAP! takes" if ruling.by == "snap" else "CLAIMS"
    words = [
        c.who(ruling.seat),
        Text(f" {shout} {_cards(ruling.cards)} ({reasons}){pile(ruling)}", style="bold green"),
    ]
    runner_up = next(
        (
            r.seat
            for r in c.after
            if type(r) is SnapIgnored and r.reason == "late" and r.late_us == ruling.margin_us
        ),
        None,
    )
    if runner_up is not None:
        words.append(Text(f" — beats {c.names[runner_up]} by {ruling.margin_us / 1000:.1f} ms"))
    return words


def _penalty_words(ruling: Penalty, c: _Context) -> list[Text]:
    what = "wrong snap" if ruling.reason == "wrong_snap" else "laid out of turn"
    until = ": penalised until another seat wins a stack" if ruling.barred else ": penalty"
    return [c.who(ruling.seat), Text(f" {what}{until}", style="red")]


def _ignored_words(ruling: SnapIgnored, c: _Context) -> list[Text]:
    if ruling.reason == "late":
        said = Text(f" snap {(ruling.late_us or 0) / 1000:.1f} ms late", style="dim")
    elif ruling.reason == "dead_heat":
        said = Text(" dead heat: pressed at the same microsecond, no winner", style="yellow")
    else:
        said = Text(" " + IGNORED_WORDS.get(ruling.reason, f"snap ignored: {ruling.reason}"), style="dim red")
    return [c.who(ruling.seat), said]


# The words of each kind of ruling, after its time. Burned, SeatOut and TakeBack are
# instructions: the referee cannot move cards, the players must.
_WORDS: dict[type, Callable[[Any, _Context], list[Text]]] = {
    Laid: _laid_words,
    StackWon: _stack_won_words,
    Penalty: _penalty_words,
    SnapIgnored: _ignored_words,
    Burned: lambda ruling, c: c.said(ruling, "bold yellow"),
    SeatOut: lambda ruling, c: c.said(ruling, "bold yellow"),
    TakeBack: lambda ruling, c: c.said(ruling, "bold yellow"),
    PenaltiesLifted: lambda ruling, c: [Text("everyone was penalised: all penalties lifted", style="yellow")],
    Corrected: lambda ruling, c: [Text("host: " + say(ruling, c.names), style="bold yellow")],
    GameWon: lambda ruling, c: c.said(ruling, "bold reverse green"),
}


def _cards(n: int) -> str:
    return "1 card" if n == 1 else f"{n} cards"


@dataclass
class Summary:
    """What each seat did over the game."""

    names: Sequence[str]
    won_by: list[dict[str, int]] = field(init=False)
    wrong_snaps: list[int] = field(init=False)
    out_of_turn: list[int] = field(init=False)
    late: list[int] = field(init=False)
    lays: int = 0

    def __post_init__(self) -> None:
        n = len(self.names)
        self.won_by = [{"snap": 0, "counting_out": 0, "stall": 0} for _ in range(n)]
        self.wrong_snaps, self.out_of_turn, self.late = [0] * n, [0] * n, [0] * n

    def add(self, ruling: Ruling) -> None:
        kind = type(ruling)
        if kind is Laid:
            self.lays += 1
        elif kind is StackWon:
            self.won_by[ruling.seat][ruling.by] = self.won_by[ruling.seat].get(ruling.by, 0) + 1
        elif kind is Penalty:
            (self.wrong_snaps if ruling.reason == "wrong_snap" else self.out_of_turn)[ruling.seat] += 1
        elif kind is SnapIgnored and ruling.reason == "late":
            self.late[ruling.seat] += 1


def summary_table(
    summary: Summary, hands: Sequence[int], reactions: Sequence[Sequence[int]], challenge: bool = False
) -> Table:
    """`challenge`: the face-card challenge's awards are counted where celtic counts count-outs."""
    table = Table(title="Summary", title_justify="left")
    for header in (
        "Player",
        "Cards",
        "Snaps won",
        "Challenges" if challenge else "Count-outs",
        "Stalls",
        "Wrong snaps",
        "Out of turn",
        "Late",
        "Reaction",
    ):
        table.add_column(header, justify="left" if header == "Player" else "right")
    for seat, name in enumerate(summary.names):
        won = summary.won_by[seat]
        mean = f"{fmean(reactions[seat]) / 1000:.0f} ms" if reactions[seat] else "-"
        table.add_row(
            Text(name, style=f"bold {COLOURS[seat % len(COLOURS)]}"),
            str(hands[seat]),
            str(won["snap"] + won.get("claim", 0)),
            str(won["counting_out"] + won.get("challenge", 0)),
            str(won["stall"]),
            str(summary.wrong_snaps[seat]),
            str(summary.out_of_turn[seat]),
            str(summary.late[seat]),
            mean,
        )
    return table


def fresh_seed() -> int:
    """A new deal for each demo run: short enough to type back with --seed."""
    return secrets.randbelow(99_999) + 1


def run_demo(
    args: argparse.Namespace,
    out: TextIO,
    clock: Clock | None = None,
    rounds: int | None = None,
    stop: StopRequest | None = None,
    seeds: Callable[[], int] = fresh_seed,
) -> int:
    """The demo's games: one, or with --forever one after another (`rounds` caps that in tests).
    A stop (SIGTERM, Ctrl-C) is taken between two events: the game stays open in the journal,
    and the next `referee demo` with the same options resumes it (its seed too, when none is
    given). Without --seed each run deals anew (`seeds`); the seed is printed, to replay it.
    With the kiosk page, the last table stays served after the game for --linger seconds
    (until Ctrl-C when the output is a terminal and none is given)."""
    stop = stop or stop_request
    rules, speed, linger = _checked(args)
    if args.json or args.script:
        seed = args.seed
        if seed is None:  # said aside, so that the script on standard output stays a script
            seed = seeds()
            print(f"referee demo: seed {seed} (--seed {seed} deals this game again)", file=sys.stderr)
        table = VirtualTable(players=args.players, seed=seed, cap=args.cap, rules=rules)
        return _run_json(table, out, args.json, stop)

    console = Console(file=out, highlight=False, soft_wrap=True, width=max(Console().width, 100))
    clock = clock or MonotonicClock()
    stop.check()
    folder = Path(args.data_dir) if args.data_dir else default_data_dir() / "demo"
    with Journal.open(folder, accept_loss=args.new_game) as journal:
        if journal.damage is not None:
            console.print(Text(f"{journal.damage}: going on with a new game", style="bold yellow"))
        seed = args.seed
        drawn = seed is None
        if drawn and not args.new_game:  # an interrupted game resumes with its own deal
            seed = _open_seed(journal, args.players, args.cap, rules)
        if seed is None:
            seed = seeds()
        first = VirtualTable(players=args.players, seed=seed, cap=args.cap, rules=rules)
        clips = _clips(args, journal, console)
        kiosk = None if args.headless else _kiosk(args, journal, first.spec.new_game(), console, clips)
        demo = _Demo(args, rules, journal, console, clock, speed, stop, kiosk, clips)
        try:
            return demo.games(first, drawn, rounds, linger)
        finally:
            if kiosk is not None:
                kiosk.server.stop()


def _checked(args: argparse.Namespace) -> tuple[str, float, float | None]:
    """The options a demo at the terminal is run by, checked: (rules, speed, linger)."""
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        raise UserError(f"--players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {args.players}")
    if args.cap < 1:
        raise UserError(f"--cap must be at least 1 lay, not {args.cap}")
    rules = getattr(args, "rules", "celtic")
    try:
        rules_for(rules)
    except UnknownPreset as e:
        raise UserError(f"--rules: {e}") from None
    speed = args.speed if args.speed is not None else (0.0 if args.headless else 1.0)
    if speed < 0:
        raise UserError(f"--speed must be 0 (at once) or more, not {speed}")
    linger = getattr(args, "linger", None)
    if linger is not None and not linger >= 0:  # NaN too
        raise UserError(f"--linger must be 0 seconds or more, not {linger}")
    return rules, speed, linger


@dataclass
class _Demo:
    """What every game of one `referee demo` at the terminal shares."""

    args: argparse.Namespace
    rules: str
    journal: Journal
    console: Console
    clock: Clock
    speed: float
    stop: StopRequest
    kiosk: _DemoKiosk | None
    clips: Any  # the replay clips' store, when the camera is rendered

    def games(self, first: VirtualTable, drawn: bool, rounds: int | None, linger: float | None) -> int:
        """`first`, then with --forever the next deals; `drawn`: the seed was not given."""
        args, console, stop, kiosk = self.args, self.console, self.stop, self.kiosk
        seed, played = first.seed, 0
        while True:
            stop.check()
            table = (
                first
                if played == 0
                else VirtualTable(players=args.players, seed=seed, cap=args.cap, rules=self.rules)
            )
            status = _DemoGame(self, table, resume=played == 0).play()
            played += 1
            if kiosk is not None and not stop.requested:
                _night_scores(self.journal, kiosk, console)
            if drawn and not stop.requested:
                console.print(Text(f"Seed {seed}: --seed {seed} deals this game again.", style="dim"))
            if (
                stop.requested
                or not getattr(args, "forever", False)
                or (rounds is not None and played >= rounds)
            ):
                if kiosk is not None and not stop.requested:
                    if linger is None:
                        linger = math.inf if console.is_terminal else 0.0
                    _linger(args, self.journal, kiosk, linger, console, stop)
                return status
            seed += 1  # the next deal
            console.print()


class _DemoGame:
    """One game through the demo's table, its log in the terminal and on the kiosk page."""

    # Set as the game opens (`play`):
    started: int  # the demo's clock at the start
    point: _Resume  # where an interrupted game resumes, if it does
    game: int  # the journal's id of the game
    recorder: Recorder
    counted: Teller

    def __init__(self, demo: _Demo, table: VirtualTable, resume: bool) -> None:
        self.demo, self.table, self.resume = demo, table, resume
        self.names = table.spec.players
        self.summary = Summary(self.names)
        self.calls = rules_for(table.rules).options.slap_calling_out  # else a lay's call means nothing
        self.origin: int | None = None  # the table time the demo's clock started at (later on a resume)
        self.asked: dict[int, Unread] = {}  # the camera's open questions, by the lay's time
        self.sinks: list[Callable[[list[Ruling], State], Any]] = [self.show]
        self.lights = Lights(self.names)
        self.live: Live | None = None
        self.stage: CameraStage | None = None
        self.replay: Any = None  # the clips of each dispute, when the camera is rendered

    def play(self) -> int:
        """The game from its deal (or where the journal left it) to its end or a stop."""
        demo, journal, console = self.demo, self.demo.journal, self.demo.console
        self._introduce()
        self.started = demo.clock.now_us()
        self.point = _resume_point(journal, self.table, demo.args.new_game or not self.resume)
        self.game = self._open_game()
        self.recorder = Recorder(journal, self.game, journal.next_seq(self.game))
        self.counted = Teller(journal, self.recorder, write=False)  # counts each ruling as the loop gives it
        table = self._demo_table()
        try:
            with self.live if self.live is not None else nullcontext():
                state = self._run(table)
        except EventError as e:  # the table stopped with a card still asked: said, not a traceback
            console.print(
                Text(f"The game ended with a card still asked ({e}): no winner.", style="bold yellow")
            )
            return EXIT_STOPPED
        finally:
            if self.replay is not None:
                self.replay.close()  # the last clips written with the frames they have
        if demo.stop.requested:
            console.print(
                Text(
                    f"Stopped ({demo.stop.name}) after {self.summary.lays} lays: game {self.game} (seed "
                    f"{self.table.seed}) stays open in the journal {journal.path}, and the next `referee "
                    "demo` with the same options resumes it.",
                    style="bold yellow",
                )
            )
            return demo.stop.exit_code
        journal.told_all(self.game)
        return self._report(state, table)

    def _introduce(self) -> None:
        table, console = self.table, self.demo.console
        console.rule(
            f"{GAME_TITLES.get(table.rules, table.rules)} · {len(self.names)} bots · seed {table.seed}"
        )
        for seat, bot in enumerate(table.bots):
            console.print(
                Text.assemble(
                    (f"{bot.name:<4}", f"bold {COLOURS[seat]}"),
                    f" reacts in about {bot.reaction_ms:.0f} ms, spots {bot.notice:.0%} of snaps",
                )
            )

    def _open_game(self) -> int:
        """The journal's game: the interrupted one resumed (its untold rulings said again), or a new one."""
        point, journal, console = self.point, self.demo.journal, self.demo.console
        if point.record is None:
            return journal.new_game(self.table.spec.to_json(), _source(self.table))
        console.print(
            Text(
                f"Resuming game {point.record.id} from the journal ({journal.path}): "
                f"{point.record.events} events, table time {clock_text(point.state.now).strip()}",  # type: ignore[union-attr]
                style="bold yellow",
            )
        )
        game = point.record.id
        again = untold(point.record, journal.events(game), journal.last_told(game))
        for ruling in again:  # they may not have gone out before the crash
            console.print(describe(ruling, self.names) + Text("  (announced again)", style="bold yellow"))
        if again:
            journal.told(game, journal.next_seq(game) - 1, 1 << 30)
        return game

    def _demo_table(self) -> DemoTable:
        """The demo's table, its rulings to the terminal, the kiosk page, the clips and the journal."""
        demo, kiosk = self.demo, self.demo.kiosk
        if kiosk is not None:
            # t0=0: the kiosk's clock is the terminal's (table time), a resumed game's too.
            kiosk.hub.reset(TableView(self.point.state or self.table.spec.new_game(), t0=0))
            self.sinks.append(kiosk.feed)
        # The lights and buzzer as a bar under the log, on a terminal watching a paced game.
        if demo.console.is_terminal and demo.speed > 0:
            self.live = Live(self.lights, console=demo.console, auto_refresh=False)
        self.stage = None if demo.args.no_camera else CameraStage(len(self.names), self.table.seed)
        if self.stage is not None and demo.clips is not None:  # the rendered camera's clips of each dispute
            replay = _replay(demo.clips, self.game, self.names, kiosk, demo.console, self.stage.camera.fps)
            self.replay = replay
            self.stage.frames.append(lambda frame: replay.frame(frame.t_us, frame.image))
            self.sinks.insert(0, lambda batch, after: [replay.ruling(r) for r in batch])  # before the kiosk's
        questions: list[Callable[[tuple[Unread, ...], State], None]] = [self.questions]
        if kiosk is not None:
            questions.append(lambda open_, _: kiosk.hub.ask(open_))
        table = DemoTable(
            self.table,
            stage=self.stage,
            rulings=lambda batch, after: [sink(batch, after) for sink in self.sinks],
            judged=[self.recorder] if self.replay is None else [self.recorder, self.replay.judged],
            state=self.point.judging,
            mirror=self.mirror,
            refused=self.refused,
            questions=questions,
        )
        table.loop.ruling_sinks.append(self.counted)
        self.sinks.append(self.told)  # last: after the terminal and the kiosk
        return table

    def _run(self, table: DemoTable) -> State:
        stop = self.demo.stop
        return table.run(self.pace, skip=self.point.skip, ended=self.ended, stop=lambda: stop.requested)

    # The table's callbacks ---------------------------------------------------------------------

    def pace(self, t: int) -> None:
        demo = self.demo
        if demo.speed > 0:
            if self.origin is None:
                self.origin = t if self.point.record is not None else min(t, START_US)
            demo.clock.sleep_until(self.started + round((t - self.origin) / demo.speed))

    def show(self, batch: list[Ruling], after: State) -> None:
        console, names = self.demo.console, self.names
        for i, ruling in enumerate(batch):
            self.summary.add(ruling)
            if self.demo.args.quiet and type(ruling) is not GameWon:
                continue
            console.print(describe(ruling, names, batch[i + 1 :], batch[:i], self.calls))
            if type(ruling) is StackWon:
                piles = " · ".join(f"{names[s]} {n}" for s, n in enumerate(after.hands))
                console.print(Text(f"{'':11}piles: {piles}", style="dim"))

    def told(self, batch: list[Ruling], after: State) -> None:
        # The batch is shown: all so far are told.
        self.demo.journal.told(self.game, self.counted.seq, self.counted.count)

    def mirror(self, signals: Any) -> Any:
        shown = MirroredSignals(signals, self.lights.on_change(self.live))
        return shown if self.demo.kiosk is None else MirroredSignals(shown, self.demo.kiosk.hub)

    def refused(self, event: Event | Named, why: str) -> None:
        who = "host" if type(event) is Named else "camera"
        then = "asked again" if type(event) is Named else "a misreading: asked"
        self.demo.console.print(Text(f"{clock_text(event.t)}  {who}: {why}: {then}", style="yellow"))

    def questions(self, open_: tuple[Unread, ...], before: State) -> None:
        # Each new question as the table sees it, and each answer as the rulings go on.
        console, asked = self.demo.console, self.asked
        for question in open_:
            if question.t not in asked:
                guess = f" (it looks like {question.guess.code})" if question.guess is not None else ""
                console.print(
                    Text(
                        f"{clock_text(question.t)}  camera: which card was laid?{guess} "
                        "Judging holds here until the host names it",
                        style="bold yellow",
                    )
                )
        for t in sorted(set(asked) - {q.t for q in open_}):
            console.print(
                Text(f"{clock_text(t)}  host: this card is named, judging goes on from here", style="yellow")
            )
            del asked[t]
        asked.update((q.t, q) for q in open_)

    def ended(self, final: State) -> None:
        self.demo.journal.end_game(self.game, WON if final.winner is not None else STOPPED, final.winner)

    # The end of the game -----------------------------------------------------------------------

    def _report(self, state: State, table: DemoTable) -> int:
        """The summary, the camera's and the clips' figures, and who won."""
        console, lays = self.demo.console, self.summary.lays
        console.print()
        challenge = state.rules.options.face_cards == "challenge"
        console.print(summary_table(self.summary, state.hands, self.table.reactions, challenge))
        if self.stage is not None:
            console.print(_camera_figures(self.stage, table))
        if self.replay is not None and self.replay.saved:
            console.print(
                Text(
                    f"Replay: {self.replay.saved} clips of the stacks won, penalties and dead heats in "
                    f"{self.demo.clips.path(self.game, 0).parent} (`referee export {self.game} --demo "
                    "--clips DIR` copies them).",
                    style="dim",
                )
            )
        if self.table.stopped:
            cap = self.demo.args.cap
            console.print(
                Text(f"Stopped after {lays} lays (the cap is {cap}): no winner.", style="bold yellow")
            )
            return EXIT_STOPPED
        if state.winner is None:  # the bots' game ended, but the referee saw no winner
            console.print(Text(f"No winner after {lays} lays.", style="bold yellow"))
            return EXIT_STOPPED
        table_time = clock_text(state.now).strip()
        winner = self.names[state.winner]
        console.print(
            Text(f"{winner} wins after {lays} lays and {table_time} of table time.", style="bold green")
        )
        return EXIT_WON


def _camera_figures(stage: CameraStage, table: DemoTable) -> Text:
    """What the rendered camera read, what it asked and what the host answered."""
    waits = sorted(table.answer_us)
    took = f" (after {waits[0] / 1e6:.1f} to {waits[-1] / 1e6:.1f} s)" if waits else ""
    return Text(
        f"Camera: {stage.read} lays read, {table.questions} asked ({stage.asked} unsure, "
        f"{table.questions - stage.asked} impossible), {stage.wrong} read wrong, "
        f"{stage.missed_lays} missed. The host answered or corrected {len(waits)}{took}.",
        style="bold" if stage.wrong == 0 else "bold yellow",
    )


class Lights:
    """The table's seat LEDs, status LED and buzzer, as one line of text for the terminal."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names
        self.seats = [0.0] * len(names)
        self.status: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self.buzzer: float | None = None

    def signal(self, target: Any, value: Any) -> None:
        if target == "status":
            self.status = value
        elif target == "buzzer":
            self.buzzer = value
        else:
            self.seats[target[1]] = value

    def on_change(self, live: Live | None) -> Any:
        """A sink for MirroredSignals: records each change and redraws the bar."""
        lights = self

        class Sink:
            def signal(self, target: Any, value: Any) -> None:
                lights.signal(target, value)
                if live is not None:
                    live.refresh()

        return Sink()

    def __rich__(self) -> Text:
        line = Text("lights ", style="dim")
        for seat, (name, level) in enumerate(zip(self.names, self.seats, strict=True)):
            mark = "●" if level >= 0.99 else "◐" if level > 0 else "○"
            line += Text(f"{name} {mark}  ", style=f"bold {COLOURS[seat % len(COLOURS)]}" if level else "dim")
        r, g, b = self.status
        colour = f"rgb({int(255 * r)},{int(255 * g)},{int(255 * b)})"
        line += Text("status ", style="dim") + Text("■" if any(self.status) else "□", style=colour)
        line += Text(f"  buzzer {f'{self.buzzer:.0f} Hz' if self.buzzer else '—'}", style="dim")
        return line


def _linger(
    args: argparse.Namespace,
    journal: Journal,
    kiosk: _DemoKiosk,
    seconds: float,
    console: Console,
    stop: StopRequest,
) -> None:
    """The last table (the winner screen) stays served for `seconds` (inf: until a stop), so
    the page does not fall to "reconnecting…" the moment the game ends; a stop says what the
    journal kept."""
    if seconds <= 0:
        return
    until = "Ctrl-C ends the demo" if math.isinf(seconds) else f"for {seconds:g} s (Ctrl-C ends it sooner)"
    console.print(Text(f"The kiosk page stays at {kiosk.server.url}: {until}.", style="bold"))
    ended = threading.Event()
    with stop.on_stop(ended.set):
        ended.wait(None if math.isinf(seconds) else seconds)
    if stop.requested:
        console.print(Text(f"Stopped ({stop.name}). {kept(journal, args)}", style="bold yellow"))


def kept(journal: Journal, args: argparse.Namespace) -> str:
    """What the journal holds of the last game, and the commands that show it again."""
    games = journal.games()
    if not games:
        return f"The journal {journal.path} holds no game."
    game = games[-1]
    lays = journal.lays().get(game.id, 0)
    players = game.spec["game"]["players"]
    how = f"won by {players[game.winner]}" if game.winner is not None else game.status
    where = f"--data-dir {args.data_dir}" if args.data_dir else "--demo"
    return (
        f"Kept in the journal {journal.path}: game {game.id}, {how} after {lays} lays "
        f"({game.source}). `referee games {where}` lists it; `referee export {game.id} {where}` prints it."
    )


def _clips(args: argparse.Namespace, journal: Journal, console: Console) -> Any:
    """The demo's replay clips, beside its journal: only when the camera is rendered."""
    if args.no_camera:
        return None
    said = lambda line: console.print(Text(line, style="yellow"))  # noqa: E731
    return open_clips(journal.path.parent / "clips", ReplaySettings(), said)


def _replay(clips: Any, game: int, names: Sequence[str], kiosk: Any, console: Console, fps: float) -> Any:
    # The demo's table waits for the coder (block): its clock is virtual, and every frame counts.
    return ClipRecorder(
        clips,
        ReplaySettings(),
        fps,
        lambda: game,
        lambda: names,
        said=lambda why: console.print(Text(f"camera: {why}", style="bold yellow")),
        status=kiosk.hub.replay if kiosk is not None else None,
        block=True,
    ).start()


@dataclass
class _DemoKiosk:
    """The kiosk page of the demo's table: read-only (the bots run the game)."""

    hub: Any
    server: Any
    night: Any = None  # scores_cli.NightFeed, once a game has ended

    def feed(self, batch: list[Ruling], after: State) -> None:
        for ruling in batch:
            self.hub.add(ruling, after)


def _night_scores(journal: Journal, kiosk: _DemoKiosk, console: Console) -> None:
    """Tonight's demo games on the page, after the winner screen (as the service shows them)."""
    if kiosk.night is None:
        kiosk.night = NightFeed(journal, kiosk.hub, lambda line: console.print(Text(line, style="yellow")))
    kiosk.night.refresh()


def _kiosk(
    args: argparse.Namespace, journal: Journal, state: State, console: Console, clips: Any = None
) -> _DemoKiosk:
    # Starlette and uvicorn are imported only when the page is served (not with --headless).
    from referee.kiosk.app import KioskHub, make_app
    from referee.kiosk.server import KioskServer

    hub = KioskHub(TableView(state, t0=0))
    token = load_or_create_token(journal.path.parent / "admin-token")
    host = getattr(args, "listen", "127.0.0.1")
    lan = lan_address()

    def watch() -> str | None:  # the port is the server's own once bound (--port 0: any free)
        return watch_url(host, server.port, lan)

    server = KioskServer(make_app(hub, token, None, watch=watch, clips=clips), hub, host=host, port=args.port)
    try:
        server.start()
    except UserError as e:  # a busy port
        raise UserError(f"{e} (another port: --port N; no kiosk page: --headless)") from None
    console.print(Text(f"Kiosk page: {server.url} (open it in a browser to watch the table)", style="bold"))
    if watch() is not None:
        console.print(Text(f"Phones on this network: {watch()} (the page shows its QR code)", style="bold"))
    return _DemoKiosk(hub, server)


@dataclass(frozen=True)
class _Resume:
    judging: Judging | None
    record: GameRecord | None
    skip: Callable[[Event], bool] | None

    @property
    def state(self) -> State | None:
        return None if self.judging is None else self.judging.state


def _open_seed(journal: Journal, players: int, cap: int, rules: str) -> int | None:
    """The seed of this demo's open game (the same players, cap and rules), if a stop or a
    crash left one: a run without --seed resumes it rather than dealing anew."""
    record = journal.open_game()
    found = re.search(r", seed (-?\d+),", record.source or "") if record is not None else None
    if found is None:
        return None
    seed = int(found.group(1))
    same = VirtualTable(players=players, seed=seed, cap=cap, rules=rules)
    return seed if record.source == _source(same) else None  # type: ignore[union-attr]


def _source(table: VirtualTable) -> str:
    rules = "" if table.rules == "celtic" else f", rules {table.rules}"
    return f"demo: {table.players} bots, seed {table.seed}, cap {table.cap}{rules}"


def _resume_point(journal: Journal, table: VirtualTable, new_game: bool) -> _Resume:
    """This demo's open game, if a crash interrupted it: the referee's table from the journal,
    and which of the bots' events it has already judged (all before its last event's time,
    and those at that time that the journal holds). Another demo's or game's open game is
    left open (the demo keeps its own journal, so `referee run`'s games are never touched)."""
    record = journal.open_game()
    if new_game or record is None or record.source != _source(table):
        return _Resume(None, None, None)
    events = list(journal.events(record.id))
    judging = replay(record, events)
    last_t = record.last_t or 0
    at_last = [e.line for e in events if e.line["t"] == last_t]

    def judged(event: Event) -> bool:
        return event.t < last_t or (event.t == last_t and event_to_json(event) in at_last)

    return _Resume(judging, record, judged)


def _run_json(table: VirtualTable, out: TextIO, with_rulings: bool, stop: StopRequest | None = None) -> int:
    """The game as a table script; with `with_rulings`, each event's rulings after its line."""
    dumps = json.dumps
    out.write(dumps(table.spec.to_json()) + "\n")
    for play in table.play():
        if stop is not None and stop.requested:
            return stop.exit_code
        if play.event is not None:
            out.write(dumps(event_to_json(play.event)) + "\n")
        if with_rulings:
            for ruling in play.rulings:
                out.write(dumps(ruling.to_json()) + "\n")
    return EXIT_STOPPED if table.stopped else EXIT_WON
