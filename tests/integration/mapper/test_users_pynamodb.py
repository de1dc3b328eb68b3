"""MapperUser's PynamoDB adapter against the local endpoint (PynamoDB is an optional dependency)."""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust import constant
from locust.env import Environment

import gevent
import pytest

from dynlocust.errors import ConfigurationError
from dynlocust.mapper.model import model_of
from dynlocust.user_classes.mapper_user import REQUEST_TYPE, MapperUser
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
    assert vars(PynamoOrder.Meta)["max_retry_attempts"] == 0  # set by configure_pynamodb
    assert model_of(Order).table == "orders"
    assert model.DoesNotExist is PynamoOrder.DoesNotExist  # classes pass through the proxy
    assert model.get("c", "missing") is None
    assert fired[-1]["context"]["outcome"].code == "DoesNotExist"


def test_adapters_are_built_once_per_user_and_shared_by_the_process(endpoint: Any, make_table: Any) -> None:
    PynamoOrder.Meta.table_name = make_table(Order)
    user, _ = make_user(endpoint.url)
    model = user.pynamodb(PynamoOrder)
    connection = PynamoOrder._connection
    assert connection is not None  # built by the adapter, not by the first measured call
    assert user.pynamodb(PynamoOrder) is model
    other = type(user)(user.environment)  # a second user of the same process keeps the class's connection
    assert other.pynamodb(PynamoOrder) is not model and PynamoOrder._connection is connection
    assert user.repository(Order) is user.repository(Order)
    assert user.repository(Order, table="other") is not user.repository(Order)
    elsewhere = type("Elsewhere", (type(user),), {"host": "http://127.0.0.1:9"})(user.environment)
    with pytest.raises(ConfigurationError, match="expected one endpoint per PynamoDB model in a process"):
        elsewhere.pynamodb(PynamoOrder)
    assert PynamoOrder._connection is connection
    table = user.table(PynamoOrder.Meta.table_name)
    assert user.table(PynamoOrder.Meta.table_name) is table
    assert other.table(PynamoOrder.Meta.table_name).target is table.target


def test_save_under_locust_costs_what_a_direct_save_costs(endpoint: Any, make_table: Any) -> None:
    """The defect this guards against: the adapter rebuilt PynamoDB's connection inside measured saves (30x)."""
    PynamoOrder.Meta.table_name = make_table(Order)
    counter = itertools.count()

    def buy(user: Any) -> None:
        i = next(counter)
        user.pynamodb(PynamoOrder).save(PynamoOrder(pk="u", sk=str(i), total=i))  # the adapter asked for per task

    shop = type("Shop", (MapperUser,), {"host": endpoint.url, "wait_time": constant(0), "tasks": [buy]})
    environment = Environment(user_classes=[shop])
    runner = environment.create_local_runner()
    runner.start(1, spawn_rate=10)
    for _ in range(150):  # a few seconds: until 50 saves, at most 15 s on a busy machine
        gevent.sleep(0.1)
        if environment.stats.get("PynamoOrder.save", REQUEST_TYPE).num_requests >= 50:
            break
    runner.quit()
    saves = environment.stats.get("PynamoOrder.save", REQUEST_TYPE)
    assert saves.num_requests >= 10 and saves.num_failures == 0

    direct = []
    for i in range(saves.num_requests):
        start = time.perf_counter()
        PynamoOrder(pk="d", sk=str(i), total=i).save()
        direct.append((time.perf_counter() - start) * 1000)
    direct_median = statistics.median(direct)
    locust_median = saves.get_response_time_percentile(0.5)  # Locust rounds to whole milliseconds
    assert locust_median <= 5 * max(direct_median, 1.0), (locust_median, direct_median)
