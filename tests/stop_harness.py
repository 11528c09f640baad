"""`referee` as its entry point runs it, for the stop tests: SIGTERM and SIGINT taken from the
first line, and what the table's outputs were when they were released written to a file.

    python tests/stop_harness.py PINS.json referee-args...

The file: for each time the signals were closed, every seat LED's, the status LED's and the
buzzer's value just before (all must be off), and after the command, the pins still reserved
on each mock pin factory (none must be).
"""

from __future__ import annotations

import json
import sys

from referee.live.stopping import stop_request

stop_request.install()

from hardware import pins, signals  # noqa: E402 - the signals are taken before anything else

factories: list = []
closed: list[dict] = []
_factory_init = pins.VirtualFactory.__init__
_signals_close = signals.TableSignals.close


def _init(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
    _factory_init(self, *args, **kwargs)
    factories.append(self)


def _close(self) -> None:  # type: ignore[no-untyped-def]
    closed.append(
        {
            "seats": [led.value for led in self.seats],
            "status": list(self.status.value) if self.status is not None else None,
            "buzzer": None if self.buzzer is None else bool(self.buzzer.is_active),
        }
    )
    _signals_close(self)


pins.VirtualFactory.__init__ = _init  # type: ignore[method-assign]
signals.TableSignals.close = _close  # type: ignore[method-assign]


def main() -> int:
    from referee.cli.main import main as cli_main

    code = cli_main(sys.argv[2:])
    reserved = [
        str(pin) for f in factories for pin, refs in f._reservations.items() if any(r() for r in refs)
    ]
    with open(sys.argv[1], "w") as out:
        json.dump({"closed": closed, "reserved": reserved, "factories": len(factories)}, out)
    return code


if __name__ == "__main__":
    sys.exit(main())
