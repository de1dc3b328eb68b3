"""Text from outside made inert in the files the project writes: a spreadsheet cell, a Markdown line or table cell.

Names (scenario, run, table, index, phase), verdict reasons, SLO texts and the service's error messages come from
results files, scenario files and the service's responses. Copied raw, a CSV cell that starts with `=` is run as a
formula by a spreadsheet program, and a Markdown cell with a pipe forges columns, with `<` runs HTML, with a URL
becomes a link. Every writer of CSV (`observe.report.csvout`) and Markdown (`observe.report.markdown` and
`.table`, `observe.diff.render`) sends such text through here; the figures the project formats itself (numbers,
negative ones included) stay as they are.
"""

from __future__ import annotations

import re
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""OWASP's CSV injection characters (=, +, -, @, tab, carriage return), a line feed, and their full-width forms,
which some spreadsheet programs also take for a formula's start."""
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?%?")
"""A plain decimal number as the project writes one (`-0.500`, `+12.5%`, `1e-05`): no formula can hide in it."""


def spreadsheet_cell(cell: Any) -> Any:
    """`cell`, or text that a spreadsheet would evaluate (after any leading spaces) prefixed with `'`, which shows it
    as text. Numbers, and text that is a plain number, are left alone."""
    if not isinstance(cell, str) or _NUMBER.fullmatch(cell):
        return cell
    if cell.lstrip(" ").startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


_MARKDOWN_ESCAPES = str.maketrans({"\\": "\\\\", "|": "\\|", "`": "\\`", "*": "\\*", "[": "\\[", "]": "\\]"})
_HTML_START = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?\w+;)")
"""Where Markdown would start raw HTML (a tag, a comment) or an entity; a bare `<=` or `&` stays as written."""
_AUTOLINK = re.compile(r"(?<=[A-Za-z])://|(?<=\bwww)\.", re.IGNORECASE)
"""Where GitHub's Markdown would make a link of a bare `scheme://` or `www.` (escaped, it shows the same text)."""
_BLOCK_START = re.compile(r"^(?:[#>+=-]|\d+(?=[.)]))")
"""What would make a list item's text (`- TEXT`) a heading, a quote or a nested list."""


def markdown_text(text: object, *, item: bool = False) -> str:
    """`text` safe inside a Markdown line or table cell: one line, no HTML, no markup, no link, no column separator;
    `item`: it starts a list item's text, so no block either (a heading, a quote, a nested list).

    Copied raw, a pipe or a newline forges table cells and rows, HTML runs in a viewer that renders it, and a URL
    becomes a link the reader may follow."""
    escaped = " ".join(str(text).split()).translate(_MARKDOWN_ESCAPES)
    escaped = _HTML_START.sub(lambda m: "&lt;" if m.group() == "<" else "&amp;", escaped)
    escaped = _AUTOLINK.sub(lambda m: "\\" + m.group(), escaped)
    if item:
        escaped = _BLOCK_START.sub(lambda m: m.group() + "\\" if m.group()[0].isdigit() else "\\" + m.group(), escaped)
    return escaped
