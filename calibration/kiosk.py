"""The calibration wizard's kiosk page: `referee calibrate --kiosk` (docs/calibration.md).

    GET  /                     a redirect to /calibrate (the Pi's kiosk browser opens /)
    GET  /calibrate            the page (kiosk_static/calibrate.html)
    GET  /calibrate/state      the wizard's view as JSON, with its `version`
    GET  /events               Server-Sent Events: the view on connect, then on every change
    GET  /calibrate/preview.jpg  the latest frame the step saw, downscaled, with its overlay
    POST /calibrate/answer     {"prompt": ID, "answer": "yes"}: an answer to the prompt shown

The steps run in the command's own thread, exactly as in the terminal; `KioskFront` is their
front: it prints what the terminal prints, and hands each prompt and frame to `WizardHub`,
which the server's event loop reads (the same hand-off as the game's kiosk, `LiveHub`).
Answers from the page go the other way through a queue; each names the prompt it answers,
so an answer that arrives after its question has passed is dropped, never given to the next.
The preview is encoded only when the page asks for it, in the server's thread pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from calibration import wizard_view
from calibration.wizard import Pacer
from referee.errors import UserError
from referee.kiosk.app import (
    NO_STORE,
    STATIC,
    BadBody,
    LiveHub,
    error_response,
    live_page_routes,
    read_params,
)
from referee.kiosk.guard import KioskGuard
from referee.kiosk.server import KioskServer

from .terminal import Terminal

PAGE = "/calibrate"
_CANCEL = -1  # a prompt id no prompt has
Gate = Callable[[str, Any], None]  # called with each new prompt in the steps' thread (tools, tests)


class WizardHub(LiveHub):
    """The wizard's view: its steps with their marks, the prompt, the end; and the latest frame.

    The steps' side (one thread): `begin`, `show`, `frame`, `step_done`, `kept`, `skipped`,
    `finish`, `fail`, `stop`, and `take_answer`. The page's side (the server): `snapshot`,
    `answer`, `preview_jpeg`.
    """

    def __init__(self, title: str, steps: tuple[str, ...], mode: str) -> None:
        super().__init__()
        self.title, self.mode = title, mode
        self._steps = [
            {"name": name, "label": wizard_view.LABELS.get(name, name.title()), "state": "todo", "line": ""}
            for name in steps
        ]
        self._current: str | None = None
        self._prompt: dict[str, Any] | None = None
        self._prompt_id = 0
        self._taken = False  # the prompt shown has had its answer: the next one is new, even if alike
        self._preview = False  # the current step has shown a frame
        self._end: dict[str, str] | None = None
        self._answers: queue.Queue[tuple[int, str]] = queue.Queue()
        # The latest frame and what to draw on it; the preview is made from it on request.
        self._frame_lock = threading.Lock()
        self._frame: tuple[int, np.ndarray, Any, Any] | None = None
        self._frame_no = 0
        self._encoded: tuple[int, bytes] | None = None
        self._pile_box: tuple[int, int, int, int] | None = None

    def _view(self) -> dict[str, Any]:
        return {
            "page": PAGE,
            "title": self.title,
            "mode": self.mode,
            "steps": [dict(step) for step in self._steps],
            "step": self._current,
            "prompt": None if self._prompt is None else dict(self._prompt),
            "preview": self._preview,
            "end": self._end,
        }

    def _step(self, name: str) -> dict[str, Any]:
        found = next((s for s in self._steps if s["name"] == name), None)
        if found is None:  # a step this wizard did not list: shown at the end
            found = {"name": name, "label": wizard_view.LABELS.get(name, name.title()), "state": "todo"}
            found["line"] = ""
            self._steps.append(found)
        return found

    # The steps' side ---------------------------------------------------------------------

    def begin(self, name: str, pile_box: tuple[int, int, int, int] | None = None) -> None:
        """A step starts: it is the current one; no prompt or frame of the last one stays."""

        def change() -> None:
            self._step(name)["state"] = "current"
            self._current, self._prompt, self._preview = name, None, False

        with self._frame_lock:
            self._frame, self._encoded, self._pile_box = None, None, pile_box
        self._change(change)

    def show(self, prompt: Any) -> bool:
        """Show `prompt`; True when it is a new one (another text, other choices or waits, or
        the same question asked again after its answer), which answers to the last one no
        longer fit."""
        view = wizard_view.prompt_view(prompt)
        new = False

        def change() -> bool:
            nonlocal new
            old = self._prompt
            same = old is not None and all(old[k] == view[k] for k in ("text", "choices", "waits"))
            same = same and not self._taken
            if same and all(old[k] == view[k] for k in view):
                return False
            if not same:
                self._prompt_id += 1
                self._taken = False
                new = True
            answered = same and old is not None and old["answered"]
            self._prompt = {**view, "id": self._prompt_id, "answered": answered}
            return True

        self._change(change)
        return new

    def frame(self, image: np.ndarray, prompt: Any) -> None:
        """The latest frame the step saw, with its prompt then (the camera step's overlay). The
        frame is kept by reference: sources hand out a new array for every frame."""
        with self._frame_lock:
            self._frame_no += 1
            self._frame = (self._frame_no, image, prompt, self._pile_box)
        if not self._preview:

            def change() -> None:
                self._preview = True

            self._change(change)

    def _mark(self, name: str, state: str, line: str) -> None:
        def change() -> None:
            step = self._step(name)
            step["state"], step["line"] = state, line

        self._change(change)

    def step_done(self, name: str, line: str) -> None:
        self._mark(name, "done", line)

    def kept(self, name: str, line: str) -> None:
        self._mark(name, "kept", line)

    def skipped(self, name: str, line: str) -> None:
        self._mark(name, "skipped", line)

    @property
    def ended(self) -> bool:
        return self._end is not None

    def _finish(self, how: str, text: str) -> None:
        def change() -> None:
            if self._current is not None:
                step = self._step(self._current)
                if step["state"] == "current":
                    step["state"] = "done" if how == "finished" else how
            if self._prompt is not None:
                self._prompt = {**self._prompt, "choices": [], "waits": "nothing"}
            self._end = {"how": how, "text": text}

        self._change(change)

    def finish(self, text: str) -> None:
        """The wizard ended as it should: `text` says what it did."""
        self._finish("finished", text)

    def fail(self, text: str) -> None:
        """The wizard stopped on a fault (a camera lost): `text` is its one line."""
        self._finish("failed", text)

    def stop(self, text: str) -> None:
        """The wizard was stopped (Ctrl-C)."""
        self._finish("stopped", text)

    def take_answer(self, block: bool) -> str | None:
        """The page's answer to the prompt shown now: waiting for one (`block`), or one given
        meanwhile, or None. Answers to prompts gone by are dropped."""
        while True:
            try:
                prompt_id, text = self._answers.get(block=block)
            except queue.Empty:
                return None
            if prompt_id == _CANCEL:
                raise KeyboardInterrupt  # as Ctrl-C would: the steps end, the server stops
            if prompt_id == self._prompt_id:
                self._taken = True
                return text

    def cancel(self) -> None:
        """Stop the steps from another thread (a tool or a test giving up): their next wait for
        an answer ends as Ctrl-C would end it."""
        self._answers.put((_CANCEL, ""))

    # The page's side ---------------------------------------------------------------------

    def answer(self, prompt_id: Any, text: Any) -> tuple[int, str]:
        """An answer from the page: (HTTP status, message). Only to the prompt shown now, only
        one of its choices, and only once."""
        accepted = ""

        def change() -> bool:
            nonlocal accepted
            prompt = self._prompt
            if prompt is None or prompt_id != prompt["id"] or self._end is not None:
                return False
            if text not in prompt["choices"] or prompt["answered"]:
                return False
            self._prompt = {**prompt, "answered": True}
            self._answers.put((prompt_id, text))
            accepted = text
            return True

        if not isinstance(text, str) or isinstance(prompt_id, bool) or not isinstance(prompt_id, int):
            return 400, 'send {"prompt": ID, "answer": TEXT}'
        self._change(change)
        if accepted:
            return 200, f"answered {accepted}"
        prompt = self._prompt
        if prompt is not None and prompt["id"] == prompt_id and text not in prompt["choices"]:
            return 400, f"answer one of: {', '.join(prompt['choices']) or 'nothing'}"
        return 409, "that question has passed"

    def preview_jpeg(self) -> bytes | None:
        """The latest frame as a small JPEG with the step's overlay; None before the step's
        first frame. Encoded once per frame, when asked."""
        with self._frame_lock:
            latest, encoded = self._frame, self._encoded
        if latest is None:
            return None
        number, image, prompt, box = latest
        if encoded is not None and encoded[0] == number:
            return encoded[1]
        data = wizard_view.jpeg(wizard_view.preview_image(image, prompt, box))
        with self._frame_lock:
            if self._frame is not None and self._frame[0] == number:
                self._encoded = (number, data)
        return data


def make_wizard_app(hub: WizardHub) -> Starlette:
    """The wizard's web app. No token: see docs/calibration.md (who may answer)."""

    async def root(request: Request) -> Response:
        return RedirectResponse(PAGE, status_code=307)

    async def preview(request: Request) -> Response:
        data = await run_in_threadpool(hub.preview_jpeg)
        if data is None:
            return Response(status_code=204, headers=NO_STORE)
        return Response(data, media_type="image/jpeg", headers=NO_STORE)

    async def answer(request: Request) -> Response:
        # JSON only: another site's page cannot send JSON here without a CORS preflight,
        # which this app never grants, while it could post a plain form.
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return error_response(415, "send the answer as JSON")
        try:
            params = await read_params(request)
        except BadBody as e:
            return error_response(e.status, str(e))
        if params is None:
            return error_response(400, 'send {"prompt": ID, "answer": TEXT}')
        status, message = hub.answer(params.get("prompt"), params.get("answer"))
        if status != 200:
            return error_response(status, message)
        return JSONResponse({"ok": True, "message": message}, headers=NO_STORE)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.attach(asyncio.get_running_loop())
        yield

    routes = [
        Route("/", root),
        *live_page_routes(hub, "calibrate.html", PAGE, f"{PAGE}/state"),
        Route(f"{PAGE}/preview.jpg", preview),
        Route(f"{PAGE}/answer", answer, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(KioskGuard)])


class KioskFront(Terminal):
    """The steps' front at the kiosk: the terminal's lines, and the page's prompts, preview and
    answers. Questions are answered on the page (at the simulated table too: the simulated
    person only lays and picks up the cards and presses the buttons)."""

    def __init__(
        self, out: TextIO, sim: bool, pacer: Pacer, hub: WizardHub, gate: Gate | None = None
    ) -> None:
        super().__init__(out, sim, pacer)
        self.hub = hub
        self.gate = gate
        self._step = ""
        self._printed = ""  # the prompt's text last printed: a question is not printed twice
        self._last = ""  # the last step's summary: the end of a wizard that has no other word

    def begin(self, name: str, pile_box: Any = None) -> None:
        self._step = name
        self.hub.begin(name, None if pile_box is None else tuple(pile_box))

    types = False  # answers come from the page

    def show(self, prompt: Any) -> None:
        super().show(prompt)
        self._printed = prompt.text
        self._publish(prompt)

    def _publish(self, prompt: Any) -> None:
        if self.hub.show(prompt) and self.gate is not None:
            self.gate(self._step, prompt)

    def ask(self, prompt: Any) -> str:
        self._publish(prompt)
        self.say(
            "(answer on the page)" if prompt.text == self._printed else f"{prompt.text} (answer on the page)"
        )
        answer = self.hub.take_answer(block=True)
        self.say(f"> {answer}")
        return answer

    def meanwhile(self, prompt: Any) -> str | None:
        if not wizard_view.choices(prompt):
            return None
        answer = self.hub.take_answer(block=False)
        if answer is not None:
            self.say(f"> {answer}")
        return answer

    def seen(self, frame: Any, prompt: Any) -> None:
        self.hub.frame(frame.image, prompt)
        self._publish(prompt)
        super().seen(frame, prompt)

    def done(self, name: str, line: str) -> None:
        super().done(name, line)
        self._last = line
        self.hub.step_done(name, line)

    def kept(self, name: str, line: str) -> None:
        super().kept(name, line)
        self.hub.kept(name, line)

    def skipped(self, name: str, line: str) -> None:
        super().skipped(name, line)
        self.hub.skipped(name, line)

    def finish(self, line: str | None) -> None:
        super().finish(line)
        if not self.hub.ended:
            self.hub.finish(line or self._last or "Done.")


def _mode(sim: bool, speed: float, camera: str | None) -> str:
    if not sim:
        return f"camera: {camera}"
    pace = "at once" if speed == 0 else "at a person's pace" if speed == 1 else f"{speed:g}× a person's pace"
    return f"the simulated table, {pace}"


def _is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def serve_wizard(
    out: TextIO,
    title: str,
    steps: tuple[str, ...],
    *,
    sim: bool,
    pacer: Pacer,
    camera: str | None,
    host: str,
    port: int,
    gate: Gate | None = None,
) -> Iterator[KioskFront]:
    """Serve the wizard's page while the body runs the steps with the front it yields. A fault
    (UserError) or Ctrl-C is shown on the page before the server stops; the page keeps the
    last view it got, and finds the game's kiosk again when it comes back on the same port."""
    hub = WizardHub(title, steps, _mode(sim, pacer.speed, camera))
    server = KioskServer(make_wizard_app(hub), hub, host=host, port=port)
    server.start()
    out.write(f"the wizard's page: {server.url.rstrip('/')}{PAGE} (its questions are answered there)\n")
    if not _is_loopback_host(host):
        out.write(f"note: anyone who can reach {host} port {server.port} can answer the wizard's questions\n")
    out.flush()
    front = KioskFront(out, sim, pacer, hub, gate)
    try:
        yield front
        front.finish(None)
    except UserError as e:
        hub.fail(str(e))
        raise
    except KeyboardInterrupt:
        hub.stop("Stopped (Ctrl-C): the steps finished are saved; run the wizard again to go on.")
        raise
    except BaseException:
        hub.fail("The wizard stopped on an error: see the terminal.")
        raise
    finally:
        server.stop()


class Holds:
    """A gate (`--kiosk`'s `args.gate`) that holds the steps at chosen prompts: the pictures'
    tool and the browser tests look at the page at those moments. Each hold is
    `(label, match(step_name, prompt))` and holds once, at the first prompt it matches; the
    looker takes it with `next()` and lets the steps go on with `release()`."""

    def __init__(self, *holds: tuple[str, Callable[[str, Any], bool]]) -> None:
        self._holds = list(holds)
        self._held: queue.Queue[str] = queue.Queue()
        self._go = threading.Event()
        self._cancelled = False
        self.prompt: Any = None  # the prompt held at

    def __call__(self, step: str, prompt: Any) -> None:
        if self._cancelled:
            raise KeyboardInterrupt
        for i, (label, match) in enumerate(self._holds):
            if match(step, prompt):
                del self._holds[i]
                self._go.clear()
                self.prompt = prompt
                self._held.put(label)
                self._go.wait()
                if self._cancelled:
                    raise KeyboardInterrupt
                return

    def next(self, timeout: float) -> str:
        """The label of the next hold reached (queue.Empty after `timeout` s)."""
        return self._held.get(timeout=timeout)

    def release(self) -> None:
        self._go.set()

    def cancel(self) -> None:
        """Let go, and stop the steps at the next prompt (as Ctrl-C would)."""
        self._cancelled = True
        self._go.set()
