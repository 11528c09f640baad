"""The game judged from its lay source: a script at once, a live rehearsal, or the camera.

    lays: camera -> pile watcher, or a script's lines  --\\
    snaps: buttons (edges stamped by the kernel)        ----> table loop -> journal (first),
                                                                          rulings on stdout,
                                                                          LEDs and buzzer

Live, the table loop runs in this thread, the buttons' readers and the lay source in theirs;
the table itself (pins, lights, player, loop, buttons) comes from the assembly. At once
(`--at-once`), a script is judged on virtual time with no live hardware, exactly as
`referee adjudicate` does (timers fire only on the script's own wait lines).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from hardware.clock import Clock, MonotonicClock, VirtualClock
from hardware.presses import TROUBLE_WORDS, ButtonTrouble
from referee.errors import UserError
from referee.rules.events import Event, Named, Snap
from referee.rules.script import GameSpec, read_script
from referee.rules.state import State

from . import camera_feed
from .assembly import GameClock, Table, TableHooks, TableSettings, assemble
from .clip_store import ClipRecorder
from .config import Config
from .loop import EventError, RulingSink, TableLoop
from .resume import Start
from .script_feed import ScriptLines, after_judged, feed_script, kept_spacing
from .sd_notify import Notifier, Watchdog
from .signal_player import MirroredSignals
from .sinks import Recorder, Teller
from .stopping import StopRequest
from .terminal import TerminalQuestions, loop_namer, start_reader

if TYPE_CHECKING:
    from .kiosk_start import Kiosk

# How late each source may deliver an event (see loop.py): a script line comes at once;
# a press's callback within a few ms; the camera reports a card up to ~150 ms after it lands.
# The camera's is only its bound until its first frame: then the pile watcher's progress is.
# USB buttons report their progress with every read (usb_buttons.py): 20 ms bounds them only
# until the reader's first sweep; so do GPIO buttons read from the kernel's line events
# (gpio_buttons.py; "buttons" is gpiozero's callbacks, `buttons = "gpiozero"`).
LATENCIES_US = {"script": 20_000, "buttons": 60_000, "camera": 250_000, "usb": 20_000, "gpio": 20_000}


@dataclass
class GameRun:
    """A game `referee run` judges: where its lays come from, where its events and rulings go."""

    config: Config
    source: str  # the lay source's name: "camera", or the script's path ("-": stdin)
    start: Start  # the game: new, or resumed from the journal
    recorder: Recorder  # the journal, first
    sinks: list[RulingSink]  # stdout, the game's close in the journal, the night's scores
    teller: Teller  # the last ruling sink: the journal notes how far the rulings were told
    ended: Callable[[State], Any]  # told the final table of a game whose script has ended
    note: Callable[[str], Any]
    stop: StopRequest
    notifier: Notifier
    clock: Clock | None = None  # None: CLOCK_MONOTONIC
    opener: Callable[..., Any] | None = None  # how the camera is opened (tests give a double)
    kiosk: Kiosk | None = None
    clips: Any = None  # the replay clips' store (clip_store.py), or None
    answers: Iterable[str] | None = None  # the host's typed answers (the terminal), or None


def judge(run: GameRun, lines: Iterable[bytes] | None, spec: GameSpec, at_once: bool) -> State:
    """The game judged from its lay source: a script's `lines` (at once or live), or the camera
    (None). The script's deal is not dealt again: the table comes from the journal."""
    if lines is None:
        return LiveRun(run, None).judge()
    items = read_script(lines, run.source, game=spec)
    next(items)  # the deal: the table itself comes from the journal
    script, marked = after_judged(items, run.start)  # type: ignore[arg-type]
    if at_once:
        return judge_at_once(run, script)
    script, offset = kept_spacing(script, marked, run.start)
    return LiveRun(run, script, offset).judge()


def terminal(lays_from: str | None) -> TextIO | None:
    """Where the host types answers to the camera's questions: stdin when a person started the
    service at a terminal (not systemd, and not when the lays come from stdin: `lays_from` "-")."""
    stdin = sys.stdin
    if lays_from == "-" or stdin is None or not stdin.isatty():
        return None
    return stdin


def judge_at_once(run: GameRun, script: ScriptLines) -> State:
    """The script judged on virtual time, as fast as the journal writes: lights and sound on
    mock pins (as `adjudicate --pipeline` plays them), no live input. A stop asked for is
    taken between two lines: the game stays open, to resume at the next start."""
    clock = VirtualClock(run.start.state.now)
    settings = TableSettings(
        run.config.wiring, buttons="none", usb=(), latencies_us={"script": 0}, timer_waits=False
    )
    hooks = TableHooks(rulings=[*run.sinks, run.teller], judged=[run.recorder])
    table = assemble(settings, clock, run.start.judging, hooks)
    loop, player = table.loop, table.player
    assert loop is not None and player is not None
    try:
        for lineno, event in script:
            if run.stop.requested:
                break
            clock.sleep_until(event.t)
            loop.put_lay(event, lineno, source="script")
            loop.pump(event.t)
            player.run_until(event.t)
        if run.stop.requested:
            loop.drain()  # what was taken in is judged and journaled; the game stays open
        else:
            loop.finish(run.ended)
    except EventError as e:
        raise UserError(f"{run.source}:{e.tag}: {e}") from None
    finally:
        table.close()
    return loop.state


def sources(config: Config, script: bool) -> dict[str, int]:
    """The live loop's sources and their latencies: the buttons the wiring has, the lays'."""
    wiring = config.wiring
    gpio = "gpio" if config.buttons == "gpiod" else "buttons"
    found = {"buttons": LATENCIES_US[gpio]} if any(b is not None for b in wiring.buttons) else {}
    if wiring.usb:
        found["usb"] = LATENCIES_US["usb"]
    lays = "script" if script else "camera"
    found[lays] = LATENCIES_US[lays]
    return found


class LiveRun:
    """Live: the table loop in this thread, the buttons' readers and the lay source in theirs.
    `offset`: a resumed rehearsal's script time to game time. A stop asked for ends the loop
    at its next turn: what it took in is judged and journaled, the game stays open, the lights
    and buzzer go off and the pins are released."""

    def __init__(self, run: GameRun, script: ScriptLines | None, offset: int | None = None) -> None:
        self.run, self.script, self.offset = run, script, offset
        self.base = run.clock or MonotonicClock()
        self.shift = run.start.state.now - self.base.now_us()  # the clock to the game's timeline
        self.replay: ClipRecorder | None = None
        if run.clips is not None and script is None:  # the camera's clips of disputed rulings
            self.replay = self._clip_recorder()
        self.table: Table  # opened by `judge`
        self.failure: list[BaseException] = []
        self.stopped = threading.Event()  # wakes a camera waiting to retry when the service stops

    @property
    def loop(self) -> TableLoop:
        assert self.table.loop is not None
        return self.table.loop

    def judge(self) -> State:
        """Open the table, run the loop until the lays end or a stop; the table released."""
        self.table = assemble(self._settings(), self.base, self.run.start.judging, self._hooks())
        try:
            return self._run()
        finally:
            self.stopped.set()
            self.run.notifier.stopping()
            self.table.close()
            if self.replay is not None:
                self.replay.close()  # the clips still open written with the frames they have

    def _settings(self) -> TableSettings:
        config = self.run.config
        return TableSettings(
            config.wiring,
            pins=config.pins,
            buttons=config.buttons,
            latencies_us=sources(config, self.script is not None),
            shift_us=self.shift,
            where=config.source,
            wiring_where=f"{config.source}: hardware.wiring",
            mock_hint='set [hardware] pins = "mock"',
        )

    def _hooks(self) -> TableHooks:
        run, kiosk, replay = self.run, self.run.kiosk, self.replay
        rulings: list[RulingSink] = list(run.sinks)
        if kiosk is not None:
            # The loop's state is the one after r; a correction's rulings rebuild the view (TableView).
            rulings.append(lambda r: kiosk.hub.add(r, self.loop.state))
        if replay is not None:
            rulings.insert(0, replay.ruling)  # before the kiosk's: its view learns the clips' game first
        rulings.append(run.teller)  # last: a ruling is told once every other sink has it
        return TableHooks(
            rulings=rulings,
            judged=[run.recorder] if replay is None else [run.recorder, replay.judged],
            questions=[lambda open_, _: kiosk.hub.ask(open_, kiosk.crops)] if kiosk is not None else [],
            troubles=[self._trouble, *([kiosk.hub.trouble] if kiosk is not None else [])],
            unplugged=[kiosk.hub.trouble] if kiosk is not None else [],
            refused=self._refused if self.script is None else None,  # a script's bad line is its error
            late=self._late,
            heats=self._heat,
            mirror=(lambda signals: MirroredSignals(signals, kiosk.hub)) if kiosk is not None else None,
            note=run.note,
        )

    def _clip_recorder(self) -> ClipRecorder:
        """The camera's ring and the clips of the disputed rulings (clip_store.py)."""
        run, kiosk = self.run, self.run.kiosk
        return ClipRecorder(
            run.clips,
            run.config.replay,
            run.config.fps,
            lambda: run.recorder.game,
            lambda: self.loop.state.players,
            said=lambda why: run.note(f"camera: {why}"),
            status=kiosk.hub.replay if kiosk is not None else None,
            clock=GameClock(self.base, self.shift),
        )

    def _run(self) -> State:
        run, loop = self.run, self.loop
        if run.kiosk is not None:
            run.kiosk.commands.loop = loop
        terminal = self._terminal()
        if loop.judging.open:  # a resumed game still asks: the light, the tone and the terminal say so now
            for sink in loop.question_sinks:
                sink(loop.judging.open, loop.state)
        watchdog = Watchdog.from_env(run.notifier)
        feeder = self._feeder()
        try:
            self.table.start()
            if self.replay is not None:
                self.replay.start()
            feeder.start()
            if terminal is not None:
                start_reader(terminal, run.answers)
            with run.stop.on_stop(loop.stop):  # the loop returns at its next turn (a SimpleQueue put)
                loop.run(self.table.clock, _heartbeat(watchdog) if watchdog is not None else None)
            if self.script is not None and not run.stop.requested:
                loop.finish(run.ended)  # the script has ended: so has the game
            else:
                loop.drain()  # stopped: the game stays open, to resume at the next start
        except EventError as e:
            source = run.source
            raise UserError(f"{source}:{e.tag}: {e}" if e.tag is not None else f"{source}: {e}") from None
        if self.failure and not run.stop.requested:
            raise self.failure[0]
        return loop.state

    def _terminal(self) -> TerminalQuestions | None:
        """The camera's questions asked at the terminal too, when a person is at one."""
        if self.run.answers is None:
            return None
        kiosk = self.run.kiosk
        namer = kiosk.commands.name_card if kiosk is not None else loop_namer(self.loop)
        terminal = TerminalQuestions(namer, self.run.note)
        self.loop.question_sinks.append(terminal.ask)
        return terminal

    def _feeder(self) -> threading.Thread:
        """The lay source's thread: the script's lines, or the camera's frames."""
        run, clock = self.run, self.table.clock
        if self.script is not None:
            args: tuple[Any, ...] = (
                self.loop,
                self.script,
                clock,
                self.failure,
                run.note,
                self._ready,
                self.offset,
            )
            return threading.Thread(target=feed_script, args=args, name="lays", daemon=True)
        crops = run.kiosk.crops if run.kiosk is not None else None
        args = (self.loop, run.config, clock, self.failure, run.note, self._ready, self._paused, self.stopped)
        args += (run.opener, None, crops)
        kwargs = {"frames": self.replay.frame} if self.replay is not None else {}
        return threading.Thread(
            target=camera_feed.feed_camera, args=args, kwargs=kwargs, name="lays", daemon=True
        )

    def _ready(self) -> None:  # the lay source is up: the buttons, lights and loop already are
        players = ", ".join(self.run.start.state.players)
        self.run.notifier.ready(f"judging {players}: lays from {self.run.source}")

    def _paused(self, reason: str | None) -> None:
        assert self.table.player is not None
        self.loop.pause(reason is not None)
        self.table.player.pause(reason is not None)
        kiosk = self.run.kiosk
        if kiosk is not None:
            kiosk.hub.pause(reason) if reason is not None else kiosk.hub.resume()

    def _trouble(self, item: ButtonTrouble) -> None:
        self.run.note(f"{self.loop.state.players[item.seat]}: {TROUBLE_WORDS[item.kind]}")

    def _refused(self, event: Event | Named, why: str) -> None:
        if type(event) is Named:
            self.run.note(f"host: {why}: the card is asked again")
        else:
            self.run.note(f"camera: {why}: a misreading, so the card is asked")

    def _late(self, source: str, t: int, at: int) -> None:
        self.run.note(
            f"{source}: an event stamped {t} came {(at - t) / 1000:.1f} ms after the table was "
            f"judged past it (a loaded machine?): judged at {at}, after what was already judged"
        )

    def _heat(self, press: Snap, first: Snap) -> None:
        players = self.loop.state.players
        self.run.note(
            f"{players[press.seat]}: pressed {(press.t - first.t) / 1000:.1f} ms after "
            f"{players[first.seat]}, within its button's resolution: judged at the same instant"
        )


def _heartbeat(watchdog: Watchdog) -> Callable[[], int]:
    def heartbeat() -> int:
        watchdog.tick()
        return watchdog.due_in_us()

    return heartbeat
