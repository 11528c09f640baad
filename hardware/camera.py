"""Frame sources: the Pi camera, a USB webcam or video file, an image folder.

Every source yields `Frame`s stamped in integer microseconds. Live cameras stamp
on CLOCK_MONOTONIC (picamera2's `SensorTimestamp`, or `time.monotonic_ns` at grab
for a webcam), the clock of `hardware.clock`. Recorded sources stamp frame k at
exactly k / fps, so a replay is the same on every run.

A corrupt frame is skipped and counted in `skipped`, never a crash. A live camera
that goes away raises `CameraLost`; a source that cannot be used at all raises
`SourceError`. Both carry a one-line message naming the source.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Self

import cv2
import numpy as np

from .frames import CameraLost, Frame, FrameSource, SourceError
from .image_files import MAX_PIXELS, ImageFileError, read_image

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp"})


class _Source:
    """What every source shares: a name, the skipped count, `with` support."""

    name: str
    skipped: int

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FrameListSource(_Source):
    """Frames already in memory, as `(t_us, image)`: the simulator's renderer
    (`referee.sim.render.render_lay_sequence`) seen through the camera's interface."""

    def __init__(self, frames: Iterable[tuple[int, np.ndarray]], name: str = "simulator") -> None:
        self.name = name
        self.skipped = 0
        self._frames = frames

    def __iter__(self) -> Iterator[Frame]:
        for index, (t_us, image) in enumerate(self._frames):
            if image is None or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
                self.skipped += 1  # a frame the renderer could not make is a corrupt frame
                continue
            yield Frame(image, int(t_us), index)


BLACK_MEAN, BLACK_SPREAD = 12.0, 4.0  # grey levels: nothing lit in front of the lens, no texture
BLACK_US = 3_000_000  # black this long, and a live camera is taken as lost


def is_black(image: np.ndarray) -> bool:
    """A frame with nothing in it: a lens cap, a dead sensor, a camera that sends zeros. (A dark
    table under a lamp has texture and light; a sample of every 16th pixel tells.)"""
    sample = image[::16, ::16]
    mean, spread = cv2.meanStdDev(sample)
    return float(mean.mean()) < BLACK_MEAN and float(spread.mean()) < BLACK_SPREAD


def black_frames_lose(frames: Iterable[Frame], name: str, after_us: int = BLACK_US) -> Iterator[Frame]:
    """A live camera's frames, passed on; frames black for `after_us` raise CameraLost, so the
    game pauses (and the service ends with status 3) instead of watching nothing."""
    since: int | None = None
    for frame in frames:
        if is_black(frame.image):
            if since is None:
                since = frame.t_us
            elif frame.t_us - since >= after_us:
                raise CameraLost(f"{name}: the camera sends only black frames (a lens cap? a failed camera?)")
        else:
            since = None
        yield frame


def _check_fps(fps: float, name: str) -> float:
    if not (fps > 0 and np.isfinite(fps)):
        raise SourceError(f"{name}: fps must be a positive number, not {fps}")
    return float(fps)


def natural_key(name: str) -> tuple[list[str | int], str]:
    """Sort key that puts frame2 before frame10 (digit runs compare as numbers)."""
    parts = re.split(r"(\d+)", name, flags=re.ASCII)
    # re.split with a group alternates text and digits, so odd positions are always digits.
    return [int(p) if i % 2 else p.casefold() for i, p in enumerate(parts)], name


class ImageFolderSource(_Source):
    """The image files of a folder in natural name order; frame k at round(k * 1e6 / fps) us."""

    def __init__(self, folder: str | Path, fps: float = 30.0) -> None:
        self.folder = Path(folder)
        self.name = str(folder)
        self.fps = _check_fps(fps, self.name)
        self.skipped = 0
        if not self.folder.is_dir():
            raise SourceError(f"{self.name}: no such folder")
        files = [p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS and p.is_file()]
        if not files:
            raise SourceError(f"{self.name}: no images (png, jpg, jpeg, bmp, webp) in the folder")
        self.files = sorted(files, key=lambda p: natural_key(p.name))

    def __len__(self) -> int:
        return len(self.files)

    def _read(self, path: Path) -> np.ndarray | None:
        try:
            return read_image(path)
        except ImageFileError:
            return None  # counted as skipped: one bad frame in a folder is no reason to stop

    def __iter__(self) -> Iterator[Frame]:
        # Every file keeps its slot in time, read or not, so a skipped frame never shifts the rest.
        for k, path in enumerate(self.files):
            image = self._read(path)
            if image is None:
                self.skipped += 1
                continue
            yield Frame(image, round(k * 1e6 / self.fps), k)


class VideoSource(_Source):
    """OpenCV VideoCapture on a video file (exact k / fps stamps) or a device index (a webcam).

    `capture_factory` is the seam for tests: it takes what cv2.VideoCapture takes.
    """

    def __init__(
        self,
        path_or_index: str | Path | int,
        fps: float | None = None,
        *,
        max_failures: int = 30,
        retry_s: float = 0.01,
        capture_factory: Callable[[Any], Any] | None = None,
    ) -> None:
        self.live = isinstance(path_or_index, int)
        self.name = f"camera {path_or_index}" if self.live else str(path_or_index)
        self.skipped = 0
        self.max_failures = max_failures
        self.retry_s = retry_s
        self._cap = (capture_factory or cv2.VideoCapture)(path_or_index if self.live else str(path_or_index))
        if not self._cap.isOpened():
            self._cap.release()
            if self.live:
                raise CameraLost(f"{self.name}: cannot open the camera")
            raise SourceError(f"{self.name}: cannot open as a video")
        self.fps: float | None = None
        if not self.live:
            w, h = self._cap.get(cv2.CAP_PROP_FRAME_WIDTH), self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT)
            if w * h > MAX_PIXELS:  # as for an image file: each frame would be that big
                self._cap.release()
                raise SourceError(
                    f"{self.name}: {w:.0f} x {h:.0f} pixels a frame is too big "
                    f"(at most {MAX_PIXELS // 1_000_000} megapixels)"
                )
            if fps is None:
                fps = self._cap.get(cv2.CAP_PROP_FPS)
                if not (fps and fps > 0 and np.isfinite(fps)):
                    self._cap.release()
                    raise SourceError(f"{self.name}: the video has no frame rate; give one with fps")
            self.fps = _check_fps(fps, self.name)

    def close(self) -> None:
        self._cap.release()

    def __iter__(self) -> Iterator[Frame]:
        failures = 0
        k = 0
        while True:
            if not self._cap.grab():
                failures += 1
                if failures < self.max_failures:
                    if self.live and self.retry_s:
                        time.sleep(self.retry_s)
                    continue
                if self.live:
                    raise CameraLost(f"{self.name}: no frame after {failures} tries (unplugged?)")
                return  # the file has ended
            # Stamp at grab, before decoding: the frame's arrival, not our speed.
            t_now = time.monotonic_ns() // 1000
            if not self.live:
                # Failed grabs followed by a good one were frames lost mid-file: they keep their slots.
                self.skipped += failures
                k += failures
            failures = 0
            ok, image = self._cap.retrieve()
            index = k
            k += 1
            if not ok or image is None or image.size == 0:
                self.skipped += 1
                continue
            if image.ndim == 2:
                image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
            t_us = t_now if self.fps is None else round(index * 1e6 / self.fps)
            yield Frame(image, t_us, index)


class Picamera2Source(_Source):
    """The Pi camera: the main stream (BGR) for recognition, a small grey lores stream for motion.

    picamera2 exists only on Raspberry Pi OS, so it is imported here, not at the top.
    """

    def __init__(
        self,
        size: tuple[int, int] = (1280, 720),
        lores: tuple[int, int] = (320, 240),
        fps: float = 30,
        camera_num: int = 0,
    ) -> None:
        try:
            from picamera2 import Picamera2  # on the Pi only (python3-picamera2)
        except ImportError as e:
            raise SourceError(
                "picamera2 is not installed: on Raspberry Pi OS install python3-picamera2"
            ) from e
        self.name = f"picamera {camera_num}"
        self.skipped = 0
        self._lores_size = lores
        self._cam: Any = None
        try:
            self._cam = Picamera2(camera_num)
            # RGB888 is laid out B, G, R in memory: OpenCV's order, no conversion needed.
            config = self._cam.create_video_configuration(
                main={"size": size, "format": "RGB888"},
                lores={"size": lores, "format": "YUV420"},
                controls={"FrameRate": fps},
            )
            self._cam.configure(config)
            self._cam.start()
        except Exception as e:  # libcamera reports a missing or busy camera in many ways
            self.close()
            raise CameraLost(f"{self.name}: cannot start the camera: {_one_line(e)}") from e

    def close(self) -> None:
        if self._cam is not None:
            cam, self._cam = self._cam, None
            try:
                cam.stop()
            finally:
                cam.close()

    def __iter__(self) -> Iterator[Frame]:
        w, h = self._lores_size
        for k in itertools.count():
            if self._cam is None:
                return
            try:
                request = self._cam.capture_request()
            except Exception as e:
                raise CameraLost(f"{self.name}: capture failed: {_one_line(e)}") from e
            try:
                # SensorTimestamp is ns on CLOCK_MONOTONIC: the start of the exposure, not our reading.
                t_ns = request.get_metadata().get("SensorTimestamp")
                image = request.make_array("main")  # make_array copies, so release below is safe
                yuv = request.make_array("lores")
            except Exception:
                self.skipped += 1
                continue
            finally:
                request.release()
            if t_ns is None or image is None or image.size == 0:
                self.skipped += 1
                continue
            # YUV420 arrives as (h * 3 / 2, stride): the first h rows are Y, the grey picture.
            yield Frame(image, int(t_ns) // 1000, k, yuv[:h, :w])


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def open_source(spec: str, fps: float | None = None) -> FrameSource:
    """The CLI's SOURCE: "camera", a device number ("0"), an image folder or a video file.

    `fps` times an image folder (30 when None) and overrides a video file's own rate.
    """
    if spec == "camera":
        return Picamera2Source(fps=fps or 30)
    if spec.isdigit() and spec.isascii():
        return VideoSource(int(spec))
    path = Path(spec)
    if path.is_dir():
        return ImageFolderSource(path, 30.0 if fps is None else fps)
    if path.is_file():
        return VideoSource(path, fps)
    raise SourceError(f"{spec}: no such file, folder or camera")
