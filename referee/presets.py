"""Rule presets by name. A preset is a small subclass of `Celtic` (see engine.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .engine import Celtic

PRESETS: dict[str, type[Celtic]] = {Celtic.name: Celtic}


class UnknownPreset(ValueError):
    pass


def rules_for(name: str, options: Mapping[str, Any] | None = None) -> Celtic:
    """The preset called `name` with `options` applied over its defaults."""
    preset = PRESETS.get(name) if isinstance(name, str) else None
    if preset is None:
        raise UnknownPreset(f"unknown rules {name!r} (known: {', '.join(sorted(PRESETS))})")
    return preset.with_options(options)
