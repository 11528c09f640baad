"""The kiosk's view of the table, built from scripted games: what the screen is given to show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hardware.presses import ButtonTrouble
from referee.cards import parse_card
from referee.kiosk.view import BIN_EDGES_MS, LOG_LINES, TableView, clock, kept_marks, marked_again
from referee.live.host import _view_of, view_of
from referee.rules.engine import finish, step
from referee.rules.questions import Judging, take
from referee.rules.ruling_text import runner_up, say
from referee.rules.rulings import Laid, Ruling
from referee.rules.script import read_script
from referee.sim.bots import VirtualTable
from referee.sim.demo import Summary, describe
from tests.helpers import game, lay, snap, wait

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def watch(lines: list[str], **view_args: Any) -> tuple[TableView, list[dict[str, Any]]]:
    """A script judged event by event; the view after each event (and after the end)."""
    items = read_script(lines, "test")
    state = next(items)[1]
    table = TableView(state, **view_args)
    views = [table.view()]
    for _, event in items:
        state, rulings = step(state, event)
        for ruling in rulings:
            table.add(ruling)
        table.update(state)
        views.append(table.view())
    state, rulings = finish(state)
    for ruling in rulings:
        table.add(ruling)
    table.update(state)
    views.append(table.view())
    return table, views


def script(*events: dict[str, Any], players: Any = 3, **extra: Any) -> list[str]:
    return [json.dumps(game(players, **extra)), *(json.dumps(e) for e in events)]


def example(name: str) -> list[str]:
    return (EXAMPLES / f"{name}.jsonl").read_text().splitlines()


def test_a_race_names_the_winner_the_runner_up_and_the_margin():
    _, views = watch(example("race-and-late-press"))
    last = views[-1]["last"]
    assert last["text"] == "Bob SNAP! takes 3 cards (sandwich) — beats Ann by 12.4 ms"
    assert (last["name"], last["beaten"], last["margin_ms"], last["reasons"]) == (
        "Bob",
        "Ann",
        12.4,
        ["sandwich"],
    )
    assert last["ruling"]["event"] == "stack_won"
    # Late presses go to the log, not the banner: the win stays the last ruling.
    assert [e["text"] for e in views[-1]["log"][-3:]] == [
        "Ann snap 12.4 ms late",
        "Cy snap 90.0 ms late",
        "Bob lays 4♠ call 4",
    ]
    assert [p["cards"] for p in views[-1]["players"]] == [17, 18, 16]


def test_reactions_are_measured_from_the_card_the_press_answered():
    _, views = watch(example("race-and-late-press"))
    stats = views[-1]["stats"]
    # 9D was laid at 2.200 s: Bob pressed 210 ms later, Ann 222.4 ms, Cy 300 ms.
    assert [s["mean_ms"] for s in stats] == [222.4, 210.0, 300.0]
    assert [s["median_ms"] for s in stats] == [222.4, 210.0, 300.0]
    assert [s["reactions"] for s in stats] == [1, 1, 1]
    bin_of = {ms: sum(1 for edge in BIN_EDGES_MS if ms >= edge) for ms in (222.4, 210.0, 300.0)}
    assert stats[1]["reaction_bins"][bin_of[210.0]] == 1 and sum(stats[1]["reaction_bins"]) == 1
    assert stats[2]["reaction_bins"][bin_of[300.0]] == 1
    assert stats[1]["snaps_by_reason"] == [{"reason": "sandwich", "words": "sandwich", "count": 1}]
    assert (stats[0]["late"], stats[2]["late"], stats[1]["won_by"]["snap"]) == (1, 1, 1)


def test_the_winners_own_second_tap_is_no_reaction():
    lines = script(lay(1000, "9H"), lay(1600, "9D"), snap(1800, 1), snap(1950, 1), snap(1990, 0), wait(4000))
    _, views = watch(lines)
    stats = views[-1]["stats"]
    assert stats[1]["reactions"] == 1 and stats[1]["mean_ms"] == 200.0
    assert stats[0]["reactions"] == 1 and stats[0]["mean_ms"] == 390.0
    assert views[-1]["last"]["beaten"] == "Ann"


def test_the_call_is_the_number_for_the_next_card_and_the_top_cards_read_top_last():
    lines = script(
        *(lay(1000 + 500 * i, card) for i, card in enumerate(["2H", "3C", "7D", "10S", "4C", "6D"]))
    )
    _, views = watch(lines)
    first, after_one, end = views[0], views[1], views[-1]
    assert first["call"] == {"next": 1, "next_rank": "A", "top": None, "top_matched": False}
    assert after_one["call"] == {"next": 2, "next_rank": "2", "top": 1, "top_matched": False}
    assert end["call"]["next"] == 7 and end["call"]["top"] == 6 and end["call"]["top_matched"] is True
    assert end["stack"]["size"] == 6
    assert [c["code"] for c in end["stack"]["top"]] == ["3C", "7D", "10S", "4C", "6D"]
    assert end["stack"]["top"][-1] == {"code": "6D", "rank": "6", "suit": "D", "symbol": "6♦", "red": True}
    assert end["stack"]["top"][2]["red"] is False


def test_a_count_out_counts_down_then_holds_for_a_snap():
    _, views = watch(example("counting-out-hold"))
    after_king = views[1]
    assert after_king["count_out"] == {"owner": 0, "name": "Ann", "left": 3}
    assert [p["count_owner"] for p in after_king["players"]] == [True, False, False]
    assert after_king["turn"] == {"seat": 1, "name": "Bob"}
    held = views[4]
    assert held["count_out"]["left"] == 0 and held["turn"] is None
    assert held["hold"] == {"by": "counting_out", "owner": 0, "name": "Ann", "ms_left": 3000}
    assert [p["led"]["level"] for p in held["players"]] == [0.0, 0.0, 0.0]  # nobody is on turn
    awarded = views[5]
    assert awarded["hold"] is None and awarded["count_out"] is None
    assert awarded["last"]["text"] == "Ann takes 4 cards by counting out"
    assert awarded["stats"][0]["won_by"] == {"snap": 0, "counting_out": 1, "stall": 0}


def test_penalties_show_on_the_seat_and_its_light_blinks():
    _, views = watch(example("penalties"))
    after_wrong = views[3]  # the press is judged once time moves past it: at the next lay
    bob = after_wrong["players"][1]
    assert bob["penalised"] is True and bob["led"] == {"level": 0.0, "blink": True}
    assert views[1]["players"][1]["led"] == {"level": 0.25, "blink": False}
    assert after_wrong["last"]["text"] == "Bob wrong snap: penalised until another seat wins a stack"
    end = views[-1]["stats"][1]
    assert (end["wrong_snaps"], end["out_of_turn"]) == (2, 1)
    assert "Bob laid out of turn: penalised until another seat wins a stack" in [
        e["text"] for e in views[-1]["log"]
    ]


def test_a_dead_heat_is_the_last_ruling_and_both_reactions_count():
    _, views = watch(example("dead-heat"))
    dead = views[5]["last"]
    assert (
        dead["event"] == "snap_ignored"
        and dead["text"] == "Cy dead heat: pressed at the same microsecond, no winner"
    )
    stats = views[-1]["stats"]
    assert [s["dead_heats"] for s in stats] == [1, 0, 1]
    assert [s["mean_ms"] for s in stats] == [300.0, 400.0, 300.0]


def test_the_game_won_shows_the_winner_and_lights_their_seat():
    lines = script(lay(1000, "5H"), lay(1500, "5S"), snap(1700, 0), wait(3000), players=2, hand_sizes=[1, 1])
    _, views = watch(lines)
    end = views[-1]
    assert end["winner"] == {"seat": 0, "name": "Ann"}
    assert end["last"]["text"] == "Ann holds every card and WINS THE GAME"
    assert end["log"][-2]["text"] == "Ann SNAP! takes 2 cards (pair)"
    assert [p["led"]["level"] for p in end["players"]] == [1.0, 0.0]
    assert [p["cards"] for p in end["players"]] == [2, 0]
    assert views[2]["winner"] is None


def test_the_log_keeps_the_last_lines_and_the_clock_counts_from_the_first_ruling():
    cards = ["2H", "3C", "7D", "10S", "4C", "6D", "8H", "9C", "5S"]
    lines = script(*(lay(1000 + 500 * i, card) for i, card in enumerate(cards)))
    _, views = watch(lines, log_lines=4)
    log = views[-1]["log"]
    assert [e["seq"] for e in log] == [6, 7, 8, 9]
    assert log[0]["clock"] == "0:02.5" and log[0]["text"] == "Cy lays 6♦ call 6"
    assert views[1]["log"][0]["clock"] == "0:00.0"
    assert LOG_LINES == 50
    assert clock(61_250_000) == "1:01.2" and clock(0) == "0:00.0"


def test_out_of_turn_cards_slid_under_still_leave_the_top_cards_in_order():
    lines = script(
        lay(1000, "2H"), lay(1500, "3C"), lay(1700, "9S", seat=0), options={"out_of_turn_card": "under"}
    )
    _, views = watch(lines)
    assert [c["code"] for c in views[-1]["stack"]["top"]] == ["9S", "2H", "3C"]


def test_a_joker_has_a_face_of_its_own():
    _, views = watch(script(lay(1000, "JOKER"), deck=54))
    assert views[-1]["stack"]["top"] == [
        {"code": "JOKER", "rank": "JOKER", "suit": "", "symbol": "JOKER", "red": False}
    ]


def test_button_troubles_a_pause_and_live_signals_are_shown():
    table, _ = watch(example("race-and-late-press"))
    table.trouble(ButtonTrouble(2, 5_000_000, "stuck"))
    table.trouble(ButtonTrouble(0, 5_000_000, "chattering"))
    table.pause("camera lost: the game is paused")
    view = table.view()
    assert view["alerts"] == {
        "paused": "camera lost: the game is paused",
        "messages": ["Ann's button chatters", "Cy's button is stuck down"],
    }
    assert [p["trouble"] for p in view["players"]] == ["chattering", None, "stuck"]
    assert view["signals"] == {"live": False, "status": None, "buzzer_hz": None}
    table.trouble(ButtonTrouble(2, 6_000_000, "recovered"))
    table.resume()
    table.signal(("seat", 1), 1.0)
    table.signal("status", (0.0, 1.0, 0.0))
    table.signal("buzzer", 880)
    view = table.view()
    assert view["alerts"] == {"paused": None, "messages": ["Ann's button chatters"]}
    assert [p["led"] for p in view["players"]] == [
        {"level": 0.0, "blink": False},
        {"level": 1.0, "blink": False},
        {"level": 0.0, "blink": False},
    ]
    assert view["signals"] == {"live": True, "status": [0.0, 1.0, 0.0], "buzzer_hz": 880}
    table.signal("buzzer", None)
    assert table.view()["signals"]["buzzer_hz"] is None


def test_the_view_is_plain_json():
    _, views = watch(example("design-example"))
    for view in views:
        assert json.loads(json.dumps(view)) == view


def test_the_words_are_the_demos_words_over_whole_bot_games():
    """`ruling_text.say` mirrors `demo.describe` (colours, padding and clock aside)."""
    for seed in (1, 2, 3):
        table = VirtualTable(players=4, seed=seed)
        names = table.spec.players
        for play in table.play():
            for i, ruling in enumerate(play.rulings):
                after = play.rulings[i + 1 :]
                demo_words = " ".join(describe(ruling, names, after).plain.split()[1:])
                assert " ".join(say(ruling, names, runner_up(ruling, after)).split()) == demo_words


def test_the_figures_agree_with_the_demos_summary_over_a_bot_game():
    table = VirtualTable(players=4, seed=5)
    summary = Summary(table.spec.players)
    view = None
    for play in table.play():
        if view is None:
            view = TableView(table.spec.new_game())
        for ruling in play.rulings:
            summary.add(ruling)
            view.add(ruling)
        view.update(play.state)
    assert view is not None
    stats = view.view()["stats"]
    assert [s["won_by"] for s in stats] == summary.won_by
    assert [s["wrong_snaps"] for s in stats] == summary.wrong_snaps
    assert [s["out_of_turn"] for s in stats] == summary.out_of_turn
    assert [s["late"] for s in stats] == summary.late
    assert [sum(s["reaction_bins"]) for s in stats] == [s["reactions"] for s in stats]
    snaps = sum(s["won_by"]["snap"] for s in stats)
    assert sum(sum(r["count"] for r in s["snaps_by_reason"]) for s in stats) >= snaps > 0
    assert view.view()["winner"] is not None


# Announced again after a restart ---------------------------------------------------------


def _judged(lines: list[dict[str, Any]], upto: int | None = None) -> tuple[Judging, list[Ruling], list[Any]]:
    """A game taken line by line, as the journal replays it: the table and every ruling told
    after its first `upto` events, and the events still to come."""
    items = [item for _, item in read_script([json.dumps(line) for line in lines], "test")]
    judging = Judging(items[0])
    told: list[Ruling] = []
    for item in items[1:][:upto]:
        judging, rulings = take(judging, item)
        told += rulings
    return judging, told, items[1:][upto:] if upto is not None else []


def _marks(view: TableView) -> list[tuple[str, bool]]:
    return [(e["text"], e["again"]) for e in json.loads(json.dumps(view.view()))["log"]]


def test_the_rulings_announced_again_after_a_restart_are_marked_in_the_log():
    lines = [json.loads(line) for line in example("race-and-late-press")]
    judging, told, coming = _judged(lines + [lay(5000, "2H")], upto=len(lines) - 1)
    view = view_of(judging)  # the resumed game's view, as the service builds it
    assert not any(again for _, again in _marks(view))
    again = told[3:]  # the win and the late presses may not have gone out before the crash
    view.again(again)
    names = judging.state.players
    marks = _marks(view)
    assert [again for _, again in marks] == [False] * 3 + [True] * len(again)
    assert marks[3][0] == "Bob SNAP! takes 3 cards (sandwich) — beats Ann by 12.4 ms"  # the race still read
    assert [text for text, _ in marks[4:]] == [say(r, names) for r in again[1:]]
    assert view.view()["last"]["again"] is True  # the banner's ruling is one of them
    # The rulings judged after the restart are told for the first time: not marked.
    for ruling in take(judging, coming[0])[1]:
        view.add(ruling)
    assert [again for _, again in _marks(view)] == [False] * 3 + [True] * len(again) + [False]


def test_a_ruling_announced_again_and_void_since_marks_nothing_and_the_marks_outlive_a_correction():
    lines = [game(2), lay(1000, "9H"), lay(2000, "9C"), snap(2300, 1), lay(3000, "9D")]
    fix = [{"t": 3_500_000, "card": "5C", "for": 2_000_000}, snap(3600, 0), wait(5000)]
    # Told through the first lay, then a crash: the correction is among the rulings announced
    # again, and so are the ones it voided (Bob's pair). The resumed game's log is the game
    # judged right (the correction rewritten in), so those have no line to mark.
    judging, told, _ = _judged(lines + fix)
    view = view_of(judging)
    view.again(told[1:])
    assert _marks(view) == [
        ("Ann lays 9♥ call 1", False),
        ("Bob lays 5♣ call 2", True),
        ("Bob wrong snap: penalised until another seat wins a stack", True),
        ("Ann lays 9♦ call 3", True),
        ("Ann SNAP! takes 3 cards (sandwich)", True),
    ]
    # Marked before the correction: it rebuilds the log, the marks of the rulings still
    # standing kept, the re-judged rulings new.
    judging, told, coming = _judged(lines + fix, upto=len(lines) - 1)
    view = view_of(judging)
    view.again(told)
    for item in coming:
        judging, rulings = take(judging, item)
        for ruling in rulings:
            view.add(ruling)
    assert [again for _, again in _marks(view)] == [True] + [False] * 5


def test_the_marks_outlive_an_undo_where_their_rulings_still_stand_and_the_banner_says_so():
    lines = [json.loads(line) for line in example("race-and-late-press")]
    after = [lay(5000, "2H"), lay(6000, "3C")]  # told for the first time after the restart
    judging, told, coming = _judged(lines + after, upto=len(lines) - 1)
    view = view_of(judging)
    again = told[3:]
    view.again(again)
    for item in coming:
        judging, rulings = take(judging, item)
        for ruling in rulings:
            view.add(ruling)
        view.update(judging.state)
    assert view.marked() == again
    # The host undoes the last ruling (the 3C): the view is rebuilt from the journal's events
    # without it, as `HostCommands.undo_last` does, and keeps the marks of what still stands.
    undone = _view_of(lines[0], lines[1:] + after[:1])
    assert not undone.marked()  # what the rebuild alone knows: nothing was announced again
    undone.keep_marks(view.marked())
    assert [again for _, again in _marks(undone)] == [False] * 3 + [True] * len(again) + [False]
    last = undone.view()["last"]
    assert last["event"] == "stack_won" and last["again"] is True  # the banner's ruling: marked
    # Undone as far as the race: the win and the late presses are gone, and so are their marks.
    undone = _view_of(lines[0], lines[1:4])
    undone.keep_marks(view.marked())
    assert [again for _, again in _marks(undone)] == [False] * 3 and undone.view()["last"] is None


def test_kept_marks_follow_the_rulings_not_their_places():
    a, b, c, d = (Laid(t * 1_000_000, 0, parse_card("9H"), t, None, t) for t in range(1, 5))
    assert kept_marks([a, b, c, d], [b, c]) == [False, True, True, False]
    assert kept_marks([a, b, d], [b, c]) == [False, True, False]  # c stands no more
    assert kept_marks([a, b], [c, d]) == [False, False]  # both undone
    assert kept_marks([a, b, c], [tuple(b)]) == [False] * 3  # type: ignore[list-item]


def test_a_ruling_is_matched_by_its_kind_as_well_as_its_values():
    laid = Laid(1_000_000, 0, parse_card("9H"), 1, None, 1)
    same_values = tuple(laid)  # a named tuple equals any tuple of the same values
    assert marked_again([laid], [same_values]) == [False]  # type: ignore[list-item]
    assert marked_again([laid, laid], [laid]) == [False, True]  # only the last told


# Each preset its own game: the legend, the terms, the call, the penalty's slapper ---------------


def bot_views(rules: str, seed: int = 1, players: int = 4) -> list[dict[str, Any]]:
    """A bot game of `rules` fed to a view: the view after each event."""
    table = VirtualTable(players=players, seed=seed, rules=rules)
    view = TableView(table.spec.new_game())
    views = []
    for play in table.play():
        for ruling in play.rulings:
            view.add(ruling)
        view.update(play.state)
        views.append(view.view())
    return views


def test_each_preset_shows_its_own_slaps_and_terms():
    legend = {}
    for rules in ("celtic", "classic", "paranoid", "party"):
        game_ = TableView(VirtualTable(players=3, seed=1, rules=rules).spec.new_game()).view()["game"]
        legend[rules] = [s["word"] for s in game_["slaps"]]
        assert all(s["key"] in game_["terms"] for s in game_["slaps"])  # each slap can be explained
        assert game_["calls"] == (rules == "celtic")
        assert game_["penalty_pile"] == (rules == "paranoid")
        terms = game_["terms"]
        assert ("count_out" in terms) == (rules == "celtic") and ("challenge" in terms) == (rules != "celtic")
        assert ("dark_queen" in terms) == ("calling_out" in terms) == (rules == "celtic")
        assert ("penalty_pile" in terms) == (rules == "paranoid")
    assert legend == {
        "celtic": ["calling out", "pair", "sandwich", "dark queen"],
        "classic": ["pair", "run", "triple", "joker"],
        "paranoid": ["pair", "sandwich"],
        "party": ["pair", "sandwich", "top and bottom", "run", "marriage"],
    }
    table = VirtualTable(players=3, seed=1, rules="classic")
    classic = TableView(table.spec.new_game()).view()["game"]["terms"]
    assert "Around the corner" in classic["run"]["text"]
    assert "wins the whole game" in classic["triple"]["text"]
    assert "the seat that laid the top card takes the stack" in classic["wrong_snap"]["text"]


def test_a_lay_says_its_call_only_where_calling_out_counts():
    for rules in ("celtic", "classic"):
        lays = [e["text"] for e in bot_views(rules)[5]["log"] if e["event"] == "laid"]
        assert lays and all((" call " in text) == (rules == "celtic") for text in lays)


def test_a_stack_handed_over_for_a_wrong_slap_names_the_seat_that_slapped():
    views = bot_views("classic")
    handed = [e for v in views for e in v["log"] if e["event"] == "stack_won" and "by penalty" in e["text"]]
    assert handed
    names = views[0]["players"]
    for entry in handed:
        text = entry["text"]
        slapped = [n["name"] for n in names if text.endswith(f"by penalty: {n['name']}'s wrong slap")]
        assert len(slapped) == 1, entry["text"]


def test_the_next_lay_makes_the_last_ruling_stale():
    _, views = watch(example("race-and-late-press"))
    # The win, then the late presses: fresh; then Bob lays: the banner is old news.
    texts = [(v["last"]["text"], v["last"]["stale"]) for v in views if v["last"] is not None]
    won = "Bob SNAP! takes 3 cards (sandwich) — beats Ann by 12.4 ms"
    assert (won, False) in texts
    assert texts[-1] == (won, True)


def test_the_game_clock_can_start_at_the_games_own_zero():
    table = VirtualTable(players=3, seed=1)
    own, zero = TableView(table.spec.new_game()), TableView(table.spec.new_game(), t0=0)
    first = next(r for play in table.play() for r in play.rulings)
    for view in (own, zero):
        view.add(first)
    assert own.view()["log"][0]["clock"] == "0:00.0"
    assert zero.view()["log"][0]["clock"] == clock(first.t) != "0:00.0"


def test_a_correction_is_said_in_words_whether_the_camera_misread_the_card_or_missed_it():
    # A host's correction of a misread card, and of a lay the camera never saw (`was` None):
    # both are said, the second without a card read (it once failed the demo's log).
    from referee.rules.rulings import Corrected

    misread = Corrected(9_000_000, 4_500_000, parse_card("7H"), parse_card("7S"), 2)
    missed = Corrected(9_000_000, 4_500_000, parse_card("7H"), None, 2)
    assert say(misread, ["Ann", "Bob"]).startswith("corrected: the card read as 7♠ at 0:04.500 was misread")
    assert say(missed, ["Ann", "Bob"]) == (
        "corrected: the camera missed a card laid at 0:04.500, 7♥: the rulings since are judged again"
    )
