"""One Inspect eval log per run set (`sandbox export DIR... --inspect LOGDIR`), built with
inspect_ai's own log API (the `inspect` extra), so `inspect view`, `inspect log` and
`inspect_ai.analysis.samples_df()` read our results.

    written = write_inspect_logs(read_units(dirs), "logs")   # LOGDIR/<benchmark>_<set>.eval

A log's task is the benchmark and the run set ("stss suite ga_tdp": a suite or an interview set
gives a log per architecture, as its board a row), its model the evaluated model, the other
roles its model roles. One sample per unit of the export: its transcript as messages (a
dialogue's turns, the evaluated side as the assistant; an STSS episode: the performer's
conversations, then a summary of what it did), its scores (the unit's measure, the reference
rule set's for STSS, one per judge: `by_<judge model>`), each score's answer what the unit
answered (the evaluated model's last words; an STSS performer's last action, in short), its
export row and item config as metadata, and an error when its run failed, was damaged or
reached no model. The log's ids, its times (the runs' own: their headers' `created_at`), its
messages' ids and its zip's member times come from the run set, so exporting it again gives
the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import re
from datetime import datetime, timedelta
from pathlib import Path
from statistics import mean
from typing import Any

from sandbox.log import RunFormatError, load_run, run_outcome
from sandbox.storage import write_atomic

from .formats import ExportError
from .units import Export, json_file

INSPECT_EXTRA = "pip install '.[inspect]'"
SUMMARY_ACTIONS = 8  # the performer's first actions a summary quotes
EPOCH = "1970-01-01T00:00:00"  # a log's time when none of its runs says when it ran


def check_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise ExportError(f"Inspect logs need inspect_ai: {INSPECT_EXTRA}") from None


def judge_score_name(judge: str) -> str:
    """A judge's score name in a log: `by_` and the model, other characters as `_`."""
    return "by_" + re.sub(r"[^A-Za-z0-9]+", "_", judge).strip("_")


def write_inspect_logs(export: Export, log_dir: Path | str) -> list[Path]:
    """One `.eval` log per run set of `export`, into `log_dir`; the files written."""
    check_inspect()
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    written = []
    names: set[str] = set()
    for benchmark, path in export.run_sets:
        units = [r for r in export.rows if r["run_set_dir"] == str(path)]
        # A suite or an interview set holds one configuration per architecture, each its own
        # board row (`sandbox compare DIR:ARCH`): a log each, so `inspect view` sets them side
        # by side instead of pooling them.
        archs = list(dict.fromkeys(u.get("architecture") for u in units)) \
            if benchmark in ("stss", "interview") else [None]
        for arch in archs:
            mine = [u for u in units if arch is None or u.get("architecture") == arch]
            written.append(_write(benchmark, path, arch, mine, log_dir, names))
    return written


def _write(benchmark: str, path: Path, arch: str | None, units: list[dict[str, Any]],
           log_dir: Path, names: set[str]) -> Path:
    from inspect_ai.log import write_eval_log

    log = eval_log(benchmark, path, units, arch)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_",
                  f"{benchmark}_{path.name}" + (f"_{arch}" if arch else ""))
    while name in names:  # two sets of one name (two sweeps' cells): told apart
        name += "_"
    names.add(name)
    target = log_dir / f"{name}.eval"
    write_eval_log(log, str(target))
    # Inspect's zip writer stamps each member with the clock: set them to the log's own time
    # (when the run set's last run ended), so the same run set exports to the same bytes.
    stamp_zip(target, datetime.fromisoformat(str(log.eval.created)).replace(tzinfo=None))
    return target


def eval_log(benchmark: str, path: Path, units: list[dict[str, Any]], arch: str | None = None):
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelUsage
    from inspect_ai.model._model_config import ModelConfig

    first = units[0] if units else {}
    # the viewer tells logs apart by their ids: the same run set, the same ids
    task_id = f"{benchmark}:{path.resolve()}" + (f":{arch}" if arch else "")
    label = (first.get("run_set") or path.name) + (f" {arch}" if arch else "")
    model = first.get("model") or "none/none"
    evaluated = next((role for role, m in (first.get("roles") or {}).items() if m == model),
                     None)
    others = {role: ModelConfig(model=m) for role, m in (first.get("roles") or {}).items()
              if role != evaluated and m}
    samples = [_sample(benchmark, u) for u in units]
    started, created = _times(benchmark, units)
    scores = []
    for name in dict.fromkeys(s for sample in samples for s in (sample.scores or {})):
        values = [float(sample.scores[name].value) for sample in samples
                  if sample.scores and name in sample.scores]
        scores.append(EvalScore(name=name, scorer=name, scored_samples=len(values),
                                unscored_samples=len(samples) - len(values),
                                metrics={"mean": EvalMetric(name="mean", value=mean(values))}))
    usage: dict[str, ModelUsage] = {}
    for u in units:
        for role, spent in (u.get("usage") or {}).items():
            who = (u.get("roles") or {}).get(role) or model
            found = usage.setdefault(who, ModelUsage())
            found.input_tokens += spent["tokens_in"]
            found.output_tokens += spent["tokens_out"]
            found.total_tokens += spent["tokens_in"] + spent["tokens_out"]
            if spent.get("money") is not None:
                found.total_cost = (found.total_cost or 0.0) + spent["money"]
    spec = EvalSpec(
        created=created, task=f"{benchmark} {label}", task_display_name=f"{benchmark} {label}",
        task_id=task_id, eval_id=digest(task_id)[:22], run_id=digest(str(path))[:22],
        dataset=EvalDataset(name=label, location=str(path), samples=len(samples),
                            sample_ids=[s.id for s in samples]),
        model=model, model_roles=others or None, config=EvalConfig(),
        metadata={"run_set": label, "run_set_dir": str(path), "benchmark": benchmark,
                  "code_version": first.get("code_version"),
                  "architecture": first.get("architecture"),
                  "background_model": first.get("background_model")})
    return EvalLog(
        eval=spec, status="success",
        results=EvalResults(total_samples=len(samples),
                            completed_samples=sum(s.error is None for s in samples),
                            scores=scores),
        stats=EvalStats(started_at=started, completed_at=created, model_usage=usage),
        samples=samples)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _times(benchmark: str, units: list[dict[str, Any]]) -> tuple[str, str]:
    """When the run set's first run started and its last one ended, as its files say (a run's
    header `created_at` and result `wall_time_s`; an interview answer's `created_at`), not
    when they were copied: the same log for the same run set, wherever it lies."""
    starts: list[datetime] = []
    ends: list[datetime] = []
    for u in units:
        if not u.get("run_dir"):
            continue
        run_dir = Path(u["run_dir"])
        made = json_file(run_dir / ("answer.json" if benchmark == "interview" else "header.json"))
        try:
            start = datetime.fromisoformat(made["created_at"])
        except (TypeError, KeyError, ValueError):
            continue
        starts.append(start)
        result = json_file(run_dir / "result.json")
        wall = result.get("wall_time_s") if isinstance(result, dict) else None
        ends.append(start + timedelta(seconds=wall) if isinstance(wall, (int, float))
                    else start)
    if not starts:
        return EPOCH, EPOCH
    return (min(starts).isoformat(timespec="seconds"),
            max(ends).isoformat(timespec="seconds"))


def stamp_zip(path: Path, when: datetime) -> None:
    """Set every member's modification time in the zip at `path` to `when`, in place: the
    two-byte DOS time and date of each local file header and of its central directory entry
    (the zip format's own fields; the compressed data is left as written)."""
    import zipfile

    when = max(when, datetime(1980, 1, 1))  # the DOS date's first day
    time = (when.hour << 11 | when.minute << 5 | when.second // 2).to_bytes(2, "little")
    date = ((when.year - 1980) << 9 | when.month << 5 | when.day).to_bytes(2, "little")
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        members = zf.infolist()
        central = zf.start_dir  # type: ignore[attr-defined]
    for info in members:
        local = info.header_offset
        if data[local:local + 4] != b"PK\x03\x04" or data[central:central + 4] != b"PK\x01\x02":
            raise ExportError(f"{path}: not the zip Inspect writes; its times left as they are")
        data[local + 10:local + 14] = time + date
        data[central + 12:central + 16] = time + date
        names, extra, comment = (int.from_bytes(data[central + o:central + o + 2], "little")
                                 for o in (28, 30, 32))
        central += 46 + names + extra + comment
    write_atomic(path, bytes(data))


def _sample(benchmark: str, unit: dict[str, Any]):
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    run_dir = Path(unit["run_dir"]) if unit.get("run_dir") else None
    messages, config, answer = _transcript(benchmark, unit, run_dir)
    # Inspect gives every message a random id: ours come from the unit and the place, so
    # the same run set gives the same log
    where = f"{unit['run_set_dir']}:{unit['item']}"
    for i, message in enumerate(messages):
        message.id = digest(f"{where}:{i}")[:22]
    scores = {}
    if unit.get("value") is not None:
        scores[unit["measure"]] = Score(value=unit["value"], answer=answer,
                                        explanation=unit.get("reason"))
    if unit.get("value_reference") is not None:
        scores[f"{unit['measure']}_reference"] = Score(value=unit["value_reference"],
                                                       answer=answer)
    for judge, value in (unit.get("judges") or {}).items():
        scores[judge_score_name(judge)] = Score(value=value, answer=answer,
                                                metadata={"judge": judge})
    error = None
    if unit["status"] in ("damaged", "unavailable") or (
            run_dir is not None and benchmark != "interview" and
            run_outcome(run_dir).state != "finished"):
        error = EvalError(message=unit.get("reason") or unit["status"], traceback="",
                          traceback_ansi="")
    usage = {(unit.get("roles") or {}).get(role) or role: ModelUsage(
        input_tokens=s["tokens_in"], output_tokens=s["tokens_out"],
        total_tokens=s["tokens_in"] + s["tokens_out"], total_cost=s.get("money"))
        for role, s in (unit.get("usage") or {}).items()}
    first_user = next((m.text for m in messages if m.role == "user"), unit["item"])
    metadata = {k: v for k, v in unit.items() if v is not None}
    if config:
        metadata["config"] = config
    said = [m for m in messages if m.role == "assistant"]
    output = ModelOutput.from_content(unit.get("model") or "", said[-1].text) if said else \
        ModelOutput()
    for choice in output.choices:
        choice.message.id = digest(f"{where}:output")[:22]
    return EvalSample(id=unit["item"], epoch=1, input=first_user or unit["item"], target="",
                      messages=messages, output=output, scores=scores or None,
                      metadata=metadata,
                      model_usage=usage, total_time=unit.get("wall_s"), error=error)


def _transcript(benchmark: str, unit: dict[str, Any], run_dir: Path | None):
    """(messages, the item's config, what the unit answered) of one unit: the answer is the
    evaluated model's last words (an interview's answer), an STSS performer's last action and
    what it did in short; no messages and no answer when its run does not read."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    if benchmark == "interview":
        return _interview(unit, run_dir)
    if run_dir is None or not (run_dir / "header.json").is_file():
        return [], None, None
    try:
        run = load_run(run_dir)
    except (RunFormatError, OSError, ValueError):
        return [], None, None
    config = dict(run.header.config)
    config.pop("benchmark_command", None)
    if benchmark == "stss":
        messages, answer = _stss(run, unit)
        return messages, config, answer
    said = [e for e in run.events if e.kind == "utterance" and
            e.conversation == config.get("conversation", "c0")]
    said.sort(key=lambda e: e.turn)
    roles = unit.get("roles") or {}
    evaluated = next((r for r, m in roles.items() if m == unit.get("model")), "")
    speaker = config.get(f"{evaluated}_agent")
    if speaker is None:  # the side that does not open the dialogue (the user does)
        opener = said[0].agent if said else None
        speaker = next((e.agent for e in said if e.agent != opener), None)
    messages = [ChatMessageAssistant(content=e.text, model=unit.get("model"))
                if e.agent == speaker else ChatMessageUser(content=e.text) for e in said]
    answer = next((e.text for e in reversed(said) if e.agent == speaker), None)
    if not messages:
        messages = [ChatMessageSystem(content="(no dialogue in this run's events)")]
    return messages, config, answer


def _stss(run, unit: dict[str, Any]):
    """The performer's task, its conversations, each opened by who, when and where, and what
    it did (a system message: the viewer shows it first); and the answer in short: its last
    action, where, and how many actions and conversations."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    task = run.header.config.get("stss_task") or {}
    performer = task.get("performer")
    messages = [ChatMessageUser(content=f"{performer}'s task: {task.get('goal', '?')}")]
    started = {e.conversation: e for e in run.events if e.kind == "conversation_started"
               and performer in e.participants}
    said: dict[str, list] = {}
    for e in run.events:
        if e.kind == "utterance" and e.conversation in started:
            said.setdefault(e.conversation, []).append(e)
    for conversation, start in started.items():
        others = ", ".join(p for p in start.participants if p != performer)
        # A user line, not a system one: Inspect's viewer gathers every system message at the
        # top, which would part each conversation from the words said in it.
        messages.append(ChatMessageUser(
            content=f"[Conversation with {others} at {_clock(run, start.t)}"
                    f"{' in ' + start.location if start.location else ''}]"))
        for e in sorted(said.get(conversation, []), key=lambda e: e.turn):
            messages.append(ChatMessageAssistant(content=e.text, model=unit.get("model"))
                            if e.agent == performer else
                            ChatMessageUser(content=f"{e.agent}: {e.text}"))
    actions = [e for e in run.events if e.kind == "action_started" and e.agent == performer]
    shown = "; ".join(f"{_clock(run, e.t)} {e.description}" for e in actions[:SUMMARY_ACTIONS])
    more = f" (and {len(actions) - SUMMARY_ACTIONS} more)" if len(actions) > \
        SUMMARY_ACTIONS else ""
    ours, reference = (_shown(unit.get(k)) for k in ("value", "value_reference"))
    why = f"; {unit['reason']}" if unit.get("reason") else ""
    messages.append(ChatMessageSystem(content=(
        f"What {performer} did: {len(actions)} actions: {shown}{more}. {len(started)} "
        f"conversations. Score (ours): {ours}"
        f"{'' if reference == '-' else f'; reference rules: {reference}'}{why}.")))
    # The answer column's short form: where the performer ended up, and how much it did
    last = actions[-1] if actions else None
    answer = (f"last: {_clock(run, last.t)} {last.description} at "
              f"{last.location.split(':', 1)[-1]}" if last else "no action") + \
        f" ({len(actions)} actions, {len(started)} conversations)"
    return messages, answer


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _clock(run, t: float) -> str:
    return (run.header.start_time + timedelta(seconds=t)).strftime("%Y-%m-%d %H:%M")


def _interview(unit: dict[str, Any], folder: Path | None):
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    from sandbox.interviews import load_answer

    answer = load_answer(folder) if folder is not None else None
    if answer is None:
        return [], None, None
    memories = "\n".join(f"- {m.clock:%Y-%m-%d %H:%M} {m.description}"
                         for m in answer.memories)
    messages = [ChatMessageSystem(content=f"{answer.agent} ({answer.architecture}) at "
                                          f"{answer.clock:%Y-%m-%d %H:%M}, of run {answer.run}"
                                          + (f"; memories recalled:\n{memories}"
                                             if memories else "")),
                ChatMessageUser(content=answer.question),
                ChatMessageAssistant(content=answer.answer, model=answer.model)]
    config = {"agent": answer.agent, "architecture": answer.architecture, "at": answer.at,
              "question_id": answer.question_id, "category": answer.category,
              "run": answer.run}
    return messages, config, answer.answer
