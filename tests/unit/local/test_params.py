"""Request parameters shared by the data-plane operations: the unused-placeholder check and its cache.

Issue 29: 100,000 unused ExpressionAttributeNames in one request held the endpoint for 12 s (a regex compiled per
name) and the cache behind the check kept 22.6 MB after 12 such requests. The check is one scan of the text now
(tests/benchmarks/bench_unused_placeholders.py prints the ratio), and the cache is bounded in bytes.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.local import params
from dynlocust.local.expressions import keys
from tests.unit.local.conftest import create_table, wire


@pytest.mark.parametrize(
    ("joined", "keys_given", "unused"),
    [
        ("#a = :v", ("#a",), ()),
        ("#ab = :v", ("#a",), ("#a",)),  # a longer name is not the key
        ("#a#b = :v", ("#b", "#a"), ()),  # adjacent placeholders are two
        ("x.#a[1] = :v", ("#a", "#z", "#y"), ("#y", "#z")),  # sorted
        (":a_1 + :a", (":a", ":a_1", ":a_"), (":a_",)),
        ("#a-b = :v", ("#a-b",), ()),  # a key unlike a token, found as text (then refused by the parser)
        ("#a-bc", ("#a-b",), ("#a-b",)),
    ],
)
def test_unused(joined: str, keys_given: tuple[str, ...], unused: tuple[str, ...]) -> None:
    assert params._unused(joined, keys_given) == unused


@pytest.fixture
def table(endpoint: Any, client: Any) -> str:
    create_table(client)
    return "tab1"


def test_100000_unused_names_over_http_are_listed_and_not_cached(endpoint: Any, table: str) -> None:
    names = {"#used": "pk", **{f"#n{i}": f"attr{i}" for i in range(100_000)}}
    req = {
        "TableName": table,
        "KeyConditionExpression": "#used = :v",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {":v": {"S": "a"}},
    }
    params._unused_cache.clear()
    for _ in range(3):
        status, body = wire(endpoint, "Query", req)
        assert status == 400 and body["__type"].endswith("#ValidationException")
        prefix = "Value provided in ExpressionAttributeNames unused in expressions: keys: {"
        assert body["message"].startswith(prefix + "#n0, #n1, #n10, ")
        assert body["message"].count("#n") == 100_000 and "#used" not in body["message"]
    # 100,000 names keep ~7 MB alive, over the cache's whole budget: nothing is kept, however often it comes
    assert params._unused_cache.bytes == 0 and len(params._unused_cache) == 0


def test_repeated_requests_stay_within_the_cache_bytes(endpoint: Any, table: str) -> None:
    """2,000 requests, each with a 2 KB unused name: ~2.1 KB an entry, so the 1 MB budget keeps under 500 of the
    1,024 entries the entry bound allows; the newest are the ones kept, and they answer the next request."""
    params._unused_cache.clear()
    pad = "#x" + "y" * 2000
    for i in range(2000):
        expr = f"#k{i} = :v"
        names = {f"#k{i}": "pk", pad: "pad"}
        if i % 400 == 0:  # some over HTTP, the rest straight to the check the endpoint runs
            req = {"KeyConditionExpression": expr, "ExpressionAttributeNames": names}
            status, body = wire(
                endpoint, "Query", {"TableName": table, **req, "ExpressionAttributeValues": {":v": {"S": "a"}}}
            )
            assert (status, body["message"][-2010:]) == (400, f"keys: {{{pad}}}")
        else:
            assert params._unused(expr, tuple(names)) == (pad,)
    assert params._unused_cache.bytes <= params._UNUSED_MAX_BYTES
    assert 400 < len(params._unused_cache) < 500
    assert params._unused_cache.get(("#k1999 = :v", ("#k1999", pad))) == (pad,)
    assert params._unused_cache.get(("#k1 = :v", ("#k1", pad))) is None


def test_key_condition_shapes_are_bounded_in_bytes(endpoint: Any, table: str, client: Any) -> None:
    """Each ~4 KB key condition is remembered; 300 of them hold 1.2 MB: the byte bound, not the 1,024 entries, cuts."""
    keys.key_shapes.clear()
    client.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    for i in range(300):
        expr = "pk = :v" + " " * (3700 + i)
        status, body = wire(
            endpoint,
            "Query",
            {"TableName": table, "KeyConditionExpression": expr, "ExpressionAttributeValues": {":v": {"S": "a"}}},
        )
        assert (status, body["Count"]) == (200, 1)
    assert keys.key_shapes.bytes <= keys.KEY_SHAPES_MAX_BYTES
    assert 200 < len(keys.key_shapes) < 300
    assert keys.key_shapes.get(("pk = :v" + " " * 3999, None, "pk", "sk")) is not None  # the newest is kept


# -- issue 34: AttributesToGet, checked as the service checks it ---------------------------------------------------
@pytest.mark.parametrize(
    ("op", "extra", "message"),
    [
        (
            "GetItem",
            {"Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "AttributesToGet": []},
            "1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
        ),
        (
            "GetItem",
            {"Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "AttributesToGet": ["x", "a", "x"]},
            "One or more parameter values were invalid: Duplicate value in attribute name: x",
        ),
        (
            "Scan",
            {"AttributesToGet": ["a", "b", "b"]},
            "One or more parameter values were invalid: Duplicate value in attribute name: b",
        ),
        (
            "Query",
            {
                "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
                "AttributesToGet": ["a", "a"],
            },
            "One or more parameter values were invalid: Duplicate value in attribute name: a",
        ),
    ],
)
def test_attributes_to_get(endpoint: Any, table: str, op: str, extra: dict[str, Any], message: str) -> None:
    got = wire(endpoint, op, {"TableName": table, **extra})
    assert got == (400, {"__type": "com.amazon.coral.validate#ValidationException", "message": message})
