"""The table assembled once (referee/live/assembly.py): every variant opens its parts in order,
closes every part it opened when a later one fails, releases them in the reverse order, and
is what all four users build their tables with (`referee run`, the demo, `--pipeline`, hw-test)."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from gpiozero import DigitalInputDevice

from hardware.buttons import SnapButtons
from hardware.clock import VirtualClock
from hardware.gpio_buttons import GpioButtons
from hardware.gpio_double import DoubleGpio
from hardware.pins import VirtualFactory
from hardware.presses import Edge
from hardware.signals import TableSignals
from hardware.usb_buttons import UsbButtons
from hardware.usb_double import DoubleSystem
from referee.cli import hwtest
from referee.errors import UserError
from referee.live import assembly, service, table_run
from referee.live.assembly import Table, TableHooks, TableSettings, assemble
from referee.live.signal_player import MirroredSignals, SignalPlayer
from referee.live.wiring import default_wiring, parse_wiring
from referee.rules.script import GameSpec, event_to_json
from referee.sim import demo_table, pipeline
from referee.sim.bots import VirtualTable

from .helpers import table_config

ENCODER = "DragonRise Inc. Generic USB Joystick"
USB_WIRING = parse_wiring(
    {
        "usb": {"encoder": {"device": ENCODER}},
        "seat": [
            {"name": "Ann", "key": "BTN_TRIGGER", "led": 17},
            {"name": "Bob", "button": 27, "led": 22},
            {"name": "Cy", "key": "BTN_THUMB", "led": 24},
        ],
    },
    "wiring.toml",
)
GAME = GameSpec(("Ann", "Bob", "Cy")).new_game()
LATENCIES = {"buttons": 20_000, "usb": 20_000, "script": 20_000}


class Factory(VirtualFactory):
    """The mock pins, closed or not; every factory the assembly makes is one (`made`)."""

    made: ClassVar[list[Factory]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.closed = False
        Factory.made.append(self)

    def close(self) -> None:
        self.closed = True
        super().close()


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Factory]:
    monkeypatch.setattr(Factory, "made", [])
    monkeypatch.setattr(assembly, "VirtualFactory", Factory)
    return Factory.made


def reserved(factory: VirtualFactory) -> set[str]:
    """The pins still claimed by a device on `factory` (none once every device is closed)."""
    return {getattr(pin, "name", str(pin)) for pin, devices in factory._reservations.items() if devices}


def test_a_busy_gpio_line_closes_the_lights_and_the_pins_it_had_opened(made: list[Factory]) -> None:
    gpio = DoubleGpio()
    gpio.claim(27, "lg")
    settings = TableSettings(USB_WIRING, latencies_us=LATENCIES, where="t.toml", wiring_where="t.toml: w")
    with pytest.raises(UserError, match=r'^t\.toml: w: gpio: BCM 27 \(Bob\'s button\) .* held by "lg"'):
        assemble(settings, VirtualClock(0), GAME, TableHooks(gpio_system=gpio))
    (factory,) = made
    assert factory.closed and reserved(factory) == set()


def test_a_missing_usb_device_closes_the_gpio_lines_the_lights_and_the_pins(made: list[Factory]) -> None:
    gpio = DoubleGpio()
    settings = TableSettings(USB_WIRING, latencies_us=LATENCIES, wiring_where="t.toml: hardware.wiring")
    hooks = TableHooks(gpio_system=gpio, usb_system=DoubleSystem(None))
    with pytest.raises(
        UserError, match=f'^t.toml: hardware.wiring: usb.encoder: no input device "{ENCODER}"'
    ):
        assemble(settings, VirtualClock(0), GAME, hooks)
    assert [r.released for r in gpio.requests] == [True]
    (factory,) = made
    assert factory.closed and reserved(factory) == set()


def test_lights_that_cannot_be_opened_close_the_pin_factory_the_assembly_made(
    made: list[Factory], monkeypatch: pytest.MonkeyPatch
) -> None:
    def busy(wiring: Any, factory: Any) -> TableSignals:
        raise RuntimeError("GPIO17 is in use")

    monkeypatch.setattr(assembly.TableSignals, "from_wiring", busy)
    settings = TableSettings(default_wiring(2), where="t.toml", mock_hint="set pins")
    with pytest.raises(UserError, match=r"^t\.toml: cannot open the pins \(RuntimeError: GPIO17 is in use\)"):
        assemble(settings, VirtualClock(0), GAME, TableHooks(edges=print))
    (factory,) = made
    assert factory.closed


def test_a_busy_gpiozero_pin_closes_the_lights_but_leaves_a_callers_factory_open() -> None:
    clock = VirtualClock(0)
    factory = Factory(clock)
    other = DigitalInputDevice(4, pin_factory=factory)  # another program's device on Ann's button
    settings = TableSettings(default_wiring(3), buttons="gpiozero", latencies_us=LATENCIES)
    with pytest.raises(Exception, match="GPIO4"):
        assemble(settings, clock, GAME, TableHooks(factory=factory))
    assert reserved(factory) == {"GPIO4"} and not factory.closed  # only the other device's
    other.close()


def test_close_releases_every_part_in_the_reverse_order_of_opening(
    made: list[Factory], monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []

    def spy(cls: Any, method: str, name: str) -> None:
        real = getattr(cls, method)

        def recorded(self: Any, *args: Any) -> Any:
            order.append(name)
            return real(self, *args)

        monkeypatch.setattr(cls, method, recorded)

    for cls, method, name in [
        (UsbButtons, "close", "usb"),
        (GpioButtons, "close", "buttons"),
        (SignalPlayer, "close", "player"),
        (MirroredSignals, "off", "lights off"),
        (MirroredSignals, "close", "signals"),
        (Factory, "close", "factory"),
    ]:
        spy(cls, method, name)
    system = DoubleSystem(None)
    system.plug(ENCODER, range(288, 300))
    seen: list[Any] = []
    hub = type("Hub", (), {"signal": lambda self, target, value: seen.append((target, value))})()
    hooks = TableHooks(
        gpio_system=DoubleGpio(), usb_system=system, mirror=lambda signals: MirroredSignals(signals, hub)
    )
    table = assemble(TableSettings(USB_WIRING, latencies_us=LATENCIES), VirtualClock(0), GAME, hooks)
    assert isinstance(table.buttons, GpioButtons) and isinstance(table.usb, UsbButtons)
    table.close()
    assert order == ["usb", "buttons", "player", "lights off", "signals", "factory"]
    assert seen == [(("seat", i), 0.0) for i in range(3)]  # the mirror saw them go off
    assert reserved(made[0]) == set() and all(d.closed for d in system.opened)


def test_edges_reach_the_loop_on_the_games_timeline(made: list[Factory]) -> None:
    """A resumed game's clock is shifted: a press stamped by the kernel at t is judged at t + shift."""
    gpio = DoubleGpio()
    settings = TableSettings(default_wiring(3), latencies_us=LATENCIES, shift_us=5_000_000)
    table = assemble(settings, VirtualClock(1_000), GAME, TableHooks(gpio_system=gpio))
    try:
        assert table.clock.now_us() == 5_001_000
        table.seat_pins()[1].edge(False, 900)  # pulled up: a press pulls the line low
        assert isinstance(table.buttons, GpioButtons)
        table.buttons.sweep()
        assert table.loop is not None
        got = []
        while not table.loop.inbox.empty():
            got.append(table.loop.inbox.get_nowait())
        assert ("buttons", Edge(1, 5_000_900, True), None) in got
    finally:
        table.close()


class Spy:
    """Every table a user assembles, with the settings it asked for, and whether it was closed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *modules: Any) -> None:
        self.tables: list[Table] = []
        self.closed: list[Table] = []
        for module in modules:
            monkeypatch.setattr(module, "assemble", self)
        real_close = Table.close
        monkeypatch.setattr(Table, "close", lambda table: self.closed.append(table) or real_close(table))

    def __call__(self, *args: Any, **kwargs: Any) -> Table:
        table = assemble(*args, **kwargs)
        self.tables.append(table)
        return table

    def kinds(self, table: Table) -> tuple:
        """What was built: the pins, the lights, the buttons' reader, USB, the loop and player."""
        return (
            type(table.factory).__name__,
            type(table.signals).__name__,
            type(table.buttons).__name__,
            type(table.usb).__name__,
            table.loop is not None,
            table.player is not None,
        )


def _script(tmp_path: Path) -> Path:
    play = VirtualTable(players=3, seed=5, cap=30)
    lines = [json.dumps(play.spec.to_json())]
    lines += [json.dumps(event_to_json(p.event)) for p in play.play() if p.event is not None]
    path = tmp_path / "game.jsonl"
    path.write_text("\n".join(lines[:40]) + "\n")
    return path


def test_the_four_users_build_their_tables_with_the_assembly_and_close_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = Spy(monkeypatch, pipeline, demo_table, table_run, hwtest)
    script = _script(tmp_path)
    list(pipeline.adjudicate_pipeline(script.read_text().splitlines(), "game.jsonl"))
    demo_table.DemoTable(VirtualTable(players=3, seed=5, cap=30)).run()
    config = str(table_config(tmp_path))
    for at_once in (True, False):
        settings = service.RunSettings(config, str(script), at_once=at_once, new_game=True)
        assert service.run_service(settings, io.StringIO(), io.StringIO(), clock=VirtualClock(0)) == 0
    args = argparse.Namespace(wiring=None, mock=True, seconds=None)
    assert hwtest.run_hw_test(args, io.StringIO(), clock=VirtualClock(1_000_000)) == 0

    kinds = [spy.kinds(t) for t in spy.tables]
    mock_pins = ("Factory", "TableSignals")
    assert kinds == [
        (*mock_pins, "SnapButtons", "NoneType", True, True),  # --pipeline: gpiozero's callbacks
        (*mock_pins, "GpioButtons", "NoneType", True, True),  # the demo: the reader on the chip's double
        (*mock_pins, "NoneType", "NoneType", True, True),  # run --at-once: no live input
        (*mock_pins, "GpioButtons", "NoneType", True, True),  # run, live: as the demo
        (*mock_pins, "GpioButtons", "NoneType", False, False),  # hw-test: no loop, no player
    ]
    assert all(any(c is t for c in spy.closed) for t in spy.tables)  # every table released
    # The same settings build the same parts, whoever asks.
    for table, kind in zip(spy.tables, kinds, strict=True):
        again = assemble(table.settings, VirtualClock(0), GAME, TableHooks(edges=print))
        try:
            assert spy.kinds(again) == kind
        finally:
            again.close()


@pytest.fixture(autouse=True)
def _factories(monkeypatch: pytest.MonkeyPatch) -> None:
    """The users' mock pins made by the assembly are `Factory`s, so the kinds read the same."""
    monkeypatch.setattr(assembly, "VirtualFactory", Factory)


def test_a_table_with_a_loop_needs_its_game_and_one_without_a_sink_for_its_edges() -> None:
    with pytest.raises(ValueError, match="needs the game"):
        assemble(TableSettings(default_wiring(2), latencies_us=LATENCIES), VirtualClock(0))
    with pytest.raises(ValueError, match="sink for its edges"):
        assemble(TableSettings(default_wiring(2)), VirtualClock(0))
    with pytest.raises(ValueError, match="not a table"):
        assemble(TableSettings(default_wiring(2), buttons="lgpio"), VirtualClock(0))


def test_seat_pins_press_the_pins_each_reader_reads() -> None:
    clock = VirtualClock(0)
    heard: list[Edge] = []
    for buttons in ("gpiozero", "gpiod"):
        table = assemble(
            TableSettings(default_wiring(2), buttons=buttons), clock, hooks=TableHooks(edges=heard.append)
        )
        try:
            table.seat_pins()[1].edge(False, 7)
            if isinstance(table.buttons, GpioButtons):
                table.buttons.sweep()
            assert isinstance(table.buttons, SnapButtons | GpioButtons)
        finally:
            table.close()
    assert heard == [Edge(1, 7, True), Edge(1, 7, True)]
