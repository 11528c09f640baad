"""`referee`: the command line. The imperative shell around the pure engine."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from itertools import islice
from typing import TextIO

from referee import __version__
from referee.errors import UserError
from referee.live.script_file import open_script
from referee.rules.presets import PRESETS
from referee.rules.rulings import Ruling
from referee.rules.script import ScriptError, adjudicate
from referee.rules.script_records import ruling_line, ruling_lines

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


BLOCK = 512  # rulings written at once when the script is a regular file


def cmd_adjudicate(args: argparse.Namespace, out: TextIO) -> int:
    stream, name, live = open_script(args.file)
    write = out.write
    if args.pipeline:
        from referee.sim.pipeline import adjudicate_pipeline

        rulings = adjudicate_pipeline(stream, name, seed=args.seed)
    else:
        rulings = adjudicate(stream, name)
    pending: list[Ruling] = []
    try:
        try:
            if live:
                # On a pipe or terminal a ruling must show as soon as it is final.
                for ruling in rulings:
                    write(ruling_line(ruling) + "\n")
                    out.flush()
            else:
                # A regular file is read at full speed and written in large blocks. `extend`
                # keeps what it took before a bad line stops the rulings.
                while True:
                    pending.extend(islice(rulings, BLOCK))
                    if not pending:
                        break
                    write(ruling_lines(pending))
                    pending.clear()
        finally:
            write(ruling_lines(pending))  # what was ruled before a bad line stands
    except ScriptError as e:
        out.flush()
        raise UserError(str(e)) from None
    finally:
        if stream.stream is not sys.stdin.buffer:
            stream.close()
    return EXIT_OK


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    from referee.sim.demo import run_demo  # rich is imported only when the demo runs

    return run_demo(args, out)


def cmd_hw_test(args: argparse.Namespace, out: TextIO) -> int:
    from .hwtest import run_hw_test

    return run_hw_test(args, out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee", description="A referee for Celtic Egyptian Ratscrew at a real card table."
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "adjudicate",
        help="judge a table script (JSONL) and print the rulings",
        description="Read a table script and print one ruling per line (JSONL).",
    )
    p.add_argument("file", metavar="FILE|-", help="the table script, or - for standard input")
    p.add_argument(
        "--pipeline",
        action="store_true",
        help="replay the script through the live table loop on simulated buttons and camera "
        "(presses bounce and arrive late and out of order); the rulings must not change",
    )
    p.add_argument("--seed", type=int, default=0, help="seeds the simulated delays of --pipeline")
    p.set_defaults(run=cmd_adjudicate)

    p = sub.add_parser(
        "demo",
        help="a whole virtual game: bots at a virtual table",
        description="Bots with human reaction times play a whole game; the referee judges it live.",
    )
    p.add_argument("--players", type=int, default=3, metavar="N", help="2 to 8 bots (default 3)")
    p.add_argument(
        "--seed",
        type=int,
        help="seeds the deal and the bots: the same seed plays the same game (default: a new one each "
        "run, printed; an interrupted game resumes with its own)",
    )
    p.add_argument(
        "--rules",
        default="celtic",
        metavar="PRESET",
        help=f"the game the bots play and the referee judges: {', '.join(sorted(PRESETS))} (default celtic)",
    )
    p.add_argument(
        "--cap",
        type=int,
        default=20_000,
        metavar="LAYS",
        help="stop the game after this many lays (default 20000)",
    )
    p.add_argument(
        "--speed",
        type=float,
        help="pace the table: 1 = real time (the default with the kiosk page), 10 = ten times faster; "
        "0 = at once (the default with --headless)",
    )
    p.add_argument("--headless", action="store_true", help="no kiosk page: the terminal only")
    p.add_argument(
        "--no-camera",
        action="store_true",
        help="the cards reach the referee as reported lays, not through rendered camera frames (faster)",
    )
    p.add_argument("--forever", action="store_true", help="deal again after each win (Ctrl-C stops)")
    p.add_argument(
        "--port",
        type=int,
        default=8080,
        help="the kiosk page's port (default 8080; 0: any free)",
    )
    p.add_argument(
        "--listen",
        metavar="ADDRESS",
        default="127.0.0.1",
        help="where the kiosk page listens: 0.0.0.0 lets phones on the network watch "
        "(default 127.0.0.1: this machine only)",
    )
    p.add_argument(
        "--linger",
        type=float,
        metavar="S",
        help="after the game, keep the kiosk page (the winner screen) served for S seconds "
        "(default: until Ctrl-C on a terminal, 0 otherwise)",
    )
    p.add_argument("--quiet", action="store_true", help="only the result and the summary table")
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where the demo's journal lives (default: the XDG data dir's referee/demo)",
    )
    p.add_argument("--new-game", action="store_true", help="do not resume an interrupted demo game")
    out_group = p.add_mutually_exclusive_group()
    out_group.add_argument(
        "--json",
        action="store_true",
        help="print the table script with each event's rulings after it (JSONL)",
    )
    out_group.add_argument(
        "--script",
        action="store_true",
        help="print only the table script (feed it to `referee adjudicate -`)",
    )
    p.set_defaults(run=cmd_demo, stoppable=True)

    p = sub.add_parser(
        "hw-test",
        help="light each LED, play each tone, then show live presses with their timestamps",
        description="Check the table's wiring: LEDs one at a time, the buzzer's tones, then every "
        "button press with its microsecond edge timestamp and the margin to the previous press.",
    )
    p.add_argument("--wiring", metavar="FILE", help="the wiring file (default: the built-in 4-seat plan)")
    p.add_argument("--mock", action="store_true", help="run on mock pins with scripted presses (no Pi)")
    p.add_argument("--seconds", type=float, help="stop watching presses after this long (default: Ctrl-C)")
    p.set_defaults(run=cmd_hw_test)

    from . import calibrate as calibrate_cli
    from . import doctor, install_service
    from . import scores as scores_cli
    from . import service as service_cli
    from . import vision as vision_cli
    from . import wiring as wiring_cli

    vision_cli.add_commands(sub)
    calibrate_cli.add_commands(sub)
    service_cli.add_commands(sub)
    scores_cli.add_commands(sub)
    install_service.add_commands(sub)
    wiring_cli.add_commands(sub)
    doctor.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from referee.live.stopping import Stopped, stop_request

    # `referee` (referee/__main__.py) takes SIGTERM and SIGINT from its first line; `python -m
    # referee.cli.main` and callers in this process from here.
    mine = not stop_request.installed
    if mine:
        stop_request.reset()
        mine = stop_request.install()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "stoppable", False):
            # Commands without a table to stop cleanly: Ctrl-C is KeyboardInterrupt, SIGTERM ends.
            stop_request.uninstall()
            if stop_request.requested:
                return stop_request.exit_code
        return _run(args)  # a stoppable command takes a request already made itself (STOPPING=1)
    except Stopped as e:
        return e.code
    finally:
        if mine:
            stop_request.uninstall()


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.run(args, sys.stdout))
    except UserError as e:
        # One line, whatever the message quotes (SQLite quotes a damaged schema's lines).
        print(" ".join(part.strip() for part in str(e).splitlines()), file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours; keep Python quiet at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
