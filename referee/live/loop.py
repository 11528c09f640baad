"""The table loop: lays and snaps merged in event time, fed to the engine in order.

Each source says how far it has got: its progress, a time at or before which it
will send nothing more. A source that reports it (`progress`: the camera's pile
watcher, "nothing new before t" once it has read a frame of a still pile) is
taken at its word; one that does not is bound by its declared worst latency
(the clock minus how late it may deliver an event: the buttons' callback lag).
Events wait in a reorder buffer until the release point (the least progress of
the sources still open) passes them; then the engine gets them in timestamp
order. So a press is judged against the stack as it was at the instant of the
press, even when the camera reports the card that made the pair 80 ms later,
and as soon as every source has got past it. An event that arrives before the
release point breaks that promise: the loop raises `ProgressError`, or, given a
`late` sink (the live service: a button callback held up on a loaded machine
must not end the game), judges it at the release point and tells the sink.

Presses stamped coarsely (a USB encoder's, to its polling interval: `resolution_us` per
seat) cannot be ordered against a press that came within that interval before them: such
a press is judged at the same instant as the earlier one (`_heat`), so the engine rules it
a dead heat, never a guess. A press is held until the release point is that far past it.

Threads only enqueue (`put_lay`, `put_edge`); everything else runs in the loop's
own thread: `pump(now)` in a simulation, `run()` live, which sleeps on the inbox
until the next thing is due and never busy-waits.
"""

from __future__ import annotations

import heapq
import itertools
import queue
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any

from hardware.clock import Clock
from hardware.presses import ButtonTrouble, Debouncer, Edge, Press
from referee.cards import Card
from referee.rules.engine import IllegalEvent, step
from referee.rules.events import Event, Lay, Named, Snap, Unread, Wait
from referee.rules.questions import Judging, NothingToName, end, take
from referee.rules.rulings import Ruling, StackWon
from referee.rules.state import State

RulingSink = Callable[[Ruling], Any]
EventSink = Callable[[Event | Unread | Named, Any], Any]
# Told each time the open questions change (a lay the camera could not read is asked, or named):
# the lays still waiting for their card, oldest first, with the table as it was before the first.
QuestionSink = Callable[[tuple[Unread, ...], State], Any]
TroubleSink = Callable[[ButtonTrouble], Any]
# Told of an event that came behind the release point: its source, its own stamp, and the
# time it was judged at instead (the release point: the earliest time still in order).
LateSink = Callable[[str, int, int], Any]
# Told of a press judged at the instant of an earlier one it cannot be told apart from: the
# press as stamped, and the earlier press (whose instant it now shares).
HeatSink = Callable[[Snap, Snap], Any]
FAR_FUTURE = 1 << 62


class EventError(ValueError):
    """An event the engine refused; `tag` is what the source attached to it (a script line)."""

    def __init__(self, message: str, tag: Any) -> None:
        super().__init__(message)
        self.tag = tag


class ProgressError(RuntimeError):
    """A source sent an event at or before a point the loop had already released: its progress
    (or its declared latency) was wrong, and judging it now would judge out of order."""


class TableLoop:
    """Merges the sources in event time and judges them."""

    def __init__(
        self,
        state: State | Judging,
        latencies_us: dict[str, int],
        rulings: Iterable[RulingSink] = (),
        troubles: Iterable[TroubleSink] = (),
        signals: Iterable[RulingSink] = (),
        debouncer: Debouncer | None = None,
        timer_waits: bool = True,
        judged: Iterable[EventSink] = (),
        refused: Callable[[Event, str], Any] | None = None,
        questions: Iterable[QuestionSink] = (),
        late: LateSink | None = None,
        resolution_us: Sequence[int] = (),
        heats: HeatSink | None = None,
    ) -> None:
        # A resumed game may come back with lays still waiting for their card.
        self.judging = state if isinstance(state, Judging) else Judging(state)
        self.latencies = dict(latencies_us)  # open sources only
        # The progress each source has reported: it sends nothing at or before this. A source
        # that has reported is bound by it alone, not by its latency (see `progress`).
        self.progressed: dict[str, int] = {}
        self._released = -FAR_FUTURE  # the release point so far: only ever goes forward
        self._judged_to = self.judging.state.now  # the table's time after the loop's last judgement
        self._last_t = self._judged_to  # the latest event judged (a host's answer moves no table time)
        self.ruling_sinks = list(rulings)  # final rulings, in order: output, kiosk
        # Each event the engine accepted, with its tag, before any of its rulings go out: the
        # journal writes it here, so no ruling is ever announced for an event it could lose.
        self.event_sinks = list(judged)
        # Live, a card the engine refuses (a misreading: "7H is already on the stack") must not
        # stop the table: with `refused` it is told there and asked instead (an Unread lay, the
        # reading as its guess). Without it, EventError.
        self.refused = refused
        self.question_sinks = list(questions)
        self.late = late
        self._tags: dict[int, Any] = {}  # a lay's time -> its tag, while a question is open
        self.trouble_sinks = list(troubles)
        # Lights and sound: rulings as soon as the outcome is known. A snap win is final
        # at the press, but its ruling waits up to a race window for its margin; the
        # players should not wait for the margin to see who won.
        self.signal_sinks = list(signals)
        self._early: StackWon | None = None
        self.debouncer = debouncer or Debouncer(self.judging.state.seats)
        self.timer_waits = timer_waits  # live: feed a Wait when a timer is due; replay: never
        self.inbox: queue.SimpleQueue[tuple[str, Any, Any]] = queue.SimpleQueue()
        self._buffer: list[tuple[int, int, Event, Any]] = []  # (t, arrival, event, tag)
        # How coarsely each seat's presses are stamped (0: to the us); a press waits this long
        # past its stamp for a coarser one that may have come first (`_heat`).
        self.resolution = tuple(resolution_us)
        self._horizon = max(self.resolution, default=0)
        self.heats = heats
        self._arrival = itertools.count()
        self._finished = False
        self._stopping = False
        self.paused = False  # the lays' source is lost: presses are dropped until it is back
        self._now = 0  # the clock at the last pump: a host's answer is stamped with it
        self.dropped = 0

    # Producers (any thread) ------------------------------------------------------

    def put_lay(self, event: Lay | Wait | Unread | Named, tag: Any = None, source: str = "camera") -> None:
        """A card seen on the pile, one the camera could not read, time observed passing (from the
        vision stage), or the card of an unread lay named (its `t` on the loop's clock)."""
        self.inbox.put((source, event, tag))

    @property
    def state(self) -> State:
        """The engine's table: everything judged so far (not what waits behind a question)."""
        return self.judging.state

    @state.setter
    def state(self, state: State) -> None:
        """A new table (a new game, an undo): no question is open on it."""
        self.judging = Judging(state)
        self._tags.clear()

    def put_edge(self, edge: Edge, source: str = "buttons") -> None:
        """A button edge, straight from the pin callback (or the USB reader: `source` "usb")."""
        self.inbox.put((source, edge, None))

    def progress(self, source: str, t: int) -> None:
        """`source` will send nothing stamped at or before `t` (from any thread, after its events
        up to there): the loop may judge up to `t` without waiting its latency out."""
        self.inbox.put((source, t, "progress"))

    def close_source(self, source: str) -> None:
        """`source` will send nothing more: the watermark no longer waits for it."""
        self.inbox.put((source, None, "closed"))

    # The loop (one thread) -------------------------------------------------------

    def _bound(self, source: str, now: int) -> int:
        """How far `source` has got: its own word, or the clock minus its latency."""
        progressed = self.progressed.get(source)
        return progressed if progressed is not None else now - self.latencies[source]

    def watermark(self, now: int) -> int:
        """Every event stamped at or before this has arrived: the least of the open sources'
        progress, never going back."""
        if not self.latencies:
            return FAR_FUTURE
        self._released = max(self._released, min(self._bound(s, now) for s in self.latencies))
        return self._released

    def name(self, lay_t: int, card: Card | None) -> str:
        """The host names the card of the lay at `lay_t` (None: nothing was laid there), or
        corrects a misread one. In the loop's thread (through `call`): checked against the
        table at once, then taken in event time, stamped with the loop's clock. Raises
        ValueError with the reason (no lay then; the card cannot be)."""
        named = Named(max(self._now, self.state.now), lay_t, card)
        try:
            take(self.judging, named)  # a trial: the table is a value, nothing changes
        except (IllegalEvent, NothingToName) as e:
            raise ValueError(str(e)) from None
        self._buffer_event(named, None)
        return "no card was laid there" if card is None else f"the card is {card.code}"

    def pump(self, now: int) -> None:
        """Take in whatever has arrived and judge everything the watermark has passed."""
        self._now = max(self._now, now)
        while True:
            try:
                source, item, tag = self.inbox.get_nowait()
            except queue.Empty:
                break
            self._take(source, item, tag)
        for trouble in self.debouncer.check(now):
            self._trouble(trouble)
        self._release(self.watermark(now))

    def _take(self, source: str, item: Any, tag: Any) -> None:
        if source == "control":
            if tag == "stop":
                self._stopping = True  # taken by `pump` from among the events: `run` returns after it
            elif tag == "call":
                work, future = item
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(work())
                    except Exception as e:  # handed to the caller's thread, raised there
                        future.set_exception(e)
            else:
                self.paused = tag == "pause"
        elif tag == "closed" and item is None:
            self.latencies.pop(source, None)
            self.progressed.pop(source, None)
        elif tag == "progress":
            if source in self.latencies:  # a closed source's last word changes nothing
                self.progressed[source] = max(item, self.progressed.get(source, item))
        elif type(item) is Edge:
            for result in self.debouncer.feed(item):
                if type(result) is Press and self.paused:
                    self.dropped += 1  # the referee cannot see the stack: no press can be judged
                elif type(result) is Press:
                    t = self._arrived(source, result.t)
                    self._buffer_event(Snap(t, result.seat), None)
                else:
                    self._trouble(result)  # type: ignore[arg-type]
        else:
            if type(item) is not Named:  # the host's answer is stamped with the loop's own clock
                t = self._arrived(source, item.t)
                if t != item.t:
                    item = item._replace(t=t)
            self._buffer_event(item, tag)

    def _arrived(self, source: str, t: int) -> int:
        """An event from `source` stamped `t`: it must not be older than what was released (one
        stamped at the release point itself is still in order: no timer fires past it). Returns
        the time to judge it at: `t`, or for a late event with a `late` sink, the release point."""
        if self.state.now < self._judged_to:
            # The table was taken back from outside (the host's undo): the stream goes on from there.
            self._released = self._judged_to = self._last_t = self.state.now
        if t < self._released and self.latencies:
            if source in self.progressed:
                promise = f"it reported progress to {self.progressed[source]}"
            else:
                promise = f"it declared a latency of {self.latencies.get(source, 0)} us"
            if self.late is None:
                raise ProgressError(
                    f"{source}: an event stamped {t} arrived after the loop had judged up to "
                    f"{self._released} ({promise}): judging it now would judge out of order"
                )
            at = max(self._released, self.state.now)
            self.late(source, t, at)
            return at
        return t

    def _buffer_event(self, event: Event, tag: Any) -> None:
        heapq.heappush(self._buffer, (event.t, next(self._arrival), event, tag))

    def _held_to(self) -> int:
        """The buffer's head time, and for a press, the horizon it waits for too."""
        t, _, event, _ = self._buffer[0]
        return t + self._horizon if self._horizon and type(event) is Snap else t

    def _release(self, watermark: int) -> None:
        buffer = self._buffer
        while buffer and self._held_to() <= watermark:
            if self._horizon and type(buffer[0][2]) is Snap:
                self._heat()
            _, _, event, tag = heapq.heappop(buffer)
            self._judge(event, tag)
        if self.timer_waits and not self._finished and not self.judging.holding:
            # Nothing earlier than the watermark can still arrive: let timers run to it. (Not
            # while a question holds judging: the engine fires them when it gets there.)
            due = self.state.rules.deadline(self.state)
            wait_t = min(watermark - 1, buffer[0][0] - 1 if buffer else FAR_FUTURE)
            # Never a Wait stamped before an event already judged (one at the release point).
            if due is not None and due <= wait_t and wait_t >= max(self.state.now, self._last_t):
                self._judge(Wait(wait_t), None)

    def _heat(self) -> None:
        """The press at the buffer's head, P: every other seat's press stamped after it, but
        within its own seat's resolution and with no card between, may really have come
        first: it is judged at P's instant (the engine rules presses of one instant
        together: a dead heat when both could win). Moving it to P's stamp keeps it within
        the interval its own stamp allows (the press came at most its resolution before)."""
        buffer = self._buffer
        t0, _, first, _ = buffer[0]
        moved = False
        for i, (t, arrival, event, tag) in sorted(enumerate(buffer), key=lambda e: e[1][:2]):
            if t > t0 + self._horizon:
                break
            if type(event) is not Snap:
                if t > t0:
                    break  # a card between: the press is ordered against it as stamped
                continue
            seat = event.seat
            if t > t0 and seat != first.seat and t - t0 <= self._resolution_of(seat):
                buffer[i] = (t0, arrival, event._replace(t=t0), tag)
                moved = True
                if self.heats is not None:
                    self.heats(event, first)  # type: ignore[arg-type]
        if moved:
            heapq.heapify(buffer)

    def _resolution_of(self, seat: int) -> int:
        return self.resolution[seat] if seat < len(self.resolution) else 0

    def _judge(self, event: Event | Unread | Named, tag: Any) -> None:
        before = self.judging
        if type(event) in (Lay, Unread) and before.holding:
            self._tags.setdefault(event.t, tag)
        try:
            self.judging, rulings = take(before, event)
        except (IllegalEvent, NothingToName) as e:
            if type(event) is Lay and self.refused is not None:
                # A reading the table makes impossible: told, then asked, never dropped. (When
                # the card is possible from the seat on turn, the hand's side was misread.)
                self.refused(event, str(e))
                event = self._unseated(before, event)
                self.judging, rulings = take(before, event)
            elif type(event) is Named and self.refused is not None:
                self.refused(event, str(e))  # a wrong answer: the question stays open
                return
            else:
                raise EventError(str(e), tag) from None
        if type(event) is Unread:
            self._tags.setdefault(event.t, tag)
        self._judged_to = self.state.now
        self._last_t = max(self._last_t, event.t)
        for sink in self.event_sinks:
            sink(event, tag)
        self._emit(rulings)
        if before.open != self.judging.open:
            if not self.judging.holding:
                self._tags.clear()
            for question in self.question_sinks:
                question(self.judging.open, self.judging.state)

    @staticmethod
    def _unseated(judging: Judging, lay: Lay) -> Lay | Unread:
        if lay.seat is not None:
            try:
                step(judging.state, lay._replace(seat=None))
                return lay._replace(seat=None)
            except IllegalEvent:
                pass
        return Unread(lay.t, lay.seat, lay.card)

    def _emit(self, rulings: list[Ruling]) -> None:
        for ruling in rulings:
            for sink in self.ruling_sinks:
                sink(ruling)
            if self.signal_sinks and not self._announced_early(ruling):
                for sink in self.signal_sinks:
                    sink(ruling)
        deferred = self.state.deferred
        if self.signal_sinks and deferred is not None and deferred.won is not self._early:
            self._early = deferred.won
            for sink in self.signal_sinks:
                sink(deferred.won)

    def _announced_early(self, ruling: Ruling) -> bool:
        early = self._early
        if (
            type(ruling) is StackWon
            and early is not None
            and (ruling.t, ruling.seat) == (early.t, early.seat)
        ):
            self._early = None
            return True
        return False

    def _trouble(self, trouble: ButtonTrouble) -> None:
        for sink in self.trouble_sinks:
            sink(trouble)

    def drain(self) -> None:
        """The sources have stopped: judge everything buffered, fire no timer."""
        self._finished = True
        for source in list(self.latencies):
            self.close_source(source)
        self.pump(FAR_FUTURE)

    def finish(self, ended: Callable[[State], Any] | None = None) -> None:
        """The sources have ended: judge what is buffered and settle the last presses.
        `ended` gets the final table before its rulings go out (the journal closes the game
        there: the end of the input is an input too)."""
        self.drain()
        try:
            state, rulings = end(self.judging)
        except ValueError as e:
            raise EventError(str(e), self._tags.get(self.judging.open[0].t)) from None
        self.judging = type(self.judging)(state)
        if ended is not None:
            ended(self.state)
        self._emit(rulings)

    def _passes(self, t: int, now: int) -> int | None:
        """When the release point reaches `t` with no new input: the clock time by which every
        latency-bound source has got there (None: only a source's progress report can)."""
        if t <= self._released:
            return now
        when = now
        for source, latency in self.latencies.items():
            progressed = self.progressed.get(source)
            if progressed is None:
                when = max(when, t + latency)
            elif progressed < t:
                return None  # it wakes the loop itself when it reports
        return when

    def next_wake(self, now: int) -> int | None:
        """When `pump` next has something to do without new input."""
        times = []
        if self._buffer:
            times.append(self._passes(self._held_to(), now))
        due = self.state.rules.deadline(self.state)
        if due is not None and self.timer_waits and not self.judging.holding:
            times.append(self._passes(due + 1, now))  # a Wait fires one past the deadline
        check = self.debouncer.next_check()
        if check is not None:
            times.append(check)
        return min((t for t in times if t is not None), default=None)

    def waiting(self) -> bool:
        """Something waits for the sources' progress: an event in the buffer, or a timer."""
        if self._buffer:
            return True
        due = self.state.rules.deadline(self.state)
        return due is not None and self.timer_waits and not self._finished and not self.judging.holding

    def call(self, work: Callable[[], Any]) -> Future[Any]:
        """Run `work` in the loop's own thread, between two events (from any thread): how the
        host's commands (a new game, undo) change the table without a lock."""
        future: Future[Any] = Future()
        self.inbox.put(("control", (work, future), "call"))
        return future

    def pause(self, paused: bool = True) -> None:
        """Stop judging presses (the camera is lost), or judge them again (from any thread)."""
        self.inbox.put(("control", None, "pause" if paused else "resume"))

    def stop(self) -> None:
        """Ask `run` to return (from any thread)."""
        self.inbox.put(("control", None, "stop"))

    def run(self, clock: Clock, heartbeat: Callable[[], int] | None = None) -> None:
        """Live: judge as events arrive and timers fall due, until `stop()`.

        Sleeps on the inbox until the next thing falls due (or forever when
        nothing is pending): no polling, no busy waiting. `heartbeat` (systemd's
        watchdog) is called from this loop, so that it proves this loop turns; it
        returns the microseconds until it wants calling again.
        """
        while True:
            now = clock.now_us()
            wake = self.next_wake(now)
            if heartbeat is not None:
                beat = now + heartbeat()
                wake = beat if wake is None else min(wake, beat)
            timeout = None if wake is None else max(wake - now, 0) / 1e6
            try:
                source, item, tag = self.inbox.get(timeout=timeout)
            except queue.Empty:
                pass
            else:
                self._take(source, item, tag)
            if self._stopping:
                self._stopping = False
                return
            self.pump(clock.now_us())
            if self._stopping:
                self._stopping = False
                return
