"""USB encoders and keyboards as snap buttons, on the double of the kernel's input devices."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hardware.usb_buttons as usb_buttons
from calibration.sim_buttons import drive_buttons_sim
from calibration.steps_buttons import ButtonsStep, UsbKey, free_pins, seat_buttons, usb_candidates
from hardware.clock import VirtualClock
from hardware.presses import Edge
from hardware.usb_buttons import (
    QUEUE_SLACK_US,
    RESCAN_US,
    UsbButtons,
    UsbDevice,
    UsbError,
    key_code,
)
from hardware.usb_double import DoubleSystem
from referee.cards import parse_card
from referee.cli.hwtest import run_hw_test
from referee.cli.main import main
from referee.live.loop import TableLoop
from referee.live.service import RunSettings, run_service
from referee.live.wiring import WiringError, load_wiring, parse_wiring
from referee.rules.events import Lay, Snap
from referee.rules.presets import rules_for
from referee.rules.rulings import SnapIgnored, StackWon
from referee.rules.script import adjudicate

from . import helpers

BTN_TRIGGER, BTN_THUMB, BTN_THUMB2, BTN_TOP = 288, 289, 290, 291
KEY_A = 30
ENCODER = "DragonRise Inc.   Generic   USB  Joystick  "
BY_ID = "/dev/input/by-id/usb-0079_0006-event-joystick"
T = 10_000_000


class Heard(helpers.Heard):
    """What the reader hands on, in order: edges, progress, losses and notes."""

    def lost(self, label: str, gone: bool) -> None:
        self.log.append(("lost" if gone else "back", label))


def reader(system: DoubleSystem, clock: VirtualClock, heard: Heard, **kwargs) -> UsbButtons:
    device = UsbDevice("encoder", kwargs.pop("match", ENCODER), frozenset({BTN_TRIGGER, BTN_THUMB}))
    return UsbButtons(
        [device],
        {"encoder": {BTN_TRIGGER: 0, BTN_THUMB: 2}},
        heard.edge,
        progress=heard.progress,
        lost=heard.lost,
        clock=clock,
        system=system,
        wall_us=system.wall_us,
        note=heard.note,
        **kwargs,
    )


def plugged(clock: VirtualClock) -> tuple[DoubleSystem, str]:
    system = DoubleSystem(clock)
    system.plug("AT Translated Set 2 keyboard", [KEY_A], phys="isa0060/serio0/input0")
    path = system.plug(ENCODER, range(288, 300), phys="usb-0000:01:00.0-1.3/input0", by_id=BY_ID)
    return system, path


# The reader -------------------------------------------------------------------------------------


def test_each_press_and_release_is_an_edge_with_the_kernels_monotonic_stamp():
    clock = VirtualClock(T)
    system, path = plugged(clock)
    heard = Heard()
    usb = reader(system, clock, heard)
    device = system.device(path)
    assert device.monotonic and device.grabbed  # EVIOCSCLOCKID asked, and no other program hears it
    device.press(T - 7_300, BTN_TRIGGER)
    device.repeat(T - 5_000, BTN_TRIGGER)  # a keyboard's autorepeat is no new press
    device.press(T - 4_000, BTN_TOP)  # a key no seat has
    device.release(T - 1_200, BTN_TRIGGER)
    device.press(T - 1_000, BTN_THUMB)
    usb.sweep()
    assert heard.of("edge") == [Edge(0, T - 7_300, True), Edge(0, T - 1_200, False), Edge(2, T - 1_000, True)]
    usb.close()


def test_progress_follows_the_edges_read_and_is_the_read_s_start_less_the_queues_slack():
    clock = VirtualClock(T)
    system, path = plugged(clock)
    heard = Heard()
    usb = reader(system, clock, heard)
    system.device(path).press(T - 100, BTN_TRIGGER)
    usb.sweep()
    assert [k for k, _ in heard.log] == ["edge", "progress"]  # the edge first: the loop has it by then
    assert heard.of("progress") == [T - QUEUE_SLACK_US]
    clock.advance(4_000)
    usb.sweep()  # nothing read: still, nothing older can come
    assert heard.of("progress")[-1] == T + 4_000 - QUEUE_SLACK_US
    usb.close()


def test_an_idle_reader_says_nothing_while_the_loop_waits_for_nothing():
    clock = VirtualClock(T)
    system, _ = plugged(clock)
    heard = Heard()
    usb = reader(system, clock, heard, wanted=lambda: False)
    usb.sweep()
    assert heard.of("progress") == []
    usb.close()


def test_a_device_that_refuses_the_monotonic_clock_has_its_wall_stamps_moved_onto_it_and_says_so():
    clock = VirtualClock(T)
    system, path = plugged(clock)
    system.refuse_clock = True
    heard = Heard()
    usb = reader(system, clock, heard)
    assert not system.device(path).monotonic
    system.device(path).press(T - 2_000, BTN_TRIGGER)
    system.device(path).press(T - 1_000, BTN_THUMB)
    usb.sweep()
    assert heard.of("edge") == [Edge(0, T - 2_000, True), Edge(2, T - 1_000, True)]
    notes = heard.of("note")
    assert len(notes) == 1 and "wall clock" in notes[0]  # type: ignore[operator]
    usb.close()


@pytest.mark.parametrize("match", [ENCODER, BY_ID, "usb-0000:01:00.0-1.3/input0", "/dev/input/event1"])
def test_a_device_is_found_by_its_name_its_by_id_path_its_phys_or_its_event_path(match):
    clock = VirtualClock(T)
    system, path = plugged(clock)
    usb = reader(system, clock, Heard(), match=match)
    assert usb.info("encoder").path == path  # type: ignore[union-attr]
    usb.close()


def test_a_device_not_plugged_in_is_one_line_naming_it():
    system = DoubleSystem(VirtualClock(T))
    with pytest.raises(UsbError) as e:
        reader(system, VirtualClock(T), Heard())
    assert str(e.value).startswith(f'usb.encoder: no input device "{ENCODER}" is plugged in')
    assert "\n" not in str(e.value)


def test_two_identical_encoders_must_be_told_apart_by_path_unless_only_one_has_the_keys():
    clock = VirtualClock(T)
    system, _ = plugged(clock)
    system.plug(ENCODER, range(288, 300), by_id=BY_ID + "2")
    with pytest.raises(UsbError, match="fits 2 devices"):
        reader(system, clock, Heard())
    mouse = DoubleSystem(clock)
    mouse.plug(ENCODER, [272, 273])  # the same encoder's mouse interface: no joystick buttons
    path = mouse.plug(ENCODER, range(288, 300))
    assert reader(mouse, clock, Heard()).info("encoder").path == path  # type: ignore[union-attr]


def test_a_device_another_referee_holds_is_one_line():
    clock = VirtualClock(T)
    system, _ = plugged(clock)
    first = reader(system, clock, Heard())
    with pytest.raises(UsbError, match="held by another program"):
        reader(system, clock, Heard())
    first.close()


def test_an_unplugged_device_is_said_once_its_held_key_let_go_and_it_counts_again_when_back():
    clock = VirtualClock(T)
    system, path = plugged(clock)
    heard = Heard()
    usb = reader(system, clock, heard)
    system.device(path).press(T, BTN_TRIGGER)
    usb.sweep()
    clock.advance(50_000)
    system.unplug(path)
    usb.sweep()
    usb.sweep()
    notes = heard.of("note")
    assert len(notes) == 1 and "usb.encoder" in notes[0] and "unplugged" in notes[0]  # type: ignore[operator]
    assert heard.of("lost") == ["encoder"]
    assert heard.of("edge")[-1] == Edge(0, T + 50_000, False)  # not left "stuck" down
    assert heard.of("progress")[-1] == T + 50_000 - QUEUE_SLACK_US  # the others' game goes on
    system.plug(ENCODER, range(288, 300), by_id=BY_ID, path=path)
    clock.advance(RESCAN_US)
    usb.sweep()
    assert heard.of("back") == ["encoder"]
    system.device(path).press(clock.now_us(), BTN_THUMB)
    usb.sweep()
    assert heard.of("edge")[-1] == Edge(2, clock.now_us(), True)
    usb.close()


def test_the_reader_thread_wakes_on_a_press_and_hands_it_on():
    import queue

    from hardware.clock import VirtualClock

    clock = VirtualClock(50_000_000)  # the thread wakes on the press itself, not on any time
    system, path = plugged(None)  # type: ignore[arg-type]
    edges: queue.SimpleQueue[Edge] = queue.SimpleQueue()
    usb = UsbButtons(
        [UsbDevice("encoder", ENCODER, frozenset({BTN_TRIGGER}))],
        {"encoder": {BTN_TRIGGER: 1}},
        edges.put,
        clock=clock,
        system=system,
    )
    usb.start()
    t = clock.now_us()
    system.device(path).press(t, BTN_TRIGGER)
    assert edges.get(timeout=10) == Edge(1, t, True)
    usb.close()


# The wiring file --------------------------------------------------------------------------------

USB_WIRING = f"""
[usb.encoder]
device = "{BY_ID}"

[usb.keys]
device = "AT Translated Set 2 keyboard"
resolution_ms = 1

[[seat]]
name = "Ann"
key = "BTN_TRIGGER"
usb = "encoder"
led = 17

[[seat]]
name = "Bob"
button = 27
led = 22

[[seat]]
name = "Cy"
key = 289
usb = "encoder"
led = 24

[[seat]]
name = "Dee"
key = "KEY_A"
usb = "keys"
led = 12
"""


def test_a_wiring_maps_usb_keys_to_seats_with_each_devices_resolution():
    w = parse_wiring(__import__("tomllib").loads(USB_WIRING), "t.toml")
    assert w.buttons == (None, 27, None, None)
    assert w.resolutions_us == (8_000, 0, 8_000, 1_000)  # USB's usual 8 ms unless told
    assert w.usb_seats() == {"encoder": {BTN_TRIGGER: 0, BTN_THUMB: 2}, "keys": {KEY_A: 3}}
    assert parse_wiring(w.to_dict(), "again") == w
    assert key_code("btn_trigger") == BTN_TRIGGER


ONE_SEAT = '[[seat]]\nname = "Bob"\nbutton = 27\nled = 22\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[seat]]\nname = "Ann"\nkey = "BTN_TRIGER"\nled = 17\n' + ONE_SEAT,
            'seat[0].key: "BTN_TRIGER" is no key name',
        ),
        (
            '[[seat]]\nname = "Ann"\nkey = 288\nled = 17\n' + ONE_SEAT,
            "seat[0].key: a USB key needs its device",
        ),
        (
            '[usb.a]\ndevice = "x"\n[[seat]]\nname = "Ann"\nkey = 288\nusb = "b"\nled = 17\n' + ONE_SEAT,
            'seat[0].usb: "b" is no [usb.NAME] table in this file (known: a)',
        ),
        (
            '[usb.a]\ndevice = "x"\n[[seat]]\nname = "Ann"\nkey = 288\nbutton = 4\nled = 17\n' + ONE_SEAT,
            "seat[0].key: a seat's button is a GPIO pin (button) or a USB key (key), not both",
        ),
        (
            '[usb.a]\ndevice = "x"\n[[seat]]\nname = "Ann"\nkey = 288\nled = 17\n'
            '[[seat]]\nname = "Bob"\nkey = "BTN_TRIGGER"\nled = 22\n',
            "seat[1].key: BTN_TRIGGER on usb.a is already seat[0]'s",
        ),
        (
            '[usb.a]\ndevice = "x"\nresolution_ms = 0\n[[seat]]\nname = "Ann"\nkey = 288\nled = 17\n'
            + ONE_SEAT,
            "usb.a.resolution_ms: must be its polling interval in ms",
        ),
        (
            '[usb.a]\nresolution_ms = 8\n[[seat]]\nname = "Ann"\nkey = 288\nled = 17\n' + ONE_SEAT,
            "usb.a.device: missing",
        ),
        (
            '[usb.a]\ndevice = "x"\n[usb.b]\ndevice = "y"\n[[seat]]\nname = "Ann"\nkey = 288\nled = 17\n'
            + ONE_SEAT,
            "seat[0].usb: missing: which device's key? (one of a, b)",
        ),
        (
            '[[seat]]\nname = "Ann"\nkey = 5000\nled = 17\n' + ONE_SEAT,
            "seat[0].key: key code 5000 is not a key",
        ),
    ],
)
def test_a_usb_wiring_mistake_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
):
    monkeypatch.chdir(tmp_path)
    Path("w.toml").write_text(text)
    with pytest.raises(WiringError) as e:
        load_wiring("w.toml")
    assert str(e.value).startswith(f"w.toml: {message}") and "\n" not in str(e.value)
    status = main(["hw-test", "--mock", "--wiring", "w.toml"])
    assert status == 2


# Coarse seats: a race closer than the later press's resolution is a dead heat -----------------


def snap_table(resolution_us, **kwargs):
    """A loop on a stack holding a pair (7H 7S), every source past T when pumped there."""
    state = rules_for("celtic").new_game(["Ann", "Bob", "Cy"])
    out: list = []
    heats: list = []
    loop = TableLoop(
        state,
        {"camera": 0, "buttons": 0},
        rulings=[out.append],
        timer_waits=False,
        resolution_us=resolution_us,
        heats=lambda press, first: heats.append((press, first)),
        **kwargs,
    )
    loop.put_lay(Lay(T - 100_000, parse_card("7H")))
    loop.put_lay(Lay(T - 50_000, parse_card("7S")))
    return loop, out, heats


def judge(loop, presses, until=T + 1_000_000):
    for seat, t in presses:
        loop.put_edge(Edge(seat, t, True))
        loop.put_edge(Edge(seat, t + 60_000, False))
    loop.finish()  # the presses settle at the end of the input


def test_a_usb_press_5ms_after_a_gpio_press_is_a_dead_heat_not_a_win():
    loop, out, heats = snap_table((0, 8_000, 0))
    judge(loop, [(0, T), (1, T + 5_000)])
    assert [r for r in out if type(r) is SnapIgnored] == [
        SnapIgnored(T, 0, "dead_heat"),
        SnapIgnored(T, 1, "dead_heat"),
    ]
    assert not [r for r in out if type(r) is StackWon]
    assert heats == [(Snap(T + 5_000, 1), Snap(T, 0))]


def test_past_the_later_press_s_resolution_the_first_press_wins_with_its_margin():
    loop, out, heats = snap_table((0, 8_000, 0))
    judge(loop, [(0, T), (1, T + 8_001)])
    (won,) = [r for r in out if type(r) is StackWon]
    assert (won.seat, won.margin_us) == (0, 8_001) and heats == []


def test_a_gpio_press_after_a_usb_press_is_surely_later_the_usb_stamp_is_after_its_press():
    loop, out, _ = snap_table((8_000, 0, 0))
    judge(loop, [(0, T), (1, T + 1_000)])
    (won,) = [r for r in out if type(r) is StackWon]
    assert (won.seat, won.margin_us) == (0, 1_000)


def test_all_gpio_seats_judge_as_before_to_the_microsecond():
    loop, out, _ = snap_table(())
    judge(loop, [(0, T), (1, T + 1)])
    (won,) = [r for r in out if type(r) is StackWon]
    assert (won.seat, won.margin_us) == (0, 1)


presses = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 200_000)), min_size=2, max_size=8).map(
    lambda ps: sorted(ps, key=lambda p: p[1])
)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    presses=presses,
    resolution=st.tuples(*[st.sampled_from([0, 1_000, 4_000, 8_000])] * 4),
)
def test_a_press_is_only_moved_within_its_own_resolution_and_nobody_is_ruled_ahead_by_a_guess(
    presses, resolution
):
    # A seat's presses 30 ms apart at least (the debouncer's lockout is 20 ms).
    kept: dict[int, int] = {}
    stream = []
    for seat, t in presses:
        if seat not in kept or t - kept[seat] >= 30_000:
            kept[seat] = t
            stream.append((seat, T + t))
    state = rules_for("celtic").new_game(["A", "B", "C", "D"])
    judged: list[Snap] = []
    loop = TableLoop(
        state,
        {"buttons": 0},
        judged=[lambda e, _tag: judged.append(e) if type(e) is Snap else None],
        timer_waits=False,
        resolution_us=resolution,
    )
    for seat, t in sorted(stream):  # seat by seat: one button's edges in order, the seats' not
        loop.put_edge(Edge(seat, t, True))
        loop.put_edge(Edge(seat, t + 10_000, False))
    loop.drain()
    assert sorted(s.seat for s in judged) == sorted(seat for seat, _ in stream)
    original = {}
    remaining = sorted(stream)
    for s in judged:  # each judged press, matched with its own stamp (one per seat per instant)
        t = next(t for seat, t in remaining if seat == s.seat and s.t <= t <= s.t + resolution[s.seat])
        remaining.remove((s.seat, t))
        original[s] = t
    for s in judged:
        if s.t != original[s]:  # moved: to another seat's own press, within its own resolution
            assert any(o.t == s.t and o.seat != s.seat and original[o] == s.t for o in judged)
    for p in judged:
        alone = not any(q.t == p.t and q.seat != p.seat for q in judged)
        if not alone:
            continue
        for q in judged:
            if q.seat != p.seat and q.t > p.t:
                # p is judged ahead of q on its own: q surely pressed after p.
                assert original[q] - original[p] > resolution[q.seat]


# The service, hw-test and the buttons step --------------------------------------------------------


def _usb_config(tmp_path: Path) -> Path:
    (tmp_path / "wiring.toml").write_text(
        f'[usb.encoder]\ndevice = "{ENCODER.strip()}"\n'
        '[[seat]]\nname = "Ann"\nkey = "BTN_TRIGGER"\nled = 17\n'
        '[[seat]]\nname = "Bob"\nbutton = 27\nled = 22\n'
        '[[seat]]\nname = "Cy"\nkey = "BTN_THUMB"\nled = 24\n'
    )
    path = tmp_path / "referee.toml"
    path.write_text(
        '[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\npins = "mock"\nwiring = "wiring.toml"\n'
        '[service]\ndata_dir = "data"\nkiosk = false\n'
    )
    return path


def _script() -> str:
    from referee.rules.script import event_to_json
    from referee.sim.bots import VirtualTable

    table = VirtualTable(players=3, seed=55)
    lines = [json.dumps(table.spec.to_json())]
    lines += [json.dumps(event_to_json(p.event)) for p in table.play() if p.event is not None]
    return "\n".join(lines[:40]) + "\n"


class UnplugAtOnce(DoubleSystem):
    """The encoder is there when the service opens it, and pulled out right after."""

    def ioctl(self, fd, request, arg):
        out = super().ioctl(fd, request, arg)
        for path in list(self.plugged):
            if self.plugged[path].name.strip() == ENCODER.strip():
                self.unplug(path)
        return out


@pytest.mark.parametrize("unplug", [False, True])
def test_a_live_rehearsal_with_usb_seats_rules_as_adjudicate_and_an_unplugged_encoder_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unplug: bool
):
    system = (UnplugAtOnce if unplug else DoubleSystem)(None)
    system.plug(ENCODER.strip(), range(288, 300))
    monkeypatch.setattr(usb_buttons, "default_system", lambda: system)
    script = tmp_path / "game.jsonl"
    script.write_text(_script())
    args = RunSettings(
        config=str(_usb_config(tmp_path)), lays_from=str(script), at_once=False, new_game=False
    )
    out, err = io.StringIO(), io.StringIO()
    clock = VirtualClock(50_000_000)
    assert run_service(args, out, err, clock=clock) == 0
    expected = [r.to_json() for r in adjudicate(io.StringIO(script.read_text()), "script")]
    got = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [{k: v for k, v in r.items() if k != "t"} for r in got] == [
        {k: v for k, v in r.items() if k != "t"} for r in expected
    ]
    lost = [line for line in err.getvalue().splitlines() if "usb.encoder" in line]
    if unplug:
        assert len(lost) == 1 and "unplugged: its seats' presses are paused" in lost[0]
    else:
        assert lost == []


def test_a_wiring_naming_a_missing_device_stops_the_service_with_one_line_and_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setattr(usb_buttons, "default_system", lambda: DoubleSystem(None))
    script = tmp_path / "game.jsonl"
    script.write_text(_script())
    config = _usb_config(tmp_path)
    capsys.readouterr()
    status = main(["run", "--config", str(config), "--lays-from", str(script)])
    err = capsys.readouterr().err
    assert status == 2
    (line,) = [line for line in err.strip().splitlines() if "usb.encoder" in line]
    assert f'hardware.wiring: usb.encoder: no input device "{ENCODER.strip()}" is plugged in' in line
    assert "Traceback" not in err


def test_hw_test_lists_the_usb_devices_shows_usb_seats_presses_and_names_other_keys(tmp_path: Path):
    wiring = tmp_path / "w.toml"
    wiring.write_text(
        f'[usb.encoder]\ndevice = "{BY_ID}"\n'
        '[[seat]]\nname = "Ann"\nkey = "BTN_TRIGGER"\nled = 17\n'
        '[[seat]]\nname = "Bob"\nbutton = 27\nled = 22\n'
        '[[seat]]\nname = "Cy"\nkey = "BTN_TOP"\nled = 24\n'
    )
    clock = VirtualClock(1_000_000)
    out = io.StringIO()
    args = argparse.Namespace(wiring=str(wiring), mock=True, seconds=None)
    assert run_hw_test(args, out, clock=clock) == 0
    text = out.getvalue()
    assert "seat 0 Ann: button  USB BTN_TRIGGER" in text
    assert f"({BY_ID})" in text  # the device list gives the by-id name to put in the wiring
    presses = text.split("3. Presses")[1].splitlines()[1:]
    assert "Ann    pressed at     0.500000 s" in presses[0]
    assert "Cy     pressed at     0.900000 s" in presses[2] and "BEFORE Bob" in presses[2]
    assert "key BTN_THUMB (289)" in presses[-1] and 'key = "BTN_THUMB"' in presses[-1]


def test_the_buttons_step_finds_which_usb_key_is_whose_and_writes_it_in_the_wiring():
    w = parse_wiring(__import__("tomllib").loads(USB_WIRING), "t.toml")
    found = {"encoder": frozenset(range(288, 300)), "keys": frozenset({KEY_A, 31, 32})}
    step = ButtonsStep(w, free_pins(w) + usb_candidates(w, found))
    wires = list(seat_buttons(w))
    wires[0], wires[2] = UsbKey("encoder", BTN_TOP), UsbKey("encoder", BTN_TRIGGER)  # crossed
    drive_buttons_sim(step, w, wires, seed=3, show=lambda p: None)
    result = step.result()
    assert result.buttons == tuple(wires)
    assert "BTN_TOP on usb.encoder" in step.prompt().text
    again = result.to_wiring()
    assert (again.seats[0].key, again.seats[0].usb) == (BTN_TOP, "encoder")
    assert parse_wiring(again.to_dict(), "profile") == again


def test_the_kiosk_names_a_seat_whose_usb_device_is_unplugged_until_it_is_back():
    from hardware.presses import ButtonTrouble
    from referee.kiosk.view import TableView

    view = TableView(rules_for("celtic").new_game(["Ann", "Bob", "Cy"]))
    view.trouble(ButtonTrouble(0, T, "unplugged"))
    assert view.view()["alerts"]["messages"] == ["Ann's button is unplugged (USB)"]
    view.trouble(ButtonTrouble(0, T + 1, "recovered"))
    assert view.view()["alerts"]["messages"] == []
