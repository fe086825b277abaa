"""The conversation view for single-room runs: who said what, turn by turn, up to the cursor.

The benchmarks (role-play, refutation, text simulation) are single-room runs: there is no map to
walk, so the view is the transcript. The first participant speaks from the left, the others from
the right; judge scores appear beside a turn when the log has them.
"""

from __future__ import annotations

from typing import Any

import pygame

from sandbox.judgments import Judgment, TurnVerdict, load_judgments

from ..replay import Replay
from ..timeline import Conversation, fields, get
from . import theme
from .hud import TIMELINE_BAR, TOP_BAR, format_clock

SIDEBAR = 320
_PAD = 14
_BUBBLE_TEXT = 15


def judge_scores(replay: Replay) -> dict[tuple[str, int], list[str]]:
    """One line per judge for each judged turn, keyed by (conversation, utterance turn).

    Two sources: judgment files beside the run (`judgments/*.json`, the kit's format for every
    single-room benchmark: each turn verdict names the utterance turn it is about), and any
    judging events in the log (a kind with 'judg' or 'score' in its name and a `turn` field)."""
    found: dict[tuple[str, int], list[str]] = {}
    config = replay.header.config
    conv_id, benchmark = str(config.get("conversation", "c0")), config.get("benchmark", "")
    for judgment in load_judgments(replay.dir):
        for verdict in judgment.turns:
            found.setdefault((conv_id, verdict.turn), []).append(
                _judgment_line(judgment, verdict, benchmark))
    for kind, stream in replay.timeline.by_kind.items():
        if "judg" not in kind and "score" not in kind:
            continue
        for event in stream.items:
            turn = get(event, "turn")
            if turn is None:
                continue
            conv = str(get(event, "conversation", ""))
            found.setdefault((conv, int(turn)), []).append(_score_line(event))
    return found


def situation_text(config: dict[str, Any]) -> str:
    """The situation of a single-room run as prose: a string (single_room) or a record with
    its text (PingPong's situation: text and turn count)."""
    situation = config.get("situation") or ""
    if isinstance(situation, dict):
        return str(situation.get("text") or "")
    return str(situation)


def _who(judgment: Judgment, benchmark: str) -> str:
    """The judge model, with the judge's name when it is not the benchmark's own judge."""
    return judgment.model if judgment.judge in ("", benchmark) \
        else f"{judgment.model} ({judgment.judge})"


def _named(scores: dict[str, float]) -> list[str]:
    return [f"{name.replace('_', ' ')} {value:g}" for name, value in scores.items()]


def _judgment_means(judgment: Judgment) -> str:
    """The judgment's own scores and the mean per metric over its judged turns."""
    totals: dict[str, list[float]] = {}
    for verdict in judgment.turns:
        for name, value in verdict.scores.items():
            totals.setdefault(name, []).append(value)
    parts = _named(judgment.scores) + [f"{k.replace('_', ' ')} {sum(v) / len(v):.1f}"
                                       for k, v in totals.items()]
    parts += [name.replace("_", " ") for name, on in judgment.flags.items() if on]
    return " · ".join(parts) + ("" if judgment.usable else f" ({judgment.status})")


def _judgment_line(judgment: Judgment, verdict: TurnVerdict, benchmark: str) -> str:
    line = f"{_who(judgment, benchmark)}: " + " · ".join(_named(verdict.scores))
    flags = [name.replace("is_", "").replace("_", " ") for name, on in verdict.flags.items()
             if on]
    if flags:
        line += " · " + " · ".join(flags)
    if not judgment.usable:
        line += f" ({judgment.status}: left out of means)"
    return line


def _score_line(event) -> str:
    parts = []
    for name, value in fields(event).items():
        if name in ("turn", "conversation"):
            continue
        if isinstance(value, bool):
            if value:
                parts.append(name.replace("_", " "))
        elif isinstance(value, (int, float)):
            parts.append(f"{name.replace('_', ' ')} {value:g}")
        elif isinstance(value, dict):
            parts += [f"{k.replace('_', ' ')} {v:g}" for k, v in value.items()
                      if isinstance(v, (int, float)) and not isinstance(v, bool)]
    judge = get(event, "judge") or event.agent or ""
    return (f"{judge}: " if judge else "") + ", ".join(parts)


def _persona_details(replay: Replay) -> dict[str, dict[str, Any]]:
    """Persona text per name from the scenario config in the header, when it lists personas."""
    details: dict[str, dict[str, Any]] = {}
    personas = replay.header.config.get("personas")
    # The header is data: an edited one may hold anything where a persona list was.
    for persona in personas if isinstance(personas, list) else []:
        if isinstance(persona, dict) and isinstance(persona.get("name"), str) and persona["name"]:
            details[persona["name"]] = persona
    return details


class ConversationView:
    """Draws the transcript of a single-room run at a time `t`."""

    def __init__(self, replay: Replay):
        self.replay = replay
        self.scroll = 0  # pixels scrolled up from the newest turn

    def draw(self, surface: pygame.Surface, t: float) -> None:
        width, height = surface.get_size()
        body = pygame.Rect(0, TOP_BAR, width, height - TOP_BAR - TIMELINE_BAR)
        self._draw_sidebar(surface, pygame.Rect(body.left, body.top, SIDEBAR, body.height), t)
        main = pygame.Rect(SIDEBAR, body.top, width - SIDEBAR, body.height)
        previous_clip = surface.get_clip()
        surface.set_clip(main)
        self._draw_transcript(surface, main, t)
        surface.set_clip(previous_clip)

    # -- left: the situation and who is in the room ------------------------------------------
    def _draw_sidebar(self, surface: pygame.Surface, rect: pygame.Rect, t: float) -> None:
        pygame.draw.rect(surface, theme.PANEL, rect)
        pygame.draw.line(surface, theme.PANEL_EDGE, rect.topright, rect.bottomright)
        x, y, inner = rect.left + _PAD, rect.top + _PAD + 24, rect.width - 2 * _PAD
        situation = situation_text(self.replay.header.config)
        if situation:
            y = theme.blit_lines(surface, ["Situation"], (x, y), 13, theme.TEXT_DIM, bold=True)
            y = theme.blit_lines(surface, theme.wrap(str(situation), 13, inner, 7), (x, y), 13)
            y += 10
        details = _persona_details(self.replay)
        for info in self.replay.timeline.agents.values():
            colour = theme.agent_colour(info.index)
            pygame.draw.circle(surface, colour, (x + 9, y + 10), 9)
            theme.blit_text(surface, info.initials, (x + 9, y + 10), 10, theme.TEXT, True,
                            "center")
            theme.blit_text(surface, theme.fit(info.name, 15, inner - 26), (x + 26, y + 1), 15,
                            theme.TEXT, bold=True)
            model = self.replay.header.model_names().get(info.name)
            y += 24
            if model:
                y = theme.blit_lines(surface, [theme.fit(model, 12, inner)], (x, y), 12,
                                     theme.TEXT_DIM)
            persona = details.get(info.name, {})
            text = persona.get("description") or info.persona
            if text:
                y = theme.blit_lines(surface, theme.wrap(str(text), 13, inner, 4), (x, y), 13)
            if persona.get("goal"):
                y = theme.blit_lines(surface, theme.wrap("Goal: " + str(persona["goal"]), 13,
                                                         inner, 3), (x, y), 13, theme.ACCENT)
            y += 12
        for judgment in load_judgments(self.replay.dir):
            who = _who(judgment, self.replay.header.config.get("benchmark", ""))
            y = theme.blit_lines(surface, [theme.fit(f"judge {who}", 13,
                                                     inner)], (x, y), 13, theme.TEXT_DIM, True)
            y = theme.blit_lines(surface, [_judgment_means(judgment)], (x, y), 12, theme.ACCENT)
            y += 6
        conversations = list(self.replay.timeline.conversations.values())
        if conversations:
            said = sum(len(c.said_by(t)) for c in conversations)
            total = sum(len(c.utterances) for c in conversations)
            theme.blit_lines(surface, [f"turns {said} of {total}"], (x, y), 13, theme.TEXT_DIM)

    # -- right: the turns, newest at the bottom -----------------------------------------------
    def _draw_transcript(self, surface: pygame.Surface, rect: pygame.Rect, t: float) -> None:
        scores = judge_scores(self.replay)
        blocks = []
        for conv in sorted(self.replay.timeline.conversations.values(), key=lambda c: c.started):
            if conv.started > t:
                continue
            blocks.append(("note", self._start_note(conv), None))
            for said in conv.said_by(t):
                blocks.append(("turn", said, scores.get((conv.id, int(get(said, "turn", -1))))))
            if conv.ended is not None and conv.ended <= t:
                blocks.append(("note", f"conversation ended ({conv.end_reason.replace('_', ' ')}"
                                       f") after {len(conv.utterances)} turns", None))
        if not blocks:
            theme.blit_text(surface, "nothing said yet", rect.center, 16, theme.TEXT_DIM,
                            anchor="center")
            return
        bottom = rect.bottom - _PAD + self.scroll
        for kind, item, extra in reversed(blocks):
            if bottom < rect.top:
                break
            if kind == "note":
                img = theme.text(theme.fit(item, 13, rect.width - 2 * _PAD), 13, theme.TEXT_DIM)
                box = img.get_rect(midbottom=(rect.centerx, bottom))
                surface.blit(img, box)
                bottom = box.top - 10
            else:
                bottom = self._draw_turn(surface, rect, item, extra, bottom) - 10

    def _start_note(self, conv: Conversation) -> str:
        where = f" in {conv.location}" if conv.location else ""
        return (f"{format_clock(self.replay, conv.started)}  ·  "
                f"{', '.join(conv.participants)} talk{where}")

    def _draw_turn(self, surface: pygame.Surface, rect: pygame.Rect, said, score_lines,
                   bottom: int) -> int:
        """Draw one turn whose bubble ends at `bottom`; returns its top."""
        info = self.replay.timeline.agents.get(said.agent)
        index = info.index if info else 0
        colour = theme.agent_colour(index)
        left_side = index == 0
        max_text = int(rect.width * 0.62)
        text = str(get(said, "text", ""))
        lines = theme.wrap(text, _BUBBLE_TEXT, max_text) or [""]
        line_h = theme.line_height(_BUBBLE_TEXT) + 2
        text_w = max(theme.font(_BUBBLE_TEXT).size(line)[0] for line in lines)
        meta = f"{said.agent}  ·  turn {get(said, 'turn', '?')}  ·  " \
               f"{self.replay.clock(said.t).strftime('%H:%M:%S')}"
        if get(said, "ends", False):
            meta += "  ·  ends the conversation"
        meta_img = theme.text(theme.fit(meta, 12, max_text), 12, colour, bold=True)
        extra = [theme.fit(line, 12, max_text) for line in (score_lines or [])]
        inner_w = max(text_w, meta_img.get_width(),
                      *(theme.font(12).size(e)[0] for e in extra)) if extra else \
            max(text_w, meta_img.get_width())
        height = 8 + meta_img.get_height() + 4 + line_h * len(lines) + \
            (theme.line_height(12) + 2) * len(extra) + 8
        box = pygame.Rect(0, bottom - height, inner_w + 24, height)
        if left_side:
            box.left = rect.left + _PAD + 30
        else:
            box.right = rect.right - _PAD - 30
        pygame.draw.rect(surface, theme.BUBBLE, box, border_radius=10)
        pygame.draw.rect(surface, colour, box, width=2, border_radius=10)
        # the speaker's badge beside the bubble
        badge_x = box.left - 18 if left_side else box.right + 18
        pygame.draw.circle(surface, colour, (badge_x, box.top + 14), 13)
        if info:
            theme.blit_text(surface, info.initials, (badge_x, box.top + 14), 11, theme.TEXT,
                            True, "center")
        y = box.top + 8
        surface.blit(meta_img, (box.left + 12, y))
        y += meta_img.get_height() + 4
        y = theme.blit_lines(surface, lines, (box.left + 12, y), _BUBBLE_TEXT, theme.TEXT_DARK)
        if extra:
            theme.blit_lines(surface, extra, (box.left + 12, y), 12, (120, 80, 0))
        return box.top
