"""One specification of the scenario format: the shipped schema.json is what the spec builds, it names every field
of the model, and every malformed scenario of the loader's corpus is refused by the schema too, save the rules
that relate one field to another (listed here, and checked to be the only ones the schema lets through)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import jsonschema
import pytest
import yaml

from dynlocust.scenario import ScenarioError, load_scenario_text, model
from dynlocust.scenario.spec import SCHEMA_PATH, json_schema, schema_text
from tests.unit.scenario.test_loader import BAD, SRC

SCHEMA = json_schema()

# Where each model class is written in a scenario: the JSON pointers (into the schema) of the mappings holding its
# fields. Several pointers: the class is written in several shapes (an op kind, a phase kind).
PLACES: dict[type, list[str]] = {
    model.Scenario: ["/properties"],
    model.LocalTarget: ["/properties/target/oneOf/1/properties/local/oneOf/1/properties"],
    model.RemoteTarget: ["/properties/target/oneOf/2/properties"],
    model.KeyAttribute: ["/$defs/key_attribute/oneOf/1/properties", "/$defs/gsi_key_attribute/oneOf/1/properties"],
    model.Throughput: ["/$defs/throughput/properties"],
    model.Gsi: ["/$defs/gsi/properties"],
    model.Seed: ["/$defs/table/properties/seed/properties"],
    model.Table: ["/$defs/table/properties"],
    model.UniformKeys: ["/$defs/keys/oneOf/1/properties"],
    model.ZipfKeys: ["/$defs/keys/oneOf/2/properties"],
    model.HotSpotKeys: ["/$defs/keys/oneOf/3/properties"],
    model.SequentialKeys: ["/$defs/keys/oneOf/4/properties"],
    model.ShardedKeys: ["/$defs/keys/oneOf/5/properties"],
    model.Workload: ["/properties/workload/properties"],
    model.Operation: [f"/$defs/operation/oneOf/{i}/properties" for i in range(len(model.OP_KINDS))],
    model.Phase: [f"/$defs/phase/oneOf/{i}/properties" for i in range(4)],
    model.Search: ["/$defs/phase/oneOf/3/properties/search/properties"],
    model.Step: [
        "/$defs/phase/oneOf/1/properties/steps/items/properties",
        "/$defs/phase/oneOf/2/properties/hold/properties",
    ],
    model.Limits: ["/properties/limits/properties"],
    model.Slo: ["/$defs/slo/properties"],
}
# Model fields written under another name, and keys of the file that are sugar for a field (not fields themselves).
WRITTEN_AS: dict[tuple[type, str], str | None] = {
    (model.Scenario, "source"): None,  # the file's name, not written in it
    (model.Table, "provisioned"): "billing",  # billing: {provisioned: {...}}
    (model.Gsi, "non_key_attributes"): "projection",  # projection: {include: [...]}
    (model.Phase, "kind"): "ramp",  # the phase's own key: ramp, steps, hold or search
    (model.Step, "duration"): "window",
    (model.Search, "start"): "from",
}
SUGAR: dict[type, set[str]] = {
    **{cls: {"distribution"} for cls in (model.UniformKeys, model.ZipfKeys, model.HotSpotKeys, model.SequentialKeys)},
    model.ShardedKeys: {"distribution"},
    model.Phase: {"ramp", "hold"},  # with steps: the phase's kind, read into Phase.kind
    model.Step: {"window", "rate", "duration"},  # a hold's duration makes several steps
}

# The malformed cases that no JSON Schema of this format refuses, and why.
NOT_YAML = {"yaml-syntax", "yaml-bad-indent", "unsafe-tag", "number-of-5000-digits", "deep-nesting"}
"""Refused while reading the YAML, before any schema applies (yaml.safe_load raises too)."""
DOCUMENT = {"duplicate-key", "huge-file"}
"""Bounds on the text itself: yaml keeps the last of duplicate keys silently, and a schema sees no file size."""
EXPANDS = {"alias-bomb"}
"""Refused by the loader from the parser's events; a schema validator would build and print its 10^9 values."""
UNITS = {"item-size-over-400kb", "window-absurd"}
"""A bound on a size or duration written with a unit ('500KB', '1000000h'): the schema checks its form only."""
CROSS_FIELD = {
    "warm-below-on-demand-baseline",
    "warm-below-provisioned",
    "op-table-undeclared",
    "op-table-ambiguous",
    "gsi-unknown",
    "gsi-none",
    "query-no-sort-key",
    "transact-over-4mb",
    "sort-equals-partition",
    "gsi-type-conflict",
    "zipf-no-keyspace",
    "get-unseeded",
    "hold-window-longer",
    "max-requests-below-plan",
    "slo-phase-typo",
    "slo-window-index",
    "slo-rate-range",
    "duplicate-labels",
    "duplicate-table",
    "gsi-values-zipf-without-keyspace",
    "gsi-values-no-hot-key",
    "gsi-values-on-a-table-key",
    "gsi-values-twice",
    "window-shorter-than-one-request",
    "ten-thousand-windows-of-a-microsecond",
}
"""Rules that relate one value to another (names declared elsewhere, sums, uniqueness): the loader's alone."""


def pointer(schema: dict[str, Any], path: str) -> dict[str, Any]:
    node: Any = schema
    for part in path.strip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def test_the_shipped_schema_is_what_the_spec_builds() -> None:
    assert SCHEMA_PATH.read_text() == schema_text(), (
        "run: python -c 'from dynlocust.scenario.spec import write_schema; write_schema()'"
    )
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_model_class_has_its_place_in_the_schema() -> None:
    classes = {c for _, c in inspect.getmembers(model, dataclasses.is_dataclass) if c.__module__ == model.__name__}
    assert classes == set(PLACES)


@pytest.mark.parametrize("cls", list(PLACES), ids=[c.__name__ for c in PLACES])
def test_every_field_of_the_model_is_in_the_schema_and_back(cls: type) -> None:
    written = {k for p in PLACES[cls] for k in pointer(SCHEMA, p)}
    fields = {f.name for f in dataclasses.fields(cls)}
    for name in fields:
        key = WRITTEN_AS.get((cls, name), name)
        assert key is None or key in written, f"{cls.__name__}.{name} is not in the schema (as {key!r})"
    extra = written - fields - {k for (c, _), k in WRITTEN_AS.items() if c is cls} - SUGAR.get(cls, set())
    assert not extra, f"the schema has keys that {cls.__name__} does not: {extra}"


def test_the_exemptions_name_real_cases() -> None:
    ids = {case[0] for case in BAD}
    exempt = NOT_YAML | EXPANDS | DOCUMENT | UNITS | CROSS_FIELD
    assert exempt <= ids, exempt - ids
    assert len(ids - exempt) >= 50  # most of the corpus is refused by both


@pytest.mark.parametrize(("case", "text"), [c[:2] for c in BAD], ids=[c[0] for c in BAD])
def test_each_malformed_case_is_refused_by_both(case: str, text: str) -> None:
    with pytest.raises(ScenarioError):
        load_scenario_text(text, SRC)
    if case in EXPANDS:
        return
    if case in NOT_YAML:
        with pytest.raises((yaml.YAMLError, ValueError, RecursionError)):
            yaml.safe_load(text)
        return
    valid = jsonschema.Draft202012Validator(SCHEMA).is_valid(yaml.safe_load(text))
    # The exempt cases must really pass the schema: once the schema learns a rule, its case leaves the list.
    assert valid == (case in DOCUMENT | UNITS | CROSS_FIELD)
