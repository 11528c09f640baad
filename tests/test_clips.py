"""Instant replay: the ring of the camera's last seconds, the clips cut from it, the disk.

Every time here is the virtual table's (frames every 1/30 s, rulings and presses at their
own times): no clock is read and nothing sleeps. The threaded recorder is waited for with
`drain` (a condition, not a sleep)."""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardware.clock import VirtualClock
from referee.cards import parse_card
from referee.live.clip_store import (
    ClipRecorder,
    ClipStore,
    encode_frame,
    export_clips,
    replay_json,
    write_file,
)
from referee.rules.clips import ClipCutter, FrameRing, ReplaySettings, Shot, timeline, to_drop, worthy
from referee.rules.events import Lay, Snap
from referee.rules.rulings import Laid, Penalty, SnapIgnored, StackWon
from referee.sim.bots import VirtualTable

FRAME_US = 33_333
NAMES = ("Ann", "Bob", "Cy")


def shot(k: int, size: int = 100) -> Shot:
    return Shot(k * FRAME_US, bytes([k % 256]) * size)


def won(t: int, seat: int = 1) -> StackWon:
    return StackWon(t, seat, "snap", ("pair",), 6, 12_345, seat)


# The ring ---------------------------------------------------------------------------------


def test_the_ring_keeps_the_newest_frames_within_its_count():
    ring = FrameRing(max_frames=5, max_bytes=10_000)
    for k in range(12):
        ring.add(shot(k))
    assert [s.t_us for s in ring] == [k * FRAME_US for k in range(7, 12)]
    assert ring.dropped == 7 and ring.nbytes == 500 and ring.newest_t == 11 * FRAME_US


def test_the_ring_keeps_the_newest_frames_within_its_bytes():
    ring = FrameRing(max_frames=100, max_bytes=350)
    for k in range(10):
        ring.add(shot(k))
    assert [s.t_us // FRAME_US for s in ring] == [7, 8, 9] and ring.nbytes == 300


@given(st.lists(st.integers(1, 400), max_size=60), st.integers(1, 8), st.integers(1, 1000))
def test_the_ring_never_exceeds_its_bounds_and_holds_the_newest_run(sizes, max_frames, max_bytes):
    ring = FrameRing(max_frames, max_bytes)
    shots = [Shot(k, b"x" * n) for k, n in enumerate(sizes)]
    for s in shots:
        ring.add(s)
        assert len(ring) <= max_frames and ring.nbytes <= max_bytes
        assert ring.nbytes == sum(len(x.jpeg) for x in ring)
    kept = list(ring)
    assert kept == shots[len(shots) - len(kept) :]  # a suffix: the newest, in order
    assert ring.dropped == len(shots) - len(kept)


def test_the_ring_gives_the_frames_between_two_times():
    ring = FrameRing(50, 10**6)
    for k in range(20):
        ring.add(shot(k))
    assert [s.t_us // FRAME_US for s in ring.between(5 * FRAME_US, 8 * FRAME_US)] == [5, 6, 7, 8]


# Which rulings, and when a clip is cut ----------------------------------------------------


def test_a_stack_won_a_penalty_and_a_dead_heat_are_clipped_and_nothing_else():
    card = parse_card("7H")
    assert worthy(won(1)) == "stack_won"
    assert worthy(Penalty(1, 0, "wrong_snap")) == "penalty"
    assert worthy(SnapIgnored(1, 0, "dead_heat")) == "dead_heat"
    assert worthy(SnapIgnored(1, 0, "late", 30)) is None
    assert worthy(Laid(1, 0, card, 1, None, 1)) is None


def cutter(before_s: float = 1.0, after_s: float = 0.5) -> ClipCutter:
    return ClipCutter(round(before_s * 1e6), round(after_s * 1e6), FrameRing(100, 10**7), lag_us=300_000)


def test_a_clip_holds_the_seconds_before_the_ruling_and_a_little_after_and_is_cut_once_they_are_in():
    c = cutter()
    t = 60 * FRAME_US  # 2 s in
    cut = []
    for k in range(60):
        cut += c.frame(shot(k))
    c.judged({"t": t - 300_000, "lay": "7H", "seat": 0})
    c.judged({"t": t, "snap": 1})
    assert c.ruling(3, won(t)) == [] and c.pending == 1
    c.judged({"t": t + 20_000, "snap": 2})  # a late press, journaled after the ruling
    k = 60
    while not cut:
        cut = c.frame(shot(k))
        k += 1
    # Cut at the first frame at or past the ruling + after + lag: 2 s + 0.5 s + 0.3 s.
    assert (k - 1) * FRAME_US >= t + 800_000 > (k - 2) * FRAME_US
    (clip,) = cut
    assert (clip.game, clip.t_us, clip.start_us, clip.end_us) == (3, t, t - 1_000_000, t + 500_000)
    times = [s.t_us for s in clip.frames]
    assert times == [k * FRAME_US for k in range(60 - 30, 60 + 16)]  # 1 s before, 0.5 s after
    assert [line.get("snap") for line in clip.lines] == [None, 1, 2]
    assert clip.rulings == [won(t).to_json()] and c.pending == 0


def test_rulings_at_one_time_share_one_clip_and_other_games_times_do_not():
    c = cutter()
    t = 45 * FRAME_US
    c.ruling(1, Penalty(t, 0, "wrong_snap"))
    c.ruling(1, StackWon(t, 1, "penalty", (), 4, None, 1))
    c.ruling(2, Penalty(t, 0, "wrong_snap"))
    c.ruling(1, Laid(t, 0, parse_card("2C"), 2, None, 1))  # no dispute: no clip
    assert c.pending == 2
    clips = c.flush()
    assert [(clip.game, len(clip.rulings)) for clip in clips] == [(1, 2), (2, 1)]


def test_the_lay_the_press_answered_is_kept_even_before_the_window():
    c = cutter(before_s=0.2)
    c.judged({"t": 1_000_000, "lay": "9S", "seat": 2})
    c.ruling(1, won(2_000_000))
    (clip,) = c.flush()
    assert clip.lines == [{"t": 1_000_000, "lay": "9S", "seat": 2}]


def test_a_clip_the_camera_stopped_feeding_is_cut_by_the_clock_with_the_frames_it_has():
    c = cutter()
    for k in range(40):
        c.frame(shot(k))
    t = 39 * FRAME_US
    c.ruling(1, won(t))
    assert c.due(t + 500_000 + 599_999) == []  # twice the lag past the window: not yet
    (clip,) = c.due(t + 500_000 + 600_000)
    assert clip.frames[-1].t_us == t and len(clip.frames) == 31


def test_too_many_open_clips_cut_the_oldest_early():
    c = ClipCutter(1_000_000, 500_000, FrameRing(10, 10**6), max_pending=2)
    assert c.ruling(1, won(10)) == [] and c.ruling(1, won(20)) == []
    (early,) = c.ruling(1, won(30))
    assert early.t_us == 10 and c.pending == 2


# The timeline -----------------------------------------------------------------------------


def test_the_timeline_marks_the_lay_and_each_press_at_its_place_to_the_microsecond():
    lines = [
        {"t": 1_000_000, "lay": "7H", "seat": 0},
        {"t": 1_250_001, "snap": 2},
        {"t": 1_237_655, "snap": 1},
        {"t": 1_000_000 - 5, "wait": True},
    ]
    line = timeline(0, 2_000_000, 1_237_655, lines, NAMES)
    assert [(m["kind"], m["name"], m["t"]) for m in line["marks"]] == [
        ("lay", "Ann", 1_000_000),
        ("press", "Bob", 1_237_655),
        ("press", "Cy", 1_250_001),
    ]
    lay, bob, cy = line["marks"]
    assert lay["card"] == "7H" and lay["at"] == 0.5
    assert bob["after_lay_us"] == 237_655 and bob["at"] == 1_237_655 / 2_000_000
    assert cy["after_lay_us"] == 250_001 and cy["after_first_us"] == 12_346 and bob["after_first_us"] is None


def test_the_oldest_clips_go_first_to_fit_the_disk():
    sizes = [("a", 40), ("b", 30), ("c", 50)]
    assert to_drop(sizes, 120) == []
    assert to_drop(sizes, 100) == ["a"]
    assert to_drop(sizes, 50) == ["a", "b"]
    assert to_drop(sizes, 10) == ["a", "b", "c"]  # one bigger than the whole budget goes too


# The disk ----------------------------------------------------------------------------------


def feed_game(recorder: ClipRecorder, rulings_at: list[int], frames: int = 150) -> list:
    """Frames every 1/30 s, a lay and a press before each ruling, processed in this thread."""
    cut = []
    for k in range(frames):
        t = k * FRAME_US
        batch = [("frame", (t, None))]
        for r in rulings_at:
            if t <= r < t + FRAME_US:
                batch += [("line", {"t": r - 250_000, "lay": "5D", "seat": 0}), ("line", {"t": r, "snap": 1})]
                batch += [("ruling", (1, won(r)))]
        cut += recorder.process(batch)
    return cut + recorder.cutter.flush()


def recorder(store: ClipStore, **kw) -> ClipRecorder:
    settings = ReplaySettings(seconds=1.0, after=0.5)
    fake = b"\xff" * 1000  # a frame's JPEG: its size is what the budget counts
    return ClipRecorder(store, settings, 30.0, lambda: 1, lambda: NAMES, encode=lambda _: fake, **kw)


def test_a_clip_is_written_whole_and_read_back_for_the_kiosk(tmp_path):
    store = ClipStore(tmp_path / "clips", 10**9)
    rec = recorder(store)
    (clip,) = feed_game(rec, [60 * FRAME_US])
    rec.save(clip, NAMES)
    where = store.path(1, 60 * FRAME_US)
    assert sorted(p.name for p in where.iterdir())[:2] == ["0000.jpg", "0001.jpg"]
    assert store.clips(1) == [60 * FRAME_US] and store.clips(2) == []
    shown = replay_json(store, 1, 60 * FRAME_US)
    assert len(shown["frames"]) == len(clip.frames) == 46
    assert shown["frames"][3] == {"t": 33 * FRAME_US, "src": f"/api/replay/1/{60 * FRAME_US}/3.jpg"}
    assert [m["kind"] for m in shown["timeline"]["marks"]] == ["lay", "press"]
    assert store.frame(1, 60 * FRAME_US, 3) == b"\xff" * 1000 and store.frame(1, 60 * FRAME_US, 99) is None
    assert replay_json(store, 1, 5) is None
    # A new store over the same folder finds it (the service restarted) and counts its bytes.
    again = ClipStore(tmp_path / "clips", 10**9)
    assert again.clips(1) == [60 * FRAME_US] and again.nbytes == store.nbytes > 46_000


def test_the_clips_stay_within_their_budget_the_oldest_dropped(tmp_path):
    store = ClipStore(tmp_path / "clips", 100_000)  # room for two clips of ~46 KB
    rec = recorder(store)
    clips = feed_game(rec, [40 * FRAME_US, 80 * FRAME_US, 120 * FRAME_US], frames=170)
    for clip in clips:
        rec.save(clip, NAMES)
        assert store.nbytes <= 100_000
    assert store.clips(1) == [80 * FRAME_US, 120 * FRAME_US]
    assert not store.path(1, 40 * FRAME_US).exists()


def test_a_clip_half_written_before_a_crash_is_cleared_at_the_next_start(tmp_path):
    part = tmp_path / "clips" / "g1" / ".t5.part"
    part.mkdir(parents=True)
    (part / "0000.jpg").write_bytes(b"x")
    store = ClipStore(tmp_path / "clips", 10**6)
    assert not part.exists() and store.clips(1) == []


def full_disk_after(n: int):
    """A writer that writes `n` files, then finds the disk full."""
    written = []

    def write(path: Path, data: bytes) -> None:
        if len(written) >= n:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        written.append(path)
        write_file(path, data)

    return write


def test_a_full_disk_stops_the_clips_says_so_once_and_the_game_goes_on(tmp_path):
    said, status = [], []
    store = ClipStore(tmp_path / "clips", 10**9, write=full_disk_after(50))
    rec = recorder(store, said=said.append, status=status.append, block=True).start()
    try:
        for k in range(200):
            rec.frame(k * FRAME_US, None)
            for t in (40 * FRAME_US, 100 * FRAME_US, 160 * FRAME_US):
                if k * FRAME_US <= t < (k + 1) * FRAME_US:
                    rec.judged(Snap(t, 1))
                    rec.ruling(won(t))  # the sink returns at once, full disk or not
        assert rec.drain(timeout=60)
    finally:
        rec.close()
    assert said == ["the disk is full: replay clips stopped (the game goes on)"]
    assert rec.stopped == said[0] and rec.saved == 1  # 46 frames + index; the second fails
    assert status == [{"game": 1, "stopped": None}, {"game": 1, "stopped": said[0]}]
    assert store.clips(1) == [40 * FRAME_US]
    assert [p.name for p in (tmp_path / "clips" / "g1").iterdir()] == [f"t{40 * FRAME_US}"]  # no part left
    rec.ruling(won(999))  # after the stop: taken and ignored, never an error


def test_a_ruling_is_taken_at_once_while_the_disk_hangs(tmp_path):
    """The table loop's sink only appends: a writer stuck on the disk holds nothing up."""
    gate = threading.Event()
    entered = threading.Event()

    def hung(path: Path, data: bytes) -> None:
        entered.set()
        gate.wait()
        write_file(path, data)

    store = ClipStore(tmp_path / "clips", 10**9, write=hung)
    rec = recorder(store, block=True).start()
    try:
        for k in range(80):
            rec.frame(k * FRAME_US, None)
        rec.ruling(won(10 * FRAME_US))
        for k in range(80, 120):
            rec.frame(k * FRAME_US, None)
        assert entered.wait(60)  # the writer is stuck in the disk
        for i in range(100):  # every sink call returns while it is
            rec.ruling(won((120 + i) * FRAME_US))
            rec.judged(Lay((120 + i) * FRAME_US, parse_card("2H"), 0))
    finally:
        gate.set()
        rec.close()
    assert rec.saved >= 1


def test_a_live_camera_never_waits_for_the_coder_its_frames_are_dropped_and_counted(tmp_path):
    store = ClipStore(tmp_path / "clips", 10**9)
    rec = recorder(store)  # not started: nothing takes the frames
    for k in range(45):
        rec.frame(k * FRAME_US, None)
    assert rec.dropped_frames == 15


def test_the_coder_cuts_a_clip_left_open_by_a_lost_camera_on_the_game_clock(tmp_path):
    clock = VirtualClock(0)
    store = ClipStore(tmp_path / "clips", 10**9)
    rec = recorder(store, clock=clock, block=True).start()
    try:
        for k in range(40):
            rec.frame(k * FRAME_US, None)
        rec.ruling(won(39 * FRAME_US))
        assert rec.drain(timeout=60) and store.clips(1) == []  # waiting for frames after it
        clock.sleep_until(39 * FRAME_US + 1_100_000)  # the camera is gone; the clock goes on
        rec.frame(0, None)  # wakes the coder (as its own timer would, every 0.5 s)
        assert rec.drain(timeout=60)
    finally:
        rec.close()
    assert store.clips(1) == [39 * FRAME_US]


def test_frames_are_coded_as_jpeg_shrunk_to_the_width():
    image = np.zeros((480, 1280, 3), np.uint8)
    jpeg = encode_frame(image, 640, 75)
    import cv2

    assert cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR).shape == (240, 640, 3)
    assert encode_frame("not an image", 640, 75) is None


def test_export_writes_each_clip_with_an_index_of_times_and_the_journals_presses(tmp_path):
    store = ClipStore(tmp_path / "clips", 10**9)
    rec = recorder(store)
    for clip in feed_game(rec, [40 * FRAME_US, 100 * FRAME_US]):
        rec.save(clip, NAMES)
    t = 100 * FRAME_US
    journal = [{"t": t - 250_000, "lay": "5D", "seat": 0}, {"t": t, "snap": 1}, {"t": t + 4_321, "snap": 2}]
    out = tmp_path / "out" / "game1"
    assert export_clips(tmp_path / "clips", 1, NAMES, journal, out) == (2, 92)
    index = json.loads((out / "index.json").read_text())
    second = index["clips"][1]
    assert second["t"] == t and second["frames"][0] == {"t": t - 30 * FRAME_US, "file": f"{t}/0000.jpg"}
    assert (out / second["frames"][0]["file"]).read_bytes() == b"\xff" * 1000
    presses = [m for m in second["timeline"]["marks"] if m["kind"] == "press"]
    assert [(m["name"], m["after_lay_us"]) for m in presses] == [("Bob", 250_000), ("Cy", 254_321)]


@pytest.mark.parametrize("bad", ["file", "full", "no-clips"])
def test_export_refuses_a_bad_folder_or_a_game_without_clips_in_one_line(tmp_path, bad):
    from referee.errors import UserError

    store = ClipStore(tmp_path / "clips", 10**9)
    rec = recorder(store)
    for clip in feed_game(rec, [40 * FRAME_US]):
        rec.save(clip, NAMES)
    out = tmp_path / "out"
    game = 1
    if bad == "file":
        out.write_text("x")
    elif bad == "full":
        out.mkdir()
        (out / "keep.txt").write_text("x")
    else:
        game = 7
    with pytest.raises(UserError) as e:
        export_clips(tmp_path / "clips", game, NAMES, [], out)
    assert "\n" not in str(e.value)
    assert {"file": "not a folder", "full": "holds files already", "no-clips": "no replay clips of game 7"}[
        bad
    ] in str(e.value)


# The config's [replay] ----------------------------------------------------------------------


def test_the_config_sets_the_replay_and_the_clips_dir_defaults_to_the_data_dirs(tmp_path):
    from referee.live.config import load_config

    path = tmp_path / "referee.toml"
    path.write_text('[table]\nplayers = ["Ann", "Bob"]\n[service]\ndata_dir = "data"\n')
    config = load_config(path)
    assert config.replay == ReplaySettings() and config.clips_dir == tmp_path / "data" / "clips"
    path.write_text(
        '[table]\nplayers = ["Ann", "Bob"]\n[replay]\nseconds = 6\nafter = 0.5\nmax_mb = 100\n'
        'clips_dir = "c"\nwidth = 480\nquality = 60\nring_mb = 20\n'
    )
    config = load_config(path)
    assert config.replay == ReplaySettings(True, 6.0, 0.5, str(tmp_path / "c"), 100.0, 20.0, 480, 60)
    assert config.clips_dir == tmp_path / "c" and config.replay.ring_frames(30) == 240


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seconds = 0", "replay.seconds: must be seconds kept before each ruling, 0.5 to 30, not 0"),
        ("after = 9", "replay.after: must be seconds kept after each ruling, 0 to 5"),
        ('max_mb = "lots"', "replay.max_mb: must be megabytes"),
        ("width = 64.5", "replay.width: must be pixels across"),
        ("clips = 1", "replay.clips: must be true or false"),
        ("clips_dir = 3", "replay.clips_dir: must be a path"),
        ("fps = 3", "replay.fps: unknown key"),
    ],
)
def test_a_bad_replay_setting_is_one_line_naming_the_key(tmp_path, text, message):
    from referee.live.config import ConfigError, load_config

    path = tmp_path / "referee.toml"
    path.write_text(f'[table]\nplayers = ["Ann", "Bob"]\n[replay]\n{text}\n')
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert message in str(e.value) and "\n" not in str(e.value)


# The demo's rendered camera, `referee export --clips`, the kiosk's routes ---------------------


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    """`referee demo` with its rendered camera: a short seeded game, its clips beside its journal."""
    import io

    from referee.sim.demo import run_demo
    from tests.test_demo import demo_args

    folder = tmp_path_factory.mktemp("demo")
    out = io.StringIO()
    run_demo(demo_args(no_camera=False, seed=2, cap=40, data_dir=str(folder)), out)
    return folder, out.getvalue()


def test_the_demo_keeps_a_clip_of_every_dispute_from_its_rendered_camera(demo_dir):
    from referee.live.journal import Journal
    from referee.live.replay import export

    folder, said = demo_dir
    store = ClipStore(folder / "clips", 10**9)
    with Journal.open(folder, readonly=True) as journal:
        (game,) = journal.games()
        rulings = [line for line in export(game, journal.events(game.id)) if "event" in line]
    dead_heat = {"event": "snap_ignored", "reason": "dead_heat"}
    disputes = sorted(
        {r["t"] for r in rulings if r["event"] in ("stack_won", "penalty") or dead_heat.items() <= r.items()}
    )
    assert store.clips(game.id) == disputes and len(disputes) >= 5
    assert f"Replay: {len(disputes)} clips" in said
    clip = replay_json(store, game.id, disputes[-1])
    assert len(clip["frames"]) == 151  # 4 s before, 1 s after, at 30 fps
    assert [f["t"] for f in clip["frames"]] == sorted(f["t"] for f in clip["frames"])


def test_export_clips_from_the_command_line_and_its_mistakes_in_one_line(demo_dir, tmp_path, capsys):
    from referee.cli.main import main

    folder, _ = demo_dir
    out = tmp_path / "clips-of-1"
    assert main(["export", "1", "--data-dir", str(folder), "--clips", str(out)]) == 0
    said = capsys.readouterr().out
    index = json.loads((out / "index.json").read_text())
    assert said.startswith(f"game 1: {len(index['clips'])} replay clips") and index["players"] == list(NAMES)
    first = index["clips"][0]
    assert (out / first["frames"][0]["file"]).is_file()
    for argv, words in [
        (["export", "9", "--data-dir", str(folder), "--clips", str(tmp_path / "x")], "no game 9"),
        (["export", "1", "--data-dir", str(folder), "--clips", str(out)], "holds files already"),
        (["export", "1", "--data-dir", str(tmp_path), "--clips", str(tmp_path / "y")], "no journal here"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1


def test_the_kiosk_serves_replays_read_only_without_a_token_and_marks_the_disputes_in_its_log(demo_dir):
    from starlette.testclient import TestClient

    from referee.kiosk.app import KioskHub, make_app
    from referee.kiosk.view import TableView

    folder, _ = demo_dir
    store = ClipStore(folder / "clips", 10**9)
    t = store.clips(1)[0]
    hub = KioskHub(TableView(VirtualTable(3, seed=2).spec.new_game()))
    hub.add(won(t))
    hub.add(Laid(t + 1, 0, parse_card("2C"), 1, None, 1))
    hub.replay({"game": 1, "stopped": None})
    with TestClient(make_app(hub, "secret-token", None, clips=store), base_url="http://localhost") as client:
        view = client.get("/api/state").json()
        assert view["replay"] == {"game": 1, "stopped": None}
        assert [e.get("replay") for e in view["log"]] == [t, None]
        clip = client.get(f"/api/replay/1/{t}.json")
        assert clip.status_code == 200 and clip.json()["frames"][0]["src"] == f"/api/replay/1/{t}/0.jpg"
        frame = client.get(f"/api/replay/1/{t}/0.jpg")
        assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
        assert frame.content[:2] == b"\xff\xd8"
        for bad in (f"/api/replay/1/{t + 1}.json", f"/api/replay/x/{t}.json", f"/api/replay/1/{t}/999.jpg"):
            answer = client.get(bad)
            assert answer.status_code == 404 and "\n" not in answer.json()["error"]
    # Without a clip store the kiosk has no replay routes, and its view says no replays.
    plain = KioskHub(TableView(VirtualTable(3, seed=2).spec.new_game()))
    with TestClient(make_app(plain, "secret-token"), base_url="http://localhost") as client:
        assert client.get("/api/state").json()["replay"] is None
        assert client.get(f"/api/replay/1/{t}.json").status_code == 404
