"""Markdown text escapes only what Markdown would read as markup, HTML or a table cell; SLO messages read as said."""

from __future__ import annotations

import pytest

from dynlocust.observe.report.table import markdown_text


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("window 3: p99 ms 61.2 is not <= 50", "window 3: p99 ms 61.2 is not <= 50"),  # summary.md had &lt;=
        ("achieved ratio 0.9 is not >= 0.99", "achieved ratio 0.9 is not >= 0.99"),
        ("reads & writes", "reads & writes"),
        ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
        ("<!-- hidden -->", "&lt;!-- hidden -->"),
        ("&amp; an entity", "&amp;amp; an entity"),
        ("a|b", "a\\|b"),
        ("`code` *bold* [link]", "\\`code\\` \\*bold\\* \\[link\\]"),
        ("two\nlines", "two lines"),
    ],
)
def test_markdown_text(text: str, escaped: str) -> None:
    assert markdown_text(text) == escaped
