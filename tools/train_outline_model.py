"""Train the outline model: a small convolutional network that marks the top card of a pile.

    .venv/bin/python tools/train_outline_model.py data --n 5000 --out /tmp/outline-data.npz  (8 min here)
    python tools/train_outline_model.py train --data /tmp/outline-data.npz ...  (needs torch: see below)

The shipped weights (2026-11-26, session 9): `data --n 5000 --seed 0 --out A` (8 minutes here) and
`data --n 3000 --seed 5000 --more --out B` (7 minutes: every deck, on the felt, striped and white
tables with a motion blur half the time), then `train --data A B --epochs 10 --seed 0` (21 minutes
on two cores; cells over one half overlap the truth 0.813 on the 5 % of pictures kept from
training). The first weights learnt from A alone. Covers drawn at half the input's size (as the
first ones were) are averaged to a quarter by `train`.

The pictures come from the generator that tunes (tools/tuning_scenes.py: the own renderer's styles
and the index model's training themes, under issue 18's conditions), never from the one that grades
(benchmarks/heldout_scenes.py). Training needs PyTorch (`pip install torch`, CPU build); it is a
developer's tool, not a dependency of the referee: the weights ship as plain arrays in
`referee/data/outline_model.npz` and `referee/vision/outline_model.py` runs them with numpy alone.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from referee.vision.outline_model import INPUT_WIDTH, MODEL_PATH, OUT_STRIDE, layer_names

SCALE = 0.5  # scenes drawn at half size: the model sees them at 256 px wide anyway


def picture(seed: int, tag: int, width: int, more: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """A training picture: a scene of the generator that tunes, drawn at SCALE from the rng
    [seed, tag], lying down (a portrait photo turned over its diagonal: the models see every frame
    so) and `width` wide by INTER_AREA; with the top card's corners in the scene's px and the factor
    from those to the picture's. `more`: every deck of the generator that tunes, on the tables of
    its `--more` mix (felt, stripes, white; a motion blur half the time)."""
    import tuning_scenes as ts

    rng = np.random.default_rng([seed, tag])
    decks = ts.decks(stacked_only=not more)  # the default mix: as the first weights were trained
    deck, code = decks[int(rng.integers(len(decks)))], ts.CODES[int(rng.integers(52))]
    s = ts.scene(deck, code, rng, scale=SCALE, more=more)
    image, corners = s.image, s.corners.astype(np.float64)
    if image.shape[0] > image.shape[1]:
        image = np.ascontiguousarray(image.transpose(1, 0, 2))
        corners = corners[:, ::-1]
    h, w = image.shape[:2]
    size = (width, round(width * h / w))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA), corners, size[0] / w


def sample(seed: int, more: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One training picture (landscape, INPUT_WIDTH wide) and the top card's cover at 1/OUT_STRIDE."""
    small, corners, k = picture(seed, 18, INPUT_WIDTH, more)
    h, w = small.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    pts = np.round(corners * k * 16).astype(np.int32)
    cv2.fillConvexPoly(mask, pts, 255, lineType=cv2.LINE_AA, shift=4)
    cover = cv2.resize(mask, (w // OUT_STRIDE, h // OUT_STRIDE), interpolation=cv2.INTER_AREA)
    return small, cover


def write_data(
    sample_one: Callable[[int, bool], tuple[np.ndarray, np.ndarray]],
    key: str,
    n: int,
    out: Path,
    seed: int,
    jobs: int,
    more: bool = False,
) -> None:
    """`n` pictures from `sample_one` (seeds `seed` on), drawn by `jobs` processes, written to
    `out` as `images` and `key` (what each picture's second part is)."""
    began = time.perf_counter()
    with multiprocessing.Pool(jobs) as pool:
        pairs = pool.starmap(sample_one, ((k, more) for k in range(seed, seed + n)), chunksize=20)
    np.savez_compressed(
        out, **{"images": np.stack([p[0] for p in pairs]), key: np.stack([p[1] for p in pairs])}
    )
    print(f"{n} pictures in {time.perf_counter() - began:.0f} s: {out}")


def trunk_layers(nn, up: int) -> dict:
    """The torch layers of the trunk both models share (`outline_model.features`), `up` channels
    out of its last."""
    c = nn.Conv2d
    return {
        "enc1": c(3, 16, 3, 2, 1),
        "enc2": c(16, 32, 3, 2, 1),
        "enc3": c(32, 48, 3, 2, 1),
        "ctx1": c(48, 48, 3, 1, 2, dilation=2),
        "ctx2": c(48, 48, 3, 1, 4, dilation=4),
        "ctx3": c(48, 48, 3, 1, 8, dilation=8),
        "up": c(48 + 32, up, 3, 1, 1),
    }


def trunk(layers, x):
    """`outline_model.features` in torch."""
    import torch

    r = torch.relu
    e1 = r(layers["enc1"](x))
    e2 = r(layers["enc2"](e1))
    e3 = r(layers["enc3"](e2))
    x = r(layers["ctx1"](e3))
    x = r(layers["ctx2"](x)) + x
    x = r(layers["ctx3"](x)) + x
    x = torch.nn.functional.interpolate(x, size=e2.shape[2:], mode="nearest")
    return r(layers["up"](torch.cat([x, e2], 1)))


def train(data: list[Path], epochs: int, out: Path, seed: int, threads: int) -> None:
    import torch
    from torch import nn

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    images_np, covers_np = [], []
    for path in data:
        with np.load(path) as part:
            img, cov = part["images"], part["covers"].astype(np.float32) / 255
        k = cov.shape[1] // (img.shape[1] // OUT_STRIDE)
        if k > 1:  # drawn for a finer model: the mean of each k x k block
            n_, h_, w_ = cov.shape
            cov = cov.reshape(n_, h_ // k, k, w_ // k, k).mean(axis=(2, 4))
        images_np.append(img)
        covers_np.append(cov)
    arrays = {"images": np.concatenate(images_np)}
    images = torch.from_numpy(arrays["images"]).permute(0, 3, 1, 2).float() / 255 - 0.5
    covers = np.concatenate(covers_np)
    covers = torch.from_numpy(covers)[:, None]
    n = len(images)
    held = max(1, n // 20)  # a few pictures to watch the loss on, never trained on
    order = torch.randperm(n)
    val_i, train_i = order[:held], order[held:]

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleDict({**trunk_layers(nn, 24), "head": nn.Conv2d(24, 1, 1)})

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layers["head"](trunk(self.layers, x))

    net = Net()
    assert list(net.layers) == layer_names()
    opt = torch.optim.AdamW(net.parameters(), 2e-3, weight_decay=1e-4)
    steps = epochs * (len(train_i) // 32)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps)

    def loss_of(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = net(x)
        bce = nn.functional.binary_cross_entropy_with_logits(logits, y)
        p = torch.sigmoid(logits)
        dice = 1 - (2 * (p * y).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3)) + y.sum((1, 2, 3)) + 1)
        return bce + dice.mean()

    began = time.perf_counter()
    for epoch in range(epochs):
        net.train()
        perm = train_i[torch.randperm(len(train_i))]
        total = 0.0
        for k in range(len(perm) // 32):
            idx = perm[k * 32 : (k + 1) * 32]
            x, y = images[idx], covers[idx]
            if torch.rand(()) < 0.5:  # mirror: a card's outline has no handedness
                x, y = x.flip(3), y.flip(3)
            if torch.rand(()) < 0.5:
                x, y = x.flip(2), y.flip(2)
            # light and white balance the scenes did not draw
            x = (x + 0.5) * (0.75 + 0.5 * torch.rand(len(x), 3, 1, 1)) + 0.1 * (
                torch.rand(len(x), 1, 1, 1) - 0.5
            )
            x = x.clamp(0, 1) - 0.5
            loss = loss_of(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        net.eval()
        with torch.no_grad():
            val = float(loss_of(images[val_i], covers[val_i]))
            p = torch.sigmoid(net(images[val_i])) > 0.5
            t = covers[val_i] > 0.5
            iou = float((p & t).sum() / (p | t).sum().clamp(min=1))
        print(
            f"epoch {epoch + 1}/{epochs}: train {total / max(1, len(perm) // 32):.4f}, "
            f"held {val:.4f}, IoU {iou:.3f}, {time.perf_counter() - began:.0f} s",
            flush=True,
        )
    weights = {}
    for name, layer in net.layers.items():
        weights[f"{name}.w"] = layer.weight.detach().numpy().astype(np.float32)
        weights[f"{name}.b"] = layer.bias.detach().numpy().astype(np.float32)
    np.savez_compressed(out, **weights)
    # the shipped forward pass (numpy) must give what torch gives
    from referee.vision import outline_model

    outline_model.MODEL_PATH = out
    outline_model._weights.cache_clear()
    raw = arrays["images"][int(val_i[0])]
    mine, _ = outline_model.cover(raw)
    with torch.no_grad():
        theirs = torch.sigmoid(net(images[val_i[:1]]))[0, 0].numpy()
    print(f"wrote {out}; numpy against torch: largest difference {np.abs(mine - theirs).max():.2e}")


def cli(
    argv: Sequence[str] | None,
    description: str,
    data: Callable[[int, Path, int, int, bool], None],
    train_: Callable[[list[Path], int, Path, int, int], None],
    defaults: tuple[int, int, Path],
) -> int:
    """A model's training tool: `data` draws pictures, `train` learns from them. `defaults`: the
    pictures drawn, the epochs and where the weights are written."""
    n, epochs, model_path = defaults
    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("data", help="draw training pictures")
    d.add_argument("--n", type=int, default=n)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--jobs", type=int, default=2)
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--more", action="store_true", help="every deck, on the tuning generator's --more tables")
    t = sub.add_parser("train", help="train on them (needs torch)")
    t.add_argument("--data", type=Path, nargs="+", required=True, help="one or more files `data` wrote")
    t.add_argument("--epochs", type=int, default=epochs)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--out", type=Path, default=model_path)
    args = parser.parse_args(argv)
    if args.command == "data":
        data(args.n, args.out, args.seed, args.jobs, args.more)
    else:
        train_(args.data, args.epochs, args.out, args.seed, args.threads)
    return 0


def make_data(n: int, out: Path, seed: int, jobs: int, more: bool = False) -> None:
    write_data(sample, "covers", n, out, seed, jobs, more)


def main(argv: Sequence[str] | None = None) -> int:
    return cli(argv, __doc__.splitlines()[0], make_data, train, (5000, 10, MODEL_PATH))


if __name__ == "__main__":
    raise SystemExit(main())
