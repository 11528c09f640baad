"""The kiosk: the table's screen as a live web page (Starlette; docs/kiosk.md).

    GET  /                 the page (referee/kiosk/static/)
    GET  /api/state        the view (`kiosk_view.table_view`) as JSON, with its `version`
    GET  /events           Server-Sent Events: the whole view on connect, then on every change
    GET  /api/admin/token  the admin token, to the Pi's own screen (a loopback client) only
    GET  /api/question/{t}.jpg  the camera's picture of the card it asks about (laid at t)
    POST /api/admin/new-game, /api/admin/rules, /api/admin/names, /api/admin/undo,
         /api/admin/name-card, /api/admin/house-rules
                           change the game: the admin token required, `TableCommands` does it
    GET  /api/screen       this screen: the Pi's own or another, its sound's default, the phones' address
    GET  /api/watch.svg    the phones' address as a QR code
    GET  /api/house-rules  the next game's rules and options, and what each option takes

`KioskHub` is where the table's thread hands the view to the server's event loop: the
table side changes the view under a lock and bumps a version; the loop side is woken
with `call_soon_threadsafe` and sends the newest view. Streams skip versions they were
too slow to see; every view is whole, so nothing is lost by skipping. The calibration
wizard's page (`calibration/kiosk.py`) shares that hand-off (`LiveHub`) and the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hardware.presses import ButtonTrouble
from referee.cards import parse_card
from referee.errors import UserError
from referee.rules.announcer import Target, Value
from referee.rules.events import Unread
from referee.rules.house_rules import house_view, next_values
from referee.rules.player_names import check_names
from referee.rules.rulings import Ruling
from referee.rules.state import State

from .guard import KioskGuard
from .phones import qr_svg
from .sound import KEEP_SOUNDS, SOUND_CHOICES, query_sound, ruling_sound, sound_default, sound_json
from .view import TableView

STATIC = Path(__file__).resolve().parent / "static"
KEEP_ALIVE_S = 15.0  # an SSE comment this often keeps idle streams open through proxies and sleep
RETRY_MS = 1000  # how soon a browser reconnects a dropped stream
NO_STORE = {"Cache-Control": "no-store"}
MAX_BODY = 64 * 1024  # the biggest command is eight names
CROP_PX = 480  # a card's picture is sent at most this big on its longer side


class TableCommands(Protocol):
    """What the host may do from the kiosk; the service implements it.

    Each returns a short message for the page ("new game: Ann, Bob, Cy"), or raises
    ValueError (or UserError) with a one-line reason, which the page shows (HTTP 400).
    They are called from a worker thread, one request at a time per call.
    """

    def new_game(self) -> str: ...

    def set_rules(self, preset: str) -> str: ...

    def set_names(self, names: list[str]) -> str: ...

    def undo_last(self) -> str: ...

    def name_card(self, lay_t: int, card: str | None) -> str:
        """The card laid at `lay_t` (a card code; None: nothing was laid there): the answer to
        the camera's question, or a correction of a card it misread."""
        ...

    def set_house_rules(self, options: dict[str, Any]) -> str:
        """The next new game's house rules (its preset's options, script form), replacing any
        set before; the game being played keeps its own."""
        ...


class LiveHub:
    """A view and its version, from a worker thread to the server's event loop: the part the
    game's hub and the calibration wizard's hub share (`event_stream` sends it).

    The worker side (any thread) changes the view with `_change`; the loop side reads
    `snapshot` and waits in `wait_after`, once `attach` has named the loop. A subclass says
    what its view is (`_view`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = 1
        self._built: tuple[int, bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed = asyncio.Event()
        self.closed = False

    def _view(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def version(self) -> int:
        return self._version

    def _change(self, change: Callable[[], Any]) -> None:
        """Run `change` under the lock and make a new version: `change` returning False
        means nothing changed (no new version, nobody woken)."""
        with self._lock:
            if change() is False:
                return
            self._version += 1
        self._notify()

    def _notify(self) -> None:
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the server's loop has closed: nobody listens
                loop.call_soon_threadsafe(self._wake)

    # The server's side (its event loop) ----------------------------------------------

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wake waiters on `loop` from now on (the app's startup calls it, on that loop)."""
        self._changed = asyncio.Event()
        self.closed = False
        self._loop = loop

    def close(self) -> None:
        """End every stream (any thread): the server is stopping."""
        self.closed = True
        self._notify()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def snapshot(self) -> tuple[int, bytes]:
        """The newest version and its view as JSON, built at most once per version."""
        with self._lock:
            built = self._built
            if built is None or built[0] != self._version:
                view = {"version": self._version, **self._view()}
                built = self._built = (self._version, json.dumps(view, ensure_ascii=False).encode())
            return built

    async def wait_after(self, version: int, timeout: float) -> bool:
        """Until the view is newer than `version` or the hub closes; False after `timeout` s of neither."""
        while self._version == version and not self.closed:
            try:
                await asyncio.wait_for(self._changed.wait(), timeout)
            except TimeoutError:
                return False
        return True


class KioskHub(LiveHub):
    """The game's view and its version, from the table's thread to the server's event loop.

    The table side (any thread): `add`, `update`, `trouble`, `pause`, `resume`, `signal`,
    `reset`. The loop side: `snapshot` and `wait_after`, once `attach` has named the loop.
    """

    def __init__(self, view: TableView) -> None:
        super().__init__()
        self._table_view = view
        self._next_game: dict[str, Any] | None = None  # the host's rules for the next game
        self._sounds: list[dict[str, Any]] = []  # the last few tones made (kiosk_sound)
        self._sound_seq = 0
        self._night: dict[str, Any] | None = None  # the night's scores, kept across games

    # The table's side --------------------------------------------------------------

    def add(self, ruling: Ruling, state: State | None = None) -> None:
        """A final ruling (a ruling sink), and the state after it if the caller has it."""

        def change(view: TableView) -> None:
            view.add(ruling)
            if state is not None:
                view.update(state)
            self._sound(ruling_sound(ruling, len(view.state.players)))

        self._change_view(change)

    def update(self, state: State) -> None:
        self._change_view(lambda view: view.update(state))

    def trouble(self, trouble: ButtonTrouble) -> None:
        self._change_view(lambda view: view.trouble(trouble))

    def pause(self, reason: str) -> None:
        self._change_view(lambda view: view.pause(reason))

    def resume(self) -> None:
        self._change_view(lambda view: view.resume())

    def signal(self, target: Target, value: Value) -> None:
        self._change_view(lambda view: view.signal(target, value))

    def ask(self, questions: tuple[Unread, ...], crops: Any = ()) -> None:
        """The lays the camera asks about (the table loop's question sink); `crops`: the lay
        times whose picture `/api/question/{t}.jpg` serves."""

        def change(view: TableView) -> None:
            if {q.t for q in questions} - {q.t for q in view.questions}:
                self._sound(query_sound())  # a new question: the buzzer's query tone
            view.ask(questions, crops)

        self._change_view(change)

    def next_game(self, spec: dict[str, Any] | None) -> None:
        """The next new game's game line as the host set it (rules, options), or None: the
        legend shows its house rules beside the current game's."""

        def change() -> None:
            self._next_game = spec

        self._change(change)

    def house_rules(self) -> dict[str, Any]:
        """The next game's rules and options for the host's panel (`house_rules.next_values`)."""
        with self._lock:
            return next_values(self._next_game, self._table_view.state)

    def _sound(self, sound: Any) -> None:
        """Under the lock: a ruling's tones, for the pages that play them."""
        if sound is not None:
            self._sound_seq += 1
            self._sounds = [*self._sounds, sound_json(self._sound_seq, sound)][-KEEP_SOUNDS:]

    def reset(self, view: TableView, keep_marks: bool = False) -> None:
        """Show another view from now on: a new game, or the game re-judged after an undo
        (`keep_marks`: the rulings marked announced again keep the mark where they stand)."""

        def swap() -> None:
            if keep_marks:
                view.keep_marks(self._table_view.marked())
            view.replay = view.replay or self._table_view.replay  # the clips go on across games
            self._table_view = view

        self._change(swap)

    def night(self, table: dict[str, Any] | None) -> None:
        """The night's scores (`scores.night_json`): the page shows them between games. A new
        game's view keeps them."""

        def swap() -> None:
            self._night = table

        self._change(swap)

    def _change_view(self, change: Callable[[TableView], Any]) -> None:
        def on_view() -> None:
            change(self._table_view)

        self._change(on_view)

    def replay(self, status: dict[str, Any]) -> None:
        """The replay clips' state (clip_store.ClipRecorder): {game, stopped}; kept across games."""

        def change(view: TableView) -> None:
            view.replay = dict(status)

        self._change_view(change)

    def _view(self) -> dict[str, Any]:
        view = self._table_view.view()
        view["house"] = house_view(self._table_view.state, self._next_game)
        view["sounds"] = self._sounds
        if self._night is not None:  # only where something feeds it: the table's own view is unchanged
            view["night"] = self._night
        return view


def live_page_routes(hub: Any, html: str, page_path: str, state_path: str) -> list[Route]:
    """What every live page serves: its HTML, its view as JSON, and the view's event stream
    (the game's kiosk and the calibration wizard alike)."""

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / html, headers={"Cache-Control": "no-cache"})

    async def state(request: Request) -> Response:
        _, body = hub.snapshot()
        return Response(body, media_type="application/json", headers=NO_STORE)

    async def events(request: Request) -> Response:
        return event_response(hub)

    return [Route(page_path, page), Route(state_path, state), Route("/events", events)]


def make_app(
    hub: KioskHub,
    token: str,
    commands: TableCommands | None = None,
    crops: Callable[[int], Any] | None = None,
    names: Collection[str] = (),
    watch: str | Callable[[], str | None] | None = None,
    sound: str = "auto",
    buzzer: bool = False,
    clips: Any = None,
) -> Starlette:
    """The kiosk's web app. `token` guards the admin endpoints; `commands` carries them out
    (None: a read-only kiosk, whose admin endpoints answer 503). `crops` gives the camera's
    picture (a BGR image) of the card laid at a time, None when it has none. `names`: host
    names the page may be opened by besides the machine's own (`KioskGuard`). `watch`: the
    address phones open (`kiosk_phones.watch_url`, or a function giving it once the server is
    bound; None: phones cannot reach this server).
    `sound`: the config's `[kiosk] sound`; `buzzer`: a buzzer is wired (`sound_default`).
    `clips`: the replay's `clip_store.ClipStore`, served read-only (None: no replays)."""
    if sound not in SOUND_CHOICES:
        raise ValueError(f"sound must be one of {', '.join(SOUND_CHOICES)}, not {sound!r}")

    async def house_rules(request: Request) -> Response:
        return JSONResponse(hub.house_rules(), headers=NO_STORE)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.attach(asyncio.get_running_loop())
        yield

    routes = [
        *live_page_routes(hub, "index.html", "/", "/api/state"),
        *_admin_routes(token, commands),
        Route("/api/question/{t}.jpg", _question_crop(crops)),
        *_screen_routes(sound, buzzer, watch),
        Route("/api/house-rules", house_rules),
        *_replay_routes(clips),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(KioskGuard, names=names)])


Endpoint = Callable[[Request], Awaitable[Response]]
Command = Callable[[TableCommands, dict[str, Any]], str]


def _admin_routes(token: str, commands: TableCommands | None) -> list[Route]:
    """`GET /api/admin/token` (to the Pi's own screen only) and the host's commands (`POST
    /api/admin/...`), each behind the token."""

    async def admin_token(request: Request) -> Response:
        if not is_loopback(request):
            return error_response(403, "the admin token is shown on the table's own screen only")
        return JSONResponse({"token": token}, headers=NO_STORE)

    def admin(run: Command) -> Endpoint:
        return _admin_endpoint(run, token, commands)

    return [
        Route("/api/admin/token", admin_token),
        Route("/api/admin/new-game", admin(lambda c, p: c.new_game()), methods=["POST"]),
        Route("/api/admin/rules", admin(lambda c, p: c.set_rules(_text(p, "preset"))), methods=["POST"]),
        Route("/api/admin/names", admin(lambda c, p: c.set_names(_names(p))), methods=["POST"]),
        Route("/api/admin/undo", admin(lambda c, p: c.undo_last()), methods=["POST"]),
        Route("/api/admin/name-card", admin(lambda c, p: c.name_card(*_naming(p))), methods=["POST"]),
        Route("/api/admin/house-rules", admin(_set_house_rules), methods=["POST"]),
    ]


def _admin_endpoint(run: Command, token: str, commands: TableCommands | None) -> Endpoint:
    """A host's command: the token checked (a header's before the body is read), the body read
    within its limit, then `run` on a worker thread; its message, or its one-line refusal (400)."""

    async def endpoint(request: Request) -> Response:
        # A token in the header is checked before the body is read: a wrong one costs nothing.
        bearer = _bearer(request)
        if bearer is not None and not _same_token(bearer, token):
            return error_response(403, "wrong admin token")
        try:
            params = await read_params(request)
        except BadBody as e:
            return error_response(e.status, str(e))
        if params is None:
            return error_response(400, "send a JSON object or a form")
        given = bearer or _form_token(request, params)
        if given is None:
            return error_response(
                401,
                "the admin token is needed (Authorization: Bearer TOKEN, or a form's token field)",
                {"WWW-Authenticate": "Bearer"},
            )
        if not _same_token(given, token):
            return error_response(403, "wrong admin token")
        if commands is None:
            return error_response(503, "this kiosk takes no commands")
        try:
            message = await run_in_threadpool(run, commands, params)
        except (ValueError, UserError) as e:
            return error_response(400, str(e))
        return JSONResponse({"ok": True, "message": message}, headers=NO_STORE)

    return endpoint


def _question_crop(crops: Callable[[int], Any] | None) -> Endpoint:
    """`GET /api/question/{t}.jpg`: the camera's picture of the card laid at t, as JPEG."""

    async def question_crop(request: Request) -> Response:
        try:
            t = int(request.path_params["t"])
        except ValueError:
            return error_response(404, "no such question")
        image = crops(t) if crops is not None else None
        if image is None:
            return error_response(404, f"no picture of a card laid at t={t}")
        jpeg = await run_in_threadpool(encode_jpeg, image)
        if jpeg is None:
            return error_response(404, f"the picture of the card laid at t={t} cannot be sent")
        return Response(jpeg, media_type="image/jpeg", headers=NO_STORE)

    return question_crop


def _screen_routes(sound: str, buzzer: bool, watch: str | Callable[[], str | None] | None) -> list[Route]:
    """`GET /api/screen` (this screen: the Pi's own or another, its sound's default, the
    phones' address) and `GET /api/watch.svg` (that address as a QR code)."""
    qr: dict[str, bytes] = {}  # drawn at the first asking, once

    def watching() -> str | None:
        return watch() if callable(watch) else watch

    async def screen(request: Request) -> Response:
        # Never the token: the Pi's own screen asks /api/admin/token for it.
        local = is_loopback(request)
        return JSONResponse(
            {"local": local, "sound": sound_default(sound, local, buzzer), "watch": watching()},
            headers=NO_STORE,
        )

    async def watch_qr(request: Request) -> Response:
        url = watching()
        if url is None:
            return error_response(404, "phones cannot reach this kiosk: it listens on this machine only")
        if url not in qr:
            qr[url] = await run_in_threadpool(qr_svg, url)
        return Response(qr[url], media_type="image/svg+xml", headers={"Cache-Control": "no-cache"})

    return [Route("/api/screen", screen), Route("/api/watch.svg", watch_qr)]


class Clips(Protocol):
    """The replay clips the kiosk shows (referee/live/clip_store.py's ClipStore)."""

    def replay(self, game: int, t: int) -> dict[str, Any] | None: ...

    def frame(self, game: int, t: int, k: int) -> bytes | None: ...


def _replay_routes(clips: Clips | None) -> list[Route]:
    """`GET /api/replay/{game}/{t}.json` and `/api/replay/{game}/{t}/{k}.jpg`: read-only."""
    if clips is None:
        return []

    def ints(request: Request, *keys: str) -> list[int] | None:
        try:
            return [int(request.path_params[k]) for k in keys]
        except ValueError:
            return None

    async def clip(request: Request) -> Response:
        got = ints(request, "game", "t")
        found = None if got is None else await run_in_threadpool(clips.replay, *got)
        if found is None:
            return error_response(404, "no replay of that ruling (a clip is saved a second or two after it)")
        return JSONResponse(found, headers=NO_STORE)

    async def frame(request: Request) -> Response:
        got = ints(request, "game", "t", "k")
        jpeg = None if got is None else await run_in_threadpool(clips.frame, *got)
        if jpeg is None:
            return error_response(404, "no such frame")
        # A clip's frames never change once written: a browser may keep them.
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "max-age=3600"})

    return [
        Route("/api/replay/{game}/{t}.json", clip),
        Route("/api/replay/{game}/{t}/{k}.jpg", frame),
    ]


def event_response(hub: LiveHub) -> Response:
    """The hub's views as Server-Sent Events."""
    return StreamingResponse(
        event_stream(hub), media_type="text/event-stream", headers={**NO_STORE, "X-Accel-Buffering": "no"}
    )


async def event_stream(hub: LiveHub) -> AsyncIterator[bytes]:
    yield f"retry: {RETRY_MS}\n\n".encode()
    seen = 0
    while True:
        changed = await hub.wait_after(seen, KEEP_ALIVE_S)
        closing = hub.closed  # as it was before the newest view was read: that view goes out too
        if changed or closing:
            version, body = hub.snapshot()
            if version != seen:
                seen = version
                yield b"id: %d\nevent: view\ndata: %s\n\n" % (seen, body)
        if closing:
            return
        if not changed:
            yield b": keep-alive\n\n"


class BadBody(ValueError):
    """A request body refused before it is parsed; `status` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The request's body, read no further than `limit` bytes: BadBody (413) past it. A
    Content-Length over the limit is refused before a byte is read."""
    length = request.headers.get("content-length")
    too_big = BadBody(413, f"a command's body is at most {limit // 1024} KiB")
    if length is not None:
        if not length.strip().isdigit():
            raise BadBody(400, "a bad Content-Length")
        if int(length) > limit:
            raise too_big
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise too_big
    return bytes(body)


async def read_params(request: Request) -> dict[str, Any] | None:
    """The request's parameters: a JSON object, a URL-encoded form (names may repeat), or
    nothing. None when the body is neither; BadBody when it is too big for any command."""
    body = await read_body(request)
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind == "application/json":
        try:
            params = json.loads(body or b"{}")
        except (ValueError, RecursionError):  # RecursionError: nested thousands deep
            return None
        return params if isinstance(params, dict) else None
    if kind == "application/x-www-form-urlencoded":
        # parse_qs rather than Starlette's form parser, which needs python-multipart.
        try:
            form = parse_qs(body.decode(), keep_blank_values=True, strict_parsing=bool(body))
        except (UnicodeDecodeError, ValueError):
            return None
        return {key: values if key == "names" else values[-1] for key, values in form.items()}
    return {} if not body else None


def _bearer(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def _form_token(request: Request, params: dict[str, Any]) -> str | None:
    """A form's `token` field: a plain HTML form cannot set a header. A JSON body's is not
    read: the kiosk's page and any script send the header."""
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind != "application/x-www-form-urlencoded":
        return None
    given = params.get("token")
    return given if isinstance(given, str) and given else None


def _same_token(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _text(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"give {key!r} as text")
    return value.strip()


def _names(params: dict[str, Any]) -> list[str]:
    """Names as a list, or as one text of names separated by commas (a form's text field)."""
    names = params.get("names")
    if isinstance(names, str):
        names = names.split(",")
    elif isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
        names = names[0].split(",")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("give 'names' as a list of player names")
    names = [n.strip() for n in names]
    check_names(names)
    return names


def _set_house_rules(commands: TableCommands, params: dict[str, Any]) -> str:
    """`{"options": {...}}`: the next game's house rules, checked by the table (one line)."""
    options = params.get("options")
    if not isinstance(options, dict) or set(params) - {"options", "token"}:
        raise ValueError('give {"options": {NAME: VALUE, ...}}: the next game\'s house rules')
    setter = getattr(commands, "set_house_rules", None)
    if setter is None:
        raise ValueError("this table takes no house rules")
    return setter(options)


def _naming(params: dict[str, Any]) -> tuple[int, str | None]:
    """`for` (the lay's time, an integer) and `card` (a card code, or null / "none": nothing
    was laid there), checked here so that a bad body is one line."""
    lay_t = params.get("for")
    if isinstance(lay_t, str) and lay_t.strip().lstrip("-").isdigit():  # a form's text
        lay_t = int(lay_t)
    if type(lay_t) is not int:
        raise ValueError("give 'for' as the lay's time, an integer (its 'for' in the view)")
    if "card" not in params:
        raise ValueError("give 'card' as a card code such as 7H, or null: no card was laid")
    card = params["card"]
    if card is None or (isinstance(card, str) and card.strip().lower() == "none"):
        return lay_t, None
    if not isinstance(card, str):
        raise ValueError("give 'card' as a card code such as 7H, or null: no card was laid")
    return lay_t, parse_card(card).code


def encode_jpeg(image: Any) -> bytes | None:
    """A picture as JPEG, its longer side at most CROP_PX; None if it is no image."""
    import cv2  # the camera's tools: only a kiosk with a camera gets here

    try:
        h, w = image.shape[:2]
        if max(h, w) > CROP_PX:
            scale = CROP_PX / max(h, w)
            size = (max(1, round(w * scale)), max(1, round(h * scale)))
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    except (AttributeError, ValueError, cv2.error):
        return None
    return buffer.tobytes() if ok else None


def is_loopback(request: Request) -> bool:
    host = request.client.host if request.client is not None else ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers={**NO_STORE, **(headers or {})})
