"""Throttling paths wired with a fake capacity model (fault injection: it rejects on demand)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.exceptions import ClientError

from dynlocust.local.capacity_resources import Throttle
from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread
from tests.unit.local.conftest import create_table, error_of

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/tab1"
MSG = "Throughput exceeds the current capacity of your table or index."


@dataclass
class FakeCapacity:
    """Rejects the charges whose (index, partition) is listed; records every charge."""

    reject: set[tuple[str | None, str]] = field(default_factory=set)
    code: str = "ThrottlingException"
    charges: list[tuple[str, str | None, str, float, str]] = field(default_factory=list)
    specs: list[Any] = field(default_factory=list)

    def add_resource(self, spec: Any) -> None:
        self.specs.append(spec)

    def update_resource(self, spec: Any) -> None:
        self.specs.append(spec)

    def remove_table(self, table: str) -> None:
        pass

    def charge(self, table: str, index: str | None, kind: str, units: float, partition: str) -> Throttle | None:
        if (index, partition) in self.reject or (index, "*") in self.reject:
            where = ARN if index is None else f"{ARN}/index/{index}"
            reason = ("Table" if index is None else "Index") + ("Write" if kind == "write" else "Read")
            return Throttle(self.code, reason + "KeyRangeThroughputExceeded", where, MSG)
        self.charges.append((table, index, kind, units, partition))
        return None


@pytest.fixture
def fake() -> FakeCapacity:
    return FakeCapacity()


@pytest.fixture
def throttled_endpoint(fake: FakeCapacity) -> Iterator[ThreadedEndpoint]:
    ep = serve_in_thread(capacity=fake)
    try:
        yield ep
    finally:
        ep.stop()


@pytest.fixture
def tclient(throttled_endpoint: ThreadedEndpoint, make_client: Any) -> Any:
    c = make_client(throttled_endpoint)
    create_table(
        c,
        gsis=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        extra_attrs={"g": "S"},
    )
    return c


def item(pk: str, g: str | None = None) -> dict[str, Any]:
    out = {"pk": {"S": pk}, "sk": {"N": "1"}}
    if g:
        out["g"] = {"S": g}
    return out


def test_resources_registered_for_table_and_gsi(tclient: Any, fake: FakeCapacity) -> None:
    assert [(s.table, s.index, s.arn) for s in fake.specs] == [
        ("tab1", None, ARN),
        ("tab1", "by_g", ARN + "/index/by_g"),
    ]
    assert fake.specs[0].billing_mode == "PAY_PER_REQUEST"


def test_write_charges_table_and_gsi(tclient: Any, fake: FakeCapacity) -> None:
    tclient.put_item(TableName="tab1", Item=item("a", "G"))
    assert ("tab1", "by_g", "write", 1.0, "G") in fake.charges
    assert ("tab1", None, "write", 1.0, "a") in fake.charges


@pytest.mark.parametrize(
    ("code", "key"),
    [("ThrottlingException", "throttlingReasons"), ("ProvisionedThroughputExceededException", "ThrottlingReasons")],
)
def test_single_item_throttle_wire_format(tclient: Any, fake: FakeCapacity, code: str, key: str) -> None:
    fake.code = code
    fake.reject.add((None, "hot"))
    with pytest.raises(ClientError) as exc:
        tclient.put_item(TableName="tab1", Item=item("hot"))
    assert error_of(exc) == (400, code, MSG)
    assert exc.value.response[key] == [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": ARN}]
    fake.reject.clear()
    assert "Item" not in tclient.get_item(TableName="tab1", Key=item("hot"))


def test_gsi_throttle_rejects_the_write(tclient: Any, fake: FakeCapacity) -> None:
    fake.reject.add(("by_g", "G"))
    with pytest.raises(ClientError) as exc:
        tclient.put_item(TableName="tab1", Item=item("a", "G"))
    assert exc.value.response["throttlingReasons"][0]["resource"] == ARN + "/index/by_g"
    tclient.put_item(TableName="tab1", Item=item("b", "other"))


def test_read_throttle(tclient: Any, fake: FakeCapacity) -> None:
    fake.reject.add((None, "hot"))
    with pytest.raises(ClientError) as exc:
        tclient.get_item(TableName="tab1", Key=item("hot"))
    assert exc.value.response["throttlingReasons"][0]["reason"] == "TableReadKeyRangeThroughputExceeded"


def test_batch_write_partial_then_total_throttle(tclient: Any, fake: FakeCapacity, throttled_endpoint: Any) -> None:
    fake.reject.add((None, "hot"))
    reqs = [{"PutRequest": {"Item": item(pk)}} for pk in ("ok1", "hot", "ok2")]
    r = tclient.batch_write_item(RequestItems={"tab1": reqs})
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert r["UnprocessedItems"] == {"tab1": [reqs[1]]}
    with pytest.raises(ClientError) as exc:
        tclient.batch_write_item(RequestItems={"tab1": [reqs[1]]})
    assert error_of(exc)[:2] == (400, "ThrottlingException")
    stats = throttled_endpoint.stats()["tables"]["tab1"]["BatchWriteItem"]
    assert stats == {"ok": 1, "throttled": 1, "error": 0, "unprocessed_items": 2}


def test_batch_get_partial_throttle(tclient: Any, fake: FakeCapacity) -> None:
    fake.reject.add((None, "hot"))
    keys = [item("ok1"), item("hot")]
    r = tclient.batch_get_item(RequestItems={"tab1": {"Keys": keys}})
    assert r["UnprocessedKeys"] == {"tab1": {"Keys": [item("hot")]}}


def test_transaction_cancelled_by_gsi_throttle(tclient: Any, fake: FakeCapacity, throttled_endpoint: Any) -> None:
    fake.reject.add(("by_g", "G"))
    with pytest.raises(ClientError) as exc:
        tclient.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "tab1", "Item": item("a")}},
                {"Put": {"TableName": "tab1", "Item": item("b", "G")}},
            ]
        )
    assert error_of(exc)[:2] == (400, "TransactionCanceledException")
    assert exc.value.response["CancellationReasons"] == [
        {"Code": "None"},
        {
            "Code": "ThrottlingError",
            "Message": "Throughput exceeds the current capacity for one or more global secondary indexes. "
            "DynamoDB is automatically scaling your index so please try again shortly.",
        },
    ]
    assert "Item" not in tclient.get_item(TableName="tab1", Key=item("a"))
    stats = throttled_endpoint.stats()["tables"]["tab1"]["TransactWriteItems"]
    assert stats["throttled"] == 1


def test_transact_get_throttle_uses_table_wording(tclient: Any, fake: FakeCapacity) -> None:
    fake.reject.add((None, "hot"))
    with pytest.raises(ClientError) as exc:
        tclient.transact_get_items(TransactItems=[{"Get": {"TableName": "tab1", "Key": item("hot")}}])
    reason = exc.value.response["CancellationReasons"][0]
    assert reason["Code"] == "ThrottlingError"
    assert reason["Message"].startswith("Throughput exceeds the current capacity of your table or index.")


def test_transactional_units_are_doubled(tclient: Any, fake: FakeCapacity) -> None:
    tclient.transact_write_items(TransactItems=[{"Put": {"TableName": "tab1", "Item": item("a")}}])
    assert ("tab1", None, "write", 2.0, "a") in fake.charges


def test_failed_condition_still_charges_the_table(tclient: Any, fake: FakeCapacity) -> None:
    tclient.put_item(TableName="tab1", Item=item("a"))
    fake.charges.clear()
    with pytest.raises(ClientError) as exc:
        tclient.put_item(TableName="tab1", Item=item("a"), ConditionExpression="attribute_not_exists(pk)")
    assert error_of(exc)[1] == "ConditionalCheckFailedException"
    assert fake.charges == [("tab1", None, "write", 1.0, "a")]


def test_specs_carry_warm_and_on_demand_settings(throttled_endpoint: ThreadedEndpoint, make_client: Any) -> None:
    c = make_client(throttled_endpoint)
    fake = throttled_endpoint.server.backend.capacity
    d = create_table(
        c,
        "warm",
        range_type=None,
        WarmThroughput={"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 5000},
        OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
    )["TableDescription"]
    assert d["WarmThroughput"]["WriteUnitsPerSecond"] == 5000
    spec = fake.specs[-1]
    assert (spec.warm_read, spec.warm_write, spec.max_read, spec.max_write) == (15000.0, 5000.0, 100.0, 50.0)
    c.update_table(TableName="warm", OnDemandThroughput={"MaxWriteRequestUnits": 70})
    assert (fake.specs[-1].max_read, fake.specs[-1].max_write) == (100.0, 70.0)
    c.update_table(
        TableName="warm",
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
    )
    last = fake.specs[-1]
    assert (last.billing_mode, last.read_capacity, last.write_capacity) == ("PROVISIONED", 3.0, 4.0)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize(
    ("billing", "read_cause"),
    [("PAY_PER_REQUEST", "writes-over-ceiling"), ("PROVISIONED", None)],
)
def test_mixed_workload_reads_say_when_writes_hold_the_budget(
    make_client: Any, billing: str, read_cause: str | None
) -> None:
    """The real model on a fake clock behind the real server: 100 writes/s against a ceiling of about 4/s, with
    5 strongly consistent reads/s (1 RRU each: 5 RRU/s against 12.39 on demand, 10 RCU provisioned)."""
    from dynlocust.dynamodb import THROTTLE_CAUSE_HEADER
    from dynlocust.local.capacity import CapacityModel

    clock = Clock()
    ep = serve_in_thread(capacity=CapacityModel(capacity_scale=0.001, clock=clock))
    try:
        c = make_client(ep)
        extra: dict[str, Any] = {}
        if billing == "PROVISIONED":
            throughput = {"ReadCapacityUnits": 10000, "WriteCapacityUnits": 4000}
            extra = {"BillingMode": "PROVISIONED", "ProvisionedThroughput": throughput}
        create_table(c, **extra)
        writes = reads = 0
        for i in range(300):
            clock.t += 0.01
            try:
                c.put_item(TableName="tab1", Item=item(f"w{i % 7}"))
            except ClientError as exc:
                writes += 1
                assert THROTTLE_CAUSE_HEADER not in exc.response["ResponseMetadata"]["HTTPHeaders"]
            if i % 20 == 19:
                try:
                    c.get_item(TableName="tab1", Key=item(f"w{i % 7}"), ConsistentRead=True)
                except ClientError as exc:
                    reads += 1
                    assert exc.response["Error"]["Code"] == "ThrottlingException"
                    reason = exc.response["throttlingReasons"][0]["reason"]
                    assert reason == "TableReadKeyRangeThroughputExceeded"
                    cause = exc.response["ResponseMetadata"]["HTTPHeaders"][THROTTLE_CAUSE_HEADER]
                    assert cause.startswith(f"{read_cause}; write-load="), cause
                    assert float(cause.split("write-load=")[1].split(";")[0]) > 10.0, cause
        assert writes > 200
        assert (reads > 0) is (read_cause is not None), reads
    finally:
        ep.stop()
