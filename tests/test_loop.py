"""The table loop: sources merged in event time, behind a watermark."""

import threading

import pytest

from hardware.buttons import SnapButtons
from hardware.clock import VirtualClock
from hardware.pins import VirtualFactory
from hardware.presses import ButtonTrouble, Edge
from referee.cards import parse_card
from referee.live.loop import EventError, TableLoop
from referee.rules.events import Lay
from referee.rules.presets import rules_for
from referee.rules.rulings import Laid, StackWon

T = 10_000_000
LATENCIES = {"camera": 150_000, "buttons": 5_000}


def new_loop(**kwargs):
    state = rules_for("celtic").new_game(["Ann", "Bob", "Cy"])
    out = []
    loop = TableLoop(state, LATENCIES, rulings=[out.append], **kwargs)
    return loop, out


def test_an_event_waits_in_the_buffer_until_the_watermark_passes_it():
    loop, out = new_loop()
    loop.put_lay(Lay(T, parse_card("7H")))
    loop.pump(T + 149_999)  # the camera may still report something from before T
    assert out == []
    loop.pump(T + 150_000)
    assert [type(r) for r in out] == [Laid]


def test_a_card_reported_80ms_late_still_counts_before_a_press_made_after_it():
    loop, out = new_loop(timer_waits=False)
    loop.put_lay(Lay(T, parse_card("9H")))
    loop.put_edge(Edge(2, T + 530_000, True))  # Cy presses 30 ms after 9S landed on 9H...
    loop.pump(T + 531_000)
    assert [type(r) for r in out] == [Laid]  # 9H judged; the press waits for the camera
    loop.put_lay(Lay(T + 500_000, parse_card("9S")))  # ...the camera reports 9S 80 ms late
    loop.pump(T + 700_000)
    loop.finish()
    won = [r for r in out if type(r) is StackWon]
    assert [(w.seat, w.t, w.reasons, w.cards) for w in won] == [(2, T + 530_000, ("standard",), 2)]


def test_seat_2_pressing_3us_before_seat_1_wins_even_when_its_callback_runs_later():
    clock = VirtualClock(T)
    factory = VirtualFactory(clock)
    loop, out = new_loop()
    buttons = SnapButtons([17, 27, 22], loop.put_edge, pin_factory=factory)
    loop.put_lay(Lay(T, parse_card("QS")))  # a dark queen
    clock.sleep_until(T + 300_000)
    buttons.buttons[1].pin.edge(False, T + 250_003)  # seat 1's callback runs first...
    buttons.buttons[2].pin.edge(False, T + 250_000)  # ...seat 2 pressed 3 us earlier
    loop.finish()
    won = [r for r in out if type(r) is StackWon]
    assert [(w.seat, w.t, w.margin_us) for w in won] == [(2, T + 250_000, 3)]


def test_bounce_on_the_pins_makes_one_snap_at_the_leading_edge():
    clock = VirtualClock(T)
    loop, out = new_loop()
    buttons = SnapButtons([17, 27, 22], loop.put_edge, pin_factory=VirtualFactory(clock))
    loop.put_lay(Lay(T, parse_card("QS")))
    pin = buttons.buttons[0].pin
    for i, t in enumerate([T + 200_000, T + 200_400, T + 201_000, T + 203_100, T + 204_900]):
        pin.edge(i % 2 == 1, t)  # low (pressed) first, then bouncing
    loop.finish()
    won = [r for r in out if type(r) is StackWon]
    assert [(w.seat, w.t, w.margin_us) for w in won] == [(0, T + 200_000, None)]


def test_the_live_loop_lets_the_claim_window_run_out_when_the_watermark_passes_it():
    loop, out = new_loop(timer_waits=True)
    for i, card in enumerate(["9H", "JS", "9D"]):  # a count-out reaches 0 on a sandwich: hold
        loop.put_lay(Lay(T + i * 500_000, parse_card(card)))
    loop.pump(T + 1_000_000 + 150_001)
    assert out[-1].next is None
    loop.pump(T + 1_000_000 + 3_000_000 + 150_000)
    assert type(out[-1]) is Laid
    loop.pump(T + 1_000_000 + 3_000_000 + 150_002)
    assert (type(out[-1]), out[-1].by, out[-1].t) == (StackWon, "counting_out", T + 4_000_000)


def test_a_replay_loop_never_fires_a_timer_on_its_own():
    loop, out = new_loop(timer_waits=False)
    for i, card in enumerate(["9H", "JS", "9D"]):
        loop.put_lay(Lay(T + i * 500_000, parse_card(card)))
    loop.pump(T + 60_000_000)
    assert type(out[-1]) is Laid


def test_a_refused_event_carries_the_tag_its_source_gave_it():
    loop, _ = new_loop()
    loop.put_lay(Lay(T, parse_card("7H")), tag=12)
    loop.put_lay(Lay(T + 1, parse_card("7H")), tag=13)
    with pytest.raises(EventError) as refused:
        loop.finish()
    assert refused.value.tag == 13 and "already on the stack" in str(refused.value)


def test_stuck_buttons_are_reported_to_the_trouble_sinks():
    troubles = []
    loop, _ = new_loop(troubles=[troubles.append])
    loop.put_edge(Edge(1, T, True))
    loop.pump(T + 4_000_000)
    assert troubles == []
    loop.pump(T + 5_000_000)
    assert troubles == [ButtonTrouble(1, T + 5_000_000, "stuck")]


def test_the_live_loop_runs_in_its_own_thread_and_judges_as_events_arrive():
    # The clock stands still: nothing falls due on its own, only the lay is judged, however
    # slowly the thread runs.
    clock = VirtualClock(T)
    seen = threading.Event()
    out = []

    def sink(ruling):
        out.append(ruling)
        seen.set()

    state = rules_for("celtic").new_game(["Ann", "Bob"])
    loop = TableLoop(state, {"camera": 0}, rulings=[sink])
    thread = threading.Thread(target=loop.run, args=(clock,), daemon=True)
    thread.start()
    loop.put_lay(Lay(clock.now_us() - 10, parse_card("7H")))
    assert seen.wait(timeout=30)
    loop.stop()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert [(type(r), r.card.code) for r in out] == [(Laid, "7H")]


def test_lights_learn_a_snap_win_at_once_though_its_ruling_waits_for_the_margin():
    state = rules_for("celtic").new_game(["Ann", "Bob", "Cy"])
    final, signalled = [], []
    loop = TableLoop(state, {"buttons": 0, "camera": 0}, rulings=[final.append], signals=[signalled.append])
    loop.put_lay(Lay(T, parse_card("QS")))
    loop.put_edge(Edge(1, T + 200_000, True))
    loop.pump(T + 200_002)  # the press is settled; the race window is still open
    assert [type(r) for r in final] == [Laid]
    assert [(type(r), r.seat) for r in signalled] == [(Laid, 0), (StackWon, 1)]
    loop.put_edge(Edge(2, T + 212_400, True))
    loop.pump(T + 212_402)
    won = [r for r in final if type(r) is StackWon]
    assert [(w.seat, w.margin_us) for w in won] == [(1, 12_400)]
    assert [type(r) for r in signalled].count(StackWon) == 1  # not announced twice
    assert signalled[-1].reason == "late"


def test_presses_while_paused_are_dropped_and_counted_and_judged_again_once_it_goes_on():
    clock = VirtualClock(T)
    loop, out = new_loop()
    buttons = SnapButtons([17, 27, 22], loop.put_edge, pin_factory=VirtualFactory(clock))
    pin = buttons.buttons[1].pin
    loop.put_lay(Lay(T, parse_card("QS")))
    loop.put_lay(Lay(T + 100_000, parse_card("QH")))
    loop.pause()
    pin.edge(False, T + 300_000)  # pressed while the camera is lost: the stack may be stale
    pin.edge(True, T + 400_000)
    loop.pump(T + 500_000)
    loop.pause(False)
    pin.edge(False, T + 600_000)
    loop.finish()
    assert loop.dropped == 1
    won = [r for r in out if type(r) is StackWon]
    assert [(w.seat, w.t) for w in won] == [(1, T + 600_000)]
