"""A `dynlocust compare --pairs` module, as a team would write one: boto3's `Table` as its data layer.

`pairs(context)` creates its table (named with `context.prefix`) and returns its rows; `teardown(context)` deletes
the table whatever happened.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import boto3

from dynlocust.compare.cli import Case, PairContext

CREATED: list[str] = []  # tables this module made, so a test can check that teardown ran


def _table(context: PairContext) -> str:
    return f"{context.prefix}-carts"


def pairs(context: PairContext) -> list[Case]:
    name = _table(context)
    context.client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    context.client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    CREATED.append(name)
    credentials = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}
    carts = boto3.resource("dynamodb", endpoint_url=context.endpoint, region_name=context.region, **credentials)
    table = carts.Table(name)
    table.put_item(Item={"id": "seed", "total": Decimal(7)})

    def raw_put(cart_id: str) -> Any:
        return context.client.put_item(TableName=name, Item={"id": {"S": cart_id}, "total": {"N": "3"}})

    def raw_get(_: Any) -> Any:
        item = context.client.get_item(TableName=name, Key={"id": {"S": "seed"}})["Item"]
        return {"id": item["id"]["S"], "total": Decimal(item["total"]["N"])}

    return [
        Case("save a cart", raw_put, lambda cart_id: table.put_item(Item={"id": cart_id, "total": Decimal(3)}), str),
        Case("load a cart", raw_get, lambda _: table.get_item(Key={"id": "seed"})["Item"]),
    ]


def teardown(context: PairContext) -> None:
    context.client.delete_table(TableName=_table(context))
