"""Virtual players for `referee demo`: bots with human reaction times at a virtual table.

The table keeps the truth the referee never sees (the order of each face-down
pile); the bots watch the stack as people do, press after a human reaction time
(150-400 ms), sometimes miss a snap, sometimes press when nothing is there and
now and then lay out of turn. Everything is drawn from one seeded generator, in
virtual time: the same seed plays the same game, at any speed.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field

from referee.cards import Card, deal_sizes, deck
from referee.rules.engine import MAX_PLAYERS, MIN_PLAYERS, finish, step
from referee.rules.events import Event, Lay, Snap, Wait
from referee.rules.rulings import Burned, GameWon, Laid, Ruling, SeatOut, StackWon, TakeBack
from referee.rules.script import GameSpec
from referee.rules.state import State

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")
REACTION_MS = (150.0, 400.0)  # the fastest and slowest press a person makes
START_US = 1_000_000
REPRESS_US = 120_000  # no finger presses a button twice faster than this

# Kinds of scheduled action, in the order they are taken at one instant.
_LAY, _EAGER_LAY, _SNAP, _WAIT = range(4)
Schedule = Callable[..., None]  # (t, kind, seat=-1, generation=0): an action for the queue


@dataclass(frozen=True)
class Bot:
    """One virtual player's habits."""

    name: str
    reaction_ms: float  # typical reaction to a snap, inside REACTION_MS
    notice: float  # chance to see a valid snap at all
    blunder: float  # chance, per card laid, to press when nothing is there
    eager: float  # chance, per card laid by someone else, to lay out of turn
    tempo_ms: float  # how long a turn takes

    def reaction_us(self, rng: random.Random) -> int:
        ms = min(max(rng.gauss(self.reaction_ms, 35.0), REACTION_MS[0]), REACTION_MS[1])
        return round(ms * 1000)


def make_bots(players: int, rng: random.Random) -> list[Bot]:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"the demo seats {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    return [
        Bot(
            name=NAMES[seat],
            reaction_ms=rng.uniform(190.0, 330.0),
            notice=rng.uniform(0.75, 0.95),
            blunder=rng.uniform(0.005, 0.02),
            eager=rng.uniform(0.004, 0.012),
            tempo_ms=rng.uniform(450.0, 800.0),
        )
        for seat in range(players)
    ]


@dataclass
class Play:
    """One event the referee judged, what it ruled, and the table after it."""

    event: Event | None  # None: the input ended, and these rulings were waiting for it
    rulings: list[Ruling]
    state: State


@dataclass
class VirtualTable:
    """A whole game between bots, judged event by event by the engine."""

    players: int = 3
    seed: int = 1
    cap: int = 20_000  # lays before the game is declared stopped
    cards: int = 52  # fewer: a short game with part of the deck (a script's hand_sizes)
    rules: str = "celtic"  # the preset the referee judges by
    bots: list[Bot] = field(init=False)
    spec: GameSpec = field(init=False)
    reactions: list[list[int]] = field(init=False)  # per seat, us from a valid stack to the press
    lays: int = 0
    stopped: bool = False

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self.bots = make_bots(self.players, self._rng)
        if not 2 <= self.cards <= 52:
            raise ValueError(f"a virtual table deals 2 to 52 cards, not {self.cards}")
        names = tuple(bot.name for bot in self.bots)
        short = None if self.cards == 52 else tuple(deal_sizes(self.cards, self.players))
        self.spec = GameSpec(names, self.rules, hand_sizes=short)
        self.reactions = [[] for _ in self.bots]
        self._presses: list[list[int]] = [[] for _ in self.bots]

    def play(self) -> Iterator[Play]:
        """Every event of the game, in time order, with its rulings."""
        yield from _Game(self).run()  # the deal is shuffled at the first event, as it always was

    def _free_hand(self, seat: int, t: int) -> bool:
        """Whether the seat's hand can press at `t`: a finger needs REPRESS_US between presses."""
        recent = self._presses[seat]
        if any(abs(t - other) < REPRESS_US for other in recent):
            return False
        recent.append(t)
        del recent[:-4]
        return True

    def _claim(self, state: State, t: int, schedule: Schedule) -> None:
        """A claim held for the challenger's slap (paranoid): it slaps, and others try once it
        is open to them."""
        hold = state.hold
        if hold is None or hold.open_at is None:
            return
        rng = self._rng
        for seat, bot in enumerate(self.bots):
            start = t if seat == hold.owner else hold.open_at
            chance = bot.notice if seat == hold.owner else bot.notice / 3
            press = start + bot.reaction_us(rng)
            if press < hold.until and rng.random() < chance and self._free_hand(seat, press):
                schedule(press, _SNAP, seat)

    def _react(self, state: State, t: int, schedule: Schedule) -> None:
        """Each bot looks at the stack just laid on and perhaps presses, perhaps lays."""
        rng = self._rng
        valid = bool(state.snap_reasons())
        for seat, bot in enumerate(self.bots):
            if state.is_penalised(seat) and rng.random() > 0.1:
                continue  # most of the time they remember they are penalised
            if state.is_out(seat):
                continue  # out of the game: hands off the button
            if valid and rng.random() < bot.notice:
                reaction = bot.reaction_us(rng)
                if self._free_hand(seat, t + reaction):
                    self.reactions[seat].append(reaction)
                    schedule(t + reaction, _SNAP, seat)
            elif not valid and rng.random() < bot.blunder:
                press = t + bot.reaction_us(rng)
                if self._free_hand(seat, press):
                    schedule(press, _SNAP, seat)
        for seat, bot in enumerate(self.bots):
            if seat != state.turn and state.hands[seat] and rng.random() < bot.eager:
                schedule(t + round(rng.uniform(80, 250) * 1000), _EAGER_LAY, seat)
                break


class _Game:
    """One game at the virtual table: the truth the referee never sees (each pile's order, the
    stack, the penalty pile), the queue of the bots' actions, and the referee's state."""

    def __init__(self, table: VirtualTable) -> None:
        rng, n = table._rng, table.players
        cards: list[Card] = deck(52)
        rng.shuffle(cards)
        del cards[table.cards :]
        self.table, self.rng = table, rng
        self.piles: list[deque[Card]] = [deque(cards[seat::n]) for seat in range(n)]
        self.stack: list[Card] = []  # bottom first
        self.penalty_pile: list[Card] = []
        self.held_until: int | None = None  # the claim hold a wait is scheduled for
        self.state = table.spec.new_game()
        self.queue: list[tuple[int, int, int, int, int]] = []  # (t, kind, seq, seat, generation)
        self.seq = 0
        self.lay_gen = 0  # a scheduled turn lay is stale once the table has moved on
        self.scheduled: int | None = None  # the seat whose turn lay is scheduled
        self.announced_winner = False
        self.moved: set[StackWon] = set()  # the wins whose cards have changed hands

    def run(self) -> Iterator[Play]:
        """The queue's actions in time order until the game is won, stopped or out of actions."""
        table = self.table
        self.schedule(START_US, _LAY, self.state.turn, self.lay_gen)  # type: ignore[arg-type]
        self.scheduled = self.state.turn
        while self.queue and not table.stopped:
            t, kind, _, seat, gen = heapq.heappop(self.queue)
            if not (yield from self._act(t, kind, seat, gen)):
                continue  # skipped, or cut short: the checks below wait for the next action
            if self.announced_winner:
                return
            if table.lays >= table.cap:
                table.stopped = True
        state, rulings = finish(self.state)
        if rulings:
            yield Play(None, rulings, state)

    def schedule(self, t: int, kind: int, seat: int = -1, gen: int = 0) -> None:
        self.seq += 1
        heapq.heappush(self.queue, (t, kind, self.seq, seat, gen))

    def _act(self, t: int, kind: int, seat: int, gen: int) -> Generator[Play, None, bool]:
        """One scheduled action; False when it was skipped or cut short."""
        if self.state.winner is not None and kind != _SNAP:
            return False  # game won: only presses racing the final snap still count
        if kind == _LAY:
            return (yield from self._turn_lay(t, seat, gen))
        if kind == _EAGER_LAY:
            return (yield from self._eager_lay(t, seat))
        if kind == _SNAP:
            yield from self._judge(Snap(t, seat))
        elif self.state.hold is not None and self.state.hold.until == t:
            yield from self._judge(Wait(t))
        return True

    def _turn_lay(self, t: int, seat: int, gen: int) -> Generator[Play, None, bool]:
        if gen != self.lay_gen:
            return False
        if self.state.pending:
            # Presses just before `t` may have won the stack; the referee settles
            # them when time moves on, and the bot on turn sees the result first.
            yield from self._judge(Wait(t))
            if gen != self.lay_gen or self.state.winner is not None:
                return False
        yield from self._judge(Lay(t, self.piles[seat].popleft()))  # the camera sees who is on turn
        return True

    def _eager_lay(self, t: int, seat: int) -> Generator[Play, None, bool]:
        state = self.state
        if state.pending and step(state, Wait(t))[0].hands[seat] < state.hands[seat]:
            yield from self._judge(Wait(t))  # a penalty for those presses takes its cards first
            if self.state.winner is not None:
                return False
        if self.piles[seat]:
            yield from self._judge(Lay(t, self.piles[seat].popleft(), seat))  # seen coming from `seat`
        return True

    def _judge(self, event: Event) -> Iterator[Play]:
        """Feed one event to the referee and move the real cards as it rules."""
        self.state, rulings = step(self.state, event)
        yield Play(event, rulings, self.state)
        laid, won = self._move_cards(rulings)
        if laid:
            self.table.lays += 1
        if self.state.winner is not None:
            return
        self._next_turn(event, laid, won)
        state = self.state
        if state.hold is not None and state.hold.until != self.held_until:
            self.held_until = state.hold.until  # a hold may start at a lay or at a penalty
            self.schedule(state.hold.until, _WAIT)
            self.table._claim(state, event.t, self.schedule)
        if laid:
            self.table._react(state, event.t, self.schedule)

    def _move_cards(self, rulings: list[Ruling]) -> tuple[bool, bool]:
        """The real cards moved as the referee ruled: (a card was laid, a stack was won)."""
        laid = won = False
        # A snap win is announced once its margin is known, but the cards change
        # hands at the press: move them as soon as the referee has the win.
        deferred = self.state.deferred
        if deferred is not None and deferred.won not in self.moved:
            won = self._take(deferred.won)
        for ruling in rulings:
            if type(ruling) is Laid:
                laid = True
                self.stack.append(ruling.card)
            elif type(ruling) is StackWon and ruling._replace(margin_us=None) not in self.moved:
                won = self._take(ruling)
            elif type(ruling) is Burned:
                self._pay(ruling.seat, ruling.cards, ruling.to == "stack")
            elif type(ruling) is SeatOut:
                self._pay(ruling.seat, ruling.cards, True)
            elif type(ruling) is TakeBack:  # set aside, to lay again on its turn
                self.piles[ruling.seat].appendleft(self.stack.pop())
            elif type(ruling) is GameWon:
                self.announced_winner = True
        return laid, won

    def _next_turn(self, event: Event, laid: bool, won: bool) -> None:
        """The turn lay scheduled anew when the turn moved, a stack was won or the seat laid."""
        state = self.state
        in_turn_lay = laid and type(event) is Lay and event.seat is None
        if state.turn is not None and (won or in_turn_lay or state.turn != self.scheduled):
            self.lay_gen += 1
            self.scheduled = state.turn
            pause = self.table.bots[state.turn].tempo_ms * (2.2 if won else 1.0)  # picking up is slower
            at = event.t + round(self.rng.uniform(0.8, 1.2) * pause * 1000)
            self.schedule(at, _LAY, state.turn, self.lay_gen)
        elif state.turn is None:
            self.scheduled = None
            self.lay_gen += 1  # nobody is on turn: a lay already scheduled is stale

    def _take(self, won: StackWon) -> bool:
        seat_pile = self.piles[won.seat]
        seat_pile.extend(self.stack)
        seat_pile.extend(self.penalty_pile)
        self.stack.clear()
        self.penalty_pile.clear()
        self.moved.add(won._replace(margin_us=None))
        return True

    def _pay(self, seat: int, count: int, to_stack: bool) -> None:
        """Cards from the top of a seat's pile, face down under the stack or to the penalty pile."""
        paid = [self.piles[seat].popleft() for _ in range(count)]
        if to_stack:
            self.stack[:0] = paid
        else:
            self.penalty_pile.extend(paid)
