"""The calibration wizard's page in a real browser (conftest.py's headless Chromium).

`referee calibrate --sim --kiosk --speed 0` runs in a thread of the test, as from the command
line: the simulated person lays the cards and presses the buttons, and every question is
answered by tapping the page. The steps are held at one prompt of each (a `Holds` gate) while
the test reads the page, so nothing here waits on time. Also: the camera lost in a step (the
page says so, the steps before it kept), and the game's kiosk screen handing over to the
wizard and back on the same port. Screenshots in test-artifacts/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.kiosk import Holds, WizardHub, make_wizard_app
from calibration.wizard_view import prompt_view
from referee.cli.background_wizard import BackgroundWizard
from referee.kiosk.server import KioskServer
from referee.vision.profile import TableProfile, load, partial_path, save
from tests.conftest import ARTIFACTS, wait_for
from tests.test_kiosk import race_hub
from tests.test_kiosk_browser import SIZES, serve

TIMEOUT_MS = 30_000  # what any wait may take before the test fails; none comes near it
WAIT_S = TIMEOUT_MS / 1000


def at(step: str, test: Any) -> Any:
    return lambda name, prompt: name == step and test(prompt)


def open_wizard(browser: Any, wizard: BackgroundWizard, size: tuple[int, int]) -> Any:
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(wizard.url(WAIT_S))
    return page


def shows(page: Any, prompt: Any) -> None:
    """Wait until the page shows `prompt` (the one the steps are held at)."""
    wait_for(page, "t => wizard.view && wizard.view.prompt?.text === t", arg=prompt_view(prompt)["text"])


def a_fresh_preview(page: Any) -> None:
    """Wait for a preview image asked for after now (two loads: one already asked for may be
    older), and check it is a picture."""
    wait_for(page, "n => wizard.previews > n + 1", arg=page.evaluate("wizard.previews"))
    assert page.is_visible("#preview-img")
    assert page.evaluate("wizard.previewSize") == [480, 360]


def marks(page: Any) -> dict[str, str]:
    return page.evaluate("Object.fromEntries(wizard.view.steps.map(s => [s.name, s.state]))")


def tap(page: Any, answer: str) -> None:
    page.click(f'#choices button[data-answer="{answer}"]:not([disabled])')


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_whole_wizard_at_the_simulated_table_is_answered_on_the_page(browser, tmp_path: Path, size):
    out = tmp_path / "table-profile.npz"
    holds = Holds(
        ("seats", at("seats", lambda p: p.progress == (2, 2))),
        ("deck", at("deck", lambda p: p.progress == (3, 16) and not p.check)),
        ("self-check", at("deck", lambda p: p.progress == (2, 10) and p.check)),
        ("buttons", at("buttons", lambda p: p.phase == "leds" and p.progress == (2, 2))),
    )
    argv = ["calibrate", "--sim", "--kiosk", "--speed", "0", "--quick", "--players", "Ann,Bob", "--seed", "3"]
    wizard = BackgroundWizard([*argv, "--port", "0", "--out", str(out)], holds).start()
    name = f"{size[0]}x{size[1]}"
    try:
        page = open_wizard(browser, wizard, size)
        # The camera: its snapshot's question, answered on the page.
        page.wait_for_selector('#choices button[data-answer="yes"]')
        assert page.inner_text("#prompt") == "Is the box round the pile right?"
        assert page.locator("#choices button").all_inner_texts() == ["Yes", "No"]  # capitalised by CSS
        assert marks(page) == {"camera": "current", "seats": "todo", "deck": "todo", "buttons": "todo"}
        a_fresh_preview(page)
        page.screenshot(path=ARTIFACTS / f"calibrate-camera-{name}.png")
        tap(page, "yes")

        assert holds.next(WAIT_S) == "seats"
        shows(page, holds.prompt)
        assert (
            page.inner_text("#prompt")
            == "Bob (seat 2 of 2): reach in from where you sit and lay a card in the middle."
        )
        assert page.inner_text("#progress .count") == "2 of 2"
        assert marks(page)["camera"] == "done" and marks(page)["seats"] == "current"
        assert "pile area" in page.get_attribute('.step[data-step="camera"]', "title")
        a_fresh_preview(page)
        holds.release()

        assert holds.next(WAIT_S) == "deck"
        shows(page, holds.prompt)
        assert page.inner_text("#progress .count") == "3 of 16"
        width = page.evaluate("document.querySelector('#progress .bar i').style.width")
        assert width == f"{100 * 2 / 16}%"
        # A card the deck lacks is said so with one tap.
        assert page.locator("#choices button").all_inner_texts() == ["Missing"]
        a_fresh_preview(page)
        page.screenshot(path=ARTIFACTS / f"calibrate-deck-{name}.png")
        holds.release()

        assert holds.next(WAIT_S) == "self-check"
        shows(page, holds.prompt)
        assert (
            page.inner_text("#phase").lower() == "self-check"
            and page.inner_text("#progress .count") == "2 of 10"
        )
        holds.release()

        assert holds.next(WAIT_S) == "buttons"
        shows(page, holds.prompt)
        assert page.inner_text("#prompt") == "Bob: press your button if your light is on"
        assert page.is_hidden("#preview-img") and page.is_visible("#lights")
        assert page.get_attribute("#lights .light:nth-child(2) .led", "style") == "--level:1"
        assert page.locator("#choices button").all_inner_texts() == ["Skip"]
        page.screenshot(path=ARTIFACTS / f"calibrate-buttons-{name}.png")
        holds.release()

        # The buzzer's question: "again" plays the tune again and asks again; then yes.
        page.wait_for_selector('#choices button[data-answer="again"]:not([disabled])')
        asked = page.evaluate("wizard.view.prompt.id")
        tap(page, "again")
        wait_for(page, "n => wizard.view.prompt.id > n && !wizard.view.prompt.answered", arg=asked)
        tap(page, "yes")

        page.wait_for_selector("#end:not([hidden])")
        assert wizard.join(WAIT_S) == 0
        assert page.inner_text("#end h2") == "Calibrated"
        assert f"the table profile is {out}" in page.inner_text("#end")
        assert set(marks(page).values()) == {"done"}
        assert page.evaluate("wizard.steps") == ["camera", "seats", "deck", "buttons"]
        answered = [text for _, text in page.evaluate("wizard.answers")]
        assert answered == ["yes", "again", "yes"]
        assert page.is_hidden("#prompt") and page.is_hidden("#banner")
        page.screenshot(path=ARTIFACTS / f"calibrate-done-{name}.png")
    finally:
        wizard.stop()
    profile = load(out)
    assert profile.done == ("camera", "seats", "deck", "buttons")
    assert profile.seats == {"bottom": 0, "left": 1} and [s["name"] for s in profile.buttons["seat"]] == [
        "Ann",
        "Bob",
    ]
    assert not partial_path(out).exists()
    assert "> again" in wizard.lines and wizard.lines.count("> yes") == 2  # the terminal says it too


def test_a_camera_lost_in_a_step_is_said_on_the_page_and_the_steps_before_are_kept(browser, tmp_path: Path):
    out = tmp_path / "table-profile.npz"
    camera = {"size": [640, 480], "pile_box": [100, 40, 540, 440], "card_px": 140.0}
    save(TableProfile().with_step("camera", camera=camera), partial_path(out))
    before = partial_path(out).read_bytes()
    frames = tmp_path / "camera"
    frames.mkdir()
    for k in range(5):  # a camera that sends five frames of the empty table, then nothing
        cv2.imwrite(str(frames / f"{k:03d}.png"), np.full((480, 640, 3), (40, 110, 45), np.uint8))
    holds = Holds(("seats", at("seats", lambda p: p.progress == (1, 2))))
    argv = ["calibrate", "--kiosk", "--camera", str(frames), "--players", "Ann,Bob", "--port", "0"]
    wizard = BackgroundWizard([*argv, "--out", str(out)], holds).start()
    try:
        page = open_wizard(browser, wizard, SIZES[0])
        assert holds.next(WAIT_S) == "seats"
        shows(page, holds.prompt)
        assert marks(page) == {"camera": "kept", "seats": "current", "deck": "todo", "buttons": "todo"}
        assert page.inner_text("#mode") == f"camera: {frames}"
        holds.release()
        page.wait_for_selector("#banner:not([hidden])")
        assert wizard.join(WAIT_S) == 2
        fault = "the camera's frames ended before the step was done: calibration stopped"
        assert str(wizard.error) == fault
        assert page.inner_text("#banner") == fault and page.inner_text("#end h2") == "Stopped: a fault"
        assert "What was finished is kept" in page.inner_text("#end")
        assert marks(page) == {"camera": "kept", "seats": "failed", "deck": "todo", "buttons": "todo"}
        page.screenshot(path=ARTIFACTS / "calibrate-camera-lost-800x480.png")
    finally:
        wizard.stop()
    assert partial_path(out).read_bytes() == before and not out.exists()


def test_the_tables_screen_goes_to_the_wizard_and_back_to_the_game(browser):
    """The Pi's kiosk browser shows http://127.0.0.1:8080/: the wizard, started on that port
    while the game is stopped, takes the screen, and the game takes it back after."""
    hub, _ = race_hub()
    game = serve(hub)
    port = game.port
    page = browser.new_page(viewport={"width": 800, "height": 480})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(game.url)
    page.wait_for_selector(".seat")
    game.stop()
    wizard_hub = WizardHub("Calibration", ("camera",), "camera: camera")
    wizard = KioskServer(make_wizard_app(wizard_hub), wizard_hub, port=port)
    wizard.start()
    try:
        page.wait_for_url("**/calibrate")
        page.wait_for_selector('.step.todo[data-step="camera"]')
    finally:
        wizard.stop()
    game = serve(hub, port=port)
    try:
        page.wait_for_url(game.url)
        page.wait_for_selector(".seat")
        assert json.loads(hub.snapshot()[1])["players"][0]["name"] == page.inner_text(".seat .name >> nth=0")
    finally:
        game.stop()
