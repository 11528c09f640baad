"""`referee install-service`: the systemd units, the service user, the config and the kiosk.

The files come from `systemd/` at the top of the repository, which ships inside the
package as `referee/data/systemd` (a symlink in the source tree, real files in a wheel).
What goes where (everything under `--root DIR` when given):

    /etc/systemd/system/referee.service       the service (replaced: it is ours)
    /etc/sysusers.d/referee.conf              the user referee, in gpio and video
    /etc/referee/referee.toml                 from the example, only when there is none
    /etc/systemd/user/referee-kiosk.service   with --kiosk-user: the kiosk's user unit
    ~NAME/.config/labwc/autostart             with --kiosk-user: one line added, once

On the live system (no --root) it also runs systemd-sysusers, and with --enable
`systemctl daemon-reload` and `systemctl enable --now referee.service`.
"""

from __future__ import annotations

import argparse
import configparser
import os
import pwd
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from referee.errors import UserError

UNITS = Path(__file__).parents[1] / "data" / "systemd"
SERVICE, KIOSK, SYSUSERS = "referee.service", "referee-kiosk.service", "referee.sysusers"
EXAMPLE, AUTOSTART = "referee.toml.example", "labwc-autostart"
CONFIG = Path("/etc/referee/referee.toml")


@dataclass(frozen=True)
class Target:
    """One file to put in place: `replace` (ours), `keep` (the user's once there) or `append`
    (a shared file that gets our lines once)."""

    path: Path
    text: str
    how: str
    owner: str | None = None  # the desktop user who must own it (and any folder made for it)


def under(root: Path, path: Path) -> Path:
    return root / path.relative_to("/")


def plan(
    sources: dict[str, str], root: Path, kiosk_home: Path | None, kiosk_user: str | None
) -> list[Target]:
    """Where each file goes. Pure: the sources are texts, the home folder already looked up."""
    targets = [
        Target(under(root, Path("/etc/systemd/system", SERVICE)), sources[SERVICE], "replace"),
        Target(under(root, Path("/etc/sysusers.d/referee.conf")), sources[SYSUSERS], "replace"),
        Target(under(root, CONFIG), sources[EXAMPLE], "keep"),
    ]
    if kiosk_home is not None:
        targets += [
            Target(under(root, Path("/etc/systemd/user", KIOSK)), sources[KIOSK], "replace"),
            Target(
                under(root, kiosk_home / ".config/labwc/autostart"), sources[AUTOSTART], "append", kiosk_user
            ),
        ]
    return targets


def appended(existing: str, lines: str) -> str | None:
    """`existing` with `lines` added at its end, or None when its commands are already there
    (comments aside: a user may have removed ours)."""
    have = {line.strip() for line in existing.splitlines()}
    if all(line.strip() in have for line in lines.splitlines() if line.strip() and not line.startswith("#")):
        return None
    return existing + ("\n" if existing and not existing.endswith("\n") else "") + lines


def read_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """A unit file's settings, section by section, each key's values in order (systemd keys
    such as Environment= and DeviceAllow= may repeat)."""

    class Repeats(dict):  # configparser stores each value as a list while reading: extend it
        def __setitem__(self, key: str, value: Any) -> None:
            if isinstance(value, list) and key in self:
                super().__getitem__(key).extend(value)
            else:
                super().__setitem__(key, value)

    parser = configparser.ConfigParser(strict=False, interpolation=None, dict_type=Repeats)
    parser.optionxform = str  # systemd's keys are case-sensitive
    parser.read_string(text)
    return {name: {k: v.split("\n") for k, v in parser[name].items()} for name in parser.sections()}


def exec_binary(unit_text: str) -> Path:
    """The program a unit's ExecStart= runs."""
    return Path(read_unit(unit_text)["Service"]["ExecStart"][-1].split()[0])


def read_sources(folder: Path, names: Sequence[str]) -> dict[str, str]:
    texts = {}
    for name in names:
        try:
            texts[name] = (folder / name).read_text(encoding="utf-8")
        except OSError as e:
            raise UserError(
                f"{folder / name}: cannot read the unit files of this referee: {e.strerror or e}"
            ) from None
    return texts


def _write(target: Target, uid_gid: tuple[int, int] | None) -> str:
    """Put one target in place (atomically); what was done, for the report."""
    path = target.path
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else None
        if target.how == "keep" and existing is not None:
            return f"kept {path} (already there: never overwritten)"
        text = target.text
        if target.how == "append" and existing is not None:
            text = appended(existing, target.text)
            if text is None:
                return f"kept {path} (it already starts the kiosk)"
        if text == existing:
            return f"kept {path} (unchanged)"
        made = [p for p in reversed(path.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text(text, encoding="utf-8")
        partial.chmod(0o644)
        if uid_gid is not None:
            for p in [*made, partial]:
                os.chown(p, *uid_gid)
        partial.replace(path)
    except OSError as e:
        raise UserError(f"{e.filename or path}: cannot write: {e.strerror or e}") from None
    if existing is None:
        return f"wrote {path}"
    return f"added the kiosk to {path}" if target.how == "append" else f"updated {path}"


def _run(command: Sequence[str]) -> None:
    try:
        status = subprocess.run(command, check=False).returncode
    except OSError as e:
        raise UserError(f"{command[0]}: cannot run it: {e.strerror or e}") from None
    if status != 0:
        raise UserError(f"`{' '.join(command)}` failed (exit {status})")


def install(
    root: Path,
    kiosk_user: str | None,
    *,
    live: bool,
    enable: bool,
    out: TextIO,
    run: Callable[[Sequence[str]], None] = _run,
) -> None:
    """Install under `root`. `live` means root is this running system: files get their
    owners, and systemd is told (`run` runs each command; it raises UserError on failure)."""
    sources = read_sources(UNITS, [SERVICE, KIOSK, SYSUSERS, EXAMPLE, AUTOSTART])
    account = None
    if kiosk_user is not None:
        try:
            account = pwd.getpwnam(kiosk_user)
        except KeyError:
            raise UserError(f"--kiosk-user {kiosk_user}: no such user") from None
    if live:
        binary = under(root, exec_binary(sources[SERVICE]))
        if not os.access(binary, os.X_OK):
            raise UserError(
                f"{binary}: no referee there, and the service runs that one: "
                "install the referee in /opt/referee first (docs/service.md)"
            )
    home = Path(account.pw_dir) if account is not None else None
    if live and home is not None and not home.is_dir():
        raise UserError(f"--kiosk-user {kiosk_user}: the home folder {home} does not exist")
    for target in plan(sources, root, home, kiosk_user):
        owner = (account.pw_uid, account.pw_gid) if live and target.owner and account else None
        out.write(_write(target, owner) + "\n")

    conf = under(root, Path("/etc/sysusers.d/referee.conf"))
    commands = [
        ["systemctl", "daemon-reload"],
        ["systemctl", "enable", "--now", SERVICE],
    ]
    if live:
        run(["systemd-sysusers", str(conf)])
        out.write("made sure the user referee exists, in the groups gpio and video\n")
    if live and enable:
        for command in commands:
            run(command)
            out.write(f"ran {' '.join(command)}\n")
    else:
        where = "on the target system" if not live else "next"
        steps = ([["systemd-sysusers"]] if not live else []) + commands
        out.write(f"{where}, as root:\n" + "".join(f"  {' '.join(c)}\n" for c in steps))
    if kiosk_user is not None:
        out.write(f"the kiosk starts when {kiosk_user} next logs in to the desktop (labwc)\n")
    out.write("logs: journalctl -u referee -f\n")


def cmd_install_service(args: argparse.Namespace, out: TextIO) -> int:
    live = args.root is None
    if args.enable and not live:
        raise UserError("--enable starts the service on this system: it cannot go with --root")
    if live and os.geteuid() != 0:
        raise UserError(
            "install-service writes to /etc and adds a user: run it as root (sudo), or give --root DIR"
        )
    root = Path(args.root).absolute() if args.root is not None else Path("/")
    if root.exists() and not root.is_dir():
        raise UserError(f"--root {args.root}: not a folder")
    install(root, args.kiosk_user, live=live, enable=args.enable, out=out)
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "install-service",
        help="install the systemd service, its user, the config and the kiosk screen",
        description="Install referee.service (run it with --enable), the user referee, "
        "/etc/referee/referee.toml (only if absent) and, for a desktop user, the kiosk screen.",
    )
    p.add_argument("--root", metavar="DIR", help="write everything under DIR (packaging, tests); run nothing")
    p.add_argument(
        "--kiosk-user", metavar="NAME", help="the desktop user whose labwc session shows the kiosk"
    )
    p.add_argument("--enable", action="store_true", help="then systemctl daemon-reload and enable --now")
    p.set_defaults(run=cmd_install_service)
