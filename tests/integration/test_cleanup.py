"""`dynlocust cleanup --run-id ID` against the real local endpoint: it lists and deletes only the tables tagged with
that run id, asks first unless `--yes`, and refuses a bad run id with one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.claim import CLAIM_TAG, RUN_TAG, tags_of
from dynlocust.run.tables import TableManager
from dynlocust.scenario import load_scenario_text
from tests.support.runs import ROOT, without_exit_line


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    with LocalEndpoint() as started:
        yield started


def create(client: Any, name: str, run_id: str | None) -> None:
    tags = [{"Key": RUN_TAG, "Value": run_id}] if run_id is not None else []
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        **({"Tags": tags} if tags else {}),
    )


def cleanup(*args: str, answer: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "dynlocust.cli", "cleanup", *args]
    return subprocess.run(argv, cwd=ROOT, env=env, input=answer, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("flags", "answer", "left"),
    [
        ([], "n\n", ["a-left", "b-left", "c-other", "d-untagged"]),
        ([], "", ["a-left", "b-left", "c-other", "d-untagged"]),  # no answer (no terminal): nothing deleted
        ([], "y\n", ["c-other", "d-untagged"]),
        (["--yes"], "", ["c-other", "d-untagged"]),
    ],
)
def test_cleanup_deletes_only_the_runs_tagged_tables_after_asking(
    endpoint: LocalEndpoint, flags: list[str], answer: str, left: list[str]
) -> None:
    client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=2)
    for name, run_id in (("a-left", "left"), ("b-left", "left"), ("c-other", "other"), ("d-untagged", None)):
        create(client, name, run_id)
    done = cleanup("--run-id", "left", "--host", endpoint.url, *flags, answer=answer)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tables of run left: a-left, b-left" in done.stdout
    assert sorted(client.list_tables()["TableNames"]) == left
    assert ("deleted 2 tables: a-left, b-left" in done.stdout) == (len(left) == 2)


def test_cleanup_deletes_a_dead_runs_claimed_tables_by_their_run_id(endpoint: LocalEndpoint) -> None:
    """A run's tables carry its claim token too; cleanup goes by the run id (the dead run's claim has no owner)."""
    client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=2)
    scenario = load_scenario_text(
        "name: dead\ntables: [{name: a, partition_key: {name: pk, type: S}}, {name: b, partition_key: {name: pk, "
        "type: S}}]\nworkload: {item_size: 100, operations: [{op: put, weight: 1, table: a}]}\n"
        "phases: [{steps: [{rate: 1, window: 1s}]}]\n",
        "dead.yaml",
    )
    dead = TableManager(client, scenario, "dead")
    dead.create_all()  # and the process dies: no teardown
    create(client, "c-other", "other")
    arn = client.describe_table(TableName="a-dead")["Table"]["TableArn"]
    assert tags_of(client, arn) == {RUN_TAG: "dead", CLAIM_TAG: dead.claim}
    done = cleanup("--run-id", "dead", "--host", endpoint.url, "--yes")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tables of run dead: a-dead, b-dead" in done.stdout and "deleted 2 tables: a-dead, b-dead" in done.stdout
    assert client.list_tables()["TableNames"] == ["c-other"]


def test_cleanup_of_a_run_with_no_table_says_so(endpoint: LocalEndpoint) -> None:
    done = cleanup("--run-id", "gone", "--host", endpoint.url, "--yes")
    assert done.returncode == 0 and "no table is tagged with run id gone" in done.stdout


def test_a_bad_run_id_is_refused_with_one_line_and_exit_2() -> None:
    done = cleanup("--run-id", "..", "--yes")
    assert done.returncode == 2
    err = without_exit_line(done.stderr)
    assert err.startswith("dynlocust: error: --run-id: expected") and err.count("\n") == 1
