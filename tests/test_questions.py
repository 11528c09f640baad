"""A lay the camera could not read is asked: judging holds at it until the card is named.

The table-script lines: `{"t": T, "lay": "?"}` (with the camera's `guess`, `confidence`,
`seat` if it has them) and, later, `{"t": T2, "card": "7H", "for": T}` (`"card": null`:
nothing was laid there). Every script here is judged by `adjudicate` and by the live
table loop on simulated hardware (`judge` checks both rule the same).
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules.script import ScriptError, adjudicate, event_to_json
from referee.sim.bots import VirtualTable

from .helpers import judge, lay, of, snap, wait, won


def unread(t_ms: float, seat: int | None = None, guess: str | None = None) -> dict:
    line: dict = {"t": round(t_ms * 1000), "lay": "?"}
    if seat is not None:
        line["seat"] = seat
    if guess is not None:
        line["guess"] = guess
    return line


def name(t_ms: float, card: str | None, for_ms: float) -> dict:
    return {"t": round(t_ms * 1000), "card": card, "for": round(for_ms * 1000)}


def test_a_press_made_while_the_table_is_asked_is_judged_against_the_named_card():
    rulings = judge(
        lay(1000, "9H"),
        unread(2000, guess="5C"),
        snap(2300, 1),  # a wrong snap: 9H 5C is nothing, whatever the camera saw
        lay(3000, "9D"),
        name(3500, "5C", 2000),
        snap(3600, 0),  # 9H 5C 9D: a sandwich
        players=2,
    )
    assert [r["card"] for r in of(rulings, "laid")] == ["9H", "5C", "9D"]
    assert of(rulings, "laid")[1]["t"] == 2_000_000  # the lay keeps the camera's time
    assert of(rulings, "penalty") == [{"t": 2_300_000, "event": "penalty", "seat": 1, "reason": "wrong_snap"}]
    assert won(rulings)[0]["seat"] == 0 and won(rulings)[0]["reasons"] == ["sandwich"]


def test_the_same_press_wins_when_the_named_card_makes_the_pair():
    rulings = judge(lay(1000, "9H"), unread(2000), snap(2300, 1), name(4000, "9S", 2000), players=2)
    assert won(rulings)[0]["t"] == 2_300_000 and won(rulings)[0]["reasons"] == ["standard"]


def test_nothing_laid_lets_what_waited_go_on_without_a_card():
    rulings = judge(lay(1000, "9H"), unread(2000), lay(2500, "9C"), snap(2600, 0), name(3000, None, 2000))
    assert [r["card"] for r in of(rulings, "laid")] == ["9H", "9C"]
    assert won(rulings)[0]["reasons"] == ["standard"]


def test_questions_answered_newest_first_hold_until_the_oldest_is_named():
    rulings = judge(
        lay(1000, "4H"),
        unread(2000),
        unread(3000),
        snap(3100, 2),
        name(3500, "5C", 3000),
        name(4000, "7D", 2000),
    )
    assert [r["card"] for r in of(rulings, "laid")] == ["4H", "7D", "5C"]
    assert of(rulings, "penalty") == [{"t": 3_100_000, "event": "penalty", "seat": 2, "reason": "wrong_snap"}]


def test_a_count_out_hold_ends_in_event_time_after_the_answer():
    # Ann's K starts a count-out of 3; Bob lays an unread card, then two more that make a pair,
    # so play holds; nobody snaps: the claim window closes 3 s later, whenever the card is named.
    rulings = judge(
        lay(1000, "KH"),
        unread(1500),
        lay(2000, "3C"),
        lay(2500, "3S"),
        wait(4000),
        name(9000, "6D", 1500),
        wait(9100),
        players=2,
    )
    assert won(rulings) and won(rulings)[0]["t"] == 5_500_000 and won(rulings)[0]["by"] == "counting_out"


def test_a_held_reading_the_answer_makes_impossible_is_asked_in_its_turn():
    # The camera read 5C twice; the host names the first one, so the second must be another card.
    rulings = judge(
        lay(1000, "9H"),
        unread(2000, guess="5C"),
        lay(2500, "5C"),
        snap(2600, 0),
        name(3000, "5C", 2000),
        name(3500, "5S", 2500),
        players=2,
    )
    assert [r["card"] for r in of(rulings, "laid")] == ["9H", "5C", "5S"]
    assert won(rulings)[0]["t"] == 2_600_000 and won(rulings)[0]["reasons"] == ["standard"]


@pytest.mark.parametrize(
    ("events", "line", "words"),
    [
        ([lay(1000, "9H"), unread(2000), name(3000, "9H", 2000)], 4, "9H is already on the stack"),
        ([lay(1000, "9H"), name(3000, None, 2000)], 3, "no lay was seen at t=2000000"),
        ([lay(1000, "9H"), unread(2000), snap(2100, 1)], 3, "this lay's card was never named"),
        ([unread(2000), name(3000, "ZZ", 2000)], 3, "bad card code 'ZZ'"),
        ([unread(2000), name(3000, "5C", 4000)], 3, '"for" must be the time of the lay it names'),
        ([unread(2000), {"t": 3000000, "card": 7, "for": 2000000}], 3, '"card" must be a card code'),
        ([lay(1000, "9H", seat=0) | {"guess": "9C"}], 2, '"guess" belongs to a lay whose card is "?"'),
        ([unread(2000) | {"guess": 5}], 2, '"guess" must be a card code'),
        ([unread(2000), {"t": 3000000, "card": "5C", "for": 2000000, "by": "Ann"}], 3, "unknown key 'by'"),
    ],
)
def test_bad_question_lines_are_one_line_naming_the_line(events, line, words):
    with pytest.raises(ScriptError) as e:
        judge(*events)
    assert str(e.value).startswith(f"test:{line}: ") and words in str(e.value), str(e.value)


def _bot_script(seed: int, rules: str, players: int) -> list[dict]:
    table = VirtualTable(players=players, seed=seed, cap=300, rules=rules)
    lines = [table.spec.to_json()]
    lines += [event_to_json(p.event) for p in table.play() if p.event is not None]
    return lines


def _ask(lines: list[dict], rng: random.Random, asks: int) -> list[dict]:
    """The same script with `asks` of its lays unread, each named some lines later (or at the end)."""
    out = [dict(line) for line in lines]
    lays = [i for i, line in enumerate(out) if "lay" in line]
    answers: dict[int, list[dict]] = {}
    for i in rng.sample(lays, min(asks, len(lays))):
        card = out[i]["lay"]
        out[i] = {k: v for k, v in out[i].items() if k != "lay"} | {"lay": "?"}
        if rng.random() < 0.5:
            out[i]["guess"] = card
        at = rng.randint(i, len(out) - 1)
        answers.setdefault(at, []).append({"t": out[at]["t"], "card": card, "for": out[i]["t"]})
    script = []
    for i, line in enumerate(out):
        script.append(line)
        script += answers.get(i, [])
    return script


def _rulings(lines: list[dict]) -> list[dict]:
    return [r.to_json() for r in adjudicate([json.dumps(line) for line in lines], "test")]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rules=st.sampled_from(["celtic", "classic", "paranoid", "party"]),
    players=st.integers(2, 5),
    asks=st.integers(1, 6),
)
def test_asking_for_any_lays_and_naming_them_later_changes_no_ruling(seed, rules, players, asks):
    """Judging holds in event time: whenever the cards are named, the rulings are the game's own."""
    lines = _bot_script(seed, rules, players)
    asked = _ask(lines, random.Random(seed), asks)
    assert _rulings(asked) == _rulings(lines)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), asks=st.integers(1, 4))
def test_the_live_loop_rules_an_asked_game_as_adjudicate_does(seed, asks):
    lines = _ask(_bot_script(seed, "classic", 3), random.Random(seed), asks)
    assert judge(*lines[1:], players=list(lines[0]["game"]["players"]), rules="classic") == _rulings(lines)


# Corrections: a card named for a lay that was read (or named) already --------------------------


def told(rulings: list[dict]) -> list[dict]:
    """What a reader of the rulings holds at the end: a `corrected` line voids the last `void`
    rulings told (corrections left out), and the rulings after it replace them."""
    view: list[dict] = []
    for r in rulings:
        if r["event"] == "corrected":
            del view[len(view) - r["void"] :]
        else:
            view.append(r)
    return view


def test_a_misread_card_corrected_judges_the_rulings_since_then_again():
    # The camera read 5C as 9C, so Bob's snap on 9H 9C won a pair; the host corrects it: the
    # snap was wrong, and the stack is still on the table for Ann's sandwich on 9D.
    rulings = judge(
        lay(1000, "9H"),
        lay(2000, "9C"),
        snap(2300, 1),
        lay(3000, "9D"),
        {"t": 3500000, "card": "5C", "for": 2000000},
        snap(3600, 0),
        players=2,
    )
    corrected = of(rulings, "corrected")
    assert corrected == [
        {"t": 3_500_000, "event": "corrected", "for": 2_000_000, "card": "5C", "was": "9C", "void": 3}
    ]
    view = told(rulings)
    assert [r["card"] for r in of(view, "laid")] == ["9H", "5C", "9D"]
    assert of(view, "penalty") == [{"t": 2_300_000, "event": "penalty", "seat": 1, "reason": "wrong_snap"}]
    assert [(w["seat"], w["reasons"]) for w in won(view)] == [(0, ["sandwich"])]


def test_a_correction_that_makes_a_later_reading_impossible_asks_for_that_card():
    rulings = judge(
        lay(1000, "9H"),
        lay(2000, "9C"),
        lay(3000, "5C"),  # the camera's 5C was really another card: asked once 5C is named earlier
        {"t": 3500000, "card": "5C", "for": 2000000},
        {"t": 4000000, "card": "8D", "for": 3000000},
        players=2,
    )
    assert [r["card"] for r in of(told(rulings), "laid")] == ["9H", "5C", "8D"]


def test_a_correction_to_a_card_already_on_the_stack_is_refused():
    with pytest.raises(ScriptError, match=r"test:4: 9H is already on the stack"):
        judge(lay(1000, "9H"), lay(2000, "9C"), {"t": 3500000, "card": "9H", "for": 2000000}, players=2)


def _fixed_rulings(fixed: list[dict] | None) -> list[dict] | None:
    """The rulings of a script with a card the host fixes later; None when there is no such
    script, or when the game without the fix went wrong before it (the misread card was already
    on the stack, a face card it made up holds play): a script's error there, asked live."""
    if fixed is None:
        return None
    try:
        return _rulings(fixed)
    except ScriptError as e:
        fix_line = 1 + next(i for i, line in enumerate(fixed) if "card" in line and "for" in line)
        assert int(str(e).split(":")[1]) < fix_line, str(e)
        return None


def _misread(lines: list[dict], rng: random.Random) -> list[dict] | None:
    """The script with one lay misread as a card laid later, corrected before that later lay."""
    lays = [i for i, line in enumerate(lines) if "lay" in line]
    i = rng.choice(lays[:-1])
    later = [j for j in lays if j > i + 1 and lines[j]["lay"] != lines[i]["lay"]]
    if not later:
        return None
    m = rng.choice(later)
    wrong = lines[m]["lay"]
    if any(lines[j].get("lay") == wrong for j in range(i, m)):
        return None
    k = rng.randint(i + 1, m - 1)  # the host corrects it before the real card comes
    out = [dict(line) for line in lines]
    out[i]["lay"] = wrong
    fix = {"t": out[k]["t"], "card": lines[i]["lay"], "for": lines[i]["t"]}
    return [*out[: k + 1], fix, *out[k + 1 :]]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rules=st.sampled_from(["celtic", "classic", "paranoid", "party"]),
    players=st.integers(2, 5),
)
def test_a_misread_corrected_leaves_the_table_with_the_games_own_rulings(seed, rules, players):
    lines = _bot_script(seed, rules, players)
    rulings = _fixed_rulings(_misread(lines, random.Random(seed)))
    if rulings is not None:
        assert told(rulings) == _rulings(lines)
        assert len(of(rulings, "corrected")) == 1


def test_a_card_read_where_none_was_laid_is_taken_out_by_naming_no_card():
    rulings = judge(
        lay(1000, "9H"),
        lay(2000, "4C"),  # the pile was nudged, and the camera read a card that was never laid
        lay(3000, "9D"),
        snap(3100, 1),
        {"t": 3500000, "card": None, "for": 2000000},
        players=2,
    )
    view = told(rulings)
    assert [r["card"] for r in of(view, "laid")] == ["9H", "9D"]
    assert won(view)[0]["reasons"] == ["standard"]
    assert of(rulings, "corrected")[0]["card"] is None and of(rulings, "corrected")[0]["was"] == "4C"


def test_a_card_the_camera_missed_goes_in_at_its_time():
    rulings = judge(
        lay(1000, "9H"),
        # 5C laid at 2 s, not seen
        lay(3000, "9D"),  # read as Bob's, but it was Ann's: 9H 5C 9D
        snap(3100, 1),
        {"t": 4000000, "card": "5C", "for": 2000000},
        players=2,
    )
    view = told(rulings)
    assert [(r["seat"], r["card"]) for r in of(view, "laid")] == [(0, "9H"), (1, "5C"), (0, "9D")]
    assert won(view)[0]["seat"] == 1 and won(view)[0]["reasons"] == ["sandwich"]
    assert of(rulings, "corrected")[0]["was"] is None


def _missed(lines: list[dict], rng: random.Random) -> list[dict] | None:
    """The script with one lay in turn missed by the camera, added by the host some lines later."""
    lays = [i for i, line in enumerate(lines) if "lay" in line and "seat" not in line]
    if len(lays) < 2:
        return None
    i = rng.choice(lays[:-1])
    k = rng.randint(i + 1, len(lines) - 1)
    fix = {"t": lines[k]["t"], "card": lines[i]["lay"], "for": lines[i]["t"]}
    return [*lines[:i], *lines[i + 1 : k + 1], fix, *lines[k + 1 :]]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rules=st.sampled_from(["celtic", "classic", "paranoid", "party"]),
    players=st.integers(2, 5),
)
def test_a_missed_card_added_later_leaves_the_table_with_the_games_own_rulings(seed, rules, players):
    lines = _bot_script(seed, rules, players)
    rulings = _fixed_rulings(_missed(lines, random.Random(seed)))
    if rulings is not None:
        assert told(rulings) == _rulings(lines)
