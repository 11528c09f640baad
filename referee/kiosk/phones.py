"""Phones on the local network (docs/kiosk.md, "Phones"): the address they watch at, its QR
code, and the check that keeps other sites' pages from sending host commands.

- `watch_url`: the address a phone opens. A server on a loopback address has none (phones
  cannot reach it); one on a named address, that address; one on every address (`0.0.0.0`,
  `::`), the address of the interface this machine's default route leaves by: the one
  its LAN knows it by. It is found by "connecting" a UDP socket to a documentation
  address (RFC 5737/3849), which sends nothing, and reading the socket's own address.
- `qr_svg`: the address as a QR code (segno), as SVG.
- `cross_site`: why a request that changes something is refused as another site's (its
  `Sec-Fetch-Site` or its `Origin` not this server's), or None. A browser sends these
  headers itself and a page cannot forge them, so another site's page that posts a form
  or a fetch to the kiosk is refused before the token is looked at.
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import socket
from collections.abc import Mapping
from urllib.parse import urlsplit

# Documentation addresses: a UDP "connect" to them picks the outgoing interface and sends nothing.
PROBE_V4, PROBE_V6 = "192.0.2.1", "2001:db8::1"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def lan_address(family: int = socket.AF_INET) -> str | None:
    """This machine's address on the network its default route leads to; None without one."""
    probe = PROBE_V4 if family == socket.AF_INET else PROBE_V6
    with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as s:
        s.connect((probe, 9))
        address = s.getsockname()[0]
        ip = ipaddress.ip_address(address.partition("%")[0])
        if not (ip.is_loopback or ip.is_unspecified or ip.is_link_local):
            return address
    return None


def watch_url(host: str, port: int, lan: str | None = None) -> str | None:
    """The address phones open for a server listening on `host`:`port`; None when phones
    cannot reach it (loopback). `lan`: the machine's LAN address (`lan_address()`), used when
    the server listens on every address."""
    name = host.strip().strip("[]")
    try:
        ip = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        ip = None
    if ip is not None and ip.is_loopback:
        return None
    if ip is not None and ip.is_unspecified:
        if lan is None:
            return None
        name = lan
    if name.lower() == "localhost":
        return None
    shown = f"[{name}]" if ":" in name else name
    return f"http://{shown}:{port}/"


def qr_svg(url: str) -> bytes:
    """`url` as a QR code, SVG, black on white with the quiet zone the standard asks (4 modules)."""
    import segno  # only a kiosk phones can reach draws one

    qr = segno.make(url, error="m")
    out = io.BytesIO()
    qr.save(out, kind="svg", scale=8, border=4, dark="#000", light="#fff", xmldecl=False, title=url)
    return out.getvalue()


def cross_site(method: str, headers: Mapping[str, str]) -> str | None:
    """Why a request that may change something (any method but GET, HEAD, OPTIONS) is another
    site's, or None. `headers`: lower-case names. A request with neither header (a script,
    curl) is not refused here: the admin token still guards it."""
    if method.upper() in SAFE_METHODS:
        return None
    fetch_site = headers.get("sec-fetch-site", "").strip().lower()
    if fetch_site and fetch_site not in ("same-origin", "none"):
        return f"a request from another site (Sec-Fetch-Site: {fetch_site}) cannot command the table"
    origin = headers.get("origin")
    if origin is None:
        return None
    host = headers.get("host", "").strip().lower()
    parts = urlsplit(origin.strip().lower())
    if origin.strip().lower() == "null" or parts.scheme not in ("http", "https") or parts.netloc != host:
        return f"a request from another site (Origin: {origin.strip()[:80]}) cannot command the table"
    return None
