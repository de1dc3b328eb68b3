"""MapperUser with each adapter against the local endpoint: one request event per operation, right outcome."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.env import Environment

import gevent
import pytest

from dynlocust.request.client import RequestFailed
from dynlocust.user_classes.mapper_user import REQUEST_TYPE, MapperUser
from tests.integration.mapper.conftest import Order


def make_user(url: str, **attrs: Any) -> tuple[Any, list[dict[str, Any]]]:
    user_class = type("Shop", (MapperUser,), {"host": url, "abstract": False, **attrs})
    environment = Environment(user_classes=[user_class])
    fired: list[dict[str, Any]] = []
    environment.events.request.add_listener(lambda **kw: fired.append(kw))
    return user_class(environment), fired


def test_repository_operations_are_one_request_each(endpoint: Any, make_table: Any) -> None:
    table = make_table(Order)
    user, fired = make_user(endpoint.url)
    orders = user.repository(Order, table=table)
    created = orders.create(Order(pk="c", sk="1", total=Decimal("2.5")))
    assert orders.get("c", "1") == created
    orders.create_many([Order(pk="c", sk=str(i)) for i in range(2, 12)])
    assert len(orders.query("c", page_size=3)) == 11  # four pages, one request
    assert [(e["request_type"], e["name"]) for e in fired] == [
        (REQUEST_TYPE, "Order.create"),
        (REQUEST_TYPE, "Order.get"),
        (REQUEST_TYPE, "Order.create_many"),
        (REQUEST_TYPE, "Order.query"),
    ]
    assert all(e["exception"] is None and e["context"]["outcome"].ok for e in fired)
    assert all(e["response_time"] > 0 for e in fired)


def test_failures_are_classified_and_returned_as_none(endpoint: Any, make_table: Any) -> None:
    table = make_table(Order)
    user, fired = make_user(endpoint.url)
    orders = user.repository(Order, table=table)
    orders.create(Order(pk="c", sk="1"))
    assert orders.create(Order(pk="c", sk="1")) is None
    assert user.timer.last_outcome.kind == "condition_failed"
    assert isinstance(fired[-1]["exception"], RequestFailed)
    assert fired[-1]["exception"].outcome.code == "ConditionalCheckFailedException"
    user.repository(Order, table="no-such-table").get("c", "1")
    assert fired[-1]["context"]["outcome"].kind == "not_found"


def test_deadline_cuts_a_slow_operation(endpoint: Any) -> None:
    user, fired = make_user(endpoint.url, deadline=0.05)
    assert user.timed("Slow.op", gevent.sleep, 2) is None
    assert fired[-1]["name"] == "Slow.op"
    assert fired[-1]["context"]["outcome"].kind == "timeout"
    assert fired[-1]["response_time"] < 1000


def test_raise_errors_reraises_after_the_event(endpoint: Any, make_table: Any) -> None:
    user, fired = make_user(endpoint.url, raise_errors=True)
    with pytest.raises(ZeroDivisionError):
        user.timed("Math.div", lambda: 1 / 0)
    assert fired[-1]["context"]["outcome"].code == "ZeroDivisionError"


def test_resource_table_adapter(endpoint: Any, make_table: Any) -> None:
    table = make_table(Order)
    user, fired = make_user(endpoint.url)
    orders = user.table(table)
    orders.put_item(Item={"pk": "c", "sk": "1", "n": Decimal(3)})
    got = orders.get_item(Key={"pk": "c", "sk": "1"})
    assert got["Item"] == {"pk": "c", "sk": "1", "n": Decimal(3)}
    assert [e["name"] for e in fired] == [f"Table({table}).put_item", f"Table({table}).get_item"]
    assert orders.target.name == table
