"""Clean stops and one writer, with real processes and real signals.

SIGTERM (`systemctl stop`) and SIGINT (Ctrl-C) are sent to `referee run` at seeded points,
each found by the process's own output (a line on stderr, a datagram on the notify socket,
the k-th ruling on stdout), never by sleeping: while Python starts (the signal is pending
from before exec, taken at the referee's first line), once the game is journaled, once
READY=1 is sent, after a seeded number of rulings, and a second signal while it stops.
Each time: exit 0 (SIGTERM) or 130 (SIGINT), no traceback, STOPPING=1 on the notify
socket, every light and the buzzer off when their pins are released and no pin left
reserved, no -wal left behind (checkpointed, closed), the game open in the journal with
what was judged; started again, it ends with the rulings the script gives.

A second `referee run` or `referee demo` on a journal in use gets one line naming the
first one's PID, exit 2, and writes nothing; `referee games` reads it meanwhile.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest

from referee.live.journal import OPEN, Journal
from referee.live.replay import export
from referee.rules.script import event_to_json
from referee.sim.bots import VirtualTable
from tests.helpers import service_config

ROOT = Path(__file__).resolve().parent.parent
HARNESS = str(ROOT / "tests" / "stop_harness.py")
WAIT_S = 120  # a safety net for a hung process, never a synchronisation


def _script(folder: Path, lines: int = 120, shrink: int = 25) -> Path:
    table = VirtualTable(players=3, seed=57)
    out = [json.dumps(table.spec.to_json())]
    for p in table.play():
        if p.event is not None:
            line = event_to_json(p.event)
            line["t"] //= shrink
            out.append(json.dumps(line))
    script = folder / "live.jsonl"
    script.write_text("\n".join(out[:lines]) + "\n")
    return script


def _lines(stream: IO[bytes], into: queue.Queue[str | None]) -> None:
    for raw in stream:
        into.put(raw.decode().rstrip("\n"))
    into.put(None)


class Run:
    """`referee run` (through the harness) with its stdout, stderr and notify socket read as they come."""

    def __init__(self, folder: Path, argv: list[str], block_signals: bool = False) -> None:
        self.folder = folder
        self.pins = folder / f"pins-{random.random()}.json"
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        address = folder / f"notify-{os.getpid()}-{id(self)}"
        self.notify.bind(str(address))
        self.notify.settimeout(WAIT_S)
        env = os.environ | {"NOTIFY_SOCKET": str(address)}

        def blocked() -> None:  # the signal waits, pending, until the referee takes it
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})

        self.proc = subprocess.Popen(
            [sys.executable, HARNESS, str(self.pins), *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=env,
            preexec_fn=blocked if block_signals else None,
        )
        self.out: queue.Queue[str | None] = queue.Queue()
        self.err: queue.Queue[str | None] = queue.Queue()
        self.err_lines: list[str] = []
        self.messages: list[str] = []
        for stream, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=_lines, args=(stream, into), daemon=True).start()

    def wait_err(self, words: str) -> None:
        while True:
            line = self.err.get(timeout=WAIT_S)
            assert line is not None, f"ended before saying {words!r}: {self.err_lines}"
            self.err_lines.append(line)
            if words in line:
                return

    def wait_notify(self, words: str) -> None:
        while True:
            message = self.notify.recv(4096).decode()
            self.messages.append(message)
            if words in message:
                return

    def rulings(self, n: int) -> list[str]:
        got = []
        while len(got) < n:
            line = self.out.get(timeout=WAIT_S)
            if line is None:
                break
            got.append(line)
        return got

    def finish(self) -> tuple[int, list[str], str]:
        code = self.proc.wait(timeout=WAIT_S)
        rest = []
        while (line := self.out.get(timeout=WAIT_S)) is not None:
            rest.append(line)
        while (line := self.err.get(timeout=WAIT_S)) is not None:
            self.err_lines.append(line)
        self.notify.setblocking(False)
        while True:
            try:
                self.messages.append(self.notify.recv(4096).decode())
            except BlockingIOError:
                break
        self.notify.close()
        return code, rest, "\n".join(self.err_lines)

    def outputs(self) -> dict:
        return json.loads(self.pins.read_text())


POINTS = ["at exec", "journaled", "ready", "rulings", "while stopping"]


def _stop_at(point: str, signum: int, tmp_path: Path, k: int) -> None:
    script = _script(tmp_path)
    config = service_config(tmp_path)
    argv = ["run", "--config", str(config), "--lays-from", str(script)]
    run = Run(tmp_path, argv, block_signals=point == "at exec")
    told: list[str] = []
    if point == "at exec":
        run.proc.send_signal(signum)
    elif point == "journaled":
        run.wait_err("game 1:")
        run.proc.send_signal(signum)
    elif point == "ready":
        run.wait_notify("READY=1")
        run.proc.send_signal(signum)
    else:
        told = run.rulings(k)
        run.proc.send_signal(signum)
        if point == "while stopping":
            run.wait_notify("STOPPING=1")
            run.proc.send_signal(signum)
    code, rest, err = run.finish()
    told += rest

    assert code == (0 if signum == signal.SIGTERM else 130), err
    assert "Traceback" not in err, err
    assert any("STOPPING=1" in m for m in run.messages), run.messages
    outputs = run.outputs()
    assert outputs["reserved"] == []
    for closed in outputs["closed"]:  # every light and the buzzer off when the pins go back
        assert not any(closed["seats"]) and not any(closed["status"] or []) and not closed["buzzer"], closed
    data = tmp_path / "data"
    assert not (data / "journal.sqlite3-wal").exists(), "the WAL was left behind"
    if point == "at exec":
        assert told == [] and outputs["factories"] == 0  # stopped before anything was opened
    if not (data / "journal.sqlite3").exists():
        return
    with Journal.open(data, readonly=True) as journal:
        games = journal.games()
    assert [g.status for g in games] in ([], [OPEN]), "a stop must leave the game open, to resume"
    # Started again (no signal), it ends with the script's rulings: nothing judged was lost.
    again = subprocess.run(
        [sys.executable, "-m", "referee", *argv], capture_output=True, cwd=ROOT, timeout=WAIT_S, check=False
    )
    assert again.returncode == 0, again.stderr.decode()
    new = again.stdout.decode().splitlines()
    assert not any('"again"' in line for line in new), "a clean stop told everything: nothing again"
    # The rulings told across the stop are the game's: those of the events the journal holds
    # (timers the live loop fired included), as `referee export` and `adjudicate` give them.
    with Journal.open(data, readonly=True) as journal:
        record = journal.games()[0]
        exported = [json.dumps(line) for line in export(record, journal.events(record.id)) if "event" in line]
    assert told + new == exported


def _stops() -> list:
    """Every point with both signals. The fast set (`make test`) takes every point once and each
    signal at alternate points; the other five (marked slow) run in `make test-slow`."""
    out = []
    for i, point in enumerate(POINTS):
        for j, (signum, name) in enumerate([(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")]):
            marks = [pytest.mark.slow] if (i + j) % 2 else []
            out.append(pytest.param(point, signum, marks=marks, id=f"{point}-{name}"))
    return out


@pytest.mark.parametrize(("point", "signum"), _stops())
def test_a_stop_at_any_point_is_clean(tmp_path: Path, point: str, signum: int) -> None:
    k = random.Random(f"{point}{signum}").randrange(1, 60)  # seeded: the same point every run
    _stop_at(point, signum, tmp_path, k)


def test_a_second_referee_on_a_journal_in_use_gets_one_line_naming_the_first_and_writes_nothing(
    tmp_path: Path,
) -> None:
    script = _script(tmp_path, shrink=1)  # at its own pace: it runs until it is stopped
    config = service_config(tmp_path)
    first = Run(tmp_path, ["run", "--config", str(config), "--lays-from", str(script)])
    first.wait_notify("READY=1")
    data = tmp_path / "data"
    before = {p.name: p.read_bytes() for p in data.iterdir() if not p.name.endswith(("-shm", ".last"))}

    for argv in (
        ["run", "--config", str(config), "--lays-from", str(script), "--at-once"],
        ["run", "--config", str(config), "--lays-from", str(script), "--new-game"],
        ["demo", "--headless", "--data-dir", str(data)],
    ):
        second = subprocess.run(
            [sys.executable, "-m", "referee", *argv],
            capture_output=True,
            cwd=ROOT,
            timeout=WAIT_S,
            check=False,
        )
        err = second.stderr.decode().strip()
        assert second.returncode == 2 and second.stdout == b"", err
        assert len(err.splitlines()) == 1 and f"in use by another referee (PID {first.proc.pid})" in err, err
    # The readers read it meanwhile, read-only.
    games = subprocess.run(
        [sys.executable, "-m", "referee", "games", "--data-dir", str(data)],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    assert b"open" in games.stdout
    after = {
        p.name: p.read_bytes() for p in data.iterdir() if p.name in before and p.name != "journal.sqlite3-wal"
    }
    assert after == {k: v for k, v in before.items() if k != "journal.sqlite3-wal"}

    first.proc.send_signal(signal.SIGTERM)
    code, _, err = first.finish()
    assert code == 0 and "Traceback" not in err
    with Journal.open(data, readonly=True) as journal:
        (game,) = journal.games()  # the second ones started no game
    assert game.status == OPEN


def test_a_killed_writer_leaves_no_stale_lock(tmp_path: Path) -> None:
    script = _script(tmp_path)
    config = service_config(tmp_path)
    first = Run(tmp_path, ["run", "--config", str(config), "--lays-from", str(script)])
    first.wait_notify("READY=1")
    first.proc.kill()
    first.finish()
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee",
            "run",
            "--config",
            str(config),
            "--lays-from",
            str(script),
            "--at-once",
        ],
        capture_output=True,
        cwd=ROOT,
        timeout=WAIT_S,
        check=False,
    )
    assert again.returncode == 0 and b"resuming game 1" in again.stderr, again.stderr.decode()
