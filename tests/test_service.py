"""`referee run`, `referee games`, `referee export`: the service end to end, on doubles.

The crash test (SIGKILL at 50 points) is tests/test_crash_resume.py.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.clock import VirtualClock
from referee.cards import parse_card
from referee.cli.main import main
from referee.live.journal import ABANDONED, OPEN, STOPPED, WON, Journal
from referee.live.service import RunSettings, run_service
from referee.rules.rulings import GameWon
from referee.rules.script import adjudicate, event_to_json
from referee.sim.bots import VirtualTable
from referee.sim.render import render_lay_sequence

from .helpers import table_config as _config


def _demo_script(seed: int = 55) -> str:
    table = VirtualTable(players=3, seed=seed)
    lines = [json.dumps(table.spec.to_json())]
    lines += [json.dumps(event_to_json(p.event)) for p in table.play() if p.event is not None]
    return "\n".join(lines) + "\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _rulings(text: str) -> list[str]:
    return [json.dumps(r.to_json()) for r in adjudicate(io.StringIO(text), "script")]


def test_a_rehearsal_at_once_rules_as_adjudicate_and_the_journal_exports_it_for_a_dispute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "game.jsonl"
    script.write_text(_demo_script())
    config = _config(tmp_path)
    status, out, err = run(capsys, "run", "--config", str(config), "--lays-from", str(script), "--at-once")
    assert status == 0
    assert out.splitlines() == _rulings(script.read_text())
    assert "game 1: Ann, Bob, Cy" in err and "wins" in err

    status, listing, _ = run(capsys, "games", "--config", str(config), "--json")
    (game,) = [json.loads(line) for line in listing.splitlines()]
    assert status == 0 and game["status"] == WON and game["players"] == ["Ann", "Bob", "Cy"]
    assert game["source"] == str(script) and game["events"] == len(script.read_text().splitlines()) - 1

    status, exported, _ = run(capsys, "export", "1", "--config", str(config))
    assert status == 0
    assert [line for line in exported.splitlines() if '"event"' in line] == out.splitlines()
    assert _rulings(exported) == out.splitlines()  # adjudicate rules the export the same way

    status, text, _ = run(capsys, "games", "--data-dir", str(tmp_path / "data"))
    assert status == 0 and "won by" in text and "Ann, Bob, Cy" in text


def test_a_script_without_a_game_line_plays_the_configs_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "lays.jsonl"
    script.write_text('{"t": 1000000, "lay": "7H"}\n{"t": 1400000, "lay": "7S"}\n{"t": 1600000, "snap": 1}\n')
    config = _config(tmp_path, players='["Ann", "Bob"]')
    status, out, _ = run(capsys, "run", "--config", str(config), "--lays-from", str(script), "--at-once")
    game = '{"game": {"players": ["Ann", "Bob"], "rules": "celtic", "options": {}}}\n'
    assert status == 0 and out.splitlines() == _rulings(game + script.read_text())
    with Journal.open(tmp_path / "data") as journal:
        assert [g.status for g in journal.games()] == [STOPPED]


def test_a_bad_line_stops_the_run_with_one_line_and_keeps_every_event_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "game.jsonl"
    lines = _demo_script().splitlines()
    lines.insert(40, '{"t": 1, "lay": "7H"}')  # time goes backwards
    script.write_text("\n".join(lines) + "\n")
    config = _config(tmp_path)
    argv = ("run", "--config", str(config), "--lays-from", str(script), "--at-once")
    status, _out, err = run(capsys, *argv)
    assert status == 2 and f"{script}:41: time goes backwards" in err and "Traceback" not in err
    with Journal.open(tmp_path / "data") as journal:
        record = journal.open_game()
        assert record is not None and record.events == 39 and record.last_mark == 40
    # Started again it resumes after line 40, and stops at the same line: nothing is lost.
    status, again, err = run(capsys, *argv)
    assert status == 2 and "resuming game 1" in err and "from line 41" in err
    assert f"{script}:41: time goes backwards" in err and again == ""


def test_a_lay_the_engine_refuses_is_one_line_naming_the_scripts_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "lays.jsonl"
    script.write_text('{"t": 1000000, "lay": "7H"}\n{"t": 1400000, "lay": "7H"}\n')
    argv = ("run", "--config", str(_config(tmp_path)), "--lays-from", str(script))
    for extra in (("--at-once",), ()):
        status, _, err = run(capsys, *argv, *extra)
        assert status == 2 and f"{script}:2: 7H is already on the stack" in err, err
        assert len(err.strip().splitlines()) == 2  # the game's note, then the one error line


def test_an_open_game_is_resumed_and_another_games_script_is_refused_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path)
    first = tmp_path / "first.jsonl"
    lines = _demo_script().splitlines()
    first.write_text("\n".join([*lines[:30], '{"t": 5, "wait": true}']) + "\n")  # dies at line 31
    assert run(capsys, "run", "--config", str(config), "--lays-from", str(first), "--at-once")[0] == 2
    other = tmp_path / "other.jsonl"
    other.write_text('{"game": {"players": ["Dee", "Eve"]}}\n{"t": 1000000, "lay": "2C"}\n')
    status, _, err = run(capsys, "run", "--config", str(config), "--lays-from", str(other), "--at-once")
    assert status == 2 and "not the open game 1's" in err and "--new-game" in err
    argv = ("run", "--config", str(config), "--lays-from", str(other), "--at-once", "--new-game")
    status, out, _ = run(capsys, *argv)
    assert status == 0 and out.splitlines() == _rulings(other.read_text())
    with Journal.open(tmp_path / "data") as journal:
        assert [g.status for g in journal.games()] == [ABANDONED, STOPPED]


def test_live_rehearsal_keeps_the_scripts_spacing_and_rules_the_same(tmp_path: Path) -> None:
    script = tmp_path / "game.jsonl"
    text = "".join(_demo_script().splitlines(keepends=True)[:60])
    script.write_text(text)
    args = RunSettings(config=str(_config(tmp_path)), lays_from=str(script), at_once=False, new_game=False)
    out, err = io.StringIO(), io.StringIO()
    clock = VirtualClock(50_000_000)
    assert run_service(args, out, err, clock=clock) == 0
    with Journal.open(tmp_path / "data") as journal:
        (game,) = journal.games()
        events = list(journal.events(game.id))
    first_t = json.loads(text.splitlines()[1])["t"]
    offset = events[0].line["t"] - first_t  # the game's clock, the script's spacing
    lines = [json.loads(s)["t"] for s in text.splitlines()[1:]]
    # Every line at the script's spacing; besides them only the loop's own Waits: a timer due
    # between two lines fires live once every source is past it (the buttons report their
    # progress, so the script's 20 ms bounds it), as at a real table.
    script_events = [e.line["t"] - offset for e in events if e.line["t"] - offset in lines]
    assert script_events == lines
    assert all(e.line.get("wait") for e in events if e.line["t"] - offset not in lines)
    # The same rulings, on the game's clock.
    expected = [json.loads(line) for line in _rulings(text)]
    for ruling in expected:
        ruling["t"] += offset
    assert [json.loads(line) for line in out.getvalue().splitlines()] == expected


def test_the_camera_path_judges_the_cards_a_rendered_clip_shows(tmp_path: Path) -> None:
    cards, seats = ["7H", "QS", "2D", "9C"], [0, 1, 2, 0]
    frames, _truth = render_lay_sequence(
        [parse_card(c) for c in cards], seats, {0: "bottom", 1: "left", 2: "top"}, np.random.default_rng(3)
    )
    folder = tmp_path / "clip"
    folder.mkdir()
    for i, (_, image) in enumerate(frames):
        cv2.imwrite(str(folder / f"frame{i:04d}.png"), image)
    extra = f'[camera]\nsource = "{folder}"\nseats = {{ bottom = 0, left = 1, top = 2 }}\n'
    args = RunSettings(config=str(_config(tmp_path, extra)), lays_from=None, at_once=False, new_game=False)
    out, err = io.StringIO(), io.StringIO()
    assert run_service(args, out, err, clock=VirtualClock(0)) == 0
    rulings = [json.loads(line) for line in out.getvalue().splitlines()]
    laid = [(r["card"], r["seat"]) for r in rulings if r["event"] == "laid"]
    assert laid == list(zip(cards, seats, strict=True))
    with Journal.open(tmp_path / "data") as journal:
        (game,) = journal.games()
        assert game.status == OPEN and game.source == "camera"  # stopped, not ended: it resumes


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["run", "--config", "{dir}/none.toml"], "none.toml: cannot read"),
        (["run", "--config", "{config}"], "[camera] source is not set"),
        (["run", "--config", "{config}", "--at-once"], "--at-once judges a script"),
        (["run", "--config", "{config}", "--lays-from", "{dir}/none.jsonl"], "none.jsonl: cannot read"),
        (["games", "--data-dir", "{dir}/empty"], "no journal here"),
        (["export", "7", "--config", "{config}"], "no game 7"),
    ],
)
def test_mistakes_get_one_line_and_exit_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    config = _config(tmp_path)
    if argv[0] == "export":
        Journal.open(tmp_path / "data").close()
    status, _, err = run(capsys, *(a.format(dir=tmp_path, config=config) for a in argv))
    assert status == 2 and words in err and len(err.strip().splitlines()) == 1


def test_a_won_game_the_power_cut_left_open_is_closed_and_a_new_one_dealt(tmp_path: Path) -> None:
    table = VirtualTable(players=3, seed=55)
    with Journal.open(tmp_path / "data") as journal:
        game = journal.new_game(table.spec.to_json(), "camera")
        plays = list(table.play())
        winner = next(r.seat for p in plays for r in p.rulings if type(r) is GameWon)
        events = [p.event for p in plays if p.event is not None]
        for seq, event in enumerate(events):
            journal.append(game, seq, event_to_json(event))  # won, never marked so
    folder = tmp_path / "empty-table"
    folder.mkdir()
    cv2.imwrite(str(folder / "frame0.png"), np.full((480, 640, 3), 60, np.uint8))
    extra = f'[camera]\nsource = "{folder}"\n'
    args = RunSettings(config=str(_config(tmp_path, extra)), lays_from=None, at_once=False, new_game=False)
    assert run_service(args, io.StringIO(), io.StringIO(), clock=VirtualClock(0)) == 0
    with Journal.open(tmp_path / "data") as journal:
        assert [(g.status, g.winner) for g in journal.games()] == [(WON, winner), (OPEN, None)]


def test_under_systemd_the_live_service_says_ready_pings_the_watchdog_from_its_loop_and_says_stopping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(tmp_path / "notify"))
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify"))
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    script = tmp_path / "lays.jsonl"
    script.write_text('{"t": 1000000, "lay": "7H"}\n{"t": 1400000, "lay": "7S"}\n')
    args = RunSettings(config=str(_config(tmp_path)), lays_from=str(script), at_once=False, new_game=False)
    assert run_service(args, io.StringIO(), io.StringIO(), clock=VirtualClock(0)) == 0
    listener.setblocking(False)
    said = []
    while True:
        try:
            said.append(listener.recv(4096).decode().strip())
        except BlockingIOError:
            break
    listener.close()
    # READY comes from the lay source once it is up; the loop's pings may come before it.
    (ready,) = [m for m in said if m.startswith("READY=1")]
    assert "STATUS=judging Ann, Bob, Cy" in ready
    assert "WATCHDOG=1" in said[:-1]
    assert said[-1].startswith("STOPPING=1")


class _LosingCamera:
    """The camera double: the clip's first frames, then unplugged (CameraLost); one try that
    finds no camera; then plugged back in, with the frames that follow the outage."""

    def __init__(self, frames: list, lost_at: int, back_at: int) -> None:
        self.parts = [frames[:lost_at], None, frames[back_at:]]
        self.opened = 0

    def __call__(self, spec: str, fps: float | None = None):
        from hardware.camera import FrameListSource
        from hardware.frames import CameraLost, SourceError

        part = self.parts[min(self.opened, len(self.parts) - 1)] if self.opened < 3 else None
        self.opened += 1
        if part is None:
            raise SourceError("camera: not found")

        class Source(FrameListSource):
            def __iter__(self):
                yield from super().__iter__()
                if part is not self_.parts[-1]:
                    raise CameraLost("camera: no frame for 2 s (unplugged?)")

        self_ = self
        return Source(part)


def _clip(tmp_path: Path) -> tuple[list, list]:
    cards, seats = ["7H", "QS", "2D", "9C"], [0, 1, 2, 0]
    frames, truth = render_lay_sequence(
        [parse_card(c) for c in cards], seats, {0: "bottom", 1: "left", 2: "top"}, np.random.default_rng(3)
    )
    return frames, truth


def test_a_lost_camera_pauses_the_game_and_the_card_laid_meanwhile_is_judged_when_it_is_back(
    tmp_path: Path,
) -> None:
    frames, truth = _clip(tmp_path)
    # Unplugged just after the 2nd card came to rest, back after the 3rd had come to rest.
    lost_at = next(i for i, (t, _) in enumerate(frames) if t > truth[1][0]) + 2
    back_at = next(i for i, (t, _) in enumerate(frames) if t > truth[2][0]) + 2
    camera = _LosingCamera(frames, lost_at, back_at)
    extra = '[camera]\nsource = "camera"\nseats = { bottom = 0, left = 1, top = 2 }\n'
    args = RunSettings(config=str(_config(tmp_path, extra)), lays_from=None, at_once=False, new_game=False)
    out, err = io.StringIO(), io.StringIO()
    import referee.live.camera_feed as camera_feed

    saved = camera_feed.RECONNECT_S
    camera_feed.RECONNECT_S = (0.0, 0.0, 0.0)
    try:
        assert run_service(args, out, err, clock=VirtualClock(0), opener=camera) == 0
    finally:
        camera_feed.RECONNECT_S = saved
    notes = err.getvalue()
    assert "unplugged?): game paused" in notes and "camera back after 2 retries" in notes
    laid = [json.loads(line)["card"] for line in out.getvalue().splitlines() if '"laid"' in line]
    assert laid == ["7H", "QS", "2D", "9C"]  # nothing lost: 2D is seen when the camera is back


def test_the_camera_locks_of_the_table_profile_are_set_at_every_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hardware import camera_controls
    from hardware.camera_controls import Exposure, RecordingControls
    from referee.vision.profile import TableProfile, save

    frames, truth = _clip(tmp_path)
    lost_at = next(i for i, (t, _) in enumerate(frames) if t > truth[1][0]) + 2
    camera = _LosingCamera(frames, lost_at, lost_at)
    locked = RecordingControls()
    monkeypatch.setattr(camera_controls, "controls_for", lambda source: locked)
    part = {
        "pile_box": [0, 0, 9, 9],
        "card_px": 99.0,
        "exposure_us": 9000,
        "gain": 1.5,
        "lens_position": None,
    }
    seats = {"bottom": 0, "left": 1, "top": 2}
    profile = TableProfile().with_step("camera", camera=part).with_step("seats", seats=seats)
    save(profile, tmp_path / "table.npz")
    extra = '[camera]\nsource = "camera"\nprofile = "table.npz"\n'
    args = RunSettings(config=str(_config(tmp_path, extra)), lays_from=None, at_once=False, new_game=False)
    out = io.StringIO()
    import referee.live.camera_feed as camera_feed

    monkeypatch.setattr(camera_feed, "RECONNECT_S", (0.0, 0.0, 0.0))
    assert run_service(args, out, io.StringIO(), clock=VirtualClock(0), opener=camera) == 0
    assert (
        locked.calls == [("lock", Exposure(9000, 1.5, None))] * 2
    )  # at the start, and again when the camera is back
    laid = [json.loads(line) for line in out.getvalue().splitlines() if '"laid"' in line]
    assert [(lay["card"], lay["seat"]) for lay in laid] == [("7H", 0), ("QS", 1), ("2D", 2), ("9C", 0)]


def test_a_camera_that_never_comes_back_ends_the_service_with_status_3_and_the_game_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import referee.live.camera_feed as camera_feed
    import referee.live.service as service

    frames, _ = _clip(tmp_path)
    camera = _LosingCamera(frames, 40, 40)
    camera.parts = [frames[:40], None, None]
    monkeypatch.setattr(camera_feed, "RECONNECT_S", (0.0, 0.0))
    real = service.run_service
    monkeypatch.setattr(service, "run_service", lambda a, o: real(a, o, clock=VirtualClock(0), opener=camera))
    config = _config(tmp_path, '[camera]\nsource = "camera"\n')
    status, _, err = run(capsys, "run", "--config", str(config))
    assert status == 3, err
    assert "game stays open in the journal" in err and "Traceback" not in err
    with Journal.open(tmp_path / "data") as journal:
        assert journal.open_game() is not None


def test_the_cameras_picture_of_an_asked_card_reaches_the_kiosks_question(
    tmp_path: Path, monkeypatch
) -> None:
    import referee.live.camera_feed as camera_feed
    import referee.live.kiosk_start as kiosk_start
    from referee.rules.events import Unread

    kiosks: list = []
    start_kiosk = kiosk_start.start_kiosk
    monkeypatch.setattr(kiosk_start, "start_kiosk", lambda *a: kiosks.append(start_kiosk(*a)) or kiosks[-1])

    def camera(loop, config, clock, failure, note, ready, paused, stopped, opener, backoff_s, crops, **_):
        # The watcher's side, as feed_camera does it for a WatchAsk: the picture kept, the lay asked.
        ready()
        crops.keep(1_000, np.zeros((8, 8, 3), np.uint8))
        loop.put_lay(Unread(1_000, 0, parse_card("7H")))
        loop.close_source("camera")
        loop.stop()  # the service stops: the loop judges what it holds and the game stays open

    monkeypatch.setattr(camera_feed, "feed_camera", camera)
    config = (
        _config(tmp_path, '[camera]\nsource = "camera"\n')
        .read_text()
        .replace("kiosk = false", "kiosk_port = 0")
    )
    (tmp_path / "referee.toml").write_text(config)
    args = RunSettings(config=str(tmp_path / "referee.toml"), lays_from=None, at_once=False, new_game=False)
    assert run_service(args, io.StringIO(), io.StringIO(), clock=VirtualClock(0)) == 0
    (kiosk,) = kiosks
    (question,) = json.loads(kiosk.hub.snapshot()[1])["questions"]
    assert question["for"] == 1_000 and question["crop"] == "/api/question/1000.jpg"
    assert kiosk.crops.get(1_000) is not None and kiosk.commands.crops is kiosk.crops


def test_a_resumed_game_still_asking_asks_again_on_the_light_and_at_the_terminal(
    tmp_path: Path, monkeypatch
) -> None:
    import referee.live.assembly as assembly
    import referee.live.camera_feed as camera_feed
    import referee.live.table_run as table_run
    from referee.rules.events import Lay, Unread
    from referee.rules.script import GameSpec

    config = _config(tmp_path, '[camera]\nsource = "camera"\n')
    with Journal.open(tmp_path / "data") as journal:  # a power cut while the camera asked
        game = journal.new_game(GameSpec(("Ann", "Bob", "Cy")).to_json(), "camera")
        journal.append(game, 0, event_to_json(Lay(1_000_000, parse_card("9H"))), None)
        journal.append(game, 1, event_to_json(Unread(83_400_000, None, parse_card("QH"))), None)

    def camera(loop, config, clock, failure, note, ready, paused, stopped, opener, backoff_s, crops, **_):
        ready()
        loop.close_source("camera")
        loop.stop()

    asked: list[bool] = []

    class Player(assembly.SignalPlayer):
        def ask(self, asking: bool) -> None:
            asked.append(asking)
            super().ask(asking)

    monkeypatch.setattr(assembly, "SignalPlayer", Player)
    monkeypatch.setattr(camera_feed, "feed_camera", camera)
    monkeypatch.setattr(table_run, "terminal", lambda args: io.StringIO(""))  # a person, who types nothing
    args = RunSettings(config=str(config), lays_from=None, at_once=False, new_game=False)
    err = io.StringIO()
    assert run_service(args, io.StringIO(), err, clock=VirtualClock(0)) == 0
    assert "camera: which card was laid at 1:23.4? (it looks like QH)" in err.getvalue()
    assert asked == [True]  # the status light amber and the query tone, as when it was first asked


def _asked_script(seed: int = 55) -> str:
    """A demo game with some lays asked and named later, and one misread corrected."""
    from .test_questions import _ask, _misread

    lines = [json.loads(line) for line in _demo_script(seed).splitlines()]
    rng = random.Random(seed)
    fixed = None
    while fixed is None:
        fixed = _misread(_ask(lines, rng, 4), rng)
    return "\n".join(json.dumps(line) for line in fixed) + "\n"


def test_questions_and_a_correction_are_journaled_and_the_export_rules_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "game.jsonl"
    script.write_text(_asked_script())
    assert '"lay": "?"' in script.read_text() and '"for"' in script.read_text()
    config = _config(tmp_path)
    status, out, _ = run(capsys, "run", "--config", str(config), "--lays-from", str(script), "--at-once")
    assert status == 0
    assert out.splitlines() == _rulings(script.read_text())
    assert '"event": "corrected"' in out
    status, exported, _ = run(capsys, "export", "1", "--config", str(config))
    assert status == 0
    assert [line for line in exported.splitlines() if '"event"' in line] == out.splitlines()
    assert _rulings(exported) == out.splitlines()


def test_a_live_rehearsal_moves_a_card_line_with_the_lay_it_names(tmp_path: Path) -> None:
    script = tmp_path / "game.jsonl"
    lines = [
        {"game": {"players": ["Ann", "Bob"]}},
        {"t": 1_000_000, "lay": "9H"},
        {"t": 2_000_000, "lay": "?"},
        {"t": 2_300_000, "snap": 1},
        {"t": 3_500_000, "card": "9S", "for": 2_000_000},
    ]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = RunSettings(
        config=str(_config(tmp_path, players='["Ann", "Bob"]')),
        lays_from=str(script),
        at_once=False,
        new_game=False,
    )
    out = io.StringIO()
    assert run_service(args, out, io.StringIO(), clock=VirtualClock(50_000_000)) == 0
    won = [json.loads(line) for line in out.getvalue().splitlines() if '"stack_won"' in line]
    assert [(w["seat"], w["reasons"]) for w in won] == [(1, ["standard"])]


def test_the_rulings_announced_again_at_a_restart_are_marked_on_the_kiosk(
    tmp_path: Path, monkeypatch
) -> None:
    import referee.live.camera_feed as camera_feed
    import referee.live.kiosk_start as kiosk_start
    from referee.rules.events import Lay, Snap
    from referee.rules.script import GameSpec

    kiosks: list = []
    start_kiosk = kiosk_start.start_kiosk
    monkeypatch.setattr(kiosk_start, "start_kiosk", lambda *a: kiosks.append(start_kiosk(*a)) or kiosks[-1])
    config = _config(tmp_path, '[camera]\nsource = "camera"\n')
    config.write_text(config.read_text().replace("kiosk = false", "kiosk_port = 0"))
    events = [Lay(1_000_000, parse_card("9H")), Lay(2_000_000, parse_card("9C")), Snap(2_300_000, 1)]
    events.append(Lay(3_000_000, parse_card("4D")))  # its ruling settles the snap: Bob wins the pair
    with Journal.open(tmp_path / "data") as journal:  # a crash before the pair's ruling went out
        game = journal.new_game(GameSpec(("Ann", "Bob", "Cy")).to_json(), "camera")
        for seq, event in enumerate(events):
            journal.append(game, seq, event_to_json(event), None)
        journal.told(game, 1, 1)  # told through Bob's lay

    def camera(loop, config, clock, failure, note, ready, paused, stopped, opener, backoff_s, crops, **_):
        ready()
        loop.close_source("camera")
        loop.stop()

    monkeypatch.setattr(camera_feed, "feed_camera", camera)
    args = RunSettings(config=str(config), lays_from=None, at_once=False, new_game=False)
    out = io.StringIO()
    assert run_service(args, out, io.StringIO(), clock=VirtualClock(0)) == 0
    again = [json.loads(line) for line in out.getvalue().splitlines()]
    assert again and all(r.pop("again") for r in again)
    (kiosk,) = kiosks
    log = json.loads(kiosk.hub.snapshot()[1])["log"]
    assert [e["again"] for e in log] == [False] * (len(log) - len(again)) + [True] * len(again)
    assert [e["event"] for e in log if e["again"]] == [r["event"] for r in again] == ["stack_won", "laid"]
    assert json.loads(kiosk.hub.snapshot()[1])["last"]["again"] is True  # the banner's win too


class _LoadedMachine(VirtualClock):
    """A clock whose sleeper wakes 150 ms late, with the table loop turning meanwhile: a
    rehearsal's feeder on a loaded machine (found by benchmarks/bench_crash.py under load)."""

    def __init__(self, start_us: int, loop_box: list) -> None:
        super().__init__(start_us)
        self.loop_box = loop_box

    def sleep_until(self, t_us: int) -> None:
        super().sleep_until(t_us + 150_000)
        self.loop_box[0].pump(self.now_us())


def test_a_rehearsal_feeder_woken_late_by_a_loaded_machine_is_still_judged_in_order() -> None:
    from referee.live.assembly import GameClock
    from referee.live.loop import TableLoop
    from referee.live.script_feed import feed_script as _feed_script
    from referee.live.table_run import LATENCIES_US
    from referee.rules.script import read_script

    text = "".join(_demo_script().splitlines(keepends=True)[:60])
    items = read_script(io.StringIO(text), "game.jsonl")
    state = next(items)[1]
    box: list = []
    clock = _LoadedMachine(0, box)
    out: list = []
    # No `late` sink: an event behind the release point would raise ProgressError here.
    loop = TableLoop(
        state, {"script": LATENCIES_US["script"], "buttons": LATENCIES_US["buttons"]}, rulings=[out.append]
    )
    box.append(loop)
    failure: list = []
    _feed_script(loop, items, GameClock(clock, 0), failure, lambda _: None, lambda: None, offset=0)
    loop.close_source("buttons")
    loop.finish(lambda _: None)
    assert failure == []
    assert [json.dumps(r.to_json()) for r in out] == _rulings(text)
