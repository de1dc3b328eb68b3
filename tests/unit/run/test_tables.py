"""Table lifecycle against the in-process endpoint: tagged on creation, timed to ACTIVE, only owned tables deleted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import pytest

from dynlocust.local.embedded import serve_in_thread
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.claim import CLAIM_TAG, RUN_TAG
from dynlocust.run.seeding import SeedError
from dynlocust.run.tables import TableError, TableManager, create_table_request
from dynlocust.scenario import load_scenario_text
from tests.conftest import FaultServer

SCENARIO = """\
name: tables
tables:
  - name: orders
    partition_key: {name: pk, type: S}
    sort_key: {name: sk, type: N}
    billing: {provisioned: {read: 10, write: 5}}
    gsis: [{name: by_owner, partition_key: {name: owner, type: S}, projection: keys_only}]
  - {name: plain, partition_key: {name: id, type: B}, warm_throughput: {read: 20000, write: 6000},
     max_on_demand: {read: 30000, write: 9000}, seed: {items: 30, item_size: 100}}
workload: {item_size: 100, operations: [{op: put, weight: 1, table: plain}]}
phases: [{steps: [{rate: 1, window: 1s}]}]
"""


@pytest.fixture
def client() -> Iterator[Any]:
    server = serve_in_thread(create_delay=0.3)
    try:
        from dynlocust.request.transport.boto3 import make_client

        yield make_client(server.url, region="us-east-1", connect_timeout=1, read_timeout=2, pool_size=4)
    finally:
        server.stop()


def test_create_request_carries_every_setting() -> None:
    sc = load_scenario_text(SCENARIO, "t.yaml")
    orders = create_table_request(sc.tables[0], "orders-r1", "r1", "c1")
    assert orders["BillingMode"] == "PROVISIONED"
    assert orders["ProvisionedThroughput"] == {"ReadCapacityUnits": 10, "WriteCapacityUnits": 5}
    assert orders["Tags"] == [{"Key": RUN_TAG, "Value": "r1"}, {"Key": CLAIM_TAG, "Value": "c1"}]
    assert {a["AttributeName"]: a["AttributeType"] for a in orders["AttributeDefinitions"]} == {
        "pk": "S", "sk": "N", "owner": "S",
    }  # fmt: skip
    (gsi,) = orders["GlobalSecondaryIndexes"]
    assert gsi["Projection"] == {"ProjectionType": "KEYS_ONLY"} and "ProvisionedThroughput" in gsi
    plain = create_table_request(sc.tables[1], "plain-r1", "r1", "c1")
    assert plain["BillingMode"] == "PAY_PER_REQUEST"
    assert plain["WarmThroughput"] == {"ReadUnitsPerSecond": 20000, "WriteUnitsPerSecond": 6000}
    assert plain["OnDemandThroughput"] == {"MaxReadRequestUnits": 30000, "MaxWriteRequestUnits": 9000}


def test_lifecycle_deletes_only_what_the_run_owns(client: Any) -> None:
    client.create_table(
        TableName="plain-r1",  # somebody else's table that happens to have a name the run could want
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "B"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    sc = load_scenario_text(SCENARIO, "t.yaml")
    manager = TableManager(client, sc, "r2")
    manager.create_all()
    assert set(manager.created) == {"orders-r2", "plain-r2"}
    assert all(0.25 <= seconds < 5 for seconds in manager.seconds_to_active.values())
    assert manager.seed_all() == 30
    assert client.scan(TableName="plain-r2", Select="COUNT")["Count"] == 30
    # a name collision must never cost a foreign table: the tag decides
    manager.created["plain-r1"] = client.describe_table(TableName="plain-r1")["Table"]["TableArn"]
    assert sorted(manager.teardown()) == ["orders-r2", "plain-r2"]
    assert client.list_tables()["TableNames"] == ["plain-r1"]


def test_use_existing_requires_the_table(client: Any) -> None:
    text = SCENARIO.replace(
        "  - name: orders\n", "  - name: orders\n    use_existing: true\n    existing_table_name: missing\n"
    )
    manager = TableManager(client, load_scenario_text(text, "t.yaml"), "r3")
    with pytest.raises(TableError, match="expected an existing table"):
        manager.create_all()
    assert manager.teardown() == []


@pytest.mark.parametrize(
    ("table", "resent"), [("throttle", True), ("provisioned", True), ("request-limit", True), ("condition", False)]
)
def test_seeding_resends_throttled_batches_only(fault_server: FaultServer, table: str, resent: bool) -> None:
    """Every code the facts count as a throttle is resent, ever slower, until the time limit; any other error stops
    the seeding at once."""
    client = make_client(fault_server.url, region="us-east-1", connect_timeout=1, read_timeout=2, pool_size=1)
    scenario = load_scenario_text(SCENARIO, "t.yaml")
    manager = TableManager(client, scenario, "r9")
    pauses: list[float] = []
    manager.sleep = pauses.append
    manager.clock = lambda: sum(pauses)  # time passes only in the pauses
    seeder = manager.seeder(scenario.tables[1], table)
    seeder.limit_s = 3.0
    items = [{"pk": {"S": str(i)}} for i in range(3)]
    if resent:
        with pytest.raises(SeedError, match=rf"table '{table}': .* time limit of 3 s .*0 items written and 3 left"):
            seeder.run(items, concurrency=1)
    else:
        with pytest.raises(client.exceptions.ClientError, match="ConditionalCheckFailedException"):
            seeder.run(items, concurrency=1)
    sent = [r for r in fault_server.requests() if r["operation"] == "BatchWriteItem"]
    if resent:  # each refusal cuts the pace by 30% (6,000 WRU/s known) down to its floor, so the pauses grow
        assert len(sent) == seeder.sends > 10 and sum(pauses) >= 3.0 and max(pauses) <= 1.0
        assert seeder.pace.cuts > 5 and pauses[-1] > 8 * pauses[0]
    else:
        assert len(sent) == 1 and not pauses
