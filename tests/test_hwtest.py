"""`referee hw-test --mock`: the wiring check on MockFactory pins, exact to the microsecond."""

import argparse
import io

from hardware.clock import VirtualClock
from hardware.pins import VirtualFactory
from referee.cli.hwtest import LIGHT_US, TONE_US, TONES_HZ, run_hw_test
from referee.cli.main import main

START = 1_000_000


def mock_run(**given):
    clock = VirtualClock(START)
    factory = VirtualFactory(clock)
    args = argparse.Namespace(**({"wiring": None, "mock": True, "seconds": None} | given))
    out = io.StringIO()
    assert run_hw_test(args, out, clock=clock, factory=factory) == 0
    return out.getvalue(), factory


def pin(factory, bcm):
    return next(p for info, p in factory.pins.items() if info.name == f"GPIO{bcm}")


def test_each_seat_led_lights_once_in_turn_for_its_own_time():
    _, factory = mock_run()
    for i, bcm in enumerate([17, 22, 24, 12]):  # the default wiring's seat LEDs
        on = START + i * LIGHT_US
        assert pin(factory, bcm).history_us()[1:] == [(on, 1.0), (on + LIGHT_US, 0.0)]


def test_the_status_led_shows_red_then_green_then_blue():
    _, factory = mock_run()
    first = START + 4 * LIGHT_US
    for i, bcm in enumerate([16, 20, 21]):
        on = first + i * LIGHT_US
        assert pin(factory, bcm).history_us()[1:] == [(on, 1.0), (on + LIGHT_US, 0.0)]


def test_each_tone_is_played_in_turn_then_silence():
    _, factory = mock_run()
    first = START + 7 * LIGHT_US
    played = [(t, hz) for t, hz in pin(factory, 18).frequencies if t >= first]
    n = len(TONES_HZ)
    assert played[:n] == [(first + i * TONE_US, float(hz)) for i, hz in enumerate(TONES_HZ)]
    assert played[n] == (first + n * TONE_US, None)  # then silence (closing the pins adds more)


def test_presses_show_their_own_timestamps_and_margins_whatever_order_the_callbacks_ran():
    text, _ = mock_run()
    presses = text.split("3. Presses")[1].splitlines()[1:]
    assert "Ann    pressed at     0.500000 s" in presses[0]  # one press despite the bounce
    assert "Bob    pressed at     0.900003 s" in presses[1]
    assert "Cy     pressed at     0.900000 s" in presses[2] and "0.003 ms BEFORE Bob" in presses[2]
    assert "Dee" in presses[4] and "stuck" in presses[4]
    assert "Dee" in presses[5] and "back in order" in presses[5]
    assert len(presses) == 6


def test_a_bad_wiring_file_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "wiring.toml"
    bad.write_text('[[seat]]\nname = "Ann"\nbutton = 4\nled = 4\n')
    assert main(["hw-test", "--mock", "--wiring", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{bad}: ")


def test_without_gpio_and_without_mock_it_says_so_in_one_line(capsys, monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    status = main(["hw-test", "--seconds", "0"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "use --mock" in err
