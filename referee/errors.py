"""The one error type the command line shows as a single line (exit status 2), how those
lines quote what the user wrote, and small files read with a size cap."""

import errno
import json
import os
import stat
from typing import Any


class UserError(Exception):
    """A mistake the user can fix: a bad file, a bad option, missing hardware."""


def show_json(value: Any) -> str:
    """A value as a JSON file (a script, a game line's options) wrote it, for error messages."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def read_capped(path: str | os.PathLike[str], limit: int) -> bytes:
    """A small file the user named (a config, a wiring file, a game line), read whole but
    never past `limit` bytes. OSError with a one-line `strerror` when it cannot be: missing,
    unreadable, not a regular file (a device such as /dev/zero, a pipe, a folder: opened
    without waiting for a writer), or bigger than `limit`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a device or a pipe)")
        data = b""
        while len(data) <= limit:  # a file may grow as it is read: read no more than the limit
            chunk = os.read(fd, limit + 1 - len(data))
            if not chunk:
                break
            data += chunk
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"too big (more than {_size(limit)})")
        return data
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n // 1024} KiB"
