"""Data-plane operations round-tripped through boto3 (low-level client and resource Table) on an in-thread server."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from tests.unit.local.conftest import create_table, error_of


def put(client: Any, pk: str, sk: int, **attrs: Any) -> None:
    item = {"pk": {"S": pk}, "sk": {"N": str(sk)}}
    item.update(attrs)
    client.put_item(TableName="tab1", Item=item)


def test_put_get_delete_roundtrip(client: Any) -> None:
    create_table(client)
    put(client, "a", 1, v={"S": "x"}, l={"L": [{"N": "1"}, {"M": {"k": {"BOOL": True}}}]}, b={"B": b"\x00\x01"})
    got = client.get_item(TableName="tab1", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]
    assert got["v"] == {"S": "x"}
    assert got["b"] == {"B": b"\x00\x01"}
    assert got["l"]["L"][1] == {"M": {"k": {"BOOL": True}}}
    old = client.delete_item(TableName="tab1", Key={"pk": {"S": "a"}, "sk": {"N": "1"}}, ReturnValues="ALL_OLD")
    assert old["Attributes"]["v"] == {"S": "x"}
    assert "Item" not in client.get_item(TableName="tab1", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})


def test_put_return_values_all_old_and_overwrite(client: Any) -> None:
    create_table(client)
    put(client, "a", 1, v={"S": "first"})
    r = client.put_item(
        TableName="tab1", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "second"}}, ReturnValues="ALL_OLD"
    )
    assert r["Attributes"]["v"] == {"S": "first"}
    assert client.describe_table(TableName="tab1")["Table"]["ItemCount"] == 1


def test_resource_table_roundtrip(client: Any, resource: Any) -> None:
    create_table(client)
    table = resource.Table("tab1")
    for i in range(5):
        table.put_item(Item={"pk": "p", "sk": i, "n": Decimal(i) / 2, "tags": {"a", "b"}})
    assert table.get_item(Key={"pk": "p", "sk": 3})["Item"]["n"] == Decimal("1.5")
    r = table.query(KeyConditionExpression=Key("pk").eq("p") & Key("sk").between(1, 3), ScanIndexForward=False)
    assert [it["sk"] for it in r["Items"]] == [3, 2, 1]
    r = table.scan(FilterExpression=Attr("n").gte(1))
    assert sorted(it["sk"] for it in r["Items"]) == [2, 3, 4]
    r = table.update_item(
        Key={"pk": "p", "sk": 0},
        UpdateExpression="SET n = n + :d",
        ExpressionAttributeValues={":d": 5},
        ReturnValues="UPDATED_NEW",
    )
    assert r["Attributes"] == {"n": Decimal(5)}
    with table.batch_writer() as bw:
        for i in range(30):
            bw.put_item(Item={"pk": "q", "sk": i})
    assert table.query(KeyConditionExpression=Key("pk").eq("q"), Select="COUNT")["Count"] == 30
    table.delete_item(Key={"pk": "q", "sk": 0})
    assert table.query(KeyConditionExpression=Key("pk").eq("q"), Select="COUNT")["Count"] == 29


def test_number_sort_is_numeric_and_string_sort_is_bytes(client: Any) -> None:
    create_table(client)
    for n in ("10", "9", "-1", "2.5", "100"):
        client.put_item(TableName="tab1", Item={"pk": {"S": "n"}, "sk": {"N": n}})
    r = client.query(TableName="tab1", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "n"}})
    assert [it["sk"]["N"] for it in r["Items"]] == ["-1", "2.5", "9", "10", "100"]
    create_table(client, "tab2", range_type="S")
    for s in ("b", "a", "B", "é", "aa"):
        client.put_item(TableName="tab2", Item={"pk": {"S": "s"}, "sk": {"S": s}})
    r = client.query(TableName="tab2", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "s"}})
    assert [it["sk"]["S"] for it in r["Items"]] == ["B", "a", "aa", "b", "é"]


def test_query_pagination_with_limit(client: Any) -> None:
    create_table(client)
    for i in range(7):
        put(client, "a", i)
    seen: list[str] = []
    esk = None
    pages = 0
    while True:
        args: dict[str, Any] = {
            "TableName": "tab1",
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "a"}},
            "Limit": 3,
        }
        if esk:
            args["ExclusiveStartKey"] = esk
        r = client.query(**args)
        pages += 1
        seen += [it["sk"]["N"] for it in r["Items"]]
        esk = r.get("LastEvaluatedKey")
        if not esk:
            break
    assert seen == [str(i) for i in range(7)]
    assert pages == 3


def test_query_one_megabyte_page_limit(client: Any) -> None:
    create_table(client)
    blob = "x" * (300 * 1024)
    for i in range(5):
        put(client, "big", i, v={"S": blob})
    r = client.query(TableName="tab1", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "big"}})
    assert r["Count"] == 3
    assert r["LastEvaluatedKey"] == {"pk": {"S": "big"}, "sk": {"N": "2"}}


def test_scan_segments_and_select_count(client: Any) -> None:
    create_table(client)
    for i in range(40):
        put(client, f"p{i}", 0, v={"N": str(i)})
    total = 0
    keys: set[str] = set()
    for seg in range(3):
        r = client.scan(TableName="tab1", Segment=seg, TotalSegments=3)
        total += r["Count"]
        keys |= {it["pk"]["S"] for it in r["Items"]}
    assert total == 40
    assert len(keys) == 40
    r = client.scan(
        TableName="tab1",
        Select="COUNT",
        FilterExpression="v < :n",
        ExpressionAttributeValues={":n": {"N": "10"}},
    )
    assert (r["Count"], r["ScannedCount"], "Items" in r) == (10, 40, False)


def test_scan_pagination_visits_every_item_once(client: Any) -> None:
    create_table(client)
    for i in range(25):
        put(client, f"p{i % 6}", i)
    seen: list[tuple[str, str]] = []
    esk = None
    while True:
        args: dict[str, Any] = {"TableName": "tab1", "Limit": 4}
        if esk:
            args["ExclusiveStartKey"] = esk
        r = client.scan(**args)
        seen += [(it["pk"]["S"], it["sk"]["N"]) for it in r["Items"]]
        esk = r.get("LastEvaluatedKey")
        if not esk:
            break
    assert len(seen) == 25
    assert len(set(seen)) == 25


@pytest.mark.parametrize("limit", [None, 1, 4])
def test_a_plain_scan_of_a_table_without_a_sort_key_pages_as_a_filtered_one(client: Any, limit: int | None) -> None:
    """Unfiltered, such a page is cut from the stored sizes; item by item (a filter every item passes) it must be
    the same page: its items, counts, LastEvaluatedKey (at the Limit, at 1 MB) and consumed capacity."""
    create_table(client, range_type=None)
    for i in range(30):
        blob = "x" * (300 * 1024 if i % 7 == 0 else i * 40)  # some pages stop at 1 MB
        client.put_item(TableName="tab1", Item={"pk": {"S": f"p{i}"}, "v": {"S": blob}})

    def walk(**extra: Any) -> list[tuple[Any, ...]]:
        pages: list[tuple[Any, ...]] = []
        args: dict[str, Any] = {"TableName": "tab1", "ReturnConsumedCapacity": "TOTAL", **extra}
        if limit is not None:
            args["Limit"] = limit
        while True:
            r = client.scan(**args)
            esk = r.get("LastEvaluatedKey")
            pages.append((r.get("Items"), r["Count"], r["ScannedCount"], esk, r["ConsumedCapacity"]))
            if esk is None:
                return pages
            args["ExclusiveStartKey"] = esk

    plain = walk()
    assert plain == walk(FilterExpression="attribute_exists(v)")
    assert sorted(it["pk"]["S"] for page in plain for it in page[0]) == sorted(f"p{i}" for i in range(30))
    counted = walk(Select="COUNT")
    assert [page[1:] for page in counted] == [page[1:] for page in plain]
    assert all(page[0] is None for page in counted)
    if limit is None:  # the 1 MB cut: 300 KB items, at most 3 a page
        assert len(plain) > 1


def test_projection_expression_and_specific_attributes(client: Any) -> None:
    create_table(client)
    put(client, "a", 1, v={"S": "x"}, w={"M": {"in": {"N": "3"}, "out": {"N": "4"}}})
    r = client.get_item(
        TableName="tab1",
        Key={"pk": {"S": "a"}, "sk": {"N": "1"}},
        ProjectionExpression="#v, w.#i",
        ExpressionAttributeNames={"#v": "v", "#i": "in"},
    )
    assert r["Item"] == {"v": {"S": "x"}, "w": {"M": {"in": {"N": "3"}}}}


def gsi_table(client: Any, projection: dict[str, Any]) -> None:
    create_table(
        client,
        gsis=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "r", "KeyType": "RANGE"}],
                "Projection": projection,
            }
        ],
        extra_attrs={"g": "S", "r": "N"},
    )


@pytest.mark.parametrize(
    ("projection", "attrs"),
    [
        ({"ProjectionType": "ALL"}, {"pk", "sk", "g", "r", "a", "b"}),
        ({"ProjectionType": "KEYS_ONLY"}, {"pk", "sk", "g", "r"}),
        ({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a"]}, {"pk", "sk", "g", "r", "a"}),
    ],
)
def test_gsi_query_projection(client: Any, projection: dict[str, Any], attrs: set[str]) -> None:
    gsi_table(client, projection)
    for i in range(4):
        put(client, f"p{i}", i, g={"S": "G"}, r={"N": str(10 - i)}, a={"S": "A"}, b={"S": "B"})
    put(client, "nog", 0, a={"S": "no index key"})
    r = client.query(
        TableName="tab1",
        IndexName="by_g",
        KeyConditionExpression="g = :g AND r > :r",
        ExpressionAttributeValues={":g": {"S": "G"}, ":r": {"N": "7"}},
    )
    assert [it["r"]["N"] for it in r["Items"]] == ["8", "9", "10"]
    assert all(set(it) == attrs for it in r["Items"])
    assert client.scan(TableName="tab1", IndexName="by_g")["Count"] == 4


def test_gsi_follows_updates_and_deletes(client: Any) -> None:
    gsi_table(client, {"ProjectionType": "ALL"})
    put(client, "a", 1, g={"S": "G1"}, r={"N": "1"})
    client.update_item(
        TableName="tab1",
        Key={"pk": {"S": "a"}, "sk": {"N": "1"}},
        UpdateExpression="SET g = :g",
        ExpressionAttributeValues={":g": {"S": "G2"}},
    )

    def count(g: str) -> int:
        return client.query(
            TableName="tab1",
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": g}},
        )["Count"]

    assert (count("G1"), count("G2")) == (0, 1)
    client.delete_item(TableName="tab1", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})
    assert count("G2") == 0


def test_gsi_paginates_with_index_keys(client: Any) -> None:
    gsi_table(client, {"ProjectionType": "KEYS_ONLY"})
    for i in range(5):
        put(client, f"p{i}", 0, g={"S": "G"}, r={"N": "1"})
    r = client.query(
        TableName="tab1",
        IndexName="by_g",
        KeyConditionExpression="g = :g",
        ExpressionAttributeValues={":g": {"S": "G"}},
        Limit=2,
    )
    assert set(r["LastEvaluatedKey"]) == {"pk", "sk", "g", "r"}
    r2 = client.query(
        TableName="tab1",
        IndexName="by_g",
        KeyConditionExpression="g = :g",
        ExpressionAttributeValues={":g": {"S": "G"}},
        ExclusiveStartKey=r["LastEvaluatedKey"],
    )
    assert r2["Count"] == 3
    assert not {it["pk"]["S"] for it in r["Items"]} & {it["pk"]["S"] for it in r2["Items"]}


def test_lsi_query_orders_by_lsi_key(client: Any) -> None:
    create_table(
        client,
        lsis=[
            {
                "IndexName": "by_l",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        extra_attrs={"l": "S"},
    )
    for i, l_value in enumerate(["c", "a", "b"]):
        put(client, "p", i, l={"S": l_value})
    r = client.query(
        TableName="tab1",
        IndexName="by_l",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ConsistentRead=True,
    )
    assert [it["l"]["S"] for it in r["Items"]] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("rv", "expected"),
    [
        ("NONE", None),
        ("ALL_OLD", {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"N": "1"}, "y": {"S": "y"}}),
        ("UPDATED_OLD", {"x": {"N": "1"}}),
        ("ALL_NEW", {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"N": "2"}, "y": {"S": "y"}, "z": {"S": "z"}}),
        ("UPDATED_NEW", {"x": {"N": "2"}, "z": {"S": "z"}}),
    ],
)
def test_update_return_values(client: Any, rv: str, expected: dict[str, Any] | None) -> None:
    create_table(client)
    put(client, "a", 1, x={"N": "1"}, y={"S": "y"})
    r = client.update_item(
        TableName="tab1",
        Key={"pk": {"S": "a"}, "sk": {"N": "1"}},
        UpdateExpression="SET x = x + :one, z = :z",
        ExpressionAttributeValues={":one": {"N": "1"}, ":z": {"S": "z"}},
        ReturnValues=rv,
    )
    assert r.get("Attributes") == expected


def test_update_creates_missing_item_and_refuses_key_change(client: Any) -> None:
    create_table(client)
    client.update_item(
        TableName="tab1",
        Key={"pk": {"S": "new"}, "sk": {"N": "1"}},
        UpdateExpression="ADD c :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    item = client.get_item(TableName="tab1", Key={"pk": {"S": "new"}, "sk": {"N": "1"}})["Item"]
    assert item == {"pk": {"S": "new"}, "sk": {"N": "1"}, "c": {"N": "1"}}
    with pytest.raises(ClientError) as exc:
        client.update_item(
            TableName="tab1",
            Key={"pk": {"S": "new"}, "sk": {"N": "1"}},
            UpdateExpression="SET pk = :v",
            ExpressionAttributeValues={":v": {"S": "other"}},
        )
    assert error_of(exc) == (
        400,
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
    )


def test_conditional_put_failure_returns_item_when_asked(client: Any) -> None:
    create_table(client)
    put(client, "a", 1, v={"S": "old"})
    with pytest.raises(ClientError) as exc:
        client.put_item(
            TableName="tab1",
            Item={"pk": {"S": "a"}, "sk": {"N": "1"}},
            ConditionExpression="attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert error_of(exc) == (400, "ConditionalCheckFailedException", "The conditional request failed")
    assert exc.value.response["Item"]["v"] == {"S": "old"}


def test_batch_get_and_write(client: Any) -> None:
    create_table(client)
    client.batch_write_item(
        RequestItems={"tab1": [{"PutRequest": {"Item": {"pk": {"S": "b"}, "sk": {"N": str(i)}}}} for i in range(25)]}
    )
    r = client.batch_get_item(
        RequestItems={"tab1": {"Keys": [{"pk": {"S": "b"}, "sk": {"N": str(i)}} for i in range(0, 30, 3)]}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert sorted(int(it["sk"]["N"]) for it in r["Responses"]["tab1"]) == list(range(0, 25, 3))
    assert r["UnprocessedKeys"] == {}
    assert r["ConsumedCapacity"] == [{"TableName": "tab1", "CapacityUnits": 5.0}]
    r = client.batch_write_item(
        RequestItems={"tab1": [{"DeleteRequest": {"Key": {"pk": {"S": "b"}, "sk": {"N": str(i)}}}} for i in range(5)]}
    )
    assert r["UnprocessedItems"] == {}
    assert client.scan(TableName="tab1", Select="COUNT")["Count"] == 20


def test_transact_write_and_get(client: Any) -> None:
    create_table(client)
    put(client, "a", 1, n={"N": "1"})
    put(client, "b", 1)
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": "tab1", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}}}},
            {
                "Update": {
                    "TableName": "tab1",
                    "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
                    "UpdateExpression": "SET n = n + :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            },
            {
                "ConditionCheck": {
                    "TableName": "tab1",
                    "Key": {"pk": {"S": "b"}, "sk": {"N": "1"}},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
            {"Delete": {"TableName": "tab1", "Key": {"pk": {"S": "gone"}, "sk": {"N": "1"}}}},
        ]
    )
    r = client.transact_get_items(
        TransactItems=[
            {"Get": {"TableName": "tab1", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}},
            {"Get": {"TableName": "tab1", "Key": {"pk": {"S": "nope"}, "sk": {"N": "1"}}}},
        ]
    )
    assert r["Responses"][0]["Item"]["n"] == {"N": "2"}
    assert r["Responses"][1] == {}


def test_transact_cancellation_reasons(client: Any) -> None:
    create_table(client)
    put(client, "a", 1, v={"S": "old"})
    with pytest.raises(ClientError) as exc:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "tab1", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}}}},
                {
                    "ConditionCheck": {
                        "TableName": "tab1",
                        "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
            ]
        )
    status, code, message = error_of(exc)
    assert (status, code) == (400, "TransactionCanceledException")
    assert message.endswith("[None, ConditionalCheckFailed]")
    reasons = exc.value.response["CancellationReasons"]
    assert reasons[0] == {"Code": "None"}
    assert reasons[1]["Code"] == "ConditionalCheckFailed"
    assert reasons[1]["Item"]["v"] == {"S": "old"}
    assert "Item" not in client.get_item(TableName="tab1", Key={"pk": {"S": "t"}, "sk": {"N": "1"}})


def test_consumed_capacity_rules(client: Any) -> None:
    gsi_table(client, {"ProjectionType": "ALL"})
    item = {"pk": {"S": "a"}, "sk": {"N": "1"}, "g": {"S": "G"}, "r": {"N": "1"}, "v": {"S": "x" * 3000}}
    r = client.put_item(TableName="tab1", Item=item, ReturnConsumedCapacity="INDEXES")
    cc = r["ConsumedCapacity"]
    assert cc["Table"]["CapacityUnits"] == 3.0
    assert cc["GlobalSecondaryIndexes"]["by_g"]["CapacityUnits"] == 3.0
    assert cc["CapacityUnits"] == 6.0
    r = client.put_item(
        TableName="tab1", Item={**item, "v": {"S": "small"}}, ReturnConsumedCapacity="TOTAL"
    )  # overwrite: the larger of old and new
    assert r["ConsumedCapacity"]["CapacityUnits"] == 6.0
    key = {"pk": {"S": "a"}, "sk": {"N": "1"}}
    client.put_item(TableName="tab1", Item={**item, "v": {"S": "x" * 9000}})
    assert (
        client.get_item(TableName="tab1", Key=key, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]["CapacityUnits"]
        == 1.5
    )
    assert (
        client.get_item(TableName="tab1", Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")[
            "ConsumedCapacity"
        ]["CapacityUnits"]
        == 3.0
    )
    r = client.transact_write_items(
        TransactItems=[{"Put": {"TableName": "tab1", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}}}}],
        ReturnConsumedCapacity="TOTAL",
    )
    assert r["ConsumedCapacity"] == [{"TableName": "tab1", "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}]
    for i in range(3):
        client.put_item(TableName="tab1", Item={"pk": {"S": "q"}, "sk": {"N": str(i)}, "v": {"S": "y" * 1500}})
    r = client.query(
        TableName="tab1",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "q"}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert r["ConsumedCapacity"]["CapacityUnits"] == 1.0  # ~4.5 KB summed, rounded up once to 8 KB, halved


def test_expression_names_and_values_must_be_used(client: Any) -> None:
    create_table(client)
    with pytest.raises(ClientError) as exc:
        client.put_item(
            TableName="tab1",
            Item={"pk": {"S": "a"}, "sk": {"N": "1"}},
            ConditionExpression="attribute_not_exists(pk)",
            ExpressionAttributeValues={":x": {"S": "unused"}},
        )
    assert error_of(exc) == (
        400,
        "ValidationException",
        # PutItem words it with the aggregate prefix (moto's aws_verified test_put_item_unused_attributes)
        "1 validation error detected: Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}",
    )
    with pytest.raises(ClientError) as exc:
        client.get_item(
            TableName="tab1", Key={"pk": {"S": "a"}, "sk": {"N": "1"}}, ExpressionAttributeNames={"#n": "n"}
        )
    assert error_of(exc)[1:] == (
        "ValidationException",
        "ExpressionAttributeNames can only be specified when using expressions",
    )


def test_transact_client_request_token_is_idempotent(client: Any) -> None:
    create_table(client)
    put(client, "a", 1, n={"N": "1"})
    update = {
        "Update": {
            "TableName": "tab1",
            "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
            "UpdateExpression": "SET n = n + :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    }
    for _ in range(2):
        client.transact_write_items(TransactItems=[update], ClientRequestToken="tok-1")
    item = client.get_item(TableName="tab1", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]
    assert item["n"] == {"N": "2"}  # applied once
    with pytest.raises(ClientError) as exc:
        client.transact_write_items(
            TransactItems=[{"Put": {"TableName": "tab1", "Item": {"pk": {"S": "z"}, "sk": {"N": "1"}}}}],
            ClientRequestToken="tok-1",
        )
    assert error_of(exc)[1] == "IdempotentParameterMismatchException"


def test_transaction_size_limit(client: Any) -> None:
    create_table(client)
    big = "x" * (390 * 1024)
    actions = [
        {"Put": {"TableName": "tab1", "Item": {"pk": {"S": f"p{i}"}, "sk": {"N": "1"}, "v": {"S": big}}}}
        for i in range(11)
    ]
    with pytest.raises(ClientError) as exc:
        client.transact_write_items(TransactItems=actions)
    assert error_of(exc) == (400, "ValidationException", "Transaction request cannot be larger than 4 MB")


def test_latency_model_still_answers(make_client: Any) -> None:
    from dynlocust.local.embedded import serve_in_thread

    ep = serve_in_thread(capacity=None, latency_model=True)
    try:
        c = make_client(ep)
        create_table(c)
        put(c, "a", 1)
        assert c.get_item(TableName="tab1", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]["pk"] == {"S": "a"}
        assert ep.stats()["requests_total"] == 3
    finally:
        ep.stop()


def test_resource_control_plane_and_batch_get(resource: Any) -> None:
    table = resource.create_table(
        TableName="res1",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    table.wait_until_exists(WaiterConfig={"Delay": 0.05, "MaxAttempts": 20})
    assert table.table_status == "ACTIVE"
    assert [t.name for t in resource.tables.all()] == ["res1"]
    for i in range(3):
        table.put_item(Item={"pk": f"k{i}", "n": i})
    got = resource.batch_get_item(RequestItems={"res1": {"Keys": [{"pk": "k0"}, {"pk": "k2"}, {"pk": "zz"}]}})
    assert sorted(it["n"] for it in got["Responses"]["res1"]) == [0, 2]
    table.reload()
    assert table.item_count == 3
    table.delete()
    assert list(resource.tables.all()) == []


def test_lsi_fetches_unprojected_attributes_from_the_table(client: Any) -> None:
    create_table(
        client,
        lsis=[
            {
                "IndexName": "by_l",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        extra_attrs={"l": "S"},
    )
    put(client, "p", 1, l={"S": "a"}, extra={"S": "unprojected"})
    args = {
        "TableName": "tab1",
        "IndexName": "by_l",
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "p"}},
    }
    assert "extra" not in client.query(**args)["Items"][0]
    assert client.query(**args, Select="ALL_ATTRIBUTES")["Items"][0]["extra"] == {"S": "unprojected"}
    assert client.query(**args, ProjectionExpression="extra")["Items"] == [{"extra": {"S": "unprojected"}}]


def test_legacy_parameters_are_rewritten_as_expressions(client: Any) -> None:
    create_table(client)
    for i in range(4):
        put(client, "L", i, n={"N": str(i * 10)})
    r = client.query(
        TableName="tab1",
        KeyConditions={
            "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "L"}]},
            "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}, {"N": "3"}]},
        },
        QueryFilter={"n": {"ComparisonOperator": "GE", "AttributeValueList": [{"N": "20"}]}},
    )
    assert [it["sk"]["N"] for it in r["Items"]] == ["2", "3"]
    with pytest.raises(ClientError) as exc:
        client.put_item(TableName="tab1", Item={"pk": {"S": "L"}, "sk": {"N": "0"}}, Expected={"pk": {"Exists": False}})
    assert error_of(exc)[1] == "ConditionalCheckFailedException"
    client.update_item(
        TableName="tab1",
        Key={"pk": {"S": "L"}, "sk": {"N": "0"}},
        AttributeUpdates={"n": {"Action": "ADD", "Value": {"N": "5"}}, "x": {"Action": "PUT", "Value": {"S": "y"}}},
        Expected={"n": {"Value": {"N": "0"}}},
    )
    item = client.get_item(TableName="tab1", Key={"pk": {"S": "L"}, "sk": {"N": "0"}}, AttributesToGet=["n", "x"])
    assert item["Item"] == {"n": {"N": "5"}, "x": {"S": "y"}}
    r = client.scan(
        TableName="tab1",
        ScanFilter={
            "n": {"ComparisonOperator": "LT", "AttributeValueList": [{"N": "10"}]},
            "x": {"ComparisonOperator": "NOT_NULL"},
        },
        ConditionalOperator="OR",
    )
    assert r["Count"] == 1
    with pytest.raises(ClientError) as exc:
        client.scan(
            TableName="tab1",
            ScanFilter={"x": {"ComparisonOperator": "NOT_NULL"}},
            FilterExpression="attribute_exists(x)",
        )
    assert error_of(exc)[2].startswith("Can not use both expression and non-expression parameters")


# sort values of each key type as the wire writes them, in their sort order (N by value, S and B by bytes)
RANGE_VALUES: dict[str, list[Any]] = {
    "N": ["-1e2", "-3", "0", "1.50", "2", "10", "1E3"],
    "S": ["A", "a", "ab", "abc", "b", "z", "é"],
    "B": [b"\x00", b"\x00\x01", b"\x01", b"\x01\x02", b"\x7f", b"\x80", b"\xff"],
}


@pytest.mark.parametrize("typ", ["N", "S", "B"])
@pytest.mark.parametrize("index", [None, "by_r"])
@pytest.mark.parametrize(
    ("condition", "operands", "expected"),
    [
        ("= :a", (3,), [3]),
        ("< :a", (3,), [0, 1, 2]),
        ("<= :a", (3,), [0, 1, 2, 3]),
        ("> :a", (3,), [4, 5, 6]),
        (">= :a", (3,), [3, 4, 5, 6]),
        ("BETWEEN :a AND :b", (1, 4), [1, 2, 3, 4]),
    ],
)
def test_query_sort_key_conditions_on_table_and_index(
    client: Any, typ: str, index: str | None, condition: str, operands: tuple[int, ...], expected: list[int]
) -> None:
    """Each sort-key condition selects the same run on every key type, on the table and on an LSI keyed alike."""
    lsi = {
        "IndexName": "by_r",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "r", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"},
    }
    create_table(client, range_type=typ, lsis=[lsi], extra_attrs={"r": typ})
    values = RANGE_VALUES[typ]
    for i in reversed(range(len(values))):  # written out of order: the store sorts them
        av = {typ: values[i]}
        client.put_item(TableName="tab1", Item={"pk": {"S": "p"}, "sk": av, "r": av, "i": {"N": str(i)}})
    client.put_item(TableName="tab1", Item={"pk": {"S": "other"}, "sk": {typ: values[3]}, "r": {typ: values[3]}})
    attr = "sk" if index is None else "r"
    names = [":a", ":b"][: len(operands)]
    args: dict[str, Any] = {
        "TableName": "tab1",
        "KeyConditionExpression": f"pk = :p AND {attr} {condition}",
        "ExpressionAttributeValues": {
            ":p": {"S": "p"},
            **{n: {typ: values[o]} for n, o in zip(names, operands, strict=True)},
        },
    }
    if index is not None:
        args["IndexName"] = index
    got = [int(it["i"]["N"]) for it in client.query(**args)["Items"]]
    assert got == expected
    backwards = [int(it["i"]["N"]) for it in client.query(**args, ScanIndexForward=False)["Items"]]
    assert backwards == expected[::-1]


@pytest.mark.parametrize(("typ", "prefix", "expected"), [("S", "ab", [2, 3]), ("B", b"\x01", [2, 3])])
def test_query_begins_with_on_sort_keys(client: Any, typ: str, prefix: Any, expected: list[int]) -> None:
    create_table(client, range_type=typ)
    for i, v in enumerate(RANGE_VALUES[typ]):
        client.put_item(TableName="tab1", Item={"pk": {"S": "p"}, "sk": {typ: v}, "i": {"N": str(i)}})
    r = client.query(
        TableName="tab1",
        KeyConditionExpression="pk = :p AND begins_with(sk, :x)",
        ExpressionAttributeValues={":p": {"S": "p"}, ":x": {typ: prefix}},
    )
    assert [int(it["i"]["N"]) for it in r["Items"]] == expected
