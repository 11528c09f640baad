"""The table's admin token: made at first start, kept in a file only its owner can read.

Whoever holds it may change the game from the kiosk (new game, rules, names, undo).
The kiosk shows it on the Pi's own screen (a loopback client), never to the network.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from pathlib import Path

from referee.errors import UserError, read_capped

TOKEN_BYTES = 24  # 32 URL-safe characters
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")


def load_or_create_token(path: Path) -> str:
    """The token in `path`, made and written there (mode 0600) if the file does not exist."""
    path = Path(path)
    try:
        return read_token(path)
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        _write_new(path, token)
    except FileExistsError:
        return read_token(path)  # another process made it first: use theirs
    except OSError as e:
        raise UserError(f"cannot write the admin token to {path}: {e.strerror}") from None
    return token


def read_token(path: Path) -> str:
    """The token in `path`. FileNotFoundError if there is none; UserError if it is not usable."""
    try:
        st = path.stat()
        text = read_capped(path, 4096).decode("ascii").strip()  # a token is 32 characters
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as e:
        what = e.strerror if isinstance(e, OSError) else "not text"
        raise UserError(f"cannot read the admin token in {path}: {what}") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UserError(f"{path} is readable by others: run chmod 600 {path}")
    if not _TOKEN.fullmatch(text):
        raise UserError(f"{path} holds no admin token: delete it and a new one is made at the next start")
    return text


def _write_new(path: Path, token: str) -> None:
    """Write `token` to a new file at `path`, whole or not at all: a temporary file, synced,
    then linked into place, which fails if `path` appeared meanwhile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, (token + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    finally:
        tmp.unlink()
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # the new name survives a power cut, too
    finally:
        os.close(dir_fd)
