"""The shape of the code (issue 20): short functions, imports at the top where nothing is
gained by deferring them, and a command line that starts without the heavy libraries. Every
module of referee/, calibration/ and hardware/."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(p for root in ("referee", "calibration", "hardware") for p in (ROOT / root).rglob("*.py"))
MAX_LINES = 60  # a function's lines, its docstring included
# What a command would load at start-up if these modules imported them at the top.
HEAVY = ("cv2", "numpy", "rich", "starlette", "uvicorn", "picamera2", "gpiozero", "segno", "schemdraw")


def _ours() -> list[Path]:
    return FILES


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


@pytest.mark.parametrize("path", _ours(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_function_is_longer_than_60_lines(path: Path) -> None:
    tree = ast.parse(path.read_text())
    long = [
        f"{f.name}: {f.end_lineno - f.lineno + 1} lines"  # type: ignore[operator]
        for f in _functions(tree)
        if f.end_lineno - f.lineno + 1 > MAX_LINES  # type: ignore[operator]
    ]
    assert long == []


@pytest.mark.parametrize("path", _ours(), ids=lambda p: str(p.relative_to(ROOT)))
def test_an_import_left_inside_a_function_says_why(path: Path) -> None:
    """A deferred import hides an arrow of the import graph: each block of them carries a
    comment (the library it keeps from start-up, or the check it is)."""
    lines = path.read_text().splitlines()
    tree = ast.parse("\n".join(lines))
    inner = sorted(
        {
            n.lineno
            for f in _functions(tree)
            for n in ast.walk(f)
            if isinstance(n, ast.Import | ast.ImportFrom)
        }
    )
    blocks: list[list[int]] = []
    for lineno in inner:
        if blocks and lineno == blocks[-1][-1] + 1:
            blocks[-1].append(lineno)
        else:
            blocks.append([lineno])
    silent = [
        lines[block[0] - 1].strip()
        for block in blocks
        if not any("#" in lines[n - 1] for n in block) and not lines[block[0] - 2].strip().startswith("#")
    ]
    assert silent == []


def test_the_command_line_starts_without_the_heavy_libraries() -> None:
    """`referee COMMAND` parses its arguments with every command group's parser built: none of
    them loads OpenCV, numpy, rich, Starlette, uvicorn, picamera2, gpiozero, segno or schemdraw."""
    code = (
        "import sys\n"
        "from referee.cli.main import build_parser\n"
        "build_parser().parse_args(['adjudicate', '-'])\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []
