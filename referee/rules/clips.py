"""Instant replay, the pure part: the camera's last seconds, and a clip of them per dispute.

The camera's frames (as JPEG bytes, with their times on the game's timeline) go into a
`FrameRing` bounded by count and by bytes. Every stack won, penalty and dead heat opens a
clip (`ClipCutter.ruling`): the frames from `before_us` before the ruling to `after_us`
after it, and the lays and presses the journal took in that window. The clip is cut
(handed to whoever writes it) at the first frame stamped `after_us + lag_us` past the
ruling: by then the presses of its window have been judged and journaled (the table loop
holds a press until the camera has read past it, at most a few hundred ms). If frames stop
coming (a lost camera), `due` cuts it by the clock, with what it has.

Everything here is plain values and plain functions, driven by the times given: no
threads, no files, no clock of its own (clip_store.py is the shell that has them).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .rulings import Penalty, Ruling, SnapIgnored, StackWon


@dataclass(frozen=True)
class ReplaySettings:
    """The config's [replay] section (docs/run.md). Times in seconds, sizes in MB."""

    clips: bool = True  # False: no ring, no clips
    seconds: float = 4.0  # kept before each ruling
    after: float = 1.0  # kept after it
    clips_dir: str | None = None  # None: the data dir's clips/
    max_mb: float = 500.0  # every clip on disk together; the oldest go first
    ring_mb: float = 48.0  # the ring in memory
    width: int = 640  # frames are shrunk to this width before they are coded
    quality: int = 75  # JPEG quality

    def ring_frames(self, fps: float) -> int:
        # The seconds before a ruling, and two more: a ruling comes up to ~1 s after its press.
        return max(2, math.ceil((self.seconds + 2.0) * fps))


@dataclass(frozen=True, slots=True)
class Shot:
    """One frame kept: its time (us, game timeline) and its JPEG bytes."""

    t_us: int
    jpeg: bytes


class FrameRing:
    """The newest frames, oldest dropped first, never more than `max_frames` of them nor more
    than `max_bytes` together. Frames come in time order (a camera's)."""

    def __init__(self, max_frames: int, max_bytes: int) -> None:
        if max_frames < 1 or max_bytes < 1:
            raise ValueError("a ring holds at least one frame and one byte")
        self.max_frames = max_frames
        self.max_bytes = max_bytes
        self._shots: deque[Shot] = deque()
        self.nbytes = 0
        self.dropped = 0  # frames pushed out to stay within bounds

    def add(self, shot: Shot) -> None:
        self._shots.append(shot)
        self.nbytes += len(shot.jpeg)
        while self._shots and (len(self._shots) > self.max_frames or self.nbytes > self.max_bytes):
            old = self._shots.popleft()
            self.nbytes -= len(old.jpeg)
            self.dropped += 1

    def between(self, t0: int, t1: int) -> list[Shot]:
        """The frames stamped from `t0` to `t1`, both included, oldest first."""
        return [s for s in self._shots if t0 <= s.t_us <= t1]

    @property
    def newest_t(self) -> int | None:
        return self._shots[-1].t_us if self._shots else None

    def __len__(self) -> int:
        return len(self._shots)

    def __iter__(self) -> Any:
        return iter(self._shots)


def worthy(ruling: Ruling) -> str | None:
    """What a clip of this ruling is called, or None when it is no dispute: a stack won, a
    penalty, a dead heat."""
    kind = type(ruling)
    if kind is StackWon:
        return "stack_won"
    if kind is Penalty:
        return "penalty"
    if kind is SnapIgnored and ruling.reason == "dead_heat":  # type: ignore[union-attr]
        return "dead_heat"
    return None


@dataclass
class Clip:
    """A ruling's frames and the journal's lays and presses around it. `t_us`, the ruling's
    time, names it within its game (rulings at one time share one clip)."""

    game: int
    t_us: int
    start_us: int
    end_us: int
    rulings: list[dict[str, Any]]
    frames: list[Shot] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)  # journal lines: lays and presses

    @property
    def nbytes(self) -> int:
        return sum(len(s.jpeg) for s in self.frames)


def is_mark(line: Mapping[str, Any]) -> bool:
    """A journal line the timeline shows: a lay (read or asked) or a press."""
    return "snap" in line or "lay" in line


class ClipCutter:
    """Opens a clip for each disputed ruling and cuts it once its frames are in.

    `frame`, `judged` and `ruling` are told what happens, in any interleaving; `frame` and
    `due` return the clips complete. At most `max_pending` clips wait at once (more rulings
    than that within a few seconds: the oldest is cut early, with the frames it has)."""

    def __init__(
        self,
        before_us: int,
        after_us: int,
        ring: FrameRing,
        lag_us: int = 500_000,
        max_pending: int = 8,
        keep_lines: int = 2048,
    ) -> None:
        self.before_us = before_us
        self.after_us = after_us
        self.lag_us = lag_us
        self.ring = ring
        self.max_pending = max_pending
        self._pending: dict[tuple[int, int], Clip] = {}
        self._lines: deque[dict[str, Any]] = deque(maxlen=keep_lines)  # recent lays and presses

    @property
    def pending(self) -> int:
        return len(self._pending)

    def frame(self, shot: Shot) -> list[Clip]:
        self.ring.add(shot)
        for clip in self._pending.values():
            if clip.start_us <= shot.t_us <= clip.end_us:
                clip.frames.append(shot)
        return self._cut(lambda clip: shot.t_us >= clip.end_us + self.lag_us)

    def judged(self, line: Mapping[str, Any]) -> None:
        """An event the journal took (its table-script line)."""
        if not is_mark(line):
            return
        line = dict(line)
        self._lines.append(line)
        for clip in self._pending.values():
            if clip.start_us <= line["t"] <= clip.end_us:
                clip.lines.append(line)

    def ruling(self, game: int, ruling: Ruling) -> list[Clip]:
        """A final ruling. Rulings at one time join one clip. Returns the clips cut early to
        keep `max_pending`."""
        if worthy(ruling) is None:
            return []
        key = (game, ruling.t)
        clip = self._pending.get(key)
        if clip is not None:
            clip.rulings.append(ruling.to_json())
            return []
        start, end = ruling.t - self.before_us, ruling.t + self.after_us
        # The lay the presses answered, even if it came before the window.
        lines = [line for line in self._lines if start <= line["t"] <= end]
        lay = last_lay(self._lines, ruling.t)
        if lay is not None and lay not in lines:
            lines.insert(0, lay)
        self._pending[key] = Clip(
            game, ruling.t, start, end, [ruling.to_json()], self.ring.between(start, end), lines
        )
        early: list[Clip] = []
        while len(self._pending) > self.max_pending:
            first = next(iter(self._pending))
            early.append(self._pending.pop(first))
        return early

    def due(self, now_us: int) -> list[Clip]:
        """The clips whose frames should all be in by `now_us` (game time) but are not: the
        camera stopped sending. Cut with what they have."""
        return self._cut(lambda clip: now_us >= clip.end_us + 2 * self.lag_us)

    def flush(self) -> list[Clip]:
        """Every clip still open, with what it has (the game or the service ends)."""
        return self._cut(lambda clip: True)

    def _cut(self, ready: Any) -> list[Clip]:
        done = [key for key, clip in self._pending.items() if ready(clip)]
        return [self._pending.pop(key) for key in done]


def last_lay(lines: Iterable[Mapping[str, Any]], t: int) -> dict[str, Any] | None:
    """The last lay at or before `t`: the card a press at `t` answered."""
    found = None
    for line in lines:
        if "lay" in line and line["t"] <= t and (found is None or line["t"] >= found["t"]):
            found = dict(line)
    return found


def timeline(
    start_us: int, end_us: int, ruling_t: int, lines: Iterable[Mapping[str, Any]], names: Sequence[str]
) -> dict[str, Any]:
    """The replay's timeline: each lay and each press, at its place from `start_us` (0) to
    `end_us` (1), to the microsecond. A press says its gap after the card it answered (the
    last lay at or before it) and behind the first press that answered the same card; a mark
    outside the window is pinned to its edge (`at` 0 or 1) but keeps its time."""
    span = max(1, end_us - start_us)
    chosen = [dict(line) for line in lines if is_mark(line)]
    lays = sorted((line for line in chosen if "lay" in line), key=lambda line: line["t"])
    marks: list[dict[str, Any]] = [
        _mark("lay", lay, start_us, span, names, None) | {"card": lay["lay"]} for lay in lays
    ]
    presses = sorted((line for line in chosen if "snap" in line), key=lambda line: (line["t"], line["snap"]))
    first: dict[int | None, int] = {}  # per lay answered (its time), the first press's
    for line in presses:
        lay = last_lay(lays, line["t"])
        mark = _mark("press", line, start_us, span, names, lay)
        answered = lay["t"] if lay is not None else None
        mark["after_first_us"] = line["t"] - first[answered] if answered in first else None
        first.setdefault(answered, line["t"])
        marks.append(mark)
    return {"start": start_us, "end": end_us, "ruling": ruling_t, "marks": marks}


def _mark(
    kind: str,
    line: Mapping[str, Any],
    start_us: int,
    span: int,
    names: Sequence[str],
    lay: Mapping[str, Any] | None,
) -> dict[str, Any]:
    seat = line.get("snap") if kind == "press" else line.get("seat")
    seat = seat if isinstance(seat, int) and 0 <= seat < len(names) else None
    return {
        "kind": kind,
        "t": line["t"],
        "at": min(1.0, max(0.0, (line["t"] - start_us) / span)),
        "seat": seat,
        "name": names[seat] if seat is not None else None,
        "after_lay_us": line["t"] - lay["t"] if lay is not None else None,
    }


def clip_index(clip: Clip, names: Sequence[str]) -> dict[str, Any]:
    """What is written beside a clip's frames (index.json): its times, rulings, frames and the
    journal's lays and presses; frame k is the file f"{k:04d}.jpg"."""
    return {
        "game": clip.game,
        "t": clip.t_us,
        "start": clip.start_us,
        "end": clip.end_us,
        "names": list(names),
        "rulings": clip.rulings,
        "frames": [{"t": s.t_us, "file": frame_file(k)} for k, s in enumerate(clip.frames)],
        "lines": clip.lines,
    }


def frame_file(k: int) -> str:
    return f"{k:04d}.jpg"


def to_drop(sizes: Sequence[tuple[Any, int]], limit: int) -> list[Any]:
    """The oldest clips to delete so that the rest fit in `limit` bytes: `sizes` is (key,
    bytes), oldest first. A clip bigger than `limit` by itself goes too."""
    total = sum(n for _, n in sizes)
    out = []
    for key, n in sizes:
        if total <= limit:
            break
        out.append(key)
        total -= n
    return out
