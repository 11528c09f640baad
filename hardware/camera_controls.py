"""Locking the camera's exposure and focus once calibration finds them good.

`CameraControls` is what the calibration's camera step needs: what auto-exposure (and
autofocus) settled on, and a way to hold it there, so that a white card arriving on a dark
cloth does not change the picture under the pile watcher. `Picamera2Controls` does it on the
Pi camera (picamera2's `capture_metadata` and `set_controls`; only the Camera Module 3 has
autofocus, seen by its controls having "AfMode"). Other sources (a webcam, a video, the
simulator) have nothing to lock: `NoControls`. `RecordingControls` is the tests' double.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

AF_MANUAL, AF_CONTINUOUS = 0, 2  # libcamera's AfMode values


class Exposure(NamedTuple):
    exposure_us: int
    gain: float  # analogue gain
    lens_position: float | None  # dioptres; None without autofocus


class CameraControls(Protocol):
    def current(self) -> Exposure | None:
        """What the camera's automatic exposure and focus use now; None when it cannot say."""
        ...

    def lock(self, exposure_us: int, gain: float, lens_position: float | None) -> None:
        """Hold exposure, gain and (with autofocus) the lens where they are given."""
        ...

    def unlock(self) -> None:
        """Automatic exposure (and continuous autofocus) again."""
        ...


class NoControls:
    """A source with nothing to lock: a video file, an image folder, the simulator, a webcam."""

    def current(self) -> Exposure | None:
        return None

    def lock(self, exposure_us: int, gain: float, lens_position: float | None) -> None:
        pass

    def unlock(self) -> None:
        pass


class RecordingControls:
    """A camera that reports `settled` and records every call, for tests."""

    def __init__(self, settled: Exposure | None = None) -> None:
        self.settled = settled
        self.calls: list[tuple[str, Any]] = []
        self.locked: Exposure | None = None

    def current(self) -> Exposure | None:
        return self.settled

    def lock(self, exposure_us: int, gain: float, lens_position: float | None) -> None:
        self.locked = Exposure(exposure_us, gain, lens_position)
        self.calls.append(("lock", self.locked))

    def unlock(self) -> None:
        self.locked = None
        self.calls.append(("unlock", None))


class Picamera2Controls:
    """Exposure and focus of a running `picamera2.Picamera2`."""

    def __init__(self, camera: Any) -> None:
        self._cam = camera
        self.has_focus = "AfMode" in camera.camera_controls  # the Camera Module 3 only

    def current(self) -> Exposure | None:
        metadata = self._cam.capture_metadata()
        exposure, gain = metadata.get("ExposureTime"), metadata.get("AnalogueGain")
        if exposure is None or gain is None:
            return None
        lens = metadata.get("LensPosition") if self.has_focus else None
        return Exposure(int(exposure), float(gain), None if lens is None else float(lens))

    def lock(self, exposure_us: int, gain: float, lens_position: float | None) -> None:
        controls: dict[str, Any] = {"AeEnable": False, "ExposureTime": int(exposure_us), "AnalogueGain": gain}
        if self.has_focus and lens_position is not None:
            controls |= {"AfMode": AF_MANUAL, "LensPosition": float(lens_position)}
        self._cam.set_controls(controls)

    def unlock(self) -> None:
        controls: dict[str, Any] = {"AeEnable": True}
        if self.has_focus:
            controls["AfMode"] = AF_CONTINUOUS
        self._cam.set_controls(controls)


def controls_for(source: object) -> CameraControls:
    """The controls of a frame source: the Pi camera's, or nothing to lock."""
    from .camera import Picamera2Source  # the camera module imports OpenCV: only when asked

    if isinstance(source, Picamera2Source) and source._cam is not None:
        # The source owns the running Picamera2; the controls act on it, nothing else does.
        return Picamera2Controls(source._cam)
    return NoControls()
