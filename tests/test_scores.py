"""The night's scores (issue 21, item 5): journaled games replayed into one table.

An example night written by hand, whose every figure is worked out in the comments; then
invariants over seeded bot games of every preset (hypothesis, derandomized): stacks by snap +
by count-out + other = stacks won, histogram counts = valid snaps, the records are the
smallest of their kind, the night is the sum of its games, and a game whose lays were asked
and answered scores as the same game read at once. The scores' own replay of a game (each
asked lay with its named card, a host's correction written in) gives exactly the rulings
still standing, as the kiosk's view keeps them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.kiosk.view import BIN_EDGES_MS
from referee.live.journal import ABANDONED, OPEN, WON, EventRecord, GameRecord, Journal
from referee.live.replay import _items, replay
from referee.live.scores import (
    bin_of,
    effective_events,
    night,
    night_json,
    score_game,
    since_started,
)
from referee.rules.engine import step
from referee.rules.events import Lay, Named, Unread
from referee.rules.questions import Judging, take
from referee.rules.rulings import Corrected, Ruling
from referee.rules.script import event_to_json
from referee.sim.bots import VirtualTable

from .helpers import lay, snap, wait

ABC = ["Ann", "Bob", "Cy"]


def spec(players: Sequence[str], rules: str = "celtic", **extra: Any) -> dict[str, Any]:
    return {"game": {"players": list(players), "rules": rules, "options": {}, **extra}}


def journal_game(
    journal: Journal, game: dict[str, Any], lines: Sequence[dict[str, Any]], status: str, winner: int | None
) -> int:
    gid = journal.new_game(game, "test")
    for seq, line in enumerate(lines):
        journal.append(gid, seq, line)
    if status != OPEN:
        journal.end_game(gid, status, winner)
    return gid


def scored(journal: Journal) -> list[Any]:
    return [score_game(g, journal.events(g.id)) for g in journal.games()]


# Game 1 (celtic, Ann Bob Cy; Cy wins it):
#   the pair 7C 7D is good from 2.000 s: Bob snaps at 2.250 (250 ms) and beats Cy (2.260, 260 ms)
#   by 10 ms; Ann snaps on 9S alone: a wrong snap; the pair 2C 2D, good from 5.500 s, stays good
#   under 6H (scan: stack): Cy's snap at 6.400 is timed from 5.500 (900 ms), not from 6H; 8H on
#   call 8 is good (calling out) but 3S ends it; the sandwich 8H 3S 8D is good from 9.000 s: Cy
#   at 9.180 (180 ms) beats Bob (9.181, 181 ms) by 1 ms. Cy won the last two stacks in a row.
NIGHT_1 = [
    lay(1000, "5H"),
    lay(1500, "7C"),
    lay(2000, "7D"),
    snap(2250, 1),
    snap(2260, 2),
    wait(3000),
    lay(4000, "9S"),
    snap(4300, 0),
    lay(5000, "2C"),
    lay(5500, "2D"),
    lay(6000, "6H"),
    snap(6400, 2),
    wait(7000),
    lay(8000, "8H"),
    lay(8500, "3S"),
    lay(9000, "8D"),
    snap(9180, 2),
    snap(9181, 1),
    wait(10000),
]
# Game 2 (celtic, "ann" Bob Dee; ann wins it): ann's jack counts out against Bob's 4C (a stack by
# count-out); ann and Dee press at the same microsecond on the pair 5S 5D: a dead heat, 300 ms
# each; the pair stays good under 9C, and Dee takes it at 8.200 s, 1.7 s after the pair.
NIGHT_2 = [
    lay(1000, "JH"),
    lay(1600, "4C"),
    wait(4700),
    lay(6000, "5S"),
    lay(6500, "5D"),
    snap(6800, 0),
    snap(6800, 2),
    wait(7500),
    lay(8000, "9C"),
    snap(8200, 2),
    wait(9000),
]


def hand_night(folder: Path) -> Journal:
    """Five games: the two above, then Cy wins game 3, game 4 is abandoned, Cy wins game 5."""
    journal = Journal.open(folder)
    journal_game(journal, spec(ABC), NIGHT_1, WON, 2)
    journal_game(journal, spec(["ann", "Bob", "Dee"]), NIGHT_2, WON, 0)
    journal_game(journal, spec(ABC), [lay(1000, "5H")], WON, 2)
    journal_game(journal, spec(ABC), [lay(1000, "6H")], ABANDONED, None)
    journal_game(journal, spec(ABC), [lay(1000, "7H")], WON, 2)
    return journal


def test_a_hand_written_night_gives_every_figure_worked_out_by_hand(tmp_path: Path) -> None:
    journal = hand_night(tmp_path)
    table = night_json(night(scored(journal)))
    journal.close()
    rows = {p["name"]: p for p in table["players"]}
    assert [p["name"] for p in table["players"]] == ["Cy", "Ann", "Bob", "Dee"]  # most won first
    assert rows["Ann"]["games"] == 5  # "ann" of game 2 is Ann: names compared without case
    assert [(rows[n]["games"], rows[n]["won"]) for n in ("Cy", "Ann", "Bob", "Dee")] == [
        (4, 3),
        (5, 1),
        (5, 0),
        (1, 0),
    ]
    figures = ("stacks", "by_snap", "by_count_out", "by_other", "wrong_snaps", "valid_snaps", "dead_heats")
    assert {n: [rows[n][k] for k in figures] for n in rows} == {
        "Cy": [2, 2, 0, 0, 0, 3, 0],
        "Ann": [1, 0, 1, 0, 1, 1, 1],
        "Bob": [1, 1, 0, 0, 0, 2, 0],
        "Dee": [1, 1, 0, 0, 0, 2, 1],
    }
    assert table["fastest"] == {"name": "Cy", "us": 180_000, "game": 1}
    assert table["closest"] == {"name": "Cy", "beat": "Bob", "us": 1_000, "game": 1}
    # Cy won games 1, 3 and 5: game 2 (ann's) broke the run, game 4 (nobody's) did not.
    assert table["streaks"] == {
        "games": {"name": "Cy", "count": 2},
        "stacks": {"name": "Cy", "count": 2, "game": 1},
    }
    assert (rows["Cy"]["fastest_us"], rows["Bob"]["fastest_us"], rows["Dee"]["fastest_us"]) == (
        180_000,
        250_000,
        1_700_000,
    )
    assert rows["Ann"]["fastest_us"] is None  # a dead heat wins nothing
    assert rows["Cy"]["median_ms"] == 260.0  # 180, 260, 900
    bins = rows["Cy"]["reaction_bins"]
    assert len(bins) == len(BIN_EDGES_MS) + 1 and sum(bins) == 3
    assert bins[bin_of(180_000)] == bins[bin_of(260_000)] == bins[-1] == 1  # 900 ms: above the last edge
    assert [(g["game"], g["status"], g["winner"]) for g in table["games"]] == [
        (1, "won", "Cy"),
        (2, "won", "ann"),
        (3, "won", "Cy"),
        (4, "abandoned", None),
        (5, "won", "Cy"),
    ]
    json.dumps(table)  # plain values only


def test_the_bins_match_the_winner_screens_edges() -> None:
    assert bin_of(99_999) == 0 and bin_of(100_000) == 1 and bin_of(124_999) == 1
    assert bin_of(500_000) == len(BIN_EDGES_MS) and bin_of(10**9) == len(BIN_EDGES_MS)


def test_an_answered_question_and_a_hosts_correction_score_the_game_as_finally_judged(tmp_path: Path) -> None:
    """Game 1's first stack, the pair's second card asked (answered 7D), and then the 5H read
    as 9H corrected: Bob's snap wins as it did, timed from the named 7D."""
    journal = Journal.open(tmp_path)
    lines = [
        lay(1000, "9H"),  # misread: the host corrects it to 5H at the end
        lay(1500, "7C"),
        event_to_json(Unread(2_000_000, None, None)),  # asked
        snap(2250, 1),
        snap(2260, 2),
        wait(3000),
        event_to_json(Named(3_000_000, 2_000_000, _card("7D"))),  # answered: the snap is judged then
        event_to_json(Named(3_100_000, 1_000_000, _card("5H"))),  # a correction: judged again
    ]
    journal_game(journal, spec(ABC), lines, OPEN, None)
    journal_game(journal, spec(ABC), NIGHT_1[:6], OPEN, None)  # the same, read right at once
    (asked, plain) = scored(journal)
    assert (asked.stacks, asked.presses, asked.races) == (plain.stacks, plain.presses, plain.races)
    assert [(p.seat, p.reaction_us, p.outcome) for p in asked.presses] == [
        (1, 250_000, "won"),
        (2, 260_000, "beaten"),
    ]
    game = journal.games()[0]
    events = list(journal.events(game.id))
    assert replayed(game, events) == standing(game, events)
    journal.close()


def _card(code: str) -> Any:
    from referee.cards import parse_card

    return parse_card(code)


def test_since_started_keeps_the_games_from_that_time_on() -> None:
    def at(gid: int, started: str) -> GameRecord:
        return GameRecord(gid, spec(ABC), started, None, OPEN, None, None, 0, None, None)

    games = [at(1, "2026-11-27T04:59:00+00:00"), at(2, "2026-11-27T05:00:00+00:00"), at(3, "bad")]
    cut = datetime(2026, 11, 27, 6, 0, tzinfo=timezone(timedelta(hours=1)))  # 05:00 UTC
    assert [g.id for g in since_started(games, cut)] == [2, 3]  # a start that is no time is kept
    assert [g.id for g in since_started(games, datetime(2000, 1, 1, tzinfo=UTC))] == [1, 2, 3]


# Invariants over bot games ---------------------------------------------------------------

PRESETS = ("celtic", "classic", "paranoid", "party")


def bot_lines(players: int, seed: int, rules: str, cards: int) -> tuple[dict[str, Any], list[Any], Any]:
    table = VirtualTable(players=players, seed=seed, rules=rules, cards=cards, cap=300)
    events, state = [], table.spec.new_game()
    for play in table.play():
        if play.event is not None:
            events.append(play.event)
        state = play.state
    return table.spec.to_json(), events, state


def asked(events: list[Any], rng: random.Random, share: float) -> list[dict[str, Any]]:
    """The same events with some lays asked (Unread) and each answered with its card a few
    events later, at the time of the event before the answer."""
    lines: list[dict[str, Any]] = []
    answers: list[tuple[int, Named]] = []  # (index to answer after, answer)
    for i, event in enumerate(events):
        if type(event) is Lay and rng.random() < share and not answers:
            lines.append(event_to_json(Unread(event.t, event.seat, None)))
            answers.append((i + rng.randint(0, 3), Named(event.t, event.t, event.card)))
        else:
            lines.append(event_to_json(event))
        due = [a for a in answers if a[0] <= i]
        for a in due:
            lines.append(event_to_json(a[1]._replace(t=event.t)))
            answers.remove(a)
    for _, answer in answers:
        lines.append(event_to_json(answer._replace(t=events[-1].t)))
    return lines


games = st.lists(
    st.tuples(
        st.integers(2, 8),  # players
        st.integers(1, 10_000),  # seed
        st.sampled_from(PRESETS),
        st.sampled_from([12, 24, 52]),  # cards dealt: short games too (and at most 300 lays)
        st.sampled_from([WON, ABANDONED, OPEN]),
    ),
    min_size=1,
    max_size=4,
)


def record(
    gid: int, game: dict[str, Any], lines: list[dict[str, Any]], status: str, winner: int | None = None
) -> Any:
    """A journaled game as `Journal.games` and `Journal.events` hand it over: the scores are a
    pure function of these records, so the property test needs no file."""
    started = "2026-11-27T20:00:00+00:00"
    game_record = GameRecord(gid, game, started, None, status, winner, "test", len(lines), None, None)
    return game_record, [EventRecord(seq, line, None) for seq, line in enumerate(lines)]


def standing(game: Any, events: list[Any]) -> list[Ruling]:
    """The rulings still standing, as the kiosk's view keeps them: a `Corrected` voids the last
    `void` rulings told, and the re-judged ones follow."""
    items = _items(game, events)
    judging = Judging(next(items)[1])  # type: ignore[arg-type]
    told: list[Ruling] = []
    for _, item in items:
        judging, rulings = take(judging, item)  # type: ignore[arg-type]
        for ruling in rulings:
            if type(ruling) is Corrected:
                del told[len(told) - ruling.void :]
            else:
                told.append(ruling)
    return told


def replayed(game: Any, events: list[Any]) -> list[Ruling]:
    """The rulings of the scores' own replay: the engine over `effective_events`."""
    judging = replay(game, events)
    state = judging.start if judging.start is not None else judging.state
    out: list[Ruling] = []
    for event in effective_events(judging.items()):
        state, rulings = step(state, event)
        out += rulings
    return out


@settings(max_examples=20, deadline=None)
@given(games=games, ask_seed=st.integers(0, 1000))
def test_the_nights_invariants_hold_over_bot_games(games: list[Any], ask_seed: int) -> None:
    rng = random.Random(ask_seed)
    plain_scores = []
    for gid, (players, seed, rules, cards, status) in enumerate(games, 1):
        game, events, state = bot_lines(players, seed, rules, cards)
        winner = state.winner if status == WON else None
        plain_scores.append(
            score_game(*record(gid, game, [event_to_json(e) for e in events], status, winner))
        )
        # The same game with lays asked and answered scores the same.
        again_record = record(gid, game, asked(events, rng, 0.1), status, winner)
        again = score_game(*again_record)
        first = plain_scores[-1]
        assert (again.stacks, again.presses, again.races, again.wrong_snaps) == (
            first.stacks,
            first.presses,
            first.races,
            first.wrong_snaps,
        )
        assert replayed(*again_record) == standing(*again_record)
    table = night(plain_scores)
    rows = night_json(table)["players"]
    for p in rows:
        assert p["by_snap"] + p["by_count_out"] + p["by_other"] == p["stacks"]
        assert sum(p["reaction_bins"]) == p["valid_snaps"]
        assert p["won"] <= p["games"] and p["games_in_a_row"] <= p["won"]
        assert p["dead_heats"] <= p["valid_snaps"]
    for player in table.players:
        assert all(us >= 0 for us in player.reactions_us)
    assert sum(p["stacks"] for p in rows) == sum(len(g.stacks) for g in plain_scores)
    assert sum(p["won"] for p in rows) == sum(1 for g in plain_scores if g.winner is not None)
    presses = [p for g in plain_scores for p in g.presses]
    assert sum(p["valid_snaps"] for p in rows) == len(presses)
    wins = [p.reaction_us for p in presses if p.outcome == "won"]
    assert (table.fastest is None) == (not wins)
    if table.fastest is not None:
        assert table.fastest[1] == min(wins)
    margins = [r.margin_us for g in plain_scores for r in g.races]
    assert (table.closest[2] if table.closest is not None else None) == (min(margins) if margins else None)
    # The night is the sum of its games.
    singles = [night([g]) for g in plain_scores]
    for p in table.players:
        parts = [q for s in singles for q in s.players if q.name.casefold() == p.name.casefold()]
        assert p.stacks == sum(q.stacks for q in parts) and p.wrong_snaps == sum(q.wrong_snaps for q in parts)
        assert sorted(p.reactions_us) == sorted(us for q in parts for us in q.reactions_us)


def test_reaction_times_are_the_bots_own_where_a_snap_is_good_for_one_card_only() -> None:
    """With slaps judged on the top only (classic), a stack is good from the lay the bots react
    to: the scores' reaction times are the bots' own, press for press."""
    table = VirtualTable(players=4, seed=2, rules="classic")
    lines = [event_to_json(play.event) for play in table.play() if play.event is not None]
    scores = score_game(*record(1, table.spec.to_json(), lines, ABANDONED))
    for seat in range(4):
        mine = sorted(p.reaction_us for p in scores.presses if p.seat == seat)
        assert mine and mine == sorted(table.reactions[seat])
