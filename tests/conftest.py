import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests are deterministic: derandomized, no example database on disk.
settings.register_profile("referee", derandomize=True, database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "referee"))


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path_factory, monkeypatch):
    """The demo and the service keep journals in the XDG data dir: never the user's in tests..."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    # ...nor the user's table profile, which the service's config reads when it names none.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))


# The browser tests (the kiosk's and the calibration wizard's pages): Debian's Chromium,
# headless, driven by Playwright, one browser per test module (Playwright's sync API keeps an
# event loop running in this thread while it is open: other tests' asyncio.run must not meet
# it). Without Chromium or Playwright they fail, as CI must; REFEREE_SKIP_BROWSER=1 skips them.
CHROMIUM = Path(os.environ.get("REFEREE_CHROMIUM", "/usr/bin/chromium"))
# Headless, and none of Chromium's own background connections (the machine has no network).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"  # screenshots, not committed


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if os.environ.get("REFEREE_SKIP_BROWSER") == "1":
        pytest.skip("REFEREE_SKIP_BROWSER=1: the browser tests are skipped")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "playwright is not installed: make .venv/.installed installs it (REFEREE_SKIP_BROWSER=1 skips)"
        )
    if not CHROMIUM.exists():
        pytest.fail(f"no browser at {CHROMIUM}: apt-get install chromium (REFEREE_SKIP_BROWSER=1 skips)")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def wait_for(page: Any, expression: str, arg: Any = None, timeout_ms: float = 30_000) -> None:
    """Until `expression` (JavaScript, or a function of `arg`) is true on the page.

    Not Playwright's `wait_for_function`: that polls by `eval` inside the page, which the
    kiosk's Content-Security-Policy forbids, as it should. `page.evaluate` goes through the
    DevTools protocol, which the page's policy does not govern; each try waits a frame."""
    from playwright.sync_api import Error

    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            if page.evaluate(expression, arg):
                return
            page.evaluate("() => new Promise(requestAnimationFrame)")
        except Error as e:  # the page went to another (the game's page to the wizard's): try there
            if "context was destroyed" not in str(e) and "navigat" not in str(e):
                raise
        if time.monotonic() > deadline:
            raise TimeoutError(f"the page never had {expression} (arg {arg!r}) in {timeout_ms:.0f} ms")


def csp_violations(page: Any) -> list[str]:
    """A list that fills with the page's Content-Security-Policy complaints from now on."""
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if "Content Security Policy" in m.text else None)
    return found
