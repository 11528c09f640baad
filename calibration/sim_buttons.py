"""The buttons step at the simulated table: players who press when asked, and see their LED.

Each simulated player's button is on a pin of its own, which need not be the one the wiring
file gives their seat (a hobbyist's swapped wires): the step must find it. A press is a
leading edge, a few bounces within 3 ms, and a release 60-150 ms later, stamped as the
kernel would stamp them; the player reacts 0.4-1.2 s after a prompt. The LEDs and the
buzzer are the step's cues played on mock pins (`TableSignals` on `VirtualFactory`): a
player presses when their own LED is lit, and everyone hears the tune.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from hardware.clock import VirtualClock
from hardware.pins import VirtualFactory
from hardware.signals import TableSignals
from referee.live.wiring import Wiring

from .steps_buttons import ANSWER, PRESS, ButtonsStep

REACT_US = (400_000, 1_200_000)
TICK_US = 100_000


def drive_buttons_sim(
    step: ButtonsStep,
    wiring: Wiring,
    pins: Sequence[int],
    seed: int,
    show: Callable[[Any], None],
    say: Callable[[Any], str | None] | None = None,
    clock: VirtualClock | None = None,
) -> int:
    """Run the step with simulated players whose buttons are on `pins` (seat order). The table
    time it took, in microseconds.

    `say(prompt)` is what the people at the table say: the answer to a question (it may wait
    for one), or, while presses are awaited, one of the prompt's choices given meanwhile, or
    None (then they press). By default they answer every question yes. `clock` is the table's
    (a VirtualClock at 0; one that also holds the wall clock back paces it for a watcher)."""
    rng = random.Random(seed)
    clock = clock or VirtualClock(0)
    start = clock.now_us()
    say = say or (lambda prompt: "yes" if prompt.waits_for == ANSWER else None)
    factory = VirtualFactory(clock)
    signals = TableSignals.from_wiring(wiring, factory)
    lit: set[int] = set()
    serial = None
    try:
        while not step.done:
            prompt = step.prompt()
            if prompt.serial != serial:
                serial = prompt.serial
                show(prompt)
                shown = clock.now_us()
                for offset, target, value in sorted(prompt.cues, key=lambda c: c[0]):
                    clock.sleep_until(shown + offset)
                    signals.apply(target, value)
                    if isinstance(target, tuple):
                        (lit.add if value else lit.discard)(target[1])
                step.tick(clock.now_us())
            said = say(prompt) if prompt.waits_for in (ANSWER, PRESS) else None
            if said is not None:
                step.answer(said)
                continue
            if prompt.waits_for == PRESS:
                seat = next(iter(lit)) if prompt.phase == "leds" and lit else prompt.progress[0] - 1
                t = clock.now_us() + rng.randint(*REACT_US)
                for edge_t, high in _press(t, rng):
                    clock.sleep_until(edge_t)
                    step.feed_edge(pins[seat], high, edge_t)
                clock.sleep_until(clock.now_us() + TICK_US)
                step.tick(clock.now_us())
                clock.sleep_until(clock.now_us() + 2 * TICK_US)  # the step decides a press after 100 ms
                step.tick(clock.now_us())
        show(step.prompt())
        return clock.now_us() - start
    finally:
        signals.close()
        factory.close()


def _press(t: int, rng: random.Random) -> list[tuple[int, bool]]:
    """A press's edges: low, a few bounces within 3 ms, high again when the finger lifts."""
    edges = [(t, False)]
    level = False
    for k in range(rng.randint(0, 4)):
        level = not level
        edges.append((t + 300 * (k + 1) + rng.randint(0, 200), level))
    if not level:
        edges.append((edges[-1][0] + 300, True))
        edges.append((edges[-1][0] + 300, False))
    edges.append((t + rng.randint(60_000, 150_000), True))
    return edges
