"""The announcer's tones for a page to play where no buzzer is wired (docs/kiosk.md, "Sound"). Pure.

The buzzer's cues of a ruling's pattern (`announcer.pattern`) become a list of notes, each
`(hz, ms)` (`hz` None: a rest), which the page plays with Web Audio. Only the sound is
taken: the lights stay the table's. The announcer's priorities come along, so a page
lets a late tick pass under a winner's chirp as the buzzer does.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from referee.rules.announcer import QUERY, RULING, Cue, pattern
from referee.rules.rulings import Ruling

Note = tuple[int | None, int]


def notes_of(cues: list[Cue]) -> list[Note]:
    """The buzzer's cues of a pattern as notes from its start: each value held until the next
    cue (a rest before the first one); the pattern's last cue (back to silence) ends it."""
    buzzer = sorted((cue for cue in cues if cue.target == "buzzer"), key=lambda cue: cue.at_us)
    notes: list[Note] = []
    at = 0
    for cue, following in pairwise(buzzer):
        if cue.at_us > at:
            notes.append((None, (cue.at_us - at) // 1000))
        hz = cue.value if isinstance(cue.value, int | float) and not isinstance(cue.value, bool) else None
        length = (following.at_us - cue.at_us) // 1000
        if length > 0:
            notes.append((None if hz is None else round(hz), length))
        at = following.at_us
    return notes


def ruling_sound(ruling: Ruling, seats: int) -> tuple[int, list[Note]] | None:
    """A ruling's notes and their priority (`announcer` TICK, RULING, FINALE); None when it
    makes no sound (a lay, a penalised seat's press)."""
    prio, cues = pattern(ruling, seats)
    notes = notes_of(cues)
    return (prio, notes) if any(hz is not None for hz, _ in notes) else None


def query_sound() -> tuple[int, list[Note]]:
    """The camera's question: the rising query tone."""
    return RULING, [(hz, us // 1000) for hz, us in QUERY]


def sound_json(seq: int, sound: tuple[int, list[Note]]) -> dict[str, Any]:
    """The view's `sound`: `seq` grows with each sound made, so a page plays each once."""
    prio, notes = sound
    return {"seq": seq, "prio": prio, "notes": [[hz, ms] for hz, ms in notes]}


SOUND_CHOICES = ("auto", "on", "off")
KEEP_SOUNDS = 4  # the view carries the last few: a page that skipped a version still hears them


def sound_default(setting: str, local: bool, buzzer: bool) -> bool:
    """Whether a screen plays the tones until its viewer says otherwise (the page's toggle,
    kept in that browser). `setting`: the config's `[kiosk] sound`. "auto": the Pi's own
    screen (`local`) plays them unless a buzzer is wired (it would be heard twice, a beat
    apart); a phone stays silent (a table of phones beeping out of step with each other and
    the buzzer), until its owner turns it on."""
    if setting == "on":
        return True
    if setting == "off":
        return False
    return local and not buzzer
