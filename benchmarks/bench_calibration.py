"""The calibration wizard at human pace, in the simulator: how long each step takes a person.

    .venv/bin/python benchmarks/bench_calibration.py [--seeds 3]

The simulated person (calibration/sim_table.py) does what each prompt asks:

- 1.2-2.5 s to find and lay the card asked for;
- 0.6-1.2 s to pick it up;
- now and then (5 %) the wrong card while going through the deck.

The step reacts as soon as the pile watcher has seen the card at rest. The figures are
table time (what the person would spend), the accuracy of the self-check, and the
machine's own time to run it all.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calibration.sim_buttons import drive_buttons_sim
from calibration.sim_table import SimTable
from calibration.steps_buttons import ButtonsStep, free_pins
from calibration.steps_camera import CameraStep, drive
from calibration.steps_deck import DeckStep
from calibration.steps_seats import SeatsStep
from calibration.wizard import drive_sim
from hardware.camera_controls import NoControls
from referee.live.wiring import default_wiring
from referee.vision.recogniser import Recogniser


class _Camera:
    """The camera step at the simulated table, timed like the others."""

    def __init__(self) -> None:
        self.step = CameraStep(NoControls())

    def run(self, table: SimTable) -> None:
        drive(self.step, table.camera_frames(self.step), lambda prompt: "y")

    def result(self) -> object:
        return self.step.result()


class _Buttons:
    """The buttons step with simulated players (two wires crossed), 3 presses per seat."""

    def __init__(self, seed: int) -> None:
        self.wiring = default_wiring(4)
        self.step = ButtonsStep(self.wiring, free_pins(self.wiring))
        self.seed = seed

    def run(self, table: SimTable) -> None:
        pins = list(self.wiring.buttons)
        pins[0], pins[-1] = pins[-1], pins[0]
        table.now += drive_buttons_sim(self.step, self.wiring, pins, self.seed, lambda prompt: None)

    def result(self) -> object:
        return self.step.result()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print("Calibration benchmark (simulated table, human pace)")
    print(f"  command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    recogniser = Recogniser()
    rows = []
    for label, make in (
        ("camera (light, focus, the pile's area)", lambda seed: _Camera()),
        ("seats, 4 players", lambda seed: SeatsStep(["Ann", "Bob", "Cy", "Dee"], recogniser)),
        (
            "deck, quick (16 cards + 10 checked)",
            lambda seed: DeckStep(recogniser, random.Random(seed), quick=True),
        ),
        ("deck, whole (52 cards + 10 checked)", lambda seed: DeckStep(recogniser, random.Random(seed))),
        ("buttons, 4 seats (lights, buzzer)", _Buttons),
    ):
        table_s, here_s, accuracy, slips = [], [], [], []
        for seed in range(1, args.seeds + 1):
            step, table = make(seed), SimTable(seed)
            start = time.perf_counter()
            if hasattr(step, "run"):
                step.run(table)
            else:
                drive_sim(step, table, lambda prompt: None)
            here_s.append(time.perf_counter() - start)
            table_s.append(table.now / 1e6)
            slips.append(table.wrong_cards)
            result = step.result()
            accuracy.append(getattr(result, "accuracy", None))
        acc = [a for a in accuracy if a is not None]
        rows.append((label, table_s, here_s, acc, slips))
    print(f"\n  {'step':<38}{'at the table':>16}{'self-check':>12}{'wrong cards':>13}{'machine':>10}")
    for label, table_s, here_s, acc, slips in rows:
        check = f"{100 * statistics.mean(acc):.0f} %" if acc else "-"
        print(
            f"  {label:<38}{statistics.median(table_s):>10.0f} s med{check:>12}"
            f"{sum(slips):>13}{statistics.median(here_s):>8.1f} s"
        )
    whole = sum(statistics.median(row[1]) for row in rows if "quick" not in row[0])
    print(f"  {'whole wizard (the four, whole deck)':<38}{whole:>10.0f} s")
    print(f"  ({args.seeds} seeds; table time is the simulated person's; goal: 52 cards in under 3 minutes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
