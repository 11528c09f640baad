"""`referee adjudicate` and `referee demo` end to end, as a user runs them.

Most tests call `referee.cli.main` in process (fast); one runs the installed console script.
"""

import io
import json
import subprocess
import sys
import threading
import types
from pathlib import Path
from typing import Any

import pytest

from referee.cli.main import main

from .helpers import game, lay, snap, wait

ROOT = Path(__file__).resolve().parent.parent

EXAMPLE = [  # the example from the design: a queen laid out of turn, then snapped
    {"game": {"players": ["Ann", "Bob", "Cy"], "rules": "celtic", "options": {}}},
    {"t": 1000000, "lay": "7H"},
    {"t": 1400000, "lay": "QS", "seat": 2},
    {"t": 1650000, "snap": 1},
    {"t": 5000000, "wait": True},
]
# Seat 0 lays 7H on call 1 and seat 1 is next. Seat 2 lays QS out of turn: it still goes on
# the stack (option out_of_turn_card "stays") on call 2, starts a count-out of 2 (a queen) and
# seat 2 is penalised; seat 1 stays on turn. Seat 1 snaps the dark queen on top and takes both
# cards; nobody else pressed, so no margin. The win is announced once the 300 ms race window
# has passed, at the wait; the ruling keeps the snap's own time.
EXAMPLE_RULINGS = (
    '{"t": 1000000, "event": "laid", "seat": 0, "card": "7H", "call": 1, "count_out": null, "next": 1}\n'
    '{"t": 1400000, "event": "laid", "seat": 2, "card": "QS", "call": 2, "count_out": 2, "next": 1, '
    '"out_of_turn": true}\n'
    '{"t": 1400000, "event": "penalty", "seat": 2, "reason": "out_of_turn"}\n'
    '{"t": 1650000, "event": "stack_won", "seat": 1, "by": "snap", "reasons": ["dark_queen"], "cards": 2, '
    '"margin_us": null, "next": 1}\n'
)


def script_bytes(*lines: Any) -> bytes:
    """A table script: dicts as JSON lines, str as a line of its own, bytes as they are."""
    out = b""
    for line in lines:
        if isinstance(line, bytes):
            out += line
        elif isinstance(line, str):
            out += line.encode() + b"\n"
        else:
            out += json.dumps(line).encode() + b"\n"
    return out


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`referee ARGV...` in process: exit status, stdout, stderr."""
    capsys.readouterr()  # start clean
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(data)))


def adjudicate_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, name: str = "game.jsonl"
):
    path = tmp_path / name
    path.write_bytes(data)
    return (*run(capsys, "adjudicate", str(path)), str(path))


def assert_complete_json_lines(out: str) -> list[dict[str, Any]]:
    assert out == "" or out.endswith("\n")
    rulings = [json.loads(line) for line in out.splitlines()]
    assert all(isinstance(r, dict) and "event" in r for r in rulings)
    return rulings


# Valid scripts ----------------------------------------------------------------------


def test_adjudicate_prints_one_json_ruling_per_line_in_contract_key_order(tmp_path, capsys):
    status, out, err, _ = adjudicate_file(tmp_path, capsys, script_bytes(game(), lay(1000, "7H")))
    assert status == 0 and err == ""
    assert out == (
        '{"t": 1000000, "event": "laid", "seat": 0, "card": "7H", "call": 1, "count_out": null, "next": 1}\n'
    )


def test_adjudicate_design_example_out_of_turn_queen_penalised_then_snapped_as_dark_queen(tmp_path, capsys):
    status, out, err, _ = adjudicate_file(tmp_path, capsys, script_bytes(*EXAMPLE))
    assert status == 0 and err == ""
    assert out == EXAMPLE_RULINGS


def test_adjudicate_reads_standard_input_when_file_is_dash(capsys, monkeypatch):
    feed_stdin(monkeypatch, script_bytes(*EXAMPLE))
    status, out, err = run(capsys, "adjudicate", "-")
    assert status == 0 and err == ""
    assert out == EXAMPLE_RULINGS


def test_adjudicate_skips_blank_lines_and_accepts_crlf_line_ends(tmp_path, capsys):
    data = script_bytes(*EXAMPLE).replace(b"\n", b"\r\n").replace(b'\r\n{"t": 14', b'\r\n\r\n  \r\n{"t": 14')
    status, out, err, _ = adjudicate_file(tmp_path, capsys, data)
    assert status == 0 and err == ""
    assert out == EXAMPLE_RULINGS


def test_adjudicate_announces_waiting_rulings_when_the_input_ends(tmp_path, capsys):
    # Without the closing wait the snap win is still waiting for its margin: it is ruled at the end.
    status, out, _, _ = adjudicate_file(tmp_path, capsys, script_bytes(*EXAMPLE[:-1]))
    assert status == 0
    assert out == EXAMPLE_RULINGS


def test_adjudicate_a_whole_game_to_game_won(tmp_path, capsys):
    data = script_bytes(
        game(2, hand_sizes=[1, 1]), lay(1000, "9H"), lay(2000, "9S"), snap(2500, 0), wait(4000)
    )
    status, out, _, _ = adjudicate_file(tmp_path, capsys, data)
    assert status == 0
    rulings = assert_complete_json_lines(out)
    assert [r["event"] for r in rulings] == ["laid", "laid", "stack_won", "game_won"]
    assert rulings[-1] == {"t": 2_500_000, "event": "game_won", "seat": 0}


# Bad input: one line `FILE:LINE: what is wrong` on stderr, exit status 2 ----------------

G = game()  # three players, a 52-card deck

BAD_INPUTS = [
    # (id, script lines, line number in the message, words in the message, rulings printed before it)
    (
        "unknown-key-in-event-line",
        [G, lay(1000, "7H"), {**lay(2000, "8H"), "colour": "red"}],
        3,
        "unknown key 'colour'",
        1,
    ),
    ("unknown-key-in-game-line", [game(colour="red")], 1, "unknown key 'colour' in the game line", 0),
    ("bad-card-code", [G, lay(1000, "7H"), lay(2000, "ZZ"), lay(3000, "8H")], 3, "bad card code 'ZZ'", 1),
    ("card-already-on-stack", [G, lay(1000, "7H"), lay(2000, "7H")], 3, "7H is already on the stack", 1),
    ("snap-seat-out-of-range", [G, lay(1000, "7H"), snap(1500, 3)], 3, "seat 3 is out of range 0..2", 1),
    ("snap-seat-negative", [G, snap(1500, -1)], 2, "seat -1 is out of range 0..2", 0),
    ("lay-seat-out-of-range", [G, lay(1000, "7H"), lay(2000, "8H", seat=3)], 3, "seat 3 is out of range", 1),
    ("time-goes-backwards", [G, lay(1000, "7H"), lay(900, "8H")], 3, "time goes backwards", 1),
    ("not-json", [G, lay(1000, "7H"), "lay 8H"], 3, "not JSON", 1),
    ("truncated-json", [G, '{"t": 1000000, "lay": "7H"'], 2, "not JSON", 0),
    ("json-not-an-object", [G, "[1, 2]"], 2, "expected a JSON object", 0),
    ("game-line-not-an-object", ["[1, 2]"], 1, "expected the game line first", 0),
    ("empty-file", [], 1, "empty input", 0),
    ("only-blank-lines", ["", "", "  "], 3, "empty input", 0),
    ("missing-game-line", [lay(1000, "7H")], 1, "expected the game line first", 0),
    ("second-game-line", [G, lay(1000, "7H"), G], 3, "a second game line", 1),
    ("float-t", [G, {"t": 1000.5, "lay": "7H"}], 2, '"t" must be whole microseconds', 0),
    ("negative-t", [G, {"t": -1, "lay": "7H"}], 2, '"t" must be whole microseconds', 0),
    ("missing-t", [G, {"lay": "7H"}], 2, '"t" must be whole microseconds', 0),
    ("wait-false", [G, lay(1000, "7H"), {"t": 2000000, "wait": False}], 3, '"wait" must be true', 1),
    ("lay-and-snap-on-one-line", [G, {**lay(1000, "7H"), "snap": 1}], 2, "one event per line", 0),
    ("no-event-on-a-line", [G, {"t": 1000000}], 2, 'exactly one of "lay", "snap", "wait" or "card"', 0),
    ("unknown-option", [game(options={"speed": 2})], 1, "unknown option 'speed'", 0),
    ("bad-option-value", [game(options={"scan": "middle"})], 1, "option 'scan'", 0),
    (
        "unknown-rules-preset",
        [game(rules="nope")],
        1,
        "unknown rules 'nope' (known: celtic, classic, paranoid, party)",
        0,
    ),
    ("one-player", [game(["Ann"])], 1, "2 to 8 players, not 1", 0),
    ("nine-players", [game(9)], 1, "2 to 8 players, not 9", 0),
    ("hand-sizes-wrong-length", [game(hand_sizes=[26, 26])], 1, "hand_sizes has 2 entries for 3 players", 0),
    (
        "lay-from-seat-with-no-cards",
        [game(hand_sizes=[2, 0, 2]), lay(1000, "7H"), lay(2000, "8H", seat=1)],
        3,
        "seat 1 holds no cards",
        1,
    ),
    ("joker-in-52-card-deck", [G, lay(1000, "7H"), lay(2000, "JOKER")], 3, "the deck has no jokers", 1),
    ("not-utf8", [b"\xff\xfe"], 1, "not UTF-8", 0),
    ("not-utf8-after-a-lay", [G, lay(1000, "7H"), b"\xff\xfe\n"], 3, "not UTF-8", 1),
    ("blank-lines-still-count", [G, "", lay(1000, "7H"), "  ", lay(2000, "ZZ")], 5, "bad card code", 1),
]


@pytest.mark.parametrize("source", ["file", "stdin"])
@pytest.mark.parametrize(
    ("lines", "lineno", "words", "printed"),
    [pytest.param(*case[1:], id=case[0]) for case in BAD_INPUTS],
)
def test_bad_input_is_one_line_file_and_line_on_stderr_and_exit_status_2(
    tmp_path, capsys, monkeypatch, source, lines, lineno, words, printed
):
    data = script_bytes(*lines)
    if source == "file":
        status, out, err, name = adjudicate_file(tmp_path, capsys, data)
    else:
        feed_stdin(monkeypatch, data)
        status, out, err = run(capsys, "adjudicate", "-")
        name = "<stdin>"
    assert status == 2
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"{name}:{lineno}: "), err
    assert words in err
    assert "Traceback" not in err
    # What was ruled before the bad line stands, as complete JSON lines.
    assert len(assert_complete_json_lines(out)) == printed


def test_missing_file_is_an_error_that_names_the_path(tmp_path, capsys):
    path = tmp_path / "no-such-game.jsonl"
    status, out, err = run(capsys, "adjudicate", str(path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{path}: cannot read")
    assert "Traceback" not in err


def test_directory_instead_of_a_file_is_an_error_that_names_the_path(tmp_path, capsys):
    status, out, err = run(capsys, "adjudicate", str(tmp_path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{tmp_path}: cannot read")


def test_file_name_in_errors_is_the_path_as_given(tmp_path, capsys, monkeypatch):
    (tmp_path / "g.jsonl").write_bytes(script_bytes(G, lay(1000, "ZZ")))
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "adjudicate", "./g.jsonl")
    assert status == 2 and err.startswith("./g.jsonl:2: ")


# Determinism ------------------------------------------------------------------------


def test_same_script_adjudicated_twice_gives_byte_identical_output(tmp_path, capsys):
    first = adjudicate_file(tmp_path, capsys, script_bytes(*EXAMPLE))
    second = adjudicate_file(tmp_path, capsys, script_bytes(*EXAMPLE))
    assert first[:3] == second[:3]


def test_long_demo_game_adjudicated_twice_gives_byte_identical_output(tmp_path, capsys):
    status, script, _ = run(capsys, "demo", "--script", "--seed", "7")
    assert status == 0 and script.count("\n") > 100
    path = tmp_path / "seed7.jsonl"
    path.write_text(script)
    first = run(capsys, "adjudicate", str(path))
    second = run(capsys, "adjudicate", str(path))
    assert first[0] == 0 and first[2] == ""
    assert first == second
    assert json.loads(first[1].splitlines()[-1])["event"] == "game_won"


# Consistency with the demo ----------------------------------------------------------


@pytest.mark.parametrize(("seed", "players"), [(3, 4), (1, 2), (2, 3), (4, 5), (3, 8)], ids=lambda v: str(v))
def test_demo_rulings_equal_what_adjudicate_rules_on_its_script(tmp_path, capsys, seed, players):
    argv = ["--seed", str(seed), "--players", str(players)]
    status, shown, _ = run(capsys, "demo", "--json", *argv)
    assert status == 0
    lines = shown.splitlines()
    script = [line for line in lines if "event" not in json.loads(line)]
    rulings = [line for line in lines if "event" in json.loads(line)]
    assert "game" in json.loads(script[0]) and len(script) > 1 and rulings
    # `--script` is the same table script without the rulings.
    assert run(capsys, "demo", "--script", *argv)[1].splitlines() == script

    path = tmp_path / "demo.jsonl"
    path.write_text("".join(line + "\n" for line in script))
    status, out, err = run(capsys, "adjudicate", str(path))
    assert status == 0 and err == ""
    assert out.splitlines() == rulings


# referee demo -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv", [[], ["--players", "2"], ["--players", "8"]], ids=lambda a: " ".join(a) or "defaults"
)
def test_demo_plays_a_whole_game_names_the_winner_and_shows_the_summary(capsys, argv):
    status, out, err = run(capsys, "demo", "--headless", "--no-camera", "--seed", "1", *argv)
    assert status == 0 and err == ""
    assert "wins after" in out
    assert "Summary" in out
    assert "WINS THE GAME" in out


@pytest.mark.parametrize("players", [1, 9])
def test_demo_with_too_few_or_too_many_players_is_a_one_line_error(capsys, players):
    status, out, err = run(capsys, "demo", "--players", str(players))
    assert status == 2 and out == ""
    assert err == f"--players must be 2 to 8, not {players}\n"


def test_demo_stopped_by_the_cap_exits_1_and_says_stopped(capsys):
    status, out, _ = run(capsys, "demo", "--headless", "--no-camera", "--cap", "5", "--seed", "1")
    assert status == 1
    assert "Stopped after 5 lays" in out
    assert "wins after" not in out


def test_demo_serves_the_kiosk_page_while_the_game_runs_and_a_busy_port_is_one_line(capsys):
    import socket

    status, out, err = run(capsys, "demo", "--speed", "0", "--port", "0", "--seed", "2", "--cap", "40")
    assert (
        status == 1
        and err == ""
        and "Kiosk page: http://127.0.0.1:" in out
        and "Stopped after 40 lays" in out
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        status, out, err = run(capsys, "demo", "--speed", "0", "--no-camera", "--port", str(port))
    assert (
        status == 2
        and err == f"port {port} on 127.0.0.1 is in use (another port: --port N; no kiosk page: --headless)\n"
    )


# The installed console script -------------------------------------------------------


def test_console_script_adjudicates_a_file_and_standard_input(tmp_path):
    referee = Path(sys.executable).parent / "referee"
    assert referee.exists(), f"no console script at {referee}: pip install -e . in the venv"
    path = tmp_path / "example.jsonl"
    path.write_bytes(script_bytes(*EXAMPLE))

    from_file = subprocess.run([referee, "adjudicate", path], capture_output=True, timeout=60)
    assert (from_file.returncode, from_file.stderr) == (0, b"")
    assert from_file.stdout.decode() == EXAMPLE_RULINGS

    from_stdin = subprocess.run(
        [referee, "adjudicate", "-"], input=script_bytes(*EXAMPLE), capture_output=True, timeout=60
    )
    assert (from_stdin.returncode, from_stdin.stderr) == (0, b"")
    assert from_stdin.stdout == from_file.stdout

    # A bad line: the real exit status, one line on stderr, and what was ruled before it flushed.
    bad = subprocess.run(
        [referee, "adjudicate", "-"],
        input=script_bytes(*EXAMPLE[:3], lay(1500, "ZZ")),
        capture_output=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr.decode().startswith("<stdin>:4: bad card code 'ZZ'")
    assert bad.stderr.count(b"\n") == 1
    assert bad.stdout.decode() == "".join(EXAMPLE_RULINGS.splitlines(keepends=True)[:3])


def test_adjudicate_accepts_a_byte_order_mark_at_the_start_of_the_file(tmp_path, capsys):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf" + b'{"game": {"players": ["Ann", "Bob"]}}\n{"t": 1000000, "lay": "7H"}\n'
    )
    assert main(["adjudicate", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["card"] == "7H"


def test_errors_show_values_as_the_script_wrote_them(tmp_path, capsys):
    path = tmp_path / "wait.jsonl"
    path.write_text('{"game": {"players": ["Ann", "Bob"]}}\n{"t": 1000000, "wait": false}\n')
    assert main(["adjudicate", str(path)]) == 2
    assert capsys.readouterr().err == f'{path}:2: "wait" must be true, not false\n'


def test_adjudicate_on_a_pipe_prints_each_ruling_as_soon_as_it_is_final():
    referee = Path(sys.executable).parent / "referee"
    proc = subprocess.Popen(
        [referee, "adjudicate", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    watchdog = threading.Timer(60, proc.kill)  # a hang fails the test instead of the whole run
    watchdog.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None

        def send(*lines: str) -> None:
            proc.stdin.write("".join(line + "\n" for line in lines).encode())
            proc.stdin.flush()

        def ruling() -> dict[str, Any]:
            return json.loads(proc.stdout.readline())

        send('{"game": {"players": ["Ann", "Bob"]}}', '{"t": 1000000, "lay": "7H"}')
        # The input is still open, yet the lay's ruling is final and must arrive now.
        first = ruling()
        assert (first["event"], first["card"]) == ("laid", "7H")
        send('{"t": 2000000, "lay": "7S"}', '{"t": 2200000, "snap": 0}', '{"t": 2300000, "snap": 1}')
        assert ruling()["card"] == "7S"
        # Presses at 2.3 s are final once time moves on; then the win knows its margin.
        send('{"t": 2400000, "wait": true}')
        won = ruling()
        assert (won["event"], won["seat"], won["margin_us"]) == ("stack_won", 0, 100_000)
        assert ruling()["reason"] == "late"
        proc.stdin.close()
        assert proc.wait() == 0
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()


# The README's config, as a fresh clone has it -----------------------------------------------


def test_the_tracked_example_config_runs_the_readmes_commands(capsys, tmp_path):
    """`referee run`, `games` and `export` with `--config referee.example.toml`, the README's
    lines, on a game the demo wrote (the journal in the test's own XDG data dir)."""
    example = ROOT / "referee.example.toml"
    readme = (ROOT / "README.md").read_text()
    assert "--config referee.example.toml" in readme and "--config referee.toml " not in readme
    status, script, _ = run(capsys, "demo", "--script", "--seed", "1")
    game = tmp_path / "game.jsonl"
    game.write_text(script)
    status, out, err = run(capsys, "run", "--config", str(example), "--lays-from", str(game), "--at-once")
    assert status == 0 and '"event": "game_won"' in out, err
    status, out, err = run(capsys, "games", "--config", str(example))
    assert status == 0 and " lays  won by " in out and str(game) in out
    status, out, _ = run(capsys, "export", "1", "--config", str(example))
    assert status == 0 and out.splitlines()[1] == script.splitlines()[1]
