"""Every scored unit of a run set as one row of the export (columns: `columns.UNIT_COLUMNS`),
read with the board's own readers, so the numbers are the boards' numbers.

    export = read_units(["runs/suite", "runs/pp-smol"], prices)   # a models file, or None
    export.rows          # one dict per unit, UNIT_COLUMNS' keys
    export.skipped       # every directory given or found that is no run set, and why

A unit is what a board averages: an STSS episode (both rule sets: `value`, `value_reference`),
a language-level scenario, a PingPong conversation, a SimulBench script, a RefuteBench dialogue
(2.0 and 1.0), an interview answer. Every unit the run set planned or selected is a row, with a
value or with why it has none (`status`, `reason`, from the board's accounting).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.compare.sides import MARKERS, refutebench_metric
from evaluation.kit import BoardError, Ledger, read_bench_dir
from sandbox.files import FileFormatError, json_line, read_text
from sandbox.llm import CallRecord, ModelsFile, model_name
from sandbox.log import CALLS, read_calls

from .columns import UNIT_COLUMNS
from .prices import Prices, price_of, tokens_price

HEADLINE = {"stss": "score", "stss-lang": "conversation_gcsr", "pingpong": "final",
            "simulbench": "rating", "interview": "rating"}
# A directory holding run sets is looked into this deep (a sweep: OUT/BENCHMARK/CELL/ARCH).
DEPTH = 4


@dataclass
class Export:
    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: why", every one named
    run_sets: list[tuple[str, Path]] = field(default_factory=list)  # (benchmark, dir)
    prices: Prices = field(default_factory=Prices)  # what its money was priced by


def find_run_sets(paths: Sequence[Path | str]) -> tuple[list[tuple[str, Path]], list[str]]:
    """(benchmark, directory) of every run set in `paths` or below them, and every path given
    that holds none (a run directory, a file, a foreign directory), with why."""
    found: list[tuple[str, Path]] = []
    skipped: list[str] = []
    for path in map(Path, paths):
        mine = _walk(path, DEPTH)
        if mine:
            found += mine
        elif not path.exists():
            skipped.append(f"{path}: no such directory")
        elif not path.is_dir():
            skipped.append(f"{path}: a file, not a run set")
        elif (path / "header.json").is_file():
            skipped.append(f"{path}: a run directory, not a run set (a suite, a benchmark "
                           "directory or an interview set)")
        else:
            skipped.append(f"{path}: no run set in it (none of {', '.join(MARKERS)})")
    seen, unique = set(), []
    for benchmark, path in found:
        if path.resolve() not in seen:  # one directory given twice counts once
            seen.add(path.resolve())
            unique.append((benchmark, path))
        else:
            skipped.append(f"{path}: given twice, exported once")
    return unique, skipped


def _walk(path: Path, depth: int) -> list[tuple[str, Path]]:
    if not path.is_dir() or (path.is_symlink() and depth < DEPTH):  # links given, not found
        return []
    marked = [name for marker, name in MARKERS.items() if (path / marker).is_file()]
    if marked:
        return [(marked[0], path)]
    if depth == 0 or (path / "header.json").is_file():
        return []
    out = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        out += _walk(child, depth - 1)
    return out


def read_units(paths: Sequence[Path | str], prices: Prices | ModelsFile | None = None
               ) -> Export:
    """Every unit of every run set in `paths`; a run set that does not read is skipped and
    named (the others are still written). Money: each run's calls priced by the models file
    it was made with, else by `prices` (prices.py)."""
    prices = prices if isinstance(prices, Prices) else Prices(prices)
    run_sets, skipped = find_run_sets(paths)
    export = Export(skipped=skipped, prices=prices)
    readers: dict[str, Callable[[Path, Any], list[dict[str, Any]]]] = {
        "stss": _stss, "stss-lang": _stss_lang, "pingpong": _pingpong,
        "simulbench": _simulbench, "refutebench": _refutebench, "interview": _interview}
    for benchmark, path in run_sets:
        try:
            rows = readers[benchmark](path, prices)
        except (BoardError, FileFormatError, OSError, ValueError, KeyError, TypeError) as exc:
            export.skipped.append(f"{path}: {benchmark} run set does not read: {exc}")
            continue
        export.run_sets.append((benchmark, path))
        export.rows += [{**dict.fromkeys(UNIT_COLUMNS), "benchmark": benchmark,
                         "run_set_dir": str(path), **row} for row in rows]
    export.skipped += prices.problems  # read while the units were: all said by now
    return export


# -- what every unit's run directory says ----------------------------------------------------
def role_of(record: CallRecord, default: str = "") -> str:
    """The role a call was made in: recorded with it, else `default` (an STSS episode on one
    model: the whole town), else its purpose (a line written before calls named a role)."""
    return record.role or default or record.tag


def run_facts(run_dir: Path, prices: Prices | None = None, default_role: str = ""
              ) -> dict[str, Any]:
    """Code version, wall time, and calls, tokens and money per role of one run directory
    (its header, result.json and calls.jsonl); what is missing is left null."""
    facts: dict[str, Any] = {"run_dir": str(run_dir)}
    if not run_dir.is_dir():
        return facts
    header = json_file(run_dir / "header.json")
    result = json_file(run_dir / "result.json")
    if isinstance(header, dict):
        facts["code_version"] = header.get("code_version")
    if isinstance(result, dict):
        facts["wall_s"] = result.get("wall_time_s")
    if not (run_dir / CALLS).is_file():
        return facts
    records, problems = read_calls(run_dir)
    price_list = prices.of_run(run_dir) if prices is not None else None
    usage: dict[str, dict[str, Any]] = {}
    endpoints: dict[str, str] = {}
    for record in records:
        role = role_of(record, default_role)
        spent = usage.setdefault(role, {"calls": 0, "tokens_in": 0, "tokens_out": 0,
                                        "money": None})
        spent["calls"] += 1
        spent["tokens_in"] += record.prompt_tokens
        spent["tokens_out"] += record.completion_tokens
        if (money := price_of(record, price_list)) is not None:
            spent["money"] = (spent["money"] or 0.0) + money
        if record.endpoint:
            endpoints[role] = record.endpoint
    facts.update(
        calls=sum(u["calls"] for u in usage.values()),
        tokens_in=sum(u["tokens_in"] for u in usage.values()),
        tokens_out=sum(u["tokens_out"] for u in usage.values()),
        usage=usage, endpoints=endpoints or None)
    priced = [u["money"] for u in usage.values() if u["money"] is not None]
    facts["money"] = sum(priced) if priced else None
    if problems:  # a cut line is counted nowhere: said with the unit
        facts["usage_uncounted"] = problems
    return facts


def json_file(path: Path) -> Any:
    """A run's JSON file, or None when it is missing or does not read."""
    try:
        return json_line(read_text(path))
    except (OSError, ValueError, FileFormatError):
        return None


def status_of(value: float | None, what: str = "", reason: str = "") -> str:
    """scored (in the board's means), damaged (its events do not read), unavailable (no call
    reached a model), else unscored (not run, unfinished, failed, unjudged, refused...)."""
    if value is not None:
        return "scored"
    if what == "damaged":
        return "damaged"
    if what == "unavailable" or reason.removeprefix("failed: ").startswith("unavailable"):
        return "unavailable"
    return "unscored"


def _why(ledger: Ledger) -> dict[str, tuple[str, str]]:
    """item -> (count, reason) of the first thing the ledger named of it."""
    out: dict[str, tuple[str, str]] = {}
    for n in ledger.named:
        if n.item and n.item not in out and n.what != "degraded":
            said = n.reason.startswith(n.what)  # "failed: ..." counted under failed
            text = n.reason if said else f"{n.what}: {n.reason}" if n.reason else n.what
            out[n.item] = (n.what, text if not n.file else f"{text} ({n.file})")
    return out


def _close(rows: dict[str, dict[str, Any]], ledger: Ledger, selected: Sequence[str],
           base: dict[str, Any], run_dir: Callable[[str], Path], prices
           ) -> list[dict[str, Any]]:
    """The rows of every selected item: valued ones as read, the others with the ledger's
    reason; each with its run's facts."""
    why = _why(ledger)
    out = []
    for item in sorted(dict.fromkeys(selected)):
        row = {**base, "item": item, **rows.get(item, {})}
        value = row.get("value")
        what, reason = why.get(item, ("", ""))
        if value is None:  # the accounting's words first: they name the file and the count
            row["reason"] = reason or row.get("reason") or "no usable value"
        elif what:  # on the board, but something was said of it (a judge unheard, stale)
            row["reason"] = reason
        row["status"] = status_of(value, what, row.get("reason") or "")
        facts = run_facts(run_dir(item), prices)
        row.update({k: v for k, v in facts.items() if k != "usage_uncounted"})
        if facts.get("usage_uncounted"):
            row["reason"] = "; ".join(filter(None, [row.get("reason"), "calls uncounted: " +
                                                    "; ".join(facts["usage_uncounted"])]))
        out.append(row)
    return out


def _per_judge(judges: Sequence[str], read: Callable[[list[str]], dict[str, float | None]]
               ) -> dict[str, dict[str, float]]:
    """item -> {judge: that judge's value}, the board's reader run once per judge."""
    out: dict[str, dict[str, float]] = {}
    for judge in judges:
        for item, value in read([judge]).items():
            if value is not None:
                out.setdefault(item, {})[judge] = value
    return out


def _kit_base(bench, evaluated: str, benchmark: str) -> dict[str, Any]:
    # Each role named as the boards name it: "alias (model id)" where the manifest recorded
    # what an alias resolved to, else as typed (a scripted or local model is itself).
    resolved = bench.manifest.get("resolved") or {}
    roles = {role: model_name(found["model"], found.get("alias"))
             if isinstance(found := resolved.get(role), dict) and found.get("model") else typed
             for role, typed in (bench.manifest.get("roles") or {}).items()}
    return {"run_set": bench.label, "model": roles.get(evaluated), "roles": roles or None,
            "measure": HEADLINE.get(benchmark), "seed": bench.manifest.get("seed")}


# -- the benchmarks ----------------------------------------------------------------------------
def _stss(path: Path, prices) -> list[dict[str, Any]]:
    from evaluation.stss import read_suite
    from evaluation.stss.board import episode_damage, episode_score
    from evaluation.stss.scoring import RULES

    suite = read_suite(path)
    options = suite.options
    background = options.get("background_model")
    rows = []
    for episode in suite.episodes:
        damage = episode_damage(episode.run_dir)
        ours, reference = (episode_score(episode, rules, damage) for rules in RULES)
        found = ours.score or reference.score
        measures = {}
        for name, e in (("", ours), ("_reference", reference)):
            if e.score is not None:
                measures["conversation_ratio" + name] = e.score.conversation_ratio
        value = ours.score.score if ours.scored else None
        reason = ours.why
        if value is not None and not reference.scored:
            reason = f"reference rules: {reference.why}"
        facts = run_facts(episode.run_dir, prices,
                          default_role="town" if not background else "")
        rows.append({
            "run_set": path.name, "item": f"{episode.template}/{episode.arch_dir}/s"
                                          f"{episode.seed}",
            "type": found.type.value if found is not None else None,
            "template": episode.template, "seed": episode.seed, "model": episode.model,
            "background_model": background, "architecture": Path(
                episode.architecture).stem or episode.architecture,
            "roles": {"evaluated": episode.model, **({"background": background}
                                                     if background else {})},
            "measure": HEADLINE["stss"], "value": value,
            "value_reference": reference.score.score if reference.scored else None,
            "measures": measures or None,
            "status": status_of(value, "damaged" if ours.damaged else "", reason),
            "reason": reason or None,
            **{k: v for k, v in facts.items() if k != "usage_uncounted"}})
    return rows


def _stss_lang(path: Path, prices) -> list[dict[str, Any]]:
    from evaluation.stss_lang import MANIFEST, read_judged

    bench = read_bench_dir(path, MANIFEST, "sandbox stss-lang", "STSS language-level")

    def read(judges):
        ledger = Ledger(bench.label)
        return read_judged(bench, judges, ledger)[0], ledger

    judged, ledger = read(None)
    by_judge = _per_judge(bench.judges, lambda j: {
        c.item: (c.scores.get("conversation") or {}).get("gcsr") for c in read(j)[0]})
    base = {**_kit_base(bench, "performer", "stss-lang"),
            "architecture": (bench.manifest.get("options") or {}).get("arch")}
    rows = {}
    for c in judged:
        measures = {f"{level}_{name}": value for level, scores in c.scores.items()
                    if scores for name, value in scores.items()}
        if c.action_score is not None:
            measures["action_score"] = c.action_score
        conversation = c.scores.get("conversation")
        rows[c.item] = {"type": c.task_type, "template": c.task,
                        "value": conversation["gcsr"] if conversation else None,
                        "measures": measures or None, "judges": by_judge.get(c.item),
                        "reason": None if conversation else "no usable conversation judgment"}
    return _close(rows, ledger, bench.selected, base, lambda i: path / "runs" / i, prices)


def _pingpong(path: Path, prices) -> list[dict[str, Any]]:
    from evaluation.pingpong import read_player

    bench = read_bench_dir(path, "pingpong.json", "sandbox pingpong", "PingPong")
    player = read_player(path)
    by_judge = _per_judge(bench.judges, lambda j: {
        c.pair: c.final for c in read_player(path, j).conversations})
    rows = {}
    for c in player.conversations:
        measures = dict(c.criteria or {})
        measures["refused"] = float(c.refused)
        rows[c.pair] = {"value": c.final, "measures": measures, "judges": by_judge.get(c.pair),
                        "reason": None if c.final is not None else
                        "refused by every judge" if c.refused else "no usable judgment"}
    base = {**_kit_base(bench, "player", "pingpong"), "run_set": player.label}
    return _close(rows, player.meta["ledger"], bench.selected, base,
                  lambda i: path / "runs" / i, prices)


def _simulbench(path: Path, prices) -> list[dict[str, Any]]:
    from evaluation.simulbench.board import BENCHMARK, MANIFEST, read_scores

    bench = read_bench_dir(path, MANIFEST, f"sandbox {BENCHMARK}")
    ledger = Ledger(bench.label)
    scores = read_scores(bench, ledger)
    by_judge = _per_judge(bench.judges, lambda j: {
        s.item: s.score for s in read_scores(bench, Ledger(bench.label), j)})
    rows = {s.item: {"type": s.category, "template": s.act, "value": s.score,
                     "measures": {"turn": s.turn_num} if s.turn_num else None,
                     "judges": by_judge.get(s.item),
                     "reason": None if s.score is not None else "no usable rating"}
            for s in scores}
    return _close(rows, ledger, bench.selected, _kit_base(bench, "simulator", "simulbench"),
                  lambda i: path / "runs" / i, prices)


def _refutebench(path: Path, prices) -> list[dict[str, Any]]:
    from evaluation.refutebench.board import COMMAND, MANIFEST, build_board

    bench = read_bench_dir(path, MANIFEST, COMMAND)
    row = build_board([path]).rows[0]
    v1 = bool(row.scored) and all(s.setting == "v1" for s in row.scored)
    metric = refutebench_metric(path, None, v1)
    # A 1.0 file is checked by its rules, no judge's: no judge's values
    by_judge = {} if v1 else _per_judge(bench.judges, lambda j: {
        s.item: s.metric(metric) for s in build_board([path], j).rows[0].scored})
    rows = {}
    for s in row.scored:
        value = s.metric(metric)
        rows[s.item] = {"type": s.family, "template": s.setting,
                        "value": value, "measures": dict(s.ratings) or None,
                        "judges": by_judge.get(s.item),
                        "reason": None if value is not None else f"no {metric} rating"}
    base = {**_kit_base(bench, "model", "refutebench"), "measure": metric}
    return _close(rows, row.ledger, bench.selected, base, lambda i: path / "runs" / i, prices)


def _interview(path: Path, prices) -> list[dict[str, Any]]:
    from evaluation.interview.board import read_manifest, read_rated
    from sandbox.interviews import ANSWERS, load_answer
    from sandbox.judgments import read_judgments

    manifest = read_manifest(path)
    model = (manifest.get("config") or {}).get("model")
    judges = list(manifest.get("judges") or [])

    def rated(only):
        ledgers: dict[str, Ledger] = {}
        found = {(a, agent, question): (category, score)
                 for a, category, score, agent, question in read_rated(path, manifest,
                                                                      ledgers, only)}
        return found, ledgers

    found, ledgers = rated(None)
    per_judge = {j: rated([j])[0] for j in judges}
    # The set's calls.jsonl names each model's alias (the answers' and the judges' calls;
    # not their items): what prices them. An interview set records no models file of its own.
    price_list = prices.of_run(None) if prices is not None else None
    records, _ = read_calls(path) if (path / CALLS).is_file() else ([], [])
    aliases = {r.model: r.endpoint for r in records if r.endpoint}
    rows = []
    for entry in manifest.get("selected", []):
        arch, item = entry["architecture"], entry["item"]
        answer = load_answer(path / ANSWERS / item)
        key = (arch, answer.agent, answer.question_id) if answer is not None else None
        category, value = found.get(key, (entry.get("category"), None))
        what, reason = _why(ledgers.get(arch) or Ledger(arch)).get(item, ("", ""))
        if value is None and not reason:
            reason = "no usable rating"
        row = {"run_set": path.name, "item": item, "type": category or None,
               "template": answer.question_id if answer else None, "model": model,
               "architecture": arch, "roles": {"agent": model, "judge": ", ".join(judges)},
               "measure": HEADLINE["interview"], "value": value,
               "judges": {j: per_judge[j][key][1] for j in judges
                          if key in per_judge[j]} or None,
               "status": status_of(value, what, reason),
               "reason": None if value is not None and not what else reason,
               "run_dir": str(path / ANSWERS / item)}
        if answer is not None:  # every call is in the set's calls.jsonl too (--calls)
            usage = {"agent": _spent([(answer.model, answer.prompt_tokens,
                                       answer.completion_tokens)], aliases, price_list)}
            # each judgment saved beside the answer is one call of its judge (one left by a
            # judge since dropped from the set was still paid for)
            judged, unreadable = read_judgments(path / ANSWERS / item)
            if judged:
                usage["judge"] = _spent([(j.model, j.prompt_tokens, j.completion_tokens)
                                         for j in judged], aliases, price_list)
            priced = [u["money"] for u in usage.values() if u["money"] is not None]
            row.update(calls=sum(u["calls"] for u in usage.values()),
                       tokens_in=sum(u["tokens_in"] for u in usage.values()),
                       tokens_out=sum(u["tokens_out"] for u in usage.values()),
                       usage=usage, money=sum(priced) if priced else None,
                       endpoints={role: aliases[m] for role, m in (
                           ("agent", answer.model), *(("judge", j.model) for j in judged))
                           if m in aliases} or None,
                       wall_s=answer.latency_s)
            if unreadable:  # a judgment that does not read: its call counted nowhere
                row["reason"] = "; ".join(filter(None, [row.get("reason"), "judge calls "
                                          "uncounted: " + "; ".join(f"{u.path.name}: {u.reason}"
                                                                    for u in unreadable)]))
        rows.append(row)
    return rows


def _spent(calls: Sequence[tuple[str, int, int]], aliases: dict[str, str],
           prices) -> dict[str, Any]:
    """A role's usage from its calls' (model, tokens in, tokens out), priced by the alias
    each model was reached by."""
    money = [tokens_price(aliases.get(model, model), t_in, t_out, prices)
             for model, t_in, t_out in calls]
    return {"calls": len(calls), "tokens_in": sum(c[1] for c in calls),
            "tokens_out": sum(c[2] for c in calls),
            "money": sum(m for m in money if m is not None)
            if any(m is not None for m in money) else None}
