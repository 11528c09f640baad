"""The camera's commands: `referee recognize` and `referee watch`.

The output contracts are in docs/table-script.md: `watch` prints table-script
lines (lays with `confidence` and, when the hand's side is known, `seat`, and
`{"t": ..., "cleared": true}`), so `referee watch clip.mp4 --game g.json | referee
adjudicate -` works.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from referee.errors import UserError, read_capped
from referee.rules.script import MAX_LINE, ScriptError, read_script

# OpenCV and numpy are imported by the commands that use them, not by every `referee`
# command: adjudicate and demo start faster, and run where the camera extra is absent.

EXIT_CAMERA_LOST = 3  # the service restarts the camera on this one
SIDES = ("bottom", "top", "left", "right")


def cmd_recognize(args: argparse.Namespace, out: TextIO) -> int:
    """The top card of each frame: one JSON line per frame, a one-line error per bad frame."""
    from hardware.image_files import ImageFileError, read_image  # OpenCV: see above
    from referee.vision.recogniser import recogniser_for

    recogniser = recogniser_for(args.profile, args.deck)
    failed = 0
    for name in args.frames:
        try:
            image = read_image(name)
        except ImageFileError as e:
            print(f"{name}: {e}", file=sys.stderr)
            failed += 1
            continue
        reading = recogniser.recognise(image, thorough=True)  # a still photo: no next frame
        line = {
            "frame": name,
            "card": reading.card.code if reading.card is not None else None,
            "confidence": round(reading.confidence, 3),
            "sure": reading.sure,  # sure enough to act on; otherwise ask (docs/vision.md)
        }
        out.write(json.dumps(line) + "\n")
    why = recogniser.profile_mismatch()
    if why is not None:
        print(f"{args.profile}: {why}", file=sys.stderr)
        return 2
    return 2 if failed else 0


def parse_sides(text: str | None) -> dict[str, int] | None:
    """`bottom=0,left=1,top=2,right=3`: which frame edge each seat's hand comes from."""
    if not text:
        return None
    sides: dict[str, int] = {}
    for part in text.split(","):
        side, _, seat = part.partition("=")
        side = side.strip().lower()
        if side not in SIDES or not seat.strip().isdigit():
            raise UserError(
                f"--seats: {part.strip()!r} should be SIDE=SEAT with SIDE one of {', '.join(SIDES)}"
            )
        sides[side] = int(seat)
    return sides


def _game_line(spec: str) -> dict[str, Any]:
    """--game: a game line (JSON) or a file holding one, checked as adjudicate would."""
    path = Path(spec)
    text = spec
    if os.path.exists(path):  # False, not an error, for a path it may not look into
        try:
            text = read_capped(path, MAX_LINE).decode("utf-8")
        except OSError as e:
            raise UserError(f"--game {spec}: cannot read: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise UserError(f"--game {spec}: not UTF-8 text") from None
    try:
        next(read_script([text.strip()], "--game"))  # checked as adjudicate would check it
    except ScriptError as e:
        raise UserError(str(e)) from None
    return json.loads(text)


def cmd_watch(args: argparse.Namespace, out: TextIO) -> int:
    """Lays (and cleared stacks) seen in a video, an image folder or the camera, as a table script."""
    from hardware.camera import black_frames_lose, open_source  # OpenCV: see above
    from hardware.frames import CameraLost, SourceError
    from referee.vision.recogniser import recogniser_for
    from referee.vision.watcher import PileWatcher, WatchCleared, WatchLay

    game = _game_line(args.game) if args.game else None
    sides = parse_sides(args.seats)
    # The deck: as --deck says, else as the game line says (52 cards unless it says 54), else any.
    deck = args.deck or (game.get("deck", 52) if game is not None else 54)
    recogniser = recogniser_for(args.profile, deck)
    seen: set[str] = set()  # cards laid since the stack was last cleared: unlikely to come again

    def recognise(image: Any, mask: Any) -> Any:
        return recogniser.recognise(image, mask, frozenset(seen))

    try:
        source = open_source(args.source, fps=args.fps)
    except SourceError as e:
        raise UserError(str(e)) from None
    watcher = PileWatcher(recognise, sides=sides, fps=args.fps or 30.0)
    live = args.source == "camera" or args.source.isdigit()
    if game is not None:
        out.write(json.dumps(game) + "\n")

    def emit(events: list) -> None:
        for event in events:
            if type(event) is WatchLay:
                seen.add(event.card.code)
            elif type(event) is WatchCleared:
                seen.clear()
            out.write(event.to_json() + "\n")
            if live:
                out.flush()

    try:
        with source:
            for frame in black_frames_lose(source, source.name) if live else source:
                emit(watcher.feed(frame))
                why = recogniser.profile_mismatch()
                if why is not None:  # every reading would be suspect: stop, having said why
                    out.flush()
                    print(f"{args.profile}: {why}", file=sys.stderr)
                    return 2
        emit(watcher.finish())
    except CameraLost as e:
        emit(watcher.finish())
        out.flush()
        print(f"{e}", file=sys.stderr)
        return EXIT_CAMERA_LOST
    if source.skipped:
        print(f"{source.name}: {source.skipped} unreadable frame(s) skipped", file=sys.stderr)
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "recognize",
        help="the top card of the pile in each image",
        description="Print the top card of the pile in each image as JSON lines.",
    )
    p.add_argument("frames", nargs="+", metavar="FRAME", help="image files")
    p.add_argument("--profile", help="a deck profile from `referee calibrate deck`")
    p.add_argument(
        "--deck", type=int, choices=(52, 54), default=54, help="52: a joker is refused (default 54: read)"
    )
    p.set_defaults(run=cmd_recognize)

    p = sub.add_parser(
        "watch",
        help="print the lays seen in a video, an image folder or the camera, as a table script",
        description="Watch the pile and print each laid card (and each cleared stack) as table-script lines.",
    )
    p.add_argument(
        "source", help="a video file, a folder of frames (read in name order), a webcam index, or camera"
    )
    p.add_argument(
        "--fps", type=float, help="frame rate of an image folder (default 30) or a video's override"
    )
    p.add_argument("--game", help="a game line (JSON, or a file holding it) to print first, for adjudicate")
    p.add_argument(
        "--seats", help="which frame edge each seat's hand comes from: bottom=0,left=1,top=2,right=3"
    )
    p.add_argument("--profile", help="a deck profile from `referee calibrate deck`")
    p.add_argument(
        "--deck",
        type=int,
        choices=(52, 54),
        help="52: a joker is refused (default: the --game line's deck, else a joker is read)",
    )
    p.set_defaults(run=cmd_watch)
