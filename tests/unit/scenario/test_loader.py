"""Loader: values and defaults of valid scenarios, and a corpus of malformed ones with the exact error each gets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dynlocust.errors import DynlocustError
from dynlocust.scenario import (
    HotSpotKeys,
    LocalTarget,
    RemoteTarget,
    ScenarioError,
    SequentialKeys,
    ShardedKeys,
    UniformKeys,
    ZipfKeys,
    load_scenario,
    load_scenario_text,
    parse_duration,
    validate_file,
)
from tests.unit.scenario._base import BASE, variant
from tests.unit.scenario.test_gsi_values import GSI_VALUE_CASES

SRC = "scenarios/x.yaml"


def sub(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


NO_GSI = variant("    gsis:\n      - {name: by_owner, partition_key: {name: owner, type: S}}\n", "")
NO_SORT = variant("    sort_key: {name: sk, type: S}\n", "")
NO_SEED = variant("    seed: {items: 100, item_size: 512}\n", "")
OP1 = "    - {op: get, weight: 1}"


def op(spec: str, text: str = BASE) -> str:
    return sub(text, OP1, "    - " + spec)


TWO_TABLES = sub(BASE, "workload:\n", "  - {name: other, partition_key: pk}\nworkload:\n")

# (id, scenario text, line the error must name or None, fragments the message must contain)
BAD: list[tuple[str, str, int | None, list[str]]] = [
    (
        "unknown-top-key",
        variant("concurrency: 10", "concurency: 10"),
        21,
        ["unknown key 'concurency'; did you mean 'concurrency'?"],
    ),
    (
        "ramp-step-negative",
        variant("step: 100", "step: -5"),
        19,
        ["phases[0].ramp.step: expected a positive number of requests/s, found -5"],
    ),
    (
        "ramp-window-zero",
        variant("window: 15s}", "window: 0s}"),
        19,
        ["phases[0].ramp.window: expected a positive duration", "found '0s'"],
    ),
    ("ramp-missing-window", variant(", window: 15s}", "}"), 19, ["phases[0].ramp: missing required key 'window'"]),
    (
        "duration-garbage",
        variant("deadline: 8s", "deadline: 8 parsecs"),
        22,
        ["deadline: expected a positive duration", "'8 parsecs'"],
    ),
    ("duration-negative", variant("deadline: 8s", "deadline: -3s"), 22, ["deadline: expected a positive duration"]),
    ("bin-zero", variant("bin: 10s", "bin: 0"), 23, ["bin: expected a positive duration", "found 0"]),
    (
        "concurrency-negative",
        variant("concurrency: 10", "concurrency: -1"),
        21,
        ["concurrency: expected a positive whole number of users per worker, found -1"],
    ),
    ("concurrency-fraction", variant("concurrency: 10", "concurrency: 2.5"), 21, ["found 2.5"]),
    (
        "weight-bool",
        op("{op: get, weight: true}"),
        17,
        ["workload.operations[1].weight: expected a positive weight, found true"],
    ),
    ("weight-zero", op("{op: get, weight: 0}"), 17, ["expected a positive weight, found 0"]),
    ("op-unknown", op("{op: gett, weight: 1}"), 17, ["operations[1].op: unknown value 'gett'; did you mean 'get'?"]),
    ("op-missing", op("{weight: 1}"), 17, ["missing required key 'op'"]),
    (
        "op-table-undeclared",
        op("{op: get, table: itmes}"),
        17,
        ["table 'itmes' is not declared under tables; did you mean 'items'?"],
    ),
    ("op-table-ambiguous", TWO_TABLES, 17, ["missing key 'table'", "2 tables (items, other)"]),
    ("gsi-unknown", op("{op: gsi_query, index: by_ownr}"), 17, ["has no GSI 'by_ownr'; did you mean 'by_owner'?"]),
    ("gsi-none", op("{op: gsi_query, index: by_owner}", NO_GSI), 15, ["needs a global secondary index", "no gsis"]),
    (
        "gsi-consistent",
        op("{op: gsi_query, index: by_owner, consistent: true}"),
        17,
        ["op 'gsi_query' takes no 'consistent'", "do not support strongly consistent reads"],
    ),
    ("gsi-missing-index", op("{op: gsi_query}"), 17, ["missing required key 'index'"]),
    ("query-no-sort-key", op("{op: query}", NO_SORT), 16, ["table 'items' has no sort_key", "expected get"]),
    (
        "batch-write-26",
        op("{op: batch_write, items: 26}"),
        17,
        ["operations[1].items: expected a whole number of items per call no greater than 25, found 26"],
    ),
    ("batch-get-101", op("{op: batch_get, items: 101}"), 17, ["no greater than 100, found 101"]),
    ("transact-101", op("{op: transact_write, items: 101}"), 17, ["no greater than 100, found 101"]),
    (
        "transact-over-4mb",
        op("{op: transact_write, items: 20, item_size: 300KB}"),
        17,
        ["exceeds the 4 MB limit of TransactWriteItems"],
    ),
    (
        "item-size-over-400kb",
        variant("item_size: 1024", "item_size: 500KB"),
        13,
        ["workload.item_size: expected a size of at most 409,600 bytes", "found 512,000"],
    ),
    ("item-size-negative", variant("item_size: 1024", "item_size: -1"), 13, ["expected a positive size in bytes"]),
    (
        "items-on-get",
        op("{op: get, items: 5}"),
        17,
        ["op 'get' takes no 'items' (it applies to: transact_write, batch_write, batch_get)"],
    ),
    ("scan-with-keys", op("{op: scan, keys: {distribution: uniform}}"), 17, ["scan reads the whole table"]),
    ("missing-name", variant("name: base\n", ""), 1, ["missing required key 'name'"]),
    (
        "tables-not-list",
        "name: x\ntables: items\nworkload: {operations: [{op: put}]}\nphases: []\n",
        2,
        ["tables: expected a non-empty list of tables, found 'items'"],
    ),
    (
        "duplicate-key",
        variant("concurrency: 10\n", "concurrency: 10\nconcurrency: 20\n"),
        22,
        ["concurrency: duplicate key 'concurrency' (first written on line 21)"],
    ),
    ("yaml-syntax", variant("  item_size: 1024", "  item_size: [1024"), None, ["YAML syntax error", "column"]),
    ("yaml-bad-indent", variant("deadline: 8s", "deadline: 8s\n  oops: 1"), 23, ["YAML syntax error"]),
    ("empty-document", "", None, ["found an empty document"]),
    ("top-level-list", "- a\n- b\n", 1, ["expected a mapping with name, tables, workload and phases, found a list"]),
    (
        "billing-provisioned-bare",
        sub(BASE, "    gsis:", "    billing: provisioned\n    gsis:"),
        9,
        ["billing: expected on_demand or {provisioned: {read: N, write: N}}, found 'provisioned'"],
    ),
    (
        "max-on-demand-provisioned",
        sub(
            NO_GSI,
            "    seed:",
            "    billing: {provisioned: {read: 5, write: 5}}\n    max_on_demand: {read: 10, write: 10}\n    seed:",
        ),
        10,
        ["max_on_demand applies to on_demand billing"],
    ),
    (
        "warm-below-on-demand-baseline",
        sub(NO_GSI, "    seed:", "    warm_throughput: {read: 12000, write: 2000}\n    seed:"),
        9,
        [
            "tables[0].warm_throughput.write: expected at least 4,000 write units per second (a new on-demand "
            "table's own warm throughput), found 2,000"
        ],
    ),
    (
        "warm-below-provisioned",
        sub(
            NO_GSI,
            "    seed:",
            "    billing: {provisioned: {read: 50, write: 5}}\n    warm_throughput: {read: 20, write: 100}\n    seed:",
        ),
        10,
        ["tables[0].warm_throughput.read: expected at least 50 read units per second (the table's provisioned"],
    ),
    ("use-existing-unnamed", sub(BASE, "    gsis:", "    use_existing: true\n    gsis:"), 9, ["existing_table_name"]),
    (
        "existing-name-without-ack",
        sub(BASE, "    gsis:", "    existing_table_name: prod-items\n    gsis:"),
        9,
        ["needs use_existing: true"],
    ),
    (
        "sort-equals-partition",
        variant("sort_key: {name: sk", "sort_key: {name: pk"),
        8,
        ["tables[0].sort_key.name: expected a sort key other than the partition key 'pk'"],
    ),
    (
        "key-type-bad",
        variant("{name: pk, type: S}", "{name: pk, type: X}"),
        7,
        ["tables[0].partition_key.type: unknown value 'X'"],
    ),
    (
        "gsi-type-conflict",
        variant("{name: owner, type: S}", "{name: sk, type: N}"),
        10,
        ["attribute 'sk' is declared with type S at tables[0].sort_key"],
    ),
    (
        "items-per-partition-no-sort",
        sub(NO_SORT, "item_size: 512}", "item_size: 512, items_per_partition: 4}"),
        10,
        ["several items per partition need a sort_key"],
    ),
    (
        "hot-spot-fraction",
        variant("{distribution: uniform}", "{distribution: hot_spot, fraction: 1.5}"),
        14,
        ["workload.keys.fraction: expected a ratio above 0 and at most 1, found 1.5"],
    ),
    (
        "zipf-no-keyspace",
        sub(NO_SEED, "{distribution: uniform}", "{distribution: zipf}"),
        15,
        ["'put' on table 'items' with zipf keys needs a keyspace"],
    ),
    ("get-unseeded", NO_SEED, 16, ["'get' on table 'items' with uniform keys needs a keyspace"]),
    (
        "distribution-typo",
        variant("{distribution: uniform}", "{distribution: unifrom}"),
        14,
        ["unknown value 'unifrom'; did you mean 'uniform'?"],
    ),
    (
        "distribution-param-misplaced",
        variant("{distribution: uniform}", "{distribution: uniform, s: 1.2}"),
        14,
        ["key 's' does not apply to distribution 'uniform' (it applies to: zipf)"],
    ),
    (
        "sharded-twice",
        variant("{distribution: uniform}", "{distribution: sharded, base: {distribution: sharded}}"),
        14,
        ["sharded keys cannot be sharded again"],
    ),
    (
        "phase-two-kinds",
        variant(
            "  - steps: [{rate: 500, window: 30s}]",
            "  - steps: [{rate: 500, window: 30s}]\n    hold: {rate: 1, duration: 1s}",
        ),
        20,
        ["expected exactly one of ramp, steps, hold or search, found steps, hold"],
    ),
    (
        "steps-empty",
        variant("steps: [{rate: 500, window: 30s}]", "steps: []"),
        20,
        ["phases[1].steps: expected a non-empty list"],
    ),
    (
        "step-rate-zero",
        variant("{rate: 500, window: 30s}", "{rate: 0, window: 30s}"),
        20,
        ["phases[1].steps[0].rate: expected a positive number of requests/s, found 0"],
    ),
    (
        "hold-window-longer",
        variant("  - steps: [{rate: 500, window: 30s}]", "  - hold: {rate: 5, duration: 1m, window: 2m}"),
        20,
        ["expected a window no longer than the hold (60 s), found 120 s"],
    ),
    (
        "remote-no-limits",
        variant("  local: {capacity_scale: 0.05}", "  endpoint: http://127.0.0.1:8000"),
        2,
        [
            "a remote target needs a request ceiling and a cost ceiling",
            "limits.max_requests and limits.max_cost_dollars",
        ],
    ),
    (
        "remote-bad-endpoint",
        variant("  local: {capacity_scale: 0.05}", "  endpoint: ftp://x"),
        3,
        ["target.endpoint: expected an http:// or https:// URL, found 'ftp://x'"],
    ),
    (
        "remote-bad-region",
        variant("  local: {capacity_scale: 0.05}", "  region: US-EAST"),
        3,
        ["target.region: expected an AWS region such as us-east-1"],
    ),
    (
        "local-with-endpoint",
        variant("  local: {capacity_scale: 0.05}", "  local: {capacity_scale: 0.05}\n  endpoint: http://h"),
        4,
        ["a local target takes no 'endpoint'"],
    ),
    (
        "capacity-scale-negative",
        variant("capacity_scale: 0.05", "capacity_scale: -1"),
        3,
        ["target.local.capacity_scale: expected a positive scale factor, found -1"],
    ),
    (
        "max-requests-below-plan",
        BASE + "limits: {max_requests: 100}\n",
        24,
        ["the phases plan 30,000 requests", "expected at least 30,000"],
    ),
    (
        "slo-phase-typo",
        BASE + "slos: [{window: rmap-0, max_p99_ms: 5}]\n",
        24,
        ["no phase named 'rmap-0'; did you mean 'ramp-0'?"],
    ),
    (
        "slo-window-zero",
        BASE + "slos: [{window: 0, max_p99_ms: 5}]\n",
        24,
        ["expected a window number from 1 to 5 (the first is 1), found 0"],
    ),
    ("slo-no-threshold", BASE + "slos: [{window: all}]\n", 24, ["slos[0]: expected at least one threshold"]),
    (
        "slo-window-index",
        BASE + "slos: [{window: 9, max_p99_ms: 5}]\n",
        24,
        ["expected a window number from 1 to 5 (the first is 1), found 9"],
    ),
    ("slo-ratio", BASE + "slos: [{max_throttle_ratio: 1.5}]\n", 24, ["expected a ratio between 0 and 1, found 1.5"]),
    (
        "slo-rate-range",
        BASE + "slos: [{max_p99_ms: 5, applies_from_rate: 300, applies_below_rate: 200}]\n",
        24,
        ["expected a rate above applies_from_rate (300), found 200"],
    ),
    (
        "transport-unknown",
        variant("transport: boto3", "transport: botocore"),
        4,
        ["transport: unknown value 'botocore'; did you mean 'boto3'?"],
    ),
    (
        "duplicate-labels",
        sub(op("{op: get, label: a}"), "{op: put, weight: 9}", "{op: put, label: a}"),
        17,
        ["duplicate label 'a'"],
    ),
    (
        "duplicate-table",
        sub(BASE, "workload:\n", "  - {name: items, partition_key: pk}\nworkload:\n"),
        12,
        ["duplicate table name 'items'"],
    ),
    ("unknown-table-key", variant("    seed:", "    sead:"), 11, ["unknown key 'sead'; did you mean 'seed'?"]),
    ("unsafe-tag", variant("name: base", "name: !!python/object:os.system base"), 1, ["unsupported YAML"]),
    # absurd sizes: each refused against a documented maximum
    (
        "seed-items-absurd",
        variant("items: 100,", "items: 1000000000000,"),
        11,
        ["tables[0].seed.items", "no greater than 100000000", "found 1000000000000"],
    ),
    (
        "keyspace-absurd",
        variant("{distribution: uniform}", "{distribution: uniform, keyspace: 1.0e+300}"),
        14,
        ["workload.keys.keyspace", "no greater than 1000000000000"],
    ),
    (
        "rate-absurd",
        variant("rate: 500,", "rate: 1.0e+12,"),
        20,
        ["phases[1].steps[0].rate", "no greater than 1000000"],
    ),
    ("window-absurd", variant("window: 30s", "window: 1000000h"), 20, ["phases[1].steps[0].window", "at most 7 days"]),
    ("deadline-absurd", variant("deadline: 8s", "deadline: 1.0e+300"), 22, ["deadline", "at most 7 days"]),
    (
        "weight-absurd",
        variant("{op: put, weight: 9}", "{op: put, weight: 1.0e+308}"),
        16,
        ["weight", "no greater than"],
    ),
    (
        "random-seed-absurd",
        BASE + "random_seed: " + "9" * 30 + "\n",
        24,
        ["random_seed", "no greater than 18446744073709551615"],
    ),
    ("number-of-5000-digits", BASE + "random_seed: " + "9" * 5000 + "\n", 24, ["a number of at most"]),
    # documents that would take the loader's time or memory
    ("huge-file", BASE + "description: '" + "x" * (1024 * 1024) + "'\n", None, ["at most 1,048,576 characters"]),
    ("deep-nesting", BASE + "description: " + "[" * 5000 + "]" * 5000 + "\n", 24, ["levels of nesting"]),
    (
        "alias-bomb",
        BASE
        + "description:\n"
        + "  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)),
        None,
        ["aliases", "expected at most 100,000"],
    ),
]

BAD += GSI_VALUE_CASES
BAD += [  # windows that plan not one request at their rate: they would read `ok` having sent nothing
    (
        "window-shorter-than-one-request",
        variant("steps: [{rate: 500, window: 30s}]", "steps: [{rate: 1, window: 250ms}]"),
        20,
        ["phases[1].steps[0].window: window 5 (0.25 s at 1/s) plans no request", "at least 0.5 s at 1/s"],
    ),
    (
        "ten-thousand-windows-of-a-microsecond",
        variant("steps: [{rate: 500, window: 30s}]", "hold: {rate: 100, duration: 0.0099, window: 0.000001}"),
        20,
        ["phases[1].hold.window: window 5 (1e-06 s at 100/s) plans no request", "at least 0.005 s at 100/s"],
    ),
]


def test_corpus_is_large_enough() -> None:
    assert len(BAD) >= 40
    assert len({case[0] for case in BAD}) == len(BAD)


@pytest.mark.parametrize(("text", "line", "fragments"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_malformed_scenario_names_where_and_what(text: str, line: int | None, fragments: list[str]) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(text, SRC)
    msg = str(info.value)
    assert msg.startswith(SRC + ":"), msg
    if line is not None:
        assert info.value.line == line, msg
        assert msg.startswith(f"{SRC}:{line}: "), msg
    for f in fragments:
        assert f in msg, msg
    assert "\n" not in msg
    assert isinstance(info.value, DynlocustError)


def test_base_is_valid_with_defaults() -> None:
    sc = load_scenario_text(BASE, SRC)
    assert sc.name == "base" and sc.source == SRC
    assert sc.target == LocalTarget(capacity_scale=0.05, time_scale=1.0)
    t = sc.table("items")
    assert t.sort_key is not None and t.sort_key.name == "sk"
    assert t.gsi("by_owner") is not None and t.keyspace == 100
    assert sc.deadline == 8.0 and sc.bin == 10.0 and sc.concurrency == 10
    ops = sc.workload.operations
    assert [(o.op, o.label, o.weight) for o in ops] == [("put", "put", 9.0), ("get", "get", 1.0)]
    assert ops[0].keys == UniformKeys(None)  # writes: fresh UUIDs
    assert ops[1].keys == UniformKeys(100)  # reads: the seeded keyspace
    assert [s.rate for s in sc.steps] == [100, 200, 300, 400, 500]
    assert [p.name for p in sc.phases] == ["ramp-0", "steps-1"]
    assert sc.total_duration == 90.0


def test_scenario_is_frozen() -> None:
    sc = load_scenario_text(BASE, SRC)
    with pytest.raises(AttributeError):
        sc.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        (15, 15.0),
        (0.5, 0.5),
        ("15s", 15.0),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("250ms", 0.25),
        ("1m30s", 90.0),
        (" 1.5 s ", 1.5),
        ("10", 10.0),
        ("1h 2m 3s", 3723.0),
    ],
)
def test_parse_duration(text: object, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "5x", "m5", "1m-30s", "abc", True, None, [1]])
def test_parse_duration_rejects(text: object) -> None:
    assert parse_duration(text) is None


def test_ramp_ends_on_to_when_step_does_not_divide_and_can_descend() -> None:
    sc = load_scenario_text(variant("to: 400, step: 100", "to: 350, step: 100"), SRC)
    assert [s.rate for s in sc.phases[0].steps] == [100, 200, 300, 350]
    sc = load_scenario_text(variant("from: 100, to: 400", "from: 400, to: 100"), SRC)
    assert [s.rate for s in sc.phases[0].steps] == [400, 300, 200, 100]


def test_hold_splits_into_windows_with_a_short_tail() -> None:
    sc = load_scenario_text(
        variant("steps: [{rate: 500, window: 30s}]", "hold: {rate: 50, duration: 70s, window: 30s}"), SRC
    )
    assert [(s.rate, s.duration) for s in sc.phases[1].steps] == [(50, 30), (50, 30), (50, 10)]


def test_sizes_accept_units() -> None:
    sc = load_scenario_text(variant("item_size: 1024", "item_size: 4KB"), SRC)
    assert sc.workload.item_size == 4096


def test_remote_target_with_limits() -> None:
    text = (
        variant(
            "  local: {capacity_scale: 0.05}",
            "  endpoint: https://dynamodb.us-east-1.amazonaws.com\n  region: us-east-1",
        )
        + "limits: {max_requests: 40000, max_cost_dollars: 1}\n"
    )
    sc = load_scenario_text(text, SRC)
    assert sc.target == RemoteTarget("https://dynamodb.us-east-1.amazonaws.com", "us-east-1", None)
    assert not sc.is_local and sc.limits.max_cost_dollars == 1.0


def test_key_specs_resolve_keyspace_from_seed() -> None:
    text = variant("{distribution: uniform}", "{distribution: sharded, shards: 3, base: {distribution: hot_spot}}")
    sc = load_scenario_text(op("{op: update, keys: {distribution: sequential, start: 5}}", text), SRC)
    put, upd = sc.workload.operations
    assert put.keys == ShardedKeys(3, "hash", HotSpotKeys(0.01, 0.9, 100))  # skewed writes need the keyspace
    assert upd.keys == SequentialKeys(5, 100)
    sc = load_scenario_text(variant("{distribution: uniform}", "zipf"), SRC)
    assert sc.workload.operations[0].keys == ZipfKeys(1.1, 100)


def test_default_labels_are_unique() -> None:
    sc = load_scenario_text(op("{op: put, weight: 1}"), SRC)
    assert [o.label for o in sc.workload.operations] == ["put#0", "put#1"]
    sc = load_scenario_text(
        sub(TWO_TABLES, "{op: put, weight: 9}", "{op: put, table: other}").replace(
            "{op: get, weight: 1}", "{op: put, table: items}"
        ),
        SRC,
    )
    assert [o.label for o in sc.workload.operations] == ["put:other", "put:items"]


def test_load_scenario_file_and_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(BASE)
    assert load_scenario(p).name == "base"
    summary = validate_file(p)
    assert "base" in summary and "30,000 requests planned" in summary and "1m 30s" in summary
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "nope.yaml")


def test_anchors_and_merge_keys() -> None:
    text = op("&g {op: get, weight: 1, label: g1}\n    - {<<: *g, label: g2}")
    text = sub(text, "[{rate: 500, window: 30s}]", "[&s {rate: 500, window: 30s}, *s]")
    sc = load_scenario_text(text, SRC)
    assert [o.label for o in sc.workload.operations] == ["put", "g1", "g2"]
    assert len(sc.phases[1].steps) == 2
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(op("&g {op: get, weight: 1, label: g1}\n    - {<<: *g, label: g2, weight: -1}"), SRC)
    assert str(info.value).startswith(f"{SRC}:18: workload.operations[2].weight: expected a positive weight")


@pytest.mark.parametrize(
    ("spec", "check"),
    [
        ("{op: conditional_put, item_size: 2KB}", lambda o: o.item_size == 2048),
        ("{op: get, consistent: true}", lambda o: o.consistent),
        ("{op: query, limit: 10}", lambda o: o.limit == 10 and o.keys == UniformKeys(100)),
        ("{op: gsi_query, index: by_owner}", lambda o: o.index == "by_owner"),
        ("{op: scan, filter: 'attribute_exists(pk)', limit: 5}", lambda o: o.filter and o.keys is None),
        ("{op: update}", lambda o: o.keys == UniformKeys(100)),
        ("{op: delete}", lambda o: o.keys == UniformKeys(100)),
        ("{op: transact_write}", lambda o: o.items == 1 and o.keys == UniformKeys(None)),
        ("{op: batch_write}", lambda o: o.items == 25),
        ("{op: batch_get, items: 40}", lambda o: o.items == 40),
    ],
)
def test_every_op_kind_loads(spec: str, check: Callable[[Any], bool]) -> None:
    o = load_scenario_text(op(spec), SRC).workload.operations[1]
    assert check(o), o
