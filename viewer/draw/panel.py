"""The inspection panel: why the selected agent is doing what it does at the cursor's time.

Its content is built from the log alone (`panel_sections`): persona, current place and action,
the task (STSS runs), plans, the conversation, the memories retrieved for its latest decision
with their scores, its latest reaction and reflection, the run's score and the evidence about
this agent, and any other event kinds the log holds for it. Sections whose events the run does
not have are left out, so the same panel serves every architecture and every log version.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pygame

from ..replay import Replay
from ..timeline import fields, get
from . import theme

PANEL_WIDTH = 400
_PAD = 12

# Kinds the panel explains in their own sections; others go under "other events".
_EXPLAINED = {"agent_joined", "placed", "move", "move_stopped", "walk_failed", "action_started",
              "plan_made", "memory_retrieved", "memory_added", "reflected", "reaction_decided",
              "task_planned", "task_assigned", "utterance", "architecture_changed"}


@dataclass
class Line:
    text: str
    size: int = 13
    colour: tuple[int, int, int] = theme.TEXT
    bold: bool = False
    indent: int = 0
    gap: int = 0  # extra space above


def _h(title: str) -> Line:
    return Line(title.upper(), 12, theme.ACCENT, True, gap=10)


def _hm(replay: Replay, t: float) -> str:
    return replay.clock(t).strftime("%H:%M")


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


class InspectionPanel:
    def __init__(self, replay: Replay, locate: Callable[[str, float], str | None] | None = None):
        self.replay = replay
        self.locate = locate  # (agent, t) -> the address it stands in, from the map
        self.scroll = 0
        self._memories: dict[str, tuple[int, dict[int, Any]]] = {}

    # -- content ------------------------------------------------------------------------------
    def memory_index(self, agent: str) -> dict[int, Any]:
        """memory id -> its memory_added event, for this agent (rebuilt when more arrive)."""
        stream = self.replay.timeline.by_agent_kind.get((agent, "memory_added"))
        count = len(stream) if stream else 0
        cached = self._memories.get(agent)
        if cached is None or cached[0] != count:
            index = {int(get(e, "memory", -1)): e for e in (stream.items if stream else [])}
            self._memories[agent] = (count, index)
        return self._memories[agent][1]

    def lines(self, agent: str, t: float) -> list[Line]:
        out: list[Line] = []
        # What it does and why first (the memories behind its latest decision, above a long
        # transcript); the background (task, plans) after.
        for section in (self._who, self._now, self._retrieval, self._reaction,
                        self._conversation, self._task, self._plans, self._reflection,
                        self._score, self._other):
            out += section(agent, t)
        return out

    def _who(self, agent: str, t: float) -> list[Line]:
        info = self.replay.timeline.agents[agent]
        out = [Line(agent, 18, theme.agent_colour(info.index), True, indent=30)]
        architecture = info.architecture
        changed = self.replay.timeline.latest("architecture_changed", t, agent)
        if changed is not None:  # a fork swapped it (sandbox fork --agent-arch)
            architecture = f"{get(changed, 'architecture', '?')} (was " \
                f"{get(changed, 'previous', '?')} until {_hm(self.replay, changed.t)})"
        bits = [b for b in (architecture, self.replay.header.model_names().get(agent)) if b]
        if bits:
            out.append(Line("  ·  ".join(bits), 12, theme.TEXT_DIM, indent=30))
        if info.persona:
            out += [_h("persona"), Line(info.persona)]
        return out

    def _now(self, agent: str, t: float) -> list[Line]:
        tl = self.replay.timeline
        out = [_h(f"now  ·  {self.replay.clock(t):%a %H:%M:%S}")]
        place = self.locate(agent, t) if self.locate else None
        if place:
            out.append(Line(f"in {place}", 12, theme.TEXT_DIM))
        action = tl.latest("action_started", t, agent)
        if action is not None:
            until = float(get(action, "until", math.inf))
            if until <= action.t:  # open-ended (a conversation): until the next action
                until = math.inf
            done = " (ended)" if t > until else ""
            out.append(Line(f"{get(action, 'description', '')}{done}", 14, bold=True))
            where = str(get(action, "location", ""))
            span = f"{_hm(self.replay, action.t)}–{_hm(self.replay, until)}" \
                if math.isfinite(until) else f"since {_hm(self.replay, action.t)}"
            out.append(Line(f"{span}  at {where}", 12, theme.TEXT_DIM))
            if get(action, "activity"):
                out.append(Line(f"part of: {get(action, 'activity')}", 12, theme.TEXT_DIM))
        failed = tl.latest("walk_failed", t, agent)
        if failed is not None and (action is None or failed.t >= action.t):
            out.append(Line(f"could not get to {get(failed, 'destination', '?')}: "
                            f"{get(failed, 'reason', '')}", 12, theme.WARNING))
        move = tl.latest("move", t, agent)
        stopped = tl.latest("move_stopped", t, agent)
        if move is not None and t < float(get(move, "arrival", move.t)) and \
                (stopped is None or stopped.t < move.t):
            out.append(Line(f"walking to {get(move, 'destination', '?')}, arrives "
                            f"{_hm(self.replay, float(get(move, 'arrival', move.t)))}", 12))
        if len(out) == 1 + bool(place):
            joined = tl.agents[agent].location
            out.append(Line("no action logged yet" if place or not joined else f"at {joined}",
                            12, theme.TEXT_DIM))
        return out

    def _task(self, agent: str, t: float) -> list[Line]:
        out: list[Line] = []
        task = self.replay.task
        if task is not None:
            performer = task.get("performer")
            role = "the performer" if performer == agent else \
                "the target" if task.get("target") == agent else \
                f"background (performer: {performer})" if performer else ""
            title = task.get("title") or task.get("template") or "task"
            out += [_h("task" + (f"  ·  {role}" if role else "")),
                    Line(f"{title}" + (f" ({task['type']})" if task.get("type") else ""), 13,
                         bold=True)]
            for key in ("goal", "criteria", "description", "target", "keyword", "location"):
                if task.get(key) not in (None, "", []):
                    out.append(Line(f"{key}: {_short(task[key], 240)}", 12))
            window = self.replay.task_window()
            if window is not None:
                out.append(Line(f"window: {self.replay.clock(window[0]):%a %H:%M}–"
                                f"{self.replay.clock(window[1]):%H:%M}  (t jumps there)", 12,
                                theme.TEXT_DIM))
            for step in task.get("steps") or []:
                if isinstance(step, dict):
                    words = " / ".join([str(step.get("keyword", "?")),
                                        *map(str, step.get("alternatives") or [])])
                    where = step.get("location") or "anywhere"
                    out.append(Line(f"• {words} at {where}", 12, indent=6))
            if task.get("expected"):
                out.append(Line(f"expected: {task['expected']}", 12, theme.TEXT_DIM))
        tasks = self.replay.header.config.get("tasks")  # per agent: {name: task text}
        if isinstance(tasks, dict) and tasks.get(agent):
            out += [_h("task (injected)"), Line(str(tasks[agent]), 12)]
        assigned = self.replay.timeline.latest("task_assigned", t, agent)
        if assigned is not None and task is None:
            out += [_h(f"task assigned at {_hm(self.replay, assigned.t)}"),
                    Line(str(get(assigned, "goal", "")), 12),
                    Line(str(get(assigned, "criteria", "")), 12, theme.TEXT_DIM)]
        planned = self.replay.timeline.latest("task_planned", t, agent)
        if planned is not None:
            out.append(_h("target-driven plan"))
            for i, step in enumerate(get(planned, "general_plan", []), 1):
                out.append(Line(f"{i}. {step}", 12))
            if get(planned, "plan_reminder"):
                out.append(Line(f"reminder: {get(planned, 'plan_reminder')}", 12, theme.TEXT_DIM))
            for item in get(planned, "conversation_reminder", []):
                out.append(Line(f"☐ {item}", 12, theme.TEXT_DIM))
        return out

    def _plans(self, agent: str, t: float) -> list[Line]:
        stream = self.replay.timeline.by_agent_kind.get((agent, "plan_made"))
        if not stream:
            return []
        latest: dict[str, Any] = {}
        for event in stream.upto(t):
            latest[str(get(event, "level", "plan"))] = event
        if not latest:
            return []
        out = [_h("plan")]
        for level in ("daily", "hourly", "revised", "steps"):
            event = latest.pop(level, None)
            if event is None:
                continue
            wake = f", wakes {get(event, 'wake_up')}" if get(event, "wake_up") else ""
            out.append(Line(f"{level} (made {_hm(self.replay, event.t)}{wake})", 12,
                            theme.TEXT_DIM, True, gap=3))
            if get(event, "reason"):
                out.append(Line(f"because: {get(event, 'reason')}", 12, theme.TEXT_DIM))
            items = list(get(event, "items", []))
            out += [Line(f"• {item}", 12, indent=6) for item in items[:12]]
            if len(items) > 12:
                out.append(Line(f"… {len(items) - 12} more", 12, theme.TEXT_DIM, indent=6))
        return out

    def _conversation(self, agent: str, t: float) -> list[Line]:
        conv = self.replay.timeline.conversation_of(agent, t)
        if conv is None:
            return []
        said = conv.said_by(t)
        others = [p for p in conv.participants if p != agent]
        state = "talking" if conv.active(t) else f"last talk, ended {_hm(self.replay, conv.ended)}"
        out = [_h(f"conversation  ·  {state}"),
               Line(f"with {', '.join(others)}" + (f" at {conv.location}" if conv.location else ""),
                    12, theme.TEXT_DIM)]
        if len(said) > 10:
            out.append(Line(f"… {len(said) - 10} earlier turns", 12, theme.TEXT_DIM))
        for u in said[-10:]:
            colour = theme.agent_colour(self.replay.timeline.agents[u.agent].index) \
                if u.agent in self.replay.timeline.agents else theme.TEXT
            out.append(Line(f"{u.agent}:", 12, colour, True, gap=2))
            out.append(Line(str(get(u, "text", "")), 13, indent=8))
        return out

    def _retrieval(self, agent: str, t: float) -> list[Line]:
        event = self.replay.timeline.latest("memory_retrieved", t, agent)
        if event is None:
            return []
        memories = self.memory_index(agent)
        out = [_h(f"why: memories retrieved at {_hm(self.replay, event.t)}"),
               Line(f"for {get(event, 'purpose', '?')}: “{_short(get(event, 'query', ''))}”", 12,
                    theme.TEXT_DIM)]
        ids = list(get(event, "ids", []))
        scores = list(get(event, "scores", []))
        parts = {name: list(get(event, name, [])) for name in ("recency", "relevance",
                                                               "importance")}
        for i, memory_id in enumerate(ids[:15]):
            score = f"{scores[i]:.2f}" if i < len(scores) else "?"
            detail = ", ".join(f"{name[:3]} {values[i]:.2f}" for name, values in parts.items()
                               if i < len(values))
            memory = memories.get(int(memory_id))
            text = str(get(memory, "description", "")) if memory is not None else \
                f"memory #{memory_id}"
            kind = f" [{get(memory, 'memory_kind', '')}]" if memory is not None else ""
            out.append(Line(f"{score}  {text}{kind}", 12, indent=4, gap=2))
            if detail:
                out.append(Line(detail, 11, theme.TEXT_DIM, indent=40))
        if len(ids) > 15:
            out.append(Line(f"… {len(ids) - 15} more", 12, theme.TEXT_DIM))
        return out

    def _reaction(self, agent: str, t: float) -> list[Line]:
        event = self.replay.timeline.latest("reaction_decided", t, agent)
        if event is None:
            return []
        out = [_h(f"reaction at {_hm(self.replay, event.t)}"),
               Line(f"{get(event, 'decision', '?')}: {get(event, 'target', '?')}", 13, bold=True)]
        if get(event, "reason"):
            out.append(Line(str(get(event, "reason")), 12, theme.TEXT_DIM))
        return out

    def _reflection(self, agent: str, t: float) -> list[Line]:
        event = self.replay.timeline.latest("reflected", t, agent)
        if event is None:
            return []
        out = [_h(f"reflection at {_hm(self.replay, event.t)}")]
        for q in get(event, "questions", []):
            out.append(Line(f"? {q}", 12, theme.TEXT_DIM))
        for insight in get(event, "insights", []):
            text = insight.get("text") if isinstance(insight, dict) else \
                getattr(insight, "text", "")
            out.append(Line(f"→ {text}", 12))
        return out

    def _score(self, agent: str, t: float) -> list[Line]:
        """score.json (evaluation/stss): the score and its rule, then what the rules decided
        about this agent's activities (counted, rejected, noted) and why."""
        score = self.replay.score
        if not score:
            return []
        out = [_h("score")]
        if isinstance(score.get("score"), (int, float)):
            out.append(Line(f"{score['score']:.2f}" + (f"   {score['rule']}" if score.get("rule")
                                                       else ""), 14, bold=True))
        for key, value in score.items():
            if key in ("score", "rule", "run", "evidence") or isinstance(value, bool):
                continue
            if isinstance(value, (int, float, str)):
                out.append(Line(f"{key.replace('_', ' ')}: {_short(value)}", 12, theme.TEXT_DIM))
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                out.append(Line(f"{key.replace('_', ' ')}: {', '.join(value) or '-'}", 12,
                                theme.TEXT_DIM))
        evidence = score.get("evidence")
        if isinstance(evidence, list):
            mine = [e for e in evidence if isinstance(e, dict) and e.get("agent") == agent] or \
                [e for e in evidence if agent in str(e)]
            out.append(Line(f"evidence about {agent}: {len(mine)} of {len(evidence)}", 12,
                            theme.TEXT_DIM, True, gap=4))
            for item in mine[:12]:
                out += _evidence_lines(item)
            if len(mine) > 12:
                out.append(Line(f"… {len(mine) - 12} more", 12, theme.TEXT_DIM))
        return out

    def _other(self, agent: str, t: float) -> list[Line]:
        stream = self.replay.timeline.by_agent.get(agent)
        if not stream:
            return []
        others = [e for e in stream.upto(t)[-200:] if e.kind not in _EXPLAINED]
        if not others:
            return []
        out = [_h("other events")]
        for event in others[-6:]:
            payload = ", ".join(f"{k}={_short(v, 60)}" for k, v in fields(event).items())
            out.append(Line(f"{_hm(self.replay, event.t)} {event.kind}: {payload}", 12))
        return out

    # -- drawing ------------------------------------------------------------------------------
    def draw(self, surface: pygame.Surface, rect: pygame.Rect, agent: str, t: float,
             following: bool = False) -> None:
        pygame.draw.rect(surface, theme.PANEL, rect)
        pygame.draw.line(surface, theme.PANEL_EDGE, rect.topleft, rect.bottomleft)
        previous_clip = surface.get_clip()
        surface.set_clip(rect)
        width = rect.width - 2 * _PAD
        y = rect.top + _PAD - self.scroll
        info = self.replay.timeline.agents[agent]
        colour = theme.agent_colour(info.index)
        pygame.draw.circle(surface, colour, (rect.left + _PAD + 12, y + 12), 12)
        theme.blit_text(surface, info.initials, (rect.left + _PAD + 12, y + 12), 11, theme.TEXT,
                        True, "center")
        if following:
            theme.blit_text(surface, "following", (rect.right - _PAD, y + 4), 11, theme.ACCENT,
                            anchor="topright")
        for line in self.lines(agent, t):
            y += line.gap
            wrapped = theme.wrap(line.text, line.size, width - line.indent, bold=line.bold)
            if y > rect.bottom:  # below the panel: only measure, for the scroll limit
                y += len(wrapped) * (theme.line_height(line.size, line.bold) + 1)
                continue
            y = theme.blit_lines(surface, wrapped, (rect.left + _PAD + line.indent, y),
                                 line.size, line.colour, line.bold, spacing=1)
        self.content_height = y + self.scroll - rect.top + _PAD
        surface.set_clip(previous_clip)

    content_height = 0

    def scroll_by(self, pixels: int, visible_height: int) -> None:
        limit = max(0, self.content_height - visible_height)
        self.scroll = max(0, min(self.scroll + pixels, limit))


_VERDICT_COLOURS = {"counted": (120, 210, 120), "rejected": (240, 130, 110)}


def _evidence_lines(item: Any) -> list[Line]:
    """One piece of scorer evidence: the verdict and reason, then what and where and when."""
    if not isinstance(item, dict):
        return [Line(_short(item), 12, indent=6)]
    verdict = str(item.get("verdict", ""))
    head = f"{verdict} · {item.get('rule', '?')}: {item.get('reason', '')}"
    out = [Line(head, 12, _VERDICT_COLOURS.get(verdict, theme.TEXT), indent=6, gap=2)]
    detail = [str(item[k]) for k in ("action",) if item.get(k)]
    if item.get("location"):
        detail.append(f"at {item['location']}")
    if item.get("start"):
        detail.append(f"{item['start']}" + (f" – {item['end']}" if item.get("end") else ""))
    if item.get("event") is not None:
        detail.append(f"log line {int(item['event']) + 1}")
    if detail:
        out.append(Line("  ".join(detail), 11, theme.TEXT_DIM, indent=16))
    return out
