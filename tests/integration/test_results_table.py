"""The results table as a user sets it: `DYNLOCUST_RESULTS_TABLE` and `DYNLOCUST_RESULTS_ENDPOINT` (as the ECS task
definition sets the first) on a real headless run; the table then holds every record of the results file, in order,
and the run does not count it among its own tables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import locust  # noqa: F401 - gevent patching before botocore, as in production

import pytest

from dynlocust.fleet.results_table import read_records
from dynlocust.request.transport.boto3 import LOCAL_CREDENTIALS, make_client
from tests.support.processes import ServerProcess
from tests.support.runs import run_dynlocust
from tests.support.scenarios import put_scenario, write_scenario

TABLE = "dynlocust-results-t1"


@pytest.fixture
def results_endpoint() -> Iterator[ServerProcess]:
    endpoint = ServerProcess("dynlocust.local", "--port", "0", "--no-capacity")
    try:
        yield endpoint
    finally:
        endpoint.stop()


@pytest.mark.slow  # a real run: about 15 s idle, 45 s on a busy machine
def test_the_master_publishes_every_record_to_the_table_its_environment_names(
    results_endpoint: ServerProcess, tmp_path: Path
) -> None:
    client = make_client(results_endpoint.url, region="us-east-1", connect_timeout=3, read_timeout=5, pool_size=2)
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "run_id", "KeyType": "HASH"}, {"AttributeName": "seq", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "run_id", "AttributeType": "S"}, {"AttributeName": "seq", "AttributeType": "N"}
        ],
        BillingMode="PAY_PER_REQUEST",
    )  # fmt: skip
    scenario = write_scenario(tmp_path, put_scenario("results-table", "steps: [{rate: 20, window: 2s}]"))
    key, secret = LOCAL_CREDENTIALS
    env = {
        "DYNLOCUST_RESULTS_TABLE": TABLE,
        "DYNLOCUST_RESULTS_ENDPOINT": results_endpoint.url,
        "AWS_ACCESS_KEY_ID": key,
        "AWS_SECRET_ACCESS_KEY": secret,
    }
    run = run_dynlocust(scenario, tmp_path / "results", run_id="rt1", env=env, timeout=120)
    assert run.end["exit_code"] == run.returncode  # whatever the verdict on a busy machine: the run ended
    published = [record for _, record in read_records(client, TABLE, "rt1")]
    assert [r["type"] for r in published] == ["run", "window", "end"]
    assert published == run.records
    assert TABLE not in run.records[0]["tables"].values()
