"""Reading the referee's TOML files (the wiring file, the service's config) with one-line errors.

`read_toml` turns a file that cannot be read or parsed into `FILE:LINE: what`; the
checkers raise `Bad(key, what)` for a value at a key path such as `seat[1].led`,
which each file's reader turns into `FILE: KEY: what`.
"""

from __future__ import annotations

import codecs
import json
import re
import tomllib
from collections.abc import Mapping
from datetime import date, time
from os import PathLike
from typing import Any

from referee.errors import read_capped

MAX_TOML = 1024 * 1024  # a config or wiring file is a few KB


class Bad(Exception):
    """A problem at `key` (a path like `seat[1].led`; "" for the file as a whole)."""

    def __init__(self, key: str, what: str) -> None:
        super().__init__(key, what)
        self.key = key
        self.what = what


def read_toml(path: str | PathLike[str], error: type[Exception]) -> dict[str, Any]:
    """The file's TOML as a dict; `error` (one line naming the file and line) on any problem."""
    source = str(path)
    try:
        raw = read_capped(path, MAX_TOML)
    except OSError as e:
        raise error(f"{source}: cannot read: {e.strerror or e}") from None
    raw = raw.removeprefix(codecs.BOM_UTF8)  # as some Windows editors write: harmless
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise error(f"{source}:{line}: not valid TOML: not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(_toml_message(source, str(e))) from None
    except RecursionError:  # arrays or inline tables nested hundreds deep
        raise error(f"{source}: not valid TOML: nested too deeply") from None


def _toml_message(source: str, message: str) -> str:
    # tomllib ends its messages with "(at line L, column C)"; the line goes where editors look.
    m = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", message, re.DOTALL)
    if m is None:
        return f"{source}: not valid TOML: {message}"
    return f"{source}:{m[2]}: not valid TOML: {m[1]} (at column {m[3]})"


def need_table(value: Any, key: str, want: str) -> None:
    if not isinstance(value, Mapping):
        raise Bad(key, f"must be {want}, not {show(value)}")


def known(table: Mapping[str, Any], key: str, known: tuple[str, ...]) -> None:
    unknown = [k for k in table if k not in known]
    if not unknown:
        return
    known_text = ", ".join(known)
    if len(unknown) == 1:
        raise Bad(join_key(key, unknown[0]), f"unknown key (known: {known_text})")
    names = ", ".join(key_text(k) for k in unknown)
    raise Bad(key, f"unknown keys {names} (known: {known_text})")


def required(table: Mapping[str, Any], key: str, required: tuple[str, ...], hint: str) -> None:
    for k in required:
        if k not in table:
            raise Bad(join_key(key, k), f"missing ({hint})")


def join_key(key: str, child: str) -> str:
    return f"{key}.{key_text(child)}" if key else key_text(child)


def key_text(key: str) -> str:
    """A key as TOML would write it: bare if it can be, quoted if not."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def show(value: Any) -> str:
    """A value as the TOML file wrote it, for error messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, date | time):
        return value.isoformat()
    return repr(value)
