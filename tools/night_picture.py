"""The picture of tonight's scores on the kiosk (docs/kiosk.md), taken in headless Chromium.

    .venv/bin/python tools/night_picture.py [--out docs/images]

The scene is tests/test_night_page.py's: four seeded bot games scored as the journal gives
them, shown after the winner screen at 800x480 (the Pi's 7-inch screen), saved as
docs/images/kiosk-night.jpg. Seeded: the same picture on every run. (tools/kiosk_pictures.py
takes the other pictures of the page the same way.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.kiosk import KioskHub, make_app  # noqa: E402
from referee.kiosk_server import KioskServer  # noqa: E402
from tests.conftest import CHROMIUM, CHROMIUM_ARGS, wait_for  # noqa: E402
from tests.test_kiosk_layout import bot_view, won  # noqa: E402
from tests.test_night_page import SCENES  # noqa: E402

QUALITY = 72


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="where the picture goes")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    hub = KioskHub(bot_view(3, 3, "celtic", won))
    hub.night(SCENES["night-3-players"]())
    server = KioskServer(make_app(hub, "shown-on-the-pis-own-screen-only", None), hub, port=0)
    server.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 800, "height": 480})
            page.goto(server.url)
            wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}")
            page.click("#winner h1")
            wait_for(page, "!document.getElementById('night').hidden")
            path = args.out / "kiosk-night.jpg"
            page.screenshot(path=path, type="jpeg", quality=QUALITY)
            print(f"{path}: {path.stat().st_size // 1024} KB")
            browser.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
