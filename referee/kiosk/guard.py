"""What keeps the kiosk's server to its own table (docs/kiosk.md, "Who may connect").

- `KioskGuard`, an ASGI middleware every kiosk app carries: a request whose `Host` is not
  a name or address this server is reached by is refused (400), so a page on another site
  cannot reach the kiosk through DNS rebinding; a request that changes something sent by
  another site's page (its `Sec-Fetch-Site` or `Origin`) is refused (403); every answer
  says the page may not be framed (`X-Frame-Options`, a CSP that allows only the kiosk's own files).
- `ConnectionLimits` and `capped_protocol`: connections are counted per client address at
  accept time, and one client past its share (or everyone past the total) is closed at
  once, so idle connections cannot use up the process's files; a connection that sends
  nothing is closed after a while. Each incident is one log line, not one per connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import threading
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any

from .phones import cross_site

log = logging.getLogger(__name__)

# The kiosk's pages use only their own scripts, styles, pictures and event stream. Inline
# style attributes stay allowed: the page draws cards and bars with them.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def machine_names() -> frozenset[str]:
    """The names this machine answers to without anyone's DNS: localhost, its hostname, and
    the hostname on mDNS (`raspberrypi.local`)."""
    hostname = socket.gethostname().lower().rstrip(".")
    names = {"localhost"}
    if hostname:
        names |= {hostname, f"{hostname}.local"}
    return frozenset(names)


def host_name(header: str) -> str:
    """The name or address in a Host header, without its port or brackets, in lower case."""
    header = header.strip().lower()
    if header.startswith("["):  # [::1]:8080
        return header[1 : header.find("]")] if "]" in header else ""
    if header.count(":") == 1:
        header = header.partition(":")[0]
    return header.rstrip(".")


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.partition("%")[0])  # fe80::1%eth0: the zone is no part
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)  # a dual-stack socket's IPv4 client
    return mapped or address


def host_allowed(header: str | None, local: str | None, names: Collection[str]) -> bool:
    """Whether a request with this Host header, arriving at the local address `local` (the
    socket's own), is for this server: one of `names`, a loopback address, or the very
    address the connection came in on (a phone that typed the Pi's address)."""
    if not header:
        return False
    name = host_name(header)
    if not name:
        return False
    if name in names or (local is not None and name == local.lower()):
        return True
    address = _address(name)
    if address is None:
        return False  # a name nobody set: another site's, through DNS rebinding
    if address.is_loopback:
        return True
    return local is not None and address == _address(local)


class KioskGuard:
    """ASGI middleware: the Host check and the security headers (see the module's doc).
    `names`: the names the server is reached by besides its addresses (`machine_names()` and
    the config's `kiosk_names`)."""

    def __init__(self, app: Any, names: Collection[str] = ()) -> None:
        self.app = app
        self.names = frozenset(n.lower().rstrip(".") for n in names) | machine_names()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), None)
        server = scope.get("server")
        local = str(server[0]) if server else None
        if not host_allowed(header, local, self.names):
            shown = host_name(header or "") or "(none)"
            await _refuse(
                send,
                f"this kiosk is not served as {shown!r}: open it by the Pi's address or name "
                "(another name: add it to [service] kiosk_names in the config)",
            )
            return
        refusal = _cross_site(scope)
        if refusal is not None:
            await _refuse(send, refusal, 403)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = {k.lower() for k, _ in message.get("headers", ())}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in given]
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _cross_site(scope: Scope) -> str | None:
    """Why a request is refused as another site's (`kiosk_phones.cross_site`), or None."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
    return cross_site(scope.get("method", "GET"), headers)


async def _refuse(send: Send, message: str, status: int = 400) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ConnectionLimits:
    """Open connections per client address, and in all; `admit` says whether one more may
    stay open. Thread-safe (the server runs in its own thread; tests call it from theirs)."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client = per_client
        self.total = total
        self._open: dict[str, int] = {}
        self._all = 0
        self._refusing: dict[str, int] = {}  # a client in an incident -> connections refused
        self._lock = threading.Lock()

    def admit(self, client: str) -> bool:
        with self._lock:
            count = self._open.get(client, 0)
            if count < self.per_client and self._all < self.total:
                self._open[client] = count + 1
                self._all += 1
                return True
            refused = self._refusing.get(client, 0)
            self._refusing[client] = refused + 1
        if refused == 0:  # one line when an incident starts, none for each connection in it
            why = (
                f"{count} connections open (at most {self.per_client} a client)"
                if count >= self.per_client
                else f"the server has {self.total} connections open, its most"
            )
            log.warning("kiosk: refusing new connections from %s: %s", client, why)
        return False

    def release(self, client: str) -> None:
        with self._lock:
            count = self._open.get(client, 0) - 1
            if count < 0:
                return
            self._all -= 1
            if count:
                self._open[client] = count
                return
            del self._open[client]
            refused = self._refusing.pop(client, 0)
        if refused:
            log.warning("kiosk: %s has closed its connections; %d were refused", client, refused)

    def open_count(self, client: str | None = None) -> int:
        with self._lock:
            return self._all if client is None else self._open.get(client, 0)


def _peer(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and peer:
        address = _address(str(peer[0]))
        return str(address) if address is not None else str(peer[0])
    return "?"


def capped_protocol(base: type[asyncio.Protocol], limits: ConnectionLimits, first_request_s: float) -> type:
    """uvicorn's HTTP protocol class `base`, admitting a connection only within `limits` and
    closing one that has sent nothing after `first_request_s` (uvicorn's own keep-alive
    timeout starts only after a first request)."""

    class Capped(base):  # type: ignore[misc, valid-type]
        _client: str | None = None
        _idle: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            client = _peer(transport)
            if not limits.admit(client):
                transport.abort()  # its file is closed now, not when the client gives up
                return
            self._client = client
            super().connection_made(transport)
            loop = asyncio.get_running_loop()
            self._idle = loop.call_later(first_request_s, transport.close)

        def data_received(self, data: bytes) -> None:
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._client is None:
                return  # refused: uvicorn never saw it
            if self._idle is not None:
                self._idle.cancel()
            limits.release(self._client)
            self._client = None
            super().connection_lost(exc)

    Capped.__name__ = f"Capped{base.__name__}"
    return Capped


def quiet_loop_errors(loop: asyncio.AbstractEventLoop) -> None:
    """The loop's socket errors (accept() out of files, a connection reset mid-write) as one
    log line each, without a traceback: they are the network's doing, not a bug to read."""

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if not isinstance(error, OSError):
            loop.default_exception_handler(context)  # anything else may be a bug: its traceback
            return
        log.warning("kiosk: %s: %s", context.get("message", "a socket error"), error)

    loop.set_exception_handler(handler)
