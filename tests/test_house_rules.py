"""The other seeds' machinery as options: mixed into any preset, checked, and chosen by name
(game line, config); bad choices are one-line errors naming what and where."""

from pathlib import Path

import pytest

from referee.live.config import ConfigError, load_config
from referee.rules.engine import Celtic
from referee.rules.options import OptionError, Options
from referee.rules.presets import PRESETS, Classic, Paranoid, Party, rules_for
from referee.rules.script import ScriptError

from .helpers import judge, lay, of, snap, won


def test_every_preset_is_a_subclass_of_celtic_that_changes_only_defaults_and_words():
    assert sorted(PRESETS) == ["celtic", "classic", "paranoid", "party"]
    for preset in (Classic, Paranoid, Party):
        assert issubclass(preset, Celtic) and preset.defaults != Options()
        own = {name for name in vars(preset) if not name.startswith("__")}
        assert own <= {"name", "defaults", "pair_reason", "sandwich_middle_differs"}, own


@pytest.mark.parametrize("name", ["classic", "paranoid", "party"])
def test_a_preset_with_options_over_its_defaults(name):
    rules = rules_for(name, {"claim_window": 1000})
    assert rules.name == name and rules.options.claim_window == 1_000_000
    assert rules.options.face_cards == "challenge" and rules.options.scan == "top"
    assert PRESETS[name].defaults.claim_window == 3_000_000  # the preset itself is unchanged


def test_celtic_with_a_two_card_burn_keeps_its_bar_and_burns_too():
    rulings = judge(
        lay(1000, "5H"), snap(1300, 1), lay(2000, "5S"), snap(2300, 1), options={"penalty_cards": 2}
    )
    assert [r["event"] for r in rulings[1:]] == ["penalty", "burned", "laid", "snap_ignored"]


def test_celtic_with_the_face_card_challenge_instead_of_counting_out():
    rulings = judge(lay(1000, "KH"), lay(2000, "5D"), lay(3000, "7C"), options={"face_cards": "challenge"})
    assert [(r["seat"], r["count_out"]) for r in of(rulings, "laid")] == [(0, 3), (1, 2), (1, 1)]


def test_celtic_with_marriages_lists_them_after_its_own_reasons():
    rulings = judge(
        lay(1000, "5H"), lay(2000, "KD"), lay(3000, "QS"), snap(3300, 0), options={"slap_marriage": True}
    )
    assert won(rulings)[0]["reasons"] == ["dark_queen", "marriage"]


def test_party_with_jokers():
    rulings = judge(
        lay(1000, "5H"),
        lay(2000, "JOKER"),
        snap(2300, 2),
        rules="party",
        deck=54,
        options={"slap_joker": True},
    )
    assert won(rulings)[0]["reasons"] == ["joker"]


def test_a_preset_without_face_card_rules():
    rulings = judge(lay(1000, "KH"), lay(2000, "5D"), rules="party", options={"face_cards": "none"})
    assert [(r["seat"], r["count_out"], r["next"]) for r in of(rulings, "laid")] == [
        (0, None, 1),
        (1, None, 2),
    ]


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("face_cards", "count", "'counting_out' or 'challenge' or 'none'"),
        ("challenge_claim", None, "'award' or 'slap'"),
        ("penalty_cards_to", "pile", "'stack' or 'penalty_pile'"),
        ("empty_wrong_snap", "burn", "'penalty' or 'out' or 'ignored'"),
        ("out_of_turn_card", "aside", "'stays' or 'under' or 'back'"),
        ("slap_run", 5, "0, 3 or 4"),
        ("slap_run", True, "0, 3 or 4"),
        ("penalty_cards", 11, "0 to 10"),
        ("penalty_cards", 2.0, "0 to 10"),
        ("wrong_snaps_out", 1, "0 (never) or 2 to 20"),
        ("exclusive_claim", -1, "0..60000 ms"),
        ("slap_marriage", "yes", "true or false"),
    ],
)
def test_a_bad_value_for_a_new_option_names_the_option_and_what_it_may_be(name, value, words):
    with pytest.raises(OptionError) as excinfo:
        Options().updated({name: value})
    message = str(excinfo.value)
    assert repr(name) in message and words in message


def test_a_game_line_with_an_unknown_preset_or_option_is_one_line_naming_it_and_the_line():
    with pytest.raises(
        ScriptError, match=r"^test:1: unknown rules 'snap' \(known: celtic, classic, paranoid, party\)$"
    ):
        judge(lay(1000, "5H"), rules="snap")
    with pytest.raises(ScriptError, match=r"^test:1: unknown option 'slap_pairs' \(known: .*slap_pair, "):
        judge(lay(1000, "5H"), rules="party", options={"slap_pairs": True})
    with pytest.raises(ScriptError, match=r"^test:1: option 'slap_run' must be 0, 3 or 4, not 5$"):
        judge(lay(1000, "5H"), rules="classic", options={"slap_run": 5})


def test_the_config_file_chooses_a_preset_and_its_options(tmp_path: Path):
    path = tmp_path / "referee.toml"
    path.write_text(
        '[table]\nplayers = ["Ann", "Bob"]\nrules = "paranoid"\n[table.options]\npenalty_cards = 3\n'
    )
    config = load_config(path)
    assert config.rules == "paranoid" and config.options == {"penalty_cards": 3}
    path.write_text('[table]\nplayers = ["Ann", "Bob"]\nrules = "party"\n[table.options]\nburn = 3\n')
    with pytest.raises(ConfigError, match=r"referee.toml: table.options: unknown option 'burn'"):
        load_config(path)
    path.write_text('[table]\nplayers = ["Ann", "Bob"]\nrules = "partay"\n')
    with pytest.raises(
        ConfigError, match=r"referee.toml: table.rules: unknown rules 'partay' \(known: celtic, classic"
    ):
        load_config(path)
