"""`referee run`: the table service. Camera (or a rehearsal script) and buttons in, rulings out.

    lays: camera -> pile watcher, or --lays-from FILE|-  --\\
    snaps: buttons (edges stamped by the kernel)         ----> table loop -> journal (first),
                                                                           rulings on stdout,
                                                                           LEDs and buzzer

Every event the engine accepts is committed to the journal before any of its
rulings goes out, so a ruling anyone saw is never lost. At start an open game
(one a crash or a power cut interrupted) is replayed from the journal and goes
on; a rehearsal script resumes at the line after the last one judged.

Game time is CLOCK_MONOTONIC shifted so that a resumed game goes on from the time
of its last event (the clock starts again at boot). Buttons and the Pi camera are
stamped on that clock; a script's or a video file's own times keep their spacing.
`--at-once` judges a script on virtual time with no live hardware, exactly as
`referee adjudicate` does (timers fire only on the script's own wait lines).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from hardware.board import gpio_factory
from hardware.buttons import SnapButtons
from hardware.clock import Clock, MonotonicClock, VirtualClock
from hardware.gpio_buttons import GpioButtons
from hardware.pins import VirtualFactory
from hardware.presses import TROUBLE_WORDS, ButtonTrouble, Edge
from hardware.signals import TableSignals
from referee.errors import UserError
from referee.live.signal_player import SignalPlayer
from referee.rules.announcer import Announcer
from referee.rules.engine import finish
from referee.rules.events import Event, Lay, Named, Unread, Wait
from referee.rules.questions import Judging
from referee.rules.rulings import GameWon, Ruling
from referee.rules.script import GameSpec, ScriptError, event_to_json, read_game_line, read_script
from referee.rules.state import State

from .config import Config, load_config
from .journal import OPEN, STOPPED, WON, GameRecord, Journal
from .loop import EventError, TableLoop
from .replay import replay, untold
from .script_file import open_script
from .sd_notify import Notifier, Watchdog
from .stopping import Stopped, StopRequest, stop_request

# How late each source may deliver an event (see loop.py): a script line comes at once;
# a press's callback within a few ms; the camera reports a card up to ~150 ms after it lands.
# The camera's is only its bound until its first frame: then the pile watcher's progress is.
# USB buttons report their progress with every read (usb_buttons.py): 20 ms bounds them only
# until the reader's first sweep; so do GPIO buttons read from the kernel's line events
# (gpio_buttons.py; "buttons" is gpiozero's callbacks, `buttons = "gpiozero"`).
LATENCIES_US = {"script": 20_000, "buttons": 60_000, "camera": 250_000, "usb": 20_000, "gpio": 20_000}
RECONNECT_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # a lost camera's retries (~1 min), then exit 3


class GameClock:
    """CLOCK_MONOTONIC (or a test's clock) shifted onto the game's timeline."""

    def __init__(self, clock: Clock, shift: int) -> None:
        self.clock = clock
        self.shift = shift

    def now_us(self) -> int:
        return self.clock.now_us() + self.shift

    def sleep_until(self, t_us: int) -> None:
        self.clock.sleep_until(t_us - self.shift)

    def wait(self, event: threading.Event, t_us: int | None) -> None:
        self.clock.wait(event, None if t_us is None else t_us - self.shift)


@dataclass
class Recorder:
    """The loop's event sink: each judged event committed to the journal, in order."""

    journal: Journal
    game: int
    seq: int

    def __call__(self, event: Event, tag: Any) -> None:
        mark = tag if type(tag) is int else None  # a script's line number
        self.journal.append(self.game, self.seq, event_to_json(event), mark)
        self.seq += 1


@dataclass(frozen=True)
class Start:
    """The game `referee run` goes on with: new, or resumed from the journal."""

    game: int
    judging: Judging  # the table, and any lay still waiting for its card
    seq: int  # events already journaled
    skip_through: int  # script lines up to this one were judged before the crash (0: none)
    resumed: GameRecord | None
    mark_t: int | None = None  # the game time line `skip_through` was judged at (its offset kept)

    @property
    def state(self) -> State:
        return self.judging.state


def start_game(journal: Journal, spec: GameSpec, source: str, explicit: bool, new_game: bool) -> Start:
    """Resume the open game, or start `spec`. `explicit`: the input named its own game line,
    which an open game must then match (a different game's lays must not land in it)."""
    open_game = None if new_game else journal.open_game()
    if open_game is not None:
        if explicit and open_game.spec != spec.to_json():
            raise UserError(
                f"{source}: its game line is not the open game {open_game.id}'s in the journal "
                f"({journal.path}): add --new-game to abandon that game and start this one"
            )
        events = list(journal.events(open_game.id))
        judging = replay(open_game, events)
        skip = (open_game.last_mark or 0) if open_game.source == source else 0
        mark_t = next((e.line["t"] for e in reversed(events) if skip and e.mark == skip), None)
        return Start(open_game.id, judging, journal.next_seq(open_game.id), skip, open_game, mark_t)
    game = journal.new_game(spec.to_json(), source)
    return Start(game, Judging(spec.new_game()), 0, 0, None)


class AskedCrops:
    """The camera's pictures of the cards it asked about, by the lay's time, for the kiosk to
    show the host: the last few only (a question is answered in seconds), so memory is bounded."""

    KEEP = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._crops: dict[int, Any] = {}

    def keep(self, t: int, crop: Any) -> None:
        if crop is None:
            return
        with self._lock:
            self._crops[t] = crop
            while len(self._crops) > self.KEEP:
                del self._crops[next(iter(self._crops))]

    def get(self, t: int) -> Any:
        with self._lock:
            return self._crops.get(t)

    def __contains__(self, t: object) -> bool:
        with self._lock:
            return t in self._crops


class RulingPrinter:
    """Rulings as the `adjudicate` contract's JSON lines, each flushed: printed means told."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, ruling: Ruling) -> None:
        self.out.write(json.dumps(ruling.to_json()) + "\n")
        self.out.flush()

    def again(self, ruling: Ruling) -> None:
        """A ruling announced again after a restart (it may not have gone out before the crash)."""
        self.out.write(json.dumps(ruling.to_json() | {"again": True}) + "\n")
        self.out.flush()


@dataclass
class Teller:
    """The last ruling sink: once a ruling is out (printed, on the kiosk), the journal notes how
    far the game's rulings were told, so that a restart announces again only what may not
    have gone out. A ruling belongs to the event the recorder wrote last: the loop judges the
    next event only after the last one's rulings went out."""

    journal: Journal
    recorder: Recorder
    write: bool = True  # False: only count (the demo notes them when its batch is shown)
    seq: int = -1
    count: int = 0

    def __call__(self, ruling: Ruling) -> None:
        seq = self.recorder.seq - 1
        if seq != self.seq:
            self.seq, self.count = seq, 0
        self.count += 1
        if self.write:
            self.journal.told(self.recorder.game, seq, self.count)


def announce_again(journal: Journal, game: GameRecord, printer: RulingPrinter, note: Any) -> list[Ruling]:
    """The rulings of `game` that may not have gone out before a crash, announced again (each
    marked so on stdout, and said on stderr); the journal then notes them told."""
    told = journal.last_told(game.id)
    if told is None and game.status != OPEN:
        return []  # the journal does not say, and a game long ended was told at the time
    events = list(journal.events(game.id))
    rulings = untold(game, events, told)
    for ruling in rulings:
        printer.again(ruling)
    if rulings:
        note(
            f"game {game.id}: announced again: {len(rulings)} ruling{'s' if len(rulings) != 1 else ''} "
            "that may not have gone out before the restart"
        )
    if game.status != OPEN:
        journal.told_all(game.id)
    elif events:
        journal.told(game.id, journal.next_seq(game.id) - 1, 1 << 30)
    return rulings


def run_service(
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO | None = None,
    clock: Clock | None = None,
    opener: Callable[..., Any] | None = None,
    stop: StopRequest | None = None,
) -> int:
    """`opener`: how the camera is opened (tests give a double that loses it). `stop`: the
    SIGTERM/SIGINT request (stopping.py), taken between startup steps and by the loop: the
    game stays open in the journal, the lights and buzzer go off, the pins are released."""
    err = err or sys.stderr
    stop = stop or stop_request

    def note(text: str) -> None:
        err.write(text + "\n")
        err.flush()

    notifier = Notifier.from_env()
    # STOPPING=1 as soon as the stop is asked for: systemd then knows the service is on its way out.
    with stop.on_stop(lambda: notifier.stopping(f"stopping ({stop.name})")):
        try:
            return _run_service(args, out, note, clock, opener, stop, notifier)
        except Stopped as e:
            note(f"stopped ({stop.name}) while starting")
            return e.code


def _run_service(
    args: argparse.Namespace,
    out: TextIO,
    note: Callable[[str], Any],
    clock: Clock | None,
    opener: Callable[..., Any] | None,
    stop: StopRequest,
    notifier: Notifier,
) -> int:
    config = load_config(args.config)
    if args.at_once and args.lays_from is None:
        raise UserError("--at-once judges a script: give it one with --lays-from FILE|-")
    if args.lays_from is None and config.camera is None:
        raise UserError(
            f"{config.source}: [camera] source is not set: set it, or rehearse with --lays-from FILE|-"
        )
    stop.check()

    spec = GameSpec(config.players, config.rules, config.options)
    stream, name, explicit = None, "camera", False
    lines: Iterable[bytes] = ()
    if args.lays_from is not None:
        stream, name, _ = open_script(args.lays_from)
        try:
            lines, spec, explicit = _game_of(stream, name, spec)
        except ScriptError as e:  # its first line cannot be read (a line with no end: /dev/zero)
            stream.close()
            raise UserError(str(e)) from None
    try:
        with Journal.open(config.data_dir, accept_loss=args.new_game) as journal:
            if journal.damage is not None:
                note(f"{journal.damage}: going on with a new game, as --new-game asks")
            stop.check()
            upcoming = None if explicit else journal.next_game(spec.to_json())
            if upcoming is not None:  # the host's house rules for the next game, kept over a restart
                spec = _spec_of(upcoming, spec)
            printer = RulingPrinter(out)
            games = journal.games()
            if games and games[-1].status != OPEN:  # its end's rulings may not all have gone out
                announce_again(journal, games[-1], printer, note)
            start = start_game(journal, spec, name, explicit, args.new_game)
            again: list[Ruling] = []  # the resumed game's rulings announced again: the kiosk marks them
            if args.lays_from is None and start.resumed is not None and start.state.winner is not None:
                # Won, but the power went before the journal said so: settle and close it (the
                # end of its input), then the table deals again.
                announce_again(journal, start.resumed, printer, note)
                final, last = finish(start.state)
                journal.end_game(start.game, WON, final.winner)
                for ruling in last:
                    printer(ruling)
                journal.told_all(start.game)
                note(f"game {start.game}: won by {final.players[final.winner or 0]} before the restart")
                start = start_game(journal, spec, name, explicit, True)
            if start.resumed is not None:
                r = start.resumed
                note(
                    f"resuming game {r.id} from the journal ({journal.path}): {r.events} events, "
                    f"table time {(r.last_t or 0) / 1e6:.3f} s"
                    + (f", {name} from line {start.skip_through + 1}" if start.skip_through else "")
                )
                again = announce_again(journal, r, printer, note)
            else:
                note(f"game {start.game}: {', '.join(spec.players)} ({spec.rules}); journal {journal.path}")
            stop.check()
            recorder = Recorder(journal, start.game, start.seq)

            def close_won(ruling: Ruling) -> None:
                if type(ruling) is GameWon:  # its event is journaled: the game is over
                    journal.end_game(recorder.game, WON, ruling.seat)

            def ended(state: State) -> None:
                journal.end_game(recorder.game, WON if state.winner is not None else STOPPED, state.winner)

            sinks = [printer, close_won]
            clips = None
            if args.lays_from is None and config.replay.clips:
                from .clip_store import open_clips

                clips = open_clips(config.clips_dir, config.replay, note)
            kiosk = None
            if config.kiosk and not args.at_once:
                kiosk = _start_kiosk(
                    config,
                    getattr(args, "host", None),
                    journal,
                    recorder,
                    spec,
                    start.judging,
                    name,
                    note,
                    again,
                    clips,
                )
            if kiosk is not None:
                _night_scores(journal, kiosk, sinks, note)
            try:
                state = _judge(
                    args,
                    config,
                    name,
                    spec,
                    lines,
                    start,
                    recorder,
                    sinks,
                    clock,
                    note,
                    ended,
                    opener,
                    kiosk,
                    stop=stop,
                    notifier=notifier,
                    teller=Teller(journal, recorder),
                    clips=clips,
                )
            finally:
                if kiosk is not None:
                    kiosk.server.stop()
            if state.winner is not None:
                note(f"game {recorder.game}: {state.players[state.winner]} wins")
            if stop.requested:
                note(
                    f"stopped ({stop.name}): game {recorder.game} stays open in the journal and "
                    "resumes at the next start"
                    if journal.game(recorder.game).status == OPEN  # type: ignore[union-attr]
                    else f"stopped ({stop.name})"
                )
                return stop.exit_code
            if state.winner is None and args.lays_from is not None:
                note(f"game {start.game}: the script ended with no winner")
            if journal.game(recorder.game).status != OPEN:  # type: ignore[union-attr]
                journal.told_all(recorder.game)
    except ScriptError as e:
        raise UserError(str(e)) from None
    finally:
        if stream is not None and stream.stream is not sys.stdin.buffer:
            stream.close()
    return 0


def _judge(
    args: argparse.Namespace,
    config: Config,
    name: str,
    spec: GameSpec,
    lines: Iterable[bytes],
    start: Start,
    recorder: Recorder,
    sinks: list[Callable[[Ruling], Any]],
    clock: Clock | None,
    note: Any,
    ended: Callable[[State], Any],
    opener: Callable[..., Any] | None,
    kiosk: Kiosk | None,
    *,
    stop: StopRequest,
    notifier: Notifier,
    teller: Teller,
    clips: Any = None,
) -> State:
    """The game judged from its lay source: a script (at once or live) or the camera."""
    answers = _terminal(args)
    more = {"stop": stop, "notifier": notifier, "teller": teller, "clips": clips}
    if args.lays_from is None:
        return _judge_live(
            config,
            name,
            start.judging,
            None,
            recorder,
            sinks,
            clock,
            note,
            None,
            opener,
            kiosk,
            answers,
            **more,
        )
    items = read_script(lines, name, game=spec)
    next(items)  # the deal: the table itself comes from the journal
    marked: list[int] = []  # the script's own time of the last line judged before a restart

    def after_skip() -> Iterator[tuple[int, Event]]:
        for n, e in items:
            if n > start.skip_through:
                yield n, e
            elif n == start.skip_through:
                marked.append(e.t)

    script = after_skip()
    if args.at_once:
        return _judge_at_once(config, name, start.judging, script, recorder, [*sinks, teller], ended, stop)
    # A resumed rehearsal keeps the script's spacing across the restart: its lines go on at
    # the offset the judged ones had (the time between the last one judged and the next is
    # kept; the time the service was down is not game time).
    offset = None
    if start.mark_t is not None:
        first = next(script, None)
        if marked and first is not None:
            offset = start.mark_t - marked[0]
        script = itertools.chain([first], script) if first is not None else script
    return _judge_live(
        config,
        name,
        start.judging,
        script,
        recorder,
        sinks,
        clock,
        note,
        ended,
        None,
        kiosk,
        answers,
        offset=offset,
        **more,
    )


def _terminal(args: argparse.Namespace) -> TextIO | None:
    """Where the host types answers to the camera's questions: stdin when a person started the
    service at a terminal (not systemd, and not when the lays come from stdin)."""
    stdin = sys.stdin
    if args.lays_from == "-" or stdin is None or not stdin.isatty():
        return None
    return stdin


def _game_of(stream: Iterable[bytes], name: str, default: GameSpec) -> tuple[Iterator[bytes], GameSpec, bool]:
    """The input's own game line if its first line is one, else the config's game."""
    lines = iter(stream)
    head: list[bytes] = []
    for lineno, raw in enumerate(lines, 1):
        head.append(raw)
        if raw.strip():
            spec = read_game_line(raw, name, lineno)
            return _chain(head, lines), spec or default, spec is not None
    return iter(head), default, False


def _chain(head: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from head
    yield from rest


def _judge_at_once(
    config: Config,
    source: str,
    judging: Judging,
    script: Iterable[tuple[int, Event]],
    recorder: Recorder,
    sinks: list[Callable[[Ruling], Any]],
    ended: Callable[[State], Any],
    stop: StopRequest | None = None,
) -> State:
    """The script judged on virtual time, as fast as the journal writes: lights and sound on
    mock pins (as `adjudicate --pipeline` plays them), no live input. A stop asked for is
    taken between two lines: the game stays open, to resume at the next start."""
    state = judging.state
    clock = VirtualClock(state.now)
    factory = VirtualFactory(clock)
    signals = TableSignals.from_wiring(config.wiring, factory)
    player = SignalPlayer(Announcer(state.seats), signals, clock)
    loop = TableLoop(
        judging,
        {"script": 0},
        rulings=sinks,
        signals=[player.announce],
        timer_waits=False,
        judged=[recorder],
        questions=[lambda open_, _: player.ask(bool(open_))],
    )
    try:
        for lineno, event in script:
            if stop is not None and stop.requested:
                break
            clock.sleep_until(event.t)
            loop.put_lay(event, lineno, source="script")
            loop.pump(event.t)
            player.run_until(event.t)
        if stop is not None and stop.requested:
            loop.drain()  # what was taken in is judged and journaled; the game stays open
        else:
            loop.finish(ended)
    except EventError as e:
        raise UserError(f"{source}:{e.tag}: {e}") from None
    finally:
        signals.off()
        signals.close()
        factory.close()
    return loop.state


def _judge_live(
    config: Config,
    source: str,
    judging: Judging,
    script: Iterator[tuple[int, Event]] | None,
    recorder: Recorder,
    sinks: list[Callable[[Ruling], Any]],
    clock: Clock | None,
    note: Any,
    ended: Callable[[State], Any] | None,
    opener: Callable[..., Any] | None = None,
    kiosk: Kiosk | None = None,
    answers: Iterable[str] | None = None,
    *,
    offset: int | None = None,
    stop: StopRequest | None = None,
    notifier: Notifier | None = None,
    teller: Teller | None = None,
    clips: Any = None,
) -> State:
    """Live: the table loop in this thread, the buttons' callbacks and the lay source in theirs.
    `answers`: the host's typed answers to the camera's questions (the terminal), or None.
    `offset`: a resumed rehearsal's script time to game time. A stop asked for (`stop`) ends
    the loop at its next turn: what it took in is judged and journaled, the game stays open,
    the lights and buzzer go off and the pins are released."""
    stop = stop or StopRequest()
    state = judging.state
    base = clock or MonotonicClock()
    game_clock = GameClock(base, state.now - base.now_us())
    factory = VirtualFactory(base) if config.pins == "mock" else gpio_factory()  # the header's chip
    signals: Any = _open_signals(config, factory)
    if kiosk is not None:
        signals = MirroredSignals(signals, kiosk.hub)
    player = SignalPlayer(Announcer(state.seats), signals, game_clock)
    wiring = config.wiring
    gpio = "gpio" if config.buttons == "gpiod" else "buttons"
    sources = {"buttons": LATENCIES_US[gpio]} if any(b is not None for b in wiring.buttons) else {}
    if wiring.usb:
        sources["usb"] = LATENCIES_US["usb"]
    sources["script" if script is not None else "camera"] = LATENCIES_US["script" if script else "camera"]

    def trouble(item: ButtonTrouble) -> None:
        note(f"{loop.state.players[item.seat]}: {TROUBLE_WORDS[item.kind]}")

    troubles: list[Callable[[ButtonTrouble], Any]] = [trouble]
    rulings = list(sinks)
    questions: list[Callable[[tuple[Unread, ...], State], Any]] = [lambda open_, _: player.ask(bool(open_))]
    crops = None
    if kiosk is not None:
        troubles.append(kiosk.hub.trouble)
        # The loop's state is the one after r; a correction's rulings rebuild the view (TableView).
        rulings.append(lambda r: kiosk.hub.add(r, loop.state))
        crops = kiosk.crops
        questions.append(lambda open_, _: kiosk.hub.ask(open_, crops))
    replay = None
    if clips is not None and script is None:  # the camera's clips of disputed rulings
        replay = _replay(clips, config, recorder, lambda: loop.state.players, note, kiosk, game_clock)
        rulings.insert(0, replay.ruling)  # before the kiosk's: its view learns the clips' game first
    if teller is not None:
        rulings.append(teller)  # last: a ruling is told once every other sink has it

    def refused(event: Event | Named, why: str) -> None:
        if type(event) is Named:
            note(f"host: {why}: the card is asked again")
        else:
            note(f"camera: {why}: a misreading, so the card is asked")

    def late(source: str, t: int, at: int) -> None:
        note(
            f"{source}: an event stamped {t} came {(at - t) / 1000:.1f} ms after the table was "
            f"judged past it (a loaded machine?): judged at {at}, after what was already judged"
        )

    loop = TableLoop(
        judging,
        sources,
        rulings=rulings,
        signals=[player.announce],
        troubles=troubles,
        judged=[recorder] if replay is None else [recorder, replay.judged],
        refused=refused if script is None else None,  # a script's bad line is the script's error
        questions=questions,
        late=late,
        resolution_us=wiring.resolutions_us,
        heats=lambda press, first: note(
            f"{loop.state.players[press.seat]}: pressed {(press.t - first.t) / 1000:.1f} ms after "
            f"{loop.state.players[first.seat]}, within its button's resolution: judged at the same instant"
        ),
    )
    if kiosk is not None:
        kiosk.commands.loop = loop
    terminal = None
    if answers is not None:
        from .terminal import TerminalQuestions, loop_namer

        namer = kiosk.commands.name_card if kiosk is not None else loop_namer(loop)
        terminal = TerminalQuestions(namer, note)
        loop.question_sinks.append(terminal.ask)
    if loop.judging.open:  # a resumed game still asks: the light, the tone and the terminal say so now
        for sink in loop.question_sinks:
            sink(loop.judging.open, loop.state)

    def paused(reason: str | None) -> None:
        loop.pause(reason is not None)
        player.pause(reason is not None)
        if kiosk is not None:
            kiosk.hub.pause(reason) if reason is not None else kiosk.hub.resume()

    shift = game_clock.shift

    def edge(e: Edge) -> None:
        loop.put_edge(e._replace(t=e.t + shift))  # the kernel's stamp, on the game's timeline

    try:
        buttons = _open_buttons(config, loop, edge, factory, base, shift, note)
    except BaseException:
        signals.close()
        raise
    try:
        usb = _open_usb(config.source, wiring, loop, shift, base, note, troubles) if wiring.usb else None
    except BaseException:
        buttons.close()
        signals.close()
        raise
    failure: list[BaseException] = []
    stopped = threading.Event()  # wakes a camera waiting to retry when the service stops
    notifier = notifier or Notifier.from_env()
    watchdog = Watchdog.from_env(notifier)

    def ready() -> None:  # the lay source is up: the buttons, lights and loop already are
        notifier.ready(f"judging {', '.join(state.players)}: lays from {source}")

    if script is not None:
        work: tuple[Callable[..., None], tuple[Any, ...], dict[str, Any]] = (
            _feed_script,
            (loop, script, game_clock, failure, note, ready, offset),
            {},
        )
    else:
        work = (
            _feed_camera,
            (loop, config, game_clock, failure, note, ready, paused, stopped, opener, None, crops),
            {"frames": replay.frame} if replay is not None else {},
        )
    feeder = threading.Thread(target=work[0], args=work[1], kwargs=work[2], name="lays", daemon=True)

    def heartbeat() -> int:
        assert watchdog is not None
        watchdog.tick()
        return watchdog.due_in_us()

    try:
        player.start()
        if replay is not None:
            replay.start()
        if isinstance(buttons, GpioButtons):
            buttons.start()
        if usb is not None:
            usb.start()
        feeder.start()
        if terminal is not None:
            from .terminal import start_reader

            start_reader(terminal, answers)
        with stop.on_stop(loop.stop):  # the loop returns at its next turn (a SimpleQueue put)
            loop.run(game_clock, heartbeat if watchdog is not None else None)
        if script is not None and not stop.requested:
            loop.finish(ended)  # the script has ended: so has the game
        else:
            loop.drain()  # stopped: the game stays open, to resume at the next start
    except EventError as e:
        raise UserError(f"{source}:{e.tag}: {e}" if e.tag is not None else f"{source}: {e}") from None
    finally:
        stopped.set()
        notifier.stopping()
        buttons.close()
        if usb is not None:
            usb.close()
        player.close()
        if replay is not None:
            replay.close()  # the clips still open written with the frames they have
        signals.off()  # lights and buzzer off before the pins go back
        signals.close()
        if factory is not None:
            factory.close()
    if failure and not stop.requested:
        raise failure[0]
    return loop.state


def _open_buttons(
    config: Config,
    loop: TableLoop,
    edge: Callable[[Edge], Any],
    factory: Any,
    clock: Clock,
    shift: int,
    note: Any,
) -> SnapButtons | GpioButtons:
    """The wiring's GPIO buttons: read from the kernel's line events with their progress
    (`buttons = "gpiod"`, on the double of the chips with mock pins), or through gpiozero's
    callbacks. A line that cannot be requested: one line naming it, exit 2. Lines that fail
    mid-game: said in one line (the reader's), asked for again every second; the game goes on."""
    wiring = config.wiring
    if config.buttons == "gpiozero":
        return SnapButtons(wiring.buttons, edge, pin_factory=factory)
    from hardware import gpio_buttons

    if config.pins == "mock":
        from hardware import gpio_double

        system: Any = gpio_double.mock_chips()  # nobody presses them: the script snaps
    else:
        system = gpio_buttons.default_system()
    try:
        return GpioButtons(
            wiring.buttons,
            edge,
            progress=lambda t: loop.progress("buttons", t + shift),
            wanted=loop.waiting,
            clock=clock,
            system=system,
            note=note,
            names=loop.state.players,
        )
    except gpio_buttons.GpioError as e:
        raise UserError(str(e)) from None


def _open_usb(
    source: str,
    wiring: Any,
    loop: TableLoop,
    shift: int,
    clock: Clock,
    note: Any,
    troubles: list[Callable[..., Any]],
) -> Any:
    """The wiring's USB encoders and keyboards, read by their own thread: each edge with the
    kernel's stamp and the reader's progress, on the game's timeline. A device the wiring names
    that is not there: one line, exit 2. One that goes away: said, its seats' presses paused
    (they cannot come), the game goes on; it is looked for again every second."""
    from hardware.usb_buttons import UsbButtons, UsbError, default_system

    seats = wiring.usb_seats()

    def lost(label: str, gone: bool) -> None:
        # The reader's own line names the device; the kiosk marks each of its seats.
        t = clock.now_us() + shift
        for seat in sorted(seats[label].values()):
            for sink in troubles[1:]:
                sink(ButtonTrouble(seat, t, "unplugged" if gone else "recovered"))

    try:
        return UsbButtons(
            wiring.usb_devices(),
            seats,
            lambda e: loop.put_edge(e._replace(t=e.t + shift), "usb"),
            progress=lambda t: loop.progress("usb", t + shift),
            lost=lost,
            wanted=loop.waiting,
            clock=clock,
            system=default_system(),
            note=note,
        )
    except UsbError as e:
        raise UserError(f"{source}: hardware.wiring: {e}") from None


class MirroredSignals:
    """The table's lights and buzzer, each change also shown on the kiosk page."""

    def __init__(self, signals: TableSignals, hub: Any) -> None:
        self.signals = signals
        self.hub = hub

    def apply(self, target: Any, value: Any) -> None:
        self.signals.apply(target, value)
        self.hub.signal(target, value)

    def dark(self) -> list[tuple[Any, Any]]:
        return self.signals.dark()

    def off(self) -> None:
        """Every light and the buzzer off, the kiosk's copy too."""
        for target, value in self.dark():
            self.apply(target, value)

    def close(self) -> None:
        self.signals.close()


@dataclass
class Kiosk:
    """The kiosk page's parts, wired to the loop once it exists."""

    hub: Any
    commands: Any
    server: Any
    crops: AskedCrops  # the camera's pictures of the cards it asks about, which the page shows


def _start_kiosk(
    config: Config,
    host: str | None,
    journal: Journal,
    recorder: Recorder,
    spec: GameSpec,
    judging: Judging,
    source: str,
    note: Any,
    again: Sequence[Ruling] = (),
    clips: Any = None,
) -> Kiosk:
    from referee.kiosk.app import KioskHub, make_app
    from referee.kiosk.server import KioskServer
    from referee.kiosk.token import load_or_create_token

    from .host import HostCommands, view_of

    crops = AskedCrops()
    view = view_of(judging)  # a resumed game shows its log and figures, and any open question
    view.again(again)  # and which of its rulings were announced again at this start
    view.ask(judging.open, crops)
    hub = KioskHub(view)
    token = load_or_create_token(config.data_dir / "admin-token")
    from referee.kiosk.phones import lan_address, watch_url

    # The host's rules for the next game (journaled), unless the config changed since they were set.
    base = GameSpec(config.players, config.rules, dict(config.options)).to_json()
    upcoming = journal.next_game(base)
    commands = HostCommands(journal, recorder, hub, spec, source, crops=crops, base=base)
    if upcoming is not None:
        commands.spec = _spec_of(upcoming, spec)
        hub.next_game(upcoming)
    listen, lan = host or config.kiosk_host, lan_address()
    server = KioskServer(
        make_app(
            hub,
            token,
            commands,
            crops.get,
            config.kiosk_names,
            watch=lambda: watch_url(listen, server.port, lan),
            sound=config.kiosk_sound,
            buzzer=config.pins == "gpio" and config.wiring.buzzer is not None,
            clips=clips,
        ),
        hub,
        host=listen,
        port=config.kiosk_port,
    )
    server.start()  # a busy port: one line, exit 2
    note(f"kiosk page: {server.url}")
    watching = watch_url(listen, server.port, lan)
    if watching is not None:
        note(f"phones on this network: the kiosk page at {watching}")
    return Kiosk(hub, commands, server, crops)


def _spec_of(line: dict[str, Any], default: GameSpec) -> GameSpec:
    """A journaled game line (`Journal.next_game`) as the next game's spec."""
    game = line.get("game", {})
    return GameSpec(
        tuple(game.get("players", default.players)),
        game.get("rules", default.rules),
        dict(game.get("options", {})),
    )


def _night_scores(journal: Journal, kiosk: Kiosk, sinks: list[Any], note: Any) -> None:
    """The night's scores on the kiosk between games: read now, and again when a game is won
    (after `close_won` has closed it) or the host starts a new one."""
    from .scores import NightFeed

    feed = NightFeed(journal, kiosk.hub, note)
    feed.refresh()
    sinks.append(feed.on_ruling)
    kiosk.commands.on_new_game.append(feed.refresh)


def _replay(
    clips: Any, config: Config, recorder: Recorder, names: Any, note: Any, kiosk: Kiosk | None, clock: Any
) -> Any:
    """The camera's ring and the clips of the disputed rulings (clip_store.py)."""
    from .clip_store import ClipRecorder

    return ClipRecorder(
        clips,
        config.replay,
        config.fps,
        lambda: recorder.game,
        names,
        said=lambda why: note(f"camera: {why}"),
        status=kiosk.hub.replay if kiosk is not None else None,
        clock=clock,
    )


def _open_signals(config: Config, factory: Any) -> TableSignals:
    try:
        return TableSignals.from_wiring(config.wiring, factory)
    except Exception as e:  # no GPIO on this machine, or a pin is busy
        raise UserError(
            f"{config.source}: cannot open the pins ({type(e).__name__}: {e}); on the Pi install "
            'python3-lgpio, elsewhere set [hardware] pins = "mock"'
        ) from None


def _feed_script(
    loop: TableLoop,
    script: Iterator[tuple[int, Event]],
    clock: GameClock,
    failure: list,
    note: Any,
    ready: Callable[[], Any],
    offset: int | None = None,
) -> None:
    """A rehearsal: each line delivered at its own time, the spacing of the script kept
    (`offset`: script time to game time, kept from before a restart; None: the first line now)."""
    ready()
    try:
        for lineno, event in script:
            if offset is None:
                offset = clock.now_us() - event.t
            t = event.t + offset
            # Nothing comes from the script before its next line: said at once, so a feeder
            # woken late on a loaded machine is never behind what the loop has judged.
            loop.progress("script", t - 1)
            clock.sleep_until(t)
            if type(event) is Named:  # the lay it names moves with it
                event = event._replace(lay_t=event.lay_t + offset)
            loop.put_lay(event._replace(t=t), lineno, source="script")
    except ScriptError as e:
        failure.append(UserError(str(e)))
    except BaseException as e:  # surfaced by the main thread
        failure.append(e)
    finally:
        loop.close_source("script")
        loop.stop()


def _feed_camera(
    loop: TableLoop,
    config: Config,
    clock: GameClock,
    failure: list,
    note: Any,
    ready: Callable[[], Any],
    paused: Callable[[str | None], Any] | None = None,
    stopped: threading.Event | None = None,
    opener: Callable[..., Any] | None = None,
    backoff_s: tuple[float, ...] | None = None,
    crops: AskedCrops | None = None,
    frames: Callable[[int, Any], Any] | None = None,
) -> None:
    """The camera's lays, stamped on the game's timeline. A card it cannot read for sure is
    asked (its picture kept in `crops`, for the kiosk to show the host). A lost camera pauses the game
    (presses are not judged, the status LED shows red) and is opened again with backoff;
    the watcher goes on from the pile it last saw, so a card laid meanwhile is reported
    when the camera is back. After the last retry the service exits 3 (systemd restarts it)."""
    from hardware.camera import black_frames_lose, open_source
    from hardware.frames import CameraLost, SourceError
    from referee.vision.recogniser import recogniser_for
    from referee.vision.watcher import PileWatcher, WatchAsk, WatchCleared, WatchLay

    opener = opener or open_source
    stopped = stopped or threading.Event()
    backoff_s = RECONNECT_S if backoff_s is None else backoff_s
    try:
        recogniser = recogniser_for(str(config.profile) if config.profile else None)
        seen: set[str] = set()
        watcher = PileWatcher(
            lambda image, mask: recogniser.recognise(image, mask, frozenset(seen)),
            sides=config.sides,
            fps=config.fps,
        )
        live = config.camera == "camera" or (config.camera or "").isdigit()
        offset = clock.shift if live else None  # a file's own times: spacing kept
        tries = 0
        said_ready = False
        lost: CameraLost | None = None
        while True:
            try:
                source = opener(config.camera or "camera", fps=None if live else config.fps)
            except SourceError as e:
                if lost is None:
                    raise UserError(str(e)) from None  # never opened: the config names no camera
                source = None
            if source is not None:
                try:
                    with source:
                        if config.camera_locks is not None:  # as the camera step locked them
                            from hardware.camera_controls import controls_for

                            controls_for(source).lock(*config.camera_locks)
                        for frame in black_frames_lose(source, source.name) if live else source:
                            if stopped.is_set():
                                return  # the service is stopping: the camera is closed on the way out
                            if not said_ready:
                                ready()  # the camera gives frames and the recogniser is loaded
                                said_ready = True
                            if lost is not None:
                                note(f"camera back after {tries} retries: the game goes on")
                                if paused is not None:
                                    paused(None)
                                lost, tries = None, 0
                            if offset is None:
                                offset = clock.now_us() - frame.t_us
                            for item in watcher.feed(frame):
                                why = recogniser.profile_mismatch()
                                if why is not None:
                                    # Every reading would be suspect: said once, then read as any deck.
                                    note(f"camera profile {config.profile}: {why}; reading without it")
                                    recogniser.profile = None
                                t = item.t_us + offset
                                if type(item) is WatchLay:
                                    seen.add(item.card.code)
                                    loop.put_lay(Lay(t, item.card, item.seat), None, source="camera")
                                elif type(item) is WatchAsk:
                                    if crops is not None:
                                        crops.keep(t, item.crop)
                                    loop.put_lay(Unread(t, item.seat, item.guess), None, source="camera")
                                elif type(item) is WatchCleared:
                                    seen.clear()
                                    loop.put_lay(Wait(t), None, source="camera")
                            # Read up to here: a still pile lets presses be judged at once.
                            done = watcher.progress()
                            if done is not None:
                                loop.progress("camera", done + offset)
                            if frames is not None:  # the replay's ring: an append, never a wait
                                frames(frame.t_us + offset, frame.image)
                            if not live:
                                clock.sleep_until(frame.t_us + offset)
                    return  # a file or a folder has ended
                except CameraLost as e:
                    if lost is None:
                        note(f"{e}: game paused, presses are not judged until the camera is back")
                        if paused is not None:
                            paused(f"{e}: the game is paused")
                    lost = e
            if tries >= len(backoff_s):
                assert lost is not None
                raise lost
            if stopped.wait(backoff_s[tries]):
                return
            tries += 1
    except BaseException as e:
        failure.append(e)
    finally:
        loop.close_source("camera")
        loop.stop()
