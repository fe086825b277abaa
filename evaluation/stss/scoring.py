"""Rule-based STSS scorers (STSS paper, appendix A.1): they read only the log.

    score = score_run(load_run("runs/x"))      # STSSScore: value, rule, evidence
    write_score("runs/x")                       # the same, saved as runs/x/score.json

These are our rules (`rules="ours"`, the default); `rules="reference"` scores as the STSS
authors' public scorer does (reference.py; evaluation/README.md compares them rule by rule).

The task comes from the run header (`config.stss_task`); what agents did comes from their
`action_started` events, merged into activities (evaluation.stss.timeline). Rules:

- keyword filter: an activity counts only if its description contains the step's keyword or an
  alternative (case-insensitive); conversations never count as the task's action.
- time window [start, start + duration]: by default an activity counts if it is going on at some
  moment of the window (`window="overlap"`: someone who arrived at 16:55 for a 17:00 party and
  stayed counts; merged activities make the paper's start-only test miss them); `window="start"`
  is the paper's code: the activity must start inside the window.
- place: the activity's arena lies within the step's location (a sector or an arena).
- public / online activity: participants = non-performers with one counted activity (online: at
  any place); score = min(participants / expected, 1), expected = ceil(background / 2).
- inviting companions: the performer must do it at the place on the event day ("on {date}"; the
  day before does not count); at the moment most others do it there together with the
  performer, score = min(others / expected, 1), expected = ceil(background / 3).
- appointment: 1 if performer and target do it at the same time in the same arena, 0.5 at the
  same time in different arenas, else 0.
- asking for help: per helper (not the performer), 1 if they did every step in order, 0.5 if at
  least one step, else 0; the best helper's score. Per helper because the steps hand one thing
  on: the books one person borrows are the ones that person delivers.
- conversation ratio: distinct people the performer talked with before the activity (the window
  start; without a fixed time, the moment that scored, else the end) / expected; appointment:
  1 if the target was talked with, else 0; asking for help: none.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.events import AgentJoined
from sandbox.files import FileFormatError, json_line, read_text
from sandbox.llm import model_name
from sandbox.log import SCORE, Run, load_run
from sandbox.storage import write_atomic
from tasks.stss.instantiate import STSSTask, TaskStep
from tasks.stss.schema import TaskType
from worlds.address import within

from . import reference
from .timeline import Activity, activities, conversation_partners, episode_end

SCORE_FILE = SCORE  # the kernel names it: `--overwrite` removes a stale one
REFERENCE_SCORE = "score.reference.json"  # the same, by the STSS authors' rules (sandbox.log
#                                           SCORES: `--overwrite` removes a stale one too)
DEGRADED = "degraded run"  # a warning's opening words (sandbox.runner: SANDBOX_DEGRADED_ABOVE)
KEEP_REJECTED = 3  # per agent and rule; the rest are counted in one note


class ScoreError(Exception):
    """The run cannot be scored (not an STSS run, unreadable task)."""


Rules = Literal["ours", "reference"]
RULES: tuple[Rules, ...] = ("ours", "reference")


class ScoringOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # ours: the rules above; reference: the STSS authors' public scorer (reference.py)
    rules: Rules = "ours"
    window: Literal["overlap", "start"] = "overlap"  # ours only
    sec_per_step: int = Field(default=60, ge=1)  # the reference's step (its runs' meta)

    @property
    def file(self) -> str:
        """Where a run keeps the score these rules made (both can sit side by side)."""
        return SCORE_FILE if self.rules == "ours" else REFERENCE_SCORE


class Evidence(BaseModel):
    """One activity (or fact) a rule looked at, and what the rule decided."""

    agent: str
    rule: str  # keyword, window, day, place, performer, together, appointment, order, talked
    verdict: Literal["counted", "rejected", "note"]
    reason: str
    event: int | None = None  # index of the event in events.jsonl (0-based, in file order)
    action: str | None = None
    location: str | None = None
    start: str | None = None  # "2024-02-14 17:05"
    end: str | None = None


class STSSScore(BaseModel):
    """The score of one episode, with the evidence for it."""

    run: str
    template: str
    type: TaskType
    performer: str
    target: str | None = None
    architecture: str = ""  # the performer's
    model: str = ""  # the performer's model id: the evaluated model
    # The rest of the town's model when it was not the performer's (the STSS protocol's
    # background model, `--background-model`: header config.roles), else absent.
    background_model: str | None = Field(default=None, exclude_if=lambda v: v is None)
    seed: int
    score: float | None  # None: unscored (`unscored` says why)
    rule: str  # the formula with its numbers
    rules: Rules = "ours"  # which rule set decided
    unscored: str | None = None  # why the rule set could not score this run
    expected: int
    participants: list[str] = Field(default_factory=list)
    conversation_ratio: float | None = None
    talked_with: list[str] = Field(default_factory=list)
    window: dict[str, str] | None = None
    options: ScoringOptions = Field(default_factory=ScoringOptions)
    evidence: list[Evidence] = Field(default_factory=list)
    # The run's own warnings (result.json): nobody moved, nobody talked, no model answer. A
    # score with warnings is not a measurement of the agents, whatever its value.
    warnings: list[str] = Field(default_factory=list)


class _Context:
    """What every rule needs: the task, activities, clock, window in sim seconds."""

    def __init__(self, run: Run, task: STSSTask, options: ScoringOptions):
        self.run, self.task, self.options = run, task, options
        self.t0 = run.header.start_time
        self.end = episode_end(run.events, run.result.sim_time_s if run.result else None)
        self.acts = activities(run.events, self.end)
        self.window = None
        if task.start is not None and task.end is not None:
            self.window = (self.seconds(task.start), self.seconds(task.end))
        self.day = None  # inviting companions: "on {date}", no time, so only the event day
        if task.type is TaskType.inviting_companions:
            midnight = self.seconds(datetime.combine(task.date, time()))
            self.day = (midnight, midnight + 24 * 3600)
        joined = [e.agent for e in run.events if isinstance(e, AgentJoined) and e.agent]
        self.others = [a for a in dict.fromkeys([*task.background, *joined, *self.acts])
                       if a != task.performer]
        self.evidence: list[Evidence] = []

    def seconds(self, when: datetime) -> float:
        return (when - self.t0).total_seconds()

    def clock(self, t: float) -> str:
        return (self.t0 + timedelta(seconds=t)).strftime("%Y-%m-%d %H:%M")

    def hhmm(self, t: float) -> str:
        """HH:MM on the event day, else with the date (a day-before party is not tonight's)."""
        when = self.t0 + timedelta(seconds=t)
        return when.strftime("%H:%M") if when.date() == self.task.date else \
            when.strftime("%b %d %H:%M")

    def note(self, activity: Activity | None, rule: str, verdict: str, reason: str,
             agent: str | None = None) -> None:
        if activity is None:
            self.evidence.append(Evidence(agent=agent or "", rule=rule, verdict=verdict,
                                          reason=reason))
            return
        self.evidence.append(Evidence(
            agent=activity.agent, rule=rule, verdict=verdict, reason=reason,
            event=activity.event, action=activity.description, location=activity.location,
            start=self.clock(activity.start), end=self.clock(activity.end)))

    # -- the filters ----------------------------------------------------------------------------
    def keyword(self, activity: Activity, step: TaskStep) -> str | None:
        if activity.conversation:
            return None
        text = activity.description.lower()
        return next((k for k in step.keywords if k.lower() in text), None)

    def window_problem(self, activity: Activity) -> str | None:
        if self.window is None:
            return None
        start, end = self.window
        if activity.start > end:
            return (f"started at {self.hhmm(activity.start)}, after the window "
                    f"{self.hhmm(start)}-{self.hhmm(end)} closed")
        if self.options.window == "start" and activity.start < start:
            return (f"started at {self.hhmm(activity.start)}, before the window opened at "
                    f"{self.hhmm(start)} (start-only rule)")
        if activity.end <= start and not activity.start == start:
            return (f"was over at {self.hhmm(activity.end)}, before the window opened at "
                    f"{self.hhmm(start)}")
        return None

    def day_problem(self, activity: Activity) -> str | None:
        if self.day is None:
            return None
        midnight, next_midnight = self.day
        if activity.start < next_midnight and (activity.start >= midnight
                                               or activity.end > midnight):
            return None
        return f"at {self.hhmm(activity.start)}, not on the event day {self.task.date}"

    def place_problem(self, activity: Activity, step: TaskStep) -> str | None:
        if step.location is None or within(step.location, activity.location):
            return None
        return f"at {activity.location}, not within {step.location}"

    def candidates(self, agent: str, step: TaskStep, *, report: bool = True
                   ) -> list[Activity]:
        """The agent's activities that pass keyword, window and place; rejections noted."""
        kept = []
        for activity in self.acts.get(agent, []):
            word = self.keyword(activity, step)
            if word is None:
                # A passer-by: there, then, doing something else. Worth saying why not.
                if report and not activity.conversation and step.location is not None and \
                        self.window is not None and self.window_problem(activity) is None \
                        and self.place_problem(activity, step) is None:
                    self.note(activity, "keyword", "rejected",
                              f"at the place in the window, but the action matches none of "
                              f"{', '.join(step.keywords)}")
                continue
            problem, rule = self.window_problem(activity), "window"
            if problem is None:
                problem, rule = self.day_problem(activity), "day"
            if problem is None:
                problem, rule = self.place_problem(activity, step), "place"
            if problem is not None:
                if report:
                    self.note(activity, rule, "rejected", f"matches '{word}' but {problem}")
                continue
            kept.append(activity)
        return kept

    def nothing_matched(self, agent: str, steps: list[TaskStep]) -> None:
        words = sorted({k for s in steps for k in s.keywords})
        self.note(None, "keyword", "note", f"no action matched {', '.join(words)}", agent)


Outcome = tuple[float, str, list[str], float | None]  # score, rule, participants, talk cutoff


def _participation(ctx: _Context) -> Outcome:
    """Public and online activity."""
    step = ctx.task.steps[0]
    participants = []
    for agent in ctx.others:
        before = len(ctx.evidence)
        found = ctx.candidates(agent, step)
        if found:
            participants.append(agent)
            where = "" if step.location is None else " at the place"
            ctx.note(found[0], "keyword", "counted",
                     f"matches '{ctx.keyword(found[0], step)}'{where} in the window")
        elif len(ctx.evidence) == before:
            ctx.nothing_matched(agent, [step])
    n, expected = len(participants), ctx.task.expected
    return (min(n / expected, 1.0), f"min(participants / expected, 1) = min({n}/{expected}, 1)",
            participants, ctx.window[0] if ctx.window else None)


def _companions(ctx: _Context) -> Outcome:
    """Inviting companions: the most others doing it there together with the performer."""
    step, performer = ctx.task.steps[0], ctx.task.performer
    own = ctx.candidates(performer, step)
    theirs = {agent: ctx.candidates(agent, step) for agent in ctx.others}
    expected = ctx.task.expected
    if not own:
        ctx.note(None, "performer", "rejected",
                 f"the performer never did '{step.keyword}' at {step.location} on the event "
                 "day: the initiator must attend, so nobody counts", performer)
        return 0.0, f"performer absent: 0/{expected}", [], None
    best: tuple[int, float, list[str]] = (-1, own[0].start, [])
    for mine in own:
        first = max(mine.start, ctx.day[0])  # from midnight, for one begun the day before
        moments = {first} | {a.start for acts in theirs.values() for a in acts
                             if first <= a.start < mine.end}
        for moment in sorted(moments):
            there = sorted(agent for agent, acts in theirs.items()
                           if any(a.at(moment) for a in acts))
            if len(there) > best[0]:
                best = (len(there), moment, there)
    count, moment, there = best
    ctx.note(next(a for a in own if a.at(moment)), "performer", "counted",
             f"the performer does it at the place at {ctx.hhmm(moment)}")
    for agent, acts in theirs.items():
        if agent in there:
            ctx.note(next(a for a in acts if a.at(moment)), "together", "counted",
                     f"there with the performer at {ctx.hhmm(moment)}")
        elif acts:
            ctx.note(acts[0], "together", "rejected",
                     f"did it at the place, but not at {ctx.hhmm(moment)} when most were "
                     "there with the performer")
        elif not any(e.agent == agent for e in ctx.evidence):
            ctx.nothing_matched(agent, [step])
    return (min(count / expected, 1.0),
            f"min(companions / expected, 1) = min({count}/{expected}, 1) at "
            f"{ctx.clock(moment)}", there, moment)


def _appointment(ctx: _Context) -> Outcome:
    step, performer, target = ctx.task.steps[0], ctx.task.performer, ctx.task.target or ""
    own, theirs = ctx.candidates(performer, step), ctx.candidates(target, step)
    best: tuple[float, Activity | None, Activity | None] = (0.0, None, None)
    for mine in own:
        for other in theirs:
            if mine.start < other.end and other.start < mine.end or mine.start == other.start:
                value = 1.0 if mine.location == other.location else 0.5
                if value > best[0]:
                    best = (value, mine, other)
    value, mine, other = best
    if mine is None or other is None:
        for who, acts in ((performer, own), (target, theirs)):
            if not acts:
                ctx.note(None, "appointment", "rejected",
                         f"{who} never did '{step.keyword}' (or an alternative)", who)
            for a in acts:
                ctx.note(a, "appointment", "rejected", "never at the same time as the other")
        return 0.0, "appointment: never at the same time -> 0", [], None
    if value == 1.0:
        reason = "at the same time in the same arena"
    else:
        reason = f"at the same time but in different arenas ({mine.location} / {other.location})"
    ctx.note(mine, "appointment", "counted", reason)
    ctx.note(other, "appointment", "counted", reason)
    return value, f"appointment: {reason} -> {value:g}", [target], max(mine.start, other.start)


def _help(ctx: _Context) -> Outcome:
    steps = ctx.task.steps
    best: tuple[float, str | None] = (0.0, None)
    for agent in ctx.others:
        done = [ctx.candidates(agent, s) for s in steps]
        if not any(done):
            continue
        order, t = 0, -1.0  # steps done in order so far, and when the last one started
        for activity in ctx.acts.get(agent, []):
            if order < len(steps) and activity in done[order] and activity.start >= t:
                order, t = order + 1, activity.start
        value = 1.0 if order == len(steps) else 0.5
        for i, acts in enumerate(done):
            for a in acts[:1]:
                ctx.note(a, "order", "counted", f"step {i + 1} '{steps[i].keyword}' done")
        if value < 1 and all(done):
            ctx.note(None, "order", "rejected", "every step was done, but not in order", agent)
        elif value < 1:
            missing = [f"{i + 1} '{s.keyword}'" for i, s in enumerate(steps) if not done[i]]
            ctx.note(None, "order", "rejected", f"step(s) {', '.join(missing)} never done", agent)
        if value > best[0]:
            best = (value, agent)
    value, helper = best
    if helper is None:
        ctx.note(None, "order", "note", "nobody but the performer did any step", "")
        return 0.0, "help: no step done by anyone else -> 0", [], None
    how = "all steps in order" if value == 1 else "at least one step"
    return value, f"help: {helper} did {how} -> {value:g}", [helper], None


SCORERS: dict[TaskType, Callable[[_Context], Outcome]] = {
    TaskType.public_activity: _participation, TaskType.online_activity: _participation,
    TaskType.inviting_companions: _companions, TaskType.appointment: _appointment,
    TaskType.asking_for_help: _help,
}


def _trim(evidence: list[Evidence]) -> list[Evidence]:
    """Keep the first few rejections of each agent under each rule, and say how many more."""
    seen: dict[tuple[str, str], int] = {}
    kept = []
    for item in evidence:
        if item.verdict == "rejected" and item.event is not None:
            key = (item.agent, item.rule)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > KEEP_REJECTED:
                continue
        kept.append(item)
    for (agent, rule), n in seen.items():
        if n > KEEP_REJECTED:
            kept.append(Evidence(agent=agent, rule=rule, verdict="note",
                                 reason=f"{n - KEEP_REJECTED} more activities rejected by the "
                                        f"{rule} rule, not listed"))
    return kept


def run_warnings(run: Run) -> list[str]:
    """What the run itself warns of (nothing happened), and whether it is degraded: most of
    its calls fell back, so its score rests on canned answers."""
    if run.result is None:
        return []
    warnings = list(run.result.warnings)
    if run.result.degraded:
        warnings.append(f"{DEGRADED}: {run.result.fallback_fraction:.0%} of its calls fell "
                        "back to a default answer")
    return warnings


def task_of(run: Run) -> STSSTask:
    """The instantiated task a run's header carries."""
    data = run.header.config.get("stss_task")
    if data is None:
        raise ScoreError(f"{run.dir} is not an STSS run (no stss_task in header.json config)")
    try:
        task = STSSTask.model_validate(data)
    except ValueError as exc:
        raise ScoreError(f"{run.dir}/header.json: unreadable stss_task: {exc}") from exc
    if not task.steps:  # every rule reads the first step (an edited header had none)
        raise ScoreError(f"{run.dir}/header.json at config.stss_task.steps: a task has at "
                         "least one step")
    return task


def score_run(run: Run, options: ScoringOptions | None = None) -> STSSScore:
    """Score one run from its log alone, by the rule set `options.rules` names."""
    options = options or ScoringOptions()
    task = task_of(run)
    if options.rules == "reference":
        return _reference_score(run, task, options)
    ctx = _Context(run, task, options)
    value, rule, participants, cutoff = SCORERS[task.type](ctx)
    ratio, talked = None, []
    if task.type is not TaskType.asking_for_help:
        before = cutoff if cutoff is not None else ctx.end
        partners = conversation_partners(run.events, task.performer, before)
        talked = sorted(p for p, _, _ in partners)
        for partner, t, index in partners:
            ctx.evidence.append(Evidence(agent=partner, rule="talked", verdict="note",
                                         reason=f"talked with the performer before "
                                                f"{ctx.clock(before)}", event=index,
                                         start=ctx.clock(t)))
        ratio = float(task.target in talked) if task.type is TaskType.appointment \
            else len(talked) / task.expected
    evidence = _trim(ctx.evidence)
    window = None if ctx.window is None else {"start": ctx.clock(ctx.window[0]),
                                              "end": ctx.clock(ctx.window[1])}
    return STSSScore(
        **_scored(run, task), score=value, rule=rule, expected=task.expected,
        participants=participants, conversation_ratio=ratio,
        talked_with=talked, window=window, options=options, evidence=evidence,
        warnings=run_warnings(run))


def _scored(run: Run, task: STSSTask) -> dict:
    """What every score says of what it scored, by either rule set: the run, task and
    performer."""
    return dict(run=str(run.dir), template=task.template, type=task.type,
                performer=task.performer, target=task.target,
                architecture=str(run.header.config.get("performer_architecture", "")),
                model=evaluated_model(run, task.performer),
                background_model=background_model(run.header.config), seed=run.header.seed)


def evaluated_model(run: Run, performer: str) -> str:
    """The performer's model as named everywhere ("alias (model id)" when the models file
    named it): the evaluated role's, when the run recorded roles; else the alias of the one
    endpoint its calls went to (calls.jsonl keeps each call's); the header's model otherwise."""
    model = run.header.models.get(performer, "")
    roles = run.header.config.get("roles")
    evaluated = roles.get("evaluated") if isinstance(roles, dict) else None
    # (a person who played the performer is listed as such, not as the town's model)
    if isinstance(evaluated, dict) and evaluated.get("model") == model:
        # what the role resolved to, as the header names it (a header before names: rebuilt)
        return evaluated.get("name") or model_name(model, evaluated.get("endpoint"))
    aliases = {c.endpoint for c in run.calls if c.agent == performer and c.model == model}
    return model_name(model, aliases.pop() if len(aliases) == 1 else None)


def background_model(config: dict) -> str | None:
    """The background model a run's header config records (`roles`), as a row names it:
    "alias (model id)" when the models file named it, else its model id; None for a run of
    one model."""
    roles = config.get("roles")
    background = roles.get("background") if isinstance(roles, dict) else None
    if not isinstance(background, dict) or not isinstance(background.get("model"), str):
        return None
    routing = roles.get("performer_routing")
    name = background.get("name") or model_name(background["model"], background.get("endpoint"))
    return name + \
        (f", routing {routing}" if routing and routing != "paper" else "")


def _reference_score(run: Run, task: STSSTask, options: ScoringOptions) -> STSSScore:
    end = episode_end(run.events, run.result.sim_time_s if run.result else None)
    view = reference.steps_view(run, end, options.sec_per_step)
    warnings = run_warnings(run)
    late = reference.incomplete(run)
    warnings += [late] if late else []
    common = dict(**_scored(run, task), options=options, rules="reference", warnings=warnings)
    try:
        verdict = reference.RULES[task.type](task, view)
        talked = reference.chatted_before(run, task.performer, task.date)
        ratio = reference.ratio(task, talked, verdict)
    except reference.Unscorable as exc:
        return STSSScore(**common, score=None, rule="unscored", unscored=str(exc), expected=0)
    t0 = run.header.start_time
    evidence = [Evidence(agent=agent, rule="reference", verdict="counted", reason=why,
                         event=row.event, action=row.action, location=row.place,
                         start=(row.start if isinstance(row, reference.DiaryEvent)
                                else t0 + timedelta(seconds=row.t)).strftime("%Y-%m-%d %H:%M"))
                for agent, row, why in verdict.counted]
    evidence += [Evidence(agent=p, rule="talked", verdict="note",
                          reason=f"a conversation with the performer ended before "
                                 f"{task.date} 00:00") for p in talked]
    window = None if task.start is None or task.end is None else {
        "start": f"{task.start:%Y-%m-%d %H:%M}", "end": f"{task.end:%Y-%m-%d %H:%M}"}
    return STSSScore(**common, score=verdict.score, rule=verdict.rule, expected=verdict.expected,
                     participants=verdict.participants, conversation_ratio=ratio,
                     talked_with=sorted(talked), window=window, evidence=_trim(evidence))


def write_score(run_dir: Path | str, options: ScoringOptions | None = None) -> STSSScore:
    """Score a run directory and write the score file of its rule set (score.json for ours,
    score.reference.json for the reference's), whole or not at all."""
    options = options or ScoringOptions()
    score = score_run(load_run(run_dir, strict=True), options)  # a whole log, or no score
    write_atomic(Path(run_dir) / options.file, score.model_dump_json(indent=2))
    return score


def read_score(run_dir: Path | str, rules: Rules = "ours") -> STSSScore | None:
    path = Path(run_dir) / ScoringOptions(rules=rules).file
    if not path.exists():
        return None
    try:  # guarded (a FIFO refused); what does not read is a ValueError, as a bad score is
        return STSSScore.model_validate(json_line(read_text(path)))
    except FileFormatError as exc:
        raise ValueError(str(exc)) from None
