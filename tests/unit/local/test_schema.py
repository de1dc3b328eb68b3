"""Issue 29/34: a refused CreateTable, UpdateTable or TagResource changes nothing, and says what the service says.

Each request goes over HTTP (raw JSON: botocore would refuse some of these before sending) to a real in-thread
endpoint. Expected messages are the service's, as recorded against it by dynalite's tests and by ScyllaDB
Alternator's tests (which are written to pass on DynamoDB); each refused request is followed by DescribeTable and
ListTagsOfResource, which must show the table exactly as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.test_input_limits import call

TARGET = "DynamoDB_20120810."
VALIDATION = "com.amazon.coral.validate#ValidationException"
HEAD = "One or more parameter values were invalid: "
NOTHING_TO_UPDATE = (
    "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
    "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
    "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
)


def gsi(name: str, *keys: tuple[str, str], projection: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [{"AttributeName": a, "KeyType": k} for a, k in keys],
        "Projection": projection or {"ProjectionType": "ALL"},
    }


def attr(name: str, kind: str | None) -> dict[str, Any]:
    return {"AttributeName": name, **({"AttributeType": kind} if kind is not None else {})}


@pytest.fixture
def table(endpoint: Any) -> dict[str, Any]:
    """A provisioned table pk (S) with GSI byg on g (S) and one tag; returns its ARN and what describes it."""
    status, body = call(
        endpoint,
        "CreateTable",
        {
            "TableName": "tab1",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [attr("pk", "S"), attr("g", "S")],
            "GlobalSecondaryIndexes": [
                {
                    **gsi("byg", ("g", "HASH")),
                    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                }
            ],
            "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
            "Tags": [{"Key": "team", "Value": "a"}],
        },
    )
    assert status == 200, body
    call(endpoint, "PutItem", {"TableName": "tab1", "Item": {"pk": {"S": "1"}, "g": {"S": "x"}}})
    return {"arn": body["TableDescription"]["TableArn"], "state": state(endpoint, body["TableDescription"]["TableArn"])}


def state(endpoint: Any, arn: str) -> tuple[Any, Any]:
    """What a client can see of the table: its description and its tags."""
    status, desc = call(endpoint, "DescribeTable", {"TableName": "tab1"})
    assert status == 200, desc
    status, tags = call(endpoint, "ListTagsOfResource", {"ResourceArn": arn})
    assert status == 200, tags
    return desc, tags


def new_index(name: str = "byh", key: str = "h", **over: Any) -> dict[str, Any]:
    spec = {**gsi(name, (key, "HASH")), "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}
    return {"GlobalSecondaryIndexUpdates": [{"Create": {**spec, **over}}]}


# (UpdateTable members besides TableName, expected message); each must leave the table as it was
UPDATE_CASES = [
    pytest.param({}, NOTHING_TO_UPDATE, id="empty"),
    pytest.param({"GlobalSecondaryIndexUpdates": []}, NOTHING_TO_UPDATE, id="empty-index-updates"),
    pytest.param({"AttributeDefinitions": [attr("h", "S")]}, NOTHING_TO_UPDATE, id="definitions-only"),
    pytest.param(
        {"AttributeDefinitions": [attr("h", None)], **new_index()},
        "1 validation error detected: Value null at 'attributeDefinitions.1.member.attributeType' failed to "
        "satisfy constraint: Member must not be null",
        id="definition-without-type",
    ),
    pytest.param(
        {"AttributeDefinitions": [attr("h", "BOGUS")], **new_index()},
        "1 validation error detected: Value 'BOGUS' at 'attributeDefinitions.1.member.attributeType' failed to "
        "satisfy constraint: Member must satisfy enum value set: [B, N, S]",
        id="definition-bogus-type",
    ),
    pytest.param(
        {"AttributeDefinitions": [attr("h", "S"), {}], **new_index()},
        "2 validation errors detected: Value null at 'attributeDefinitions.2.member.attributeType' failed to "
        "satisfy constraint: Member must not be null; Value null at 'attributeDefinitions.2.member.attributeName' "
        "failed to satisfy constraint: Member must not be null",
        id="empty-definition",
    ),
    pytest.param(
        {
            "AttributeDefinitions": [attr("g", "N")],
            **new_index("byg2", "g"),
        },
        f"{HEAD}Attributes cannot be redefined. Please check that your attribute has the same type as previously "
        "defined. Existing schema: Schema:[SchemaElement: key{g:S:HASH}] New schema: "
        "Schema:[SchemaElement: key{g:N:HASH}]",
        id="attribute-redefined",
    ),
    pytest.param(
        {"AttributeDefinitions": [attr("h", "S")], **new_index(Projection={"ProjectionType": "INCLUDE"})},
        f"{HEAD}ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
        id="include-without-non-key",
    ),
    pytest.param(
        {
            "AttributeDefinitions": [attr("h", "S")],
            **new_index(Projection={"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]}),
        },
        f"{HEAD}ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified",
        id="keys-only-with-non-key",
    ),
    pytest.param(
        {
            "AttributeDefinitions": [attr("h", "S")],
            **new_index(Projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b", "a"]}),
        },
        f"{HEAD}Duplicate attribute in NonKeyAttributes: a",
        id="duplicate-non-key",
    ),
    pytest.param(
        {"GlobalSecondaryIndexUpdates": [{}]},
        f"{HEAD}One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
        "GlobalSecondaryIndexUpdate.Delete must not be null",
        id="index-update-without-action",
    ),
    pytest.param(
        {
            "GlobalSecondaryIndexUpdates": [
                {
                    "Update": {
                        "IndexName": "byg",
                        "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2},
                    }
                },
                {"Delete": {"IndexName": "byg"}},
            ]
        },
        f"{HEAD}Only one global secondary index update per index is allowed simultaneously. Index: byg",
        id="two-updates-of-one-index",
    ),
    pytest.param(
        {"BillingMode": "BOGUS"},
        "1 validation error detected: Value 'BOGUS' at 'billingMode' failed to satisfy constraint: "
        "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]",
        id="bogus-billing-mode",
    ),
    pytest.param(
        # a valid first change followed by a refused one: the first must not stick
        {
            "ProvisionedThroughput": {"ReadCapacityUnits": 9, "WriteCapacityUnits": 9},
            "DeletionProtectionEnabled": True,
            "AttributeDefinitions": [attr("h", "S")],
            "GlobalSecondaryIndexUpdates": [
                {"Delete": {"IndexName": "byg"}},
                {"Create": gsi("byh", ("h", "RANGE"), ("h", "HASH"))},
            ],
        },
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        id="valid-changes-then-a-refused-one",
    ),
    pytest.param(
        {
            "AttributeDefinitions": [attr("h", "S"), attr("i", "S")],
            "GlobalSecondaryIndexUpdates": [
                {
                    "Create": {
                        **gsi("byh", ("h", "HASH"), ("i", "RANGE"), ("h", "HASH")),
                        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                    }
                }
            ],
        },
        f"{HEAD}Index KeySchema: HASH key attributes must precede RANGE key attributes",
        id="multi-attribute-hash-after-range",
    ),
    pytest.param(
        {
            "AttributeDefinitions": [attr("h", "S")],
            "GlobalSecondaryIndexUpdates": [
                {
                    "Create": {
                        **gsi("byh", ("h", "HASH"), ("h", "RANGE")),
                        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                    }
                }
            ],
        },
        "Both the Hash Key and the Range Key element in the KeySchema have the same name",
        id="hash-and-range-same-name",
    ),
    pytest.param(
        {
            "AttributeDefinitions": [attr(f"h{i}", "S") for i in range(5)],
            "GlobalSecondaryIndexUpdates": [
                {
                    "Create": {
                        **gsi("byh", *[(f"h{i}", "HASH") for i in range(5)]),
                        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                    }
                }
            ],
        },
        f"{HEAD}Index KeySchema: at most 4 HASH key attributes are allowed, found 5",
        id="five-hash-attributes",
    ),
    pytest.param(
        {
            "AttributeDefinitions": [attr("h", "S")] + [attr(f"r{i}", "S") for i in range(5)],
            "GlobalSecondaryIndexUpdates": [
                {
                    "Create": {
                        **gsi("byh", ("h", "HASH"), *[(f"r{i}", "RANGE") for i in range(5)]),
                        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                    }
                }
            ],
        },
        f"{HEAD}Index KeySchema: at most 4 RANGE key attributes are allowed, found 5",
        id="five-range-attributes",
    ),
]


@pytest.mark.parametrize(("members", "message"), UPDATE_CASES)
def test_a_refused_update_table_changes_nothing(
    endpoint: Any, table: dict[str, Any], no_traceback: None, members: dict[str, Any], message: str
) -> None:
    status, body = call(endpoint, "UpdateTable", {"TableName": "tab1", **members})
    assert (status, body) == (400, {"__type": VALIDATION, "message": message})
    assert state(endpoint, table["arn"]) == table["state"]
    # and the table still takes a valid UpdateTable (a half-stored definition once made every later one a 500)
    status, body = call(
        endpoint, "UpdateTable", {"TableName": "tab1", "AttributeDefinitions": [attr("h", "S")], **new_index()}
    )
    assert status == 200, body
    assert [g["IndexName"] for g in body["TableDescription"]["GlobalSecondaryIndexes"]] == ["byg", "byh"]


def test_a_valid_update_table_still_applies_every_change(endpoint: Any, table: dict[str, Any]) -> None:
    status, body = call(
        endpoint,
        "UpdateTable",
        {
            "TableName": "tab1",
            "ProvisionedThroughput": {"ReadCapacityUnits": 9, "WriteCapacityUnits": 8},
            "AttributeDefinitions": [attr("h", "N")],
            "GlobalSecondaryIndexUpdates": [
                {"Delete": {"IndexName": "byg"}},
                new_index()["GlobalSecondaryIndexUpdates"][0],
            ],
        },
    )
    assert status == 200, body
    desc = call(endpoint, "DescribeTable", {"TableName": "tab1"})[1]["Table"]
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    assert [g["IndexName"] for g in desc["GlobalSecondaryIndexes"]] == ["byh"]
    assert {"AttributeName": "h", "AttributeType": "N"} in desc["AttributeDefinitions"]


CREATE = {
    "TableName": "tab2",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [attr("pk", "S")],
    "BillingMode": "PAY_PER_REQUEST",
}


@pytest.mark.parametrize(
    ("members", "message"),
    [
        pytest.param(
            {"AttributeDefinitions": [attr("pk", None)]},
            "1 validation error detected: Value null at 'attributeDefinitions.1.member.attributeType' failed to "
            "satisfy constraint: Member must not be null",
            id="definition-without-type",
        ),
        pytest.param(
            {"AttributeDefinitions": [attr("pk", "BOGUS")]},
            "1 validation error detected: Value 'BOGUS' at 'attributeDefinitions.1.member.attributeType' failed to "
            "satisfy constraint: Member must satisfy enum value set: [B, N, S]",
            id="definition-bogus-type",
        ),
        pytest.param(
            {"Tags": [{"Key": "team"}]},
            "1 validation error detected: Value null at 'tags.1.member.value' failed to satisfy constraint: "
            "Member must not be null",
            id="tag-without-value",
        ),
        pytest.param(
            {
                "AttributeDefinitions": [attr("pk", "S"), attr("g", "S")],
                "GlobalSecondaryIndexes": [gsi("byg", ("g", "HASH"), projection={"ProjectionType": "INCLUDE"})],
            },
            f"{HEAD}ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
            id="include-without-non-key",
        ),
        pytest.param(
            {
                "AttributeDefinitions": [attr("pk", "S"), attr("g", "S")],
                "GlobalSecondaryIndexes": [
                    gsi("byg", ("g", "HASH"), projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "x"]})
                ],
            },
            f"{HEAD}Duplicate attribute in NonKeyAttributes: x",
            id="duplicate-non-key",
        ),
        pytest.param(
            {
                "AttributeDefinitions": [attr("pk", "S"), attr("g", "S")],
                "GlobalSecondaryIndexes": [gsi("byg", ("g", "HASH"), ("g", "RANGE"))],
            },
            "Both the Hash Key and the Range Key element in the KeySchema have the same name",
            id="gsi-hash-and-range-same-name",
        ),
    ],
)
def test_a_refused_create_table_creates_nothing(
    endpoint: Any, no_traceback: None, members: dict[str, Any], message: str
) -> None:
    status, body = call(endpoint, "CreateTable", {**CREATE, **members})
    assert (status, body) == (400, {"__type": VALIDATION, "message": message})
    assert call(endpoint, "ListTables", {})[1]["TableNames"] == []
    assert call(endpoint, "CreateTable", CREATE)[0] == 200  # the name was not taken by the refused request


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        pytest.param(
            [{"Key": "new", "Value": "1"}, {"Key": "team"}],
            "1 validation error detected: Value null at 'tags.2.member.value' failed to satisfy constraint: "
            "Member must not be null",
            id="second-tag-without-value",
        ),
        pytest.param(
            [{"Value": "1"}],
            "1 validation error detected: Value null at 'tags.1.member.key' failed to satisfy constraint: "
            "Member must not be null",
            id="tag-without-key",
        ),
    ],
)
def test_a_refused_tag_resource_tags_nothing(
    endpoint: Any, table: dict[str, Any], no_traceback: None, tags: list[dict[str, Any]], message: str
) -> None:
    status, body = call(endpoint, "TagResource", {"ResourceArn": table["arn"], "Tags": tags})
    assert (status, body) == (400, {"__type": VALIDATION, "message": message})
    assert state(endpoint, table["arn"]) == table["state"]
