"""The STSS action level's board: one or more suite directories (`sandbox stss --out`) merged,
and runs a person played (`sandbox run TEMPLATE --human NAME`, on their own row, `human`),
one row per configuration (model x performer architecture; a configuration found in several
suites is one row, its episodes pooled), with the means of the suite table (Table 4: per task
type, overall, the conversation ratio), each with a seeded 95% bootstrap interval and n, the
same per template, and the accounting of every episode the suites planned: scored, unscored
by the rules, or without a score and why (damaged among them: a finished episode whose
events.jsonl no longer reads whole, or whose score files are lost or do not read).

Reads a suite's `suite.json` (what it was run with, the episodes it planned), its episodes'
score files (score.json, score.reference.json), whether each run ended
(sandbox.log.run_outcome) and, of one that did, whether its events still read (a score of
events no longer there enters no mean). Scores nothing again and calls no model.

    report = suite_board(["runs/a", "runs/b"], rules="ours", seed=0, resamples=1000)
    print(report.markdown)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
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
    cluster_interval,
    markdown_table,
    test_doubles,
)
from sandbox.files import FileFormatError, input_lines, json_line
from sandbox.log import EVENTS, run_outcome
from tasks.stss.schema import TaskType

from .scoring import RULES, ScoringOptions, STSSScore, read_score
from .table import (
    RULE_SETS,
    WINDOW_RULES,
    TableRow,
    background_note,
    conversation_ratios,
    row_model,
    row_notes,
    table_row,
)

SUITE_FILE = "suite.json"  # what `sandbox stss` writes into a suite directory, and marks it by
# Options of suite.json that shape every episode: suites pooled into one row should agree.
EPISODE_OPTIONS = {"world": "--world", "background": "--background", "window": "--same-day, "
                   "--start, --until", "embedder": "--embedder", "prompts": "--prompts"}
_SEED_DIR = re.compile(r"s(\d+)")


@dataclass(frozen=True)
class PlannedEpisode:
    """One episode a suite planned: OUT/<template>/<arch>/s<seed>, and the configuration it
    belongs to (the suite's model, and the architecture its directory stands for)."""

    suite: Path
    template: str
    arch_dir: str
    seed: int
    model: str
    architecture: str
    background: str = ""  # the suite's background model (--background-model), "" for none
    path: Path | None = None  # a run outside a suite's layout (a person's run): itself

    @property
    def key(self) -> str:
        return f"{self.template}/{self.arch_dir}/s{self.seed}"

    @property
    def run_dir(self) -> Path:
        if self.path is not None:
            return self.path
        return self.suite / self.template / self.arch_dir / f"s{self.seed}"


@dataclass
class SuiteDir:
    """A suite directory as the board reads it: its suite.json and the episodes it planned."""

    path: Path
    options: dict[str, Any]
    episodes: list[PlannedEpisode]


def _episode_key(text: str) -> tuple[str, str, int] | None:
    parts = str(text).split("/")
    if len(parts) != 3 or not (found := _SEED_DIR.fullmatch(parts[2])):
        return None
    return parts[0], parts[1], int(found.group(1))


def read_suite(path: Path | str) -> SuiteDir:
    """A suite directory: BoardError when it has no readable suite.json. Its planned episodes
    are those suite.json records (every run of `sandbox stss` into it adds its own) and every
    episode directory found in it (a suite begun before suite.json recorded them)."""
    path = Path(path)
    options_path = path / SUITE_FILE
    if not options_path.is_file():
        what = "a run directory, not a suite" if (path / "header.json").is_file() else \
            "not an STSS suite directory"
        raise BoardError(f"{path} is {what} (no {SUITE_FILE}; write one with `sandbox stss "
                         "--out DIR`)")
    try:
        options = json.loads(options_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BoardError(f"{options_path}: not JSON ({exc})") from exc
    if not isinstance(options, dict) or not isinstance(options.get("model"), str):
        raise BoardError(f"{options_path}: not a suite's options (expected a JSON object with "
                         "its model)")
    archs = options.get("architectures") or {}
    keys = {k for k in map(_episode_key, options.get("episodes") or []) if k is not None}
    for run_dir in path.glob("*/*/s*"):
        found = _episode_key(run_dir.relative_to(path).as_posix())
        if found is not None and run_dir.is_dir():
            keys.add(found)
    # A row is named, and matched, by who its models are (suite.json `named`: "alias (model
    # id)"), not by the string typed; a suite from before it by what was typed.
    named = options.get("named") if isinstance(options.get("named"), dict) else {}
    background = named.get("background_model") or options.get("background_model") or ""
    if background and options.get("performer_routing") not in (None, "paper"):
        background += f", routing {options['performer_routing']}"
    episodes = [PlannedEpisode(path, template, arch, seed, named.get("model") or options["model"],
                               str(archs.get(arch, arch)), str(background))
                for template, arch, seed in sorted(keys)]
    return SuiteDir(path, options, episodes)


HUMAN = "human"  # the row of runs a person played (sandbox/app/human.py): their model id


def human_run(path: Path) -> SuiteDir | None:
    """A run in which a person played the performer (`sandbox run TEMPLATE --human NAME`:
    header config.roles.human) as a suite of that one episode, on the row of its model,
    `human`; None for any other directory. BoardError for a run in which the person played
    someone else: its performer was a model, in a town with a person in it."""
    try:
        header = json.loads((path / "header.json").read_text(encoding="utf-8"))
        config = header["config"]
        person, task = config["roles"]["human"], config["stss_task"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if person != task.get("performer"):
        raise BoardError(f"{path}: a person played {person}, not the performer "
                         f"({task.get('performer')}): not a row of a board")
    architecture = str(config.get("performer_architecture", ""))
    episode = PlannedEpisode(path, str(task.get("template")), Path(architecture).stem,
                             int(header.get("seed", 0)), HUMAN, architecture, path=path)
    return SuiteDir(path, {"model": HUMAN, "human": person}, [episode])


@dataclass
class EpisodeScore:
    """A planned episode and what the board found of it under one rule set: its score (None:
    no score file, or damaged), and why it is not in the means (empty when it is)."""

    episode: PlannedEpisode
    score: STSSScore | None
    why: str = ""
    damaged: bool = False  # its log or its score file no longer holds what was scored

    @property
    def scored(self) -> bool:
        return self.score is not None and self.score.score is not None


def episode_damage(run_dir: Path) -> str:
    """Why a run that ended is damaged ("" when it is not): a line of its events.jsonl that
    is not a JSON event (torn, edited, a disk fault), or fewer whole lines than its
    result.json counts (cut since it ended). A score of such a log is of events that are no
    longer there, so it enters no mean, as a kit board's damaged run. Each line is decoded,
    not validated field by field (the scorer's strict read does that when it scores): the
    fields of 1.2 MB of events cost a board 0.2 s an episode, the decoding 0.03 s."""
    outcome = run_outcome(run_dir)
    if outcome.state == "unfinished" and outcome.reason.startswith(f"{EVENTS} holds"):
        return f"{outcome.reason} (cut since it ended)"
    if not outcome.finished:
        return ""
    try:
        for number, raw in input_lines(Path(run_dir) / EVENTS):
            if not raw.strip():
                continue
            try:
                event = json_line(raw)
            except ValueError as exc:
                return f"{EVENTS} line {number}: unreadable: {str(exc).splitlines()[0]}"
            if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
                return f"{EVENTS} line {number}: not an event (a JSON object with a kind)"
    except FileFormatError as exc:
        return str(exc)
    return ""


def _why_no_score(episode: PlannedEpisode, rules: str) -> tuple[str, bool]:
    """Why an episode has no score file, in the words of the suite table's lines, and
    whether that is damage: a finished episode with no score file of either rule set lost
    the one its suite wrote (a suite scores every finished episode, under `--rules` ours,
    reference or both); one with the other rule set's file was not scored under these."""
    outcome = run_outcome(episode.run_dir)
    if outcome.state == "missing":
        return "not run: " + ("no run directory (never started)"
                              if outcome.reason == "no run directory" else outcome.reason), False
    if outcome.state == "failed":
        kind, _, reason = outcome.reason.partition(": ")
        if kind == "budget":
            return f"stopped by a budget: {reason}", False
        if kind == "unavailable":
            return f"unavailable: {reason}", False
        return f"failed: {reason or kind}", False
    if outcome.state == "unfinished":
        return f"unfinished: {outcome.reason}", False
    file = ScoringOptions(rules=rules).file
    fix = f"score it: sandbox score {episode.suite} --rules {rules}"
    if not any((episode.run_dir / ScoringOptions(rules=r).file).exists() for r in RULES):
        return f"damaged: finished, but no score file ({file} nor any other; {fix})", True
    return f"finished, but no {file} ({fix})", False


def episode_score(episode: PlannedEpisode, rules: str, damage: str | None = None
                  ) -> EpisodeScore:
    """What the board makes of one episode under `rules`; `damage`: its `episode_damage`,
    when already known (a caller reading both rule sets reads the log once)."""
    if damage is None:
        damage = episode_damage(episode.run_dir)
    if damage:
        return EpisodeScore(episode, None, f"damaged: {damage} (remove its run directory and "
                                           f"run the suite again)", damaged=True)
    try:
        score = read_score(episode.run_dir, rules)
    except (ValueError, OSError) as exc:  # a pydantic ValidationError is a ValueError
        file = ScoringOptions(rules=rules).file
        problem = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        return EpisodeScore(episode, None, f"damaged: {file} does not read ({problem}); score "
                                           f"it again: sandbox score {episode.run_dir} --rules "
                                           f"{rules}", damaged=True)
    if score is None:
        return EpisodeScore(episode, None, *_why_no_score(episode, rules))
    if score.score is None:
        return EpisodeScore(episode, score, f"unscored by the rules: {score.unscored}")
    return EpisodeScore(episode, score)


def estimate(clusters: Sequence[Sequence[float]], seed: int, resamples: int) -> dict[str, Any]:
    """A mean over every value, its 95% percentile bootstrap interval and n (None and n 0 when
    empty). The values come in clusters (an episode's seeds within its template): the
    interval resamples templates, then seeds within each (kit.cluster_interval), and is None
    below MIN_UNITS templates; `units` says how many there were."""
    values = [v for c in clusters for v in c]
    if not values:
        return {"mean": None, "ci": None, "n": 0, "units": 0}
    ci = cluster_interval(clusters, seed, resamples)
    return {"mean": mean(values), "ci": None if ci is None else list(ci), "n": len(values),
            "units": sum(1 for c in clusters if c)}


def _by_template(scored: Sequence[EpisodeScore]) -> list[list[float]]:
    """The scores of `scored` grouped by template (the unit the suite sampled), in order."""
    groups: dict[str, list[float]] = {}
    for e in scored:
        groups.setdefault(e.episode.template, []).append(e.score.score)
    return list(groups.values())


@dataclass
class Configuration:
    """One board row: a model and a performer architecture, over every suite that ran it."""

    model: str
    background: str  # "" when the whole town ran on `model`
    architecture: str
    episodes: list[EpisodeScore] = field(default_factory=list)
    label: str = ""
    agent: str = ""
    model_shown: str = ""

    @property
    def suites(self) -> list[Path]:
        return list(dict.fromkeys(e.episode.suite for e in self.episodes))

    def scores(self) -> list[STSSScore]:
        return [e.score for e in self.episodes if e.score is not None]

    def table_row(self) -> TableRow:
        return table_row(self.model, self.architecture, self.scores(), self.background or None)


def _suite_names(suites: Sequence[Path]) -> dict[Path, str]:
    """Each suite's name on the board: its folder's name, or its path when two share one."""
    names = [s.name for s in suites]
    return {s: s.name if names.count(s.name) == 1 else str(s) for s in suites}


def _label(configs: list[Configuration], names: dict[Path, str]) -> None:
    """`model agent`, the agent the architecture's name (a file's stem); the suites named when
    two rows would otherwise share a label."""
    several = len({c.background for c in configs}) > 1
    for config in configs:
        config.agent = Path(config.architecture).stem or config.architecture
        # The evaluated model names the row; its background too when rows differ in theirs.
        config.model_shown = row_model(config.model, config.background or None, several)
    shown = [(c.model_shown, c.agent) for c in configs]
    for config in configs:
        if shown.count((config.model_shown, config.agent)) > 1:
            config.agent += f" ({', '.join(names[s] for s in config.suites)})"
        config.label = f"{config.model_shown} {config.agent}"


def _interval(ci) -> str | None:
    return None if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _row_data(config: Configuration, names: dict[Path, str], seed: int,
              resamples: int) -> dict[str, Any]:
    episodes = [e for e in config.episodes if e.scored]
    scored = [e.score for e in episodes]
    by_type = {kind.value: estimate(_by_template([e for e in episodes if e.score.type is kind]),
                                    seed, resamples)
               for kind in TaskType}
    templates: dict[str, dict[str, Any]] = {}
    for template in sorted({e.episode.template for e in config.episodes}):
        mine = [e for e in config.episodes if e.episode.template == template]
        kinds = {e.score.type.value for e in mine if e.score is not None}
        templates[template] = {
            "type": kinds.pop() if len(kinds) == 1 else None,
            # One template: its seeds are the independent units.
            **estimate([[e.score.score] for e in mine if e.scored], seed, resamples),
            "planned": len(mine)}
    ratios = conversation_ratios(scored)
    row = config.table_row()
    missing = [{"run": str(e.episode.run_dir), "why": e.why} for e in config.episodes
               if e.score is None]
    damaged = sum(e.damaged for e in config.episodes)
    return {
        "label": config.label, "model": config.model_shown,
        **({"background_model": config.background} if config.background else {}),
        "architecture": config.architecture,
        "agent": config.agent, "suites": [names[s] for s in config.suites],
        "overall": estimate(_by_template(episodes), seed, resamples),
        "by_type": by_type, "by_template": templates,
        "conversation_ratio": {"mean": mean(ratios) if ratios else None, "n": len(ratios)},
        "planned": len(config.episodes), "scored": len(scored),
        "unscored": row.unscored, "missing": missing, "damaged": damaged,
        "warned_episodes": row.warned_episodes, "warned": row.warned,
        "incomplete": row.incomplete, "degraded": row.degraded}


def _option_warnings(config: Configuration, suites: dict[Path, SuiteDir],
                     names: dict[Path, str]) -> list[str]:
    """A row pooling suites whose episodes were shaped by different options."""
    out = []
    if len(config.suites) < 2:
        return out
    for key, flag in EPISODE_OPTIONS.items():
        values = {names[s]: suites[s].options.get(key) for s in config.suites}
        if len({json.dumps(v, sort_keys=True) for v in values.values()}) > 1:
            shown = "; ".join(f"{_option(v)} in {name}" for name, v in values.items())
            out.append(f"{config.label} pools suites run with different {flag} ({shown}): "
                       "their episodes differ by more than the model and the architecture")
    return out


def _option(value: Any) -> str:
    if value is None:
        return "the default"
    if isinstance(value, dict):  # the window: same_day, start, until
        return ", ".join(f"{k} {_option(v)}" for k, v in value.items())
    return str(value)


TYPE_COLUMNS = [Column(f"type_{k.value}", k.label, 3) for k in TaskType]


def _main_table(rows: list[dict[str, Any]]) -> list[str]:
    columns = [Column("model", "LLM", None, "---"), Column("agent", "Agent", None, "---"),
               *TYPE_COLUMNS, Column("overall", "Overall", 3),
               Column("overall_ci", "95% CI", None), Column("overall_n", "n", None),
               Column("ratio", "Conv. Ratio", 3)]
    cells = [{"model": r["model"], "agent": r["agent"],
              **{f"type_{k}": v["mean"] for k, v in r["by_type"].items()},
              "overall": r["overall"]["mean"], "overall_ci": _interval(r["overall"]["ci"]),
              "overall_n": r["overall"]["n"], "ratio": r["conversation_ratio"]["mean"]}
             for r in rows]
    return markdown_table(columns, cells)


def _estimates_table(rows: list[dict[str, Any]], per: str) -> list[str]:
    """Long form: one line per configuration and task type (`per` "type") or template."""
    lead = [Column("model", "LLM", None, "---"), Column("agent", "Agent", None, "---")]
    tail = [Column("mean", "Mean", 3), Column("ci", "95% CI", None), Column("n", "n", None)]
    cells = []
    for r in rows:
        if per == "type":
            planned = {t["type"] for t in r["by_template"].values()}
            for kind in TaskType:
                value = r["by_type"][kind.value]
                if value["n"] or kind.value in planned:
                    cells.append({"model": r["model"], "agent": r["agent"], "what": kind.label,
                                  **value, "ci": _interval(value["ci"])})
        else:
            for template, value in r["by_template"].items():
                kind = TaskType(value["type"]).label if value["type"] else None
                cells.append({"model": r["model"], "agent": r["agent"], "what": template,
                              "kind": kind, **value, "ci": _interval(value["ci"]),
                              "n": f"{value['n']}/{value['planned']}"})
    middle = [Column("what", "Task type", None, "---")] if per == "type" else \
        [Column("what", "Template", None, "---"), Column("kind", "Task type", None, "---")]
    return markdown_table([*lead, *middle, *tail], cells)


def _episodes_table(configs: list[Configuration], names: dict[Path, str]) -> list[str]:
    """Every planned episode, its score (or why none) and its rule; the suite named when
    there are several."""
    suite = [Column("suite", "Suite", None, "---")] if len(names) > 1 else []
    columns = [*suite, Column("model", "LLM", None, "---"), Column("agent", "Agent", None, "---"),
               Column("template", "Template", None, "---"), Column("seed", "Seed", None),
               Column("score", "Score", 3), Column("ratio", "Conv. Ratio", 3),
               Column("rule", "Rule (or why no score)", None, "---")]
    cells = []
    for config in configs:
        for e in config.episodes:
            s = e.score
            cells.append({"suite": names[e.episode.suite], "model": config.model_shown,
                          "agent": config.agent,
                          "template": e.episode.template, "seed": e.episode.seed,
                          "score": s.score if s else None,
                          "ratio": s.conversation_ratio if s else None,
                          "rule": e.why or (s.rule if s else "")})
    return markdown_table(columns, cells)


def _accounting(rows: list[dict[str, Any]], configs: list[Configuration]) -> list[str]:
    """Every planned episode: scored, unscored by the rules, or without a score and why (the
    suite table's lines), then what the scores carry (nothing happened, degraded, ...)."""
    lines = ["Accounting (every episode each suite planned; those not in the means, and why):",
             ""]
    for row in rows:
        unscored = sum(row["unscored"].values())
        missing = row["missing"]
        lines.append(f"- {row['label']}: scored {row['scored']} of {row['planned']} planned "
                     f"episode(s)" + (f"; {unscored} unscored by the rules" if unscored else "")
                     + (f"; {len(missing)} without a score, not in the means"
                        + (f" ({row['damaged']} damaged)" if row["damaged"] else "") + ":"
                        if missing else "."))
        lines += [f"  - {m['run']}: {m['why']}" for m in missing]
    for config in configs:
        lines += row_notes(config.table_row(), config.label)
    return lines


def _plain(paragraphs: Sequence[str]) -> list[str]:
    """Board paragraphs ("\n**Warning** (...): ...") as plain one-line notes for a plot."""
    return [p.strip().replace("**", "") for p in paragraphs if p.strip()]


def _best(row: dict[str, Any]) -> tuple[bool, float]:
    """Best first, rows without a score last."""
    value = row["overall"]["mean"]
    return value is None, -(value or 0.0)


def suite_board(dirs: Sequence[Path | str], *, rules: str = "ours", seed: int = 0,
                resamples: int = RESAMPLES, episodes: bool = False) -> BoardReport:
    """The board of suite directories under one rule set (`rules`: which score files are
    read). `episodes`: list every episode's score too (`sandbox score SUITE`)."""
    if rules not in RULE_SETS:
        raise BoardError(f"rules {rules!r}: expected one of {', '.join(RULE_SETS)}")
    warnings = []
    suites: dict[Path, SuiteDir] = {}
    for path in map(Path, dirs):
        suite = human_run(path) if not (path / SUITE_FILE).is_file() else None
        suite = suite or read_suite(path)
        if any(path.resolve() == s.resolve() for s in suites):
            warnings.append(f"{path} is given twice: its episodes count once")
            continue
        suites[path] = suite
        if not suite.episodes:
            warnings.append(f"{path}: no episode planned or found")
    names = _suite_names(list(suites))
    configs: dict[tuple[str, str, str], Configuration] = {}
    for suite in suites.values():
        for episode in suite.episodes:
            key = (episode.model, episode.background, episode.architecture)
            config = configs.setdefault(key, Configuration(*key))
            config.episodes.append(episode_score(episode, rules))
    ordered = [configs[k] for k in sorted(configs)]
    _label(ordered, names)
    for config in ordered:
        warnings += _option_warnings(config, suites, names)
    rows = [_row_data(c, names, seed, resamples) for c in ordered]
    all_scores = [s for c in ordered for s in c.scores()]
    window = " and ".join(sorted({s.options.window for s in all_scores})) or "overlap"

    lines = [f"STSS action level ({len(suites)} suite(s): {', '.join(names.values())}; "
             f"rules: {rules})", "", f"Rules: {RULE_SETS[rules]}.", "", *_main_table(rows),
             *background_note({c.background or None for c in ordered}), "",
             f"Means over the scored episodes, each with its 95% bootstrap interval (percentile, "
             f"{resamples} resamples, seed {seed}) and n episodes; Overall is the mean over every "
             "scored episode, the conversation ratio the mean over those of every type but "
             "asking for help (as the suite table has them). The suite sampled templates, then "
             "seeds: an interval resamples templates, then seeds within each drawn template "
             "(per template: its seeds); "
             f"{MIN_UNITS_WHY} (a '-' in the 95% CI column). Per task type:", "",
             *_estimates_table(rows, "type"), "", "Per template (n: scored of planned):", "",
             *_estimates_table(rows, "template")]
    if episodes:
        lines += ["", "Every episode:", "", *_episodes_table(ordered, names)]
    if rules == "ours":
        why = WINDOW_RULES.get(window, "mixed: re-score the runs with one rule")
        lines += ["", f"Window rule: {window} ({why})."]
    lines += [f"\nWarning: {w}" for w in warnings]
    lines += ["", *_accounting(rows, ordered)]
    data: dict[str, Any] = {
        "rules": rules, "seed": seed, "resamples": resamples, "window_rule": window,
        "suites": [{"dir": str(path), "name": names[path], "planned": len(suite.episodes),
                    "options": {k: v for k, v in suite.options.items() if k != "episodes"}}
                   for path, suite in suites.items()],
        "rows": rows, "warnings": warnings}
    if episodes:
        data["episodes"] = [{"run": str(e.episode.run_dir), "label": c.label,
                             "template": e.episode.template, "seed": e.episode.seed,
                             "score": e.score.score if e.score else None,
                             "conversation_ratio": e.score.conversation_ratio if e.score
                             else None, "rule": e.score.rule if e.score else None,
                             "why": e.why}
                            for c in ordered for e in c.episodes]
    notes = [w for c in ordered for w in _plain(row_notes(c.table_row(), c.label))]
    notes += [f"Warning: {w}" for w in warnings]
    doubles = test_doubles([c.model for c in ordered] + [c.background for c in ordered])
    data["notes"], data["test_double"] = notes, doubles
    plot = Plot(title=f"STSS action level: overall score (rules: {rules})", axis="score (0-1)",
                notes=notes, test_double=doubles,
                points=[PlotPoint(r["label"], r["overall"]["mean"],
                                  tuple(r["overall"]["ci"]) if r["overall"]["ci"] else None,
                                  n=r["overall"]["n"]) for r in sorted(rows, key=_best)],
                scale=(0, 1),
                interval=f"bars: 95% bootstrap interval, templates then seeds resampled "
                         f"(percentile; seed {seed}, {resamples} resamples; none below "
                         f"{MIN_UNITS} templates)")
    return BoardReport(markdown="\n".join(lines) + "\n", data=data, plot=plot)
