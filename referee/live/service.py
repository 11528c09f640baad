"""`referee run`: the table service. Camera (or a rehearsal script) and buttons in, rulings out.

Every event the engine accepts is committed to the journal before any of its rulings goes
out, so a ruling anyone saw is never lost. At start an open game (one a crash or a power
cut interrupted) is replayed from the journal and goes on (resume.py); a rehearsal script
resumes at the line after the last one judged. The game is then judged from its lay source
(table_run.py) on the table the assembly opens (assembly.py), with the kiosk page
(kiosk_start.py) and the replay clips (clip_store.py) when the config has them.

Game time is CLOCK_MONOTONIC shifted so that a resumed game goes on from the time of its
last event (the clock starts again at boot). Buttons and the Pi camera are stamped on that
clock; a script's or a video file's own times keep their spacing. `--at-once` judges a
script on virtual time with no live hardware, exactly as `referee adjudicate` does.

The service takes its settings typed (`RunSettings`); the command line is the CLI's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from hardware.clock import Clock
from referee.errors import UserError
from referee.rules.engine import finish
from referee.rules.rulings import GameWon, Ruling
from referee.rules.script import GameSpec, ScriptError
from referee.rules.state import State

from . import table_run
from .clip_store import open_clips
from .config import Config, load_config
from .journal import OPEN, STOPPED, WON, Journal
from .resume import Start, announce_again, game_of, spec_of, start_game
from .script_file import open_script
from .sd_notify import Notifier
from .sinks import Recorder, RulingPrinter, Teller
from .stopping import Stopped, StopRequest, stop_request

if TYPE_CHECKING:
    from .kiosk_start import Kiosk

Note = Callable[[str], Any]


@dataclass(frozen=True)
class RunSettings:
    """What `referee run` is asked to do: its command line, typed (referee/cli/service.py)."""

    config: str  # the config file
    lays_from: str | None = None  # a rehearsal script instead of the camera ("-": stdin)
    at_once: bool = False  # the script judged at once on virtual time, as `adjudicate` does
    new_game: bool = False  # the open game (if any) abandoned
    host: str | None = None  # where the kiosk page listens (None: the config's [kiosk] listen)


def run_service(
    settings: RunSettings,
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
            service = _Service(settings, out, note, clock, opener, stop, notifier)
            return service.run()
        except Stopped as e:
            note(f"stopped ({stop.name}) while starting")
            return e.code


class _Service:
    """One run of the service: the config and the lay source checked, the journal opened, the
    game started or resumed, judged, and closed or left open."""

    def __init__(
        self,
        settings: RunSettings,
        out: TextIO,
        note: Note,
        clock: Clock | None,
        opener: Callable[..., Any] | None,
        stop: StopRequest,
        notifier: Notifier,
    ) -> None:
        self.settings, self.note, self.clock, self.opener = settings, note, clock, opener
        self.stop, self.notifier = stop, notifier
        self.printer = RulingPrinter(out)
        self.config = _checked_config(settings)

    def run(self) -> int:
        settings, config = self.settings, self.config
        self.stop.check()
        spec = GameSpec(config.players, config.rules, config.options)
        stream, name, explicit = None, "camera", False
        lines: Iterable[bytes] | None = None
        if settings.lays_from is not None:
            stream, name, _ = open_script(settings.lays_from)
            try:
                lines, spec, explicit = game_of(stream, name, spec)
            except ScriptError as e:  # its first line cannot be read (a line with no end: /dev/zero)
                stream.close()
                raise UserError(str(e)) from None
        try:
            with Journal.open(config.data_dir, accept_loss=settings.new_game) as journal:
                return self._serve(journal, lines, spec, name, explicit)
        except ScriptError as e:
            raise UserError(str(e)) from None
        finally:
            if stream is not None and stream.stream is not sys.stdin.buffer:
                stream.close()

    def _serve(
        self, journal: Journal, lines: Iterable[bytes] | None, spec: GameSpec, name: str, explicit: bool
    ) -> int:
        """The game started or resumed from `journal`, judged, then closed or left open."""
        if journal.damage is not None:
            self.note(f"{journal.damage}: going on with a new game, as --new-game asks")
        self.stop.check()
        upcoming = None if explicit else journal.next_game(spec.to_json())
        if upcoming is not None:  # the host's house rules for the next game, kept over a restart
            spec = spec_of(upcoming, spec)
        games = journal.games()
        if games and games[-1].status != OPEN:  # its end's rulings may not all have gone out
            announce_again(journal, games[-1], self.printer, self.note)
        start, again = self._start(journal, spec, name, explicit)
        self.stop.check()
        recorder = Recorder(journal, start.game, start.seq)
        run = self._game_run(journal, recorder, start, name)
        kiosk = self._kiosk(journal, run, spec, again)
        try:
            state = table_run.judge(run, lines, spec, self.settings.at_once)
        finally:
            if kiosk is not None:
                kiosk.server.stop()
        return self._after(journal, recorder.game, state, start)

    def _start(
        self, journal: Journal, spec: GameSpec, name: str, explicit: bool
    ) -> tuple[Start, list[Ruling]]:
        """The game to go on with, and the resumed game's rulings announced again (the kiosk
        marks them). A game won before the journal said so is settled first: the table deals again."""
        start = start_game(journal, spec, name, explicit, self.settings.new_game)
        if self.settings.lays_from is None and start.resumed is not None and start.state.winner is not None:
            self._settle_won(journal, start)
            start = start_game(journal, spec, name, explicit, True)
        if start.resumed is None:
            self.note(f"game {start.game}: {', '.join(spec.players)} ({spec.rules}); journal {journal.path}")
            return start, []
        r = start.resumed
        self.note(
            f"resuming game {r.id} from the journal ({journal.path}): {r.events} events, "
            f"table time {(r.last_t or 0) / 1e6:.3f} s"
            + (f", {name} from line {start.skip_through + 1}" if start.skip_through else "")
        )
        return start, announce_again(journal, r, self.printer, self.note)

    def _settle_won(self, journal: Journal, start: Start) -> None:
        """Won, but the power went before the journal said so: settled and closed (the end of
        its input)."""
        assert start.resumed is not None
        announce_again(journal, start.resumed, self.printer, self.note)
        final, last = finish(start.state)
        journal.end_game(start.game, WON, final.winner)
        for ruling in last:
            self.printer(ruling)
        journal.told_all(start.game)
        self.note(f"game {start.game}: won by {final.players[final.winner or 0]} before the restart")

    def _game_run(self, journal: Journal, recorder: Recorder, start: Start, name: str) -> table_run.GameRun:
        """What the game is judged with: its sinks (stdout, then the journal's close), the clips."""

        def close_won(ruling: Ruling) -> None:
            if type(ruling) is GameWon:  # its event is journaled: the game is over
                journal.end_game(recorder.game, WON, ruling.seat)

        def ended(state: State) -> None:
            journal.end_game(recorder.game, WON if state.winner is not None else STOPPED, state.winner)

        settings, config = self.settings, self.config
        clips = None
        if settings.lays_from is None and config.replay.clips:
            clips = open_clips(config.clips_dir, config.replay, self.note)
        return table_run.GameRun(
            config,
            name,
            start,
            recorder,
            [self.printer, close_won],
            Teller(journal, recorder),
            ended,
            self.note,
            self.stop,
            self.notifier,
            clock=self.clock,
            opener=self.opener,
            clips=clips,
            answers=table_run.terminal(settings.lays_from),
        )

    def _kiosk(
        self, journal: Journal, run: table_run.GameRun, spec: GameSpec, again: list[Ruling]
    ) -> Kiosk | None:
        """The kiosk page, when the config has one (not for a script judged at once), with the
        night's scores between games."""
        if not self.config.kiosk or self.settings.at_once:
            return None
        from . import kiosk_start  # starlette and uvicorn: only when there is a page to serve

        start = run.start
        run.kiosk = kiosk_start.start_kiosk(
            self.config,
            self.settings.host,
            journal,
            run.recorder,
            spec,
            start.judging,
            run.source,
            self.note,
            again,
            run.clips,
        )
        kiosk_start.night_scores(journal, run.kiosk, run.sinks, self.note)
        return run.kiosk

    def _after(self, journal: Journal, game: int, state: State, start: Start) -> int:
        """What became of the game, said; a stop's exit status, or 0."""
        stop, note = self.stop, self.note
        if state.winner is not None:
            note(f"game {game}: {state.players[state.winner]} wins")
        if stop.requested:
            note(
                f"stopped ({stop.name}): game {game} stays open in the journal and resumes at the next start"
                if journal.game(game).status == OPEN  # type: ignore[union-attr]
                else f"stopped ({stop.name})"
            )
            return stop.exit_code
        if state.winner is None and self.settings.lays_from is not None:
            note(f"game {start.game}: the script ended with no winner")
        if journal.game(game).status != OPEN:  # type: ignore[union-attr]
            journal.told_all(game)
        return 0


def _checked_config(settings: RunSettings) -> Config:
    """The config, and the lay source it and the settings name: one line, exit 2, if none."""
    config = load_config(settings.config)
    if settings.at_once and settings.lays_from is None:
        raise UserError("--at-once judges a script: give it one with --lays-from FILE|-")
    if settings.lays_from is None and config.camera is None:
        raise UserError(
            f"{config.source}: [camera] source is not set: set it, or rehearse with --lays-from FILE|-"
        )
    return config
