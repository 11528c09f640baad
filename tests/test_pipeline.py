"""`referee adjudicate --pipeline` rules byte for byte as `referee adjudicate`.

The pipeline turns each press into bouncing edges on gpiozero mock pins whose
callbacks run up to 50 ms late and out of order, and each lay into a report from
the vision queue 30 to 150 ms late. Every rule test's script already goes both
ways (tests/helpers.judge); here: the worked examples, every bad input of the
CLI tests, and 1,000 seeded random games.
"""

import json
import random

import pytest

from referee.rules.events import Snap
from referee.rules.script import adjudicate, event_to_json
from referee.sim.bots import VirtualTable
from referee.sim.pipeline import adjudicate_pipeline, press_edges, schedule

from .helpers import run_both
from .test_cli import BAD_INPUTS, run, script_bytes
from .test_examples import SCRIPTS


def both_ways(tmp_path, capsys, data: bytes, *flags: str):
    path = tmp_path / "game.jsonl"
    path.write_bytes(data)
    direct = run(capsys, "adjudicate", str(path))
    piped = run(capsys, "adjudicate", "--pipeline", *flags, str(path))
    return direct, piped


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_worked_examples_rule_the_same_through_the_live_loop(tmp_path, capsys, script):
    direct, piped = both_ways(tmp_path, capsys, script.read_bytes())
    assert piped == direct and direct[0] == 0


@pytest.mark.parametrize(
    ("lines", "lineno", "words", "printed"), [pytest.param(*case[1:], id=case[0]) for case in BAD_INPUTS]
)
def test_bad_input_gets_the_same_rulings_and_the_same_error_through_the_live_loop(
    tmp_path, capsys, lines, lineno, words, printed
):
    direct, piped = both_ways(tmp_path, capsys, script_bytes(*lines))
    assert piped == direct and direct[0] == 2


def random_game(seed: int) -> list[str]:
    """A seeded game between bots: every tenth with the whole deck, the rest with a short one."""
    players = 2 + seed % 7
    cards = 52 if seed % 10 == 0 else 2 * players + seed % 17
    table = VirtualTable(players=players, seed=seed, cards=cards)
    events = [play.event for play in table.play() if play.event is not None]
    return [json.dumps(table.spec.to_json())] + [json.dumps(event_to_json(e)) for e in events]


@pytest.mark.slow  # about 2 min: `make test-slow`
@pytest.mark.parametrize("chunk", range(10))
def test_1000_seeded_random_games_rule_the_same_through_the_live_loop(chunk):
    for seed in range(chunk * 100, chunk * 100 + 100):
        lines = random_game(seed)
        direct = run_both(adjudicate, lines)
        assert direct[1] is None
        piped = run_both(lambda lines, name, seed=seed: adjudicate_pipeline(lines, name, seed=seed), lines)
        assert piped[0] == direct[0], f"game {seed} ruled differently through the live loop"
        assert piped[1] is None


def test_the_simulated_presses_really_bounce_and_arrive_late_and_out_of_order():
    rng = random.Random(1)
    edges = press_edges(1_000_000, None, 20_000, rng)
    assert edges[0] == (1_000_000, True) and edges[-1][1] is False
    bounce = [t for t, _ in edges[1:-1]]
    assert 3 <= len(bounce) <= 10 and all(1_000_000 < t <= 1_005_000 for t in bounce)
    events = [(i, Snap(1_000_000 + 10 * i, i % 3)) for i in range(30)]
    plan = schedule(events, 3, 20_000, rng)
    delivered = [payload[1] for _, kind, _, payload in plan if payload[2] is True and payload[1] % 10 == 0]
    assert sorted(delivered) != delivered  # presses reach the loop out of order
    lags = [delivery - payload[1] for delivery, _, _, payload in plan]
    assert max(lags) > 10_000 and max(lags) <= 50_000


def test_the_pipeline_seed_changes_the_delays_not_the_rulings(tmp_path, capsys):
    data = "\n".join(random_game(3)).encode() + b"\n"
    _, piped_a = both_ways(tmp_path, capsys, data, "--seed", "1")
    _, piped_b = both_ways(tmp_path, capsys, data, "--seed", "2")
    assert piped_a == piped_b and piped_a[0] == 0
