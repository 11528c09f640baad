"""Benchmark the kiosk: from a ruling fed into the hub to the page's DOM showing it.

    .venv/bin/python benchmarks/bench_kiosk.py            (about 15 s; needs /usr/bin/chromium)

The kiosk server runs in this process, as the service runs it (uvicorn in a thread);
Debian's Chromium, headless, shows the page at 800x480. The rulings of a seeded bot game
are fed one at a time into the hub from this thread, each with the state after it, as
the table loop's ruling sink will feed them. Each ruling is a new version of the view.

How it is timed: this process stamps each ruling on the wall clock (time.time()) just
before `hub.add`; the page stamps each version on the wall clock
(performance.timeOrigin + performance.now()) right after drawing it (`kiosk.shown`) and
again at the next animation frame (`kiosk.painted`). Both run on one machine, so the two
clocks should agree; the offset between them is measured anyway, NTP-style (this process
stamps before and after asking the page for its time, over 50 round trips, and the
shortest round trip's midpoint gives the offset and its uncertainty), and subtracted.
Rulings are fed one after another, each once the page has shown the one before (so no
view is skipped) and after a short random pause; a real table's rulings come seconds
apart. Plain script: prints figures, asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from referee.kiosk.app import KioskHub, make_app
from referee.kiosk.server import KioskServer
from referee.kiosk.view import TableView
from referee.sim.bots import VirtualTable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import CHROMIUM, CHROMIUM_ARGS

WARM_UP = 10  # the first rulings are fed but not counted (the page's code is still cold)


def wait_for(page, expression: str) -> None:
    """Until `expression` is true on the page. Not `page.wait_for_function`, which polls by
    `eval` in the page: the kiosk's Content-Security-Policy forbids that. The page stamps its
    own times, so how soon this notices does not change the figures."""
    while not page.evaluate(expression):
        page.evaluate("() => new Promise(requestAnimationFrame)")


def clock_offset(page, rounds: int = 50) -> tuple[float, float]:
    """The page's wall clock minus ours in ms, and the uncertainty (half the best round trip)."""
    best = None
    for _ in range(rounds):
        before = time.time() * 1000
        theirs = page.evaluate("performance.timeOrigin + performance.now()")
        after = time.time() * 1000
        if best is None or after - before < best[0]:
            best = (after - before, theirs - (before + after) / 2)
    assert best is not None
    return best[1], best[0] / 2


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rulings", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", default="800x480", help="the page's viewport, WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(x) for x in args.size.split("x"))

    table = VirtualTable(players=4, seed=args.seed)
    fed_rulings = [(r, play.state) for play in table.play() for r in play.rulings]
    needed = args.rulings + WARM_UP
    if len(fed_rulings) < needed:
        raise SystemExit(f"the seed-{args.seed} game has only {len(fed_rulings)} rulings")
    hub = KioskHub(TableView(table.spec.new_game()))
    server = KioskServer(make_app(hub, "b" * 32), hub, port=0)
    server.start()
    rng = random.Random(args.seed)
    fed: dict[int, float] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(server.url)
            wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}")
            offset, uncertainty = clock_offset(page)
            for ruling, state in fed_rulings[:needed]:
                time.sleep(rng.uniform(0.005, 0.03))  # pacing between rulings, not synchronisation
                stamp = time.time() * 1000
                hub.add(ruling, state)
                fed[hub.version] = stamp
                wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}")
            wait_for(page, f"kiosk.painted.some(([v]) => v >= {hub.version})")
            shown = dict(page.evaluate("kiosk.shown"))
            painted = dict(page.evaluate("kiosk.painted"))
            offset_after, _ = clock_offset(page)
            version = page.evaluate("navigator.userAgent")
            browser.close()
    finally:
        server.stop()

    counted = sorted(fed)[WARM_UP:]
    drawn = [shown[v] - offset - fed[v] for v in counted]
    first_paint = [painted[v] - offset - fed[v] for v in counted if v in painted]
    skipped = sum(1 for v in counted if v not in shown)
    print(
        f"kiosk: ruling fed into the hub -> page's DOM, {len(counted)} rulings, seed {args.seed}, {args.size}"
    )
    print(f"  machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"  browser: {version.split(') ')[-1]}")
    print(
        f"  clock offset page - python: {offset:+.2f} ms ± {uncertainty:.2f} ms "
        f"(after the run: {offset_after:+.2f} ms); subtracted"
    )
    for name, values in (("DOM updated", drawn), ("next frame", first_paint)):
        print(
            f"  {name:<12} p50 {percentile(values, 50):6.1f} ms   p90 {percentile(values, 90):6.1f} ms   "
            f"p99 {percentile(values, 99):6.1f} ms   max {max(values):6.1f} ms   "
            f"mean {statistics.fmean(values):6.1f} ms"
        )
    print(f"  versions never drawn: {skipped}   goal: p99 <= 200 ms")


if __name__ == "__main__":
    main()
