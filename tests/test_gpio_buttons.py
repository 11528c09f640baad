"""GPIO buttons read from the kernel's line events, on the double of the GPIO chips."""

from __future__ import annotations

import argparse
import errno
import io
import json
import queue
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware import gpio_double
from hardware.board import Chip
from hardware.clock import VirtualClock
from hardware.gpio_buttons import (
    QUEUE_SLACK_US,
    RETRY_US,
    GpioButtons,
    GpioError,
    LineConfig,
    line_settings,
)
from hardware.gpio_double import DoubleGpio
from hardware.pins import VirtualFactory
from hardware.presses import Edge
from referee.cli.hwtest import run_hw_test
from referee.cli.main import main
from referee.errors import UserError
from referee.live.service import RunSettings, run_service
from referee.rules.script import adjudicate

from . import helpers

T = 10_000_000
PINS = (4, 27, 23)  # the default wiring's first three buttons
NAMES = ("Ann", "Bob", "Cy")


class Heard(helpers.Heard):
    """What the reader hands on, in order: edges, progress, losses and notes."""

    def lost(self, gone: bool) -> None:
        self.log.append(("lost" if gone else "back", gone))


def reader(gpio: DoubleGpio, clock: VirtualClock, heard: Heard, pins=PINS, **kwargs) -> GpioButtons:
    return GpioButtons(
        pins,
        heard.edge,
        progress=heard.progress,
        lost=heard.lost,
        clock=clock,
        system=gpio,
        note=heard.note,
        names=NAMES,
        **kwargs,
    )


# Stamps and progress ----------------------------------------------------------------------------


def test_each_edge_is_handed_on_with_the_kernels_stamp_a_falling_edge_a_press():
    clock = VirtualClock(T)
    gpio = DoubleGpio()
    heard = Heard()
    buttons = reader(gpio, clock, heard)
    gpio.press(4, T - 7_300)
    gpio.press(23, T - 4_001)
    gpio.release(4, T - 1_200)
    gpio.edge(5, True, T - 1_100)  # a line no seat has is not watched at all
    buttons.sweep()
    assert heard.of("edge") == [Edge(0, T - 7_300, True), Edge(2, T - 4_001, True), Edge(0, T - 1_200, False)]
    buttons.close()


def test_the_stamp_keeps_the_microsecond_the_kernel_gave_in_nanoseconds():
    clock = VirtualClock(T)
    gpio = DoubleGpio()
    heard = Heard()
    buttons = reader(gpio, clock, heard)
    request = gpio.live()
    assert request is not None
    request.queue(27, True, T - 3)  # stamped T - 3 us: 3,000 ns before
    buttons.sweep()
    assert heard.of("edge") == [Edge(1, T - 3, True)]  # resolution stays the us: rules.md's heats unchanged
    buttons.close()


def test_the_lines_are_asked_with_the_pull_up_both_edges_the_monotonic_clock_and_no_kernel_debounce():
    gpio = DoubleGpio()
    buttons = reader(gpio, VirtualClock(T), Heard())
    (request,) = gpio.requests
    assert request.offsets == (4, 23, 27) and request.chip == 0
    assert request.config == LineConfig(pull_up=True, both_edges=True, monotonic=True, debounce_us=0)
    buttons.close()
    assert request.released and gpio.held == {}  # the lines go back at the close


def test_the_request_settings_are_gpiods_own():
    gpiod = pytest.importorskip("gpiod")
    if not hasattr(gpiod, "request_lines"):
        pytest.skip("libgpiod v1 bindings")
    s = line_settings(LineConfig(), gpiod)
    assert s.direction == gpiod.line.Direction.INPUT
    assert s.edge_detection == gpiod.line.Edge.BOTH
    assert s.bias == gpiod.line.Bias.PULL_UP
    assert s.event_clock == gpiod.line.Clock.MONOTONIC
    assert s.debounce_period.total_seconds() == 0


def test_progress_follows_the_edges_read_and_is_the_read_s_start_less_the_queues_slack():
    clock = VirtualClock(T)
    gpio = DoubleGpio()
    heard = Heard()
    buttons = reader(gpio, clock, heard)
    gpio.press(4, T - 100)
    buttons.sweep()
    assert [k for k, _ in heard.log] == ["edge", "progress"]  # the edge first: the loop has it by then
    assert heard.of("progress") == [T - QUEUE_SLACK_US]
    clock.advance(4_000)
    buttons.sweep()  # nothing read: still, nothing older can come
    assert heard.of("progress")[-1] == T + 4_000 - QUEUE_SLACK_US
    buttons.close()


def test_an_idle_reader_says_nothing_while_the_loop_waits_for_nothing():
    gpio = DoubleGpio()
    heard = Heard()
    buttons = reader(gpio, VirtualClock(T), heard, wanted=lambda: False)
    buttons.sweep()
    assert heard.of("progress") == []
    gpio.press(4, T - 10)
    buttons.sweep()  # an edge read: its progress goes with it, wanted or not
    assert heard.of("progress") == [T - QUEUE_SLACK_US]
    buttons.close()


def test_more_edges_than_one_read_gives_are_all_read_before_the_progress():
    clock = VirtualClock(T)
    gpio = DoubleGpio()
    heard = Heard()
    buttons = reader(gpio, clock, heard)
    for i in range(150):  # more than libgpiod's 64 per read
        gpio.edge(27, i % 2 == 0, T - 10_000 + i)
    buttons.sweep()
    assert len(heard.of("edge")) == 150 and heard.log[-1] == ("progress", T - QUEUE_SLACK_US)
    buttons.close()


def test_edges_the_kernel_dropped_from_a_full_queue_are_said():
    gpio = DoubleGpio(event_buffer_size=8)
    heard = Heard()
    buttons = reader(gpio, VirtualClock(T), heard)
    for i in range(11):
        gpio.edge(4, i % 2 == 0, T - 1_000 + i)
    buttons.sweep()
    assert len(heard.of("edge")) == 8
    assert heard.of("note") == ["gpio: the kernel's edge queue overflowed: 3 edge(s) lost"]
    buttons.close()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # seat
            st.integers(0, 200_000),  # stamp, us from T
            st.integers(0, QUEUE_SLACK_US),  # how long the edge takes to reach the queue
        ),
        max_size=40,
    ),
    st.lists(st.integers(0, 220_000), max_size=40),  # when the reader sweeps
)
def test_progress_never_runs_past_an_edge_still_to_be_read(edges, sweeps):
    """However edges and sweeps interleave, an edge handed on is stamped after every progress
    reported before it, provided each edge reaches the queue within the slack of its stamp."""
    clock = VirtualClock(T)
    gpio = DoubleGpio()
    heard = Heard()
    buttons = reader(gpio, clock, heard)
    happenings = sorted(
        [(T + t + delay, 0, seat, T + t) for seat, t, delay in edges] + [(T + s, 1, -1, 0) for s in sweeps]
    )
    pressed = [False, False, False]
    for at, kind, seat, stamp in happenings:
        clock.sleep_until(at)
        if kind == 0:
            pressed[seat] = not pressed[seat]
            gpio.edge(PINS[seat], pressed[seat], stamp)
        else:
            buttons.sweep()
    buttons.sweep()
    reported = -(1 << 62)
    for kind, value in heard.log:
        if kind == "progress":
            assert value >= reported  # progress never goes back either
            reported = value  # type: ignore[assignment]
        elif kind == "edge":
            assert value.t > reported, f"{value} handed on after progress to {reported}"  # type: ignore[attr-defined]
    assert len(heard.of("edge")) == len(edges)  # and every edge is handed on
    buttons.close()


# The chip and the lines -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chips", "number"),
    [
        ([Chip(0, "pinctrl-bcm2711", 58), Chip(1, "raspberrypi-exp-gpio", 8)], 0),  # a Pi 4
        ([Chip(4, "pinctrl-rp1", 54), Chip(0, "gpio-brcmstb@107d508500", 32)], 4),  # a Pi 5, 2023 kernel
        ([Chip(0, "pinctrl-rp1", 54), Chip(10, "gpio-brcmstb@107d508500", 32)], 0),  # a Pi 5 since 6.6.45
    ],
)
def test_the_lines_are_asked_of_the_header_s_chip_found_by_its_label(chips, number):
    gpio = DoubleGpio(label=chips[0].label, number=chips[0].number, lines=chips[0].lines, others=chips[1:])
    buttons = reader(gpio, VirtualClock(T), Heard())
    assert gpio.requests[0].chip == number and buttons.chip == chips[0]
    buttons.close()


def test_a_line_another_program_holds_is_one_line_naming_the_pin_the_seat_and_the_holder():
    gpio = DoubleGpio()
    gpio.claim(27, "lg")  # gpiozero's lgpio, e.g. the pin is also an LED's
    with pytest.raises(GpioError) as e:
        reader(gpio, VirtualClock(T), Heard())
    assert str(e.value).startswith(
        'gpio: BCM 27 (Bob\'s button) on /dev/gpiochip0 (pinctrl-rp1) is busy, held by "lg"'
    )
    assert "\n" not in str(e.value)


def test_a_second_reader_of_the_same_lines_is_refused():
    gpio = DoubleGpio()
    first = reader(gpio, VirtualClock(T), Heard())
    with pytest.raises(GpioError, match=r'BCM 4 .* busy, held by "referee-buttons": is another referee'):
        reader(gpio, VirtualClock(T), Heard())
    first.close()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            lambda g: setattr(g, "refuse", errno.EACCES),
            "gpio: /dev/gpiochip0 (pinctrl-rp1): permission denied: is the user in the gpio group?",
        ),
        (
            lambda g: setattr(g, "listed", [Chip(0, "", 0)]),
            "gpio: cannot open /dev/gpiochip0 to find the header's chip (no permission: is the user in",
        ),
        (
            lambda g: setattr(g, "listed", []),
            "gpio: no GPIO chip of the 40-pin header here (looked for pinctrl-rp1, pinctrl-bcm2711, "
            "pinctrl-bcm2835; found no /dev/gpiochip* at all)",
        ),
        (lambda g: setattr(g, "listed", [Chip(0, "gpio-mockup-A", 8)]), "found gpiochip0 (gpio-mockup-A)"),
    ],
)
def test_a_chip_that_cannot_be_used_is_one_line_naming_it(setup, message):
    gpio = DoubleGpio()
    setup(gpio)
    with pytest.raises(GpioError) as e:
        reader(gpio, VirtualClock(T), Heard())
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_wiring_with_no_gpio_button_asks_for_no_line():
    gpio = DoubleGpio()
    gpio.listed = []  # not even a chip: nothing is needed of it
    heard = Heard()
    buttons = reader(gpio, VirtualClock(T), heard, pins=(None, None))
    buttons.sweep()
    assert gpio.requests == [] and heard.of("progress") == [T - QUEUE_SLACK_US]
    buttons.close()


def test_lines_that_fail_mid_game_are_said_once_a_held_button_let_go_and_asked_for_again():
    clock = VirtualClock(T)
    gpio = DoubleGpio()
    heard = Heard()
    buttons = reader(gpio, clock, heard)
    gpio.press(27, T - 500)
    buttons.sweep()
    clock.advance(10_000)
    gpio.fail(errno.ENODEV)
    buttons.sweep()
    assert heard.of("edge")[-1] == Edge(1, T + 10_000, False)  # Bob's held button: let go, not stuck
    assert heard.of("lost") == [True]
    (said,) = heard.of("note")
    assert (
        said
        == "gpio: reading the buttons on /dev/gpiochip0 failed (No such device): their presses are paused"
    )
    clock.advance(RETRY_US // 2)
    buttons.sweep()  # the chip is still gone: nothing said again, the progress goes on
    assert len(heard.of("note")) == 1 and heard.of("progress")[-1] == clock.now_us() - QUEUE_SLACK_US
    gpio.back()
    clock.advance(RETRY_US)
    buttons.sweep()
    assert heard.of("back") == [False] and heard.of("note")[-1].endswith(
        "are back: their presses count again"
    )  # type: ignore[union-attr]
    gpio.press(4, clock.now_us())
    buttons.sweep()
    assert heard.of("edge")[-1] == Edge(0, clock.now_us(), True)
    buttons.close()


def test_the_reader_thread_wakes_on_a_press_and_hands_it_on():
    clock = VirtualClock(50_000_000)  # the thread wakes on the press itself, not on any time
    gpio = DoubleGpio()
    edges: queue.SimpleQueue[Edge] = queue.SimpleQueue()
    buttons = GpioButtons(PINS, edges.put, clock=clock, system=gpio)
    buttons.start()
    t = clock.now_us()
    gpio.press(23, t)
    assert edges.get(timeout=10) == Edge(2, t, True)
    buttons.close()
    assert gpio.held == {}


# Through `referee run` and `hw-test` --------------------------------------------------------------


def _script(lines: int = 40) -> str:
    from referee.rules.script import event_to_json
    from referee.sim.bots import VirtualTable

    table = VirtualTable(players=3, seed=55)
    out = [json.dumps(table.spec.to_json())]
    out += [json.dumps(event_to_json(p.event)) for p in table.play() if p.event is not None]
    return "\n".join(out[:lines]) + "\n"


def _config(tmp_path: Path, hardware: str = "") -> Path:
    path = tmp_path / "referee.toml"
    path.write_text(
        f'[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\npins = "mock"\n{hardware}'
        '[service]\ndata_dir = "data"\nkiosk = false\n'
    )
    return path


def _rehearse(tmp_path: Path, config: Path) -> tuple[int, str, str, str]:
    script = tmp_path / "game.jsonl"
    script.write_text(_script())
    args = RunSettings(config=str(config), lays_from=str(script), at_once=False, new_game=False)
    out, err = io.StringIO(), io.StringIO()
    status = run_service(args, out, err, clock=VirtualClock(50_000_000))
    return status, out.getvalue(), err.getvalue(), script.read_text()


def _untimed(rulings: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "t"} for r in rulings]


@pytest.mark.parametrize("reader", ["gpiod", "gpiozero"])
def test_a_live_rehearsal_rules_as_adjudicate_with_either_button_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str
):
    chips: list[DoubleGpio] = []
    monkeypatch.setattr(gpio_double, "mock_chips", lambda: chips.append(DoubleGpio()) or chips[-1])
    status, out, err, script = _rehearse(tmp_path, _config(tmp_path, f'buttons = "{reader}"\n'))
    assert status == 0, err
    expected = [r.to_json() for r in adjudicate(io.StringIO(script), "script")]
    assert _untimed([json.loads(line) for line in out.splitlines()]) == _untimed(expected)
    if reader == "gpiod":  # the default wiring's buttons, on the double's header chip, given back
        (chip,) = chips
        assert chip.requests[0].offsets == (4, 23, 27) and chip.requests[0].released
    else:
        assert chips == []  # gpiozero's callbacks: no line request at all


def test_a_button_line_another_program_holds_stops_the_service_with_one_line_and_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    def busy() -> DoubleGpio:
        chip = DoubleGpio()
        chip.claim(23, "lg")
        return chip

    monkeypatch.setattr(gpio_double, "mock_chips", busy)
    script = tmp_path / "game.jsonl"
    script.write_text(_script())
    capsys.readouterr()
    status = main(["run", "--config", str(_config(tmp_path)), "--lays-from", str(script)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    (line,) = [line for line in err.strip().splitlines() if "gpio:" in line]
    assert 'gpio: BCM 23 (Cy\'s button) on /dev/gpiochip0 (pinctrl-rp1) is busy, held by "lg"' in line


def test_an_unknown_button_reader_in_the_config_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    script = tmp_path / "game.jsonl"
    script.write_text(_script())
    config = _config(tmp_path, 'buttons = "lgpio"\n')
    status = main(["run", "--config", str(config), "--lays-from", str(script)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert 'hardware.buttons: must be "gpiod" (the kernel\'s line events) or "gpiozero"' in err


class FailAtOnce(DoubleGpio):
    """The chip fails right after the reader's first sweep (a driver unbound under it)."""

    def request(self, chip, offsets, config):
        request = super().request(chip, offsets, config)
        self.fail()
        return request


def test_button_lines_failing_mid_game_are_one_line_and_the_game_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(gpio_double, "mock_chips", FailAtOnce)
    status, out, err, script = _rehearse(tmp_path, _config(tmp_path))
    assert status == 0, err
    expected = [r.to_json() for r in adjudicate(io.StringIO(script), "script")]
    assert _untimed([json.loads(line) for line in out.splitlines()]) == _untimed(expected)
    said = [line for line in err.splitlines() if "gpio:" in line]
    assert len(said) == 1 and "failed (No such device): their presses are paused" in said[0]


def test_hw_test_shows_gpio_presses_read_from_the_line_events_and_a_busy_line_is_one_line():
    clock = VirtualClock(1_000_000)
    args = argparse.Namespace(wiring=None, mock=True, seconds=None)
    out = io.StringIO()
    gpio = DoubleGpio()
    assert run_hw_test(args, out, clock=clock, factory=VirtualFactory(clock), gpio_system=gpio) == 0
    text = out.getvalue()
    assert "GPIO buttons: /dev/gpiochip0 (pinctrl-rp1), stamped by the kernel" in text
    presses = text.split("3. Presses")[1].splitlines()[1:]
    assert "Cy     pressed at     0.900000 s" in presses[2] and "BEFORE Bob" in presses[2]
    assert gpio.requests[0].released
    busy = DoubleGpio()
    busy.claim(4, "lg")
    with pytest.raises(UserError, match=r'^hw-test: gpio: BCM 4 \(Ann\'s button\) .* held by "lg"'):
        run_hw_test(args, io.StringIO(), clock=clock, factory=VirtualFactory(clock), gpio_system=busy)
