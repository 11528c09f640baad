"""Tuning scenes: the project's own renderer under the conditions issue 18 lists, with the truth.

    .venv/bin/python tools/tuning_scenes.py --n 300                  (the recogniser on them, by condition)
    .venv/bin/python tools/tuning_scenes.py --n 300 --dump /tmp/miss  (and each miss as a picture)
    .venv/bin/python tools/tuning_scenes.py --refusals               (indices of no English rank)
    .venv/bin/python tools/tuning_scenes.py --n 30 --more            (felt, striped and white tables)
    .venv/bin/python tools/tuning_scenes.py --n 30 --calibrated      (read with each deck's profile)
    .venv/bin/python tools/tuning_scenes.py --n 30 --calibrated game (its photos taken as in a game)

This is the generator that tunes. The one that grades (benchmarks/heldout_scenes.py) was written
apart from this one and from referee/sim/render.py, and is never looked at to tune; this one builds on
referee/sim/render.py (its card styles, tables and camera) and adds what the issue asks of a scene: a
camera tilted up to 25 degrees, small cards (100-170 px wide in 1280x720) and cards over half the
frame, overlapping pairs and piles, cream and white tables, lamp and hand shadows, white balance.
Decks: the renderer's own styles and the gnome themes the index model trains on (never the themes
any benchmark calls unseen).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.cards import JOKER_CODE
from referee.cards import deck as make_deck
from referee.sim.card_themes import available_themes, theme_cards
from referee.sim.render import (
    FOREIGN_INDICES,
    STYLES,
    UNSEEN_FONTS,
    Camera,
    Placement,
    card_sprite,
    lettered_face,
    paste_sprite,
    render_pile,
    rotate_sprite,
    table_surface,
)

# The index model's own training themes with English indices on every rank (tools/train_index_model.py).
THEMES = ("atlasnye", "dondorf", "orell", "ornamental", "plastic", "tigullio")
TABLES = ("green_cloth", "wood", "dark", "light", "cream", "patterned")
# `--more`: tables and a blur the default mix lacks (kept apart, so that the default scenes, and the
# outline model's training pictures drawn from them, stay as they were).
MORE_TABLES = ("felt", "stripes", "white")
SIZES = {"small": (100, 170), "typical": (170, 300), "big": (0, 0)}
SIZE_P = (0.3, 0.55, 0.15)
KINDS = ("single", "pair", "pile")
CODES = [c.code for c in make_deck(52)]


@dataclass(frozen=True)
class Scene:
    image: np.ndarray
    code: str
    corners: np.ndarray  # 4 x 2, the top card's corners in the frame
    width: float  # the top card's width in the frame, px (mean of its short sides)
    conditions: tuple[str, ...]


_faces: dict[str, dict[str, np.ndarray]] = {}


def decks(stacked_only: bool = False) -> list[str]:
    """The decks, in a fixed order (a deck's scenes are seeded by its place): the own styles with
    the pip under the rank, the themes, then other index layouts (added later, last, so that the
    others' scenes and the outline model's training pictures stay as they were)."""
    stacked = [name for name, style in STYLES.items() if style.index_layout == "stacked"]
    others = [] if stacked_only else [name for name in STYLES if name not in stacked]
    return [*stacked, *(t for t in THEMES if t in available_themes()), *others]


def _sprite(deck: str, code: str, width: int) -> tuple[np.ndarray, np.ndarray]:
    from referee.cards import parse_card

    if deck in STYLES:
        return card_sprite(parse_card(code), width, STYLES[deck])
    if deck not in _faces:
        _faces[deck] = theme_cards(deck, 500)
    return card_sprite(parse_card(code), width, None, _faces[deck])


def _corners(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    """A card's corners after `rotate_sprite`'s turn (counterclockwise on screen, y down)."""
    a = math.radians(angle)
    c, s = math.cos(a), math.sin(a)
    offs = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    x = c * offs[:, 0] + s * offs[:, 1]
    y = -s * offs[:, 0] + c * offs[:, 1]
    return np.stack([cx + x, cy + y], axis=1)


def _table(kind: str, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    if kind in MORE_TABLES:
        return _more_table(kind, size, rng)
    if kind == "cream":
        light = table_surface("light", size, rng).astype(np.float32)
        tint = np.array([rng.uniform(0.78, 0.88), rng.uniform(0.9, 0.96), 1.0], np.float32)
        return (light * tint).clip(0, 255).astype(np.uint8)
    return table_surface(kind, size, rng)


def _more_table(kind: str, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A felt of any colour (a blue or red card table), a striped cloth at any angle, or a white
    top: tables a house has that the renderer's kinds leave out."""
    w, h = size
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == "felt":
        hue = np.uint8(rng.integers(0, 180))
        colour = cv2.cvtColor(
            np.array([[[hue, rng.integers(90, 220), rng.integers(60, 170)]]], np.uint8), cv2.COLOR_HSV2BGR
        )
        nap = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 1.0)
        img = colour.reshape(1, 1, 3).astype(np.float32) * (1 + 0.05 * nap)[..., None]
    elif kind == "stripes":
        a = rng.uniform(0, np.pi)
        period = rng.uniform(14, 60)
        along = xs * math.cos(a) + ys * math.sin(a)
        band = (np.mod(along, period) < rng.uniform(0.3, 0.7) * period).astype(np.float32)
        dark = rng.integers(20, 200, 3).astype(np.float32)
        pale = rng.integers(170, 250, 3).astype(np.float32)
        img = dark * band[..., None] + pale * (1 - band[..., None])
        img = cv2.GaussianBlur(img, (0, 0), 0.8)
    else:
        img = np.full((h, w, 3), rng.uniform(238, 252), np.float32)
        img += rng.normal(0, 1.5, (h, w, 1)).astype(np.float32)
    return img.clip(0, 255).astype(np.uint8)


def _motion_blur(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The camera (or the table) shaken during the exposure: a streak 3 to 9 px long at any angle."""
    length = int(rng.integers(3, 10))
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0 / length
    turn = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), float(rng.uniform(0, 180)), 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    return cv2.filter2D(image, -1, kernel / max(float(kernel.sum()), 1e-6))


def _tilt(
    size: tuple[int, int], out: tuple[int, int], degrees: float, rng: np.random.Generator
) -> np.ndarray:
    """The homography from a straight-down canvas of `size` to a camera turned `degrees` away, its
    view centred in a frame of `out`."""
    w, h = size
    f = w * rng.uniform(0.8, 1.4)
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    axis = rng.uniform(0, 2 * np.pi)
    r, _ = cv2.Rodrigues(np.array([math.cos(axis), math.sin(axis), 0.0]) * math.radians(degrees))
    hom = k @ r @ np.linalg.inv(k)
    centre = hom @ np.array([w / 2, h / 2, 1.0])
    centre = centre[:2] / centre[2]
    shift = np.array([[1, 0, out[0] / 2 - centre[0]], [0, 1, out[1] / 2 - centre[1]], [0, 0, 1]])
    return shift @ hom


def _shadow(frame: np.ndarray, rng: np.random.Generator, near: np.ndarray, kind: str) -> None:
    """Darken in place: a lamp's arm (a broad soft band) or a hand (a palm and fingers) near `near`."""
    h, w = frame.shape[:2]
    mask = np.zeros((h, w), np.float32)
    cx, cy = near.mean(axis=0) + rng.normal(0, 0.3, 2) * np.ptp(near, axis=0)
    span = float(np.ptp(near, axis=0).max())
    if kind == "lamp":
        a = rng.uniform(0, np.pi)
        d = np.array([math.cos(a), math.sin(a)]) * 3 * max(w, h)
        p0 = (np.array([cx, cy]) - d).astype(int)
        p1 = (np.array([cx, cy]) + d).astype(int)
        cv2.line(
            mask, tuple(int(v) for v in p0), tuple(int(v) for v in p1), 1.0, int(span * rng.uniform(0.2, 0.6))
        )
        blur = span * rng.uniform(0.05, 0.2)
    else:
        a = rng.uniform(0, 2 * np.pi)
        palm = (int(cx), int(cy))
        r = span * rng.uniform(0.25, 0.4)
        cv2.ellipse(mask, palm, (int(r), int(r * 0.8)), math.degrees(a), 0, 360, 1.0, -1)
        for k in range(4):
            fa = a + (k - 1.5) * 0.3
            tip = (int(cx + 1.9 * r * math.cos(fa)), int(cy + 1.9 * r * math.sin(fa)))
            cv2.line(mask, palm, tip, 1.0, max(2, int(r * 0.3)))
        blur = span * rng.uniform(0.03, 0.12)
    mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, blur))
    depth = rng.uniform(0.25, 0.6)
    frame[:] = (frame * (1 - depth * mask[..., None])).clip(0, 255).astype(np.uint8)


def scene(
    deck: str,
    code: str,
    rng: np.random.Generator,
    size_name: str | None = None,
    scale: float = 1.0,
    more: bool = False,
) -> Scene:
    """One frame: `code` on top of nothing, one card or a pile, on a random table, under a random
    light and a camera turned up to 25 degrees; its corners and conditions with it. A big card
    (a phone photo of one card) lies wholly in the frame. `scale` shrinks the frame and its cards
    alike (the outline model's training pictures are small: drawing them small is cheaper).
    `more`: on the tables of MORE_TABLES, and a motion blur half the time."""
    size_name = size_name or str(rng.choice(list(SIZES), p=SIZE_P))
    out = (1280, 720) if size_name != "big" or rng.random() < 0.5 else (720, 1280)
    out = (round(out[0] * scale), round(out[1] * scale))
    if size_name == "big":
        width = int(rng.uniform(0.5, 0.75) * min(out))
    else:
        width = int(rng.uniform(*SIZES[size_name]) * scale)
    kind = str(rng.choice(KINDS)) if size_name != "big" else str(rng.choice(("single", "pile")))
    degrees = float(rng.choice((0.0, rng.uniform(0, 15), rng.uniform(15, 25))))
    canvas = (int(out[0] * 1.5), int(out[1] * 1.5))
    table_kind = str(rng.choice(MORE_TABLES if more else TABLES))
    frame = _table(table_kind, canvas, rng)
    cx, cy = canvas[0] / 2 + rng.normal(0, 0.05) * out[0], canvas[1] / 2 + rng.normal(0, 0.05) * out[1]
    others = [c for c in CODES if c != code]
    under: list[Placement] = []
    if kind == "pair":
        angle = rng.uniform(0, 360)
        d = rng.uniform(0.35, 0.8) * width
        a = rng.uniform(0, 2 * np.pi)
        under.append(Placement(_pick(others, rng), cx + d * math.cos(a), cy + d * math.sin(a), angle, width))
    elif kind == "pile":
        for _ in range(int(rng.integers(2, 7))):
            under.append(
                Placement(
                    _pick(others, rng),
                    cx + rng.normal(0, 0.15) * width,
                    cy + rng.normal(0, 0.15) * width,
                    rng.uniform(0, 360),
                    width,
                )
            )
    top = Placement(_card(code), cx, cy, float(rng.uniform(0, 360)), width)
    shadow = float(rng.uniform(0.2, 0.5))
    for p in [*under, top]:
        img, mask = _sprite(deck, p.card.code, p.width)
        height = img.shape[0]
        paste_sprite(frame, rotate_sprite(img, mask, p.angle), p.x, p.y, shadow)
    corners = _corners(top.x, top.y, width, height, top.angle)
    conditions = [size_name, kind, table_kind]
    if degrees >= 15:
        conditions.append("tilt>15")
    for extra in ("lamp", "hand"):
        if rng.random() < 0.25:
            _shadow(frame, rng, corners, extra)
            conditions.append(f"{extra} shadow")
    hom = _tilt(canvas, out, degrees, rng)
    frame = cv2.warpPerspective(frame, hom, out, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    corners = cv2.perspectiveTransform(corners.reshape(1, 4, 2), hom).reshape(4, 2)
    inside = (
        (corners >= 2).all() and (corners[:, 0] <= out[0] - 3).all() and (corners[:, 1] <= out[1] - 3).all()
    )
    if size_name == "big" and not inside:
        return scene(deck, code, rng, size_name, scale, more)
    balance = np.array([rng.uniform(0.85, 1.1), 1.0, rng.uniform(0.85, 1.15)], np.float32)
    frame = (frame * balance).clip(0, 255).astype(np.uint8)
    glare = float(rng.uniform(0.3, 0.8)) if rng.random() < 0.3 else 0.0
    blur = float(rng.uniform(0.6, 1.6)) if rng.random() < 0.4 else 0.0
    if glare:
        conditions.append("glare")
    if blur:
        conditions.append("blur")
    camera = Camera(
        out,
        rng,
        lighting=float(rng.uniform(0, 0.5)),
        glare=glare,
        blur=blur * scale,
        noise=float(rng.uniform(1, 6)),
        jpeg_quality=int(rng.integers(60, 96)),
    )
    image = camera.shoot(frame, rng)
    if more and rng.random() < 0.5:
        image = _motion_blur(image, rng)
        conditions.append("motion blur")
    side = float(np.mean([np.linalg.norm(corners[1] - corners[0]), np.linalg.norm(corners[3] - corners[2])]))
    return Scene(image, code, corners, side, tuple(conditions))


def calibration_photo(deck: str, code: str, rng: np.random.Generator) -> np.ndarray:
    """One card alone, about 260 px wide in 1280x720, on green cloth, wood or a dark table, under a
    light and camera kinder than a game's: as a player takes the photos `referee calibrate deck
    --images DIR` learns a profile from."""
    frame = _table(str(rng.choice(("green_cloth", "wood", "dark"))), (1280, 720), rng)
    img, mask = _sprite(deck, code, int(rng.uniform(230, 290)))
    paste_sprite(frame, rotate_sprite(img, mask, float(rng.uniform(-20, 20))), 640, 360, 0.3)
    camera = Camera((1280, 720), rng, lighting=0.2, blur=0.5, noise=2.0, jpeg_quality=90)
    return camera.shoot(frame, rng)


def game_photo(deck: str, code: str, rng: np.random.Generator) -> np.ndarray:
    """One card alone, typical-sized, taken as a game's frames are (tilt, glare, blur, a hand's or
    a lamp's shadow, any table): the photos of a player who calibrates in a poor light."""
    while True:
        s = scene(deck, code, rng, size_name="typical")
        if "single" in s.conditions:
            return s.image


def _card(code: str):
    from referee.cards import parse_card

    return parse_card(code)


def _pick(codes: list[str], rng: np.random.Generator):
    return _card(codes[int(rng.integers(len(codes)))])


def outline_error(quad: np.ndarray | None, scene_: Scene) -> float:
    """The largest corner distance from the truth, in the card's widths, in the best corner order."""
    if quad is None:
        return math.inf
    q = np.asarray(quad, np.float64).reshape(4, 2)
    best = min(
        float(np.abs(np.roll(order, k, axis=0) - scene_.corners).max())
        for order in (q, q[::-1])
        for k in range(4)
    )
    return best / scene_.width


def _tally(recogniser, frames: Iterable[np.ndarray]) -> tuple[int, int, dict[str, int]]:
    """Each frame read as a still photo is: how many were refused (no card), of how many, and
    what the others were read as (code: count)."""
    refused, n, read = 0, 0, defaultdict(int)
    for frame in frames:
        got = recogniser.recognise(frame, thorough=True)
        n += 1
        refused += got.card is None
        if got.card is not None:
            read[got.card.code] += 1
    return refused, n, dict(read)


def refusals(recogniser, per_letter: int = 3) -> tuple[int, int, dict[str, int]]:
    """A lettered card (`lettered_face`) 150-260 px wide in 1280x720, alone or over another card:
    `_tally`'s counts for them."""
    return _tally(recogniser, _lettered_frames(per_letter))


def _lettered_frames(per_letter: int) -> Iterator[np.ndarray]:
    tables = ("green_cloth", "wood", "dark", "light")
    for font in UNSEEN_FONTS:
        for k, (letter, suit) in enumerate(FOREIGN_INDICES):
            for seed in range(per_letter):
                rng = np.random.default_rng([font, k, seed])
                faces = {"JS": lettered_face(letter, suit, font)}  # the face stands in for a card's
                width, angle = int(rng.integers(150, 260)), float(rng.uniform(0, 360))
                x, y = 640 + rng.normal(0, 10), 360 + rng.normal(0, 10)
                other = _card(str(rng.choice([c for c in CODES if c != "JS"])))
                under = Placement(other, x + 0.5 * width, y + 0.3 * width, float(rng.uniform(0, 360)), width)
                top = Placement(_card("JS"), x, y, angle, width)
                yield render_pile(
                    [under, top] if seed else [top],
                    tables[(k + seed) % len(tables)],
                    rng,
                    faces=faces,
                    size=(1280, 720),
                    lighting=0.3,
                    blur=0.6,
                    noise=3.0,
                    jpeg_quality=85,
                )


def joker_refusals(recogniser, per_mix: int = 12, themes: bool = False) -> tuple[int, int, dict[str, int]]:
    """The own stacked styles' jokers (or with `themes`, the tuning themes' own jokers) as `scene`
    draws any top card, on the default and the `--more` tables, read in a 52-card game
    (`recogniser`'s jokers off): `_tally`'s counts."""
    return _tally(recogniser, _joker_frames(per_mix, themes))


def _joker_frames(per_mix: int, themes: bool = False) -> Iterator[np.ndarray]:
    for deck in decks():
        if (deck in THEMES) != themes or (deck in STYLES and STYLES[deck].index_layout != "stacked"):
            continue
        for more in (False, True):
            rng = np.random.default_rng([99, decks().index(deck), more])
            for _ in range(per_mix):
                yield scene(deck, JOKER_CODE, rng, more=more).image


def main(argv: Sequence[str] | None = None) -> int:
    from referee.vision.recogniser import Profile, Recogniser

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="scenes per deck")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deck", action="append", choices=decks(), help="only these decks (default: all)")
    parser.add_argument("--dump", type=Path, help="write each miss here, its outline drawn")
    parser.add_argument(
        "--refusals", action="store_true", help="lettered cards of no English rank, and jokers, instead"
    )
    parser.add_argument("--more", action="store_true", help="felt, striped and white tables, motion blur")
    parser.add_argument(
        "--calibrated",
        nargs="?",
        const="kind",
        choices=("kind", "game"),
        help="read with a profile of each deck, learnt from photos in a kind light or taken as a game's",
    )
    args = parser.parse_args(argv)
    recogniser = Recogniser(jokers=False)
    if args.refusals:
        began = time.perf_counter()
        refused, n, read = refusals(recogniser)
        print(f"refused {refused}/{n} = {100 * refused / n:.1f} %; read as {read or 'nothing'}")
        refused, n, read = joker_refusals(recogniser)
        print(f"jokers refused {refused}/{n} = {100 * refused / n:.1f} %; read as {read or 'nothing'}")
        refused, n, read = joker_refusals(recogniser, per_mix=8, themes=True)
        print(f"theme jokers refused {refused}/{n} = {100 * refused / n:.1f} %; read as {read or 'nothing'}")
        print(f"{time.perf_counter() - began:.0f} s")
        return 0
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # right, outline, sure, sure wrong, n
    began = time.perf_counter()
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
    for deck in args.deck or decks():
        rng = np.random.default_rng([args.seed, decks().index(deck)])  # a deck's scenes, alone or not
        if args.calibrated:  # its own generator: the scenes stay those of the built-in figures
            photos = np.random.default_rng([args.seed, decks().index(deck), 52])
            photo = calibration_photo if args.calibrated == "kind" else game_photo
            profile = Profile.learn({code: photo(deck, code, photos) for code in CODES})
            recogniser = Recogniser(profile, jokers=False)
        for i in range(args.n):
            s = scene(deck, CODES[int(rng.integers(52))], rng, more=args.more)
            r = recogniser.recognise(s.image, thorough=True)
            right = r.card is not None and r.card.code == s.code
            outline = outline_error(r.quad, s) <= 0.08
            for key in ("all", f"deck {deck}", *s.conditions):
                c = counts[key]
                c[0] += right
                c[1] += outline
                c[2] += r.sure
                c[3] += r.sure and not right
                c[4] += 1
            if args.dump and not right:
                img = s.image.copy()
                cv2.polylines(img, [s.corners.astype(np.int32)], True, (0, 255, 0), 1)
                if r.quad is not None:
                    cv2.polylines(img, [np.asarray(r.quad).astype(np.int32)], True, (0, 0, 255), 2)
                read = r.card.code if r.card else "none"
                name = f"{deck}-{i:03d}-{s.code}-as-{read}-{'ok' if outline else 'outline'}.jpg"
                cv2.imwrite(str(args.dump / name), img)
    print(f"{'':<18}{'right':>16}{'outline right':>16}{'sure':>8}{'sure wrong':>12}")
    for key, (k, o, su, sw, n) in sorted(counts.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        print(f"{key:<18}{f'{k}/{n} {100 * k / n:.1f} %':>16}{f'{100 * o / n:.1f} %':>16}{su:>8}{sw:>12}")
    print(f"{time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
