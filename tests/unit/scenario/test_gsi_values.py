"""A GSI key attribute's own value distribution (`values`): what loads, and the malformed cases (run with the
loader's corpus in test_loader and test_spec, so each is refused by the loader and, where it can say, the schema)."""

from __future__ import annotations

from dynlocust.scenario import HotSpotKeys, describe, load_scenario_text
from tests.unit.scenario._base import BASE, variant

SRC = "scenarios/x.yaml"
GSI_OWNER = "partition_key: {name: owner, type: S}}"

# (id, scenario text, line the error must name, fragments the message must contain)
GSI_VALUE_CASES: list[tuple[str, str, int | None, list[str]]] = [
    (
        "gsi-values-zipf-without-keyspace",
        variant(GSI_OWNER, "partition_key: {name: owner, values: zipf}}"),
        10,
        ["tables[0].gsis[0].partition_key.values: zipf values need a keyspace", "expected values.keyspace"],
    ),
    (
        "gsi-values-unknown-distribution-key",
        variant(
            GSI_OWNER,
            "partition_key: {name: owner, values: {distribution: uniform, s: 2}}}",
        ),
        10,
        ["tables[0].gsis[0].partition_key.values: key 's' does not apply to distribution 'uniform'"],
    ),
    (
        "gsi-values-no-hot-key",
        variant(
            GSI_OWNER,
            "partition_key: {name: owner, values: {distribution: hot_spot, fraction: 0.001, keyspace: 10}}}",
        ),
        10,
        ["hot_spot fraction 0.001 of a 10-key keyspace selects no key"],
    ),
    (
        "gsi-values-on-a-table-key",
        variant(
            GSI_OWNER,
            "partition_key: {name: owner}, sort_key: {name: sk, values: {distribution: zipf, keyspace: 5}}}",
        ),
        10,
        ["tables[0].gsis[0].sort_key.values: attribute 'sk' is part of the table's key"],
    ),
    (
        "gsi-values-twice",
        variant(
            "      - {name: by_owner, partition_key: {name: owner, type: S}}\n",
            "      - {name: by_owner, partition_key: {name: owner, values: sequential}}\n"
            "      - {name: again, partition_key: {name: owner, values: uniform}}\n",
        ),
        11,
        [
            "tables[0].gsis[1].partition_key.values: attribute 'owner' already takes its values from "
            "tables[0].gsis[0].partition_key.values"
        ],
    ),
    (
        "gsi-values-misspelt",
        variant(GSI_OWNER, "partition_key: {name: owner, value: uniform}}"),
        10,
        ["unknown key 'value'; did you mean 'values'?"],
    ),
]


def test_a_gsi_key_attribute_takes_its_own_value_distribution() -> None:
    hot = "{distribution: hot_spot, fraction: 0.01, traffic: 0.5, keyspace: 100}"
    sc = load_scenario_text(variant(GSI_OWNER, f"partition_key: {{name: owner, values: {hot}}}}}"), SRC)
    gsi = sc.table("items").gsi("by_owner")
    assert gsi is not None and gsi.partition_key.values == HotSpotKeys(0.01, 0.5, 100)
    assert load_scenario_text(BASE, SRC).table("items").gsis[0].partition_key.values is None
    assert "gsis by_owner; by_owner.owner values hot_spot over 100 keys" in describe(sc)  # what validate prints
