"""The camera step driven end to end on the simulator's frames: a hand lays a card."""

from collections.abc import Iterator

import cv2
import numpy as np
import pytest

from calibration.steps_camera import CameraStep, drive
from hardware.camera import FrameListSource
from hardware.camera_controls import (
    AF_CONTINUOUS,
    AF_MANUAL,
    Exposure,
    NoControls,
    Picamera2Controls,
    RecordingControls,
    controls_for,
)
from hardware.frames import CameraLost, Frame
from referee.cards import parse_card
from referee.errors import UserError
from referee.sim.render import render_lay_sequence

SETTLED = Exposure(20000, 2.0, 1.5)


def lay_clip(table: str = "green_cloth", seed: int = 2, side: str = "bottom") -> list[Frame]:
    """1 s of the empty table, a hand laying one card near the middle, 2 s of it lying there."""
    frames, _ = render_lay_sequence(
        [parse_card("7H")],
        [0],
        {0: side},
        np.random.default_rng(seed),
        table=table,
        lead_s=1.0,
        rest_s=(2.0, 2.0),
    )
    return list(FrameListSource(frames))


def phases(step: CameraStep, frames: list[Frame]) -> list[str]:
    seen: list[str] = []
    for frame in frames:
        step.feed_frame(frame)
        if not seen or seen[-1] != step.prompt().phase:
            seen.append(step.prompt().phase)
        if step.prompt().waits != "frames":
            break
    return seen


@pytest.mark.parametrize(
    ("table", "side"), [("green_cloth", "bottom"), ("wood", "left"), ("patterned", "top")]
)
def test_a_card_laid_by_a_hand_calibrates_the_camera(table, side):
    controls = RecordingControls(SETTLED)
    step = CameraStep(controls)
    assert phases(step, lay_clip(table, side=side)) == ["light", "lay", "card", "confirm"]
    prompt = step.prompt()
    assert prompt.waits == "answer" and "(y/n)" in prompt.text
    assert prompt.snapshot is not None and prompt.snapshot.shape == (480, 640, 3)
    assert controls.calls == [("lock", SETTLED)]  # locked once, when the card was good
    with pytest.raises(UserError):
        step.result()
    step.answer("y")
    assert step.done
    result = step.result()
    assert result.size == (640, 480) and result.exposure == SETTLED
    assert result.card_px == pytest.approx(140, rel=0.03)
    x0, y0, x1, y1 = result.pile_box
    assert 0 <= x0 < x1 <= 640 and 0 <= y0 < y1 <= 480
    profile = result.to_profile()
    assert profile["exposure_us"] == 20000 and profile["lens_position"] == 1.5
    assert profile["pile_box"] == list(result.pile_box)


def test_no_at_the_confirm_unlocks_and_waits_for_the_card_to_be_laid_again():
    clip = lay_clip()
    controls = RecordingControls(SETTLED)
    step = CameraStep(controls)
    phases(step, clip)
    step.answer("maybe")
    assert step.prompt().phase == "confirm" and "y or n" in step.prompt().text
    step.answer("n")
    assert controls.calls[-1] == ("unlock", None) and step.prompt().phase == "lay"
    # The card still lying there is not a new lay.
    for frame in clip[-20:]:
        step.feed_frame(frame)
    assert step.prompt().phase == "lay"
    # Taken away (the empty table again), then laid again: found again.
    assert phases(step, clip)[-1] == "confirm"
    step.answer("yes")
    assert step.done and controls.calls.count(("lock", SETTLED)) == 2


def test_a_source_with_nothing_to_lock_still_calibrates():
    step = CameraStep(NoControls())
    end = drive(step, lay_clip(seed=5), lambda prompt: "y")
    assert end.phase == "done" and step.result().exposure is None
    assert step.result().to_profile()["exposure_us"] is None


def test_the_camera_lost_mid_step_fails_with_one_line_and_keeps_nothing():
    clip = lay_clip()

    def dying() -> Iterator[Frame]:
        yield from clip[:40]  # the hand is on its way in
        raise CameraLost("picamera 0: capture failed: timeout")

    controls = RecordingControls(SETTLED)
    step = CameraStep(controls)
    end = drive(step, dying(), lambda prompt: "y")
    assert end.phase == "failed" and end.waits == "nothing"
    assert (
        "picamera 0: capture failed" in end.text and "\n" not in end.text and "nothing was saved" in end.text
    )
    assert controls.calls == []
    with pytest.raises(UserError):
        step.result()
    step.feed_frame(clip[-1])  # frames after the loss change nothing
    assert step.failed


def test_frames_that_run_out_fail_the_step():
    end = drive(CameraStep(), lay_clip()[:30], lambda prompt: "y")
    assert end.phase == "failed" and "stopped sending frames" in end.text


def test_a_dark_room_is_said_and_nothing_goes_on():
    clip = [Frame((f.image // 12).astype(np.uint8), f.t_us, f.index) for f in lay_clip()[:30]]
    step = CameraStep()
    assert phases(step, clip) == ["light"]
    assert step.prompt().verdict.code == "too_dark" and step.prompt().text.startswith("Too dark")


def test_a_card_off_the_middle_is_said_and_the_step_waits():
    clip = lay_clip(seed=11)
    step = CameraStep()
    phases(step, clip[:30])
    assert step.prompt().phase == "lay"
    # The same table with the picture's card shifted: a card lying far to the right.
    laid = clip[-1].image
    shifted = np.roll(laid, 200, axis=1)
    shifted[:, :200] = clip[0].image[:, :200]  # the table's left strip unchanged
    for k in range(12):
        step.feed_frame(Frame(shifted, clip[-1].t_us + k, clip[-1].index + k))
    prompt = step.prompt()
    assert prompt.phase == "lay" and prompt.verdict is not None
    assert prompt.verdict.code == "off_centre" and "right" in prompt.text
    assert prompt.area is not None and prompt.area.centre[0] > 450


def test_the_picture_changing_everywhere_learns_the_empty_table_again():
    step = CameraStep()
    phases(step, lay_clip()[:30])
    assert step.prompt().phase == "lay"
    other = lay_clip("wood")[0]
    for k in range(12):
        step.feed_frame(Frame(other.image, 10_000_000 + k, 1000 + k))
    assert step.prompt().phase == "light" and "changed" in step.prompt().text


def test_a_new_picture_size_starts_again_from_the_light():
    step = CameraStep()
    clip = lay_clip()
    phases(step, clip[:30])
    assert step.prompt().phase == "lay"
    big = cv2.resize(clip[0].image, (1280, 720))
    step.feed_frame(Frame(big, 10_000_000, 1000))
    assert step.prompt().phase == "light" and "size changed" in step.prompt().text


class FakePicamera2:
    """What Picamera2Controls uses of a picamera2.Picamera2: its controls, metadata, set_controls."""

    def __init__(self, autofocus: bool) -> None:
        self.camera_controls = {"ExposureTime": (130, 3066985, 20000), "AnalogueGain": (1.0, 16.0, 1.0)}
        if autofocus:
            self.camera_controls["AfMode"] = (0, 2, 0)
        self.sets: list[dict] = []

    def capture_metadata(self) -> dict:
        return {"ExposureTime": 16667, "AnalogueGain": 2.5, "LensPosition": 3.25}

    def set_controls(self, controls: dict) -> None:
        self.sets.append(controls)


def test_picamera2_controls_lock_exposure_and_the_module_3s_focus():
    cam = FakePicamera2(autofocus=True)
    controls = Picamera2Controls(cam)
    settled = controls.current()
    assert settled == Exposure(16667, 2.5, 3.25)
    controls.lock(*settled)
    controls.unlock()
    assert cam.sets == [
        {
            "AeEnable": False,
            "ExposureTime": 16667,
            "AnalogueGain": 2.5,
            "AfMode": AF_MANUAL,
            "LensPosition": 3.25,
        },
        {"AeEnable": True, "AfMode": AF_CONTINUOUS},
    ]


def test_picamera2_controls_without_autofocus_lock_exposure_only():
    cam = FakePicamera2(autofocus=False)
    controls = Picamera2Controls(cam)
    settled = controls.current()
    assert settled == Exposure(16667, 2.5, None)
    controls.lock(*settled)
    assert cam.sets == [{"AeEnable": False, "ExposureTime": 16667, "AnalogueGain": 2.5}]


def test_other_sources_have_nothing_to_lock():
    assert isinstance(controls_for(FrameListSource([])), NoControls)


def test_the_pi_cameras_controls_come_from_its_source():
    pytest.importorskip("picamera2")
    from hardware.camera import Picamera2Source

    try:
        source = Picamera2Source()
    except CameraLost:
        pytest.skip("no camera attached")
    with source:
        assert isinstance(controls_for(source), Picamera2Controls)


def test_calibrate_camera_at_the_simulated_table_saves_the_pile_area_and_the_snapshot(tmp_path, capsys):
    import cv2

    from referee.cli.main import main
    from referee.vision.profile import load

    out = tmp_path / "table-profile.npz"
    status = main(["calibrate", "camera", "--sim", "--out", str(out)])
    text = capsys.readouterr().out
    assert status == 0 and "Lay one card face up in the middle" in text and "camera: card" in text
    camera = load(out).camera
    assert camera is not None and camera["size"] == [640, 480] and 120 <= camera["card_px"] <= 160
    x0, y0, x1, y1 = camera["pile_box"]
    assert x0 < 320 < x1 and y0 < 240 < y1  # round the middle, where the card was laid
    snapshot = cv2.imread(str(tmp_path / "camera-snapshot.png"))
    assert snapshot is not None and snapshot.shape[:2] == (480, 640)
