"""Make the simulator's glyph outlines (referee/data/glyphs.json) from OpenCV 5's built-in face.

    .venv/bin/pip install fonttools && .venv/bin/python tools/make_glyphs.py    (seconds)

OpenCV 5 draws `cv2.putText`'s Hershey fonts with a TrueType face built into the library
(Rubik, SIL Open Font License 1.1; a variable font whose weight axis stands for the
thickness), OpenCV 4 with Hershey's stroke fonts: the same call gives other pictures on
pip's OpenCV and on a Pi's Debian OpenCV. The simulator (referee/sim/glyphs.py) therefore draws
its text itself from outlines it owns. This script takes them from the face inside the
installed OpenCV 5 (it is stored there gzip-compressed as "Rubik.ttf"), at the three weights
`putText` uses (400, 600, 800), instanced as 5.0 instances them, for the printable ASCII
letters, digits and signs, and writes them as TrueType contours: whole points (x, y, on-curve)
in font units, and each glyph's width. Run once; the output is committed, so neither the
tests nor the Pi need fontTools or OpenCV 5.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
import zlib
from pathlib import Path

import cv2
from fontTools.misc.fixedTools import floatToFixedToFloat
from fontTools.ttLib import TTFont
from fontTools.varLib.models import normalizeValue, piecewiseLinearMap, supportScalar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.sim.glyphs import GLYPHS_PATH, WEIGHTS

CHARS = "".join(chr(c) for c in range(32, 127))
NAME = b"Rubik.ttf\x00"  # the gzip member's name of OpenCV 5's upright sans face


def opencv_face() -> bytes:
    """The TrueType file OpenCV 5 draws putText with, out of its shared library."""
    lib = Path(cv2.__file__).parent
    for binary in sorted(lib.glob("cv2*.so")) + sorted(lib.glob("cv2*.pyd")):
        data = binary.read_bytes()
        for m in re.finditer(re.escape(b"\x1f\x8b\x08\x08") + b".{6}" + re.escape(NAME), data, re.S):
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            return d.decompress(data[m.start() :])
    sys.exit(f"make_glyphs: no {NAME[:-1].decode()} in OpenCV {cv2.__version__} at {lib} (needs OpenCV 5)")


def instance(font: TTFont, name: str, weight: int) -> tuple[int, list[list[list[float]]]]:
    """Glyph `name` at `weight` as OpenCV 5's stb_truetype instances it (fitted to 5.0's
    pictures and widths): the weight normalised through the avar table, gvar's deltas summed and
    floored to whole font units, the width moved by its phantom point's delta."""
    axis = next(a for a in font["fvar"].axes if a.axisTag == "wght")
    where = normalizeValue(weight, (axis.minValue, axis.defaultValue, axis.maxValue))
    if "avar" in font:
        where = piecewiseLinearMap(where, font["avar"].segments["wght"])
    where = floatToFixedToFloat(where, 14)
    glyph = font["glyf"][name]
    coords, ends, flags = glyph.getCoordinates(font["glyf"])
    n = len(coords)
    moved = [[0.0, 0.0] for _ in range(n + 4)]  # the points, then the four phantom points
    for var in font["gvar"].variations.get(name, []):
        scalar = supportScalar({"wght": where}, var.axes)
        for i, d in enumerate(var.coordinates):
            if d is not None and scalar:
                moved[i][0] += scalar * d[0]
                moved[i][1] += scalar * d[1]
    out, first = [], 0
    for last in ends:
        out.append(
            [
                [coords[i][0] + math.floor(moved[i][0]), coords[i][1] + math.floor(moved[i][1]), flags[i] & 1]
                for i in range(first, last + 1)
            ]
        )
        first = last + 1
    # A glyph with no outline (the space) keeps its default width on 5.0.
    advance = font["hmtx"][name][0] + (math.floor(moved[n + 1][0]) if n else 0)
    return advance, out


def main() -> int:
    font = TTFont(io.BytesIO(opencv_face()))
    cmap = font.getBestCmap()
    data: dict[str, object] = {
        "source": f"OpenCV {cv2.__version__}'s built-in face (Rubik), made by tools/make_glyphs.py",
        "licence": "Rubik: Copyright 2015 The Rubik Project Authors (https://github.com/googlefonts/rubik); "
        "SIL Open Font License 1.1 (referee/data/OFL.txt)",
        "ascent": font["hhea"].ascent,
        "weights": {str(w): {ch: list(instance(font, cmap[ord(ch)], w)) for ch in CHARS} for w in WEIGHTS},
    }
    GLYPHS_PATH.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"{GLYPHS_PATH}: {len(CHARS)} characters at weights {WEIGHTS}, {GLYPHS_PATH.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
