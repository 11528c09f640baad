"""The table assembled once: pins, lights and buzzer, their player, the loop and the buttons.

    pin factory -> TableSignals (-> a mirror) -> SignalPlayer -> TableLoop -> buttons -> USB buttons

Every table the referee runs is put together here and nowhere else: `referee run` (the
camera, a live rehearsal, a script at once), the demo's simulated table, `adjudicate
--pipeline` and `referee hw-test` (its lights and buttons, without a loop). This is the
composition root for devices: the one module of referee.live and referee.sim that imports
hardware's drivers (an import-linter contract in pyproject.toml holds it to that).

`assemble(settings, clock, game, hooks)` takes plain values (`TableSettings`: which pins,
which buttons, which USB devices, the loop's sources) and who is told what (`TableHooks`:
the loop's sinks, and the doubles a test or the simulator plugs in), and gives the parts
(`Table`). A part that fails to open closes every part opened before it, then the error is
one line (a `UserError`). `Table.close` releases them in the reverse order of opening: the
USB buttons, the buttons, the player, the lights and buzzer off, the signals, the pin
factory (only one the assembly made: a caller's factory stays the caller's).
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpiozero.exc import PinFactoryFallback

from hardware import camera_controls, gpio_buttons, gpio_double, usb_buttons
from hardware.board import Board, gpio_factory
from hardware.buttons import SnapButtons
from hardware.clock import Clock
from hardware.gpio_buttons import GpioButtons, GpioError
from hardware.pins import VirtualFactory
from hardware.presses import ButtonTrouble, Edge
from hardware.signals import TableSignals
from hardware.sweeper import TICK_US as TICK_US  # the readers' tick: a simulation sweeps them at it
from hardware.usb_buttons import UsbButtons, UsbDevice, UsbError
from referee.errors import UserError
from referee.rules.announcer import Announcer
from referee.rules.events import Event
from referee.rules.questions import Judging
from referee.rules.state import State

from .loop import EventSink, HeatSink, LateSink, QuestionSink, RulingSink, TableLoop, TroubleSink
from .signal_player import SignalPlayer
from .wiring import Wiring

PINS = ("mock", "gpio")  # gpiozero's MockFactory on the clock; the header's chip (lgpio)
BUTTONS = ("gpiod", "gpiozero", "none")  # the kernel's line events; pin callbacks; no buttons


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


@dataclass(frozen=True)
class TableSettings:
    """Which table: plain values, from the config, the command line or the simulator."""

    wiring: Wiring
    pins: str = "mock"  # one of PINS
    buttons: str = "gpiod"  # one of BUTTONS
    usb: tuple[UsbDevice, ...] | None = None  # the USB devices read; None: the wiring's
    grab: bool = True  # False (hw-test): the keyboard typing its Ctrl-C may be one of them
    latencies_us: Mapping[str, int] | None = None  # the loop's sources; None: no player, no loop
    timer_waits: bool = True  # live: a timer falls due on the clock; a replay: on its waits only
    shift_us: int = 0  # the clock to the game's timeline (a resumed game goes on from its last event)
    where: str = "hw-test"  # what an error opening the pins names first: the config, or the command
    wiring_where: str = "hw-test"  # what an error opening the buttons' lines or devices names first
    mock_hint: str = "use --mock"  # how to run without the Pi's pins, in the config's or the command's words
    board: Board | None = None  # the board a mock factory plays (hw-test names its model)


@dataclass(frozen=True)
class TableHooks:
    """Who the table tells, and the doubles a test or the simulator plugs in (None: the real ones)."""

    rulings: Sequence[RulingSink] = ()
    judged: Sequence[EventSink] = ()
    questions: Sequence[QuestionSink] = ()  # told after the player's light and tone
    troubles: Sequence[TroubleSink] = ()
    unplugged: Sequence[TroubleSink] = ()  # a USB device's seats gone or back (its reader's note names it)
    refused: Callable[[Event, str], Any] | None = None
    late: LateSink | None = None
    heats: HeatSink | None = None
    edges: Callable[[Edge], Any] | None = None  # no loop (hw-test): where every edge goes
    others: Callable[[str, int, int], Any] | None = None  # a USB key no seat has (hw-test names it)
    button_progress: Callable[[int], Any] | None = None  # the GPIO reader's progress; None: the loop's
    mirror: Callable[[TableSignals], Any] | None = None  # wraps the lights (the kiosk shows them too)
    note: Callable[[str], Any] | None = None  # the readers' own lines (a line lost, a device back)
    factory: Any = None  # a pin factory of the caller's (it stays open)
    gpio_system: Any = None  # the GPIO chips; None: the kernel's, or their double on mock pins
    usb_system: Any = None  # the input devices; None: the kernel's


@dataclass
class Table:
    """The parts, opened; `start` runs their threads (live), `close` releases them all."""

    settings: TableSettings
    clock: GameClock  # the game's clock: the player's and the lay sources'
    factory: Any
    signals: Any  # TableSignals, or the mirror around them
    player: SignalPlayer | None = None
    loop: TableLoop | None = None
    buttons: SnapButtons | GpioButtons | None = None
    usb: UsbButtons | None = None
    gpio_system: Any = None
    usb_system: Any = None
    _closing: contextlib.ExitStack = field(default_factory=contextlib.ExitStack, repr=False)

    def start(self) -> None:
        """Live: the player's thread and the readers' threads (a simulation sweeps them itself)."""
        if self.player is not None:
            self.player.start()
        if isinstance(self.buttons, GpioButtons):
            self.buttons.start()
        if self.usb is not None:
            self.usb.start()

    def close(self) -> None:
        """Every part released, in the reverse order of opening, each even if one before failed."""
        self._closing.close()

    def seat_pins(self) -> dict[int, Any]:
        """Each GPIO seat's pin double, to press it: a mock pin (gpiozero) or a line of the chips'
        double (gpiod). For simulations and `hw-test --mock`."""
        seats = [seat for seat, pin in enumerate(self.settings.wiring.buttons) if pin is not None]
        if self.buttons is None:
            return {}
        if isinstance(self.buttons, SnapButtons):
            return {seat: button.pin for seat, button in zip(seats, self.buttons.buttons, strict=True)}
        pins = self.settings.wiring.buttons
        return {seat: self.gpio_system.pin(pins[seat]) for seat in seats}


def assemble(
    settings: TableSettings,
    clock: Clock,
    game: State | Judging | None = None,
    hooks: TableHooks = TableHooks(),
) -> Table:
    """The table `settings` describe, on `clock` (the buttons' stamps; the game's clock is it
    shifted by `settings.shift_us`), judging `game` (needed with a loop). Whatever fails to
    open, the parts opened before it are closed, then the error raised (one line)."""
    if settings.pins not in PINS or settings.buttons not in BUTTONS:
        raise ValueError(f"pins {settings.pins!r}, buttons {settings.buttons!r}: not a table")
    shift = settings.shift_us
    table = Table(settings, GameClock(clock, shift), None, None)
    try:
        _open_signals(table, clock, hooks)
        if settings.latencies_us is not None:
            _open_loop(table, game, hooks)
        _open_buttons(table, clock, hooks)
        _open_usb(table, clock, hooks)
    except BaseException:
        table.close()
        raise
    return table


def _open_signals(table: Table, clock: Clock, hooks: TableHooks) -> None:
    """The pin factory, then the lights and the buzzer on it (wrapped by the mirror)."""
    settings = table.settings
    if hooks.factory is not None:
        table.factory = hooks.factory
    elif settings.pins == "mock":
        table.factory = VirtualFactory(clock, board=settings.board)
    else:
        table.factory = gpio_factory()  # lgpio on the header's own chip (a Pi 5's is 0 or 4)
    if hooks.factory is None and table.factory is not None:
        table._closing.callback(table.factory.close)
    with warnings.catch_warnings(record=True) as fallbacks:
        # gpiozero warns once per pin library it cannot load; the one line below says it all.
        warnings.simplefilter("always", PinFactoryFallback)
        try:
            signals = TableSignals.from_wiring(settings.wiring, table.factory)
        except Exception as e:  # no GPIO on this machine, or a pin is busy
            why = f"{type(e).__name__}: {e}"
            if fallbacks:
                why += f" first, {fallbacks[0].message}"
            raise UserError(
                f"{settings.where}: cannot open the pins ({why}); on the Pi install python3-lgpio, "
                f"elsewhere {settings.mock_hint}"
            ) from None
    table.signals = hooks.mirror(signals) if hooks.mirror is not None else signals
    table._closing.callback(table.signals.close)
    table._closing.callback(table.signals.off)  # lights and buzzer off before the pins go back


def _open_loop(table: Table, game: State | Judging | None, hooks: TableHooks) -> None:
    """The player on the game's clock, and the loop that tells it each ruling and question."""
    settings = table.settings
    if game is None:
        raise ValueError("a table with a loop needs the game it judges")
    state = game.state if isinstance(game, Judging) else game
    player = SignalPlayer(Announcer(state.seats), table.signals, table.clock)
    table.player = player
    table._closing.callback(player.close)
    # A seat's presses are stamped as coarsely as its USB device polls, when those are read.
    reads_usb = settings.usb is None and bool(settings.wiring.usb)
    table.loop = TableLoop(
        game,
        dict(settings.latencies_us or {}),
        rulings=hooks.rulings,
        signals=[player.announce],
        troubles=hooks.troubles,
        timer_waits=settings.timer_waits,
        judged=hooks.judged,
        refused=hooks.refused,
        questions=[lambda open_, _: player.ask(bool(open_)), *hooks.questions],
        late=hooks.late,
        resolution_us=settings.wiring.resolutions_us if reads_usb else (),
        heats=hooks.heats,
    )


def _edge_sink(table: Table, hooks: TableHooks, source: str) -> Callable[[Edge], Any]:
    """Where a reader's edges go: the loop, each on the game's timeline, or the caller's sink."""
    loop, shift = table.loop, table.settings.shift_us
    if loop is None:
        if hooks.edges is None:
            raise ValueError("a table without a loop needs a sink for its edges")
        return hooks.edges
    if not shift:
        return loop.put_edge if source == "buttons" else lambda e: loop.put_edge(e, source)
    return lambda e: loop.put_edge(e._replace(t=e.t + shift), source)  # the kernel's stamp, moved


def _progress(table: Table, source: str) -> Callable[[int], Any] | None:
    loop, shift = table.loop, table.settings.shift_us
    return None if loop is None else lambda t: loop.progress(source, t + shift)


def _open_buttons(table: Table, clock: Clock, hooks: TableHooks) -> None:
    """The wiring's GPIO buttons: read from the kernel's line events, with their progress, or
    through gpiozero's callbacks. A line that cannot be requested: one line naming it."""
    settings = table.settings
    if settings.buttons == "none":
        return
    sink = _edge_sink(table, hooks, "buttons")
    if settings.buttons == "gpiozero":
        table.buttons = SnapButtons(settings.wiring.buttons, sink, pin_factory=table.factory)
        table._closing.callback(table.buttons.close)
        return
    table.gpio_system = hooks.gpio_system
    if table.gpio_system is None:
        mock = settings.pins == "mock"  # nobody presses the double's lines but a simulation
        table.gpio_system = gpio_double.mock_chips() if mock else gpio_buttons.default_system()
    loop = table.loop
    try:
        table.buttons = GpioButtons(
            settings.wiring.buttons,
            sink,
            progress=hooks.button_progress or _progress(table, "buttons"),
            wanted=loop.waiting if loop is not None else None,
            clock=clock,
            system=table.gpio_system,
            note=hooks.note,
            names=loop.state.players if loop is not None else settings.wiring.names,
        )
    except GpioError as e:
        raise UserError(f"{settings.wiring_where}: {e}") from None
    table._closing.callback(table.buttons.close)


def _open_usb(table: Table, clock: Clock, hooks: TableHooks) -> None:
    """The USB encoders and keyboards, read by their own thread: each edge with the kernel's
    stamp. A device the wiring names that is not there: one line. One that goes away: its
    reader says so, and `hooks.unplugged` hears of each of its seats."""
    settings = table.settings
    wiring = settings.wiring
    devices = wiring.usb_devices() if settings.usb is None else settings.usb
    if not devices:
        return
    seats = wiring.usb_seats()

    def lost(label: str, gone: bool) -> None:
        t = clock.now_us() + settings.shift_us
        for seat in sorted(seats.get(label, {}).values()):
            for sink in hooks.unplugged:
                sink(ButtonTrouble(seat, t, "unplugged" if gone else "recovered"))

    table.usb_system = hooks.usb_system if hooks.usb_system is not None else usb_buttons.default_system()
    loop = table.loop
    try:
        table.usb = UsbButtons(
            devices,
            seats,
            _edge_sink(table, hooks, "usb"),
            progress=_progress(table, "usb"),
            lost=lost,
            wanted=loop.waiting if loop is not None else None,
            clock=clock,
            system=table.usb_system,
            note=hooks.note,
            others=hooks.others,
            grab=settings.grab,
        )
    except UsbError as e:
        raise UserError(f"{settings.wiring_where}: {e}") from None
    table._closing.callback(table.usb.close)


def open_camera(spec: str, fps: float | None = None) -> Any:
    """The camera (or the video file, the folder of images) the config names, as a frame source.
    A camera that is not there: `SourceError` (hardware.frames)."""
    from hardware.camera import open_source  # cv2: imported only when there is a camera to open

    return open_source(spec, fps=fps)


def camera_frames(source: Any, live: bool, locks: tuple[int, float, float | None] | None) -> Iterable[Any]:
    """A source's frames, its exposure locked as the camera step locked it (`locks`); a live
    camera sending only black frames is lost (`CameraLost`)."""
    from hardware.camera import black_frames_lose  # cv2, as above

    if locks is not None:
        camera_controls.controls_for(source).lock(*locks)
    return black_frames_lose(source, source.name) if live else source
