"""sd_notify: messages to a real AF_UNIX datagram socket, and the watchdog's timing."""

import os
import socket

import pytest

from hardware.clock import VirtualClock
from referee.errors import UserError
from referee.live.sd_notify import (
    Notifier,
    NotifyError,
    Watchdog,
    message,
    socket_address,
    watchdog_interval_us,
)


@pytest.fixture
def listener(tmp_path):
    """A datagram socket bound at a path, as systemd's notify socket is, and its $NOTIFY_SOCKET."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        path = str(tmp_path / "notify")
        sock.bind(path)
        yield sock, path


def received(sock):
    """The datagrams already queued (a datagram send is complete when sendto returns)."""
    got = []
    while True:
        try:
            got.append(sock.recv(4096, socket.MSG_DONTWAIT).decode())
        except BlockingIOError:
            return got


def test_each_message_arrives_as_one_datagram_of_key_value_lines(listener):
    sock, path = listener
    notifier = Notifier.from_env({"NOTIFY_SOCKET": path})
    assert notifier.ready("watching the pile")
    assert notifier.status("Ann to lay")
    assert notifier.watchdog()
    assert notifier.stopping()
    assert received(sock) == [
        "READY=1\nSTATUS=watching the pile\n",
        "STATUS=Ann to lay\n",
        "WATCHDOG=1\n",
        "STOPPING=1\n",
    ]


def test_an_abstract_socket_is_written_with_a_leading_at(tmp_path):
    name = f"referee-test-{os.getpid()}-{tmp_path.name}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(b"\0" + name.encode())
        assert Notifier.from_env({"NOTIFY_SOCKET": "@" + name}).ready()
        assert received(sock) == ["READY=1\n"]


def test_a_newline_in_a_status_cannot_start_a_field_of_its_own():
    assert message(STATUS="camera lost\nREADY=1") == b"STATUS=camera lost READY=1\n"


@pytest.mark.parametrize("env", [{}, {"NOTIFY_SOCKET": ""}])
def test_outside_systemd_nothing_is_sent_and_nothing_fails(env):
    notifier = Notifier.from_env(env)
    assert not notifier.enabled
    assert not notifier.ready()
    assert not notifier.watchdog()


def test_a_socket_nobody_listens_on_drops_the_message_without_an_error(tmp_path):
    assert not Notifier.from_env({"NOTIFY_SOCKET": str(tmp_path / "gone")}).ready()


@pytest.mark.parametrize(
    "value, why",
    [
        ("run/systemd/notify", "absolute path or an abstract @name"),
        ("notify", "absolute path or an abstract @name"),
        ("/" + "x" * 107, "longer than a socket address can be"),
    ],
)
def test_a_malformed_notify_socket_is_a_one_line_user_error(value, why):
    with pytest.raises(NotifyError, match=why) as caught:
        Notifier.from_env({"NOTIFY_SOCKET": value})
    assert isinstance(caught.value, UserError)
    assert "\n" not in str(caught.value)


def test_the_longest_path_a_socket_address_holds_is_accepted():
    assert socket_address("/" + "x" * 106) == "/" + "x" * 106


def test_the_watchdog_interval_is_for_this_process_only():
    assert watchdog_interval_us({}, pid=42) is None
    assert watchdog_interval_us({"WATCHDOG_USEC": "10000000"}, pid=42) == 10_000_000
    assert watchdog_interval_us({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "42"}, pid=42) == 10_000_000
    assert watchdog_interval_us({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "41"}, pid=42) is None


@pytest.mark.parametrize(
    "env, name",
    [
        ({"WATCHDOG_USEC": "ten"}, "WATCHDOG_USEC"),
        ({"WATCHDOG_USEC": "0"}, "WATCHDOG_USEC"),
        ({"WATCHDOG_USEC": "-5"}, "WATCHDOG_USEC"),
        ({"WATCHDOG_USEC": "1.5"}, "WATCHDOG_USEC"),
        ({"WATCHDOG_USEC": "²"}, "WATCHDOG_USEC"),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "me"}, "WATCHDOG_PID"),
    ],
)
def test_a_malformed_watchdog_variable_is_a_one_line_user_error(env, name):
    with pytest.raises(NotifyError, match=f"^{name}="):
        watchdog_interval_us(env, pid=42)


def test_no_watchdog_when_systemd_set_none():
    assert Watchdog.from_env(Notifier(None), env={}, pid=42) is None
    other = {"WATCHDOG_USEC": "1000", "WATCHDOG_PID": "7"}
    assert Watchdog.from_env(Notifier(None), env=other, pid=42) is None


def test_the_watchdog_pings_at_once_then_every_half_interval(listener):
    sock, path = listener
    clock = VirtualClock(5_000_000)
    env = {"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "42"}
    watchdog = Watchdog.from_env(Notifier(path), env=env, pid=42, clock=clock)
    assert watchdog is not None and watchdog.period_us == 5_000_000
    assert watchdog.due_in_us() == 0
    assert watchdog.tick()
    clock.advance(4_999_999)
    assert watchdog.due_in_us() == 1
    assert not watchdog.tick()
    clock.advance(1)
    assert watchdog.tick()
    assert watchdog.due_in_us() == 5_000_000
    assert received(sock) == ["WATCHDOG=1\n", "WATCHDOG=1\n"]


def test_a_late_tick_pings_at_once_and_counts_the_period_from_then(listener):
    sock, path = listener
    clock = VirtualClock(0)
    watchdog = Watchdog(Notifier(path), 2_000_000, clock)
    watchdog.tick()
    clock.advance(3_500_000)
    assert watchdog.due_in_us() == 0
    assert watchdog.tick()
    clock.advance(999_999)
    assert not watchdog.tick()
    assert received(sock) == ["WATCHDOG=1\n", "WATCHDOG=1\n"]
