"""Serializer/deserializer speed: dynlocust vs boto3 vs ddbcereal, side by side in one process.

Run: `.venv/bin/python tests/benchmarks/bench_serializer.py [--rounds 7] [--seconds 0.2]`
Prints per row the CPU time per call (process time: the box may be shared) of each library, best of N rounds
interleaved so drift hits all alike, and the ratios ddbcereal/dynlocust and boto3/dynlocust (above 1 = dynlocust
faster) against the issue's targets: serializer rows >= 1.5x ddbcereal (1 KB item: 1.8x), 1 KB item
deserialization >= 1.5x, single-value deserializer rows >= 1.2x. Always exits 0: a measurement, not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import ddbcereal
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from dynlocust.mapper import Deserializer, Serializer

ROWS: list[tuple[str, Any, float]] = [
    ("Decimal", Decimal("123456.789"), 1.5),
    ("int", 1234567890, 1.5),
    ("str", "hello, dynamodb", 1.5),
    ("number set", {Decimal("1.5"), Decimal("2"), 3, 4, Decimal("-5.25")}, 1.5),
    ("string set", {"alpha", "beta", "gamma", "delta", "epsilon"}, 1.5),
    ("mixed list", ["a", Decimal("1.5"), 2, True, None, "b", Decimal("-3")], 1.5),
    ("mixed dict", {"a": "x", "b": Decimal("1.5"), "c": 2, "d": True, "e": None, "f": "y", "g": 7}, 1.5),
    ("2-level dict", {"a": {"x": "1", "y": Decimal("2")}, "b": {"x": 3, "y": "z"}, "c": {"x": True}}, 1.5),
]

SINGLE_VALUE_ROWS = {"Decimal", "int", "str"}


def realistic_item() -> dict[str, Any]:
    """About 1 KB on the wire: keys, strings, numbers, a nested map, a list, a string set."""
    return {
        "pk": "USER#3f2a9c1e-4b7d-4e7a-9a8b-1c2d3e4f5a6b",
        "sk": "ORDER#2026-11-30T05:37:49Z#000042",
        "type": "order",
        "status": "SHIPPED",
        "customer": {
            "name": "Ada Lovelace",
            "email": "ada@example.com",
            "tier": "gold",
            "since": 2019,
            "address": {"street": "12 Analytical Way", "city": "London", "zip": "NW1 6XE", "country": "GB"},
        },
        "lines": [
            {"sku": f"SKU-{i:05d}", "qty": i % 4 + 1, "price": Decimal(f"{10 + i}.99"), "gift": i % 3 == 0}
            for i in range(6)
        ],
        "total": Decimal("219.94"),
        "currency": "EUR",
        "tags": {"express", "fragile", "priority"},
        "notes": "Leave at the door. " * 8,
        "version": 7,
        "created_at": 1_764_480_000,
        "updated_at": 1_764_483_600,
        "ttl": None,
        "flags": [True, False, True],
    }


def _timed(fn: Callable[[Any], Any], value: Any, loops: int) -> float:
    # ten calls per iteration, so the loop's own cost (common to all, shrinking every ratio) stays small
    start = time.process_time()
    for _ in range(loops):
        fn(value)
        fn(value)
        fn(value)
        fn(value)
        fn(value)
        fn(value)
        fn(value)
        fn(value)
        fn(value)
        fn(value)
    return time.process_time() - start


def per_call(fn: Callable[[Any], Any], value: Any, seconds: float) -> float:
    """Seconds per call, calibrated so one measurement lasts about `seconds`."""
    loops = 1
    while (elapsed := _timed(fn, value, loops)) < seconds / 10:
        loops *= 4
    loops = max(1, int(loops * seconds / elapsed))
    return _timed(fn, value, loops) / (loops * 10)


def best(fns: dict[str, Callable[[Any], Any]], value: Any, rounds: int, seconds: float) -> dict[str, float]:
    times: dict[str, float] = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name] = min(times[name], per_call(fn, value, seconds))
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.1, help="length of one timed measurement")
    args = parser.parse_args(argv)

    boto_s, boto_d = TypeSerializer(), TypeDeserializer()
    cereal_s, cereal_d = ddbcereal.Serializer(), ddbcereal.Deserializer()
    ours_s, ours_d = Serializer(), Deserializer()
    fast_s, cereal_fast_s = Serializer(validate_numbers=False), ddbcereal.Serializer(validate_numbers=False)
    item = realistic_item()
    wire_item = boto_s.serialize(item)["M"]
    assert ours_s.serialize_item(item) == wire_item
    assert ours_d.deserialize_item(wire_item) == boto_d.deserialize(boto_s.serialize(item))

    header = f"{'row':<22}{'dynlocust':>11}{'ddbcereal':>11}{'boto3':>11}{'vs cereal':>11}{'vs boto3':>10}  target"
    misses: list[str] = []

    def report(name: str, times: dict[str, float], target: float) -> None:
        vs_cereal = times["ddbcereal"] / times["dynlocust"]
        vs_boto = times["boto3"] / times["dynlocust"]
        mark = "ok" if vs_cereal >= target else "MISSED"
        if vs_cereal < target:
            misses.append(name)
        print(
            f"{name:<22}{times['dynlocust'] * 1e9:>9.0f}ns{times['ddbcereal'] * 1e9:>9.0f}ns"
            f"{times['boto3'] * 1e9:>9.0f}ns{vs_cereal:>10.2f}x{vs_boto:>9.2f}x  >={target:.1f}x {mark}"
        )

    print(f"Python {sys.version.split()[0]}, best of {args.rounds} rounds of ~{args.seconds:g} s per library")
    print("\nserialize (numbers validated)")
    print(header)
    for name, value, target in [*ROWS, ("1 KB item", item, 1.8)]:
        fns = {"dynlocust": ours_s.serialize, "ddbcereal": cereal_s.serialize, "boto3": boto_s.serialize}
        report(name, best(fns, value, args.rounds, args.seconds), target)

    print("\nserialize, number checks off (boto3 always checks)")
    print(header)
    for name, value, _ in [*ROWS, ("1 KB item", item, 1.8)]:
        fns = {"dynlocust": fast_s.serialize, "ddbcereal": cereal_fast_s.serialize, "boto3": boto_s.serialize}
        times = best(fns, value, args.rounds, args.seconds)
        print(
            f"{name:<22}{times['dynlocust'] * 1e9:>9.0f}ns{times['ddbcereal'] * 1e9:>9.0f}ns"
            f"{times['boto3'] * 1e9:>9.0f}ns{times['ddbcereal'] / times['dynlocust']:>10.2f}x"
            f"{times['boto3'] / times['dynlocust']:>9.2f}x  (no target)"
        )

    print("\ndeserialize (Binary wrapping on, as boto3)")
    print(header)
    for name, value, _ in [*ROWS, ("1 KB item", item, 1.5)]:
        wire = boto_s.serialize(value)
        target = 1.2 if name in SINGLE_VALUE_ROWS else 1.5 if name == "1 KB item" else 0.0
        fns = {"dynlocust": ours_d.deserialize, "ddbcereal": cereal_d.deserialize, "boto3": boto_d.deserialize}
        report(name, best(fns, wire, args.rounds, args.seconds), target)

    print(f"\ntargets missed: {', '.join(misses) if misses else 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
