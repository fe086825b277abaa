"""The reference rule set: STSS scored as the authors' public scorer scores it, from our log.

    score = score_run(load_run("runs/x"), ScoringOptions(rules="reference"))

The authors' scorer reads a Generative Agents run step by step (../shared/specs/
stss-reference-scoring.md). Our log becomes the same view (`steps_view`):

- every `sec_per_step` seconds from the episode's start, each agent's action and address;
- an action counts from the moment the agent sets out for it (its `move` or `walk_failed`),
  at the destination it set out for, as the reference writes an action's planned address the
  moment it is chosen; an action with no walk counts from its `action_started`;
- a conversation reads "conversing about SUMMARY" at "<persona> PARTNER", SUMMARY being the
  agent's own memory of that conversation (its chat memory), else the lines said; the
  conversation is found by agent and time (the one it joined at that moment);
- consecutive steps with the same action and address merge into one event that starts at the
  first step (the reference's diary); every step is also a moment with every agent's action.

The rules then decide as the reference does: clock times without dates, an event's start (not
its span), places as case-sensitive substrings (the task's place as its file wrote it,
TaskStep.reference_location), keywords as case-insensitive substrings, conversations counted
where the reference counts them, denominators target_num - 1, the conversation ratio over the
performer's conversations that started before midnight of the event day, and runs that did not
complete scored with a warning. Where the reference itself would stop with an error (a public
activity without a start time, an appointment with no target, target_num 1), the task is
unscored and says why.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from sandbox.events import ConversationEnded, ConversationStarted, Event, Utterance
from sandbox.events.agent import ActionStarted, MemoryAdded
from sandbox.events.world import Moved, WalkFailed
from sandbox.log import Run
from tasks.stss.instantiate import STSSTask, TaskStep
from tasks.stss.schema import TaskType

CHAT = "conversing about "  # how the reference's action text marks a conversation
PARTNER = "<persona> "  # and its address
INCOMPLETE = "incomplete run"  # the opening words of the warning a run cut short gets


class Unscorable(Exception):
    """The reference scorer would fail on this task (it raises); the reason says why."""


@dataclass(frozen=True)
class Doing:
    """One agent's action and address from a moment on (a row of the reference's view)."""

    t: float  # sim seconds
    action: str
    place: str
    event: int  # index in events.jsonl of the event it comes from


@dataclass(frozen=True)
class DiaryEvent:
    """Consecutive steps with the same action and address: the reference's `events` entry."""

    agent: str
    action: str
    place: str
    start: datetime
    event: int


@dataclass
class View:
    """The run as the reference reads it."""

    diary: dict[str, list[DiaryEvent]]  # agent -> events in time order
    moments: list[tuple[datetime, dict[str, Doing]]]  # every step: each agent's action


def _summaries(events: list[Event]) -> dict[tuple[str, str], str]:
    """(agent, conversation id) -> what the agent remembered of it (its first chat memory after
    the conversation ended), else the lines said in it."""
    ended: dict[str, float] = {}
    members: dict[str, list[str]] = {}
    lines: dict[str, list[str]] = {}
    chats: dict[str, list[tuple[float, str]]] = {}
    for e in events:
        if isinstance(e, ConversationStarted):
            members[e.conversation] = list(e.participants)
        elif isinstance(e, Utterance):
            lines.setdefault(e.conversation, []).append(e.text)
        elif isinstance(e, ConversationEnded):
            ended[e.conversation] = e.t
        elif isinstance(e, MemoryAdded) and e.memory_kind == "chat" and e.agent:
            chats.setdefault(e.agent, []).append((e.t, e.description))
    out = {}
    for conversation, people in members.items():
        for agent in people:
            at = ended.get(conversation)
            said = next((text for t, text in chats.get(agent, []) if at is not None and t >= at),
                        None)
            out[agent, conversation] = said or " / ".join(lines.get(conversation, []))
    return out


def doings(events: list[Event]) -> dict[str, list[Doing]]:
    """Each agent's actions as the reference writes them: from setting out, at the
    destination, conversations as 'conversing about ...' at '<persona> PARTNER'."""
    summaries = _summaries(events)
    # agent -> (start, conversation) of each conversation it joined. Looked up by agent and
    # time, not by the last one seen: the engine logs both "talking with" actions before the
    # conversation's start at the same instant, so the last one seen is the one before.
    joined: dict[str, list[tuple[float, str]]] = {}
    for e in events:
        if isinstance(e, ConversationStarted):
            for agent in e.participants:
                joined.setdefault(agent, []).append((e.t, e.conversation))
    setting_out: dict[str, tuple[float, str]] = {}  # agent -> (t, destination) of its walk
    out: dict[str, list[Doing]] = {}
    for i, e in enumerate(events):
        if not e.agent:
            continue
        if isinstance(e, Moved | WalkFailed):
            setting_out.setdefault(e.agent, (e.t, e.destination))
        elif isinstance(e, ActionStarted):
            if e.activity == "conversation":
                partner = e.description.removeprefix("talking with ").strip()
                summary = summaries.get((e.agent, _conversation_at(joined.get(e.agent, []),
                                                                   e.t)), "")
                row = Doing(e.t, CHAT + summary, PARTNER + partner, i)
                setting_out.pop(e.agent, None)
            else:
                t, place = setting_out.pop(e.agent, (e.t, e.location))
                row = Doing(t, e.description, place, i)
            out.setdefault(e.agent, []).append(row)
    return out


def _conversation_at(joined: list[tuple[float, str]], t: float) -> str:
    """The conversation an agent is in at `t`: the last it joined at or before `t`."""
    found = bisect_right([start for start, _ in joined], t) - 1
    return joined[found][1] if found >= 0 else ""


def steps_view(run: Run, end: float, sec_per_step: int = 60) -> View:
    """Every agent's action and address at each step of `sec_per_step` seconds, from the
    episode's start to `end`, as moments and merged into a diary."""
    rows = doings(run.events)
    starts = {agent: [r.t for r in rs] for agent, rs in rows.items()}
    t0 = run.header.start_time
    diary: dict[str, list[DiaryEvent]] = {agent: [] for agent in rows}
    moments = []
    for k in range(int(end // sec_per_step) + 1):
        t = k * sec_per_step
        when = t0 + timedelta(seconds=t)
        now = {}
        for agent, rs in rows.items():
            j = bisect_right(starts[agent], t) - 1
            if j < 0:  # not acting yet: absent from this step
                continue
            now[agent] = row = rs[j]
            days = diary[agent]
            if days and days[-1].action == row.action and days[-1].place == row.place:
                continue
            days.append(DiaryEvent(agent, row.action, row.place, when, row.event))
        moments.append((when, now))
    return View(diary=diary, moments=moments)


def _hit(step: TaskStep, action: str) -> bool:
    text = action.lower()
    return any(k.lower() in text for k in step.keywords)


def _where(step: TaskStep) -> str:
    return step.reference_location or "N/A"


def _in_place(step: TaskStep, place: str) -> bool:
    where = _where(step)
    return where == "N/A" or where in place


def _arena(place: str) -> str:
    """The reference drops an address's last (object-level) part to compare arenas; ours end at
    the arena or the object, so the arena is the first three parts."""
    return ":".join(place.split(":")[:3])


def denominator(task: STSSTask) -> tuple[int, str]:
    """target_num - 1 (the performer excluded), and where target_num came from."""
    if task.target_num is not None:
        n, source = task.target_num, f"target_num {task.target_num} from the template"
    else:
        n, source = task.expected + 1, (f"no target_num in the template: ours, expected "
                                        f"{task.expected} + 1")
    if n - 1 <= 0:
        raise Unscorable(f"target_num {n} leaves nobody to count (the reference divides by "
                         "target_num - 1)")
    return n - 1, source


@dataclass
class Verdict:
    score: float
    rule: str
    participants: list[str]
    counted: list[tuple[str, DiaryEvent | Doing, str]]  # agent, what counted, why
    expected: int = 1  # the denominator (target_num - 1 where the rule divides by it)


def public(task: STSSTask, view: View) -> Verdict:
    """Public activity and online meeting: the first event per subgoal whose start lies in the
    window by clock time, with a keyword, at the place (N/A: anywhere; conversations too)."""
    if task.start is None or task.end is None:
        raise Unscorable("a public or online activity without a start time: the reference "
                         "scorer fails on it")
    lo, hi = task.start.time(), task.end.time()
    steps = task.steps
    count, people, counted = 0.0, [], []
    for agent, events in view.diary.items():
        if agent == task.performer:
            continue
        for step in steps:
            for event in events:
                clock = event.start.time()
                if clock < lo or clock > hi:  # a window past midnight matches nothing there
                    continue
                if _hit(step, event.action) and _in_place(step, event.place):
                    count += 1 / len(steps)
                    if agent not in people:
                        people.append(agent)
                    counted.append((agent, event, f"starts at {clock:%H:%M} in "
                                                  f"{lo:%H:%M}-{hi:%H:%M}, at {_where(step)}"))
                    break
    d, source = denominator(task)
    return Verdict(min(count / d, 1.0),
                   f"min(count / (target_num - 1), 1) = min({count:g}/{d}, 1); {source}",
                   people, counted, d)


def appointment(task: STSSTask, view: View) -> Verdict:
    """Over every moment: target and performer both doing a keyword action (not a
    conversation) 0.5, in the same arena 1; the best moment, any day, any time."""
    if not task.target:
        raise Unscorable("an appointment with no target: the reference scorer fails on it "
                         "(it reads the task's first target)")
    pair = [task.target, task.performer]
    best, at = 0.0, None
    for when, now in view.moments:
        value = 0.0
        for step in task.steps:
            rows = [now.get(p) for p in pair]
            if all(r is not None and _hit(step, r.action) and CHAT not in r.action
                   for r in rows):
                value = 0.5
                if _arena(rows[0].place) == _arena(rows[1].place):
                    value = 1.0
                    break
        if value > best:
            best, at = value, (when, now)
        if best == 1.0:
            break
    if at is None:
        return Verdict(0.0, "appointment: never both doing it at one step -> 0", [], [])
    when, now = at
    how = "in the same arena" if best == 1.0 else "in different arenas"
    counted = [(p, now[p], f"both doing it at {when:%Y-%m-%d %H:%M} {how}") for p in pair]
    return Verdict(best, f"appointment: {how} -> {best:g}", [pair[0]], counted)


def companions(task: STSSTask, view: View) -> Verdict:
    """Over every moment of the whole run: the others doing it at the place (or naming the
    place in their action; conversations count), when the performer does too."""
    d, source = denominator(task)
    best, best_at = 0.0, None
    for when, now in view.moments:
        others, performer_there = [], False
        for step in task.steps:
            where = _where(step)
            for agent, row in now.items():
                there = _in_place(step, row.place) or where.lower() in row.action.lower()
                if _hit(step, row.action) and there:
                    if agent == task.performer:
                        performer_there = True
                    else:
                        others.append(agent)
        if performer_there and len(others) / d > best:
            best, best_at = len(others) / d, (when, now, others)
    if best_at is None:
        return Verdict(0.0, f"companions: the performer never did it with others at the "
                            f"place -> 0/{d}; {source}", [], [], d)
    when, now, others = best_at
    counted = [(a, now[a], f"there with the performer at {when:%Y-%m-%d %H:%M}")
               for a in dict.fromkeys(others)]
    return Verdict(min(best, 1.0), f"min(companions / (target_num - 1), 1) = "
                                   f"min({len(others)}/{d}, 1) at {when:%Y-%m-%d %H:%M}; "
                                   f"{source}", sorted(set(others)), counted, d)


def helping(task: STSSTask, view: View) -> Verdict:
    """Per helper, its events in order: subgoal i advances only after 0..i-1; all in order 1,
    all but not in order 0.5, else the fraction done (the record of what is done is shared by
    every helper, as in the reference)."""
    steps = task.steps
    window = None
    if task.start is not None and task.end is not None:
        window = (task.start.time(), task.end.time())
    done = [False] * len(steps)  # shared across helpers, as the reference's list is
    best, helper, counted = 0.0, None, []
    for agent, events in view.diary.items():
        if agent == task.performer:
            continue
        progress = 0
        for event in events:
            for i, step in enumerate(steps):
                in_time = window is None or window[0] < event.start.time() < window[1]
                if _hit(step, event.action) and CHAT not in event.action and \
                        _in_place(step, event.place) and in_time:
                    done[i] = True
                    counted.append((agent, event, f"subgoal {i + 1} '{step.keyword}'"))
                    if progress == i:
                        progress += 1
                    if progress == len(steps):
                        break
        fraction = sum(done) / len(steps)
        value = fraction if fraction < 1 else (1.0 if progress >= len(steps) else 0.5)
        if value > best:
            best, helper = value, agent
    if helper is None:
        return Verdict(0.0, "help: no subgoal done by anyone else -> 0", [], counted)
    return Verdict(min(best, 1.0), f"help: {helper} -> {best:g} (1 all in order, 0.5 all but "
                                   "not in order, else the fraction done)", [helper], counted)


RULES = {
    TaskType.public_activity: public, TaskType.online_activity: public,
    TaskType.appointment: appointment, TaskType.inviting_companions: companions,
    TaskType.asking_for_help: helping,
}


def chatted_before(run: Run, performer: str, day: date) -> list[str]:
    """Whom the performer talked with in conversations that started before 00:00 of the event
    day. The reference counts the chat memories made before then, and its engine makes that
    memory as the chat starts (a step later at most): a chat from 23:58 to 00:02 counts, and
    so does one the log never saw end."""
    midnight = datetime.combine(day, time())
    cutoff = (midnight - run.header.start_time).total_seconds()
    partners: list[str] = []
    for e in run.events:
        if isinstance(e, ConversationStarted) and e.t < cutoff and performer in e.participants:
            partners += [p for p in e.participants if p != performer and p not in partners]
    return partners


def ratio(task: STSSTask, partners: list[str], verdict: Verdict) -> float:
    """The reference's second number: partners / (target_num - 1), not clipped; appointment:
    whether the target is among them; asking for help: the score again."""
    if task.type is TaskType.appointment:
        return float(task.target in partners)
    if task.type is TaskType.asking_for_help:
        return verdict.score
    return len(partners) / verdict.expected


def incomplete(run: Run) -> str | None:
    """A warning for a run that did not complete, which the reference still scores."""
    status = run.result.status if run.result else "no result.json"
    if status == "completed":
        return None
    return f"{INCOMPLETE} ({status}): scored anyway, as the reference scores it"
