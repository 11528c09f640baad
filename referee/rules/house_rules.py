"""House rules from the kiosk: the options of the next game, checked, in words. Pure.

The host sets them on the kiosk (`POST /api/admin/house-rules`); they apply from the next
new game, never the one being played (its events were judged under its own rules), and
are journaled (`Journal.set_next_game`), so a restart keeps them. The legend shows the
current game's house rules (its options that differ from its preset's) and the next
game's, when they differ from this one's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from .options import _CHOICES, _COUNTS, _WINDOWS_MS, OptionError, Options
from .presets import PRESETS, UnknownPreset
from .state import State

MAX_OPTIONS = 64  # more entries than the engine has options is a mistake, said in one line


def kinds() -> dict[str, dict[str, Any]]:
    """Every option and what it takes, for the page's toggles: `bool`, `choice` (`choices`),
    `count` (`choices`: the whole numbers allowed) or `ms` (a window, 0 to 60000)."""
    out: dict[str, dict[str, Any]] = {}
    for f in fields(Options):
        if f.name in _CHOICES:
            out[f.name] = {"kind": "choice", "choices": list(_CHOICES[f.name])}
        elif f.name in _COUNTS:
            out[f.name] = {"kind": "count", "choices": list(_COUNTS[f.name][0])}
        elif f.name in _WINDOWS_MS:
            out[f.name] = {"kind": "ms"}
        else:
            out[f.name] = {"kind": "bool"}
    return out


def overrides(rules: str, given: Any) -> dict[str, Any]:
    """The options a host gave for `rules`, checked (OptionError, ValueError: one line) and
    kept only where they differ from the preset's own: the house rules proper."""
    preset = PRESETS.get(rules)
    if preset is None:
        raise UnknownPreset(f"unknown rules {rules!r} (known: {', '.join(sorted(PRESETS))})")
    if not isinstance(given, Mapping):
        raise OptionError("give 'options' as an object of option names and values")
    if len(given) > MAX_OPTIONS:
        raise OptionError(f"{len(given)} options given; there are {len(fields(Options))}")
    chosen = preset.defaults.updated(given).to_json()
    own = preset.defaults.to_json()
    return {name: value for name, value in chosen.items() if value != own[name]}


def option_words(name: str, value: Any) -> str:
    """One option in words, as the legend shows it ("dark queen off", "run 3", "race window 250 ms")."""
    words = name.removeprefix("slap_").replace("_", " ")
    if isinstance(value, bool):
        return f"{words} {'on' if value else 'off'}"
    if name in _WINDOWS_MS:
        return f"{words} {value} ms"
    return f"{words} {str(value).replace('_', ' ')}"


def house_words(rules: str, options: Mapping[str, Any]) -> list[str]:
    """The options (script form) that differ from the preset's own, in words."""
    preset = PRESETS.get(rules)
    own = preset.defaults.to_json() if preset is not None else {}
    return [option_words(k, v) for k, v in options.items() if own.get(k) != v]


def house_view(state: State, next_game: Mapping[str, Any] | None) -> dict[str, Any]:
    """The view's `house`: `now`, this game's house rules in words; `next`, the next game's
    rules (`rules`, `options`: its house rules, `words`) when the host has set ones that differ
    from this game's, else None."""
    rules = state.rules.name
    now = state.rules.options.to_json()
    upcoming = None
    if next_game is not None:
        game = next_game.get("game", next_game)
        next_rules = game.get("rules", "celtic")
        next_options = dict(game.get("options", {}))
        preset = PRESETS.get(next_rules)
        if preset is not None:
            full = preset.defaults.updated(next_options).to_json()
            if next_rules != rules or full != now:
                upcoming = {
                    "rules": next_rules,
                    "options": next_options,
                    "words": house_words(next_rules, next_options),
                }
    return {"now": house_words(rules, now), "next": upcoming}


def next_values(next_game: Mapping[str, Any] | None, state: State) -> dict[str, Any]:
    """What the host's house-rules panel starts from: the next game's rules and every option's
    value for it (the current game's, when the host has set nothing)."""
    if next_game is None:
        return {"rules": state.rules.name, "values": state.rules.options.to_json(), "kinds": kinds()}
    game = next_game.get("game", next_game)
    rules = game.get("rules", "celtic")
    values = PRESETS[rules].defaults.updated(dict(game.get("options", {}))).to_json()
    return {"rules": rules, "values": values, "kinds": kinds()}
