"""The camera as the table's lay source: frames read by the pile watcher, lays to the loop.

`feed_camera` runs in its own thread. Each card the recogniser reads is a lay stamped on the
game's timeline; one it cannot read for sure is asked (its picture kept for the kiosk); a
cleared pile says time passed. A lost camera pauses the game (presses are not judged, the
status LED shows red) and is opened again with backoff (`RECONNECT_S`); the watcher goes on
from the pile it last saw, so a card laid meanwhile is reported when the camera is back.
After the last retry the service exits 3 (systemd restarts it). The camera itself is opened
by the table's assembly (`open_camera`, `camera_frames`): this module opens no device.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from hardware.frames import CameraLost, Frame, SourceError
from referee.errors import UserError
from referee.rules.events import Lay, Unread, Wait
from referee.vision.recogniser import recogniser_for
from referee.vision.watcher import PileWatcher, WatchAsk, WatchCleared, WatchLay

from .assembly import GameClock, camera_frames, open_camera
from .config import Config
from .loop import TableLoop

RECONNECT_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # a lost camera's retries (~1 min), then exit 3


def feed_camera(
    loop: TableLoop,
    config: Config,
    clock: GameClock,
    failure: list,
    note: Callable[[str], Any],
    ready: Callable[[], Any],
    paused: Callable[[str | None], Any] | None = None,
    stopped: threading.Event | None = None,
    opener: Callable[..., Any] | None = None,
    backoff_s: tuple[float, ...] | None = None,
    crops: Any = None,
    frames: Callable[[int, Any], Any] | None = None,
) -> None:
    """The camera's lays, stamped on the game's timeline, until the source ends, the service
    stops (`stopped`) or the camera stays lost past the last retry (`backoff_s`). `crops`:
    where the pictures of the cards asked go; `frames`: told every frame (the replay's ring).
    Any error is handed to the main thread in `failure`; the loop is stopped either way."""
    stopped = stopped or threading.Event()
    backoff_s = RECONNECT_S if backoff_s is None else backoff_s
    try:
        feed = _CameraFeed(loop, config, clock, note, ready, paused, crops, frames, opener or open_camera)
        feed.run(stopped, backoff_s)
    except BaseException as e:
        failure.append(e)
    finally:
        loop.close_source("camera")
        loop.stop()


class _CameraFeed:
    """One camera's feed: the watcher and what it has seen, across the camera's reopenings."""

    def __init__(
        self,
        loop: TableLoop,
        config: Config,
        clock: GameClock,
        note: Callable[[str], Any],
        ready: Callable[[], Any],
        paused: Callable[[str | None], Any] | None,
        crops: Any,
        frames: Callable[[int, Any], Any] | None,
        opener: Callable[..., Any],
    ) -> None:
        self.loop, self.config, self.clock, self.note = loop, config, clock, note
        self.ready, self.paused, self.crops, self.frames, self.opener = ready, paused, crops, frames, opener
        self.recogniser = recogniser_for(str(config.profile) if config.profile else None)
        self.seen: set[str] = set()
        self.watcher = PileWatcher(
            lambda image, mask: self.recogniser.recognise(image, mask, frozenset(self.seen)),
            sides=config.sides,
            fps=config.fps,
        )
        self.live = config.camera == "camera" or (config.camera or "").isdigit()
        self.offset = clock.shift if self.live else None  # a file's own times: spacing kept
        self.tries = 0
        self.said_ready = False
        self.lost: CameraLost | None = None

    def run(self, stopped: threading.Event, backoff_s: tuple[float, ...]) -> None:
        while True:
            source = self._open()
            if source is not None:
                try:
                    with source:
                        for frame in camera_frames(source, self.live, self.config.camera_locks):
                            if stopped.is_set():
                                return  # the service is stopping: the camera is closed on the way out
                            self._frame(frame)
                    return  # a file or a folder has ended
                except CameraLost as e:
                    self._lose(e)
            if self.tries >= len(backoff_s):
                assert self.lost is not None
                raise self.lost
            if stopped.wait(backoff_s[self.tries]):
                return
            self.tries += 1

    def _open(self) -> Any:
        try:
            return self.opener(self.config.camera or "camera", fps=None if self.live else self.config.fps)
        except SourceError as e:
            if self.lost is None:
                raise UserError(str(e)) from None  # never opened: the config names no camera
            return None

    def _lose(self, e: CameraLost) -> None:
        if self.lost is None:
            self.note(f"{e}: game paused, presses are not judged until the camera is back")
            if self.paused is not None:
                self.paused(f"{e}: the game is paused")
        self.lost = e

    def _frame(self, frame: Frame) -> None:
        if not self.said_ready:
            self.ready()  # the camera gives frames and the recogniser is loaded
            self.said_ready = True
        if self.lost is not None:
            self.note(f"camera back after {self.tries} retries: the game goes on")
            if self.paused is not None:
                self.paused(None)
            self.lost, self.tries = None, 0
        if self.offset is None:
            self.offset = self.clock.now_us() - frame.t_us
        for item in self.watcher.feed(frame):
            self._item(item, item.t_us + self.offset)
        # Read up to here: a still pile lets presses be judged at once.
        done = self.watcher.progress()
        if done is not None:
            self.loop.progress("camera", done + self.offset)
        if self.frames is not None:  # the replay's ring: an append, never a wait
            self.frames(frame.t_us + self.offset, frame.image)
        if not self.live:
            self.clock.sleep_until(frame.t_us + self.offset)

    def _item(self, item: Any, t: int) -> None:
        why = self.recogniser.profile_mismatch()
        if why is not None:
            # Every reading would be suspect: said once, then read as any deck.
            self.note(f"camera profile {self.config.profile}: {why}; reading without it")
            self.recogniser.profile = None
        if type(item) is WatchLay:
            self.seen.add(item.card.code)
            self.loop.put_lay(Lay(t, item.card, item.seat), None, source="camera")
        elif type(item) is WatchAsk:
            if self.crops is not None:
                self.crops.keep(t, item.crop)
            self.loop.put_lay(Unread(t, item.seat, item.guess), None, source="camera")
        elif type(item) is WatchCleared:
            self.seen.clear()
            self.loop.put_lay(Wait(t), None, source="camera")
