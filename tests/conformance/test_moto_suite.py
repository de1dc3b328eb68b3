"""CI gate: moto's DynamoDB suite in server mode against `dynlocust local` fails only where the list says.

The runner (tests/conformance/runner.py) fetches moto's sdist with pip, starts dynlocust, moto's server and the
router as its own processes/threads on ephemeral ports, and exits non-zero when a test outside
expected_failures.txt fails or a listed test passes. Its table is printed in this test's output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.runner import EXPECTED, load_expected

ROOT = Path(__file__).resolve().parents[2]


def test_expected_failures_list_is_well_formed() -> None:
    expected = load_expected()
    assert expected, f"{EXPECTED} lists no test"
    kinds = ("out of scope", "moto differs from DynamoDB", "known gap")
    bad = [f"{n}: {why}" for n, why in expected.items() if not why.startswith(kinds)]
    assert not bad, f"each reason starts with one of {kinds}; these do not: {bad[:5]}"


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_moto_dynamodb_suite_in_server_mode() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.conformance.runner"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1400,
        check=False,
    )
    print(proc.stdout)
    assert proc.returncode == 0, f"conformance run failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
