"""`compare(a, b)`: two run sets of one benchmark, item by item. The paired difference B - A
over the items both have (overall and per type), its interval, the sign-flip p, wins / ties /
losses, the matched items needed at 80% power, and every item only one side has, named with
why the other has none. Markdown, JSON-able data and a Plot of the per-item differences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluation.kit import (
    MIN_UNITS,
    MIN_UNITS_WHY,
    RESAMPLES,
    BoardError,
    BoardReport,
    Column,
    Plot,
    PlotPoint,
    markdown_table,
)

from .sides import Side, merge_sides, read_side, unlike_conditions
from .stats import ALPHA, POWER, Pair, paired_summary, seeds_needed

PLOTTED_ITEMS = 40  # beyond this, the plot draws each sampled unit's mean, not each item
ALL = "All"


def compare_dirs(a: str, b: str, *, rules: str = "ours", metric: str | None = None,
                 judges: Sequence[str] | None = None, seed: int = 0,
                 resamples: int = RESAMPLES, effect: float | None = None) -> BoardReport:
    """Read `a` and `b` (each `DIR` or `DIR:ARCH`) and compare them."""
    return compare(read_side(a, rules=rules, metric=metric, judges=judges),
                   read_side(b, rules=rules, metric=metric, judges=judges),
                   seed=seed, resamples=resamples, effect=effect)


def compare_sets(a: Sequence[str], b: Sequence[str], *, rules: str = "ours",
                 metric: str | None = None, judges: Sequence[str] | None = None,
                 seed: int = 0, resamples: int = RESAMPLES,
                 effect: float | None = None) -> BoardReport:
    """Compare two configurations each run into one or more directories (a sweep's cells of
    one configuration, a seed each): every seed's items on both sides, one comparison."""
    def side(specs: Sequence[str]) -> Side:
        return merge_sides([read_side(spec, rules=rules, metric=metric, judges=judges)
                            for spec in specs])

    return compare(side(a), side(b), seed=seed, resamples=resamples, effect=effect)


def pairs_of(a: Side, b: Side) -> list[Pair]:
    return [Pair(k, a.items[k].value, b.items[k].value, a.items[k].stratum or b.items[k].stratum,
                 a.items[k].cluster or k) for k in sorted(set(a.items) & set(b.items))]


def one_side_only(a: Side, b: Side) -> dict[str, list[dict[str, str]]]:
    """Items with a value on one side only, each with why the other side has none."""
    def missing(have: Side, lack: Side, side: str) -> list[dict[str, str]]:
        # by its letter: both sides are often called alike ("scripted/town ga")
        return [{"item": k, "why": lack.absent.get(k, f"not in {side}'s set ({lack.label}, "
                                                      f"{lack.path})")}
                for k in sorted(set(have.items) - set(lack.items))]

    neither = sorted((set(a.absent) | set(b.absent)) - set(a.items) - set(b.items))
    return {"a_only": missing(a, b, "B"), "b_only": missing(b, a, "A"),
            "neither": [{"item": k, "why": f"A: {a.absent.get(k, 'not in its set')}; "
                                          f"B: {b.absent.get(k, 'not in its set')}"}
                        for k in neither]}


def compare(a: Side, b: Side, *, seed: int = 0, resamples: int = RESAMPLES,
            effect: float | None = None) -> BoardReport:
    if a.benchmark != b.benchmark:
        raise BoardError(f"{a.path} is {a.benchmark}, {b.path} is {b.benchmark}: compare two "
                         "run sets of one benchmark")
    if a.measure != b.measure:
        raise BoardError(f"{a.path} measures {a.measure}, {b.path} {b.measure}")
    if a.path.resolve() == b.path.resolve() and a.label == b.label:
        raise BoardError(f"{a.path} is given twice: compare two run sets (or two "
                         "architectures of one, as DIR:ARCH)")
    if unlike := unlike_conditions(a, b):
        # Matched by template and seed, a full-window 12-resident suite's episodes once met a
        # 2-resident afternoon's as "matched: 2 item(s)", nothing said.
        raise BoardError(f"{a.path} and {b.path} ran their episodes under other conditions "
                         f"({unlike}): an item of one is not the same episode as the other's; "
                         "compare sets run alike")
    pairs = pairs_of(a, b)
    stratified = a.stratified
    overall = paired_summary(pairs, stratified=stratified, seed=seed, resamples=resamples)
    strata = list(dict.fromkeys(p.stratum for p in pairs if p.stratum))
    by_type = {s: paired_summary([p for p in pairs if p.stratum == s], seed=seed,
                                 resamples=resamples) for s in strata}
    needed = seeds_needed(pairs, effect)
    only = one_side_only(a, b)
    unit = a.clustered or "item"
    data: dict[str, Any] = {
        "format": "comparison", "benchmark": a.benchmark, "measure": a.measure,
        "a": _side_data(a), "b": _side_data(b), "difference": "B - A",
        "seed": seed, "resamples": resamples, "stratified": stratified, "unit": unit,
        "min_units": MIN_UNITS, "overall": overall, "by_type": by_type,
        "seeds_needed": needed, **only,
        "items": [{"item": p.key, "a": p.a, "b": p.b, "difference": p.diff, "type": p.stratum,
                   unit: p.cluster} for p in pairs],
        "notes": [*(f"A: {n}" for n in a.notes), *(f"B: {n}" for n in b.notes)],
        "test_double": list(dict.fromkeys([*a.test_double, *b.test_double]))}
    return BoardReport(markdown=_markdown(a, b, data), data=data, plot=_plot(a, b, data, pairs))


def _side_data(side: Side) -> dict[str, Any]:
    return {"label": side.label, "dir": str(side.path), "config": side.config,
            "items": len(side.items), "without_value": len(side.absent)}


def _cell(summary: dict[str, Any], what: str) -> dict[str, Any]:
    ci = summary["ci"]
    return {"what": what, "n": summary["n"], "units": summary["units"], "a": summary["mean_a"],
            "b": summary["mean_b"], "diff": summary["difference"],
            "ci": None if ci is None else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]",
            "p": None if summary["p"] is None else f"{summary['p']:.3g}",
            "wtl": f"{summary['wins']} / {summary['ties']} / {summary['losses']}"}


def _markdown(a: Side, b: Side, data: dict[str, Any]) -> str:
    unit = data["unit"]
    overall = data["overall"]
    lines = [f"Comparison ({data['benchmark']}): B - A in {data['measure']}", "",
             f"- A: {a.label} ({a.path}): {len(a.items)} item(s) with a value",
             f"- B: {b.label} ({b.path}): {len(b.items)} item(s) with a value",
             f"- matched: {overall['n']} item(s)" + (
                 f" in {overall['units']} {unit}(s)" if unit != "item" else ""), ""]
    columns = [Column("what", "Type", None, "---"), Column("n", "n", None),
               Column("units", f"{unit}s", None), Column("a", "A", 3), Column("b", "B", 3),
               Column("diff", "B - A", 3), Column("ci", "95% CI", None), Column("p", "p", None),
               Column("wtl", "B wins / ties / losses", None)]
    rows = [_cell(overall, ALL)] + [_cell(s, k) for k, s in data["by_type"].items()]
    lines += markdown_table(columns, rows)
    how = (f"95% CI: percentile bootstrap of the mean paired difference ({data['resamples']} "
           f"resamples, seed {data['seed']})")
    if unit != "item":
        how += f", resampling {unit}s, then the items within each drawn {unit}"
    if data["stratified"]:
        how += (" within each type (the board's overall weighs types by their counts: each "
                "resample keeps them, so the difference is of the quantity the table prints)")
    lines += ["", how + f"; {MIN_UNITS_WHY} ('-'). p: two-sided paired sign-flip permutation "
              "test (exact up to 16 differing items, else 20000 random sign patterns). B wins: "
              "items where B's value is higher."]
    lines += ["", *_needed_lines(data["seeds_needed"], unit)]
    for key, who in (("a_only", "A only"), ("b_only", "B only"), ("neither", "neither side")):
        found = data[key]
        if found:
            lines += ["", f"Items with a value on {who} ({len(found)}; not in the comparison):"]
            lines += [f"- {f['item']}: {f['why']}" for f in found]
    if data["notes"]:
        lines += ["", "What the boards say of these sets:"] + [f"- {n}" for n in data["notes"]]
    if data["test_double"]:
        lines += ["", f"**Test double**: {', '.join(data['test_double'])} (scripted backends): "
                  "these numbers check the pipeline, not a model."]
    return "\n".join(lines) + "\n"


def _needed_lines(needed: dict[str, Any], unit: str) -> list[str]:
    head = (f"Matched items needed to detect a difference ({needed['test']}, alpha "
            f"{ALPHA}, power {POWER:.0%}, from the observed spread of the differences")
    if needed["sd"] is None or needed.get("why"):
        return [f"{head}): {needed.get('why', 'not known')}."]
    lines = [f"{head}, sd {needed['sd']:.3f}):"]
    for name in ("observed", "effect"):
        entry = needed.get(name)
        if not entry:
            continue
        what = "the observed" if name == "observed" else "the given --effect"
        if entry["items"] is None:
            said = "none: no difference to detect" if not entry["difference"] else \
                "more than a million"
        else:
            said = f"{entry['items']}"
            if "per_cluster" in entry:
                said += f" ({entry['per_cluster']} per {unit} over the {unit}s compared)"
        lines.append(f"- {what} difference {entry['difference']:+.3f}: {said}")
    return lines


def _plot(a: Side, b: Side, data: dict[str, Any], pairs: list[Pair]) -> Plot:
    overall = data["overall"]
    points = [PlotPoint(f"{ALL} (mean)", overall["difference"],
                        tuple(overall["ci"]) if overall["ci"] else None, n=overall["n"])]
    for kind, s in data["by_type"].items():
        if len(data["by_type"]) > 1:
            points.append(PlotPoint(f"{kind} (mean)", s["difference"],
                                    tuple(s["ci"]) if s["ci"] else None, n=s["n"]))
    unit = data["unit"]
    if len(pairs) <= PLOTTED_ITEMS:
        points += [PlotPoint(p.key, p.diff) for p in sorted(pairs, key=lambda p: -p.diff)]
        what = "per item"
    else:  # too many to read: each sampled unit's mean difference
        groups: dict[str, list[float]] = {}
        for p in pairs:
            groups.setdefault(p.cluster, []).append(p.diff)
        means = sorted(((k, sum(v) / len(v), len(v)) for k, v in groups.items()),
                       key=lambda t: -t[1])
        points += [PlotPoint(k, m, n=n) for k, m, n in means[:PLOTTED_ITEMS]]
        what = f"per {unit}"
    notes = [*data["notes"]]
    for key, who in (("a_only", "A"), ("b_only", "B")):
        if data[key]:
            notes.append(f"{len(data[key])} item(s) with a value on {who} only, not compared")
    return Plot(title=f"{data['benchmark']}: B - A, {what} (A {a.label}; B {b.label})",
                reference=0.0,
                axis=f"difference in {data['measure']}", points=points, notes=notes,
                test_double=data["test_double"],
                interval=f"bars: 95% bootstrap interval of the mean difference (seed "
                         f"{data['seed']}, {data['resamples']} resamples; none below "
                         f"{MIN_UNITS} {unit}s)")
