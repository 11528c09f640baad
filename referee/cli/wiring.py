"""`referee wiring [FILE]`: what goes where, and `--draw` the schematic as SVG (docs/build.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from hardware.board import read_board
from referee.errors import UserError


def cmd_wiring(args: argparse.Namespace, out: TextIO) -> int:
    # Not at every command's start-up: the wiring's checks (tomllib, some 15 ms) and hw-test's
    # module (gpiozero).
    from referee.live.wiring import WiringError, describe_wiring, load_wiring

    from .hwtest import default_wiring_path  # gpiozero, as above

    path = args.file or default_wiring_path()
    try:
        wiring = load_wiring(path, read_board())
    except WiringError as e:
        raise UserError(str(e)) from None
    if args.draw:
        from calibration.wiring_picture import draw_wiring  # schemdraw: --draw only

        svg = draw_wiring(wiring, f"{len(wiring.seats)} seats: {args.file or 'the default wiring'}")
        out.flush()
        sys.stdout.buffer.write(svg) if out is sys.stdout else out.write(svg.decode())
        return 0
    out.write(describe_wiring(wiring) + "\n")
    for line in wiring.boot_glow():
        out.write(f"note: {line}\n")
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "wiring",
        help="check a wiring file and say what goes where; --draw: its schematic as SVG",
        description="Check a wiring file (the built-in 4-seat plan without FILE) and print which part "
        "goes on which pin; with --draw, print its schematic as SVG instead (> wiring.svg).",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the wiring file (default: the built-in plan)")
    p.add_argument("--draw", action="store_true", help="print the wiring's schematic as SVG")
    p.set_defaults(run=cmd_wiring)
