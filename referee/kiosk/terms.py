"""The words of a game, for the kiosk: which slaps count (the legend) and what each term means.

Pure: a preset (with its house-rule options) in, plain dicts out. The page draws the legend
and wraps each term it shows ("count-out", "dark queen", "penalised"...) so that a tap on it
explains it. Only the terms this game has are given: classic has no count-out and no calling
out, so its page never offers to explain them. The sentences follow docs/rules.md.
"""

from __future__ import annotations

from typing import Any

from referee.rules.engine import Celtic
from referee.rules.options import Options

CHANCES = "J 1, Q 2, K 3, A 4"


def _where(o: Options, top: str) -> str:
    return f"on top ({top})" if o.scan == "top" else "anywhere in the stack"


def slap_legend(rules: Celtic) -> list[dict[str, str]]:
    """The slap patterns that count in this game, in the order a ruling lists its reasons:
    `key` (the term to explain), `word` (as the log says it)."""
    o = rules.options
    keys = []
    if o.slap_calling_out:
        keys.append("calling_out")
    if o.slap_pair:
        keys.append("pair")
    if o.slap_sandwich:
        keys.append("sandwich")
    if o.slap_dark_queen:
        keys.append("dark_queen")
    if o.slap_top_bottom:
        keys.append("top_bottom")
    if o.slap_run:
        keys.append("run")
    if o.slap_marriage:
        keys.append("marriage")
    if o.slap_triple:
        keys.append("triple")
    if o.slap_joker:
        keys.append("joker")
    terms = game_terms(rules)
    return [{"key": k, "word": terms[k]["word"]} for k in keys]


def game_terms(rules: Celtic) -> dict[str, dict[str, str]]:
    """Every term this game uses: key -> {word, text} (one or two short sentences)."""
    o = rules.options
    terms = {**_slap_terms(rules), **_face_card_terms(o)}
    terms["hold"] = (
        "hold",
        f"Play stops for {o.claim_window / 1e6:g} s: the first snap takes the stack, "
        "else it goes to the seat named, when the bar runs out.",
    )
    terms["wrong_snap"] = ("wrong snap", _wrong_snap(o))
    terms.update(_penalty_terms(o))
    terms["dead_heat"] = ("dead heat", "Two presses at the same microsecond: nobody wins the stack.")
    terms["late"] = ("late", "A press after the stack was won: it costs nothing.")
    return {k: {"word": w, "text": t} for k, (w, t) in terms.items()}


def _slap_terms(rules: Celtic) -> dict[str, tuple[str, str]]:
    """The slap patterns that count, in the legend's order: key -> (word, text)."""
    o = rules.options
    terms: dict[str, tuple[str, str]] = {}
    if o.slap_calling_out:
        terms["calling_out"] = (
            "calling out",
            "Each card laid is called 1, 2 ... 13 (A to K) in turn, over the whole game. "
            "Snap when the card's rank is the number called for it: NEXT CALL shows the next one.",
        )
    if o.slap_pair:
        terms["pair"] = ("pair", f"Two cards of one rank next to each other, {_where(o, 'the top two')}.")
    if o.slap_sandwich:
        middle = " of another rank" if getattr(rules, "sandwich_middle_differs", False) else ""
        terms["sandwich"] = (
            "sandwich",
            f"Two cards of one rank with one card{middle} between them, {_where(o, 'the top three')}.",
        )
    if o.slap_dark_queen:
        terms["dark_queen"] = ("dark queen", "The top card is the queen of spades (Q♠).")
    if o.slap_top_bottom:
        terms["top_bottom"] = ("top and bottom", "The top card has the rank of the stack's bottom card.")
    if o.slap_run:
        corner = " Around the corner counts too (Q-K-A-2)." if o.run_wraps else ""
        example = "7-8-9-10" if o.slap_run == 4 else "7-8-9"
        terms["run"] = ("run", f"{o.slap_run} ranks in a row on top, up or down ({example}).{corner}")
    if o.slap_marriage:
        terms["marriage"] = ("marriage", "A king and a queen on top, in either order.")
    if o.slap_triple:
        wins = " Slapping one wins the whole game." if o.triple_wins_game else ""
        terms["triple"] = ("triple", f"Three cards of one rank on top.{wins}")
    if o.slap_joker:
        terms["joker"] = ("joker", "A joker on top.")
    return terms


def _face_card_terms(o: Options) -> dict[str, tuple[str, str]]:
    """What a face card starts in this game: a count-out, a challenge, or nothing."""
    if o.face_cards == "counting_out":
        return {
            "count_out": (
                "count-out",
                f"A picture card ({CHANCES}) starts a count-out of that many cards. When it runs out "
                "with no snap on the stack, the seat that laid the picture card takes the stack.",
            )
        }
    if o.face_cards == "challenge":
        claim = (
            f" It must slap to claim it: for {o.exclusive_claim / 1e6:g} s only it may."
            if o.challenge_claim == "slap"
            else ""
        )
        return {
            "challenge": (
                "challenge",
                f"A face card challenges the next seat: {CHANCES} chances to lay a face card. "
                f"If it fails, the challenger takes the stack.{claim}",
            )
        }
    return {}


def _penalty_terms(o: Options) -> dict[str, tuple[str, str]]:
    """The penalties this game has: being penalised, the penalty pile."""
    terms: dict[str, tuple[str, str]] = {}
    if o.penalty_bars:
        terms["penalised"] = (
            "penalised",
            "After a wrong snap or a card laid out of turn: this seat's snaps do not count "
            "until another seat wins a stack. It still lays on its turn.",
        )
    if o.penalty_cards and o.penalty_cards_to == "penalty_pile":
        terms["penalty_pile"] = (
            "penalty pile",
            f"A wrong slap puts {o.penalty_cards} cards face down beside the stack. "
            "Whoever wins the next stack picks them up too.",
        )
    return terms


def _wrong_snap(o: Options) -> str:
    """What a wrong snap costs in this game."""
    costs = []
    if o.penalty_bars:
        costs.append("the seat is penalised")
    if o.penalty_cards:
        where = "face down on the penalty pile" if o.penalty_cards_to == "penalty_pile" else "under the stack"
        costs.append(f"it puts {o.penalty_cards} cards {where}")
    if o.wrong_snap_gives_stack:
        costs.append("the seat that laid the top card takes the stack")
    if o.wrong_snaps_out:
        costs.append(f"{o.wrong_snaps_out} on cards in a row put the seat out")
    cost = "; ".join(costs) if costs else "nothing"
    return f"A snap when no slap pattern is on the stack: {cost}."


def game_words(rules: Celtic) -> dict[str, Any]:
    """What the view's `game` carries for the page: the legend and the terms."""
    return {"slaps": slap_legend(rules), "terms": game_terms(rules)}
