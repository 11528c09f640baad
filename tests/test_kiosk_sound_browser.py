"""The kiosk page's sound, phones' QR code and house rules in Chromium (Playwright).

The page's Web Audio is a recording double, put in before the page's own scripts
(`add_init_script`): each oscillator's frequency, start and stop are read back. The page's
clock (`currentTime`) stands still at 10 s, so a sound's notes are exactly where it put them.
"""

from __future__ import annotations

from typing import Any

import pytest

from referee.kiosk.app import KioskHub, make_app
from referee.kiosk.server import KioskServer
from referee.rules.house_rules import kinds
from referee.rules.rulings import Penalty, SnapIgnored, StackWon
from tests.conftest import ARTIFACTS, wait_for
from tests.test_kiosk import TOKEN, FakeTable, race_hub

TIMEOUT_MS = 10_000
WATCH = "http://192.168.1.20:8080/"

AUDIO_DOUBLE = """
window.oscillators = [];
class Param { constructor(rec, key) { this.rec = rec; this.key = key; }
  setValueAtTime(v, t) { this.rec[this.key] = v; this.rec[this.key + "_at"] = t; } }
class Osc {
  constructor() {
    this.rec = {}; this.frequency = new Param(this.rec, "hz"); window.oscillators.push(this.rec);
  }
  set type(v) { this.rec.type = v; }
  connect() {}
  start(t) { this.rec.start = t; }
  stop(t) { if (this.rec.stop === undefined || t < this.rec.stop) this.rec.stop = t; }
}
class Gain { constructor() { this.gain = new Param({}, "g"); } connect() {} }
window.AudioContext = class {
  constructor() { this.currentTime = 10; this.state = "running"; this.destination = {}; }
  createOscillator() { return new Osc(); } createGain() { return new Gain(); } resume() {} };
"""


class HouseTable(FakeTable):
    def set_house_rules(self, options: dict[str, Any]) -> str:
        self.calls.append(("set_house_rules", options))
        return "house rules from the next new game"


def serve(hub: KioskHub, **kw: Any) -> KioskServer:
    server = KioskServer(make_app(hub, TOKEN, kw.pop("commands", None), **kw), hub, port=0)
    server.start()
    return server


def open_page(browser: Any, server: KioskServer, hub: KioskHub) -> Any:
    page = browser.new_page(viewport={"width": 800, "height": 480})
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(AUDIO_DOUBLE)
    page.goto(server.url)
    wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}", timeout_ms=TIMEOUT_MS)
    page.wait_for_selector("#sound-toggle", state="visible")  # the screen's defaults are known
    return page


def fed(page: Any, hub: KioskHub, *rulings: Any) -> None:
    for ruling in rulings:
        hub.add(ruling)
    wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}", timeout_ms=TIMEOUT_MS)


def played(page: Any) -> list[tuple[float, float]]:
    """(Hz, seconds) of each oscillator the page made."""
    return [(o["hz"], round(o["stop"] - o["start"], 3)) for o in page.evaluate("window.oscillators")]


def test_a_cue_plays_on_an_oscillator_at_its_frequency_for_its_length(browser):
    hub, _ = race_hub()
    server = serve(hub)  # no buzzer wired; the test is a loopback client, as the Pi's screen
    try:
        page = open_page(browser, server, hub)
        assert page.inner_text("#sound-toggle") == "♪ sound on"  # on by default here
        assert played(page) == []  # nothing heard before the page opened is played
        fed(page, hub, Penalty(2_000_000, 1, "wrong_snap"))
        wait_for(page, "window.oscillators.length >= 1")
        assert played(page) == [(220, 0.3)]
        osc = page.evaluate("window.oscillators[0]")
        assert osc["start"] == 10 and osc["hz_at"] == 10 and osc["type"] == "square"
        # A winner's chirp and the late tick with it: the tick does not cut the chirp off.
        fed(
            page,
            hub,
            StackWon(3_000_000, 0, "snap", ("pair",), 4, 20_000, 0),
            SnapIgnored(3_000_000, 2, "late", 20_000),
        )
        wait_for(page, "window.oscillators.length >= 4")
        assert played(page)[1:] == [(880, 0.06), (1175, 0.06), (1568, 0.06)]
        starts = [o["start"] for o in page.evaluate("window.oscillators")[1:]]
        assert starts == pytest.approx([10, 10.06, 10.12])
        page.screenshot(path=ARTIFACTS / "kiosk-sound-on.png")
    finally:
        server.stop()


def test_the_toggle_turns_the_sound_off_and_the_browser_remembers(browser):
    hub, _ = race_hub()
    server = serve(hub)
    try:
        page = open_page(browser, server, hub)
        page.click("#sound-toggle")
        assert page.inner_text("#sound-toggle") == "♪ sound off"
        assert page.evaluate("localStorage.getItem('referee-sound')") == "off"
        fed(page, hub, Penalty(2_000_000, 1, "wrong_snap"))
        assert played(page) == []
        page.reload()
        wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}", timeout_ms=TIMEOUT_MS)
        page.wait_for_selector("#sound-toggle", state="visible")
        assert page.inner_text("#sound-toggle") == "♪ sound off"  # kept in this browser
        fed(page, hub, Penalty(2_500_000, 2, "wrong_snap"))
        assert played(page) == []
        page.click("#sound-toggle")
        fed(page, hub, Penalty(3_000_000, 0, "wrong_snap"))
        wait_for(page, "window.oscillators.length >= 1")
        assert played(page) == [(220, 0.3)]
    finally:
        server.stop()


def test_with_a_buzzer_wired_the_pis_screen_stays_silent_until_asked(browser):
    hub, _ = race_hub()
    server = serve(hub, buzzer=True)
    try:
        page = open_page(browser, server, hub)
        assert page.inner_text("#sound-toggle") == "♪ sound off"
        fed(page, hub, Penalty(2_000_000, 1, "wrong_snap"))
        assert played(page) == []
        page.click("#sound-toggle")
        fed(page, hub, Penalty(2_500_000, 2, "wrong_snap"))
        wait_for(page, "window.oscillators.length >= 1")
        assert played(page) == [(220, 0.3)]
    finally:
        server.stop()


def test_the_phones_qr_code_opens_on_a_tap(browser):
    hub, _ = race_hub()
    server = serve(hub, watch=WATCH)
    try:
        page = open_page(browser, server, hub)
        page.click("#phones-open")
        wait_for(page, "document.getElementById('phones-qr').naturalWidth > 0")
        assert page.inner_text("#phones-url") == WATCH
        page.screenshot(path=ARTIFACTS / "kiosk-phones-qr.png")
        page.click("#phones")
        assert page.is_hidden("#phones")
    finally:
        server.stop()
    hub, _ = race_hub()
    server = serve(hub)  # this machine only: no address for phones, no button
    try:
        page = open_page(browser, server, hub)
        assert page.is_hidden("#phones-open")
    finally:
        server.stop()


def test_the_host_sets_house_rules_for_the_next_game_and_the_legend_shows_them(browser):
    hub, _ = race_hub()
    table = HouseTable()
    server = serve(hub, commands=table)
    try:
        page = open_page(browser, server, hub)
        page.wait_for_selector("#local-token", state="visible")  # the Pi's own screen: the token
        page.click("#admin-open")
        page.click("#house-open")
        page.wait_for_selector("#house", state="visible")
        assert page.locator("#house-options [data-opt]").count() == len(kinds())
        page.uncheck('[data-opt="slap_dark_queen"]')
        page.select_option('[data-opt="slap_run"]', "3")
        page.screenshot(path=ARTIFACTS / "kiosk-house-rules.png")
        page.click("#house-save")
        page.wait_for_selector("#house", state="hidden")
        ((name, options),) = table.calls
        assert name == "set_house_rules"
        assert options["slap_dark_queen"] is False and options["slap_run"] == 3
        assert options["race_window"] == 300 and options["scan"] == "stack"  # the rest as they were
        hub.next_game(
            {
                "game": {
                    "players": ["Ann", "Bob", "Cy"],
                    "rules": "celtic",
                    "options": {"slap_dark_queen": False},
                }
            }
        )
        wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}", timeout_ms=TIMEOUT_MS)
        assert "next game: dark queen off" in page.inner_text("#legend")
    finally:
        server.stop()
