from __future__ import annotations

import pytest

from dynlocust.local.units import Consumed, item_size, number_size, read_units, value_size, write_units


@pytest.mark.parametrize(
    ("text", "size"),
    # zero has no significant digit once zeros are trimmed, as the guide's rule says: just the 1-byte overhead;
    # digits count in pairs aligned on the decimal point, and a sign is one more byte (dynalite's recorded tests)
    [
        *[("0", 1), ("1", 2), ("12", 2), ("123", 3), ("1234", 3), ("1000", 2), ("0.001", 2)],
        *[("-12.5", 4), ("1.2", 3), ("3.14159", 5), ("-3", 3), ("0.0012", 2)],
    ],
)
def test_number_size(text: str, size: int) -> None:
    assert number_size(text) == size


@pytest.mark.parametrize(
    ("av", "size"),
    [
        ({"S": "abc"}, 3),
        ({"S": "é"}, 2),
        ({"B": "AAAA"}, 3),
        ({"B": "AA=="}, 1),
        ({"BOOL": True}, 1),
        ({"NULL": True}, 1),
        ({"SS": ["a", "bb"]}, 3),
        ({"L": [{"S": "ab"}, {"N": "1"}]}, 3 + 1 + 2 + 1 + 2),
        ({"M": {"k": {"S": "ab"}}}, 3 + 1 + 1 + 2),
    ],
)
def test_value_size(av: dict, size: int) -> None:
    assert value_size(av) == size


def test_item_size_counts_names_and_values() -> None:
    assert item_size({"pk": {"S": "a"}, "n": {"N": "12"}}) == 2 + 1 + 1 + 2
    assert item_size(None) == 0


@pytest.mark.parametrize(("size", "units"), [(0, 1.0), (1, 1.0), (1024, 1.0), (1025, 2.0), (3 * 1024, 3.0)])
def test_write_units(size: int, units: float) -> None:
    assert write_units(size) == units


@pytest.mark.parametrize(
    ("size", "consistent", "units"),
    [(0, False, 0.5), (4096, True, 1.0), (4097, True, 2.0), (4097, False, 1.0), (10_000, False, 1.5)],
)
def test_read_units(size: int, consistent: bool, units: float) -> None:
    assert read_units(size, consistent) == units


def test_consumed_render_modes() -> None:
    c = Consumed("t", "write")
    c.add_table(2.0)
    c.add_gsi("g", 1.0)
    assert c.render(None) is None
    assert c.render("TOTAL") == {"TableName": "t", "CapacityUnits": 3.0}
    full = c.render("INDEXES")
    assert full is not None
    assert full["Table"]["CapacityUnits"] == 2.0
    # INDEXES without WriteCapacityUnits, as the AWS CLI's batch-write-item example shows; transactions carry them
    assert full == {
        "TableName": "t",
        "CapacityUnits": 3.0,
        "Table": {"CapacityUnits": 2.0},
        "GlobalSecondaryIndexes": {"g": {"CapacityUnits": 1.0}},
    }
    assert c.render("INDEXES", per_kind=True) == {
        "TableName": "t",
        "CapacityUnits": 3.0,
        "WriteCapacityUnits": 3.0,
        "Table": {"CapacityUnits": 2.0, "WriteCapacityUnits": 2.0},
        "GlobalSecondaryIndexes": {"g": {"CapacityUnits": 1.0, "WriteCapacityUnits": 1.0}},
    }
