"""A pytest plugin loaded into the moto suite's run: one JSON line per test (outcome, aws_verified, first error line).

It lives beside the runner and is put on PYTHONPATH only for that run; dynlocust's own suite never loads it.
"""

from __future__ import annotations

import json
import os
from typing import Any

_OUT = os.environ.get("DYNLOCUST_CONFORMANCE_OUT", "")
_verified: set[str] = set()
_results: dict[str, dict[str, Any]] = {}


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        if item.get_closest_marker("aws_verified") is not None:
            _verified.add(item.nodeid)


def pytest_runtest_logreport(report: Any) -> None:
    row = _results.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
    if report.failed:
        if row["outcome"] != "failed":
            text = str(report.longrepr or "")
            lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
            row["message"] = (lines[0] if lines else text.splitlines()[-1] if text else "")[:300]
        row["outcome"] = "failed"
    elif report.skipped and row["outcome"] == "passed":
        row["outcome"] = "skipped"


def pytest_collectreport(report: Any) -> None:
    if report.failed:  # a module that cannot even be imported counts as one failed test
        _results[report.nodeid] = {"outcome": "failed", "message": str(report.longrepr).splitlines()[-1][:300]}


def pytest_sessionfinish() -> None:
    if not _OUT:
        return
    with open(_OUT, "w", encoding="utf-8") as fh:
        for nodeid, row in _results.items():
            fh.write(json.dumps({"nodeid": nodeid, "verified": nodeid in _verified, **row}) + "\n")
