"""The table's calibration profile: one versioned file the wizard writes and the referee reads.

One `.npz` file holds everything the wizard learnt: the camera (frame size, the pile's
area, the exposure and focus it locked), the seats' sides of the picture, the buttons'
pins, and the deck (its name and the face model `referee calibrate deck` learns), with
the date. The deck's arrays are stored under the keys `referee.vision.recogniser.Profile` reads,
so the same file is also a deck profile: `referee watch --profile FILE` takes it as is.

Written atomically: a temporary file in the same folder, flushed and synced, then renamed
over the old one, and the folder synced. An interrupted wizard never leaves a half file;
the previous profile stays as it was. Progress is kept the same way in `FILE.partial`
(the steps done so far), so a wizard stopped by Ctrl-C or a power cut resumes there.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from referee.errors import UserError
from referee.vision.recogniser import PROFILE_VERSION, Profile

TABLE_PROFILE_VERSION = 1
STEPS = ("camera", "seats", "deck", "buttons")  # the wizard's steps that write to the profile
FILE_NAME = "table-profile.npz"
MAX_UNPACKED = 256 * 2**20  # bytes: a profile's arrays are a few MB


class TableProfileError(UserError):
    """A table profile that cannot be read or written; str() is one line naming the file."""


def default_profile_path() -> Path:
    """Where the wizard keeps the profile: /etc/referee for the service (when it is writable
    or already holds one), else the user's XDG config folder."""
    system = Path("/etc/referee")
    if exists(system / FILE_NAME) or (system.is_dir() and os.access(system, os.W_OK)):
        return system / FILE_NAME
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "referee" / FILE_NAME


def exists(path: Path) -> bool:
    """Whether `path` is there; TableProfileError (one line) when its folder may not be looked
    into (an unreadable ~/.config/referee), rather than a guess either way."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as e:
        raise TableProfileError(
            f"{path}: cannot look for the profile: {e.strerror or e} (check the folder's permissions)"
        ) from None
    return True


@dataclass(frozen=True)
class TableProfile:
    """What the wizard has learnt so far. Each part is None until its step is done."""

    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    camera: dict[str, Any] | None = None  # source, size, pile box, exposure/focus locked
    seats: dict[str, int] | None = None  # picture side -> seat
    deck_name: str | None = None
    deck: Profile | None = None
    buttons: dict[str, Any] | None = None  # the wiring, as referee.live.wiring.Wiring.to_dict()
    done: tuple[str, ...] = ()  # steps finished, in order

    def with_step(self, step: str, **parts: Any) -> TableProfile:
        """This profile with `step` done and its parts set (a new value: profiles are values)."""
        done = self.done if step in self.done else (*self.done, step)
        return replace(self, done=done, **parts)

    def meta(self) -> dict[str, Any]:
        return {
            "version": TABLE_PROFILE_VERSION,
            "created": self.created,
            "camera": self.camera,
            "seats": self.seats,
            "deck_name": self.deck_name,
            "buttons": self.buttons,
            "done": list(self.done),
        }


def save(profile: TableProfile, path: str | os.PathLike[str]) -> None:
    """Write `profile` to `path` atomically: the old file, if any, stays until the new one is whole."""
    target = Path(path)
    arrays: dict[str, np.ndarray] = {"table": np.array(json.dumps(profile.meta()))}
    if profile.deck is not None:
        arrays |= {"version": np.array(PROFILE_VERSION), "faces": profile.deck.faces}
        arrays["face_codes"] = profile.deck.face_codes
        if profile.deck.aspect is not None:
            arrays["aspect"] = np.array(profile.deck.aspect)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "wb") as f:
            np.savez_compressed(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)
        _sync_folder(target.parent)
    except OSError as e:
        temporary.unlink(missing_ok=True)
        raise TableProfileError(f"{target}: cannot write the profile: {e.strerror or e}") from None


def _sync_folder(folder: Path) -> None:
    # The rename is only durable once the folder's entry is on the disk too.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def table_part(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The profile's table part (camera, seats, buttons, deck name, steps done) without the
    deck's arrays, or None for a deck profile (`calibrate deck --images`): what the service's
    config reads. TableProfileError (one line naming the file) if it cannot be used."""
    return _read_table(Path(path))[0]


def _read_table(source: Path) -> tuple[dict[str, Any] | None, bool]:
    """The table part (None for a deck profile) and whether the file holds a deck's arrays,
    from one look at the file."""
    if not exists(source):
        raise TableProfileError(f"{source}: no such profile (run `referee calibrate`)")
    _check_size(source)
    try:
        with np.load(source, allow_pickle=False) as data:
            has_deck = "faces" in data.files
            if "table" not in data.files:
                if has_deck:
                    return None, True
                raise TableProfileError(f"{source}: neither a table profile nor a deck profile")
            meta = json.loads(str(data["table"]))
    except TableProfileError:
        raise
    except FileNotFoundError:
        raise TableProfileError(f"{source}: no such profile (run `referee calibrate`)") from None
    except Exception as e:  # zip, JSON, key and value errors all mean a damaged file here
        raise TableProfileError(f"{source}: not a table profile ({type(e).__name__}: {e})") from None
    if not isinstance(meta, dict) or meta.get("version") != TABLE_PROFILE_VERSION:
        version = meta.get("version") if isinstance(meta, dict) else None
        raise TableProfileError(
            f"{source}: table profile version {version}, this referee reads {TABLE_PROFILE_VERSION}"
        )
    return meta, has_deck


def _check_size(source: Path) -> None:
    """A profile is a zip file of a few MB: anything else, or one that would unpack to more
    than MAX_UNPACKED (a zip bomb), is refused before numpy reads it."""
    try:
        if not source.is_file():
            raise TableProfileError(f"{source}: not a profile (not a regular file)")
        if source.stat().st_size > MAX_UNPACKED or not zipfile.is_zipfile(source):
            # numpy would call a file that is not a zip pickled data
            raise TableProfileError(f"{source}: not a profile (a profile is an .npz file the wizard writes)")
        with zipfile.ZipFile(source) as archive:
            unpacked = sum(entry.file_size for entry in archive.infolist())
    except OSError as e:
        raise TableProfileError(f"{source}: cannot read: {e.strerror or e}") from None
    except zipfile.BadZipFile as e:
        raise TableProfileError(f"{source}: not a table profile (a damaged zip: {e})") from None
    if unpacked > MAX_UNPACKED:
        raise TableProfileError(
            f"{source}: not a profile (it would unpack to {unpacked // 2**20} MB; a profile is a few MB)"
        )


def load(path: str | os.PathLike[str]) -> TableProfile:
    """Read a table profile; TableProfileError (one line naming the file) if it cannot be used."""
    source = Path(path)
    meta, has_deck = _read_table(source)
    if meta is None:
        raise TableProfileError(f"{source}: a deck profile, not a table profile (no table part)")
    try:
        deck = Profile.load(source) if has_deck else None
    except Exception as e:
        raise TableProfileError(f"{source}: not a table profile ({type(e).__name__}: {e})") from None
    done = tuple(s for s in meta.get("done", []) if s in STEPS)
    return TableProfile(
        created=str(meta.get("created", "")),
        camera=meta.get("camera"),
        seats=meta.get("seats"),
        deck_name=meta.get("deck_name"),
        deck=deck,
        buttons=meta.get("buttons"),
        done=done,
    )


def partial_path(path: str | os.PathLike[str]) -> Path:
    """Where an unfinished wizard keeps its progress beside the profile."""
    target = Path(path)
    return target.with_name(target.name + ".partial")
