"""The kiosk's web server: uvicorn in a background thread, on a socket bound up front.

Binding the socket ourselves, before uvicorn starts, turns a port in use into a
one-line `UserError` at `start()`, and lets port 0 pick a free port (tests).
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import resource
import socket
import threading
from typing import Any

import uvicorn

from referee.errors import UserError

from .app import LiveHub
from .guard import ConnectionLimits, capped_protocol, quiet_loop_errors

log = logging.getLogger(__name__)

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8080
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
# A browser opens at most 6 connections to a server, and one more for each open page's
# stream: 32 leaves room for a few tabs, and keeps one client from taking every file.
PER_CLIENT = 32
MAX_CONNECTIONS = 512  # in all; fewer if the process may open fewer files (total_connections)
FIRST_REQUEST_S = 20.0  # a connection that has sent nothing by then is closed


def total_connections(max_connections: int = MAX_CONNECTIONS) -> int:
    """How many connections may be open at once: `max_connections`, or fewer so that half of
    the process's file limit stays for the journal, the camera and the files served."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max_connections
    return max(8, min(max_connections, soft // 2))


class KioskServer:
    """Serves `app` on `host`:`port` from a daemon thread: `start()`, then `stop()`. At most
    `per_client` connections from one address and `max_connections` in all stay open (more
    are closed as they come); one that sends nothing in `first_request_s` is closed."""

    def __init__(
        self,
        app: Any,
        hub: LiveHub,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        per_client: int = PER_CLIENT,
        max_connections: int | None = None,
        first_request_s: float = FIRST_REQUEST_S,
    ) -> None:
        self.app = app
        self.hub = hub
        self.host = host
        self.port = port
        self.limits = ConnectionLimits(per_client, max_connections or total_connections())
        self.first_request_s = first_request_s
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> None:
        """Bind, start serving, and return once the server answers (or raise UserError)."""
        if self._thread is not None:
            raise RuntimeError("the kiosk server is already running")
        sock = bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_config=None,  # leave the process's logging as the service set it up
            log_level="warning",
            access_log=False,
            proxy_headers=False,  # the peer's own address decides who is the Pi's own screen
            server_header=False,
            timeout_graceful_shutdown=2,
        )
        config.load()
        # Connections are counted as they are accepted (see kiosk_guard): over the limits they
        # are closed at once, before uvicorn spends anything on them.
        config.http_protocol_class = capped_protocol(
            config.http_protocol_class, self.limits, self.first_request_s
        )
        ready = threading.Event()
        self._server = _Server(config, ready)
        self._failure = None
        self._thread = threading.Thread(target=self._serve, args=(sock, ready), name="kiosk", daemon=True)
        self._thread.start()
        ready.wait(START_TIMEOUT_S)
        if not self._server.started:
            failure = self._failure
            self.stop()
            sock.close()
            raise UserError(f"the kiosk could not start on {self.url}: {failure or 'no answer'}")

    def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        try:
            assert self._server is not None
            self._server.run(sockets=[sock])
        except BaseException as e:  # uvicorn exits by SystemExit when its startup fails
            self._failure = e
            log.exception("the kiosk server stopped")
        finally:
            ready.set()

    def stop(self) -> None:
        """End the streams, stop serving, and wait for the thread."""
        thread, server = self._thread, self._server
        self._thread = None
        if thread is None or server is None:
            return
        self.hub.close()  # open event streams would otherwise hold the shutdown up
        server.should_exit = True
        thread.join(STOP_TIMEOUT_S)


class _Server(uvicorn.Server):
    """uvicorn's server, which says when it is serving."""

    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        quiet_loop_errors(asyncio.get_running_loop())
        await super().startup(sockets)
        self._ready.set()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port`, or a UserError that says why not in one line."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise UserError(f"the port must be 0 to 65535, not {port!r}")
    try:
        family, _, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError):
        raise UserError(f"cannot listen on {host!r}: no such host") from None
    # "::" serves IPv6 and, where the system allows it (Linux does), IPv4 as well; "0.0.0.0"
    # serves IPv4 only.
    dual = family == socket.AF_INET6 and _unspecified(address[0]) and socket.has_dualstack_ipv6()
    try:
        return socket.create_server(address, family=family, backlog=128, dualstack_ipv6=dual)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UserError(f"port {port} on {host} is in use") from None
        if e.errno == errno.EACCES:
            raise UserError(f"no permission to listen on port {port} on {host}") from None
        if e.errno == errno.EADDRNOTAVAIL:
            raise UserError(f"{host} is not an address of this machine") from None
        raise UserError(f"cannot listen on {host} port {port}: {e.strerror}") from None


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_unspecified
    except ValueError:
        return False
