"""The fleet's exit code: a lost worker outranks an abort, an inconclusive run, then a failed SLO."""

from __future__ import annotations

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.fleet.exit_code import fleet_exit_code


@pytest.mark.parametrize(
    ("lost", "aborted", "slos_failed", "unjudged", "code"),
    [
        (False, False, False, False, ExitCode.PASSED),
        (False, False, True, False, ExitCode.SLO_FAILED),
        (False, True, True, False, ExitCode.ABORTED),
        (True, True, True, False, ExitCode.WORKER_LOST),
        (True, False, False, False, ExitCode.WORKER_LOST),
        (False, False, False, True, ExitCode.INCONCLUSIVE),
        (False, False, True, True, ExitCode.INCONCLUSIVE),
        (False, True, False, True, ExitCode.ABORTED),
    ],
)
def test_what_ended_the_run_picks_one_code(
    lost: bool, aborted: bool, slos_failed: bool, unjudged: bool, code: ExitCode
) -> None:
    assert fleet_exit_code(workers_lost=lost, aborted=aborted, slos_failed=slos_failed, inconclusive=unjudged) is code
