"""A town episode's models by role: the evaluated model (the performer's, `--model`) and the
background model (every other resident, `--background-model`), and which of the performer's
calls the evaluated model answers (`--performer-routing`, tasks/routing.py).

Composition, so it lives with the command line: `sandbox run` (a task template, town_day) and
a suite of town episodes build their episode's model here, a suite once per process
(`TownRoles` is picklable: a Ray worker builds its own).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.options import Model
from sandbox.errors import UserError
from sandbox.llm import CacheMiss, LLMConfigError, LLMSettings, make_llm, shown_role
from sandbox.llm.roles import Router


def add_role_options(g) -> None:
    """--background-model and --performer-routing (a town episode's, or a suite of them)."""
    g.add_argument("--background-model", type=Model(), metavar="MODEL",
                   help="the model of every other resident and of the performer's calls the "
                        "evaluated model (--model) does not answer: an alias or backend/model "
                        "[default: the same as --model]")
    g.add_argument("--performer-routing", choices=["paper", "all"],
                   help="which of the performer's calls go to --model: paper: as the "
                        "social-task paper's public code (TDP, the daily plan, each line the "
                        "performer speaks; tasks/routing.py has the table); all: every call "
                        "of the performer [default: paper, with --background-model]")


@dataclass(frozen=True)
class TownRoles:
    """Who answers a town episode's calls. `background` None: one model for the whole town
    (the evaluated model; an episode then runs exactly as one with a single --model)."""

    evaluated: LLMSettings
    background: LLMSettings | None = None
    routing: str = "paper"

    @property
    def routed(self) -> bool:
        return self.background is not None

    def settings(self) -> list[LLMSettings]:
        return [self.evaluated] + ([self.background] if self.background is not None else [])

    def backends(self) -> dict[str, object]:
        """One backend per distinct model and endpoint, loaded now (LLMConfigError when one
        cannot work: a dead endpoint, an unset key variable, named by its role)."""
        from sandbox.llm import make_backend  # looked up when called (tests count the loads)

        built: dict[str, object] = {}
        for role, settings in zip(("evaluated", "background"), self.settings(), strict=False):
            key = _backend_key(settings)
            if key not in built:
                try:
                    built[key] = make_backend(settings)
                except LLMConfigError as exc:
                    raise LLMConfigError(f"the {role} model ({_name(settings)}): {exc}") \
                        from exc
        return built

    def llm(self, cache_path: Path | None, performer: str | None, backends: dict[str, object],
            person=None):
        """The episode's model: one stack, or a Router of the two roles' stacks over one cache
        file (keyed by model and endpoint, so the two never stand for each other); with a
        person (sandbox/app/human.py), a Router of theirs and the model's."""
        def stack(settings: LLMSettings):
            settings = settings.model_copy(update={"cache_path": settings.cache_path
                                                   or cache_path})
            return make_llm(settings, backend=backends[_backend_key(settings)])

        if person is not None:
            from .human import human_llm

            return human_llm(person, self.evaluated.model_copy(update={
                "cache_path": self.evaluated.cache_path or cache_path}), stack)
        if not self.routed:
            return stack(self.evaluated)
        if performer is None:
            raise UserError("--background-model needs a performer (whose calls the evaluated "
                            "model answers): a task template's, or town_day's --performer")
        from tasks.routing import (  # the town's roles
            BACKGROUND,
            EVALUATED,
            performer_purposes,
            performer_route,
        )

        return Router({EVALUATED: stack(self.evaluated), BACKGROUND: stack(self.background)},
                      performer_route(performer, self.routing), default=EVALUATED,
                      named={performer: EVALUATED}, others=BACKGROUND,
                      recorded={"performer_routing": self.routing, "performer": performer,
                                EVALUATED: shown_role(self.evaluated),
                                BACKGROUND: shown_role(self.background),
                                "purposes": {performer: performer_purposes(self.routing)}})


def _backend_key(settings: LLMSettings) -> str:
    return "|".join(str(v) for v in (settings.model, settings.endpoint, settings.base_url,
                                     settings.json_dialect, settings.timeout_s,
                                     settings.max_concurrency))


def _name(settings: LLMSettings) -> str:
    return settings.endpoint or settings.model


def town_roles(args: argparse.Namespace, cache_path: Path | None = None) -> TownRoles:
    """The TownRoles of the command's options; a UserError for an unknown alias, or routing
    asked for without a background model."""
    from .commands.common import resolve_model

    evaluated = resolve_model(args, args.model, cache_path)
    background_ref = getattr(args, "background_model", None)
    routing = getattr(args, "performer_routing", None)
    if background_ref is None:
        if routing is not None:
            raise UserError("--performer-routing says which of the performer's calls go to "
                            "--model rather than the background model: give "
                            "--background-model too")
        return TownRoles(evaluated)
    background = resolve_model(args, background_ref, cache_path)
    if background == evaluated:  # one model for the town: exactly a single --model run
        return TownRoles(evaluated)
    return TownRoles(evaluated, background, routing or "paper")


def build_town_llm(args: argparse.Namespace, cache_path: Path, performer: str | None,
                   person=None):
    """The model of one town episode for the command's options (a UserError when a role's
    model cannot work, naming the role); `person`: who a person plays (sandbox/app/human.py)."""
    from .commands.common import use_prompts

    use_prompts(args)
    roles = town_roles(args)
    try:
        return roles.llm(cache_path, performer, roles.backends(), person)
    except (LLMConfigError, CacheMiss) as exc:
        raise UserError(str(exc)) from exc
