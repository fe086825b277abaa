"""One side of a comparison: a run set of one benchmark read item by item, with the same
readers its board uses, each item keyed by what two run sets of that benchmark share.

What a side, an item's key, its value, its type and its sampled unit are per benchmark:
the table in evaluation/README.md ("Comparing two run sets").

An item planned or selected on a side but without a value there (not run, failed, unjudged,
unscored) is `absent` with the reason, so a comparison can name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.kit import BoardError, Ledger, read_bench_dir, test_doubles
from evaluation.kit.board import manifest_data
from evaluation.kit.rows import judge_identities, role_identity
from sandbox.files import FileFormatError
from tasks.stss.schema import TaskType

STSS_LANG_METRICS = ("conversation_gcsr", "conversation_sr", "summary_gcsr", "summary_sr")


@dataclass(frozen=True)
class Item:
    value: float
    stratum: str = ""  # the type it is reported under
    cluster: str = ""  # the unit it was sampled in ("" : the item itself)


@dataclass
class Side:
    """A run set of one benchmark as a comparison reads it."""

    benchmark: str
    path: Path
    label: str
    measure: str  # what an item's value is, with its scale
    items: dict[str, Item] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)  # key -> why it has no value
    notes: list[str] = field(default_factory=list)  # the board's warnings for this set
    test_double: list[str] = field(default_factory=list)
    # The board weighs its types by their counts (STSS Overall; RefuteBench families): a
    # resample keeps each type's count, so the difference is of the quantity the table prints.
    stratified: bool = False
    clustered: str = ""  # the unit above the item ("template", "agent"), "" when none
    config: dict[str, Any] = field(default_factory=dict)


MARKERS = {"suite.json": "stss", "stss_lang.json": "stss-lang", "pingpong.json": "pingpong",
           "simulbench.json": "simulbench", "refutebench.json": "refutebench",
           "interview-set.json": "interview"}


def split_spec(spec: str) -> tuple[Path, str | None]:
    """`DIR` or `DIR:ROW` (a row of a run set holding several: an architecture)."""
    path = Path(spec)
    if path.exists() or ":" not in spec:
        return path, None
    head, _, row = spec.rpartition(":")
    return Path(head), row or None


def benchmark_of(path: Path) -> str:
    """Which benchmark a directory holds, by its manifest (BoardError when none)."""
    found = [name for marker, name in MARKERS.items() if (path / marker).is_file()]
    if not found:
        raise BoardError(f"{path} is not a run set: none of {', '.join(MARKERS)} in it (a "
                         "suite, a benchmark directory or an interview set)")
    return found[0]


def nested(path: Path, row: str | None) -> tuple[Path, str | None]:
    """A directory that holds run sets one level down, one per architecture (the language
    level's OUT/ARCH): the one `row` names, or the only one."""
    if not path.is_dir() or any((path / marker).is_file() for marker in MARKERS):
        return path, row
    inner = sorted(p for p in path.iterdir() if p.is_dir() and
                   any((p / marker).is_file() for marker in MARKERS))
    if not inner:
        return path, row
    return path / _choose(path, row, [p.name for p in inner], "arch"), None


def read_side(spec: str, *, rules: str = "ours", metric: str | None = None,
              judges: Sequence[str] | None = None) -> Side:
    path, row = nested(*split_spec(spec))
    benchmark = benchmark_of(path)
    if row is not None and benchmark not in ("stss", "interview"):
        raise BoardError(f"{spec}: a {benchmark} directory holds one configuration; give "
                         f"{path} without :{row}")
    readers = {"stss": lambda: _stss(path, row, rules),
               "stss-lang": lambda: _stss_lang(path, metric or "conversation_gcsr", judges),
               "pingpong": lambda: _pingpong(path, judges),
               "simulbench": lambda: _simulbench(path, judges),
               "refutebench": lambda: _refutebench(path, metric, judges),
               "interview": lambda: _interview(path, row, judges)}
    judges = judges_named(path, benchmark, judges)
    if metric is not None and benchmark not in ("stss-lang", "refutebench"):
        raise BoardError(f"--metric: {benchmark} has one per-item measure; --metric is for "
                         "stss-lang and refutebench")
    side = readers[benchmark]()
    # A judge no side heard once compared 0 items with exit 0, the judge never named.
    present = list(side.config.get("judges") or [])
    unknown = [j for j in judges or [] if j not in present]
    if unknown:
        raise BoardError(f"--judge {', '.join(unknown)}: no such judge in {path}; judges "
                         f"present: {', '.join(present) or f'none (a {benchmark} set)'}")
    return side


def judges_named(path: Path, benchmark: str, judges: Sequence[str] | None
                 ) -> list[str] | None:
    """`--judge` as the set's judgments name each judge: a judge typed as its run typed it (an
    alias, "B") is the one its judgments name ("B (openai/smolB)"; the manifest's
    `judge_names`); any other as given."""
    if not judges or benchmark in ("stss", "interview"):
        return list(judges) if judges else None
    marker = next(m for m, name in MARKERS.items() if name == benchmark)
    try:
        manifest = manifest_data(path / marker)
    except (OSError, ValueError, FileFormatError):  # the reader says it, naming the file
        return list(judges)
    names = manifest.get("judge_names") if isinstance(manifest, dict) else None
    names = names if isinstance(names, dict) else {}
    return [names.get(j, j) if isinstance(names.get(j, j), str) else j for j in judges]


def _choose(path: Path, row: str | None, rows: Sequence[str], what: str) -> str:
    if row is None:
        if len(rows) == 1:
            return rows[0]
        raise BoardError(f"{path} holds {len(rows)} {what}s ({', '.join(rows) or 'none'}): say "
                         f"which, as {path}:{what.upper()}")
    if row not in rows:
        raise BoardError(f"{path}: no {what} {row!r} in it; {what}s: {', '.join(rows)}")
    return row


def _stss(path: Path, row: str | None, rules: str) -> Side:
    from evaluation.stss import read_suite
    from evaluation.stss.board import episode_score
    from evaluation.stss.table import RULE_SETS, row_notes, table_row

    if rules not in RULE_SETS:
        raise BoardError(f"rules {rules!r}: expected one of {', '.join(RULE_SETS)}")
    suite = read_suite(path)
    names = {e.arch_dir: Path(e.architecture).stem or e.architecture for e in suite.episodes}
    if row is not None and row not in names:  # the architecture's name for its directory's
        row = next((d for d, name in names.items() if name == row), row)
    chosen = _choose(path, row, sorted(names), "arch")
    named = suite.options.get("named") if isinstance(suite.options.get("named"), dict) else {}
    model = named.get("model") or suite.options["model"]
    background = named.get("background_model") or suite.options.get("background_model") or ""
    side = Side("stss", path, f"{model} {names.get(chosen, '?')}",
                f"episode score (0-1; rules: {rules})", stratified=True, clustered="template",
                test_double=test_doubles([model, background]),
                config={"model": model, "architecture": names.get(chosen), "rules": rules,
                        "conditions": stss_conditions(suite.options)})
    scores = []
    for episode in suite.episodes:
        if episode.arch_dir != chosen:
            continue
        found = episode_score(episode, rules)
        key = f"{episode.template}/s{episode.seed}"
        if found.score is not None:
            scores.append(found.score)
        if found.scored:
            side.items[key] = Item(found.score.score, found.score.type.label, episode.template)
        else:
            side.absent[key] = found.why
    notes = row_notes(table_row(model, str(chosen), scores, background or None), side.label)
    side.notes = [n.strip().replace("**", "") for n in notes if n.strip()]
    return side


# What an STSS episode was run under besides the model and architecture compared, as a user
# names each (the suite's options, tasks/stss/plugin/suite.py): two sets differing in one of
# these are not the same episodes, whatever their template and seed.
STSS_CONDITIONS = {"world": "town", "background": "residents (--background)",
                   "same_day": "same day", "start": "window start", "until": "window end",
                   "background_model": "background model", "performer_routing": "routing",
                   "embedder": "embedder", "prompts": "prompts"}


def stss_conditions(options: dict[str, Any]) -> dict[str, Any]:
    window = options.get("window") if isinstance(options.get("window"), dict) else {}
    named = options.get("named") if isinstance(options.get("named"), dict) else {}
    # the background model by who it is (named), not as typed: two aliases of one model
    # are two models, one model typed two ways is one
    flat = {**options, **window,
            "background_model": named.get("background_model") or options.get("background_model")}
    flat.setdefault("world", "town")
    return {name: flat.get(key) for key, name in STSS_CONDITIONS.items()}


def unlike_conditions(a: Side, b: Side) -> str | None:
    """The conditions in which two sets' episodes were run that differ, said in one line; None
    when they were run alike (or the benchmark records none)."""
    was, now = a.config.get("conditions"), b.config.get("conditions")
    if was is None or now is None:
        return None
    shown = (lambda v: "the default" if v is None else  # noqa: E731
             ("on" if v else "off") if isinstance(v, bool) else str(v))
    differ = [f"{name} {shown(was.get(name))} (A) vs {shown(now.get(name))} (B)"
              for name in was if was.get(name) != now.get(name)]
    return "; ".join(differ) or None


def _kit_side(benchmark: str, bench, ledger: Ledger, measure: str, **kw) -> Side:
    roles = bench.manifest.get("roles") or {}
    # who played and judged, by what each resolved to (evaluation/kit/rows.py): the sets a
    # comparison merges as one configuration's seeds must agree in it, whatever was typed
    played = {role: role_identity(bench.manifest, role) for role in roles}
    side = Side(benchmark, bench.path, bench.label, measure,
                test_double=test_doubles([*roles.values(), *bench.judges]),
                config={"roles": roles, "judges": bench.judges,
                        "played": {**played, "judges": judge_identities(bench.manifest)},
                        "seed": bench.manifest.get("seed", 0)}, **kw)
    return side


def merge_sides(sides: Sequence[Side]) -> Side:
    """One run set of several directories of one configuration, each its own seed (a sweep's
    cells of one model and architecture): an item under each seed is a unit of its own,
    keyed ITEM@sSEED, and the item (or the unit above it) is the cluster the interval
    resamples, so the seeds of an item are drawn together. An item two directories hold
    under one seed counts once (the first's). Sets of other benchmarks, measures or
    conditions are a BoardError."""
    if len(sides) == 1:
        return sides[0]
    first = sides[0]
    for other in sides[1:]:
        if (other.benchmark, other.measure) != (first.benchmark, first.measure):
            raise BoardError(f"{first.path} and {other.path} are not one configuration's "
                             f"seeds: {first.benchmark}, {first.measure} vs {other.benchmark}, "
                             f"{other.measure}")
        if other.config.get("conditions") != first.config.get("conditions"):
            raise BoardError(f"{first.path} and {other.path} ran under other conditions: "
                             "not one configuration's seeds")
        was, now = first.config.get("played") or {}, other.config.get("played") or {}
        if was != now:
            differ = [f"{k} {was.get(k, '-')} vs {now.get(k, '-')}"
                      for k in dict.fromkeys([*was, *now]) if was.get(k) != now.get(k)]
            raise BoardError(f"{first.path} and {other.path} were played or judged by other "
                             f"models ({'; '.join(differ)}): not one configuration's seeds")
    seeds = [side.config.get("seed", 0) for side in sides]
    shown = ", ".join(map(str, dict.fromkeys(seeds)))
    merged = Side(first.benchmark, first.path, f"{first.label} (seeds {shown})", first.measure,
                  stratified=first.stratified, clustered=first.clustered or "item",
                  test_double=list(dict.fromkeys(t for s in sides for t in s.test_double)),
                  config={**first.config, "seed": None, "seeds": seeds,
                          "dirs": [str(s.path) for s in sides]})
    for side, seed in zip(sides, seeds, strict=True):
        for key, item in side.items.items():
            merged.items.setdefault(f"{key}@s{seed}",
                                    Item(item.value, item.stratum, item.cluster or key))
        for key, why in side.absent.items():
            if f"{key}@s{seed}" not in merged.items:
                merged.absent.setdefault(f"{key}@s{seed}", why)
        merged.notes += [f"{side.path.name}: {note}" for note in side.notes]
    return merged


def _close(side: Side, ledger: Ledger, selected: Sequence[str]) -> Side:
    """Every selected item without a value named with the ledger's reason."""
    named = {n.item: f"{n.what}: {n.reason}" if n.reason else n.what for n in ledger.named
             if n.item}
    for item in selected:
        if item not in side.items and item not in side.absent:
            side.absent[item] = named.get(item, "no usable value")
    if (note := ledger.note()) is not None:
        side.notes.append(note)
    return side


def _stss_lang(path: Path, metric: str, judges) -> Side:
    from evaluation.stss_lang import MANIFEST, read_judged

    if metric not in STSS_LANG_METRICS:
        raise BoardError(f"--metric {metric!r}: stss-lang compares one of "
                         f"{', '.join(STSS_LANG_METRICS)}")
    level, name = metric.split("_")
    bench = read_bench_dir(path, MANIFEST, "sandbox stss-lang", "STSS language-level")
    ledger = Ledger(bench.label)
    judged, _ = read_judged(bench, judges, ledger)
    side = _kit_side("stss-lang", bench, ledger, f"{level} {name.upper()} (0-1)",
                     clustered="task")
    for c in judged:
        scores = c.scores.get(level)
        if scores is None:
            side.absent[c.item] = f"no usable {level} judgment"
            continue
        kind = TaskType(c.task_type).label if c.task_type in TaskType._value2member_map_ \
            else c.task_type
        side.items[c.item] = Item(scores[name], kind, c.task)
    return _close(side, ledger, bench.selected)


def _pingpong(path: Path, judges) -> Side:
    from evaluation.pingpong import read_player

    player = read_player(path, judges)
    ledger = player.meta["ledger"]
    bench = read_bench_dir(path, "pingpong.json", "sandbox pingpong", "PingPong")
    side = _kit_side("pingpong", bench, ledger, "conversation final (1-5; before the length "
                     "factor, a constant per player)")
    for c in player.conversations:
        if c.final is not None:
            side.items[c.pair] = Item(c.final)
        else:
            side.absent[c.pair] = "refused by every judge" if c.refused else "no usable judgment"
    return _close(side, ledger, bench.selected)


def _simulbench(path: Path, judges) -> Side:
    from evaluation.simulbench.board import BENCHMARK, MANIFEST, read_scores

    bench = read_bench_dir(path, MANIFEST, f"sandbox {BENCHMARK}")
    ledger = Ledger(bench.label)
    side = _kit_side("simulbench", bench, ledger, "script rating (1-10)")
    for s in read_scores(bench, ledger, judges):
        if s.score is not None:
            side.items[s.item] = Item(s.score, s.category)
        else:
            side.absent[s.item] = "no usable rating"
    return _close(side, ledger, bench.selected)


def refutebench_metric(path: Path, metric: str | None, v1: bool) -> str:
    """The per-item measure compared for a RefuteBench set: `metric` checked against the names
    its board has (a misspelt one once compared 0 items with exit 0), the board's headline when
    None: `overall` for 2.0, the share of rule checks met (`v1_rule`) for public 1.0 files."""
    import re

    from evaluation.refutebench.metrics import FIDELITY_CURVE, KEPT_CURVE, OVERALL, REVISIONS
    from evaluation.refutebench.v1 import RULE

    if metric is None:
        return RULE if v1 else OVERALL
    judged = [OVERALL, *dict.fromkeys([*REVISIONS, *KEPT_CURVE, *FIDELITY_CURVE]),
              "persistent_direct", "persistent_final"]
    rule = metric == RULE or metric.startswith(RULE + ".")
    if not rule and metric not in judged and not re.fullmatch(r"c\d{1,3}", metric):
        raise BoardError(f"--metric {metric!r}: RefuteBench compares one of "
                         f"{', '.join(judged)}, cN (persistent, C=N), {RULE} or {RULE}.KIND "
                         "(1.0 files)")
    if rule != v1:
        kind = "a RefuteBench 1.0 set (rule-checked, no judge)" if v1 else \
            "a RefuteBench 2.0 set (judged)"
        what = f"{RULE} or {RULE}.KIND" if v1 else "a judged rating (overall, ...)"
        raise BoardError(f"--metric {metric!r}: {path} is {kind}; compare it by {what}")
    return metric


def _refutebench(path: Path, metric: str | None, judges) -> Side:
    from evaluation.refutebench.board import COMMAND, MANIFEST, build_board

    bench = read_bench_dir(path, MANIFEST, COMMAND)
    row = build_board([path], judges).rows[0]
    v1 = bool(row.scored) and all(s.setting == "v1" for s in row.scored)
    metric = refutebench_metric(path, metric, v1)
    measure = "share of 1.0 rule checks met (0-1)" if v1 else f"{metric} rating (1-5)"
    side = _kit_side("refutebench", bench, row.ledger, measure, stratified=True)
    for s in row.scored:
        value = s.metric(metric)
        if value is not None:
            side.items[s.item] = Item(value, s.family)
        else:
            side.absent[s.item] = f"no {metric} rating"
    return _close(side, row.ledger, bench.selected)


def _interview(path: Path, row: str | None, judges) -> Side:
    from evaluation.interview.board import read_manifest, read_rated

    manifest = read_manifest(path)
    archs = list(dict.fromkeys(e["architecture"] for e in manifest.get("selected", [])))
    arch = _choose(path, row, archs, "arch")
    ledgers: dict[str, Ledger] = {}
    rated = read_rated(path, manifest, ledgers, judges)
    model = str((manifest.get("config") or {}).get("model"))
    judges_heard = list(manifest.get("judges") or [])
    side = Side("interview", path, arch, "answer rating (1-5)",
                clustered="agent", test_double=test_doubles([model, *judges_heard]),
                config={"model": model, "architecture": arch, "judges": judges_heard})
    for a, category, score, agent, question in rated:
        if a == arch:
            side.items[f"{agent}/{question}"] = Item(score, category, agent)
    ledger = ledgers.get(arch) or Ledger(arch)
    for n in ledger.named:  # run/agent/question -> agent/question, as items are matched
        key = n.item.split("/", 1)[-1]
        if key not in side.items:
            side.absent[key] = f"{n.what}: {n.reason}" if n.reason else n.what
    if (note := ledger.note()) is not None:
        side.notes.append(note)
    return side
