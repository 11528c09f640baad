"""The recogniser on each OpenCV stack: the very same frames read on each, the readings compared.

    .venv/bin/python benchmarks/bench_stacks.py --make DIR      (the frames, then this stack's readings)
    .venv/bin/python benchmarks/bench_stacks.py --read DIR --label NAME   (another stack's readings)
    .venv/bin/python benchmarks/bench_stacks.py --compare DIR   (every stack's figures side by side)

`.ci/stacks` runs it: the frames are made once and saved as PNG (lossless, so every stack
decodes the same pixels), then each stack (pip's OpenCV, Debian bookworm's, trixie's) reads
them and writes DIR/readings-NAME.json. The frames: the held-out scene generator's piles of
never-tuned decks (benchmarks/heldout_scenes.py) and piles of the project's own card styles
(referee/sim/render.py). About a minute per stack on 2 cores. Plain script: prints figures,
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import heldout_scenes as hs

from referee.cards import deck
from referee.sim.render import Placement, render_pile
from referee.vision.recogniser import Recogniser

HELDOUT_DECKS = ("anglo", "tango", "paris", "stroke_sans")
TABLES = ("green_cloth", "wood", "dark", "light", "patterned")


def make_frames(folder: Path, per_deck: int, seed: int) -> list[dict[str, str]]:
    """The frames, written to `folder`; returns [{file, code, kind}]."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for d in HELDOUT_DECKS:
        codes = hs.english_codes(d)
        for k in range(per_deck):
            top = codes[int(rng.integers(len(codes)))]
            look = hs.Look(kind=("single", "pile", "pair")[k % 3])
            s = hs.scene(d, top, rng, look, [c for c in codes if c != top])
            out.append({"file": f"{d}-{k:03d}.png", "code": s.code, "kind": f"held out: {d}"})
            cv2.imwrite(str(folder / out[-1]["file"]), s.image)
    cards = deck(52)
    for k in range(per_deck):
        width = int(rng.integers(110, 260))
        chosen = [cards[i] for i in rng.choice(52, size=int(rng.integers(1, 5)), replace=False)]
        placed = [
            Placement(c, 320 + rng.normal(0, 25), 240 + rng.normal(0, 25), float(rng.uniform(0, 360)), width)
            for c in chosen
        ]
        frame = render_pile(
            placed, TABLES[k % len(TABLES)], rng, lighting=0.3, blur=0.6, noise=3, jpeg_quality=85
        )
        out.append({"file": f"house-{k:03d}.png", "code": chosen[-1].code, "kind": "house style"})
        cv2.imwrite(str(folder / out[-1]["file"]), frame)
    (folder / "scenes.json").write_text(json.dumps(out, indent=1))
    return out


def read_frames(folder: Path, label: str) -> dict[str, object]:
    """This stack's readings of the frames, written to folder/readings-LABEL.json."""
    scenes = json.loads((folder / "scenes.json").read_text())
    recogniser = Recogniser()
    readings: dict[str, list[object]] = {}
    spent = 0.0
    for s in scenes:
        frame = cv2.imread(str(folder / s["file"]), cv2.IMREAD_COLOR)
        t0 = time.perf_counter()
        r = recogniser.recognise(frame)
        spent += time.perf_counter() - t0
        readings[s["file"]] = [None if r.card is None else r.card.code, bool(r.sure), round(r.confidence, 3)]
    result = {
        "label": label,
        "opencv": cv2.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "ms_per_frame": round(1000 * spent / len(scenes), 1),
        "readings": readings,
    }
    (folder / f"readings-{label}.json").write_text(json.dumps(result, indent=1))
    return result


def figures(scenes: list[dict[str, str]], readings: dict[str, list[object]]) -> dict[str, str]:
    """Per kind of frame: read right (of all), sure and wrong, asked (not sure)."""
    out = {}
    for kind in sorted({s["kind"] for s in scenes}):
        mine = [s for s in scenes if s["kind"] == kind]
        right = sum(readings[s["file"]][0] == s["code"] for s in mine)
        wrong = sum(readings[s["file"]][1] and readings[s["file"]][0] != s["code"] for s in mine)
        asked = sum(not readings[s["file"]][1] for s in mine)
        out[kind] = f"{right}/{len(mine)} right, {wrong} sure wrong, {asked} asked"
    return out


def compare(folder: Path) -> None:
    scenes = json.loads((folder / "scenes.json").read_text())
    runs = [json.loads(p.read_text()) for p in sorted(folder.glob("readings-*.json"))]
    runs.sort(key=lambda run: run["label"] != "pip")  # pip's OpenCV first: the one tuned on
    if not runs:
        print("no readings yet")
        return
    first = runs[0]
    print(f"{len(scenes)} frames, read on each stack; differences against {first['label']}:")
    for run in runs:
        print(f"\n{run['label']}: OpenCV {run['opencv']}, numpy {run['numpy']}, Python {run['python']}")
        for kind, text in figures(scenes, run["readings"]).items():
            print(f"  {kind:24} {text}")
        cards = sum(run["readings"][f][0] != first["readings"][f][0] for f in first["readings"])
        sure = sum(run["readings"][f][:2] != first["readings"][f][:2] for f in first["readings"])
        conf = max(abs(run["readings"][f][2] - first["readings"][f][2]) for f in first["readings"])
        print(f"  cards read differently: {cards}; card or sureness differently: {sure}; ", end="")
        print(f"largest confidence difference: {conf:.3f}")
        print(f"  recognise: {run['ms_per_frame']} ms per frame (this machine, not a Pi)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--make", metavar="DIR", help="make the frames in DIR, then read them here")
    how.add_argument("--read", metavar="DIR", help="read the frames in DIR")
    how.add_argument("--compare", metavar="DIR", help="every stack's figures side by side")
    parser.add_argument("--label", default="pip", help="this stack's name in the figures (default: pip)")
    parser.add_argument("--per-deck", type=int, default=30, help="frames per deck (default 30)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.compare:
        compare(Path(args.compare))
        return 0
    folder = Path(args.make or args.read)
    if args.make:
        make_frames(folder, args.per_deck, args.seed)
    elif not (folder / "scenes.json").is_file():
        print(f"bench_stacks: no frames in {folder}: make them first with --make {folder}", file=sys.stderr)
        return 2
    result = read_frames(folder, args.label)
    versions = f"OpenCV {result['opencv']}, numpy {result['numpy']}"
    print(f"{args.label}: {versions}: {result['ms_per_frame']} ms/frame")
    scenes = json.loads((folder / "scenes.json").read_text())
    for kind, text in figures(scenes, result["readings"]).items():  # type: ignore[arg-type]
        print(f"  {kind:24} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
