"""The referee's voice: rulings as a schedule of light and sound cues. Pure.

No threads, no gpiozero, no clock: `Announcer.announce(ruling, now_us)` is told
the time, and `due(now_us)` says which values to set. `hardware.signals` plays
them on the pins.

Targets:

- `("seat", i)`: seat i's LED, a brightness 0.0..1.0.
- `"status"`: the RGB status LED, an `(r, g, b)` tuple of 0..1.
- `"buzzer"`: a frequency in Hz, or None for silence.

Every target starts off (0.0, (0, 0, 0), None), as the devices do.

Base modes (what a target shows when no pattern plays on it):

- Seat: the seat on turn (`Laid.next`, `StackWon.next`) glows at 0.25; other
  seats are off. A penalised seat blinks instead: 1.0 for 500 ms, then its
  turn level (0.25 or off) for 500 ms, from the moment of the penalty, for as
  long as the penalty lasts. A penalty ends for every seat but the winner when a
  stack is won, and for everyone on `PenaltiesLifted` or `GameWon`. After
  `GameWon` the winner's LED stays on at 1.0 until the next game's first ruling.
- Status: red while the game is paused (`pause`: the camera is lost), amber
  (1.0, 0.5, 0.0) while the referee asks which card was laid (`ask`: judging
  holds until it is named) and during a count-out hold (`Laid.next` None: nobody
  is on turn), green after `GameWon`, otherwise off.
- Buzzer: silent.

Patterns (each starts at the announcement, not at the ruling's `t`, which can
be up to a race window in the past):

- `StackWon` by snap: the winner's LED flashes 4 times, 60 ms on / 60 ms off
  (480 ms); the buzzer chirps 880, 1175, 1568 Hz, 60 ms each (180 ms); status
  green for 480 ms.
- `StackWon` by claim (a slap, in paranoid): as by snap.
- `StackWon` by counting_out, stall, challenge or penalty (an award or a
  hand-over, not a slap): the same flash and green, and a falling two-tone
  "ding-dong" instead: 1319 Hz for 120 ms, then 988 Hz for 240 ms (360 ms).
- `Penalty`: a low buzz, 220 Hz for 300 ms; status red for 300 ms; the seat's
  blink (re)starts at once with its LED on. A penalty that bars nothing (the
  other seeds' card penalties) does not blink: what it costs has its own pattern.
- `SnapIgnored` late: a tick, 2000 Hz for 15 ms. dead_heat: a double tick,
  2000 Hz for 15 ms, 45 ms silence, 2000 Hz for 15 ms (75 ms). penalised:
  nothing: the seat's LED already blinks, and a penalised player mashing the
  button must not chop up the table's other sounds.
- `Burned` (a seat pays N cards): an instruction the players carry out, so the
  lights count it: the penalty buzz (220 Hz, 300 ms), then per card a click
  (660 Hz, 80 ms, 170 ms apart) with a flash of the seat's LED (1.0 for 80 ms);
  status red throughout. Counted up to 10 cards (the most a penalty costs).
- `SeatOut`: the seat's LED on at 1.0 for 900 ms, then its base mode (off: it
  holds no cards); a falling 440, 330, 220 Hz, 300 ms each; status red 900 ms.
- `TakeBack`: the seat's LED flashes twice (80 ms on, 80 ms off) with two
  1500 Hz ticks of 40 ms: "that card goes back to you".
- `PenaltiesLifted`: no pattern of its own; every blink stops (the penalty buzz
  that caused it, announced at the same instant, plays on).
- `GameWon`: a melody, 1047, 1319, 1568 Hz for 150 ms each then 2093 Hz for
  450 ms (900 ms); a chase: each seat's LED on for 100 ms in turn, from the
  winner clockwise, 3 rounds; status runs through red, yellow, green, cyan,
  blue, magenta, 150 ms each (900 ms), then stays green.
- `Laid`: no pattern; it only moves the turn (and starts or ends a hold).
- A question (`ask`, a card the camera could not read for sure): a rising
  query tone, 660 Hz for 90 ms, 40 ms silence, 990 Hz for 140 ms (270 ms), and
  the status LED amber until the card is named.

Pre-emption: a pattern takes over every target it has a cue for. That
target's pending cues are dropped, and it shows the new pattern's cue, or its
base mode until the new pattern's first cue; when the pattern ends, it returns
to its base mode (read at that moment, so a blink keeps its phase). Nothing is
left half way. Patterns have a priority (tick < ruling < finale): a pattern
does not take over a target whose current pattern outranks it, so the late
tick that comes with a snap win (the win waits for the next press, which is
late) never cuts off the winner's chirp, and nothing cuts off the finale.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

from .rulings import (
    Burned,
    GameWon,
    Laid,
    PenaltiesLifted,
    Penalty,
    Ruling,
    SeatOut,
    SnapIgnored,
    StackWon,
    TakeBack,
)

Target = tuple[str, int] | str
Value = float | tuple[float, float, float] | None

MS = 1000  # microseconds

TURN_LEVEL = 0.25
BLINK_ON = 1.0
BLINK_HALF_US = 500 * MS
OFF = (0.0, 0.0, 0.0)
RED = (1.0, 0.0, 0.0)
GREEN = (0.0, 1.0, 0.0)
AMBER = (1.0, 0.5, 0.0)
RAINBOW = ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0), GREEN, (0.0, 1.0, 1.0), (0.0, 0.0, 1.0), (1.0, 0.0, 1.0))

FLASHES, FLASH_US = 4, 60 * MS
CHIRP, CHIRP_US = (880, 1175, 1568), 60 * MS
AWARD = ((1319, 120 * MS), (988, 240 * MS))
BUZZ_HZ, BUZZ_US = 220, 300 * MS
TICK_HZ, TICK_US, TICK_GAP_US = 2000, 15 * MS, 45 * MS
COUNT_HZ, COUNT_US, COUNT_GAP_US, COUNT_MAX = 660, 80 * MS, 90 * MS, 10
OUT_TONES = ((440, 300 * MS), (330, 300 * MS), (220, 300 * MS))
BACK_HZ, BACK_US = 1500, 40 * MS
QUERY = ((660, 90 * MS), (None, 40 * MS), (990, 140 * MS))  # rising, like a question: "which card?"
MELODY = ((1047, 150 * MS), (1319, 150 * MS), (1568, 150 * MS), (2093, 450 * MS))
CHASE_US, CHASE_ROUNDS = 100 * MS, 3
RAINBOW_US = 150 * MS

# Priorities: a pattern never takes a target over from a higher one that is still playing.
TICK, RULING, FINALE = 0, 1, 2


class _Base:
    """The `value` of a cue that hands its target back to its base mode."""

    def __repr__(self) -> str:
        return "BASE"


BASE = _Base()


class Cue(NamedTuple):
    """Set `target` to `value` at `at_us` (relative to the pattern's start in a pattern)."""

    at_us: int
    target: Target
    value: Value | _Base


def seat(i: int) -> Target:
    return ("seat", i)


# Patterns: pure, relative to 0, each target's last cue is BASE. -----------------------


def stack_won(winner: int, by: str) -> list[Cue]:
    s = seat(winner)
    cues = []
    for k in range(FLASHES):
        cues += [Cue(2 * k * FLASH_US, s, 1.0), Cue((2 * k + 1) * FLASH_US, s, 0.0)]
    end = 2 * FLASHES * FLASH_US
    cues += [Cue(end, s, BASE), Cue(0, "status", GREEN), Cue(end, "status", BASE)]
    tones = [(hz, CHIRP_US) for hz in CHIRP] if by in ("snap", "claim") else AWARD
    return cues + _tones(tones)


def burned(payer: int, cards: int) -> list[Cue]:
    """The penalty buzz, then a click and a flash per card to pay."""
    s = seat(payer)
    tones: list[tuple[int | None, int]] = [(BUZZ_HZ, BUZZ_US)]
    cues = [Cue(0, s, BASE)]
    at = BUZZ_US
    for _ in range(min(cards, COUNT_MAX)):
        tones += [(COUNT_HZ, COUNT_US), (None, COUNT_GAP_US)]
        cues += [Cue(at, s, 1.0), Cue(at + COUNT_US, s, 0.0)]
        at += COUNT_US + COUNT_GAP_US
    cues += [Cue(at, s, BASE), Cue(0, "status", RED), Cue(at, "status", BASE)]
    return cues + _tones(tones)


def seat_out(out: int) -> list[Cue]:
    end = sum(length for _, length in OUT_TONES)
    s = seat(out)
    return [
        Cue(0, s, 1.0),
        Cue(end, s, BASE),
        Cue(0, "status", RED),
        Cue(end, "status", BASE),
        *_tones(OUT_TONES),
    ]


def take_back(taker: int) -> list[Cue]:
    s = seat(taker)
    cues = []
    for k in range(2):
        cues += [Cue(2 * k * BACK_US, s, 1.0), Cue((2 * k + 1) * BACK_US, s, 0.0)]
    cues.append(Cue(4 * BACK_US, s, BASE))
    return cues + _tones([(BACK_HZ, BACK_US), (None, BACK_US), (BACK_HZ, BACK_US)])


def penalty(penalised: int) -> list[Cue]:
    # The seat's cue hands it to its base mode at once: the blink, just restarted.
    return [
        Cue(0, seat(penalised), BASE),
        Cue(0, "buzzer", BUZZ_HZ),
        Cue(BUZZ_US, "buzzer", BASE),
        Cue(0, "status", RED),
        Cue(BUZZ_US, "status", BASE),
    ]


def snap_ignored(reason: str) -> list[Cue]:
    if reason == "late":
        return _tones([(TICK_HZ, TICK_US)])
    if reason == "dead_heat":
        return _tones([(TICK_HZ, TICK_US), (None, TICK_GAP_US), (TICK_HZ, TICK_US)])
    return []  # penalised: the seat already blinks


def game_won(winner: int, seats: int) -> list[Cue]:
    cues = [Cue(0, seat(i), 0.0) for i in range(seats) if i != winner]
    steps = CHASE_ROUNDS * seats
    for k in range(steps):
        if k:
            cues.append(Cue(k * CHASE_US, seat((winner + k - 1) % seats), 0.0))
        cues.append(Cue(k * CHASE_US, seat((winner + k) % seats), 1.0))
    cues += [Cue(steps * CHASE_US, seat(i), BASE) for i in range(seats)]
    cues += [Cue(k * RAINBOW_US, "status", colour) for k, colour in enumerate(RAINBOW)]
    cues.append(Cue(len(RAINBOW) * RAINBOW_US, "status", BASE))
    return cues + _tones(MELODY)


# Each kind of ruling's transient pattern and its priority (a kind not here has none).
_PATTERNS: dict[type, Callable[[Any, int], tuple[int, list[Cue]]]] = {
    StackWon: lambda r, seats: (RULING, stack_won(r.seat, r.by)),
    Penalty: lambda r, seats: (RULING, penalty(r.seat)),
    SnapIgnored: lambda r, seats: (TICK, snap_ignored(r.reason)),
    GameWon: lambda r, seats: (FINALE, game_won(r.seat, seats)),
    Burned: lambda r, seats: (RULING, burned(r.seat, r.cards)),
    SeatOut: lambda r, seats: (RULING, seat_out(r.seat)),
    TakeBack: lambda r, seats: (RULING, take_back(r.seat)),
}


def pattern(ruling: Ruling, seats: int) -> tuple[int, list[Cue]]:
    """A ruling's transient pattern and its priority."""
    make = _PATTERNS.get(type(ruling))
    return (RULING, []) if make is None else make(ruling, seats)


def _tones(tones: list[tuple[int | None, int]] | tuple[tuple[int, int], ...]) -> list[Cue]:
    cues, at = [], 0
    for hz, length in tones:
        cues.append(Cue(at, "buzzer", hz))
        at += length
    cues.append(Cue(at, "buzzer", BASE))
    return cues


def blink_next(since_us: int, after_us: int) -> int:
    """The first blink toggle after `after_us` (toggles fall every half period from `since_us`)."""
    if after_us < since_us:
        return since_us
    return since_us + ((after_us - since_us) // BLINK_HALF_US + 1) * BLINK_HALF_US


def blink_level(since_us: int, t_us: int, rest: float) -> float:
    """A blinking seat's level at `t_us`: on for the first half of each period, else `rest`."""
    return BLINK_ON if (t_us - since_us) // BLINK_HALF_US % 2 == 0 else rest


# The schedule. -----------------------------------------------------------------------


class _Track:
    """One target: its pending pattern cues, and what it last showed."""

    __slots__ = ("at", "cues", "prio", "refresh", "shown", "target", "transient")

    def __init__(self, target: Target, shown: Value) -> None:
        self.target = target
        self.cues: deque[tuple[int, Value | _Base]] = deque()  # absolute times, ascending
        self.prio = TICK
        self.transient: Value | _Base = BASE  # the pattern's current value, or BASE
        self.refresh: int | None = None  # when the base mode changed and must be read again
        self.at = -1  # the last time this track was evaluated
        self.shown = shown

    def busy(self, now_us: int) -> bool:
        """Whether a pattern still plays here after `now_us`."""
        return bool(self.cues) and self.cues[-1][0] > now_us


class Announcer:
    """Schedules the patterns for rulings; says which target values change when.

    Times must not go back: an earlier `now_us` is taken as the latest seen.
    """

    def __init__(self, seats: int) -> None:
        if seats < 1:
            raise ValueError("an announcer needs at least one seat")
        self.seats = seats
        self._turn: int | None = None
        self._holding = False
        self._champion: int | None = None  # the game's winner, until the next game starts
        self._blink_since: list[int | None] = [None] * seats
        self._tracks = [_Track(seat(i), 0.0) for i in range(seats)]
        self._tracks += [_Track("status", OFF), _Track("buzzer", None)]
        self._index = {tr.target: tr for tr in self._tracks}
        self._now = 0
        self._paused = False
        self._asking = False

    def pause(self, paused: bool, now_us: int) -> None:
        """The game stops (the camera is lost) or goes on: the status LED says so."""
        now = self._now = max(self._now, now_us)
        self._paused = paused
        track = self._index["status"]
        if track.refresh is None:
            track.refresh = now

    def ask(self, asking: bool, now_us: int) -> None:
        """The referee asks which card was laid (judging holds), or the card was named."""
        now = self._now = max(self._now, now_us)
        if asking and not self._asking:
            self._play(RULING, _tones(QUERY), now)
        self._asking = asking
        track = self._index["status"]
        if track.refresh is None:
            track.refresh = now

    def announce(self, ruling: Ruling, now_us: int) -> None:
        """Schedule `ruling`'s pattern from `now_us` and update the base modes."""
        now = self._now = max(self._now, now_us)
        if isinstance(ruling, Laid | StackWon):
            self._turn = ruling.next
            self._holding = ruling.next is None
            self._champion = None
        if isinstance(ruling, StackWon):
            self._blink_since = [b if i == ruling.seat else None for i, b in enumerate(self._blink_since)]
        elif isinstance(ruling, Penalty):
            if ruling.barred:  # the blink lasts as the bar on snapping does; a card penalty is paid at once
                self._blink_since[ruling.seat] = now
        elif isinstance(ruling, SeatOut):
            self._blink_since[ruling.seat] = None
        elif isinstance(ruling, PenaltiesLifted):
            self._blink_since = [None] * self.seats
        elif isinstance(ruling, GameWon):
            self._turn, self._holding, self._champion = None, False, ruling.seat
            self._blink_since = [None] * self.seats
        for tr in self._tracks:  # any base mode may have changed: read them all again now
            if tr.refresh is None:
                tr.refresh = now
        prio, cues = pattern(ruling, self.seats)
        self._play(prio, cues, now)

    def _play(self, prio: int, cues: list[Cue], now: int) -> None:
        taken: dict[Target, list[tuple[int, Value | _Base]]] = {}
        for cue in cues:
            taken.setdefault(cue.target, []).append((now + cue.at_us, cue.value))
        for target, timed in taken.items():
            tr = self._index[target]
            if tr.busy(now) and tr.prio > prio:
                continue
            timed.sort(key=lambda c: c[0])  # stable: of two cues at one time, the later in the list wins
            tr.cues = deque(timed)
            tr.prio = prio
            tr.transient = BASE  # until the new pattern's first cue

    def due(self, now_us: int) -> list[tuple[Target, Value]]:
        """The value changes due up to `now_us`, in time order (targets in order at a tie)."""
        now = self._now = max(self._now, now_us)
        out: list[tuple[Target, Value]] = []
        tracks = self._tracks
        # A track's next event depends on that track alone: work each out once, and
        # again only for the track that just moved.
        nexts = [self._next(tr, now) for tr in tracks]
        while True:
            best_i, best_t = -1, 0
            for i, t in enumerate(nexts):
                if t is not None and t <= now and (best_i < 0 or t < best_t):
                    best_i, best_t = i, t
            if best_i < 0:
                return out
            best = tracks[best_i]
            value = self._advance(best, best_t)
            nexts[best_i] = self._next(best, now)
            if value != best.shown:
                best.shown = value
                out.append((best.target, value))

    def next_due(self) -> int | None:
        """When the next value change may fall (the next blink toggle included), or None."""
        times = [t for tr in self._tracks if (t := self._next(tr, None)) is not None]
        return min(times) if times else None

    def shown(self, target: Target) -> Value:
        """The value `due` last gave `target`."""
        return self._index[target].shown

    def _next(self, tr: _Track, now: int | None) -> int | None:
        """The track's next event; a blink that fell behind `now` skips to its latest toggle."""
        times = []
        if tr.cues:
            times.append(tr.cues[0][0])
        if tr.refresh is not None:
            times.append(tr.refresh)
        since = self._blink_since[tr.target[1]] if isinstance(tr.target, tuple) else None
        if since is not None and tr.transient is BASE:
            toggle = blink_next(since, tr.at)
            bound = min([now, *times]) if now is not None else None
            if bound is not None and toggle < bound:
                toggle = since + (bound - since) // BLINK_HALF_US * BLINK_HALF_US
            times.append(toggle)
        return min(times) if times else None

    def _advance(self, tr: _Track, t: int) -> Value:
        """Take the track's events at `t`; its value from then on."""
        while tr.cues and tr.cues[0][0] <= t:
            tr.transient = tr.cues.popleft()[1]
        if tr.refresh is not None and tr.refresh <= t:
            tr.refresh = None
        tr.at = t
        if tr.transient is not BASE:
            return tr.transient  # type: ignore[return-value]
        return self._base(tr.target, t)

    def _base(self, target: Target, t: int) -> Value:
        if target == "buzzer":
            return None
        if target == "status":
            if self._paused:
                return RED
            return AMBER if self._asking or self._holding else GREEN if self._champion is not None else OFF
        i = target[1]
        if self._champion is not None:
            return 1.0 if i == self._champion else 0.0
        rest = TURN_LEVEL if i == self._turn else 0.0
        since = self._blink_since[i]
        return rest if since is None or t < since else blink_level(since, t, rest)
