"""House-rule options: typed, validated, with the preset's defaults.

Scripts give options as JSON (`{"scan": "top", "race_window": 250}`); windows
are in milliseconds there, and in integer microseconds inside the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import show_json


class OptionError(ValueError):
    """An unknown option or a value it cannot take."""


_CHOICES: dict[str, tuple[str, ...]] = {
    "scan": ("stack", "top"),
    "dead_heat": ("no_winner", "lower_seat"),
    "out_of_turn_card": ("stays", "under"),
}
_WINDOWS_MS = ("race_window", "claim_window")
_MAX_WINDOW_MS = 60_000


@dataclass(frozen=True, slots=True)
class Options:
    """Every house rule the engine knows. Defaults are the `celtic` preset's."""

    scan: str = "stack"  # where pairs and sandwiches count: anywhere in the stack, or top only
    call_restarts_on_win: bool = False  # the call sequence restarts at 1 when a stack is won
    race_window: int = 300_000  # us after a won stack in which presses are late, not wrong
    claim_window: int = 3_000_000  # us a count-out (or stall) hold waits for a snap
    dead_heat: str = "no_winner"  # equal press times on a valid stack: nobody, or the lower seat
    out_of_turn_card: str = "stays"  # an out-of-turn card stays on top, or goes under the stack

    def to_json(self) -> dict[str, Any]:
        """The options as a script would write them (windows in ms)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _WINDOWS_MS:
                value = value // 1000 if value % 1000 == 0 else value / 1000
            out[f.name] = value
        return out

    def updated(self, given: Mapping[str, Any]) -> Options:
        """These options with `given` (script form) applied; OptionError on any bad entry."""
        if not isinstance(given, Mapping):
            raise OptionError(f"options must be an object, not {type(given).__name__}")
        known = {f.name for f in fields(self)}
        changes: dict[str, Any] = {}
        for name, value in given.items():
            if name not in known:
                raise OptionError(f"unknown option {name!r} (known: {', '.join(sorted(known))})")
            changes[name] = _checked(name, value)
        return replace(self, **changes)


def _checked(name: str, value: Any) -> Any:
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            choices = " or ".join(repr(c) for c in _CHOICES[name])
            raise OptionError(f"option {name!r} must be {choices}, not {show_json(value)}")
        return value
    if name in _WINDOWS_MS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise OptionError(f"option {name!r} is a time in milliseconds, not {show_json(value)}")
        if not 0 <= value <= _MAX_WINDOW_MS:
            raise OptionError(f"option {name!r} must be 0..{_MAX_WINDOW_MS} ms, not {show_json(value)}")
        return round(value * 1000)
    if not isinstance(value, bool):
        raise OptionError(f"option {name!r} must be true or false, not {show_json(value)}")
    return value
