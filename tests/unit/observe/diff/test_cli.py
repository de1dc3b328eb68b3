"""The diff's command lines: help renders (defaults hold '%'), options reach the parsers."""

from __future__ import annotations

import pytest

from dynlocust.cli import build_parser as dynlocust_parser
from dynlocust.compare.cli import build_parser as compare_parser
from dynlocust.observe.diff.cli import build_parser, parse_run_noise
from dynlocust.observe.diff.errors import DiffError
from dynlocust.observe.diff.gate import DEFAULT_MAPPER_GATE, DEFAULT_RUN_GATE
from dynlocust.observe.diff.stats import RUN_NOISE


def test_help_shows_the_default_gates() -> None:
    text = "".join(build_parser().format_help().split())  # wrapped lines joined again
    assert DEFAULT_RUN_GATE in text and DEFAULT_MAPPER_GATE in text
    assert DEFAULT_MAPPER_GATE in "".join(compare_parser().format_help().split())


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "s.yaml", "--baseline", "b", "--fail-on", "p99>+5%", "--csv", "x"], ("b", "p99>+5%", ["--csv", "x"])),
        (["run", "s.yaml", "--html", "locust.html"], (None, None, ["--html", "locust.html"])),  # still Locust's
    ],
)
def test_run_takes_baseline_options_and_passes_the_rest_to_locust(argv: list[str], expected: tuple) -> None:
    args, passthrough = dynlocust_parser().parse_known_args(argv)
    assert (args.baseline, args.fail_on, passthrough) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, RUN_NOISE),
        ("5%", {"p50": 0.05, "p90": 0.05, "p99": 0.05}),
        ("2.5", {"p50": 0.025, "p90": 0.025, "p99": 0.025}),
        ("p99=40%", {**RUN_NOISE, "p99": 0.40}),
        ("p50=0, p90=15%", {**RUN_NOISE, "p50": 0.0, "p90": 0.15}),
    ],
)
def test_run_noise_is_one_percentage_or_one_per_percentile(text: str | None, expected: dict[str, float]) -> None:
    assert parse_run_noise(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["abc", "-1%", "150", "nan", "p95=10%", "p50=x"])
def test_a_bad_run_noise_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(DiffError, match=r"^--run-noise: expected a percentage from 0 to 100 .*, found"):
        parse_run_noise(text)


def test_run_passes_run_noise_on_to_its_diff() -> None:
    args, passthrough = dynlocust_parser().parse_known_args(["run", "s.yaml", "--baseline", "b", "--run-noise", "8%"])
    assert (args.run_noise, passthrough) == ("8%", [])
    assert build_parser().parse_args(["a", "b", "--run-noise", "8%"]).run_noise == "8%"
