"""The night's scores: every journaled game of the night, replayed, as one table.

Pure functions over the journal's plain records (`GameRecord`, `EventRecord`): no file,
no clock. `score_game` replays one game (the engine is pure, so its rulings are the ones
that were told) and keeps what the table needs of it; `night` puts the games together by
player name; `night_json` is the plain dict that `referee stats --format json` prints and
the kiosk shows between games (docs/run.md, docs/kiosk.md).

What counts:

- **A stack won** is every `stack_won` ruling still standing (an undone one is not in the
  journal's replay; one a host's correction voided is not judged again). By snap: `snap` and
  `claim` (a slap claim is a snap on a claim). By count-out: `counting_out` (celtic) and
  `challenge` (classic, paranoid, party: the same face-card rule). Other: a `stall` and a
  stack handed over for a wrong slap (`penalty`). So snap + count-out + other = stacks won.
- **A valid snap** is a press on a good stack: one that won it (by snap or claim), one beaten
  in the race for it (`late` after another seat's snap) and one in a dead heat. Its reaction
  time runs from the lay that made the snap good (the first lay since which the stack has
  been good without a break, or the moment a claim opened) to the press. With `scan = "stack"`
  a pair stays good under later cards: a press three cards later answered the pair, not the
  last card, and is timed from the pair.
- **A wrong snap** is a `penalty` ruling for a wrong snap.
- **The fastest snap** is the shortest reaction time of a press that won a stack; **the
  closest race** the smallest margin (`margin_us`: the runner-up's press minus the winner's)
  of a stack won by snap.
- **Streaks:** games won in a row, over the night's games that had a winner, in order (a
  game nobody won neither breaks nor extends one); stacks won in a row within one game.

Players are their names, compared without case ("Ann" and "ann" are one player; the
spelling first seen is shown): a seat is only where someone sat that game.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta, tzinfo
from statistics import median
from typing import Any

from referee.errors import UserError
from referee.kiosk.view import BIN_EDGES_MS
from referee.rules.engine import finish, step
from referee.rules.events import Event, Lay, Named, Snap, Unread
from referee.rules.rulings import GameWon, Penalty, Ruling, SnapIgnored, StackWon
from referee.rules.state import State

from .journal import OPEN, EventRecord, GameRecord
from .replay import replay

SNAP_WINS = ("snap", "claim")
CUTOVER = time(6, 0)  # a night runs from 06:00 to 06:00 the next day, local time
COUNT_OUT_WINS = ("counting_out", "challenge")


@dataclass(frozen=True)
class Press:
    """A valid snap: `seat`, how long after the lay that made the stack good (µs), and how
    it went: `won` (took the stack), `beaten` (late after another's snap) or `dead_heat`."""

    seat: int
    reaction_us: int
    outcome: str
    t: int


@dataclass(frozen=True)
class Race:
    """A stack won by snap with a runner-up: `margin_us` from the winner's press to the next."""

    winner: int
    runner_up: int | None
    margin_us: int


@dataclass(frozen=True)
class GameScores:
    """What the night's table takes from one journaled game."""

    id: int
    started: str  # the journal's wall clock (ISO 8601, UTC)
    status: str  # open, won, stopped, abandoned
    rules: str
    players: tuple[str, ...]
    winner: int | None
    stacks: tuple[tuple[int, str], ...]  # per stack won, in order: (seat, by)
    presses: tuple[Press, ...]
    wrong_snaps: tuple[int, ...]  # per seat
    races: tuple[Race, ...]


def score_game(game: GameRecord, events: Iterable[EventRecord]) -> GameScores:
    """One journaled game, replayed: its stacks, valid snaps with their reaction times, wrong
    snaps and races. Raises JournalError (a UserError) for a game the engine refuses."""
    judging = replay(game, events)
    start = judging.start if judging.start is not None else judging.state
    plain = effective_events(judging.items())
    state = start
    tracker = _Good(start)
    batches: list[list[Ruling]] = []
    for event in plain:
        state, rulings = step(state, event)
        tracker.after(event, state, rulings)
        batches.append(rulings)
    if game.status != OPEN and not judging.holding:  # its end settled the last presses
        state, rulings = finish(state)
        batches.append(rulings)
    return _scores(game, start, batches, tracker)


def effective_events(items: Sequence[Event | Unread | Named]) -> list[Event]:
    """The engine's own events of a game as finally judged: each asked lay with the card it was
    named as (or gone, when nothing was laid), the answers themselves left out. A host's
    correction is already written into `items` (`Judging.items`). The events behind a question
    never answered are not judged yet, so they stop the list."""
    named: dict[int, Any] = {}
    for item in items:
        if type(item) is Named:
            named[item.lay_t] = item  # the last word on a lay counts
    out: list[Event] = []
    for item in items:
        kind = type(item)
        if kind is Named:
            continue
        if kind is Unread:
            answer = named.get(item.t)
            if answer is None:
                break  # still asked: judging holds here
            if answer.card is not None:
                out.append(Lay(item.t, answer.card, item.seat))  # type: ignore[union-attr]
            continue
        if kind is Lay and item.t in named and named[item.t].card is not None:
            # A lay an earlier answer made impossible, asked in its turn and named.
            item = item._replace(card=named[item.t].card)  # type: ignore[union-attr]
        out.append(item)  # type: ignore[arg-type]
    return out


class _Good:
    """Since when the stack has been good to snap, as the events are judged: a press at `t` is
    timed from `since(t)`. Only lays and the passing of time can make a stack good, so only
    they are marks: a press never is, and the stack a press wins stays the one it pressed on."""

    def __init__(self, start: State) -> None:
        self._times: list[int] = []  # the marks: the stack good from ... (None: not good)
        self._since: list[int | None] = []
        self._lays: list[int] = []
        self._origin = start.now
        self._from: int | None = start.now if start.snap_reasons() else None
        self._first = self._from  # before the first mark
        self._size = start.size
        self._won = False  # a stack won since the last mark: the next stack starts afresh
        self._deferred: Any = None

    def after(self, event: Event, state: State, rulings: Sequence[Ruling]) -> None:
        if any(type(r) is StackWon for r in rulings):
            self._won = True
        deferred = state.deferred  # a snap's stack changes hands at the press, told later
        if deferred is not None and deferred.won != self._deferred:
            self._deferred = deferred.won
            self._won = True
        if type(event) is Snap:
            return
        if type(event) is Lay:
            self._lays.append(event.t)
        fresh = self._won or state.size < self._size
        if not state.snap_reasons():
            good = None
        elif fresh or self._from is None:
            good = event.t
        else:
            good = self._from
        self._won, self._size = False, state.size
        if good != self._from or fresh:
            self._times.append(event.t)
            self._since.append(good)
            self._from = good

    def since(self, t: int) -> int:
        """The lay that made the stack good for a press at `t` (lays at `t` itself come first,
        as the engine judges them). If the stack was not good by the marks (a claim's slap: no
        pattern, only the hold), the last lay before the press: the one that ended the
        challenge; the game's start if there was none."""
        i = bisect.bisect_right(self._times, t) - 1
        good = self._since[i] if i >= 0 else self._first
        if good is not None:
            return good
        j = bisect.bisect_right(self._lays, t) - 1
        return self._lays[j] if j >= 0 else self._origin


def _runner_up(after: Sequence[Ruling], margin_us: int) -> int | None:
    """The seat whose press came `margin_us` after a snap's winner: told late right after it."""
    return next(
        (r.seat for r in after if type(r) is SnapIgnored and r.reason == "late" and r.late_us == margin_us),
        None,
    )


def _scores(game: GameRecord, start: State, batches: list[list[Ruling]], good: _Good) -> GameScores:
    seats = len(start.players)
    stacks: list[tuple[int, str]] = []
    presses: list[Press] = []
    races: list[Race] = []
    wrong = [0] * seats
    winner = game.winner
    last_snap_winner: int | None = None  # who took the last stack by snap: a late press lost to it
    for batch in batches:
        for i, ruling in enumerate(batch):
            kind = type(ruling)
            if kind is StackWon:
                stacks.append((ruling.seat, ruling.by))
                if ruling.by in SNAP_WINS:
                    last_snap_winner = ruling.seat
                    presses.append(Press(ruling.seat, ruling.t - good.since(ruling.t), "won", ruling.t))
                    if ruling.margin_us is not None:
                        runner_up = _runner_up(batch[i + 1 :], ruling.margin_us)
                        races.append(Race(ruling.seat, runner_up, ruling.margin_us))
                else:
                    last_snap_winner = None
            elif kind is SnapIgnored:
                if ruling.reason == "dead_heat":
                    presses.append(Press(ruling.seat, ruling.t - good.since(ruling.t), "dead_heat", ruling.t))
                elif ruling.reason == "late" and last_snap_winner not in (None, ruling.seat):
                    # Beaten in the race; a winner's own second tap is no snap of its own.
                    presses.append(Press(ruling.seat, ruling.t - good.since(ruling.t), "beaten", ruling.t))
            elif kind is Penalty and ruling.reason == "wrong_snap":
                wrong[ruling.seat] += 1
            elif kind is GameWon and winner is None:
                winner = ruling.seat
    return GameScores(
        id=game.id,
        started=game.started,
        status=game.status,
        rules=str(game.spec.get("game", {}).get("rules", "celtic")),
        players=tuple(start.players),
        winner=winner if game.status != OPEN else None,
        stacks=tuple(stacks),
        presses=tuple(presses),
        wrong_snaps=tuple(wrong),
        races=tuple(races),
    )


# The night ----------------------------------------------------------------------------


def bin_of(us: int) -> int:
    """The histogram bin of a reaction time: one below the first edge, one above the last."""
    return bisect.bisect_right(BIN_EDGES_MS, us / 1000)


@dataclass
class PlayerNight:
    """One player's night, over every game they sat in."""

    name: str
    games: int = 0
    won: int = 0
    stacks: int = 0
    by_snap: int = 0
    by_count_out: int = 0
    by_other: int = 0
    wrong_snaps: int = 0
    dead_heats: int = 0
    reactions_us: list[int] = field(default_factory=list)  # every valid snap's, in order
    fastest: tuple[int, int] | None = None  # (µs, game) of the fastest winning snap
    games_in_a_row: int = 0
    stacks_in_a_row: tuple[int, int] | None = None  # (stacks, game)

    @property
    def bins(self) -> list[int]:
        out = [0] * (len(BIN_EDGES_MS) + 1)
        for us in self.reactions_us:
            out[bin_of(us)] += 1
        return out


@dataclass
class Night:
    """The night's table: a row per player, most games won first, and its records."""

    games: list[GameScores]
    players: list[PlayerNight]
    fastest: tuple[str, int, int] | None  # (name, µs, game)
    closest: tuple[str, str | None, int, int] | None  # (winner, runner-up, µs, game)
    games_streak: tuple[str, int] | None  # (name, games won in a row)
    stacks_streak: tuple[str, int, int] | None  # (name, stacks won in a row, game)


def player_key(name: str) -> str:
    return name.strip().casefold()


def night(games: Sequence[GameScores]) -> Night:
    """The games (in the journal's order) put together by player name."""
    games = sorted(games, key=lambda g: g.id)
    rows: dict[str, PlayerNight] = {}

    def row(name: str) -> PlayerNight:
        key = player_key(name)
        if key not in rows:
            rows[key] = PlayerNight(name)
        return rows[key]

    fastest: tuple[str, int, int] | None = None
    closest: tuple[str, str | None, int, int] | None = None
    run: dict[str, int] = {}  # games won in a row so far, by player key
    for g in games:
        seated = [row(name) for name in g.players]
        _count_game(seated, g, run)
        _count_stacks(seated, g)
        fastest = _count_presses(seated, g, fastest)
        for race in g.races:
            if closest is None or race.margin_us < closest[2]:
                beaten = seated[race.runner_up].name if race.runner_up is not None else None
                closest = (seated[race.winner].name, beaten, race.margin_us, g.id)
    players = sorted(rows.values(), key=lambda p: (-p.won, -p.stacks, p.wrong_snaps, player_key(p.name)))
    best_games = max(players, key=lambda p: p.games_in_a_row, default=None)
    best_stacks = max(
        (p for p in players if p.stacks_in_a_row is not None),
        key=lambda p: p.stacks_in_a_row[0],  # type: ignore[index]
        default=None,
    )
    return Night(
        games=list(games),
        players=players,
        fastest=fastest,
        closest=closest,
        games_streak=(best_games.name, best_games.games_in_a_row)
        if best_games is not None and best_games.games_in_a_row
        else None,
        stacks_streak=(best_stacks.name, *best_stacks.stacks_in_a_row)  # type: ignore[misc]
        if best_stacks is not None
        else None,
    )


def _count_game(seated: list[PlayerNight], g: GameScores, run: dict[str, int]) -> None:
    """A game played by each seat, won by its winner: `run` (games won in a row so far, by
    player key) goes on for the winner and starts again for everyone else."""
    for p in seated:
        p.games += 1
    if g.winner is None:
        return  # a game nobody won neither breaks nor extends a run
    winner = seated[g.winner]
    winner.won += 1
    for key in list(run):
        if key != player_key(winner.name):
            run[key] = 0
    key = player_key(winner.name)
    run[key] = run.get(key, 0) + 1
    winner.games_in_a_row = max(winner.games_in_a_row, run[key])


def _count_stacks(seated: list[PlayerNight], g: GameScores) -> None:
    """The game's stacks won, by how, and each seat's longest run of them; its wrong snaps."""
    streak_seat, streak = None, 0
    for seat, by in g.stacks:
        p = seated[seat]
        p.stacks += 1
        if by in SNAP_WINS:
            p.by_snap += 1
        elif by in COUNT_OUT_WINS:
            p.by_count_out += 1
        else:
            p.by_other += 1
        streak = streak + 1 if seat == streak_seat else 1
        streak_seat = seat
        if p.stacks_in_a_row is None or streak > p.stacks_in_a_row[0]:
            p.stacks_in_a_row = (streak, g.id)
    for seat, n in enumerate(g.wrong_snaps):
        seated[seat].wrong_snaps += n


def _count_presses(
    seated: list[PlayerNight], g: GameScores, fastest: tuple[str, int, int] | None
) -> tuple[str, int, int] | None:
    """The game's valid snaps: each seat's reaction times, dead heats and fastest winning snap;
    the night's fastest so far (name, µs, game), as it stands after this game."""
    for press in g.presses:
        p = seated[press.seat]
        p.reactions_us.append(press.reaction_us)
        if press.outcome == "dead_heat":
            p.dead_heats += 1
        if press.outcome == "won":
            if p.fastest is None or press.reaction_us < p.fastest[0]:
                p.fastest = (press.reaction_us, g.id)
            if fastest is None or press.reaction_us < fastest[1]:
                fastest = (p.name, press.reaction_us, g.id)
    return fastest


def night_start(now: datetime, tz: tzinfo | None = None, cutover: time = CUTOVER) -> datetime:
    """When the night `now` belongs to began: the last 06:00 (local time: `tz`, or this
    machine's) at or before it. A game at 01:30 belongs to the evening before."""
    local = now.astimezone(tz)
    day = local.date() if local.time() >= cutover else local.date() - timedelta(days=1)
    start = datetime.combine(day, cutover)
    return start.replace(tzinfo=tz) if tz is not None else start.astimezone()


def parse_since(text: str, tz: tzinfo | None = None) -> datetime:
    """`--since`: a date (from its midnight) or a date and time, local time (`tz`, or this
    machine's) unless it gives its own offset. ValueError for anything else."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"--since: {text!r} is not a date or a time (YYYY-MM-DD or 'YYYY-MM-DD HH:MM', local time)"
        ) from None
    if when.tzinfo is not None:
        return when
    return when.replace(tzinfo=tz) if tz is not None else when.astimezone()


def since_started(games: Iterable[GameRecord], since: datetime) -> list[GameRecord]:
    """The games started at or after `since` (an aware time); a start the journal cannot give
    as a time is kept (better shown than lost)."""
    out = []
    for g in games:
        try:
            started = datetime.fromisoformat(g.started)
        except (TypeError, ValueError):
            out.append(g)
            continue
        if started.tzinfo is None:
            started = started.replace(tzinfo=UTC)
        if started >= since:
            out.append(g)
    return out


def night_json(table: Night, since: datetime | None = None) -> dict[str, Any]:
    """The night as plain values (`referee stats --format json`, and the kiosk's `night`)."""
    return {
        "since": since.isoformat(timespec="minutes") if since is not None else None,
        "games": [
            {
                "game": g.id,
                "started": g.started,
                "status": g.status,
                "rules": g.rules,
                "players": list(g.players),
                "winner": g.players[g.winner] if g.winner is not None else None,
                "stacks": len(g.stacks),
            }
            for g in table.games
        ],
        "players": [player_json(p) for p in table.players],
        "fastest": (
            {"name": table.fastest[0], "us": table.fastest[1], "game": table.fastest[2]}
            if table.fastest is not None
            else None
        ),
        "closest": (
            {
                "name": table.closest[0],
                "beat": table.closest[1],
                "us": table.closest[2],
                "game": table.closest[3],
            }
            if table.closest is not None
            else None
        ),
        "streaks": {
            "games": (
                {"name": table.games_streak[0], "count": table.games_streak[1]}
                if table.games_streak is not None
                else None
            ),
            "stacks": (
                dict(zip(("name", "count", "game"), table.stacks_streak, strict=True))
                if table.stacks_streak is not None
                else None
            ),
        },
        "reaction_bin_edges_ms": list(BIN_EDGES_MS),
    }


def player_json(p: PlayerNight) -> dict[str, Any]:
    times = p.reactions_us
    return {
        "name": p.name,
        "games": p.games,
        "won": p.won,
        "stacks": p.stacks,
        "by_snap": p.by_snap,
        "by_count_out": p.by_count_out,
        "by_other": p.by_other,
        "wrong_snaps": p.wrong_snaps,
        "valid_snaps": len(times),
        "dead_heats": p.dead_heats,
        "median_ms": round(median(times) / 1000, 1) if times else None,
        "fastest_us": p.fastest[0] if p.fastest is not None else None,
        "fastest_game": p.fastest[1] if p.fastest is not None else None,
        "games_in_a_row": p.games_in_a_row,
        "stacks_in_a_row": p.stacks_in_a_row[0] if p.stacks_in_a_row is not None else 0,
        "reaction_bins": p.bins,
    }


def read_night(
    journal: Any, since: datetime, cache: dict[tuple[Any, ...], GameScores] | None = None
) -> Night:
    """The night's table of the games `journal` holds that started at or after `since`.
    `cache`: scores of games already replayed, by game, status and event count (the kiosk's
    feed replays only what changed)."""
    games = []
    for game in since_started(journal.games(), since):
        key = (game.id, game.status, game.events, game.last_mark)
        scores = cache.get(key) if cache is not None else None
        if scores is None:
            scores = score_game(game, journal.events(game.id))
            if cache is not None:
                cache[key] = scores
        games.append(scores)
    return night(games)


class NightFeed:
    """The kiosk's night table: tonight's games read from the writer's own journal when a game
    ends, and handed to the hub (`hub.night`). Ended games are replayed once (cached)."""

    def __init__(
        self,
        journal: Any,
        hub: Any,
        note: Callable[[str], Any] = print,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.journal = journal
        self.hub = hub
        self.note = note
        self.now = now or (lambda: datetime.now().astimezone())
        self._cache: dict[tuple[Any, ...], GameScores] = {}

    def refresh(self, *_: Any) -> None:
        """Read tonight's games again (an argument, a hook's state, is ignored). A journal it
        cannot read is one line and no table: the scores are never worth stopping a game for."""
        since = night_start(self.now())
        try:
            table = read_night(self.journal, since, self._cache)
            live = {(g.id, g.status, g.events, g.last_mark) for g in self.journal.games()}
        except (UserError, ValueError, KeyError, TypeError) as e:
            self.note(f"the night's scores: {e}")
            self.hub.night(None)
            return
        for key in set(self._cache) - live:
            del self._cache[key]  # bounded: only the journal's games as they are now
        self.hub.night(night_json(table, since))

    def on_ruling(self, ruling: Any) -> None:
        """A ruling sink: a game won is one more game in tonight's table."""
        if type(ruling) is GameWon:
            self.refresh()
