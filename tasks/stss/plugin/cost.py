"""What a suite's episodes will spend, estimated once for both uses: `sandbox stss --dry-run`
prints it instead of running; a run takes the same basis before it starts and, in its closing
summary, prints the estimate for the episodes it ran beside what they spent
(sandbox/app/suites/estimate.py: the rates and the tables)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.app.commands.common import models_file, parallel_options
from sandbox.app.suites.estimate import (
    RATE_FIELDS,
    TOWN,
    Estimate,
    Line,
    Rate,
    Rates,
    kept_numbers,
    measure,
    named,
)
from sandbox.errors import UserError
from sandbox.files import FileFormatError, read_data
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
    start: str = "06:00"  # the window's clock time at its start: which kept rates fit it

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


@dataclass(frozen=True)
class Factor:
    """What a real model spent over the scripted double on the same episodes, for one class
    of calls: its calls, prompt and answer tokens each as a multiple of the double's."""

    calls: float
    prompt_tokens: float
    completion_tokens: float

    def of(self, rate: Rate) -> Rate:
        # the double's latency is kept as it is: a real model's wall time is reckoned from its
        # own (the embedded model's per resident-hour, an endpoint's latency_s), never from it
        return Rate(rate.hours, round(rate.calls * self.calls),
                    round(rate.prompt_tokens * self.prompt_tokens),
                    round(rate.completion_tokens * self.completion_tokens), rate.latency_s)


@dataclass
class KeptWindow:
    """The double's rates measured on windows that start at one clock time: every built-in
    template's own and their pooled mix (the first hour's calls depend on what the town does
    at the start: asleep at 06:00, about at 15:00; measured at 06:00, a 15:00 window was
    estimated at 0.74 of its calls, at 15:00, 0.97)."""

    about: str = ""  # how: the windows, residents, seeds, date
    mix: Rates = field(default_factory=dict)  # architecture -> class -> rate
    templates: dict[str, Rates] = field(default_factory=dict)  # built-in name -> rates


@dataclass
class Kept:
    """The rates kept with the package (RATES_FILE, written by bench/stss_rates.py): the
    scripted double's per window start (KeptWindow), which make the calls this code makes with
    short answers, and per class of call the factors of a real model over the double (its
    answers are longer, its talks and revisions others), measured on the same episodes."""

    model: str = ""  # the double the rates were measured on
    windows: dict[str, KeptWindow] = field(default_factory=dict)  # "HH:MM" start -> rates
    real_model: str = ""  # the real model the factors were measured on ("": none)
    real_about: str = ""
    factors: dict[str, dict[str, Factor]] = field(default_factory=dict)  # arch -> class
    unread: list[str] = field(default_factory=list)  # entries not used, each said

    def window(self, start: str) -> tuple[str, KeptWindow]:
        """The kept window whose start is nearest `start` ("HH:MM"), and its start."""
        def minutes(clock: str) -> int:
            hours, _, mins = clock.partition(":")
            return int(hours) * 60 + int(mins or 0)

        if not self.windows:
            return "", KeptWindow()
        near = min(self.windows, key=lambda w: (abs(minutes(w) - minutes(start)), w))
        return near, self.windows[near]

    def rates(self, template: Path, group: str, start: str = "06:00"
              ) -> tuple[dict[str, Rate] | None, bool]:
        """The rates of an episode of `template`, architecture directory `group` and window
        start `start`, from the kept window nearest it: the template's own when it is a
        built-in one measured there, else the mix; and whether they are the template's own. A
        template file of the user's own (even one named as a built-in) is the mix."""
        kept = self.window(start)[1]
        own = kept.templates.get(template.stem, {}).get(group) if _builtin(template) else None
        return (own, True) if own is not None else (kept.mix.get(group), False)

    def spend(self, rate: Rate, group: str, kind: str, scripted: bool) -> Rate | None:
        """`rate` as the model answering it spends it: as measured when the model is a
        scripted double, else scaled by the real model's factor for the class; None when the
        real model has no factor for it (the estimate then takes the double's, and says so)."""
        if scripted:
            return rate
        factor = self.factors.get(group, {}).get(kind)
        return factor.of(rate) if factor is not None else None


def _builtin(template: Path) -> bool:
    from tasks.stss import TEMPLATES_DIR

    try:
        return template.resolve().parent == TEMPLATES_DIR.resolve()
    except OSError:
        return False


def answered_by_double(model: str) -> bool:
    """Whether calls of this model id are a scripted double's (whose kept rates are its own),
    not a real model's (whose are the double's scaled by the real model's factors)."""
    return model.startswith("scripted/")


FACTOR_FIELDS = ("calls", "prompt_tokens", "completion_tokens")


def _kept_rates(data, where: str, unread: list[str]) -> Rates:
    """architecture -> class -> Rate from a kept entry; a class whose rate is malformed is
    left out and said in `unread`."""
    out: Rates = {}
    for group, classes in (data or {}).items() if isinstance(data, dict) else ():
        for kind, value in (classes or {}).items() if isinstance(classes, dict) else ():
            try:
                out.setdefault(group, {})[kind] = Rate(**kept_numbers(value, RATE_FIELDS,
                                                                  ("hours",)))
            except ValueError as exc:
                unread.append(f"{where}.{group}.{kind}: {exc}")
    if data is not None and not isinstance(data, dict):
        unread.append(f"{where}: not a mapping of architectures")
    return out


def read_kept(path: Path) -> Kept:
    """The kept rates; empty when there is no file. A file that is not JSON, or not of this
    shape at its top, is a UserError naming it (refresh it with the bench script); a single
    malformed rate or factor is left out, counted and said under the estimate."""
    if not path.is_file():
        return Kept()
    refresh = "(bench/stss_rates.py writes it; `git checkout` it or run that script)"
    try:
        data = read_data(path)
    except FileFormatError as exc:
        raise UserError(f"{exc} {refresh}") from exc
    scripted = data.get("scripted") if isinstance(data, dict) else None
    real = data.get("real", {}) if isinstance(data, dict) else None
    windows = scripted.get("windows") if isinstance(scripted, dict) else None
    if not isinstance(windows, dict) or not isinstance(real, dict) or not all(
            isinstance(w, dict) and isinstance(w.get("templates", {}), dict)
            and re.fullmatch(r"\d\d:\d\d", start) for start, w in windows.items()):
        raise UserError(f"{path}: expected \"scripted\" rates per window start (\"HH:MM\") "
                        f"and \"real\" factors {refresh}")
    unread: list[str] = []
    kept = {start: KeptWindow(
        str(w.get("about", "")), _kept_rates(w.get("mix"), f"{start}.mix", unread),
        {name: _kept_rates(rates, f"{start}.templates.{name}", unread)
         for name, rates in w.get("templates", {}).items()}) for start, w in windows.items()}
    factors: dict[str, dict[str, Factor]] = {}
    raw = real.get("factors", {})
    for group, classes in raw.items() if isinstance(raw, dict) else ():
        for kind, value in classes.items() if isinstance(classes, dict) else ():
            try:
                factors.setdefault(group, {})[kind] = Factor(
                    **kept_numbers(value, FACTOR_FIELDS, FACTOR_FIELDS))
            except ValueError as exc:
                unread.append(f"real.factors.{group}.{kind}: {exc}")
    return Kept(str(scripted.get("model", "")), kept, str(real.get("model", "")),
                str(real.get("about", "")), factors, unread)


@dataclass
class Basis:
    """The rates an estimate is made from, taken before anything runs: the suite's finished
    episodes (its history), and the rates kept with the package."""

    history: Rates
    kept: Kept


def basis(done: list[Episode], sizes: dict) -> Basis:
    """The basis of a suite whose finished episodes are `done`; `sizes`: (template, seed) ->
    the EpisodeSize of an episode."""
    from .suite import arch_dir

    history = measure(((e.run_dir, sizes.get((e.template, e.seed), NO_SIZE).units,
                        arch_dir(e.architecture)) for e in done), classify)
    return Basis(history, read_kept(RATES_FILE))


def role_models(args) -> dict[str, str]:
    """The model each role's calls are answered by (a run on one model records "town": calls
    are classed by who made them and why, `classify`, so a routed suite's estimate has no
    "town" row; one row is one model, never "A + B")."""
    background = getattr(args, "background_model", None)
    return {"evaluated": args.model, "background": background or args.model, TOWN: args.model}


KEPT = f"{RATES_FILE.name} (bench/stss_rates.py)"


def model_id(model: str, prices) -> str:
    """The model id a model as typed stands for (an alias's model, else itself)."""
    entry = prices.get(model) if prices is not None else None
    return entry.model if entry is not None else model


def estimate(args, of: Basis, episodes: list[Episode], skipped: int, sizes: dict) -> Estimate:
    """What `episodes` will spend per role and model, their wall time and money (where the
    models file prices the model): at the rate of the suite's history of each architecture,
    else the kept rates (the episode's template's own, else the mix; a real model's scaled by
    the kept factors); an architecture with neither is named in `missing`."""
    from .suite import arch_dir

    models = role_models(args)
    prices = models_file(args)
    kept = of.kept
    out = Estimate(len(episodes), skipped)
    totals: dict[tuple[str, str], tuple[Rate, str]] = {}
    own, mixed, scaled, unscaled, starts = 0, {}, set(), set(), set()
    for episode in episodes:
        group = arch_dir(episode.architecture)
        size = sizes.get((episode.template, episode.seed), NO_SIZE)
        if group in of.history:
            rates, source = of.history[group], HISTORY
        else:
            rates, is_own = kept.rates(episode.template, group, size.start)
            if rates is None:
                if group not in out.missing:
                    out.missing.append(group)
                continue
            starts.add(kept.window(size.start)[0])
            source = KEPT
            own += is_own
            if not is_own:
                mixed[episode.template.stem] = mixed.get(episode.template.stem, 0) + 1
        for kind, rate in rates.items():
            spend = rate.per_hour(size.units(kind))
            role = role_of(kind, args)
            key = (role, models.get(role, args.model))
            line_source = source
            if source == KEPT and not answered_by_double(model_id(key[1], prices)):
                factored = kept.spend(spend, group, kind, scripted=False)
                if factored is None:
                    unscaled.add(key[1])
                else:
                    spend, line_source = factored, f"{KEPT}, scaled to {kept.real_model}"
                    scaled.add(key[1])
            total, first = totals.get(key, (Rate(), line_source))
            totals[key] = (total.plus(spend), first)
    out.notes += kept_notes(kept, starts, own, mixed, scaled, unscaled, prices)
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


def kept_notes(kept: Kept, starts: set[str], own: int, mixed: dict[str, int],
               scaled: set[str], unscaled: set[str], prices) -> list[str]:
    """What the estimate says under its table about the kept rates it used: which (the
    episodes' templates' own or the mix), what they were measured on, and how a real model's
    were scaled; nothing when it used none."""
    if not own and not mixed:
        return []
    windows = [kept.windows[s] for s in sorted(starts)]
    notes = [f"Kept rates ({RATES_FILE.name}): measured on {kept.model}, "
             f"{'; '.join(w.about for w in windows)} (the kept window starting nearest the "
             f"suite's); {own} episode(s) from their template's own rates" + (
                 f", {sum(mixed.values())} from the mix of the "
                 f"{max(len(w.templates) for w in windows)} built-in templates measured "
                 f"(no rates of their own: {', '.join(sorted(mixed))})"
                 if mixed else "") + "."]
    if scaled:
        others = sorted(m for m in scaled if model_id(m, prices) != kept.real_model)
        spans = [_span([f for classes in kept.factors.values() for f in classes.values()],
                       name) for name in FACTOR_FIELDS]
        notes.append(f"{', '.join(named(m, prices) for m in sorted(scaled))}: the scripted "
                     f"rates scaled per class of call by what {kept.real_model} spent over "
                     f"{kept.model} on the same episodes ({kept.real_about}; calls "
                     f"{spans[0]}, tokens in {spans[1]}, tokens out {spans[2]})" + (
                         f"; {kept.real_model} is the one real model measured, "
                         f"{', '.join(named(m, prices) for m in others)} answer otherwise: "
                         "this suite's finished episodes replace the estimate"
                         if others else "") + ".")
    if unscaled:
        notes.append(f"{', '.join(named(m, prices) for m in sorted(unscaled))}: estimated "
                     f"as {kept.model or 'the scripted double'} spends for the classes of "
                     f"call with no real model's factor in {RATES_FILE.name} (answer tokens "
                     "a floor: the double answers briefly).")
    if kept.unread:
        notes.append(f"{RATES_FILE.name}: {len(kept.unread)} malformed entr"
                     f"{'y' if len(kept.unread) == 1 else 'ies'} not used (first: "
                     f"{kept.unread[0]}); bench/stss_rates.py writes it afresh.")
    return notes


def _span(factors: list[Factor], name: str) -> str:
    values = [getattr(f, name) for f in factors]
    low, high = min(values, default=1.0), max(values, default=1.0)
    return f"x{low:.2f}" if round(low, 2) == round(high, 2) else f"x{low:.2f}-{high:.2f}"


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
