"""What a camera gives: frames stamped in integer microseconds, and the two ways it fails.

Plain values and a protocol, no device: the pile watcher and the calibration steps see
only these; `hardware.camera` has the sources (the Pi camera, a webcam, a video file,
an image folder).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, Self

import numpy as np


class SourceError(ValueError):
    """A source that cannot be used: missing, empty, not a video, no frame rate."""


class CameraLost(RuntimeError):
    """A live camera went away: unplugged, failed to open, or stopped delivering frames."""


@dataclass(frozen=True, slots=True)
class Frame:
    image: np.ndarray  # BGR uint8, H x W x 3
    t_us: int
    index: int  # frame number in the source, skipped frames included
    lores: np.ndarray | None = None  # a small grey image for motion, when the source has one


class FrameSource(Protocol):
    name: str
    skipped: int  # corrupt or unreadable frames skipped so far

    def __iter__(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...
