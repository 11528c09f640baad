"""`referee install-service` into a scratch --root, and the units it installs."""

import argparse
import io
import os
import pwd
import tomllib
from pathlib import Path

import pytest

from referee.cli import install_service
from referee.cli.install_service import add_commands, appended, exec_binary, install, read_unit
from referee.errors import UserError
from referee.live.config import load_config

REPO = Path(__file__).resolve().parent.parent
UNITS = REPO / "systemd"
ME = pwd.getpwuid(os.getuid())


def run(*argv: str) -> str:
    parser = argparse.ArgumentParser(prog="referee")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["install-service", *argv])
    out = io.StringIO()
    assert args.run(args, out) == 0
    return out.getvalue()


def files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def autostart(root: Path) -> Path:
    return root / Path(ME.pw_dir).relative_to("/") / ".config/labwc/autostart"


def test_the_packaged_units_are_the_ones_in_the_repositorys_systemd_folder():
    assert install_service.UNITS.resolve() == UNITS


def test_install_writes_the_units_the_user_and_the_example_config_under_root(tmp_path):
    report = run("--root", str(tmp_path))
    assert files(tmp_path) == {
        "etc/systemd/system/referee.service": (UNITS / "referee.service").read_text(),
        "etc/sysusers.d/referee.conf": (UNITS / "referee.sysusers").read_text(),
        "etc/referee/referee.toml": (UNITS / "referee.toml.example").read_text(),
    }
    assert (tmp_path / "etc/systemd/system/referee.service").stat().st_mode & 0o777 == 0o644
    assert f"wrote {tmp_path}/etc/referee/referee.toml" in report
    assert "  systemctl enable --now referee.service\n" in report  # told, not run


def test_an_existing_config_is_never_overwritten(tmp_path):
    config = tmp_path / "etc/referee/referee.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[table]\nplayers = ["Zed", "Yan"]\n')
    report = run("--root", str(tmp_path))
    assert config.read_text() == '[table]\nplayers = ["Zed", "Yan"]\n'
    assert f"kept {config} (already there: never overwritten)" in report


def test_installing_twice_changes_nothing_and_says_so(tmp_path):
    run("--root", str(tmp_path), "--kiosk-user", ME.pw_name)
    before = files(tmp_path)
    report = run("--root", str(tmp_path), "--kiosk-user", ME.pw_name)
    assert files(tmp_path) == before
    assert "wrote" not in report and "updated" not in report


def test_a_changed_unit_is_replaced_by_this_referees_own(tmp_path):
    unit = tmp_path / "etc/systemd/system/referee.service"
    run("--root", str(tmp_path))
    unit.write_text("[Service]\nExecStart=/old/referee\n")
    assert f"updated {unit}" in run("--root", str(tmp_path))
    assert unit.read_text() == (UNITS / "referee.service").read_text()


def test_the_kiosk_user_gets_the_user_unit_and_one_autostart_line(tmp_path):
    run("--root", str(tmp_path), "--kiosk-user", ME.pw_name)
    assert (tmp_path / "etc/systemd/user/referee-kiosk.service").read_text() == (
        UNITS / "referee-kiosk.service"
    ).read_text()
    assert autostart(tmp_path).read_text() == (UNITS / "labwc-autostart").read_text()


def test_an_existing_autostart_keeps_its_lines_and_gets_the_kiosk_once(tmp_path):
    path = autostart(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("/usr/bin/kanshi &")  # no final newline
    assert f"added the kiosk to {path}" in run("--root", str(tmp_path), "--kiosk-user", ME.pw_name)
    assert f"kept {path} (it already starts the kiosk)" in run(
        "--root", str(tmp_path), "--kiosk-user", ME.pw_name
    )
    assert path.read_text() == "/usr/bin/kanshi &\n" + (UNITS / "labwc-autostart").read_text()


def test_appending_looks_at_the_commands_not_the_comments():
    ours = "# the kiosk\nsystemctl --user start kiosk &\n"
    assert appended("", ours) == ours
    assert appended("a\n", ours) == "a\n" + ours
    assert appended("a", ours) == "a\n" + ours
    assert appended("a\n  systemctl --user start kiosk &\n", ours) is None


def test_live_install_creates_the_user_then_enables_the_service(tmp_path):
    binary = tmp_path / "opt/referee/.venv/bin/referee"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    ran = []
    out = io.StringIO()
    install(tmp_path, None, live=True, enable=True, out=out, run=ran.append)
    assert ran == [
        ["systemd-sysusers", f"{tmp_path}/etc/sysusers.d/referee.conf"],
        ["systemctl", "daemon-reload"],
        ["systemctl", "enable", "--now", "referee.service"],
    ]
    ran.clear()
    install(tmp_path, None, live=True, enable=False, out=out, run=ran.append)
    assert ran == [["systemd-sysusers", f"{tmp_path}/etc/sysusers.d/referee.conf"]]


def test_live_install_refuses_before_writing_anything_when_the_referee_is_not_in_opt(tmp_path):
    with pytest.raises(UserError, match=r"/opt/referee/\.venv/bin/referee: no referee there") as caught:
        install(tmp_path, None, live=True, enable=True, out=io.StringIO(), run=pytest.fail)
    assert "\n" not in str(caught.value)
    assert files(tmp_path) == {}


def test_not_root_and_no_root_folder_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UserError, match=r"^install-service writes to /etc .*as root \(sudo\)") as caught:
        run()
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "argv, error",
    [
        (["--enable"], "--enable starts the service on this system: it cannot go with --root"),
        (["--kiosk-user", "no-such-user-here"], "--kiosk-user no-such-user-here: no such user"),
    ],
)
def test_bad_options_are_refused_in_one_line_and_write_nothing(tmp_path, argv, error):
    with pytest.raises(UserError) as caught:
        run("--root", str(tmp_path / "root"), *argv)
    assert str(caught.value) == error
    assert not (tmp_path / "root").exists()


def test_a_root_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="not a folder"):
        run("--root", str(tmp_path / "file"))


def test_missing_unit_files_are_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(install_service, "UNITS", tmp_path / "nowhere")
    with pytest.raises(UserError, match=r"nowhere/referee\.service: cannot read the unit files") as caught:
        run("--root", str(tmp_path / "root"))
    assert "\n" not in str(caught.value)


def test_the_service_unit_has_what_the_table_needs():
    unit = read_unit((UNITS / "referee.service").read_text())
    service = unit["Service"]
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    assert service["WatchdogSec"] == ["10s"]
    assert service["Restart"] == ["on-failure"]
    assert service["RestartPreventExitStatus"] == ["2"]  # a bad config; 3 (camera lost) restarts
    assert service["User"] == ["referee"]
    assert {"gpio", "video"} <= set(service["SupplementaryGroups"][0].split())
    assert service["RuntimeDirectory"] == service["StateDirectory"] == ["referee"]
    assert service["ConfigurationDirectory"] == ["referee"]
    assert "LG_WD=%t/referee" in service["Environment"]
    assert service["ExecStart"] == ["/opt/referee/.venv/bin/referee run --config /etc/referee/referee.toml"]
    assert exec_binary((UNITS / "referee.service").read_text()) == Path("/opt/referee/.venv/bin/referee")
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_the_service_can_reach_the_gpio_chips_and_the_camera():
    service = read_unit((UNITS / "referee.service").read_text())["Service"]
    allowed = {line.split()[0] for line in service["DeviceAllow"]}
    assert allowed == {"char-gpiochip", "char-video4linux", "char-media", "char-dma_heap"}
    assert "AF_NETLINK" in service["RestrictAddressFamilies"][0].split()  # libcamera's udev
    # Each of these would hide the devices, the groups that own them, or the board's model.
    assert not {"PrivateDevices", "PrivateUsers", "ProcSubset", "DynamicUser"} & set(service)


def test_the_kiosk_waits_for_the_page_the_example_config_serves():
    kiosk = read_unit((UNITS / "referee-kiosk.service").read_text())["Service"]
    config = tomllib.loads((UNITS / "referee.toml.example").read_text())["service"]
    assert f"REFEREE_URL=http://{config['kiosk_host']}:{config['kiosk_port']}/" in kiosk["Environment"]
    assert "curl" in kiosk["ExecStartPre"][0]
    assert "--kiosk" in kiosk["ExecStart"][0]
    assert "referee-kiosk.service" in (UNITS / "labwc-autostart").read_text()


def test_the_sysusers_file_puts_referee_in_gpio_and_video():
    lines = [line.split() for line in (UNITS / "referee.sysusers").read_text().splitlines()]
    entries = [line[:3] for line in lines if line and not line[0].startswith("#")]
    assert entries == [["u", "referee", "-"], ["m", "referee", "gpio"], ["m", "referee", "video"]]


def test_the_example_config_is_one_referee_run_accepts():
    config = load_config(UNITS / "referee.toml.example")
    assert config.camera == "camera" and config.pins == "gpio"
    assert config.data_dir == Path("/var/lib/referee")  # the unit's StateDirectory
