"""House-rule options: typed, validated, with the preset's defaults.

Scripts give options as JSON (`{"scan": "top", "race_window": 250}`); windows
are in milliseconds there, and in integer microseconds inside the engine.

Every rule of every preset is one of these options, so that a host can mix them
into house rules (`celtic` with a 2-card burn, `party` with jokers). The defaults
are the `celtic` preset's; the other presets change some (referee/rules/presets.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from referee.errors import show_json


class OptionError(ValueError):
    """An unknown option or a value it cannot take."""


_CHOICES: dict[str, tuple[str, ...]] = {
    "scan": ("stack", "top"),
    "dead_heat": ("no_winner", "lower_seat"),
    "out_of_turn_card": ("stays", "under", "back"),
    "face_cards": ("counting_out", "challenge", "none"),
    "challenge_claim": ("award", "slap"),
    "penalty_cards_to": ("stack", "penalty_pile"),
    "empty_wrong_snap": ("penalty", "out", "ignored"),
}
# Whole numbers and the values they may take.
_COUNTS: dict[str, tuple[tuple[int, ...], str]] = {
    "slap_run": ((0, 3, 4), "0, 3 or 4"),
    "penalty_cards": (tuple(range(11)), "0 to 10"),
    "wrong_snaps_out": ((0, *range(2, 21)), "0 (never) or 2 to 20"),
}
_WINDOWS_MS = ("race_window", "claim_window", "exclusive_claim")
_MAX_WINDOW_MS = 60_000


@dataclass(frozen=True, slots=True)
class Options:
    """Every house rule the engine knows. Defaults are the `celtic` preset's."""

    scan: str = "stack"  # where pairs and sandwiches count: anywhere in the stack, or top only
    call_restarts_on_win: bool = False  # the call sequence restarts at 1 when a stack is won
    race_window: int = 300_000  # us after a won stack in which presses are late, not wrong
    claim_window: int = 3_000_000  # us a count-out, stall or challenge hold waits for a snap
    dead_heat: str = "no_winner"  # equal press times on a valid stack: nobody, or the lower seat
    # An out-of-turn card stays on top, goes under the stack, or goes back to its seat.
    out_of_turn_card: str = "stays"
    # Picture cards: celtic's count-out, the other seeds' face-card challenge, or nothing.
    face_cards: str = "counting_out"
    # A failed challenge: the challenger is awarded the stack, or must slap to claim it.
    challenge_claim: str = "award"
    exclusive_claim: int = 0  # us of a claim hold in which only the challenger may claim
    # Slap patterns (the pair and sandwich follow `scan`; the others look at the top only).
    slap_calling_out: bool = True
    slap_pair: bool = True  # reason "standard" in celtic (its seed's word), "pair" elsewhere
    slap_sandwich: bool = True
    slap_dark_queen: bool = True
    slap_top_bottom: bool = False  # the top card matches the bottom card
    slap_run: int = 0  # 3 or 4 cards in a row up or down on top; 0: runs do not count
    run_wraps: bool = False  # a run may go "around the corner" (Q-K-A-2)
    slap_marriage: bool = False  # a king and a queen on top, either order
    slap_triple: bool = False  # three of a rank on top
    triple_wins_game: bool = False  # a triple slapped wins the whole game
    slap_joker: bool = False  # a joker on top
    # Penalties: for a wrong snap, and for a card laid out of turn.
    penalty_bars: bool = True  # a penalised seat may not snap until another seat wins a stack
    penalty_cards: int = 0  # cards the penalised seat pays from its pile
    penalty_cards_to: str = "stack"  # ... face down under the stack, or onto the penalty pile
    wrong_snap_gives_stack: bool = False  # the seat that laid the top card takes the stack
    wrong_snaps_out: int = 0  # wrong snaps on this many cards in a row put the seat out; 0: never
    empty_wrong_snap: str = "penalty"  # a seat with no cards snaps wrongly: penalty, out or ignored
    slap_in: bool = True  # a seat with no cards may snap to win cards back
    out_of_turn_penalised: bool = True  # a card laid out of turn is a penalty

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
    if name in _COUNTS:
        allowed, words = _COUNTS[name]
        if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
            raise OptionError(f"option {name!r} must be {words}, not {show_json(value)}")
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
