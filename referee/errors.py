"""The one error type the command line shows as a single line (exit status 2), and how
those lines quote what the user wrote."""

import json
from typing import Any


class UserError(Exception):
    """A mistake the user can fix: a bad file, a bad option, missing hardware."""


def show_json(value: Any) -> str:
    """A value as a JSON file (a script, a game line's options) wrote it, for error messages."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
