"""Regenerate the builder's guide's computed parts: the wiring pictures (docs/images/wiring-*.svg,
drawn from the default wiring with schemdraw) and the camera-height table in docs/build.md.

    .venv/bin/python tools/guide_pictures.py          # write them
    .venv/bin/python tools/guide_pictures.py --check  # exit 1 if any is out of date

tests/test_build_guide.py runs the check, so a changed wiring plan or lens figure that is not
regenerated fails the suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calibration.optics import heights_table  # noqa: E402
from calibration.wiring_picture import draw_wiring  # noqa: E402
from referee.live.wiring import default_wiring  # noqa: E402

BUILD_MD = ROOT / "docs" / "build.md"
BEGIN, END = "<!-- heights table: tools/guide_pictures.py -->", "<!-- end of heights table -->"


def pictures() -> dict[Path, bytes]:
    """Each picture's path and its SVG, with a first line saying how it was made."""
    import schemdraw

    out = {}
    for seats, title in (
        (4, "The default 4 seats: referee/data/wiring.default.toml"),
        (8, "The default 8 seats: referee/data/wiring.default.toml with seats 4 to 7 uncommented"),
    ):
        head = (
            f"<!-- drawn by tools/guide_pictures.py with schemdraw {schemdraw.__version__}: do not edit -->\n"
        )
        out[ROOT / "docs" / "images" / f"wiring-{seats}-seats.svg"] = head.encode() + draw_wiring(
            default_wiring(seats), title
        )
    return out


def build_md(text: str) -> str:
    """docs/build.md with the heights table between its markers replaced by a fresh one."""
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return f"{before}{BEGIN}\n{heights_table()}\n{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a picture or the table is stale")
    args = parser.parse_args(argv)
    wanted = pictures()
    wanted[BUILD_MD] = build_md(BUILD_MD.read_text()).encode()
    stale = [p for p, data in wanted.items() if not p.exists() or p.read_bytes() != data]
    if args.check:
        for p in stale:
            print(f"{p.relative_to(ROOT)}: out of date: run tools/guide_pictures.py", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_bytes(wanted[p])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
