"""The suite table, like Table 4 of the STSS paper: mean score per task type, overall, and the
conversation ratio, one row per (model, performer architecture).

Overall is the mean over every scored episode (so types weigh by their number of templates,
10/5/5/5/5 for our set, as in the paper's 30 tasks); the conversation ratio is the mean over
episodes of every type but asking for help (the paper leaves help tasks out of it).
"""

from __future__ import annotations

from collections import Counter
from statistics import mean

from pydantic import BaseModel, Field

from tasks.stss.importer import ImportReport
from tasks.stss.schema import TaskType

from .scoring import STSSScore


class TableRow(BaseModel):
    model: str
    architecture: str
    by_type: dict[str, float | None]  # TaskType value -> mean score (None: no episode)
    episodes: dict[str, int]  # TaskType value -> how many episodes
    overall: float | None
    conversation_ratio: float | None
    # Episodes of the row whose run warned that nothing happened (nobody moved, nobody
    # talked, no model answer): scored and counted above, but they measure nothing.
    warned_episodes: int = 0
    warned: dict[str, int] = Field(default_factory=dict)  # warning -> episodes


class SuiteTable(BaseModel):
    rows: list[TableRow]
    window_rule: str = "overlap"  # how public and online activity windows were scored
    imports: ImportReport | None = None  # tasks imported from the public format: what it did


WINDOW_RULES = {
    "overlap": "an activity counts if it is going on at some moment of the time window",
    "start": "an activity counts only if it starts inside the time window, as in the paper's code",
}


def suite_table(scores: list[STSSScore], imports: ImportReport | None = None) -> SuiteTable:
    groups: dict[tuple[str, str], list[STSSScore]] = {}
    for s in scores:
        groups.setdefault((s.model, s.architecture), []).append(s)
    rows = []
    for (model, arch), group in sorted(groups.items()):
        by_type, counts = {}, {}
        for kind in TaskType:
            values = [s.score for s in group if s.type is kind]
            by_type[kind.value] = round(mean(values), 3) if values else None
            counts[kind.value] = len(values)
        ratios = [s.conversation_ratio for s in group if s.conversation_ratio is not None]
        rows.append(TableRow(
            model=model, architecture=arch, by_type=by_type, episodes=counts,
            overall=round(mean(s.score for s in group), 3) if group else None,
            conversation_ratio=round(mean(ratios), 3) if ratios else None,
            warned_episodes=sum(bool(s.warnings) for s in group),
            warned=dict(sorted(Counter(_what(w) for s in group for w in s.warnings).items()))))
    # Read from the scores themselves, so the table cannot claim a rule they were not scored by.
    rules = sorted({s.options.window for s in scores}) or ["overlap"]
    return SuiteTable(rows=rows, window_rule=" and ".join(rules), imports=imports)


def _what(warning: str) -> str:
    """A warning without its particulars ("no model answer: all 12 calls ..." -> "no model
    answer"), so episodes with the same trouble add up."""
    return warning.split(":")[0].split(" (")[0]


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table_markdown(table: SuiteTable) -> str:
    """The table as Markdown, columns as in the paper's Table 4."""
    head = ["LLM", "Agent", *(k.label for k in TaskType), "Overall", "Conv. Ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table.rows:
        cells = [row.model, row.architecture, *(_cell(row.by_type[k.value]) for k in TaskType),
                 _cell(row.overall), _cell(row.conversation_ratio)]
        lines.append("| " + " | ".join(cells) + " |")
    if table.rows:
        counts = ", ".join(f"{k.label} {table.rows[0].episodes[k.value]}" for k in TaskType)
        lines.append(f"\nEpisodes per row: {counts}.")
    for row in table.rows:
        if row.warned:
            total = sum(row.episodes.values())
            trouble = "; ".join(f"{what}: {n}" for what, n in row.warned.items())
            lines.append(f"\n**Warning** ({row.model}, {row.architecture}): in "
                         f"{row.warned_episodes} of {total} episodes nothing happened "
                         f"({trouble}). Their scores are in the row but measure nothing; see "
                         "each run's result.json.")
    why = WINDOW_RULES.get(table.window_rule, "mixed: re-score the runs with one rule")
    lines.append(f"\nWindow rule: {table.window_rule} ({why}).")
    if table.imports is not None:
        lines += ["", *imports_markdown(table.imports)]
    return "\n".join(lines) + "\n"


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
