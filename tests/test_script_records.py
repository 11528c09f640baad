"""The table script read by msgspec (referee/rules/script_records.py) against the reader it replaced
(benchmarks/_old_script_reader.py, the code as it was): the same items from every line, the
same one-line message for every bad one, byte-identical rulings on random games, and memory
that stays bounded.

Every comparison is with the old reader's own output, so each test fails if the new reader
accepts a line the old one refused, reads it otherwise, or words an error differently.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cards import deck, parse_card
from referee.cli import main as cli
from referee.errors import UserError
from referee.rules.presets import PRESETS
from referee.rules.rulings import (
    Burned,
    Corrected,
    GameWon,
    Laid,
    PenaltiesLifted,
    Penalty,
    SeatOut,
    SnapIgnored,
    StackWon,
    TakeBack,
)
from referee.rules.script import ScriptError, adjudicate, event_to_json, read_script
from referee.rules.script_records import RULING, fast_item, ruling_line, ruling_lines
from referee.rules.state import State

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import _old_script_reader as old
from bench_engine import Driver

GAME = b'{"game": {"players": ["Ann", "Bob", "Cy"]}}\n'
FIRST = b'{"t": 1000, "lay": "7H"}\n'


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def items(reader: Callable[..., Iterator[Any]], lines: Iterable[bytes | str]) -> tuple[list[Any], str]:
    """What a reader yields (the table as its seat count), and its error's message."""
    out: list[Any] = []
    try:
        for lineno, item in reader(lines, "s.jsonl"):
            out.append((lineno, item.seats if isinstance(item, State) else item))
    except ScriptError as e:
        return out, str(e)
    return out, ""


def rulings(judge: Callable[..., Iterator[Any]], lines: Iterable[bytes | str]) -> tuple[list[str], str]:
    out: list[str] = []
    try:
        for ruling in judge(lines, "s.jsonl"):
            out.append(json.dumps(ruling.to_json()))
    except ScriptError as e:
        return out, str(e)
    return out, ""


def same_as_before(lines: list[bytes] | list[str]) -> None:
    assert items(read_script, lines) == items(old.read_script, lines)
    assert rulings(adjudicate, lines) == rulings(old.adjudicate, lines)


# Lines, one at a time ------------------------------------------------------------------------

# Good lines of every kind, and the mistakes a hand, a camera or a fuzzer makes.
EDGE_LINES = [
    b'{"t": 2000, "lay": "8S"}',
    b'{"t": 2000, "lay": "8s", "seat": 1, "confidence": 0.5}',
    b'{"t": 2000, "lay": "Q\xe2\x99\xa0"}',  # Q♠ in UTF-8
    b'{"t": 2000, "lay": "th", "seat": null}',
    b'{"t": 2000, "lay": "?", "seat": 2, "confidence": 0, "guess": "5C"}',
    b'{"t": 2000, "lay": "?", "guess": null}',
    b'{"t": 2000, "snap": 2}',
    b'{"t": 2000, "wait": true}',
    b'{"t": 2000, "cleared": true}',
    b'{"t": 2000, "card": "5C", "for": 1000}',
    b'{"t": 2000, "card": null, "for": 1000}',
    b'{"t": 2000, "event": "laid", "seat": 0, "card": "7H"}',
    b'{"t": -5, "event": "anything", "extra": [1, {"a": null}]}',
    b'{"t": 2000, "lay": "8S"}\r\n',
    b"  \t \n",
    b"\x1c\n",  # blank to str.strip(), not to bytes.strip()
    # Mistakes, each worded by the precise reading.
    b'{"t": 2000, "lay": "8S", "colour": "red"}',
    b'{"t": 2000, "lay": "ZZ"}',
    b'{"t": 2000, "lay": "8S", "lay": "ZZ"}',  # a key twice: the last counts
    b'{"t": "x", "t": 2000, "lay": "8S"}',
    b'{"t": 2000, "lay": "8S", "seat": 3}',
    b'{"t": 2000, "lay": "8S", "seat": true}',
    b'{"t": 2000, "lay": "8S", "seat": 1.0}',
    b'{"t": 2000, "lay": "8S", "confidence": 1.5}',
    b'{"t": 2000, "lay": "8S", "confidence": true}',
    b'{"t": 2000, "lay": "8S", "confidence": NaN}',
    b'{"t": 2000, "lay": "8S", "confidence": null}',
    b'{"t": 2000, "lay": "8S", "confidence": 1e999}',
    b'{"t": 2000, "lay": "8S", "guess": null}',
    b'{"t": 2000, "lay": 7}',
    b'{"t": true, "lay": "8S"}',
    b'{"t": 2000.0, "lay": "8S"}',
    b'{"t": 2e3, "lay": "8S"}',
    b'{"t": -1, "lay": "8S"}',
    b'{"t": 999, "lay": "8S"}',  # before the lay at t=1000
    b'{"t": 99999999999999999999999999, "lay": "8S"}',  # any size: JSON has no bound
    b'{"t": 18446744073709551616, "snap": 1}',
    b'{"lay": "8S"}',
    b'{"t": 2000}',
    b'{"t": 2000, "lay": "8S", "snap": 1}',
    b'{"t": 2000, "snap": 1, "seat": 1}',
    b'{"t": 2000, "wait": true, "confidence": 1}',
    b'{"t": 2000, "wait": false}',
    b'{"t": 2000, "wait": 1}',
    b'{"t": 2000, "cleared": true, "wait": true}',
    b'{"t": 2000, "card": "5C"}',
    b'{"t": 2000, "card": "5C", "for": 3000}',
    b'{"t": 2000, "card": 5, "for": 1000}',
    b'{"t": 2000, "card": "5C", "for": true}',
    b'{"t": 2000, "game": {"players": ["A", "B"]}}',
    b'{"t": 2000, "event": "laid", "game": 1}',
    b'{"t": 2000.5, "event": "laid"}',
    b'{"t": 2000, "event": 7}',
    b'{"t": 2000, "event": "laid", "\xff": 1}',  # bad UTF-8 where msgspec skips a key
    b'{"t": 2000, "event": "laid", "x": "\xed\xa0\x80"}',  # a UTF-8 surrogate
    b'{"t": 2000, "lay": "\xc0\x80"}',  # an overlong NUL
    b'{"t": 2000, "lay": "\\ud800"}',  # a lone surrogate, escaped
    b'{"t": 2000, "\\u006cay": "8S"}',  # a key spelled with an escape
    b'{"t": 2000, "lay": "8S"} trailing',
    b'{"t": 2000, "lay": "8S",}',
    b'{"t": 2000, "lay": "8S"',
    b"\xef\xbb\xbf" + b'{"t": 2000, "lay": "8S"}',  # a byte-order mark after line 1
    b"[1, 2]",
    b'"lay"',
    b"null",
    b"[" * 5000 + b"]" * 5000,
    b'{"t": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    b"\x00",
]


@pytest.mark.parametrize("line", EDGE_LINES, ids=range(len(EDGE_LINES)))
def test_each_edge_line_reads_and_fails_exactly_as_before(line):
    same_as_before([GAME, FIRST, line])
    same_as_before([GAME.decode(), FIRST.decode(), line.decode("utf-8", "replace")])


def test_good_lines_take_the_fast_path_and_bad_ones_the_precise_reading():
    """Not a speed test: which path a line takes (the fast path must not send good lines
    back to be read twice)."""
    assert fast_item(b'{"t": 1, "lay": "QS", "seat": 0}', 3) is not None
    assert fast_item(b'{"t": 1, "lay": "?", "guess": "5C"}', 3) is not None
    assert fast_item(b'{"t": 1, "snap": 2}', 3) is not None
    assert fast_item(b'{"t": 1, "wait": true}', 3) is not None
    assert fast_item(b'{"t": 2, "card": null, "for": 1}', 3) is not None
    assert fast_item(b'{"t": 1, "event": "laid", "seat": 0}', 3) is RULING
    for bad in (b'{"t": 1, "snap": 3}', b'{"t": 1, "lay": "ZZ"}', b"[]", b'{"t": 1, "wait": false}'):
        assert fast_item(bad, 3) is None


KEYS = [
    "t",
    "lay",
    "snap",
    "wait",
    "cleared",
    "card",
    "for",
    "seat",
    "confidence",
    "guess",
    "event",
    "game",
    "x",
]
scalars = st.one_of(
    st.integers(-2, 3000),
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, 2**64, 10**30]),
    st.booleans(),
    st.none(),
    st.floats(),  # NaN and infinities too: json.dumps writes them, the old reader read them
    st.sampled_from([0.0, -0.0, 0.5, 1.0, 1.0000001, 1e-320]),
    st.sampled_from(["7H", "QS", "10h", "th", "Q\u2660", "JOKER", "?", "ZZ", "", " 8S ", "laid", "\ud800"]),
    st.text(max_size=4),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=2),
    max_leaves=4,
)
# Mostly event-shaped objects, so that many are good lines and reach the fast path's checks.
shaped = st.fixed_dictionaries(
    {"t": st.one_of(st.integers(900, 5000), scalars)},
    optional={
        "lay": st.one_of(st.sampled_from(["8S", "9D", "?", "qh", "JOKER"]), values),
        "seat": st.one_of(st.integers(-1, 3), values),
        "confidence": st.one_of(st.floats(0, 1), values),
        "guess": st.one_of(st.sampled_from(["5C", "8S"]), values),
    },
) | st.fixed_dictionaries(
    {"t": st.one_of(st.integers(900, 5000), scalars)},
    optional={
        "snap": st.one_of(st.integers(-1, 3), values),
        "wait": st.one_of(st.just(True), values),
        "cleared": st.one_of(st.just(True), values),
        "card": st.one_of(st.sampled_from(["5C", None]), values),
        "for": st.one_of(st.integers(0, 5000), values),
        "event": st.one_of(st.just("laid"), values),
        "game": values,
    },
)
objects = st.one_of(shaped, shaped, st.dictionaries(st.sampled_from(KEYS), values, max_size=5), values)


@st.composite
def fuzzed_lines(draw: st.DrawFn) -> bytes:
    obj = draw(objects)
    separators = draw(st.sampled_from([None, (",", ":"), (" , ", " : ")]))
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()), separators=separators)
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate becomes bad UTF-8
    how = draw(st.sampled_from(["as is"] * 6 + ["twice", "insert", "cut", "escape", "end"]))
    if how == "twice" and data.endswith(b"}") and len(data) > 2:  # a key again, with another value
        key = draw(st.sampled_from(KEYS))
        again = json.dumps(draw(scalars)).encode("utf-8", "surrogatepass")
        data = data[:-1] + b', "' + key.encode() + b'": ' + again + b"}"
    elif how == "insert":
        at = draw(st.integers(0, len(data)))
        token = draw(st.sampled_from([b"\xff", b"\x00", b",", b'"', b"{", b"]", b" ", b"\xe2\x99", b"1e999"]))
        data = data[:at] + token + data[at:]
    elif how == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif how == "escape":
        data = data.replace(b'"lay"', b'"\\u006cay"').replace(b'"t"', b'"\\u0074"')
    elif how == "end":
        data += draw(st.sampled_from([b"\n", b"\r\n", b" x", b"\t"]))
    return data


@settings(max_examples=1000)
@given(st.lists(fuzzed_lines(), min_size=1, max_size=4), st.booleans())
def test_any_line_reads_or_fails_exactly_as_the_old_reader(lines, as_text):
    script = [GAME, FIRST, *lines]
    if as_text:  # the journal hands the reader str lines
        same_as_before([line.decode("utf-8", "surrogateescape") for line in script])
    else:
        same_as_before(script)


# Rulings out ---------------------------------------------------------------------------------

CARDS = deck(54)
ints = st.one_of(st.integers(0, 10**7), st.integers(), st.sampled_from([2**63, 2**64, 10**30]))
maybe = st.one_of(st.none(), ints)
words = st.sampled_from(
    ["snap", "wrong_snap", "late", "stack", "penalty_pile", "sandwich", "}, {", "d\u00e9j\u00e0"]
)
cards = st.sampled_from(CARDS)
any_ruling = st.one_of(
    st.builds(Laid, ints, ints, cards, ints, maybe, maybe, st.booleans(), st.booleans()),
    st.builds(StackWon, ints, ints, words, st.tuples(words) | st.just(()), ints, maybe, ints, ints),
    st.builds(Penalty, ints, ints, words, st.booleans()),
    st.builds(SnapIgnored, ints, ints, words, maybe),
    st.builds(Burned, ints, ints, ints, words),
    st.builds(SeatOut, ints, ints, words, ints),
    st.builds(TakeBack, ints, ints, cards),
    st.builds(PenaltiesLifted, ints, words),
    st.builds(GameWon, ints, ints, st.none() | words),
    st.builds(Corrected, ints, ints, st.none() | cards, st.none() | cards, ints),
)


@settings(max_examples=800)
@given(st.lists(any_ruling, max_size=6))
def test_rulings_are_written_byte_for_byte_as_json_dumps_wrote_them(rulings_):
    expected = [json.dumps(r.to_json()) for r in rulings_]
    assert [ruling_line(r) for r in rulings_] == expected
    assert ruling_lines(rulings_) == "".join(line + "\n" for line in expected)


# Whole games ---------------------------------------------------------------------------------


def random_script(seed: int) -> list[bytes]:
    """A seeded random game (bench_engine's driver: real cards, every preset, 2-8 seats),
    then a seeded hand made of its lines what a camera and a host make of them: unread lays
    named later (or never), corrections (right, wrong or impossible), lays naming their
    seat, confidences, cleared stacks, ruling lines as an export has them, blank lines."""
    rng = random.Random(seed)
    rules = rng.choice(list(PRESETS))
    driver = Driver(seed, rng.randint(2, 8), keep_alive=False, rules=rules)
    game = driver.run(rng.randint(20, 140))[0]
    out: list[bytes] = [json.dumps(game.spec.to_json()).encode() + b"\n"]
    asked: list[tuple[int, str]] = []  # unread lays waiting for their card line
    for line in map(event_to_json, game.events):
        r = rng.random()
        if "lay" in line and r < 0.06:
            asked.append((line["t"], line["lay"]))
            line = {
                "t": line["t"],
                "lay": "?",
                **({"guess": rng.choice(["5C", "QS"])} if rng.random() < 0.5 else {}),
            }
        elif "lay" in line and r < 0.1:
            line = {**line, "confidence": rng.choice([0.5, 1, 0.99])}
        elif "wait" in line and r < 0.2:
            line = {"t": line["t"], "cleared": True}
        out.append(json.dumps(line).encode() + b"\n")
        t = line["t"]
        if asked and rng.random() < 0.3:
            lay_t, card = asked.pop(0)
            named = card if rng.random() < 0.8 else rng.choice([None, "9D", card])
            out.append(json.dumps({"t": t, "card": named, "for": lay_t}).encode() + b"\n")
        elif rng.random() < 0.01:  # a correction of some earlier lay, right or wrong
            lays = [json.loads(x) for x in out[1:] if b'"lay"' in x and b'"?"' not in x]
            if lays:
                lay = rng.choice(lays)
                named = rng.choice([None, "2C", "KH", lay["lay"]])
                out.append(json.dumps({"t": t, "card": named, "for": lay["t"]}).encode() + b"\n")
        if rng.random() < 0.02:
            out.append(b'{"t": %d, "event": "laid", "seat": 0, "card": "7H"}\n' % t)
        if rng.random() < 0.01:
            out.append(b"\n")
    return out


def through_the_command(run: Callable[..., int], path: Path) -> tuple[str, str]:
    """`referee adjudicate PATH` by way of `run` (a cmd_adjudicate): stdout and the error."""
    args = cli.build_parser().parse_args(["adjudicate", str(path)])
    out = io.StringIO()
    try:
        run(args, out)
    except UserError as e:
        return out.getvalue(), str(e)
    return out.getvalue(), ""


def test_judging_makes_no_reference_cycles(tmp_path):
    """`referee adjudicate` pauses the cyclic collector while it judges (refcounting frees
    everything): true only while judging a script, questions and corrections included, leaves
    no cycle behind. A cycle made per event would grow without bound there."""
    import gc

    scripts = [b"".join(random_script(seed)) for seed in range(40)]
    scripts += [p.read_bytes() for p in sorted(EXAMPLES.glob("*.jsonl")) if ".rulings." not in p.name]
    gc.collect()
    gc.disable()
    try:
        for script in scripts:
            with contextlib.suppress(ScriptError):
                for _ in adjudicate(script.splitlines(keepends=True), "game"):
                    pass
            assert gc.collect() == 0
    finally:
        gc.enable()
    path = tmp_path / "game.jsonl"
    path.write_bytes(scripts[0])
    assert gc.isenabled() and through_the_command(cli.cmd_adjudicate, path)[0] and gc.isenabled()


def test_a_thousand_random_games_rule_byte_for_byte_as_before(tmp_path):
    path = tmp_path / "game.jsonl"
    errors = rulings_seen = 0
    for seed in range(1000):
        path.write_bytes(b"".join(random_script(seed)))
        new = through_the_command(cli.cmd_adjudicate, path)
        before = through_the_command(old.cmd_adjudicate, path)
        assert new == before, f"seed {seed}"
        errors += bool(new[1])
        rulings_seen += new[0].count("\n")
    # The games reach both ways out: to their end, and to a bad line (a wrong name).
    assert 50 < errors < 950 and rulings_seen > 50_000


def test_the_game_line_and_the_engine_errors_are_the_old_ones():
    """Lines the fast path reads but the engine refuses: the message and line are the same."""
    same_as_before([GAME, FIRST, b'{"t": 2000, "lay": "7H"}'])  # already on the stack
    same_as_before([b'{"game": {"players": ["A", "B"], "hand_sizes": [0, 1]}}', b'{"t": 1, "lay": "7H"}'])
    same_as_before([GAME, b'{"t": 1000, "lay": "?"}', b'{"t": 2000, "snap": 1}'])  # never named
    same_as_before([GAME, FIRST, b'{"t": 2000, "card": null, "for": 1500}'])  # no lay seen there


# Memory ----------------------------------------------------------------------------------------

MEMORY_BOUND = 16 * 2**20


def test_a_one_gigabyte_file_of_one_line_is_one_line_in_bounded_memory(tmp_path, capsys):
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as f:
        f.write(GAME)
        f.truncate(2**30)  # sparse: a gigabyte of NULs after the game line, no newline
    tracemalloc.start()
    try:
        status = cli.main(["adjudicate", str(path)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert (
        status == 2
        and err == f"{path}:2: a line longer than 64 KiB: not a table script (one JSON object a line)\n"
    )
    assert peak < MEMORY_BOUND


def test_the_reader_keeps_no_line_it_has_read():
    """A long stream read line by line: what the reader holds does not grow with it (the
    judging keeps its history, for corrections, as it did before)."""

    def stream() -> Iterator[bytes]:
        yield GAME
        for t in range(200_000):
            yield b'{"t": %d, "event": "laid", "seat": 0, "card": "7H", "call": 1}\n' % t
            yield b"\n"

    tracemalloc.start()
    try:
        assert list(adjudicate(stream(), "long")) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20


def test_parse_card_is_what_the_fast_path_reads_cards_with():
    """The fast path and the precise reading share one card reader (so `Q♠` is `QS`)."""
    assert fast_item('{"t": 1, "lay": "q\u2660"}', 2) == fast_item(b'{"t": 1, "lay": "QS"}', 2)
    assert fast_item(b'{"t": 1, "lay": "QS"}', 2)[1] is parse_card("QS")  # type: ignore[index]
