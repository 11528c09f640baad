"""The calibration wizard's shell: runs a step against a camera and a person, or the simulated table.

A step (see `steps_deck.py`) is pure: it says what to ask (`prompt()`), takes frames and
answers, and is `done` at the end. This module is the imperative part. It shows the
prompts, reads frames from a camera (any `hardware.camera` FrameSource) or from the
simulated table (`SimTable`), and asks the person for answers. After each step, it writes
the table profile's progress atomically, and writes the finished profile at the end.
`Pacer` holds the simulated table to the wall clock for someone watching it (`--speed`).
"""

from __future__ import annotations

import select
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from hardware.clock import VirtualClock
from hardware.frames import CameraLost
from referee.errors import UserError
from referee.vision import profile as table_profile
from referee.vision.profile import TableProfile

Show = Callable[[Any], None]  # shows a prompt (the terminal prints its text; tests collect them)


class Person(Protocol):
    """Who is at the simulated table: `SimTable`, or a wrapper that watches its frames and
    takes the answers from elsewhere (the kiosk page)."""

    def act(self, prompt: Any) -> Iterator[Any]: ...

    def answer(self, prompt: Any) -> str: ...

    def choose(self, prompt: Any) -> str | None: ...


def drive_sim(step: Any, table: Person, show: Show) -> None:
    """The step against the simulated table: the person does what each prompt asks, and the
    frames go to the step until it has seen it."""
    while not step.done:
        prompt = step.prompt()
        show(prompt)
        if prompt.waits == "answer":
            step.answer(table.answer(prompt))
            continue
        instead = table.choose(prompt)
        if instead is not None:
            step.answer(instead)
            continue
        for frame in table.act(prompt):
            step.feed_frame(frame)
            if step.prompt() is not prompt:
                break
        else:
            raise UserError(f"calibration ({step.name}): the simulated player's action went unseen")
    show(step.prompt())


def drive_live(
    step: Any,
    frames: Iterable[Any],
    ask: Callable[[str], str],
    show: Show,
) -> None:
    """The step against a camera and a person: prompts shown as they change, frames fed as they
    come, and questions asked at the terminal (an answer given while the step waits for
    frames, such as "missing", comes with the frames: `referee.cli.calibrate_run._watched`). A lost
    camera is one line, and nothing is saved."""
    shown = None
    try:
        for frame in frames:
            prompt = step.prompt()
            if prompt is not shown:
                show(prompt)
                shown = prompt
            if prompt.waits == "answer":
                step.answer(ask(prompt.text))
                continue
            step.feed_frame(frame)
            if step.done:
                show(step.prompt())
                return
    except CameraLost as e:
        raise UserError(
            f"{e}: calibration stopped; what was finished is saved, run it again to go on"
        ) from None
    raise UserError("the camera's frames ended before the step was done: calibration stopped")


def typed_line(stream: Any = None) -> str | None:
    """A line typed at the terminal, if one is waiting (never blocks): how the person answers
    while the camera keeps running. None when nothing was typed, or stdin is not a terminal
    nor a pipe (select cannot watch it)."""
    stream = stream if stream is not None else sys.stdin
    try:
        ready, _, _ = select.select([stream], [], [], 0)
    except (OSError, ValueError, TypeError):
        return None
    return stream.readline() if ready else None


def start_profile(path: Path, restart: bool) -> TableProfile:
    """The wizard's starting point: its saved progress (resumed), else the finished profile
    (a step run again replaces its part), else a new one."""
    partial = table_profile.partial_path(path)
    if restart:
        partial.unlink(missing_ok=True)
    for candidate in (partial, path):
        if candidate.exists():
            return table_profile.load(candidate)
    return TableProfile()


def save_progress(profile: TableProfile, path: Path, finished: bool) -> None:
    """After each step: its progress; at the end, the profile itself (the progress removed)."""
    if finished:
        table_profile.save(profile, path)
        table_profile.partial_path(path).unlink(missing_ok=True)
    else:
        table_profile.save(profile, table_profile.partial_path(path))


def seconds(since: float) -> float:
    return time.perf_counter() - since


CATCH_UP_S = 0.25  # behind the table's time by more than this: start the pace afresh from here


class Pacer:
    """Holds the simulated table to the wall clock, so that a person watching it at the kiosk
    sees it at their own pace: `at(t_us)` returns once `t_us` of table time has passed since
    the pace began (`speed` 1: real time; 10: ten times faster; 0: at once, never waiting).

    The table's time is what the simulated person's clock says; the wall clock only holds it
    back. When the table is behind (it waited for an answer from the page, or this machine
    renders slower than real time) or its clock starts again (a new step's table), the pace
    begins afresh there, rather than rushing to catch up."""

    def __init__(
        self,
        speed: float,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not speed >= 0:
            raise UserError(f"--speed must be 0 (at once) or more, not {speed}")
        self.speed = speed
        self._sleep, self._clock = sleep, clock
        self._start: tuple[float, int] | None = None  # (wall s, table us) the pace counts from

    def at(self, t_us: int) -> None:
        if self.speed == 0:
            return
        now = self._clock()
        if self._start is None or t_us < self._start[1]:
            self._start = (now, t_us)
            return
        wall, table = self._start
        due = wall + (t_us - table) / 1e6 / self.speed
        if now - due > CATCH_UP_S:
            self._start = (now, t_us)
        elif due > now:
            self._sleep(due - now)


class PacedClock(VirtualClock):
    """The simulated buttons table's clock, held to the wall clock by `pacer`."""

    def __init__(self, pacer: Pacer, start_us: int = 0) -> None:
        super().__init__(start_us)
        self.pacer = pacer

    def sleep_until(self, t_us: int) -> None:
        super().sleep_until(t_us)
        self.pacer.at(self.now_us())
