"""The diff's command lines: help renders (defaults hold '%'), options reach the parsers."""

from __future__ import annotations

import pytest

from dynlocust.cli import build_parser as dynlocust_parser
from dynlocust.diff.cli import build_parser
from dynlocust.diff.gate import DEFAULT_MAPPER_GATE, DEFAULT_RUN_GATE
from dynlocust.mapper.compare import build_parser as compare_parser


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
