"""The kiosk's web app and server: the read-only state, the event stream, the admin endpoints
behind the token, the hub's hand-off between threads, and one-line errors for a busy port."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path

import httpx2
import pytest
from starlette.testclient import TestClient

from referee.errors import UserError
from referee.kiosk.app import KioskHub, make_app
from referee.kiosk.server import KioskServer, bind
from referee.kiosk.view import TableView
from referee.rules.engine import step
from referee.rules.script import read_script

TOKEN = "k" * 32
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


class FakeTable:
    """The service's side of the admin endpoints, recording what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def new_game(self) -> str:
        self.calls.append(("new_game", None))
        return "new game: Ann, Bob, Cy"

    def set_rules(self, preset: str) -> str:
        if preset != "celtic":
            raise ValueError(f"unknown rules {preset!r} (known: celtic)")
        self.calls.append(("set_rules", preset))
        return f"rules: {preset}"

    def set_names(self, names: list[str]) -> str:
        self.calls.append(("set_names", names))
        return "names: " + ", ".join(names)

    def undo_last(self) -> str:
        self.calls.append(("undo_last", None))
        return "undone: Bob SNAP! takes 3 cards (sandwich)"


def race_hub(events: int = 3) -> tuple[KioskHub, list]:
    """A hub showing the race example after its first `events` events; the rest still to come."""
    items = read_script((EXAMPLES / "race-and-late-press.jsonl").read_text().splitlines(), "race")
    state = next(items)[1]
    hub = KioskHub(TableView(state))
    rest = [event for _, event in items]
    for event in rest[:events]:
        state, rulings = step(state, event)
        for ruling in rulings:
            hub.add(ruling, state)
    return hub, [state, *rest[events:]]


def feed(hub: KioskHub, state, events) -> None:
    for event in events:
        state, rulings = step(state, event)
        for ruling in rulings:
            hub.add(ruling, state)
        hub.update(state)


@pytest.fixture
def table():
    return FakeTable()


@pytest.fixture
def client(table):
    hub, _ = race_hub()
    with TestClient(make_app(hub, TOKEN, table)) as client:
        client.hub = hub
        yield client


def test_the_state_is_read_only_json_with_its_version(client):
    response = client.get("/api/state")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "no-store"
    view = response.json()
    assert view["version"] == client.hub.version
    assert [p["name"] for p in view["players"]] == ["Ann", "Bob", "Cy"]
    assert [c["code"] for c in view["stack"]["top"]] == ["9H", "5C", "9D"]
    assert client.post("/api/state").status_code == 405
    assert client.put("/api/state").status_code == 405


def test_the_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert '<script src="/static/live.js"' in page.text and '<script src="/static/kiosk.js"' in page.text
    assert "listen(draw)" in client.get("/static/kiosk.js").text
    assert "EventSource" in client.get("/static/live.js").text
    assert client.get("/static/kiosk.css").status_code == 200


def test_the_stream_opens_with_the_whole_view(client):
    with client.stream("GET", "/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.iter_lines()
        assert next(lines) == "retry: 1000"
        assert next(lines) == ""
        assert next(lines) == f"id: {client.hub.version}"
        assert next(lines) == "event: view"
        data = next(lines)
    view = json.loads(data.removeprefix("data: "))
    assert view == client.get("/api/state").json()


@pytest.mark.parametrize("path", ["new-game", "rules", "names", "undo"])
def test_every_admin_endpoint_wants_the_token(client, table, path):
    none = client.post(f"/api/admin/{path}", json={"preset": "celtic", "names": ["A", "B"]})
    assert none.status_code == 401 and none.headers["www-authenticate"] == "Bearer"
    assert none.json()["error"].startswith("the admin token is needed")
    wrong = client.post(
        f"/api/admin/{path}", json={"preset": "celtic", "names": ["A", "B"]}, headers=bearer("x" * 32)
    )
    assert wrong.status_code == 403 and wrong.json() == {"error": "wrong admin token"}
    assert client.post(f"/api/admin/{path}", headers={"Authorization": "Basic " + TOKEN}).status_code == 401
    assert table.calls == []
    assert client.get(f"/api/admin/{path}").status_code == 405


def test_with_the_token_the_commands_reach_the_table(client, table):
    answers = [
        client.post("/api/admin/new-game", headers=bearer()),
        client.post("/api/admin/rules", json={"preset": " celtic "}, headers=bearer()),
        client.post("/api/admin/names", json={"names": ["Ann", " Bob ", "Cy"]}, headers=bearer()),
        client.post("/api/admin/undo", headers=bearer()),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 200]
    assert answers[0].json() == {"ok": True, "message": "new game: Ann, Bob, Cy"}
    assert table.calls == [
        ("new_game", None),
        ("set_rules", "celtic"),
        ("set_names", ["Ann", "Bob", "Cy"]),
        ("undo_last", None),
    ]


def test_a_form_may_carry_the_token_and_names_separated_by_commas(client, table):
    answer = client.post("/api/admin/names", data={"token": TOKEN, "names": "Ann, Bob,Cy"})
    assert answer.status_code == 200
    assert table.calls == [("set_names", ["Ann", "Bob", "Cy"])]
    assert client.post("/api/admin/undo", data={"token": "wrong" * 8}).status_code == 403


@pytest.mark.parametrize(
    ("path", "body", "error"),
    [
        ("rules", {"preset": "classic"}, "unknown rules 'classic' (known: celtic)"),
        ("rules", {}, "give 'preset' as text"),
        ("names", {"names": ["Ann", " "]}, "a player's name cannot be empty"),
        ("names", {"names": [1, 2]}, "give 'names' as a list of player names"),
    ],
)
def test_a_refused_command_is_a_400_with_its_reason(client, path, body, error):
    answer = client.post(f"/api/admin/{path}", json=body, headers=bearer())
    assert answer.status_code == 400 and answer.json() == {"error": error}


def test_a_body_that_is_not_a_json_object_is_a_400(client, table):
    answer = client.post(
        "/api/admin/undo", content=b"[1, 2", headers={**bearer(), "Content-Type": "application/json"}
    )
    assert answer.status_code == 400 and answer.json() == {"error": "send a JSON object or a form"}
    plain = client.post(
        "/api/admin/undo", content=b"undo", headers={**bearer(), "Content-Type": "text/plain"}
    )
    assert plain.status_code == 400
    assert table.calls == []


def test_a_kiosk_without_commands_answers_503_to_the_host():
    hub, _ = race_hub()
    with TestClient(make_app(hub, TOKEN)) as client:
        assert client.post("/api/admin/undo", headers=bearer()).status_code == 503
        assert client.post("/api/admin/undo").status_code == 401


def test_the_token_is_shown_to_the_pis_own_screen_only():
    hub, _ = race_hub()
    app = make_app(hub, TOKEN)
    for address, allowed in [
        ("127.0.0.1", True),
        ("::1", True),
        ("192.168.1.20", False),
        ("testclient", False),
    ]:
        with TestClient(app, client=(address, 50000)) as client:
            answer = client.get("/api/admin/token")
        assert (answer.status_code, answer.json().get("token")) == ((200, TOKEN) if allowed else (403, None))


def test_the_hub_wakes_the_servers_loop_from_another_thread():
    hub, (state, *rest) = race_hub()

    async def main() -> tuple[bool, bool, int]:
        hub.attach(asyncio.get_running_loop())
        seen = hub.version
        quiet = await hub.wait_after(seen, 0.01)  # nothing changed: it times out
        table = threading.Thread(target=feed, args=(hub, state, rest[:3]))
        table.start()
        woken = await hub.wait_after(seen, 10)
        table.join()
        return quiet, woken, seen

    quiet, woken, seen = asyncio.run(main())
    assert (quiet, woken) == (False, True)
    assert hub.version > seen
    _, body = hub.snapshot()
    assert json.loads(body)["last"]["text"] == "Bob SNAP! takes 3 cards (sandwich) — beats Ann by 12.4 ms"
    assert hub.snapshot()[1] is body  # built once per version


def test_closing_the_hub_ends_the_waits():
    hub, _ = race_hub()

    async def main() -> bool:
        hub.attach(asyncio.get_running_loop())
        threading.Thread(target=hub.close).start()
        return await hub.wait_after(hub.version, 10)

    assert asyncio.run(main()) is True and hub.closed


def test_a_stream_sends_the_last_view_before_it_ends_on_close():
    from referee.kiosk.app import event_stream

    hub, (state, *rest) = race_hub()

    async def main() -> list[bytes]:
        hub.attach(asyncio.get_running_loop())
        stream = event_stream(hub)
        sent = [await anext(stream), await anext(stream)]  # retry:, then the view at connect
        feed(hub, state, rest[:3])  # a change, and the server stopping, before the stream runs
        hub.close()
        return sent + [chunk async for chunk in stream]

    retry, first, *after = asyncio.run(main())
    assert retry.startswith(b"retry:") and first.startswith(b"id: 4\n")
    assert len(after) == 1 and after[0].startswith(b"id: %d\nevent: view\n" % hub.version)
    assert b"beats Ann by 12.4 ms" in after[0]


# The real server -----------------------------------------------------------------------


@pytest.fixture
def server():
    hub, rest = race_hub()
    server = KioskServer(make_app(hub, TOKEN), hub, port=0)
    server.start()
    server.rest = rest
    yield server
    server.stop()


def test_the_server_serves_on_a_free_port_and_streams_changes(server):
    assert server.port > 0 and server.url == f"http://127.0.0.1:{server.port}/"
    with httpx2.Client(base_url=server.url, timeout=10) as http:
        assert http.get("/api/state").json()["version"] == server.hub.version
        assert http.get("/api/admin/token").json() == {"token": TOKEN}  # the test is a loopback client
        with http.stream("GET", "/events") as response:
            events = sse_views(response.iter_lines())
            first = next(events)
            state, *rest = server.rest
            feeder = threading.Thread(target=feed, args=(server.hub, state, rest[:3]))
            feeder.start()
            later = next(events)
            while "beats" not in (later["last"] or {}).get("text", ""):
                later = next(events)
            assert later["version"] > first["version"]
            assert later["players"][1]["cards"] == 19  # 17 dealt, 5C laid, 3 won
            feeder.join()  # every view fed, then read up to the last: nothing is left to send
            while later["version"] != server.hub.version:
                later = next(events)
            server.stop()  # ends the stream
            assert list(events) == []


def test_a_port_in_use_is_one_line():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        hub, _ = race_hub()
        server = KioskServer(make_app(hub, TOKEN), hub, port=port)
        with pytest.raises(UserError) as caught:
            server.start()
    assert str(caught.value) == f"port {port} on 127.0.0.1 is in use"


@pytest.mark.parametrize(
    ("host", "port", "message"),
    [
        ("127.0.0.1", 70000, "the port must be 0 to 65535, not 70000"),
        ("no-such-host.invalid", 0, "cannot listen on 'no-such-host.invalid': no such host"),
        ("192.0.2.1", 0, "192.0.2.1 is not an address of this machine"),
    ],
)
def test_other_binding_mistakes_are_one_line(host, port, message):
    with pytest.raises(UserError) as caught:
        bind(host, port)
    assert str(caught.value) == message


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def sse_views(lines):
    """The views in an event stream's lines."""
    for line in lines:
        if line.startswith("data: "):
            yield json.loads(line.removeprefix("data: "))
