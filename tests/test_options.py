"""House-rule options: defaults, script form (windows in ms), validation and presets."""

import json
from dataclasses import FrozenInstanceError, fields
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules.engine import Celtic
from referee.rules.options import OptionError, Options
from referee.rules.presets import UnknownPreset, rules_for

OPTION_NAMES = (
    "scan",
    "call_restarts_on_win",
    "race_window",
    "claim_window",
    "dead_heat",
    "out_of_turn_card",
    # the other seeds' machinery (issue 7), off in celtic
    "face_cards",
    "challenge_claim",
    "exclusive_claim",
    "slap_calling_out",
    "slap_pair",
    "slap_sandwich",
    "slap_dark_queen",
    "slap_top_bottom",
    "slap_run",
    "run_wraps",
    "slap_marriage",
    "slap_triple",
    "triple_wins_game",
    "slap_joker",
    "penalty_bars",
    "penalty_cards",
    "penalty_cards_to",
    "wrong_snap_gives_stack",
    "wrong_snaps_out",
    "empty_wrong_snap",
    "slap_in",
    "out_of_turn_penalised",
)

# Defaults ---------------------------------------------------------------------------


def test_defaults_are_the_celtic_rulebook():
    options = Options()
    assert options.scan == "stack"
    assert options.call_restarts_on_win is False
    assert options.race_window == 300_000  # us
    assert options.claim_window == 3_000_000  # us
    assert options.dead_heat == "no_winner"
    assert options.out_of_turn_card == "stays"


def test_options_are_exactly_the_known_house_rules():
    assert tuple(f.name for f in fields(Options)) == OPTION_NAMES


def test_options_are_frozen():
    with pytest.raises(FrozenInstanceError):
        Options().scan = "top"  # type: ignore[misc]


# updated(): script form -------------------------------------------------------------


def test_updated_applies_choices_and_flags():
    options = Options().updated(
        {"scan": "top", "dead_heat": "lower_seat", "out_of_turn_card": "under", "call_restarts_on_win": True}
    )
    assert options.scan == "top"
    assert options.dead_heat == "lower_seat"
    assert options.out_of_turn_card == "under"
    assert options.call_restarts_on_win is True


def test_updated_keeps_the_options_it_is_not_given():
    options = Options().updated({"scan": "top"})
    assert options == Options(scan="top")


def test_updated_returns_new_options_and_leaves_the_old_alone():
    base = Options()
    base.updated({"scan": "top", "race_window": 10})
    assert base == Options()


def test_updated_with_nothing_is_the_same_options():
    assert Options().updated({}) == Options()


@pytest.mark.parametrize(
    ("name", "ms", "us"),
    [
        ("race_window", 250, 250_000),
        ("race_window", 0, 0),
        ("race_window", 60_000, 60_000_000),
        ("race_window", 250.5, 250_500),
        ("race_window", 0.001, 1),
        ("claim_window", 2500, 2_500_000),
        ("claim_window", 2.5, 2_500),
        ("claim_window", 1500.0, 1_500_000),
    ],
)
def test_windows_given_in_ms_become_whole_microseconds(name, ms, us):
    value = getattr(Options().updated({name: ms}), name)
    assert value == us
    assert type(value) is int


def test_updated_accepts_any_mapping():
    assert Options().updated(MappingProxyType({"scan": "top"})).scan == "top"


def test_unknown_option_is_an_error_that_names_it_and_lists_the_known_ones():
    with pytest.raises(OptionError) as excinfo:
        Options().updated({"scan": "top", "speed": 2})
    message = str(excinfo.value)
    assert "'speed'" in message
    for name in OPTION_NAMES:
        assert name in message


@pytest.mark.parametrize(
    ("name", "value"),
    [
        pytest.param("scan", "middle", id="scan-middle"),
        pytest.param("scan", None, id="scan-null"),
        pytest.param("dead_heat", 1, id="dead_heat-1"),
        pytest.param("dead_heat", "first", id="dead_heat-first"),
        pytest.param("out_of_turn_card", None, id="out_of_turn_card-null"),
        pytest.param("out_of_turn_card", "Under", id="out_of_turn_card-wrong-case"),
        pytest.param("call_restarts_on_win", "yes", id="call_restarts_on_win-yes"),
        pytest.param("call_restarts_on_win", 1, id="call_restarts_on_win-1"),
        pytest.param("call_restarts_on_win", 0, id="call_restarts_on_win-0"),
        pytest.param("call_restarts_on_win", None, id="call_restarts_on_win-null"),
        pytest.param("race_window", "300", id="race_window-string"),
        pytest.param("race_window", True, id="race_window-true"),
        pytest.param("race_window", -1, id="race_window-negative"),
        pytest.param("race_window", 60_001, id="race_window-over-a-minute"),
        pytest.param("race_window", None, id="race_window-null"),
        pytest.param("race_window", float("nan"), id="race_window-nan"),
        pytest.param("race_window", float("inf"), id="race_window-inf"),
        pytest.param("claim_window", -0.5, id="claim_window-negative"),
        pytest.param("claim_window", [3000], id="claim_window-list"),
    ],
)
def test_bad_option_value_is_an_error_that_names_the_option(name, value):
    with pytest.raises(OptionError, match=f"'{name}'"):
        Options().updated({name: value})


@pytest.mark.parametrize("given", [["scan", "top"], "scan=top", None, 3], ids=repr)
def test_options_that_are_not_a_mapping_are_an_error(given):
    with pytest.raises(OptionError, match="must be an object"):
        Options().updated(given)


def test_option_error_is_a_value_error():
    assert issubclass(OptionError, ValueError)


# to_json: the script form -----------------------------------------------------------


def test_to_json_gives_windows_in_ms():
    assert Options().to_json() == {
        "scan": "stack",
        "call_restarts_on_win": False,
        "race_window": 300,
        "claim_window": 3000,
        "dead_heat": "no_winner",
        "out_of_turn_card": "stays",
        "face_cards": "counting_out",
        "challenge_claim": "award",
        "exclusive_claim": 0,
        "slap_calling_out": True,
        "slap_pair": True,
        "slap_sandwich": True,
        "slap_dark_queen": True,
        "slap_top_bottom": False,
        "slap_run": 0,
        "run_wraps": False,
        "slap_marriage": False,
        "slap_triple": False,
        "triple_wins_game": False,
        "slap_joker": False,
        "penalty_bars": True,
        "penalty_cards": 0,
        "penalty_cards_to": "stack",
        "wrong_snap_gives_stack": False,
        "wrong_snaps_out": 0,
        "empty_wrong_snap": "penalty",
        "slap_in": True,
        "out_of_turn_penalised": True,
    }


def test_to_json_round_trips_through_updated():
    options = Options().updated(
        {
            "scan": "top",
            "call_restarts_on_win": True,
            "race_window": 250.5,
            "claim_window": 1234,
            "dead_heat": "lower_seat",
            "out_of_turn_card": "under",
        }
    )
    assert Options().updated(options.to_json()) == options
    assert Options().updated(json.loads(json.dumps(options.to_json()))) == options


@given(
    scan=st.sampled_from(["stack", "top"]),
    call_restarts_on_win=st.booleans(),
    race_window=st.integers(0, 60_000_000),
    claim_window=st.integers(0, 60_000_000),
    dead_heat=st.sampled_from(["no_winner", "lower_seat"]),
    out_of_turn_card=st.sampled_from(["stays", "under"]),
)
def test_to_json_round_trips_for_every_window_in_whole_microseconds(**values):
    options = Options(**values)
    assert Options().updated(json.loads(json.dumps(options.to_json()))) == options


# Presets ----------------------------------------------------------------------------


def test_rules_for_celtic_without_options_uses_the_defaults():
    rules = rules_for("celtic")
    assert isinstance(rules, Celtic)
    assert rules.options == Options()
    assert rules_for("celtic", {}).options == Options()


def test_rules_for_applies_the_options_over_the_preset_defaults():
    rules = rules_for("celtic", {"scan": "top", "race_window": 250, "dead_heat": "lower_seat"})
    assert rules.options == Options(scan="top", race_window=250_000, dead_heat="lower_seat")
    assert Celtic.defaults == Options()  # the preset itself is unchanged


def test_rules_for_with_a_bad_option_is_an_option_error():
    with pytest.raises(OptionError, match="'speed'"):
        rules_for("celtic", {"speed": 2})


@pytest.mark.parametrize("name", ["nope", "Celtic", "", None], ids=repr)
def test_unknown_preset_is_an_error_that_names_it_and_the_known_presets(name):
    with pytest.raises(UnknownPreset) as excinfo:
        rules_for(name)
    message = str(excinfo.value)
    assert repr(name) in message
    assert "known: celtic" in message
