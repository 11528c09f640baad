"""The kiosk page started for `referee run`: its hub, the host's commands, the server, and
the camera's pictures of the cards it asks about (`AskedCrops`), which the page shows.

Started before the loop exists (the page shows a resumed game at once) and wired to it
once it does (`Kiosk.commands.loop`). The night's scores between games come from the
journal (`night_scores`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.kiosk.app import KioskHub, make_app
from referee.kiosk.phones import lan_address, watch_url
from referee.kiosk.server import KioskServer
from referee.kiosk.token import load_or_create_token
from referee.rules.questions import Judging
from referee.rules.rulings import Ruling
from referee.rules.script import GameSpec

from .config import Config
from .host import HostCommands, view_of
from .journal import Journal
from .resume import spec_of
from .scores import NightFeed
from .sinks import Recorder


class AskedCrops:
    """The camera's pictures of the cards it asked about, by the lay's time, for the kiosk to
    show the host: the last few only (a question is answered in seconds), so memory is bounded."""

    KEEP = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._crops: dict[int, Any] = {}

    def keep(self, t: int, crop: Any) -> None:
        if crop is None:
            return
        with self._lock:
            self._crops[t] = crop
            while len(self._crops) > self.KEEP:
                del self._crops[next(iter(self._crops))]

    def get(self, t: int) -> Any:
        with self._lock:
            return self._crops.get(t)

    def __contains__(self, t: object) -> bool:
        with self._lock:
            return t in self._crops


@dataclass
class Kiosk:
    """The kiosk page's parts, wired to the loop once it exists."""

    hub: Any
    commands: Any
    server: Any
    crops: AskedCrops  # the camera's pictures of the cards it asks about, which the page shows


def start_kiosk(
    config: Config,
    host: str | None,
    journal: Journal,
    recorder: Recorder,
    spec: GameSpec,
    judging: Judging,
    source: str,
    note: Callable[[str], Any],
    again: Sequence[Ruling] = (),
    clips: Any = None,
) -> Kiosk:
    """The page up (a busy port: one line, exit 2), showing `judging`'s game and log, any
    open question, and which of its rulings were `again` announced at this start."""
    crops = AskedCrops()
    view = view_of(judging)  # a resumed game shows its log and figures, and any open question
    view.again(again)  # and which of its rulings were announced again at this start
    view.ask(judging.open, crops)
    hub = KioskHub(view)
    token = load_or_create_token(config.data_dir / "admin-token")
    # The host's rules for the next game (journaled), unless the config changed since they were set.
    base = GameSpec(config.players, config.rules, dict(config.options)).to_json()
    upcoming = journal.next_game(base)
    commands = HostCommands(journal, recorder, hub, spec, source, crops=crops, base=base)
    if upcoming is not None:
        commands.spec = spec_of(upcoming, spec)
        hub.next_game(upcoming)
    listen, lan = host or config.kiosk_host, lan_address()
    server = _server(config, (listen, lan), hub, token, commands, crops, clips)
    server.start()  # a busy port: one line, exit 2
    note(f"kiosk page: {server.url}")
    watching = watch_url(listen, server.port, lan)
    if watching is not None:
        note(f"phones on this network: the kiosk page at {watching}")
    return Kiosk(hub, commands, server, crops)


def _server(
    config: Config,
    where: tuple[str, Any],
    hub: KioskHub,
    token: Any,
    commands: HostCommands,
    crops: AskedCrops,
    clips: Any,
) -> KioskServer:
    """The page's server: `where` is the address it listens on and this machine's on the LAN."""
    listen, lan = where
    server = KioskServer(
        make_app(
            hub,
            token,
            commands,
            crops.get,
            config.kiosk_names,
            watch=lambda: watch_url(listen, server.port, lan),
            sound=config.kiosk_sound,
            buzzer=config.pins == "gpio" and config.wiring.buzzer is not None,
            clips=clips,
        ),
        hub,
        host=listen,
        port=config.kiosk_port,
    )
    return server


def night_scores(journal: Journal, kiosk: Kiosk, sinks: list[Any], note: Callable[[str], Any]) -> None:
    """The night's scores on the kiosk between games: read now, and again when a game is won
    (after `close_won` has closed it) or the host starts a new one."""
    feed = NightFeed(journal, kiosk.hub, note)
    feed.refresh()
    sinks.append(feed.on_ruling)
    kiosk.commands.on_new_game.append(feed.refresh)
