"""The host's commands from the kiosk (new game, rules, names, undo) and the kiosk in `referee run`."""

from __future__ import annotations

import io
import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from hardware.clock import VirtualClock
from referee.cards import parse_card
from referee.cli.main import main
from referee.kiosk.app import KioskHub
from referee.kiosk.view import TableView
from referee.live.host import HostCommands
from referee.live.journal import ABANDONED, OPEN, Journal
from referee.live.loop import TableLoop
from referee.live.replay import replay
from referee.live.service import RunSettings, run_service
from referee.live.sinks import Recorder
from referee.rules.events import Lay, Snap
from referee.rules.script import GameSpec

SPEC = GameSpec(("Ann", "Bob", "Cy"))


def _table(tmp_path: Path):
    journal = Journal.open(tmp_path)
    game = journal.new_game(SPEC.to_json(), "camera")
    recorder = Recorder(journal, game, 0)
    state = SPEC.new_game()
    hub = KioskHub(TableView(state))
    loop = TableLoop(state, {"camera": 0}, rulings=[lambda r: hub.add(r, loop.state)], judged=[recorder])
    commands = HostCommands(journal, recorder, hub, SPEC, "camera", loop)
    return journal, loop, hub, commands


def _command(loop: TableLoop, command) -> str:
    """The kiosk's worker thread runs the command; the table's thread pumps until it is done."""
    result: list = []
    worker = threading.Thread(target=lambda: result.append(_catch(command)))
    worker.start()
    while worker.is_alive():
        loop.pump(0)
        worker.join(0.001)
    (answer,) = result
    if isinstance(answer, Exception):
        raise answer
    return answer


def _catch(command):
    try:
        return command()
    except Exception as e:
        return e


def test_undo_takes_back_the_last_ruling_in_the_table_the_journal_and_the_kiosk(tmp_path: Path) -> None:
    journal, loop, hub, commands = _table(tmp_path)
    for event in (Lay(1_000_000, parse_card("7H")), Lay(1_500_000, parse_card("7S")), Snap(1_700_000, 2)):
        loop.put_lay(event)
    loop.pump(3_000_000)  # time moves on: the snap is settled and announced
    assert loop.state.hands[2] == 19 and loop.state.size == 0  # Cy took the pair
    answer = _command(loop, commands.undo_last)
    assert answer.startswith("undone: the last ruling")
    assert loop.state.size == 2 and loop.state.hands[2] == 17  # the pair is back on the stack
    record = journal.open_game()
    assert record is not None and record.events == 2  # the snap is kept in the file, undone
    assert replay(record, journal.events(record.id)).state.size == 2  # a restart comes back to it
    view = json.loads(hub.snapshot()[1])
    assert view["stack"]["size"] == 2 and [c["code"] for c in view["stack"]["top"]] == ["7H", "7S"]
    loop.put_lay(Lay(2_500_000, parse_card("QD")))
    loop.pump(3_000_000)
    assert [e.seq for e in journal.events(record.id)] == [0, 1, 4]  # numbers are never reused
    journal.close()


def test_an_undo_keeps_the_announced_again_tags_of_the_rulings_still_standing(tmp_path: Path) -> None:
    journal, loop, hub, commands = _table(tmp_path)
    for event in (Lay(1_000_000, parse_card("7H")), Lay(1_500_000, parse_card("7S")), Snap(1_700_000, 2)):
        loop.put_lay(event)
    loop.pump(3_000_000)
    # As a restart leaves the page: the pair's win (and the lay before it) announced again.
    view = hub._table_view
    view.again([e.ruling for e in view.log][1:])
    loop.put_lay(Lay(3_500_000, parse_card("QD")))  # told for the first time
    loop.pump(4_000_000)
    tags = [(e["event"], e["again"]) for e in json.loads(hub.snapshot()[1])["log"]]
    assert tags == [("laid", False), ("laid", True), ("stack_won", True), ("laid", False)]
    assert _command(loop, commands.undo_last).startswith("undone")  # the QD lay taken back
    shown = json.loads(hub.snapshot()[1])
    assert [(e["event"], e["again"]) for e in shown["log"]] == tags[:3]
    assert shown["last"]["event"] == "stack_won" and shown["last"]["again"] is True  # the banner
    assert _command(loop, commands.undo_last).startswith("undone")  # now the win itself
    shown = json.loads(hub.snapshot()[1])
    assert [(e["event"], e["again"]) for e in shown["log"]] == tags[:2] and shown["last"] is None
    journal.close()


def test_a_new_game_closes_the_old_one_and_takes_the_rules_and_names_set_for_it(tmp_path: Path) -> None:
    journal, loop, _, commands = _table(tmp_path)
    loop.put_lay(Lay(1_000_000, parse_card("7H")))
    loop.pump(1_000_000)
    named = _command(loop, lambda: commands.set_names(["Dee", "Eve"]))  # journaled: in the table's thread
    assert named == "players Dee, Eve from the next new game"
    with pytest.raises(ValueError, match="unknown rules 'snap'"):
        commands.set_rules("snap")
    with pytest.raises(ValueError, match="same name"):
        commands.set_names(["Dee", "dee"])
    assert _command(loop, commands.new_game) == "new game 2: Dee, Eve (celtic)"
    assert [(g.status, g.spec["game"]["players"]) for g in journal.games()] == [
        (ABANDONED, ["Ann", "Bob", "Cy"]),
        (OPEN, ["Dee", "Eve"]),
    ]
    assert loop.state.players == ("Dee", "Eve") and loop.state.size == 0
    with pytest.raises(ValueError, match="no ruling to undo"):
        _command(loop, commands.undo_last)
    journal.close()


def _config(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "referee.toml"
    path.write_text(
        '[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\npins = "mock"\n'
        f'[service]\ndata_dir = "data"\nkiosk_port = {port}\n'
    )
    return path


def test_the_service_serves_the_kiosk_with_a_private_admin_token_while_it_runs(tmp_path: Path) -> None:
    script = tmp_path / "lays.jsonl"
    script.write_text('{"t": 1000000, "lay": "7H"}\n{"t": 1400000, "lay": "7S"}\n')
    args = RunSettings(config=str(_config(tmp_path, 0)), lays_from=str(script), at_once=False, new_game=False)
    err = io.StringIO()
    assert run_service(args, io.StringIO(), err, clock=VirtualClock(0)) == 0
    (url,) = [line.split(": ", 1)[1] for line in err.getvalue().splitlines() if line.startswith("kiosk page")]
    assert url.startswith("http://127.0.0.1:")
    token = tmp_path / "data" / "admin-token"
    assert stat.S_IMODE(os.stat(token).st_mode) == 0o600
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    with socket.socket() as probe:  # the server is gone with the service
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_a_kiosk_port_in_use_is_one_line_and_exit_status_2(tmp_path: Path, capsys) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        script = tmp_path / "lays.jsonl"
        script.write_text('{"t": 1000000, "lay": "7H"}\n')
        status = main(["run", "--config", str(_config(tmp_path, port)), "--lays-from", str(script)])
    err = capsys.readouterr().err
    assert status == 2 and f"port {port} on 127.0.0.1 is in use" in err and "Traceback" not in err
