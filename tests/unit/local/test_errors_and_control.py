"""Control plane and the error wire format (status, __type, message) of the main error cases."""

from __future__ import annotations

import http.client
import json
import time
import zlib
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from dynlocust.local.embedded import serve_in_thread
from tests.unit.local.conftest import CONFIG, CREDS, create_table, error_of


def raw(port: int, target: str | None, body: bytes, path: str = "/", method: str = "POST") -> tuple[int, dict, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Content-Type": "application/x-amz-json-1.0"}
        if target:
            headers["X-Amz-Target"] = target
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, dict(resp.getheaders()), json.loads(data) if data[:1] == b"{" else data
    finally:
        conn.close()


ITEM_KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}


@pytest.mark.parametrize(
    ("call", "status", "code", "message"),
    [
        (
            lambda c: c.put_item(TableName="nope", Item=ITEM_KEY),
            400,
            "ResourceNotFoundException",
            "Requested resource not found",
        ),
        (
            lambda c: c.put_item(TableName="tab1", Item={"sk": {"N": "1"}}),
            400,
            "ValidationException",
            "One or more parameter values were invalid: Missing the key pk in the item",
        ),
        (
            lambda c: c.put_item(TableName="tab1", Item={"pk": {"N": "1"}, "sk": {"N": "1"}}),
            400,
            "ValidationException",
            "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N",
        ),
        (
            lambda c: c.get_item(TableName="tab1", Key={"pk": {"S": "a"}}),
            400,
            "ValidationException",
            "The provided key element does not match the schema",
        ),
        (
            lambda c: c.get_item(TableName="tab1", Key={**ITEM_KEY, "x": {"S": "extra"}}),
            400,
            "ValidationException",
            "The provided key element does not match the schema",
        ),
        (
            lambda c: c.put_item(TableName="tab1", Item={**ITEM_KEY, "v": {"S": "x" * (400 * 1024)}}),
            400,
            "ValidationException",
            "Item size has exceeded the maximum allowed size",
        ),
        (
            lambda c: c.describe_table(TableName="nope"),
            400,
            "ResourceNotFoundException",
            "Requested resource not found: Table: nope not found",
        ),
        (
            lambda c: create_table(c),
            400,
            "ResourceInUseException",
            "Table already exists: tab1",
        ),
        (
            lambda c: c.batch_write_item(
                RequestItems={
                    "tab1": [{"PutRequest": {"Item": {"pk": {"S": str(i)}, "sk": {"N": "1"}}}} for i in range(26)]
                }
            ),
            400,
            "ValidationException",
            # one table over 25 writes: the model's per-table constraint, both its rules (dynalite's recorded tests)
            "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must "
            "satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater "
            "than or equal to 1]",
        ),
        (
            lambda c: c.batch_get_item(
                RequestItems={"tab1": {"Keys": [{"pk": {"S": str(i)}, "sk": {"N": "1"}} for i in range(101)]}}
            ),
            400,
            "ValidationException",
            # one table over 100 keys: the per-table member constraint (over 100 across tables: "Too many items")
            "1 validation error detected: Value at 'requestItems.tab1.member.keys' failed to satisfy constraint: "
            "Member must have length less than or equal to 100",
        ),
        (
            lambda c: c.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": "tab1", "Item": ITEM_KEY}},
                    {"Delete": {"TableName": "tab1", "Key": ITEM_KEY}},
                ]
            ),
            400,
            "ValidationException",
            "Transaction request cannot include multiple operations on one item",
        ),
        (
            lambda c: c.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": "tab1", "Item": {"pk": {"S": str(i)}, "sk": {"N": "1"}}}} for i in range(101)
                ]
            ),
            400,
            "ValidationException",
            "1 validation error detected at 'transactItems' failed to satisfy constraint: "
            "Member must have length less than or equal to 100.",
        ),
        (
            lambda c: c.query(
                TableName="tab1", KeyConditionExpression="pk = :p AND", ExpressionAttributeValues={":p": {"S": "a"}}
            ),
            400,
            "ValidationException",
            None,
        ),
    ],
)
def test_error_wire_format(client: Any, call: Any, status: int, code: str, message: str | None) -> None:
    create_table(client)
    with pytest.raises(ClientError) as exc:
        call(client)
    got_status, got_code, got_message = error_of(exc)
    assert (got_status, got_code) == (status, code)
    if message is not None:
        assert got_message == message
    else:
        assert got_message


def test_raw_error_bodies_and_headers(endpoint: Any) -> None:
    status, headers, body = raw(endpoint.port, "DynamoDB_20120810.NoSuchOp", b"{}")
    assert status == 400
    assert body == {"__type": "com.amazon.coral.service#UnknownOperationException"}
    status, headers, body = raw(endpoint.port, "DynamoDB_20120810.GetItem", b"{not json")
    assert status == 400
    assert body["__type"] == "com.amazon.coral.service#SerializationException"
    status, headers, body = raw(endpoint.port, "DynamoDB_20120810.GetItem", b'{"TableName": "zzz", "Key": {}}')
    assert body == {
        "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
        "message": "Requested resource not found",
    }
    assert headers["Content-Type"] == "application/x-amz-json-1.0"
    raw_body = json.dumps(body, separators=(",", ":")).encode()
    assert int(headers["x-amz-crc32"]) == zlib.crc32(raw_body)
    assert headers["x-amzn-RequestId"]


def test_keep_alive_many_requests_one_connection(endpoint: Any) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=10)
    try:
        for _ in range(20):
            conn.request("POST", "/", body=b"{}", headers={"X-Amz-Target": "DynamoDB_20120810.ListTables"})
            resp = conn.getresponse()
            assert json.loads(resp.read()) == {"TableNames": []}
        sock = conn.sock
        assert sock is not None
    finally:
        conn.close()
    assert endpoint.stats()["requests_total"] == 20


def test_connection_close_is_honoured(endpoint: Any) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=10)
    try:
        conn.request(
            "POST", "/", body=b"{}", headers={"X-Amz-Target": "DynamoDB_20120810.ListTables", "Connection": "close"}
        )
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200
        assert conn.sock is None or resp.will_close
    finally:
        conn.close()


def test_stats_endpoint_counts_and_resets(client: Any, endpoint: Any) -> None:
    create_table(client)
    client.put_item(TableName="tab1", Item=ITEM_KEY)
    with pytest.raises(ClientError):
        client.put_item(TableName="tab1", Item=ITEM_KEY, ConditionExpression="attribute_not_exists(pk)")
    client.list_tables()
    status, _, stats = raw(endpoint.port, None, b"", path="/_dynlocust/stats", method="GET")
    assert status == 200
    assert stats["requests_total"] == 4
    assert stats["tables"]["tab1"]["PutItem"] == {"ok": 1, "throttled": 0, "error": 1, "unprocessed_items": 0}
    assert stats["tables"]["-"]["ListTables"]["ok"] == 1
    status, _, _ = raw(endpoint.port, None, b"", path="/_dynlocust/reset-stats")
    assert status == 200
    assert endpoint.stats() == {
        "requests_total": 0,
        "max_request_seconds": 0.0,
        "max_request_cpu_seconds": 0.0,
        "tables": {},
    }


def test_create_describe_update_delete(client: Any) -> None:
    r = create_table(
        client,
        "prov",
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7},
        Tags=[{"Key": "run", "Value": "r1"}],
        OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
    )
    d = r["TableDescription"]
    assert d["TableStatus"] == "ACTIVE"
    assert d["ProvisionedThroughput"]["WriteCapacityUnits"] == 7
    assert d["TableArn"] == "arn:aws:dynamodb:us-east-1:000000000000:table/prov"
    tags = client.list_tags_of_resource(ResourceArn=d["TableArn"])["Tags"]
    assert tags == [{"Key": "run", "Value": "r1"}]
    client.tag_resource(ResourceArn=d["TableArn"], Tags=[{"Key": "x", "Value": "y"}])
    client.untag_resource(ResourceArn=d["TableArn"], TagKeys=["run"])
    assert client.list_tags_of_resource(ResourceArn=d["TableArn"])["Tags"] == [{"Key": "x", "Value": "y"}]
    u = client.update_table(
        TableName="prov",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[
            {
                "Create": {
                    "IndexName": "by_g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            }
        ],
    )["TableDescription"]
    assert u["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert [g["IndexName"] for g in u["GlobalSecondaryIndexes"]] == ["by_g"]
    assert client.delete_table(TableName="prov")["TableDescription"]["TableStatus"] == "DELETING"
    with pytest.raises(ClientError) as exc:
        client.describe_table(TableName="prov")
    assert error_of(exc)[1] == "ResourceNotFoundException"


def test_update_table_backfills_new_gsi(client: Any) -> None:
    create_table(client)
    client.put_item(TableName="tab1", Item={**ITEM_KEY, "g": {"S": "G"}})
    client.update_table(
        TableName="tab1",
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[
            {
                "Create": {
                    "IndexName": "by_g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            }
        ],
    )
    r = client.query(
        TableName="tab1",
        IndexName="by_g",
        KeyConditionExpression="g = :g",
        ExpressionAttributeValues={":g": {"S": "G"}},
    )
    assert r["Items"] == [{**ITEM_KEY, "g": {"S": "G"}}]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"BillingMode": "PROVISIONED"},
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be "
            "specified when BillingMode is PROVISIONED",
        ),
        (
            {"ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}},
            "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be "
            "specified when BillingMode is PAY_PER_REQUEST",
        ),
        (
            {"extra_attrs": {"unused": "S"}},
            "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match "
            "number of attributes defined in AttributeDefinitions",
        ),
    ],
)
def test_create_table_validation(client: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ClientError) as exc:
        create_table(client, "bad", **kwargs)
    assert error_of(exc) == (400, "ValidationException", message)


def test_list_tables_pagination(client: Any) -> None:
    for i in range(5):
        create_table(client, f"tab{i}", range_type=None)
    r = client.list_tables(Limit=2)
    assert r == {**r, "TableNames": ["tab0", "tab1"], "LastEvaluatedTableName": "tab1"}
    r = client.list_tables(Limit=2, ExclusiveStartTableName="tab3")
    assert r["TableNames"] == ["tab4"]
    assert "LastEvaluatedTableName" not in r


def test_create_delay_creating_then_active(make_client: Any) -> None:
    ep = serve_in_thread(capacity=None, create_delay=0.3)
    try:
        c = make_client(ep)
        assert create_table(c)["TableDescription"]["TableStatus"] == "CREATING"
        with pytest.raises(ClientError) as exc:
            c.put_item(TableName="tab1", Item=ITEM_KEY)
        assert error_of(exc)[1] == "ResourceNotFoundException"
        with pytest.raises(ClientError) as exc:
            c.delete_table(TableName="tab1")
        assert error_of(exc)[1] == "ResourceInUseException"
        c.get_waiter("table_exists").wait(TableName="tab1", WaiterConfig={"Delay": 0.1, "MaxAttempts": 50})
        deadline = time.monotonic() + 5
        while c.describe_table(TableName="tab1")["Table"]["TableStatus"] != "ACTIVE":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        c.put_item(TableName="tab1", Item=ITEM_KEY)
    finally:
        ep.stop()


def test_describe_counts_table_and_index_items(client: Any) -> None:
    create_table(
        client,
        gsis=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        extra_attrs={"g": "S"},
    )
    for i in range(4):
        item = {"pk": {"S": f"p{i}"}, "sk": {"N": "1"}, "v": {"S": "x" * 100}}
        if i % 2:
            item["g"] = {"S": "G"}
        client.put_item(TableName="tab1", Item=item)
    client.delete_item(TableName="tab1", Key={"pk": {"S": "p1"}, "sk": {"N": "1"}})
    d = client.describe_table(TableName="tab1")["Table"]
    assert d["ItemCount"] == 3
    assert d["TableSizeBytes"] == 3 * (2 + 2 + 2 + 2 + 1 + 100) + (1 + 1)
    g = d["GlobalSecondaryIndexes"][0]
    assert (g["ItemCount"], g["IndexSizeBytes"]) == (1, 2 + 2 + 2 + 2 + 1 + 1)
    assert g["IndexArn"] == d["TableArn"] + "/index/by_g"


def test_empty_string_in_gsi_key_is_rejected(client: Any) -> None:
    create_table(
        client,
        gsis=[
            {
                "IndexName": "by_g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        extra_attrs={"g": "S"},
    )
    with pytest.raises(ClientError) as exc:
        client.put_item(TableName="tab1", Item={**ITEM_KEY, "g": {"S": ""}})
    assert error_of(exc)[1] == "ValidationException"
    assert "IndexName: by_g, IndexKey: g" in error_of(exc)[2]


def test_bad_content_length_gets_400_and_server_survives(endpoint: Any) -> None:
    import socket

    with socket.create_connection(("127.0.0.1", endpoint.port), timeout=10) as s:
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
        assert s.recv(1024).startswith(b"HTTP/1.1 400")
    with socket.create_connection(("127.0.0.1", endpoint.port), timeout=10) as s:
        body = b"{}"
        req = (
            b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: 2\r\n\r\n"
            + body
        )
        s.sendall(req + req)  # pipelined: two answers in order
        data = b""
        while data.count(b"HTTP/1.1 200") < 2:
            chunk = s.recv(4096)
            assert chunk
            data += chunk
    assert endpoint.stats()["requests_total"] == 2


def test_limits_ttl_and_endpoints(client: Any, endpoint: Any) -> None:
    assert client.describe_limits()["TableMaxWriteCapacityUnits"] == 40000
    create_table(client)
    assert client.describe_time_to_live(TableName="tab1")["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    client.update_time_to_live(TableName="tab1", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    ttl = client.describe_time_to_live(TableName="tab1")["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    assert client.describe_endpoints()["Endpoints"][0]["Address"] == f"127.0.0.1:{endpoint.port}"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1" * 39, "Attempting to store more than 38 significant digits in a Number"),
        ("1E+126", "Number overflow. Attempting to store a number with magnitude larger than supported range"),
        ("1E-131", "Number underflow. Attempting to store a number with magnitude smaller than supported range"),
    ],
)
def test_number_limits(client: Any, value: str, message: str) -> None:
    create_table(client)
    with pytest.raises(ClientError) as exc:
        client.put_item(TableName="tab1", Item={**ITEM_KEY, "n": {"N": value}})
    assert error_of(exc) == (400, "ValidationException", message)
    client.put_item(TableName="tab1", Item={**ITEM_KEY, "n": {"N": "1" * 38 + "0" * 80}})


# ---------------------------------------------------------------- conformance (issue 15): moto's suite, aws_verified
def test_key_size_limits_are_enforced(client: Any) -> None:
    create_table(client, range_type="S")
    client.put_item(TableName="tab1", Item={"pk": {"S": "x" * 2048}, "sk": {"S": "y" * 1024}})
    with pytest.raises(ClientError) as exc:
        client.put_item(TableName="tab1", Item={"pk": {"S": "x" * 2049}, "sk": {"S": "y"}})
    assert error_of(exc)[2].endswith("Size of hashkey has exceeded the maximum size limit of2048 bytes")
    with pytest.raises(ClientError) as exc:
        client.update_item(TableName="tab1", Key={"pk": {"S": "x"}, "sk": {"S": "é" * 513}})
    assert error_of(exc)[2].endswith("Aggregated size of all range keys has exceeded the size limit of 1024 bytes")
    with pytest.raises(ClientError) as exc:
        client.query(TableName="tab1", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": ""}})
    assert error_of(exc)[2].endswith("cannot contain an empty string value. Key: pk")


def test_table_arn_is_accepted_as_table_name(client: Any) -> None:
    arn = create_table(client, range_type=None)["TableDescription"]["TableArn"]
    client.put_item(TableName=arn, Item={"pk": {"S": "a"}})
    assert client.get_item(TableName=arn, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    got = client.batch_get_item(RequestItems={arn: {"Keys": [{"pk": {"S": "a"}}]}})["Responses"]
    assert got == {arn: [{"pk": {"S": "a"}}]}
    assert client.describe_table(TableName=arn)["Table"]["TableName"] == "tab1"
    with pytest.raises(ClientError) as exc:
        client.get_item(TableName=arn.replace("tab1", "nope"), Key={"pk": {"S": "a"}})
    assert error_of(exc)[1] == "ResourceNotFoundException"


def test_expression_checks_come_before_parsing_and_lookup(client: Any) -> None:
    create_table(client, range_type=None)
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"FilterExpression": "", "KeyConditionExpression": "pk = sth"},
            "Invalid FilterExpression: The expression can not be empty;",
        ),
        (
            {"KeyConditionExpression": "(#0 = x)", "ExpressionAttributeNames": {"#0": "pk", "#c": "c"}},
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#c}",
        ),
        (
            {"KeyConditionExpression": "pk = loc", "ExpressionAttributeValues": {"loc": {"S": "a"}}},
            'ExpressionAttributeValues contains invalid key: Syntax error; key: "loc"',
        ),
    ]
    for params, expected in cases:
        with pytest.raises(ClientError) as exc:
            client.query(TableName="tab1", **params)
        assert error_of(exc) == (400, "ValidationException", expected)
    with pytest.raises(ClientError) as exc:
        client.update_item(
            TableName="tab1",
            Key={"pk": {"S": "a"}},
            UpdateExpression="ADD s :e",
            ExpressionAttributeValues={":e": {"SS": []}},
        )
    assert error_of(exc)[2] == (
        "1 validation error detected: One or more parameter values were invalid: An string set  may not be empty"
    )
    with pytest.raises(ClientError) as exc:  # the request is refused before the (missing) table is looked up
        client.batch_get_item(
            RequestItems={"missing": {"Keys": [{"pk": {"S": "a"}}], "ExpressionAttributeNames": {"#c": "c"}}}
        )
    assert error_of(exc)[1] == "ValidationException"


def test_wrong_json_types_and_malformed_legacy_parameters_are_400(endpoint: Any) -> None:
    port = int(endpoint.url.rsplit(":", 1)[1])
    target = "DynamoDB_20120810."
    status, _, body = raw(port, target + "DescribeTable", b'{"TableName": true}')
    assert (status, body["__type"].split("#")[1]) == (400, "SerializationException")
    for op, payload in [
        ("PutItem", {"TableName": "t", "Item": {"pk": {"S": "a"}}, "Expected": "x"}),
        ("UpdateItem", {"TableName": "t", "Key": {"pk": {"S": "a"}}, "AttributeUpdates": 1}),
        ("Query", {"TableName": "t", "KeyConditions": "pk"}),
        ("PutItem", {"TableName": "t", "Item": {"pk": {"S": "a"}}, "Expected": {"a": "x"}}),
        ("UpdateItem", {"TableName": "t", "Key": {"pk": {"S": "a"}}, "AttributeUpdates": {"a": {"Action": "PUT"}}}),
    ]:
        status, _, body = raw(port, target + op, json.dumps(payload).encode())
        assert status == 400, (op, payload, body)


def test_legacy_parameters_the_service_accepts(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "l": {"L": [{"N": "1"}]}, "v": {"S": "x"}})
    client.update_item(
        TableName="tab1",
        Key={"pk": {"S": "a"}},
        AttributeUpdates={"l": {"Action": "ADD", "Value": {"L": [{"N": "2"}]}}},
        Expected={"v": {"ComparisonOperator": "EQ", "Value": {"S": "x"}}},
    )
    item = client.get_item(TableName="tab1", Key={"pk": {"S": "a"}})["Item"]
    assert item["l"] == {"L": [{"N": "1"}, {"N": "2"}]}


def test_update_expression_conformance(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(
        TableName="tab1",
        Item={
            "pk": {"S": "a"},
            "a": {"M": {"b": {"L": [{"S": "x"}]}, "c": {"N": "1"}}},
            "n": {"L": [{"N": "1"}, {"N": "2"}]},
        },
    )
    out = client.update_item(
        TableName="tab1",
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET a.d = list_append(a.b, :i), a.e = ((n[1]) + (a.c))",
        ExpressionAttributeValues={":i": {"L": [{"S": "y"}]}},
        ReturnValues="UPDATED_NEW",
    )
    assert out["Attributes"] == {"a": {"M": {"d": {"L": [{"S": "x"}, {"S": "y"}]}, "e": {"N": "3"}}}}
    with pytest.raises(ClientError) as exc:
        client.put_item(TableName="tab1", Item={"pk": {"S": "b"}}, ConditionExpression="((attribute_not_exists(pk)))")
    assert error_of(exc)[2] == "Invalid ConditionExpression: The expression has redundant parentheses;"


def test_describe_shapes_and_tag_paging(client: Any) -> None:
    t = create_table(
        client,
        range_type=None,
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        SSESpecification={"Enabled": True, "SSEType": "KMS"},
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )["TableDescription"]
    assert t["BillingModeSummary"] == {"BillingMode": "PROVISIONED"}
    assert t["SSEDescription"]["Status"] == "ENABLED" and t["SSEDescription"]["KMSMasterKeyArn"].startswith(
        "arn:aws:kms"
    )
    assert t["LatestStreamArn"] == f"{t['TableArn']}/stream/{t['LatestStreamLabel']}"
    client.tag_resource(ResourceArn=t["TableArn"], Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(11)])
    page = client.list_tags_of_resource(ResourceArn=t["TableArn"])
    assert len(page["Tags"]) == 10
    rest = client.list_tags_of_resource(ResourceArn=t["TableArn"], NextToken=page["NextToken"])
    assert len(rest["Tags"]) == 1 and "NextToken" not in rest


def test_multi_attribute_gsi_keys(client: Any) -> None:
    gsi = {
        "IndexName": "gsi",
        "KeySchema": [
            {"AttributeName": "a", "KeyType": "HASH"},
            {"AttributeName": "b", "KeyType": "HASH"},
            {"AttributeName": "s1", "KeyType": "RANGE"},
            {"AttributeName": "s2", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
    }
    t = create_table(client, range_type=None, gsis=[gsi], extra_attrs={"a": "S", "b": "S", "s1": "S", "s2": "N"})
    assert t["TableDescription"]["GlobalSecondaryIndexes"][0]["KeySchema"] == gsi["KeySchema"]
    rows = [("1", "x", 3), ("2", "x", 1), ("3", "y", 2), ("4", "x", 2)]
    for pk, s1, s2 in rows:
        item = {"pk": {"S": pk}, "a": {"S": "A"}, "b": {"S": "B"}, "s1": {"S": s1}, "s2": {"N": str(s2)}}
        client.put_item(TableName="tab1", Item=item)
    client.put_item(TableName="tab1", Item={"pk": {"S": "5"}, "a": {"S": "A"}, "b": {"S": "B"}, "s1": {"S": "x"}})
    values = {":a": {"S": "A"}, ":b": {"S": "B"}, ":x": {"S": "x"}, ":n": {"N": "1"}}

    def query(kce: str, **kw: Any) -> list[str]:
        used = {k: v for k, v in values.items() if k in kce}
        out = client.query(
            TableName="tab1", IndexName="gsi", KeyConditionExpression=kce, ExpressionAttributeValues=used, **kw
        )
        return [i["pk"]["S"] for i in out["Items"]]

    assert query("a = :a AND b = :b") == ["2", "4", "1", "3"]  # sorted by s1 then s2; item 5 lacks s2
    assert query("a = :a AND b = :b AND s1 = :x AND s2 > :n") == ["4", "1"]
    page = client.query(
        TableName="tab1",
        IndexName="gsi",
        KeyConditionExpression="a = :a AND b = :b",
        ExpressionAttributeValues={":a": values[":a"], ":b": values[":b"]},
        Limit=2,
    )
    assert set(page["LastEvaluatedKey"]) == {"pk", "a", "b", "s1", "s2"}
    with pytest.raises(ClientError) as exc:
        query("a = :a AND b = :b AND s2 > :n")  # skips s1
    assert "s1" in error_of(exc)[2]
    with pytest.raises(ClientError) as exc:
        query("a = :a AND s1 = :x")  # misses the second partition attribute
    assert "b" in error_of(exc)[2]


def test_tables_are_namespaced_by_region(endpoint: Any, client: Any) -> None:
    other = boto3.client("dynamodb", endpoint_url=endpoint.url, config=CONFIG, **{**CREDS, "region_name": "eu-west-1"})
    arn = create_table(other, range_type=None)["TableDescription"]["TableArn"]
    assert arn.startswith("arn:aws:dynamodb:eu-west-1:")
    assert other.list_tables()["TableNames"] == ["tab1"]
    assert client.list_tables()["TableNames"] == []
    with pytest.raises(ClientError) as exc:
        client.describe_table(TableName="tab1")
    assert error_of(exc)[1] == "ResourceNotFoundException"
    create_table(client, range_type=None)  # the same name in another region is another table
    client.put_item(TableName="tab1", Item={"pk": {"S": "here"}})
    assert other.scan(TableName="tab1")["Items"] == []
