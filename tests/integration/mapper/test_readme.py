"""The `MapperUser` examples of the users page (docs/users.md), run as they are: each is a locustfile under real
Locust against the local endpoint (`dynlocust local --no-capacity`), and every request its comments name must have
run without failure."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

USERS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "users.md"


def mapper_examples() -> list[str]:
    text = USERS_PAGE.read_text()
    section = text[text.index("## Your data layer: the mapper") :]
    end = section.find("\n## ", 1)  # the next section, if the mapper's is not the page's last
    section = section if end < 0 else section[:end]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return [block for block in blocks if "(MapperUser)" in block]


def test_the_users_page_has_an_example_for_each_adapter() -> None:
    examples = mapper_examples()
    assert [a for a in ("self.repository(", "self.pynamodb(", "self.table(") if any(a in e for e in examples)] == [
        "self.repository(",
        "self.pynamodb(",
        "self.table(",
    ]


@pytest.fixture
def orders_table(client: Any) -> Any:
    client.create_table(
        TableName="orders",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(TableName="orders", WaiterConfig={"Delay": 0.05, "MaxAttempts": 100})
    try:
        yield "orders"
    finally:
        client.delete_table(TableName="orders")


@pytest.mark.slow
@pytest.mark.parametrize("index", range(3))
def test_users_page_example_runs_under_locust(endpoint: Any, orders_table: str, tmp_path: Path, index: int) -> None:
    example = mapper_examples()[index]
    if "pynamodb" in example:
        pytest.importorskip("pynamodb")
    locustfile = tmp_path / "shop.py"
    locustfile.write_text(example)
    argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "-u", "2", "-r", "10", "-t", "3s"]
    argv += ["--host", endpoint.url, "--only-summary", "--csv", str(tmp_path / "run")]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    with open(tmp_path / "run_stats.csv", newline="") as stats:
        rows = {row["Name"]: row for row in csv.DictReader(stats) if row["Type"] == "Mapper"}
    expected = re.findall(r'# request "([^"]+)"', example)
    assert len(expected) == 2 and sorted(rows) == sorted(expected), (rows.keys(), done.stderr[-2000:])
    for name in expected:
        assert int(rows[name]["Request Count"]) > 0 and int(rows[name]["Failure Count"]) == 0, rows[name]
