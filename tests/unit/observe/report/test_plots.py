"""The report's SVG charts lay their labels out themselves: every label is written whole, inside the chart."""

from __future__ import annotations

import re
from html import unescape

import pytest

from dynlocust.observe.report.plots import CHAR_PX, bar_chart_svg, verdict_strip_svg, wrap

LONG_REASON = (
    "ThrottlingException / Throughput exceeds the current capacity for one or more global secondary indexes. "
    "DynamoDB is automatically scaling your index so please try again shortly."
)


def texts(svg: str, css_class: str) -> list[tuple[float, str]]:
    """(x, text) of every `<text class=css_class>`."""
    found = re.findall(rf'<text class="{css_class}"[^>]* x="([\d.]+)"[^>]*>([^<]*)</text>', svg)
    return [(float(x), unescape(t)) for x, t in found]


def width_of(svg: str) -> float:
    match = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
    assert match, svg[:200]
    return float(match[1])


@pytest.mark.parametrize(
    "windows",
    [
        [(1, ["ok"]), (2, ["throttled"]), (3, ["throttled", "client-bound"])],
        [(i, ["throttled", "client-bound", "errors"]) for i in range(1, 31)],  # more boxes than fit in one row
        [(1, ["partial (62% ran)"]), (2, ["not-run"])],
        [(1, ["client-bound"])],
    ],
    ids=["three", "thirty-windows", "partial", "one"],
)
def test_the_verdict_strip_writes_every_label_of_every_window_inside_it(windows: list[tuple[int, list[str]]]) -> None:
    svg = verdict_strip_svg(windows, width=800)
    written = re.findall(r'<text class="label" data-window="(\d+)" x="([\d.]+)"[^>]*>([^<]*)</text>', svg)
    by_window: dict[int, list[str]] = {}
    for window, x, text in written:
        by_window.setdefault(int(window), []).append(unescape(text))
        half = len(text) * CHAR_PX / 2  # centred on x
        assert float(x) - half >= 0 and float(x) + half <= width_of(svg), (window, text, x)
    assert by_window == {index: labels for index, labels in windows}
    boxes = [float(w) for w in re.findall(r'<rect class="bar"[^>]* width="([\d.]+)"', svg)]
    longest = max(len(label) for _, labels in windows for label in labels) * CHAR_PX
    assert all(w >= longest for w in boxes), (boxes, longest)  # no label wider than its box


@pytest.mark.parametrize(
    "label",
    ["ThrottlingException / IndexWriteKeyRangeThroughputExceeded", LONG_REASON, "x" * 300, "short"],
    ids=["gsi-code", "long-reason", "one-long-word", "short"],
)
def test_bar_labels_are_whole_and_inside_the_chart(label: str) -> None:
    svg = bar_chart_svg([(label, 2969.0, "#d62728"), ("other", 5.0, "#d62728")], chart_id="t", title="throttles")
    lines = texts(svg, "label")
    assert " ".join(t for _, t in lines).replace(" ", "") == (label + "other").replace(" ", "")
    for x, text in lines:
        assert x >= 0 and x + len(text) * CHAR_PX <= width_of(svg), text


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("a b c", 100, ["a b c"]),
        ("aaaa bbbb", 4 * CHAR_PX, ["aaaa", "bbbb"]),
        ("abcdefghij", 4 * CHAR_PX, ["abcd", "efgh", "ij"]),
        ("", 50, [""]),
    ],
)
def test_wrap(text: str, width: float, lines: list[str]) -> None:
    assert wrap(text, width) == lines
