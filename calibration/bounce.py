"""Contact bounce of one button, from its raw edges. Pure: no pins, no clock.

The referee debounces on the leading edge (hardware/buttons.py): the first edge of a
contact change is the press or the release, at its own time, and the button's further
edges within the lockout (20 ms) are bounce. The calibration measures each button the
same way, so that what it reports is what the Debouncer will live with:

- A **transition** starts with an edge more than a lockout after the previous
  transition's leading edge. Its **extra edges** are that pin's edges within the lockout
  after it; its **bounce** is the time from the leading edge to the last of them.
- A **late edge** is a leading edge less than two lockouts (40 ms) after the previous one:
  no finger moves a button twice that fast, so it is bounce that outlasted the lockout,
  and the Debouncer would count it as another press or release.

Thresholds (docs/calibration-buttons.md says why):

- **noisy** when a transition bounced for more than half the lockout (10 ms), or any
  edge came late. A good microswitch settles within 1-5 ms; bounce grows as a contact
  wears, so a switch already using half the lockout is one to replace before it starts
  giving double presses mid-game.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hardware.presses import Debouncer

LOCKOUT_US = Debouncer.lockout_us  # the Debouncer's default: what the table will use
LATE_US = 2 * LOCKOUT_US
NOISY_BOUNCE_US = LOCKOUT_US // 2


@dataclass(frozen=True)
class BounceStats:
    """One button's bounce over every transition (presses and releases) seen."""

    pin: Any  # a BCM pin, or a USB key (steps_buttons.UsbKey: a USB encoder debounces on its own)
    transitions: int
    extra_edges_max: int
    extra_edges_mean: float
    bounce_us_max: int  # leading edge to the last bounce edge, the worst transition
    bounce_us_mean: float
    late_edges: int  # bounce after the lockout: the Debouncer would take each for a press or release

    @property
    def noisy(self) -> bool:
        return self.bounce_us_max > NOISY_BOUNCE_US or self.late_edges > 0

    def describe(self) -> str:
        """One line, e.g. `BCM 4: 6 transitions, bounce up to 1.2 ms (3 extra edges at most): clean`."""
        where = f"BCM {self.pin}" if isinstance(self.pin, int) else str(self.pin)
        text = (
            f"{where}: {self.transitions} transitions, "
            f"bounce up to {self.bounce_us_max / 1000:.1f} ms "
            f"({self.extra_edges_max} extra edges at most)"
        )
        if self.late_edges:
            text += f", {self.late_edges} edges after the {LOCKOUT_US // 1000} ms lockout"
        if self.noisy:
            return text + ": NOISY switch (double presses likely): replace its microswitch"
        return text + ": clean"


def bounce_stats(pin: Any, edge_times: Iterable[int]) -> BounceStats:
    """The bounce of `pin` from the stamps of its edges (in the order lgpio gave them)."""
    extras: list[int] = []
    bounces: list[int] = []
    late = 0
    lead: int | None = None
    for t in edge_times:
        if lead is not None and t <= lead + LOCKOUT_US:
            extras[-1] += 1
            bounces[-1] = t - lead
            continue
        if lead is not None and t - lead < LATE_US:
            late += 1
        lead = t
        extras.append(0)
        bounces.append(0)
    n = len(extras)
    return BounceStats(
        pin=pin,
        transitions=n,
        extra_edges_max=max(extras, default=0),
        extra_edges_mean=sum(extras) / n if n else 0.0,
        bounce_us_max=max(bounces, default=0),
        bounce_us_mean=sum(bounces) / n if n else 0.0,
        late_edges=late,
    )
