"""The scenario format's documentation page is rendered from the specification: the checked-in page is the
renderer's output, it has a row for every key of every mapping of the schema with its bounds, and a schema keyword
the renderer does not know is refused by name rather than left out of the page."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dynlocust.scenario import spec
from dynlocust.scenario.reference import Page, _rules, _table, markdown, value
from tests.support.runs import ROOT

PAGE = ROOT / "docs" / "scenario-format.md"


def test_the_checked_in_page_is_what_the_spec_renders() -> None:
    assert PAGE.read_text() == markdown(), (
        "run: python -c 'from dynlocust.scenario.reference import write_markdown; "
        'write_markdown("docs/scenario-format.md")\''
    )


def mapping_keys(node: Any) -> set[str]:
    """Every key named under a ``properties`` of the schema, however deep."""
    if isinstance(node, list):
        return {k for item in node for k in mapping_keys(item)}
    if not isinstance(node, dict):
        return set()
    found = set(node.get("properties", {}))
    for key, sub in node.items():
        if key in ("properties", "$defs", "dependentSchemas"):
            found |= {k for s in sub.values() for k in mapping_keys(s)}
        elif key not in ("if", "then"):  # conditions name keys already listed
            found |= mapping_keys(sub)
    return found


def test_every_key_of_the_schema_has_a_row() -> None:
    rows = set(re.findall(r"^\| `([^`]+)` \|", markdown(), re.M))
    keys = mapping_keys(spec.json_schema())
    assert len(keys) > 40 and keys <= rows, sorted(keys - rows)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("items", f"<= {spec.MAX_SEED_ITEMS:,}"),
        ("concurrency", f"<= {spec.MAX_CONCURRENCY:,}"),
        ("gsis", f"at most {spec.MAX_GSIS}"),
        ("shards", f"<= {spec.MAX_SHARDS:,}"),
        ("max_requests", "<= 10^12"),
        ("random_seed", f"<= {spec.MAX_RANDOM_SEED:,}"),
        ("transport", "one of `boto3`, `fast`"),
        ("name", f"1 to {spec.MAX_TABLE_NAME} characters"),
    ],
)
def test_a_row_carries_the_spec_bound(row: str, expected: str) -> None:
    lines = [line for line in markdown().splitlines() if line.startswith(f"| `{row}` |")]
    assert any(expected in line for line in lines), (expected, lines)


@pytest.mark.parametrize(
    ("items", "expected"),
    [(spec.MAX_ITEMS["batch_write"], "batch_write"), (spec.MAX_ITEMS["transact_write"], "transact_write")],
)
def test_each_operation_kind_says_how_many_items_it_takes(items: int, expected: str) -> None:
    section = markdown().split(f"## `operation (op: {expected})`", 1)[1].split("\n## ", 1)[0]
    assert f"| `items` |  | an integer >= 1 and <= {items} |" in section, section


def test_the_rules_between_keys_are_sentences() -> None:
    text = markdown()
    for sentence in (
        "When `use_existing` is `true`: `existing_table_name` is required.",
        "When `billing` is a mapping: `max_on_demand` is not allowed.",
        "When `seed.items_per_partition` is at least 2: `sort_key` is required.",
        "With `existing_table_name`: `use_existing` must be `true`.",
        "When `target` is `remote` or `target` is a mapping without `local`: `limits` is required, "
        "`limits.max_requests` is required, `limits.max_cost_dollars` is required.",
        "At least one of `max_throttle_ratio`, `max_error_ratio`",
    ):
        assert sentence in text, sentence


def test_every_link_of_the_page_has_its_section() -> None:
    text = markdown()
    anchors = set(re.findall(r"\{#([a-z0-9-]+)\}$", text, re.M))
    links = set(re.findall(r"\]\(#([a-z0-9-]+)\)", text))
    assert links and links <= anchors, sorted(links - anchors)


@pytest.mark.parametrize(
    ("render", "found"),
    [
        (lambda page: value(page, {"type": "string", "format": "email"}, "x"), "format"),
        (lambda page: value(page, {"$ref": "#/$defs/nowhere"}, "x"), "nowhere"),
        (lambda page: value(page, {"type": "frobnicate"}, "x"), "frobnicate"),
        (
            lambda page: _rules({"if": {"properties": {"a": {"pattern": "x"}}}, "then": {"required": ["b"]}}),
            "when a holds",
        ),
        (lambda page: _rules({"anyOf": [{"required": ["a", "b"]}]}), "anyOf"),
        (
            lambda page: _table(page, page.add("open", {"type": "object", "properties": {}})),
            "allows keys it does not list",
        ),
    ],
)
def test_what_the_renderer_cannot_say_is_refused_by_name(render: Any, found: str) -> None:
    with pytest.raises(ValueError, match="scenario reference") as refused:
        render(Page(defs={}))
    assert found in str(refused.value)
