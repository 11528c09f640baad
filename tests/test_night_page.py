"""Tonight's scores on the kiosk (issue 21, item 5): between games, after the winner screen.

In Chromium at 800x480, 1280x720 and 390x844, with 3 players, with 10 (8 rows shown, "and 2
more") and with 32-character names: a tap on the winner screen shows tonight's table; nothing
overlaps, nothing is cut off, nothing scrolls sideways, and at 800x480 the rows' text is at
least 18 px; a tap shows the table again. With no tap, the table comes by itself after 20 s
(Playwright's clock). The night is in every client's view (read-only, no token). And `referee
run` feeds it: a game won is in it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from hardware.clock import VirtualClock
from referee.kiosk.app import KioskHub, make_app
from referee.kiosk.server import KioskServer
from referee.kiosk.view import TableView
from referee.live.scores import night, night_json, score_game
from referee.live.service import RunSettings, run_service
from referee.rules.script import event_to_json
from referee.sim.bots import VirtualTable
from tests.conftest import ARTIFACTS, wait_for
from tests.test_kiosk import TOKEN
from tests.test_kiosk_layout import OVERLAY, bot_view, overlaps, won
from tests.test_scores import record

SIZES = [(800, 480), (1280, 720), (390, 844)]
SHOTS = ARTIFACTS / "layout"
TIMEOUT_MS = 10_000


def bot_night(players: int, games: int, names: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A night of short bot games, scored as the journal would give them."""
    scored = []
    for gid in range(1, games + 1):
        table = VirtualTable(players=players, seed=gid, cards=24, cap=300)
        spec = table.spec.to_json()
        if names is not None:
            spec["game"]["players"] = list(names)
        final = None
        lines = []
        for play in table.play():
            if play.event is not None:
                lines.append(event_to_json(play.event))
            final = play.state
        status = "won" if final is not None and final.winner is not None else "stopped"
        scored.append(score_game(*record(gid, spec, lines, status, final.winner if final else None)))
    return night_json(night(scored))


SCENES = {
    "night-3-players": lambda: bot_night(3, 4),
    # The longest names a table takes (32 characters): they end in "…", nothing pushed aside.
    "night-long-names": lambda: bot_night(4, 2, tuple(f"{n}" * 32 for n in "ABCD")),
    # Ten players over the night, eight seats a game: eight rows and "and 2 more".
    "night-10-players": lambda: _merged(
        bot_night(8, 2, tuple(["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal"])),
        bot_night(8, 1, tuple(["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Ivy", "Joe"])),
    ),
}


def _merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two nights' JSON as one page would show them (the second's players added)."""
    seen = {p["name"] for p in a["players"]}
    a["players"] += [p for p in b["players"] if p["name"] not in seen]
    a["games"] += b["games"]
    return a


@pytest.fixture(scope="module")
def served(browser) -> Iterator[tuple[KioskHub, KioskServer]]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    hub = KioskHub(TableView(VirtualTable(players=2, seed=1).spec.new_game()))
    server = KioskServer(make_app(hub, TOKEN, None), hub, port=0)
    server.start()
    try:
        yield hub, server
    finally:
        server.stop()


def show(hub: KioskHub, page: Any, view: TableView, table: dict[str, Any] | None) -> None:
    hub.reset(view)
    hub.night(table)
    wait_for(page, f"Number(document.body.dataset.version) >= {hub.version}", timeout_ms=TIMEOUT_MS)


WIDTH = "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
CELLS = "#night h1, #night .records, #night .nrow > span, #night .more, #night .hint"
FONTS = """() => [...document.querySelectorAll('#night .nrow:not(.head) > span')].map(
    (el) => parseFloat(getComputedStyle(el).fontSize))"""


@pytest.mark.parametrize("scene", sorted(SCENES))
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_tonights_table_is_readable_and_nothing_overlaps(
    browser, served, scene: str, size: tuple[int, int]
) -> None:
    hub, server = served
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(server.url)
        table = SCENES[scene]()
        show(hub, page, bot_view(3, 3, "celtic", won), table)
        assert page.locator("#winner").is_visible() and not page.locator("#night").is_visible()
        assert "tap for tonight's scores" in page.locator("#winner .hint").inner_text()
        page.locator("#winner h1").click()
        wait_for(page, "!document.getElementById('night').hidden", timeout_ms=TIMEOUT_MS)
        assert not page.locator("#winner").is_visible()
        page.screenshot(path=SHOTS / f"{scene}-{size[0]}x{size[1]}.png")
        rows = min(len(table["players"]), 8)
        assert page.locator("#night .nrow:not(.head)").count() == rows
        if len(table["players"]) > 8:
            assert (
                page.locator("#night .more").inner_text()
                == f"and {len(table['players']) - 8} more: referee stats"
            )
        cells = page.evaluate(OVERLAY, CELLS)
        assert overlaps({str(i): c for i, c in enumerate(cells)}) == []
        assert [c for c in cells if c["clipped"]] == [], "a figure is cut off"
        width = page.evaluate(
            "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        )
        assert width <= size[0], f"the page scrolls sideways: {width} px wide"
        for c in cells:
            assert c["x"] >= -0.5 and c["r"] <= size[0] + 0.5, f"off the side: {c}"
            if size[0] > size[1]:
                assert c["b"] <= size[1] + 0.5, f"below the screen: {c}"
        if size == (800, 480):
            fonts = page.evaluate(FONTS)
            assert len(fonts) == rows * 6 and min(fonts) >= 18
        page.locator("#night h1").click()  # a tap: the table again
        assert not page.locator("#night").is_visible() and not page.locator("#winner").is_visible()
    finally:
        page.close()


def test_tonights_table_follows_the_winner_screen_by_itself(browser, served) -> None:
    hub, server = served
    page = browser.new_page(viewport={"width": 800, "height": 480})
    try:
        page.clock.install()
        page.goto(server.url)
        show(hub, page, bot_view(3, 3, "celtic", won), SCENES["night-3-players"]())
        assert page.locator("#winner").is_visible()
        page.clock.run_for(19_000)
        assert page.locator("#winner").is_visible() and not page.locator("#night").is_visible()
        page.clock.run_for(2_000)
        wait_for(page, "!document.getElementById('night').hidden", timeout_ms=TIMEOUT_MS)
        assert not page.locator("#winner").is_visible()
        # The next game: neither screen.
        show(
            hub, page, TableView(VirtualTable(players=3, seed=3).spec.new_game()), SCENES["night-3-players"]()
        )
        assert not page.locator("#night").is_visible() and not page.locator("#winner").is_visible()
    finally:
        page.close()


def test_the_night_is_in_every_clients_view_read_only() -> None:
    hub = KioskHub(TableView(VirtualTable(players=2, seed=1).spec.new_game()))
    with TestClient(make_app(hub, TOKEN, None)) as client:
        assert "night" not in client.get("/api/state").json()  # nothing feeds it: no key
        table = SCENES["night-3-players"]()
        hub.night(table)
        assert client.get("/api/state").json()["night"] == json.loads(json.dumps(table))
        hub.reset(TableView(VirtualTable(players=2, seed=2).spec.new_game()))  # a new game keeps it
        assert client.get("/api/state").json()["night"]["games"] == table["games"]
        assert client.get("/static/night.js").status_code == 200
        assert client.get("/static/night.css").status_code == 200


def test_the_service_shows_a_game_won_in_tonights_table(tmp_path: Path, monkeypatch) -> None:
    """`referee run`: the night read at the start (nothing yet), and again when the game is won."""
    from referee.live import scores as scores_cli

    seen: list[Any] = []
    refresh = scores_cli.NightFeed.refresh

    def spy(self, *a: Any) -> None:
        refresh(self, *a)
        seen.append(self.hub._night)

    monkeypatch.setattr(scores_cli.NightFeed, "refresh", spy)
    config = tmp_path / "referee.toml"
    config.write_text(
        '[table]\nplayers = ["Ann", "Bob"]\n[hardware]\npins = "mock"\n'
        '[service]\ndata_dir = "data"\nkiosk_port = 0\n'
    )
    script = tmp_path / "lays.jsonl"
    lines = [
        {"game": {"players": ["Ann", "Bob"], "rules": "celtic", "hand_sizes": [1, 1]}},
        {"t": 1_000_000, "lay": "5H"},
        {"t": 1_500_000, "lay": "5D"},
        {"t": 1_800_000, "snap": 0},
        {"t": 3_000_000, "wait": True},
    ]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = RunSettings(config=str(config), lays_from=str(script), at_once=False, new_game=False)
    assert run_service(args, io.StringIO(), io.StringIO(), clock=VirtualClock(0)) == 0
    assert [(g["game"], g["status"]) for g in seen[0]["games"]] == [(1, "open")]  # at the start
    last = seen[-1]
    assert [(g["game"], g["status"], g["winner"]) for g in last["games"]] == [(1, "won", "Ann")]
    ann = next(p for p in last["players"] if p["name"] == "Ann")
    assert (ann["won"], ann["by_snap"], ann["valid_snaps"], ann["fastest_us"]) == (1, 1, 1, 300_000)
