"""Card codes as players write them, decks, seeded shuffles and the deal."""

import pickle
from collections import Counter

import pytest

from referee.cards import JOKER, CardError, deal_sizes, deck, parse_card, shuffled

# Reading card codes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("QS", "QS"),
        ("10H", "10H"),
        ("TH", "10H"),
        ("AC", "AC"),
        ("2D", "2D"),
        ("KH", "KH"),
        ("JS", "JS"),
        ("qs", "QS"),
        ("10h", "10H"),
        ("th", "10H"),
        ("Td", "10D"),
        (" QS", "QS"),
        ("QS  ", "QS"),
        ("\tqs\n", "QS"),
        ("JOKER", "JOKER"),
        ("joker", "JOKER"),
        (" Joker ", "JOKER"),
    ],
    ids=repr,
)
def test_parse_card_accepts_codes_in_any_case_with_t_for_ten_and_surrounding_spaces(text, code):
    assert parse_card(text).code == code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Q\u2660", "QS"),  # ♠
        ("10\u2665", "10H"),  # ♥
        ("A\u2666", "AD"),  # ♦
        ("K\u2663", "KC"),  # ♣
        ("q\u2664", "QS"),  # ♤
        ("T\u2661", "10H"),  # ♡
        ("7\u2662", "7D"),  # ♢
        ("j\u2667", "JC"),  # ♣ outline ♧
        (" 9\u2660 ", "9S"),
    ],
    ids=repr,
)
def test_parse_card_accepts_suit_symbols_filled_and_outline(text, code):
    assert parse_card(text).code == code


def test_card_prints_its_canonical_code_ten_as_10_never_t():
    ten = parse_card("TH")
    assert str(ten) == "10H" and ten.code == "10H"
    assert str(parse_card("qs")) == "QS"
    assert str(parse_card("joker")) == "JOKER"
    assert repr(parse_card("th")) == "Card(10H)"


def test_card_symbol_shows_the_suit_symbol():
    assert parse_card("QS").symbol == "Q\u2660"
    assert parse_card("10H").symbol == "10\u2665"
    assert parse_card("AD").symbol == "A\u2666"
    assert parse_card("KC").symbol == "K\u2663"
    assert parse_card("JOKER").symbol == "JOKER"


def test_ranks_are_1_to_13_ace_low_and_0_for_the_joker():
    assert [parse_card(c).rank for c in ("AS", "2S", "10S", "JS", "QS", "KS")] == [1, 2, 10, 11, 12, 13]
    assert JOKER.rank == 0 and JOKER.is_joker and not parse_card("QS").is_joker


def test_cards_are_shared_instances_whatever_the_spelling():
    assert parse_card("qs") is parse_card("QS") is parse_card(" Q\u2664 ")
    assert parse_card("TH") is parse_card("10h")
    assert parse_card("joker") is JOKER


def test_a_pickled_card_comes_back_as_the_shared_instance():
    card = parse_card("10H")
    assert pickle.loads(pickle.dumps(card)) is card


@pytest.mark.parametrize(
    "text",
    ["1H", "11S", "QX", "Q", "", "   ", "10", "T", "JOKERS", "Q S", "QSS", "0H", "1OH"],
    ids=lambda text: repr(text),
)
def test_bad_card_code_is_an_error_that_names_the_text(text):
    with pytest.raises(CardError) as excinfo:
        parse_card(text)
    message = str(excinfo.value)
    assert repr(text) in message
    assert "JOKER" in message  # says what a card code looks like


@pytest.mark.parametrize("value", [7, None, b"QS"], ids=repr)
def test_card_code_that_is_not_a_string_is_an_error_that_names_the_value(value):
    with pytest.raises(CardError) as excinfo:
        parse_card(value)
    assert "must be a string" in str(excinfo.value) and repr(value) in str(excinfo.value)


def test_card_error_is_a_value_error():
    assert issubclass(CardError, ValueError)


# Decks ------------------------------------------------------------------------------


def test_deck_of_52_holds_52_distinct_suited_cards():
    cards = deck(52)
    assert len(cards) == 52 and len(set(cards)) == 52
    assert JOKER not in cards
    assert sorted(card.index for card in cards) == list(range(52))
    assert deck() == cards


def test_deck_of_54_adds_two_jokers():
    cards = deck(54)
    assert len(cards) == 54
    assert Counter(cards)[JOKER] == 2
    assert [card for card in cards if card is not JOKER] == deck(52)


def test_deck_is_a_new_list_each_time():
    first = deck(52)
    first.pop()
    assert len(deck(52)) == 52


@pytest.mark.parametrize("size", [53, 0, 51, 104])
def test_deck_of_any_other_size_is_an_error(size):
    with pytest.raises(CardError, match=str(size)):
        deck(size)


# Shuffles ---------------------------------------------------------------------------


def test_shuffle_is_the_same_for_the_same_seed():
    assert shuffled(deck(52), 7) == shuffled(deck(52), 7)
    assert shuffled(deck(54), "table-1") == shuffled(deck(54), "table-1")


def test_shuffle_differs_between_seeds():
    assert shuffled(deck(52), 1) != shuffled(deck(52), 2)
    assert shuffled(deck(52), 1) != deck(52)


@pytest.mark.parametrize("size", [52, 54])
def test_shuffle_keeps_the_same_cards(size):
    cards = deck(size)
    assert Counter(shuffled(cards, 3)) == Counter(cards)


def test_shuffle_leaves_its_input_alone():
    cards = deck(52)
    shuffled(cards, 3)
    assert cards == deck(52)


# The deal ---------------------------------------------------------------------------


@pytest.mark.parametrize("players", range(2, 9))
def test_deal_sizes_deal_the_whole_deck_and_the_first_seats_hold_one_more(players):
    sizes = deal_sizes(52, players)
    assert len(sizes) == players and sum(sizes) == 52
    extra = 52 % players
    base = 52 // players
    assert sizes == [base + 1] * extra + [base] * (players - extra)


def test_deal_sizes_examples():
    assert deal_sizes(52, 3) == [18, 17, 17]
    assert deal_sizes(52, 5) == [11, 11, 10, 10, 10]
    assert deal_sizes(52, 4) == [13, 13, 13, 13]
    assert deal_sizes(54, 4) == [14, 14, 13, 13]
