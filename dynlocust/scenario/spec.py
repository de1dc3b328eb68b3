"""The scenario format, written once: every mapping's keys, which are required, the bounds and the choices.

The loader (`dynlocust.scenario.loader`) takes each mapping's keys and every bound from here, and
`json_schema()` builds `schema.json` from the same sections, so the two cannot disagree about what a key is
called, whether it is required or how large it may be. The loader adds what a JSON Schema cannot say well: the
rules that relate one field to another (an operation names a declared table, `query` needs a sort key, a
transaction stays under 4 MB, the plan fits `max_requests`...) and messages that name file, line, key path,
expectation and find. `write_schema()` rewrites `schema.json`; a unit test fails when
the shipped file differs from what this module builds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from dynlocust.dynamodb import MAX_BATCH_GET, MAX_BATCH_WRITE, MAX_ITEM_SIZE, MAX_TRANSACT
from dynlocust.scenario.model import (
    GSI_VALUES,
    OP_KINDS,
    KeyType,
    ShardMode,
    TransportName,
)

SCHEMA_PATH = Path(__file__).with_name("schema.json")

# Bounds on what a scenario may ask for: far above any real test, low enough that nothing absurd is reported valid
# (and that `validate` itself stays fast and small, whatever the file holds).
MAX_WINDOWS = 10_000
MAX_ZIPF_KEYSPACE = 5_000_000
MAX_GSIS = 20
MAX_SEED_ITEMS = 100_000_000
"""Seed items per table (100 million: hours of BatchWriteItem at any realistic rate)."""
MAX_KEYSPACE = 10**12
MAX_RATE = 1_000_000
"""Requests per second offered by the whole fleet."""
MAX_CAPACITY_UNITS = 1_000_000
"""Provisioned or warm read/write units of a table or index."""
MAX_SECONDS = 7 * 24 * 3600
"""Any duration: a window, a hold, the deadline, a bin."""
MAX_WEIGHT = 1_000_000
MAX_RANDOM_SEED = 2**64 - 1
MAX_CONCURRENCY = 100_000
MAX_SHARDS = 10_000
MAX_TABLE_NAME = 200
"""A logical table name; the run appends a run id, and DynamoDB allows 255 characters."""

NAME_PATTERN = r"^[A-Za-z0-9_.-]+$"
REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-\d+$"
DURATION_PART_PATTERN = r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)"
"""One part of a duration written as text: `15s`, `2m`, `1h`, `250ms` (`1m30s` has two)."""
DURATION_PATTERN = rf"^(?=.*[1-9])\s*(({DURATION_PART_PATTERN}\s*)+|\d+(\.\d*)?|\.\d+)\s*$"
"""A duration as text (not zero): parts, or a bare number of seconds."""
SIZE_PATTERN = r"^\s*(\d+(?:\.\d*)?)\s*([bB]|[kK][iI]?[bB]|[mM][iI]?[bB])?\s*$"
"""Bytes with an optional unit in any case (1 KB = 1,024 B)."""
SIZE_UNITS: dict[str | None, int] = {None: 1, "b": 1, "kb": 1024, "kib": 1024, "mb": 1024 * 1024, "mib": 1024 * 1024}

KEY_TYPES: tuple[KeyType, ...] = get_args(KeyType)
TRANSPORTS: tuple[TransportName, ...] = get_args(TransportName)
SHARD_MODES: tuple[ShardMode, ...] = get_args(ShardMode)
PROJECTIONS = ("all", "keys_only")
"""Projections written as a word; `{include: [...]}` is the third."""
PHASE_KINDS = ("ramp", "steps", "hold", "search")
SEARCH_OPS = ("write", "read")
MAX_SEARCH_WINDOWS = 100
MAX_ITEMS: dict[str, int] = {"transact_write": MAX_TRANSACT, "batch_write": MAX_BATCH_WRITE, "batch_get": MAX_BATCH_GET}
"""Items per call of the operations that take several."""
SLO_THRESHOLDS = (
    "max_throttle_ratio",
    "max_error_ratio",
    "max_dropped_ratio",
    "max_p50_ms",
    "max_p99_ms",
    "min_achieved_ratio",
)


# --------------------------------------------------------------------------------------------------- fragments
# JSON Schema fragments of the leaf values. The loader's checkers (_int, _number, _ratio, _text, _size,
# _duration) enforce the same bounds, from the same constants; the corpus test shows both refuse the same values.


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _integer(minimum: int = 1, maximum: int | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        out["maximum"] = maximum
    return {**out, **extra}


def _positive(maximum: float | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "number", "exclusiveMinimum": 0}
    if maximum is not None:
        out["maximum"] = maximum
    return {**out, **extra}


def _ratio(*, zero_ok: bool = True, below_one: bool = False) -> dict[str, Any]:
    return {
        "type": "number",
        "minimum" if zero_ok else "exclusiveMinimum": 0,
        "exclusiveMaximum" if below_one else "maximum": 1,
    }


def _text(pattern: str = r"\S", **extra: Any) -> dict[str, Any]:
    """Text that is not blank (or that matches `pattern`)."""
    return {"type": "string", "pattern": pattern, **extra}


def _enum(choices: tuple[str, ...], **extra: Any) -> dict[str, Any]:
    return {"enum": list(choices), **extra}


def _list(items: dict[str, Any], *, min_items: int = 1, **extra: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **({"minItems": min_items} if min_items else {}), **extra}


# --------------------------------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class Section:
    """One mapping of the format: its keys (each with its JSON Schema) and which of them are required."""

    fields: dict[str, dict[str, Any]]
    required: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    """Further JSON Schema keywords of the mapping as a whole."""

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.fields)

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(k for k in self.fields if k not in self.required)

    def schema(self, **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": self.fields}
        if self.required:
            out["required"] = list(self.required)
        return {**out, **self.extra, **extra}


def any_of(*sections: Section) -> Section:
    """The keys of any of `sections` (required where every one requires them): how the loader reads a mapping
    before it knows which alternative it is, so that it can name an unknown key whichever was meant."""
    fields = {k: v for s in sections for k, v in s.fields.items()}
    return Section(fields, tuple(k for k in fields if all(k in s.required for s in sections)))


SCALE = _positive(description="Multiplies the emulated capacity (capacity_scale) or speeds its clock (time_scale).")
LOCAL_TARGET = Section({"capacity_scale": SCALE, "time_scale": SCALE})
LOCAL = Section({"local": {"oneOf": [{"type": "null"}, LOCAL_TARGET.schema()]}}, ("local",))
REMOTE_TARGET = Section(
    {
        "endpoint": _text(r"^https?://.", description="Default: the --host option."),
        "region": _text(REGION_PATTERN),
        "profile": _text(),
    }
)
TARGET = any_of(LOCAL, REMOTE_TARGET)
KEY_ATTRIBUTE = Section({"name": _text(), "type": _enum(KEY_TYPES, default="S")}, ("name",))
GSI_KEY_ATTRIBUTE = Section(
    {
        **KEY_ATTRIBUTE.fields,
        "values": {
            **_ref("keys"),
            "description": "The values writes give this attribute: a key distribution (a hot_spot is a hot index "
            f"partition). Default: a hash of the item's key into {GSI_VALUES} values. Not for an attribute of the "
            "table's key.",
        },
    },
    ("name",),
)
THROUGHPUT = Section(
    {"read": _integer(maximum=MAX_CAPACITY_UNITS), "write": _integer(maximum=MAX_CAPACITY_UNITS)}, ("read", "write")
)
BILLING_PROVISIONED = Section({"provisioned": _ref("throughput")}, ("provisioned",))
PROJECTION_INCLUDE = Section({"include": _list(_text())}, ("include",))
GSI = Section(
    {
        "name": _text(NAME_PATTERN),
        "partition_key": _ref("gsi_key_attribute"),
        "sort_key": _ref("gsi_key_attribute"),
        "projection": {"oneOf": [_enum(PROJECTIONS), PROJECTION_INCLUDE.schema()], "default": "all"},
        "provisioned": _ref("throughput"),
        "max_on_demand": _ref("throughput"),
    },
    ("name", "partition_key"),
)
SEED = Section(
    {
        "items": _integer(maximum=MAX_SEED_ITEMS),
        "item_size": _ref("size"),
        "items_per_partition": _integer(maximum=MAX_SEED_ITEMS, default=1),
    },
    ("items",),
)
TABLE = Section(
    {
        "name": _text(
            NAME_PATTERN, maxLength=MAX_TABLE_NAME, description="Logical name; the run creates <name>-<run id>."
        ),
        "partition_key": _ref("key_attribute"),
        "sort_key": _ref("key_attribute"),
        "billing": {"oneOf": [{"const": "on_demand"}, BILLING_PROVISIONED.schema()], "default": "on_demand"},
        "warm_throughput": {
            **_ref("throughput"),
            "description": "Units/s the table takes at once (CreateTable's WarmThroughput); the run checks the first "
            "window against it. At least 12,000 read and 4,000 write on demand (a new table's own), or the "
            "provisioned capacity.",
        },
        "max_on_demand": _ref("throughput"),
        "gsis": _list(_ref("gsi"), min_items=0, maxItems=MAX_GSIS),
        "use_existing": {"type": "boolean", "description": "Write into existing_table_name instead of a new table."},
        "existing_table_name": _text(NAME_PATTERN, minLength=3, maxLength=255),
        "seed": SEED.schema(),
    },
    ("name", "partition_key"),
    {
        "dependentSchemas": {
            "existing_table_name": {"properties": {"use_existing": {"const": True}}, "required": ["use_existing"]}
        },
        "allOf": [
            {
                "if": {"properties": {"use_existing": {"const": True}}, "required": ["use_existing"]},
                "then": {"required": ["existing_table_name"]},
            },
            {
                "if": {"properties": {"billing": {"type": "object"}}, "required": ["billing"]},
                "then": {"not": {"required": ["max_on_demand"]}},
            },
            {
                "if": {
                    "properties": {
                        "seed": {
                            "properties": {"items_per_partition": {"minimum": 2}},
                            "required": ["items_per_partition"],
                        }
                    },
                    "required": ["seed"],
                },
                "then": {"required": ["sort_key"]},
            },
        ],
    },
)

KEYSPACE = _integer(maximum=MAX_KEYSPACE)


def _distribution(name: str, fields: dict[str, dict[str, Any]]) -> Section:
    """`distribution: name` and its parameters; only uniform, the default, may leave `distribution` out."""
    return Section({"distribution": {"const": name}, **fields}, () if name == "uniform" else ("distribution",))


#: Each key distribution: `distribution` and its own parameters.
DISTRIBUTIONS: dict[str, Section] = {
    "uniform": _distribution("uniform", {"keyspace": KEYSPACE}),
    "zipf": _distribution("zipf", {"s": _positive(default=1.1), "keyspace": _integer(maximum=MAX_ZIPF_KEYSPACE)}),
    "hot_spot": _distribution(
        "hot_spot",
        {
            "fraction": {**_ratio(zero_ok=False, below_one=True), "default": 0.01},
            "traffic": {**_ratio(zero_ok=False), "default": 0.9},
            "keyspace": KEYSPACE,
        },
    ),
    "sequential": _distribution("sequential", {"start": _integer(0, MAX_KEYSPACE, default=0), "keyspace": KEYSPACE}),
    "sharded": _distribution(
        "sharded",
        {
            "shards": _integer(maximum=MAX_SHARDS, default=4),
            "mode": _enum(SHARD_MODES, default="hash"),
            "base": _ref("base_keys"),
        },
    ),
}
KEYS = any_of(*DISTRIBUTIONS.values())

WORKLOAD = Section(
    {"item_size": _ref("size"), "keys": _ref("keys"), "operations": _list(_ref("operation"))}, ("operations",)
)
COMMON_OP_FIELDS: dict[str, dict[str, Any]] = {
    "op": _enum(OP_KINDS),
    "weight": _positive(MAX_WEIGHT, default=1),
    "table": _text(description="Default: the only table."),
    "label": _text(description="The name in statistics (default: the op, with the table when there are several)."),
    "keys": _ref("keys"),
}
_OP_FIELDS: dict[str, dict[str, Any]] = {
    "item_size": _ref("size"),
    "consistent": {"type": "boolean", "default": False},
    "limit": _integer(maximum=MAX_SEED_ITEMS),
    "index": _text(),
    "filter": _text(),
}
#: The keys each operation kind takes on top of the common ones.
OP_OWN_KEYS: dict[str, tuple[str, ...]] = {
    "put": ("item_size",),
    "conditional_put": ("item_size",),
    "get": ("consistent",),
    "query": ("consistent", "limit"),
    "gsi_query": ("index", "limit"),
    "scan": ("consistent", "filter", "limit"),
    "update": ("item_size",),
    "delete": (),
    "transact_write": ("items", "item_size"),
    "batch_write": ("items", "item_size"),
    "batch_get": ("items", "consistent"),
}


def _operation(op: str) -> Section:
    own = {k: _integer(maximum=MAX_ITEMS[op]) if k == "items" else _OP_FIELDS[k] for k in OP_OWN_KEYS[op]}
    common = {k: v for k, v in COMMON_OP_FIELDS.items() if not (op == "scan" and k == "keys")}
    common["op"] = {"const": op}
    return Section({**common, **own}, ("op", "index") if op == "gsi_query" else ("op",))


#: Each operation kind's keys (the common ones, less `keys` for `scan`, plus its own).
OPERATIONS: dict[str, Section] = {op: _operation(op) for op in OP_KINDS}

RAMP = Section(
    {"from": _ref("rate"), "to": _ref("rate"), "step": _ref("rate"), "window": _ref("duration")},
    ("from", "to", "step", "window"),
)
STEP = Section({"rate": _ref("rate"), "window": _ref("duration")}, ("rate", "window"))
HOLD = Section({"rate": _ref("rate"), "duration": _ref("duration"), "window": _ref("duration")}, ("rate", "duration"))
SEARCH = Section(
    {
        "from": {**_ref("rate"), "description": "The first probe's rate."},
        "factor": {"type": "number", "exclusiveMinimum": 1, "default": 1.5, "description": "Growth per probe."},
        "precision": {
            **_ratio(zero_ok=False, below_one=True),
            "default": 0.02,
            "description": "Stop once (high - low) / low is below this.",
        },
        "max_windows": _integer(2, MAX_SEARCH_WINDOWS, default=15),
        "window": {
            **_ref("duration"),
            "description": "Each probe's length; at least 4 x the burst / precision (default 6 x).",
        },
        "cooldown": {**_ref("duration"), "description": "Rest between probes (default none)."},
        "op": _enum(SEARCH_OPS, description="Probe only the workload's writes or only its reads."),
    },
    ("from",),
)
PHASE_NAME = _text(r"^(?!all$)(?!\d+$)\S", description="Default: <kind>-<position>; not 'all' nor a number.")
PHASES: dict[str, Section] = {
    "ramp": Section({"name": PHASE_NAME, "ramp": RAMP.schema()}, ("ramp",)),
    "steps": Section({"name": PHASE_NAME, "steps": _list(STEP.schema())}, ("steps",)),
    "hold": Section({"name": PHASE_NAME, "hold": HOLD.schema()}, ("hold",)),
    "search": Section({"name": PHASE_NAME, "search": SEARCH.schema()}, ("search",)),
}
"""Each phase kind: its name and its sugar (a ramp, a list of steps, a hold, or a ceiling search)."""
PHASE = any_of(*PHASES.values())

LIMITS = Section(
    {"max_requests": _integer(maximum=MAX_KEYSPACE), "max_cost_dollars": _positive()},
    extra={"description": "Hard ceilings; a remote target needs both."},
)
SLO = Section(
    {
        "window": {
            "oneOf": [{"type": "integer", "minimum": 1}, {"type": "string"}],
            "default": "all",
            "description": "all, a window number (the first window is 1), or a phase name",
        },
        **{k: _positive() if k.endswith("_ms") else _ratio(zero_ok=k != "min_achieved_ratio") for k in SLO_THRESHOLDS},
        "applies_below_rate": _ref("rate"),
        "applies_from_rate": _ref("rate"),
    },
    extra={"anyOf": [{"required": [k]} for k in SLO_THRESHOLDS]},
)
TOP = Section(
    {
        "name": _text(NAME_PATTERN),
        "description": {"type": "string"},
        "target": {
            "description": "Default: the embedded local endpoint. Remote fields left out come from options.",
            "oneOf": [
                _enum(("local", "remote")),
                LOCAL.schema(),
                REMOTE_TARGET.schema(),
            ],
        },
        "transport": _enum(TRANSPORTS, default="boto3"),
        "tables": _list(_ref("table")),
        "workload": WORKLOAD.schema(),
        "phases": _list(_ref("phase")),
        "concurrency": _integer(maximum=MAX_CONCURRENCY, default=50, description="Locust users per worker."),
        "deadline": {**_ref("duration"), "description": "Per-request total deadline (default 8 s)."},
        "limits": LIMITS.schema(),
        "slos": _list(_ref("slo"), min_items=0),
        "bin": {**_ref("duration"), "description": "Statistics bin (default 10 s)."},
        "random_seed": _integer(0, MAX_RANDOM_SEED, default=0),
    },
    ("name", "tables", "workload", "phases"),
    {
        "if": {
            "properties": {
                "target": {"anyOf": [{"const": "remote"}, {"type": "object", "not": {"required": ["local"]}}]}
            },
            "required": ["target"],
        },
        "then": {
            "required": ["limits"],
            "properties": {"limits": {"required": ["max_requests", "max_cost_dollars"]}},
        },
    },
)


LOADER_RULES = (
    "The loader (dynlocust.scenario.loader) enforces this schema plus the rules that relate fields to each other: "
    "ops name declared tables and GSIs, query needs a sort key, transactions stay under 4 MB, remote targets need "
    "both limits, max_requests covers the plan, etc."
)
"""What the loader checks beyond the schema, said in the schema's description and on the documentation page."""


def json_schema() -> dict[str, Any]:
    """The scenario format as a JSON Schema (draft 2020-12), built from the sections above."""
    distributions = [s.schema() for s in DISTRIBUTIONS.values()]
    return TOP.schema(
        **{
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://dynlocust.invalid/scenario.schema.json",
            "title": "dynlocust scenario",
            "description": "A load-test scenario. Generated by dynlocust.scenario.spec.write_schema()"
            "; do not edit by hand. " + LOADER_RULES,
            "$defs": {
                "duration": {
                    "description": "Seconds, or text like 15s, 2m, 1h, 250ms, 1m30s.",
                    "oneOf": [_positive(MAX_SECONDS), _text(DURATION_PATTERN)],
                },
                "size": {
                    "description": "Bytes, or text like 1KB / 4 KiB (1 KB = 1,024 B); at most 400 KB.",
                    "oneOf": [_integer(maximum=MAX_ITEM_SIZE), _text(SIZE_PATTERN)],
                },
                "rate": _positive(MAX_RATE, description="Requests per second offered by the whole fleet."),
                "key_attribute": {"oneOf": [_text(), KEY_ATTRIBUTE.schema()]},
                "gsi_key_attribute": {"oneOf": [_text(), GSI_KEY_ATTRIBUTE.schema()]},
                "throughput": THROUGHPUT.schema(),
                "keys": {
                    "description": "Key distribution. Shorthand: the distribution name alone.",
                    "oneOf": [_enum(tuple(DISTRIBUTIONS)), *distributions],
                },
                "base_keys": {
                    "description": "The distribution that sharded keys spread (anything but sharded).",
                    "oneOf": [_enum(tuple(d for d in DISTRIBUTIONS if d != "sharded")), *distributions[:-1]],
                },
                "gsi": GSI.schema(),
                "table": TABLE.schema(),
                "operation": {"oneOf": [s.schema() for s in OPERATIONS.values()]},
                "phase": {"oneOf": [s.schema() for s in PHASES.values()]},
                "slo": SLO.schema(),
            },
        }
    )


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"


def write_schema() -> None:
    """Rewrite `schema.json` from this module (after a change to the format)."""
    SCHEMA_PATH.write_text(schema_text())
