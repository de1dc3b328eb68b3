"""Table lifecycle: create (tagged with the run id and this process's claim), time to ACTIVE, seed, and a teardown
that only deletes what this process created.

Before the first CreateTable the run id must be free on the target (`dynlocust.run.claim`). The owned-table guard
is the tags: teardown re-reads each table's tags and deletes it only if both `dynlocust:run-id` and
`dynlocust:claim` are this run's, so a name collision, another run with the same id, or a bug can never delete
somebody else's table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gevent

from dynlocust.errors import DynlocustError
from dynlocust.request.operations import seed_items
from dynlocust.run.claim import CLAIM_TAG, RUN_TAG, RunIdTaken, find_taken, new_claim, owned, tags_of, taken_message
from dynlocust.run.seeding import Seeder, SeedPace, seed_time_limit, units_per_item, write_units_per_second
from dynlocust.scenario.model import Gsi, Scenario, Table, Throughput

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


def create_table_request(table: Table, name: str, run_id: str, claim: str) -> dict[str, Any]:
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
        "Tags": [{"Key": RUN_TAG, "Value": run_id}, {"Key": CLAIM_TAG, "Value": claim}],
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
    clock: Callable[[], float] = time.monotonic
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
    claim: str = field(default_factory=new_claim)
    """This process's claim token, tagged on every table it creates: teardown deletes only tables that carry it."""
    ignore: tuple[str, ...] = ()
    """Tables of this run id that are not a scenario's (the ECS launcher's results table): they claim nothing."""

    @property
    def physical_names(self) -> dict[str, str]:
        return {t.name: physical_name(t, self.run_id) for t in self.scenario.tables}

    def create_all(self) -> None:
        """Refuse a run id that has a table on the target already; then create every table the run owns and wait
        until each is ACTIVE, timing it."""
        to_create = [physical_name(t, self.run_id) for t in self.scenario.tables if not t.use_existing]
        taken = find_taken(self.client, self.run_id, to_create, self.ignore)
        if taken is not None:
            raise RunIdTaken(taken_message(self.run_id, taken))
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
                response = self.client.create_table(**create_table_request(table, name, self.run_id, self.claim))
            except self.client.exceptions.ResourceInUseException:
                # another run with this id created it since the check: it is that run's, never ours to delete
                self.pending.discard(name)
                raise RunIdTaken(taken_message(self.run_id, name)) from None
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
        """Write every table's seed items paced to its capacity (`dynlocust.run.seeding`); returns the items written."""
        written = 0
        for table in self.scenario.tables:
            items = seed_items(table)
            if not items:
                continue
            name = physical_name(table, self.run_id)
            seeder = self.seeder(table, name)
            ideal = len(items) * seeder.per_item / seeder.pace.known
            log.info("seeding %d items into %s at up to %g write units/s (its capacity; ideally %.1f s): time limit "
                     "%.0f s", len(items), name, seeder.pace.known, ideal, seeder.limit_s)  # fmt: skip
            started = self.clock()
            written += seeder.run(items, concurrency)
            log.info("seeded %d items into %s in %.1f s (%d sends, %d paced down)", len(items), name,
                     self.clock() - started, seeder.sends, seeder.pace.cuts)  # fmt: skip
        return written

    def seeder(self, table: Table, name: str) -> Seeder:
        """The paced writer of `table`'s seed items, on this manager's clock; it stops once teardown begins."""
        pace = SeedPace(write_units_per_second(table, self.scenario), self.clock)
        return Seeder(
            self.client, name, units_per_item(table), pace, seed_time_limit(table, self.scenario), self.sleep,
            stopping=lambda: self._teardown_error(name),
        )  # fmt: skip

    def _teardown_error(self, name: str) -> Exception | None:
        if self.closing:
            return TableError(f"table {name!r}: expected to seed it, found teardown already under way")
        return None

    def teardown(self) -> list[str]:
        """Delete the tables this run created, each only after its tags prove it is ours. Never raises.

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
                tags = tags_of(self.client, arn)
                if not owned(tags, self.run_id, self.claim):
                    log.error("not deleting table %s: its tags (%s %r, %s %r) are not this run's", name, RUN_TAG,
                              tags.get(RUN_TAG), CLAIM_TAG, tags.get(CLAIM_TAG))  # fmt: skip
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
