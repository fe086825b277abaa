"""The suite table, like Table 4 of the STSS paper: mean score per task type, overall, and the
conversation ratio, one row per (model, performer architecture).

Overall is the mean over every scored episode (so types weigh by their number of templates,
10/5/5/5/5 for our set, as in the paper's 30 tasks: this reproduces the four Overall values of
its Table 4 from its per-type values); the conversation ratio is the mean over episodes of every
type but asking for help (the paper leaves help tasks out of it). One table per rule set
(`ours`, `reference`): a table never mixes scores the two made.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean

from pydantic import BaseModel, Field

from tasks.stss.importer import ImportReport
from tasks.stss.schema import TaskType

from .reference import INCOMPLETE
from .scoring import DEGRADED, STSSScore


class TableRow(BaseModel):
    model: str  # the evaluated model: the performer's
    architecture: str
    # The rest of the town's model, when it was another (absent otherwise): rows of the same
    # evaluated model over different background models are different rows, never pooled.
    background_model: str | None = Field(default=None, exclude_if=lambda v: v is None)
    by_type: dict[str, float | None]  # TaskType value -> mean score (None: no episode)
    episodes: dict[str, int]  # TaskType value -> how many episodes
    overall: float | None
    conversation_ratio: float | None
    # Episodes of the row whose run warned that nothing happened (nobody moved, nobody
    # talked, no model answer): scored and counted above, but they measure nothing.
    warned_episodes: int = 0
    warned: dict[str, int] = Field(default_factory=dict)  # warning -> episodes
    # Runs that did not complete, scored anyway (the reference rule set does; ours does not).
    incomplete: int = 0
    # Runs most of whose calls fell back (result.json `degraded`): scored, but suspect.
    degraded: int = 0
    # Episodes the rule set could not score (the reference fails on some tasks): reason -> n.
    unscored: dict[str, int] = Field(default_factory=dict)


class Unscored(BaseModel):
    """A planned episode the table has no score for, and why."""

    run: str
    why: str


class SuiteTable(BaseModel):
    rows: list[TableRow]
    rules: str = "ours"  # which rule set scored every episode of the table
    # Every episode the suite planned is either scored in a row or listed here with why
    # (failed, stopped by a budget, never started, unscored by the rule set); None: not known
    # (a table made from scores alone).
    planned: int | None = None
    missing: list[Unscored] = Field(default_factory=list)
    window_rule: str = "overlap"  # how public and online activity windows were scored
    imports: ImportReport | None = None  # tasks imported from the public format: what it did


WINDOW_RULES = {
    "overlap": "an activity counts if it is going on at some moment of the time window",
    "start": "an activity counts only if it starts inside the time window, as in the paper's code",
}


RULE_SETS = {
    "ours": "ours (evaluation/README.md): the activity overlapping its window, dates kept, the "
            "place reached, denominators from the background drawn per seed",
    "reference": "the STSS authors' public scorer: event starts by clock time, the planned "
                 "place, conversations counted where it counts them, target_num - 1",
}


def suite_table(scores: list[STSSScore], imports: ImportReport | None = None) -> SuiteTable:
    """The table of scores made by one rule set (ValueError if they mix rule sets)."""
    rule_sets = sorted({s.rules for s in scores}) or ["ours"]
    if len(rule_sets) > 1:
        raise ValueError(f"scores of several rule sets ({', '.join(rule_sets)}) in one table: "
                         "make one table per rule set (tables_by_rules)")
    groups: dict[tuple[str, str, str], list[STSSScore]] = {}
    for s in scores:
        groups.setdefault((s.model, s.background_model or "", s.architecture), []).append(s)
    rows = [table_row(model, arch, group, background or None)
            for (model, background, arch), group in sorted(groups.items())]
    # Read from the scores themselves, so the table cannot claim a rule they were not scored by.
    windows = sorted({s.options.window for s in scores}) or ["overlap"]
    return SuiteTable(rows=rows, rules=rule_sets[0], window_rule=" and ".join(windows),
                      imports=imports)


def table_row(model: str, architecture: str, group: list[STSSScore],
              background: str | None = None) -> TableRow:
    """One row of the table: the means, counts and warnings of one configuration's scores."""
    scored = [s for s in group if s.score is not None]
    by_type, counts = {}, {}
    for kind in TaskType:
        values = [s.score for s in scored if s.type is kind]
        by_type[kind.value] = round(mean(values), 3) if values else None
        counts[kind.value] = len(values)
    ratios = conversation_ratios(scored)
    return TableRow(
        model=model, architecture=architecture, background_model=background, by_type=by_type,
        episodes=counts,
        overall=round(mean(s.score for s in scored), 3) if scored else None,
        conversation_ratio=round(mean(ratios), 3) if ratios else None,
        warned_episodes=sum(any(_nothing(w) for w in s.warnings) for s in group),
        warned=dict(sorted(Counter(_what(w) for s in group for w in s.warnings
                                   if _nothing(w)).items())),
        incomplete=sum(any(w.startswith(INCOMPLETE) for w in s.warnings) for s in group),
        degraded=sum(any(w.startswith(DEGRADED) for w in s.warnings) for s in group),
        unscored=dict(sorted(Counter(s.unscored for s in group if s.unscored).items())))


def conversation_ratios(scored: list[STSSScore]) -> list[float]:
    """The ratios the table's conversation ratio is the mean of: every scored episode's but
    asking for help's (the paper leaves help tasks out of it)."""
    return [s.conversation_ratio for s in scored
            if s.conversation_ratio is not None and s.type is not TaskType.asking_for_help]


def tables_by_rules(scores: list[STSSScore], imports: ImportReport | None = None, *,
                    rules: list[str] | None = None, planned: dict[str, str] | None = None
                    ) -> list[SuiteTable]:
    """One table per rule set (`rules`, else those the scores were made by), ours first.
    `planned`: every episode's run directory -> why it may have no score ("" when it ran to
    the end); each table then accounts for all of them."""
    rule_sets = rules or sorted({s.rules for s in scores}, key=lambda r: r != "ours") or ["ours"]
    tables = []
    for rule_set in rule_sets:
        mine = [s for s in scores if s.rules == rule_set]
        table = suite_table(mine, imports)
        table.rules = rule_set
        if planned is not None:
            scored = {str(s.run) for s in mine if s.score is not None}
            table.planned = len(planned)
            table.missing = [Unscored(run=run, why=why or "no score") for run, why in
                             planned.items() if run not in scored and
                             not any(str(s.run) == run and s.unscored for s in mine)]
        tables.append(table)
    return tables


def rule_differences(scores: list[STSSScore]) -> dict[str, tuple[int, int]]:
    """Per task type: (episodes whose score differs between ours and the reference's, episodes
    scored by both), over the runs that carry both."""
    pairs: dict[str, dict[str, STSSScore]] = {}
    for s in scores:
        pairs.setdefault(s.run, {})[s.rules] = s
    out: dict[str, tuple[int, int]] = {}
    for both in pairs.values():
        if len(both) < 2:
            continue
        kind = both["ours"].type.value
        changed, total = out.get(kind, (0, 0))
        out[kind] = (changed + (both["ours"].score != both["reference"].score), total + 1)
    return out


def differences_markdown(differences: dict[str, tuple[int, int]]) -> str:
    """One line: how many episodes' verdicts part between the rule sets, per type."""
    parts = [f"{k.label} {differences[k.value][0]} of {differences[k.value][1]}"
             for k in TaskType if k.value in differences]
    return "Episodes whose score differs between ours and the reference's: " + \
        ", ".join(parts) + ".\n"


def row_model(model: str, background: str | None, several: bool) -> str:
    """A row's LLM cell: the evaluated model, and its background model when the rows differ
    in theirs (one background for every row is said once, under the table)."""
    return f"{model} (background {background or 'the same'})" if several else model


def background_note(backgrounds: set[str | None]) -> list[str]:
    """The line under a table naming the background model, when one was used."""
    named = sorted(b for b in backgrounds if b)
    if not named:
        return []
    return [f"\nLLM: the evaluated model (the performer's TDP, daily plan and lines; "
            f"tasks/stss/README.md). Background model (every other resident and the "
            f"performer's other calls): {', '.join(named)}"
            + ("; rows without one ran the whole town on their own model" if None in
               backgrounds else "") + "."]


def _nothing(warning: str) -> bool:
    """A run's own warning that nothing happened (not incomplete, not degraded)."""
    return not warning.startswith((INCOMPLETE, DEGRADED))


def _what(warning: str) -> str:
    """A warning without its particulars ("no model answer: all 12 calls ..." -> "no model
    answer"), so episodes with the same trouble add up."""
    return warning.split(":")[0].split(" (")[0]


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table_markdown(table: SuiteTable) -> str:
    """The table as Markdown, columns as in the paper's Table 4."""
    head = ["LLM", "Agent", *(k.label for k in TaskType), "Overall", "Conv. Ratio"]
    lines = [f"Rules: {RULE_SETS.get(table.rules, table.rules)}.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    backgrounds = {row.background_model for row in table.rows}
    for row in table.rows:
        cells = [row_model(row.model, row.background_model, len(backgrounds) > 1),
                 row.architecture, *(_cell(row.by_type[k.value]) for k in TaskType),
                 _cell(row.overall), _cell(row.conversation_ratio)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += background_note(backgrounds)
    counts = {", ".join(f"{k.label} {row.episodes[k.value]}" for k in TaskType)
              for row in table.rows}
    if len(counts) == 1:
        lines.append(f"\nEpisodes per row: {counts.pop()}.")
    for row in table.rows if len(counts) > 1 else []:
        shown = ", ".join(f"{k.label} {row.episodes[k.value]}" for k in TaskType)
        lines.append(f"\nEpisodes ({row.model}, {row.architecture}): {shown}.")
    if table.planned is not None:
        scored = sum(sum(row.episodes.values()) for row in table.rows)
        unscored = sum(sum(row.unscored.values()) for row in table.rows)
        lines.append(f"\nScored {scored} of {table.planned} planned episode(s)"
                     + (f"; {unscored} unscored by the rules" if unscored else "")
                     + (f"; {len(table.missing)} without a score, not in the means:"
                        if table.missing else "."))
        lines += [f"- {m.run}: {m.why}" for m in table.missing]
    for row in table.rows:
        lines += row_notes(row, f"{row.model}, {row.architecture}")
    if table.rules == "ours":
        why = WINDOW_RULES.get(table.window_rule, "mixed: re-score the runs with one rule")
        lines.append(f"\nWindow rule: {table.window_rule} ({why}).")
    if table.imports is not None:
        lines += ["", *imports_markdown(table.imports)]
    return "\n".join(lines) + "\n"


def row_notes(row: TableRow, who: str) -> list[str]:
    """What a row's scores carry beside their values, a paragraph each: episodes in which
    nothing happened, degraded and incomplete runs, episodes the rules could not score."""
    lines = []
    if row.warned:
        total = sum(row.episodes.values())
        trouble = "; ".join(f"{what}: {n}" for what, n in row.warned.items())
        lines.append(f"\n**Warning** ({who}): in {row.warned_episodes} of {total} episodes "
                     f"nothing happened ({trouble}). Their scores are in the row but measure "
                     "nothing; see each run's result.json.")
    if row.degraded:
        lines.append(f"\n**Degraded** ({who}): in {row.degraded} episode(s) most calls fell "
                     "back to a default answer (above SANDBOX_DEGRADED_ABOVE); their scores "
                     "rest on canned answers.")
    if row.incomplete:
        lines.append(f"\n**Incomplete** ({who}): {row.incomplete} episode(s) did not complete "
                     "(a budget or an error stopped them) and are scored as the reference "
                     "scores them.")
    for reason, n in row.unscored.items():
        lines.append(f"\n**Unscored** ({who}): {n} episode(s), not in the means: {reason}.")
    return lines


def imports_markdown(report: ImportReport) -> list[str]:
    """The import under the table: N of M tasks imported, every task that failed and why, the
    place names matched near, the warnings and the notes, each under its template's id."""
    lines = []
    if report.source is not None:
        lines.append(f"Imported {report.imported} of {report.tasks} public task(s) from "
                     f"{report.source}.")
    lines += [f"- not imported: {failure}" for failure in report.failed]
    for template, said in report.templates.items():
        lines += [f"- {template}: name mapped: {theirs!r} -> {ours}"
                  for theirs, ours in said.name_mapping.items()]
        lines += [f"- {template}: warning: {warning}" for warning in said.warnings]
        lines += [f"- {template}: note: {note}" for note in said.notes]
    return lines
