"""Debian's gnome-cards-data themes, cut into cards (the real artwork tests and benchmarks use).

The themes come from the Debian packages gnome-cards-data and librsvg2-bin, which
.ci/run installs. Elsewhere these tests skip when they are missing; in CI they must run.
"""

import os
import shutil

import numpy as np
import pytest

from referee.cards import deck
from referee.sim.card_themes import ThemeError, available_themes, export_theme, theme_cards
from referee.sim.render import load_card_images

THEMES = ("anglo", "tango", "simplistic")
HAVE_THEMES = set(THEMES) <= set(available_themes()) and shutil.which("rsvg-convert") is not None
if not HAVE_THEMES and os.environ.get("CI"):
    raise RuntimeError("CI must have gnome-cards-data and librsvg2-bin installed (see .ci/run)")
needs_themes = pytest.mark.skipif(not HAVE_THEMES, reason="apt install gnome-cards-data librsvg2-bin")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@needs_themes
@pytest.mark.parametrize("theme", THEMES)
def test_a_theme_gives_every_card_of_a_deck_as_a_portrait_card_image(theme):
    cards = theme_cards(theme, card_width=160)
    assert set(cards) == {c.code for c in deck(52)} | {"JOKER"}
    for image in cards.values():
        h, w = image.shape[:2]
        assert image.dtype == np.uint8 and image.shape[2] == 3
        assert 1.2 < h / w < 1.6 and 140 <= w <= 165


@needs_themes
@pytest.mark.parametrize("theme", THEMES)
def test_each_card_is_its_own_picture_with_red_and_black_ink_where_it_belongs(theme):
    cards = theme_cards(theme, card_width=160)

    def redness(image):
        ink = image.min(axis=2) < 200  # not paper
        b, g, r = (image[..., i][ink].astype(int) for i in range(3))
        return float(np.mean(r - (g + b) / 2))

    assert redness(cards["7H"]) > 60 and redness(cards["7D"]) > 60
    assert redness(cards["7S"]) < 30 and redness(cards["7C"]) < 30
    small = {code: image[:200:4, :140:4].tobytes() for code, image in cards.items() if code != "JOKER"}
    assert len(set(small.values())) == len(small)


@needs_themes
def test_an_exported_theme_is_a_folder_the_renderer_reads(tmp_path):
    export_theme("simplistic", tmp_path / "simplistic", card_width=120)
    faces = load_card_images(tmp_path / "simplistic")
    assert len(faces) == 53 and faces["QS"].shape[1] == 120


def test_a_missing_theme_says_which_package_to_install(tmp_path):
    with pytest.raises(ThemeError, match="gnome-cards-data"):
        theme_cards("no-such-theme", directory=tmp_path)
