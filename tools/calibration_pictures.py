"""The pictures in docs/calibration.md: the wizard's kiosk page at each step, in headless Chromium.

    .venv/bin/python tools/calibration_pictures.py [--out docs/images] [--size 800x480]

Runs `referee calibrate --sim --kiosk --speed 0` (the whole wizard: 4 players, the whole deck)
and then `referee calibrate check --sim --kiosk` on the profile it made, holds the steps at one
prompt of each, and saves the page as docs/images/calibration-<step>.jpg: camera, seats, deck,
deck-check, buttons, done, check. The questions are answered on the page, as a person would.

The frames are the simulator's (`calibration.sim_table.SimTable`, whose cards are drawn by
`referee.sim.render.draw_card`: the project's own faces, no third-party artwork), so the pictures
may be committed. Seeded: the same pictures on every run, but for the times this machine
took (in the last picture).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calibration.kiosk import Holds  # noqa: E402
from calibration.wizard_view import prompt_view  # noqa: E402
from referee.cli.background_wizard import BackgroundWizard  # noqa: E402
from tests.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the browser tests' Chromium)

WAIT_S = 120.0  # the whole deck at once takes about 15 s here
QUALITY = 72
WORK = Path("/tmp/calibration-pictures")  # JPEG: each picture well under 60 KB at 800x480


def at(step: str, test: Callable[[Any], bool]) -> Callable[[str, Any], bool]:
    return lambda name, prompt: name == step and test(prompt)


def progress(n: int, of: int, check: bool = False) -> Callable[[Any], bool]:
    return lambda p: tuple(p.progress or ()) == (n, of) and getattr(p, "check", False) == check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="where the pictures go")
    parser.add_argument("--size", default="800x480", help="the screen, WxH (default: the Pi's 7-inch)")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    from calibration.sim_table import SimTable

    camera = SimTable(1).camera
    assert camera.faces is None, "the simulated table must draw its own card faces (committable pictures)"
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    # A fixed folder rather than a random one: the last picture shows the profile's path.
    shutil.rmtree(WORK, ignore_errors=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(WAIT_S * 1000)
        profile = str(WORK / "table-profile.npz")
        common = ["--sim", "--kiosk", "--speed", "0", "--port", "0", "--out", profile]

        def shoot(name: str) -> None:
            path = args.out / f"calibration-{name}.jpg"
            page.screenshot(path=str(path), type="jpeg", quality=QUALITY, animations="disabled")
            print(f"{path}: {path.stat().st_size // 1024} KB")

        def answer(text: str) -> None:
            page.click(f'#choices button[data-answer="{text}"]:not([disabled])')

        def shown(prompt: Any) -> None:
            # The page has drawn the held prompt, and a preview loaded since, if the step has one.
            page.wait_for_function(
                "t => wizard.view && wizard.view.prompt?.text === t", arg=prompt_view(prompt)["text"]
            )
            if page.evaluate("wizard.view.preview"):
                # Two loads: one already asked for may carry the frame before the last.
                page.wait_for_function("n => wizard.previews > n + 1", arg=page.evaluate("wizard.previews"))

        holds = Holds(
            ("camera", at("camera", lambda p: p.phase == "confirm")),
            ("seats", at("seats", progress(2, 4))),
            ("deck", at("deck", progress(18, 52))),
            ("deck-check", at("deck", progress(4, 10, check=True))),
            ("buttons", at("buttons", lambda p: p.phase == "leds" and p.progress == (2, 4))),
            ("buzzer", at("buttons", lambda p: p.phase == "buzzer")),
        )
        wizard = BackgroundWizard(["calibrate", *common, "--players", "Ann,Bob,Cy,Dee"], holds).start()
        try:
            page.goto(wizard.url(WAIT_S))
            for label in ("camera", "seats", "deck", "deck-check", "buttons", "buzzer"):
                held = holds.next(WAIT_S)
                assert held == label, f"held at {held}, expected {label}"
                shown(holds.prompt)
                if label != "buzzer":
                    shoot(label)
                holds.release()
                if label in ("camera", "buzzer"):
                    answer("yes")
            page.wait_for_selector("#end:not([hidden])")
            assert wizard.join(WAIT_S) == 0, wizard.lines[-3:]
            page.wait_for_selector("#conn:not([hidden])")
            page.evaluate("document.getElementById('conn').hidden = true")  # the stream's end, not news
            shoot("done")

            holds = Holds(("check", at("deck", progress(3, 10, check=True))))
            wizard = BackgroundWizard(["calibrate", "check", *common], holds).start()
            page.goto(wizard.url(WAIT_S))
            page.wait_for_selector('#choices button[data-answer="yes"]')
            answer("yes")  # the camera step's box, as calibrated
            assert holds.next(WAIT_S) == "check"
            shown(holds.prompt)
            shoot("check")
            holds.release()
            page.wait_for_selector('#choices button[data-answer="again"]')  # the check's buzzer
            answer("yes")
            page.wait_for_selector("#end:not([hidden])")
            assert wizard.join(WAIT_S) == 0, wizard.lines[-3:]
        finally:
            wizard.stop()
            browser.close()
            shutil.rmtree(WORK, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
