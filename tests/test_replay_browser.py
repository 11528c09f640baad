"""Instant replay in a real browser: a clip the demo's rendered camera made, opened from the log.

The demo's table (bots, the rendered camera, the pile watcher) plays a short seeded game
while a `ClipRecorder` keeps its frames and cuts a clip per dispute; the kiosk serves the
game's log and the clips, read-only. Tapping a race in the log opens it; the buttons and
the arrow keys step through its frames; the timeline has one mark per press, where its
microsecond time puts it. Chromium through Playwright, as tests/test_kiosk_browser.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.kiosk.app import KioskHub, make_app
from referee.kiosk.server import KioskServer
from referee.kiosk.view import TableView
from referee.live.clip_store import ClipRecorder, ClipStore, replay_json
from referee.rules.clips import ReplaySettings
from referee.sim.bots import VirtualTable
from referee.sim.demo_table import CameraStage, DemoTable
from tests.conftest import ARTIFACTS, csp_violations, wait_for
from tests.test_kiosk import TOKEN

GAME = 4


@pytest.fixture(scope="module")
def demo_clips(tmp_path_factory):
    """A short demo game through the rendered camera, its clips on disk; its final view."""
    return demo_game_clips(tmp_path_factory.mktemp("replay") / "clips")


def demo_game_clips(directory: Path) -> tuple[ClipStore, TableView]:
    """A short seeded demo game through the rendered camera, its clips kept in `directory`;
    the store and the game's final view (tools/kiosk_pictures.py's replay picture too)."""
    table = VirtualTable(players=3, seed=2, cap=40)
    store = ClipStore(directory, 10**9)
    names = table.spec.players
    recorder = ClipRecorder(store, ReplaySettings(), 30.0, lambda: GAME, lambda: names, block=True).start()
    stage = CameraStage(3, 2)
    stage.frames.append(lambda frame: recorder.frame(frame.t_us, frame.image))
    heard = []

    def rulings(batch, state):
        for ruling in batch:
            recorder.ruling(ruling)
            heard.append(ruling)

    demo = DemoTable(table, stage=stage, rulings=rulings, judged=[recorder.judged])
    try:
        final = demo.run()
    finally:
        recorder.close()
    view = TableView(table.spec.new_game(), t0=0)
    for ruling in heard:
        view.add(ruling)
    view.update(final)
    return store, view


def last_race(store: ClipStore, view: TableView) -> int:
    """The last dispute the log shows with two presses or more: its ruling's time."""
    logged = {entry.ruling.t for entry in view.log}  # the log shows the last 50 rulings
    races = [t for t in store.clips(GAME) if t in logged and len(presses(store, t)) >= 2]
    assert races, "the seeded game has a race with two presses or more"
    return races[-1]


def test_a_ruling_tapped_in_the_log_replays_its_frames_and_its_presses_on_the_timeline(browser, demo_clips):
    store, view = demo_clips
    t = last_race(store, view)
    clip = replay_json(store, GAME, t)
    hub = KioskHub(view)
    hub.replay({"game": GAME, "stopped": None})
    server = KioskServer(make_app(hub, TOKEN, None, clips=store), hub, port=0)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 800, "height": 480})
        page.set_default_timeout(10_000)
        complaints = csp_violations(page)
        page.goto(server.url)
        wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}", timeout_ms=10_000)
        entry = page.locator(f'#log li[data-replay="{t}"]')
        assert entry.count() == 1
        assert page.locator("#log li.laid[data-replay]").count() == 0  # a lay is no dispute
        entry.click()
        wait_for(page, "() => window.replay.clip !== null", timeout_ms=10_000)
        wait_for(
            page, "() => $('replay-img').complete && $('replay-img').naturalWidth > 0", timeout_ms=10_000
        )

        # It opens at the ruling's frame.
        start = next(k for k, f in enumerate(clip["frames"]) if f["t"] >= t)
        assert page.evaluate("window.replay.k") == start
        assert page.get_attribute("#replay-img", "src") == clip["frames"][start]["src"]
        assert page.inner_text("#replay-pos").startswith(f"frame {start + 1} of {len(clip['frames'])}")
        page.screenshot(path=str(ARTIFACTS / "replay-800x480.png"))

        # Stepped with the buttons and the arrow keys.
        page.click("#replay-next")
        assert page.evaluate("window.replay.k") == start + 1
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert page.evaluate("window.replay.k") == start + 3
        page.keyboard.press("ArrowLeft")
        page.click("#replay-prev")
        assert page.evaluate("window.replay.k") == start + 1
        assert page.get_attribute("#replay-img", "src") == clip["frames"][start + 1]["src"]
        page.click("#replay-first")
        assert page.evaluate("window.replay.k") == 0 and page.is_disabled("#replay-prev")
        page.click("#replay-last")
        assert page.evaluate("window.replay.k") == len(clip["frames"]) - 1 and page.is_disabled(
            "#replay-next"
        )

        # One mark per press on the timeline, where its microsecond time puts it.
        wanted = presses(store, t)
        marks = page.locator("#replay-line .mark.press")
        assert marks.count() == len(wanted)
        width = page.evaluate("$('replay-line').getBoundingClientRect().width")
        left = page.evaluate("$('replay-line').getBoundingClientRect().left")
        span = clip["timeline"]["end"] - clip["timeline"]["start"]
        for i, press in enumerate(wanted):
            mark = marks.nth(i)
            assert int(mark.get_attribute("data-t")) == press["t"]
            assert mark.get_attribute("data-seat") == str(press["seat"])
            box = mark.bounding_box()
            centre = box["x"] + box["width"] / 2 - left
            assert centre == pytest.approx((press["t"] - clip["timeline"]["start"]) / span * width, abs=1.5)
        lays = [m for m in clip["timeline"]["marks"] if m["kind"] == "lay"]
        assert page.locator("#replay-line .mark.lay").count() == len(lays) >= 1
        # The list under the frame says each press's gap after the card it answered, to the us.
        first = next(p for p in wanted if p["after_lay_us"] is not None)
        assert first["after_lay_us"] > 0
        digits = f"{first['after_lay_us']:,}".replace(",", "\u2009")
        assert f"+{digits} µs after the lay" in page.inner_text("#replay-presses")

        # The presses zoomed, one mark each; a tap on one goes to the frame nearest it.
        race = page.locator("#replay-race .mark")
        assert race.count() == len(wanted)
        xs = [race.nth(i).bounding_box()["x"] for i in range(len(wanted))]
        assert xs == sorted(xs) and xs[-1] - xs[0] > 100  # ms apart, spread across the line
        page.screenshot(path=str(ARTIFACTS / "replay-race-800x480.png"))
        race.nth(wanted.index(first)).click()
        nearest = min(range(len(clip["frames"])), key=lambda k: abs(clip["frames"][k]["t"] - first["t"]))
        assert page.evaluate("window.replay.k") == nearest
        page.keyboard.press("Escape")  # Escape closes the replay
        assert page.is_hidden("#replay")

        # A full disk: the page says so, once, and the log stays as it was.
        hub.replay({"game": GAME, "stopped": "the disk is full: replay clips stopped (the game goes on)"})
        wait_for(page, "() => !$('replay-note').hidden", timeout_ms=10_000)
        assert page.inner_text("#replay-note") == "the disk is full: replay clips stopped (the game goes on)"
        page.screenshot(path=str(ARTIFACTS / "replay-disk-full-800x480.png"))
        assert complaints == []
        page.close()
    finally:
        server.stop()


def test_a_replay_on_a_phone_fits_the_screen(browser, demo_clips):
    store, view = demo_clips
    t = store.clips(GAME)[-1]
    hub = KioskHub(view)
    hub.replay({"game": GAME, "stopped": None})
    server = KioskServer(make_app(hub, TOKEN, None, clips=store), hub, port=0)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(server.url)
        wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}", timeout_ms=10_000)
        page.locator(f'#log li[data-replay="{t}"]').click()
        wait_for(page, "() => window.replay.clip !== null", timeout_ms=10_000)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = page.locator("#replay-img").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        page.screenshot(path=str(ARTIFACTS / "replay-390x844.png"))
        page.close()
    finally:
        server.stop()


def presses(store: ClipStore, t: int) -> list[dict]:
    return [m for m in replay_json(store, GAME, t)["timeline"]["marks"] if m["kind"] == "press"]
