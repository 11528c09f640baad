"""The pile watcher: one lay per laid card, stamped at rest, seats from the entry edge, `cleared`."""

import itertools
import json
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from hardware.frames import Frame
from referee.cards import deck, parse_card
from referee.sim.render import draw_hand, random_hand, render_lay_sequence
from referee.vision.watcher import PileWatcher, WatchCleared, WatchLay, _blown_up

FPS = 30.0
PERIOD_US = 1e6 / FPS
SIDE_OF_SEAT = {0: "bottom", 1: "left", 2: "top", 3: "right"}
SIDES = {side: seat for seat, side in SIDE_OF_SEAT.items()}

Clip = tuple[list[tuple[int, np.ndarray]], list[tuple[int, object, int]]]


class TruthRecogniser:
    """A faithful double: reads the card really on top of the pile in the frame it is shown.

    It knows each frame's time by the image's identity, so the test checks the
    watcher's timing and counting, not recognition.
    """

    def __init__(self, frames, truth, as_tuple: bool = False) -> None:
        self.t_of = {id(image): t for t, image in frames}
        self.truth = truth
        self.as_tuple = as_tuple
        self.calls = 0

    def __call__(self, image: np.ndarray, hint: np.ndarray):
        self.calls += 1
        assert hint.shape == image.shape[:2] and hint.dtype == np.uint8 and hint.any()
        t = self.t_of[id(image)]
        on_top = [card for t_rest, card, _ in self.truth if t_rest <= t]
        card = on_top[-1] if on_top else None
        return (card, 0.99) if self.as_tuple else SimpleNamespace(card=card, confidence=0.99)


def run(watcher: PileWatcher, frames) -> list:
    events = []
    for k, (t, image) in enumerate(frames):
        events += watcher.feed(Frame(image, t, k))
    return events


def lays(events) -> list[WatchLay]:
    return [e for e in events if isinstance(e, WatchLay)]


def clip(seed: int, n: int, **kwargs) -> Clip:
    rng = np.random.default_rng(seed)
    cards = list(deck(52))[5 * seed : 5 * seed + n]
    seats = [(i + seed) % 4 for i in range(n)]
    return render_lay_sequence(cards, seats, SIDE_OF_SEAT, rng, FPS, **kwargs)


@pytest.fixture(scope="module")
def game() -> Clip:
    return clip(3, 8)


def check_lays(events, truth, with_seats: bool) -> None:
    got = lays(events)
    assert [e.card for e in got] == [card for _, card, _ in truth]  # one each, in order
    for e, (t_rest, _, seat) in zip(got, truth, strict=True):
        assert t_rest <= e.t_us <= t_rest + 3 * PERIOD_US
        assert e.seat == (seat if with_seats else None)
        assert e.confidence == pytest.approx(0.99)


def test_one_lay_per_card_stamped_at_rest_with_the_seat(game):
    frames, truth = game
    events = run(PileWatcher(TruthRecogniser(frames, truth), SIDES, FPS), frames)
    check_lays(events, truth, with_seats=True)
    assert not [e for e in events if isinstance(e, WatchCleared)]


def test_without_a_side_map_lays_carry_no_seat(game):
    frames, truth = game
    recognise = TruthRecogniser(frames, truth, as_tuple=True)  # a (card, confidence) tuple works too
    check_lays(run(PileWatcher(recognise, None, FPS), frames), truth, with_seats=False)


def test_a_lay_is_reported_within_three_frames_of_rest(game):
    frames, truth = game
    watcher = PileWatcher(TruthRecogniser(frames, truth), SIDES, FPS)
    rests = {t for t, _, _ in truth}
    reported_at = {}
    for k, (t, image) in enumerate(frames):
        for e in watcher.feed(Frame(image, t, k)):
            reported_at[e.t_us] = t
    assert set(reported_at) == rests
    assert all(0 <= reported_at[t] - t <= 3 * PERIOD_US for t in rests)


def test_cards_landing_0_4_s_apart_are_each_reported():
    frames, truth = clip(5, 5, rest_s=(0.4, 0.4), carry_s=0.2, leave_s=0.2)
    assert all(b[0] - a[0] <= 0.85e6 for a, b in itertools.pairwise(truth))
    events = run(PileWatcher(TruthRecogniser(frames, truth), SIDES, FPS), frames)
    check_lays(events, truth, with_seats=True)


def hand_visit(image: np.ndarray, side: str, rng, then: np.ndarray | None = None, hover: int = 10):
    """A hand reaching in over `image`, hovering still, and leaving over `then` (default the same)."""
    h, w = image.shape[:2]
    target = ((w - 1) / 2, (h - 1) / 2)
    look = random_hand(rng, 0.3 * min(w, h))
    out = [draw_hand(image, side, k / 8, target=target, look=look) for k in range(1, 9)]
    out += [out[-1]] * hover
    leave = then if then is not None else image
    out += [draw_hand(leave, side, k / 8, target=target, look=look) for k in range(7, 0, -1)]
    return out


def extend(frames, images) -> list[tuple[int, np.ndarray]]:
    k0 = len(frames)
    return frames + [(round((k0 + i) * PERIOD_US), img) for i, img in enumerate(images)]


def test_a_hand_that_hovers_and_leaves_lays_nothing(game):
    frames, truth = game
    rng = np.random.default_rng(11)
    last = frames[-1][1]
    visit = hand_visit(last, "left", rng, hover=60)  # longer than stale_s: a resting arm is no card
    more = extend(frames, [*visit, *[last] * 10])
    events = run(PileWatcher(TruthRecogniser(more, truth), SIDES, FPS), more)
    check_lays(events, truth, with_seats=True)


def test_the_stack_taken_gives_one_cleared_then_lays_start_again():
    frames, truth = clip(7, 3)
    empty = [img for t, img in frames if t < truth[0][0] - 12 * PERIOD_US][:6]  # the lead: no cards yet
    rng = np.random.default_rng(12)
    pickup = hand_visit(frames[-1][1], "right", rng, then=empty[0], hover=3)
    more = extend(frames, [*pickup, *empty])
    first_empty = more[len(frames) + len(pickup)][0]
    events = run(PileWatcher(TruthRecogniser(more, truth), SIDES, FPS), more)
    cleared = [e for e in events if isinstance(e, WatchCleared)]
    assert len(cleared) == 1 and first_empty <= cleared[0].t_us <= first_empty + 3 * PERIOD_US
    check_lays(events, truth, with_seats=True)
    assert events[-1] == cleared[0]


def test_missing_black_and_odd_frames_do_not_crash():
    watcher = PileWatcher(lambda image, hint: (None, 0.0), SIDES, FPS)
    black = np.zeros((480, 640, 3), np.uint8)
    assert watcher.feed(Frame(None, 0, 0)) == []  # type: ignore[arg-type]
    assert watcher.feed(Frame(np.zeros((480, 640), np.uint8), 1, 1)) == []
    for k in range(2, 12):
        assert watcher.feed(Frame(black, k * 33333, k)) == []
    noisy = np.random.default_rng(0).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    for k in range(12, 20):  # a size change and pure noise: reallocated, nothing reported
        assert watcher.feed(Frame(noisy if k % 2 else black[:240, :320], k * 33333, k)) == []


def test_flicker_and_noise_on_a_still_pile_report_nothing(game):
    frames, truth = game
    last = frames[-1][1]
    rng = np.random.default_rng(3)
    flicker = [cv2.convertScaleAbs(last, alpha=float(rng.uniform(0.9, 1.1))) for _ in range(60)]
    more = extend(frames, flicker)
    events = run(PileWatcher(TruthRecogniser(more, truth), SIDES, FPS), more)
    check_lays(events, truth, with_seats=True)


def test_rejects_unknown_edges():
    with pytest.raises(ValueError, match="unknown frame edge"):
        PileWatcher(lambda image, hint: (None, 0.0), {"north": 1})


def test_to_json_is_a_table_script_line():
    seven = parse_card("7H")
    assert json.loads(WatchLay(1_000_000, seven, 0.98765, 2).to_json()) == {
        "t": 1_000_000,
        "lay": "7H",
        "confidence": 0.988,
        "seat": 2,
    }
    assert WatchLay(5, seven, 1.0, None).to_json() == '{"t": 5, "lay": "7H", "confidence": 1.0}'
    assert WatchCleared(7).to_json() == '{"t": 7, "cleared": true}'


class DoubtfulFirst(TruthRecogniser):
    """The true card, but read doubtfully (or not at all) the first `doubtful` times a rest is read."""

    def __init__(self, frames, truth, doubtful: int, unreadable: bool = False) -> None:
        super().__init__(frames, truth)
        self.doubtful, self.unreadable = doubtful, unreadable
        self.reads: dict[int, int] = {}
        self.frames_read: list[int] = []

    def __call__(self, image, hint):
        got = super().__call__(image, hint)
        self.frames_read.append(self.t_of[id(image)])
        rest = max(t for t, _, _ in self.truth if t <= self.t_of[id(image)])
        self.reads[rest] = self.reads.get(rest, 0) + 1
        if self.reads[rest] <= self.doubtful:
            return SimpleNamespace(card=None if self.unreadable else got.card, confidence=0.2)
        return got


@pytest.mark.parametrize("unreadable", [False, True])
def test_a_doubtful_reading_is_read_again_on_the_next_still_frames(game, unreadable):
    frames, truth = game
    doubter = DoubtfulFirst(frames, truth, doubtful=1, unreadable=unreadable)
    events = run(PileWatcher(doubter, sides=SIDES), frames)
    got = lays(events)
    assert [e.card for e in got] == [card for _, card, _ in truth]
    for e, (t_rest, _, _) in zip(got, truth, strict=True):
        assert e.t_us == t_rest  # stamped at rest, though read a frame later
        assert e.confidence == pytest.approx(0.99)
    assert all(n == 2 for n in doubter.reads.values())  # one doubtful read, one sure


def test_rereads_stop_after_their_budget_and_keep_the_best_reading(game):
    frames, truth = game
    doubter = DoubtfulFirst(frames, truth, doubtful=99)
    watcher = PileWatcher(doubter, sides=SIDES, rereads=2)
    got = lays(run(watcher, frames) + watcher.finish())
    assert [e.card for e in got] == [card for _, card, _ in truth]  # still reported, doubtfully
    assert all(e.confidence == pytest.approx(0.2) for e in got)
    assert all(n == 3 for n in doubter.reads.values())  # the first read and two rereads
    # Reported within 3 frames of rest: the reads were on the rest's next frames.
    index = {t: k for k, (t, _) in enumerate(frames)}
    for t_rest, _, _ in truth:
        reads = [index[t] for t in doubter.frames_read if max(r for r, _, _ in truth if r <= t) == t_rest]
        assert max(reads) - index[t_rest] <= 3


def test_a_lay_still_being_read_when_the_stream_ends_is_reported_by_finish(game):
    frames, truth = game
    last_rest = next(k for k, (t, _) in enumerate(frames) if t == truth[-1][0])
    watcher = PileWatcher(DoubtfulFirst(frames, truth, doubtful=99), sides=SIDES)
    events = run(watcher, frames[: last_rest + 2])  # the stream stops a frame after the last rest
    assert truth[-1][1] not in [e.card for e in lays(events)]
    assert [e.card for e in lays(watcher.finish())] == [truth[-1][1]]
    assert watcher.finish() == []


# Cards at the frame's edge ------------------------------------------------------------------

EDGE_CLIPS = {1: 2, 6: 1}  # seed of `edge_clip`: the lay that comes to rest overhanging the frame's edge


def edge_clip(seed: int) -> Clip:
    """Big cards, scattered wide, rests of 0.4-0.8 s: one card overhangs an edge (right in 1, left in 6)."""
    return clip(seed, 5, card_width=180, scatter=0.35)


def touches_edge(before: np.ndarray, after: np.ndarray) -> bool:
    """The frame's outermost pixels changed: something now lies over its edge."""
    changed = cv2.absdiff(before, after).max(axis=2) > 60
    b = 4
    return max(changed[:b].sum(), changed[-b:].sum(), changed[:, :b].sum(), changed[:, -b:].sum()) > 20


def rest_images(frames, truth) -> list[np.ndarray]:
    index = {t: k for k, (t, _) in enumerate(frames)}
    return [frames[index[t]][1] for t, _, _ in truth]


@pytest.mark.parametrize("seed", sorted(EDGE_CLIPS))
def test_a_card_resting_over_the_frame_edge_is_reported_within_three_frames(seed):
    frames, truth = edge_clip(seed)
    edge = EDGE_CLIPS[seed]
    before = [frames[0][1], *rest_images(frames, truth)]
    assert [touches_edge(a, b) for a, b in itertools.pairwise(before)] == [j == edge for j in range(5)]
    # Rest to rest, hands included, is under stale_s (1.5 s): the scene is never still that long.
    assert all(b[0] - a[0] < 1.5e6 for a, b in itertools.pairwise(truth))
    watcher = PileWatcher(TruthRecogniser(frames, truth), SIDES, FPS)
    events, reported_at = [], {}
    for k, (t, image) in enumerate(frames):
        for e in watcher.feed(Frame(image, t, k)):
            events.append(e)
            reported_at[e.t_us] = t
    check_lays(events, truth, with_seats=True)  # one each, stamped at rest, the seat it came from
    # The arm that laid the edge card left while the card stayed at the border: known parked at once,
    # not at the next hand (seed 1: the card lies over the edge its hand came from; 6: the other edge).
    for t_rest, _, _ in truth:
        assert t_rest <= reported_at[t_rest] <= t_rest + 3 * PERIOD_US


@pytest.mark.parametrize("seed", sorted(EDGE_CLIPS))
def test_a_card_left_over_the_frame_edge_as_the_last_lay_is_reported(seed):
    frames, truth = edge_clip(seed)
    edge = EDGE_CLIPS[seed]
    last = next(k for k, (t, _) in enumerate(frames) if t == truth[edge][0]) + 10
    frames, truth = frames[: last + 1], truth[: edge + 1]  # no hand comes after it
    events = run(PileWatcher(TruthRecogniser(frames, truth), SIDES, FPS), frames)
    check_lays(events, truth, with_seats=True)


def pause_over_the_card(frames, truth, j: int, rng) -> tuple[list, list, list]:
    """The clip with lay `j`'s hand stopping on its card, arm across the border, before it leaves:
    still for 10 frames, a small move out, still for 10 more. Returns the frames, the truth (rests
    after the hand has gone) and when each card lies in place, under the hand or not."""
    images = [image for _, image in frames]
    index = {t: k for k, (t, _) in enumerate(frames)}
    rest = index[truth[j][0]]
    leave = round(0.3 * FPS)  # render_lay_sequence's leave_s: the hand withdraws over leave - 1 frames
    w0 = rest - leave + 1  # the first frame with the card let go, the hand still on it

    def still(image: np.ndarray) -> list[np.ndarray]:
        noise = [rng.normal(0, 2, image.shape) for _ in range(10)]
        return [np.clip(image + n, 0, 255).astype(np.uint8) for n in noise]

    images = [*images[: w0 + 1], *still(images[w0]), *images[w0 + 1 : w0 + 3], *still(images[w0 + 2])]
    images += [image for _, image in frames[w0 + 3 :]]
    shift = len(images) - len(frames)
    paused = extend([], images)

    def stamp(k: int) -> int:
        return paused[k][0]

    rests = [
        (stamp(index[t] + (shift if i >= j else 0)), card, seat) for i, (t, card, seat) in enumerate(truth)
    ]
    in_place = [(stamp(w0 - 1) if i == j else t, card, seat) for i, (t, card, seat) in enumerate(rests)]
    return paused, rests, in_place


@pytest.mark.parametrize(("seed", "j"), [(1, 2), (6, 1), (6, 3)])  # the edge cards, and one inside
def test_a_hand_pausing_on_its_card_at_the_border_lays_it_once_when_gone(seed, j):
    frames, truth = edge_clip(seed)
    frames, truth, in_place = pause_over_the_card(frames, truth, j, np.random.default_rng(seed))
    # The recogniser sees the card from the moment it is in place, under the hand too: a lay judged
    # while the hand pauses would be stamped before the rest, and one judged again after it a duplicate.
    recognise = TruthRecogniser(frames, in_place)
    check_lays(run(PileWatcher(recognise, SIDES, FPS), frames), truth, with_seats=True)


@pytest.mark.parametrize("size", [(1280, 720), (640, 480), (1000, 700)])  # whole pixels per pixel, and not
def test_the_hint_mask_at_full_size_is_the_working_mask_resized(size):
    rng = np.random.default_rng(3)
    sw, sh = 160, round(160 * size[1] / size[0])
    for _ in range(50):
        small = np.zeros((sh, sw), np.uint8)
        for _ in range(int(rng.integers(0, 3))):
            x, y = int(rng.integers(0, sw)), int(rng.integers(0, sh))
            small[y : y + int(rng.integers(1, 40)), x : x + int(rng.integers(1, 60))] = 255
        want = cv2.resize(small, size, interpolation=cv2.INTER_NEAREST)
        assert np.array_equal(_blown_up(small, size), want)
