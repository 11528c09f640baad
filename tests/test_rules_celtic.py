"""The `celtic` rulebook, one test per rule and per rulebook decision (docs/rules.md).

Times in these scripts are written in milliseconds (`lay(1000, "7H")` is t=1 s).
"""

import pytest

from referee.rules.script import ScriptError

from .helpers import judge, lay, of, snap, wait, won

# Deal and turn ----------------------------------------------------------------------


def test_deal_whole_deck_one_at_a_time_from_seat_0_first_seats_hold_one_more():
    from referee.rules.presets import rules_for

    state = rules_for("celtic").new_game(["A", "B", "C", "D", "E"])
    assert state.hands == (11, 11, 10, 10, 10)
    assert rules_for("celtic").new_game(["A", "B", "C"]).hands == (18, 17, 17)


def test_deal_54_card_deck_includes_two_jokers():
    from referee.rules.presets import rules_for

    state = rules_for("celtic").new_game(["A", "B", "C", "D"], deck=54)
    assert state.hands == (14, 14, 13, 13) and state.total == 54


def test_seat_dealt_the_first_card_lays_first_and_play_goes_clockwise():
    rulings = judge(lay(1000, "2H"), lay(2000, "3H"), lay(3000, "4H"), lay(4000, "5H"))
    assert [(r["seat"], r["next"]) for r in of(rulings, "laid")] == [(0, 1), (1, 2), (2, 0), (0, 1)]


def test_turn_order_skips_seats_with_no_cards():
    rulings = judge(lay(1000, "2H"), lay(2000, "3H"), hand_sizes=[2, 0, 2])
    assert [(r["seat"], r["next"]) for r in of(rulings, "laid")] == [(0, 2), (2, 0)]


def test_if_seat_0_holds_no_cards_the_first_seat_clockwise_with_cards_lays_first():
    rulings = judge(lay(1000, "2H"), hand_sizes=[0, 3, 3])
    assert of(rulings, "laid")[0]["seat"] == 1


def test_seat_with_no_cards_may_snap_and_reenters_play_by_winning():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), lay(4000, "2C"), hand_sizes=[2, 0, 2])
    assert won(rulings)[0]["seat"] == 1 and won(rulings)[0]["next"] == 1
    assert of(rulings, "laid")[-1]["seat"] == 1  # seat 1 lays next: it holds the two won cards


def test_lay_when_seat_laying_has_no_cards_is_an_input_error():
    with pytest.raises(ScriptError, match="seat 1 holds no cards"):
        judge(lay(1000, "9H", seat=1), hand_sizes=[2, 0, 2])


def test_game_won_when_one_seat_holds_every_card():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2500, 0), hand_sizes=[1, 1], players=2)
    assert rulings[-1] == {"t": 2_500_000, "event": "game_won", "seat": 0}


def test_events_after_game_won_are_ignored():
    rulings = judge(
        lay(1000, "9H"),
        lay(2000, "9S"),
        snap(2500, 0),
        wait(3000),
        snap(3500, 1),
        lay(4000, "KS"),
        hand_sizes=[1, 1],
        players=2,
    )
    assert rulings[-1]["event"] == "game_won"
    assert len(of(rulings, "laid")) == 2


# Calling out ------------------------------------------------------------------------


def test_call_is_counted_over_the_whole_game_and_restarts_at_1_on_the_14th_card():
    cards = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "2H", "3H", "4H", "5H", "6H"]
    rulings = judge(*[lay(1000 * (i + 1), c) for i, c in enumerate(cards)], players=2)
    assert [r["call"] for r in of(rulings, "laid")] == [*range(1, 14), 1]


def test_call_sequence_does_not_restart_when_a_stack_is_won():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 2), lay(4000, "4C"))
    assert of(rulings, "laid")[-1]["call"] == 3


def test_option_call_restarts_on_win_starts_the_call_again_at_1():
    rulings = judge(
        lay(1000, "9H"),
        lay(2000, "9S"),
        snap(2300, 2),
        lay(4000, "4C"),
        options={"call_restarts_on_win": True},
    )
    assert of(rulings, "laid")[-1]["call"] == 1


def test_every_card_put_on_the_stack_advances_the_call_whoever_laid_it():
    rulings = judge(lay(1000, "5H"), lay(1500, "6D", seat=2), lay(2000, "7C"))
    assert [r["call"] for r in of(rulings, "laid")] == [1, 2, 3]


# Snaps ------------------------------------------------------------------------------


def test_calling_out_snap_is_valid_when_the_top_card_value_equals_its_call():
    rulings = judge(lay(1000, "5H"), lay(2000, "2D"), snap(2400, 2))  # 2D laid on call 2
    assert won(rulings)[0]["reasons"] == ["calling_out"]


def test_calling_out_counts_only_for_the_top_card():
    rulings = judge(lay(1000, "AH"), lay(2000, "5D"), snap(2400, 2))  # AH on call 1, now covered
    assert of(rulings, "penalty") == [{"t": 2_400_000, "event": "penalty", "seat": 2, "reason": "wrong_snap"}]


def test_standard_snap_two_cards_of_a_rank_adjacent_anywhere_in_the_stack():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), lay(3000, "5C"), lay(4000, "6C"), snap(4400, 1))
    assert won(rulings)[0]["reasons"] == ["standard"] and won(rulings)[0]["cards"] == 4


def test_scan_top_limits_standard_to_the_top_two_cards():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), lay(3000, "5C"), snap(3400, 1), options={"scan": "top"})
    assert not won(rulings) and of(rulings, "penalty")[0]["reason"] == "wrong_snap"


def test_sandwich_two_of_a_rank_with_exactly_one_card_between_anywhere_in_the_stack():
    rulings = judge(lay(1000, "9H"), lay(2000, "5S"), lay(3000, "9C"), lay(4000, "6C"), snap(4400, 1))
    assert won(rulings)[0]["reasons"] == ["sandwich"]


def test_sandwich_middle_card_may_be_of_the_same_rank():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), lay(3000, "9C"), snap(3400, 1))
    assert won(rulings)[0]["reasons"] == ["standard", "sandwich"]


def test_scan_top_limits_sandwich_to_the_top_three_cards():
    events = [lay(1000, "9H"), lay(2000, "5S"), lay(3000, "9C")]
    assert won(judge(*events, snap(3400, 1), options={"scan": "top"}))[0]["reasons"] == ["sandwich"]
    covered = judge(*events, lay(4000, "6C"), snap(4400, 1), options={"scan": "top"})
    assert not won(covered)


def test_dark_queen_snap_when_the_top_card_is_the_queen_of_spades():
    rulings = judge(lay(1000, "5H"), lay(2000, "QS"), snap(2400, 0))
    assert won(rulings)[0]["reasons"] == ["dark_queen"]


def test_dark_queen_covered_is_no_longer_a_snap():
    rulings = judge(lay(1000, "QS"), lay(2000, "5H"), snap(2400, 0))
    assert not won(rulings)


def test_a_joker_has_no_rank_and_matches_nothing():
    rulings = judge(lay(1000, "JOKER"), lay(2000, "JOKER"), lay(3000, "5D"), snap(3400, 0), deck=54)
    assert not won(rulings) and of(rulings, "penalty")


def test_a_joker_in_a_deck_without_jokers_is_an_input_error():
    with pytest.raises(ScriptError, match="no jokers"):
        judge(lay(1000, "JOKER"))


def test_a_ruling_lists_every_reason_that_held():
    # QS laid as the 12th card: calling out, dark queen, and a pair lower in the stack.
    cards = ["9H", "9S", "3S", "4S", "5S", "6S", "7S", "8S", "10S", "2H", "3H", "QS"]
    rulings = judge(*[lay(1000 * (i + 1), c) for i, c in enumerate(cards)], snap(12_400, 1), players=2)
    assert won(rulings)[0]["reasons"] == ["calling_out", "standard", "dark_queen"]


def test_valid_snap_gives_the_stack_to_the_snapper_and_it_becomes_their_turn():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 2), lay(4000, "4C"))
    assert won(rulings)[0] | {"margin_us": None} == {
        "t": 2_300_000,
        "event": "stack_won",
        "seat": 2,
        "by": "snap",
        "reasons": ["standard"],
        "cards": 2,
        "margin_us": None,
        "next": 2,
    }
    assert of(rulings, "laid")[-1]["seat"] == 2


def test_wrong_snap_penalises_the_seat():
    rulings = judge(lay(1000, "9H"), lay(2000, "5S"), snap(2300, 1))
    assert of(rulings, "penalty") == [{"t": 2_300_000, "event": "penalty", "seat": 1, "reason": "wrong_snap"}]


def test_snap_on_an_empty_stack_after_the_race_window_is_wrong():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2100, 2), snap(2500, 1))
    assert of(rulings, "penalty")[0]["seat"] == 1


# Races ------------------------------------------------------------------------------


def test_earliest_press_wins_and_the_ruling_gives_its_margin():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), snap(2304.2, 2))
    assert won(rulings)[0]["seat"] == 1 and won(rulings)[0]["margin_us"] == 4200


def test_press_inside_the_race_window_is_late_not_wrong():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), snap(2550, 2))
    assert of(rulings, "snap_ignored") == [
        {"t": 2_550_000, "event": "snap_ignored", "seat": 2, "reason": "late", "late_us": 250_000}
    ]
    assert not of(rulings, "penalty")


def test_race_window_includes_its_start_and_excludes_its_end():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), snap(2599.999, 2), snap(2600, 0))
    assert of(rulings, "snap_ignored")[0]["late_us"] == 299_999
    assert of(rulings, "penalty") == [{"t": 2_600_000, "event": "penalty", "seat": 0, "reason": "wrong_snap"}]


def test_option_race_window_changes_the_window():
    rulings = judge(
        lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), snap(2400, 2), options={"race_window": 50}
    )
    assert of(rulings, "penalty")[0]["seat"] == 2


def test_margin_is_null_when_no_other_seat_presses_within_the_race_window():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), wait(5000))
    assert won(rulings)[0]["margin_us"] is None


def test_press_in_the_race_window_that_is_valid_on_a_new_card_wins_it():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2100, 1), lay(2200, "QS"), snap(2350, 0))
    assert [(w["seat"], w["reasons"]) for w in won(rulings)] == [(1, ["standard"]), (0, ["dark_queen"])]


def test_dead_heat_on_a_valid_stack_nobody_wins_and_nobody_is_penalised():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), snap(2300, 2), lay(3000, "4C"))
    assert [(r["seat"], r["reason"]) for r in of(rulings, "snap_ignored")] == [
        (1, "dead_heat"),
        (2, "dead_heat"),
    ]
    assert not won(rulings) and not of(rulings, "penalty")
    assert of(rulings, "laid")[-1]["seat"] == 2  # play goes on


def test_dead_heat_stack_can_still_be_won_by_a_later_press():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), snap(2300, 2), snap(2310, 0))
    assert won(rulings)[0]["seat"] == 0


def test_equal_presses_on_a_stack_with_no_snap_are_each_a_wrong_snap():
    rulings = judge(lay(1000, "9H"), lay(2000, "5S"), snap(2300, 1), snap(2300, 2))
    assert [p["seat"] for p in of(rulings, "penalty")] == [1, 2]


def test_option_dead_heat_lower_seat_gives_the_stack_to_the_lower_seat():
    rulings = judge(
        lay(1000, "9H"), lay(2000, "9S"), snap(2300, 2), snap(2300, 1), options={"dead_heat": "lower_seat"}
    )
    assert won(rulings)[0]["seat"] == 1 and won(rulings)[0]["margin_us"] == 0
    assert of(rulings, "snap_ignored") == [
        {"t": 2_300_000, "event": "snap_ignored", "seat": 2, "reason": "dead_heat"}
    ]


def test_a_lay_and_a_press_at_the_same_time_the_lay_came_first():
    # The press is written first, but at the same instant the lay counts first: QS on top.
    rulings = judge(lay(1000, "5H"), snap(2000, 0), lay(2000, "QS"))
    assert [r["event"] for r in rulings] == ["laid", "laid", "stack_won"]
    assert won(rulings)[0]["reasons"] == ["dark_queen"]


# Counting out -----------------------------------------------------------------------


@pytest.mark.parametrize(("card", "value"), [("JH", 1), ("QH", 2), ("KH", 3), ("AH", 4)])
def test_picture_cards_start_a_count_out_jack_1_queen_2_king_3_ace_4(card, value):
    rulings = judge(lay(1000, "5D"), lay(2000, card))
    assert of(rulings, "laid")[-1]["count_out"] == value


def test_each_card_correctly_laid_after_a_picture_card_lowers_the_count_out():
    rulings = judge(lay(1000, "AH"), lay(2000, "5D"), lay(3000, "6D"))
    assert [r["count_out"] for r in of(rulings, "laid")] == [4, 3, 2]


def test_count_out_at_0_with_no_snap_on_the_stack_goes_to_the_picture_card_layer_at_once():
    rulings = judge(lay(1000, "5C"), lay(2000, "KH"), lay(3000, "7D"), lay(4000, "8D"), lay(5000, "10S"))
    assert of(rulings, "laid")[-1]["count_out"] == 0 and of(rulings, "laid")[-1]["next"] == 1
    assert won(rulings) == [
        {
            "t": 5_000_000,
            "event": "stack_won",
            "seat": 1,
            "by": "counting_out",
            "reasons": [],
            "cards": 5,
            "margin_us": None,
            "next": 1,
        }
    ]


def test_count_out_at_0_with_a_valid_snap_holds_and_the_first_snap_wins():
    # JS (seat 1) starts a count-out of 1; 9D brings it to 0 on a sandwich 9H JS 9D.
    rulings = judge(lay(1000, "9H"), lay(2000, "JS"), lay(3000, "9D"), snap(3500, 0))
    laid = of(rulings, "laid")[-1]
    assert (laid["count_out"], laid["next"]) == (0, None)  # a hold: nobody is on turn
    assert won(rulings)[0]["seat"] == 0 and won(rulings)[0]["reasons"] == ["sandwich", "counting_out"]


def test_count_out_hold_ends_after_the_claim_window_and_the_picture_card_layer_wins():
    rulings = judge(lay(1000, "9H"), lay(2000, "JS"), lay(3000, "9D"), wait(6000))
    assert won(rulings) == [
        {
            "t": 6_000_000,
            "event": "stack_won",
            "seat": 1,
            "by": "counting_out",
            "reasons": [],
            "cards": 3,
            "margin_us": None,
            "next": 1,
        }
    ]


def test_claim_window_excludes_its_end_a_press_there_is_late():
    rulings = judge(
        lay(1000, "9H"), lay(2000, "JS"), lay(3000, "9D"), snap(6000, 0), options={"claim_window": 3000}
    )
    assert won(rulings)[0]["by"] == "counting_out" and won(rulings)[0]["seat"] == 1
    assert of(rulings, "snap_ignored")[0]["reason"] == "late"


def test_option_claim_window_changes_the_hold():
    rulings = judge(
        lay(1000, "9H"), lay(2000, "JS"), lay(3000, "9D"), wait(4000), options={"claim_window": 1000}
    )
    assert won(rulings)[0]["t"] == 4_000_000


def test_during_a_hold_nobody_is_on_turn_a_lay_is_out_of_turn_and_the_hold_goes_on():
    rulings = judge(lay(1000, "9H"), lay(2000, "JS"), lay(3000, "9D"), lay(3500, "KC", seat=0), wait(6000))
    laid = of(rulings, "laid")[-1]
    assert laid["out_of_turn"] and laid["next"] is None and laid["count_out"] == 0
    assert of(rulings, "penalty")[0] == {
        "t": 3_500_000,
        "event": "penalty",
        "seat": 0,
        "reason": "out_of_turn",
    }
    assert won(rulings)[0] == {
        "t": 6_000_000,
        "event": "stack_won",
        "seat": 1,
        "by": "counting_out",
        "reasons": [],
        "cards": 4,
        "margin_us": None,
        "next": 1,
    }


def test_a_lay_during_a_hold_must_name_its_seat():
    with pytest.raises(ScriptError, match="must name its seat"):
        judge(lay(1000, "9H"), lay(2000, "JS"), lay(3000, "9D"), lay(3500, "4C"))


def test_a_new_picture_card_displaces_a_running_count_out():
    rulings = judge(lay(1000, "AH"), lay(2000, "5D"), lay(3000, "QD"))
    assert [(r["count_out"]) for r in of(rulings, "laid")] == [4, 3, 2]
    rulings = judge(lay(1000, "AH"), lay(2000, "QD"), lay(3000, "5C"), lay(4000, "6C"))
    assert won(rulings)[0]["seat"] == 1  # the queen's layer, not the ace's


def test_a_picture_card_laid_out_of_turn_also_starts_a_new_count_out():
    rulings = judge(lay(1000, "AH"), lay(1500, "KD", seat=2), lay(2000, "5D"))
    assert [r["count_out"] for r in of(rulings, "laid")] == [4, 3, 2]


def test_an_out_of_turn_card_neither_lowers_the_count_out_nor_moves_the_turn():
    rulings = judge(lay(1000, "AH"), lay(1500, "5D", seat=2))
    laid = of(rulings, "laid")[-1]
    assert (laid["count_out"], laid["next"], laid["out_of_turn"]) == (4, 1, True)


def test_the_count_out_ends_with_its_stack():
    rulings = judge(lay(1000, "KH"), lay(2000, "KS"), snap(2300, 2), lay(4000, "5C"))
    assert of(rulings, "laid")[-1]["count_out"] is None


def test_count_out_in_a_laid_ruling_is_the_value_after_that_lay_and_null_when_none_runs():
    rulings = judge(lay(1000, "5H"), lay(2000, "JH"), lay(3000, "6H"))
    assert [r["count_out"] for r in of(rulings, "laid")] == [None, 1, 0]


# Penalties --------------------------------------------------------------------------


def test_a_penalised_seat_snaps_are_ignored_and_reported():
    rulings = judge(lay(1000, "5H"), snap(1200, 1), lay(2000, "5S"), snap(2300, 1))
    assert of(rulings, "snap_ignored") == [
        {"t": 2_300_000, "event": "snap_ignored", "seat": 1, "reason": "penalised"}
    ]
    assert not won(rulings)


def test_a_penalty_lifts_when_another_seat_wins_a_stack():
    rulings = judge(
        *[lay(1000, "5H"), snap(1200, 0), snap(1300, 1), lay(2000, "5S"), snap(2300, 2)],
        *[lay(4000, "QS"), snap(4300, 1), lay(6000, "4D"), lay(7000, "4C"), snap(7300, 0)],
    )
    assert [w["seat"] for w in won(rulings)] == [2, 1, 0]
    assert not of(rulings, "snap_ignored")


def test_a_seat_that_wins_by_counting_out_while_penalised_keeps_its_penalty():
    rulings = judge(
        lay(1000, "JH"),
        snap(1200, 0),
        snap(1200, 2),
        lay(2000, "5D"),
        lay(4000, "QS"),
        snap(4300, 0),
        snap(4400, 2),
        players=3,
    )
    # Seat 0 (penalised) wins the count-out; seat 2's penalty is lifted, seat 0's is not.
    assert won(rulings)[0]["by"] == "counting_out" and won(rulings)[0]["seat"] == 0
    assert of(rulings, "snap_ignored")[0] == {
        "t": 4_300_000,
        "event": "snap_ignored",
        "seat": 0,
        "reason": "penalised",
    }
    assert won(rulings)[1]["seat"] == 2


def test_a_penalised_seat_still_lays_on_its_turn():
    rulings = judge(lay(1000, "5H"), snap(1200, 1), lay(2000, "6S"), lay(3000, "7S"))
    assert [r["seat"] for r in of(rulings, "laid")] == [0, 1, 2]


def test_when_every_seat_is_penalised_all_penalties_are_lifted():
    rulings = judge(
        lay(1000, "5H"), snap(1200, 0), snap(1300, 1), snap(1400, 2), lay(2000, "5S"), snap(2300, 1)
    )
    assert of(rulings, "penalties_lifted") == [
        {"t": 1_400_000, "event": "penalties_lifted", "reason": "everyone_penalised"}
    ]
    assert won(rulings)[0]["seat"] == 1


def test_seats_with_no_cards_count_when_checking_that_everyone_is_penalised():
    rulings = judge(lay(1000, "5H"), snap(1200, 0), snap(1300, 2), hand_sizes=[2, 0, 2])
    assert not of(rulings, "penalties_lifted")  # seat 1 (no cards) is not penalised
    rulings = judge(lay(1000, "5H"), snap(1200, 0), snap(1300, 2), snap(1400, 1), hand_sizes=[2, 0, 2])
    assert of(rulings, "penalties_lifted")


def test_laying_out_of_turn_is_ruled_laid_then_penalty():
    rulings = judge(lay(1000, "5H"), lay(1500, "6D", seat=0))
    assert [r["event"] for r in rulings] == ["laid", "laid", "penalty"]
    assert rulings[-1] == {"t": 1_500_000, "event": "penalty", "seat": 0, "reason": "out_of_turn"}


def test_a_lay_without_a_seat_belongs_to_the_seat_on_turn():
    rulings = judge(lay(1000, "5H"), lay(2000, "6D"))
    assert of(rulings, "laid")[1]["seat"] == 1 and not of(rulings, "penalty")


def test_an_already_penalised_seat_that_lays_out_of_turn_is_announced_again():
    rulings = judge(lay(1000, "5H"), lay(1500, "6D", seat=0), lay(1700, "7D", seat=0))
    assert [p["seat"] for p in of(rulings, "penalty")] == [0, 0]


def test_an_out_of_turn_card_stays_on_the_stack_and_counts_for_snaps():
    rulings = judge(lay(1000, "5H"), lay(1500, "5D", seat=2), snap(1800, 1))
    assert won(rulings)[0]["seat"] == 1 and won(rulings)[0]["cards"] == 2


def test_option_out_of_turn_card_under_puts_the_card_at_the_bottom_of_the_stack():
    options = {"out_of_turn_card": "under"}
    rulings = judge(lay(1000, "5H"), lay(2000, "6H"), lay(2500, "6D", seat=0), snap(2800, 2), options=options)
    assert won(rulings)[0]["reasons"] == ["sandwich"]  # 6D went under 5H: 6D 5H 6H, not 5H 6H 6D
    rulings = judge(lay(1000, "5H"), lay(2000, "6H"), lay(2500, "5D", seat=0), snap(2800, 2), options=options)
    assert won(rulings)[0]["reasons"] == ["standard"]  # 5D under 5H: a pair at the bottom


# The stall rule ---------------------------------------------------------------------


def test_stall_when_no_seat_holds_a_card_the_stack_goes_to_the_seat_that_laid_last():
    rulings = judge(lay(1000, "5H"), lay(2000, "6H"), hand_sizes=[1, 1], players=2)
    assert won(rulings) == [
        {
            "t": 2_000_000,
            "event": "stack_won",
            "seat": 1,
            "by": "stall",
            "reasons": [],
            "cards": 2,
            "margin_us": None,
            "next": 1,
        }
    ]
    assert rulings[-1] == {"t": 2_000_000, "event": "game_won", "seat": 1}


def test_stall_with_a_running_count_out_goes_to_the_picture_card_layer():
    rulings = judge(lay(1000, "KH"), lay(2000, "6H"), hand_sizes=[1, 1], players=2)
    assert won(rulings)[0]["seat"] == 0 and won(rulings)[0]["by"] == "stall"


def test_stall_with_a_valid_snap_holds_and_the_first_valid_snap_wins():
    rulings = judge(lay(1000, "6S"), lay(2000, "6H"), snap(2200, 0), hand_sizes=[1, 1], players=2)
    assert won(rulings)[0]["by"] == "snap" and won(rulings)[0]["seat"] == 0


def test_stall_hold_with_no_snap_ends_with_the_stall_award():
    rulings = judge(lay(1000, "6S"), lay(2000, "6H"), wait(5000), hand_sizes=[1, 1], players=2)
    assert won(rulings)[0] == {
        "t": 5_000_000,
        "event": "stack_won",
        "seat": 1,
        "by": "stall",
        "reasons": [],
        "cards": 2,
        "margin_us": None,
        "next": 1,
    }


# Fine points ------------------------------------------------------------------------


def test_timers_fire_only_when_an_event_reaches_them_not_at_the_end_of_input():
    rulings = judge(lay(1000, "9H"), lay(2000, "JS"), lay(3000, "9D"))
    assert not won(rulings)


def test_a_card_already_on_the_stack_is_an_input_error():
    with pytest.raises(ScriptError, match="test:3: 5H is already on the stack"):
        judge(lay(1000, "5H"), lay(2000, "5H"))


def test_a_won_card_comes_back_into_play_and_may_be_laid_again():
    rulings = judge(lay(1000, "5H"), lay(2000, "5S"), snap(2300, 0), lay(4000, "5H"))
    assert of(rulings, "laid")[-1]["card"] == "5H"


def test_time_going_backwards_is_an_input_error():
    with pytest.raises(ScriptError, match="test:3: time goes backwards"):
        judge(lay(2000, "5H"), lay(1000, "6H"))


def test_presses_at_the_instant_a_lay_wins_the_game_are_ignored():
    # The press is written before the lay; the lay comes first, wins the game by stall,
    # and the press (same instant) falls after game_won.
    rulings = judge(lay(1000, "5H"), snap(2000, 0), lay(2000, "6H"), hand_sizes=[1, 1], players=2)
    assert [r["event"] for r in rulings] == ["laid", "laid", "stack_won", "game_won"]


def test_the_winner_pressing_again_does_not_end_the_race_for_the_margin():
    rulings = judge(lay(1000, "9H"), lay(2000, "9S"), snap(2300, 1), snap(2350, 1), snap(2400, 2))
    assert won(rulings)[0]["margin_us"] == 100_000
    assert [(r["seat"], r["late_us"]) for r in of(rulings, "snap_ignored")] == [(1, 50_000), (2, 100_000)]
    assert [r["t"] for r in rulings] == sorted(r["t"] for r in rulings)
