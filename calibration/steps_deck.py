"""The wizard's deck step: each card laid in the middle in turn, learnt, then a self-check.

The step has no I/O of its own. The wizard (terminal or kiosk page) shows `prompt()`,
feeds it camera frames (`feed_frame`) and the user's answers (`answer`), and stops when
`done`. The same object serves the terminal, the kiosk page and the simulated table.

What it asks:

1. "Lay the 7 of hearts face up on the pile (18 of 52)". The cards go one on another, as
   in a game: the pile watcher sees each come to rest, and the built-in recogniser reads
   it. Nobody has to pick up each card.
   - The card asked: its frame and its outline are kept. "Good: the 7 of hearts." Then
     the next card is asked.
   - Another card, read surely: "That is the 7 of clubs. Take it off and lay the 7 of
     hearts." Taking it off, clearing the table, or laying the 7 of hearts on top all do.
   - A doubtful reading: "I could not read it well. Take it off and lay it again." A
     second doubtful reading asks "Is it the 7 of hearts? (y/n)": a deck the built-in
     model reads poorly is what calibration is for, so the user's word settles it.
2. Once every card is in, the deck's model is learnt from the frames (`Profile.learn`,
   with each card's outline as the watcher found it on the pile).
3. The self-check: 10 cards drawn at random are laid again, and read with the new model.
   Each is read once and counted right or wrong, and the accuracy is reported.

A card the deck lacks (lost, or a joker's place taken by an advert card) is answered
"missing" while it is asked: it is left out, the profile reads it by its corner alone (as
the built-in model does), and the end says so. With more than a quarter of the deck
missing, the step stops with "this does not look like a whole deck": a model learnt from
so few cards is no use (`DeckMissing`).

Quick mode asks only the court cards and the aces (16 cards). The built-in model reads
pips and indices well on most decks; the faces are where a deck differs most.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from referee.cards import SUITED, Card, parse_card
from referee.errors import UserError
from referee.vision.recogniser import Profile, Recogniser
from referee.vision.watcher import PileWatcher, WatchAsk, WatchLay

from .steps import Prompt

SURE = 0.8  # a reading this confident of another card: the user laid the wrong one
DOUBT = 0.5  # below this, the reading of the card asked is doubtful
CHECKS = 10
RANK_WORDS = {"A": "ace", "J": "jack", "Q": "queen", "K": "king"}
SUIT_WORDS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
QUICK_RANKS = ("A", "J", "Q", "K")
MISSING = "missing"
MOST_MISSING = 0.25  # more of the cards asked missing than this: not a whole deck


class DeckMissing(UserError):
    """Too many of the cards asked were missing to learn the deck from."""


def card_words(card: Card) -> str:
    """'7 of hearts', 'queen of spades'."""
    rank = card.code[:-1]
    return f"{RANK_WORDS.get(rank, rank)} of {SUIT_WORDS[card.code[-1]]}"


@dataclass(frozen=True)
class DeckResult:
    profile: Profile
    learnt: tuple[str, ...]  # the codes the model has pictures of
    missing: tuple[str, ...]  # the codes the person said the deck lacks (read by their corner)
    checked: tuple[tuple[str, str | None], ...]  # the self-check: (card laid, card read)

    @property
    def accuracy(self) -> float:
        return sum(laid == read for laid, read in self.checked) / max(len(self.checked), 1)


@dataclass
class DeckStep:
    """`recogniser`: the built-in model that checks each card laid. `rng`: the self-check's draw."""

    recogniser: Recogniser
    rng: random.Random
    quick: bool = False
    checks: int = CHECKS
    learnt: Profile | None = None  # a deck already learnt: only its self-check (`calibrate check`)
    fps: float = 30.0
    name: str = "deck"
    cards: list[Card] = field(init=False)
    images: dict[str, np.ndarray] = field(init=False, default_factory=dict)
    missing: list[str] = field(init=False, default_factory=list)
    quads: dict[str, np.ndarray] = field(init=False, default_factory=dict)
    _prompt: Prompt = field(init=False)
    _doubts: int = field(init=False, default=0)
    _recent: deque[Any] = field(init=False)
    _checking: list[Card] = field(init=False, default_factory=list)
    _checked: list[tuple[str, str | None]] = field(init=False, default_factory=list)
    _profile: Profile | None = field(init=False, default=None)
    _pending: Card | None = field(init=False, default=None)  # read doubtfully twice: the user says
    _pending_image: np.ndarray | None = field(init=False, default=None)
    _pending_quad: np.ndarray | None = field(init=False, default=None)
    _readings: dict[int, Any] = field(init=False, default_factory=dict)  # frame time -> what it read

    def __post_init__(self) -> None:
        self.cards = [c for c in SUITED if not self.quick or c.code[:-1] in QUICK_RANKS]
        self._recent = deque(maxlen=int(self.fps))  # frames by time: the rest frame is kept from them
        self._watcher = self._new_watcher(self.recogniser)
        if self.learnt is not None:
            codes = set(self.learnt.face_codes.tolist())
            self._start_check(self.learnt, [c for c in SUITED if c.code in codes])
        self._ask()

    def _new_watcher(self, recogniser: Recogniser) -> PileWatcher:
        def read(image: np.ndarray, mask: Any) -> Any:
            reading = recogniser.recognise(image, mask)
            frame = next((f for f in reversed(self._recent) if f.image is image), None)
            if frame is not None:  # the outline of the card on top, for learning it from a pile
                self._readings[frame.t_us] = reading
            return reading

        return PileWatcher(read, fps=self.fps)

    # What the wizard reads --------------------------------------------------------------------

    def prompt(self) -> Prompt:
        return self._prompt

    @property
    def done(self) -> bool:
        return self._prompt.waits == "nothing"

    def result(self) -> DeckResult:
        if self._profile is None or not self.done:
            raise RuntimeError("the deck step has not finished")
        return DeckResult(self._profile, tuple(self.images), tuple(self.missing), tuple(self._checked))

    # What the wizard tells it -------------------------------------------------------------------

    def feed_frame(self, frame: Any) -> None:
        self._recent.append(frame)
        for event in self._watcher.feed(frame):
            if type(event) is WatchAsk:
                # Not sure enough for a game, but here the card asked for is known: the reading is
                # weighed against it below (kept, asked about, or laid again), as a doubtful one.
                event = WatchLay(event.t_us, event.guess, event.confidence, event.seat)  # type: ignore[arg-type]
            if self._prompt.waits == "clear" and (
                type(event) is not WatchLay or event.card != self._prompt.asked
            ):
                self._ask()  # the wrong card taken off (or the table cleared): ask again
            elif type(event) is WatchLay:
                self._laid(event)
        oldest = self._recent[0].t_us
        self._readings = {t: r for t, r in self._readings.items() if t >= oldest}

    def answer(self, text: str) -> None:
        if MISSING in self._prompt.choices and text.strip().lower() == MISSING:
            self._missing(self._prompt.asked)
            return
        if self._prompt.waits != "answer" or self._pending is None:
            return
        if text.strip().lower().startswith("y"):
            self._keep(self._pending, self._pending_image, self._pending_quad)
        else:
            again = f"Take it off and lay the {card_words(self._pending)}."
            self._prompt = Prompt(again, "clear", self._progress(), self._pending)
        self._pending = None

    # Inside -------------------------------------------------------------------------------------

    def _progress(self) -> tuple[int, int]:
        if self._profile is not None:
            return len(self._checked) + 1, len(self._checking)
        return len(self.images) + len(self.missing) + 1, len(self.cards)

    def _next_card(self) -> Card | None:
        if self._profile is not None:
            return self._checking[len(self._checked)] if len(self._checked) < len(self._checking) else None
        gone = set(self.images) | set(self.missing)
        return next((c for c in self.cards if c.code not in gone), None)

    def _ask(self, before: str = "") -> None:
        card = self._next_card()
        if card is None and self._profile is None:
            self._learn()
            card = self._next_card()
        if card is None:
            right = sum(laid == read for laid, read in self._checked)
            learnt, checked = len(self.images), len(self._checked)
            text = f"Done: {learnt} cards learnt; the self-check read {right} of {checked} right."
            if self.missing:
                words = ", ".join(card_words(parse_card(code)) for code in self.missing)
                text = text.replace(" learnt;", f" learnt ({len(self.missing)} missing: {words});")
            if self.learnt is not None:
                text = f"Done: the self-check read {right} of {checked} right."
            self._prompt = Prompt(text, "nothing")
            return
        n, of = self._progress()
        what = "Self-check: lay" if self._profile is not None else "Lay"
        where = "on the pile" if self.images or self._checked else "in the middle"
        text = f"{before}{what} the {card_words(card)} face up {where} ({n} of {of})."
        checking = self._profile is not None
        choices = () if checking else (MISSING,)
        self._prompt = Prompt(text, "card", (n, of), card, check=checking, choices=choices)

    def _learn(self) -> None:
        self._start_check(
            Profile.learn(self.images, self.quads), [c for c in self.cards if c.code in self.images]
        )

    def _start_check(self, profile: Profile, pool: list[Card]) -> None:
        self._profile = profile
        self._checking = self.rng.sample(pool, min(self.checks, len(pool)))
        self._watcher = self._new_watcher(Recogniser(profile))
        self._doubts = 0

    def _rest_frame(self, t_us: int) -> np.ndarray | None:
        return next((f.image for f in self._recent if f.t_us == t_us), None)

    def _laid(self, lay: WatchLay) -> None:
        # Waiting for the wrong card to go, the right one laid on top of it does as well.
        if self._prompt.waits not in ("card", "clear") or self._prompt.asked is None:
            return
        asked = self._prompt.asked
        if self._profile is not None:  # the self-check: one reading each, right or wrong
            self._checked.append((asked.code, lay.card.code if lay.card else None))
            self._ask()
            return
        image = self._rest_frame(lay.t_us)
        reading = self._readings.get(lay.t_us)
        quad = reading.quad if reading is not None and reading.card == lay.card else None
        if lay.card == asked and lay.confidence >= DOUBT and image is not None:
            self._keep(asked, image, quad)
        elif lay.card is not None and lay.card != asked and lay.confidence >= SURE:
            text = f"That is the {card_words(lay.card)}. Take it off and lay the {card_words(asked)}."
            self._prompt = Prompt(text, "clear", self._progress(), asked)
        elif self._doubts == 0 or image is None:
            self._doubts += 1
            self._prompt = Prompt(
                "I could not read it well. Take it off and lay it again.", "clear", self._progress(), asked
            )
        else:
            self._pending, self._pending_image, self._pending_quad = asked, image, quad
            self._prompt = Prompt(
                f"Is it the {card_words(asked)}? (y/n)", "answer", self._progress(), choices=("yes", "no")
            )

    def _missing(self, card: Card | None) -> None:
        if card is None:
            return
        self.missing.append(card.code)
        if len(self.missing) > MOST_MISSING * len(self.cards):
            raise DeckMissing(
                f"deck: {len(self.missing)} of the {len(self.cards)} cards asked are missing; this does "
                "not look like a whole deck (nothing saved: calibrate the deck with all its cards)"
            )
        self._doubts = 0
        self._ask(f"Left out: the {card_words(card)}. ")

    def _keep(self, card: Card, image: np.ndarray | None, quad: np.ndarray | None) -> None:
        assert image is not None
        self.images[card.code] = image
        if quad is not None:
            self.quads[card.code] = quad
        self._doubts = 0
        self._ask(f"Good: the {card_words(card)}. ")
