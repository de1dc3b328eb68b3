"""What the endpoint's successful responses carry (issue 45, class 10), over raw HTTP to `dynlocust local` as its
own process: each row is a request, then what the service answers, with the source of that answer beside it.

Sources named in the rows:
- CLI: the AWS CLI's examples of each command (aws/aws-cli, awscli/examples/dynamodb/<command>.rst), outputs of the
  service: batch-write-item (INDEXES and SIZE on a table with an LSI), query example 5 (INDEXES on an LSI read),
  delete-table.
- API: the API reference's ItemCollectionMetrics, ConsumedCapacity and DeleteTable pages.
- dynalite: dynalite's tests, recorded against the service (test/batchGetItem.js, test/deleteTable.js).
- moto: moto's test_valid_transact_get_items (transactions carry ReadCapacityUnits).
- issue 45: the suites run against the service that the issue summarises.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dynlocust.local.embedded import LocalEndpoint

LSI_TABLE = "coll"  # pk (S) + sk (S), LSI by_s2 on pk + s2 (ALL)
PLAIN = "plain"  # pk (S) only: no LSI, so no ItemCollectionMetrics
UNDER_1_GB = [0.0, 1.0]  # a collection of a few small items (CLI batch-write-item)


def key_schema(hash_key: str, range_key: str) -> list[dict[str, str]]:
    return [{"AttributeName": hash_key, "KeyType": "HASH"}, {"AttributeName": range_key, "KeyType": "RANGE"}]


def call(ep: LocalEndpoint, op: str, req: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    """(status, headers with lower-case names, JSON body) of one request as a raw client sends it."""
    conn = http.client.HTTPConnection("127.0.0.1", ep.port, timeout=30)
    try:
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810." + op}
        conn.request("POST", "/", body=json.dumps(req).encode(), headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, json.loads(resp.read())
    finally:
        conn.close()


def ok(ep: LocalEndpoint, op: str, req: dict[str, Any]) -> Any:
    status, _, body = call(ep, op, req)
    assert status == 200, body
    return body


@pytest.fixture(scope="module")
def ep() -> Iterator[LocalEndpoint]:
    endpoint = LocalEndpoint(capacity=False).start()
    try:
        ok(
            endpoint,
            "CreateTable",
            {
                "TableName": LSI_TABLE,
                "KeySchema": key_schema("pk", "sk"),
                "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "s2")],
                "LocalSecondaryIndexes": [
                    {
                        "IndexName": "by_s2",
                        "KeySchema": key_schema("pk", "s2"),
                        "Projection": {"ProjectionType": "ALL"},
                    }
                ],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        ok(
            endpoint,
            "CreateTable",
            {
                "TableName": PLAIN,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        ok(endpoint, "PutItem", {"TableName": PLAIN, "Item": {"pk": {"S": "only"}}})
        ok(
            endpoint,
            "PutItem",
            {"TableName": LSI_TABLE, "Item": {"pk": {"S": "r"}, "sk": {"S": "1"}, "s2": {"S": "x"}}},
        )
        yield endpoint
    finally:
        endpoint.stop()


def item(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}, "s2": {"S": "v"}}


def metrics(pk: str) -> dict[str, Any]:
    return {"ItemCollectionKey": {"pk": {"S": pk}}, "SizeEstimateRangeGB": UNDER_1_GB}


SIZE = {"ReturnItemCollectionMetrics": "SIZE"}

# -- ReturnItemCollectionMetrics SIZE: the written collection's key and size estimate, only on a table with an LSI --
ITEM_COLLECTIONS = [
    pytest.param("PutItem", {"TableName": LSI_TABLE, "Item": item("p1", "a"), **SIZE}, metrics("p1"), id="put"),
    pytest.param(
        "UpdateItem",
        {
            "TableName": LSI_TABLE,
            "Key": {"pk": {"S": "u1"}, "sk": {"S": "a"}},
            "UpdateExpression": "SET s2 = :v",
            "ExpressionAttributeValues": {":v": {"S": "w"}},
            **SIZE,
        },
        metrics("u1"),
        id="update",
    ),
    pytest.param(
        "DeleteItem",
        {"TableName": LSI_TABLE, "Key": {"pk": {"S": "r"}, "sk": {"S": "1"}}, **SIZE},
        metrics("r"),
        id="delete",
    ),
    # three puts to two partition keys: one entry per collection (CLI batch-write-item)
    pytest.param(
        "BatchWriteItem",
        {
            "RequestItems": {
                LSI_TABLE: [
                    {"PutRequest": {"Item": item(pk, sk)}} for pk, sk in (("b1", "a"), ("b2", "a"), ("b1", "b"))
                ]
            },
            **SIZE,
        },
        {LSI_TABLE: [metrics("b1"), metrics("b2")]},
        id="batch-write-per-collection",
    ),
    pytest.param(
        "TransactWriteItems",
        {
            "TransactItems": [
                {"Put": {"TableName": LSI_TABLE, "Item": item("t1", "a")}},
                {"Delete": {"TableName": LSI_TABLE, "Key": {"pk": {"S": "t2"}, "sk": {"S": "a"}}}},
                {"Put": {"TableName": PLAIN, "Item": {"pk": {"S": "t3"}}}},  # no LSI: no entry
            ],
            **SIZE,
        },
        {LSI_TABLE: [metrics("t1"), metrics("t2")]},
        id="transact-write",
    ),
    # API: "If the table does not have any local secondary indexes, this information is not returned"
    pytest.param("PutItem", {"TableName": PLAIN, "Item": {"pk": {"S": "n"}}, **SIZE}, None, id="no-lsi-put"),
    pytest.param(
        "BatchWriteItem",
        {"RequestItems": {PLAIN: [{"PutRequest": {"Item": {"pk": {"S": "n2"}}}}]}, **SIZE},
        None,
        id="no-lsi-batch",
    ),
    pytest.param("PutItem", {"TableName": LSI_TABLE, "Item": item("p2", "a")}, None, id="not-asked"),
]


@pytest.mark.parametrize(("op", "req", "expected"), ITEM_COLLECTIONS)
def test_item_collection_metrics(ep: LocalEndpoint, op: str, req: dict[str, Any], expected: Any) -> None:
    assert ok(ep, op, req).get("ItemCollectionMetrics") == expected


# -- ConsumedCapacity: TOTAL is the table name and the units; INDEXES adds the table's and each index's Capacity;
#    only transactions carry ReadCapacityUnits/WriteCapacityUnits ------------------------------------------------
def query_lsi(mode: str) -> dict[str, Any]:
    return {
        "TableName": LSI_TABLE,
        "IndexName": "by_s2",
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "c0"}},
        "ReturnConsumedCapacity": mode,
    }


CONSUMED = [
    # CLI batch-write-item: a put on a table with an LSI is one unit for the table and one for the index
    pytest.param(
        "PutItem",
        {"TableName": LSI_TABLE, "Item": item("c1", "a"), "ReturnConsumedCapacity": "INDEXES"},
        {
            "TableName": LSI_TABLE,
            "CapacityUnits": 2.0,
            "Table": {"CapacityUnits": 1.0},
            "LocalSecondaryIndexes": {"by_s2": {"CapacityUnits": 1.0}},
        },
        id="put-indexes",
    ),
    pytest.param(
        "PutItem",
        {"TableName": LSI_TABLE, "Item": item("c2", "a"), "ReturnConsumedCapacity": "TOTAL"},
        {"TableName": LSI_TABLE, "CapacityUnits": 2.0},
        id="put-total",
    ),
    # CLI query example 5: a read of an LSI shows the table at 0.0 beside the index
    pytest.param(
        "Query",
        query_lsi("INDEXES"),
        {
            "TableName": LSI_TABLE,
            "CapacityUnits": 0.5,
            "Table": {"CapacityUnits": 0.0},
            "LocalSecondaryIndexes": {"by_s2": {"CapacityUnits": 0.5}},
        },
        id="query-lsi-indexes",
    ),
    pytest.param("Query", query_lsi("TOTAL"), {"TableName": LSI_TABLE, "CapacityUnits": 0.5}, id="query-lsi-total"),
    # dynalite test/batchGetItem.js: INDEXES is {CapacityUnits, Table: {CapacityUnits}, TableName}, one per table
    pytest.param(
        "BatchGetItem",
        {"RequestItems": {PLAIN: {"Keys": [{"pk": {"S": "only"}}]}}, "ReturnConsumedCapacity": "INDEXES"},
        [{"TableName": PLAIN, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.5}}],
        id="batch-get-indexes",
    ),
    pytest.param(
        "GetItem",
        {"TableName": PLAIN, "Key": {"pk": {"S": "only"}}, "ReturnConsumedCapacity": "INDEXES"},
        {"TableName": PLAIN, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.5}},
        id="get-indexes",
    ),
    # a strongly consistent Scan of one item under 4 KB: one read unit (Developer Guide, read request units: "one
    # strongly consistent read request ... for an item up to 4 KB"; a Scan is priced on the size it read)
    pytest.param(
        "Scan",
        {"TableName": PLAIN, "ConsistentRead": True, "ReturnConsumedCapacity": "INDEXES"},
        {"TableName": PLAIN, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}},
        id="consistent-scan-one-item",
    ),
    # moto test_valid_transact_get_items: a transaction's reads are 2 units an item, with ReadCapacityUnits
    pytest.param(
        "TransactGetItems",
        {
            "TransactItems": [{"Get": {"TableName": PLAIN, "Key": {"pk": {"S": "only"}}}}],
            "ReturnConsumedCapacity": "INDEXES",
        },
        [
            {
                "TableName": PLAIN,
                "CapacityUnits": 2.0,
                "ReadCapacityUnits": 2.0,
                "Table": {"CapacityUnits": 2.0, "ReadCapacityUnits": 2.0},
            }
        ],
        id="transact-get-indexes",
    ),
]


@pytest.mark.parametrize(("op", "req", "expected"), CONSUMED)
def test_consumed_capacity(ep: LocalEndpoint, op: str, req: dict[str, Any], expected: Any) -> None:
    assert ok(ep, op, req)["ConsumedCapacity"] == expected


# -- DeleteTable: its description leaves out what the CLI's and the API reference's examples leave out ------------
@pytest.fixture(scope="module")
def deleted(ep: LocalEndpoint) -> dict[str, Any]:
    name = "gone"
    ok(
        ep,
        "CreateTable",
        {
            "TableName": name,
            "KeySchema": key_schema("pk", "sk"),
            "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g", "s2")],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "by_g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            ],
            "LocalSecondaryIndexes": [
                {
                    "IndexName": "by_s2",
                    "KeySchema": key_schema("pk", "s2"),
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            ],
            "BillingMode": "PAY_PER_REQUEST",
        },
    )
    return dict(ok(ep, "DeleteTable", {"TableName": name})["TableDescription"])


@pytest.mark.parametrize(
    ("member", "present"),
    [
        pytest.param("GlobalSecondaryIndexes", False, id="no-gsis"),  # dynalite test/deleteTable.js, CLI, API
        pytest.param("LocalSecondaryIndexes", False, id="no-lsis"),  # CLI, API
        pytest.param("KeySchema", False, id="no-key-schema"),  # CLI, API
        pytest.param("AttributeDefinitions", False, id="no-attribute-definitions"),  # CLI, API
        pytest.param("CreationDateTime", False, id="no-creation-time"),  # CLI, API
        pytest.param("TableName", True, id="table-name"),  # CLI, API
        pytest.param("TableStatus", True, id="status"),  # CLI, API
        pytest.param("ProvisionedThroughput", True, id="throughput"),  # CLI, API
        pytest.param("TableSizeBytes", True, id="size"),  # CLI, API
        pytest.param("ItemCount", True, id="count"),  # CLI, API
    ],
)
def test_delete_table_description(deleted: dict[str, Any], member: str, present: bool) -> None:
    assert (member in deleted) is present, sorted(deleted)
    assert deleted["TableStatus"] == "DELETING"


# -- HTTP: every response names the server as the service does and is dated (issue 45; RFC 7231 section 7.1.1.1) --
IMF_FIXDATE = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT"
)


@pytest.mark.parametrize(
    ("op", "req", "status"),
    [
        pytest.param("ListTables", {}, 200, id="answer"),
        pytest.param("GetItem", {"TableName": "missing", "Key": {"pk": {"S": "a"}}}, 400, id="refusal"),
    ],
)
def test_server_and_date_headers(ep: LocalEndpoint, op: str, req: dict[str, Any], status: int) -> None:
    before = time.time()
    got, headers, _ = call(ep, op, req)
    assert got == status
    assert headers["server"] == "Server"
    assert IMF_FIXDATE.fullmatch(headers["date"]), headers["date"]
    sent = email.utils.parsedate_to_datetime(headers["date"]).timestamp()
    assert before - 1 <= sent <= time.time() + 1


def raw(ep: LocalEndpoint, head: bytes, body: Iterator[bytes]) -> tuple[int, bytes]:
    """Send a request's head and its body's pieces on one socket; (status, response body)."""
    with socket.create_connection(("127.0.0.1", ep.port), timeout=30) as sock:
        sock.sendall(head)
        try:
            for piece in body:
                sock.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole body was read: the answer is still there to read
        answer = b""
        while (end := answer.find(b"\r\n\r\n")) < 0 or len(answer) < end + 4 + content_length(answer[:end]):
            got = sock.recv(65536)
            assert got, f"the connection closed before a whole response: {answer!r}"
            answer += got
    status_line = answer.split(b"\r\n", 1)[0]
    return int(status_line.split(b" ")[1]), answer[end + 4 :]


def content_length(head: bytes) -> int:
    found = re.search(rb"\r\ncontent-length: *(\d+)", head, re.IGNORECASE)
    assert found, head
    return int(found.group(1))


CHUNKED_HEAD = (
    b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\n"
    b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nTransfer-Encoding: chunked\r\n\r\n"
)
MB = 1024 * 1024


def chunks(total: int, size: int = MB) -> Iterator[bytes]:
    """`total` bytes of a JSON-ish body as chunks of `size`, then the last chunk."""
    sent = 0
    while sent < total:
        n = min(size, total - sent)
        yield f"{n:x}\r\n".encode() + b" " * n + b"\r\n"
        sent += n
    yield b"0\r\n\r\n"


def test_a_17_mb_chunked_body_is_refused_413(ep: LocalEndpoint) -> None:
    # the service refuses any request body over 16 MB (issue 45: a 17 MB chunked body answers 413)
    status, _ = raw(ep, CHUNKED_HEAD, chunks(17 * MB))
    assert status == 413
    assert ok(ep, "ListTables", {})["TableNames"]  # and the endpoint serves the next client


CHUNKED = [
    # RFC 7230 section 4.1: a chunk's size in hex, extensions after ';', trailer fields after the last chunk
    pytest.param([b"1\r\n{\r\n", b"1;ext=1\r\n}\r\n", b"0\r\nX-T: 1\r\n\r\n"], 200, id="read"),
    pytest.param([b"zz\r\n{}\r\n0\r\n\r\n"], 400, id="size-not-hex"),
    pytest.param([b"2\r\n{}XX0\r\n\r\n"], 400, id="chunk-not-ended-by-crlf"),
    pytest.param([b"0" * 5000 + b"2\r\n{}\r\n0\r\n\r\n"], 400, id="size-line-over-4-kb"),
]


@pytest.mark.parametrize(("pieces", "status"), CHUNKED)
def test_chunked_bodies(ep: LocalEndpoint, pieces: list[bytes], status: int) -> None:
    got, body = raw(ep, CHUNKED_HEAD, iter(pieces))
    assert got == status, body
    if status == 200:  # a chunked body within the limit is a request like any other
        assert json.loads(body) == ok(ep, "ListTables", {})
