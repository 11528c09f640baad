"""The presets everywhere a preset is chosen and shown: the demo (`--rules`), the bots, the
kiosk's words and view, the lights and buzzer, and the host's rules choice. The referee
cannot move cards, so every burn, hand-over, seat out and card taken back is announced
as an instruction: in words, and on the seat's light (one flash per card to pay)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from referee.cards import parse_card
from referee.errors import UserError
from referee.kiosk.view import TableView
from referee.rules.announcer import (
    BUZZ_HZ,
    COUNT_HZ,
    RED,
    Announcer,
    burned,
    pattern,
    seat,
    seat_out,
    take_back,
)
from referee.rules.engine import finish, step
from referee.rules.presets import PRESETS
from referee.rules.ruling_text import runner_up, say, slapper
from referee.rules.rulings import Burned, GameWon, Laid, Penalty, SeatOut, SnapIgnored, StackWon, TakeBack
from referee.rules.script import adjudicate, read_script
from referee.sim.bots import VirtualTable
from referee.sim.demo import describe, run_demo
from referee.sim.demo_table import DemoTable

from .helpers import game, lay, snap
from .test_demo import demo_args

NAMES = ("Ann", "Bob", "Cy")
PRESET_NAMES = sorted(PRESETS)


# The demo and the bots -------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ["classic", "paranoid", "party"])
def test_referee_demo_rules_plays_a_whole_game_of_the_preset(rules, tmp_path: Path):
    out = io.StringIO()
    status = run_demo(demo_args(rules=rules, data_dir=str(tmp_path), players=4, seed=2), out)
    text = out.getvalue()
    assert status == 0 and "WINS THE GAME" in text and " wins after " in text
    assert "Challenges" in text  # the summary counts the challenge's awards


def test_referee_demo_with_unknown_rules_is_a_one_line_error(tmp_path: Path):
    with pytest.raises(
        UserError, match=r"^--rules: unknown rules 'snap' \(known: celtic, classic, paranoid, party\)$"
    ):
        run_demo(demo_args(rules="snap", data_dir=str(tmp_path)), io.StringIO())


@pytest.mark.parametrize("rules", ["classic", "paranoid", "party"])
def test_the_demos_script_names_its_preset_and_adjudicates_to_the_same_rulings(rules):
    out = io.StringIO()
    assert run_demo(demo_args(rules=rules, json=True, seed=4), out) == 0
    lines = out.getvalue().splitlines()
    assert json.loads(lines[0])["game"]["rules"] == rules
    recorded = [line for line in lines[1:] if '"event"' in line]
    assert [json.dumps(r.to_json()) for r in adjudicate(lines)] == recorded


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_bot_games_of_every_preset_end_with_a_winner_and_every_card_accounted_for(rules):
    for seed in range(4):
        for players in (2, 3, 5, 8):
            table = VirtualTable(players=players, seed=seed, rules=rules)
            last = None
            for play in table.play():
                last = play
                assert play.state.cards_in_play() == 52
            assert last is not None and last.state.over and not table.stopped
            assert type(last.rulings[-1]) is GameWon


@pytest.mark.parametrize("rules", ["classic", "paranoid", "party"])
def test_the_live_table_rules_a_bot_game_as_the_bots_referee_did(rules):
    """Through mock pins, bouncing presses and the reorder buffer (`referee demo`'s path)."""
    own = None
    for play in VirtualTable(players=4, seed=7, rules=rules).play():
        own = play.state
    final = DemoTable(VirtualTable(players=4, seed=7, rules=rules)).run()
    assert own is not None and (final.winner, final.hands, final.laid) == (own.winner, own.hands, own.laid)


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_the_kiosks_words_are_the_demos_words_for_every_preset(rules):
    """`ruling_text.say` mirrors `demo.describe` (colours, padding and clock aside)."""
    seen: set[str] = set()
    said: list[str] = []
    calls = PRESETS[rules]().options.slap_calling_out
    for seed in (1, 2):
        table = VirtualTable(players=4, seed=seed, rules=rules)
        names = table.spec.players
        for play in table.play():
            for i, ruling in enumerate(play.rulings):
                after, before = play.rulings[i + 1 :], play.rulings[:i]
                seen.add(ruling.event)
                demo_words = " ".join(describe(ruling, names, after, before, calls).plain.split()[1:])
                words = say(ruling, names, runner_up(ruling, after), slapper(before), calls)
                assert " ".join(words.split()) == demo_words
                said.append(words)
    if rules != "celtic":
        assert "burned" in seen or "take_back" in seen
    # Only celtic calls out: the other games' lays say no call (a number that means nothing there).
    lays = [w for w in said if " lays " in w]
    assert lays and all((" call " in w) == (rules == "celtic") for w in lays)
    if rules == "classic":  # a wrong slap hands the stack over: the words name who slapped
        handed = [w for w in said if "by penalty" in w]
        assert handed and all(w.endswith("'s wrong slap") or "'s wrong slap," in w for w in handed)


# Instructions: the words -----------------------------------------------------------------------


CARD = parse_card("7D")


@pytest.mark.parametrize(
    ("ruling", "words"),
    [
        (Burned(0, 1, 2, "stack"), "Bob puts 2 cards from the top of the pile face down under the stack"),
        (
            Burned(0, 0, 5, "penalty_pile"),
            "Ann puts 5 cards from the top of the pile face down on the penalty pile",
        ),
        (
            SeatOut(0, 2, "wrong_snaps_in_a_row", 17),
            "Cy is OUT of the game (wrong slaps on cards in a row): "
            "put all 17 cards face down under the stack",
        ),
        (SeatOut(0, 2, "wrong_snap_no_cards", 0), "Cy is OUT of the game (a wrong slap with no cards)"),
        (TakeBack(0, 2, CARD), "Cy takes 7♦ back: set it aside and lay it on your turn"),
        (
            StackWon(0, 1, "claim", ("claim",), 9, None, 1, 5),
            "Bob CLAIMS 9 cards (claim), the penalty pile's 5 included",
        ),
        (
            StackWon(0, 2, "challenge", (), 8, None, 2),
            "Cy takes 8 cards by challenge: the face card was not answered",
        ),
        (StackWon(0, 1, "penalty", (), 2, None, 1), "Bob takes 2 cards by penalty: a wrong slap"),
        (Penalty(0, 1, "wrong_snap", False), "Bob wrong snap: penalty"),
        (Penalty(0, 1, "wrong_snap"), "Bob wrong snap: penalised until another seat wins a stack"),
        (SnapIgnored(0, 2, "not_in_game"), "Cy snap ignored: no cards, and nothing to slap"),
        (SnapIgnored(0, 2, "out"), "Cy snap ignored: out of the game"),
        (GameWon(0, 1, "triple"), "Bob slapped a TRIPLE and WINS THE GAME"),
        (GameWon(0, 0, "last_seat_in"), "Ann is the last seat in and WINS THE GAME"),
        (Laid(0, 1, CARD, 2, 3, 1, False, True), "Bob lays 7♦ call 2 chances 3"),
        (Laid(0, 1, CARD, 2, 3, 2), "Bob lays 7♦ call 2 count-out 3"),
    ],
)
def test_every_ruling_of_the_presets_says_what_to_do(ruling, words):
    assert say(ruling, NAMES) == words
    assert " ".join(describe(ruling, NAMES).plain.split()[1:]) == " ".join(words.split())


# Instructions: the lights and the buzzer ----------------------------------------------------------


def test_a_burn_flashes_the_seats_light_once_per_card_after_the_penalty_buzz():
    cues = burned(1, 3)
    flashes = [c for c in cues if c.target == seat(1) and c.value == 1.0]
    clicks = [c for c in cues if c.target == "buzzer" and c.value == COUNT_HZ]
    assert len(flashes) == len(clicks) == 3
    assert next(c.value for c in cues if c.target == "buzzer") == BUZZ_HZ
    assert all(c.at_us >= 300_000 for c in flashes + clicks)  # after the buzz
    assert pattern(Burned(0, 1, 3, "stack"), 3)[1] == cues


def test_a_seat_out_and_a_card_taken_back_have_patterns_of_their_own():
    assert any(c.target == "status" and c.value == RED for c in seat_out(2))
    assert len([c for c in take_back(0) if c.target == seat(0) and c.value == 1.0]) == 2
    assert pattern(SeatOut(0, 2, "wrong_snap_no_cards", 0), 3)[1] == seat_out(2)
    assert pattern(TakeBack(0, 0, CARD), 3)[1] == take_back(0)


def test_a_card_penalty_does_not_blink_the_seat_as_celtics_bar_does():
    barred, paid = Announcer(3), Announcer(3)
    barred.announce(Penalty(0, 1, "wrong_snap"), 0)
    paid.announce(Penalty(0, 1, "wrong_snap", False), 0)
    barred.due(2_000_000), paid.due(2_000_000)
    assert barred.next_due() is not None  # the blink goes on
    assert paid.next_due() is None


# The kiosk ----------------------------------------------------------------------------------------


def watch(*events, **extra):
    lines = [json.dumps(game(3, **extra)), *(json.dumps(e) for e in events)]
    items = read_script(lines, "test")
    state = next(items)[1]
    table = TableView(state)
    for _, event in items:
        state, rulings = step(state, event)
        for ruling in rulings:
            table.add(ruling)
        table.update(state)
    state, rulings = finish(state)
    for ruling in rulings:
        table.add(ruling)
    table.update(state)
    return table.view()


def test_the_kiosk_shows_the_preset_the_penalty_pile_and_the_instruction():
    view = watch(lay(1000, "5H"), snap(1300, 1), rules="paranoid")
    assert view["game"]["rules"] == "paranoid" and view["game"]["face_cards"] == "challenge"
    assert view["game"]["presets"] == ["celtic", "classic", "paranoid", "party"]
    assert view["stack"]["penalty_pile"] == 5 and view["players"][1]["cards"] == 12
    assert view["last"]["text"] == "Bob puts 5 cards from the top of the pile face down on the penalty pile"


def test_the_kiosk_marks_a_seat_out_of_the_game():
    view = watch(lay(1000, "5H"), snap(1300, 1), rules="party", hand_sizes=[2, 0, 2])
    assert [p["out"] for p in view["players"]] == [False, True, False]


def test_the_hosts_rules_choice_offers_every_preset(tmp_path: Path):
    from .test_host import _command, _table

    journal, loop, _, commands = _table(tmp_path)
    assert _command(loop, lambda: commands.set_rules("party")) == "rules party from the next new game"
    assert _command(loop, commands.new_game).endswith("(party)")
    assert loop.state.rules.name == "party"
    journal.close()
