"""The virtual table behind `referee demo`: bots, pacing, and the words of the log."""

import argparse
import io
import json
import random

from hardware.clock import VirtualClock
from referee.cards import parse_card
from referee.rules.rulings import Laid, Penalty, SnapIgnored, StackWon
from referee.sim.bots import REACTION_MS, START_US, VirtualTable, make_bots
from referee.sim.demo import Summary, describe, run_demo
from referee.sim.demo_table import DemoTable

NAMES = ("Ann", "Bob", "Cy")


def demo_args(**given):
    args = {
        "players": 3,
        "seed": 1,
        "cap": 20_000,
        "speed": 0.0,
        "quiet": False,
        "json": False,
        "script": False,
        "data_dir": None,
        "new_game": False,
        "headless": True,
        "port": 0,
        "forever": False,
        "no_camera": True,
    }
    return argparse.Namespace(**(args | given))


def test_bot_reaction_times_stay_between_150_and_400_ms():
    rng = random.Random(5)
    for bot in make_bots(8, rng):
        draws = [bot.reaction_us(rng) for _ in range(2000)]
        assert REACTION_MS[0] * 1000 <= min(draws) and max(draws) <= REACTION_MS[1] * 1000


def test_the_same_seed_plays_the_same_game():
    def events(seed):
        return [play.event for play in VirtualTable(players=4, seed=seed).play()]

    assert events(11) == events(11)
    assert events(11) != events(12)


def test_bots_sometimes_snap_wrongly_and_lay_out_of_turn():
    summary = Summary(NAMES)
    for seed in range(1, 6):
        for play in VirtualTable(players=3, seed=seed).play():
            for ruling in play.rulings:
                summary.add(ruling)
    assert sum(summary.wrong_snaps) > 0 and sum(summary.out_of_turn) > 0 and sum(summary.late) > 0


def test_every_recorded_reaction_is_human():
    table = VirtualTable(players=5, seed=3)
    for _ in table.play():
        pass
    reactions = [r for seat in table.reactions for r in seat]
    assert reactions and all(150_000 <= r <= 400_000 for r in reactions)


def test_demo_paces_the_table_on_the_clock_at_the_chosen_speed():
    clock = VirtualClock(start_us=5_000_000)
    out = io.StringIO()
    assert run_demo(demo_args(speed=10.0), out, clock=clock) == 0
    table = VirtualTable(players=3, seed=1)
    events = [play.event for play in table.play() if play.event is not None]
    # The table's clock ran from the first lay to the last delivery after the last event
    # (the camera stage's and the buttons' lag): a tenth of it passed on the demo's clock.
    elapsed = clock.now_us() - 5_000_000
    assert (
        round((events[-1].t - START_US) / 10) <= elapsed <= round((events[-1].t - START_US + 1_000_000) / 10)
    )


def test_the_referee_hearing_the_table_through_its_pins_and_camera_stage_rules_as_the_table_played():
    """Presses bounce on mock pins and reach the loop late and out of order, lays come 30 to
    150 ms after they land: the referee's rulings are still the ones the game had."""
    for players, seed in ((2, 4), (3, 1), (5, 9), (8, 2)):
        truth = [r for play in VirtualTable(players=players, seed=seed).play() for r in play.rulings]
        heard: list = []
        DemoTable(VirtualTable(players=players, seed=seed), rulings=lambda b, _s, h=heard: h.extend(b)).run()
        assert heard == truth


def test_demo_at_speed_0_never_waits():
    clock = VirtualClock(start_us=0)
    assert run_demo(demo_args(), io.StringIO(), clock=clock) == 0
    assert clock.now_us() == 0


def test_a_won_race_names_the_runner_up_and_the_margin():
    won = StackWon(2_410_000, 1, "snap", ("sandwich",), 3, 12_400, 1)
    late = SnapIgnored(2_422_400, 0, "late", 12_400)
    line = describe(won, NAMES, [late]).plain
    assert "Bob" in line and "SNAP! takes 3 cards (sandwich)" in line and "beats Ann by 12.4 ms" in line


def test_log_lines_say_what_happened():
    card = parse_card("7H")
    assert "lays 7♥" in describe(Laid(1_000_000, 0, card, 7, None, 1), NAMES).plain
    assert "OUT OF TURN" in describe(Laid(1_000_000, 2, card, 3, None, 1, True), NAMES).plain
    assert "hold" in describe(Laid(1_000_000, 2, card, 3, 0, None), NAMES).plain
    assert "wrong snap" in describe(Penalty(1_000_000, 2, "wrong_snap"), NAMES).plain
    assert "3.2 ms late" in describe(SnapIgnored(1_000_000, 2, "late", 3_200), NAMES).plain
    assert "by counting out" in describe(StackWon(1, 0, "counting_out", (), 1, None, 0), NAMES).plain


def test_a_demo_interrupted_mid_game_resumes_from_its_journal_to_the_same_end(tmp_path):
    from referee.live.journal import Journal
    from referee.live.replay import export

    from .helpers import power_cut

    args = demo_args(seed=4, data_dir=str(tmp_path))
    assert run_demo(args, io.StringIO()) == 0
    truth = [r.to_json() for play in VirtualTable(players=3, seed=4).play() for r in play.rulings]
    # The power goes after event 300: the journal has only those, and the game is still open.
    power_cut(tmp_path, 300)
    out = io.StringIO()
    assert run_demo(args, out) == 0
    assert "Resuming game 1 from the journal" in out.getvalue() and "300 events" in out.getvalue()
    with Journal.open(tmp_path) as journal:
        (game,) = journal.games()
        rulings = [line for line in export(game, journal.events(game.id)) if "event" in line]
    assert game.status == "won" and rulings == truth


def test_forever_deals_again_after_each_win_each_game_journaled(tmp_path):
    from referee.live.journal import Journal

    out = io.StringIO()
    assert run_demo(demo_args(forever=True, data_dir=str(tmp_path)), out, rounds=3) == 0
    assert out.getvalue().count("WINS THE GAME") == 3
    with Journal.open(tmp_path) as journal:
        games = journal.games()
    assert [g.status for g in games] == ["won", "won", "won"]
    assert [g.source for g in games] == [f"demo: 3 bots, seed {s}, cap 20000" for s in (1, 2, 3)]


def test_the_terminal_shows_the_lights_and_the_buzzer_as_the_table_sets_them():
    from referee.sim.demo import Lights

    lights = Lights(NAMES)
    sink = lights.on_change(None)
    sink.signal(("seat", 1), 0.25)
    sink.signal(("seat", 2), 1.0)
    sink.signal("status", (1.0, 0.5, 0.0))
    sink.signal("buzzer", 880)
    assert lights.__rich__().plain == "lights Ann ○  Bob ◐  Cy ●  status ■  buzzer 880 Hz"
    sink.signal("buzzer", None)
    sink.signal("status", (0.0, 0.0, 0.0))
    assert lights.__rich__().plain.endswith("status □  buzzer —")


def test_through_the_camera_the_referee_sees_every_card_and_rules_as_the_table_played():
    """The table camera renders the game, the pile watcher and the recogniser read it: the
    rulings are the game's own, but for times on the camera's frame grid."""
    from referee.sim.demo_table import CameraStage

    def strip(ruling):
        return {k: v for k, v in ruling.to_json().items() if k != "t"}

    truth = [strip(r) for play in VirtualTable(players=3, seed=2, cap=60).play() for r in play.rulings]
    heard, refused = [], []
    DemoTable(
        VirtualTable(players=3, seed=2, cap=60),
        stage=CameraStage(3, 2),
        rulings=lambda batch, _state: heard.extend(strip(r) for r in batch),
        refused=lambda event, why: refused.append(why),
    ).run()
    assert refused == [] and heard == truth


def test_through_the_camera_cards_asked_and_misread_are_named_by_the_host_and_the_rulings_are_the_games():
    """The recogniser made unsure of three cards (asked: judging holds until the host names them)
    and wrong about another, once (the host corrects it): the rulings the table ends with are the
    game's own."""
    from types import SimpleNamespace

    from referee.cards import parse_card
    from referee.sim.demo_table import CameraStage

    from .test_questions import told

    def strip(ruling):
        return {k: v for k, v in ruling.items() if k != "t"}

    truth = [
        strip(r.to_json()) for play in VirtualTable(players=3, seed=2, cap=60).play() for r in play.rulings
    ]
    stage = CameraStage(3, 2)
    read = stage.watcher.recognise
    unsure = {"7H", "QS", "4D", "10C"}
    misread = {"9C": parse_card("2H")}

    def recognise(image, mask):
        reading = read(image, mask)
        if reading.card is not None and reading.card.code in unsure:
            return SimpleNamespace(card=reading.card, confidence=0.4, sure=False)
        if reading.card is not None and reading.card.code in misread:
            return SimpleNamespace(card=misread.pop(reading.card.code), confidence=0.97, sure=True)
        return reading

    stage.watcher.recognise = recognise
    heard = []
    demo = DemoTable(
        VirtualTable(players=3, seed=2, cap=60),
        stage=stage,
        rulings=lambda batch, _state: heard.extend(r.to_json() for r in batch),
        refused=lambda event, why: None,
    )
    demo.run()
    assert demo.questions >= 3 and stage.asked >= 3
    assert stage.wrong == 1 and demo.corrections >= 1
    assert [strip(r) for r in told(heard)] == truth


# A new deal each run, the winner screen kept, the same clock, the games listed (issue 21, item 8) ---


def test_without_a_seed_each_run_deals_anew_and_prints_the_seed_to_play_it_again(tmp_path):
    from referee.sim.demo import fresh_seed

    assert len({fresh_seed() for _ in range(50)}) > 1 and all(1 <= fresh_seed() <= 99_999 for _ in range(50))
    drawn, given = io.StringIO(), io.StringIO()
    short = {"cap": 80}  # the same 80 lays tell the same deal
    assert run_demo(demo_args(seed=None, data_dir=str(tmp_path / "a"), **short), drawn, seeds=lambda: 4) == 1
    assert "seed 4" in drawn.getvalue() and "--seed 4 deals this game again" in drawn.getvalue()
    assert run_demo(demo_args(seed=4, data_dir=str(tmp_path / "b"), **short), given, seeds=lambda: 9) == 1
    assert "deals this game again" not in given.getvalue()  # a seed given is known already

    def game(out):  # the log and the summary, the seed's own line aside
        return [line for line in out.getvalue().splitlines() if "deals this game again" not in line]

    assert game(drawn) == game(given)


def test_a_script_without_a_seed_says_its_seed_aside(capsys):
    from referee.cli.main import main

    assert main(["demo", "--script", "--players", "2", "--cap", "3"]) == 1
    out, err = capsys.readouterr()
    seed = int(err.split("seed ")[1].split()[0])
    assert err == f"referee demo: seed {seed} (--seed {seed} deals this game again)\n"
    assert main(["demo", "--script", "--players", "2", "--cap", "3", "--seed", str(seed)]) == 1
    assert capsys.readouterr() == (out, "")


def test_a_stopped_game_resumes_with_its_own_seed_when_none_is_given(tmp_path):
    from referee.live.journal import Journal

    from .helpers import power_cut

    args = demo_args(seed=None, data_dir=str(tmp_path), cap=150)
    assert run_demo(args, io.StringIO(), seeds=lambda: 4) == 1  # stopped at the cap
    power_cut(tmp_path, 100)  # ... or rather, the power went after event 100: the game is open
    out = io.StringIO()
    assert run_demo(args, out, seeds=lambda: 77) == 1  # a new deal would be seed 77
    assert "Resuming game 1" in out.getvalue() and "seed 4" in out.getvalue()
    with Journal.open(tmp_path) as journal:
        (game,) = journal.games()
        assert journal.lays()[1] == 150
    assert game.status == "stopped" and "seed 4," in game.source


class StopWhenLingering:
    """A StopRequest whose Ctrl-C comes as the winner screen starts to linger, after `look`
    has read the page's state (the server still serving it)."""

    def __init__(self, look):
        from referee.live.stopping import StopRequest

        self.request = StopRequest()
        self.look = look
        self.seen = None
        outer = self

        class Stop(type(self.request)):
            def on_stop(self, hook):
                outer.seen = outer.look()
                self.request(2)  # SIGINT
                return super().on_stop(hook)

        self.request.__class__ = Stop


def test_the_winner_screen_stays_served_until_ctrl_c_which_says_what_was_kept(tmp_path):
    import json
    import urllib.request

    from referee.sim import demo

    served = {}
    real = demo._kiosk

    def kiosk(*args, **kwargs):
        served["kiosk"] = real(*args, **kwargs)
        return served["kiosk"]

    def look():
        with urllib.request.urlopen(served["kiosk"].server.url + "api/state", timeout=10) as answer:
            return json.loads(answer.read())

    stopping = StopWhenLingering(look)
    out = io.StringIO()
    args = demo_args(headless=False, linger=float("inf"), data_dir=str(tmp_path), seed=2)
    demo._kiosk, restore = kiosk, demo._kiosk
    try:
        assert run_demo(args, out, stop=stopping.request) == 0  # the game was won: Ctrl-C ends the show
    finally:
        demo._kiosk = restore
    text = " ".join(out.getvalue().split())
    view = stopping.seen
    winner = view["winner"]["name"]
    assert f"{winner} wins after" in text and "The kiosk page stays at http://127.0.0.1:" in text
    assert "Ctrl-C ends the demo" in text
    assert (
        f"Stopped (SIGINT). Kept in the journal {tmp_path / 'journal.sqlite3'}: game 1, won by {winner}"
        in text
    )
    assert f"`referee games --data-dir {tmp_path}` lists it" in text
    # The kiosk's clock is the terminal's: each ruling the page lists is at the time the log printed.
    printed = {}
    for line in out.getvalue().splitlines():
        parts = line.split()
        if parts and parts[0].count(":") == 1 and parts[0].replace(":", "").replace(".", "").isdigit():
            printed.setdefault(" ".join(parts[1:]), set()).add(parts[0])
    for entry in view["log"]:
        clocks = printed.get(" ".join(entry["text"].split()))
        assert clocks, entry
        m, s = entry["clock"].split(":")
        assert any(
            abs(int(m) * 60 + float(s) - (int(c.split(":")[0]) * 60 + float(c.split(":")[1]))) <= 0.05
            for c in clocks
        ), (entry, clocks)


def test_no_linger_without_a_terminal_and_none_when_asked(tmp_path):
    for linger in (None, 0.0):
        out = io.StringIO()
        args = demo_args(headless=False, linger=linger, data_dir=str(tmp_path / str(linger)), seed=2, cap=30)
        assert run_demo(args, out) == 1
        assert "Stopped after 30 lays" in out.getvalue()
        assert "stays at" not in out.getvalue()


def test_the_demos_games_are_listed_with_local_time_duration_lays_and_winner(capsys):
    from datetime import timedelta, timezone

    from referee.cli.main import main
    from referee.cli.service import _game_line

    assert main(["games"]) == 2  # no journal for `referee run` here ...
    assert "no journal here" in capsys.readouterr().err
    assert run_demo(demo_args(seed=3, cap=60), io.StringIO()) == 1  # the XDG data dir's demo journal
    assert main(["games"]) == 2
    assert capsys.readouterr().err.endswith(
        "(no game has been played with this data dir; the demo's games: --demo)\n"
    )
    assert main(["games", "--demo"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    lays = 60  # the cap
    assert f" {lays} lays  stopped " in line and "demo: 3 bots, seed 3, cap 60" in line
    assert main(["games", "--demo", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["lays"] == lays and row["duration_s"] >= 0 and row["status"] == "stopped"

    game = argparse.Namespace(  # a journal's record, as the listing reads it
        id=7,
        events=480,
        winner=1,
        status="won",
        source="demo",
        spec={"game": {"players": ["Ann", "Bob"]}},
        started="2026-11-26T21:50:00+00:00",
        ended="2026-11-26T23:03:09+00:00",
    )
    text = _game_line(game, False, 312, timezone(timedelta(hours=2)))
    assert text.split("  (")[0].split() == [
        "7",
        "2026-11-26",
        "23:50",
        "1h13m",
        "312",
        "lays",
        "won",
        "by",
        "Bob",
        "Ann,",
        "Bob",
    ]
    game.ended = "2026-11-26T21:52:05+00:00"
    assert " 2:05 " in _game_line(game, False, 3)


def test_linger_for_some_seconds_then_the_demo_ends_and_a_negative_one_is_one_line(tmp_path, capsys):
    import shutil
    import subprocess
    from pathlib import Path

    from referee.cli.main import main

    out = io.StringIO()
    args = demo_args(headless=False, linger=0.01, data_dir=str(tmp_path), seed=2, cap=30)
    assert run_demo(args, out) == 1  # the game stopped at the cap: its last table stays too
    assert "The kiosk page stays at http://127.0.0.1:" in out.getvalue() and "for 0.01 s" in out.getvalue()
    assert "Stopped (" not in out.getvalue()  # the time ran out: no Ctrl-C to report
    for bad in ("-1", "nan"):
        assert main(["demo", "--linger", bad, "--headless", "--seed", "1"]) == 2
        assert capsys.readouterr().err == f"--linger must be 0 seconds or more, not {float(bad)}\n"
    # `make demo ARGS="..."` hands the options to `referee demo`.
    root = Path(__file__).resolve().parent.parent
    if shutil.which("make"):
        made = subprocess.run(
            [
                "make",
                "-n",
                "--no-print-directory",
                "-C",
                str(root),
                "demo",
                "ARGS=--rules classic --port 8090",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert made.stdout.splitlines()[-1] == ".venv/bin/referee demo --rules classic --port 8090"


def test_ctrl_c_mid_game_says_what_stays_open_and_the_next_run_resumes_it(tmp_path):
    from referee.live.stopping import StopRequest

    class CtrlCAfter(StopRequest):
        """Ctrl-C once the table has asked `n` times whether to stop (between two events)."""

        def __init__(self, n: int) -> None:
            super().__init__()
            self.asked = n

        @property
        def requested(self) -> bool:
            self.asked -= 1
            if self.asked == 0:
                self.request(2)  # SIGINT
            return self.signum is not None

    args = demo_args(seed=None, data_dir=str(tmp_path), cap=200)
    out = io.StringIO()
    assert run_demo(args, out, stop=CtrlCAfter(60), seeds=lambda: 5) == 130
    said = " ".join(out.getvalue().split())
    assert "Stopped (SIGINT) after " in said
    assert f"game 1 (seed 5) stays open in the journal {tmp_path / 'journal.sqlite3'}" in said
    again = io.StringIO()
    assert run_demo(args, again, seeds=lambda: 6) == 1  # on to the cap
    assert "Resuming game 1" in again.getvalue() and "seed 5" in again.getvalue()
