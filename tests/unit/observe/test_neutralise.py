"""Text from outside made inert, table by table: a spreadsheet cell never starts a formula unless it is a plain
number; Markdown text escapes only what Markdown would read as markup, HTML, a link or a table cell, so SLO messages
read as said."""

from __future__ import annotations

import pytest

from dynlocust.observe.neutralise import markdown_text, spreadsheet_cell


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
        ("see http://evil.example/login now", "see http\\://evil.example/login now"),  # no autolink
        ("HTTPS://evil.example", "HTTPS\\://evil.example"),
        ("www.evil.example", "www\\.evil.example"),
        ("[click](http://evil.example)", "\\[click\\](http\\://evil.example)"),
        ("![img](http://evil.example/x.png)", "!\\[img\\](http\\://evil.example/x.png)"),
        ("<http://evil.example>", "&lt;http\\://evil.example>"),
        ("a | b\n| forged | row |", "a \\| b \\| forged \\| row \\|"),
        ("# heading", "# heading"),  # inside a line or cell: not a heading
        ("12.5 ms", "12.5 ms"),
        ("-", "-"),
        ("a\\|b", "a\\\\\\|b"),  # a backslash cannot unescape the pipe after it
    ],
)
def test_markdown_text(text: str, escaped: str) -> None:
    assert markdown_text(text) == escaped


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("# BIG", "\\# BIG"),
        ("> quoted", "\\> quoted"),
        ("- nested", "\\- nested"),
        ("+ nested", "\\+ nested"),
        ("1. nested", "1\\. nested"),
        ("12) nested", "12\\) nested"),
        ("=== setext", "\\=== setext"),
        ("window 3: p99 61.2 ms is not <= 50", "window 3: p99 61.2 ms is not <= 50"),
        ("3 windows", "3 windows"),
    ],
)
def test_markdown_list_item_text(text: str, escaped: str) -> None:
    """After `- `, a line start: no heading, quote or nested list either."""
    assert markdown_text(text, item=True) == escaped


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
        ("=1+1", "'=1+1"),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("\n=1+1", "'\n=1+1"),
        ("  =1+1", "'  =1+1"),  # leading spaces do not hide it
        ("\uff1d1+1", "'\uff1d1+1"),  # a full-width equals sign
        ("-inf", "'-inf"),  # Python reads these as numbers; a spreadsheet does not
        ("-nan", "'-nan"),
        ("+1_000", "'+1_000"),
        ("-1e3)", "'-1e3)"),
        # the project's own figures, negative ones included, are numbers
        ("-0.500", "-0.500"),
        ("+12.5%", "+12.5%"),
        ("-1e-05", "-1e-05"),
        ("-.5", "-.5"),
        ("-3", "-3"),
        (-3, -3),
        (-0.25, -0.25),
        (None, None),
        # text that starts otherwise stays as written
        ("ThrottlingException", "ThrottlingException"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_spreadsheet_cell(cell: object, written: object) -> None:
    assert spreadsheet_cell(cell) == written
