"""The calibration wizard's kiosk page without a browser: the hub (steps, prompts, answers,
preview), the web app, and `referee calibrate --kiosk`'s faults: no camera at the start,
mistaken options, Ctrl-C (the steps finished kept, the server stopped)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx2
import numpy as np
import pytest
from starlette.testclient import TestClient

from calibration.kiosk import Holds, WizardHub, make_wizard_app
from calibration.steps import Prompt
from calibration.steps_buttons import ButtonsStep
from referee.cli.background_wizard import BackgroundWizard
from referee.cli.main import main
from referee.live.wiring import default_wiring
from referee.vision.profile import load, partial_path

WAIT_S = 60.0  # what any wait may take before the test fails; none comes near it


def view(hub: WizardHub) -> dict:
    return json.loads(hub.snapshot()[1])


def hub4() -> WizardHub:
    return WizardHub("Calibration", ("camera", "seats", "deck", "buttons"), "the simulated table, at once")


def test_the_steps_are_marked_as_the_wizard_goes():
    hub = hub4()
    assert [s["state"] for s in view(hub)["steps"]] == ["todo"] * 4
    hub.kept("camera", "1. camera: done before, kept")
    hub.begin("seats")
    hub.step_done("seats", "seats: { bottom = 0, left = 1 }")
    hub.begin("deck")
    v = view(hub)
    assert [s["state"] for s in v["steps"]] == ["kept", "done", "current", "todo"]
    assert v["step"] == "deck" and v["steps"][1]["line"] == "seats: { bottom = 0, left = 1 }"
    assert v["page"] == "/calibrate" and v["end"] is None
    hub.fail("the camera's frames ended before the step was done: calibration stopped")
    v = view(hub)
    assert [s["state"] for s in v["steps"]] == ["kept", "done", "failed", "todo"]
    assert v["end"] == {
        "how": "failed",
        "text": "the camera's frames ended before the step was done: calibration stopped",
    }


def test_a_prompt_is_new_when_its_words_or_choices_change_not_its_note():
    hub = hub4()
    hub.begin("buttons")
    step = ButtonsStep(default_wiring(2))
    assert hub.show(step.prompt()) is True
    first = view(hub)["prompt"]
    version = hub.version
    assert hub.show(step.prompt()) is False and hub.version == version  # the same: no new version
    step._note = "that button (BCM 27) is already Bob's: Ann, press yours"
    assert hub.show(step.prompt()) is False  # a note: the same prompt, answers to it still fit
    assert view(hub)["prompt"]["id"] == first["id"] and view(hub)["prompt"]["note"].startswith("that button")
    assert hub.show(Prompt("Lay the ace of spades face up in the middle (1 of 16).", "card", (1, 16))) is True
    assert view(hub)["prompt"]["id"] == first["id"] + 1


def test_an_answer_goes_to_the_prompt_it_names_once_and_only_one_of_its_choices():
    hub = hub4()
    hub.begin("deck")
    hub.show(Prompt("Is it the 7 of hearts? (y/n)", "answer", (18, 52)))
    shown = view(hub)["prompt"]
    assert shown["choices"] == ["yes", "no"] and shown["answered"] is False
    assert hub.answer(shown["id"], "maybe") == (400, "answer one of: yes, no")
    assert hub.answer(shown["id"] - 1, "yes") == (409, "that question has passed")
    assert hub.answer("1", "yes")[0] == 400 and hub.answer(shown["id"], 1)[0] == 400
    assert hub.answer(shown["id"], "no") == (200, "answered no")
    assert view(hub)["prompt"]["answered"] is True
    assert hub.answer(shown["id"], "yes") == (409, "that question has passed")  # tapped twice
    assert hub.take_answer(block=True) == "no"
    assert hub.take_answer(block=False) is None


def test_an_answer_whose_question_has_passed_is_dropped_and_a_question_asked_again_is_new():
    hub = hub4()
    hub.begin("buttons")
    tune = ButtonsStep(default_wiring(2))
    for _ in range(4):
        tune.answer("skip")  # the seats' buttons, then their lights
    asked = tune.prompt()
    assert asked.phase == "buzzer"
    hub.show(asked)
    first = view(hub)["prompt"]["id"]
    assert hub.answer(first, "again")[0] == 200
    hub.show(Prompt("Lay the ace of spades face up in the middle (1 of 16).", "card", (1, 16)))
    assert hub.take_answer(block=False) is None  # "again" was for the question gone by
    hub.show(asked)
    second = view(hub)["prompt"]["id"]
    assert second > first and hub.answer(second, "again")[0] == 200
    assert hub.take_answer(block=True) == "again"
    hub.show(asked)  # the tune played again, the same words: a new question all the same
    third = view(hub)["prompt"]
    assert third["id"] > second and third["answered"] is False
    hub.cancel()
    with pytest.raises(KeyboardInterrupt):
        hub.take_answer(block=True)


def test_the_preview_is_the_latest_frame_encoded_once_and_none_in_a_new_step():
    hub = hub4()
    hub.begin("seats", (100, 40, 540, 440))
    assert hub.preview_jpeg() is None and view(hub)["preview"] is False
    image = np.full((480, 640, 3), 90, np.uint8)
    hub.frame(image, Prompt("Ann (seat 1 of 2): reach in", "card", (1, 2), seat=0))
    assert view(hub)["preview"] is True
    data = hub.preview_jpeg()
    assert data is not None and data[:2] == b"\xff\xd8" and hub.preview_jpeg() is data
    hub.frame(image.copy(), Prompt("Ann (seat 1 of 2): reach in", "card", (1, 2), seat=0))
    assert hub.preview_jpeg() is not data
    hub.begin("buttons")
    assert hub.preview_jpeg() is None and view(hub)["preview"] is False


def test_the_app_serves_the_page_the_view_the_preview_and_takes_json_answers():
    hub = hub4()
    with TestClient(make_wizard_app(hub)) as client:
        root = client.get("/", follow_redirects=False)
        assert root.status_code == 307 and root.headers["location"] == "/calibrate"
        page = client.get("/calibrate")
        assert page.status_code == 200 and '<script src="/static/calibrate.js"' in page.text
        assert client.get("/static/calibrate.css").status_code == 200
        assert client.get("/calibrate/state").json()["title"] == "Calibration"
        assert client.get("/calibrate/preview.jpg").status_code == 204
        hub.begin("camera")
        hub.frame(np.zeros((480, 640, 3), np.uint8), None)
        preview = client.get("/calibrate/preview.jpg")
        assert preview.status_code == 200 and preview.headers["content-type"] == "image/jpeg"
        hub.show(Prompt("Is the box round the pile right? (y/n)", "answer"))
        prompt_id = client.get("/calibrate/state").json()["prompt"]["id"]
        # A plain form is what another site's page could post unasked: refused.
        form = client.post("/calibrate/answer", data={"prompt": prompt_id, "answer": "yes"})
        assert form.status_code == 415
        assert (
            client.post(
                "/calibrate/answer", content=b"[1]", headers={"content-type": "application/json"}
            ).status_code
            == 400
        )
        wrong = client.post("/calibrate/answer", json={"prompt": prompt_id, "answer": "perhaps"})
        assert wrong.status_code == 400 and wrong.json() == {"error": "answer one of: yes, no"}
        right = client.post("/calibrate/answer", json={"prompt": prompt_id, "answer": "yes"})
        assert right.status_code == 200 and right.json()["message"] == "answered yes"
        assert hub.take_answer(block=False) == "yes"


# The command -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("what", [[], ["seats", "--players", "Ann,Bob"], ["camera"], ["deck"]])
def test_no_camera_at_the_start_is_one_line_and_nothing_is_served_or_written(tmp_path: Path, capsys, what):
    out = tmp_path / "profile" / "table-profile.npz"
    port = free_port()
    argv = ["calibrate", *what, "--kiosk", "--camera", str(tmp_path / "no-camera"), "--port", str(port)]
    assert main([*argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"{tmp_path / 'no-camera'}: no such file, folder or camera\n"
    assert "wizard's page" not in captured.out
    assert not out.parent.exists()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # nobody listens there


@pytest.mark.parametrize(
    "argv, error",
    [
        (
            ["calibrate", "--camera", "0", "--speed", "2"],
            "--speed paces the simulated table: give it with --sim",
        ),
        (["calibrate", "--sim", "--speed", "-1"], "--speed must be 0 (at once) or more, not -1.0"),
        (["calibrate", "deck", "--images", ".", "--kiosk"], "--kiosk is for the deck step at a camera"),
    ],
)
def test_mistaken_kiosk_options_are_one_line(tmp_path: Path, capsys, argv, error):
    assert main([*argv, "--out", str(tmp_path / "p.npz")]) == 2
    assert capsys.readouterr().err.startswith(error)
    assert list(tmp_path.iterdir()) == []


def at(step: str, test) -> object:
    return lambda name, prompt: name == step and test(prompt)


def test_ctrl_c_at_the_kiosk_keeps_the_steps_finished_and_stops_the_server(tmp_path: Path):
    out = tmp_path / "table-profile.npz"
    holds = Holds(
        ("camera", at("camera", lambda p: p.phase == "confirm")),
        ("deck", at("deck", lambda p: p.progress == (1, 16))),
    )
    argv = ["calibrate", "--sim", "--kiosk", "--speed", "0", "--quick", "--players", "Ann,Bob"]
    wizard = BackgroundWizard([*argv, "--port", "0", "--out", str(out)], holds).start()
    try:
        url = wizard.url(WAIT_S)
        assert holds.next(WAIT_S) == "camera"
        with httpx2.Client(base_url=url.removesuffix("/calibrate")) as client:
            asked = client.get("/calibrate/state").json()["prompt"]
            holds.release()
            assert (
                client.post("/calibrate/answer", json={"prompt": asked["id"], "answer": "yes"}).status_code
                == 200
            )
            assert holds.next(WAIT_S) == "deck"
            hub = wizard.args.front.hub
            holds.cancel()  # Ctrl-C, where the deck step has just begun
            assert wizard.join(WAIT_S) == 130
            with pytest.raises(httpx2.TransportError):
                client.get("/calibrate/state")
    finally:
        wizard.stop()
    assert not out.exists()
    assert load(partial_path(out)).done == ("camera", "seats")
    assert view(hub)["end"]["how"] == "stopped" and hub.closed
    assert [s["state"] for s in view(hub)["steps"]] == ["done", "done", "stopped", "todo"]
    assert any(line.startswith("the wizard's page: http://127.0.0.1:") for line in wizard.lines)
    assert (
        "Is the box round the pile right? (y/n) (answer on the page)" in wizard.lines
        and "> yes" in wizard.lines
    )
