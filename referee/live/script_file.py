"""A table script's lines from FILE or `-` (stdin): `referee adjudicate` and `referee run
--lays-from` read it the same way."""

from __future__ import annotations

import os
import stat
import sys

from referee.errors import UserError
from referee.rules.script import CappedLines


def open_script(path: str) -> tuple[CappedLines, str, bool]:
    """The script's lines (each at most MAX_LINE bytes), the name errors should use, and
    whether it is a live stream."""
    if path == "-":
        stream = sys.stdin.buffer
        name = "<stdin>"
    else:
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed by the caller
        except OSError as e:
            raise UserError(f"{path}: cannot read: {e.strerror or e}") from None
        name = path
    try:
        live = not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError):
        live = True
    return CappedLines(stream, name), name, live
