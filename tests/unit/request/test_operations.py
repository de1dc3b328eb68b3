"""Every operation kind builds a request the local endpoint accepts, for every key type, items of the asked size."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import pytest

from dynlocust.local.embedded import serve_in_thread
from dynlocust.request.keys import item_size, make_item
from dynlocust.request.operations import Mix, build_item, seed_items
from dynlocust.request.record import consumed_capacity
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.tables import TableManager
from dynlocust.scenario import load_scenario_text

OPS = [
    "{op: put, weight: 1}",
    "{op: conditional_put, weight: 1}",
    "{op: get, weight: 1}",
    "{op: query, weight: 1, limit: 5}",
    "{op: gsi_query, weight: 1, index: by_g}",
    "{op: scan, weight: 1, filter: 'attribute_exists(g)', limit: 20}",
    "{op: update, weight: 1}",
    "{op: delete, weight: 1}",
    "{op: transact_write, weight: 1, items: 4}",
    "{op: batch_write, weight: 1, items: 25}",
    "{op: batch_get, weight: 1, items: 10}",
]


def scenario(key_type: str) -> Any:
    ops = "\n".join(f"    - {op}" for op in OPS)
    return load_scenario_text(
        f"""\
name: ops
tables:
  - name: t
    partition_key: {{name: pk, type: {key_type}}}
    sort_key: {{name: sk, type: {key_type}}}
    gsis: [{{name: by_g, partition_key: {{name: g, type: S}}}}]
    seed: {{items: 60, item_size: 300, items_per_partition: 3}}
workload:
  item_size: 700
  operations:
{ops}
phases: [{{steps: [{{rate: 10, window: 1s}}]}}]
concurrency: 2
""",
        "ops.yaml",
    )


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    server = serve_in_thread()
    try:
        yield make_client(server.url, region="us-east-1", connect_timeout=1, read_timeout=2, pool_size=2)
    finally:
        server.stop()


@pytest.mark.parametrize("key_type", ["S", "N", "B"])
def test_every_operation_is_accepted_and_reads_find_seeded_items(client: Any, key_type: str) -> None:
    sc = scenario(key_type)
    tables = TableManager(client, sc, f"ops{key_type}")
    tables.create_all()
    assert tables.seed_all() == 60
    mix = Mix.for_scenario(sc, tables.physical_names)
    assert [b.label for b in mix.builders] == [o.label for o in sc.workload.operations]
    for builder in mix.builders:
        for _ in range(3):
            method, kwargs = builder.build()
            response = getattr(client, method)(**kwargs)
            assert response["ResponseMetadata"]["HTTPStatusCode"] == 200, builder.label
            assert consumed_capacity(response, write=False), builder.label
        if builder.operation.op in ("get",):
            assert "Item" in response, "reads use the seeded keyspace"
        if builder.operation.op in ("query", "gsi_query", "batch_get"):
            found: list[Any] = response.get("Items") or next(iter(response.get("Responses", {}).values()), [])
            assert found, builder.label
    tables.teardown()


def test_writes_use_fresh_keys_and_reads_the_seeded_keyspace() -> None:
    mix = Mix.for_scenario(scenario("S"), {"t": "t-x"})
    by_op = {b.operation.op: b for b in mix.builders}
    put_keys = {by_op["put"].build()[1]["Item"]["pk"]["S"] for _ in range(50)}
    get_keys = {by_op["get"].build()[1]["Key"]["pk"]["S"] for _ in range(50)}
    assert len(put_keys) == 50 and not any(k.startswith("k0") for k in put_keys)
    assert get_keys <= {f"k{i:010d}" for i in range(20)}


def test_items_have_the_asked_size_and_every_gsi_key() -> None:
    sc = scenario("S")
    table = sc.tables[0]
    item = build_item(table, "k1", 1024)
    assert {"pk", "sk", "g"} <= item.keys()
    assert abs(item_size(item, wire=True) - 1024) <= 8
    seeded = seed_items(table)
    assert len(seeded) == 60 and len({(i["pk"]["S"], i["sk"]["S"]) for i in seeded}) == 60


@pytest.mark.parametrize("key_type", ["S", "N", "B"])
def test_items_are_what_make_item_builds_for_the_same_key(key_type: str) -> None:
    """build_item pads without make_item's generic sizing; the items stay the same, key by key."""
    table = scenario(key_type).tables[0]
    for key in ("k1", "0f3c9a7e-1d2b-4c5d-8e9f-a0b1c2d3e4f5", "é" * 40):
        attributes = {name: value for name, value in build_item(table, key, 1024).items() if name != "pad"}
        reference = make_item({"_k": key}, 1024 - sum(_wire_len(n, v) for n, v in attributes.items()), wire=True)
        del reference["_k"]
        assert build_item(table, key, 1024) == {**reference, **attributes}
    assert "pad" not in build_item(table, "k1", 10)  # no room: no padding


def _wire_len(name: str, value: dict[str, Any]) -> int:
    ((kind, raw),) = value.items()
    return len(name.encode()) + (len(raw) if kind == "B" else len(str(raw).encode()))


def test_a_gsi_key_with_values_gets_its_own_distribution_and_its_queries_ask_for_those_values() -> None:
    sc = load_scenario_text(
        """\
name: hot-index
tables:
  - name: t
    partition_key: pk
    gsis:
      - name: by_owner
        partition_key: {name: owner, values: {distribution: hot_spot, fraction: 0.01, traffic: 0.9, keyspace: 100}}
      - {name: by_g, partition_key: g}
    seed: {items: 200, item_size: 300}
workload:
  operations:
    - {op: put, weight: 1}
    - {op: gsi_query, weight: 1, index: by_owner}
phases: [{steps: [{rate: 10, window: 1s}]}]
""",
        "hot-index.yaml",
    )
    put, query = Mix.for_scenario(sc, {"t": "t-run"}).builders
    owners = [put.build()[1]["Item"]["owner"]["S"] for _ in range(2000)]
    hot = max(set(owners), key=owners.count)
    assert 0.85 < owners.count(hot) / len(owners) < 0.95  # traffic 0.9 on the one hot value of 100
    assert len(set(owners)) > 50
    gs = {put.build()[1]["Item"]["g"]["S"] for _ in range(500)}
    assert len(gs) > 50 and all(g.startswith("g") for g in gs)  # no values: the hash of the item key, as before
    asked = [query.build()[1]["ExpressionAttributeValues"][":pk"]["S"] for _ in range(500)]
    assert 0.85 < asked.count(hot) / len(asked) < 0.95
    seeded = [item["owner"]["S"] for item in seed_items(sc.table("t"))]
    assert seeded.count(hot) > 150  # seeding draws from the same distribution
