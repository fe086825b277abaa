"""Refresh the rates `sandbox stss --dry-run` estimates from (tasks/stss/plugin/rates.json):
calls, prompt and answer tokens and latency per simulated resident-hour, per built-in template,
performer architecture and class of call, measured on this code by running small suites.

    .venv/bin/python bench/stss_rates.py                  # scripted town, every built-in template
    T=public_spring_tasting,appointment_portrait,inviting_pool_game,online_book_club,help_library_books
    SANDBOX_LLM_THREADS=1 nice -n 10 sandbox stss --model local/smollm2-135m --embedder hashing \\
        --templates $T --seeds 0 --arch ga --arch ga_tdp --background 2 --same-day --start 15:00 \\
        --out runs/smol
    .venv/bin/python bench/stss_rates.py --real runs/smol  # a real model's factors over the double
    .venv/bin/python bench/stss_rates.py --check runs/suite  # estimate vs actual of a suite

The scripted double makes the calls this code makes (the same agents, prompts and schedule),
so its calls and prompt tokens per hour are this code's, per template (an event that gathers
the town makes more talk than a portrait appointment); its answers are short. `--real SUITE`
runs SUITE's episodes again on the double (the same templates, seeds, architectures, window
and residents, read from its suite.json) and keeps, per architecture and class of call, what
the real model spent over the double: calls, tokens in and out. A real model is estimated from
the double's per-template rates times those factors. `--check SUITE` re-estimates a finished
suite's episodes from the kept rates as a dry run with no history would, and prints estimate /
actual per role and per class of call (the issue asks within 25% on calls).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.stss.scoring import task_of  # noqa: E402
from sandbox.app.suites.estimate import Rate, Rates, measure  # noqa: E402
from sandbox.log import load_run  # noqa: E402
from tasks.routing import BACKGROUND  # noqa: E402
from tasks.stss import TEMPLATES_DIR, EpisodeWindow  # noqa: E402
from tasks.stss.plugin.commands import episode_size  # noqa: E402
from tasks.stss.plugin.cost import (  # noqa: E402
    FACTOR_FIELDS,
    START,
    answered_by_double,
    classify,
    read_kept,
    role_of,
)

RATES_FILE = ROOT / "tasks/stss/plugin/rates.json"
DOUBLE = "scripted/town"


def suite_runs(suite: Path) -> list[tuple[Path, object, str]]:
    """(run directory, its units, architecture directory) of every finished episode of a
    suite, counted as `sandbox stss --dry-run` counts them (episode_size: the planned window
    and the residents), from the task and window its header records."""
    out = []
    for header in sorted(suite.glob("*/*/s*/header.json")):
        run_dir = header.parent
        if not (run_dir / "result.json").is_file():
            continue
        run = load_run(run_dir)
        window = EpisodeWindow(**run.header.config["window"])
        out.append((run_dir, episode_size(task_of(run), window).units, run_dir.parent.name))
    return out


def template_of(run_dir: Path) -> str:
    return run_dir.parent.parent.name  # OUT/TEMPLATE/ARCH/sSEED


def run_suite(out: Path, model: str, templates: str, seeds: str, archs: list[str],
              extra: list[str]) -> None:
    command = [sys.executable, "-m", "sandbox.app.cli", "stss", "--model", model,
               "--embedder", "hashing", "--templates", templates, "--seeds", seeds,
               *(w for a in archs for w in ("--arch", a)), "--out", str(out), *extra]
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def per_template(runs) -> dict[str, Rates]:
    by: dict[str, list] = {}
    for run in runs:
        by.setdefault(template_of(run[0]), []).append(run)
    return {name: measure(group, classify) for name, group in sorted(by.items())}


def rate_data(rate: Rate) -> list:
    """A rate as the file keeps it: its columns (estimate.RATE_FIELDS) in order, on one line."""
    return [rate.hours, rate.calls, rate.prompt_tokens, rate.completion_tokens,
            round(rate.latency_s, 3)]


def write(section: str, data: dict) -> None:
    """Write one section ("scripted" or "real") of the rates file, the other kept."""
    kept = json.loads(RATES_FILE.read_text(encoding="utf-8")) if RATES_FILE.is_file() else {}
    kept = kept if isinstance(kept, dict) and "scripted" in kept else {}
    kept[section] = data
    RATES_FILE.write_text(dumps(kept) + "\n", encoding="utf-8")
    print(f"wrote {section} rates to {RATES_FILE}")


def dumps(value, indent: str = "") -> str:
    """JSON with a mapping of plain values (a factor) or a list (a rate) on one line: a file of
    30 templates' rates a person can read."""
    if not isinstance(value, dict) or not any(isinstance(v, dict | list) for v in value.values()):
        return json.dumps(value)
    inner = indent + " "
    items = [f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


def measure_double(templates: str, seeds: str, extra: list[str], done: Path | None) -> int:
    """The double's rates per template and their mix, from a suite run now (or `done`, one
    of the double's finished suites)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = done or Path(tmp) / "suite"
        if done is None:
            run_suite(out, DOUBLE, templates, seeds, ["ga", "ga_tdp"], extra)
        options, _, seeds, _, _ = suite_options(out)
        if not answered_by_double(model_of(options, "town")):
            raise SystemExit(f"{out}: ran on {model_of(options, 'town')}, not the scripted "
                             "double: measure a real model with --real")
        runs = suite_runs(out)
        mix, own = measure(runs, classify), per_template(runs)
    kept = json.loads(RATES_FILE.read_text(encoding="utf-8")) if RATES_FILE.is_file() else {}
    scripted = kept.get("scripted") if isinstance(kept, dict) else None
    windows = scripted.get("windows", {}) if isinstance(scripted, dict) else {}
    windows[options["window"].get("start") or "06:00"] = {
        "about": f"{windows_said(options)}, seed(s) {seeds}, {len(runs)} episodes, "
                 f"{date.today()}",
        "mix": {g: {k: rate_data(r) for k, r in sorted(c.items())} for g, c in mix.items()},
        "templates": {name: {g: {k: rate_data(r) for k, r in sorted(c.items())}
                             for g, c in rates.items()} for name, rates in own.items()}}
    write("scripted", {
        "model": DOUBLE,
        "columns": "per window start, template, architecture and class of call: [the units "
                   "it is counted over (simulated resident-hours; residents for a first "
                   "hour's), calls, tokens in, tokens out, seconds of latency]",
        "windows": dict(sorted(windows.items()))})
    return 0


def suite_options(suite: Path) -> tuple[dict, str, str, list[str], list[str]]:
    """A finished suite's suite.json, and as `sandbox stss` takes them: its templates, seeds,
    architectures and the options that shape its windows."""
    options = json.loads((suite / "suite.json").read_text(encoding="utf-8"))
    keys = [e.split("/") for e in options["episodes"]]
    templates = ",".join(dict.fromkeys(t for t, _, _ in keys))
    seeds = ",".join(dict.fromkeys(s.removeprefix("s") for _, _, s in keys))
    window = options["window"]
    extra = ["--same-day"] if window.get("same_day") else []
    extra += [w for k in ("start", "until") if window.get(k) for w in (f"--{k}", window[k])]
    if options.get("background") is not None:
        extra += ["--background", str(options["background"])]
    return options, templates, seeds, list(options["architectures"].values()), extra


def windows_said(options: dict) -> str:
    """A suite's windows and residents as a person says them (its suite.json's)."""
    window, background = options["window"], options.get("background")
    until = f" until {window['until']}" if window.get("until") else ""
    residents = "all background residents" if background is None \
        else f"{background} background resident(s)"
    return (f"{'same-day' if window.get('same_day') else 'full'} windows from "
            f"{window.get('start') or '06:00'}{until}, {residents}")


def measure_real(suite: Path) -> int:
    options, templates, seeds, archs, extra = suite_options(suite)
    if answered_by_double(model_of(options, "town")) or options.get("background_model"):
        raise SystemExit(f"{suite}: --real measures a suite run wholly on one real model (no "
                         "--background-model), not on the scripted double")
    real_runs = suite_runs(suite)
    real = measure(real_runs, classify)
    finished = {run[0].relative_to(suite) for run in real_runs}
    with tempfile.TemporaryDirectory() as tmp:
        twin = Path(tmp) / "suite"
        run_suite(twin, DOUBLE, templates, seeds, archs, extra)
        # the same episodes as the real model's that finished, no others
        double = measure([r for r in suite_runs(twin) if r[0].relative_to(twin) in finished],
                         classify)
    factors: dict = {}
    for group, classes in real.items():
        for kind, rate in sorted(classes.items()):
            base = double.get(group, {}).get(kind)
            if base is None or not all(getattr(base, f) for f in FACTOR_FIELDS):
                print(f"{group} {kind}: the double made no such calls; no factor")
                continue
            factors.setdefault(group, {})[kind] = {
                f: round(getattr(rate, f) / getattr(base, f), 3) for f in FACTOR_FIELDS}
            print(f"{group} {kind}: " + ", ".join(
                f"{f} {getattr(rate, f)} / {getattr(base, f)}" for f in FACTOR_FIELDS))
    model = options.get("named", {}).get("model", options["model"])
    write("real", {"model": model,
                   "about": f"{windows_said(options)}, {templates.replace(',', ', ')}, "
                            f"seed(s) {seeds}, {len(real_runs)} episodes, {date.today()}",
                   "factors": factors})
    return 0


def model_of(options: dict, role: str) -> str:
    """The model id answering a role in a suite, from its suite.json's names ("alias (model
    id)" for an alias)."""
    named = options.get("named", {})
    name = named.get("background_model" if role == BACKGROUND else "model", options["model"])
    found = re.fullmatch(r".* \((.+)\)", name)
    return found.group(1) if found else name


def check(suite: Path) -> int:
    """Estimate / actual for a finished suite's episodes, as a dry run with no history would
    estimate them from the kept rates: per role (as the suite's options give roles) and per
    class of call, calls and tokens in and out."""
    options, *_ = suite_options(suite)
    start = options["window"].get("start") or "06:00"
    args = SimpleNamespace(model=options["model"],
                           background_model=options.get("background_model"),
                           performer_routing=options.get("performer_routing"))
    kept = read_kept(RATES_FILE)
    guess: dict[str, Rate] = {}
    real: dict[str, Rate] = {}
    used = {"own": 0, "mix": 0, "scaled": 0}  # episodes
    for run_dir, units, group in suite_runs(suite):
        template = TEMPLATES_DIR / f"{template_of(run_dir)}.yaml"
        rates, own = kept.rates(template, group, start)
        used["own" if own else "mix"] += 1
        spent = measure([(run_dir, units, group)], classify).get(group, {})
        real_model = False
        for kind in {*(rates or {}), *spent}:
            rate = (rates or {}).get(kind)
            scripted = answered_by_double(model_of(options, role_of(kind, args)))
            estimate = kept.spend(rate.per_hour(units(kind)), group, kind, scripted) \
                if rate is not None else None
            if estimate is None and rate is not None:  # no factor: the double's, as the dry run
                estimate = rate.per_hour(units(kind))
            real_model = real_model or not scripted
            for key in (f"{group} {kind}", f"role {role_of(kind, args)}", "all"):
                guess[key] = guess.get(key, Rate()).plus(estimate or Rate())
                real[key] = real.get(key, Rate()).plus(spent.get(kind, Rate()))
        used["scaled"] += real_model
    print(f"{suite}: {used['own']} episode(s) from their template's own rates, {used['mix']} "
          f"from the mix; kept rates of {kept.model} ({kept.window(start)[1].about})"
          + (f", scaled by {kept.real_model}'s factors ({kept.real_about})"
             if used["scaled"] else ""))
    print("| what | calls est. | calls | ratio | tokens in est. | tokens in | ratio | "
          "tokens out est. | tokens out | ratio |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    order = sorted(guess, key=lambda k: (k == "all", not k.startswith("role"),
                                         k.removesuffix(START), k))
    for key in order:
        g, a = guess[key], real[key]
        cells = [f"{getattr(g, f)} | {getattr(a, f)} | "
                 f"{getattr(g, f) / getattr(a, f):.2f}" if getattr(a, f) else
                 f"{getattr(g, f)} | 0 | -" for f in FACTOR_FIELDS]
        print(f"| {key} | {' | '.join(cells)} |")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--templates", default="*", help="the double's templates (default: all)")
    p.add_argument("--seeds", default="0")
    p.add_argument("--real", type=Path, help="a finished suite on a real model: its factors")
    p.add_argument("--check", type=Path, help="a finished suite: estimate vs actual")
    p.add_argument("--from", dest="done", type=Path,
                   help="measure the double's rates from this finished suite of scripted/town")
    p.add_argument("extra", nargs="*", help="more `sandbox stss` options for the double")
    args = p.parse_args()
    if args.check:
        return check(args.check)
    if args.real:
        return measure_real(args.real)
    return measure_double(args.templates, args.seeds, args.extra, args.done)


if __name__ == "__main__":
    raise SystemExit(main())
