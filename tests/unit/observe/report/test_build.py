"""Reports rebuilt from recorded results: a real complete run and a real run killed with SIGKILL mid-run.

Both fixtures were written by `dynlocust run scenarios/quickstart.yaml` (the second killed after two windows).
Structure is checked against the recorded figures, never golden bytes.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from dynlocust.observe.report import build, csvout, html, markdown, plots
from dynlocust.observe.report.table import COLUMNS, format_window_table
from dynlocust.run.results import ResultsError
from dynlocust.run.verdict import VERDICTS

DATA = Path(__file__).parent / "data"
COMPLETE = DATA / "complete.jsonl"
KILLED = DATA / "killed.jsonl"


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _windows(path: Path) -> list[dict[str, Any]]:
    return [r for r in _records(path) if r["type"] == "window"]


def test_complete_run_matches_the_recorded_windows() -> None:
    report = build.load_report(COMPLETE)
    recorded = _windows(COMPLETE)
    assert not report.partial and report.notes == []
    assert report.run_id == "r1" and report.scenario == "quickstart"
    assert report.warnings == []
    assert [w.index for w in report.windows] == [r["index"] for r in recorded]
    for w, r in zip(report.windows, recorded, strict=True):
        assert w.verdict == r["verdict"]
        assert w.phase == r["phase"]
        for key in ("offered", "sent", "accepted", "throttled", "throttled_by", "latency", "first_throttle_s"):
            assert w.summary[key] == r["summary"][key], key
        assert sum(b.offered for b in w.bins) == r["summary"]["offered"]
        assert sum(b.throttled for b in w.bins) == r["summary"]["throttled"]
        assert [b.t for b in w.bins] == sorted(b.t for b in w.bins)
    expected: dict[str, int] = {}
    for r in recorded:
        for key, n in r["summary"]["throttled_by"].items():
            expected[key] = expected.get(key, 0) + n
    assert report.throttles() == expected and sum(expected.values()) > 0
    assert list(report.throttles().values()) == sorted(expected.values(), reverse=True)


def test_killed_run_is_partial_and_says_why() -> None:
    report = build.load_report(KILLED)
    assert report.partial and report.status() == "PARTIAL"
    assert report.end is None
    assert len(report.windows) == 2 and len(report.planned) == 4
    assert any("no end record" in n for n in report.notes)
    assert any("2 of 4 planned windows" in n for n in report.notes)


def test_a_cut_last_line_is_reported_not_fatal(tmp_path: Path) -> None:
    text = KILLED.read_text()
    third = _records(COMPLETE)[3]
    (tmp_path / "results.jsonl").write_text(text + json.dumps(third)[:500])
    report = build.load_report(tmp_path)  # a run directory works too
    assert len(report.windows) == 2
    assert any("cut short" in n for n in report.notes)


def test_a_run_killed_before_its_first_window_closed_still_builds(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text(KILLED.read_text().splitlines()[0] + "\n")
    built = build.build_reports(tmp_path / "results.jsonl", tmp_path / "out")
    assert built.report.windows == [] and built.report.partial
    assert "0 of 4 planned windows closed" in built.report.notes
    text = (tmp_path / "out" / "report.html").read_text()
    assert 'data-status="partial"' in text and text.count("<svg") == 4
    assert "No window closed." in (tmp_path / "out" / "summary.md").read_text()


def test_a_bad_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    lines = KILLED.read_text().splitlines()
    lines.insert(1, "{not json")
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ResultsError, match=r"r\.jsonl:2"):
        build.load_report(path)


def test_an_empty_results_file_is_a_report_error(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("")
    with pytest.raises(build.ReportError, match="expected a run record and windows, found 0 records"):
        build.load_report(path)


def _per_worker(tmp_path: Path, *, drop_window: int | None = None) -> Path:
    """The complete run as two workers' own records (no master merge), optionally one worker missing a window."""
    out = []
    for r in _records(COMPLETE):
        if r["type"] == "run":
            out.append({**r, "worker_count": 2})
        elif r["type"] == "window":
            own = {k: v for k, v in r.items() if k not in ("workers", "missing_workers")}
            out.append({**own, "worker_index": 0})
            if r["index"] != drop_window:
                out.append({**own, "worker_index": 1})
        else:
            out.append(r)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


def test_per_worker_records_merge_by_window_index(tmp_path: Path) -> None:
    report = build.load_report(_per_worker(tmp_path))
    recorded = _windows(COMPLETE)
    assert not report.partial
    for w, r in zip(report.windows, recorded, strict=True):
        assert w.workers == 2
        assert w.summary["offered"] == 2 * r["summary"]["offered"]
        assert w.summary["target_rate"] == 2 * r["summary"]["target_rate"]
        assert w.verdict == r["verdict"]


def test_a_worker_missing_from_a_window_makes_it_partial(tmp_path: Path) -> None:
    report = build.load_report(_per_worker(tmp_path, drop_window=0))
    assert report.partial
    assert any("window 1 has results from fewer than 2 workers" in n for n in report.notes)
    assert report.windows[0].summary["partial"] is True
    assert report.windows[0].verdict == "partial"  # window 0 of the fixture was "ok"
    assert report.windows[1].workers == 2


def test_a_master_merged_window_with_a_lost_worker_is_partial(tmp_path: Path) -> None:
    out = []
    for r in _records(COMPLETE):
        if r["type"] == "run":
            r = {**r, "worker_count": 2}
        elif r["type"] == "window" and r["index"] == 3:
            r = {**r, "missing_workers": [1]}
        elif r["type"] == "end":
            r = {**r, "lost_workers": [1], "clock_skew": True, "clock_offsets": {"0": 0.08}}
        out.append(r)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    report = build.load_report(path)
    assert report.partial
    assert "workers [1] were lost" in report.notes
    assert any("windows 1-4 have" in n for n in report.notes)  # every record names one worker of two
    assert report.warnings == ["worker clocks are skewed from the master's (worker 0: +80.0 ms)"]
    assert "Warning: worker clocks are skewed" in markdown.render(report)
    assert "Warning: worker clocks are skewed" in html.render(report)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["ok", "ok"], "ok"),
        (["ok", "throttled"], "throttled"),
        (["throttled", "errors"], "errors"),
        (["errors", "partial"], "partial"),
        (["partial", "client-bound", "ok"], "partial"),  # a window that ran in part is never client-bound
        (["client-bound", "throttled", "ok"], "client-bound"),
        (["ok", "not-run"], "not-run"),
    ],
)
def test_worst_verdict_follows_the_verdict_precedence(verdicts: list[str], expected: str) -> None:
    assert set(build._PRECEDENCE) == set(VERDICTS)
    assert build._worst(verdicts) == expected


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(text)
    return parser.tags


def test_html_is_self_contained_with_every_chart() -> None:
    report = build.load_report(COMPLETE)
    text = html.render(report)
    tags = _tags(text)
    names = {t for t, _ in tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed"}
    for _, attrs in tags:
        for key in ("src", "href"):
            assert key not in attrs, attrs
        assert "url(" not in (attrs.get("style") or "")
    assert "url(" not in text.split("<style>")[1].split("</style>")[0]
    charts = {a.get("id") for t, a in tags if t == "svg"}
    assert charts == {"timeline", "latency", "throttles", "verdicts"}
    rows = [a for t, a in tags if t == "tr" and "data-window" in a]
    assert [int(a["data-window"] or -1) for a in rows] == [w.index for w in report.windows]
    series = [a.get("data-series") for t, a in tags if t == "path" and a.get("class") == "series"]
    assert {"target/s", "offered/s", "accepted/s", "throttled/s", "p50", "p90", "p99"} <= set(series)
    assert 'data-status="complete"' in text and "PARTIAL" not in text


def test_html_of_a_killed_run_says_partial() -> None:
    text = html.render(build.load_report(KILLED))
    assert 'data-status="partial"' in text
    assert "PARTIAL RESULTS" in text and "no end record" in text
    assert "<title>" in text and "(PARTIAL)</title>" in text


def test_markdown_reuses_the_window_table_and_marks_partial() -> None:
    complete = build.load_report(COMPLETE)
    text = markdown.render(complete)
    assert format_window_table(complete.windows) in text
    assert "PARTIAL" not in text and "TableWriteKeyRangeThroughputExceeded" in text
    killed = markdown.render(build.load_report(KILLED))
    assert "(PARTIAL)" in killed.splitlines()[0]
    assert "**PARTIAL RESULTS**" in killed and "2 of 4 windows" in killed


def test_csv_rows_add_up_to_the_report() -> None:
    report = build.load_report(COMPLETE)
    files = csvout.render(report)
    windows = list(csv.DictReader(io.StringIO(files["windows.csv"])))
    bins = list(csv.DictReader(io.StringIO(files["bins.csv"])))
    throttles = list(csv.DictReader(io.StringIO(files["throttles.csv"])))
    assert tuple(windows[0]) == csvout.WINDOW_COLUMNS
    assert [int(r["window"]) for r in windows] == [w.index + 1 for w in report.windows]  # counted from 1
    assert [r["verdict"] for r in windows] == [w.verdict for w in report.windows]
    assert len(bins) == sum(len(w.bins) for w in report.windows)
    for w in report.windows:
        assert sum(int(b["offered"]) for b in bins if int(b["window"]) == w.index + 1) == w.summary["offered"]
    assert sum(int(r["requests"]) for r in throttles) == sum(report.throttles().values())


@pytest.mark.parametrize(
    ("value", "expected"), [(0, 1.0), (0.3, 0.5), (1, 1), (7, 10), (120.2, 200), (200, 200), (201, 250), (999, 1000)]
)
def test_nice_axis_maximum(value: float, expected: float) -> None:
    assert plots._nice_max(value) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (0, 60, [0, 10, 20, 30, 40, 50, 60]),
        (0, 68, [0, 20, 40, 60]),
        (3, 17, [5, 7.5, 10, 12.5, 15]),
        (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1]),
        (5, 5, [5]),
    ],
)
def test_nice_ticks(lo: float, hi: float, expected: list[float]) -> None:
    assert plots._nice_ticks(lo, hi) == pytest.approx(expected)


def test_charts_of_an_empty_series_still_render() -> None:
    svg = plots.line_chart_svg([plots.Series("a", [], "#000")], chart_id="e", title="t", x_label="x", y_label="y")
    assert svg.startswith("<svg") and svg.endswith("</svg>") and 'id="e"' in svg
    bars = plots.bar_chart_svg([], chart_id="b", title="none")
    assert ">none</text>" in bars


def test_build_reports_writes_every_format(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(COMPLETE, run_dir / "results.jsonl")
    built = build.build_reports(run_dir / "results.jsonl")
    out = run_dir / "report"
    assert built.files["html"] == [out / "report.html"]
    assert built.files["markdown"] == [out / "summary.md"]
    assert sorted(p.name for p in built.files["csv"]) == ["bins.csv", "throttles.csv", "windows.csv"]
    for paths in built.files.values():
        for p in paths:
            assert p.stat().st_size > 0
    if built.skipped:
        assert built.files["png"] == [] and "matplotlib" in built.skipped[0]
    else:
        assert sorted(p.name for p in built.files["png"]) == [
            "latency.png",
            "throttles.png",
            "timeline.png",
            "verdicts.png",
        ]
        for p in built.files["png"]:
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_main_builds_and_prints_the_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build.main([str(KILLED), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "(PARTIAL)" in printed and f"html: {tmp_path / 'out' / 'report.html'}" in printed
    assert (tmp_path / "out" / "report.html").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "expected a readable file"),
        ("", "found 0 records"),
        ('{"type": "bogus"}\n{}\n', "results.jsonl:1"),
        ('{"type": "run", "t0": 1.0}\n{"type": "window", "index": 0}\n', "window index 0: expected window statistics"),
        ('{"type": "run", "windows": [{"phase": "x"}]}\n', "found a malformed one (KeyError('index'))"),
    ],
)
def test_main_reports_user_errors_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "results.jsonl"
    if content is not None:
        path.write_text(content)
    assert build.main([str(path), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynlocust: error: ") and message in err


def test_results_recorded_before_verdict_details_still_load() -> None:
    report = build.load_report(COMPLETE)  # recorded before verdict_detail, late counts and conclusions existed
    recorded = _windows(COMPLETE)
    for w, r in zip(report.windows, recorded, strict=True):
        assert w.verdict_detail is not None and w.verdict_detail.labels == (r["verdict"],)
        assert w.saturation is not None and w.saturation.reasons == tuple(r["saturation"]["reasons"])
    assert report.conclusion is not None and report.conclusion.client_limited == (1, 2, 3)
    assert report.conclusion.text.startswith("Windows 2-4 are client-bound (lag, dropped; ")
    assert "0 of 0" not in report.conclusion.text  # figures it does not have are left out, not shown as zeros


def _fleet_results(tmp_path: Path) -> Path:
    """A real `FleetMerge` of two workers, worker 1 near a core in window 1, written to a results file."""
    from dynlocust.run.saturation import Saturation
    from tests.unit.fleet.test_merge import make_report, totals, worker_window

    starved = Saturation(True, ("cpu",), 0.97, 0.002, 0, 0, cpu_seconds=2.0, late_bound=0.025, due=20, sent=20,
                         cpu_wait=1.5, cpu_pressure=1.8)  # fmt: skip
    report = make_report(tmp_path, 2)
    for index in (0, 1):
        for worker in (0, 1):
            record = worker_window(report, index, worker, {"ok": 4, "throttled": 1 + index * 4})
            if (index, worker) == (1, 1):
                record = dataclasses.replace(record, saturation=starved)
            report.add_window(worker, record)
    report.worker_done(0, totals(0, 15))
    report.worker_done(1, totals(1, 15))
    return tmp_path / "r.jsonl"


def test_the_verdict_its_evidence_and_the_conclusion_reach_every_format(tmp_path: Path) -> None:
    report = build.load_report(_fleet_results(tmp_path))
    end = _records(tmp_path / "r.jsonl")[-1]
    assert report.conclusion is not None and report.conclusion.text == end["conclusion"]["text"]
    assert [w.verdict_detail.labels for w in report.windows if w.verdict_detail] == [
        ("throttled",),
        ("throttled", "client-bound"),  # CPU near a core, yet every send left on time: DynamoDB's no is stronger
    ]
    assert "the client was also limited in window 2 (cpu; CPU 0.97 of a core; on worker 1)" in end["conclusion"]["text"]

    text = markdown.render(report)
    assert f"**Conclusion:** {end['conclusion']['text']}" in text
    assert "| throttled + client-bound | cpu (worker 1) |" in text
    page = html.render(report)
    assert f'<p id="conclusion">{escape(end["conclusion"]["text"])}</p>' in page
    assert '<td class="text reasons">cpu (worker 1)</td>' in page
    assert "<th>cpu wait</th>" in page and "<td>1.50 s (75%)</td>" in page  # the worst worker's wait
    rows = list(csv.DictReader(io.StringIO(csvout.render(report)["windows.csv"])))
    assert [(r["verdicts"], r["stronger"], r["reasons"], r["client_bound_workers"]) for r in rows] == [
        ("throttled", "", "", ""),
        ("throttled;client-bound", "service", "cpu", "1"),
    ]
    assert rows[1]["cpu"] == "0.970" and rows[1]["ran_fraction"] == "1.0000" and rows[1]["due"] == "20"
    assert (rows[1]["cpu_wait_s"], rows[1]["cpu_pressure_s"]) == ("1.500", "1.800")


HOSTILE = '=HYPERLINK("http://x")|<img src=x onerror=alert(1)>\n| forged | row |\r`code`'


def _hostile_report(tmp_path: Path) -> build.RunReport:
    """The complete run with text fields rewritten as someone editing a results file (or a service error) could."""
    records = _records(COMPLETE)
    for r in records:
        if r["type"] == "run":
            r.update(run_id=HOSTILE, scenario=HOSTILE)
            for w in r["windows"]:
                w["phase"] = HOSTILE
        elif r["type"] == "window":
            r.update(verdict=HOSTILE, phase=HOSTILE, slo_failures=[HOSTILE])
            for tally in [r["summary"], *r["bins"]]:
                tally["throttled_by"] = {f"@SUM(1)|{HOSTILE}": 3, f"-1+2|{HOSTILE}": 1}
        elif r["type"] == "end":
            r.update(abort_reason=HOSTILE, exit_code=HOSTILE)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return build.load_report(path)


def test_markdown_escapes_text_copied_from_the_results(tmp_path: Path) -> None:
    report = _hostile_report(tmp_path)
    text = markdown.render(report)
    assert "<img" not in text and "<script" not in text.lower()
    assert "| forged | row |" not in text and "\r" not in text
    assert HOSTILE.split("\n")[0] not in text  # the pipe after the formula is escaped
    rows = [line for line in text.splitlines() if line.startswith("|")]
    # the two tables' headers, separators and rows (4 windows, 2 throttle reasons): no forged row
    assert len(rows) == (2 + len(report.windows)) + (2 + 2)
    for line in rows:  # every row keeps its columns: the unescaped pipes are the separators only
        assert line.replace("\\|", "").count("|") in (len(COLUMNS) + 1, 4), line
    assert not any(line.startswith(("| forged", "<", "`")) for line in text.splitlines())


def test_csv_neutralizes_formulas_and_keeps_its_columns(tmp_path: Path) -> None:
    report = _hostile_report(tmp_path)
    files = csvout.render(report)
    for name, text in files.items():
        rows = list(csv.reader(io.StringIO(text)))
        assert len({len(r) for r in rows}) == 1, name  # quoting kept every row to the header's columns
        for row in rows[1:]:
            for cell in row:
                if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                    float(cell)  # only a number may start so (a negative one); anything else is escaped
    windows = list(csv.DictReader(io.StringIO(files["windows.csv"])))
    assert windows[0]["phase"] == "'" + HOSTILE
    assert windows[0]["verdict"] == "partial"  # a verdict outside the vocabulary is never echoed: read as partial
    throttles = list(csv.DictReader(io.StringIO(files["throttles.csv"])))
    assert {r["code"] for r in throttles} == {"'@SUM(1)", "'-1+2"}


def test_summary_list_items_cannot_become_headings_or_links(tmp_path: Path) -> None:
    """An SLO failure is a list item in summary.md: a results file's text there starts no heading, quote or link."""
    records = _records(COMPLETE)
    for r in records:
        if r["type"] == "window":
            r["slo_failures"] = ["# forged heading", "> quote http://evil.example"]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    text = markdown.render(build.load_report(path))
    assert "- \\# forged heading" in text and "- \\> quote http\\://evil.example" in text
    assert "\n- #" not in text and "\n- >" not in text and "http://" not in text


@pytest.mark.parametrize(
    ("code", "tone", "words"),
    [
        (0, "complete", "exit code 0: passed"),
        (3, "failed", "exit code 3: an SLO failed"),
        (8, "inconclusive", "exit code 8: inconclusive: too few windows could be judged"),
        (1, "failed", "exit code 1: failed"),
    ],
)
def test_the_status_box_is_coloured_and_worded_by_the_exit_code(
    tmp_path: Path, code: int, tone: str, words: str
) -> None:
    """It was green for every complete run ("Complete: 4 windows, exit code 3."), a failed SLO's too."""
    records = _records(COMPLETE)
    if code == 3:
        window = next(r for r in records if r["type"] == "window")
        window["slo_failures"] = ["window 1: p99 latency 412 ms > 250 ms"]
    records[-1]["exit_code"] = code
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    page = html.render(build.load_report(path))
    status = page.split('id="status"', 1)[1].split("</div>", 1)[0]
    assert f'<div class="{tone}" id="status"' in page and f'data-exit-code="{code}"' in status
    assert escape(words) in status
    if code == 3:  # the failure right under the status, before the run's details and the window table
        assert page.index('id="slo-failures"') < page.index('class="meta"') < page.index('id="windows"')
        assert "p99 latency 412 ms" in page.split('id="slo-failures"', 1)[1].split("</ul>", 1)[0]


def test_every_throughput_chart_shows_what_was_sent_beside_what_came_due() -> None:
    """offered/s is the schedule: without sent/s, sends the client never made read as DynamoDB refusing them."""
    report = build.load_report(COMPLETE)
    series = {s.name: s for s in plots.timeline_series(report)}  # the report's SVG and PNG, and the live chart
    bins = [b for w in report.windows for b in w.bins]
    assert [y for _, y in series["sent/s"].points] == [b.sent / b.seconds for b in bins]
    assert [x for x, _ in series["sent/s"].points] == [x for x, _ in series["offered/s"].points]
    page = html.render(report)
    assert 'data-series="sent/s"' in page.split('id="timeline"', 1)[1].split("</svg>", 1)[0]
    rows = list(csv.DictReader(io.StringIO(csvout.render(report)["bins.csv"])))
    assert [int(r["sent"]) for r in rows] == [b.sent for b in bins]


def test_latency_png_ticks_only_whole_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    ticks: dict[str, list[float]] = {}
    save = Figure.savefig

    def recording(self: Figure, path: Any, *args: Any, **kwargs: Any) -> Any:
        self.canvas.draw()
        ticks[Path(path).name] = [float(t) for ax in self.axes for t in ax.get_xticks()]
        return save(self, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", recording)
    plots.write_pngs(build.load_report(COMPLETE), tmp_path)
    assert ticks["latency.png"] and all(t.is_integer() for t in ticks["latency.png"]), ticks["latency.png"]


ENDPOINT_KILLED = DATA / "endpoint-killed.jsonl"
"""A real run whose embedded endpoint was killed with SIGKILL in its first window (4 windows of 3 s at 20/s)."""


def test_a_killed_endpoint_is_named_in_the_conclusion_and_the_run_is_complete_and_failed() -> None:
    """It said only that the test failed, and the report called a run whose 4 windows all closed "did not
    complete"."""
    from dynlocust.observe.conclusion import conclude

    windows = _windows(ENDPOINT_KILLED)
    text = conclude(windows).text
    assert text.endswith(
        "The endpoint stopped answering in window 1 (connection refused: 24 of its 59 requests, then all 180 of "
        "windows 2-4)."
    ), text
    report = build.load_report(ENDPOINT_KILLED)
    assert not report.partial and report.failure is not None
    page = html.render(report)
    status = page.split('id="status"', 1)[1].split("</div>", 1)[0]
    assert 'data-status="complete"' in page and "PARTIAL" not in page
    assert "exit code 1: failed" in status and "The run failed: window 1: 24 of 59 requests failed" in status


def test_an_endpoint_that_answered_to_the_end_is_not_said_lost() -> None:
    from dynlocust.observe import endpoint_lost

    assert endpoint_lost.sentence(_windows(COMPLETE)) is None
    windows = _windows(ENDPOINT_KILLED)
    windows[-1]["summary"]["accepted"] = 1  # it answered again in the last window: not lost
    assert endpoint_lost.sentence(windows) is None


def _search_report(tmp_path: Path, text: str = "TableWriteKeyRangeThroughputExceeded") -> build.RunReport:
    """The complete run read as a ceiling search of table `t` (its `ceiling` record as the search writes it), with
    `text` as its throttle reason and resource."""
    probes = [
        {"index": 0, "rate": 100.0, "outcome": "clean", "reasons": [], "resources": [], "low": 95.0, "high": None},
        {"index": 1, "rate": 150.0, "outcome": "throttled", "reasons": [text], "resources": [text], "low": 95.0,
         "high": 150.0},
    ]  # fmt: skip
    ceiling = {"type": "ceiling", "operation": "write", "low": 95.0, "high": 150.0, "rate": 122.5,
               "limited_by": "dynamodb", "reasons": [text], "resource": text, "resource_kind": "index", "windows": 2,
               "stopped": "max_windows", "precision": 0.02, "window_s": 5.0, "burst_s": 0.25,
               "capacity_scale": 0.05, "probes": probes}  # fmt: skip
    records = _records(COMPLETE)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records[:-1], ceiling, records[-1]]))
    return build.load_report(path)


def test_markdown_and_csv_carry_the_search_its_probes_and_the_plan(tmp_path: Path) -> None:
    report = _search_report(tmp_path)
    plan = report.capacity_plan()
    assert plan is not None and plan.ceiling == 122.5
    text = markdown.render(report)
    assert "### Ceiling search" in text
    assert (
        "| write | dynamodb | TableWriteKeyRangeThroughputExceeded | 2 | max_windows | 95.0 | 150.0 | 122.5 | "
        "TableWriteKeyRangeThroughputExceeded |" in text
    )
    assert "| 1 | 100.0 | clean | 95.0 | - | - |" in text and "| 2 | 150.0 | throttled | 95.0 | 150.0 |" in text
    assert f"### Capacity plan\n\nC{plan.lines()[0][1:]}.\n" in text
    assert all(f"- {line.strip()}" in text for line in plan.lines()[1:])
    files = csvout.render(report)
    (row,) = csv.DictReader(io.StringIO(files["ceiling.csv"]))
    reason = "TableWriteKeyRangeThroughputExceeded"
    assert row == {"operation": "write", "low": "95.0", "high": "150.0", "rate": "122.5", "limited_by": "dynamodb",
                   "reasons": reason, "resource": reason, "windows": "2", "stopped": "max_windows"}  # fmt: skip
    probes = list(csv.DictReader(io.StringIO(files["probes.csv"])))
    assert [(p["window"], p["rate"], p["outcome"], p["high"]) for p in probes] == [
        ("1", "100.000", "clean", ""),
        ("2", "150.000", "throttled", "150.000"),
    ]
    figures = {r["figure"]: r for r in csv.DictReader(io.StringIO(files["plan.csv"]))}
    assert figures["ceiling_per_s"]["value"] == "122.500"
    assert plan.at_ceiling is not None
    assert float(figures["units_per_s_at_ceiling"]["write"]) == pytest.approx(plan.at_ceiling.write, abs=1e-3)
    assert float(figures["provisioned_units_per_s"]["write"]) == plan.provisioned.write
    assert figures["dollars_per_month_on_demand"]["value"] == f"{plan.on_demand_month:.2f}"
    assert figures["prices_as_of"]["value"] == plan.prices.as_of
    caveats = [r["value"] for r in csv.DictReader(io.StringIO(files["plan.csv"])) if r["figure"] == "caveat"]
    assert caveats == plan.caveats and any("capacity_scale 0.05" in c for c in caveats)
    fixed = csvout.render(build.load_report(COMPLETE))
    assert sorted(fixed) == ["bins.csv", "throttles.csv", "windows.csv"]  # a fixed plan has no search files
    assert "### Ceiling search" not in markdown.render(build.load_report(COMPLETE))


def test_the_search_sections_neutralise_text_copied_from_the_results(tmp_path: Path) -> None:
    report = _search_report(tmp_path, HOSTILE)
    text = markdown.render(report)
    assert "<img" not in text and "| forged | row |" not in text
    assert not any(line.startswith(("| forged", "<", "`")) for line in text.splitlines())
    for name in ("ceiling.csv", "probes.csv", "plan.csv"):
        rows = list(csv.reader(io.StringIO(csvout.render(report)[name])))
        assert len({len(r) for r in rows}) == 1, name
        assert not any(cell[:1] in ("=", "+", "@") for row in rows[1:] for cell in row), name
    (row,) = csv.DictReader(io.StringIO(csvout.render(report)["ceiling.csv"]))
    assert row["resource"] == row["reasons"] == "'" + HOSTILE
