"""Table lifecycle: create (tagged with the run id), time to ACTIVE, seed, and a teardown that only deletes what
this run created.

The owned-table guard is the tag: teardown re-reads each table's tags and deletes it only if `dynlocust:run-id`
equals this run's id, so a name collision or a bug can never delete somebody else's table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gevent
from gevent.pool import Pool

from dynlocust.errors import DynlocustError
from dynlocust.operations import seed_items
from dynlocust.scenario.model import Gsi, Scenario, Table, Throughput

RUN_TAG = "dynlocust:run-id"
BATCH = 25
SEED_RESENDS = 50
"""Seeding is set-up, not measurement: unprocessed items are sent again (bounded), with a short pause."""

log = logging.getLogger(__name__)


class TableError(DynlocustError):
    """A table could not be created, reached, seeded or removed as the run needs."""


def physical_name(table: Table, run_id: str) -> str:
    if table.use_existing:
        assert table.existing_table_name is not None, "the loader requires existing_table_name"
        return table.existing_table_name
    return f"{table.name}-{run_id}"


def _throughput(value: Throughput | None, read_key: str, write_key: str) -> dict[str, int] | None:
    return None if value is None else {read_key: value.read, write_key: value.write}


def _key_schema(partition: Any, sort: Any) -> list[dict[str, str]]:
    schema = [{"AttributeName": partition.name, "KeyType": "HASH"}]
    if sort is not None:
        schema.append({"AttributeName": sort.name, "KeyType": "RANGE"})
    return schema


def _gsi_definition(gsi: Gsi, billing: str) -> dict[str, Any]:
    projection: dict[str, Any] = {"ProjectionType": gsi.projection.upper()}
    if gsi.projection == "include":
        projection["NonKeyAttributes"] = list(gsi.non_key_attributes)
    definition: dict[str, Any] = {
        "IndexName": gsi.name,
        "KeySchema": _key_schema(gsi.partition_key, gsi.sort_key),
        "Projection": projection,
    }
    if billing == "PROVISIONED":
        provisioned = gsi.provisioned or Throughput(5, 5)
        definition["ProvisionedThroughput"] = _throughput(provisioned, "ReadCapacityUnits", "WriteCapacityUnits")
    if gsi.max_on_demand is not None:
        definition["OnDemandThroughput"] = _throughput(gsi.max_on_demand, "MaxReadRequestUnits", "MaxWriteRequestUnits")
    return definition


def create_table_request(table: Table, name: str, run_id: str) -> dict[str, Any]:
    """The CreateTable arguments for a scenario table (public so tests and dry runs can inspect it)."""
    attributes = {table.partition_key.name: table.partition_key.type}
    if table.sort_key is not None:
        attributes[table.sort_key.name] = table.sort_key.type
    for gsi in table.gsis:
        for attribute in (gsi.partition_key, gsi.sort_key):
            if attribute is not None:
                attributes[attribute.name] = attribute.type
    billing = "PROVISIONED" if table.billing == "provisioned" else "PAY_PER_REQUEST"
    request: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in attributes.items()],
        "KeySchema": _key_schema(table.partition_key, table.sort_key),
        "BillingMode": billing,
        "Tags": [{"Key": RUN_TAG, "Value": run_id}],
    }
    if billing == "PROVISIONED":
        request["ProvisionedThroughput"] = _throughput(
            table.provisioned or Throughput(5, 5), "ReadCapacityUnits", "WriteCapacityUnits"
        )
    if table.warm_throughput is not None:
        request["WarmThroughput"] = _throughput(table.warm_throughput, "ReadUnitsPerSecond", "WriteUnitsPerSecond")
    if table.max_on_demand is not None:
        request["OnDemandThroughput"] = _throughput(table.max_on_demand, "MaxReadRequestUnits", "MaxWriteRequestUnits")
    if table.gsis:
        request["GlobalSecondaryIndexes"] = [_gsi_definition(g, billing) for g in table.gsis]
    return request


@dataclass
class TableManager:
    """Creates, seeds and removes the tables of one run through a retry-free client."""

    client: Any
    scenario: Scenario
    run_id: str
    active_timeout: float = 300.0
    sleep: Callable[[float], None] = gevent.sleep
    created: dict[str, str] = field(default_factory=dict)
    """Physical name -> ARN of every table this run created (the only ones teardown may delete)."""
    seconds_to_active: dict[str, float] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)
    """Names whose CreateTable was sent but whose ARN is not yet known (an interrupt can land in between)."""
    closing: bool = False
    """Set by teardown: no table is created after it has begun, whatever greenlet is still setting up."""
    creating: int = 0
    teardown_wait: float = 10.0
    """Seconds teardown waits for a CreateTable in flight to answer, and for a CREATING table to become deletable."""

    @property
    def physical_names(self) -> dict[str, str]:
        return {t.name: physical_name(t, self.run_id) for t in self.scenario.tables}

    def create_all(self) -> None:
        """Create every table the run owns and wait until each is ACTIVE, timing it."""
        for table in self.scenario.tables:
            name = physical_name(table, self.run_id)
            if table.use_existing:
                self._check_existing(name)
                continue
            if self.closing:
                raise TableError(f"table {name!r}: expected to create it, found teardown already under way")
            started = time.monotonic()
            self.pending.add(name)
            self.creating += 1
            try:
                response = self.client.create_table(**create_table_request(table, name, self.run_id))
            finally:
                self.creating -= 1
            self.created[name] = response["TableDescription"]["TableArn"]
            self.pending.discard(name)
            self._wait_active(name)
            self.seconds_to_active[name] = time.monotonic() - started

    def _check_existing(self, name: str) -> None:
        try:
            self.client.describe_table(TableName=name)
        except self.client.exceptions.ResourceNotFoundException:
            raise TableError(f"table {name!r}: expected an existing table (use_existing: true), found none") from None

    def _wait_active(self, name: str) -> None:
        deadline = time.monotonic() + self.active_timeout
        while True:
            status = self.client.describe_table(TableName=name)["Table"]["TableStatus"]
            if status == "ACTIVE":
                return
            if time.monotonic() > deadline:
                raise TableError(f"table {name!r}: expected ACTIVE within {self.active_timeout:g} s, found {status}")
            self.sleep(0.5)

    def seed_all(self, *, concurrency: int = 8) -> int:
        """Write every table's seed items in parallel batches; returns the number of items written."""
        written = 0
        for table in self.scenario.tables:
            items = seed_items(table)
            if not items:
                continue
            name = physical_name(table, self.run_id)
            batches = [items[i : i + BATCH] for i in range(0, len(items), BATCH)]
            pool = Pool(concurrency)
            for count in pool.imap_unordered(lambda b, n=name: self._try_batch(n, b), batches):
                if isinstance(count, Exception):  # the first failure ends seeding (teardown, a refused write)
                    pool.kill()
                    raise count
                written += count
        return written

    def _try_batch(self, name: str, items: list[dict[str, Any]]) -> int | Exception:
        # returned, not raised: a pool greenlet that raises prints a traceback of its own
        try:
            return self._write_batch(name, items)
        except Exception as exc:
            return exc

    def _write_batch(self, name: str, items: list[dict[str, Any]]) -> int:
        if self.closing:
            raise TableError(f"table {name!r}: expected to seed it, found teardown already under way")
        pending = [{"PutRequest": {"Item": item}} for item in items]
        for attempt in range(SEED_RESENDS):
            try:
                response = self.client.batch_write_item(RequestItems={name: pending})
            except self.client.exceptions.ProvisionedThroughputExceededException:
                response = {"UnprocessedItems": {name: pending}}
            except self.client.exceptions.ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ThrottlingException":
                    raise
                response = {"UnprocessedItems": {name: pending}}
            pending = response.get("UnprocessedItems", {}).get(name, [])
            if not pending:
                return len(items)
            self.sleep(min(0.05 * 2**attempt, 1.0))
        raise TableError(f"table {name!r}: seeding could not write {len(pending)} items after {SEED_RESENDS} sends")

    def teardown(self) -> list[str]:
        """Delete the tables this run created, each only after its tag proves it is ours. Never raises.

        Safe to call while another greenlet is still creating or seeding (an interrupt during set-up): it stops
        further creation, waits (bounded) for a CreateTable in flight, and finds tables whose answer never arrived.
        """
        self.closing = True
        until = time.monotonic() + self.teardown_wait
        while self.creating and time.monotonic() < until:
            self.sleep(0.05)
        for name in sorted(self.pending - set(self.created)):
            try:
                self.created[name] = self.client.describe_table(TableName=name)["Table"]["TableArn"]
            except self.client.exceptions.ResourceNotFoundException:
                self.pending.discard(name)
            except Exception as exc:
                log.error("could not look up table %s for teardown: %s", name, exc)
        deleted = []
        for name, arn in list(self.created.items()):
            try:
                tags = self._tags(arn)
                if tags.get(RUN_TAG) != self.run_id:
                    log.error(
                        "not deleting table %s: its %s tag is %r, not this run's", name, RUN_TAG, tags.get(RUN_TAG)
                    )
                    continue
                self._delete(name)
                deleted.append(name)
                del self.created[name]
                self.pending.discard(name)
            except Exception as exc:  # teardown must go on with the other tables
                log.error("could not delete table %s: %s", name, exc)
        return deleted

    def _delete(self, name: str) -> None:
        """DeleteTable, waiting (bounded) while the table is still CREATING or UPDATING."""
        until = time.monotonic() + self.teardown_wait
        while True:
            try:
                self.client.delete_table(TableName=name)
                return
            except self.client.exceptions.ResourceInUseException:
                if time.monotonic() > until:
                    raise
                self.sleep(0.25)

    def _tags(self, arn: str) -> dict[str, str]:
        tags: dict[str, str] = {}
        kwargs: dict[str, Any] = {"ResourceArn": arn}
        while True:
            response = self.client.list_tags_of_resource(**kwargs)
            tags.update({t["Key"]: t["Value"] for t in response.get("Tags", [])})
            if not response.get("NextToken"):
                return tags
            kwargs["NextToken"] = response["NextToken"]
