"""`sandbox list benchmarks`: what is installed, and the commands each adds."""

from __future__ import annotations

from sandbox import terminal

WHAT = ("benchmarks",)


def register(sub) -> None:
    p = sub.add_parser(
        "list", help="list what is installed (the benchmarks and their commands)",
        description="List the benchmark plug-ins installed (entry-point group "
                    "sandbox.benchmarks): each one's name, what it is, the package it comes "
                    "from and the commands it adds. A plug-in that failed to load is listed "
                    "with its error, and the command exits 1.",
        epilog="example: sandbox list benchmarks")
    p.add_argument("what", choices=WHAT, help="what to list")
    p.set_defaults(func=main)


def main(args) -> int:
    from sandbox.app.plugins import GROUP, installed

    console = terminal.console()
    found = installed()
    if not found:
        console.print(f"no benchmark is installed (no entry point in group {GROUP})")
        return 0
    rows = ["| Benchmark | What it is | From | Commands |", "|---|---|---|---|"]
    for entry in found:
        if entry.plugin is None:
            rows.append(f"| {entry.entry} | **did not load**: {entry.error} | {entry.dist} | |")
            continue
        commands = ", ".join(f"sandbox {c}" for c in args.plugin_commands.get(entry.entry, []))
        rows.append(f"| {entry.entry} | {entry.plugin.title} | {entry.dist} | {commands} |")
    print("\n".join(rows))
    broken = [entry for entry in found if entry.plugin is None]
    if broken:
        console.print(f"[red]{len(broken)} plug-in(s) did not load[/]; their commands are "
                      "missing", highlight=False)
    return 1 if broken else 0
