"""What every wizard step shows: a prompt, and what it waits for.

A step is a small object with no I/O of its own: `prompt()` says what to show, the
wizard feeds it frames (`feed_frame`) and answers (`answer`), and `done` ends it, with
`result()`. The terminal, the kiosk page and the simulated table all drive the same
step objects (`calibration.wizard`).
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.cards import Card


@dataclass(frozen=True)
class Prompt:
    """What the wizard shows now, and what the step waits for."""

    text: str
    waits: str  # "card" (frames), "clear" (frames, the table bare again), "answer" (y/n), "nothing"
    progress: tuple[int, int] | None = None
    asked: Card | None = None  # the card to lay (the simulated table lays it)
    seat: int | None = None  # the seat asked to act (the simulated table acts from there)
    check: bool = False  # the self-check: the card is read once, right or wrong
    # Answers taken while the step still waits: "yes"/"no" for a question; "missing" while a
    # card is asked, for a deck without it. The kiosk shows them as buttons.
    choices: tuple[str, ...] = ()
