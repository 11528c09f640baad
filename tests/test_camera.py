"""Frame sources on files made here with numpy and OpenCV, and fake captures for the live cases."""

import sys
from itertools import pairwise

import cv2
import numpy as np
import pytest

from hardware.camera import ImageFolderSource, Picamera2Source, VideoSource, natural_key, open_source
from hardware.frames import CameraLost, Frame, SourceError


def picture(n, h=48, w=64):
    """A frame whose top-left pixel says which one it is."""
    image = np.full((h, w, 3), 40, np.uint8)
    image[:8, :8] = n * 7
    return image


def write(path, n):
    assert cv2.imwrite(str(path), picture(n))
    return path


def truncate(path, keep):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def marks(frames):
    return [round(int(f.image[0, 0, 0]) / 7) for f in frames]  # MJPG and JPEG are lossy, not that lossy


# ---- image folder ----


def test_a_folder_is_read_in_natural_name_order(tmp_path):
    for n in (10, 2, 1, 33, 3):
        write(tmp_path / f"frame{n}.png", n)
    with ImageFolderSource(tmp_path) as source:
        frames = list(source)
    assert marks(frames) == [1, 2, 3, 10, 33]
    assert [f.index for f in frames] == [0, 1, 2, 3, 4]
    assert frames[0].image.shape == (48, 64, 3) and frames[0].image.dtype == np.uint8
    assert frames[0].lores is None


def test_natural_order_ignores_case_and_compares_digit_runs_as_numbers():
    names = ["B10.png", "a2.png", "b9.png", "A10.png", "x.png"]
    assert sorted(names, key=natural_key) == ["a2.png", "A10.png", "b9.png", "B10.png", "x.png"]


@pytest.mark.parametrize(
    ("fps", "stamps"), [(30, [0, 33_333, 66_667, 100_000]), (25, [0, 40_000, 80_000, 120_000])]
)
def test_frame_k_is_stamped_exactly_k_over_fps(tmp_path, fps, stamps):
    for n in range(4):
        write(tmp_path / f"f{n:03}.jpg", n)
    assert [f.t_us for f in ImageFolderSource(tmp_path, fps=fps)] == stamps


def test_corrupt_files_are_skipped_and_counted_and_keep_their_slot_in_time(tmp_path):
    for n in range(8):
        write(tmp_path / f"f{n}.{'jpg' if n % 2 else 'png'}", n)
    truncate(tmp_path / "f1.jpg", 0.6)  # libjpeg alone would decode this into a grey-filled frame
    truncate(tmp_path / "f2.png", 0.5)
    (tmp_path / "f4.png").write_bytes(b"")
    (tmp_path / "f5.jpg").write_text("not a picture")
    (tmp_path / "f6.png").write_text("not a picture")
    source = ImageFolderSource(tmp_path, fps=10)
    frames = list(source)
    assert [(f.index, f.t_us) for f in frames] == [(0, 0), (3, 300_000), (7, 700_000)]
    assert marks(frames) == [0, 3, 7]
    assert source.skipped == 5


def test_files_that_are_not_images_are_ignored_and_extensions_ignore_case(tmp_path):
    write(tmp_path / "a1.PNG", 1)
    write(tmp_path / "a2.JpEg", 2)
    write(tmp_path / "a3.bmp", 3)
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "a0.mp4").write_bytes(b"\0" * 100)
    (tmp_path / "sub.png").mkdir()
    source = ImageFolderSource(tmp_path)
    assert len(source) == 3
    assert marks(source) == [1, 2, 3]
    assert source.skipped == 0


def test_an_empty_or_missing_folder_is_a_one_line_source_error(tmp_path):
    (tmp_path / "readme.txt").write_text("no pictures here")
    with pytest.raises(SourceError, match="no images") as empty:
        ImageFolderSource(tmp_path)
    with pytest.raises(SourceError, match="no such folder") as missing:
        ImageFolderSource(tmp_path / "gone")
    for error in (empty, missing):
        assert "\n" not in str(error.value) and str(tmp_path) in str(error.value)
    assert issubclass(SourceError, ValueError)


def test_a_bad_fps_is_refused(tmp_path):
    write(tmp_path / "a.png", 1)
    with pytest.raises(SourceError, match="fps"):
        ImageFolderSource(tmp_path, fps=0)


# ---- video file ----


@pytest.fixture
def video(tmp_path):
    """20 frames at 10 fps, MJPG in AVI, each marked with its number."""
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    for n in range(20):
        writer.write(picture(n))
    writer.release()
    return path


def test_a_video_file_yields_every_frame_at_exact_stamps(video):
    with VideoSource(video) as source:
        assert source.fps == 10
        frames = list(source)
    assert len(frames) == 20
    assert [f.t_us for f in frames] == [k * 100_000 for k in range(20)]
    assert [f.index for f in frames] == list(range(20))
    assert marks(frames) == list(range(20))
    assert frames[0].image.shape == (48, 64, 3) and frames[0].image.dtype == np.uint8
    assert source.skipped == 0


def test_the_fps_argument_overrides_the_files_own_rate(video):
    frames = list(VideoSource(video, fps=25))
    assert [f.t_us for f in frames[:3]] == [0, 40_000, 80_000]


def test_a_file_that_is_not_a_video_is_a_one_line_source_error(tmp_path):
    path = tmp_path / "noise.mp4"
    path.write_bytes(np.random.default_rng(1).integers(0, 256, 5000, np.uint8).tobytes())
    with pytest.raises(SourceError, match="cannot open as a video") as error:
        VideoSource(path)
    assert "\n" not in str(error.value) and str(path) in str(error.value)


class FakeCapture:
    """cv2.VideoCapture's surface: grab() follows a script of True/False, then fails forever."""

    def __init__(self, grabs, opened=True, fps=10.0, retrieve_ok=True):
        self.grabs = list(grabs)
        self.opened = opened
        self.fps = fps
        self.retrieve_ok = retrieve_ok
        self.released = False
        self.n = 0

    def isOpened(self):
        return self.opened

    def get(self, prop):
        return self.fps if prop == cv2.CAP_PROP_FPS else 0.0

    def grab(self):
        return self.grabs.pop(0) if self.grabs else False

    def retrieve(self):
        self.n += 1
        ok = self.retrieve_ok(self.n) if callable(self.retrieve_ok) else self.retrieve_ok
        return (True, picture(self.n)) if ok else (False, None)

    def release(self):
        self.released = True


def test_frames_lost_mid_file_are_skipped_and_counted_and_keep_their_slot(tmp_path):
    fake = FakeCapture([True, False, False, True, True, True], retrieve_ok=lambda n: n != 3)
    source = VideoSource(tmp_path / "clip.avi", capture_factory=lambda _: fake)
    frames = list(source)
    assert [(f.index, f.t_us) for f in frames] == [(0, 0), (3, 300_000), (5, 500_000)]
    assert source.skipped == 3  # two failed grabs and one frame that would not decode
    source.close()
    assert fake.released


def test_a_video_without_a_frame_rate_needs_one(tmp_path):
    with pytest.raises(SourceError, match="no frame rate"):
        VideoSource(tmp_path / "x.avi", capture_factory=lambda _: FakeCapture([], fps=0.0))
    assert VideoSource(tmp_path / "x.avi", fps=5, capture_factory=lambda _: FakeCapture([], fps=0.0)).fps == 5


# ---- live webcam ----


def test_a_webcam_is_stamped_on_the_monotonic_clock_at_grab(monkeypatch):
    ticks = iter([5_000_000_123, 5_033_000_456])
    monkeypatch.setattr("hardware.camera.time.monotonic_ns", lambda: next(ticks))
    source = VideoSource(
        0, capture_factory=lambda index: FakeCapture([True, True]), max_failures=3, retry_s=0
    )
    frames = []
    with pytest.raises(CameraLost):
        frames.extend(source)
    assert [(f.index, f.t_us) for f in frames] == [(0, 5_000_000), (1, 5_033_000)]


def test_a_webcam_that_stops_delivering_is_lost_after_n_failures():
    fake = FakeCapture([True, False, False, True] + [False] * 10)
    source = VideoSource(0, capture_factory=lambda index: fake, max_failures=5, retry_s=0)
    frames = []
    with pytest.raises(CameraLost) as error:
        frames.extend(source)
    assert len(frames) == 2  # two failures in a row are a hiccup, not a loss
    assert str(error.value) == "camera 0: no frame after 5 tries (unplugged?)"
    assert isinstance(error.value, RuntimeError)


def test_a_webcam_that_cannot_open_is_lost(monkeypatch):
    monkeypatch.setattr("hardware.camera.cv2.VideoCapture", lambda index: FakeCapture([], opened=False))
    with pytest.raises(CameraLost, match=r"^camera 7: cannot open the camera$"):
        open_source("7")


# ---- open_source ----


def test_open_source_picks_the_kind_from_the_spec(tmp_path, video, monkeypatch):
    folder = tmp_path / "frames"
    folder.mkdir()
    write(folder / "a.png", 1)
    with open_source(str(folder), fps=20) as source:
        assert isinstance(source, ImageFolderSource) and source.fps == 20
    assert open_source(str(folder)).fps == 30
    with open_source(str(video)) as source:
        assert isinstance(source, VideoSource) and source.fps == 10 and not source.live
    with open_source(str(video), fps=25) as source:
        assert source.fps == 25
    opened = []
    monkeypatch.setattr("hardware.camera.cv2.VideoCapture", lambda arg: opened.append(arg) or FakeCapture([]))
    with open_source("2") as source:
        assert isinstance(source, VideoSource) and source.live and source.name == "camera 2"
    assert opened == [2]
    with pytest.raises(SourceError, match=r"^nowhere/clip\.mp4: no such file, folder or camera$"):
        open_source("nowhere/clip.mp4")


def test_open_source_camera_means_the_pi_camera(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(SourceError, match="picamera2 is not installed"):
        open_source("camera")


# ---- Pi camera ----


def test_without_picamera2_the_pi_camera_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # makes the import fail, installed or not
    with pytest.raises(SourceError) as error:
        Picamera2Source()
    assert str(error.value) == "picamera2 is not installed: on Raspberry Pi OS install python3-picamera2"


class FakeRequest:
    def __init__(self, cam, n):
        self.cam, self.n = cam, n

    def get_metadata(self):
        return {} if self.n == 1 else {"SensorTimestamp": 7_000_000_000 + self.n * 33_333_333}

    def make_array(self, name):
        if name == "main":
            return picture(self.n, 72, 128)
        return np.full((24 * 3 // 2, 32), self.n, np.uint8)  # YUV420: Y rows, then U and V

    def release(self):
        self.cam.released += 1


class FakePicamera2:
    """picamera2's capture_request surface; the camera dies after three requests."""

    def __init__(self, camera_num=0):
        self.n = 0
        self.released = 0
        self.config = None
        self.closed = False

    def create_video_configuration(self, **config):
        return config

    def configure(self, config):
        self.config = config

    def start(self):
        pass

    def stop(self):
        pass

    def close(self):
        self.closed = True

    def capture_request(self):
        if self.n == 3:
            raise RuntimeError("Camera frontend has timed out!\nPlease check that your camera is connected.")
        self.n += 1
        return FakeRequest(self, self.n - 1)


def test_the_pi_camera_source_on_a_fake_picamera2(monkeypatch):
    fake = FakePicamera2()
    monkeypatch.setitem(sys.modules, "picamera2", type(sys)("picamera2"))
    monkeypatch.setattr(sys.modules["picamera2"], "Picamera2", lambda camera_num: fake, raising=False)
    source = Picamera2Source(size=(128, 72), lores=(32, 24), fps=30)
    assert fake.config["main"] == {"size": (128, 72), "format": "RGB888"}
    assert fake.config["lores"] == {"size": (32, 24), "format": "YUV420"}
    frames: list[Frame] = []
    with pytest.raises(CameraLost) as error:
        frames.extend(source)
    assert "\n" not in str(error.value) and "picamera 0" in str(error.value)
    assert [(f.index, f.t_us) for f in frames] == [(0, 7_000_000), (2, 7_066_666)]
    assert frames[0].image.shape == (72, 128, 3)
    assert frames[1].lores.shape == (24, 32) and frames[1].lores[0, 0] == 2
    assert source.skipped == 1  # the request without a timestamp
    assert fake.released == 3  # every request goes back to the camera, good or not
    source.close()
    assert fake.closed


def test_the_real_pi_camera_delivers_stamped_frames():
    pytest.importorskip("picamera2")
    from hardware.clock import MonotonicClock

    with Picamera2Source(size=(640, 480), lores=(320, 240)) as source:
        frames = [f for _, f in zip(range(5), source, strict=False)]
    now = MonotonicClock().now_us()
    assert len(frames) == 5
    assert all(0 < a.t_us < b.t_us <= now for a, b in pairwise(frames))
    assert frames[0].image.shape == (480, 640, 3) and frames[0].lores.shape == (240, 320)


def test_the_simulators_frames_come_through_the_camera_interface():
    from hardware.camera import FrameListSource
    from referee.cards import parse_card
    from referee.sim.render import render_lay_sequence

    rng = np.random.default_rng(7)
    cards = [parse_card(code) for code in ("7H", "QS")]
    frames, truth = render_lay_sequence(cards, [0, 1], {0: "bottom", 1: "left"}, rng, size=(320, 240))
    broken = [*frames[:3], (frames[3][0], np.zeros((0, 0, 3), np.uint8)), *frames[4:]]
    with FrameListSource(broken) as source:
        got = list(source)
    assert [f.t_us for f in got] == [t for i, (t, _) in enumerate(frames) if i != 3]
    assert source.skipped == 1 and got[0].image.shape == (240, 320, 3)
    assert [card for _, card, _ in truth] == cards


def test_a_live_camera_that_sends_only_black_frames_is_lost_after_3_seconds():
    from hardware.camera import BLACK_US, black_frames_lose, is_black
    from hardware.frames import CameraLost, Frame

    black = np.zeros((120, 160, 3), np.uint8)
    dim_table = np.random.default_rng(3).integers(10, 60, (120, 160, 3)).astype(np.uint8)  # a dark cloth
    assert is_black(black) and not is_black(dim_table)
    frames = [Frame(dim_table, 0, 0)] + [Frame(black, k * 100_000, k) for k in range(1, 60)]
    passed = []
    with pytest.raises(CameraLost, match="cam0: the camera sends only black frames"):
        for frame in black_frames_lose(frames, "cam0"):
            passed.append(frame.t_us)
    assert passed[-1] == 100_000 + BLACK_US - 100_000  # the last black frame before 3 s of them
    # A black moment (a hand over the lens) is not a lost camera.
    brief = [Frame(black, k * 100_000, k) for k in range(10)] + [Frame(dim_table, 1_000_000, 10)]
    assert len(list(black_frames_lose(brief, "cam0"))) == 11
