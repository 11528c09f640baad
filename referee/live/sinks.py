"""Where a judged event and its rulings go: the journal first, then stdout, then "told".

`Recorder` commits each event the loop judged to the journal before any of its rulings
goes out; `RulingPrinter` prints the rulings as the `adjudicate` contract's JSON lines;
`Teller`, the last ruling sink, notes in the journal how far the rulings were told, so
that a restart announces again only what may not have gone out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TextIO

from referee.rules.events import Event
from referee.rules.rulings import Ruling
from referee.rules.script import event_to_json

from .journal import Journal


@dataclass
class Recorder:
    """The loop's event sink: each judged event committed to the journal, in order."""

    journal: Journal
    game: int
    seq: int

    def __call__(self, event: Event, tag: Any) -> None:
        mark = tag if type(tag) is int else None  # a script's line number
        self.journal.append(self.game, self.seq, event_to_json(event), mark)
        self.seq += 1


class RulingPrinter:
    """Rulings as the `adjudicate` contract's JSON lines, each flushed: printed means told."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, ruling: Ruling) -> None:
        self.out.write(json.dumps(ruling.to_json()) + "\n")
        self.out.flush()

    def again(self, ruling: Ruling) -> None:
        """A ruling announced again after a restart (it may not have gone out before the crash)."""
        self.out.write(json.dumps(ruling.to_json() | {"again": True}) + "\n")
        self.out.flush()


@dataclass
class Teller:
    """The last ruling sink: once a ruling is out (printed, on the kiosk), the journal notes how
    far the game's rulings were told, so that a restart announces again only what may not
    have gone out. A ruling belongs to the event the recorder wrote last: the loop judges the
    next event only after the last one's rulings went out."""

    journal: Journal
    recorder: Recorder
    write: bool = True  # False: only count (the demo notes them when its batch is shown)
    seq: int = -1
    count: int = 0

    def __call__(self, ruling: Ruling) -> None:
        seq = self.recorder.seq - 1
        if seq != self.seq:
            self.seq, self.count = seq, 0
        self.count += 1
        if self.write:
            self.journal.told(self.recorder.game, seq, self.count)
