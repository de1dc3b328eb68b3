"""Legacy conditions (Expected, QueryFilter, ScanFilter): operand counts and types per operator (issue 34)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import create_table, wire

INVALID = "One or more parameter values were invalid: "


def scan_filter(op: str, *values: dict[str, Any]) -> dict[str, Any]:
    return {"x": {"ComparisonOperator": op, "AttributeValueList": list(values)}}


@pytest.mark.parametrize(
    ("op", "values", "message"),
    [
        ("CONTAINS", [{"S": "a"}, {"S": "b"}], "Invalid number of argument(s) for the CONTAINS ComparisonOperator"),
        ("NULL", [{"S": "a"}], "Invalid number of argument(s) for the NULL ComparisonOperator"),
        ("BETWEEN", [{"N": "1"}], "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
        ("CONTAINS", [{"SS": ["a"]}], "ComparisonOperator CONTAINS is not valid for SS AttributeValue type"),
        ("NOT_CONTAINS", [{"L": []}], "ComparisonOperator NOT_CONTAINS is not valid for L AttributeValue type"),
        ("LT", [{"BOOL": True}], "ComparisonOperator LT is not valid for BOOL AttributeValue type"),
        ("GE", [{"NULL": True}], "ComparisonOperator GE is not valid for NULL AttributeValue type"),
        ("IN", [{"S": "a"}, {"M": {}}], "ComparisonOperator IN is not valid for M AttributeValue type"),
        ("BETWEEN", [{"N": "1"}, {"NS": ["2"]}], "ComparisonOperator BETWEEN is not valid for NS AttributeValue type"),
        ("BEGINS_WITH", [{"N": "1"}], "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
    ],
)
@pytest.mark.parametrize("member", ["ScanFilter", "Expected"])
def test_operand_counts_and_types(
    endpoint: Any, client: Any, member: str, op: str, values: list[dict[str, Any]], message: str
) -> None:
    create_table(client)
    if member == "ScanFilter":
        op_name, req = "Scan", {"TableName": "tab1", "ScanFilter": scan_filter(op, *values)}
    else:
        item = {"pk": {"S": "a"}, "sk": {"N": "1"}}
        op_name, req = "PutItem", {"TableName": "tab1", "Item": item, "Expected": scan_filter(op, *values)}
    got = wire(endpoint, op_name, req)
    assert got == (400, {"__type": "com.amazon.coral.validate#ValidationException", "message": INVALID + message})


@pytest.mark.parametrize(
    ("op", "values"),
    [
        ("CONTAINS", [{"BOOL": True}]),
        ("CONTAINS", [{"N": "1"}]),
        ("EQ", [{"SS": ["a"]}]),
        ("NE", [{"L": []}]),
        ("BEGINS_WITH", [{"B": "YQ=="}]),
        ("IN", [{"S": "a"}, {"N": "1"}]),
    ],
)
def test_operand_types_the_service_takes(endpoint: Any, client: Any, op: str, values: list[dict[str, Any]]) -> None:
    create_table(client)
    status, body = wire(endpoint, "Scan", {"TableName": "tab1", "ScanFilter": scan_filter(op, *values)})
    assert (status, body.get("Count")) == (200, 0), body
