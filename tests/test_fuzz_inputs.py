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


def test_a_journal_whose_damage_garbles_sqlites_own_message_is_one_line(tmp_path, caplog):
    """The case the 2,000-case run found: bytes flipped so that SQLite's error text is not
    UTF-8 (a UnicodeDecodeError out of the journal's opening)."""
    import random

    from fuzz_inputs import Fuzzer, run_main

    fuzzer = Fuzzer(tmp_path, seed=1)
    with caplog.at_level(logging.CRITICAL):
        for argv in fuzzer.journal(random.Random("1:journal:956")):
            what, status, err = run_main(argv, 30)
            assert (what, status) == ("ok", 2), err
            assert err.count("\n") == 1 and "journal" in err
