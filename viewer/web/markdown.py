"""A board's Markdown as HTML: the same text the terminal prints, its tables made sortable.

Only what boards write is read: GitHub tables, `#` headings, `- ` lists, paragraphs, `code`
and **bold**. Everything is escaped first, so a label cannot inject markup.

    markdown_html("| a | b |\\n|---|--:|\\n| x | 1 |")   # <table class="board">...
"""

from __future__ import annotations

import html
import re

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(inner)]


def _table(lines: list[str]) -> str:
    head = _cells(lines[0])
    body = lines[2:] if len(lines) > 1 and _RULE.match(lines[1]) else lines[1:]
    aligns = [("r" if c.endswith(":") else "") for c in _cells(lines[1])] \
        if len(lines) > 1 and _RULE.match(lines[1]) else []
    out = ['<table class="board sortable"><thead><tr>']
    out += [f'<th class="{aligns[i] if i < len(aligns) else ""}">{_inline(c)}</th>'
            for i, c in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for row in body:
        cells = _cells(row)
        out.append("<tr>" + "".join(
            f'<td class="{aligns[i] if i < len(aligns) else ""}">{_inline(c)}</td>'
            for i, c in enumerate(cells)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def markdown_html(markdown: str) -> str:
    """HTML of a board's Markdown (tables, headings, lists, paragraphs)."""
    blocks: list[str] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            blocks.append(_table(lines[i:j]))
            i = j
        elif line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 2, 6)
            blocks.append(f"<h{level}>{_inline(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.lstrip().startswith(("- ", "* ")):
            items = []
            while i < len(lines) and lines[i].lstrip().startswith(("- ", "* ")):
                items.append(f"<li>{_inline(lines[i].lstrip()[2:])}</li>")
                i += 1
            blocks.append("<ul>" + "".join(items) + "</ul>")
        elif not line.strip():
            i += 1
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith(
                    ("|", "#", "- ", "* ")):
                para.append(_inline(lines[i]))
                i += 1
            blocks.append("<p>" + "<br>".join(para) + "</p>")
    return "\n".join(blocks)
