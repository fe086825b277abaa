"""A person as a model: the backend that asks a person a short form instead of a model.

    backend = HumanBackend(forms=decision_form, ui=TerminalUI())     # agents/human.py's forms
    llm = make_llm(LLMSettings(model=HUMAN_MODEL, cache_path=...), backend=backend)

A call routed to the person (tasks/routing.py says which) becomes a `Form`: a question, what
the person sees beside it (the call's prompt, as a model would have read it) and a few fields,
each a typed line or a choice with a default. The agents build the form for each of their
points of choice (`forms(request)`); a UI shows it and returns the person's answers; the form
turns them into the answer the call expects (the JSON of its schema, or the line its parser
reads), and this backend checks that answer as the structured layer would: an answer that
does not fit is asked again with the reason, never passed on to be repaired or fallen back.

Everything else is a model's call's: the answer text is cached under the model id `human` (so a
run with a person replays, re-scores and forks like any other, whatever UI asked), calls.jsonl
records the purpose and the time the person took (`latency_s`), prompts.jsonl the prompt and
the answer. A person who leaves (a window closed, input ended, a script run out) raises
`PersonLeft`: the run stops as `interrupted`, keeping everything so far; the same command goes on.

UIs here need no display: `TerminalUI` (a terminal, or piped input) and `ScriptUI` (answers
from a YAML file, for tests and demos). The pygame window is the viewer's (viewer/human.py).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, TextIO

from pydantic import ValidationError

from .base import Completion, LLMError, LLMRequest, Usage

HUMAN_MODEL = "human"  # the model id a person's answers are cached and recorded under


class PersonLeft(LLMError):
    """The person stopped answering (closed the window, ended the input, a script ran out).
    Not a fault to fall back from: the run stops, resumable."""


class ScriptAnswerUnfit(PersonLeft):
    """A script's answer is for another form or does not fit its form: the run stops as when
    the person left, but the same command with the same script would stop there again, so
    the script is to be fixed first."""


@dataclass(frozen=True)
class Field:
    """One line of a form: typed text, or one of `options`. An empty answer takes `default`."""

    name: str
    label: str
    kind: Literal["text", "choice"] = "text"
    options: tuple[str, ...] = ()
    default: str = ""
    max_length: int = 300


@dataclass
class Form:
    """What a person is asked at one decision point, and how the answers become the answer."""

    purpose: str
    agent: str
    title: str
    context: list[str]
    fields: list[Field]
    build: Callable[[dict[str, str]], str]
    error: str = ""  # why the last answers did not fit; shown when the form is asked again
    asked: int = 0  # how many times it was shown

    def values(self, given: dict[str, str]) -> dict[str, str]:
        """Every field's value: the given answer, else its default (ValueError for a choice
        that is not one of its options, an unknown field or text too long)."""
        unknown = sorted(set(given) - {f.name for f in self.fields})
        if unknown:
            raise ValueError(f"no field {unknown[0]!r} in this form (fields: "
                             f"{', '.join(f.name for f in self.fields)})")
        values = {}
        for f in self.fields:
            value = str(given.get(f.name, "")).strip() or f.default
            if f.kind == "choice":
                value = choose(f, value)
            elif len(value) > f.max_length:
                raise ValueError(f"{f.label}: at most {f.max_length} characters")
            values[f.name] = value
        return values

    def answer(self, given: dict[str, str]) -> str:
        return self.build(self.values(given))


def choose(f: Field, text: str) -> str:
    """The option `text` names: the option itself (case ignored), an hour as a number ("7" for
    "07:00"), the one option it begins, or the option's number (1-based); ValueError
    otherwise."""
    lowered = text.strip().lower()
    exact = [o for o in f.options if o.lower() == lowered]
    if exact:
        return exact[0]
    if lowered.isdigit() and f"{int(lowered):02d}:00" in f.options:
        return f"{int(lowered):02d}:00"
    begun = [o for o in f.options if o.lower().startswith(lowered)] if lowered else []
    if len(begun) == 1:
        return begun[0]
    if lowered.isdigit() and 1 <= int(lowered) <= len(f.options):
        return f.options[int(lowered) - 1]
    raise ValueError(f"{f.label}: {text!r} is not one of the choices "
                     f"({', '.join(f.options[:8])}{', ...' if len(f.options) > 8 else ''})")


class HumanUI(Protocol):
    """Shows a form to the person and returns their answers by field name (missing or empty:
    the default); raises PersonLeft when the person is gone."""

    def ask(self, form: Form) -> dict[str, str]: ...


class HumanBackend:
    """The backend of a person's role: each call a form (`forms(request)`), one at a time."""

    model_id = HUMAN_MODEL

    def __init__(self, forms: Callable[[LLMRequest], Form | None], ui: HumanUI):
        self.forms = forms
        self.ui = ui
        self.max_concurrency = 1
        self._one_at_a_time = threading.Lock()  # calls of one instant are asked in turn

    def complete(self, request: LLMRequest) -> Completion:
        form = self.forms(request)
        if form is None:  # a routing rule sent a purpose no form exists for: a bug, said so
            raise ValueError(f"no form asks a person for {request.tag!r} ({request.agent}); "
                             "tasks/routing.py HUMAN_PURPOSES and agents/human.py disagree")
        with self._one_at_a_time:
            while True:
                form.asked += 1
                given = self.ui.ask(form)
                try:
                    text = form.answer(given)
                    fits(request, text)
                except ValueError as exc:
                    form.error = str(exc).splitlines()[0]
                    continue
                return Completion(text=text, usage=Usage(), model=HUMAN_MODEL,
                                  finish_reason="stop")


def fits(request: LLMRequest, text: str) -> None:
    """ValueError unless `text` is an answer the request's schema or parser takes."""
    if request.schema_model is not None:
        try:
            request.schema_model.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"{where}: {first['msg']}" if where else first["msg"]) from None
    elif request.parser is not None:
        request.parser(text)
    elif not text.strip():
        raise ValueError("an answer is needed")


# -- UIs without a display ------------------------------------------------------------------

class TerminalUI:
    """Asks in a terminal (or reads piped input): the form's context and question, then each
    field on its own line; Enter takes the default, a choice is its number or its name. The
    input ending is the person leaving."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None):
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def _line(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise PersonLeft("the input ended")
        return line.rstrip("\n")

    def ask(self, form: Form) -> dict[str, str]:
        out = self.stdout
        out.write(f"\n== {form.agent}: {form.purpose} ==\n")
        for line in form.context:
            out.write(f"  | {line}\n")
        if form.error:
            out.write(f"  ! {form.error}; again:\n")
        out.write(f"{form.title}\n")
        given: dict[str, str] = {}
        for f in form.fields:
            if f.kind == "choice" and max(map(len, f.options), default=0) <= 8:
                shown = f.options if len(f.options) <= 12 else \
                    (*f.options[:2], "..", f.options[-1])
                out.write(f"  (choices: {' '.join(shown)})\n")
            elif f.kind == "choice":
                out.write("".join(f"   {i}. {o}\n" for i, o in enumerate(f.options, 1)))
            while True:
                text = self._line(f"  {f.label} [{f.default}]: ").strip()
                try:
                    if f.kind == "choice" and text:
                        choose(f, text)
                except ValueError as exc:
                    out.write(f"  ! {exc}\n")
                    continue
                given[f.name] = text
                break
        return given


class ScriptUI:
    """A person's answers read from a YAML file, in order: a list of mappings, each the purpose
    it answers and the fields' values (a field left out takes its default):

        - {purpose: plan.daily, wake_up_hour: "7", plan: "open the cafe; host the tasting"}
        - {purpose: react.talk, decision: talk}

    The fields of each purpose's form (wake_up_hour, plan, hour_N, add, add_hour, place, what,
    decision, line, end) are listed in the README ("A person plays a resident"); a script is
    bounded (SCRIPT_BYTES, SCRIPT_ANSWERS). It goes through the forms as a person would: an
    answer for another purpose than the one asked, or one that does not fit, stops the run
    there (PersonLeft, resumable), and so does the end of the list."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.answers = read_script(self.path)
        self.used = 0

    def ask(self, form: Form) -> dict[str, str]:
        where = f"{self.path} answer {self.used + 1}"
        if form.error:  # asked again: the answer that did not fit is the one given last
            raise ScriptAnswerUnfit(f"{self.path} answer {self.used} does not fit {form.agent}'s "
                             f"{form.purpose}: {form.error}")
        if self.used >= len(self.answers):
            raise PersonLeft(f"{self.path} has no answer left for {form.agent}'s "
                             f"{form.purpose}, {form.title!r} (it holds {len(self.answers)})")
        answer = dict(self.answers[self.used])
        self.used += 1
        purpose = answer.pop("purpose", None)
        if purpose != form.purpose:
            raise ScriptAnswerUnfit(f"{where} is for {purpose!r}, but {form.agent} is asked "
                             f"{form.purpose!r}")
        return {k: str(v) for k, v in answer.items()}


# A person's whole episode is some hundreds of answers of a line or two (a full-window town
# episode asks its performer a few hundred times): a script far above these is not one, and read
# whole and parsed it would hold the command for minutes (10^6 answers once did).
SCRIPT_BYTES = 2**20
SCRIPT_ANSWERS = 10_000


def read_script(path: Path) -> list[dict]:
    """A script's answers; ValueError naming the file and the reason when it does not read: not
    a regular file (a FIFO would block), over SCRIPT_BYTES or SCRIPT_ANSWERS, not YAML, a key
    given twice, an answer that is not a mapping with its purpose."""
    from ..files import FileFormatError, read_bytes, read_data

    try:
        read_bytes(path, SCRIPT_BYTES)  # bounded and guarded before it is parsed
        data = read_data(path)
    except FileFormatError as exc:
        raise ValueError(str(exc)) from exc
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of answers, each a mapping with its purpose")
    if len(data) > SCRIPT_ANSWERS:
        raise ValueError(f"{path}: {len(data):,} answers, more than the {SCRIPT_ANSWERS:,} a "
                         "person's episode could ask for")
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict) or not isinstance(item.get("purpose"), str):
            raise ValueError(f"{path}: answer {i}: expected a mapping with a purpose, e.g. "
                             "{purpose: react.talk, decision: talk}")
    return data
