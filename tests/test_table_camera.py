"""The simulator's table camera: a whole game's lays and takes, seen through the pile watcher."""

import itertools
import os
import shutil
from collections.abc import Iterable, Iterator

import numpy as np
import pytest

from hardware.frames import Frame
from referee.cards import SUITED
from referee.sim.card_themes import available_themes, theme_cards
from referee.sim.render import Camera, card_sprite, draw_hand, paste_sprite, rotate_sprite, table_surface
from referee.sim.table_camera import (
    Lens,
    Shown,
    TableCamera,
    default_sides,
    frame_at_or_after,
    frame_time,
)
from referee.vision.recogniser import Recogniser
from referee.vision.watcher import PileWatcher, WatchAsk, WatchEvent, WatchLay

FPS = 30.0
THEME = "anglo"
HAVE_THEME = THEME in available_themes() and shutil.which("rsvg-convert") is not None
if not HAVE_THEME and os.environ.get("CI"):
    raise RuntimeError("CI must install gnome-cards-data and librsvg2-bin (see .ci/run)")

Event = tuple  # ("lay", t_us, card, seat) or ("take", t_us, seat)


def script(rng: np.random.Generator, lays: int, seats: int, take_every: int = 8) -> list[Event]:
    """A game's table events in time order. Lays come 0.4 to 0.8 s apart, each by another seat
    than the last, every fourth exactly 0.4 s after the one before; every `take_every` lays the
    stack is taken 0.5 s after the last lay, and the next lay comes 150 ms after the take."""
    cards = [SUITED[i] for i in rng.permutation(52)]
    events: list[Event] = []
    t, seat = 1_000_000, 0
    for i in range(lays):
        if i and i % take_every == 0:
            t += 500_000
            events.append(("take", t, int(rng.integers(seats))))
            t += 150_000
        elif i:
            t += 400_000 if i % 4 == 1 else int(rng.uniform(400_000, 800_000))
        seat = (seat + 1 + int(rng.integers(seats - 1))) % seats
        events.append(("lay", t, cards[i % 52], seat))
    return events


def tell(camera: TableCamera, event: Event) -> Shown:
    if event[0] == "lay":
        return camera.lay(event[1], event[2], event[3])
    return camera.take(event[1], event[2])


def play(camera: TableCamera, events: Iterable[Event]) -> Iterator[Frame]:
    """The frames of a game told as a simulation learns it: at each event's time, the frames
    ready so far, then the event."""
    for event in events:
        yield from camera.frames_ready(event[1])
        tell(camera, event)
    yield from camera.finish()


def watch(frames: Iterable[Frame], sides: dict[str, int], recogniser: Recogniser) -> list[WatchEvent]:
    """As `referee watch` runs: the cards seen since the last `cleared` are unlikely again."""
    seen: set[str] = set()
    watcher = PileWatcher(lambda image, mask: recogniser.recognise(image, mask, frozenset(seen)), sides, FPS)
    got: list[WatchEvent] = []
    for frame in frames:
        for event in watcher.feed(frame):
            got.append(event)
            if type(event) is WatchLay:
                seen.add(event.card.code)
            elif type(event) is not WatchAsk:
                seen.clear()
    return got + watcher.finish()


def seen_as(got: list[WatchEvent]) -> list[tuple]:
    """Each event as (time, kind, card): a lay the watcher asks about has the card "?"."""
    out = []
    for e in got:
        if type(e) is WatchLay:
            out.append((e.t_us, "lay", e.card))
        elif type(e) is WatchAsk:
            out.append((e.t_us, "lay", "?"))
        else:
            out.append((e.t_us, "take", None))
    return out


def shown_as(shown: list[Shown]) -> list[tuple]:
    return [(s.t_us, s.kind, s.card) for s in shown]


def check_game(camera: TableCamera, events: list[Event], got: list[WatchEvent]) -> None:
    # Every rest on the frame asked for: the first at or after the event's time.
    assert [s.t_us for s in camera.shown] == [frame_time(frame_at_or_after(e[1], FPS), FPS) for e in events]
    # Each lay seen once, the right card, stamped at its rest; each take one `cleared` at its rest,
    # before the next lay.
    seen, shown = seen_as(got), shown_as(camera.shown)
    # A lay asked about is no wrong card (the table names it), but few may be asked.
    asked = {i for i, e in enumerate(seen) if e[2] == "?"}
    assert seen == [(t, k, "?") if i in asked else (t, k, c) for i, (t, k, c) in enumerate(shown)]
    lays = [(e, s) for e, s in zip(got, camera.shown, strict=True) if s.kind == "lay"]
    assert len(asked) <= 0.25 * len(lays)
    named = [(e.seat, s.seat) for e, s in lays if e.seat is not None]
    assert all(seat == truth for seat, truth in named)
    assert len(named) >= 0.9 * len(lays)


@pytest.fixture(scope="module")
def recogniser() -> Recogniser:
    return Recogniser()


def test_a_game_of_30_lays_and_3_takes_is_seen_lay_by_lay(recogniser):
    rng = np.random.default_rng(4)
    events = script(rng, 30, 4)
    assert sum(e[0] == "take" for e in events) == 3
    camera = TableCamera(4, rng)
    got = watch(play(camera, events), camera.watcher_sides, recogniser)
    check_game(camera, events, got)


@pytest.mark.skipif(not HAVE_THEME, reason="apt install gnome-cards-data librsvg2-bin")
def test_a_game_with_debian_card_art_on_wood(recogniser):
    rng = np.random.default_rng(8)
    events = script(rng, 16, 3, take_every=6)
    camera = TableCamera(3, rng, table="wood", faces=theme_cards(THEME, 250), glare=0.2)
    got = watch(play(camera, events), camera.watcher_sides, recogniser)
    check_game(camera, events, got)


def test_frames_are_the_same_however_the_caller_pulls_them():
    events = script(np.random.default_rng(1), 6, 3, take_every=4)
    lazily = TableCamera(3, np.random.default_rng(2))
    eagerly = TableCamera(3, np.random.default_rng(2))
    for event in events:
        tell(eagerly, event)
    pulled = list(play(lazily, events))
    at_once = list(eagerly.finish())
    assert [f.t_us for f in pulled] == [f.t_us for f in at_once]
    assert [f.t_us for f in pulled] == [frame_time(k, FPS) for k in range(len(pulled))]
    assert [f.index for f in pulled] == list(range(len(pulled)))
    assert all(np.array_equal(a.image, b.image) for a, b in zip(pulled, at_once, strict=True))
    assert lazily.shown == eagerly.shown
    # No two frames in a row alike: the still table is shot with fresh noise each frame.
    assert not any(np.array_equal(a.image, b.image) for a, b in itertools.pairwise(pulled))


def test_a_take_told_when_the_stack_is_won_is_shown_when_it_is_swept_off():
    """As the demo's table tells it: a take as soon as the stack is won, for the moment it will be
    swept off; a lay told later for a moment before that goes first."""
    events = script(np.random.default_rng(1), 10, 3, take_every=4)
    k = next(i for i, event in enumerate(events) if event[0] == "take")
    events.insert(k, ("lay", events[k][1] - 200_000, SUITED[51], 2))  # after the win, before the sweep
    in_order = TableCamera(3, np.random.default_rng(2))
    for event in events:
        tell(in_order, event)
    told = [*events[:k], events[k + 1], events[k], *events[k + 2 :]]  # the take with the winning lay
    early = TableCamera(3, np.random.default_rng(2))
    frames: list[Frame] = []
    for event in told:
        if event[0] == "lay":  # the clock moves to each lay; a take is told with the lay before it
            frames += early.frames_ready(event[1])
        tell(early, event)
    frames += early.finish()
    assert early.shown == in_order.shown
    assert [s.kind for s in early.shown[k - 1 : k + 2]] == ["lay", "lay", "take"]
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, in_order.finish(), strict=True))


def test_a_hand_comes_from_the_seat_side_and_is_gone_at_the_rest():
    camera = TableCamera({0: "left"}, np.random.default_rng(3), noise=0, jpeg_quality=None, lighting=0)
    shown = camera.lay(1_000_000, SUITED[0], 0)
    frames = {f.t_us: f.image.astype(np.int16) for f in camera.finish()}
    rest = frames[shown.t_us]
    before = frames[frame_time(frame_at_or_after(shown.t_us, FPS) - 1, FPS)]
    after = frames[frame_time(frame_at_or_after(shown.t_us, FPS) + 1, FPS)]
    assert np.array_equal(rest, after)  # at rest: nothing moves
    differs = np.abs(before - rest).max(axis=2) > 0
    assert differs[:, 0].any() and not differs[:, -1].any()  # the arm crosses the left edge only
    assert not differs[0].any() and not differs[-1].any()


def test_close_events_are_compressed_and_too_close_ones_put_off(recogniser):
    camera = TableCamera(4, np.random.default_rng(5))
    first = camera.lay(1_000_000, SUITED[0], 0)
    # 150 ms later (4 or 5 frames): two still frames, then a hand in and out in what is left.
    quick = camera.lay(first.t_us + 150_000, SUITED[1], 1)
    assert quick.t_us == frame_time(frame_at_or_after(first.t_us + 150_000, FPS), FPS)
    # 40 ms after that: fewer frames than a rest and a visit need, put off to the first that will do.
    late = camera.take(quick.t_us + 40_000, 2)
    assert late.asked_us == quick.t_us + 40_000
    assert late.t_us == frame_time(frame_at_or_after(quick.t_us, FPS) + 4, FPS)
    got = watch(camera.finish(), camera.watcher_sides, recogniser)
    assert seen_as(got) == shown_as(camera.shown)


def test_a_rest_is_seen_as_soon_as_it_is_told(recogniser):
    camera = TableCamera(2, np.random.default_rng(6))
    shown = camera.lay(2_000_000, SUITED[0], 1)
    rest = frame_at_or_after(shown.t_us, FPS)
    # Nothing else told yet, but nothing to come can show a hand before two frames after the rest.
    frames = list(camera.frames_ready(shown.t_us))
    assert frames[-1].index == rest + 1
    got = watch(frames, camera.watcher_sides, recogniser)
    assert seen_as(got) == shown_as(camera.shown)
    # An event told at that moment, however soon, comes after those frames.
    soon = camera.lay(shown.t_us + 1, SUITED[1], 0)
    assert soon.t_us == frame_time(rest + 4, FPS)


def hand_frames(camera: TableCamera, frames: list[Frame], rest: int) -> int:
    """How many of the 20 frames before `rest` show the hand: they differ from the first of them, the
    table still before it (a camera without light, noise or JPEG: still frames are alike)."""
    images = {f.index: f.image for f in frames}
    return sum(not np.array_equal(images[k], images[rest - 20]) for k in range(rest - 20, rest))


def test_frames_until_needs_events_told_lead_us_ahead():
    still = {"noise": 0, "jpeg_quality": None, "lighting": 0}
    for ahead, hand in [(0, 14), (2, 13), (20, 2)]:  # frames pulled beyond lead_us
        camera = TableCamera(3, np.random.default_rng(6), **still)
        camera.lay(1_000_000, SUITED[0], 0)
        frames = list(camera.frames_until(5_000_000 - camera.lead_us + ahead * 1e6 / FPS))
        # A whole visit (carry_s + leave_s: 14 frames) while told lead_us ahead; fewer frames after.
        shown = camera.lay(5_000_000, SUITED[1], 1)
        frames += camera.finish()
        rest = frame_at_or_after(5_000_000, FPS) + max(0, ahead - 13)  # put off under 2 frames left
        assert frame_at_or_after(shown.t_us, FPS) == rest
        assert hand_frames(camera, frames, rest) == hand


def test_an_event_told_too_late_is_shown_as_soon_as_it_can_be(recogniser):
    camera = TableCamera(3, np.random.default_rng(11))
    camera.lay(2_000_000, SUITED[0], 0)
    camera.lay(3_000_000, SUITED[1], 1)
    frames = list(camera.frames_until(2_900_000))  # the second lay's hand is on screen
    camera.take(2_500_000, 2)  # a stack won at a moment already past
    frames += camera.finish()
    assert [(s.kind, s.asked_us) for s in camera.shown] == [
        ("lay", 2_000_000),
        ("lay", 3_000_000),
        ("take", 2_500_000),
    ]
    assert camera.shown[-1].t_us == frame_time(frame_at_or_after(3_000_000, FPS) + 4, FPS)
    assert seen_as(watch(frames, camera.watcher_sides, recogniser)) == shown_as(camera.shown)


def test_mistakes_in_telling_are_refused():
    camera = TableCamera(3, np.random.default_rng(6))
    camera.lay(2_000_000, SUITED[0], 0)
    with pytest.raises(ValueError, match="seat 5"):
        camera.take(2_100_000, 5)
    with pytest.raises(ValueError, match="unknown side"):
        TableCamera({0: "north"}, np.random.default_rng(6))


def test_a_take_of_an_empty_table_is_a_hand_that_comes_and_goes(recogniser):
    camera = TableCamera(2, np.random.default_rng(7))
    camera.take(1_000_000, 1)
    assert watch(camera.finish(), camera.watcher_sides, recogniser) == []


@pytest.mark.parametrize(
    ("seats", "sides"),
    [
        (2, ["bottom", "top"]),
        (3, ["bottom", "left", "top"]),
        (4, ["bottom", "left", "top", "right"]),
        (6, ["bottom", "bottom", "left", "top", "top", "right"]),
        (8, ["bottom", "bottom", "left", "left", "top", "top", "right", "right"]),
    ],
)
def test_seats_sit_round_the_table_sharing_sides_past_four(seats, sides):
    assert list(default_sides(seats).values()) == sides
    shared = {side for side in sides if sides.count(side) > 1}
    camera = TableCamera(seats, np.random.default_rng(0), size=(64, 48))
    assert camera.watcher_sides == {side: sides.index(side) for side in sides if side not in shared}


def test_six_seats_lays_from_a_shared_side_carry_no_seat(recogniser):
    rng = np.random.default_rng(9)
    events = script(rng, 12, 6, take_every=20)
    camera = TableCamera(6, rng)
    got = watch(play(camera, events), camera.watcher_sides, recogniser)
    assert seen_as(got) == shown_as(camera.shown)
    for lay, shown in zip(got, camera.shown, strict=True):
        alone = camera.sides[shown.seat] in camera.watcher_sides
        assert lay.seat == (shown.seat if alone else None)


@pytest.mark.parametrize("size", [(640, 480), (330, 250)])  # on JPEG's block grid, and not
@pytest.mark.parametrize(("blur", "jpeg"), [(0.6, 85), (1.5, 60), (0.0, None), (0.6, None)])
def test_a_frame_shot_by_its_change_is_the_frame_shot_whole(size, blur, jpeg):
    rng = np.random.default_rng(10)
    lens = Lens(Camera(size, rng, 0.3, 0.3, blur, 3.0, jpeg, noise_frames=3))
    base = table_surface("wood", size, rng)
    w, h = size
    paste_sprite(base, rotate_sprite(*card_sprite(SUITED[11], w // 4), 30), w / 2, h / 2)
    developed = lens.develop(base)
    for side, p in [("bottom", 0.3), ("left", 1.0), ("top", 0.6), ("right", 0.9)]:
        image = draw_hand(base, side, p, rng)
        for variant in range(3):
            shot = lens.shoot(base, variant)
            assert np.array_equal(
                lens.shoot_change(image, base, developed, shot, variant), lens.shoot(image, variant)
            )
    assert lens.shoot_change(base, base, developed, shot, 2) is shot


def test_a_card_taken_back_is_lifted_off_the_pile_and_the_watcher_reports_nothing_for_it(recogniser):
    """A card laid out of turn and taken back: the seat's hand picks it up and the pile is as it
    was before it came; the watcher sees the card under it on top again, a lift, not a lay."""
    rng = np.random.default_rng(11)
    camera = TableCamera(3, rng)
    seven, queen, two = (SUITED[i] for i in (6, 24, 40))
    events: list[Event] = [("lay", 1_000_000, seven, 0), ("lay", 1_600_000, queen, 1)]
    frames: list[Frame] = []
    for event in events:
        frames += camera.frames_ready(event[1])
        tell(camera, event)
    frames += camera.frames_ready(2_000_000)
    camera.lift(2_000_000, 1, queen)
    frames += camera.frames_ready(2_700_000)
    camera.lay(2_700_000, two, 2)
    frames += camera.finish()
    assert [(s.kind, s.card) for s in camera.shown] == [
        ("lay", seven),
        ("lay", queen),
        ("lift", queen),
        ("lay", two),
    ]
    # After the lift, before the next hand: the still pile is the one from before the queen.
    lift_rest = frame_at_or_after(camera.shown[2].t_us, FPS)
    seven_rest = frame_at_or_after(camera.shown[0].t_us, FPS)
    before = frames[seven_rest + 1].image.astype(int)  # the seven alone, still
    after = frames[lift_rest + 1].image.astype(int)
    assert np.abs(after - before).mean() < 3  # the same scene, another frame's noise
    got = watch(frames, camera.watcher_sides, recogniser)
    assert [(e.card, e.seat) for e in got if type(e) is WatchLay] == [(seven, 0), (queen, 1), (two, 2)]
