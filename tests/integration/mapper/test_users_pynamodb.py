"""MapperUser's PynamoDB adapter against the local endpoint (PynamoDB is an optional dependency)."""

from __future__ import annotations

from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import pytest

from dynlocust.mapper.model import model_of
from tests.integration.mapper.conftest import Order
from tests.integration.mapper.test_users import make_user

pytest.importorskip("pynamodb")

from pynamodb.attributes import NumberAttribute, UnicodeAttribute
from pynamodb.models import Model as PynamoModel


class PynamoOrder(PynamoModel):
    class Meta:
        table_name = "replaced-per-test"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    total = NumberAttribute(default=0)


def test_pynamodb_adapter_drains_lazy_results_and_unwraps_errors(endpoint: Any, make_table: Any) -> None:
    PynamoOrder.Meta.table_name = make_table(Order)
    user, fired = make_user(endpoint.url)
    model = user.pynamodb(PynamoOrder)
    for i in range(5):
        user.timed("PynamoOrder.save", PynamoOrder(pk="c", sk=str(i), total=i).save)
    found = model.query("c")
    assert isinstance(found, list) and [o.sk for o in found] == ["0", "1", "2", "3", "4"]
    assert fired[-1]["name"] == "PynamoOrder.query" and fired[-1]["context"]["outcome"].ok
    condition = PynamoOrder.pk.does_not_exist()
    assert user.timed("PynamoOrder.save", PynamoOrder(pk="c", sk="1").save, condition=condition) is None
    assert fired[-1]["context"]["outcome"].kind == "condition_failed"
    assert PynamoOrder.Meta.max_retry_attempts == 0
    assert model_of(Order).table == "orders"
    assert model.DoesNotExist is PynamoOrder.DoesNotExist  # classes pass through the proxy
    assert model.get("c", "missing") is None
    assert fired[-1]["context"]["outcome"].code == "DoesNotExist"
