"""The calibration commands: `referee calibrate` (the whole wizard) and its steps alone,
`referee calibrate camera|seats|deck|buttons|check`, plus `calibrate deck --images DIR`.

This module is their command line. What they do is calibrate_run.py's, imported when one of
them runs: it loads numpy, OpenCV and the pin libraries, which no other command needs at
start-up (docs/calibration.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TextIO


def _runs(name: str) -> Callable[[argparse.Namespace, TextIO], int]:
    """The command that runs calibrate_run's `name`, imported only when it runs."""

    def run(args: argparse.Namespace, out: TextIO) -> int:
        from . import calibrate_run  # numpy, OpenCV, the pins: when calibrating only

        return getattr(calibrate_run, name)(args, out)

    return run


cmd_calibrate_all = _runs("calibrate_all")
cmd_calibrate_deck = _runs("calibrate_deck")
cmd_calibrate_seats = _runs("calibrate_seats")
cmd_calibrate_camera = _runs("calibrate_camera")
cmd_calibrate_check = _runs("calibrate_check")
cmd_calibrate_buttons = _runs("calibrate_buttons")


def _source_options(parser: Any, required: bool = True) -> None:
    """--camera SOURCE or --sim: where an interactive calibration step runs."""
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--camera", metavar="SOURCE", help="at this camera (camera, 0, a video)")
    group.add_argument("--sim", action="store_true", help="at the simulated table")


def _profile_options(parser: Any, restart: bool = True) -> None:
    """The table profile a step writes to, the simulated table's seed, and a fresh start."""
    parser.add_argument(
        "--out", metavar="PROFILE", help="the table profile (default: /etc/referee or XDG config)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seeds the simulated table and the cards drawn")
    if restart:
        parser.add_argument("--restart", action="store_true", help="forget an unfinished wizard's progress")


def _kiosk_options(parser: Any) -> None:
    """--kiosk (the wizard's page as well as the terminal), where to serve it, and the
    simulated table's pace."""
    parser.add_argument(
        "--kiosk",
        action="store_true",
        help="show the wizard on the kiosk page too, and answer its questions there (docs/calibration.md)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="the page's address (default 127.0.0.1: this machine)"
    )
    parser.add_argument("--port", type=int, default=8080, help="the page's port (default 8080; 0: any free)")
    parser.add_argument(
        "--speed",
        type=float,
        help="pace the simulated table: 1 = a person's pace (the default with --kiosk), 10 = ten times "
        "faster, 0 = at once (the default in the terminal)",
    )


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate",
        help="calibrate the table: camera, seats, deck, buttons",
        description="The whole wizard (camera, seats, deck, buttons, each saved as it is done, resumed "
        "after an interruption), or one step: referee calibrate camera|seats|deck|buttons.",
    )
    steps = p.add_subparsers(dest="what", required=False, metavar="WHAT")
    _wizard_options(p)
    p.set_defaults(run=cmd_calibrate_all, what=None)
    _add_deck(steps)
    _add_seats(steps)
    _add_camera(steps)
    _add_check(steps)
    _add_buttons(steps)


def _wizard_options(p: argparse.ArgumentParser) -> None:
    """`referee calibrate`: every step's options, as the whole wizard asks them."""
    _source_options(p, required=False)
    p.add_argument(
        "--players", default="Ann,Bob,Cy,Dee", help="the players' names in seat order, comma-separated"
    )
    p.add_argument("--quick", action="store_true", help="the deck step: only the court cards and aces")
    p.add_argument("--name", default="my deck", help="the deck's name in the table profile")
    p.add_argument("--snapshot", metavar="PNG", help="where to save the camera's snapshot")
    p.add_argument("--wiring", metavar="FILE", help="the buttons step: the wiring file (default: built in)")
    _profile_options(p)
    _kiosk_options(p)


def _add_deck(steps: Any) -> None:
    d = steps.add_parser(
        "deck",
        help="learn a deck from one image per card",
        description="Learn a deck from one camera frame per card, each named by its code (QS.png, 10H.jpg).",
    )
    how = d.add_mutually_exclusive_group(required=True)
    how.add_argument("--images", metavar="DIR", help="one image per card, named by code")
    how.add_argument("--camera", metavar="SOURCE", help="interactively, at this camera (camera, 0, a video)")
    how.add_argument("--sim", action="store_true", help="interactively, at the simulated table")
    d.add_argument(
        "--out",
        metavar="PROFILE",
        help="where to write the profile (.npz); interactively, the table profile "
        "(default: /etc/referee or the XDG config folder's table-profile.npz)",
    )
    d.add_argument("--quick", action="store_true", help="interactively: only the court cards and aces")
    d.add_argument("--name", default="my deck", help="the deck's name in the table profile")
    d.add_argument("--seed", type=int, default=1, help="seeds the self-check's draw and the simulated table")
    d.add_argument("--restart", action="store_true", help="forget an unfinished wizard's progress")
    _kiosk_options(d)
    d.set_defaults(run=cmd_calibrate_deck)


def _add_seats(steps: Any) -> None:
    st = steps.add_parser(
        "seats",
        help="find each seat's side of the picture",
        description="Each seat reaches in and lays a card: the side its hand comes from is recorded.",
    )
    _source_options(st)
    st.add_argument("--players", required=True, help="the players' names in seat order, comma-separated")
    _profile_options(st)
    _kiosk_options(st)
    st.set_defaults(run=cmd_calibrate_seats)


def _add_camera(steps: Any) -> None:
    c = steps.add_parser(
        "camera",
        help="check the camera's light and focus, and find the pile's area",
        description="Live meters and a verdict, exposure and focus locked once good, the pile's area "
        "found from one card laid in the middle, confirmed, and drawn on a snapshot.",
    )
    _source_options(c)
    c.add_argument(
        "--snapshot", metavar="PNG", help="where to save the snapshot (default: beside the profile)"
    )
    _profile_options(c)
    _kiosk_options(c)
    c.set_defaults(run=cmd_calibrate_camera)


def _add_check(steps: Any) -> None:
    k = steps.add_parser(
        "check",
        help="check the table against its profile, in under a minute",
        description="The camera where it was calibrated, 10 cards read by the deck's model, and each "
        "seat's button pressed once where it was found, its light and the buzzer confirmed.",
    )
    _source_options(k)
    _profile_options(k, restart=False)
    _kiosk_options(k)
    k.set_defaults(run=cmd_calibrate_check)


def _add_buttons(steps: Any) -> None:
    b = steps.add_parser(
        "buttons",
        help="find each seat's button, check the LEDs and the buzzer",
        description="Each seat presses its button three times (its pin found on whichever free GPIO "
        "it is wired to, its bounce measured), confirms its LED, and the buzzer plays a test tune. "
        "At this machine's pins (the Pi's), or at the simulated table with --sim. Answers (skip, "
        "retry, yes...) are typed and Enter, or tapped on the page with --kiosk.",
    )
    b.add_argument("--sim", action="store_true", help="at the simulated table")
    b.add_argument("--players", type=int, default=4, help="seats, with the built-in wiring (default 4)")
    b.add_argument("--wiring", metavar="FILE", help="the wiring file whose pins to watch")
    _profile_options(b)
    _kiosk_options(b)
    b.set_defaults(run=cmd_calibrate_buttons)
