"""What the kiosk screen shows: the table as one plain, JSON-able dict.

`TableView` is a ruling sink: it takes the final rulings one at a time, as the table
loop hands them out, and the state after them (`update`). It keeps what a state does
not hold: the log, the last ruling and who it beat, each seat's figures (reaction
times, snaps won by reason), button troubles, a pause, and the lights and buzzer as
last set, and the lays the camera asked about (`ask`). A `Corrected` ruling voids the
rulings told since the lay it corrects: the view forgets them and is rebuilt from the
rulings still standing (it keeps them for that), the correction shown in the log.
After a restart, the rulings the service announced again (they may not have gone out
before the crash) are marked so in the log (`again`).
`table_view` is the pure function that turns those and the state into the
view; the kiosk serves it as `/api/state` and streams it on `/events`
(docs/kiosk.md lists its fields).

A reaction time is a press's time minus the time of the last card laid before it:
the card the press answered, as the demo's bots measure theirs. Winning snaps,
presses beaten in the race (late, after a snap win) and dead heats count; wrong
snaps and a winner's own extra presses do not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean, median
from typing import Any

from hardware.presses import ButtonTrouble
from referee.cards import RANKS, Card
from referee.rules.announcer import TURN_LEVEL, Target, Value
from referee.rules.clips import worthy
from referee.rules.events import Unread
from referee.rules.presets import PRESETS
from referee.rules.ruling_text import REASON_WORDS, reason_words, say
from referee.rules.rulings import (
    Burned,
    Corrected,
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
from referee.rules.state import State

from .terms import game_words

LOG_LINES = 50
TOP_CARDS = 5
# The reaction histogram's bin edges: 25 ms bins from 100 to 500 ms (people press in
# 150 to 400 ms), plus one bin below the first edge and one above the last.
BIN_EDGES_MS = tuple(range(100, 501, 25))
# Rulings the banner shows (lays it does not); burns, seats out and cards taken back are
# instructions to the players, so they show too.
NOTABLE = (StackWon, Penalty, Burned, SeatOut, TakeBack, PenaltiesLifted, GameWon, Corrected)
TROUBLE_WORDS = {"stuck": "is stuck down", "chattering": "chatters", "unplugged": "is unplugged (USB)"}


@dataclass
class SeatStats:
    """One seat's figures over the game."""

    bins: list[int] = field(default_factory=lambda: [0] * (len(BIN_EDGES_MS) + 1))
    reactions_us: list[int] = field(default_factory=list)
    won_by: dict[str, int] = field(default_factory=lambda: {"snap": 0, "counting_out": 0, "stall": 0})
    snaps_by_reason: dict[str, int] = field(default_factory=dict)
    wrong_snaps: int = 0
    out_of_turn: int = 0
    late: int = 0
    dead_heats: int = 0

    def react(self, us: int) -> None:
        ms = us / 1000
        self.bins[sum(1 for edge in BIN_EDGES_MS if ms >= edge)] += 1
        self.reactions_us.append(us)

    def to_json(self) -> dict[str, Any]:
        # The median, not the best: a press that answered an earlier card than the last one
        # laid reads as a few ms, and would be shown as the best.
        times = self.reactions_us
        return {
            "reaction_bins": list(self.bins),
            "reactions": len(times),
            "mean_ms": round(fmean(times) / 1000, 1) if times else None,
            "median_ms": round(median(times) / 1000, 1) if times else None,
            "won_by": dict(self.won_by),
            "snaps_by_reason": [
                {"reason": r, "words": REASON_WORDS.get(r, r), "count": n}
                for r, n in sorted(self.snaps_by_reason.items(), key=lambda item: -item[1])
            ],
            "wrong_snaps": self.wrong_snaps,
            "out_of_turn": self.out_of_turn,
            "late": self.late,
            "dead_heats": self.dead_heats,
        }


@dataclass
class Entry:
    """One ruling in the log; `beaten` is filled in when the race's runner-up is known;
    `again`: announced again after a restart; `slapper`: for a stack handed over as a wrong
    slap's penalty, the seat that slapped."""

    seq: int
    ruling: Ruling
    beaten: int | None = None
    again: bool = False
    slapper: int | None = None  # a stack handed over for a wrong slap: the seat that slapped


@dataclass
class Signals:
    """The lights and buzzer as the service last set them (`TableView.signal`)."""

    seats: dict[int, float] = field(default_factory=dict)
    status: tuple[float, float, float] | None = None
    buzzer_hz: float | None = None


class TableView:
    """The kiosk's memory of one game. Not thread-safe: `kiosk.KioskHub` guards it."""

    def __init__(self, state: State, log_lines: int = LOG_LINES, t0: int | None = None) -> None:
        self.state = state
        self.log: deque[Entry] = deque(maxlen=log_lines)
        self.last: Entry | None = None
        self.stats: list[SeatStats] = []
        self.troubles: dict[int, str] = {}
        self.paused: str | None = None
        self.signals: Signals | None = None  # None until the service reports a light or the buzzer
        # The game clock's origin: the first ruling's time, unless the caller knows the game's
        # start (the demo's terminal counts table time from 0: both then show one clock).
        self.t0: int | None = t0
        self.questions: tuple[Unread, ...] = ()
        self.crops: Container[int] = ()  # the lays whose picture the kiosk can serve
        self.replay: dict[str, Any] | None = None  # the replay clips' {game, stopped} (clip_store.py)
        # Every ruling still standing, corrections included: a correction can void rulings
        # from any lay of the game, so the figures are rebuilt from these (a game's worth),
        # each with its mark: announced again after a restart.
        self._told: list[tuple[Ruling, bool]] = []
        self._forget()

    def _forget(self) -> None:
        """No ruling seen yet (the figures only: the table, troubles and lights stay)."""
        self.log.clear()
        self.last = None
        self.last_stale = False  # a card was laid since the last ruling: the banner is old news
        self._slapper: int | None = None  # the wrong slap of the current event, if any
        self.stats = [SeatStats() for _ in self.state.players]
        self._seq = 0
        self._last_lay_t: int | None = None
        self._race: Entry | None = None  # a snap win whose runner-up may still be reported
        self._won_top_t: int | None = None  # the lay the last snap win answered

    # Sinks -------------------------------------------------------------------------

    def add(self, ruling: Ruling) -> None:
        """A final ruling, in the order the referee gives them."""
        if type(ruling) is Corrected:
            self._correct(ruling)
        else:
            self._told.append((ruling, False))
            self._add(ruling)

    def again(self, rulings: Sequence[Ruling]) -> None:
        """`rulings`, the last told, were announced again after a restart: the log marks them."""
        marks = marked_again([r for r, _ in self._told], rulings)
        self._told = [(r, a or mark) for (r, a), mark in zip(self._told, marks, strict=True)]
        self._rebuild()

    def marked(self) -> list[Ruling]:
        """The standing rulings marked announced again, oldest first."""
        return [r for r, again in self._told if again]

    def keep_marks(self, marked: Sequence[Ruling]) -> None:
        """This view rebuilt after an undo: `marked`, the rulings the view shown before marked
        announced again, keep their mark where they still stand (an undo takes back the last
        rulings; the ones before it stand as they were)."""
        marks = kept_marks([r for r, _ in self._told], marked)
        self._told = [(r, a or mark) for (r, a), mark in zip(self._told, marks, strict=True)]
        self._rebuild()

    def _correct(self, corrected: Corrected) -> None:
        """The last `void` rulings (not counting earlier corrections, which stay in the log as
        what happened) are void: the view is rebuilt without them; the new rulings follow."""
        told = self._told
        void = corrected.void
        i = len(told)
        while void > 0 and i > 0:
            i -= 1
            if type(told[i][0]) is not Corrected:
                del told[i]
                void -= 1
        told.append((corrected, False))
        self._rebuild()

    def _rebuild(self) -> None:
        self._forget()
        for ruling, again in self._told:
            self._add(ruling, again)

    def _add(self, ruling: Ruling, again: bool = False) -> None:
        self._seq += 1
        entry = Entry(self._seq, ruling, again=again)
        if self.t0 is None:
            self.t0 = ruling.t
        kind = type(ruling)
        if kind is Laid:
            self._last_lay_t = ruling.t
            self._race = None
            self._slapper = None
            self.last_stale = self.last is not None
        elif kind is StackWon and ruling.by == "penalty":  # handed over for a wrong slap
            entry.slapper = self._slapper
        elif kind is StackWon:
            stats = self.stats[ruling.seat]
            stats.won_by[ruling.by] = stats.won_by.get(ruling.by, 0) + 1
            self._race = self._won_top_t = None
            if ruling.by == "snap":
                for reason in ruling.reasons:
                    stats.snaps_by_reason[reason] = stats.snaps_by_reason.get(reason, 0) + 1
                self._react(stats, ruling.t, self._last_lay_t)
                self._won_top_t = self._last_lay_t
                self._race = entry if ruling.margin_us is not None else None
        elif kind is Penalty:
            stats = self.stats[ruling.seat]
            if ruling.reason == "wrong_snap":
                stats.wrong_snaps += 1
                self._slapper = ruling.seat
            else:
                stats.out_of_turn += 1
        elif kind is SnapIgnored:
            self._ignored(ruling)
        self.log.append(entry)
        if isinstance(ruling, NOTABLE) or (kind is SnapIgnored and ruling.reason == "dead_heat"):
            self.last = entry
            self.last_stale = False

    def _ignored(self, ruling: SnapIgnored) -> None:
        stats = self.stats[ruling.seat]
        if ruling.reason == "dead_heat":
            stats.dead_heats += 1
            self._react(stats, ruling.t, self._last_lay_t)
        elif ruling.reason == "late":
            stats.late += 1
            race = self._race
            won_by = race.ruling.seat if race is not None else None
            if ruling.seat != won_by:  # the winner's own second tap is no reaction
                self._react(stats, ruling.t, self._won_top_t)
            if race is not None and race.beaten is None and ruling.late_us == race.ruling.margin_us:
                race.beaten = ruling.seat

    @staticmethod
    def _react(stats: SeatStats, press_t: int, lay_t: int | None) -> None:
        if lay_t is not None and press_t >= lay_t:
            stats.react(press_t - lay_t)

    def update(self, state: State) -> None:
        """The table after the rulings given so far."""
        self.state = state

    def trouble(self, trouble: ButtonTrouble) -> None:
        """A button trouble sink (the table loop's `troubles`)."""
        if trouble.kind == "recovered":
            self.troubles.pop(trouble.seat, None)
        else:
            self.troubles[trouble.seat] = trouble.kind

    def pause(self, reason: str) -> None:
        """The game is paused, e.g. "camera lost"; the kiosk says so until `resume`."""
        self.paused = reason

    def resume(self) -> None:
        self.paused = None

    def ask(self, questions: Sequence[Unread], crops: Container[int] = ()) -> None:
        """The lays waiting for their card, oldest first (a question sink); `crops` holds the
        times of those whose picture the kiosk serves (`/api/question/{t}.jpg`)."""
        self.questions = tuple(questions)
        self.crops = crops

    def signal(self, target: Target, value: Value) -> None:
        """A light or the buzzer was set: the `announcer` targets and values, as `TableSignals.apply`."""
        signals = self.signals if self.signals is not None else Signals()
        if isinstance(target, tuple):
            signals.seats[target[1]] = float(value)  # type: ignore[arg-type]
        elif target == "status":
            signals.status = value  # type: ignore[assignment]
        elif target == "buzzer":
            signals.buzzer_hz = value  # type: ignore[assignment]
        else:
            raise ValueError(f"unknown signal target {target!r}")
        self.signals = signals

    def view(self) -> dict[str, Any]:
        return table_view(
            self.state,
            self.log,
            self.last,
            self.stats,
            self.t0,
            self.troubles,
            self.paused,
            self.signals,
            self.questions,
            self.crops,
            self.last_stale,
        ) | {"replay": self.replay}


# The pure part ----------------------------------------------------------------------


def table_view(
    state: State,
    log: Iterable[Entry],
    last: Entry | None,
    stats: Sequence[SeatStats],
    t0: int | None,
    troubles: Mapping[int, str],
    paused: str | None,
    signals: Signals | None,
    questions: Sequence[Unread] = (),
    crops: Container[int] = (),
    last_stale: bool = False,
) -> dict[str, Any]:
    """The view of the table: plain values only, ready for `json.dumps`. `last_stale`: a card
    was laid since the last ruling (the page clears its banner)."""
    names = state.players
    calls = state.rules.options.slap_calling_out
    start = t0 or 0
    messages = [
        f"{names[seat]}'s button {TROUBLE_WORDS.get(kind, kind)}"
        for seat, kind in sorted(troubles.items())
        if seat < len(names)
    ]
    return {
        "game": game_json(state),
        "players": players_json(state, troubles, signals),
        "turn": {"seat": state.turn, "name": names[state.turn]} if state.turn is not None else None,
        "stack": {
            "size": state.size,
            "top": [card_json(c) for c in top_cards(state, TOP_CARDS)],
            "burned": state.burned,  # face down under it
            "penalty_pile": state.penalty_pile,
        },
        "call": call_json(state),
        "count_out": count_out_json(state),
        "hold": hold_json(state),
        "last": (
            entry_json(last, names, start, full=True, calls=calls) | {"stale": last_stale}
            if last is not None
            else None
        ),
        "log": [entry_json(e, names, start, calls=calls) for e in log],
        "questions": [question_json(q, names, start, q.t in crops) for q in questions],
        "alerts": {"paused": paused, "messages": messages},
        "signals": {
            "live": signals is not None,
            "status": list(signals.status) if signals is not None and signals.status is not None else None,
            "buzzer_hz": signals.buzzer_hz if signals is not None else None,
        },
        "winner": {"seat": state.winner, "name": names[state.winner]} if state.winner is not None else None,
        "stats": [s.to_json() for s in stats],
        "reaction_bin_edges_ms": list(BIN_EDGES_MS),
    }


def game_json(state: State) -> dict[str, Any]:
    """The view's `game`: the rules, the seats, and what the page shows of the rules."""
    options = state.rules.options
    return {
        "rules": state.rules.name,
        "presets": sorted(PRESETS),
        "seats": len(state.players),
        "face_cards": options.face_cards,
        "calls": options.slap_calling_out,  # calling out counts: the call is worth showing
        "penalty_pile": options.penalty_cards > 0 and options.penalty_cards_to == "penalty_pile",
        **game_words(state.rules),
    }


def players_json(state: State, troubles: Mapping[int, str], signals: Signals | None) -> list[dict[str, Any]]:
    """The view's `players`: a seat each, with its cards, its marks and its LED."""
    count_owner = state.count_owner if state.count_out is not None else None
    players = []
    for seat, name in enumerate(state.players):
        penalised = state.is_penalised(seat)
        if signals is None:  # the announcer's base modes, read from the state
            level = 1.0 if state.winner == seat else TURN_LEVEL if state.turn == seat else 0.0
            led = {"level": level, "blink": penalised}
        else:
            led = {"level": signals.seats.get(seat, 0.0), "blink": False}
        players.append(
            {
                "seat": seat,
                "name": name,
                "cards": state.hands[seat],
                "penalised": penalised,
                "turn": state.turn == seat,
                "count_owner": count_owner == seat,
                "out": state.is_out(seat),
                "led": led,
                "trouble": troubles.get(seat),
            }
        )
    return players


def call_json(state: State) -> dict[str, Any]:
    """The view's `call`: the number called for the next card, and the top card's."""
    next_call = state.laid % 13 + 1
    return {
        "next": next_call,
        "next_rank": RANKS[next_call - 1],
        "top": state.top_call if state.top_card is not None else None,
        "top_matched": state.top_card is not None and state.top_card.rank == state.top_call,
    }


def count_out_json(state: State) -> dict[str, Any] | None:
    """The view's `count_out`: whose count-out runs and how many cards it has left, or None."""
    owner = state.count_owner if state.count_out is not None else None
    if owner is None:
        return None
    return {"owner": owner, "name": state.players[owner], "left": state.count_out}


def hold_json(state: State) -> dict[str, Any] | None:
    """The view's `hold`: why play stops, whose the stack is if nobody snaps, and for how long."""
    hold = state.hold
    if hold is None:
        return None
    return {
        "by": hold.by,
        "owner": hold.owner,
        "name": state.players[hold.owner],
        "ms_left": max(0, (hold.until - state.now) // 1000),
    }


def marked_again(told: Sequence[Ruling], again: Sequence[Ruling]) -> list[bool]:
    """Which of the standing rulings `told` are the ones `again` names: the last told, in order.
    Matched from the end, as a subsequence: a ruling announced again may since be void (a
    correction among them), so it has no standing ruling; the types are compared too, as
    rulings are named tuples, equal to any tuple of the same values."""
    marks = [False] * len(told)
    j = len(again) - 1
    for i in range(len(told) - 1, -1, -1):
        ruling = told[i]
        while j >= 0 and not (type(again[j]) is type(ruling) and again[j] == ruling):
            j -= 1  # void since: not standing
        if j < 0:
            break
        marks[i] = True
        j -= 1
    return marks


def kept_marks(told: Sequence[Ruling], marked: Sequence[Ruling]) -> list[bool]:
    """Which of the standing rulings `told` are the ones `marked` names, in order, from the
    start: each marked ruling is the next standing one equal to it (type and values), and
    one that stands no more (undone) marks nothing. Unlike `marked_again`, the marked need
    not be the last told: rulings told after them may have been undone or still stand."""
    marks = [False] * len(told)
    i = 0
    for ruling in marked:
        j = i
        while j < len(told) and not (type(told[j]) is type(ruling) and told[j] == ruling):
            j += 1
        if j < len(told):
            marks[j] = True
            i = j + 1
    return marks


def top_cards(state: State, n: int) -> list[Card]:
    """The top `n` cards of the stack, top card last."""
    if state.under is not None:  # cards slid under the stack (out_of_turn_card: under)
        return state.stack_cards()[-n:]
    top_down: list[Card] = []
    node = state.stack
    while node is not None and len(top_down) < n:  # only as far down as needed
        top_down.append(node[0])
        node = node[1]  # type: ignore[assignment]
    return top_down[::-1]


def card_json(card: Card) -> dict[str, Any]:
    if card.is_joker:
        return {"code": card.code, "rank": "JOKER", "suit": "", "symbol": card.symbol, "red": False}
    return {
        "code": card.code,
        "rank": RANKS[card.rank - 1],
        "suit": card.suit,
        "symbol": card.symbol,
        "red": card.suit in "HD",
    }


def clock(t_us: int) -> str:
    """Game time as m:ss.s."""
    minutes, rest = divmod(max(t_us, 0), 60_000_000)
    return f"{minutes}:{rest / 1e6:04.1f}"


def question_json(question: Unread, names: Sequence[str], t0: int, crop: bool) -> dict[str, Any]:
    """A lay the camera asks about: `for` is its time, which the host's answer names."""
    seat = question.seat
    return {
        "for": question.t,
        "clock": clock(question.t - t0),
        "seat": seat,
        "name": names[seat] if seat is not None and 0 <= seat < len(names) else None,
        "guess": card_json(question.guess) if question.guess is not None else None,
        "crop": f"/api/question/{question.t}.jpg" if crop else None,
    }


def corrected_words(ruling: Corrected, t0: int) -> str:
    now = "no card" if ruling.card is None else ruling.card.symbol
    if ruling.was is None:  # a card the camera missed, added
        return f"host added the card laid at {clock(ruling.lay_t - t0)}: {now}"
    return f"host corrected {clock(ruling.lay_t - t0)}: {ruling.was.symbol} → {now}"


def entry_json(
    entry: Entry, names: Sequence[str], t0: int, full: bool = False, calls: bool = True
) -> dict[str, Any]:
    ruling = entry.ruling
    kind = type(ruling)
    out: dict[str, Any] = {
        "seq": entry.seq,
        "clock": clock(ruling.t - t0),
        "event": ruling.event,
        "seat": getattr(ruling, "seat", None),
        "text": (
            corrected_words(ruling, t0)
            if kind is Corrected
            else say(ruling, names, entry.beaten, slapper=entry.slapper, calls=calls)
        ),
        "again": entry.again,  # announced again after a restart
    }
    if worthy(ruling) is not None:  # a replay clip is kept of it, named by its time (clips.py)
        out["replay"] = ruling.t
    if kind is Laid:  # the host may correct a lay's card: it is named by its time
        out["for"], out["card"] = ruling.t, ruling.card.code
    elif kind is Corrected:
        out["for"], out["card"] = ruling.lay_t, ruling.card.code if ruling.card is not None else None
    if full:
        won = type(ruling) is StackWon
        out["name"] = names[out["seat"]] if out["seat"] is not None else None
        out["reasons"] = reason_words(ruling.reasons) if won else []
        out["margin_ms"] = ruling.margin_us / 1000 if won and ruling.margin_us is not None else None
        out["beaten"] = names[entry.beaten] if entry.beaten is not None else None
        out["ruling"] = ruling.to_json()
    return out
