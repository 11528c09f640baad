"""`referee demo`: bots at a virtual table, judged live (the game itself: referee/sim/demo.py)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from referee.rules.presets import PRESETS


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    from referee.sim.demo import run_demo  # rich is imported only when the demo runs

    return run_demo(args, out)


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="a whole virtual game: bots at a virtual table",
        description="Bots with human reaction times play a whole game; the referee judges it live.",
    )
    _game_options(p)
    _page_options(p)
    _output_options(p)
    p.set_defaults(run=cmd_demo, stoppable=True)


def _game_options(p: argparse.ArgumentParser) -> None:
    """The game the bots play, and how fast the table runs."""
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


def _page_options(p: argparse.ArgumentParser) -> None:
    """Where the kiosk page is served, and for how long after the game."""
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


def _output_options(p: argparse.ArgumentParser) -> None:
    """What the terminal prints, and the demo's journal."""
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
