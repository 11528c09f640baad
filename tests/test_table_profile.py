"""The table profile: one versioned file, written atomically, also a deck profile."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from referee.vision.profile import TableProfile, TableProfileError, load, partial_path, save
from referee.vision.recogniser import Profile

FACES = np.arange(2 * 6 * 4, dtype=np.uint8).reshape(2, 6, 4)


def _full() -> TableProfile:
    deck = Profile(FACES, np.array(["7H", "QS"]), aspect=1.4)
    return (
        TableProfile(created="2026-11-23T12:00:00+00:00")
        .with_step("camera", camera={"size": [640, 480], "pile": [200, 120, 440, 360]})
        .with_step("seats", seats={"bottom": 0, "left": 1})
        .with_step("deck", deck_name="my deck", deck=deck)
    )


def test_a_profile_comes_back_as_it_was_saved_and_is_also_a_deck_profile(tmp_path: Path) -> None:
    path = tmp_path / "table-profile.npz"
    save(_full(), path)
    back = load(path)
    assert back.done == ("camera", "seats", "deck")
    assert back.camera == {"size": [640, 480], "pile": [200, 120, 440, 360]}
    assert back.seats == {"bottom": 0, "left": 1} and back.deck_name == "my deck"
    assert back.deck is not None and back.deck.aspect == 1.4
    assert (back.deck.faces == FACES).all()
    deck = Profile.load(path)  # `referee watch --profile` takes the same file
    assert list(deck.face_codes) == ["7H", "QS"]


def test_a_write_that_fails_leaves_the_old_profile_as_it_was(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "table-profile.npz"
    save(_full(), path)
    before = path.read_bytes()

    def power_cut(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(TableProfileError, match="cannot write the profile: No space left on device"):
        save(TableProfile().with_step("camera", camera={"size": [1, 1]}), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["table-profile.npz"]  # no temporary left


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "no such profile"),
        (b"not a zip at all", "not a profile (a profile is an .npz file"),
    ],
)
def test_a_missing_or_damaged_profile_is_one_line(tmp_path: Path, content, words) -> None:
    path = tmp_path / "table-profile.npz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(TableProfileError) as e:
        load(path)
    assert words in str(e.value) and "\n" not in str(e.value) and str(path) in str(e.value)


def test_a_deck_profile_alone_and_another_version_are_refused(tmp_path: Path) -> None:
    deck = tmp_path / "deck.npz"
    Profile(FACES, np.array(["7H", "QS"])).save(deck)
    with pytest.raises(TableProfileError, match="a deck profile, not a table profile"):
        load(deck)
    other = tmp_path / "other.npz"
    np.savez(other, table=np.array('{"version": 9}'))
    with pytest.raises(TableProfileError, match="table profile version 9"):
        load(other)


def test_progress_lives_beside_the_profile() -> None:
    assert partial_path("/etc/referee/table-profile.npz") == Path("/etc/referee/table-profile.npz.partial")
