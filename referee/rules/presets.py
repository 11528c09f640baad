"""Rule presets by name. A preset is a small subclass of `Celtic` (see engine.py).

The other seeds' games differ from celtic only in their options' defaults (and two
words): each rule is an option, so a host can also mix them into house rules. Why
each default is what it is: docs/rules.md, next to the seed sentence it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from .engine import Celtic
from .options import Options

# What the three seeds 002-004 share: the face-card challenge instead of the count-out,
# slaps judged on the top of the stack only, no calling out, no dark queen, and no bar
# on snapping (their penalties cost cards, or the stack).
_FACE_CARD_GAMES = replace(
    Options(),
    scan="top",
    face_cards="challenge",
    slap_calling_out=False,
    slap_dark_queen=False,
    penalty_bars=False,
)


class Classic(Celtic):
    """Seed 002, a classic rules page: pairs, runs of four (around the corner too), jokers,
    a triple wins the game; a wrong slap hands the stack to the seat that laid the top card."""

    name: ClassVar[str] = "classic"
    pair_reason: ClassVar[str] = "pair"
    defaults: ClassVar[Options] = replace(
        _FACE_CARD_GAMES,
        slap_sandwich=False,
        slap_run=4,
        run_wraps=True,
        slap_triple=True,
        triple_wins_game=True,
        slap_joker=True,
        wrong_snap_gives_stack=True,
        wrong_snaps_out=6,  # "more than five consecutive cards"
        empty_wrong_snap="ignored",
        out_of_turn_card="back",  # "it is ignored and set aside", played on the seat's turn
        out_of_turn_penalised=False,
    )


class Paranoid(Celtic):
    """Seed 003, the Paranoid Game: doubles and sandwiches on top, the challenger's 3-second
    exclusive claim by slapping, 5 cards to the penalty pile for a wrong slap."""

    name: ClassVar[str] = "paranoid"
    pair_reason: ClassVar[str] = "pair"
    sandwich_middle_differs: ClassVar[bool] = True  # "separated by one card of a different value"
    defaults: ClassVar[Options] = replace(
        _FACE_CARD_GAMES,
        challenge_claim="slap",
        exclusive_claim=3_000_000,
        penalty_cards=5,
        penalty_cards_to="penalty_pile",
        empty_wrong_snap="out",  # it cannot pay the 5 cards
    )


class Party(Celtic):
    """Seed 004: pair, sandwich, top-and-bottom, 4-card straight, marriage; a wrong slap
    burns 2 cards under the stack; a seat with no cards that slaps wrongly is out."""

    name: ClassVar[str] = "party"
    pair_reason: ClassVar[str] = "pair"
    defaults: ClassVar[Options] = replace(
        _FACE_CARD_GAMES,
        slap_top_bottom=True,
        slap_run=4,
        slap_marriage=True,
        penalty_cards=2,
        empty_wrong_snap="out",
    )


PRESETS: dict[str, type[Celtic]] = {p.name: p for p in (Celtic, Classic, Paranoid, Party)}


class UnknownPreset(ValueError):
    pass


def rules_for(name: str, options: Mapping[str, Any] | None = None) -> Celtic:
    """The preset called `name` with `options` applied over its defaults."""
    preset = PRESETS.get(name) if isinstance(name, str) else None
    if preset is None:
        raise UnknownPreset(f"unknown rules {name!r} (known: {', '.join(sorted(PRESETS))})")
    return preset.with_options(options)
