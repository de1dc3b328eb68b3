"""Key and item generators: seeded, worker-aware and cheap per call (they sit on the request path).

Every generator draws from its own `random.Random` seeded with `(seed, worker_index)`, so a run is
reproducible and two workers never replay the same random stream. Sequential keys are strided by worker
(worker `i` of `n` produces `start + i, start + i + n, ...`) so two workers never produce the same key.

Keys of a bounded keyspace are `keyspace_key(i)`: the same names the table seeding writes, so reads hit.
"""

from __future__ import annotations

import bisect
import itertools
import random
import zlib
from collections.abc import Iterator, Mapping
from decimal import Decimal
from functools import cache
from typing import Any, Protocol, runtime_checkable

from dynlocust.dynamodb import MAX_ITEM_SIZE
from dynlocust.scenario.model import (
    HotSpotKeys,
    KeySpec,
    KeyType,
    SequentialKeys,
    ShardedKeys,
    Table,
    UniformKeys,
    ZipfKeys,
)

__all__ = [
    "HotSpotKeyGenerator",
    "KeyGenerator",
    "SequentialKeyGenerator",
    "ShardedKeyGenerator",
    "UniformKeyGenerator",
    "UuidKeyGenerator",
    "ZipfKeyGenerator",
    "attribute_size",
    "item_size",
    "keyspace_key",
    "make_item",
    "make_key_generator",
    "padding",
    "seed_keys",
    "worker_rng",
]


@runtime_checkable
class KeyGenerator(Protocol):
    def next_key(self) -> str: ...


def keyspace_key(i: int) -> str:
    """The partition key of the `i`-th key of a bounded keyspace (zero-padded so keys sort in order)."""
    return f"k{i:010d}"


def worker_rng(seed: int, worker_index: int, salt: str = "") -> random.Random:
    """A generator-private RNG: same (seed, worker, salt) -> same stream; different workers -> different ones."""
    return random.Random(f"{seed}:{worker_index}:{salt}")


def _check_worker(worker_index: int, worker_count: int) -> None:
    if worker_count < 1 or not 0 <= worker_index < worker_count:
        raise ValueError(f"expected 0 <= worker_index < worker_count, found {worker_index} of {worker_count}")


class UuidKeyGenerator:
    """Fresh uuid4-shaped keys from the seeded RNG: uniform over the key space, never a hot partition."""

    __slots__ = ("_bits",)

    def __init__(self, *, seed: int = 0, worker_index: int = 0, worker_count: int = 1) -> None:
        _check_worker(worker_index, worker_count)
        self._bits = worker_rng(seed, worker_index, "uuid").getrandbits

    def next_key(self) -> str:
        # Version 4 and the RFC 4122 variant, as uuid.uuid4() would set them.
        h = "%032x" % ((self._bits(128) & ~(0xF000 << 64) | (0x4000 << 64)) & ~(0xC << 60) | (0x8 << 60))
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class UniformKeyGenerator:
    """Uniform over `keyspace` existing keys."""

    __slots__ = ("_keyspace", "_randrange")

    def __init__(self, keyspace: int, *, seed: int = 0, worker_index: int = 0, worker_count: int = 1) -> None:
        _check_worker(worker_index, worker_count)
        if keyspace < 1:
            raise ValueError(f"expected a keyspace of at least 1 key, found {keyspace}")
        self._keyspace = keyspace
        self._randrange = worker_rng(seed, worker_index, "uniform").randrange

    def next_key(self) -> str:
        return keyspace_key(self._randrange(self._keyspace))


@cache
def _zipf_cdf(keyspace: int, s: float) -> tuple[float, ...]:
    # Cached: every worker (and every op) with the same (keyspace, s) shares one table.
    return tuple(itertools.accumulate(1.0 / (k**s) for k in range(1, keyspace + 1)))


class ZipfKeyGenerator:
    """Zipf over `keyspace` keys: key `i` (rank `i + 1`) has weight `1 / (i + 1) ** s`.

    The cumulative table is computed once per (keyspace, s); each call is one `random()` and one bisect.
    """

    __slots__ = ("_cdf", "_random", "_total")

    def __init__(
        self, keyspace: int, s: float = 1.1, *, seed: int = 0, worker_index: int = 0, worker_count: int = 1
    ) -> None:
        _check_worker(worker_index, worker_count)
        if keyspace < 1 or s <= 0:
            raise ValueError(f"expected keyspace >= 1 and s > 0, found keyspace={keyspace}, s={s}")
        self._cdf = _zipf_cdf(keyspace, float(s))
        self._total = self._cdf[-1]
        self._random = worker_rng(seed, worker_index, "zipf").random

    def next_index(self) -> int:
        i = bisect.bisect_right(self._cdf, self._random() * self._total)
        return min(i, len(self._cdf) - 1)

    def next_key(self) -> str:
        return keyspace_key(self.next_index())


class HotSpotKeyGenerator:
    """`traffic` of the calls go uniformly to the first `max(1, round(fraction * keyspace))` keys (the hot
    set), the rest uniformly to the other keys."""

    __slots__ = ("_hot", "_keyspace", "_random", "_randrange", "_traffic")

    def __init__(
        self,
        keyspace: int,
        fraction: float = 0.01,
        traffic: float = 0.9,
        *,
        seed: int = 0,
        worker_index: int = 0,
        worker_count: int = 1,
    ) -> None:
        _check_worker(worker_index, worker_count)
        if keyspace < 1 or not 0 < fraction <= 1 or not 0 <= traffic <= 1:
            raise ValueError(
                f"expected keyspace >= 1, 0 < fraction <= 1, 0 <= traffic <= 1, found {keyspace}, {fraction}, {traffic}"
            )
        self._keyspace = keyspace
        self._hot = min(keyspace, max(1, round(fraction * keyspace)))
        self._traffic = traffic
        rng = worker_rng(seed, worker_index, "hot_spot")
        self._random = rng.random
        self._randrange = rng.randrange

    @property
    def hot_keys(self) -> int:
        return self._hot

    def next_index(self) -> int:
        if self._hot == self._keyspace or self._random() < self._traffic:
            return self._randrange(self._hot)
        return self._randrange(self._hot, self._keyspace)

    def next_key(self) -> str:
        return keyspace_key(self.next_index())


class SequentialKeyGenerator:
    """`start + worker_index`, then steps of `worker_count`: disjoint across workers. With a `keyspace` the
    index wraps modulo the keyspace (reads walking the seeded keys)."""

    __slots__ = ("_keyspace", "_next", "_stride")

    def __init__(
        self, *, start: int = 0, keyspace: int | None = None, worker_index: int = 0, worker_count: int = 1
    ) -> None:
        _check_worker(worker_index, worker_count)
        self._next = start + worker_index
        self._stride = worker_count
        self._keyspace = keyspace

    def next_index(self) -> int:
        i = self._next
        self._next += self._stride
        return i % self._keyspace if self._keyspace else i

    def next_key(self) -> str:
        return keyspace_key(self.next_index())


class ShardedKeyGenerator:
    """Write sharding: `"{base key}#{shard}"`. `hash` picks the shard from the key (crc32, stable across
    processes, unlike `hash()`), `round_robin` cycles, `random` draws one."""

    __slots__ = ("_base", "_counter", "_mode", "_randrange", "_shards")

    def __init__(
        self,
        base: KeyGenerator,
        shards: int,
        mode: str = "hash",
        *,
        seed: int = 0,
        worker_index: int = 0,
        worker_count: int = 1,
    ) -> None:
        _check_worker(worker_index, worker_count)
        if shards < 1 or mode not in ("hash", "round_robin", "random"):
            raise ValueError(f"expected shards >= 1 and mode hash|round_robin|random, found {shards}, {mode!r}")
        self._base = base
        self._shards = shards
        self._mode = mode
        self._counter = worker_index  # round robin starts at a different shard per worker
        self._randrange = worker_rng(seed, worker_index, "shard").randrange

    def next_key(self) -> str:
        key = self._base.next_key()
        if self._mode == "hash":
            shard = zlib.crc32(key.encode()) % self._shards
        elif self._mode == "round_robin":
            shard = self._counter % self._shards
            self._counter += 1
        else:
            shard = self._randrange(self._shards)
        return f"{key}#{shard}"


def make_key_generator(
    spec: KeySpec, *, seed: int = 0, worker_index: int = 0, worker_count: int = 1, keyspace: int | None = None
) -> KeyGenerator:
    """The generator for a scenario's key spec. `keyspace` is used only when the spec has none."""
    kw: dict[str, Any] = {"worker_index": worker_index, "worker_count": worker_count}
    if isinstance(spec, ShardedKeys):
        base = make_key_generator(spec.base, seed=seed, keyspace=keyspace, **kw)
        return ShardedKeyGenerator(base, spec.shards, spec.mode, seed=seed, **kw)
    ks = spec.keyspace if spec.keyspace is not None else keyspace
    if isinstance(spec, SequentialKeys):
        return SequentialKeyGenerator(start=spec.start, keyspace=ks, **kw)
    if isinstance(spec, UniformKeys):
        return UuidKeyGenerator(seed=seed, **kw) if ks is None else UniformKeyGenerator(ks, seed=seed, **kw)
    if ks is None:
        raise ValueError(f"{type(spec).__name__} needs a keyspace, found none")
    if isinstance(spec, ZipfKeys):
        return ZipfKeyGenerator(ks, spec.s, seed=seed, **kw)
    if isinstance(spec, HotSpotKeys):
        return HotSpotKeyGenerator(ks, spec.fraction, spec.traffic, seed=seed, **kw)
    raise TypeError(f"expected a key spec, found {spec!r}")


def _typed(kind: KeyType, text: str, number: int) -> str | int | bytes:
    if kind == "N":
        return number
    return text.encode() if kind == "B" else text


def seed_keys(
    table: Table, *, shards: int = 0, worker_index: int = 0, worker_count: int = 1
) -> Iterator[dict[str, Any]]:
    """The key attributes of the items a table's `seed` writes (this worker's stride of them).

    Item `j` lives in logical partition `p = j // items_per_partition` with partition key `keyspace_key(p)`
    (`p` itself for N keys), so reads drawn from `keyspace_key(0 .. table.keyspace - 1)` hit. With `shards`
    the partition key becomes `"{keyspace_key(p)}#{j % shards}"`: a logical partition's items spread over its
    shards, as write sharding does. The sort key is `f"{j % items_per_partition:08d}"`. GSI key attributes not in
    the table's key get `keyspace_key(j % table.keyspace)` (partition) and `f"{j:08d}"` (sort), so GSI
    queries drawn from the same keyspace find items too.
    """
    _check_worker(worker_index, worker_count)
    if table.seed is None:
        return
    ipp = table.seed.items_per_partition
    keyspace = table.keyspace or 1
    pk, sk = table.partition_key, table.sort_key
    gsi_attrs: list[tuple[str, KeyType, bool]] = []
    for g in table.gsis:
        for attr, is_pk in ((g.partition_key, True), (g.sort_key, False)):
            taken = {pk.name, sk.name if sk else "", *(a[0] for a in gsi_attrs)}
            if attr is not None and attr.name not in taken:
                gsi_attrs.append((attr.name, attr.type, is_pk))
    for j in range(worker_index, table.seed.items, worker_count):
        p = j // ipp
        ptext = keyspace_key(p) if not shards else f"{keyspace_key(p)}#{j % shards}"
        key: dict[str, Any] = {pk.name: _typed(pk.type, ptext, p)}
        if sk is not None:
            key[sk.name] = _typed(sk.type, f"{j % ipp:08d}", j % ipp)
        for name, kind, is_pk in gsi_attrs:
            key[name] = _typed(kind, keyspace_key(j % keyspace), j % keyspace) if is_pk else _typed(kind, f"{j:08d}", j)
        yield key


# --------------------------------------------------------------------------------------------------- items


def _number_size(v: int | float | Decimal) -> int:
    # DynamoDB: numbers take about 1 byte per two significant digits, plus 1.
    digits = str(abs(Decimal(str(v)) if not isinstance(v, Decimal) else abs(v))).replace(".", "").lstrip("0")
    digits = digits.split("E")[0].rstrip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def attribute_size(value: Any) -> int:
    """Approximate stored size of one plain Python value under DynamoDB's item-size rules."""
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, int | float | Decimal):
        return _number_size(value)
    if isinstance(value, Mapping):
        return 3 + sum(len(str(k).encode()) + attribute_size(v) + 1 for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return 3 + sum(attribute_size(v) + 1 for v in value)
    raise TypeError(f"expected a DynamoDB-storable value, found {type(value).__name__}")


def _wire_to_plain(av: Mapping[str, Any]) -> Any:
    ((t, v),) = av.items()
    if t in ("S", "B", "BOOL", "NULL"):
        return v if t != "NULL" else None
    if t == "N":
        return Decimal(v)
    if t == "M":
        return {k: _wire_to_plain(x) for k, x in v.items()}
    if t == "L":
        return [_wire_to_plain(x) for x in v]
    if t == "NS":
        return [Decimal(x) for x in v]
    return list(v)


def item_size(item: Mapping[str, Any], *, wire: bool = False) -> int:
    """Approximate stored size of an item: attribute names plus values (DynamoDB's rules, within a few bytes)."""
    total = 0
    for name, value in item.items():
        total += len(name.encode("utf-8")) + attribute_size(_wire_to_plain(value) if wire else value)
    return total


@cache
def _padding_source() -> str:
    rng = random.Random(0x5EED)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return "".join(rng.choices(alphabet, k=2 * MAX_ITEM_SIZE))


def padding(seed_text: str, room: int) -> str:
    """`room` characters of the fixed pseudo-random text, at an offset chosen by `seed_text` (the item's key)."""
    src = _padding_source()
    offset = zlib.crc32(seed_text.encode()) % (len(src) - room) if room < len(src) else 0
    return src[offset : offset + room]


def _to_wire(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | float | Decimal):
        return {"N": str(value)}
    if isinstance(value, bytes):
        return {"B": value}
    raise TypeError(f"expected str, number, bool or bytes, found {type(value).__name__}")


def make_item(
    key: Mapping[str, Any],
    size: int,
    *,
    extra: Mapping[str, Any] | None = None,
    pad_attribute: str = "pad",
    wire: bool = False,
) -> dict[str, Any]:
    """An item of about `size` bytes: `key` attributes, `extra` ones, and a padding string.

    The padding is deterministic (a slice of a fixed pseudo-random text chosen by the key) so the same key always
    gives the same item, and it is incompressible enough that sizes on the wire mean what they say. If the key
    and extras already exceed `size`, no padding is added. `wire=True` returns attribute values
    (`{"S": ...}`) for the fast transport; plain values otherwise.
    """
    item: dict[str, Any] = dict(key)
    if extra:
        item.update(extra)
    room = size - item_size(item) - len(pad_attribute.encode("utf-8"))
    if room > 0:
        item[pad_attribute] = padding("|".join(str(v) for v in key.values()), room)
    if wire:
        return {k: _to_wire(v) for k, v in item.items()}
    return item
