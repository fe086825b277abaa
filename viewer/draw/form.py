"""A person's decision form over the map (viewer/human.py): who decides what, the question,
the end of what the resident is shown (the prompt a model would read, or the talk so far), the
fields (a typed line, or choices: chips when few, < value > when many) and the Done button."""

from __future__ import annotations

from dataclasses import dataclass, field

import pygame

from . import theme

TITLE, BODY, SMALL = 18, 15, 13
CONTEXT_LINES = 9  # the last lines of the context shown
CHIPS = 6  # a choice of this many options or fewer shows them all


@dataclass
class FormBox:
    """Where the form was drawn, for clicks: ("done",), ("field", i), ("option", name, i),
    ("cycle", name, step)."""

    rect: pygame.Rect
    targets: list[tuple[pygame.Rect, tuple]] = field(default_factory=list)

    def hit(self, pos: tuple[int, int]) -> tuple | None:
        if not self.rect.collidepoint(pos):
            return None
        for rect, target in self.targets:
            if rect.collidepoint(pos):
                return target
        return ("box",)


def draw_form(surface: pygame.Surface, state, area: pygame.Rect) -> FormBox:
    """Draw `state` (a viewer.human.FormState) in the lower part of `area`; returns its box."""
    form = state.form
    width = min(area.width - 40, 760)
    x = area.left + (area.width - width) // 2
    inner = width - 32
    title = theme.wrap(form.title, TITLE, inner, max_lines=3, bold=True)
    context = [line for text in form.context[-CONTEXT_LINES:]
               for line in theme.wrap(text, SMALL, inner - 12, max_lines=2)][-CONTEXT_LINES:]
    row = theme.line_height(BODY) + 14
    height = (24 + len(title) * theme.line_height(TITLE, True) + 8
              + (theme.line_height(BODY) + 4 if form.error else 0)
              + len(context) * (theme.line_height(SMALL) + 2) + 12
              + len(form.fields) * (row + theme.line_height(SMALL)) + 56)
    height = min(height, area.height - 20)
    box = FormBox(pygame.Rect(x, area.bottom - height - 10, width, height))
    pygame.draw.rect(surface, theme.PANEL, box.rect, border_radius=10)
    pygame.draw.rect(surface, theme.ACCENT, box.rect, 2, border_radius=10)
    left, y = box.rect.left + 16, box.rect.top + 10
    theme.blit_text(surface, f"{form.agent} decides · {form.purpose}", (left, y), SMALL,
                    theme.TEXT_DIM)
    y += theme.line_height(SMALL) + 2
    y = theme.blit_lines(surface, title, (left, y), TITLE, theme.ACCENT, bold=True) + 4
    if form.error:
        theme.blit_text(surface, theme.fit(f"not taken: {form.error}", BODY, inner), (left, y),
                        BODY, theme.WARNING)
        y += theme.line_height(BODY) + 4
    if context:
        strip = pygame.Rect(left, y, inner, len(context) * (theme.line_height(SMALL) + 2) + 6)
        pygame.draw.rect(surface, theme.BACKGROUND, strip, border_radius=4)
        y = theme.blit_lines(surface, context, (left + 6, y + 3), SMALL, theme.TEXT_DIM) + 10
    for i, f in enumerate(form.fields):
        focused = i == state.focus
        theme.blit_text(surface, theme.fit(f.label, SMALL, inner), (left, y), SMALL,
                        theme.TEXT if focused else theme.TEXT_DIM, bold=focused)
        y += theme.line_height(SMALL) + 2
        value = pygame.Rect(left, y, inner, row - 6)
        box.targets.append((value, ("field", i)))
        if f.kind == "text":
            _text_field(surface, value, state.values[f.name], focused)
        else:
            _choice_field(surface, box, value, f, state.choice[f.name], focused)
        y += row
    done = pygame.Rect(box.rect.right - 140, box.rect.bottom - 44, 124, 32)
    pygame.draw.rect(surface, theme.ACCENT, done, border_radius=6)
    theme.blit_text(surface, "Done ⏎", done.center, BODY, theme.TEXT_DARK, True,
                    anchor="center")
    theme.blit_text(surface, "tab: next field · ←/→ or type: choose · del: clear · enter: done",
                    (left, done.centery), SMALL, theme.TEXT_DIM, anchor="midleft")
    box.targets.insert(0, (done, ("done",)))
    return box


def _text_field(surface, rect, value: str, focused: bool) -> None:
    pygame.draw.rect(surface, theme.BACKGROUND, rect, border_radius=4)
    pygame.draw.rect(surface, theme.ACCENT if focused else theme.PANEL_EDGE, rect, 1,
                     border_radius=4)
    shown = value
    f = theme.font(BODY)
    while shown and f.size(shown + "|")[0] > rect.width - 12:
        shown = shown[1:]  # the end, where the typing is
    theme.blit_text(surface, shown + ("|" if focused else ""), (rect.left + 6, rect.centery),
                    BODY, anchor="midleft")


def _choice_field(surface, box: FormBox, rect, f, chosen: int, focused: bool) -> None:
    if len(f.options) <= CHIPS:
        x = rect.left
        for i, option in enumerate(f.options):
            w = theme.font(BODY).size(option)[0] + 24
            chip = pygame.Rect(x, rect.top, w, rect.height)
            on = i == chosen
            pygame.draw.rect(surface, theme.ACCENT if on else theme.BACKGROUND, chip,
                             border_radius=12)
            pygame.draw.rect(surface, theme.ACCENT if focused else theme.PANEL_EDGE, chip, 1,
                             border_radius=12)
            theme.blit_text(surface, option, chip.center, BODY,
                            theme.TEXT_DARK if on else theme.TEXT, on, anchor="center")
            box.targets.insert(0, (chip, ("option", f.name, i)))
            x += w + 8
        return
    pygame.draw.rect(surface, theme.BACKGROUND, rect, border_radius=4)
    pygame.draw.rect(surface, theme.ACCENT if focused else theme.PANEL_EDGE, rect, 1,
                     border_radius=4)
    back = pygame.Rect(rect.left, rect.top, 32, rect.height)
    forward = pygame.Rect(rect.right - 32, rect.top, 32, rect.height)
    theme.blit_text(surface, "◀", back.center, BODY, theme.ACCENT, anchor="center")
    theme.blit_text(surface, "▶", forward.center, BODY, theme.ACCENT, anchor="center")
    label = f"{f.options[chosen]}   ({chosen + 1} of {len(f.options)})"
    theme.blit_text(surface, theme.fit(label, BODY, rect.width - 80), rect.center, BODY,
                    anchor="center")
    box.targets.insert(0, (back, ("cycle", f.name, -1)))
    box.targets.insert(0, (forward, ("cycle", f.name, 1)))
