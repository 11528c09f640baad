"""Watch sequences through the real recogniser: the project's own styles and Debian's card art."""

import os
import shutil

import numpy as np
import pytest

from hardware.frames import Frame
from referee.cards import SUITED
from referee.sim.card_themes import available_themes, theme_cards
from referee.sim.render import render_lay_sequence
from referee.vision.recogniser import Recogniser
from referee.vision.watcher import PileWatcher, WatchAsk, WatchLay

THEMES = ("anglo", "tango", "simplistic")
HAVE_THEMES = set(THEMES) <= set(available_themes()) and shutil.which("rsvg-convert") is not None
if not HAVE_THEMES and os.environ.get("CI"):
    raise RuntimeError("CI must install gnome-cards-data and librsvg2-bin (see .ci/run)")
SIDE_OF_SEAT = {0: "bottom", 1: "left", 2: "top", 3: "right"}
TABLES = ("green_cloth", "wood", "dark", "light", "patterned")
LAYS = 8


def watch(faces, seed: int, table: str) -> tuple[list, list]:
    """One clip of LAYS cards laid from all four sides, watched as `referee watch` does."""
    rng = np.random.default_rng(seed)
    cards = [SUITED[i] for i in rng.choice(52, size=LAYS, replace=False)]
    seats = [int(s) for s in rng.integers(0, 4, size=LAYS)]
    frames, truth = render_lay_sequence(
        cards, seats, SIDE_OF_SEAT, rng, table=table, card_width=150, faces=faces, glare=0.2
    )
    recogniser, seen = Recogniser(), set()
    watcher = PileWatcher(
        lambda image, mask: recogniser.recognise(image, mask, frozenset(seen)),
        sides={side: seat for seat, side in SIDE_OF_SEAT.items()},
    )
    got = []
    for k, (t, image) in enumerate(frames):
        for event in watcher.feed(Frame(image, t, k)):
            if isinstance(event, WatchLay):
                got.append(event)
                seen.add(event.card.code)
            elif isinstance(event, WatchAsk):
                got.append(event)  # not sure: the table is asked, which is no miss and no wrong card
    got += watcher.finish()
    return got, truth


def score(got, truth) -> tuple[int, int, int, int]:
    """(misses, duplicates, wrong cards, asked): lays and questions matched to rests by time,
    within two frames; a question is neither a miss nor a wrong card (the table names it)."""
    rests = {t: card for t, card, _ in truth}
    matched = {}
    dups = 0
    for lay in got:
        t = next((t for t in rests if abs(t - lay.t_us) <= 2 * 1e6 / 30 and t not in matched), None)
        if t is None:
            dups += 1
        else:
            matched[t] = lay.card if isinstance(lay, WatchLay) else None
    wrong = sum(card is not None and card != rests[t] for t, card in matched.items())
    asked = sum(card is None for card in matched.values())
    return len(truth) - len(matched), dups, wrong, asked


@pytest.mark.skipif(not HAVE_THEMES, reason="apt install gnome-cards-data librsvg2-bin")
# anglo in the fast set (`make test`), the other two themes in the slow set.
@pytest.mark.parametrize(
    "theme", [t if t == "anglo" else pytest.param(t, marks=pytest.mark.slow) for t in THEMES]
)
def test_watch_sequences_on_debian_card_art(theme):
    faces = theme_cards(theme, 250)
    results = [score(*watch(faces, seed, TABLES[seed % 5])) for seed in range(3)]
    misses, dups, wrong, asked = (sum(r[i] for r in results) for i in range(4))
    print(f"{theme}: {3 * LAYS} lays, misses {misses}, duplicates {dups}, wrong {wrong}, asked {asked}")
    assert dups == 0
    assert misses + wrong <= 2
    # Half the lays at most (tango's pips are asked about most: 9 of 24 when this was written).
    assert asked <= 3 * LAYS // 2


def test_watch_sequences_on_the_projects_own_styles():
    results = [score(*watch(None, seed, TABLES[seed % 5])) for seed in range(5)]
    misses, dups, wrong, asked = (sum(r[i] for r in results) for i in range(4))
    print(f"own styles: {5 * LAYS} lays, misses {misses}, duplicates {dups}, wrong {wrong}, asked {asked}")
    assert dups == 0
    assert misses + wrong <= 2
    assert asked <= 5 * LAYS // 2  # half the lays at most
