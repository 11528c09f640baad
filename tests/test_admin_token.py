"""The admin token file: made once with mode 0600, reused, and a bad one named in one line."""

import os
import stat

import pytest

from referee.errors import UserError
from referee.kiosk.token import load_or_create_token, read_token


def test_the_first_start_makes_a_token_only_its_owner_can_read(tmp_path):
    path = tmp_path / "state" / "admin-token"
    token = load_or_create_token(path)
    assert len(token) >= 32 and token.isascii()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == token + "\n"
    assert [p.name for p in path.parent.iterdir()] == ["admin-token"]  # no temporary file left


def test_later_starts_reuse_it(tmp_path):
    path = tmp_path / "admin-token"
    first = load_or_create_token(path)
    assert load_or_create_token(path) == first
    assert load_or_create_token(tmp_path / "other") != first


def test_the_mode_holds_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        load_or_create_token(tmp_path / "t")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "t").stat().st_mode) == 0o600


@pytest.mark.parametrize("content", ["", "\n", "short", "not a token at all!", "é" * 40])
def test_a_corrupt_or_empty_file_is_one_line_naming_the_file(tmp_path, content):
    path = tmp_path / "admin-token"
    path.write_text(content, encoding="utf-8")
    path.chmod(0o600)
    with pytest.raises(UserError) as caught:
        load_or_create_token(path)
    message = str(caught.value)
    assert str(path) in message and "\n" not in message


def test_a_file_others_can_read_is_refused(tmp_path):
    path = tmp_path / "admin-token"
    load_or_create_token(path)
    path.chmod(0o644)
    with pytest.raises(UserError, match=r"readable by others: run chmod 600 .*admin-token"):
        read_token(path)


def test_a_directory_in_the_way_is_one_line(tmp_path):
    (tmp_path / "admin-token").mkdir()
    with pytest.raises(UserError, match="admin-token"):
        load_or_create_token(tmp_path / "admin-token")
