"""Train the corner model: a small convolutional network that marks the top card's four corners.

    .venv/bin/python tools/train_corner_model.py data --n 4000 --out /tmp/corners-a.npz
    .venv/bin/python tools/train_corner_model.py data --n 3000 --seed 4000 --more --out /tmp/corners-b.npz
    python tools/train_corner_model.py train --data /tmp/corners-a.npz /tmp/corners-b.npz  (needs torch)

The shipped weights (2026-11-28, session 18): `data --n 4000 --seed 0 --out A`,
`data --n 3000 --seed 4000 --more --out B`, `data --n 5000 --seed 7000 --out C` and
`data --n 3000 --seed 12000 --more --out D` (2 to 5 minutes each here), then
`train --data A B C D --epochs 14 --seed 0` (36 minutes on two cores; of the corners on the 5 % of
pictures kept from training, 2,619 of 2,998 have a mark of 0.3 or more within 2 input px).

The pictures come from the generator that tunes (tools/tuning_scenes.py: the own renderer's styles
and the index model's training themes, under issue 18's conditions; `--more`: every tuning deck on
the felt, striped and white tables, a motion blur half the time), never from the one that grades
(benchmarks/heldout_scenes.py). Training needs PyTorch (`pip install torch`, CPU build); it is a
developer's tool, not a dependency of the referee: the weights ship as plain arrays in
`referee/data/corner_model.npz` and `referee/vision/corner_model.py` runs them with numpy alone.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_outline_model import cli, picture, trunk, trunk_layers, write_data

from referee.vision.corner_model import INPUT_WIDTH, MODEL_PATH, OUT_STRIDE, layer_names

SIGMA = 1.0  # the spread of a corner's mark, in cells


def sample(seed: int, more: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One training picture (landscape, INPUT_WIDTH wide) and the top card's corners in its pixels."""
    small, corners, k = picture(seed, 19, INPUT_WIDTH, more)
    return small, ((corners + 0.5) * k - 0.5).astype(np.float32)  # pixel centres at whole numbers


def targets(corners: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The marks a picture's corners ask for, at OUT_STRIDE: a peak of 1 at each corner's cell
    falling off as a Gaussian, the corner's offset from that cell's centre, and where it is."""
    h, w = shape
    heat = np.zeros((h, w), np.float32)
    offset = np.zeros((2, h, w), np.float32)
    at = np.zeros((h, w), np.float32)
    ys, xs = np.mgrid[0:h, 0:w]
    for x, y in corners:
        u, v = (x - (OUT_STRIDE - 1) / 2) / OUT_STRIDE, (y - (OUT_STRIDE - 1) / 2) / OUT_STRIDE
        i, j = round(v), round(u)
        if not (0 <= i < h and 0 <= j < w):
            continue  # off the frame: no corner to mark
        heat = np.maximum(heat, np.exp(-((xs - u) ** 2 + (ys - v) ** 2) / (2 * SIGMA**2)))
        heat[i, j] = 1.0
        offset[:, i, j] = (u - j, v - i)
        at[i, j] = 1.0
    return heat, offset, at


def make_data(n: int, out: Path, seed: int, jobs: int, more: bool = False) -> None:
    write_data(sample, "corners", n, out, seed, jobs, more)


def _net():
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers = trunk_layers(nn, 32)  # made first: the seed starts the same weights as before
            layers["fine"] = nn.Conv2d(32, 32, 3, 1, 1)
            layers["head"] = nn.Conv2d(32, 3, 1)
            self.layers = nn.ModuleDict(layers)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            f = self.layers
            x = trunk(f, x)
            x = torch.relu(f["fine"](x)) + x
            return f["head"](x)

    return Net()


def _loss(out, heat, offset, at):
    """CenterNet's focal loss on the marks, and the offsets' L1 at the corners' own cells."""
    import torch

    p = torch.sigmoid(out[:, :1]).clamp(1e-4, 1 - 1e-4)
    pos = at[:, None]
    neg = (1 - pos) * (1 - heat[:, None]) ** 4
    n = pos.sum().clamp(min=1)
    focal = -((1 - p) ** 2 * torch.log(p) * pos + p**2 * torch.log(1 - p) * neg).sum() / n
    off = (torch.abs(out[:, 1:] - offset) * pos).sum() / n
    return focal + off


def train(data: list[Path], epochs: int, out: Path, seed: int, threads: int) -> None:
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    images_np, corners_np = [], []
    for path in data:
        with np.load(path) as part:
            images_np.append(part["images"])
            corners_np.append(part["corners"])
    images_u8 = np.concatenate(images_np)
    corners = np.concatenate(corners_np)
    n, h, w = images_u8.shape[:3]
    grid = (h // OUT_STRIDE, w // OUT_STRIDE)
    made = [targets(c, grid) for c in corners]
    heat = torch.from_numpy(np.stack([m[0] for m in made]))
    offset = torch.from_numpy(np.stack([m[1] for m in made]))
    at = torch.from_numpy(np.stack([m[2] for m in made]))
    images = torch.from_numpy(images_u8).permute(0, 3, 1, 2)  # uint8: made float a batch at a time
    held = max(1, n // 20)  # a few pictures to watch the loss on, never trained on
    order = torch.randperm(n)
    val_i, train_i = order[:held], order[held:]
    net = _net()
    assert list(net.layers) == layer_names()
    with torch.no_grad():  # marks start rare (CenterNet's prior of 0.1): the focal loss starts calm
        net.layers["head"].bias[0] = -2.19
    opt = torch.optim.AdamW(net.parameters(), 2e-3, weight_decay=1e-4)
    batch = 32
    steps = epochs * (len(train_i) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps)
    began = time.perf_counter()
    for epoch in range(epochs):
        net.train()
        perm = train_i[torch.randperm(len(train_i))]
        total = 0.0
        for k in range(len(perm) // batch):
            idx = perm[k * batch : (k + 1) * batch]
            x, y, o, a = images[idx].float() / 255, heat[idx], offset[idx].clone(), at[idx]
            if torch.rand(()) < 0.5:  # mirrored: a card's corners have no handedness
                x, y, o, a = x.flip(3), y.flip(2), o.flip(3), a.flip(2)
                o[:, 0] = -o[:, 0]
            if torch.rand(()) < 0.5:
                x, y, o, a = x.flip(2), y.flip(1), o.flip(2), a.flip(1)
                o[:, 1] = -o[:, 1]
            # light and white balance the scenes did not draw
            x = x * (0.75 + 0.5 * torch.rand(len(x), 3, 1, 1)) + 0.1 * (torch.rand(len(x), 1, 1, 1) - 0.5)
            loss = _loss(net(x.clamp(0, 1) - 0.5), y, o, a)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        net.eval()
        with torch.no_grad():
            val = float(_loss(net(images[val_i].float() / 255 - 0.5), heat[val_i], offset[val_i], at[val_i]))
        print(
            f"epoch {epoch + 1}/{epochs}: train {total / max(1, len(perm) // batch):.4f}, "
            f"held {val:.4f}, {time.perf_counter() - began:.0f} s",
            flush=True,
        )
    weights = {}
    for name, layer in net.layers.items():
        weights[f"{name}.w"] = layer.weight.detach().numpy().astype(np.float32)
        weights[f"{name}.b"] = layer.bias.detach().numpy().astype(np.float32)
    np.savez_compressed(out, **weights)
    _check(net, out, images_u8, corners, val_i.numpy())


def _check(net, out: Path, images: np.ndarray, corners: np.ndarray, val: np.ndarray) -> None:
    """The shipped forward pass (numpy) must give torch's marks; and how near the corners it finds
    lie to the truth on the pictures kept from training."""
    import torch

    from referee.vision import corner_model

    corner_model.MODEL_PATH = out
    corner_model._weights.cache_clear()
    raw = images[int(val[0])]
    mine = corner_model.marks(raw)[0]
    with torch.no_grad():
        theirs = torch.sigmoid(net(torch.from_numpy(raw).permute(2, 0, 1)[None].float() / 255 - 0.5))
    diff = np.abs(mine - theirs[0, 0].numpy()).max()
    print(f"wrote {out}; numpy against torch: largest difference {diff:.2e}")
    found = within = 0
    for i in val:
        peaks = corner_model.peaks(corner_model.marks(images[i]), 0.3)
        for x, y in corners[i]:
            if not (0 <= x < images.shape[2] and 0 <= y < images.shape[1]):
                continue
            d = min((np.hypot(px - x, py - y) for px, py, _ in peaks), default=np.inf)
            found += 1
            within += d <= 2.0
    print(f"kept pictures: {within}/{found} corners with a mark of 0.3 or more within 2 input px")


def main(argv: Sequence[str] | None = None) -> int:
    return cli(argv, __doc__.splitlines()[0], make_data, train, (3000, 14, MODEL_PATH))


if __name__ == "__main__":
    raise SystemExit(main())
