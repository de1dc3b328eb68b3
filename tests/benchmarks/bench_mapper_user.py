"""What `MapperUser` adds over the mapper used directly, for each adapter, at 1 and 8 users (target: at most 5%).

The same operations (save, get, query, a transaction, a batch get) run three ways in this process, against the
local endpoint (capacity off, its own process), in a real Locust `Environment` with a local runner and N users
(request events and Locust's statistics on):
- `direct`: the mapper used directly (dynlocust's `Repository`, a PynamoDB model, boto3's `Table`), each call timed
  with `perf_counter`;
- `user`: the same mapper through `MapperUser`'s adapter; timed twice: `reported` is the response time the request
  event carries (what Locust shows), `outer` is `perf_counter` around the adapter call in the task (proxy, deadline
  and event firing included);
- `raw`: the botocore client with hand-written attribute values.
By default each user runs the three ways call by call, each first in turn, so a busy machine's drift and the
queueing for the CPU at 8 users fall on all three alike. `--separate` runs each way as its own phase instead (N
plain greenlets for direct and raw, N users for MapperUser) and adds this process's CPU per call
(`time.process_time`, the endpoint's work not counted); there, at 8 users, latencies are mostly queueing for the
CPU, and a user that spends part of its time outside the measured call keeps fewer calls in flight.

Prints, per adapter, users and operation, the median of each way in ms; user/direct of the reported medians (with
their min-max over rounds) and of the outer medians; CPU per call user/direct (`--separate` only); direct/raw. Then
the cells whose reported/direct median is above 1.05.
Always exits 0: a measurement, not a test. On a shared machine medians swing by 10% or more; rerun before believing
a single cell.

Run: `.venv/bin/python tests/benchmarks/bench_mapper_user.py [--calls 20] [--rounds 12] [--users 1 8]
[--adapters repository pynamodb table] [--endpoint URL] [--separate]`
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import locust  # noqa: F401 - first: gevent patching before botocore
from locust import constant, task
from locust.env import Environment

import gevent
from gevent.event import Event

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.mapper.model import entity, model_of
from dynlocust.mapper.repository import Repository
from dynlocust.plugin.settings import Settings
from dynlocust.request.transport.boto3 import make_client
from dynlocust.user_classes.mapper_user import MapperUser, configure_pynamodb, resource_table

TARGET = 1.05
WAYS = ("direct", "user", "raw")
OPERATIONS = ("save", "get", "query", "transaction", "batch get")
PARTITION = "q50"
SETTINGS = Settings()  # what MapperUser gets in a bare Environment: the direct side is configured the same
TIMEOUTS: dict[str, Any] = {
    "connect_timeout": SETTINGS.connect_timeout,
    "read_timeout": SETTINGS.effective_read_timeout,
}


@entity(table="bench-mapper-user", partition_key="pk", sort_key="sk")
@dataclass
class Item:
    pk: str
    sk: str
    n: int = 0


def wire(pk: str, sk: str, n: int = 0) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": str(n)}}


class Keys:
    """Fresh keys for writes (every way, every call) and the seeded keys reads use."""

    def __init__(self) -> None:
        self._next = itertools.count()

    def fresh(self) -> str:
        return f"w{next(self._next)}"

    batch = [(PARTITION, f"{i:03d}") for i in range(0, 50, 5)]


# --- one adapter: the mapper used directly, its MapperUser adapter, the raw client --------------------------------


class Adapter:
    """The five operations of one mapper, given the mapper object (`direct`) or the user's adapter (`user`)."""

    name = ""

    def __init__(self, table: str, endpoint: str, region: str, keys: Keys) -> None:
        self.table, self.endpoint, self.region, self.keys = table, endpoint, region, keys

    def direct(self) -> Any:
        raise NotImplementedError

    def adapter(self, user: MapperUser) -> Any:
        raise NotImplementedError

    def operations(self, mapper: Any, timed: Callable[..., Any] | None) -> dict[str, Callable[[], Any]]:
        """`timed` is the user's `timed` for operations that are not a method of the mapper (transactions)."""
        raise NotImplementedError


class RepositoryAdapter(Adapter):
    name = "repository"

    def direct(self) -> Any:
        client = make_client(self.endpoint, region=self.region, pool_size=10, **TIMEOUTS)
        return Repository(Item, client, table=self.table)

    def adapter(self, user: MapperUser) -> Any:
        return user.repository(Item, table=self.table)

    def operations(self, mapper: Any, timed: Callable[..., Any] | None) -> dict[str, Callable[[], Any]]:
        k = self.keys
        return {
            "save": lambda: mapper.create(Item("w", k.fresh(), 1)),
            "get": lambda: mapper.get(PARTITION, "007"),
            "query": lambda: mapper.query(PARTITION),
            "transaction": lambda: mapper.create_many([Item("w", k.fresh(), 1), Item("w", k.fresh(), 2)]),
            "batch get": lambda: mapper.get_many(k.batch),
        }


class PynamoDBAdapter(Adapter):
    name = "pynamodb"

    def __init__(self, table: str, endpoint: str, region: str, keys: Keys) -> None:
        super().__init__(table, endpoint, region, keys)
        from pynamodb.attributes import NumberAttribute, UnicodeAttribute
        from pynamodb.models import Model
        from pynamodb.transactions import TransactWrite

        class BenchItem(Model):
            class Meta:
                table_name = table

            pk = UnicodeAttribute(hash_key=True)
            sk = UnicodeAttribute(range_key=True)
            n = NumberAttribute(default=0)

        self.model, self.transact_write = BenchItem, TransactWrite

    def direct(self) -> Any:
        configure_pynamodb(self.model, self.endpoint, region=self.region, **TIMEOUTS)
        return self.model

    def adapter(self, user: MapperUser) -> Any:
        return user.pynamodb(self.model)

    def operations(self, mapper: Any, timed: Callable[..., Any] | None) -> dict[str, Callable[[], Any]]:
        k, model = self.keys, self.model

        def transaction() -> None:
            with self.transact_write(connection=model._get_connection().connection) as write:
                write.save(model("w", k.fresh(), n=1))
                write.save(model("w", k.fresh(), n=2))

        return {
            "save": lambda: mapper.save(model("w", k.fresh(), n=1)),
            "get": lambda: mapper.get(PARTITION, "007"),
            "query": (lambda: mapper.query(PARTITION)) if timed else (lambda: list(mapper.query(PARTITION))),
            "transaction": (lambda: timed("BenchItem.transact", transaction)) if timed else transaction,
            "batch get": (lambda: mapper.batch_get(k.batch)) if timed else (lambda: list(mapper.batch_get(k.batch))),
        }


class TableAdapter(Adapter):
    name = "table"

    def direct(self) -> Any:
        return resource_table(self.endpoint, self.table, SETTINGS)

    def adapter(self, user: MapperUser) -> Any:
        return user.table(self.table)

    def operations(self, mapper: Any, timed: Callable[..., Any] | None) -> dict[str, Callable[[], Any]]:
        from boto3.dynamodb.conditions import Key

        k, table = self.keys, self.table
        client = mapper.meta.client  # the resource's client: Python values in, Python values out

        def transaction() -> Any:
            puts = [{"Put": {"TableName": table, "Item": {"pk": "w", "sk": k.fresh(), "n": n}}} for n in (1, 2)]
            return client.transact_write_items(TransactItems=puts)

        def batch_get() -> Any:
            return client.batch_get_item(RequestItems={table: {"Keys": [{"pk": p, "sk": s} for p, s in k.batch]}})

        return {
            "save": lambda: mapper.put_item(Item={"pk": "w", "sk": k.fresh(), "n": Decimal(1)}),
            "get": lambda: mapper.get_item(Key={"pk": PARTITION, "sk": "007"}),
            "query": lambda: mapper.query(KeyConditionExpression=Key("pk").eq(PARTITION)),
            "transaction": (lambda: timed(f"Table({table}).transact", transaction)) if timed else transaction,
            "batch get": (lambda: timed(f"Table({table}).batch_get", batch_get)) if timed else batch_get,
        }


ADAPTERS: dict[str, type[Adapter]] = {a.name: a for a in (RepositoryAdapter, PynamoDBAdapter, TableAdapter)}


def raw_operations(client: Any, table: str, keys: Keys) -> dict[str, Callable[[], Any]]:
    def query() -> list[dict[str, Any]]:
        request = {
            "TableName": table,
            "KeyConditionExpression": "#k = :v",
            "ExpressionAttributeNames": {"#k": "pk"},
            "ExpressionAttributeValues": {":v": {"S": PARTITION}},
        }
        return client.query(**request)["Items"]

    def transaction() -> Any:
        puts = [{"Put": {"TableName": table, "Item": wire("w", keys.fresh(), n)}} for n in (1, 2)]
        return client.transact_write_items(TransactItems=puts)

    batch = [{"pk": {"S": p}, "sk": {"S": s}} for p, s in keys.batch]
    return {
        "save": lambda: client.put_item(TableName=table, Item=wire("w", keys.fresh(), 1)),
        "get": lambda: client.get_item(TableName=table, Key={"pk": {"S": PARTITION}, "sk": {"S": "007"}}),
        "query": query,
        "transaction": transaction,
        "batch get": lambda: client.batch_get_item(RequestItems={table: {"Keys": batch}}),
    }


# --- the phases: a budget of calls shared by N workers (greenlets or Locust users) --------------------------------


@dataclass
class Phase:
    """`go` is set while calls remain; idle Locust users wait on it without using CPU."""

    operation: str = ""
    remaining: int = 0
    target: int = 0
    paired: bool = False
    outer_ms: list[float] = field(default_factory=list)
    go: Event = field(default_factory=Event)
    done: Event = field(default_factory=Event)

    def take(self) -> bool:
        if self.remaining <= 0:
            return False
        self.remaining -= 1
        return True

    def record(self, start: float) -> None:
        self.outer_ms.append((time.perf_counter() - start) * 1000)
        self.check_done()

    def check_done(self) -> None:
        if self.remaining <= 0 and len(self.outer_ms) >= self.target:
            self.go.clear()
            self.done.set()

    def begin(self, operation: str, calls: int, *, paired: bool = False) -> None:
        self.operation, self.remaining, self.target, self.outer_ms = operation, calls, calls, []
        self.paired, self.taken = paired, itertools.count()
        self.paired_ms: dict[str, list[float]] = {way: [] for way in WAYS}
        self.done.clear()
        self.go.set()


def run_greenlets(operation: Callable[[], Any], workers: int, calls: int) -> tuple[list[float], float]:
    """N greenlets share `calls`; returns each call's time (ms) and this process's CPU ms per call."""
    phase = Phase()
    phase.begin("-", calls)

    def worker() -> None:
        while phase.take():
            start = time.perf_counter()
            operation()
            phase.record(start)

    cpu = time.process_time()
    gevent.joinall([gevent.spawn(worker) for _ in range(workers)], raise_error=True)
    return phase.outer_ms, (time.process_time() - cpu) * 1000 / calls


class LocustSide:
    """A real Locust environment with N `MapperUser`s whose task runs the current phase's operation."""

    def __init__(
        self,
        adapter: Adapter,
        endpoint: str,
        users: int,
        direct: dict[str, Callable[[], Any]],
        raw: dict[str, Callable[[], Any]],
    ) -> None:
        self.phase = phase = Phase()
        self.reported: list[float] = []
        self.failures: list[str] = []

        class Bench(MapperUser):
            host = endpoint
            wait_time = constant(0)

            def on_start(self) -> None:
                self.bench_ops = adapter.operations(adapter.adapter(self), self.timed)

            @task
            def work(self) -> None:
                phase.go.wait()
                if not phase.take():
                    return
                if not phase.paired:
                    start = time.perf_counter()
                    self.bench_ops[phase.operation]()
                    phase.record(start)
                    return
                turn = next(phase.taken) % 3  # each way goes first in turn
                for way in WAYS[turn:] + WAYS[:turn]:
                    ops = self.bench_ops if way == "user" else direct if way == "direct" else raw
                    start = time.perf_counter()
                    ops[phase.operation]()
                    phase.paired_ms[way].append((time.perf_counter() - start) * 1000)
                phase.outer_ms.append(phase.paired_ms["user"][-1])
                phase.check_done()

        self.environment = Environment(user_classes=[Bench])
        self.environment.events.request.add_listener(self._on_request)
        self.runner = self.environment.create_local_runner()
        self.runner.start(users, spawn_rate=1000)
        for _ in range(500):  # spawned and started (on_start done) within 5 s
            if self.runner.user_count >= users:
                break
            gevent.sleep(0.01)
        gevent.sleep(0.2)

    def _on_request(self, name: str, response_time: float, exception: Any, **_: Any) -> None:
        if exception is not None:
            self.failures.append(f"{name}: {exception!r}")
        self.reported.append(response_time)

    def run(self, operation: str, calls: int, *, paired: bool = False) -> tuple[list[float], list[float], float]:
        """Reported and outer times (ms) of `calls` operations, and this process's CPU ms per call.

        `paired`: each call is a triple (direct, user, raw, in turn first) in the same user; `phase.paired_ms` has them.
        """
        self.reported = []
        cpu = time.process_time()
        self.phase.begin(operation, calls, paired=paired)
        if not self.phase.done.wait(timeout=120):
            raise RuntimeError(f"MapperUser phase {operation!r} did not finish in 120 s")
        return self.phase.outer_ms, self.reported, (time.process_time() - cpu) * 1000 / calls

    def stop(self) -> None:
        self.phase.go.set()  # release the waiting users so they can be stopped
        self.runner.quit()


# --- the table and the report --------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def create_table(client: Any, table: str) -> None:
    client.create_table(**model_of(Item).create_table_request(table))
    client.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    for start in range(0, 50, 25):
        puts = [{"PutRequest": {"Item": wire(PARTITION, f"{i:03d}", i)}} for i in range(start, start + 25)]
        client.batch_write_item(RequestItems={table: puts})


def measure_cell(
    adapter: Adapter, raw: dict[str, Callable[[], Any]], endpoint: str, users: int, args: Any
) -> list[tuple[str, float]]:
    """One adapter at one user count: a line per operation, with its median reported/direct ratio."""
    direct = adapter.operations(adapter.direct(), None)
    side = LocustSide(adapter, endpoint, users, direct, raw)
    lines = []
    try:
        for operation in OPERATIONS:
            for warm in (direct, raw):  # warm-up: every pooled connection open
                run_greenlets(warm[operation], users, users * 2)
            side.run(operation, users * 2)
            times: dict[str, list[float]] = {"direct": [], "outer": [], "reported": [], "raw": []}
            cpu: dict[str, list[float]] = {"direct": [], "user": [], "raw": []}
            ratios: list[float] = []
            for round_ in range(args.rounds):
                this: dict[str, list[float]] = {}
                if args.separate:
                    for way in WAYS[round_ % 3 :] + WAYS[: round_ % 3]:  # each way goes first in turn
                        if way == "user":
                            this["outer"], this["reported"], used = side.run(operation, args.calls)
                        else:
                            this[way], used = run_greenlets(
                                (direct if way == "direct" else raw)[operation], users, args.calls
                            )
                        cpu[way].append(used)
                else:
                    this["outer"], this["reported"], _ = side.run(operation, args.calls, paired=True)
                    this["direct"], this["raw"] = side.phase.paired_ms["direct"], side.phase.paired_ms["raw"]
                for name, values in this.items():
                    times[name].extend(values)
                ratios.append(median(this["reported"]) / median(this["direct"]))
            d, reported = median(times["direct"]), median(times["reported"])
            cpu_ratio = f"{median(cpu['user']) / median(cpu['direct']):>9.3f}x" if args.separate else f"{'-':>10}"
            line = (
                f"{adapter.name:<11}{users:>6}  {operation:<12}{d:>9.2f}{reported:>10.2f}{median(times['raw']):>8.2f}"
                f"{reported / d:>9.3f}x {min(ratios):>5.2f}-{max(ratios):<5.2f}{median(times['outer']) / d:>8.3f}x"
                f"{cpu_ratio}{d / median(times['raw']):>9.2f}x"
            )
            lines.append((line, reported / d))
            print(line, flush=True)
    finally:
        side.stop()
    if side.failures:
        print(f"  {len(side.failures)} failed MapperUser calls, first: {side.failures[0]}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls per way per round (default 20)")
    parser.add_argument("--rounds", type=int, default=12, help="rounds, each way first in turn (default 12)")
    parser.add_argument("--users", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--adapters", nargs="+", choices=sorted(ADAPTERS), default=list(ADAPTERS))
    parser.add_argument("--endpoint")
    parser.add_argument(
        "--separate",
        action="store_true",
        help="run each way as its own phase (N greenlets or N users) instead of call by call in the same users; "
        "adds CPU per call",
    )
    args = parser.parse_args()
    local = None if args.endpoint else LocalEndpoint(capacity=False).start()
    endpoint = args.endpoint or local.url  # type: ignore[union-attr]
    region = "us-east-1"
    client = make_client(endpoint, region=region, connect_timeout=2, read_timeout=10, pool_size=10)
    table = f"bench-mapper-user-{uuid.uuid4().hex[:8]}"
    keys = Keys()
    mode = "each way its own phase" if args.separate else "the three ways call by call in the same Locust users"
    print(f"MapperUser vs the mapper used directly vs raw, {args.rounds} rounds x {args.calls} calls per way, {mode}")
    print(
        f"{'adapter':<11}{'users':>6}  {'operation':<12}{'direct':>9}{'reported':>10}{'raw':>8}"
        f"{'reported/direct (spread)':>27}{'outer':>8}{'cpu/call':>10}{'direct/raw':>11}"
    )
    lines: list[tuple[str, float]] = []
    try:
        create_table(client, table)
        raw = raw_operations(client, table, keys)
        for name in args.adapters:
            adapter = ADAPTERS[name](table, endpoint, region, keys)
            for users in args.users:
                lines += measure_cell(adapter, raw, endpoint, users, args)
    finally:
        try:
            client.delete_table(TableName=table)
        finally:
            if local is not None:
                local.stop()
    over = [line for line, ratio in lines if ratio > TARGET]
    print(f"\nmedians in ms; cells whose reported/direct median is above {TARGET:.2f}x: {len(over)} of {len(lines)}")
    for line in over:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
