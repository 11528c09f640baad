"""`referee`: the command line. The imperative shell around the pure engine."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from referee import __version__
from referee.errors import UserError
from referee.live.script_file import open_script
from referee.live.stopping import Stopped, stop_request
from referee.rules.rulings import Ruling
from referee.rules.script import ScriptError, adjudicate_batches
from referee.rules.script_records import ruling_line, ruling_lines

from . import calibrate as calibrate_cli
from . import demo as demo_cli
from . import doctor, install_service
from . import scores as scores_cli
from . import service as service_cli
from . import vision as vision_cli
from . import wiring as wiring_cli

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


BLOCK = 512  # rulings written at once when the script is a regular file


def cmd_adjudicate(args: argparse.Namespace, out: TextIO) -> int:
    stream, name, live = open_script(args.file)
    write = out.write
    if args.pipeline:
        # The simulated table's pins (gpiozero) and threads: loaded only for --pipeline.
        from referee.sim.pipeline import adjudicate_pipeline

        batches: Iterator[list[Ruling]] = ([r] for r in adjudicate_pipeline(stream, name, seed=args.seed))
    else:
        batches = adjudicate_batches(stream, name)  # an event's rulings at a time
    pending: list[Ruling] = []
    # Judging a script makes no reference cycles (tests/test_script_records.py checks it): the
    # cyclic collector would find nothing, and its scans of the growing history cost 4 % of a
    # long game. Refcounting still frees everything; the collector is back on at the end.
    collecting = gc.isenabled() and not args.pipeline  # the pipeline's threads: left as they are
    if collecting:
        gc.disable()
    try:
        try:
            if live:
                # On a pipe or terminal a ruling must show as soon as it is final.
                for batch in batches:
                    write("".join([ruling_line(ruling) + "\n" for ruling in batch]))
                    out.flush()
            else:
                # A regular file is read at full speed and written in large blocks. `extend`
                # keeps what it took before a bad line stops the rulings.
                for batch in batches:
                    pending.extend(batch)
                    if len(pending) >= BLOCK:
                        write(ruling_lines(pending))
                        pending.clear()
        finally:
            write(ruling_lines(pending))  # what was ruled before a bad line stands
    except ScriptError as e:
        out.flush()
        raise UserError(str(e)) from None
    finally:
        if collecting:
            gc.enable()
        if stream.stream is not sys.stdin.buffer:
            stream.close()
    return EXIT_OK


def cmd_hw_test(args: argparse.Namespace, out: TextIO) -> int:
    from .hwtest import run_hw_test  # gpiozero and the pin drivers: only hw-test loads them

    return run_hw_test(args, out)


def add_adjudicate(sub: Any) -> None:
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


def add_hw_test(sub: Any) -> None:
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


# Each command group adds its own subcommands, in the order `referee --help` lists them.
COMMANDS: tuple[Callable[[Any], None], ...] = (
    add_adjudicate,
    demo_cli.add_commands,
    add_hw_test,
    vision_cli.add_commands,
    calibrate_cli.add_commands,
    service_cli.add_commands,
    scores_cli.add_commands,
    install_service.add_commands,
    wiring_cli.add_commands,
    doctor.add_commands,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee", description="A referee for Celtic Egyptian Ratscrew at a real card table."
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_commands in COMMANDS:
        add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
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
