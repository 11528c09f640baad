"""Fuzz the referee's inputs through its real command line: 0 tracebacks, 0 hangs, bounded memory.

    .venv/bin/python benchmarks/fuzz_inputs.py [--cases 2000] [--seed 1] [--kinds script,config,...]

Five kinds of input, each a valid file mutated by a seeded generator (bits flipped,
tokens such as `[`, NUL, U+202E, a newline or `1e999` inserted, spans cut, copied or
nested thousands deep, the file cut short; images get headers that claim huge sizes):

- script:  `referee adjudicate FILE` (a game from examples/)
- config:  `referee games --config FILE` (the config is read and checked in full first)
- wiring:  `referee games --config C`, C naming the mutated wiring file
- journal: `referee games` and `referee export 1` on a journal with a mutated entry (an
           event's line or a game's spec), or with bytes of the file flipped
- image:   `referee recognize FILE` (a rendered card, PNG or JPEG)

Each case runs `referee.cli.main(argv)` in this process, with stdout and stderr captured
and an alarm after --limit s (a hang). A traceback is any exception out of `main`; a
case that exits 2 must say why in exactly one line. Prints per kind: cases, exits by
status, tracebacks, more-than-one-line errors, hangs, and the process's peak RSS. The
suite runs a small sample of the same (tests/test_fuzz_inputs.py). Prints figures, asserts
nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import resource
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
import traceback
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = ("script", "config", "wiring", "journal", "image")
TOKENS = [
    b"[", b"]", b"{", b"}", b'"', b",", b":", b"=", b"\n", b"\r", b"\x00", b"\xff", b"\\", b"-",
    b"1e999", b"-0", b"99999999999999999999999", b"null", b"true", b"NaN", b"inf", b"'", b"#",
    b"\xe2\x80\xae", b"\xef\xbb\xbf", b'"players"', b'"t"', b'"lay"', b"[table]", b"[[seat]]",
    b"pin = 99", b"\t", b"a.b.c", b"\xc3\x28",
]  # fmt: skip

SCRIPT_SEEDS = sorted(p for p in (ROOT / "examples").glob("*.jsonl") if not p.name.endswith(".rulings.jsonl"))
CONFIG_SEED = b"""[table]
players = ["Ann", "Bob", "Cy"]
rules = "celtic"
options = { }

[camera]
source = "camera"
fps = 30
seats = { bottom = 0, left = 1, top = 2 }

[hardware]
pins = "mock"

[service]
data_dir = "data"
kiosk = true
kiosk_host = "127.0.0.1"
kiosk_port = 8080
kiosk_names = ["referee.lan"]
"""


class Hang(BaseException):
    """The alarm went off: the case took longer than the limit."""


@dataclass
class Tally:
    cases: int = 0
    statuses: Counter = field(default_factory=Counter)
    tracebacks: list[str] = field(default_factory=list)
    not_one_line: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    peak_alloc: int = 0  # the most Python memory one command allocated (tracemalloc)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """`data` with one to four seeded mutations."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        pos = rng.randint(0, len(out))
        if op == 0 and out:  # flip a bit
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # insert a token
            out[pos:pos] = rng.choice(TOKENS)
        elif op == 2:  # cut a span
            out[pos : pos + rng.randint(1, 40)] = b""
        elif op == 3 and out:  # copy a span somewhere else
            start = rng.randrange(len(out))
            out[pos:pos] = out[start : start + rng.randint(1, 200)]
        elif op == 4:  # cut the file short
            del out[pos:]
        elif op == 5:  # nest deeply
            depth = rng.choice((50, 1000, 20_000))
            open_, close = rng.choice(((b"[", b"]"), (b"{", b"}"), (b'{"a":', b"}"), (b"[", b"")))
            out[pos:pos] = open_ * depth + close * depth
        elif op == 6:  # random bytes
            out[pos : pos + rng.randint(0, 20)] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 20)))
        else:  # repeat a line many times (a long file of plausible lines)
            lines = bytes(out).split(b"\n")
            line = rng.choice(lines) if lines else b""
            out[pos:pos] = (line + b"\n") * rng.choice((2, 100, 5000))
    return bytes(out)


def run_main(argv: list[str], limit_s: float) -> tuple[str, int | None, str]:
    """("ok" | "traceback" | "hang", status, stderr) of `referee ARGV` run in this process."""
    from referee.cli.main import main

    out, err = io.StringIO(), io.StringIO()

    def alarm(signum: int, frame: object) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        return "ok", status, err.getvalue()
    except Hang:
        return "hang", None, err.getvalue()
    except SystemExit as e:  # argparse's own usage errors exit 2 with a usage line
        return "ok", int(e.code or 0), err.getvalue()
    except BaseException:
        return "traceback", None, traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Fuzzer:
    """The inputs of each kind, written into `work`, and the commands that read them."""

    def __init__(self, work: Path, seed: int) -> None:
        self.work = work
        self.seed = seed
        self.scripts = [p.read_bytes() for p in SCRIPT_SEEDS]
        self.wiring = (ROOT / "referee" / "data" / "wiring.default.toml").read_bytes()
        self._journal: bytes | None = None
        self._images: list[bytes] | None = None

    # Each returns the argv lists to run for one case.

    def script(self, rng: random.Random) -> list[list[str]]:
        path = self.work / "script.jsonl"
        path.write_bytes(mutate(rng.choice(self.scripts), rng))
        return [["adjudicate", str(path)]]

    def config(self, rng: random.Random) -> list[list[str]]:
        path = self.work / "referee.toml"
        path.write_bytes(mutate(CONFIG_SEED, rng))
        return [["games", "--config", str(path)]]

    def wiring_case(self, rng: random.Random) -> list[list[str]]:
        wiring = self.work / "wiring.toml"
        wiring.write_bytes(mutate(self.wiring, rng))
        config = self.work / "wired.toml"
        config.write_text(
            '[table]\nplayers = ["Ann", "Bob", "Cy", "Di"]\n[hardware]\npins = "mock"\n'
            f'wiring = "{wiring}"\n[service]\ndata_dir = "data"\n'
        )
        return [["games", "--config", str(config)]]

    def journal(self, rng: random.Random) -> list[list[str]]:
        folder = self.work / "journal"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        path = folder / "journal.sqlite3"
        path.write_bytes(self._journal_bytes())
        if rng.random() < 0.5:  # an entry changed, as a hand edit or a bad disk block would
            with contextlib.closing(sqlite3.connect(path)) as db, db:
                if rng.random() < 0.7:
                    rows = db.execute("SELECT game, seq, line FROM events").fetchall()
                    game, seq, line = rng.choice(rows)
                    new = mutate(line.encode(), rng).decode("utf-8", "replace")
                    db.execute("UPDATE events SET line = ? WHERE game = ? AND seq = ?", (new, game, seq))
                else:
                    (spec,) = db.execute("SELECT spec FROM games WHERE id = 1").fetchone()
                    new = mutate(spec.encode(), rng).decode("utf-8", "replace")
                    db.execute("UPDATE games SET spec = ? WHERE id = 1", (new,))
        else:  # bytes of the file flipped
            data = bytearray(path.read_bytes())
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
            path.write_bytes(bytes(data))
        return [["games", "--data-dir", str(folder)], ["export", "1", "--data-dir", str(folder)]]

    def image(self, rng: random.Random) -> list[list[str]]:
        import struct

        data = bytearray(rng.choice(self._image_bytes()))
        if rng.random() < 0.3:  # a header that claims another size
            w, h = rng.choice(((100_000, 100_000), (2**31 - 1, 1), (0, 10), (65535, 65535), (1, 1)))
            if data[:4] == b"\x89PNG":
                data[16:24] = struct.pack(">II", w, h)
            else:
                sof = data.find(b"\xff\xc0")
                if sof > 0:
                    data[sof + 5 : sof + 9] = struct.pack(">HH", min(w, 65535), min(h, 65535))
        else:
            data = bytearray(mutate(bytes(data), rng))
        path = self.work / ("card.png" if data[:4] == b"\x89PNG" else "card.jpg")
        path.write_bytes(bytes(data))
        return [["recognize", str(path)]]

    def _journal_bytes(self) -> bytes:
        """A journal holding one game, played from an example at once (made once)."""
        if self._journal is None:
            folder = self.work / "template"
            folder.mkdir(exist_ok=True)
            config = folder / "referee.toml"
            config.write_text(
                '[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\npins = "mock"\n'
                f'[service]\ndata_dir = "{folder / "data"}"\nkiosk = false\n'
            )
            example = ROOT / "examples" / "race-and-late-press.jsonl"
            kind, status, err = run_main(
                ["run", "--config", str(config), "--lays-from", str(example), "--at-once"], 60
            )
            if (kind, status) != ("ok", 0):
                raise SystemExit(f"could not make the journal to fuzz: {err}")
            # One file: the WAL folded into it, so its bytes are the whole journal.
            with contextlib.closing(sqlite3.connect(folder / "data" / "journal.sqlite3")) as db:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.execute("PRAGMA journal_mode=DELETE")
            self._journal = (folder / "data" / "journal.sqlite3").read_bytes()
        return self._journal

    def _image_bytes(self) -> list[bytes]:
        if self._images is None:
            import cv2

            from referee.cards import parse_card
            from referee.sim.render import draw_card

            card, _ = draw_card(parse_card("7H"), 120)
            self._images = [cv2.imencode(ext, card)[1].tobytes() for ext in (".png", ".jpg")]
        return self._images

    def cases(self, kind: str) -> Callable[[random.Random], list[list[str]]]:
        return {
            "script": self.script,
            "config": self.config,
            "wiring": self.wiring_case,
            "journal": self.journal,
            "image": self.image,
        }[kind]


def fuzz(kind: str, cases: int, seed: int, limit_s: float = 10.0) -> Tally:
    """Run `cases` seeded cases of `kind`; the tally of what happened."""
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="referee-fuzz-") as tmp, _own_homes(Path(tmp)):
        work = Path(tmp)
        fuzzer = Fuzzer(work, seed)
        make = fuzzer.cases(kind)
        started = time.perf_counter()
        for case in range(cases):
            rng = random.Random(f"{seed}:{kind}:{case}")
            for argv in make(rng):
                tally.cases += 1
                # The referee's own allocations: the process's RSS also holds what the fuzzer made
                # (one mutation repeats a line into a value of 200 MB, written into the input).
                tracemalloc.start()
                try:
                    what, status, err = run_main(argv, limit_s)
                    tally.peak_alloc = max(tally.peak_alloc, tracemalloc.get_traced_memory()[1])
                finally:
                    tracemalloc.stop()
                label = f"{kind} case {case}: referee {' '.join(argv)}"
                if what == "traceback":
                    tally.tracebacks.append(f"{label}\n{err}")
                elif what == "hang":
                    tally.hangs.append(label)
                else:
                    tally.statuses[status] += 1
                    if status == 2 and err.count("\n") != 1:
                        tally.not_one_line.append(f"{label}\n{err}")
        tally.seconds = time.perf_counter() - started
    return tally


@contextlib.contextmanager
def _own_homes(tmp: Path) -> Iterator[None]:
    """Never the user's journal or table profile; relative data dirs land in the temp folder."""
    saved = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    cwd = os.getcwd()
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg-data")
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "xdg-config")
    os.chdir(tmp)
    try:
        yield
    finally:
        os.chdir(cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000, help="cases per kind (default 2000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"some of {', '.join(KINDS)}")
    parser.add_argument("--limit", type=float, default=10.0, help="seconds before a case counts as a hang")
    parser.add_argument("--show", type=int, default=2, help="tracebacks and long errors to print per kind")
    args = parser.parse_args()
    import logging

    logging.disable(logging.CRITICAL)  # the referee's own warnings are not what is counted
    print(f"fuzzing the command line: {args.cases} cases a kind, seed {args.seed}, limit {args.limit:g} s")
    print(f"{'kind':<8} {'runs':>6} {'exit 0':>7} {'exit 2':>7} {'other':>6} {'tracebacks':>10} "
          f"{'not 1 line':>10} {'hangs':>6} {'seconds':>8} {'peak RSS':>9} {'referee peak':>13}")  # fmt: skip
    for kind in args.kinds.split(","):
        t = fuzz(kind, args.cases, args.seed, args.limit)
        other = sum(n for s, n in t.statuses.items() if s not in (0, 2))
        counts = f"{t.cases:>6} {t.statuses[0]:>7} {t.statuses[2]:>7} {other:>6} {len(t.tracebacks):>10}"
        print(
            f"{kind:<8} {counts} {len(t.not_one_line):>10} {len(t.hangs):>6} {t.seconds:>8.1f} "
            f"{peak_rss_mb():>6.0f} MB {t.peak_alloc / 2**20:>10.0f} MB",
            flush=True,
        )
        for text in (t.tracebacks + t.not_one_line + t.hangs)[: args.show]:
            print("    " + text.rstrip().replace("\n", "\n    "))


if __name__ == "__main__":
    main()
