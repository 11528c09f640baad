"""Instant replay, the shell: clips on disk, the threads that make them, the kiosk's routes.

    camera thread  --frame-->  ClipRecorder inbox  --> coder thread: JPEG, ring, ClipCutter
    table loop     --ruling, journaled event-->            |  clips cut
                                                           v
                                                  writer thread: ClipStore.save (the disk)

The camera and the table loop only append to an inbox (a frame is dropped, and counted,
when the coder is behind; a live camera never waits): a ruling is never delayed by JPEG
coding or by the disk. The writer has a short queue of its own; a clip it cannot take
(the disk is that slow) is dropped and counted. A write that fails (a full disk: ENOSPC,
or any other OSError) stops the clips: said once, the game goes on.

On disk (`ClipStore`): ``DIR/g<game>/t<ruling time>/`` holding ``0000.jpg``... and
``index.json`` (clips.clip_index), written under a hidden name and renamed into place, so a
clip is there whole or not at all. The clips together stay under `max_bytes`: the oldest
(by game, then time) are deleted first.
"""

from __future__ import annotations

import errno
import json
import re
import shutil
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.errors import UserError
from referee.rules.clips import (
    Clip,
    ClipCutter,
    FrameRing,
    ReplaySettings,
    Shot,
    clip_index,
    frame_file,
    timeline,
    to_drop,
)
from referee.rules.rulings import Ruling
from referee.rules.script import event_to_json

INDEX = "index.json"
_GAME_DIR = re.compile(r"g(\d+)")
_CLIP_DIR = re.compile(r"t(-?\d+)")
WRITER_QUEUE = 4  # clips waiting for the disk
FRAME_BACKLOG = 30  # frames waiting for the coder (a second at 30 fps): more are dropped
DUE_EVERY_S = 0.5  # how often the coder looks for clips a stopped camera left open


def write_file(path: Path, data: bytes) -> None:
    """The writer's one way to the disk (tests give one that fills up)."""
    with open(path, "wb") as f:
        f.write(data)


def stop_words(error: OSError) -> str:
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full: replay clips stopped (the game goes on)"
    return f"replay clips stopped: {error.strerror or error} (the game goes on)"


class ClipStore:
    """The clips directory. `save` runs on the writer thread; the readers on the kiosk's."""

    def __init__(
        self, root: str | Path, max_bytes: int, write: Callable[[Path, bytes], None] = write_file
    ) -> None:
        self.root = Path(root)
        self.max_bytes = int(max_bytes)
        self.write = write
        self._lock = threading.Lock()
        self.root.mkdir(parents=True, exist_ok=True)  # OSError: the caller says it in one line
        self._sizes: dict[tuple[int, int], int] = {}
        for key in list(self._scan()):
            self._sizes[key] = _dir_size(self.path(*key))
        self._sizes = dict(sorted(self._sizes.items()))

    def _scan(self) -> Iterable[tuple[int, int]]:
        for game_dir in self.root.iterdir():
            g = _GAME_DIR.fullmatch(game_dir.name)
            if g is None or not game_dir.is_dir():
                continue
            for clip_dir in game_dir.iterdir():
                t = _CLIP_DIR.fullmatch(clip_dir.name)
                if t is not None and (clip_dir / INDEX).is_file():
                    yield int(g.group(1)), int(t.group(1))
                elif clip_dir.name.startswith(".") and clip_dir.is_dir():
                    shutil.rmtree(clip_dir, ignore_errors=True)  # half written before a crash

    def path(self, game: int, t: int) -> Path:
        return self.root / f"g{game}" / f"t{t}"

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(self._sizes.values())

    def save(self, clip: Clip, names: Sequence[str]) -> Path:
        """Write `clip` whole (OSError as the disk gives it), then drop the oldest to fit."""
        final = self.path(clip.game, clip.t_us)
        part = final.parent / f".t{clip.t_us}.part"
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(part, ignore_errors=True)
            part.mkdir()
            for k, shot in enumerate(clip.frames):
                self.write(part / frame_file(k), shot.jpeg)
            index = json.dumps(clip_index(clip, names), ensure_ascii=False).encode()
            self.write(part / INDEX, index)
            if final.exists():
                shutil.rmtree(final)
            part.rename(final)
        except OSError:
            shutil.rmtree(part, ignore_errors=True)
            raise
        with self._lock:
            self._sizes[(clip.game, clip.t_us)] = clip.nbytes + len(index)
            self._sizes = dict(sorted(self._sizes.items()))
            gone = to_drop(list(self._sizes.items()), self.max_bytes)
            for key in gone:
                del self._sizes[key]
        for key in gone:
            shutil.rmtree(self.path(*key), ignore_errors=True)
        return final

    def clips(self, game: int) -> list[int]:
        """The ruling times of `game`'s clips, oldest first."""
        with self._lock:
            return [t for g, t in self._sizes if g == game]

    def index(self, game: int, t: int) -> dict[str, Any] | None:
        try:
            data = json.loads((self.path(game, t) / INDEX).read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def replay(self, game: int, t: int) -> dict[str, Any] | None:
        """The kiosk's replay of the ruling at `t` in `game` (`replay_json`), or None."""
        return replay_json(self, game, t)

    def frame(self, game: int, t: int, k: int) -> bytes | None:
        if k < 0:
            return None
        try:
            return (self.path(game, t) / frame_file(k)).read_bytes()
        except OSError:
            return None


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file())


def encode_frame(image: Any, width: int, quality: int) -> bytes | None:
    """A camera frame (BGR) as JPEG, shrunk to `width` if wider; None if it cannot be coded."""
    import cv2  # OpenCV only once a clip is coded: `referee export` and the service start without it

    try:
        h, w = image.shape[:2]
        if w > width:
            image = cv2.resize(image, (width, max(1, round(h * width / w))), interpolation=cv2.INTER_AREA)
        ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    except (AttributeError, ValueError, cv2.error):
        return None
    return buffer.tobytes() if ok else None


class ClipRecorder:
    """The camera's ring and the clips of a table, on two threads of their own.

    `frame` (the camera's thread), `ruling` and `judged` (the table loop's sinks) only append
    to the inbox. `game` says the journal's current game; `names` its players. `said` is
    told, once, why the clips stopped; `status` is told {game, stopped} whenever either
    changes (the kiosk's `replay`). `block`: the frame producer waits for the coder rather
    than dropping (the demo: its clock is virtual); a live camera never waits. `clock`: the
    game clock, to cut the clips a lost camera left open.
    """

    def __init__(
        self,
        store: ClipStore,
        settings: ReplaySettings,
        fps: float,
        game: Callable[[], int],
        names: Callable[[], Sequence[str]],
        *,
        said: Callable[[str], Any] | None = None,
        status: Callable[[dict[str, Any]], Any] | None = None,
        clock: Any = None,
        block: bool = False,
        encode: Callable[[Any], bytes | None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        ring = FrameRing(settings.ring_frames(fps), int(settings.ring_mb * 1e6))
        self.cutter = ClipCutter(round(settings.seconds * 1e6), round(settings.after * 1e6), ring)
        self.game = game
        self.names = names
        self.said = said
        self.status = status
        self.clock = clock
        self.block = block
        self.encode = encode or (lambda image: encode_frame(image, settings.width, settings.quality))
        self.stopped: str | None = None
        self.saved = 0
        self.dropped_frames = 0
        self.dropped_clips = 0
        self._inbox: deque[tuple[str, Any]] = deque()
        self._frames_waiting = 0
        self._busy = False
        self._closing = False
        self._cond = threading.Condition()
        self._clips: deque[tuple[Clip, list[str]]] = deque()
        self._writing = False
        self._coded = False  # the coder thread has ended: the writer ends once its queue is empty
        self._wcond = threading.Condition()
        self._shown_game: int | None = None
        self._threads: list[threading.Thread] = []

    # The producers' side: never more than an append ------------------------------------

    def frame(self, t_us: int, image: Any) -> None:
        with self._cond:
            if self.stopped is not None or self._closing:
                return
            if self._frames_waiting >= FRAME_BACKLOG:
                if not self.block:
                    self.dropped_frames += 1
                    return
                self._cond.wait_for(
                    lambda: self._frames_waiting < FRAME_BACKLOG or self._closing or self.stopped is not None
                )
                if self.stopped is not None or self._closing:
                    return
            self._frames_waiting += 1
            self._inbox.append(("frame", (t_us, image)))
            self._cond.notify_all()

    def ruling(self, ruling: Ruling) -> None:
        """A ruling sink (the loop's final rulings)."""
        game = self.game()
        if game != self._shown_game:  # the kiosk learns which game its clips belong to
            self._shown_game = game
            self._tell()
        self._put("ruling", (game, ruling))

    def judged(self, event: Any, tag: Any = None) -> None:
        """A journal sink: the event as the journal took it."""
        self._put("line", event_to_json(event))

    def _put(self, kind: str, item: Any) -> None:
        with self._cond:
            if self.stopped is None and not self._closing:
                self._inbox.append((kind, item))
                self._cond.notify_all()

    def _tell(self) -> None:
        if self.status is not None:
            self.status({"game": self._shown_game, "stopped": self.stopped})

    # The threads ---------------------------------------------------------------------

    def start(self) -> ClipRecorder:
        for target, name in ((self._code, "replay-coder"), (self._write, "replay-writer")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def close(self, timeout: float = 5.0) -> None:
        """The clips still open cut with what they have and written; the threads ended. A disk
        that hangs is not waited for past `timeout` s (the threads are daemons)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything taken in is coded, cut and written (tests, the demo's end)."""
        with self._cond:
            if not self._cond.wait_for(lambda: not self._inbox and not self._busy, timeout):
                return False
        with self._wcond:
            return self._wcond.wait_for(lambda: not self._clips and not self._writing, timeout)

    def _code(self) -> None:
        try:
            self._coding()
        finally:
            with self._wcond:
                self._coded = True
                self._wcond.notify_all()

    def _coding(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._inbox or self._closing, DUE_EVERY_S)
                batch = list(self._inbox)
                self._inbox.clear()
                self._frames_waiting = 0
                closing = self._closing
                self._busy = True
                self._cond.notify_all()  # a blocked producer may go on
            try:
                cut = self.process(batch)
                if self.clock is not None:
                    cut += self.cutter.due(self.clock.now_us())
                if closing:
                    cut += self.cutter.flush()
                self._queue(cut)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
            if closing:
                return

    def process(self, batch: Iterable[tuple[str, Any]]) -> list[Clip]:
        """The inbox's items in order (the coder thread; tests call it directly)."""
        cut: list[Clip] = []
        for kind, item in batch:
            if kind == "frame":
                if self.stopped is not None:
                    continue
                t_us, image = item
                jpeg = self.encode(image)
                if jpeg is not None:
                    cut += self.cutter.frame(Shot(t_us, jpeg))
            elif kind == "ruling":
                cut += self.cutter.ruling(*item)
            else:
                self.cutter.judged(item)
        return cut

    def _queue(self, clips: list[Clip]) -> None:
        if not clips:
            return
        names = list(self.names())
        with self._wcond:
            for clip in clips:
                if self.stopped is not None:
                    return
                if len(self._clips) >= WRITER_QUEUE:
                    self.dropped_clips += 1  # the disk is that slow: this one is not kept
                    continue
                self._clips.append((clip, names))
            self._wcond.notify_all()

    def _write(self) -> None:
        while True:
            with self._wcond:
                self._wcond.wait_for(lambda: self._clips or self._coded)
                if not self._clips:
                    return  # the coder has ended, and every clip it cut is written
                clip, names = self._clips.popleft()
                self._writing = True
            try:
                self.save(clip, names)
            finally:
                with self._wcond:
                    self._writing = False
                    self._wcond.notify_all()

    def save(self, clip: Clip, names: Sequence[str]) -> None:
        """One clip to disk; a failed write stops the clips, said once."""
        if self.stopped is not None:
            return
        try:
            self.store.save(clip, names)
            self.saved += 1
        except OSError as e:
            self.stop(stop_words(e))

    def stop(self, why: str) -> None:
        with self._cond:
            if self.stopped is not None:
                return
            self.stopped = why
            self._inbox.clear()
            self._frames_waiting = 0
            self._cond.notify_all()
        with self._wcond:
            self._clips.clear()
        if self.said is not None:
            self.said(why)
        self._tell()


# What the kiosk's replay routes read (referee/kiosk/app.py) --------------------------------


def replay_json(store: ClipStore, game: int, t: int) -> dict[str, Any] | None:
    """A clip as the kiosk's replay shows it: its frames' times and addresses, its rulings, and
    the timeline of the lay and each press (clips.timeline)."""
    index = store.index(game, t)
    if index is None:
        return None
    try:
        names = [str(n) for n in index.get("names", [])]
        frames = [
            {"t": int(f["t"]), "src": f"/api/replay/{game}/{t}/{k}.jpg"}
            for k, f in enumerate(index["frames"])
        ]
        line = timeline(
            int(index["start"]), int(index["end"]), int(index["t"]), index.get("lines", []), names
        )
    except (KeyError, TypeError, ValueError):
        return None
    return {"game": game, "t": t, "rulings": index.get("rulings", []), "frames": frames, "timeline": line}


# `referee export GAME --clips DIR` ------------------------------------------------------


def export_clips(
    store_root: Path, game: int, names: Sequence[str], lines: Sequence[Mapping[str, Any]], out: Path
) -> tuple[int, int]:
    """`game`'s clips into `out` (new or empty): ``<t>/0000.jpg``... per clip and one
    ``index.json`` of every clip's frame times, rulings and timeline, its presses taken from
    the journal's `lines`. Returns (clips, frames). UserError (one line) on a bad `out`."""
    root = Path(store_root)
    found = []
    if (root / f"g{game}").is_dir():
        for d in (root / f"g{game}").iterdir():
            m = _CLIP_DIR.fullmatch(d.name)
            if m is not None and (d / INDEX).is_file():
                found.append((int(m.group(1)), d))
    if not found:
        raise UserError(f"{root}: no replay clips of game {game} (clips are made from the camera's frames)")
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: not a folder")
    marks = [dict(line) for line in lines if "snap" in line or "lay" in line]
    try:
        if out.is_dir() and any(out.iterdir()):
            raise UserError(f"{out}: holds files already: give a new or empty folder")
        out.mkdir(parents=True, exist_ok=True)
        clips, frames = [], 0
        for t, d in sorted(found):
            index = json.loads((d / INDEX).read_bytes())
            (out / str(t)).mkdir()
            shots = []
            for f in index["frames"]:
                shutil.copyfile(d / f["file"], out / str(t) / f["file"])
                shots.append({"t": f["t"], "file": f"{t}/{f['file']}"})
            frames += len(shots)
            near = _near(marks, index["start"], index["end"], t)
            clips.append(
                {
                    "t": t,
                    "rulings": index["rulings"],
                    "frames": shots,
                    "timeline": timeline(index["start"], index["end"], t, near, names),
                }
            )
        body = {"game": game, "players": list(names), "clips": clips}
        (out / INDEX).write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n")
    except OSError as e:
        raise UserError(f"{out}: cannot write the clips: {e.strerror or e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"{root}: a damaged clip of game {game}: {e}") from None
    return len(clips), frames


def _near(marks: list[dict[str, Any]], start: int, end: int, t: int) -> list[dict[str, Any]]:
    """The journal's lays and presses in a clip's window, and the lay before the ruling."""
    inside = [line for line in marks if start <= line["t"] <= end]
    before = [line for line in marks if "lay" in line and line["t"] <= t]
    if before and before[-1] not in inside:
        inside.insert(0, before[-1])
    return inside


def open_clips(root: Path, settings: ReplaySettings, note: Callable[[str], Any]) -> ClipStore | None:
    """The clips directory, made if need be; one that cannot be made is said once, and the
    table runs without clips."""
    try:
        return ClipStore(root, int(settings.max_mb * 1e6))
    except OSError as e:
        note(f"{root}: cannot keep replay clips there ({e.strerror or e}): the game goes on without them")
        return None
