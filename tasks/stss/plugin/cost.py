"""What a suite's episodes will spend, estimated once for both uses: `sandbox stss --dry-run`
prints it instead of running; a run takes the same basis before it starts and, in its closing
summary, prints the estimate for the episodes it ran beside what they spent
(sandbox/app/suites/estimate.py: the rates and the tables)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.app.commands.common import models_file, parallel_options
from sandbox.app.suites.estimate import (
    TOWN,
    Estimate,
    Line,
    Rate,
    Rates,
    measure,
    named,
    read_rates,
)
from sandbox.llm import CallRecord
from tasks.routing import BACKGROUND, EVALUATED, PAPER_PURPOSES

if TYPE_CHECKING:  # the suite's module is imported when a suite runs, not with a command's
    from .suite import Episode

RATES_FILE = Path(__file__).with_name("rates.json")  # bench/stss_rates.py writes it
# Wall time of one simulated resident-hour on the embedded model, on 2 cores (README: the full
# episode, 12 residents x 38 h, took 25.2 min: 3.3 s; the demo's, 3 x 4 h, 26.8 s: 2.2 s).
EMBEDDED_S_PER_RESIDENT_HOUR = 3.0
HISTORY = "this suite's finished episodes"

# What a call is to the roles, whichever model answered it: the performer's calls the paper
# gives the evaluated model, the performer's others, and the other residents'. Rates are kept
# per class, so a routed suite's estimate gives each role the calls routing sends it (the
# performer's routed purposes are not an average resident's: long TDP and planning prompts).
ROUTED, PERFORMER_OTHER, RESIDENTS = "performer.routed", "performer.other", "residents"
# Each class is kept twice: the calls of an episode's first simulated hour (everyone plans
# the day when the episode starts, whatever the window's length) and the rest, per hour after
# it; the performer's classes per episode (one performer, however many others), the residents'
# per background resident. One rate per resident-hour for all made a short window with a few
# residents far too low on the performer's calls (issue 58: "2 calls estimated, 12 made" on the
# evaluated role of a 6-hour window with 2 background residents).
START, START_S = "@start", 3600.0


@dataclass(frozen=True)
class EpisodeSize:
    """What an episode's spend grows with: its residents (the performer among them) and its
    window in simulated hours."""

    residents: int
    hours: float

    @property
    def resident_hours(self) -> float:
        return self.residents * self.hours

    def units(self, kind: str) -> float:
        """How many of a class of calls' units the episode holds: for the calls of the first
        hour (START) one a performer and one a background resident, for the others one an
        hour after it (a performer's) or a background resident's hour after it."""
        who = 1 if kind.startswith("performer.") else max(0, self.residents - 1)
        if kind.endswith(START):
            return float(who)
        return who * max(0.0, self.hours - START_S / 3600)


NO_SIZE = EpisodeSize(0, 0.0)


@lru_cache(maxsize=4096)
def _performer(run_dir: Path) -> str | None:
    try:
        config = json.loads((run_dir / "header.json").read_text(encoding="utf-8"))["config"]
        return config["stss_task"]["performer"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def classify(run_dir: Path, record: CallRecord) -> str:
    """The class of an STSS episode's call (ROUTED, PERFORMER_OTHER or RESIDENTS), with START
    when it was made in the episode's first simulated hour."""
    if record.agent is None or record.agent != _performer(run_dir):
        kind = RESIDENTS
    else:
        kind = ROUTED if record.tag in PAPER_PURPOSES else PERFORMER_OTHER
    return kind + START if record.t is not None and record.t < START_S else kind


def role_of(kind: str, args) -> str:
    """The role whose model answers a class of calls in this suite (a rate kept per role
    before classes were kept, "town", stays what it was)."""
    kind = kind.removesuffix(START)
    background = getattr(args, "background_model", None)
    if kind not in (ROUTED, PERFORMER_OTHER, RESIDENTS):
        return kind
    if background is None or background == args.model:
        return TOWN
    everything = (getattr(args, "performer_routing", None) or "paper") == "all"
    return EVALUATED if kind == ROUTED or (kind == PERFORMER_OTHER and everything) \
        else BACKGROUND


@dataclass
class Basis:
    """The rates an estimate is made from, taken before anything runs: the suite's finished
    episodes (its history), and the rates kept with the package."""

    history: Rates
    kept: Rates
    kept_model: str = ""  # the model the kept rates were measured on


def _kept_model() -> str:
    try:
        return str(json.loads(RATES_FILE.read_text(encoding="utf-8")).get("model", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def basis(done: list[Episode], sizes: dict) -> Basis:
    """The basis of a suite whose finished episodes are `done`; `sizes`: (template, seed) ->
    the EpisodeSize of an episode."""
    from .suite import arch_dir

    return Basis(measure(((e.run_dir, sizes.get((e.template, e.seed), NO_SIZE).units,
                           arch_dir(e.architecture)) for e in done), classify),
                 read_rates(RATES_FILE), _kept_model())


def role_models(args) -> dict[str, str]:
    """The model each role's calls are answered by (a run on one model records "town": calls
    are classed by who made them and why, `classify`, so a routed suite's estimate has no
    "town" row; one row is one model, never "A + B")."""
    background = getattr(args, "background_model", None)
    return {"evaluated": args.model, "background": background or args.model, TOWN: args.model}


def estimate(args, of: Basis, episodes: list[Episode], skipped: int, sizes: dict) -> Estimate:
    """What `episodes` will spend per role and model, their wall time and money (where the
    models file prices the model): at the rate of the suite's history of each architecture,
    else the kept rates; an architecture with neither is named in `missing`."""
    from .suite import arch_dir

    models = role_models(args)
    out = Estimate(len(episodes), skipped)
    totals: dict[tuple[str, str], tuple[Rate, str]] = {}
    for episode in episodes:
        group = arch_dir(episode.architecture)
        if group in of.history:
            rates, source = of.history[group], HISTORY
        elif group in of.kept:
            rates, source = of.kept[group], f"{RATES_FILE.name} (bench/stss_rates.py)"
        else:
            if group not in out.missing:
                out.missing.append(group)
            continue
        size = sizes.get((episode.template, episode.seed), NO_SIZE)
        for kind, rate in rates.items():
            spend = rate.per_hour(size.units(kind))
            role = role_of(kind, args)
            key = (role, models.get(role, args.model))
            total, _ = totals.get(key, (Rate(), source))
            totals[key] = (total.plus(spend), source)
    kept = {model for (_, model), (_, source) in totals.items() if source != HISTORY}
    if kept and of.kept_model and kept != {of.kept_model}:
        # A model's own answers (their length, the talks and revisions they lead to) change
        # its calls: every model gets the same kept estimate until it has a history here.
        out.notes.append(f"The kept rates were measured on {of.kept_model}: every model is "
                         "estimated alike from them (its own answers change its calls and "
                         "tokens); a suite's finished episodes replace them for the rest.")
    prices = models_file(args)
    for (role, model), (spend, source) in totals.items():
        endpoint = prices.get(model)
        price = endpoint.prices if endpoint is not None else None
        out.lines.append(Line(role, model, spend, source, price, named(model, prices)))
    left_hours = sum(sizes.get((e.template, e.seed), NO_SIZE).resident_hours for e in episodes)
    local = [line for line in out.lines
             if (prices.get(line.model).model if prices.get(line.model) is not None
                 else line.model).startswith("local/")]
    if local and len(local) == len(out.lines):
        out.wall_s = left_hours * EMBEDDED_S_PER_RESIDENT_HOUR
        out.wall_how = (f"{left_hours:.0f} simulated resident-hours on the embedded model, "
                        f"about {EMBEDDED_S_PER_RESIDENT_HOUR:g} s each on 2 cores")
    else:
        # The embedded model's share of the calls at its rate, each endpoint's at its latency
        # (one estimate per model: an endpoint is not timed as the embedded model).
        calls = sum(line.spend.calls for line in out.lines) or 1
        per_call = left_hours * EMBEDDED_S_PER_RESIDENT_HOUR / calls
        _endpoint_wall(out, prices, max(1, parallel_options(args).jobs),
                       lambda line: line.spend.calls * per_call if line in local else None)
    return out


def _endpoint_wall(out: Estimate, prices, jobs: int, known=None) -> None:
    """The wall time of the calls at each model's latency: the suite's own measured one (its
    history), else the `latency_s` its models-file entry gives (a kept rate's latency is the
    scripted model's, no endpoint's); `known`: the embedded model's lines' seconds."""
    out.wall_at_latency(prices, jobs, lambda line: line.source == HISTORY,
                        f"each model's latency (measured by this suite, or its models-file "
                        f"latency_s; the embedded model's calls at about "
                        f"{EMBEDDED_S_PER_RESIDENT_HOUR:g} s a resident-hour), {jobs} "
                        "episode(s) at once; the simulation's own time not counted",
                        again="run one episode", known=known)


def actual(args, ran: list[Episode], sizes: dict) -> dict[str, dict[tuple[str, str], Rate]]:
    """What the episodes that ran spent, from their calls.jsonl as the estimate measures it:
    per architecture directory, then per (role, model)."""
    from .suite import arch_dir

    models = role_models(args)
    out: dict[str, dict[tuple[str, str], Rate]] = {}
    for group, roles in measure((e.run_dir,
                                 sizes.get((e.template, e.seed), NO_SIZE).resident_hours,
                                 arch_dir(e.architecture)) for e in ran).items():
        for role, rate in roles.items():
            key = (role, models.get(role, args.model))
            spent = out.setdefault(group, {})
            spent[key] = spent.get(key, Rate()).plus(rate)
    return out
