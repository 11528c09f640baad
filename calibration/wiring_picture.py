"""The wiring as a picture: a schematic drawn from a wiring file with schemdraw, as SVG.

`referee wiring --draw FILE > wiring.svg` and `tools/guide_pictures.py` (docs/images/
wiring-*.svg) call `draw_wiring`. The header is one box with a pin for each GPIO the file
uses, in header order (BCM number and header pin number), each pin's part to its right, and
every part's other side on one ground bus that goes back to a GND pin: the table as it is
wired. Seats on a USB encoder are listed under the picture (nothing of theirs is on the header).
"""

from __future__ import annotations

from dataclasses import dataclass

import schemdraw
import schemdraw.elements as elm

from hardware.usb_buttons import key_name
from referee.live.wiring import GROUND_PINS, PHYSICAL_PIN, Wiring

ROW = 1.9  # schemdraw units between two pins' rows: room for a label above each part
PART_X = 1.0  # from a pin to its part
BUS_X = 9.5  # the ground bus, right of the longest row (a resistor and an LED)


@dataclass(frozen=True)
class Row:
    """One header pin and what hangs on it."""

    bcm: int
    part: str  # "button", "led", "tonal", "active"
    label: str  # e.g. "Ann's button", "status red"


def rows(w: Wiring) -> list[Row]:
    """What the picture shows on each pin, in header order (pure: tests read this)."""
    out = []
    for seat in w.seats:
        if seat.button is not None:
            out.append(Row(seat.button, "button", f"{seat.name}'s button"))
        out.append(Row(seat.led, "led", f"{seat.name}'s LED"))
    if w.buzzer is not None:
        kind = "passive piezo" if w.buzzer.kind == "tonal" else "active buzzer"
        out.append(Row(w.buzzer.pin, w.buzzer.kind, f"buzzer ({kind})"))
    if w.status is not None:
        for colour in ("red", "green", "blue"):
            out.append(Row(getattr(w.status, colour), "led", f"status {colour}"))
    return sorted(out, key=lambda r: PHYSICAL_PIN[r.bcm])


def usb_notes(w: Wiring) -> list[str]:
    return [
        f"{s.name}'s button: key {key_name(s.key or 0)} on the USB device usb.{s.usb}"
        for s in w.seats
        if s.button is None
    ]


def draw_wiring(w: Wiring, title: str) -> bytes:
    """The schematic as SVG bytes. Deterministic: the same wiring gives the same bytes."""
    schemdraw.use("svg")
    shown = rows(w)
    n = len(shown) + 1  # and the GND pin, at the bottom
    # Ic pins on one side are placed bottom to top: list them bottom first.
    pins = [elm.IcPin(name="GND", pin=str(GROUND_PINS[0]), side="right", anchorname="gnd")]
    pins += [
        elm.IcPin(name=f"BCM {r.bcm}", pin=str(PHYSICAL_PIN[r.bcm]), side="right", anchorname=f"p{i}")
        for i, r in reversed(list(enumerate(shown)))
    ]
    with schemdraw.Drawing(show=False) as d:
        d.config(fontsize=11, unit=2.2, lw=1.4)
        header = elm.Ic(pins=pins, size=(3.2, ROW * n), pinspacing=ROW, edgepadW=0.4, edgepadH=0.4)
        header.label("Raspberry Pi 40-pin header\n(BCM number, header pin)", loc="top", fontsize=10)
        d += header
        top = None
        for i, r in enumerate(shown):
            start = getattr(header, f"p{i}")
            d += elm.Line().right(PART_X).at(start)
            if r.part == "button":
                d += elm.Button().right().label(r.label, loc="top")
            elif r.part == "led":
                d += elm.Resistor().right().label("330 Ω", loc="bottom", fontsize=9)
                d += elm.LED().right().label(r.label, loc="top")
            else:  # a box, + on the pin's side: a piezo has two legs, an active buzzer marks its +
                d += elm.RBox(w=1.6, h=0.7).right().label(r.label, loc="top").label("+   −", loc="center")
            d += elm.Line().right().tox(start[0] + BUS_X)
            d += elm.Dot()
            if top is None:
                top = d.here
        gnd = header.gnd
        d += elm.Line().right().at(gnd).tox(gnd[0] + BUS_X)
        bottom = d.here
        d += elm.Line().at(bottom).to(top)
        d += elm.Ground().at(bottom)
        d += (
            elm.Label()
            .at((gnd[0] + BUS_X + 0.3, (top[1] + bottom[1]) / 2))
            .label("ground bus", rotate=90, fontsize=10)
        )
        other = ", ".join(map(str, GROUND_PINS[1:]))
        notes = [title, f"GND: header pin {GROUND_PINS[0]} or any of {other}"] + usb_notes(w)
        y = -ROW * 0.9
        for line in notes:
            d += elm.Label().at((0, y)).label(line, halign="left", fontsize=10)
            y -= 0.55
        svg = d.get_imagedata("svg")
    return svg if isinstance(svg, bytes) else svg.encode()
