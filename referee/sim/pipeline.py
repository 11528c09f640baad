"""`referee adjudicate --pipeline`: a table script replayed through the live table loop.

The script's presses become real edges on gpiozero pins (MockFactory on a virtual
clock): each press bounces (3 to 10 extra edges within 5 ms), and each edge's
callback runs late (up to 50 ms, seeded), so presses of different seats reach the
loop out of order. Lays and waits come through the vision stage's queue 30 to
150 ms late, in order. The loop must still rule exactly as `referee adjudicate`
does: the test suite checks it byte for byte.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterable, Iterator
from typing import Any

from hardware.clock import VirtualClock
from referee.live.assembly import TableHooks, TableSettings, assemble
from referee.live.loop import EventError
from referee.live.wiring import default_wiring
from referee.rules.events import Event, Snap
from referee.rules.rulings import Ruling
from referee.rules.script import ScriptError, read_script
from referee.rules.state import State

CALLBACK_LAG_US = (0, 50_000)  # how late a pin callback may run after its edge
CAMERA_LAG_US = (30_000, 150_000)  # how late the vision stage reports a card
BOUNCE_EDGES = (3, 10)  # extra edges after a press, all within BOUNCE_US
BOUNCE_US = 5_000
LATENCIES_US = {"buttons": CALLBACK_LAG_US[1] + 10_000, "camera": CAMERA_LAG_US[1] + 10_000}

# Scheduled actions, at one delivery time in this order.
_EDGE, _VISION = 0, 1


def press_edges(t: int, next_t: int | None, lockout_us: int, rng: random.Random) -> list[tuple[int, bool]]:
    """The contact's edges for one press at `t`, bounce included, released before `next_t`."""
    room = (next_t - t) if next_t is not None else 1_000_000
    bounce_span = min(BOUNCE_US, room // 4)
    edges = [(t, True)]
    level = True
    times = sorted(
        rng.sample(range(t + 1, t + bounce_span + 1), min(rng.randint(*BOUNCE_EDGES), bounce_span))
    )
    for bounce_t in times:
        level = not level
        edges.append((bounce_t, level))
    if level:  # still held after the bounce: let go before the next press can count
        latest = t + room - lockout_us - 1
        release = min(t + rng.randint(40_000, 150_000), latest)
        edges.append((max(release, edges[-1][0] + 1), False))
    return edges


def schedule(
    events: list[tuple[int, Event]], seats: int, lockout_us: int, rng: random.Random
) -> list[tuple[int, int, int, Any]]:
    """When each edge and each vision report reaches the loop: (delivery, kind, order, payload)."""
    plan: list[tuple[int, int, int, Any]] = []
    order = 0
    camera_free = 0
    presses: list[list[int]] = [[] for _ in range(seats)]
    for lineno, event in events:
        if type(event) is Snap:
            if not presses[event.seat] or presses[event.seat][-1] != event.t:  # one press per instant
                presses[event.seat].append(event.t)
        else:
            camera_free = max(camera_free, event.t + rng.randint(*CAMERA_LAG_US))
            order += 1
            plan.append((camera_free, _VISION, order, (event, lineno)))
    for seat, times in enumerate(presses):
        pin_free = 0  # one pin's callbacks run in the order of its edges
        for i, t in enumerate(times):
            next_t = times[i + 1] if i + 1 < len(times) else None
            for edge_t, pressed in press_edges(t, next_t, lockout_us, rng):
                pin_free = max(pin_free, edge_t + rng.randint(*CALLBACK_LAG_US))
                order += 1
                plan.append((pin_free, _EDGE, order, (seat, edge_t, pressed)))
    heapq.heapify(plan)
    return [heapq.heappop(plan) for _ in range(len(plan))]


def table_settings(seats: int) -> TableSettings:
    """The simulated table: mock pins, gpiozero's callbacks, no USB; timers fire on the script's waits."""
    return TableSettings(
        default_wiring(seats), buttons="gpiozero", usb=(), latencies_us=LATENCIES_US, timer_waits=False
    )


def adjudicate_pipeline(lines: Iterable[bytes | str], source: str = "-", seed: int = 0) -> Iterator[Ruling]:
    """Rulings for a table script, judged by the live table loop on simulated hardware.

    Bad input raises the same ScriptError as `adjudicate`, after the same rulings.
    """
    items = read_script(lines, source)
    state: State = next(items)[1]  # type: ignore[assignment]
    events: list[tuple[int, Event]] = []
    stop: ScriptError | None = None
    try:
        for lineno, event in items:
            events.append((lineno, event))  # type: ignore[arg-type]
    except ScriptError as e:
        stop = e  # rule on the lines before it, then report it, as adjudicate does
    rng = random.Random(seed)
    clock = VirtualClock(0)
    out: list[Ruling] = []
    table = assemble(table_settings(state.seats), clock, state, TableHooks(rulings=[out.append]))
    loop, player, pins = table.loop, table.player, table.seat_pins()
    assert loop is not None and player is not None  # lights and sound, as live
    try:
        for delivery, kind, _, payload in schedule(events, state.seats, loop.debouncer.lockout_us, rng):
            clock.sleep_until(delivery)
            if kind == _EDGE:
                seat, edge_t, pressed = payload
                pins[seat].edge(not pressed, edge_t)  # pulled up: a press pulls the pin low
            else:
                event, lineno = payload
                loop.put_lay(event, lineno)
            loop.pump(clock.now_us())
            player.run_until(clock.now_us())
            yield from out
            out.clear()
        if stop is not None:
            loop.drain()
            yield from out
            raise stop
        loop.finish()
        yield from out
    except EventError as e:
        yield from out
        raise ScriptError(f"{source}:{e.tag}: {e}") from None
    finally:
        table.close()
