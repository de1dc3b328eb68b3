"""PartiQL against a real `dynlocust local` process with boto3: statements, batches, transactions, throttling."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from dynlocust.local.capacity_figures import ON_DEMAND_TABLE_MESSAGE
from dynlocust.local.embedded import LocalEndpoint
from tests.integration.local.conftest import client_for


def _table(client: Any) -> str:
    name = f"partiql-{uuid.uuid4().hex[:8]}"
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    return name


def test_statements_batches_and_transactions_over_http(local_endpoint: LocalEndpoint) -> None:
    client = client_for(local_endpoint.url)
    name = _table(client)
    client.execute_statement(Statement=f"INSERT INTO \"{name}\" VALUE {{'pk': 'a', 'n': 1, 'tags': <<'x'>>}}")
    client.execute_statement(
        Statement=f"UPDATE \"{name}\" SET n = n + 1 SET tags = set_add(tags, <<'y'>>) WHERE pk = ?",
        Parameters=[{"S": "a"}],
    )
    got = client.execute_statement(Statement=f"SELECT n, tags FROM \"{name}\" WHERE pk = 'a'")["Items"]
    assert got == [{"n": {"N": "2"}, "tags": {"SS": ["x", "y"]}}]

    batch = client.batch_execute_statement(
        Statements=[
            {"Statement": f"INSERT INTO \"{name}\" VALUE {{'pk': 'b'}}"},
            {"Statement": f"INSERT INTO \"{name}\" VALUE {{'pk': 'a'}}"},
        ]
    )["Responses"]
    assert batch[0] == {"TableName": name}
    assert batch[1]["Error"]["Code"] == "DuplicateItem"

    with pytest.raises(ClientError) as exc:
        client.execute_transaction(
            TransactStatements=[
                {"Statement": f"DELETE FROM \"{name}\" WHERE pk = 'b'"},
                {"Statement": f"UPDATE \"{name}\" SET n = 0 WHERE pk = 'missing'"},
            ]
        )
    assert exc.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in exc.value.response["CancellationReasons"]] == ["None", "ConditionalCheckFailed"]
    keys = sorted(i["pk"]["S"] for i in client.execute_statement(Statement=f'SELECT pk FROM "{name}"')["Items"])
    assert keys == ["a", "b"]  # nothing of the cancelled transaction was applied

    stats = local_endpoint.stats()["tables"][name]
    assert stats["ExecuteStatement"]["ok"] == 4
    assert stats["ExecuteTransaction"]["error"] == 1


@pytest.fixture
def scaled_endpoint() -> Iterator[LocalEndpoint]:
    # capacity_scale=0.01: a new on-demand table accepts ~41 WRU/s, with a burst of ~3.4 WRU at time_scale 10
    ep = LocalEndpoint(capacity_scale=0.01, time_scale=10.0)
    try:
        ep.start()
        yield ep
    finally:
        ep.stop()


def test_inserts_are_throttled_by_the_capacity_model(scaled_endpoint: LocalEndpoint) -> None:
    client = client_for(scaled_endpoint.url)
    name = _table(client)
    scaled_endpoint.reset_stats()
    pad = "p" * 8000  # 8 WRU a write: a few writes exceed the burst whatever the pace of this one client
    accepted = 0
    throttles: list[dict[str, Any]] = []
    for i in range(200):
        try:
            client.execute_statement(Statement=f"INSERT INTO \"{name}\" VALUE {{'pk': 'k{i}', 'pad': '{pad}'}}")
            accepted += 1
        except ClientError as exc:
            assert exc.response["Error"]["Code"] == "ThrottlingException", exc.response["Error"]
            throttles.append(exc.response)
            if len(throttles) >= 3:
                break
    assert len(throttles) == 3
    assert throttles[0]["Error"]["Message"] == ON_DEMAND_TABLE_MESSAGE
    counted = scaled_endpoint.stats()["tables"][name]["ExecuteStatement"]
    assert (counted["ok"], counted["throttled"], counted["error"]) == (accepted, 3, 0)
