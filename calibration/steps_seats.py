"""The wizard's seats step: which side of the picture each seat's hand comes in from.

"Ann (seat 1 of 4): reach in from where you sit and lay a card in the middle." The pile
watcher sees the hand come in and names the frame edge it crossed. That side is recorded
for the seat, and the seat takes the card back.

- An unclear side (the hand crossed two edges, or too little of it showed) asks again.
- A side already taken by another seat asks again, up to four seats (one a side).
- With five seats or more, some seats must share a side. Those seats cannot be told
  apart by the hand: both are recorded, but neither gets the side, so the referee
  names no seat for a lay from there (the turn order still tells it).

The result is the `[camera] seats` table of the service's config: `{side: seat}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.vision.watcher import EDGES, PileWatcher, WatchAsk, WatchLay

from .steps import Prompt


@dataclass
class SeatsStep:
    names: Sequence[str]
    recogniser: Any  # the watcher reports a lay once it reads the card: any card will do here
    fps: float = 30.0
    name: str = "seats"
    sides: dict[int, str] = field(init=False, default_factory=dict)  # seat -> the side its hand came from
    _seat: int = field(init=False, default=0)
    _prompt: Prompt = field(init=False)

    def __post_init__(self) -> None:
        # The watcher names "seats" 0..3 for the four edges: here they stand for the edges.
        self._watcher = PileWatcher(
            lambda image, mask: self.recogniser.recognise(image, mask),
            sides={edge: i for i, edge in enumerate(EDGES)},
            fps=self.fps,
        )
        self._ask()

    def prompt(self) -> Prompt:
        return self._prompt

    @property
    def done(self) -> bool:
        return self._prompt.waits == "nothing"

    def result(self) -> dict[str, int]:
        """The config's `[camera] seats`: each side with the one seat whose hand comes from it."""
        if not self.done:
            raise RuntimeError("the seats step has not finished")
        counts = {side: list(self.sides.values()).count(side) for side in self.sides.values()}
        return {side: seat for seat, side in self.sides.items() if counts[side] == 1}

    def feed_frame(self, frame: Any) -> None:
        for event in self._watcher.feed(frame):
            if type(event) in (WatchLay, WatchAsk):  # any card laid: its hand's side is what counts
                self._laid(event)
            elif self._prompt.waits == "clear":
                self._ask()

    def answer(self, text: str) -> None:
        pass  # nothing is asked in words

    def _ask(self) -> None:
        if self._seat >= len(self.names):
            shared = sorted({s for s in self.sides.values() if list(self.sides.values()).count(s) > 1})
            note = f"; shared, so not told apart: {', '.join(shared)}" if shared else ""
            sides = ", ".join(f"{self.names[seat]} {side}" for seat, side in sorted(self.sides.items()))
            self._prompt = Prompt(f"Done: {sides}{note}.", "nothing")
            return
        who = self.names[self._seat]
        n, of = self._seat + 1, len(self.names)
        text = f"{who} (seat {n} of {of}): reach in from where you sit and lay a card"
        self._prompt = Prompt(
            text + " in the middle.", "card", (self._seat + 1, len(self.names)), seat=self._seat
        )

    def _laid(self, lay: WatchLay | WatchAsk) -> None:
        if self._prompt.waits != "card":
            return
        who = self.names[self._seat]
        side = EDGES[lay.seat] if lay.seat is not None else None
        taken = next((s for s, sd in self.sides.items() if sd == side), None)
        if side is None:
            retry = "I could not tell where the hand came from. Take the card back, and reach straight in."
            self._prompt = Prompt(retry, "clear", self._prompt.progress, seat=self._seat)
        elif taken is not None and len(self.names) <= 4:
            retry = f"That hand came from the {side}, where {self.names[taken]} sits. Take the card back."
            self._prompt = Prompt(retry, "clear", self._prompt.progress, seat=self._seat)
        else:
            self.sides[self._seat] = side
            self._seat += 1
            self._prompt = Prompt(
                f"Good: {who} reaches in from the {side}. Take the card back.", "clear", seat=self._seat - 1
            )
