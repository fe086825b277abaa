"""The command line every single-room benchmark shares, built from its `Benchmark`:

    sandbox NAME --out DIR [--ROLE MODEL ...] [--judge MODEL ...] [--ROLE-temperature ...]
                 [--every K] [--seed N] [--rejudge] [--label L] [model access options]
    sandbox NAME-board DIR... [--judge MODEL ...] [--json F] [--markdown F] [--plot F.png]

The command line makes both for every `Benchmark` an installed plug-in declares
(sandbox/app/plugins.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import ValidationError

from sandbox import terminal
from sandbox.app.commands.common import (
    access_settings,
    add_budget_options,
    add_model_access_options,
    add_parallel_options,
    budgets,
    models_file,
    parallel_options,
    suite_progress,
    use_prompts,
)
from sandbox.app.options import (
    EVERY,
    MAX_TOKENS,
    RESAMPLES,
    SEED,
    InputDir,
    InputPath,
    Model,
    PlotFile,
)
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.llm import CacheMiss, LLMConfigError
from sandbox.lock import hold_output

from .common import (
    label_text,
    non_negative_float,
    output_dir,
    output_file,
    probability,
)

EMBEDDED = "local/smollm2-135m"


def _sampling_options(p: argparse.ArgumentParser, role: str, default, token_help: str) -> None:
    g = p.add_argument_group(f"{role} sampling")
    g.add_argument(f"--{role}-temperature", type=non_negative_float, default=default.temperature,
                   help="[default: %(default)s]")
    g.add_argument(f"--{role}-top-p", type=probability, default=default.top_p,
                   help="[default: %(default)s]")
    g.add_argument(f"--{role}-max-tokens", type=MAX_TOKENS, default=default.max_tokens,
                   help=f"{token_help} [default: %(default)s]")


def _typed(option):
    """The option's type as a check of the text: the value stays text, as the manifest records
    it (a path given is compared with the one recorded); and its own text default is kept as
    it is (argparse passes a text default through the type too, and a default of a str
    subclass, a plug-in's marker of "not given", must stay one)."""
    if option.type is None:
        return None
    default = option.default

    def convert(text: str):
        if isinstance(default, str) and text is default:
            return default
        value = option.type(text)
        return text if isinstance(value, Path) else value

    convert.kind = option.type.kind
    return convert


def register_benchmark(sub, bench) -> None:
    """Add `sandbox NAME` and `sandbox NAME-board` for `bench` (a plug-in's Benchmark)."""
    add_run_command(sub, bench)
    add_board_command(sub, bench)


def add_run_command(sub, bench, **defaults) -> argparse.ArgumentParser:
    """`sandbox NAME`: the parser, its options made from the declaration (`defaults` go to
    set_defaults, e.g. another `func`)."""
    p = sub.add_parser(
        bench.name, help=f"run the {bench.title} for one configuration",
        description=f"Run every selected item of the {bench.title} as a dialogue (a run "
                    f"directory each), ask every judge about it, and print the board. "
                    f"Finished {bench.noun} and saved judgments are skipped, so an interrupted "
                    "run resumes and a new --judge calls no other role.",
        epilog=f"example: {bench.example}" if bench.example else None)
    for role in bench.roles:
        p.add_argument(f"--{role.name}", type=Model(), default=EMBEDDED, metavar="MODEL",
                       help=f"{role.help} [default: %(default)s]")
    p.add_argument("--judge", action="append", dest="judges", type=Model(), metavar="MODEL",
                   help=f"a judge model; repeat for several (their scores are averaged) "
                        f"[default: {EMBEDDED}]")
    p.add_argument(f"--{bench.items.flag}", dest="items", type=InputPath(),
                   help=bench.items.help)
    for name, option in bench.options.items():
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, default=option.default,
                       choices=option.choices, type=_typed(option),
                       help=f"{option.help} [default: %(default)s]")
    p.add_argument("--out", type=output_dir, required=True,
                   help="benchmark directory (one configuration per directory)")
    p.add_argument("--label", type=label_text,
                   help=f"the configuration's name on the board [default: the "
                        f"{bench.under_test} model]")
    p.add_argument("--every", type=EVERY, default=1, metavar="K",
                   help=f"keep about one of K {bench.items.noun}, spread over the set (a quick "
                        "run) [default: %(default)s]")
    p.add_argument("--seed", type=SEED, default=0,
                   help="base seed [default: %(default)s]")
    p.add_argument("--rejudge", action="store_true",
                   help="ask the judges again even where a judgment is saved")
    p.add_argument("--dry-run", action="store_true",
                   help=f"say how many {bench.items.noun} would run (finished ones skipped) and "
                        "their calls, tokens, wall time and money per role, from this "
                        "directory's finished ones; run and write nothing")
    for role in bench.roles:
        _sampling_options(p, role.name, role.sampling, role.tokens_help)
    _sampling_options(p, "judge", bench.judging.sampling, "per judged turn")
    for name, option in bench.judging.options.items():
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, default=option.default,
                       choices=option.choices, type=_typed(option),
                       help=f"{option.help} (changing it in an --out needs --rejudge) "
                            "[default: %(default)s]")
    # Each run keeps its own cache (llm_cache.jsonl in its directory): no --cache here.
    add_model_access_options(p.add_argument_group("model access"))
    add_budget_options(p, suite=True, episode="item", what="a dialogue and its judges")
    add_parallel_options(p)
    # `remake`: how `sandbox rerun ITEM` makes an item of this command again (rerun_item)
    p.set_defaults(**{"func": lambda args: run_main(bench, args), "resumable": True,
                      "remake": lambda args, run: remade(bench, args), **defaults})
    return p


def add_board_command(sub, bench) -> None:
    """`sandbox NAME-board`, its options made from the declaration."""
    b = sub.add_parser(
        f"{bench.name}-board",  # listed under `sandbox board` (board.py), not each apart
        description="Score every configuration from its saved dialogues and judgments (no "
                    "model is called) and print the table (means with a bootstrap 95% CI), "
                    "then the calls and tokens each role spent, judges included. --json "
                    "writes the numbers, --plot a PNG of each configuration's score with its "
                    "interval.",
        epilog="example: " + (bench.board.example or
                              f"sandbox {bench.name}-board runs/a runs/b --plot board.png"))
    b.add_argument("dirs", nargs="+", type=InputDir(), metavar="DIR",
                   help=f"directories written by `sandbox {bench.name} --out`")
    b.add_argument("--judge", action="append", dest="judges", type=Model(), metavar="MODEL",
                   help="use only these judges' scores [default: every judge found]")
    b.add_argument("--seed", type=SEED, default=0,
                   help="bootstrap seed [default: %(default)s]")
    b.add_argument("--resamples", type=RESAMPLES, default=1000,
                   help="bootstrap resamples [default: %(default)s]")
    for name, spec in bench.board.options.items():
        b.add_argument(f"--{name.replace('_', '-')}", dest=name, **spec)
    add_board_outputs(b, "draw each configuration's score and interval into this PNG")
    b.set_defaults(func=lambda args: board_main(bench, args))


def _sampling(args, role: str):
    from tasks.kit import Sampling

    try:
        return Sampling(temperature=getattr(args, f"{role}_temperature"),
                        top_p=getattr(args, f"{role}_top_p"),
                        max_tokens=getattr(args, f"{role}_max_tokens"))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(f"--{role}-{str(first['loc'][0]).replace('_', '-')}: "
                        f"{first['msg']}") from exc


def judge_models(args) -> list[str]:
    """--judge, each model once [default: the embedded model]; a UserError otherwise."""
    judges = args.judges or [EMBEDDED]
    if len(set(judges)) != len(judges):
        raise UserError("the same --judge is given twice; each judge model counts once")
    return judges


def model_pool(args, models, roles: dict[str, str] | None = None):
    """The models' pool for the model access options, every model's backend built first: a bad
    model string or endpoint fails before any work, naming the roles that model plays
    (`roles`: role -> model; the judges are the models of `models` none of them names)."""
    from sandbox.app.suites.benchmark import ModelPool

    pool = ModelPool(access_settings(args), models_file(args))
    for model in dict.fromkeys(models):
        try:
            pool.backend(model)
        except LLMConfigError as exc:
            plays = [role for role, m in (roles or {}).items() if m == model] or ["judge"]
            raise UserError(f"the {' and '.join(plays)} model ({model}): {exc}") from exc
    return pool


def run_limits(args, parallel):
    """run_benchmark's Limits from the budget options (a UserError when the run's caps are
    asked of Ray workers, where each process would spend its own)."""
    from sandbox.app.suites.benchmark import Limits

    run_budget, _ = budgets(args)
    if run_budget.capped and parallel.executor == "ray":
        raise UserError("--max-calls and --max-tokens cap a run within one process; with "
                        "--executor ray use --episode-max-calls or --episode-max-tokens")
    return Limits(run_budget if run_budget.capped else None, args.episode_max_calls,
                  args.episode_max_tokens)


def made_by(args) -> list[str] | None:
    """The command line of a benchmark run, as each item's header records it (None when the
    run was started from code)."""
    argv = getattr(args, "argv", None)
    return ["sandbox", *argv] if argv else None


def run_with_progress(bench, out, items, pool, config, *, console, description: str,
                      total: int, transient: bool = False, **run):
    """`run_benchmark` with a progress bar (items done, running and failed, calls per second,
    time left): the report, or None when a cache-only replay missed an answer (said, with where
    the runs so far are). Another configuration in `out`, or an executor that cannot run, is a
    UserError."""
    from sandbox.app.suites.benchmark import BenchmarkMismatch, run_benchmark
    from sandbox.app.suites.parallel import ExecutorError

    with suite_progress(console, total, description, transient=transient) as monitor:
        try:
            return run_benchmark(bench, out, items, pool, config, monitor=monitor, **run)
        except (BenchmarkMismatch, ExecutorError) as exc:
            raise UserError(str(exc)) from exc
        except CacheMiss as exc:
            console.print(f"[red]stopped:[/] {exc}\nwhat ran so far is in {out}")
            return None


def report_line(noun: str, report) -> str:
    """What one benchmark run did, in one line (the caller adds its wall time)."""
    judged = report.judged
    unavailable = f", {judged.unavailable} unavailable" if judged.unavailable else ""
    return (f"{noun} run {report.runs_made}, skipped {report.runs_skipped}; judgments made "
            f"{judged.made} ({judged.fallbacks} fell back{unavailable}), "
            f"skipped {judged.skipped}")


def print_stopped(report, noun: str) -> tuple[int, int]:
    """The items a budget stopped or no model answered, one line each, on stderr (where a
    script looks for why a command failed; stdout keeps the board); (unavailable ones,
    budget-stopped ones), judgments that reached no model counted with the first."""
    from sandbox.terminal import say_stopped

    unavailable = budget = 0
    for item, why in report.stopped:
        kind, _, reason = why.partition(": ")
        say_stopped(f"{kind}: {item}: {reason}")
        unavailable += kind == "unavailable"
        budget += kind == "budget"
    unavailable += report.judged.unavailable
    if unavailable:
        say_stopped(f"{unavailable} {noun} or judgment(s) reached no model (the endpoint "
                    "refused every call or could not be reached): they are not finished; "
                    "fix the endpoint or key and run the same command again")
    if budget:
        say_stopped(f"{budget} {noun} stopped by a budget; run the same command with a higher "
                    "cap to go on (the answers so far come from the cache)")
    return unavailable, budget


def add_board_outputs(p: argparse.ArgumentParser, plot_help: str) -> None:
    """--markdown, --json and --plot: where `write_board` writes a board (every board command
    has them; `sandbox sweep` writes each benchmark's board with the first two)."""
    p.add_argument("--markdown", type=output_file, help="also write the board to this file")
    p.add_argument("--json", type=output_file, help="write the board as JSON to this file")
    p.add_argument("--plot", type=PlotFile(), metavar="PNG", help=plot_help)


def write_board(report, args) -> None:
    """Print a board report, and write it where --markdown, --json and --plot say."""

    from evaluation.kit import plot_png
    from sandbox.storage import write_atomic

    from .common import claim_outputs

    claim_outputs(args, args.markdown, args.json, args.plot, what="a board")
    for path in (args.markdown, args.json, args.plot):
        if path is not None:
            hold_output(path, file=True)
    terminal.print_markdown(report.markdown)
    if args.markdown:
        write_atomic(args.markdown, report.markdown)
    if args.json:
        write_atomic(args.json, json.dumps(report.data, indent=2) + "\n")
    if args.plot:
        if not any(p.score is not None for p in report.plot.points):
            # An empty frame would pass for a plot of results; the board above says why.
            raise UserError(f"--plot {args.plot}: nothing scored to draw (no configuration "
                            "has a score); no PNG written")
        terminal.console().print(f"[dim]plot: {plot_png(report.plot, args.plot)}[/]")


def keys_text(keys: list[str]) -> str:
    """Every key, those that differ only by a list index written once with their indices
    (`en.characters.[0-3,5].tags_v1`): complete, and one line however many cards."""
    groups: dict[str, list[int]] = {}
    for key in keys:
        parts = key.split(".")
        numbered = [i for i, part in enumerate(parts) if part.isdigit()]
        if not numbered:
            groups.setdefault(key, [])
            continue
        at = numbered[-1]
        pattern = ".".join([*parts[:at], "{}", *parts[at + 1:]])
        groups.setdefault(pattern, []).append(int(parts[at]))
    shown = []
    for pattern, indices in groups.items():
        if not indices:
            shown.append(pattern)
        elif len(indices) == 1:
            shown.append(pattern.format(indices[0]))
        else:
            shown.append(pattern.format(f"[{_ranges(sorted(set(indices)))}]"))
    return ", ".join(shown)


def _ranges(numbers: list[int]) -> str:
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def dry_run(bench, args) -> int:
    """`sandbox NAME --dry-run`: the items the run would make (finished ones skipped) and what
    they would spend per role and model, at the rate of the directory's finished items (the
    calls of each role, judges included, per item); nothing is written."""
    from sandbox.app.suites.benchmark import (
        BenchmarkMismatch,
        ModelPool,
        open_manifest,
        wanted_manifest,
    )
    from tasks.kit import IdCollision

    options = {name: getattr(args, name) for name in bench.options}
    try:
        items = bench.items.load(args.items, options)
    except (FileFormatError, IdCollision) as exc:
        raise UserError(str(exc)) from exc
    try:  # what the run refuses (another configuration in --out), the dry run refuses
        pool = ModelPool(access_settings(args), models_file(args))  # names only: nothing built
        open_manifest(bench, args.out, wanted_manifest(
            bench, items, configuration(bench, args, judge_models(args)), pool),
            args.rejudge, write=False)
    except BenchmarkMismatch as exc:
        raise UserError(str(exc)) from exc
    selected = [item_id for item_id, _ in items.select(args.every)]
    models = {role.name: getattr(args, role.name) for role in bench.roles}
    _done, estimate = foretell(bench, args, selected, options, models, judge_models(args))
    terminal.print_markdown(estimate.markdown(bench.items.noun.rstrip("s")))
    return 0


def kit_estimate(bench, args, units: int, done: list[Path], options: dict,
                 models: dict[str, str], judges: list[str]):
    """What `units` items will spend per role and model (a row per judge), each model named
    "alias (model id)" for an alias: at the rate of the directory's finished items `done`
    (a judge at its own rate, a judge new here at the mean judge's), else the rates kept with
    the benchmark for these options (measured on its scripted models with one judge: the
    calls this code makes; every model is estimated alike from them, said); neither: said, no
    rows."""
    from sandbox.app.suites.estimate import (
        JUDGE,
        Estimate,
        Line,
        judge_rates,
        kept_rates,
        measured_rates,
        named,
        per_judge,
    )

    estimate = Estimate(units, len(done))
    rates, source = measured_rates(bench, done), f"{len(done)} finished {bench.noun} here"
    own = judge_rates(done)
    kept_on = ""
    if not done:
        rates, kept_on = kept_rates(bench, options)
        source = f"{bench.rates.name} (bench/kit_rates.py)" if rates else ""
        if not rates:
            estimate.missing.append(f"every role (no finished {bench.noun} in {args.out} yet, "
                                    f"and no rate kept for these options: run a few with "
                                    "--every K, then --dry-run again)")
            return estimate
        estimate.notes.append(f"The kept rates were measured on {kept_on or 'scripted models'}"
                              ": every model is estimated alike from them (its own answers "
                              "change its calls and tokens); this directory's finished "
                              f"{bench.noun} replace them.")
    prices = models_file(args)

    def line(role: str, model: str, rate, where: str) -> Line:
        endpoint = prices.get(model)
        price = endpoint.prices if endpoint is not None else None
        return Line(role, model, rate.per_hour(units), where, price, named(model, prices))

    order = [r.name for r in bench.roles]
    for role, rate in sorted(rates.items(), key=lambda r: (
            order.index(r[0]) if r[0] in order else len(order), r[0])):
        if role != JUDGE:
            estimate.lines.append(line(role, models.get(role, role), rate, source))
    if JUDGE in rates:  # one row per judge: each judge's calls are its own model's
        mean = per_judge(rates[JUDGE], len(own) if done else 1)
        for judge in dict.fromkeys(judges):
            mine = own.get(named(judge, prices))
            estimate.lines.append(line(JUDGE, judge, mine or mean, source if mine or not done
                                       else f"{source}, its judges' mean"))
    jobs = max(1, parallel_options(args).jobs)
    estimate.wall_at_latency(prices, jobs, lambda line: bool(done),
                             f"the calls' {'measured' if done else 'kept'} latency, {jobs} "
                             f"{bench.noun} at once", again="run a few")
    return estimate


def foretell(bench, args, ids: list[str], options: dict, models: dict[str, str],
             judges: list[str]):
    """(the items of `ids` already finished in args.out, what the others will spend): what a
    dry run prints, and what a run takes before it starts to close with beside what the items
    it ran spent (`close_estimate`)."""
    from sandbox.app.suites.benchmark import RUNS
    from sandbox.app.suites.resume import finished

    done = [args.out / RUNS / i for i in ids if finished(args.out / RUNS / i)]
    return done, kit_estimate(bench, args, len(ids) - len(done), done, options, models, judges)


def close_estimate(console, bench, args, ids: list[str], done: list[Path], foretold, report,
                   models: dict[str, str], judges: list[str]) -> None:
    """After a run: the estimate `foretell` made before it, for the items it ran, beside
    what they spent per role and model (calls.jsonl), and its wall time beside the run's."""
    from sandbox.app.suites.benchmark import RUNS
    from sandbox.app.suites.estimate import against

    ran = [args.out / RUNS / i for i in ids
           if args.out / RUNS / i not in done and (args.out / RUNS / i).is_dir()]
    stopped = {i for i, _ in [*report.failures, *report.stopped]}
    if ran and not foretold.lines:
        console.print(f"Estimate vs actual: there was no estimate before this run (no "
                      f"finished {bench.noun} here and no rate kept for these options); the "
                      f"next --dry-run estimates from the {len(ran)} it ran.", highlight=False)
    elif ran:
        terminal.print_markdown(against(
            foretold.scaled(len(ran)), {"": kit_actual(bench, ran, models, judges, args)},
            bench.items.noun.rstrip("s"), stopped=sum(p.name in stopped for p in ran),
            wall_s=report.wall_time_s))


def kit_actual(bench, ran: list[Path], models: dict[str, str], judges: list[str], args):
    """What the items that ran spent, from their calls.jsonl, per (role, model as typed), as
    kit_estimate's lines are keyed: a judge's calls under the judge whose name they were made
    under."""
    from sandbox.app.suites.estimate import JUDGE, JUDGE_AGENT, Rate, named
    from sandbox.log import read_calls

    prices = models_file(args)
    judge_of = {named(judge, prices): judge for judge in judges}
    by_tag = bench.roles_by_tag()
    out: dict[tuple[str, str], Rate] = {}
    for run_dir in ran:
        for record in read_calls(run_dir)[0]:
            role = record.role or by_tag.get(record.tag, record.tag)
            if role == JUDGE:
                name = (record.agent or "").removeprefix(JUDGE_AGENT)
                model = judge_of.get(name, name)
            else:
                model = models.get(role, role)
            key = (role, model)
            out[key] = out.get(key, Rate()).plus(Rate(
                0, 1, record.prompt_tokens, record.completion_tokens, record.latency_s))
    return out


def configuration(bench, args, judges: list[str]):
    """What plays and judges a run of `bench`, from the command's options."""
    from sandbox.app.suites.benchmark import Configuration

    return Configuration(
        {role.name: getattr(args, role.name) for role in bench.roles},
        {role.name: _sampling(args, role.name) for role in bench.roles}, judges,
        judge_sampling=_sampling(args, "judge"), label=args.label, every=args.every,
        seed=args.seed, options={name: getattr(args, name) for name in bench.options},
        judge_options={name: getattr(args, name) for name in bench.judging.options})


def run_main(bench, args) -> int:
    from sandbox.app.suites.benchmark import board_report

    if getattr(args, "dry_run", False):
        return dry_run(bench, args)
    console = terminal.console()
    judges = judge_models(args)
    parallel = parallel_options(args)
    hold_output(args.out)  # refused at once while another command writes into it
    use_prompts(args)
    items = _items(bench, args)
    for note in items.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    if items.ignored_keys:
        console.print(f"[dim]ignored keys this benchmark does not use: "
                      f"{keys_text(items.ignored_keys)}[/]", highlight=False, soft_wrap=True)
    models = {role.name: getattr(args, role.name) for role in bench.roles}
    pool = model_pool(args, [*models.values(), *judges], models)
    selected = items.select(args.every)
    # A role the command line did not name plays on the default model: said, never silent.
    given = {word.split("=")[0] for word in getattr(args, "argv", None) or []}
    default = (lambda flag: " (default)" if given and flag not in given else "")  # noqa: E731
    cast = ", ".join(f"{role} {model}{default('--' + role)}" for role, model in models.items())
    console.print(f"[dim]{bench.name}: {len(selected)} of {len(items)} {bench.items.noun}, "
                  f"{cast}, judges {', '.join(judges)}{default('--judge')}, into {args.out}[/]")
    config = configuration(bench, args, judges)
    ids = [i for i, _ in selected]
    options = {name: getattr(args, name) for name in bench.options}
    done, foretold = foretell(bench, args, ids, options, models, judges)
    report = run_with_progress(bench, args.out, items, pool, config, console=console,
                               description=bench.items.noun, total=len(selected),
                               rejudge=args.rejudge, parallel=parallel,
                               limits=run_limits(args, parallel), command=made_by(args))
    if report is None:
        return 1
    console.print(f"{report_line(bench.noun, report)}; wall time {report.wall_time_s:.1f} s")
    terminal.print_markdown(board_report(bench, [args.out]).markdown)
    close_estimate(console, bench, args, ids, done, foretold, report, models, judges)
    for item, error in report.failures:
        terminal.say_stopped(f"failed: {item}: {error}")
    if report.failures:
        terminal.say_stopped(f"{len(report.failures)} of {report.items} {bench.items.noun} "
                             "failed: out of the means, named in the board's accounting; run "
                             "the same command again to retry them")
    if any(print_stopped(report, bench.noun)) or report.failures:
        return 1
    console.print(f"compare configurations: sandbox {bench.name}-board {args.out} OTHER_DIR ...")
    return 0


def rerun_item(run: Path, recorded: dict, made_by: list[str], words: list[str], out: Path,
               cache_only: bool) -> int:
    """`sandbox rerun ITEM`: one item of a benchmark run made again into OUT (ITEM itself, or
    a new directory holding ITEM's cache) by the benchmark command its header recorded
    (`made_by`, recorded again in OUT's header; run as `words`: its paths absolute and its
    models file where the run found it, so from any directory), its dialogue and its judges,
    each answer from the cache (--cache-only: only from it, so no key is needed)."""
    from sandbox.app.rerunning import parsed, without_decided
    from sandbox.app.suites.benchmark import Limits, remake_item

    # Where it writes is the rerun's (OUT; the item's benchmark directory stands for the
    # recorded --out, which may not exist here), and so is how it uses the cache.
    argv = [*without_decided(words[1:]), "--out", str(run.parent.parent),
            *(["--cache-only"] if cache_only else [])]
    console = terminal.console()
    args = parsed(argv)
    remake = getattr(args, "remake", None)
    if remake is None:
        raise UserError(f"{run}: made by `{' '.join(made_by)}`, whose items `sandbox rerun` "
                        f"does not make: remove {run / 'result.json'} and run that command "
                        "again to remake it from its cache")
    bench, items, pool, config = remake(args, run)
    item_id = recorded.get(bench.items.header_key)
    if not isinstance(item_id, str):
        raise UserError(f"{run}: its header names no item (config.{bench.items.header_key}); "
                        f"run `{' '.join(made_by)}` again instead")
    found = dict(zip(items.ids, items.items, strict=True))
    if item_id not in found:
        raise UserError(f"{run}: its item {item_id!r} is not in the {bench.items.noun} the "
                        f"recorded command reads ({items.source or 'the built-in set'}) now")
    console.print(f"[dim]{made_by[1]} item {item_id} of `{' '.join(made_by)}`, into {out}"
                  f"{' (cache only)' if cache_only else ''}[/]", highlight=False,
                  soft_wrap=True)
    try:
        report = remake_item(bench, run, out, (item_id, found[item_id]), pool, config,
                             limits=Limits(None, args.episode_max_calls,
                                           args.episode_max_tokens),
                             command=made_by)
    except CacheMiss as exc:
        terminal.say_stopped(f"stopped: {exc}")
        return 1
    console.print(report_line(bench.noun, report))
    return 1 if any(print_stopped(report, bench.noun)) else 0


def remade(bench, args):
    """What `sandbox rerun ITEM` remakes an item of `bench` with, from its benchmark command's
    arguments: (the benchmark, its items, the models' pool, the configuration)."""
    use_prompts(args)
    items = _items(bench, args)
    judges = judge_models(args)
    models = {role.name: getattr(args, role.name) for role in bench.roles}
    pool = model_pool(args, [*models.values(), *judges], models)
    return bench, items, pool, configuration(bench, args, judges)


def _items(bench, args):
    """The benchmark's items as its --items and options select them (a UserError when the
    file does not read)."""
    from tasks.kit import ItemIdError

    try:
        return bench.items.load(args.items, {name: getattr(args, name) for name in bench.options})
    except (FileFormatError, ItemIdError) as exc:
        raise UserError(str(exc)) from exc


def board_main(bench, args) -> int:
    from evaluation.kit import BoardError
    from sandbox.app.suites.benchmark import board_report

    extra = {name: getattr(args, name) for name in bench.board.options}
    try:
        report = board_report(bench, args.dirs, judges=args.judges, seed=args.seed,
                       resamples=args.resamples, **extra)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    write_board(report, args)
    return 0
