"""What a suite will cost before it runs (`--dry-run`): calls and tokens per role and model,
wall time and money, from rates per simulated resident-hour.

A rate is measured from finished runs' calls.jsonl: calls, prompt and answer tokens and the
summed latency per resident-hour (a resident simulated for an hour), per group (the performer's
architecture) and role (the role a call was recorded in; "town" when the run had one model).
Its sources, in order: the suite directory's own finished episodes (its history, the best
guess for the rest of it), else the rates a suite command keeps with its package (a rates.json
beside it, refreshed by a bench script on this code; a plug-in may keep its own, finer, in its
own cost module).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.llm import CallRecord, model_name
from sandbox.log import read_calls

TOWN = "town"  # the role of a call made where the whole town ran on one model


@dataclass
class Rate:
    """What runs of some resident-hours spent."""

    hours: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    def per_hour(self, hours: float) -> Rate:
        """The spend of `hours` resident-hours at this rate."""
        k = hours / self.hours if self.hours else 0.0
        return Rate(hours, round(self.calls * k), round(self.prompt_tokens * k),
                    round(self.completion_tokens * k), self.latency_s * k)

    def plus(self, other: Rate) -> Rate:
        return Rate(self.hours + other.hours, self.calls + other.calls,
                    self.prompt_tokens + other.prompt_tokens,
                    self.completion_tokens + other.completion_tokens,
                    self.latency_s + other.latency_s)

    def data(self) -> dict[str, float]:
        return {"hours": self.hours, "calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "latency_s": self.latency_s}


Rates = dict[str, dict[str, Rate]]  # group -> role -> rate
RATE_FIELDS = ("hours", "calls", "prompt_tokens", "completion_tokens", "latency_s")  # kept in order


Classify = Callable[[Path, CallRecord], str]  # (run directory, a call) -> what it counts as
# What a run's calls are counted per: one figure for every class of call (its resident-hours,
# its items), or a figure per class (a suite whose classes have units of their own).
Units = float | Callable[[str], float]


def measure(runs: Iterable[tuple[Path, Units, str]], classify: Classify | None = None
            ) -> Rates:
    """Rates per group and role from finished runs: (run directory, its units, its group). A
    run's units count once for each role it made calls in. `classify` says what a call counts
    as instead of the role it was recorded in (a suite's own classes of calls, which it maps to
    roles when it estimates: a routed suite's roles from one-model runs)."""
    out: Rates = {}
    for run_dir, units, group in runs:
        records, _ = read_calls(run_dir)
        roles: dict[str, Rate] = {}
        for record in records:
            key = classify(run_dir, record) if classify else record.role or TOWN
            rate = roles.setdefault(key, Rate(units(key) if callable(units) else units))
            rate.calls += 1
            rate.prompt_tokens += record.prompt_tokens
            rate.completion_tokens += record.completion_tokens
            rate.latency_s += record.latency_s
        for role, rate in roles.items():
            total = out.setdefault(group, {}).setdefault(role, Rate())
            total.hours += rate.hours
            total.calls += rate.calls
            total.prompt_tokens += rate.prompt_tokens
            total.completion_tokens += rate.completion_tokens
            total.latency_s += rate.latency_s
    return out


def _kept_file(path: Path) -> dict:
    """A rates file kept with a benchmark, read as every file is (sandbox.files): a damaged
    one is a UserError naming it and how to mend it, never a traceback."""
    from sandbox.errors import UserError
    from sandbox.files import FileFormatError, read_data

    mend = "(its bench script writes it; `git checkout` it or run that script again)"
    try:
        data = read_data(path)
    except FileFormatError as exc:
        raise UserError(f"{exc} {mend}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("rates", {}), dict) \
            or not isinstance(data.get("models", {}), dict):
        raise UserError(f"{path}: expected {{\"rates\": {{...}}, \"models\": {{...}}}} {mend}")
    return data


def read_rates(path: Path) -> tuple[Rates, dict]:
    """Rates kept in a file ({"rates": {group: {role: Rate.data()}}, "models": {group:
    model}}) and the models they were measured on, the file read once; empty when there is
    none. A damaged file is a UserError (`_kept_file`); a malformed rate too, naming it."""
    from sandbox.errors import UserError

    if not path.is_file():
        return {}, {}
    data = _kept_file(path)
    out: Rates = {}
    for group, roles in data.get("rates", {}).items():
        try:
            out[group] = {role: Rate(**kept_numbers(value, RATE_FIELDS))
                          for role, value in roles.items()}
        except (AttributeError, TypeError, ValueError) as exc:
            raise UserError(f"{path}: the rates of {group!r} do not read ({exc}); its bench "
                            "script writes them") from exc
    return out, data.get("models", {})


def kept_numbers(value: Any, fields: tuple[str, ...], positive: tuple[str, ...] = ()
                 ) -> dict[str, float]:
    """A kept entry's fields as numbers (a mapping, or the list of `fields` in order): all of
    `fields`, finite, none negative, those of `positive` above 0; ValueError naming what is
    wrong."""
    if isinstance(value, list) and len(value) == len(fields):
        value = dict(zip(fields, value, strict=True))
    elif not isinstance(value, dict) or set(value) != set(fields):
        raise ValueError(f"expected {', '.join(fields)}")
    for name in fields:
        number = value[name]
        if isinstance(number, bool) or not isinstance(number, int | float) \
                or not math.isfinite(number) or number < 0 \
                or (name in positive and number == 0):
            raise ValueError(f"{name}: {number!r} is not a "
                             f"{'positive' if name in positive else 'non-negative'} number")
    return value


def measured_rates(bench, done: list[Path]) -> dict:
    """Calls, tokens and latency per role over the finished items `done` (their units: items):
    the role each call was made in (calls.jsonl), else the one its tag belongs to."""
    by_tag = bench.roles_by_tag()
    rates = {role: Rate(len(done)) for role in dict.fromkeys(by_tag.values())}
    for run_dir in done:
        for record in read_calls(run_dir)[0]:
            role = record.role or by_tag.get(record.tag, record.tag)
            rates[role] = rates.get(role, Rate(len(done))).plus(Rate(
                0, 1, record.prompt_tokens, record.completion_tokens, record.latency_s))
    return rates


JUDGE, JUDGE_AGENT = "judge", "judge:"  # a judge's calls: its role, and its agent's prefix


def judge_rates(done: list[Path]) -> dict[str, Rate]:
    """Each judge's calls, tokens and latency over the finished items `done` (their units:
    items), by the name its calls were made under ("alias (model id)" for an alias): two
    judges are two estimates, never one row for both."""
    rates: dict[str, Rate] = {}
    for run_dir in done:
        for record in read_calls(run_dir)[0]:
            agent = record.agent or ""
            if record.role == JUDGE and agent.startswith(JUDGE_AGENT):
                name = agent.removeprefix(JUDGE_AGENT)
                rates[name] = rates.get(name, Rate(len(done))).plus(Rate(
                    0, 1, record.prompt_tokens, record.completion_tokens, record.latency_s))
    return rates


def per_judge(rate: Rate, judges: int) -> Rate:
    """The judge role's rate over `judges` judges as one judge's (their mean)."""
    return Rate(rate.hours * max(1, judges), rate.calls, rate.prompt_tokens,
                rate.completion_tokens, rate.latency_s)


def named(model: str, models) -> str:
    """A model as every table names it: "alias (model id)" for an alias of the models file
    `models`, else as given."""
    entry = models.get(model) if models is not None else None
    return model_name(entry.model, model) if entry is not None else model


def rates_key(options: dict) -> str:
    """The options a kept rate was measured under, as its key in the rates file."""
    return json.dumps({k: None if v is None else str(v) for k, v in options.items()},
                      sort_keys=True)


def kept_rates(bench, options: dict) -> tuple[dict, str]:
    """The rates kept with `bench` for these options, and the model they were measured on;
    empty when the benchmark keeps none for them."""
    if bench.rates is None:
        return {}, ""
    rates, models = read_rates(bench.rates)
    key = rates_key(options)
    return rates.get(key, {}), str(models.get(key, ""))


@dataclass
class Line:
    """One row of an estimate: a role, the model it runs on, and what it will spend."""

    role: str
    model: str  # as typed: what its models-file entry is looked up by
    spend: Rate
    source: str  # where the rate came from
    price: tuple[float, float] | None = None  # dollars per million tokens in, out
    name: str = ""  # as every table names it ("alias (model id)"); "" : `model`

    @property
    def shown(self) -> str:
        return self.name or self.model

    @property
    def dollars(self) -> float | None:
        if self.price is None:
            return None
        return (self.spend.prompt_tokens * self.price[0] +
                self.spend.completion_tokens * self.price[1]) / 1e6


@dataclass
class Estimate:
    units: int  # episodes to run
    skipped: int  # finished, skipped
    lines: list[Line] = field(default_factory=list)
    wall_s: float | None = None
    wall_how: str = ""
    missing: list[str] = field(default_factory=list)  # groups with no rate at all
    notes: list[str] = field(default_factory=list)  # said under the table

    def markdown(self, noun: str = "episode") -> str:
        rows = ["| Role | Model | Calls | Tokens in | Tokens out | Money | Rate from |",
                "|---|---|--:|--:|--:|--:|---|"]
        for line in self.lines:
            money = "-" if line.dollars is None else money_text(line.dollars)
            rows.append(f"| {line.role} | {line.shown} | {line.spend.calls} | "
                        f"{line.spend.prompt_tokens} | {line.spend.completion_tokens} | {money} | "
                        f"{line.source} |")
        head = (f"Dry run: {self.units} {noun}(s) to run, {self.skipped} finished and skipped; "
                "nothing was written.")
        if not self.lines:
            rows = []
        tail = []
        if self.wall_s is not None:
            tail.append(f"Wall time: about {_duration(self.wall_s)} ({self.wall_how}).")
        if any(line.price is None for line in self.lines):
            tail.append("Money: only for models whose models-file alias gives price_in and "
                        "price_out.")
        tail += self.notes
        tail += [f"No rate for {g}: not in the estimate (run one episode of it, then "
                 "--dry-run again)." for g in self.missing]
        return "\n".join([head, "", *rows, "", *tail]) + "\n"

    def wall_at_latency(self, prices, jobs: int, measured: Callable[[Line], bool], how: str,
                        again: str, known: Callable[[Line], float | None] | None = None
                        ) -> None:
        """The wall time of the calls, `jobs` at once: a line's own latency where it was
        `measured` (or its models are scripted ones), else its calls times its models-file
        entry's `latency_s`; a model with neither is said (`again`: how to measure it), and
        then no wall time is given. `known`: a line's seconds reckoned otherwise (the embedded
        model's, which more jobs do not shorten). `how` says how it was reckoned."""
        seconds, alone, unknown = 0.0, 0.0, []
        for line in self.lines:
            endpoint = prices.get(line.model)
            if known is not None and (given := known(line)) is not None:
                alone += given
            elif measured(line) or (endpoint.model if endpoint is not None
                                    else line.model).startswith("scripted/"):
                seconds += line.spend.latency_s
            elif endpoint is not None and endpoint.latency_s is not None:
                seconds += line.spend.calls * endpoint.latency_s
            else:
                unknown.append(line.shown)
        if unknown:
            self.notes.append(f"Wall time: not known for {', '.join(dict.fromkeys(unknown))} "
                              "(give latency_s, a typical call's seconds, in its models-file "
                              f"entry, or {again} and --dry-run again).")
            return
        self.wall_s, self.wall_how = seconds / jobs + alone, how

    def scaled(self, units: int) -> Estimate:
        """The same estimate for `units` of its units (the items a run went on to run, when
        a cap stopped it before the rest): every line and the wall time in proportion."""
        k = units / self.units if self.units else 0.0
        lines = [Line(x.role, x.model, x.spend.per_hour(x.spend.hours * k), x.source, x.price,
                      x.name) for x in self.lines]
        return Estimate(units, self.skipped, lines,
                        None if self.wall_s is None else self.wall_s * k, self.wall_how,
                        list(self.missing), list(self.notes))

    def data(self) -> dict[str, Any]:
        return {"units": self.units, "skipped": self.skipped, "wall_s": self.wall_s,
                "lines": [{"role": x.role, "model": x.shown, **x.spend.data(),
                           "dollars": x.dollars, "source": x.source} for x in self.lines],
                "missing": self.missing}


Spent = dict[str, dict[tuple[str, str], Rate]]  # group -> (role, model) -> what it spent


def against(estimate: Estimate, spent: Spent, noun: str = "episode", stopped: int = 0,
            wall_s: float | None = None, names: dict[str, str] | None = None) -> str:
    """The estimate made before a run for the units it ran, beside what they spent, per role
    and model, with estimate / actual; a group the estimate had no rate for is said with its
    own spend, outside the comparison (nothing to compare it with). `stopped`: how many of
    the units that ran failed or were stopped, said (their estimate is a whole unit's).
    `wall_s`: how long the run took, said beside the estimate's wall time. A model is shown
    as the estimate's line names it, else as `names` does (model as typed -> shown)."""
    if not estimate.units:
        return (f"Estimate vs actual: nothing ran ({estimate.skipped} {noun}(s) were finished "
                "before); nothing to compare.\n")
    actual: dict[tuple[str, str], Rate] = {}
    for group, lines in spent.items():
        if group not in estimate.missing:
            for key, rate in lines.items():
                actual[key] = actual.get(key, Rate()).plus(rate)
    rows = ["| Role | Model | Calls est. | Calls | Ratio | Tokens in est. | Tokens in | Ratio "
            "| Tokens out est. | Tokens out | Ratio | Rate from |",
            "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    estimated = {(line.role, line.model): line for line in estimate.lines}
    shown = {**(names or {}), **{line.model: line.shown for line in estimate.lines}}
    for key in [*estimated, *(k for k in actual if k not in estimated)]:
        line = estimated.get(key)
        guess = line.spend if line is not None else Rate()
        real = actual.get(key, Rate())
        cells = [f"{g} | {a} | {_ratio(g, a)}" for g, a in (
            (guess.calls, real.calls), (guess.prompt_tokens, real.prompt_tokens),
            (guess.completion_tokens, real.completion_tokens))]
        rows.append(f"| {key[0]} | {shown.get(key[1], key[1])} | {' | '.join(cells)} | "
                    f"{line.source if line is not None else 'no estimate'} |")
    head = (f"Estimate vs actual for the {estimate.units} {noun}(s) this run ran (the estimate "
            f"made before it, as --dry-run makes it; ratio: estimate / actual):")
    tail = [f"{stopped} of them failed or stopped early: they count with what they spent "
            "before, so the ratio runs high."] if stopped else []
    if wall_s is not None:
        tail.append(wall_line(estimate, wall_s))
    for group in estimate.missing:
        lines = spent.get(group, {})
        calls = sum(r.calls for r in lines.values())
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in lines.values())
        tail.append(f"No estimate for {group} (no rate for it before the run): it spent "
                    f"{calls} call(s), {tokens} token(s), not in the table.")
    if len(rows) == 2:  # no rate for any of them and nothing to count
        rows = []
    return "\n".join([head, "", *rows, *([""] if tail else []), *tail]) + "\n"


def wall_line(estimate: Estimate, wall_s: float) -> str:
    """The estimate's wall time beside the run's: the one figure a dry run guesses that the
    calls' table does not check."""
    took = f"took {_duration(wall_s)}"
    if estimate.wall_s is None:
        why = next((n for n in estimate.notes if n.startswith("Wall time")),
                   "no wall time was estimated")
        return f"Wall time: {took}; not estimated ({why.removeprefix('Wall time: ').rstrip('.')})."
    ratio = f"{estimate.wall_s / wall_s:.2f}" if wall_s > 0 else "-"
    return (f"Wall time: estimated about {_duration(estimate.wall_s)} ({estimate.wall_how}), "
            f"{took} (ratio {ratio}).")


def money_text(dollars: float) -> str:
    """Dollars as an estimate shows them: cents, or to the hundredth of a cent below one (a
    short run on a cheap model is not "$0.00")."""
    return f"${dollars:.4f}" if 0 < dollars < 0.01 else f"${dollars:.2f}"


def _ratio(estimated: int, actual: int) -> str:
    return f"{estimated / actual:.2f}" if actual else "-"


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
