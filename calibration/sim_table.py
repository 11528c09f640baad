"""The simulated table for `referee calibrate --sim`: a person who does what the wizard asks.

They lay the card asked for (now and then a wrong one), at a human pace, pick it up when
told, and answer yes. The table camera (`referee.sim.table_camera`) renders what they do, so
every step is driven through real frames, the pile watcher and the recogniser.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np

from referee.cards import SUITED
from referee.sim.table_camera import TableCamera

LAY_S = (1.2, 2.5)  # from the prompt to the card at rest: reading it, finding the card, laying it
PICK_UP_S = (0.6, 1.2)
LOOK_S = 5.0  # at most this long after an action for the step to see it (it is seen in ~0.2 s)


class SimTable:
    """One player at the calibration table, seen by the simulated camera."""

    def __init__(
        self,
        seed: int,
        wrong: float = 0.05,
        seat: int = 0,
        slips: dict[int, int] | None = None,
        missing: frozenset[str] = frozenset(),
        **camera: Any,
    ) -> None:
        self.rng = random.Random(seed)
        self.wrong = wrong
        self.seat = seat  # where the person sits, unless a prompt names a seat
        self.slips = dict(slips or {})  # seat -> the seat whose side its first reach comes from
        self.missing = missing  # the codes of the cards this person's deck lacks
        self.camera = TableCamera(4, np.random.default_rng(seed), **camera)
        self.now = 0
        self.actions = 0
        self.wrong_cards = 0

    def _wait(self, seconds: tuple[float, float]) -> int:
        self.now += round(self.rng.uniform(*seconds) * 1e6)
        return self.now

    def act(self, prompt: Any) -> Iterator[Any]:
        """Do what `prompt` asks, then show frame after frame: the caller stops reading when the
        step has seen it (its prompt changed), and the person's clock is where the frames were."""
        self.actions += 1
        seat = prompt.seat if prompt.seat is not None else self.seat
        if prompt.waits == "card":
            seat = self.slips.pop(seat, seat)  # reaching in from a neighbour's side, once
            card = prompt.asked or self.rng.choice(SUITED)
            if prompt.asked is not None and not prompt.check and self.rng.random() < self.wrong:
                self.wrong_cards += 1  # a slip while going through the deck, not in the self-check
                card = self.rng.choice([c for c in SUITED if c != prompt.asked])
            self.camera.lay(self._wait(LAY_S), card, seat)
            self._last_seat = seat
        elif prompt.waits == "clear":
            self.camera.take(self._wait(PICK_UP_S), getattr(self, "_last_seat", seat))
        end = self.now + round(LOOK_S * 1e6)
        frame_us = round(1e6 / self.camera.fps)
        while self.now < end:
            self.now += frame_us
            yield from self.camera.frames_until(self.now)

    def answer(self, prompt: Any) -> str:
        return "y"

    def choose(self, prompt: Any) -> str | None:
        """An answer given instead of acting: "missing" for a card asked that the deck lacks."""
        asked = getattr(prompt, "asked", None)
        if asked is not None and asked.code in self.missing and "missing" in prompt.choices:
            self.now += round(self.rng.uniform(*LAY_S) * 1e6)  # looking through the deck for it
            return "missing"
        return None

    def camera_frames(self, step: Any, seconds: float = 60.0) -> Iterator[Any]:
        """The camera step's frames: the empty table until it asks for a card, then the person
        lays one in the middle (any card) and leaves it there."""
        end = self.now + round(seconds * 1e6)
        frame_us = round(1e6 / self.camera.fps)
        laid = False
        while self.now < end:
            if step.prompt().phase == "lay" and not laid:
                self.camera.lay(self._wait(LAY_S), self.rng.choice(SUITED), self.seat)
                laid = True
            self.now += frame_us
            yield from self.camera.frames_until(self.now)
