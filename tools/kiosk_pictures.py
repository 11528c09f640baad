"""The pictures of the kiosk page in the README and docs/kiosk.md, taken in headless Chromium.

    .venv/bin/python tools/kiosk_pictures.py [--out docs/images] [NAME ...]

Each picture is a seeded scene of the browser tests, served by the kiosk's own server (one
server per picture, so nothing of one scene shows in the next) and saved as
docs/images/kiosk-<name>.jpg at 800x480 (the Pi's 7-inch screen) or 390x844 (a phone):
tests/test_kiosk_layout.py's bot games stopped where they show something (a count-out hold, a
face-card challenge, the penalty pile, eight seats, the winner screen), with the bar's panels
opened (phones, house rules); tests/test_night_page.py's night of four games; the camera's
question over the table (tests/test_kiosk_browser.py's); and a race replayed from the clips of
tests/test_replay_browser.py's demo game through the rendered camera. JPEG, like the
calibration pictures: each well under 60 KB. The cards are the page's own (HTML and CSS from
the card codes) or the demo's rendered camera, so the pictures may be committed. Seeded: the
same pictures on every run. NAME: only those pictures (say `replay night`); all by default.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402

from referee.cards import parse_card  # noqa: E402
from referee.kiosk.app import KioskHub, make_app  # noqa: E402
from referee.kiosk.server import KioskServer  # noqa: E402
from referee.live.kiosk_start import AskedCrops  # noqa: E402
from referee.rules.events import Unread  # noqa: E402
from referee.sim.render import draw_card  # noqa: E402
from tests.conftest import CHROMIUM, CHROMIUM_ARGS, wait_for  # noqa: E402  (the browser tests' Chromium)
from tests.test_kiosk import race_hub  # noqa: E402
from tests.test_kiosk_layout import SCENES, bot_view, held, tall, won  # noqa: E402
from tests.test_night_page import SCENES as NIGHTS  # noqa: E402
from tests.test_replay_browser import GAME, demo_game_clips, last_race  # noqa: E402

QUALITY = 72
TOKEN = "shown-on-the-pis-own-screen-only"  # what the bar shows a loopback client: not a real one
PHONE, PI = (390, 844), (800, 480)
WATCH = "http://192.168.1.20:8080/"  # the phones' address the QR code shows (as with --listen 0.0.0.0)
# The next game's house rules the host has set: the legend names them (and the panel shows them).
NEXT = {"game": {"players": ["Ann", "Bob", "Cy"], "rules": "celtic", "options": {"slap_run": 3}}}


@dataclass
class Scene:
    """A kiosk to photograph: its hub, the screen, what to tap in turn, then a JavaScript
    expression true once the picture is ready; `app`: make_app's further arguments."""

    hub: KioskHub
    size: tuple[int, int] = PI
    taps: tuple[str, ...] = ()
    ready: str | None = None
    app: dict[str, Any] = field(default_factory=dict)


def board(make: Callable[[], Any], size: tuple[int, int] = PI, *taps: str, ready: str | None = None):
    """A scene of a table view as the page shows it (`make` gives the view)."""
    return lambda work: Scene(KioskHub(make()), size, taps, ready)


def house_rules(work: Path) -> Scene:
    hub = KioskHub(bot_view(4, 3, "celtic", held))
    hub.next_game(NEXT)
    ready = "document.querySelector('#house-options [data-opt]') !== null"
    return Scene(hub, PI, ("#admin-open", "#house-open"), ready)


def night(work: Path) -> Scene:
    """The night's table, after the winner screen (tapped away)."""
    hub = KioskHub(bot_view(3, 3, "celtic", won))
    hub.night(NIGHTS["night-3-players"]())
    return Scene(hub, PI, ("#winner h1",), "!document.getElementById('night').hidden")


def question(work: Path) -> Scene:
    """The camera unsure of a laid card: its blurred picture and the 52-card picker."""
    hub, _ = race_hub()
    crops = AskedCrops()
    lay_t = 3_000_000
    image, _ = draw_card(parse_card("5C"), 180)
    crops.keep(lay_t, cv2.GaussianBlur(image, (9, 9), 0))
    hub.ask((Unread(lay_t, 1, parse_card("9C")),), crops)
    ready = "(document.querySelector('#ask-crop img') || {}).naturalWidth > 0"
    return Scene(hub, PI, (), ready, {"crops": crops.get})


def replay(work: Path) -> Scene:
    """The demo's last race with two presses or more, opened from the log at its ruling's frame."""
    store, view = demo_game_clips(work / "clips")
    t = last_race(store, view)
    hub = KioskHub(view)
    hub.replay({"game": GAME, "stopped": None})
    ready = "window.replay.clip !== null && $('replay-img').complete && $('replay-img').naturalWidth > 0"
    return Scene(hub, PI, (f'#log li[data-replay="{t}"]',), ready, {"clips": store})


# picture -> its scene, made in a scratch directory
PICTURES: dict[str, Callable[[Path], Scene]] = {
    "celtic": board(lambda: bot_view(4, 3, "celtic", held)),
    "classic": board(SCENES["challenge-classic"][0]),
    "paranoid": board(SCENES["penalty-pile-paranoid"][0]),
    "8-seats": board(SCENES["penalty-8-seats"][0]),
    "explain": board(SCENES["challenge-classic"][0], PI, "#count-out .term"),
    "winner": board(SCENES["winner-3-seats"][0]),
    "phone": board(lambda: bot_view(3, 1, "celtic", tall), PHONE),
    "phones": board(
        lambda: bot_view(4, 3, "celtic", held),
        PI,
        "#phones-open",
        ready="document.getElementById('phones-qr').naturalWidth > 0",
    ),
    "house-rules": house_rules,
    "night": night,
    "question": question,
    "replay": replay,
}


def take(browser: Any, scene: Scene, path: Path) -> None:
    """Serve the scene's kiosk, open it, tap, wait until ready, and save the picture."""
    hub = scene.hub
    server = KioskServer(make_app(hub, TOKEN, None, watch=WATCH, **scene.app), hub, port=0)
    server.start()
    try:
        page = browser.new_page(viewport={"width": scene.size[0], "height": scene.size[1]})
        page.goto(server.url)
        wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}")
        page.wait_for_selector("#local-token", state="visible")
        page.wait_for_timeout(400)  # the newest card's landing and the banner's flash, over
        for selector in scene.taps:
            page.click(selector)
        if scene.ready:
            wait_for(page, scene.ready)
        page.screenshot(path=path, type="jpeg", quality=QUALITY)
        page.close()
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="where the pictures go")
    parser.add_argument("names", nargs="*", choices=[[], *PICTURES], help="only these pictures")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as scratch:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for name in args.names or PICTURES:
            path = args.out / f"kiosk-{name}.jpg"
            take(browser, PICTURES[name](Path(scratch) / name), path)
            print(f"{path}: {path.stat().st_size // 1024} KB")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
