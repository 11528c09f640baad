"""The kiosk read across the table: sizes and room measured in Chromium (issue 21, items 1 and 2).

Each scene is a real table state (a bot game stopped where it shows what is measured: a
fanned stack of 10+ cards, 2 and 8 seats, a penalty, a count-out hold, a face-card
challenge, the penalty pile, the camera's question, the winner screen), drawn at 800x480
(the Pi's 7-inch screen), 1280x720 and 390x844 (a phone held upright). On each: nothing
scrolls sideways, no two of the page's parts overlap (the fanned cards as they are drawn,
rotation included), on the landscape screens nothing falls below the bottom, and at 800x480
the call and whose turn are at least 48 px, the last ruling 32 px, names and card counts 28 px
(22 px with 8 seats); the winner screen fills the display. Each scene's screenshot is kept in
test-artifacts/layout/ (not committed).

One browser for the module (conftest.py's), one server and one page per size: the scenes
are swapped in through the hub, as a new game is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from referee.cards import parse_card
from referee.kiosk.app import KioskHub, make_app
from referee.kiosk.server import KioskServer
from referee.kiosk.view import TableView
from referee.rules.events import Unread
from referee.rules.rulings import Penalty, StackWon
from referee.rules.state import State
from referee.sim.bots import VirtualTable
from tests.conftest import ARTIFACTS, wait_for
from tests.test_kiosk import TOKEN

SIZES = [(800, 480), (1280, 720), (390, 844)]
TIMEOUT_MS = 10_000
SHOTS = ARTIFACTS / "layout"


def bot_view(
    players: int,
    seed: int,
    rules: str,
    until: Callable[[TableView, State], bool],
    names: tuple[str, ...] | None = None,
) -> TableView:
    """A bot game fed to a view, stopped after the first event where `until` holds; `names`
    instead of the bots' own."""

    def named(state: State) -> State:
        if names is None:
            return state
        state = state.copy()
        state.players = names
        return state

    table = VirtualTable(players=players, seed=seed, rules=rules)
    view = TableView(named(table.spec.new_game()))
    for play in table.play():
        for ruling in play.rulings:
            view.add(ruling)
        view.update(named(play.state))
        if until(view, play.state):
            return view
    raise AssertionError(f"the {rules} game with seed {seed} never showed the scene")


def last_is(kind: type, size: int = 10, **fields: Any) -> Callable[[TableView, State], bool]:
    """The last ruling is a `kind` with these `fields`, fresh, over a stack of `size` or more."""

    def check(view: TableView, state: State) -> bool:
        last = view.last.ruling if view.last is not None else None
        return (
            type(last) is kind
            and not view.last_stale
            and all(getattr(last, k) == v for k, v in fields.items())
            and state.size >= size
        )

    return check


def tall(view: TableView, state: State) -> bool:
    return state.size >= 10 and state.hold is None


def held(view: TableView, state: State) -> bool:
    return state.hold is not None and state.size >= 10


def challenged(view: TableView, state: State) -> bool:
    return state.count_out is not None and state.count_out >= 2 and state.hold is None and state.size >= 10


def piled(view: TableView, state: State) -> bool:
    return state.penalty_pile > 0 and state.size >= 8


def won(view: TableView, state: State) -> bool:
    return state.winner is not None


def asked(view: TableView) -> TableView:
    view.ask((Unread(view.state.now, 1, parse_card("9C")),))
    return view


# name -> (the view, what the scene must show on the page)
SCENES: dict[str, tuple[Callable[[], TableView], str]] = {
    "stack-2-seats": (lambda: bot_view(2, 1, "celtic", tall), "#cards .card:nth-child(5)"),
    "penalty-2-seats": (lambda: bot_view(2, 3, "celtic", last_is(Penalty)), "#last.penalty"),
    "penalty-8-seats": (lambda: bot_view(8, 2, "celtic", last_is(Penalty)), "#last.penalty"),
    "hold-3-seats": (lambda: bot_view(3, 3, "celtic", held), "#turn .term"),
    "challenge-classic": (lambda: bot_view(4, 1, "classic", challenged), "#count-out .chances"),
    "handed-over-classic": (
        lambda: bot_view(4, 1, "classic", last_is(StackWon, size=0, by="penalty")),
        "#log li.stack_won",
    ),
    "penalty-pile-paranoid": (lambda: bot_view(5, 1, "paranoid", piled), "#stack-size .pp"),
    # The longest names a table takes (32 characters): they end in "…", nothing pushed aside.
    "long-names-8-seats": (
        lambda: bot_view(8, 2, "celtic", last_is(Penalty), tuple(f"{n}" * 32 for n in "ABCDEFGH")),
        "#last.penalty",
    ),
    "question-8-seats": (lambda: asked(bot_view(8, 4, "celtic", tall)), "#ask .pick"),
    "winner-3-seats": (lambda: bot_view(3, 3, "celtic", won), "#winner .stat"),
    "winner-8-seats": (lambda: bot_view(8, 3, "celtic", won), "#winner .stat"),
}

# The page's parts, each one box; the fanned stack is the union of its cards as drawn.
MEASURE = """() => {
  const box = (r) => ({x: r.left, y: r.top, r: r.right, b: r.bottom});
  const seen = (el) => el && !el.closest('[hidden]') && getComputedStyle(el).display !== 'none'
      && el.getClientRects().length > 0 && el.getBoundingClientRect().width > 0;
  const parts = {};
  const cards = [...document.querySelectorAll('#cards .card, #cards .empty-stack')].map(
      (c) => c.getBoundingClientRect());
  const edge = (f, key) => f(...cards.map((r) => r[key]));
  if (cards.length) parts.stack = {x: edge(Math.min, 'left'), y: edge(Math.min, 'top'),
      r: edge(Math.max, 'right'), b: edge(Math.max, 'bottom')};
  for (const id of ['stack-size', 'call-label', 'call-rank', 'turn', 'count-out', 'legend', 'log', 'last',
                    'bar', 'banner']) {
    const el = document.getElementById(id);
    if (seen(el) && el.textContent.trim()) parts[id] = box(el.getBoundingClientRect());
  }
  document.querySelectorAll('.seat').forEach((el, i) => {
      parts['seat' + i] = box(el.getBoundingClientRect()); });
  const px = (sel) => { const el = document.querySelector(sel);
      return seen(el) && el.textContent.trim() ? parseFloat(getComputedStyle(el).fontSize) : null; };
  const all = (sel) => [...document.querySelectorAll(sel)].map(
      (el) => parseFloat(getComputedStyle(el).fontSize));
  // Text cut off inside its own box (a clipped ruling, a squeezed call).
  const clipped = ['last', 'count-out', 'legend'].filter((id) => {
      const el = document.getElementById(id);
      return seen(el) && el.scrollHeight > el.clientHeight + 2; });
  return {parts, clipped,
    width: innerWidth, height: innerHeight,
    scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    fonts: {call: px('#call-rank'), turn: px('#turn'), last: px('#last'),
            names: all('.seat .name'), counts: all('.seat .count')}};
}"""

OVERLAY = """(sel) => [...document.querySelectorAll(sel)].filter((el) => el.getClientRects().length).map(
(el) => {
  const r = el.getBoundingClientRect(); return {x: r.left, y: r.top, r: r.right, b: r.bottom,
    clipped: el.scrollHeight > el.clientHeight + 2 || el.scrollWidth > el.clientWidth + 2}; })"""


def overlaps(parts: dict[str, dict[str, float]]) -> list[str]:
    names = sorted(parts)
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p, q = parts[a], parts[b]
            w = min(p["r"], q["r"]) - max(p["x"], q["x"])
            h = min(p["b"], q["b"]) - max(p["y"], q["y"])
            if w > 0.5 and h > 0.5:
                found.append(f"{a} and {b} overlap by {w:.0f}x{h:.0f} px")
    return found


@pytest.fixture(scope="module")
def pages(browser) -> Iterator[tuple[KioskHub, dict[tuple[int, int], Any]]]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    hub = KioskHub(TableView(VirtualTable(players=2, seed=1).spec.new_game()))
    server = KioskServer(make_app(hub, TOKEN, None), hub, port=0)
    server.start()
    opened = {}
    try:
        for size in SIZES:
            page = browser.new_page(viewport={"width": size[0], "height": size[1]})
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(server.url)
            opened[size] = page
        yield hub, opened
    finally:
        for page in opened.values():
            page.close()
        server.stop()


def show(hub: KioskHub, page: Any, view: TableView) -> None:
    hub.reset(view)
    version = hub.version
    wait_for(page, f"Number(document.body.dataset.version) >= {version}", timeout_ms=TIMEOUT_MS)


@pytest.mark.parametrize("scene", sorted(SCENES))
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_table_is_readable_and_nothing_overlaps(pages, scene, size):
    hub, opened = pages
    page = opened[size]
    make, shown = SCENES[scene]
    view = make()
    show(hub, page, view)
    page.evaluate("() => window.scrollTo(0, 0)")
    assert page.locator(shown).count() > 0, f"{scene} does not show {shown}"
    page.screenshot(path=SHOTS / f"{scene}-{size[0]}x{size[1]}.png")
    m = page.evaluate(MEASURE)
    assert m["scrollWidth"] <= m["width"], f"the page scrolls sideways: {m['scrollWidth']} px wide"
    landscape = size[0] > size[1]
    if "winner" in scene:
        check_winner(page, landscape)
        return
    if "question" in scene:
        check_question(page, size)
        return
    assert overlaps(m["parts"]) == []
    assert m["clipped"] == []
    # A short name on the turn line is whole ("Dee", not "D…"): only a long one gives way.
    who = page.evaluate(
        "() => { const w = document.querySelector('#turn .who');"
        " return w ? [w.textContent, w.scrollWidth > w.clientWidth + 0.5] : null; }"
    )
    if who is not None and len(who[0]) <= 8:
        assert not who[1], f"{who[0]!r} is cut short on the turn line"
    for name, p in m["parts"].items():
        assert p["x"] >= -0.5 and p["r"] <= m["width"] + 0.5, f"{name} goes off the side: {p}"
        if landscape:
            assert p["y"] >= -0.5 and p["b"] <= m["height"] + 0.5, f"{name} goes below the screen: {p}"
    if size == (800, 480):
        seats = len(view.state.players)
        fonts = m["fonts"]
        if json.loads(hub.snapshot()[1])["game"]["calls"]:
            assert fonts["call"] >= 48
        else:
            assert fonts["call"] is None  # no NEXT CALL where calling out does not count
        assert fonts["turn"] >= 48
        if fonts["last"] is not None:
            assert fonts["last"] >= 32
        floor = 22 if seats == 8 else 28
        assert len(fonts["names"]) == seats and min(fonts["names"] + fonts["counts"]) >= floor


def check_winner(page: Any, landscape: bool) -> None:
    panels = page.evaluate(OVERLAY, "#winner h1, #winner .stat")
    assert overlaps({str(i): p for i, p in enumerate(panels)}) == []
    stats = panels[1:]
    assert not any(p["clipped"] for p in stats), "a player's figures are cut off"
    if landscape:  # the winner screen fills the display: its panels span it, side to side and down
        width, height = page.viewport_size["width"], page.viewport_size["height"]
        left, right = min(p["x"] for p in stats), max(p["r"] for p in stats)
        top, bottom = min(p["y"] for p in panels), max(p["b"] for p in stats)
        assert (right - left) >= 0.9 * width and (bottom - top) >= 0.85 * height
        assert bottom <= height + 0.5
        title = "parseFloat(getComputedStyle(document.querySelector('#winner h1')).fontSize)"
        assert page.evaluate(title) >= 32


def check_question(page: Any, size: tuple[int, int]) -> None:
    picks = page.evaluate(OVERLAY, "#ask-title, #ask .pick, #ask-none")
    assert len(picks) == 54
    assert overlaps({str(i): p for i, p in enumerate(picks)}) == []
    assert all(p["x"] >= 0 and p["r"] <= size[0] for p in picks)


def test_a_tap_on_a_term_explains_it(pages):
    hub, opened = pages
    page = opened[(800, 480)]
    show(hub, page, bot_view(4, 1, "classic", challenged))
    assert [c.strip() for c in page.locator("#legend .chip").all_inner_texts()][:4] == [
        "pair",
        "run",
        "triple",
        "joker",
    ]
    page.click("#count-out .term")  # "Ann's challenge"
    assert page.is_visible("#explain")
    assert page.inner_text("#explain-word") == "challenge"
    assert "chances to lay a face card" in page.inner_text("#explain-text")
    page.click("#explain")
    assert page.is_hidden("#explain")
    show(hub, page, bot_view(3, 1, "celtic", tall))
    page.click('#legend .term[data-term="dark_queen"]')
    assert page.inner_text("#explain-text") == "The top card is the queen of spades (Q♠)."
    page.click("#explain")
    assert page.is_visible("#call-rank") and page.inner_text("#call .label").lower() == "next call"
