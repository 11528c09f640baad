"""The kiosk's web server: uvicorn in a background thread, on a socket bound up front.

Binding the socket ourselves, before uvicorn starts, turns a port in use into a
one-line `UserError` at `start()`, and lets port 0 pick a free port (tests).
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
from typing import Any

import uvicorn

from .errors import UserError
from .kiosk import LiveHub

log = logging.getLogger(__name__)

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8080
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0


class KioskServer:
    """Serves `app` on `host`:`port` from a daemon thread: `start()`, then `stop()`."""

    def __init__(self, app: Any, hub: LiveHub, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
        self.app = app
        self.hub = hub
        self.host = host
        self.port = port
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
    try:
        return socket.create_server(address, family=family, backlog=128)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UserError(f"port {port} on {host} is in use") from None
        if e.errno == errno.EACCES:
            raise UserError(f"no permission to listen on port {port} on {host}") from None
        if e.errno == errno.EADDRNOTAVAIL:
            raise UserError(f"{host} is not an address of this machine") from None
        raise UserError(f"cannot listen on {host} port {port}: {e.strerror}") from None
