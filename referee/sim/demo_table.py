"""The demo's physical table: what the bots do, as the referee's hardware would sense it.

The bots (`VirtualTable`) play a game; this module turns what they physically do
into the referee's inputs, and judges those with the live table loop, as
`referee run` does at a real table:

- a press becomes edges on the seat's GPIO line, with contact bounce: by default stamped
  and queued on the double of the kernel's GPIO chip (hardware/gpio_double.py) and read by
  the real reader (`GpioButtons`), as `referee run` reads them; or (`buttons="gpiozero"`)
  on a mock pin (gpiozero's MockFactory on a virtual clock), its callback running late;
- a card laid becomes what the camera stage reports: `LayQueue` hands the lay
  over 30 to 150 ms after it came to rest; a camera stage renders frames of the
  table and reads them through the pile watcher and the recogniser;
- the loop merges both in event time, journals each event, and rules; the LEDs
  and the buzzer play on mock pins.

All of it runs on one virtual clock, so a game is the same at any speed; a
`pace` callback lets the caller keep step with real time.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from hardware.clock import VirtualClock
from referee.cards import Card
from referee.live.assembly import TICK_US, TableHooks, TableSettings, assemble
from referee.live.loop import EventSink, QuestionSink
from referee.live.wiring import default_wiring
from referee.rules.events import Event, Lay, Named, Snap, Unread, Wait
from referee.rules.questions import Judging
from referee.rules.rulings import Laid, Ruling, StackWon, TakeBack
from referee.rules.state import State

from .bots import Play, VirtualTable
from .pipeline import CALLBACK_LAG_US, press_edges

CAMERA_LAG_US = (30_000, 150_000)  # rest to report: a few frames and a reading
PICKUP_US = (300_000, 700_000)  # a won stack is swept off the table this long after the win
LIFT_US = (250_000, 500_000)  # a card taken back is picked up this long after it landed
LOOKAHEAD_US = 2_000_000  # how far ahead the stage hears of the table (a camera's hand and pickups)
HOLD_US = 100_000  # a press is let go before the finger can press again (REPRESS_US)
READ_US = 15_000  # a frame's reading, from the frame to the lay reported
# The camera's is its bound only until the pile watcher reports its progress (with its first frame).
LATENCIES_US = {"buttons": CALLBACK_LAG_US[1] + 10_000, "camera": 700_000}  # a doubtful reading waits ~0.5 s
EDGE_TICK_US = 1_000  # an edge source that reports its progress reads the kernel's queue every ms
IRQ_US = (5, 100)  # from an edge's stamp (the interrupt) to the edge in the line request's queue
GPIO_LATENCY_US = 20_000  # the GPIO reader's bound until its first sweep (as in `referee run`)
ANSWER_US = (1_500_000, 4_000_000)  # the host looks at the asked card and taps it on the kiosk
NOTICE_US = 4_000_000  # a card laid that the kiosk never showed: the players notice by then


class Progress(NamedTuple):
    """What a lay stage reports besides events: it will send nothing stamped at or before `t`."""

    t: int


class LayStage(Protocol):
    """How the cards on the table reach the referee. `reports` may also yield `Progress`."""

    def lay(self, t_rest: int, card: Card, seat: int, seen_seat: int | None) -> None:
        """`seat` laid `card`; it came to rest at `t_rest`. `seen_seat`: the seat the
        bots' own script names for it (None for a lay in turn)."""

    def take(self, t: int, seat: int) -> None:
        """`seat` sweeps the stack off the table at `t`."""

    def lift(self, t: int, seat: int, card: Card) -> None:
        """`seat` picks `card` back up off the stack at `t` (a card laid out of turn, taken back)."""

    def reports(self, until: int) -> Iterator[tuple[int, Event | Progress]]:
        """What the stage hands the referee up to time `until`: (delivery time, event or progress)."""

    def close(self) -> Iterator[tuple[int, Event | Progress]]:
        """Everything still on its way."""

    def truth(self, t: int) -> Card | None:
        """The card that really came to rest at `t` (None: none did): what the host sees."""

    def missed(self, now: int) -> list[tuple[int, Card]]:
        """The cards that came to rest well before `now` and were never reported: (rest, card)."""


@dataclass
class LayQueue:
    """The camera stage without the camera: each lay reported a seeded 30-150 ms after it
    came to rest, as the bots' script has it. For a table without the camera extra.

    It reports its progress (`progress`), as the pile watcher does, so that the presses wait
    for the cards still on their way and for nothing else: without it the loop would hold
    every press back by the camera's declared 700 ms, a camera this table has not got."""

    rng: random.Random
    _queue: list[tuple[int, int, Event]] = field(default_factory=list)
    _order: int = 0
    _free: int = 0
    _truth: dict[int, Card] = field(default_factory=dict)

    def lay(self, t_rest: int, card: Card, seat: int, seen_seat: int | None) -> None:
        self._truth[t_rest] = card
        self._free = max(self._free, t_rest + self.rng.randint(*CAMERA_LAG_US))  # in order
        self._order += 1
        heapq.heappush(self._queue, (self._free, self._order, Lay(t_rest, card, seen_seat)))

    def take(self, t: int, seat: int) -> None:
        pass  # the engine already knows who won; the camera's `cleared` only says time passed

    def lift(self, t: int, seat: int, card: Card) -> None:
        pass  # the engine already took it back

    def reports(self, until: int) -> Iterator[tuple[int, Event]]:
        while self._queue and self._queue[0][0] <= until:
            delivery, _, event = heapq.heappop(self._queue)
            yield delivery, event

    def close(self) -> Iterator[tuple[int, Event]]:
        return self.reports(1 << 62)

    def truth(self, t: int) -> Card | None:
        return self._truth.get(t)  # every card is reported as laid: nothing is asked or misread

    def progress(self, now: int) -> int:
        """Nothing stamped at or before this is still to come, at `now`: the stage hears of
        every card before it lands (`DemoTable` tells it ahead), so only those still queued
        can come stamped at or before `now`."""
        first = min((event.t for _, _, event in self._queue), default=None)
        return now if first is None else min(now, first - 1)

    def missed(self, now: int) -> list[tuple[int, Card]]:
        return []


class CameraStage:
    """The camera stage with the camera: the simulator's table camera renders the game (hands
    coming in from each seat's side, cards landing, stacks swept away) and the pile watcher
    and the recogniser read the frames, as `referee watch` does. A lay is delivered when the
    frame that showed it at rest has been read."""

    def __init__(self, players: int, seed: int) -> None:
        # numpy and OpenCV only for a table with the camera
        import numpy as np

        from referee.vision.recogniser import Recogniser  # the eyes, and the camera below: OpenCV
        from referee.vision.watcher import PileWatcher

        from .table_camera import TableCamera  # as above

        self.camera = TableCamera(players, np.random.default_rng(seed))
        self.frames: list[Callable[[Any], Any]] = []  # told every frame rendered (the replay's ring)
        recogniser = Recogniser()
        self.read = self.asked = self.wrong = 0  # lays reported as a card, asked, and read wrong
        self.reported: set[int] = set()  # the rest times of the lays reported or asked
        self._noticed = 0  # how many of the camera's rests have been checked for a missed lay
        self.missed_lays = 0
        self.seen: set[str] = set()  # cards laid since the stack was last cleared: unlikely again
        self.watcher = PileWatcher(
            lambda image, mask: recogniser.recognise(image, mask, frozenset(self.seen)),
            self.camera.watcher_sides,
        )

    def lay(self, t_rest: int, card: Card, seat: int, seen_seat: int | None) -> None:
        self.camera.lay(t_rest, card, seat)

    def take(self, t: int, seat: int) -> None:
        self.camera.take(t, seat)

    def lift(self, t: int, seat: int, card: Card) -> None:
        self.camera.lift(t, seat, card)

    def missed(self, now: int) -> list[tuple[int, Card]]:
        """The cards that came to rest well before `now` and were never reported: (rest, card)."""
        shown = self.camera.shown
        out = []
        while self._noticed < len(shown) and shown[self._noticed].t_us < now - NOTICE_US:
            rest = shown[self._noticed]
            self._noticed += 1
            if rest.kind == "lay" and rest.t_us not in self.reported and rest.card is not None:
                out.append((rest.t_us, rest.card))
        self.missed_lays += len(out)
        return out

    def truth(self, t: int) -> Card | None:
        """The card shown at rest at `t`: the watcher stamps a lay with its rest frame."""
        return next((s.card for s in self.camera.shown if s.kind == "lay" and s.t_us == t), None)

    def reports(self, until: int) -> Iterator[tuple[int, Event | Progress]]:
        return self._read(self.camera.frames_until(until))

    def close(self) -> Iterator[tuple[int, Event | Progress]]:
        yield from self._read(self.camera.finish())
        yield from self._events(self.watcher.finish(), None)

    def _read(self, frames: Iterator[Any]) -> Iterator[tuple[int, Event | Progress]]:
        for frame in frames:
            for sink in self.frames:
                sink(frame)
            yield from self._events(self.watcher.feed(frame), frame.t_us)
            done = self.watcher.progress()  # with the frame's events: a still pile is read to here
            if done is not None:
                yield frame.t_us + READ_US, Progress(done)

    def _events(self, found: Any, at: int | None) -> Iterator[tuple[int, Event]]:
        """The watcher's findings as the referee's events, each delivered once its frame is read."""
        from referee.vision.watcher import WatchAsk, WatchLay  # cv2, as above

        for item in found:
            delivery = (at if at is not None else item.t_us) + READ_US
            if type(item) in (WatchLay, WatchAsk):
                self.reported.add(item.t_us)
            if type(item) is WatchLay:
                self.seen.add(item.card.code)
                self.read += 1
                self.wrong += item.card != self.truth(item.t_us)
                yield delivery, Lay(item.t_us, item.card, item.seat)
            elif type(item) is WatchAsk:
                self.asked += 1
                yield delivery, Unread(item.t_us, item.seat, item.guess)
            else:
                self.seen.clear()
                yield delivery, Wait(item.t_us)


RulingBatch = Callable[[list[Ruling], State], Any]


class DemoTable:
    """The bots' table wired to a referee: mock pins, a lay stage, the live table loop."""

    def __init__(
        self,
        table: VirtualTable,
        stage: LayStage | None = None,
        rulings: RulingBatch | None = None,
        judged: list[EventSink] | None = None,
        state: State | Judging | None = None,
        clock: VirtualClock | None = None,
        mirror: Callable[[Any], Any] | None = None,
        refused: Callable[[Event, str], Any] | None = None,
        questions: list[QuestionSink] | None = None,
        callback_lag_us: tuple[int, int] = CALLBACK_LAG_US,
        edge_progress: bool = False,
        buttons: str = "gpiod",
    ) -> None:
        """`mirror`: wraps the table's lights and buzzer (the kiosk page shows them too);
        `questions`: told when the camera asks for a card, and when it is named;
        `callback_lag_us`: how late a pin's callback runs after its edge (the buttons declare
        its top plus 10 ms as their latency). A stage may declare its own `latency_us`.
        `edge_progress`: the buttons report how far they have read (every edge stamped before
        the earliest one still on its way), every `EDGE_TICK_US`, instead of being bound by
        their latency (with `buttons="gpiozero"` only: a simulation of what an edge source
        could say). `buttons`: "gpiod", the real reader on the double of the kernel's GPIO
        chip, reporting its own progress, as `referee run` does by default; "gpiozero": the
        callbacks of mock pins, bound by their latency (`callback_lag_us`)."""
        self.table = table
        self.clock = clock or VirtualClock(0)
        self.rng = random.Random(table.seed * 7919 + 1)  # the hardware's own luck, apart from the bots'
        self.stage = stage or LayQueue(self.rng)
        self.names = table.spec.players
        self._batch: list[Ruling] = []
        self._on_batch = rulings
        self.callback_lag_us = callback_lag_us
        self.edge_progress = edge_progress and buttons == "gpiozero"
        self.reader = buttons
        hooks = TableHooks(
            rulings=[self._batch.append],
            judged=judged or [],
            refused=refused,
            questions=[self._ask_host, *(questions or [])],
            button_progress=self._gpio_progress,
            mirror=mirror,
        )
        self.parts = assemble(self.settings(), self.clock, state or table.spec.new_game(), hooks)
        assert self.parts.loop is not None and self.parts.player is not None  # closed at the end of `run`
        self.signals, self.player, self.loop = self.parts.signals, self.parts.player, self.parts.loop
        self.debouncer = self.loop.debouncer
        self.buttons = self.parts.buttons if buttons == "gpiozero" else None
        self.gpio = self.parts.buttons if buttons == "gpiod" else None
        self.pins: list[Any] = list(self.parts.seat_pins().values())
        self._simulation()

    def settings(self) -> TableSettings:
        """The demo's table: mock pins, the default wiring for its players, its buttons' reader;
        the buttons' latency is the callbacks' lag (or the GPIO reader's, until its first sweep)."""
        camera = getattr(self.stage, "latency_us", LATENCIES_US["camera"])
        buttons = GPIO_LATENCY_US if self.reader == "gpiod" else self.callback_lag_us[1] + 10_000
        wiring = default_wiring(len(self.names))
        return TableSettings(
            wiring, buttons=self.reader, usb=(), latencies_us={"buttons": buttons, "camera": camera}
        )

    def _simulation(self) -> None:
        """The hardware's and the host's schedules, empty."""
        # The host at the kiosk: each question answered with the card on the table, a human
        # while later. (delivery, lay's time, answer)
        self._answers: list[tuple[int, int, Named]] = []
        self._asked: set[int] = set()
        self.answer_us: list[int] = []  # how long each question (or misread) waited for its answer
        self.corrections = 0  # misread cards the host corrected
        self._edges: list[tuple[int, int, int, int, bool]] = []  # (delivery, order, seat, t, pressed)
        self._order = 0
        self._pin_free = [0] * len(self.names)
        self._taken: set[tuple[int, int]] = set()
        self._lifts: list[tuple[int, int, Card]] = []  # cards taken back, to lift: (when, seat, card)
        self._ahead: deque[Play] = deque()  # the bots' plays the stage has heard of, not yet made
        self._pressing: int | None = None  # a press being made: its edges are scheduled next
        # A stage that can say how far it has got at any moment (the lay queue) is asked at
        # each turn of the loop; the camera stage says it with each frame it reads (`Progress`).
        self._stage_progress: Callable[[int], int] | None = getattr(self.stage, "progress", None)
        self._reports: list[tuple[int, Event | Progress]] = []  # taken from the stage, not yet delivered

    @property
    def questions(self) -> int:
        """How many lays the referee asked the host for."""
        return len(self._asked)

    def _ask_host(self, open_: tuple[Unread, ...], before: State) -> None:
        now = self.clock.now_us()
        for question in open_:
            if question.t not in self._asked:
                self._asked.add(question.t)
                at = now + self.rng.randint(*ANSWER_US)
                heapq.heappush(
                    self._answers, (at, question.t, Named(at, question.t, self.stage.truth(question.t)))
                )

    # What the bots do -------------------------------------------------------------------

    def _tell(self, play: Play) -> None:
        """What the stage sees of a play: the card laid (by whom), the stack swept away."""
        event = play.event
        assert event is not None
        seat = None
        if type(event) is Lay:
            laid = next((r for r in play.rulings if type(r) is Laid), None)
            seat = laid.seat if laid is not None else event.seat
        self._lift_before(event.t, seat)
        if type(event) is Lay and seat is not None:
            self.stage.lay(event.t, event.card, seat, event.seat)
        for r in play.rulings:
            if type(r) is TakeBack:  # the seat reaches for its card and takes it back
                self._lifts.append((r.t + self.rng.randint(*LIFT_US), r.seat, r.card))
        won = [r for r in play.rulings if type(r) is StackWon]
        if play.state.deferred is not None:
            won.append(play.state.deferred.won)  # the cards change hands at the press
        for r in won:
            if (r.t, r.seat) not in self._taken:
                self._taken.add((r.t, r.seat))
                self.stage.take(r.t + self.rng.randint(*PICKUP_US), r.seat)

    def _lift_before(self, t: int, seat: int | None) -> None:
        """The cards taken back whose lift is due by `t`, and the one `seat` takes back before it
        lays again (a bot may lay the same card again at once: it picks it up first)."""
        keep = []
        for due, taker, card in self._lifts:
            if due <= t or taker == seat:
                self.stage.lift(min(due, t - 1), taker, card)
            else:
                keep.append((due, taker, card))
        self._lifts = keep

    def _press(self, snap: Snap) -> None:
        for edge_t, pressed in press_edges(
            snap.t, snap.t + HOLD_US + 20_000, self.debouncer.lockout_us, self.rng
        ):
            # One pin's callbacks run in the order of its edges, each a little late; on the
            # kernel's line events, each edge is queued a few us after its stamp.
            lag = IRQ_US if self.gpio is not None else self.callback_lag_us
            free = max(self._pin_free[snap.seat], edge_t + self.rng.randint(*lag))
            self._pin_free[snap.seat] = free
            self._order += 1
            heapq.heappush(self._edges, (free, self._order, snap.seat, edge_t, pressed))

    def _deliver(
        self, until: int, pace: Callable[[int], Any] | None, skip: Callable[[Event], bool] | None = None
    ) -> None:
        """Everything the hardware delivers up to `until`, in delivery order, judged as it comes.
        Between deliveries the loop is woken when it has something due, as `TableLoop.run` is."""
        self._reports = reports = [
            r for r in self.stage.reports(until) if skip is None or type(r[1]) is Progress or not skip(r[1])
        ]
        reports.reverse()
        while True:
            edge_due = self._edges[0][0] if self._edges and self._edges[0][0] <= until else None
            report_due = reports[-1][0] if reports else None
            answer_due = self._answer_due(until)
            now = self.clock.now_us()
            wake = self.loop.next_wake(now)
            if (self.edge_progress or self.gpio is not None) and self.loop.waiting():
                # The reader sweeps (the simulated source reports) while the loop waits.
                tick = TICK_US if self.gpio is not None else EDGE_TICK_US
                wake = min(wake or now + tick, now + tick)
            elif wake is None and self._stage_progress is not None:
                # A timer still to fall due waits for the stage's word, which comes only when
                # it is asked: ask it then (after that the buttons' bound decides, exactly).
                due = self.loop.state.rules.deadline(self.loop.state)
                wake = due + 1 if due is not None and due + 1 > now and self.loop.waiting() else None
            dues = [d for d in (edge_due, report_due, answer_due) if d is not None]
            if wake is not None and now < wake <= until and all(wake < d for d in dues):
                self._advance(wake, pace)  # nothing arrives: a press or a timer falls due
            elif not dues:
                break
            elif answer_due is not None and all(d is None or answer_due < d for d in (edge_due, report_due)):
                delivery, lay_t, named = heapq.heappop(self._answers)
                self._advance(delivery, pace)
                self.answer_us.append(delivery - lay_t)
                self.loop.put_lay(named, source="camera")
            elif report_due is None or (edge_due is not None and edge_due <= report_due):
                delivery, _, seat, edge_t, pressed = heapq.heappop(self._edges)
                self._advance(delivery, pace)
                self.pins[seat].edge(not pressed, edge_t)  # pulled up: a press pulls the pin low
            elif type(reports[-1][1]) is Progress:
                delivery, progress = reports.pop()
                self._advance(delivery, pace)
                self.loop.progress("camera", progress.t)
            else:
                delivery, event = reports.pop()
                self._advance(delivery, pace)
                self.loop.put_lay(event)
                if type(event) is Lay and event.card != self.stage.truth(event.t):
                    self._correct(delivery, event.t)
                for rest, _ in self.stage.missed(delivery):
                    self._correct(delivery, rest)
            self._pump()
        self._advance(until, pace)
        self._pump()

    def _pump(self) -> None:
        if self.gpio is not None:
            self.gpio.sweep()  # the edges queued, then the reader's progress
        self._lays_progress()
        if self.edge_progress:
            self._buttons_progress()
        self.loop.pump(self.clock.now_us())
        self._flush()

    def _lays_progress(self) -> None:
        if self._stage_progress is not None:
            # Its word, but for the lays taken from it that are still on their way here.
            coming = [event.t for _, event in self._reports if type(event) is not Progress]
            done = min([self._stage_progress(self.clock.now_us()), *(t - 1 for t in coming)])
            self.loop.progress("camera", done)

    def _buttons_progress(self) -> None:
        now = self.clock.now_us()
        # Every edge that has happened is delivered, but for those still on their way. (A bot's
        # press is scheduled as the clock reaches it: nothing later is stamped before now.) The
        # presses the bots are about to make count as happened: the clock may run a little past
        # a press (a frame read after it) before its edges are scheduled.
        presses = [p.event.t for p in self._ahead if type(p.event) is Snap]  # type: ignore[union-attr]
        if self._pressing is not None:
            presses.append(self._pressing)
        self.loop.progress("buttons", min([now, *presses, *(e[3] for e in self._edges)]) - 1)

    def _gpio_progress(self, t: int) -> None:
        # The reader's word, but for the simulation's own limit: a bot's press not yet turned
        # into edges (the clock may run a little past it first) is not queued yet, as it
        # would be at a real table.
        presses = [p.event.t for p in self._ahead if type(p.event) is Snap]  # type: ignore[union-attr]
        if self._pressing is not None:
            presses.append(self._pressing)
        self.loop.progress("buttons", min([t, *(p - 1 for p in presses)]))

    def _correct(self, now: int, lay_t: int) -> None:
        """A card read wrong, or not seen at all: the players see it on the kiosk, and the host
        corrects it."""
        at = now + self.rng.randint(*ANSWER_US)
        self.corrections += 1
        heapq.heappush(self._answers, (at, lay_t, Named(at, lay_t, self.stage.truth(lay_t))))

    def _answer_due(self, until: int) -> int | None:
        return self._answers[0][0] if self._answers and self._answers[0][0] <= until else None

    def _advance(self, t: int, pace: Callable[[int], Any] | None) -> None:
        if t > self.clock.now_us():
            if pace is not None:
                pace(t)
            self.player.run_until(t)

    def _flush(self) -> None:
        if self._batch:
            batch = list(self._batch)
            self._batch.clear()
            if self._on_batch is not None:
                self._on_batch(batch, self.loop.state)

    def run(
        self,
        pace: Callable[[int], Any] | None = None,
        skip: Callable[[Event], bool] | None = None,
        ended: Callable[[State], Any] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> State:
        """Play the whole game through the hardware paths; the referee's final table.

        `skip`: the bots' events the referee has already judged (a resumed game: the
        journal holds them): the bots replay them, the referee does not hear them again.
        `ended`: told the final table before the rulings the game's end settles.
        `stop`: True once a stop is asked for (SIGTERM, Ctrl-C): taken between two of the
        bots' events, the game left open (what the loop still holds is not judged: the
        bots play it again on the resume, after the last event the journal holds)."""
        stopping = stop or (lambda: False)
        if self.loop.judging.open:  # a resumed game's questions are asked again
            self._ask_host(self.loop.judging.open, self.loop.state)
        try:
            if self._play(pace, skip, stopping) and self._end(pace, stopping):
                self.loop.finish(ended)
                self._flush()
            return self.loop.state
        finally:
            self.parts.close()  # the buttons, the lights and buzzer off, the pins

    def _play(
        self,
        pace: Callable[[int], Any] | None,
        skip: Callable[[Event], bool] | None,
        stopping: Callable[[], bool],
    ) -> bool:
        """The bots' events, each delivered through the hardware; False: a stop came first."""
        plays = (p for p in self.table.play() if p.event is not None)
        self._ahead = ahead = deque[Play]()

        def pull(horizon: int) -> None:
            # The stage hears of cards and takes ahead of time (a camera renders the hand
            # before the rest); the referee hears of them only through the stage.
            while not ahead or ahead[-1].event.t <= horizon:  # type: ignore[union-attr]
                play = next(plays, None)
                if play is None:
                    return
                ahead.append(play)
                self._tell(play)

        while True:
            if stopping():
                return False
            pull(-1)
            if not ahead:
                return True
            event = ahead.popleft().event
            assert event is not None
            pull(event.t + LOOKAHEAD_US)
            if skip is not None and skip(event):
                self.clock.sleep_until(event.t)
                continue
            self._pressing = event.t if type(event) is Snap else None
            self._deliver(event.t, pace, skip)
            if type(event) is Snap:
                self._press(event)
            self._pressing = None

    def _end(self, pace: Callable[[int], Any] | None, stopping: Callable[[], bool]) -> bool:
        """Everything still on its way delivered and judged, the last questions answered; False:
        a stop came first (the game stays open)."""
        self._lift_before(1 << 62, None)
        last = max([self.clock.now_us(), *(e[0] for e in self._edges)])
        # One microsecond past the latency, so that a timer due at the bots' last event (a
        # claim hold that ends the game) is past the watermark and fires.
        self._deliver(last + LATENCIES_US["camera"] + 1, pace)
        for delivery, event in self.stage.close():
            self._advance(delivery, pace)
            if type(event) is Progress:
                self.loop.progress("camera", event.t)
            else:
                self.loop.put_lay(event)
            self.loop.pump(self.clock.now_us())
            self._flush()
        for rest, _ in self.stage.missed(1 << 62):  # the last card never shown: the host adds it
            self._correct(self.clock.now_us(), rest)
        # What is still buffered judged now (a reading it finds impossible is asked), and the
        # last questions answered and judged past their answers, before the game ends.
        self.loop.drain()
        self._flush()
        while self._answers:
            if stopping():
                return False
            self._deliver(self._answers[-1][0] + LATENCIES_US["camera"] + 1, pace)
            self.loop.drain()
            self._flush()
        return not stopping()
