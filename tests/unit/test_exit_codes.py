"""exit_codes: one table, each number one meaning, and the worst of several codes."""

from __future__ import annotations

import pytest

from dynlocust.exit_codes import MEANINGS, SEVERITY, ExitCode, meaning, worst


def test_every_code_has_one_meaning_and_one_rank() -> None:
    assert set(MEANINGS) == set(ExitCode) == set(SEVERITY)
    assert len(set(MEANINGS.values())) == len(MEANINGS)
    assert len({int(c) for c in ExitCode}) == len(ExitCode)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (ExitCode.PASSED, "passed"),
        (ExitCode.FAILED, "failed"),
        (ExitCode.BAD_INPUT, "bad input"),
        (ExitCode.SLO_FAILED, "SLO failed"),
        (ExitCode.ABORTED, "aborted"),
        (ExitCode.WORKER_LOST, "worker was lost"),
        (ExitCode.REGRESSION, "regression"),
        (ExitCode.MASTER_LOST, "lost its master"),
        (ExitCode.INCONCLUSIVE, "inconclusive"),
        (99, "not one of dynlocust's"),
    ],
)
def test_meaning(code: int, words: str) -> None:
    assert words in meaning(code)


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ([], ExitCode.PASSED),
        ([ExitCode.PASSED, ExitCode.PASSED], ExitCode.PASSED),
        ([ExitCode.SLO_FAILED, ExitCode.PASSED], ExitCode.SLO_FAILED),
        ([ExitCode.SLO_FAILED, ExitCode.INCONCLUSIVE], ExitCode.INCONCLUSIVE),
        ([ExitCode.WORKER_LOST, ExitCode.ABORTED], ExitCode.ABORTED),
        ([ExitCode.ABORTED, ExitCode.FAILED, ExitCode.SLO_FAILED], ExitCode.FAILED),
        ([ExitCode.FAILED, ExitCode.BAD_INPUT], ExitCode.BAD_INPUT),
        ([ExitCode.REGRESSION, ExitCode.SLO_FAILED], ExitCode.SLO_FAILED),
        ([ExitCode.PASSED, 99], 99),
        ([ExitCode.SLO_FAILED, 99], ExitCode.SLO_FAILED),
    ],
)
def test_worst(codes: list[int], expected: int) -> None:
    assert worst(codes) == expected
