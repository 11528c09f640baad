"""The bots' games stay put: the simulator's demo, bots and renderer were cut into short
functions (issue 20; tests/test_code_shape.py checks every function's length) without a change
of behaviour. The pictures are checked by test_render.py, test_table_camera.py, test_glyphs.py
and the kiosk's and guide's picture tests; the bots' games are pinned here, by digest, as the
demo writes them as a table script with rulings.
"""

import hashlib
import io

import pytest

from referee.sim.demo import run_demo

from .test_demo import demo_args

# The table script with rulings of `referee demo --json` for these deals, as it was before the
# demo and the bots were cut into short functions. A change to the bots' habits or the rules
# changes these on purpose: then say so in the commit and take the new digests.
PINNED = {
    ("celtic", 3, 1): (855, "db27516ff7ea2936"),
    ("celtic", 5, 7): (6804, "756ffda24b7eb89e"),
    ("classic", 3, 1): (685, "bafbf4a2dbec910d"),
    ("classic", 5, 7): (825, "ebf62cfdb2c9517e"),
    ("paranoid", 3, 1): (225, "aed80b9e088cd819"),
    ("paranoid", 5, 7): (106, "01becb8c2a7a48fd"),
    ("party", 3, 1): (640, "c210bb36c05b0e07"),
    ("party", 5, 7): (1055, "2a1b13cb70ac6c97"),
}


@pytest.mark.parametrize(("rules", "players", "seed"), sorted(PINNED))
def test_the_bots_play_each_deal_as_they_did(rules, players, seed):
    out = io.StringIO()
    assert run_demo(demo_args(json=True, rules=rules, players=players, seed=seed), out) == 0
    text = out.getvalue()
    assert (text.count("\n"), hashlib.sha256(text.encode()).hexdigest()[:16]) == PINNED[rules, players, seed]
