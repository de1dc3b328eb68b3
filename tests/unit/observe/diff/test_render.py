"""The same diff as console text, Markdown and HTML, from results files of known numbers."""

from __future__ import annotations

import re
from pathlib import Path

from dynlocust.observe.diff.cli import run_rendered
from dynlocust.observe.diff.load import RunSide, load_side
from dynlocust.observe.diff.render import console, html, markdown, run_charts
from tests.support.results_files import Window, write_results


def _sides(tmp_path: Path) -> tuple[RunSide, RunSide]:
    a = load_side(write_results(tmp_path / "a" / "results.jsonl", [Window("ramp", 200, seed=1)]), "baseline")
    b = load_side(write_results(tmp_path / "b" / "results.jsonl", [Window("ramp", 200, latency=0.004, seed=2)]), "new")
    assert isinstance(a, RunSide) and isinstance(b, RunSide)
    return a, b


def test_formats_say_the_same(tmp_path: Path) -> None:
    base, new = _sides(tmp_path)
    rendered = run_rendered(base, new, "p50>+20%")
    text = console(rendered)
    assert "REGRESSION: p50 of 'ramp 200/s'" in text and text.rstrip().endswith("(p50>+20%)")
    md = markdown(rendered)
    assert md.startswith("## dynlocust diff: scenario known\n\n:x: **REGRESSION: 1 significant change(s)")
    assert "| window | metric | baseline | new | change | significant |" in md
    assert next(line for line in md.splitlines() if line.startswith("| ramp 200/s | p50 |")).count("**+") == 1
    page = html(rendered, run_charts(base.report, new.report))
    assert page.count("<svg") == 2 and 'data-series="baseline p50"' in page and 'data-series="new p50"' in page
    assert '<tr data-metric="p50" data-significant="true">' in page


def test_no_gate_passes_quietly(tmp_path: Path) -> None:
    base, new = _sides(tmp_path)
    rendered = run_rendered(base, new, "none")
    assert rendered.gate.exit_code == 0 and not rendered.gate.warnings
    assert ":white_check_mark:" in markdown(rendered)


HOSTILE_PHASE = "<img src=x onerror=alert(1)> | forged | [x](http://evil.example) `"


def test_markdown_escapes_what_the_results_files_say(tmp_path: Path) -> None:
    """A phase name, a path and the gate's lines come from results files: no HTML, link, code span or forged cell."""
    folder = tmp_path / "[x](http:" / "evil.example)`"
    a = load_side(write_results(folder / "a" / "results.jsonl", [Window(HOSTILE_PHASE, 200, seed=1)]), "baseline")
    b = load_side(
        write_results(tmp_path / "b" / "results.jsonl", [Window(HOSTILE_PHASE, 200, latency=0.004, seed=2)]), "new"
    )
    assert isinstance(a, RunSide) and isinstance(b, RunSide)
    md = markdown(run_rendered(a, b, "p50>+20%"))
    assert HOSTILE_PHASE in console(run_rendered(a, b, "p50>+20%"))  # the console shows it as written
    assert "<img" not in md and "http://" not in md
    assert not re.search(r"(?<!\\)[`\[\]]", md)  # every backtick and bracket escaped: no code span, no link
    for line in md.splitlines():
        if line.startswith("|"):  # every row has the header's 6 columns: its only bare pipes are separators
            assert line.replace("\\|", "").count("|") == 7, line
    assert "- **regression**: p50 of '&lt;img src=x onerror=alert(1)> \\| forged \\| \\[x\\](http\\://" in md
