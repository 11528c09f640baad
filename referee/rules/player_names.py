"""What a player's name may be: short, and only characters that print (docs/run.md).

A name is announced, shown on the kiosk and printed one game a line by `referee games`:
a newline would split that line, a NUL or a bidi override (U+202E) would garble what is
shown around it, and a 30 KB name would fill the screen. Every reader of names (the
config, a script's game line, the kiosk's names command) checks them here.
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 32  # characters: longer than any name a table calls out, short enough for a seat's box


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a player's name, in words, or None when it can."""
    if not name.strip():
        return "a player's name cannot be empty"
    if len(name) > MAX_NAME:
        return f"a player's name is at most {MAX_NAME} characters, not {len(name)}"
    for char in name:
        # isprintable: no control (newline, NUL), format (U+202E) or separator but the space.
        if not char.isprintable():
            what = unicodedata.name(char, "a control character")
            return f"a player's name holds U+{ord(char):04X} ({what}): letters, digits, signs and spaces only"
    return None


def check_names(names: list[str] | tuple[str, ...]) -> None:
    """ValueError saying why the first name that cannot be a player's cannot."""
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            raise ValueError(problem)
