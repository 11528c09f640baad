"""The worked examples in examples/ (and in docs/table-script.md) rule exactly as recorded."""

from pathlib import Path

import pytest

from referee.cli.main import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(p for p in EXAMPLES.glob("*.jsonl") if not p.name.endswith(".rulings.jsonl"))


def test_there_are_worked_examples():
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_example_script_rules_exactly_as_recorded(script, capsys):
    assert main(["adjudicate", str(script)]) == 0
    expected = script.with_name(script.stem + ".rulings.jsonl").read_text()
    assert capsys.readouterr().out == expected
