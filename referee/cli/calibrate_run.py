"""What the calibration commands do when they run (`referee calibrate` and its steps alone;
the parser is referee/cli/calibrate.py).

The steps are pure state machines in `calibration/`; these commands are their shell: they
open the camera (or the simulated table), show the prompts, ask the questions, and keep each
step's part of the table profile (docs/calibration.md). Where the prompts are shown and the
questions answered is the step's front: the terminal (`Terminal`), or with `--kiosk` the
wizard's page as well (`calibration/kiosk.py`'s `KioskFront`); the commands drive both the same way.

This module loads numpy, OpenCV and the pin libraries: calibrate.py imports it only when a
calibration command runs, so that every other `referee` command starts without them.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import random
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import cv2

from calibration.buttons_live import buttons_drift, queue_wait, run_buttons_at_table, usb_keys
from calibration.sim_buttons import drive_buttons_sim
from calibration.sim_table import SimTable
from calibration.steps_buttons import (
    ANSWER,
    PRESSES_PER_SEAT,
    ButtonsStep,
    free_pins,
    seat_buttons,
    usb_candidates,
)
from calibration.steps_camera import CameraStep, drive
from calibration.steps_deck import DeckStep
from calibration.steps_seats import SeatsStep
from calibration.terminal import Terminal
from calibration.wizard import (
    PacedClock,
    Pacer,
    drive_live,
    drive_sim,
    save_progress,
    seconds,
    start_profile,
)
from hardware.board import gpio_factory
from hardware.camera import open_source
from hardware.camera_controls import NoControls, controls_for
from hardware.clock import MonotonicClock
from hardware.frames import CameraLost, SourceError
from hardware.image_files import ImageFileError, read_image
from referee.cards import CardError, parse_card
from referee.errors import UserError
from referee.live.wiring import WiringError, default_wiring, load_wiring, parse_wiring
from referee.vision.profile import (
    STEPS,
    TableProfile,
    default_profile_path,
    load,
    partial_path,
    save,
)
from referee.vision.recogniser import Profile, Recogniser


@contextlib.contextmanager
def _front(
    args: argparse.Namespace, out: TextIO, steps: tuple[str, ...], title: str, whole: bool = False
) -> Iterator[Terminal]:
    """The front for a command's steps: the one the whole wizard opened for every step, else the
    terminal, or with --kiosk the wizard's page served until the command ends. The camera is
    tried first, before anything is served or written (the whole wizard, and --kiosk)."""
    shared = getattr(args, "front", None)
    if shared is not None:
        yield shared
        return
    kiosk, sim = bool(getattr(args, "kiosk", False)), bool(getattr(args, "sim", False))
    speed = getattr(args, "speed", None)
    if speed is not None and not sim:
        raise UserError("--speed paces the simulated table: give it with --sim")
    pacer = Pacer(speed if speed is not None else 1.0 if kiosk else 0.0)
    if not sim and (kiosk or whole):
        _open_camera(args.camera).close()
    context: contextlib.AbstractContextManager[Terminal]
    if kiosk:
        from calibration.kiosk import serve_wizard  # the page's server (uvicorn): with --kiosk only

        context = serve_wizard(
            out,
            title,
            steps,
            sim=sim,
            pacer=pacer,
            camera=getattr(args, "camera", None),
            host=args.host,
            port=args.port,
            gate=getattr(args, "gate", None),  # tools and tests: hold the steps at a prompt
        )
    else:
        context = contextlib.nullcontext(Terminal(out, sim, pacer))
    with context as front:
        args.front = front
        try:
            yield front
        finally:
            args.front = None


def _open_camera(spec: str) -> Any:
    try:
        return open_source(spec)
    except (SourceError, CameraLost) as e:
        raise UserError(str(e)) from None


def _watched(frames: Iterable[Any], step: Any, front: Terminal, show: bool = False) -> Iterator[Any]:
    """Frames on their way to `step`: each seen by the front (the page's preview, the simulated
    table's pace), and an answer given meanwhile passed to the step. With `show`, each new
    prompt text is shown (the camera step, whose driver shows none)."""
    shown = None
    for frame in frames:
        prompt = step.prompt()
        if show and prompt.text != shown:
            front.show(prompt)
            shown = prompt.text
        front.seen(frame, prompt)
        said = front.meanwhile(prompt)
        if said is not None:
            step.answer(said)
        yield frame


class _Watched:
    """The simulated person, their frames watched by the front and their words the front's (at
    the kiosk, the page's)."""

    def __init__(self, table: Any, step: Any, front: Terminal) -> None:
        self.table, self.step, self.front = table, step, front

    def act(self, prompt: Any) -> Iterator[Any]:
        return _watched(self.table.act(prompt), self.step, self.front)

    def answer(self, prompt: Any) -> str:
        return self.front.ask(prompt)

    def choose(self, prompt: Any) -> str | None:
        return self.table.choose(prompt)  # the simulated person's deck lacks the card


def _pile_box(profile: Any) -> Any:
    return None if profile.camera is None else profile.camera.get("pile_box")


def calibrate_deck(args: argparse.Namespace, out: TextIO) -> int:
    """Learn a deck from one camera frame per card, named by code (QS.png, 10H.jpg), or
    interactively: the wizard's deck step at the camera (or the simulated table)."""
    if args.images is None:
        return _calibrate_deck_step(args, out)
    if args.kiosk:
        raise UserError("--kiosk is for the deck step at a camera (--camera or --sim), not --images")
    if args.out is None:
        raise UserError("--images needs --out PROFILE: where to write the deck profile")

    folder = Path(args.images)
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder of card images")
    images = {}
    for path in sorted(folder.iterdir()):
        try:
            code = parse_card(path.stem).code
        except CardError:
            continue  # not named by a card: not one of the deck's photos
        try:
            images[code] = read_image(path)
        except ImageFileError as e:
            print(f"{path}: {e}; {code} will be read by its corner alone", file=sys.stderr)
    if not images:
        raise UserError(f"{folder}: no card images named by code (such as QS.png or 10H.jpg)")
    profile = Profile.learn(images)
    if len(profile) == 0:
        raise UserError(f"{folder}: no card could be found in these images")
    try:
        profile.save(args.out)
    except OSError as e:
        raise UserError(f"{args.out}: cannot write the profile: {e.strerror or e}") from None
    learnt = set(profile.face_codes.tolist())
    for code in sorted(set(images) - learnt):
        alone = "it will be read by its corner alone"
        print(f"{folder}: {code}: no card found in its image; {alone}", file=sys.stderr)
    missing = 53 - len(images)
    out.write(f"learned {len(learnt)} of {len(images)} card images into {args.out}")
    out.write(f" ({missing} of 52 cards and the joker not given)\n" if missing > 0 else "\n")
    return 0


def _calibrate_deck_step(args: argparse.Namespace, out: TextIO) -> int:
    """`calibrate deck --camera SOURCE | --sim`: each card asked for, laid, read, learnt, checked."""
    with _front(args, out, ("deck",), "Calibration: deck") as front:
        step = DeckStep(Recogniser(), random.Random(args.seed), quick=args.quick)
        result, saved, took = _interactive(
            args, front, step, lambda p, r: p.with_step("deck", deck_name=args.name, deck=r.profile)
        )
        front.done(
            "deck",
            f"deck {args.name!r}: {len(result.learnt)} cards learnt, self-check {result.accuracy:.0%} "
            f"({len(result.checked)} cards), in {took}; saved to {saved}",
        )
    return 0


def calibrate_seats(args: argparse.Namespace, out: TextIO) -> int:
    """`calibrate seats --camera SOURCE | --sim`: the side of the picture each seat's hand comes from."""
    names = [n.strip() for n in args.players.split(",") if n.strip()]
    if not 2 <= len(names) <= 8:
        raise UserError(f"--players: 2 to 8 names, comma-separated, not {args.players!r}")
    with _front(args, out, ("seats",), "Calibration: seats") as front:
        step = SeatsStep(names, Recogniser())
        result, saved, took = _interactive(args, front, step, lambda p, r: p.with_step("seats", seats=r))
        sides = ", ".join(f"{side} = {seat}" for side, seat in result.items())
        front.done(
            "seats", f"seats: {{ {sides} }} (the config's [camera] seats), in {took}; saved to {saved}"
        )
    return 0


def calibrate_all(args: argparse.Namespace, out: TextIO) -> int:
    """`referee calibrate`: every step in turn, each saved in the progress file as it is done, so
    an interrupted wizard goes on where it stopped; the profile itself written at the end."""
    if not args.sim and not args.camera:
        raise UserError("calibrate: give --camera SOURCE (the table's camera) or --sim (the simulated table)")
    path = Path(args.out) if args.out else default_profile_path()
    progress = partial_path(path)
    with _front(args, out, STEPS, "Calibration", whole=True) as front:
        if args.restart or not progress.exists():
            save(TableProfile(), progress)
        args.out, args.restart = str(path), False
        for number, name in enumerate(STEPS, 1):
            done = load(progress).done
            out.write("\n")
            if name in done:
                front.kept(name, f"{number}. {name}: done before, kept")
                continue
            out.write(f"{number}. {name}\n")
            step_run = {
                "camera": calibrate_camera,
                "seats": calibrate_seats,
                "deck": _calibrate_deck_step,
                "buttons": calibrate_buttons,
            }[name]
            try:
                step_run(args, out)
            except KeyboardInterrupt:
                kept = ", ".join(load(progress).done) or "none yet"
                print(
                    f"calibration stopped in the {name} step: steps done ({kept}) kept in {progress}; "
                    "the same command goes on from there",
                    file=sys.stderr,
                )
                raise
        final = load(progress)
        save(final, path)
        progress.unlink()
        out.write("\n")
        front.finish(f"calibrated: {', '.join(final.done)}; the table profile is {path}")
    return 0


def calibrate_check(args: argparse.Namespace, out: TextIO) -> int:
    """`calibrate check`: the profile against the table as it is now, in under a minute: the
    camera where it was (the card's size and the pile's place), the deck read by its model
    (10 cards), and each seat's button pressed once where it was found, its light and the
    buzzer confirmed. Exit 0 when all holds, 1 naming what to calibrate again."""
    path = Path(args.out) if args.out else default_profile_path()
    profile = load(path)
    table = SimTable(args.seed) if args.sim else None
    problems: list[str] = []

    with _front(args, out, ("camera", "deck", "buttons"), "Calibration check") as front:
        if profile.camera is None:
            problems.append("camera: not calibrated (referee calibrate camera)")
        else:
            problems += _check_camera(args, front, profile, table)
        if profile.deck is None:
            problems.append("deck: not calibrated (referee calibrate deck)")
        else:
            problems += _check_deck(args, front, profile, table)
        buttons_s = 0.0
        if profile.buttons is None:
            problems.append("buttons: not calibrated (referee calibrate buttons)")
        else:
            drift, buttons_s = _check_buttons(args, front, profile, path)
            problems += drift
        took = (
            f"{table.now / 1e6 + buttons_s:.0f} s at the simulated table's pace"
            if table is not None
            else "done"
        )
        verdict = "all as calibrated" if not problems else f"{len(problems)} to do"
        lines = [f"to do: {problem}" for problem in problems]
        front.finish("\n".join([*lines, f"check of {path}: {verdict} ({took})"]))
    return 1 if problems else 0


def _check_camera(
    args: argparse.Namespace, front: Terminal, profile: Any, table: SimTable | None
) -> list[str]:
    """The check's camera step: what has moved since the camera was calibrated."""
    front.begin("camera")
    step = CameraStep(NoControls())
    if table is not None:
        drive(step, _watched(table.camera_frames(step), step, front, show=True), front.ask)
    else:
        with _open_camera(args.camera) as source:
            drive(step, _watched(source, step, front, show=True), front.ask)
    if step.failed:
        raise UserError(step.prompt().text)
    now = step.result()
    problems = camera_drift(profile.camera, now.card_px, now.pile_box)
    front.done("camera", f"camera: card {now.card_px:.0f} px (calibrated {profile.camera['card_px']:.0f} px)")
    return problems


def _check_deck(args: argparse.Namespace, front: Terminal, profile: Any, table: SimTable | None) -> list[str]:
    """The check's deck step: 10 cards read by the deck's model, 90 % of them right."""
    front.begin("deck", _pile_box(profile))
    deck = DeckStep(Recogniser(), random.Random(args.seed), learnt=profile.deck)
    if table is not None:
        table.camera.take(table.now + 500_000, table.seat)  # the check's card off the table first
        drive_sim(deck, _Watched(table, deck, front), front.show)
    else:
        with _open_camera(args.camera) as source:
            ask = lambda text: front.ask(deck.prompt())  # noqa: E731
            drive_live(deck, _watched(source, deck, front), ask, front.show)
    result = deck.result()
    accuracy = result.accuracy
    front.done("deck", f"deck: {accuracy:.0%} of {len(result.checked)} cards read right")
    if accuracy < 0.9:
        return [f"deck: {accuracy:.0%} of 10 cards read right (referee calibrate deck)"]
    return []


def _check_buttons(
    args: argparse.Namespace, front: Terminal, profile: Any, path: Path
) -> tuple[list[str], float]:
    """The check's buttons step: each seat's button pressed once where it was found (what has
    moved, and how long it took in seconds)."""
    try:
        saved = parse_wiring(profile.buttons, f"{path}: buttons")
    except WiringError as e:
        raise UserError(str(e)) from None
    front.begin("buttons")
    # The simulated table is wired as when `calibrate --sim` found its buttons.
    wires = _sim_wires(default_wiring(len(saved.seats)))
    found, buttons_s = _run_buttons(args, front, saved, wires, presses=1)
    drift = buttons_drift(saved, found)
    front.done("buttons", "buttons: as calibrated" if not drift else f"buttons: {len(drift)} to do")
    return drift, buttons_s


def camera_drift(saved: dict[str, Any], card_px: float, pile_box: Any) -> list[str]:
    """What has moved since the camera was calibrated: the card's size (the camera's height)
    by more than 10 %, or the pile's centre by more than half a card."""
    problems = []
    if abs(card_px / saved["card_px"] - 1) > 0.1:
        problems.append(
            f"camera: the card is {card_px:.0f} px, was {saved['card_px']:.0f} (referee calibrate camera)"
        )
    x0, y0, x1, y1 = saved["pile_box"]
    a0, b0, a1, b1 = pile_box
    moved = ((x0 + x1 - a0 - a1) ** 2 + (y0 + y1 - b0 - b1) ** 2) ** 0.5 / 2
    if moved > saved["card_px"] / 2:
        problems.append(f"camera: the pile's place moved {moved:.0f} px (referee calibrate camera)")
    return problems


def calibrate_camera(args: argparse.Namespace, out: TextIO) -> int:
    """`calibrate camera --camera SOURCE | --sim`: the light and the focus checked, the pile's
    area found from one card laid in the middle, confirmed, and drawn on a snapshot."""
    path = Path(args.out) if args.out else default_profile_path()
    snapshot_path = Path(args.snapshot) if args.snapshot else path.with_name("camera-snapshot.png")
    with _front(args, out, ("camera",), "Calibration: camera") as front:
        profile = start_profile(path, args.restart)
        front.begin("camera")

        def ask(prompt: Any) -> str:
            if prompt.snapshot is not None:
                cv2.imwrite(str(snapshot_path), prompt.snapshot)
                front.say(f"(the snapshot: {snapshot_path})")
            return front.ask(prompt)

        snapshot_path.parent.mkdir(parents=True, exist_ok=True)
        if args.sim:
            step = CameraStep(NoControls())
            drive(step, _watched(SimTable(args.seed).camera_frames(step), step, front, show=True), ask)
        else:
            source = _open_camera(args.camera)
            step = CameraStep(controls_for(source))
            with source:
                drive(step, _watched(source, step, front, show=True), ask)
        if step.failed:
            raise UserError(step.prompt().text)
        result = step.result()
        cv2.imwrite(str(snapshot_path), result.snapshot)
        unfinished = partial_path(path).exists()
        save_progress(profile.with_step("camera", camera=result.to_profile()), path, finished=not unfinished)
        saved = partial_path(path) if unfinished else path
        front.done(
            "camera",
            f"camera: card {result.card_px:.0f} px wide, pile area {list(result.pile_box)}; saved to {saved}",
        )
    return 0


def calibrate_buttons(args: argparse.Namespace, out: TextIO) -> int:
    """`calibrate buttons [--sim]`: each seat's button found (on whichever free pin it is
    wired to), its bounce measured, its LED and the buzzer checked; at the table's own pins,
    or at the simulated table (players whose wires may be swapped)."""
    wiring = _wiring(args)
    path = Path(args.out) if args.out else default_profile_path()
    with _front(args, out, ("buttons",), "Calibration: buttons") as front:
        profile = start_profile(path, args.restart)
        front.begin("buttons")
        result, took_s = _run_buttons(args, front, wiring, _sim_wires(wiring))
        took = f"{took_s:.0f} s at the simulated table's pace" if args.sim else f"{took_s:.0f} s"
        unfinished = partial_path(path).exists()
        save_progress(
            profile.with_step("buttons", buttons=result.to_wiring().to_dict()), path, finished=not unfinished
        )
        saved = partial_path(path) if unfinished else path
        front.done("buttons", f"buttons: {len(wiring.seats)} seats in {took}; saved to {saved}")
    return 0


def _wiring(args: argparse.Namespace) -> Any:
    """The wiring whose seats the buttons step asks for: the file given, else the built-in plan."""
    players = getattr(args, "players", 4)
    names = [n.strip() for n in players.split(",") if n.strip()] if isinstance(players, str) else []
    try:
        wiring_file = getattr(args, "wiring", None)
        wiring = load_wiring(wiring_file) if wiring_file else default_wiring(len(names) or players)
    except (WiringError, ValueError) as e:
        raise UserError(str(e)) from None
    if names and len(names) != len(wiring.seats):
        raise UserError(f"{wiring_file}: wires {len(wiring.seats)} seats, but --players names {len(names)}")
    if names:  # the prompts name the players ("Ann: press your button")
        seats = tuple(
            dataclasses.replace(seat, name=name) for seat, name in zip(wiring.seats, names, strict=True)
        )
        wiring = dataclasses.replace(wiring, seats=seats)
    return wiring


def _sim_wires(plan: Any) -> list[int]:
    """Where the simulated table's buttons really are: the plan's pins, with the first and last
    seats' wires crossed (a hobbyist's slip, for the step to find)."""
    pins = list(seat_buttons(plan))  # a USB seat's key, for a USB seat
    pins[0], pins[-1] = pins[-1], pins[0]
    return pins  # type: ignore[return-value]


def _run_buttons(
    args: argparse.Namespace, front: Terminal, wiring: Any, wires: list[int], presses: int | None = None
) -> tuple[Any, float]:
    """The buttons step for `wiring` (its result, and how long it took in seconds), watching
    every free pin: at the simulated table, whose buttons are on `wires` (seat order), or at
    this machine's pins."""
    presses = presses or PRESSES_PER_SEAT
    # Every free pin, and every key of the wiring's USB devices (at the simulated table: the
    # seats' own keys, on no device).
    keys = usb_keys(wiring) if wiring.usb and not args.sim else {}
    step = ButtonsStep(wiring, free_pins(wiring) + usb_candidates(wiring, keys), presses=presses)
    if args.sim:

        def say(prompt: Any) -> str | None:
            return front.ask(prompt) if prompt.waits_for == ANSWER else front.meanwhile(prompt)

        took = drive_buttons_sim(step, wiring, wires, args.seed, front.show, say, PacedClock(front.pacer))
        return step.result(), took / 1e6
    clock = MonotonicClock()  # the clock lgpio stamps edges with
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gpiozero's note on each pin library it falls back from
        result = run_buttons_at_table(
            wiring,
            step,
            clock,
            front.show,
            lambda inbox: queue_wait(inbox, clock, lambda: front.meanwhile(step.prompt())),
            front.say,
            pin_factory=gpio_factory(),  # lgpio on the header's own chip (a Pi 5's is 0 or 4)
        )
    return result, time.perf_counter() - started


def _interactive(args: argparse.Namespace, front: Terminal, step: Any, keep: Any) -> tuple[Any, Path, str]:
    """Run one wizard step at the camera or the simulated table, and keep its part of the table
    profile: the profile itself, or an unfinished wizard's progress when there is one."""
    path = Path(args.out) if args.out else default_profile_path()
    profile = start_profile(path, args.restart)
    front.begin(step.name, _pile_box(profile))
    started = time.perf_counter()
    if args.sim:
        table = SimTable(args.seed)
        drive_sim(step, _Watched(table, step, front), front.show)
        took = f"{table.now / 1e6:.0f} s at the simulated table's pace ({seconds(started):.1f} s here)"
    else:
        with _open_camera(args.camera) as source:
            ask = lambda text: front.ask(step.prompt())  # noqa: E731
            drive_live(step, _watched(source, step, front), ask, front.show)
        took = f"{seconds(started):.0f} s"
    result = step.result()
    unfinished = partial_path(path).exists()
    save_progress(keep(profile, result), path, finished=not unfinished)
    return result, partial_path(path) if unfinished else path, took
