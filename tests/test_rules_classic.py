"""The `classic` preset (seed 002, a classic Egyptian Ratscrew rules page): one test per
sentence or example of the seed that the referee can judge, quoted in its docstring.
Where the seed is vague, the test names the decision (docs/rules.md, "Preset classic").

Times in these scripts are in milliseconds (`lay(1000, "7H")` is t=1 s). Seats: Ann 0,
Bob 1, Cy 2, clockwise; 52 cards deal 18/17/17.
"""

import pytest

from referee.rules.presets import rules_for

from .helpers import judge, lay, of, snap, wait, won

RULES = {"rules": "classic"}


def play(*events, **extra):
    return judge(*events, **RULES, **extra)


def cards_laid(*codes, start_ms=1000, step_ms=1000):
    return [lay(start_ms + i * step_ms, code) for i, code in enumerate(codes)]


# Basic play ----------------------------------------------------------------------------


def test_divide_the_deck_into_approximately_equal_stacks_one_for_each_player():
    """ "Then divide the deck into approximately equal stacks, one for each player." """
    assert rules_for("classic").new_game(["Ann", "Bob", "Cy"]).hands == (18, 17, 17)


def test_the_player_to_the_left_of_the_dealer_plays_first():
    """ "the player to the left of the dealer plays her top card face up" (seat 0 is to the
    dealer's left: the deal starts there)."""
    assert of(play(lay(1000, "7H")), "laid")[0]["seat"] == 0


def test_after_a_number_card_the_next_player_clockwise_plays():
    """ "If the card played is a number card (2,3,4,5,6,7,8,9, or 10), the next player clockwise
    plays a card on top of the previously played cards" """
    rulings = play(*cards_laid("2H", "5D", "9C", "3S"))
    assert [(r["seat"], r["next"]) for r in of(rulings, "laid")] == [(0, 1), (1, 2), (2, 0), (0, 1)]


@pytest.mark.parametrize(("face", "chances"), [("AH", 4), ("KH", 3), ("QH", 2), ("JH", 1)])
def test_the_next_player_has_four_chances_after_an_ace_three_king_two_queen_one_jack(face, chances):
    """ "For an ace, there are four chances, three for a king, two for a queen, and one for a
    jack." The next seat keeps the turn for its chances; `count_out` shows the chances left."""
    numbers = ["5D", "9C", "3S", "7D"][:chances]
    rulings = play(*cards_laid(face, *numbers))
    laid = of(rulings, "laid")
    assert [(r["seat"], r["count_out"]) for r in laid] == [(0, chances)] + [
        (1, chances - k) for k in range(1, chances + 1)
    ]
    assert [r["next"] for r in laid[:-1]] == [1] * chances


def test_if_the_player_fails_to_play_a_face_card_the_face_cards_player_picks_up_the_pile():
    """ "If the player fails to play a face card, the previous player (the one who played the
    face card) picks up the pile and places it on the bottom of her stack and play begins
    again with her." """
    rulings = play(*cards_laid("2C", "KH", "5D", "9C", "3S"), lay(6000, "8H"))
    assert won(rulings) == [
        {
            "t": 5_000_000,
            "event": "stack_won",
            "seat": 1,
            "by": "challenge",
            "reasons": [],
            "cards": 5,
            "margin_us": None,
            "next": 1,
        }
    ]
    assert of(rulings, "laid")[-1]["seat"] == 1


def test_otherwise_play_continues_with_the_next_player():
    """ "Otherwise, play continues with the next player." A face card answers the challenge
    and challenges the next seat."""
    rulings = play(*cards_laid("KH", "5D", "JC"))
    assert [(r["seat"], r["count_out"], r["next"]) for r in of(rulings, "laid")] == [
        (0, 3, 1),
        (1, 2, 1),
        (1, 1, 2),
    ]


def test_example_the_next_player_must_play_up_to_two_cards_then_the_queens_player_takes_it():
    """ "Now the next player must play up to two cards: ... Now the player who played the queen
    takes the deck and continues play." """
    rulings = play(*cards_laid("QH", "5D", "9C"))
    assert [(w["seat"], w["by"], w["cards"]) for w in won(rulings)] == [(0, "challenge", 3)]


def test_example_three_chances_a_face_card_after_two_four_chances_a_jack_one_chance_fails():
    """ "The next player has three chances... ...and he plays a face card after two. The
    following player now has four chances... ...and she manages to play a jack. The next
    player has but one chance: ...and fails. The player of the jack picks up the pile and
    continues play." """
    rulings = play(*cards_laid("KH", "5D", "9C", "AS", "2H", "7S", "JD", "4C", "8D"))
    laid = of(rulings, "laid")
    assert [(r["seat"], r["count_out"]) for r in laid[:8]] == [
        (0, 3),  # the king: Bob has three chances
        (1, 2),
        (1, 1),
        (1, 4),  # his ace after two: Cy has four
        (2, 3),
        (2, 2),
        (2, 1),  # her jack: Ann has one
        (0, 0),  # and fails
    ]
    assert [(w["seat"], w["by"], w["cards"]) for w in won(rulings)] == [(2, "challenge", 8)]
    assert laid[-1]["seat"] == 2  # the jack's player continues play


def test_a_seat_that_runs_out_of_cards_mid_challenge_has_failed_it():
    """Decision: the seed says nothing of a challenged seat running out; it has "fail[ed] to
    play a face card" (seed 003: "unable to produce a face card"), so the challenger takes it."""
    rulings = play(*cards_laid("KH", "5D"), hand_sizes=[2, 1, 2])
    assert [(w["seat"], w["by"], w["cards"]) for w in won(rulings)] == [(0, "challenge", 2)]


def test_a_failed_challenge_with_a_slappable_top_waits_for_a_slap_and_a_slap_steals_it():
    """Decision (RULES.md's claim window): when the challenge fails on a pair, play holds for
    the claim window (3 s); the first valid slap takes the stack, else the challenger does."""
    rulings = play(*cards_laid("QH", "5D", "5C"), snap(3300, 2))
    assert [(w["seat"], w["by"], w["reasons"]) for w in won(rulings)] == [(2, "snap", ["pair"])]
    rulings = play(*cards_laid("QH", "5D", "5C"), wait(7000))
    assert of(rulings, "laid")[-1]["next"] is None  # the hold
    assert [(w["seat"], w["by"], w["t"]) for w in won(rulings)] == [(0, "challenge", 6_000_000)]


# Slapping ------------------------------------------------------------------------------


def test_if_the_two_top_most_cards_form_a_pair_the_first_to_slap_picks_it_up_and_restarts_play():
    """ "if the two top-most cards form a pair - then anyone may attempt to be the first to slap
    the pile. Whoever slaps the pile first picks it up and restarts play." """
    rulings = play(*cards_laid("7H", "7D"), snap(2300, 0), snap(2350, 2), lay(4000, "2C"))
    assert won(rulings)[0] | {"t": 0} == {
        "t": 0,
        "event": "stack_won",
        "seat": 0,
        "by": "snap",
        "reasons": ["pair"],
        "cards": 2,
        "margin_us": 50_000,
        "next": 0,
    }
    assert of(rulings, "laid")[-1]["seat"] == 0


def test_a_pair_is_only_slappable_while_it_is_on_top():
    """The seed's example of a covered pair (below) and RULES.md: "slap patterns limited to the
    top of the stack in these presets"."""
    rulings = play(*cards_laid("7H", "7D", "3C"), snap(3300, 0))
    assert not [w for w in won(rulings) if w["by"] == "snap"]


def test_if_they_were_not_previously_in_the_game_they_now_enter_it():
    """ "If they were not previously in the game, they now enter the game and determine their
    position in the order of play." A seat with no cards slaps in and lays next; its place in
    the order is its seat."""
    rulings = play(*cards_laid("7H", "7D"), snap(2300, 1), lay(4000, "2C"), hand_sizes=[2, 0, 2])
    assert won(rulings)[0]["seat"] == 1 and of(rulings, "laid")[-1]["seat"] == 1


def test_if_no_one_can_tell_who_slapped_first_play_continues_as_though_the_pair_did_not_occur():
    """ "If an impartial judge is not available, play should continue as though the pair did
    not occur." The referee is the judge to the microsecond; presses at the same microsecond
    are a dead heat: nobody wins, nobody is penalised, play goes on."""
    rulings = play(*cards_laid("7H", "7D"), snap(2300, 0), snap(2300, 2), lay(3000, "2C"))
    assert [r["reason"] for r in of(rulings, "snap_ignored")] == ["dead_heat", "dead_heat"]
    assert not won(rulings) and not of(rulings, "penalty")
    assert of(rulings, "laid")[-1]["seat"] == 2


def test_slapping_a_triple_instantly_wins_the_game():
    """ "Other "slappable" combinations include triples (only occurring when people fail to slap
    pairs) - which will result in you instantly winning the game." """
    rulings = play(*cards_laid("7H", "7D", "7C"), snap(3300, 1))
    assert won(rulings)[0]["reasons"] == ["pair", "triple"]
    assert rulings[-1] == {"t": 3_300_000, "event": "game_won", "seat": 1, "reason": "triple"}


def test_triple_sixes_are_a_triple_like_any_other():
    """ "But beware of slapping triple sixes - which results in everyone losing, and mandates
    that the deck be completely burned by midnight" Decision: the referee burns no deck; triple
    sixes win the game like any triple (option triple_wins_game: false makes a triple an
    ordinary slap)."""
    rulings = play(*cards_laid("6H", "6D", "6C"), snap(3300, 1))
    assert rulings[-1]["event"] == "game_won" and rulings[-1]["reason"] == "triple"
    plain = play(*cards_laid("6H", "6D", "6C"), snap(3300, 1), options={"triple_wins_game": False})
    assert plain[-1]["event"] == "stack_won" and plain[-1]["reasons"] == ["pair", "triple"]


@pytest.mark.parametrize(
    "run", [["3H", "4D", "5C", "6S"], ["9H", "8D", "7C", "6S"], ["JH", "QD", "KC", "AS"]]
)
def test_you_may_also_slap_four_in_a_row_up_or_down(run):
    """ "For added confusion, you may also slap four-in-a-row such as ..." (the page's pictures
    are lost: RULES.md reads it as four ranks in a row, up or down)."""
    rulings = play(*cards_laid("2C", *run), snap(5300, 1))
    assert won(rulings)[0]["reasons"] == ["run"]


def test_three_in_a_row_is_not_a_run_in_classic():
    """Four-in-a-row, not three (option slap_run: 3 allows three)."""
    rulings = play(*cards_laid("3H", "4D", "5C"), snap(3300, 1))
    assert not [w for w in won(rulings) if w["by"] == "snap"]
    rulings = play(*cards_laid("3H", "4D", "5C"), snap(3300, 1), options={"slap_run": 3})
    assert won(rulings)[0]["reasons"] == ["run"]


@pytest.mark.parametrize(
    "run", [["QH", "KD", "AC", "2S"], ["KH", "AD", "2C", "3S"], ["2H", "AD", "KC", "QS"]]
)
def test_or_even_sequences_that_go_around_the_corner(run):
    """ "or even sequences that go around the corner such as ... for which you may pick up the
    pile and continue play as for pairs." Decision: around the corner is through K-A-2, either
    way. Face cards in a run keep their challenge: the run is slapped mid-challenge."""
    rulings = play(*cards_laid("5C", *run), snap(5300, 2), lay(7000, "8D"))
    assert won(rulings)[0]["reasons"] == ["run"] and won(rulings)[0]["next"] == 2
    assert of(rulings, "laid")[-1]["seat"] == 2
    no_wrap = play(*cards_laid("5C", *run), snap(5300, 2), options={"run_wraps": False})
    assert not [w for w in won(no_wrap) if w["by"] == "snap"]


def test_wrong_slap_the_player_who_most_recently_played_a_card_picks_up_the_pile():
    """ "if a player slaps incorrectly (whether accidentally or intentionally), the player who
    most recently played a card picks up the pile and continues play" """
    rulings = play(*cards_laid("5H", "9D"), snap(2300, 2), lay(4000, "2C"))
    assert rulings[2:4] == [
        {"t": 2_300_000, "event": "penalty", "seat": 2, "reason": "wrong_snap"},
        {
            "t": 2_300_000,
            "event": "stack_won",
            "seat": 1,
            "by": "penalty",
            "reasons": [],
            "cards": 2,
            "margin_us": None,
            "next": 1,
        },
    ]
    assert of(rulings, "laid")[-1]["seat"] == 1


def test_unless_a_player_slaps_his_own_card_then_the_player_before_him_picks_it_up():
    """ "unless a player slaps his own card, in which case the player before him picks up the
    pile and plays." (the player before: the previous seat counter-clockwise with cards)"""
    rulings = play(*cards_laid("5H", "9D"), snap(2300, 1))
    assert [(w["seat"], w["by"]) for w in won(rulings)] == [(0, "penalty")]


def test_example_a_card_played_on_a_pair_and_a_wrong_slap_the_player_of_the_3_picks_it_up():
    """ "if a pair occurs, and a player plays a card on top of it before another player manages
    to slap the pair, and instead slaps something that is not a pair - then the player who
    played the 3 in this case would get to pick up the pile." """
    rulings = play(*cards_laid("7H", "7D", "3C"), snap(3300, 0))
    assert [(w["seat"], w["by"], w["cards"]) for w in won(rulings)] == [(2, "penalty", 3)]


def test_someone_not_in_the_game_who_slaps_wrongly_is_ignored():
    """ "Also note that if someone who is not in the game slaps something that is not a pair,
    triple, or a run, they are ignored and play continues as usual." (not in the game: a seat
    with no cards; the referee hears only the table's buttons)"""
    rulings = play(lay(1000, "5H"), snap(1300, 1), lay(2000, "9D"), hand_sizes=[2, 0, 2])
    assert of(rulings, "snap_ignored") == [
        {"t": 1_300_000, "event": "snap_ignored", "seat": 1, "reason": "not_in_game"}
    ]
    assert not of(rulings, "penalty") and not won(rulings)


# Miscellaneous rules -----------------------------------------------------------------------


def wrong_slaps_by_cy(cards: int) -> list[dict]:
    """Ann lays a card, Cy slaps it wrongly and Ann takes the stack back, `cards` times."""
    codes = ["2H", "5D", "9C", "3S", "7H", "10D", "4C", "8S"]
    events = []
    for k in range(cards):
        events += [lay(1000 + 1000 * k, codes[k]), snap(1500 + 1000 * k, 2)]
    return events


def test_a_player_who_incorrectly_slaps_more_than_five_consecutive_cards_is_out():
    """ "If a player incorrectly slaps more than five consecutive cards, they are out of the
    game." Out on the sixth; its cards go face down under the stack (the referee cannot take
    them away), and its presses are ignored from then on."""
    five = play(*wrong_slaps_by_cy(5))
    assert not of(five, "seat_out") and len(of(five, "penalty")) == 5
    six = play(*wrong_slaps_by_cy(6), snap(8000, 2), lay(9000, "8S"))
    assert of(six, "seat_out") == [
        {"t": 6_500_000, "event": "seat_out", "seat": 2, "reason": "wrong_snaps_in_a_row", "cards": 17}
    ]
    assert of(six, "snap_ignored")[-1] == {
        "t": 8_000_000,
        "event": "snap_ignored",
        "seat": 2,
        "reason": "out",
    }
    assert of(six, "laid")[-1]["next"] == 1  # the order skips Cy: Ann then Bob


def test_the_count_of_consecutive_cards_starts_again_after_a_card_not_slapped():
    """ "consecutive cards": a card laid that the seat does not slap wrongly breaks the run."""
    events = wrong_slaps_by_cy(5)
    events += [lay(6000, "JD"), lay(7000, "6D"), lay(8000, "6C"), snap(8300, 1)]  # a pair: Bob's
    events += [lay(9000, "KS"), snap(9500, 2)]
    rulings = play(*events)
    assert not of(rulings, "seat_out")


def test_a_card_played_by_accident_is_ignored_and_set_aside_even_if_slappable():
    """ "If a player plays a card accidently, it is ignored and set aside as above even in the
    case where it would otherwise be slappable." The referee tells the seat to take it back and
    play it on its turn (option out_of_turn_card: back); no penalty, no pair."""
    rulings = play(lay(1000, "7H"), lay(1500, "7D", seat=2), lay(2000, "5C"), lay(3000, "7D"))
    assert rulings[1:3] == [
        {
            "t": 1_500_000,
            "event": "laid",
            "seat": 2,
            "card": "7D",
            "call": 2,
            "count_out": None,
            "next": 1,
            "out_of_turn": True,
        },
        {"t": 1_500_000, "event": "take_back", "seat": 2, "card": "7D"},
    ]
    assert not of(rulings, "penalty")
    assert of(rulings, "laid")[-1] == {
        "t": 3_000_000,
        "event": "laid",
        "seat": 2,
        "card": "7D",
        "call": 3,
        "count_out": None,
        "next": 0,
    }
    slapped = play(lay(1000, "7H"), lay(1500, "7D", seat=2), snap(1800, 1))
    assert of(slapped, "penalty") == [{"t": 1_800_000, "event": "penalty", "seat": 1, "reason": "wrong_snap"}]


def test_jokers_can_always_be_slapped():
    """ "If the game is played with jokers (intentionally or accidentally), jokers can always be
    slapped." (a joker on top; `"deck": 54`)"""
    rulings = play(*cards_laid("5H", "JOKER"), snap(2300, 2), deck=54)
    assert won(rulings)[0]["reasons"] == ["joker"]
