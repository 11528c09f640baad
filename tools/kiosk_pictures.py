"""The pictures of the kiosk page in the README and docs/kiosk.md, taken in headless Chromium.

    .venv/bin/python tools/kiosk_pictures.py [--out docs/images] [NAME ...]

Each picture is a scene of tests/test_kiosk_layout.py (a seeded bot game stopped where it shows
something: a count-out hold, a face-card challenge, the penalty pile, eight seats, the winner
screen), served by the kiosk's own server and saved as docs/images/kiosk-<scene>.jpg at 800x480
(the Pi's 7-inch screen) or 390x844 (a phone). JPEG, like the calibration pictures: each well
under 60 KB. The cards are the page's own (HTML and CSS from the card codes), so the pictures may
be committed. Seeded: the same pictures on every run. NAME: only those pictures (say
`phones house-rules`); all of them by default.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.kiosk import KioskHub, make_app  # noqa: E402
from referee.kiosk_server import KioskServer  # noqa: E402
from referee.kiosk_view import TableView  # noqa: E402
from tests.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the browser tests' Chromium)
from tests.test_kiosk_layout import SCENES, bot_view, held, tall  # noqa: E402

QUALITY = 72
TOKEN = "shown-on-the-pis-own-screen-only"  # what the bar shows a loopback client: not a real one
PHONE, PI = (390, 844), (800, 480)
WATCH = "http://192.168.1.20:8080/"  # the phones' address the QR code shows (as with --listen 0.0.0.0)
# The next game's house rules the host has set: the legend names them (and the panel shows them).
NEXT = {"game": {"players": ["Ann", "Bob", "Cy"], "rules": "celtic", "options": {"slap_run": 3}}}

# picture -> (the scene, the screen, what to tap on the page before the picture, in turn)
PICTURES: dict[str, tuple[Any, tuple[int, int], str | tuple[str, ...] | None]] = {
    "celtic": (lambda: bot_view(4, 3, "celtic", held), PI, None),
    "classic": (SCENES["challenge-classic"][0], PI, None),
    "paranoid": (SCENES["penalty-pile-paranoid"][0], PI, None),
    "8-seats": (SCENES["penalty-8-seats"][0], PI, None),
    "explain": (SCENES["challenge-classic"][0], PI, "#count-out .term"),
    "winner": (SCENES["winner-3-seats"][0], PI, None),
    "phone": (lambda: bot_view(3, 1, "celtic", tall), PHONE, None),
    "phones": (lambda: bot_view(4, 3, "celtic", held), PI, "#phones-open"),
    "house-rules": (lambda: bot_view(4, 3, "celtic", held), PI, ("#admin-open", "#house-open")),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="where the pictures go")
    parser.add_argument("names", nargs="*", choices=[[], *PICTURES], help="only these pictures")
    args = parser.parse_args(argv)
    chosen = {name: PICTURES[name] for name in args.names or PICTURES}
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    from tests.conftest import wait_for

    first = next(iter(PICTURES.values()))[0]()
    hub = KioskHub(TableView(first.state))
    server = KioskServer(make_app(hub, TOKEN, None, watch=WATCH), hub, port=0)
    server.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for name, (make, size, tap) in chosen.items():
                hub.reset(make())
                hub.next_game(NEXT if name == "house-rules" else None)
                page = browser.new_page(viewport={"width": size[0], "height": size[1]})
                page.goto(server.url)
                wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}")
                page.wait_for_selector("#local-token", state="visible")
                page.wait_for_timeout(400)  # the newest card's landing and the banner's flash, over
                for selector in (tap,) if isinstance(tap, str) else tap or ():
                    page.click(selector)
                if name == "house-rules":
                    page.wait_for_selector("#house-options [data-opt]")
                if name == "phones":
                    wait_for(page, "document.getElementById('phones-qr').naturalWidth > 0")
                path = args.out / f"kiosk-{name}.jpg"
                page.screenshot(path=path, type="jpeg", quality=QUALITY)
                print(f"{path}: {path.stat().st_size // 1024} KB")
                page.close()
            browser.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
