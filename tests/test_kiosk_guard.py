"""Nothing let in (issue 19): request bodies capped before they are read, the Host header
checked, the page never framed, player names limited, the token in its documented forms
only, `::` serving both stacks, and connections capped per client with one log line."""

from __future__ import annotations

import asyncio
import logging
import socket

import httpx2
import pytest
from starlette.testclient import TestClient

from referee.kiosk.app import MAX_BODY, make_app
from referee.kiosk.guard import CSP, ConnectionLimits, host_allowed, host_name, machine_names
from referee.kiosk.server import FIRST_REQUEST_S, KioskServer, bind

from .test_kiosk import TOKEN, FakeTable, bearer, race_hub

NAMES = frozenset({"localhost", "referee.lan"})
ONLY = ": letters, digits, signs and spaces only"


@pytest.fixture
def table():
    return FakeTable()


@pytest.fixture
def client(table):
    hub, _ = race_hub()
    with TestClient(make_app(hub, TOKEN, table, names=["referee.lan"])) as client:
        yield client


@pytest.fixture
def server(table):
    hub, _ = race_hub()
    server = KioskServer(make_app(hub, TOKEN, table), hub, port=0, per_client=4, first_request_s=0.5)
    server.start()
    yield server
    server.stop()


# Bodies ---------------------------------------------------------------------------------


def run_asgi(app, headers: list[tuple[bytes, bytes]], chunks: int, chunk: bytes = b"x" * 16384):
    """POST /api/admin/new-game to `app` with a body of `chunks` pieces; how many pieces the
    app pulled, and the status it answered."""
    pulled = 0
    status: list[int] = []

    async def receive():
        nonlocal pulled
        if pulled >= chunks:
            return {"type": "http.disconnect"}
        pulled += 1
        return {"type": "http.request", "body": chunk, "more_body": pulled < chunks}

    async def send(message):
        if message["type"] == "http.response.start":
            status.append(message["status"])

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/admin/new-game",
        "raw_path": b"/api/admin/new-game",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8080"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }
    asyncio.run(app(scope, receive, send))
    return pulled, status[0]


def test_a_streamed_body_is_read_no_further_than_the_cap(table):
    hub, _ = race_hub()
    app = make_app(hub, TOKEN, table)
    form = [(b"content-type", b"application/x-www-form-urlencoded")]
    pulled, status = run_asgi(app, form, chunks=2000)  # 32 MB offered, no Content-Length
    assert status == 413
    assert pulled * 16384 <= MAX_BODY + 16384  # it stopped at the cap, not at the end
    assert table.calls == []


def test_a_declared_big_body_is_refused_before_a_byte_is_read(table):
    hub, _ = race_hub()
    app = make_app(hub, TOKEN, table)
    pulled, status = run_asgi(app, [(b"content-length", b"1500000000")], chunks=2000)
    assert (pulled, status) == (0, 413)


def test_a_wrong_bearer_token_is_refused_before_the_body_is_read(table):
    hub, _ = race_hub()
    app = make_app(hub, TOKEN, table)
    pulled, status = run_asgi(app, [(b"authorization", b"Bearer " + b"x" * 32)], chunks=2000)
    assert (pulled, status) == (0, 403)


def test_an_unauthenticated_gigabyte_post_gets_a_413_from_the_real_server(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(
            b"POST /api/admin/new-game HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1500000000\r\n\r\n" + b"[" * 4096
        )
        answer = s.recv(4096)  # waits for the answer: before the cap, the server waited for 1.5 GB
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_json_nested_thousands_deep_is_a_400(client):
    body = "[" * 30000 + "]" * 30000
    answer = client.post(
        "/api/admin/names", content=body, headers={**bearer(), "Content-Type": "application/json"}
    )
    assert answer.status_code == 400 and answer.json() == {"error": "send a JSON object or a form"}


# The token's forms ------------------------------------------------------------------------


def test_the_token_is_taken_from_the_header_or_a_form_not_a_json_body(client, table):
    assert client.post("/api/admin/undo", json={"token": TOKEN}).status_code == 401
    assert client.post("/api/admin/undo", data={"token": TOKEN}).status_code == 200
    assert client.post("/api/admin/undo", json={}, headers=bearer()).status_code == 200
    assert [c for c, _ in table.calls] == ["undo_last", "undo_last"]


# Names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("A" * 30_000, "a player's name is at most 32 characters, not 30000"),
        (
            "An\x00n",
            "a player's name holds U+0000 (a control character): letters, digits, signs and spaces only",
        ),
        (
            "Bob\u202eevil",
            "a player's name holds U+202E (RIGHT-TO-LEFT OVERRIDE): letters, digits, signs and spaces only",
        ),
        (
            "Cy\nDi",
            "a player's name holds U+000A (a control character): letters, digits, signs and spaces only",
        ),
    ],
    ids=["30KB", "NUL", "U+202E", "newline"],
)
def test_a_name_too_long_or_not_printable_is_a_400_in_one_line(client, table, name, error):
    answer = client.post("/api/admin/names", json={"names": ["Ann", name]}, headers=bearer())
    assert answer.status_code == 400 and answer.json() == {"error": error}
    assert table.calls == []


def test_names_in_other_scripts_and_with_spaces_are_fine(client, table):
    names = ["Zoë", "José María", "李雷", "O'Brien-Smith"]
    answer = client.post("/api/admin/names", json={"names": names}, headers=bearer())
    assert answer.status_code == 200 and table.calls == [("set_names", names)]


# The Host header and the security headers --------------------------------------------------


@pytest.mark.parametrize(
    ("header", "local", "allowed"),
    [
        ("127.0.0.1:8080", "127.0.0.1", True),
        ("localhost:8080", "127.0.0.1", True),
        ("[::1]:8080", "::1", True),
        ("192.168.1.20:8080", "192.168.1.20", True),  # a phone that typed the Pi's address
        ("192.168.1.20:8080", "::ffff:192.168.1.20", True),  # the same through a dual-stack socket
        ("[fe80::5]:8080", "fe80::5%eth0", True),
        ("192.168.1.21:8080", "192.168.1.20", False),  # another machine's address
        ("referee.lan:8080", "192.168.1.20", True),  # a name the config allows
        ("REFEREE.LAN.", "192.168.1.20", True),
        ("attacker.example", "192.168.1.20", False),  # DNS rebinding
        ("attacker.example:8080", "127.0.0.1", False),
        ("", "127.0.0.1", False),
        (None, "127.0.0.1", False),
        ("[::1", "::1", False),
    ],
)
def test_which_host_headers_are_this_servers(header, local, allowed):
    assert host_allowed(header, local, NAMES) is allowed


def test_a_host_name_is_read_without_port_brackets_or_case():
    assert [host_name(h) for h in ("Pi.Local:80", "[::1]:8080", "::1", "a.b.")] == [
        "pi.local",
        "::1",
        "::1",
        "a.b",
    ]


def test_another_sites_host_is_refused_and_the_machines_own_names_are_not(client, table):
    refused = client.post("/api/admin/undo", data={"token": TOKEN}, headers={"Host": "attacker.example"})
    assert refused.status_code == 400 and "attacker.example" in refused.json()["error"]
    assert client.get("/api/state", headers={"Host": "attacker.example:8080"}).status_code == 400
    assert table.calls == []
    for name in [*machine_names(), "referee.lan"]:
        assert client.get("/api/state", headers={"Host": f"{name}:8080"}).status_code == 200, name


def test_the_real_server_checks_the_host_it_is_reached_by(server):
    url = f"http://127.0.0.1:{server.port}"
    with httpx2.Client(timeout=10) as http:
        assert http.get(f"{url}/api/state").status_code == 200
        assert http.get(f"{url}/api/admin/token").json() == {"token": TOKEN}
        stolen = http.get(f"{url}/api/admin/token", headers={"Host": "attacker.example"})
        assert stolen.status_code == 400 and "token" not in stolen.json()


@pytest.mark.parametrize("path", ["/", "/api/state", "/static/kiosk.js", "/api/admin/token", "/nowhere"])
def test_every_answer_forbids_framing_and_other_origins(client, path):
    answer = client.get(path)
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["content-security-policy"] == CSP
    assert "frame-ancestors 'none'" in CSP and "script-src 'self'" in CSP
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_a_refused_host_gets_the_security_headers_too(client):
    answer = client.get("/", headers={"Host": "attacker.example"})
    assert answer.status_code == 400 and answer.headers["x-frame-options"] == "DENY"


# Both stacks ----------------------------------------------------------------------------------


def _ipv6_works() -> bool:
    try:
        with socket.create_server(("::1", 0), family=socket.AF_INET6):
            return socket.has_dualstack_ipv6()
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_works(), reason="this machine has no IPv6 (or no dual-stack sockets)")
def test_listening_on_the_ipv6_any_address_serves_ipv4_too():
    listener = bind("::", 0)
    port = listener.getsockname()[1]
    try:
        for address in ("127.0.0.1", "::1"):
            with socket.create_connection((address, port), timeout=10):
                pass
    finally:
        listener.close()


@pytest.mark.skipif(not _ipv6_works(), reason="this machine has no IPv6 (or no dual-stack sockets)")
def test_the_kiosk_on_both_stacks_answers_ipv4_and_ipv6_clients(table):
    hub, _ = race_hub()
    server = KioskServer(make_app(hub, TOKEN, table), hub, host="::", port=0)
    server.start()
    try:
        with httpx2.Client(timeout=10) as http:
            for url in (f"http://127.0.0.1:{server.port}", f"http://[::1]:{server.port}"):
                assert http.get(f"{url}/api/state").status_code == 200
                assert http.get(f"{url}/api/admin/token").status_code == 200  # both are loopback
    finally:
        server.stop()


# Connections ---------------------------------------------------------------------------------


def test_the_limits_count_per_client_and_in_all_and_log_one_line_per_incident(caplog):
    limits = ConnectionLimits(per_client=2, total=3)
    with caplog.at_level(logging.WARNING, logger="referee.kiosk.guard"):
        assert [limits.admit("a") for _ in range(5)] == [True, True, False, False, False]
        assert limits.admit("b") and not limits.admit("c")  # the total is reached
        limits.release("a")
        assert limits.admit("c")
        limits.release("a")
        limits.release("c")
        limits.release("b")
        limits.release("b")  # one too many: ignored
    assert limits.open_count() == 0
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "kiosk: refusing new connections from a: 2 connections open (at most 2 a client)",
        "kiosk: refusing new connections from c: the server has 3 connections open, its most",
        "kiosk: a has closed its connections; 3 were refused",
        "kiosk: c has closed its connections; 1 were refused",
    ]


def _answer(s: socket.socket) -> bytes:
    try:
        s.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return s.recv(64)
    except OSError:  # reset: closed by the server as it came
        return b""


def test_one_client_past_its_share_is_closed_at_once_with_one_log_line(server, caplog):
    with caplog.at_level(logging.WARNING):
        sockets = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(12)]
        try:
            answers = [_answer(s) for s in sockets]
        finally:
            for s in sockets:
                s.close()
        served = [a for a in answers if a.startswith(b"HTTP/1.1 200")]
        assert len(served) == 4 and answers.count(b"") == 8
    refusals = [r for r in caplog.records if "refusing" in r.getMessage()]
    assert len(refusals) == 1 and all(r.exc_info is None for r in caplog.records)


def test_a_connection_that_sends_nothing_is_closed(server):
    # The server's own first_request_s (0.5 s), not the default: the socket gives up long
    # before the default's 20 s (the server once ignored its parameter).
    assert server.first_request_s <= FIRST_REQUEST_S / 20
    with socket.create_connection(("127.0.0.1", server.port), timeout=FIRST_REQUEST_S / 2) as s:
        assert s.recv(64) == b""  # closed by the server after first_request_s, not held forever
