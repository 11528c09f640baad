"""A rehearsal script as the table's lay source: each line delivered at its own time.

A resumed rehearsal goes on after the last line judged before the restart, and keeps the
script's spacing across it: its lines go on at the offset the judged ones had (the time
between the last one judged and the next is kept; the time the service was down is not
game time).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from referee.errors import UserError
from referee.rules.events import Event, Named
from referee.rules.script import ScriptError

from .assembly import GameClock
from .loop import TableLoop
from .resume import Start

ScriptLines = Iterator[tuple[int, Event]]


def after_judged(items: ScriptLines, start: Start) -> tuple[ScriptLines, list[int]]:
    """The script's lines after those judged before a restart (`start.skip_through`), and a list
    that gets the script's own time of the last line judged, once the lines pass it."""
    marked: list[int] = []

    def after_skip() -> ScriptLines:
        for n, e in items:
            if n > start.skip_through:
                yield n, e
            elif n == start.skip_through:
                marked.append(e.t)

    return after_skip(), marked


def kept_spacing(script: ScriptLines, marked: list[int], start: Start) -> tuple[ScriptLines, int | None]:
    """The script, and its time to game time as it was before the restart (None: a new game, or
    nothing was judged: its first line goes out now)."""
    if start.mark_t is None:
        return script, None
    first = next(script, None)
    offset = start.mark_t - marked[0] if marked and first is not None else None
    return (itertools.chain([first], script) if first is not None else script), offset


def feed_script(
    loop: TableLoop,
    script: ScriptLines,
    clock: GameClock,
    failure: list,
    note: Callable[[str], Any],
    ready: Callable[[], Any],
    offset: int | None = None,
) -> None:
    """A rehearsal: each line delivered at its own time, the spacing of the script kept
    (`offset`: script time to game time, kept from before a restart; None: the first line now)."""
    ready()
    try:
        for lineno, event in script:
            if offset is None:
                offset = clock.now_us() - event.t
            t = event.t + offset
            # Nothing comes from the script before its next line: said at once, so a feeder
            # woken late on a loaded machine is never behind what the loop has judged.
            loop.progress("script", t - 1)
            clock.sleep_until(t)
            if type(event) is Named:  # the lay it names moves with it
                event = event._replace(lay_t=event.lay_t + offset)
            loop.put_lay(event._replace(t=t), lineno, source="script")
    except ScriptError as e:
        failure.append(UserError(str(e)))
    except BaseException as e:  # surfaced by the main thread
        failure.append(e)
    finally:
        loop.close_source("script")
        loop.stop()
