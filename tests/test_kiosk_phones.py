"""Phones on the local network: the phones' address and its QR code, the token never sent to
a viewer, host commands refused from other sites, slow viewers coalesced, `--listen` and the
config's `[kiosk]` section; the announcer's tones in the view for the page's sound."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from referee.kiosk.app import LiveHub, make_app
from referee.kiosk.phones import cross_site, watch_url
from referee.kiosk.server import KioskServer
from referee.kiosk.sound import notes_of, query_sound, ruling_sound, sound_default
from referee.live.config import ConfigError, load_config
from referee.rules.rulings import GameWon, Laid, Penalty, SnapIgnored, StackWon

from .test_kiosk import TOKEN, FakeTable, bearer, race_hub

PHONE = ("192.168.1.30", 50000)  # a viewer on the LAN: not the Pi's own screen
WATCH = "http://192.168.1.20:8080/"


# The phones' address ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "lan", "url"),
    [
        ("127.0.0.1", "192.168.1.20", None),  # this machine only: phones cannot reach it
        ("::1", "192.168.1.20", None),
        ("localhost", "192.168.1.20", None),
        ("0.0.0.0", "192.168.1.20", "http://192.168.1.20:8080/"),  # every address: the LAN's
        ("::", "192.168.1.20", "http://192.168.1.20:8080/"),
        ("0.0.0.0", None, None),  # no network to be found on
        ("192.168.1.20", None, "http://192.168.1.20:8080/"),  # one address: that one
        ("fd00::20", None, "http://[fd00::20]:8080/"),
        ("referee.lan", None, "http://referee.lan:8080/"),
    ],
)
def test_the_phones_address_follows_where_the_server_listens(host, lan, url):
    assert watch_url(host, 8080, lan) == url


@pytest.mark.parametrize(
    ("method", "headers", "refused"),
    [
        ("POST", {"host": "pi:8080", "origin": "http://evil.example", "sec-fetch-site": "cross-site"}, True),
        ("POST", {"host": "pi:8080", "origin": "http://evil.example"}, True),  # an older browser
        ("POST", {"host": "pi:8080", "sec-fetch-site": "same-site"}, True),  # another port, say
        ("POST", {"host": "pi:8080", "origin": "null"}, True),  # a sandboxed frame, a file
        ("POST", {"host": "pi:8080", "origin": "http://pi:8081"}, True),
        ("POST", {"host": "pi:8080", "origin": "http://pi:8080", "sec-fetch-site": "same-origin"}, False),
        ("POST", {"host": "pi:8080"}, False),  # a script (curl): the token alone guards it
        ("GET", {"host": "pi:8080", "origin": "http://evil.example", "sec-fetch-site": "cross-site"}, False),
    ],
)
def test_a_request_from_another_site_is_told_apart(method, headers, refused):
    assert (cross_site(method, headers) is not None) is refused


# The token never reaches a viewer ------------------------------------------------------


def _every_answer(client: TestClient) -> list[Any]:
    """An answer to every route the kiosk serves, as a phone would ask, the admin endpoints too."""
    answers = [
        client.get(path)
        for path in (
            "/",
            "/api/state",
            "/api/screen",
            "/api/watch.svg",
            "/api/house-rules",
            "/api/admin/token",
            "/api/question/1000.jpg",
            "/api/question/x.jpg",
            "/static/kiosk.js",
            "/static/phones.js",
            "/static/live.js",
            "/static/kiosk.css",
            "/no-such-page",
        )
    ]
    for path in ("new-game", "rules", "names", "undo", "name-card", "house-rules"):
        answers.append(client.post(f"/api/admin/{path}", json={}))
        answers.append(client.post(f"/api/admin/{path}", json={}, headers=bearer("w" * 32)))
        answers.append(
            client.post(f"/api/admin/{path}", content=b"{", headers={"content-type": "application/json"})
        )
        answers.append(client.post(f"/api/admin/{path}", json={}, headers={"origin": "http://evil.example"}))
    with client.stream("GET", "/events") as stream:
        lines = stream.iter_lines()
        answers.append(next(line for line in lines if line.startswith("data: ")))
    return answers


def test_no_answer_to_a_viewer_holds_the_token():
    hub, _ = race_hub()
    app = make_app(hub, TOKEN, FakeTable(), watch=WATCH)
    with TestClient(app, client=PHONE) as phone:
        answers = _every_answer(phone)
    assert len(answers) > 30
    for answer in answers:
        if isinstance(answer, str):  # the stream's first view
            assert TOKEN not in answer
            continue
        assert TOKEN not in answer.text, answer.request.url
        assert all(TOKEN not in f"{k}: {v}" for k, v in answer.headers.items()), answer.request.url
    # The same routes asked from the Pi's own screen: the token is there (so the check can fail).
    with TestClient(app, client=("127.0.0.1", 50000)) as screen:
        assert any(not isinstance(a, str) and TOKEN in a.text for a in _every_answer(screen))


def test_the_screen_says_whether_it_is_the_pis_own_its_sound_and_the_phones_address():
    hub, _ = race_hub()
    app = make_app(hub, TOKEN, watch=WATCH, buzzer=False)
    with TestClient(app, client=("127.0.0.1", 50000)) as screen:
        assert screen.get("/api/screen").json() == {"local": True, "sound": True, "watch": WATCH}
    with TestClient(app, client=PHONE) as phone:
        assert phone.get("/api/screen").json() == {"local": False, "sound": False, "watch": WATCH}
    wired = make_app(hub, TOKEN, buzzer=True)
    with TestClient(wired, client=("127.0.0.1", 50000)) as screen:
        assert screen.get("/api/screen").json() == {"local": True, "sound": False, "watch": None}
        qr = screen.get("/api/watch.svg")
        assert qr.status_code == 404 and "this machine only" in qr.json()["error"]
    with pytest.raises(ValueError, match="sound must be one of"):
        make_app(hub, TOKEN, sound="loud")


def test_the_qr_code_is_an_svg_of_the_phones_address():
    hub, _ = race_hub()
    url = {"now": WATCH}
    with TestClient(make_app(hub, TOKEN, watch=lambda: url["now"]), client=PHONE) as phone:
        answer = phone.get("/api/watch.svg")
        assert answer.status_code == 200 and answer.headers["content-type"] == "image/svg+xml"
        assert answer.text.startswith("<svg") and f"<title>{WATCH}</title>" in answer.text
        url["now"] = "http://192.168.1.21:8080/"  # the server's address once bound (port 0)
        assert "192.168.1.21" in phone.get("/api/watch.svg").text


def test_the_sound_plays_by_default_where_no_buzzer_is_heard():
    assert sound_default("auto", local=True, buzzer=False)  # the demo, a Pi with no buzzer
    assert not sound_default("auto", local=True, buzzer=True)  # the buzzer says it already
    assert not sound_default("auto", local=False, buzzer=False)  # a phone: its owner turns it on
    assert sound_default("on", local=False, buzzer=True)
    assert not sound_default("off", local=True, buzzer=False)


# Host commands from another site -------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example", "sec-fetch-site": "cross-site"},
        {"origin": "http://evil.example"},
        {"sec-fetch-site": "cross-site"},
    ],
)
def test_a_forged_cross_site_command_is_a_403_and_changes_nothing(headers):
    hub, _ = race_hub()
    table = FakeTable()
    with TestClient(make_app(hub, TOKEN, table), client=PHONE) as client:
        before = client.get("/api/state").json()
        # Even with the right token (a form's field, which a page on another site could fill in).
        for path, body in [("new-game", {}), ("names", {"names": "Eve, Mallory"}), ("undo", {})]:
            answer = client.post(f"/api/admin/{path}", data={"token": TOKEN, **body}, headers=headers)
            assert answer.status_code == 403
            assert "another site" in answer.json()["error"] and "\n" not in answer.json()["error"]
        assert table.calls == []
        assert client.get("/api/state").json() == before
        # The page's own request, from the same origin, goes through.
        same = {"origin": "http://testserver", "sec-fetch-site": "same-origin", **bearer()}
        assert client.post("/api/admin/undo", headers=same).status_code == 200
        assert table.calls == [("undo_last", None)]


# Slow viewers --------------------------------------------------------------------------


class BigHub(LiveHub):
    """A hub whose every view is about 64 KB, changed from the test's thread."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def bump(self) -> None:
        def change() -> None:
            self.n += 1

        self._change(change)

    def _view(self) -> dict[str, Any]:
        return {"n": self.n, "pad": "x" * 64_000}


def test_a_viewer_that_stops_reading_gets_the_newest_view_not_a_queue():
    """A phone that stops reading (asleep, out of range) holds at most the socket's buffers and
    one view: the views it missed are skipped, not queued. 400 views of 64 KB (26 MB) are made
    while it reads nothing; when it reads again it gets far fewer bytes, and the newest view."""
    hub = BigHub()
    server = KioskServer(_app(hub), hub, port=0)
    server.start()
    try:
        with socket.socket() as phone:
            phone.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window, as a slow phone's
            phone.connect(("127.0.0.1", server.port))
            phone.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            first = phone.recv(1024)  # the answer has begun: the stream is open
            assert first.startswith(b"HTTP/1.1 200")
            views = 400
            for _ in range(views):
                hub.bump()
            newest = hub.version
            got = bytearray(first)
            while f"id: {newest}\n".encode() not in got[-80_000:]:
                chunk = phone.recv(1 << 16)
                assert chunk, "the stream ended early"
                got += chunk
            sent = views * 64_000
            assert len(got) < sent / 4, f"{len(got)} bytes of {sent} made: views were queued"
            assert got.count(b"event: view") < views / 4
    finally:
        server.stop()


def _app(hub: LiveHub) -> Any:
    """The live page's routes for `hub`, attached to the server's loop as `make_app` does."""
    import asyncio
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette

    from referee.kiosk.app import live_page_routes

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        hub.attach(asyncio.get_running_loop())
        yield

    return Starlette(routes=live_page_routes(hub, "index.html", "/", "/s"), lifespan=lifespan)


# The announcer's tones in the view -----------------------------------------------------


def test_a_rulings_tones_are_the_buzzers_notes():
    assert ruling_sound(Penalty(0, 1, "wrong_snap"), 3) == (1, [(220, 300)])
    assert ruling_sound(StackWon(0, 1, "snap", ("pair",), 5, 12_000, 1), 3) == (
        1,
        [(880, 60), (1175, 60), (1568, 60)],
    )
    assert ruling_sound(StackWon(0, 1, "counting_out", (), 5, None, 1), 3) == (1, [(1319, 120), (988, 240)])
    assert ruling_sound(SnapIgnored(0, 1, "dead_heat"), 3) == (0, [(2000, 15), (None, 45), (2000, 15)])
    assert ruling_sound(GameWon(0, 1), 3) == (2, [(1047, 150), (1319, 150), (1568, 150), (2093, 450)])
    assert ruling_sound(SnapIgnored(0, 1, "penalised"), 3) is None  # the seat's light blinks already
    assert ruling_sound(Laid(0, 1, None, 2, None, 2), 3) is None
    assert query_sound() == (1, [(660, 90), (None, 40), (990, 140)])
    assert notes_of([]) == []


def test_the_view_carries_the_last_few_tones_each_once():
    hub, _ = race_hub()
    assert json.loads(hub.snapshot()[1])["sounds"] == []
    hub.add(Penalty(2_000_000, 1, "wrong_snap"))
    sounds = json.loads(hub.snapshot()[1])["sounds"]
    assert sounds == [{"seq": 1, "prio": 1, "notes": [[220, 300]]}]
    for _ in range(5):
        hub.add(SnapIgnored(2_000_000, 0, "late"))
    sounds = json.loads(hub.snapshot()[1])["sounds"]
    assert [s["seq"] for s in sounds] == [3, 4, 5, 6] and sounds[-1]["notes"] == [[2000, 15]]


# Where it listens ----------------------------------------------------------------------


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "referee.toml"
    path.write_text('[table]\nplayers = ["Ann", "Bob"]\n[hardware]\npins = "mock"\n' + text)
    return path


def test_the_kiosk_section_says_where_it_listens_and_its_sound(tmp_path):
    config = load_config(_config(tmp_path, '[kiosk]\nlisten = "0.0.0.0"\nsound = "on"\n'))
    assert (config.kiosk_host, config.kiosk_sound) == ("0.0.0.0", "on")
    config = load_config(_config(tmp_path, ""))
    assert (config.kiosk_host, config.kiosk_sound) == ("127.0.0.1", "auto")  # this machine only
    older = load_config(_config(tmp_path, '[service]\nkiosk_host = "::"\n'))
    assert older.kiosk_host == "::"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[kiosk]\nlisten = ""\n', "kiosk.listen: must be an address to listen on"),
        ("[kiosk]\nlisten = 8080\n", "kiosk.listen: must be an address to listen on"),
        ('[kiosk]\nsound = "loud"\n', 'kiosk.sound: must be "auto", "on" or "off", not "loud"'),
        ("[kiosk]\nport = 8080\n", "kiosk.port: unknown key (known: listen, sound)"),
        ('[service]\nkiosk_host = "::"\n[kiosk]\nlisten = "0.0.0.0"\n', "keep one"),
    ],
)
def test_a_kiosk_section_mistake_is_one_line(tmp_path, text, message):
    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path, text))
    assert message in str(e.value) and "\n" not in str(e.value) and "referee.toml" in str(e.value)


def test_run_and_demo_take_listen(tmp_path):
    from referee.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["run", "--config", "x", "--listen", "0.0.0.0"]).host == "0.0.0.0"
    assert parser.parse_args(["run", "--config", "x", "--host", "::"]).host == "::"  # the older name
    assert parser.parse_args(["demo", "--listen", "0.0.0.0"]).listen == "0.0.0.0"
    assert parser.parse_args(["demo"]).listen == "127.0.0.1"


def test_the_demo_serves_phones_when_it_listens_on_every_address(tmp_path, capsys):
    """`referee demo --listen 0.0.0.0`: the page answers on the machine's addresses, and says the
    phones' address (here: the loopback address stands in for the LAN's, no network used)."""
    from referee.cli.main import main

    seen: dict[str, Any] = {}
    real = KioskServer.start

    def start(self: KioskServer) -> None:
        real(self)
        seen["host"] = self.host
        with TestClient(self.app, client=PHONE) as phone:
            seen["screen"] = phone.get("/api/screen").json()

    KioskServer.start = start  # type: ignore[method-assign]
    try:
        code = main(
            [
                "demo",
                "--listen",
                "0.0.0.0",
                "--port",
                "0",
                "--speed",
                "0",
                "--no-camera",
                "--quiet",
                "--seed",
                "3",
                "--data-dir",
                str(tmp_path),
                "--linger",
                "0",
            ]
        )
    finally:
        KioskServer.start = real  # type: ignore[method-assign]
    assert code == 0
    assert seen["host"] == "0.0.0.0"
    assert seen["screen"]["local"] is False
    watch = seen["screen"]["watch"]
    assert watch is None or (watch.startswith("http://") and not watch.startswith("http://0.0.0.0"))
    if watch is not None:
        assert f"Phones on this network: {watch}" in capsys.readouterr().out.replace("\n", "")
