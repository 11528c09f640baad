"""A seeded sample of benchmarks/fuzz_inputs.py in the suite: scripts, configs, wiring files,
journals and images, mutated, through the real command line (`referee.cli.main`): no
traceback, no hang, and every exit 2 one line. The benchmark runs 2,000 cases a kind."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from fuzz_inputs import KINDS, fuzz

CASES = {"script": 150, "config": 100, "wiring": 100, "journal": 40, "image": 80}


@pytest.mark.parametrize("kind", KINDS)
def test_mutated_inputs_get_one_line_never_a_traceback_or_a_hang(kind, caplog):
    with caplog.at_level(logging.CRITICAL):
        tally = fuzz(kind, CASES[kind], seed=19, limit_s=30)
    assert tally.tracebacks == []
    assert tally.hangs == []
    assert tally.not_one_line == []
    assert tally.cases >= CASES[kind] and sum(tally.statuses.values()) == tally.cases
