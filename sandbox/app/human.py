"""`--human NAME`: a person plays one resident of a town episode (`sandbox run TEMPLATE`,
`sandbox run town_day`), asked at each of the resident's points of choice.

Composition, so it lives with the command line: the person's UI (the viewer's window,
viewer/human.py; a terminal; a script of answers), the human backend (sandbox/llm/human.py)
with the agents' forms (agents/human.py), routed by tasks/routing.py `human_route` beside the
model (`--model`), which answers everything the person does not decide. With the window the
episode runs in a worker thread and the window in the main thread, where pygame wants it.

A person who leaves mid-run (closes the window, ends the input) leaves an `interrupted` run;
the same command goes on from it: every answer given so far, theirs and the model's, comes
from the run's cache, and the person is asked again where they left.
"""

from __future__ import annotations

import argparse
import contextvars
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.app.options import PERSON, InputFile, declared
from sandbox.errors import UserError
from sandbox.llm.human import HUMAN_MODEL, HumanUI, PersonLeft, ScriptUI, TerminalUI

UIS = ("window", "terminal", "script:FILE")


@declared("human-ui")
def human_ui_spec(text: str) -> str:
    if text in ("window", "terminal"):
        return text
    if text.startswith("script:") and len(text) > 7:
        InputFile()(text[7:])  # a script that is there and a regular file, checked at parsing
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: use one of {', '.join(UIS)}")


def add_human_options(g) -> None:
    """--human and --human-ui (a town episode's: a task template, town_day)."""
    g.add_argument("--human", type=PERSON, metavar="NAME",
                   help="a person plays this resident: asked for the day's plan, where to go, "
                        "whether to talk to someone met and each line said; --model answers "
                        "the rest (tasks/routing.py). Not with --background-model")
    g.add_argument("--human-ui", type=human_ui_spec, metavar="UI",
                   help="how the person is asked: window (the viewer, live, the simulation "
                        "waiting at each decision), terminal (typed or piped answers), "
                        "script:FILE (answers from a YAML list, each a purpose and the "
                        "fields of its form: wake_up_hour, plan; hour_0, hour_1, ..., add, "
                        "add_hour; place, what; decision; line, end; README: 'A person "
                        "plays a resident') [default: window]")


@dataclass
class Person:
    """Who a person plays and how they are asked; `window` is the viewer's UI when they are
    asked in its window (then `run` runs the episode beside it)."""

    name: str
    ui: HumanUI
    window: Any = None
    size: tuple[int, int] = (1280, 800)

    def run(self, work: Callable[[], Any], out: Path) -> Any:
        """`work()` (the episode), with the window open on `out` when the person plays in it."""
        if self.window is None:
            return work()
        from viewer.human import run_person_window

        done: dict[str, Any] = {}

        def episode() -> None:
            try:
                done["result"] = work()
            except BaseException as exc:  # handed to the main thread, raised there
                done["error"] = exc
            finally:
                self.window.finished.set()

        # The command's context goes with the episode (its recorded command line, a fork's
        # pauses, a restore: context variables, which a new thread does not inherit).
        context = contextvars.copy_context()
        thread = threading.Thread(target=context.run, args=(episode,), name="episode",
                                  daemon=True)
        thread.start()
        try:
            run_person_window(self.window, out, self.name, size=self.size)
        finally:
            self.window.leave()  # a window closed before the end: the episode stops
            thread.join(timeout=1.0)
            if thread.is_alive():  # the town still busy with the model: stop it at its next step
                from sandbox.engine import INTERRUPT

                INTERRUPT.set()
                try:
                    thread.join()
                finally:
                    INTERRUPT.clear()
        error = done.get("error")
        if isinstance(error, KeyboardInterrupt) and self.window.left.is_set():
            raise PersonLeft("the window was closed") from error
        if error is not None:
            raise error
        return done["result"]


def person_of(args: argparse.Namespace, residents: list[str]) -> Person | None:
    """The person of the command's --human (None without it): a UserError, in one line, for a
    name that is no resident, a UI that cannot work here or options that do not go with it.
    A run the person left (`--out`) is gone on from: --overwrite is implied."""
    name = getattr(args, "human", None)
    ui_spec = getattr(args, "human_ui", None)
    if name is None:
        if ui_spec is not None:
            raise UserError("--human-ui says how the person of --human NAME is asked: give "
                            "--human too")
        return None
    if name not in residents:
        raise UserError(f"--human {name!r}: no such resident in this episode; residents: "
                        f"{', '.join(residents)}")
    if getattr(args, "background_model", None) or getattr(args, "performer_routing", None):
        raise UserError("--human: the person plays one resident and --model the rest of the "
                        "town; --background-model and --performer-routing have no role here")
    ui_spec = ui_spec or "window"
    person = Person(name, ui=None)  # type: ignore[arg-type]
    if getattr(args, "cache_only", False):
        # Every answer comes from the cache (a miss stops the run before a UI is reached):
        # a replay asks no one and opens no window, on any machine.
        person.ui = NoOne()
    elif ui_spec == "terminal":
        person.ui = TerminalUI()
    elif ui_spec.startswith("script:"):
        try:
            person.ui = ScriptUI(ui_spec[7:])
        except ValueError as exc:
            raise UserError(f"--human-ui {ui_spec}: {exc}") from exc
    else:
        from viewer.app import no_display
        from viewer.human import WindowUI

        missing = no_display()
        if missing:
            raise UserError(f"--human-ui window: {missing.split(':')[0]}; use --human-ui "
                            "terminal")
        person.window = person.ui = WindowUI()
    answered = _go_on(args)
    if isinstance(person.ui, ScriptUI):  # its first answers are in the run's cache already
        person.ui.used = answered
    return person


class NoOne:
    """The UI of a run replayed from its cache alone: never reached (CacheMiss comes first)."""

    def ask(self, form):
        raise PersonLeft(f"no one to ask {form.purpose} of {form.agent}: replaying from the "
                         "cache alone")


def _go_on(args: argparse.Namespace) -> int:
    """A run the person left (`--out`; or interrupted while they played the same resident) is
    gone on from by the same command: --overwrite is implied, and the number of the person's
    answers it holds is returned (they come from its cache); 0 for any other directory."""
    from sandbox.runner import PERSON_LEFT

    out = getattr(args, "out", None)
    if out is None:
        return 0
    try:
        result = json.loads((Path(out) / "result.json").read_text(encoding="utf-8"))
        calls = (Path(out) / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return 0
    try:
        roles = json.loads((Path(out) / "header.json").read_text(encoding="utf-8"))[
            "config"].get("roles") or {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        roles = {}
    # The person left (PersonLeft), or the town was stopped when the window closed mid-step.
    if result.get("status") != "interrupted" or not (
            str(result.get("error", "")).startswith(PERSON_LEFT)
            or roles.get("human") == getattr(args, "human", None)):
        return 0
    args.overwrite = True
    answered = 0
    for line in calls:
        try:
            answered += json.loads(line).get("role") == "human"
        except ValueError:  # a torn last line: not an answer
            continue
    print(f"going on with {out}, which the person left: their {answered} answers so far come "
          "from its cache")
    return answered


def human_llm(person: Person, evaluated, stack: Callable):
    """The episode's model with a person: a Router of the person's stack (role `human`,
    answers cached under `human`) and the model's (role `evaluated`)."""
    from agents.human import decision_form
    from sandbox.llm import make_llm, shown_role
    from sandbox.llm.human import HumanBackend
    from sandbox.llm.roles import Router
    from tasks.routing import EVALUATED, HUMAN, human_purposes, human_route

    model = stack(evaluated)
    settings = evaluated.model_copy(update={"model": HUMAN_MODEL, "endpoint": None,
                                            "api_key_env": None, "base_url": None})
    human = make_llm(settings, backend=HumanBackend(decision_form, person.ui))
    return Router({EVALUATED: model, HUMAN: human}, human_route(person.name), default=EVALUATED,
                  named={person.name: HUMAN}, others=EVALUATED,
                  recorded={HUMAN: person.name, EVALUATED: shown_role(evaluated),
                            "purposes": {person.name: human_purposes()}})


def person_left(exc: PersonLeft, out: Path, console) -> int:
    """What the command says when the person left: where the run is and how to go on (1)."""
    from sandbox.llm.human import ScriptAnswerUnfit
    from sandbox.terminal import say_stopped

    # A script's unfit answer would stop the same command at the same place: fix it first.
    first = "Fix that answer; then the same" if isinstance(exc, ScriptAnswerUnfit) else "The same"
    say_stopped(f"stopped: the person left ({exc}); everything so far is kept in {out}. "
                f"{first} command goes on from there (with --out {out}; the answers so far "
                "come from its cache)")
    return 1
