"""Key and item generators: shapes of the distributions with fixed seeds, worker disjointness, item sizes."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from dynlocust.request.keys import (
    HotSpotKeyGenerator,
    KeyGenerator,
    SequentialKeyGenerator,
    ShardedKeyGenerator,
    UniformKeyGenerator,
    UuidKeyGenerator,
    ZipfKeyGenerator,
    item_size,
    keyspace_key,
    make_item,
    make_key_generator,
    seed_keys,
)
from dynlocust.scenario import HotSpotKeys, SequentialKeys, ShardedKeys, UniformKeys, ZipfKeys
from dynlocust.scenario.model import KeySpec

N = 50_000


def test_uuid_keys_are_uuid4_reproducible_and_per_worker() -> None:
    a = [UuidKeyGenerator(seed=7).next_key() for _ in range(1)]
    g1, g2 = UuidKeyGenerator(seed=7), UuidKeyGenerator(seed=7)
    s1 = [g1.next_key() for _ in range(1000)]
    assert s1 == [g2.next_key() for _ in range(1000)]
    assert s1[0] == a[0]
    assert all(uuid.UUID(k).version == 4 and uuid.UUID(k).variant == uuid.RFC_4122 for k in s1)
    other = UuidKeyGenerator(seed=7, worker_index=1, worker_count=2)
    assert not set(s1) & {other.next_key() for _ in range(1000)}


def test_uniform_over_keyspace_is_flat() -> None:
    g = UniformKeyGenerator(10, seed=1)
    c = Counter(g.next_key() for _ in range(N))
    assert set(c) == {keyspace_key(i) for i in range(10)}
    assert max(c.values()) / min(c.values()) < 1.1


def test_zipf_top_key_frequency_matches_theory() -> None:
    keyspace, s = 1000, 1.1
    harmonic = sum(1 / k**s for k in range(1, keyspace + 1))
    g = ZipfKeyGenerator(keyspace, s, seed=3)
    c = Counter(g.next_index() for _ in range(N))
    assert c[0] / N == pytest.approx(1 / harmonic, rel=0.05)
    assert c[1] / N == pytest.approx(1 / harmonic / 2**s, rel=0.08)
    assert c[0] > c[1] > c[9] > 0
    assert max(c) < keyspace


def test_hot_spot_fraction_and_traffic() -> None:
    g = HotSpotKeyGenerator(10_000, fraction=0.01, traffic=0.9, seed=5)
    assert g.hot_keys == 100
    idx = [g.next_index() for _ in range(N)]
    hot = sum(1 for i in idx if i < 100) / N
    assert hot == pytest.approx(0.9, abs=0.01)
    assert max(idx) < 10_000 and len({i for i in idx if i >= 100}) > 3000


@pytest.mark.parametrize("workers", [1, 3, 8])
def test_sequential_keys_never_collide_across_workers(workers: int) -> None:
    gens = [SequentialKeyGenerator(start=10, worker_index=i, worker_count=workers) for i in range(workers)]
    keys = [g.next_key() for g in gens for _ in range(500)]
    assert len(set(keys)) == len(keys) == 500 * workers
    assert min(keys) == keyspace_key(10)


def test_sequential_wraps_over_a_keyspace() -> None:
    g = SequentialKeyGenerator(keyspace=5, worker_index=1, worker_count=2)
    assert [g.next_index() for _ in range(5)] == [1, 3, 0, 2, 4]


def test_sharded_modes() -> None:
    base = SequentialKeyGenerator()
    rr = ShardedKeyGenerator(base, 4, "round_robin")
    assert [rr.next_key() for _ in range(5)] == [f"{keyspace_key(i)}#{i % 4}" for i in range(5)]
    h1 = ShardedKeyGenerator(SequentialKeyGenerator(), 4, "hash")
    h2 = ShardedKeyGenerator(SequentialKeyGenerator(), 4, "hash")
    k1 = [h1.next_key() for _ in range(400)]
    assert k1 == [h2.next_key() for _ in range(400)]  # hash shards are stable (crc32, not salted hash())
    assert {k.rsplit("#", 1)[1] for k in k1} == {"0", "1", "2", "3"}
    rnd = ShardedKeyGenerator(UniformKeyGenerator(1), 3, "random", seed=1)
    assert Counter(rnd.next_key() for _ in range(3000)).keys() == {f"{keyspace_key(0)}#{i}" for i in range(3)}


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        (UniformKeys(), UuidKeyGenerator),
        (UniformKeys(10), UniformKeyGenerator),
        (ZipfKeys(1.2, 10), ZipfKeyGenerator),
        (HotSpotKeys(0.1, 0.5, 10), HotSpotKeyGenerator),
        (SequentialKeys(0, None), SequentialKeyGenerator),
        (ShardedKeys(2, "hash", UniformKeys()), ShardedKeyGenerator),
    ],
)
def test_make_key_generator(spec: KeySpec, kind: type) -> None:
    g = make_key_generator(spec, seed=1, worker_index=0, worker_count=2)
    assert isinstance(g, kind) and isinstance(g, KeyGenerator)
    assert isinstance(g.next_key(), str)


def test_make_key_generator_needs_a_keyspace_for_skew() -> None:
    with pytest.raises(ValueError, match="keyspace"):
        make_key_generator(ZipfKeys(1.1, None))
    assert isinstance(make_key_generator(ZipfKeys(1.1, None), keyspace=5), ZipfKeyGenerator)


@pytest.mark.parametrize("size", [64, 100, 1024, 4000, 400 * 1024])
@pytest.mark.parametrize("wire", [False, True])
def test_item_size_hits_the_target(size: int, wire: bool) -> None:
    key = {"pk": keyspace_key(42), "sk": "2026-11-30#0001"}
    it = make_item(key, size, extra={"owner": "o-1", "n": 12345}, wire=wire)
    assert abs(item_size(it, wire=wire) - size) <= 2
    assert it == make_item(key, size, extra={"owner": "o-1", "n": 12345}, wire=wire)  # deterministic


def test_item_size_rules_by_hand() -> None:
    # name bytes + value bytes: "pk"(2)+"abc"(3); "n"(1)+ number 12345 -> (5+1)//2+1 = 4; "b"(1)+bytes(3)
    assert item_size({"pk": "abc", "n": 12345, "b": b"xyz"}) == 5 + 5 + 4
    assert item_size({"pk": {"S": "abc"}}, wire=True) == 5


def test_make_item_too_small_target_keeps_only_the_key() -> None:
    it = make_item({"pk": "x" * 100}, 10)
    assert it == {"pk": "x" * 100}
    assert make_item({"pk": "a"}, 1024, wire=True)["pk"] == {"S": "a"}
    assert make_item({"pk": "a"}, 1024)["pad"] != make_item({"pk": "b"}, 1024)["pad"]


def test_worker_index_is_checked() -> None:
    with pytest.raises(ValueError):
        SequentialKeyGenerator(worker_index=2, worker_count=2)


def test_seed_keys_match_what_reads_draw() -> None:
    from dynlocust.scenario import load_scenario_text
    from tests.unit.scenario._base import BASE

    table = load_scenario_text(BASE.replace("items: 100,", "items: 100, items_per_partition: 4,"), "x").table("items")
    assert table.keyspace == 25
    keys = [k for w in range(3) for k in seed_keys(table, worker_index=w, worker_count=3)]
    assert len(keys) == 100 and len({(k["pk"], k["sk"]) for k in keys}) == 100
    assert {k["pk"] for k in keys} == {keyspace_key(i) for i in range(25)}
    assert {k["owner"] for k in keys} == {keyspace_key(i) for i in range(25)}
    sharded = list(seed_keys(table, shards=2))
    assert {k["pk"] for k in sharded} == {f"{keyspace_key(i)}#{s}" for i in range(25) for s in range(2)}
