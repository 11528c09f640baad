"""Every bad input one line (issue 19): files given as scripts, configs, wiring and game
lines read with a size cap (`/dev/zero`, a FIFO, a huge file), nesting thousands deep, a
damaged journal entry, an image whose header claims 100000 x 100000 pixels, a cut-off JPEG,
an unreadable ~/.config/referee. Each: one line on stderr, exit 2, no traceback, bounded
memory; through the real command line (in-process, and a few as real processes)."""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import subprocess
import sys
import tracemalloc
from pathlib import Path

import cv2
import pytest

from referee.cards import parse_card
from referee.cli.main import main
from referee.sim.render import draw_card

from .helpers import table_config as config
from .test_image_files import _png_header

REFEREE = Path(sys.executable).with_name("referee")
SCRIPT = (
    '{"game": {"players": ["Ann", "Bob", "Cy"]}}\n{"t": 1000000, "lay": "7H"}\n{"t": 1400000, "lay": "7S"}\n'
)
MEMORY_BOUND = 16 * 2**20  # bytes Python may allocate for any one bad input (the caps are 64 KiB-1 MiB)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str, int]:
    """The command's status, stdout, stderr, and the peak of Python's allocations meanwhile."""
    capsys.readouterr()
    tracemalloc.start()
    try:
        status = main(list(argv))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    out, err = capsys.readouterr()
    return status, out, err, peak


def one_line(err: str, *words: str) -> None:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)  # nobody ever writes: reading it would wait forever
    return path


@pytest.fixture
def huge(tmp_path: Path) -> Path:
    path = tmp_path / "huge.toml"
    with path.open("wb") as f:
        f.truncate(3 * 2**30)  # sparse: 3 GB that take no disk
    return path


# Scripts -----------------------------------------------------------------------------------


@pytest.mark.parametrize("pipeline", [False, True], ids=["adjudicate", "pipeline"])
def test_dev_zero_as_a_script_is_one_line_in_bounded_memory(capsys, pipeline):
    argv = ["adjudicate", "/dev/zero", *(["--pipeline"] if pipeline else [])]
    status, out, err, peak = run(capsys, *argv)
    assert status == 2 and out == ""
    one_line(err, "/dev/zero:1:", "longer than 64 KiB")
    assert peak < MEMORY_BOUND


def test_dev_zero_as_the_rehearsal_script_is_one_line(capsys, tmp_path):
    status, _, err, peak = run(
        capsys, "run", "--config", str(config(tmp_path)), "--lays-from", "/dev/zero", "--at-once"
    )
    assert status == 2
    one_line(err, "/dev/zero:1:", "longer than 64 KiB")
    assert peak < MEMORY_BOUND


def test_a_line_nested_thousands_deep_is_one_line(capsys, tmp_path):
    script = tmp_path / "deep.jsonl"
    script.write_text(SCRIPT + '{"t": ' + "[" * 30000 + "]" * 30000 + "}\n")
    status, out, err, _ = run(capsys, "adjudicate", str(script))
    assert status == 2 and len(out.splitlines()) == 2  # the two lays before it stand
    one_line(err, f"{script}:4: not JSON: nested too deeply")


def test_a_game_line_nested_thousands_deep_is_one_line_at_the_service(capsys, tmp_path):
    script = tmp_path / "deep.jsonl"
    script.write_text('{"game": ' + "[" * 30000 + "]" * 30000 + "}\n")
    status, _, err, _ = run(capsys, "run", "--config", str(config(tmp_path)), "--lays-from", str(script))
    assert status == 2  # the service's note of the game it opened, then the one line
    assert err.splitlines()[-1] == f"{script}:1: not JSON: nested too deeply" and "Traceback" not in err


@pytest.mark.parametrize(
    ("name", "what"),
    [("Ann\\nBob", "U+000A"), ("Ann\\u202e", "U+202E"), ("A" * 40, "at most 32 characters")],
)
def test_a_script_or_configs_name_that_would_garble_a_line_is_one_line(capsys, tmp_path, name, what):
    script = tmp_path / "names.jsonl"
    script.write_text(f'{{"game": {{"players": ["{name}", "Cy"]}}}}\n')
    status, _, err, _ = run(capsys, "adjudicate", str(script))
    assert status == 2
    one_line(err, f"{script}:1:", what)
    status, _, err, _ = run(capsys, "run", "--config", str(config(tmp_path, players=f'["{name}", "Cy"]')))
    assert status == 2
    one_line(err, "table.players", what)


# Configs, wiring files, game lines -----------------------------------------------------------


def test_dev_zero_a_fifo_and_a_huge_file_as_the_config_are_one_line(capsys, fifo, huge):
    for path, words in [
        ("/dev/zero", "not a regular file"),
        (str(fifo), "not a regular file"),
        (str(huge), "too big (more than 1 MiB)"),
    ]:
        for argv in (["run", "--config", path], ["games", "--config", path]):
            status, _, err, peak = run(capsys, *argv)
            assert status == 2, argv
            one_line(err, f"{path}: cannot read: {words}")
            assert peak < MEMORY_BOUND


def test_dev_zero_a_fifo_and_a_huge_file_as_the_wiring_are_one_line(capsys, tmp_path, fifo, huge):
    for path in ("/dev/zero", str(fifo), str(huge)):
        status, _, err, peak = run(capsys, "hw-test", "--mock", "--seconds", "0", "--wiring", path)
        assert status == 2
        one_line(err, f"{path}: cannot read:")
        assert peak < MEMORY_BOUND
        wired = config(tmp_path, players='["Ann", "Bob"]').read_text() + f'[hardware]\nwiring = "{path}"\n'
        wired = wired.replace('[hardware]\npins = "mock"\n', "", 1) + 'pins = "mock"\n'
        (tmp_path / "wired.toml").write_text(wired)
        status, _, err, _ = run(capsys, "run", "--config", str(tmp_path / "wired.toml"))
        assert status == 2
        one_line(err, "hardware.wiring", "cannot read")


def test_dev_zero_and_a_fifo_as_the_game_line_of_watch_are_one_line(capsys, tmp_path, fifo):
    (tmp_path / "frames").mkdir()
    for path in ("/dev/zero", str(fifo)):
        status, _, err, _ = run(capsys, "watch", str(tmp_path / "frames"), "--game", path)
        assert status == 2
        one_line(err, f"--game {path}: cannot read: not a regular file")


@pytest.mark.parametrize("what", ["config", "wiring"])
def test_toml_nested_hundreds_deep_is_one_line(capsys, tmp_path, what):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    argv = (
        ["run", "--config", str(deep)]
        if what == "config"
        else ["hw-test", "--mock", "--seconds", "0", "--wiring", str(deep)]
    )
    status, _, err, _ = run(capsys, *argv)
    assert status == 2
    one_line(err, f"{deep}: not valid TOML: nested too deeply")


def test_an_unreadable_config_folder_is_one_line(tmp_path):
    """~/.config/referee that may not be looked into: the wizard's profile can be neither
    found nor ruled out. Run as a user the folder shuts out (root reads any folder)."""
    home = tmp_path / "config"
    (home / "referee").mkdir(parents=True)
    (home / "referee").chmod(0)
    cfg = config(tmp_path)
    env = {**os.environ, "XDG_CONFIG_HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run(
        [str(REFEREE), "run", "--config", str(cfg), "--lays-from", "-", "--at-once"],
        input=SCRIPT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        preexec_fn=_without_root_reading,
    )
    assert done.returncode == 2, done.stderr
    one_line(done.stderr, "camera.profile", "cannot look for the profile: Permission denied")


def _without_root_reading() -> None:
    """In the child, before exec: root loses reading any file regardless of its mode
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so a folder's mode 000 shuts it out as it
    shuts out any user. For anyone else this changes nothing."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP: gone from the program exec'd
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


# The journal ---------------------------------------------------------------------------------


@pytest.fixture
def journal(capsys, tmp_path) -> Path:
    """A journal holding one game played from a script (at once)."""
    script = tmp_path / "game.jsonl"
    script.write_text(SCRIPT)
    status, *_ = run(
        capsys, "run", "--config", str(config(tmp_path)), "--lays-from", str(script), "--at-once"
    )
    assert status == 0
    return tmp_path / "data"


@pytest.mark.parametrize(
    ("table", "column", "value"),
    [
        ("events", "line", '{"t": 14'),  # cut off
        ("events", "line", '{"lay": "7S"}'),  # no time
        ("events", "line", "[" * 5000 + "]" * 5000),
        ("games", "spec", "not json"),
        ("games", "spec", '{"game": 3}'),
    ],
    ids=["cut-off-line", "no-t", "nested", "spec-not-json", "spec-not-a-game"],
)
def test_a_damaged_journal_entry_is_one_line_for_games_and_export(capsys, journal, table, column, value):
    _, before, _, _ = run(capsys, "games", "--data-dir", str(journal))
    with sqlite3.connect(journal / "journal.sqlite3") as db:
        db.execute(
            f"UPDATE {table} SET {column} = ? WHERE rowid IN (SELECT max(rowid) FROM {table})"
            if table == "games"
            else f"UPDATE {table} SET {column} = ? WHERE seq = 1",
            (value,),
        )
    for argv in (["games", "--data-dir", str(journal)], ["export", "1", "--data-dir", str(journal)]):
        status, out, err, _ = run(capsys, *argv)
        if argv[0] == "games" and table == "events" and status == 0:
            # `games` reads the games' rows, not each event's: its list is still the journal's
            # own (export, which reads the event, says it is damaged).
            assert out == before
            continue
        assert status == 2, argv
        one_line(err, "journal")


# Images ------------------------------------------------------------------------------------


def test_a_png_claiming_100000_by_100000_pixels_is_one_line_through_every_image_entry(capsys, tmp_path):
    bomb = tmp_path / "7H.png"
    bomb.write_bytes(_png_header(100_000, 100_000))
    status, out, err, peak = run(capsys, "recognize", str(bomb))
    assert status == 2 and out == ""
    one_line(err, f"{bomb}: 100000 x 100000 pixels is too big")
    assert peak < MEMORY_BOUND
    status, out, err, _ = run(capsys, "watch", str(tmp_path))  # a folder of frames: skipped, said
    assert status == 0 and out == ""
    one_line(err, "1 unreadable frame(s) skipped")


def test_a_half_truncated_jpeg_is_refused_not_read_as_a_card(capsys, tmp_path):
    card, _ = draw_card(parse_card("7H"), 250)
    ok, jpeg = cv2.imencode(".jpg", card)
    assert ok
    cut = tmp_path / "card.jpg"
    cut.write_bytes(jpeg.tobytes()[: len(jpeg) // 2])
    status, out, err, _ = run(capsys, "recognize", str(cut))
    assert status == 2 and out == ""  # no card read from half a picture
    one_line(err, f"{cut}: a JPEG cut off before its end")


# As real processes: the exit codes themselves ------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["adjudicate", "/dev/zero"],
        ["run", "--config", "/dev/zero"],
        ["hw-test", "--mock", "--wiring", "/dev/zero"],
    ],
    ids=["script", "config", "wiring"],
)
def test_as_a_process_dev_zero_exits_2_with_one_line(argv):
    done = subprocess.run([str(REFEREE), *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    one_line(done.stderr, "/dev/zero")


def test_json_of_a_good_script_still_adjudicates(capsys, tmp_path):
    script = tmp_path / "good.jsonl"
    script.write_text(SCRIPT)
    status, out, err, _ = run(capsys, "adjudicate", str(script))
    assert (
        status == 0
        and err == ""
        and [json.loads(line)["event"] for line in out.splitlines()] == ["laid", "laid"]
    )


@pytest.mark.parametrize(("table", "column"), [("games", "spec"), ("events", "line")])
def test_a_journal_value_far_longer_than_the_referee_writes_is_one_line_in_bounded_memory(
    capsys, journal, table, column
):
    # A damaged record (or a hand edit) can hold a value of hundreds of MB; reading it whole took
    # the fuzzer's process to 1.2 GB. SQLite refuses to hand over anything past MAX_VALUE_BYTES.
    with sqlite3.connect(journal / "journal.sqlite3") as db:
        key = "seq" if table == "events" else "id"
        db.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = 1", ("x" * (8 << 20),))
    for argv in (["games", "--data-dir", str(journal)], ["export", "1", "--data-dir", str(journal)]):
        status, _, err, peak = run(capsys, *argv)
        if argv[0] == "games" and table == "events" and status == 0:
            continue  # `games` reads no event rows (see above); export does
        assert status == 2, argv
        one_line(err, "journal")
        assert peak < 4 << 20, peak
